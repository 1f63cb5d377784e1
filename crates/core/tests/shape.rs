//! The crate's shape: no function of `crates/core/src` outside the tests runs over 80 lines
//! (from its `fn` to its closing brace), and no struct has more than 20 named fields.
//!
//! Tests are the `*_tests.rs` and `tests.rs` files and the items under `#[cfg(test)]`; they are
//! not read. Comments and string literals count as the lines they take.

mod rust_source;

use rust_source::{closing, read_sources, strip, tokens, without_tests, Source, Tok, Token};
use std::path::Path;

/// The most lines a function may take, from its `fn` to its closing brace.
const MOST_FUNCTION_LINES: usize = 80;
/// The most named fields a struct may have.
const MOST_STRUCT_FIELDS: usize = 20;

/// The tokens of a file outside its test items.
fn code(source: &Source) -> Vec<Token> {
    without_tests(tokens(&strip(&source.text)))
}

/// The name after the item keyword at `toks[i]` (`fn`, `struct`), if there is one.
fn item_name<'a>(toks: &'a [Token], i: usize, keyword: &str) -> Option<&'a str> {
    match (&toks[i].tok, toks.get(i + 1).map(|t| &t.tok)) {
        (Tok::Ident(word), Some(Tok::Ident(name))) if word == keyword => Some(name),
        _ => None,
    }
}

/// From `toks[from]`, the index of the first `{` or `;` outside parentheses and brackets.
fn body_or_end(toks: &[Token], from: usize) -> Option<usize> {
    let mut j = from;
    while let Some(token) = toks.get(j) {
        match token.tok {
            Tok::Punct('(' | '[') => j = closing(toks, j),
            Tok::Punct('{' | ';') => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// Every function with a body longer than `most_lines`, one line each:
/// `path:line name (N lines)`.
fn long_functions(sources: &[Source], most_lines: usize) -> Vec<String> {
    let mut problems = Vec::new();
    for source in sources {
        let toks = code(source);
        for i in 0..toks.len() {
            let Some(name) = item_name(&toks, i, "fn") else {
                continue;
            };
            let Some(open) = body_or_end(&toks, i + 2) else {
                continue;
            };
            if toks[open].tok != Tok::Punct('{') {
                continue; // A declaration without a body, in a trait.
            }
            let lines = toks[closing(&toks, open)].line - toks[i].line + 1;
            if lines > most_lines {
                let (path, line) = (&source.path, toks[i].line);
                problems.push(format!("{path}:{line} {name} ({lines} lines)"));
            }
        }
    }
    problems
}

/// The index just past the generic parameters that start at `toks[j]`, or `j` if there are
/// none there.
fn past_generics(toks: &[Token], mut j: usize) -> usize {
    if toks.get(j).map(|t| &t.tok) != Some(&Tok::Punct('<')) {
        return j;
    }
    let mut depth = 0;
    while let Some(token) = toks.get(j) {
        match token.tok {
            Tok::Punct('(' | '[' | '{') => j = closing(toks, j),
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') if toks[j - 1].tok != Tok::Punct('-') => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// The named fields in the braces from `toks[open]`: each name followed by a single `:` at
/// the braces' own level (attributes and `pub(..)` are bracketed, and paths use `::`).
fn named_fields(toks: &[Token], open: usize) -> usize {
    let close = closing(toks, open);
    let mut fields = 0;
    let mut k = open + 1;
    while k < close {
        match &toks[k].tok {
            Tok::Punct('(' | '[' | '{') => k = closing(toks, k),
            Tok::Ident(_) if toks[k + 1].tok == Tok::Punct(':') => fields += 1,
            _ => {}
        }
        k += 1;
    }
    fields
}

/// Every struct with more than `most_fields` named fields, one line each:
/// `path:line name (N fields)`.
fn big_structs(sources: &[Source], most_fields: usize) -> Vec<String> {
    let mut problems = Vec::new();
    for source in sources {
        let toks = code(source);
        for i in 0..toks.len() {
            let Some(name) = item_name(&toks, i, "struct") else {
                continue;
            };
            let after_generics = past_generics(&toks, i + 2);
            if toks.get(after_generics).map(|t| &t.tok) == Some(&Tok::Punct('(')) {
                continue; // A tuple struct.
            }
            let Some(open) = body_or_end(&toks, after_generics) else {
                continue;
            };
            if toks[open].tok != Tok::Punct('{') {
                continue; // A unit struct.
            }
            let fields = named_fields(&toks, open);
            if fields > most_fields {
                let (path, line) = (&source.path, toks[i].line);
                problems.push(format!("{path}:{line} {name} ({fields} fields)"));
            }
        }
    }
    problems
}

#[test]
fn no_function_is_over_80_lines_and_no_struct_has_over_20_fields() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    read_sources(&root, &root, &mut sources);
    assert!(sources.len() > 50, "read {} files", sources.len());
    let problems: Vec<String> = long_functions(&sources, MOST_FUNCTION_LINES)
        .into_iter()
        .chain(big_structs(&sources, MOST_STRUCT_FIELDS))
        .collect();
    assert!(
        problems.is_empty(),
        "over {MOST_FUNCTION_LINES} lines or {MOST_STRUCT_FIELDS} fields:\n{}",
        problems.join("\n")
    );
}

/// A function `name` of `lines` lines, from its `fn` to its closing brace.
fn function(name: &str, lines: usize) -> String {
    let body = "    let _ = 1;\n".repeat(lines - 2);
    format!("fn {name}() {{\n{body}}}\n")
}

/// A struct `name` with `fields` named fields, of types with commas, colons and arrows.
fn structure(name: &str, fields: usize) -> String {
    let kinds = [
        "u64",
        "std::collections::BTreeMap<u32, Vec<(u8, u16)>>",
        "Box<dyn Fn(u32, u32) -> u32>",
        "[u8; 4]",
    ];
    let mut text = format!("pub struct {name}<T: Clone, const N: usize> {{\n");
    for f in 0..fields {
        let kind = kinds[f % kinds.len()];
        text.push_str(&format!(
            "    /// Field {f}: a comment with a: colon.\n    #[serde(default = \"x\")]\n    \
             pub(crate) field_{f}: {kind},\n"
        ));
    }
    text.push_str("}\n");
    text
}

fn source(path: &str, text: String) -> Source {
    Source {
        path: path.to_string(),
        text,
    }
}

#[test]
fn the_check_names_a_function_over_80_lines_and_a_struct_over_20_fields() {
    // Comments, a raw string over several lines and braces in literals must not move a line.
    let at_the_limit = function("at_the_limit", 80).replacen(
        &"    let _ = 1;\n".repeat(4),
        "    /* a comment\n over two lines { */\n    let _ = r#\"a {\nstring\"#;\n",
        1,
    );
    let method = function("long_method", 81).replace("()", "(&self, bytes: [u8; 4])");
    let text = format!(
        "trait Declares {{\n    fn declared(&self);\n}}\n{}{}impl S {{\n{method}}}\n{}{}\
         pub struct Tuple(u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, \
         u8, u8, u8, u8, u8);\npub struct Unit;\n",
        function("too_long", 81),
        at_the_limit,
        structure("TooBig", 21),
        structure("AtTheLimit", 20),
    );
    let sources = [source("blocks/a.rs", text)];
    assert_eq!(
        long_functions(&sources, MOST_FUNCTION_LINES),
        [
            "blocks/a.rs:4 too_long (81 lines)",
            "blocks/a.rs:166 long_method (81 lines)"
        ]
    );
    let start = 166 + 81 + 1;
    assert_eq!(
        big_structs(&sources, MOST_STRUCT_FIELDS),
        [format!("blocks/a.rs:{start} TooBig (21 fields)")]
    );
}

#[test]
fn test_functions_and_test_files_are_not_checked() {
    // A field under `#[cfg(test)]` ends at its comma: the function around it stays short.
    let in_a_test_module = format!(
        "pub fn new() -> S {{\n    S {{\n        a: 1,\n        #[cfg(test)]\n        \
         b: Vec::<(u8, u8)>::new(),\n    }}\n}}\n{}#[cfg(test)]\nmod tests {{\n{}{}}}\n",
        function("at_the_limit", 80),
        function("long_test", 120),
        structure("Fixture", 30),
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shape_test_files");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("x")).unwrap();
    std::fs::write(dir.join("lib.rs"), in_a_test_module).unwrap();
    std::fs::write(dir.join("x/tests.rs"), function("in_tests_rs", 120)).unwrap();
    std::fs::write(dir.join("x/y_tests.rs"), function("in_y_tests", 120)).unwrap();
    std::fs::write(dir.join("x/y.rs"), function("not_a_test", 81)).unwrap();
    let mut sources = Vec::new();
    read_sources(&dir, &dir, &mut sources);
    assert_eq!(
        long_functions(&sources, MOST_FUNCTION_LINES),
        ["x/y.rs:1 not_a_test (81 lines)"]
    );
    assert!(big_structs(&sources, MOST_STRUCT_FIELDS).is_empty());
}
