//! The key reference: every key a design's scenario takes, with its default, unit and meaning,
//! read from the design's config structs themselves. Their schema (derived by `schemars` from
//! the serde attributes and the doc comments) gives the keys, the defaults serde fills in and
//! the meaning; the unit comes from the key's suffix (`_ns`, `_bytes`, `_gbps`, ...) or a
//! `Unit: ...` sentence closing the doc comment; the names a key takes come from the
//! [`catalog`](crate::catalog) (the registries, `routing.mode`'s included) or else from its
//! enum's variants. Nothing here is typed by hand, so the reference cannot drift from the
//! parser.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::catalog;
use crate::designs::{design_entry, DESIGNS};
use crate::keys::ScenarioError;

/// One key of a design's scenario.
#[derive(Clone, Debug, Serialize)]
pub struct KeyDoc {
    /// Dotted key (`traffic.load`; `failures[].at_ns` for a member of a list's tables).
    pub key: String,
    /// The section the key belongs to (its first part).
    pub section: String,
    /// Whether the key must be given (it has no default).
    pub required: bool,
    /// What the key holds when the scenario leaves it out (JSON; `null`: absent, and the
    /// meaning says what then applies).
    pub default: Value,
    /// Where the section's own default differs from `default` (a section written without this
    /// key), that value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_in_section: Option<Value>,
    /// Unit, from the key's suffix or its doc comment; empty for a name, count or flag.
    pub unit: String,
    /// What the key means: its doc comment.
    pub meaning: String,
    /// The names it takes, each with its meaning (empty for a number, flag or path).
    pub choices: Vec<(String, String)>,
}

/// One section of a design's scenario: its doc comment.
#[derive(Clone, Debug, Serialize)]
pub struct SectionDoc {
    /// The section's name (`run`, `traffic`, ...).
    pub section: String,
    /// Its doc comment.
    pub meaning: String,
}

/// A design's whole reference.
#[derive(Clone, Debug, Serialize)]
pub struct DesignKeys {
    /// The design's name.
    pub design: &'static str,
    /// What it models, in one line.
    pub description: &'static str,
    /// Its sections, in the order of its config struct.
    pub sections: Vec<SectionDoc>,
    /// Its keys, in the order of its config structs.
    pub keys: Vec<KeyDoc>,
}

/// Key suffixes and the unit each names, longest first.
const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("_ns_per_m", "ns/m"),
    ("_bytes_min", "bytes"),
    ("_bytes_max", "bytes"),
    ("_gbps", "Gbit/s"),
    ("_mbps", "Mbit/s"),
    ("_bytes", "bytes"),
    ("_cells", "cells"),
    ("_packets", "packets"),
    ("_frames", "frames"),
    ("_ns", "ns"),
    ("_us", "µs"),
    ("_ps", "ps"),
    ("_m", "m"),
];

/// The sentence that names a unit in a doc comment.
const UNIT_SENTENCE: &str = "Unit: ";

/// The reference of the design named `design`; an unknown name is refused naming every design.
pub fn design_keys(design: &str) -> Result<DesignKeys, ScenarioError> {
    let entry = design_entry(design)?;
    let schema = serde_json::to_value((entry.keys)()).expect("schemas serialize");
    let mut walk = Walk {
        defs: schema.get("$defs").cloned().unwrap_or(Value::Null),
        keys: Vec::new(),
    };
    let mut sections = Vec::new();
    for (name, property) in properties(&schema) {
        let node = walk.resolve(property);
        if is_section(&node) {
            sections.push(SectionDoc {
                section: name.clone(),
                meaning: clean(text(property, "description")),
            });
        }
        walk.key(name, name, property, None);
    }
    Ok(DesignKeys {
        design: entry.name,
        description: entry.description,
        sections,
        keys: walk.keys,
    })
}

/// The reference of every design, in the registry's order.
pub fn all_design_keys() -> Vec<DesignKeys> {
    DESIGNS
        .iter()
        .map(|d| design_keys(d.name).expect("registered designs have a reference"))
        .collect()
}

/// A walk over one schema, collecting its keys.
struct Walk {
    defs: Value,
    keys: Vec<KeyDoc>,
}

impl Walk {
    /// A property's schema with its `$ref` (or the one alternative of an optional value that
    /// is not null) followed.
    fn resolve(&self, node: &Value) -> Value {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            return self.resolve(&self.defs[name]);
        }
        if let Some(Value::Array(alternatives)) = node.get("anyOf") {
            let not_null: Vec<_> = alternatives
                .iter()
                .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if let [one] = not_null.as_slice() {
                return self.resolve(one);
            }
        }
        node.clone()
    }

    /// Records key `key` (section `section`) described by `property`; `inherited` is its value
    /// in the enclosing section's default, if that section has one.
    fn key(&mut self, section: &str, key: &str, property: &Value, inherited: Option<&Value>) {
        let node = self.resolve(property);
        let own = property.get("default");
        let default = match inherited {
            Some(value) if !value.is_null() => Some(value.clone()),
            _ => own.cloned(),
        };
        if is_section(&node) {
            for (name, member) in properties(&node) {
                let inner = default.as_ref().and_then(|d| d.get(name));
                self.key(section, &format!("{key}.{name}"), member, inner);
            }
            return;
        }
        let (meaning, unit) = meaning_and_unit(key, text(property, "description"));
        let choices = self.choices(key, &node);
        let default_in_section = own.filter(|o| Some(*o) != default.as_ref()).cloned();
        let required = own.is_none() && inherited.is_none();
        self.keys.push(KeyDoc {
            key: key.to_string(),
            section: section.to_string(),
            required,
            default: default.unwrap_or(Value::Null),
            default_in_section,
            unit,
            meaning,
            choices,
        });
        if let Some(items) = node.get("items").map(|i| self.resolve(i)) {
            if is_section(&items) {
                for (name, member) in properties(&items) {
                    self.key(section, &format!("{key}[].{name}"), member, None);
                }
            }
        }
    }

    /// The names a key takes: the catalog's (the registries' one-line descriptions) where it
    /// lists the key, only those the key's schema allows if it lists names (a design offering
    /// some of a registry's entries), else its enum's variants with their doc comments.
    fn choices(&self, key: &str, node: &Value) -> Vec<(String, String)> {
        let allowed = node.get("enum").and_then(Value::as_array);
        let allows = |name: &str| allowed.is_none_or(|names| names.iter().any(|n| n == name));
        let listed: Vec<_> = catalog()
            .into_iter()
            .filter(|e| e.key == key && key != "design" && allows(e.name))
            .map(|e| (e.name.to_string(), e.description.to_string()))
            .collect();
        if !listed.is_empty() {
            return listed;
        }
        let variants = node.get("oneOf").and_then(Value::as_array);
        variants
            .into_iter()
            .flatten()
            .filter_map(|v| {
                let name = v.get("const")?.as_str()?;
                Some((name.to_string(), clean(text(v, "description"))))
            })
            .collect()
    }
}

/// A schema's properties, in declaration order.
fn properties(node: &Value) -> Vec<(&String, &Value)> {
    node.get("properties")
        .and_then(Value::as_object)
        .map(Map::iter)
        .into_iter()
        .flatten()
        .collect()
}

/// Whether a schema is a table of keys (a section, or a list's table).
fn is_section(node: &Value) -> bool {
    node.get("properties").is_some()
}

/// A string member of a schema, or "".
fn text<'a>(node: &'a Value, member: &str) -> &'a str {
    node.get(member).and_then(Value::as_str).unwrap_or("")
}

/// A doc comment as one paragraph of plain text: line breaks joined, rustdoc's links
/// (`` [`x`] ``, `` [`x`](path) ``) written as the code they name.
fn clean(doc: &str) -> String {
    let joined = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while let Some(start) = rest.find("[`") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find("`]") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        out.push_str(&after[..end + 1]);
        rest = &after[end + 2..];
        if rest.starts_with('(') {
            rest = rest.find(')').map_or(rest, |close| &rest[close + 1..]);
        }
    }
    out.push_str(rest);
    out
}

/// A key's meaning and unit: the unit its suffix names, else the doc comment's closing
/// `Unit: ...` sentence (taken out of the meaning), else none.
fn meaning_and_unit(key: &str, doc: &str) -> (String, String) {
    let meaning = clean(doc);
    let name = format!("_{}", key.rsplit('.').next().unwrap_or(key));
    if let Some((_, unit)) = UNIT_SUFFIXES.iter().find(|(s, _)| name.ends_with(s)) {
        return (meaning, unit.to_string());
    }
    match meaning.rfind(UNIT_SENTENCE) {
        Some(at) => {
            let unit = meaning[at + UNIT_SENTENCE.len()..].trim_end_matches('.');
            (meaning[..at].trim_end().to_string(), unit.to_string())
        }
        None => (meaning, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(keys: &'a DesignKeys, name: &str) -> &'a KeyDoc {
        keys.keys
            .iter()
            .find(|k| k.key == name)
            .unwrap_or_else(|| panic!("{name} not in {}'s reference", keys.design))
    }

    /// The defaults are serde's: a section's own default (Stardust's 10 Gbit/s links and
    /// fat-tree) wins over the shared struct's, and the meaning is the field's doc comment.
    #[test]
    fn defaults_and_meanings_come_from_the_config_structs() {
        let stardust = design_keys("stardust").unwrap();
        let rate = key(&stardust, "link.rate_gbps");
        assert_eq!(rate.default, Value::from(10.0));
        assert_eq!(rate.unit, "Gbit/s");
        assert_eq!(rate.meaning, "Line rate in Gbit/s.");
        let kind = key(&stardust, "topology.kind");
        assert_eq!(kind.default, Value::from("fat_tree"));
        assert_eq!(kind.default_in_section, Some(Value::from("star")));
        assert!(kind.choices.iter().any(|(name, _)| name == "clos"));
        let at = key(&stardust, "failures[].at_ns");
        assert_eq!((at.required, at.unit.as_str()), (true, "ns"));
        assert!(!rate.required);
        let cells = design_keys("single_switch").unwrap();
        assert_eq!(key(&cells, "link.rate_gbps").default, Value::from(100.0));
        assert_eq!(key(&cells, "run.seed").section, "run");
    }

    /// `routing.mode` is a string checked against the modes' registry: its names come from
    /// the catalog, so a new mode appears in the reference with its registry line.
    #[test]
    fn names_checked_against_a_registry_come_from_the_catalog() {
        let fabric = design_keys("cell_fabric").unwrap();
        let mode = key(&fabric, "routing.mode");
        let names: Vec<_> = crate::blocks::routing::MODES
            .iter()
            .map(|m| m.name)
            .collect();
        let listed: Vec<_> = mode.choices.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(listed, names);
    }

    /// `traffic.pattern` lists, from the pattern registry, only the patterns the design runs.
    #[test]
    fn a_design_lists_only_the_patterns_it_offers() {
        for (design, offered) in [
            ("ethernet", crate::designs::ethernet::PATTERNS),
            ("stardust", crate::designs::stardust::PATTERNS),
        ] {
            let reference = design_keys(design).unwrap();
            let pattern = key(&reference, "traffic.pattern");
            let listed: Vec<_> = pattern.choices.iter().map(|(n, _)| n.as_str()).collect();
            let mut names: Vec<_> = offered.iter().map(|p| p.name).collect();
            names.sort_by_key(|n| {
                crate::blocks::patterns::PATTERNS
                    .iter()
                    .position(|p| p.name == *n)
            });
            assert_eq!(listed, names, "{design}");
            assert!(
                listed.len() < crate::blocks::patterns::PATTERNS.len(),
                "{design} lists every pattern"
            );
        }
    }

    #[test]
    fn an_unknown_design_is_refused_naming_every_design() {
        let error = design_keys("stardsut").unwrap_err();
        assert_eq!(error.key, "design");
        for design in DESIGNS {
            assert!(error.message.contains(design.name), "{}", error.message);
        }
    }

    #[test]
    fn units_come_from_the_suffix_or_the_doc_comment() {
        assert_eq!(meaning_and_unit("link.ns_per_m", "x").1, "ns/m");
        assert_eq!(meaning_and_unit("link.length_m", "x").1, "m");
        assert_eq!(
            meaning_and_unit("traffic.load", "Offered load. Unit: fraction of line rate."),
            (
                "Offered load.".to_string(),
                "fraction of line rate".to_string()
            )
        );
        assert_eq!(meaning_and_unit("switch.ports", "Ports.").1, "");
    }

    #[test]
    fn rustdoc_links_read_as_the_code_they_name() {
        assert_eq!(
            clean("A mode of [`MODES`](crate::x::MODES) by\n name, see [`Foo`]."),
            "A mode of `MODES` by name, see `Foo`."
        );
    }

    /// Every registered design has a reference, every key a meaning.
    #[test]
    fn every_key_of_every_design_has_a_meaning() {
        for design in all_design_keys() {
            assert!(!design.keys.is_empty(), "{}", design.design);
            for key in &design.keys {
                assert!(
                    !key.meaning.is_empty(),
                    "{}: {} has no doc comment",
                    design.design,
                    key.key
                );
            }
        }
    }
}
