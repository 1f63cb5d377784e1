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
//! cable s0:1 s1:1 rate_gbps=400 overhead_bytes=8 flow_control=credit
//! cable s0:0 s2:0 ber=1e-7     # a cable with bit errors of its own (RIFL Layer 1)
//! ```
//!
//! A cable's attributes override the scenario's `link` section for that cable alone: its
//! propagation delay, its rate, the bytes each cell carries on the wire beyond its own (FEC,
//! framing), the flow control into the switch it feeds, and its bit error rate (in a RIFL rack,
//! a cable with errors runs Layer 1's retransmission; `ber=0` makes a cable error-free).
//!
//! Hosts are numbered in the order they are declared. Every name is declared once, every host
//! is cabled once, and no port takes two cables.

use std::collections::HashMap;

use super::{Attachment, Cable, Topology, TopologyError};
use crate::blocks::bit_errors::MAX_BER;
use crate::blocks::flow_control::FlowControlKind;
use crate::engine::time::ps_from_ns;

/// The fastest cable a file may declare (1 Pbit/s: a 64-byte cell still takes a picosecond).
const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;

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
                    let cable = cable_attributes(attributes).map_err(at)?;
                    let (switch, port) = match (a, b) {
                        (Attachment::SwitchPort { switch, port }, _)
                        | (_, Attachment::SwitchPort { switch, port }) => (switch, port),
                        _ => unreachable!("a cable has a switch end"),
                    };
                    t.set_cable(switch, port, cable);
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

/// A cable's own properties from its `key=value` attributes.
fn cable_attributes(attributes: &[&str]) -> Result<Cable, String> {
    let mut cable = Cable::default();
    for attribute in attributes {
        let positive = |v: &str, what: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| format!("{what}={v}: expected a positive number"))
        };
        match attribute.split_once('=') {
            Some(("propagation_ns", v)) => {
                let ns = v
                    .parse::<f64>()
                    .ok()
                    .filter(|ns| ns.is_finite() && *ns >= 0.0)
                    .ok_or_else(|| format!("propagation_ns={v}: expected zero or more nanoseconds"))?;
                cable.propagation_ps = Some(ps_from_ns(ns));
            }
            Some(("rate_gbps", v)) => {
                let bps = (positive(v, "rate_gbps")? * 1e9).round();
                if bps < 1.0 {
                    return Err(format!("rate_gbps={v}: expected at least one bit per second"));
                }
                if bps > MAX_RATE_BPS as f64 {
                    return Err(format!("rate_gbps={v}: expected at most {} Gbit/s", MAX_RATE_BPS / 1_000_000_000));
                }
                cable.rate_bps = Some(bps as u64);
            }
            Some(("overhead_bytes", v)) => {
                cable.overhead_bytes = Some(
                    v.parse()
                        .map_err(|_| format!("overhead_bytes={v}: expected a whole number of bytes"))?,
                )
            }
            Some(("ber", v)) => {
                let ber = v
                    .parse::<f64>()
                    .ok()
                    .filter(|b| b.is_finite() && (0.0..=MAX_BER).contains(b))
                    .ok_or_else(|| format!("ber={v}: expected a bit error rate from 0 to {MAX_BER:e}"))?;
                cable.ber = Some(ber);
            }
            Some(("flow_control", v)) => {
                cable.flow_control = Some(match v {
                    "none" => FlowControlKind::None,
                    "credit" => FlowControlKind::Credit,
                    "onoff" => FlowControlKind::Onoff,
                    _ => return Err(format!("flow_control={v}: expected none, credit or onoff")),
                })
            }
            _ => {
                return Err(format!(
                    "unknown cable attribute {attribute:?}: expected propagation_ns=X, rate_gbps=X, overhead_bytes=N, flow_control=none|credit|onoff or ber=X"
                ))
            }
        }
    }
    Ok(cable)
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
        cable b s0:2
        cable c s1:0
        cable d s1:2
        cable s0:3 s1:3 propagation_ns=250.5   # a second, longer, parallel cable
        cable s0:1 s1:1 rate_gbps=400 overhead_bytes=8 flow_control=credit
    ";

    #[test]
    fn a_file_builds_the_topology_it_describes() {
        let t = Topology::from_file_text(TWO_SWITCHES).unwrap();
        assert_eq!((t.switches(), t.endpoints(), t.groups()), (2, 4, 2));
        assert_eq!(t.endpoint_port(3), Some((1, 2)));
        assert_eq!(
            t.peer(0, 3),
            Some(Attachment::SwitchPort { switch: 1, port: 3 })
        );
        assert_eq!(t.route(0, 3).unwrap().len(), 2);
        assert_eq!(t.cable(0, 3).propagation_ps, Some(250_500));
        assert_eq!(t.cable(1, 3).propagation_ps, Some(250_500), "both ends");
        assert!(
            t.cable(0, 2).is_default(),
            "a host's cable takes the scenario's link"
        );
        let fast = Cable {
            propagation_ps: None,
            rate_bps: Some(400_000_000_000),
            overhead_bytes: Some(8),
            flow_control: Some(FlowControlKind::Credit),
            ber: None,
        };
        assert_eq!((t.cable(0, 1), t.cable(1, 1)), (fast, fast));
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
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 rate_gbps=0",
                "line 3: rate_gbps=0: expected a positive number",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 rate_gbps=1e9",
                "expected at most",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 rate_gbps=1e-10",
                "expected at least one bit per second",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 overhead_bytes=-3",
                "overhead_bytes=-3",
            ),
            (
                "switch s0 ports=2\nhost a\ncable a s0:0 flow_control=pfc",
                "expected none, credit or onoff",
            ),
        ];
        for (text, expected) in cases {
            let error = Topology::from_file_text(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }
}
