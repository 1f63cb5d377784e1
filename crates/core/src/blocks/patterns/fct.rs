//! The timed-flow workload of the Stardust paper's Fig. 10b (Zilberman et al., "Stardust:
//! Divide and Conquer in the Data Center Network", NSDI '19, §6.3): `traffic.fct_src` sends
//! `traffic.fct_dst` flows of sizes drawn from `traffic.flow_sizes`, arriving as a Poisson
//! process at `traffic.fct_load` of its line rate; every other host keeps
//! `traffic.background_flows` unending flows to random other hosts (never the timed receiver).
//! Transport hosts open the timed flows during the run, each its own connection; a design's
//! paced sources run the background at `traffic.load` of each host's line rate in all.

use std::collections::BTreeMap;

use super::{Flows, PatternFlow, PatternKeys, TrafficPattern};
use crate::blocks::ethernet::opening::Opening;
use crate::engine::rng::Rng;
use crate::keys::{invalid, is_load, ScenarioError};

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "fct",
    description: "traffic.fct_src's timed flows (sizes from traffic.flow_sizes, Poisson at traffic.fct_load) to traffic.fct_dst over every other host's traffic.background_flows unending flows (Stardust Fig. 10b)",
    keys: &[
        "traffic.fct_src",
        "traffic.fct_dst",
        "traffic.fct_load",
        "traffic.flow_sizes",
        "traffic.background_flows",
    ],
    check,
    opening: Some(|keys| Opening::Fct(keys.fct)),
    ..TrafficPattern::made_at_build(flows)
};

fn check(keys: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    keys.require_flow_sizes()?;
    let fct = &keys.fct;
    if !is_load(fct.load) {
        return Err(invalid(
            "traffic.fct_load",
            "expected a fraction of line rate from 1e-6 to 1",
        ));
    }
    if fct.src == fct.dst {
        return Err(invalid(
            "traffic.fct_dst",
            "expected a host other than traffic.fct_src",
        ));
    }
    if fct.background_flows == 0 {
        return Err(invalid("traffic.background_flows", "expected at least 1"));
    }
    Ok(())
}

/// The background flows of paced sources (the timed host's flows are the design's to make):
/// each host's `traffic.load` split evenly among its background flows, two flows of a host to
/// one destination made one flow of twice the rate (the Stardust validation's reading R24).
fn flows(keys: &PatternKeys<'_>, hosts: usize, rng: &mut Rng) -> Flows {
    keys.fct.check_hosts(hosts)?;
    let per_flow = keys.load / keys.fct.background_flows as f64;
    let mut load_of = BTreeMap::new();
    for pair in keys.fct.background(hosts, rng) {
        *load_of.entry(pair).or_insert(0.0) += per_flow;
    }
    Ok(load_of
        .into_iter()
        .map(|((src, dst), load)| PatternFlow {
            load,
            ..keys.flow(src, dst)
        })
        .collect())
}
