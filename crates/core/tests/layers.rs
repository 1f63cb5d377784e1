//! The crate's floors: no file of `crates/core/src` imports a file of a higher floor, no
//! design imports another design, and no files import each other in a ring.
//!
//! The floors, bottom to top: `engine/` and `keys.rs`; `run.rs`; `blocks/`; `scenario/`;
//! `designs/`; `catalog.rs` and `lib.rs`. A file may import its own floor and those below. The
//! designs share what they have in common through the blocks: a file of one design
//! (`designs/x.rs`, `designs/x/..`) imports nothing of another, nor the registry
//! `designs/mod.rs` (which builds them all).
//!
//! What counts as an import: every `use` declaration (its tree spelled out) and every path
//! written in the code that starts with `crate::`, `super::`, `self::` or the name of a module
//! the file declares. A path is followed to the file that defines what it names: through a
//! `mod.rs` that only re-exports (`pub use`) to the file the item comes from, and to a module's
//! own file only when the path names the module itself or an item defined there. Declaring a
//! module (`mod x;`) is not an import.
//!
//! Not read: comments, string literals, items under `#[cfg(test)]` (test modules), and the
//! `*_tests.rs` and `tests.rs` files. One kind of edge is left out of the ring check: a file's
//! use of an item defined in the file of a module that encloses it (`super::Item` from
//! `stardust/element.rs` to `stardust/mod.rs`, `super::super::Mode` from `routing/modes/ecmp.rs`
//! to `routing/mod.rs`). A module's `mod.rs` and the files under it are one unit in Rust (a type
//! defined in `mod.rs` with its `impl` blocks in the files beside it, as in Clint, or a
//! registry of the files beside it, as in routing); the ring check is about the other files:
//! siblings, and files in different modules. That edge still counts for the floor check.

mod rust_source;

use rust_source::{is, read_sources, strip, tokens, without_tests, Source, Tok};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// The floor of a file (its path under `src/`, `/`-separated), and the floor's name.
fn floor(path: &str) -> (usize, &'static str) {
    let top = path.split('/').next().unwrap_or(path);
    match top {
        "engine" | "keys.rs" => (0, "engine and keys"),
        "run.rs" => (1, "run"),
        "blocks" => (2, "blocks"),
        "scenario" => (3, "scenario"),
        "designs" => (4, "designs"),
        _ => (5, "catalog and lib"),
    }
}

/// One name a `use` declaration brings in: its path as written and the name it goes by (`None`
/// for a glob).
struct UseItem {
    path: Vec<String>,
    name: Option<String>,
}

/// The items of the use tree starting at `toks[*i]`, each path prefixed with `prefix`.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<UseItem>) {
    let mut path = prefix;
    while let Some(tok) = toks.get(*i) {
        match tok {
            Tok::Sep => *i += 1,
            Tok::Ident(word) => {
                path.push(word.clone());
                *i += 1;
                if toks.get(*i) == Some(&Tok::Sep) {
                    continue;
                }
                let mut name = path.last().cloned();
                if is(toks.get(*i), "as") {
                    name = match toks.get(*i + 1) {
                        Some(Tok::Ident(alias)) => Some(alias.clone()),
                        _ => None,
                    };
                    *i += 2;
                }
                if path.last().is_some_and(|last| last == "self") {
                    path.pop();
                    if name.as_deref() == Some("self") {
                        name = path.last().cloned();
                    }
                }
                out.push(UseItem { path, name });
                return;
            }
            Tok::Punct('*') => {
                *i += 1;
                out.push(UseItem { path, name: None });
                return;
            }
            Tok::Punct('{') => {
                *i += 1;
                while let Some(tok) = toks.get(*i) {
                    match tok {
                        Tok::Punct('}') => {
                            *i += 1;
                            return;
                        }
                        Tok::Punct(',') => *i += 1,
                        _ => use_tree(toks, i, path.clone(), out),
                    }
                }
                return;
            }
            _ => return,
        }
    }
}

/// What one file says about names: what it defines, what it brings in, what it refers to.
#[derive(Default)]
struct Parsed {
    /// Its module path (`["blocks", "ethernet", "pfc"]`; the crate root is empty).
    module: Vec<String>,
    /// Items defined at its top level, inline modules included.
    defines: BTreeSet<String>,
    /// Modules it declares (`mod x;`, `mod x { .. }`).
    children: BTreeSet<String>,
    /// Names its top-level `use` declarations bring in, with the paths they come from.
    imports: BTreeMap<String, Vec<String>>,
    /// Its top-level glob imports.
    globs: Vec<Vec<String>>,
    /// Every path it refers to, as written (use declarations spelled out, and paths in code).
    references: Vec<Vec<String>>,
}

const ITEM_KEYWORDS: [&str; 9] = [
    "fn", "struct", "enum", "const", "static", "type", "trait", "union", "mod",
];

/// The module path of the file at `path` (`blocks/ethernet/mod.rs`: `["blocks", "ethernet"]`).
fn module_of(path: &str) -> Vec<String> {
    if path == "lib.rs" {
        return Vec::new();
    }
    let path = path.trim_end_matches(".rs");
    let mut segments: Vec<String> = path.split('/').map(str::to_string).collect();
    if segments.last().is_some_and(|last| last == "mod") {
        segments.pop();
    }
    segments
}

fn parse(source: &Source) -> Parsed {
    let toks: Vec<Tok> = without_tests(tokens(&strip(&source.text)))
        .into_iter()
        .map(|token| token.tok)
        .collect();
    let mut parsed = Parsed {
        module: module_of(&source.path),
        ..Parsed::default()
    };
    let mut uses = Vec::new();
    // Tokens of use declarations, which the search for paths in code skips.
    let mut in_use = vec![false; toks.len()];
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Ident(word) if word == "use" => {
                let start = i;
                i += 1;
                let mut items = Vec::new();
                use_tree(&toks, &mut i, Vec::new(), &mut items);
                in_use[start..i.min(toks.len())].fill(true);
                for item in items {
                    if depth == 0 {
                        match &item.name {
                            Some(name) => {
                                parsed.imports.insert(name.clone(), item.path.clone());
                            }
                            None => parsed.globs.push(item.path.clone()),
                        }
                    }
                    uses.push(item.path);
                }
                continue;
            }
            Tok::Ident(word) if word == "macro_rules" && depth == 0 => {
                if let Some(Tok::Ident(name)) = toks.get(i + 2) {
                    parsed.defines.insert(name.clone());
                }
            }
            Tok::Ident(word) if ITEM_KEYWORDS.contains(&word.as_str()) && depth == 0 => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                    if !ITEM_KEYWORDS.contains(&name.as_str()) {
                        if word == "mod" {
                            parsed.children.insert(name.clone());
                            if toks.get(i + 2) == Some(&Tok::Punct('{')) {
                                parsed.defines.insert(name.clone());
                            }
                        } else {
                            parsed.defines.insert(name.clone());
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Paths in code: `crate::a::b`, `super::a`, `self::a`, `child::a`.
    let mut i = 0;
    while i < toks.len() {
        let starts = match &toks[i] {
            Tok::Ident(word) => {
                matches!(word.as_str(), "crate" | "super" | "self")
                    || parsed.children.contains(word)
            }
            _ => false,
        };
        let after_sep = i > 0 && toks[i - 1] == Tok::Sep;
        if !starts || after_sep || in_use[i] || toks.get(i + 1) != Some(&Tok::Sep) {
            i += 1;
            continue;
        }
        let mut path = Vec::new();
        while let Some(Tok::Ident(word)) = toks.get(i) {
            path.push(word.clone());
            if toks.get(i + 1) != Some(&Tok::Sep) {
                i += 1;
                break;
            }
            i += 2;
        }
        parsed.references.push(path);
    }
    parsed.references.extend(uses);
    parsed
}

/// An import of one file by another: who, whom, and the path as written.
struct Edge {
    from: usize,
    to: usize,
    path: String,
}

/// The files, what they say, and who imports whom.
struct Graph {
    paths: Vec<String>,
    parsed: Vec<Parsed>,
    by_module: BTreeMap<Vec<String>, usize>,
    edges: Vec<Edge>,
}

impl Graph {
    fn new(sources: &[Source]) -> Graph {
        let parsed: Vec<Parsed> = sources.iter().map(parse).collect();
        let by_module = parsed
            .iter()
            .enumerate()
            .map(|(i, p)| (p.module.clone(), i))
            .collect();
        let mut graph = Graph {
            paths: sources.iter().map(|s| s.path.clone()).collect(),
            parsed,
            by_module,
            edges: Vec::new(),
        };
        let mut edges = Vec::new();
        for (from, parsed) in graph.parsed.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for reference in &parsed.references {
                let Some(absolute) = graph.absolute(from, reference) else {
                    continue;
                };
                let to = graph
                    .find(&absolute, 0)
                    .unwrap_or_else(|| graph.file_of(&absolute));
                if to != from && seen.insert((to, reference.clone())) {
                    edges.push(Edge {
                        from,
                        to,
                        path: reference.join("::"),
                    });
                }
            }
        }
        graph.edges = edges;
        graph
    }

    /// `path` as written in file `file`, from the crate root; `None` for another crate's.
    fn absolute(&self, file: usize, path: &[String]) -> Option<Vec<String>> {
        let parsed = &self.parsed[file];
        let first = path.first()?;
        let mut module = parsed.module.clone();
        let rest = match first.as_str() {
            "crate" => {
                module.clear();
                &path[1..]
            }
            "self" => &path[1..],
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    module.pop()?;
                }
                &path[supers..]
            }
            name if parsed.children.contains(name) => path,
            _ => return None,
        };
        module.extend(rest.iter().cloned());
        Some(module)
    }

    /// The file of the longest module path `path` starts with.
    fn file_of(&self, path: &[String]) -> usize {
        (0..=path.len())
            .rev()
            .find_map(|k| self.by_module.get(&path[..k]).copied())
            .expect("the crate root is a file")
    }

    /// The file that defines what `path` (from the crate root) names, following re-exports;
    /// `None` if it is not found.
    fn find(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 16 {
            return None;
        }
        let k = (0..=path.len())
            .rev()
            .find(|&k| self.by_module.contains_key(&path[..k]))?;
        let file = self.by_module[&path[..k]];
        if k == path.len() {
            return Some(file);
        }
        let parsed = &self.parsed[file];
        let name = &path[k];
        if parsed.defines.contains(name) {
            return Some(file);
        }
        if let Some(target) = parsed.imports.get(name) {
            let mut target = self.absolute(file, target)?;
            target.extend(path[k + 1..].iter().cloned());
            return self.find(&target, depth + 1).or(Some(file));
        }
        parsed.globs.iter().find_map(|glob| {
            let mut target = self.absolute(file, glob)?;
            target.extend(path[k..].iter().cloned());
            let found = self.find(&target, depth + 1)?;
            // A glob brings in what its module has, not the module itself.
            (self.parsed[found].module != target).then_some(found)
        })
    }

    /// True when `to` is the file of a module that encloses `from` (its parent, the parent's
    /// parent, ..).
    fn is_ancestor(&self, from: usize, to: usize) -> bool {
        let (inner, outer) = (&self.parsed[from].module, &self.parsed[to].module);
        outer.len() < inner.len() && inner.starts_with(outer)
    }

    /// Every import of a higher floor, one line each.
    fn upward(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for edge in &self.edges {
            let (from, to) = (&self.paths[edge.from], &self.paths[edge.to]);
            let (from_floor, from_name) = floor(from);
            let (to_floor, to_name) = floor(to);
            if to_floor > from_floor {
                problems.push(format!(
                    "upward import: {from} ({from_name}) imports {} from {to} ({to_name})",
                    edge.path
                ));
            }
        }
        problems
    }

    /// Every import of one design by another, one line each: the designs share what they
    /// have in common through the blocks (and the registry, `designs/mod.rs`, which builds
    /// them all, is no design's to import).
    fn across_designs(&self) -> Vec<String> {
        let design = |path: &str| -> Option<String> {
            let rest = path.strip_prefix("designs/")?;
            Some(rest.split('/').next()?.trim_end_matches(".rs").to_string())
        };
        let mut problems = Vec::new();
        for edge in &self.edges {
            let (from, to) = (&self.paths[edge.from], &self.paths[edge.to]);
            let (Some(a), Some(b)) = (design(from), design(to)) else {
                continue;
            };
            if a != b && a != "mod" {
                problems.push(format!(
                    "design imports another design: {from} imports {} from {to}",
                    edge.path
                ));
            }
        }
        problems
    }

    /// Every ring of files importing each other, one line each: one ring per strongly
    /// connected group of files, with the imports that close it.
    fn cycles(&self) -> Vec<String> {
        let n = self.paths.len();
        let mut next: Vec<BTreeMap<usize, &str>> = vec![BTreeMap::new(); n];
        for edge in &self.edges {
            if !self.is_ancestor(edge.from, edge.to) {
                next[edge.from].entry(edge.to).or_insert(&edge.path);
            }
        }
        let mut problems = Vec::new();
        for group in strongly_connected(&next) {
            if group.len() < 2 {
                continue;
            }
            let start = group[0];
            let ring = shortest_ring(&next, start, &group);
            let mut line = format!(
                "import cycle among {} files: {}",
                group.len(),
                self.paths[start]
            );
            for pair in ring.windows(2) {
                line.push_str(&format!(
                    " -> {} ({})",
                    self.paths[pair[1]], next[pair[0]][&pair[1]]
                ));
            }
            let names: Vec<&str> = group.iter().map(|&f| self.paths[f].as_str()).collect();
            line.push_str(&format!("; the group: {}", names.join(", ")));
            problems.push(line);
        }
        problems
    }
}

/// Tarjan's strongly connected components of the graph `next`, each sorted.
fn strongly_connected(next: &[BTreeMap<usize, &str>]) -> Vec<Vec<usize>> {
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(v: usize, next: &[BTreeMap<usize, &str>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in next[v].keys() {
            match s.index[w] {
                None => {
                    visit(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            group.sort();
            s.groups.push(group);
        }
    }
    let n = next.len();
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        groups: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(v, next, &mut state);
        }
    }
    state.groups.sort();
    state.groups
}

/// The shortest ring from `start` back to itself within `group`: `[start, .., start]`.
fn shortest_ring(next: &[BTreeMap<usize, &str>], start: usize, group: &[usize]) -> Vec<usize> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in next[v].keys() {
            if !group.contains(&w) {
                continue;
            }
            if w == start {
                let mut ring = vec![start, v];
                let mut at = v;
                while at != start {
                    at = came_from[&at];
                    ring.push(at);
                }
                ring.reverse();
                return ring;
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = came_from.entry(w) {
                entry.insert(v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected group has a ring through each of its files")
}

#[test]
fn no_file_imports_a_higher_floor_or_another_design_or_takes_part_in_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    read_sources(&root, &root, &mut sources);
    assert!(sources.len() > 50, "read {} files", sources.len());
    let graph = Graph::new(&sources);
    let upward = graph.upward();
    let across = graph.across_designs();
    let cycles = graph.cycles();
    eprintln!(
        "{} files, {} imports between them: {} upward, {} between designs, {} cycles",
        sources.len(),
        graph.edges.len(),
        upward.len(),
        across.len(),
        cycles.len()
    );
    let problems: Vec<String> = upward.into_iter().chain(across).chain(cycles).collect();
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

fn synthetic(files: &[(&str, &str)]) -> Graph {
    let sources: Vec<Source> = files
        .iter()
        .map(|(path, text)| Source {
            path: path.to_string(),
            text: text.to_string(),
        })
        .collect();
    Graph::new(&sources)
}

#[test]
fn the_check_reports_an_upward_import_an_import_between_designs_and_a_cycle() {
    let graph = synthetic(&[
        (
            "lib.rs",
            "pub mod blocks;\npub mod designs;\npub mod engine;",
        ),
        ("engine/mod.rs", "pub mod time;"),
        ("engine/time.rs", "pub type TimePs = u64;"),
        ("blocks/mod.rs", "pub mod a;\npub mod b;"),
        (
            "blocks/a.rs",
            "use crate::engine::time::TimePs;\nuse super::b::B;\npub struct A(B, TimePs);",
        ),
        (
            "blocks/b.rs",
            "// use crate::designs::d::D; (a comment, not an import)\n\
             pub struct B;\n\
             pub fn make() -> crate::blocks::a::A { crate::blocks::a::A::default() }\n\
             pub fn upward() { crate::designs::d::helper(); }",
        ),
        ("designs/mod.rs", "pub mod d;\npub mod e;\npub use d::D;"),
        ("designs/e.rs", "pub struct E(crate::designs::D);"),
        (
            "designs/d.rs",
            "use crate::blocks::a::A;\npub struct D(A);\npub fn helper() {}",
        ),
    ]);
    let upward = graph.upward();
    assert_eq!(
        upward,
        [
            "upward import: blocks/b.rs (blocks) imports crate::designs::d::helper from \
          designs/d.rs (designs)"
        ]
    );
    assert_eq!(
        graph.across_designs(),
        ["design imports another design: designs/e.rs imports crate::designs::D from designs/d.rs"]
    );
    let cycles = graph.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(
        cycles[0].starts_with("import cycle among 3 files: blocks/a.rs -> blocks/b.rs"),
        "{}",
        cycles[0]
    );
}

#[test]
fn re_exports_parents_and_tests_make_no_false_cycles() {
    let graph = synthetic(&[
        ("lib.rs", "pub mod designs;"),
        ("designs/mod.rs", "pub mod x;"),
        // A module whose mod.rs re-exports its children, which use what it defines.
        (
            "designs/x/mod.rs",
            "mod config;\nmod report;\npub use config::Config;\npub use report::Summary;\n\
             pub struct X { c: Config }\n\
             #[cfg(test)]\nmod tests {\n    use crate::designs::x::report::Summary;\n}",
        ),
        ("designs/x/config.rs", "pub struct Config;"),
        (
            "designs/x/report.rs",
            "use super::X;\nuse crate::designs::x::Config;\npub struct Summary;\n\
             impl X { fn summary(&self) -> Summary { Summary } }",
        ),
    ]);
    assert!(graph.cycles().is_empty(), "{:?}", graph.cycles());
    assert!(graph.upward().is_empty(), "{:?}", graph.upward());
    let report = graph
        .paths
        .iter()
        .position(|p| p == "designs/x/report.rs")
        .unwrap();
    let targets: BTreeSet<&str> = graph
        .edges
        .iter()
        .filter(|e| e.from == report)
        .map(|e| graph.paths[e.to].as_str())
        .collect();
    // The re-exported Config is found in the file that defines it.
    assert_eq!(
        targets,
        BTreeSet::from(["designs/x/mod.rs", "designs/x/config.rs"])
    );
}
