//! Topologies users bring: a plain text file of nodes and cables.
//!
//! ```text
//! # a comment; blank lines are ignored
//! switch s0 ports=4            # a switch and its port count
//! switch s1 ports=4 group=1    # optional group (a pod, a Dragonfly group) for routing
//! host h0                      # a host (an endpoint with one port)
//! cable h0 s0:0                # a host to a switch port
//! cable s0:3 s1:3              # a switch port to a switch port
//! cable s0:2 s1:2 propagation_ns=500   # a cable with its own propagation delay
//! ```
//!
//! Hosts are numbered in the order they are declared. Every name is declared once, every host
//! is cabled once, and no port takes two cables.

use std::collections::HashMap;

use super::{Attachment, Topology, TopologyError};
use crate::engine::time::ps_from_ns;

/// A node named in the file.
#[derive(Clone, Copy)]
enum Named {
    Switch(usize),
    Host(usize),
}

impl Topology {
    /// Reads a topology from the text of a topology file; errors name the line.
    pub fn from_file_text(text: &str) -> Result<Topology, TopologyError> {
        let mut t = Topology::new();
        let mut names: HashMap<&str, Named> = HashMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at =
                |message: String| TopologyError::Shape(format!("line {}: {message}", index + 1));
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["switch", name, attributes @ ..] => {
                    let (mut ports, mut group) = (None, 0);
                    for attribute in attributes {
                        match attribute.split_once('=') {
                            Some(("ports", v)) => ports = Some(number(v, "ports").map_err(at)?),
                            Some(("group", v)) => group = number(v, "group").map_err(at)?,
                            _ => {
                                return Err(at(format!(
                                    "unknown switch attribute {attribute:?}: expected ports=N or group=G"
                                )))
                            }
                        }
                    }
                    let ports = ports.ok_or_else(|| at(format!("switch {name} needs ports=N")))?;
                    if ports == 0 {
                        return Err(at(format!("switch {name} needs at least one port")));
                    }
                    let switch = t.add_switch(ports);
                    t.set_group(switch, group);
                    declare(&mut names, name, Named::Switch(switch)).map_err(at)?;
                }
                ["host", name] => {
                    let host = t.add_endpoint(*name);
                    declare(&mut names, name, Named::Host(host)).map_err(at)?;
                }
                ["cable", a, b, attributes @ ..] => {
                    let a = end(&names, a).map_err(at)?;
                    let b = end(&names, b).map_err(at)?;
                    t.connect(a, b).map_err(|e| at(e.to_string()))?;
                    for attribute in attributes {
                        let delay_ns = match attribute.split_once('=') {
                            Some(("propagation_ns", v)) => v
                                .parse::<f64>()
                                .ok()
                                .filter(|ns| ns.is_finite() && *ns >= 0.0)
                                .ok_or_else(|| at(format!("propagation_ns={v}: expected zero or more nanoseconds")))?,
                            _ => {
                                return Err(at(format!(
                                    "unknown cable attribute {attribute:?}: expected propagation_ns=X"
                                )))
                            }
                        };
                        let (switch, port) = match (a, b) {
                            (Attachment::SwitchPort { switch, port }, _)
                            | (_, Attachment::SwitchPort { switch, port }) => (switch, port),
                            _ => unreachable!("a cable has a switch end"),
                        };
                        t.set_cable_delay(switch, port, ps_from_ns(delay_ns));
                    }
                }
                _ => {
                    return Err(at(format!(
                        "expected `switch NAME ports=N [group=G]`, `host NAME` or `cable END END`, got {line:?}"
                    )))
                }
            }
        }
        if let Some(host) = (0..t.endpoints()).find(|&h| t.endpoint_port(h).is_none()) {
            return Err(TopologyError::Shape(format!(
                "host {} is not cabled to a switch",
                t.endpoint_name(host)
            )));
        }
        Ok(t)
    }
}

fn number(text: &str, what: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("{what}={text}: expected a whole number"))
}

fn declare<'a>(
    names: &mut HashMap<&'a str, Named>,
    name: &'a str,
    node: Named,
) -> Result<(), String> {
    match names.insert(name, node) {
        None => Ok(()),
        Some(_) => Err(format!("{name} is declared twice")),
    }
}

/// A cable end: `host` or `switch:port`.
fn end(names: &HashMap<&str, Named>, text: &str) -> Result<Attachment, String> {
    let (name, port) = match text.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (text, None),
    };
    let node = names.get(name).ok_or_else(|| {
        format!("{name} is not declared (declare it with `switch` or `host` first)")
    })?;
    match (*node, port) {
        (Named::Host(host), None) => Ok(Attachment::Endpoint(host)),
        (Named::Host(_), Some(_)) => Err(format!(
            "{text}: a host has one port; name it without :PORT"
        )),
        (Named::Switch(switch), Some(port)) => Ok(Attachment::SwitchPort {
            switch,
            port: number(port, name)?,
        }),
        (Named::Switch(_), None) => Err(format!("{text}: name a switch port as {name}:PORT")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_SWITCHES: &str = "
        # two 4-port switches, two hosts each, joined by two cables
        switch s0 ports=4
        switch s1 ports=4 group=1
        host a
        host b
        host c
        host d
        cable a s0:0
        cable b s0:1
        cable c s1:0
        cable d s1:1
        cable s0:2 s1:2
        cable s0:3 s1:3 propagation_ns=250.5   # a second, longer, parallel cable
    ";

    #[test]
    fn a_file_builds_the_topology_it_describes() {
        let t = Topology::from_file_text(TWO_SWITCHES).unwrap();
        assert_eq!((t.switches(), t.endpoints(), t.groups()), (2, 4, 2));
        assert_eq!(t.endpoint_port(3), Some((1, 1)));
        assert_eq!(
            t.peer(0, 3),
            Some(Attachment::SwitchPort { switch: 1, port: 3 })
        );
        assert_eq!(t.route(0, 3).unwrap().len(), 2);
        assert_eq!(t.cable_delay_ps(0, 3), Some(250_500));
        assert_eq!(t.cable_delay_ps(1, 3), Some(250_500), "both ends");
        assert_eq!(t.cable_delay_ps(0, 2), None);
    }

    #[test]
    fn every_mistake_names_its_line() {
        let cases = [
            (
                "switch s0 ports=4\ncable h9 s0:0",
                "line 2: h9 is not declared",
            ),
            (
                "switch s0 ports=4\nhost a\nhost b\ncable a s0:0\ncable b s0:0",
                "line 5:",
            ),
            (
                "switch s0 ports=4\nswitch s0 ports=2",
                "line 2: s0 is declared twice",
            ),
            ("switch s0 ports=4\nhost a\ncable a s0:4", "line 3:"),
            ("switch s0\n", "line 1: switch s0 needs ports=N"),
            (
                "switch s0 ports=four",
                "line 1: ports=four: expected a whole number",
            ),
            ("router r0", "line 1: expected `switch"),
            ("switch s0 ports=2\nhost a", "host a is not cabled"),
            (
                "switch s0 ports=2\nhost a\ncable a:0 s0:0",
                "a host has one port",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 length=5",
                "unknown cable attribute",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 propagation_ns=-1",
                "expected zero or more",
            ),
        ];
        for (text, expected) in cases {
            let error = Topology::from_file_text(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }
}
