//! Listed flows: the flows `traffic.flows` lists, each `{src, dst, load, class}` with its own
//! offered load and traffic class. Its flows are rates, so it runs on a design's paced sources
//! only.

use serde::{Deserialize, Serialize};

use super::{Flows, PatternFlow, PatternKeys, TrafficPattern};
use crate::engine::rng::Rng;
use crate::keys::{invalid, is_load, ScenarioError};

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "flows",
    description: "the flows traffic.flows lists, {src, dst, load, class} each",
    keys: &["traffic.flows"],
    own_loads: true,
    transport_hosts: false,
    check,
    ..TrafficPattern::made_at_build(flows)
};

/// One flow of `traffic.flows`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListedFlow {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Offered rate as a fraction of the sending host's line rate.
    pub load: f64,
    /// Traffic class, 0 (served first) up to the design's classes.
    #[serde(default)]
    pub class: u32,
}

fn check(keys: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    if keys.flows.is_empty() {
        return Err(invalid(
            "traffic.flows",
            format!(
                "expected at least one {{src, dst, load}} with traffic.pattern = {}",
                keys.quoted()
            ),
        ));
    }
    for (i, flow) in keys.flows.iter().enumerate() {
        if flow.src == flow.dst {
            return Err(invalid(
                &format!("traffic.flows[{i}].dst"),
                "expected a host other than src",
            ));
        }
        if flow.class as usize >= keys.classes {
            return Err(invalid(
                &format!("traffic.flows[{i}].class"),
                format!("expected 0 to {}", keys.classes - 1),
            ));
        }
        if !is_load(flow.load) {
            return Err(invalid(
                &format!("traffic.flows[{i}].load"),
                "expected a fraction of line rate from 1e-6 to 1",
            ));
        }
    }
    Ok(())
}

/// The listed flows, once every host is on the topology and no host offers more than its line
/// rate in all.
fn flows(keys: &PatternKeys<'_>, hosts: usize, _: &mut Rng) -> Flows {
    let mut load_of = vec![0.0; hosts];
    for (i, f) in keys.flows.iter().enumerate() {
        for (key, host) in [("src", f.src), ("dst", f.dst)] {
            if host as usize >= hosts {
                return Err(invalid(
                    &format!("traffic.flows[{i}].{key}"),
                    format!("expected a host below {hosts}, got {host}"),
                ));
            }
        }
        load_of[f.src as usize] += f.load;
        if load_of[f.src as usize] > 1.0 + 1e-9 {
            return Err(invalid(
                &format!("traffic.flows[{i}].load"),
                format!("host {} offers more than its line rate in all", f.src),
            ));
        }
    }
    Ok(keys
        .flows
        .iter()
        .map(|f| PatternFlow {
            src: f.src as usize,
            dst: f.dst as usize,
            load: f.load,
            class: f.class,
        })
        .collect())
}
