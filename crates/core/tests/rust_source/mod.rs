//! Reading the crate's own source as tokens, for the checks on its shape (`layers.rs`,
//! `shape.rs`): comments and literals taken out, items under `#[cfg(test)]` dropped, each token
//! with the line it stands on.

use std::path::Path;

/// One source file: its path under `src/` (`/`-separated) and its text.
pub struct Source {
    pub path: String,
    pub text: String,
}

/// A token of Rust code with comments and literals taken out.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// A token and the line it stands on (from 1).
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    #[allow(dead_code)] // Read by the shape check; the layer check has no use for lines.
    pub line: usize,
}

/// The newlines among `chars`, so that taking text out keeps every line where it was.
fn newlines(chars: &[char]) -> impl Iterator<Item = char> + '_ {
    chars.iter().copied().filter(|&c| c == '\n')
}

/// The code of `text` without comments, and with every string and character literal emptied;
/// the lines stay where they were.
pub fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
            out.extend(newlines(&chars[start..i.min(chars.len())]));
        } else if c == 'r'
            && (i == 0 || !ident(chars[i - 1]))
            && matches!(next, Some('"') | Some('#'))
            && chars[i + 1..]
                .iter()
                .find(|&&c| c != '#')
                .is_some_and(|&c| c == '"')
        {
            // A raw string: r"...", r#"..."#.
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            i += 1 + hashes + 1;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
            out.extend(newlines(&chars[start..i.min(chars.len())]));
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
            out.extend(newlines(&chars[start..i.min(chars.len())]));
        } else if c == '\'' && next == Some('\\') {
            // A character literal with an escape: '\n', '\'', '\u{..}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The tokens of code already [`strip`]ped, each with its line.
pub fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let tok = if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Punct('0')
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            i += 2;
            Tok::Sep
        } else if c.is_whitespace() {
            if c == '\n' {
                line += 1;
            }
            i += 1;
            continue;
        } else {
            i += 1;
            Tok::Punct(c)
        };
        toks.push(Token { tok, line });
    }
    toks
}

/// True when `tok` is the word `word`.
pub fn is(tok: Option<&Tok>, word: &str) -> bool {
    matches!(tok, Some(Tok::Ident(s)) if s == word)
}

/// The index of the token that closes the bracket `toks[open]` opens (`{`, `(` or `[`), or the
/// last index if it is never closed.
pub fn closing(toks: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (i, token) in toks.iter().enumerate().skip(open) {
        match token.tok {
            Tok::Punct('{' | '(' | '[') => depth += 1,
            Tok::Punct('}' | ')' | ']') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len().saturating_sub(1)
}

/// The index just past the item, field or statement that starts at `toks[from]`: through its
/// braced body, its `;`, or its `,` (a field's), or up to the bracket that closes around it.
fn past_item(toks: &[Token], from: usize) -> usize {
    let mut angles = 0;
    let mut i = from;
    while let Some(token) = toks.get(i) {
        match token.tok {
            Tok::Punct('(' | '[') => i = closing(toks, i),
            Tok::Punct('{') => return closing(toks, i) + 1,
            Tok::Punct(';') => return i + 1,
            Tok::Punct(',') if angles == 0 => return i + 1,
            Tok::Punct('}' | ')' | ']') => return i,
            Tok::Punct('<') => angles += 1,
            Tok::Punct('>') if !matches!(toks[i - 1].tok, Tok::Punct('-' | '=')) => {
                angles = (angles - 1).max(0)
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// `toks` without the items under `#[cfg(test)]` (and the fields and statements under it).
pub fn without_tests(toks: Vec<Token>) -> Vec<Token> {
    let test_attribute = |at: &[Token]| {
        at.len() >= 7
            && at[0].tok == Tok::Punct('#')
            && at[1].tok == Tok::Punct('[')
            && is(Some(&at[2].tok), "cfg")
            && at[3].tok == Tok::Punct('(')
            && is(Some(&at[4].tok), "test")
            && at[5].tok == Tok::Punct(')')
            && at[6].tok == Tok::Punct(']')
    };
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if !test_attribute(&toks[i..]) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // Other attributes of the same item.
        while toks.get(i).map(|t| &t.tok) == Some(&Tok::Punct('#')) {
            i += 1;
            if toks.get(i).map(|t| &t.tok) == Some(&Tok::Punct('[')) {
                i = closing(&toks, i) + 1;
            }
        }
        i = past_item(&toks, i);
    }
    out
}

/// True for the files that hold only tests: `*_tests.rs` and `tests.rs`.
pub fn is_test_file(name: &str) -> bool {
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Every `.rs` file under `dir` but the [test files](is_test_file), with paths relative to
/// `root`.
pub fn read_sources(root: &Path, dir: &Path, out: &mut Vec<Source>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the source folder reads")
        .map(|entry| entry.expect("a folder entry reads").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(root, &path, out);
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.ends_with(".rs") || is_test_file(name) {
            continue;
        }
        let relative = path.strip_prefix(root).expect("under the root");
        let relative: Vec<&str> = relative.iter().map(|c| c.to_str().unwrap()).collect();
        out.push(Source {
            path: relative.join("/"),
            text: std::fs::read_to_string(&path).expect("a source file reads"),
        });
    }
}
