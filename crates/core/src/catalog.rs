//! What cellfabric can build, by name: every design and every mechanism a scenario can choose,
//! each with a one-line description, taken from the registries where the names are defined.

use serde::Serialize;

use crate::blocks::ethernet::ports::PORT_KINDS;
use crate::blocks::patterns::PATTERNS;
use crate::blocks::routing::local_misroute::TurnRule;
use crate::blocks::routing::MODES;
use crate::blocks::transport::Transport;
use crate::designs::DESIGNS;
use crate::scenario::{DestinationName, FlowControlKind, Named, SchedulerName, TopologyName};

/// One named thing a scenario can choose.
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    /// The scenario key that takes the name.
    pub key: &'static str,
    /// The name.
    pub name: &'static str,
    /// What it is, in one line.
    pub description: &'static str,
}

/// Every design and mechanism, grouped by the key that names it.
pub fn catalog() -> Vec<Entry> {
    let entry = |key, name, description| Entry {
        key,
        name,
        description,
    };
    let designs = DESIGNS
        .iter()
        .map(|d| entry("design", d.name, d.description));
    let routing = MODES
        .iter()
        .map(|m| entry("routing.mode", m.name, m.description));
    let port_kinds = PORT_KINDS
        .iter()
        .map(|k| entry("switch.port_kind", k.name, k.description));
    let patterns = PATTERNS
        .iter()
        .map(|p| entry("traffic.pattern", p.name, p.description));
    designs
        .chain(named::<SchedulerName>("switch.scheduler"))
        .chain(named::<TopologyName>("topology.kind"))
        .chain(routing)
        .chain(named::<TurnRule>("routing.local_misroutes"))
        .chain(named::<FlowControlKind>("link.flow_control"))
        .chain(named::<DestinationName>("traffic.destinations"))
        .chain(patterns)
        .chain(named::<Transport>("host.transport"))
        .chain(port_kinds)
        .collect()
}

/// Every value of a named mechanism, under the key that takes it.
fn named<N: Named>(key: &'static str) -> impl Iterator<Item = Entry> {
    N::ALL.iter().map(move |n| Entry {
        key,
        name: n.as_str(),
        description: n.description(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// Every listed scheduler, topology kind, flow control and destination pattern is a name the
    /// scenario parser accepts for its key, so the list cannot drift from what runs.
    #[test]
    fn every_listed_name_is_accepted_by_its_key() {
        for e in catalog() {
            let (section, field) = match e.key.split_once('.') {
                Some(pair) => pair,
                None => continue,
            };
            if e.key == "routing.mode" {
                assert!(crate::blocks::routing::mode(e.name).is_some());
                continue;
            }
            if e.key == "traffic.pattern" {
                // Each design runs some of the patterns: one of them takes each.
                let traffic = |list: &str| {
                    format!(
                        r#""traffic": {{"pattern": "{}", "flow_sizes": "sizes.txt", {list}}}"#,
                        e.name
                    )
                };
                let ethernet = format!(
                    r#"{{"design": "ethernet", {}}}"#,
                    traffic(r#""pairs": [[0, 1]]"#)
                );
                let stardust = |list| format!(r#"{{"design": "stardust", {}}}"#, traffic(list));
                let listed = stardust(r#""flows": [{"src": 0, "dst": 1, "load": 0.5}]"#);
                let taken = crate::designs::ethernet::EthernetConfig::from_json(&ethernet).is_ok()
                    || [listed, stardust(r#""background_flows": 1"#)]
                        .iter()
                        .any(|json| {
                            crate::designs::stardust::StardustConfig::from_json(json).is_ok()
                        });
                assert!(taken, "{}: {} rejected by every design", e.key, e.name);
                continue;
            }
            if section == "host" || e.key == "switch.port_kind" {
                let json = ethernet_scenario(e.key, e.name);
                let parsed = crate::designs::ethernet::EthernetConfig::from_json(&json);
                assert!(parsed.is_ok(), "{}: {} rejected: {parsed:?}", e.key, e.name);
                continue;
            }
            let json = format!(r#"{{"{section}": {{"{field}": "{}"}}}}"#, e.name);
            let parsed: Result<Scenario, _> = crate::scenario::parse(&json);
            assert!(parsed.is_ok(), "{}: {} rejected: {parsed:?}", e.key, e.name);
        }
    }

    /// An Ethernet scenario naming transport or port kind `name` (by `key`), with a port kind
    /// or transport that fits it and, for a transport that sprays, a per-packet routing mode:
    /// found by their descriptors.
    fn ethernet_scenario(key: &str, name: &str) -> String {
        use crate::blocks::ethernet::ports::PortKind;
        use crate::blocks::transport::{TransportKind, TRANSPORTS};
        let fits = |t: &TransportKind, p: &PortKind| {
            t.needs_trimming == p.trims && (p.lossless || !t.needs_lossless) && !p.per_flow_routing
                || p.per_flow_routing && !t.needs_trimming
        };
        let (t, p) = if key == "host.transport" {
            let t = TRANSPORTS.iter().find(|t| t.name == name).unwrap();
            (t, PORT_KINDS.iter().find(|p| fits(t, p)).unwrap())
        } else {
            let p = PORT_KINDS.iter().find(|p| p.name == name).unwrap();
            (TRANSPORTS.iter().find(|t| fits(t, p)).unwrap(), p)
        };
        let per_packet = MODES
            .iter()
            .find(|m| !m.per_flow && !m.needs_groups)
            .unwrap();
        let routing = match t.needs_trimming {
            true => format!(r#", "routing": {{"mode": "{}"}}"#, per_packet.name),
            false => String::new(),
        };
        format!(
            r#"{{"design": "ethernet", "host": {{"transport": "{}"}}, "switch": {{"port_kind": "{}"}}{routing}}}"#,
            t.name, p.name
        )
    }
}
