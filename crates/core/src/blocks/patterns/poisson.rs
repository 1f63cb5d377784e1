//! Poisson arrivals: every host opens flows of sizes drawn from `traffic.flow_sizes` to
//! uniformly drawn other hosts, arriving as a Poisson process at `traffic.load` of its line
//! rate (the open-loop workload of Homa's and HomaSim's evaluations).

use super::{PatternKeys, TrafficPattern};
use crate::blocks::ethernet::opening::Opening;
use crate::keys::{invalid, is_load, ScenarioError};

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "poisson",
    description: "every host opens flows (sizes from traffic.flow_sizes) to uniform other hosts, Poisson arrivals at traffic.load of its line rate",
    keys: &["traffic.flow_sizes", "traffic.load"],
    ..TrafficPattern::opened_during_run(check, |keys| Opening::Poisson { load: keys.load })
};

fn check(keys: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    keys.require_flow_sizes()?;
    if !is_load(keys.load) {
        return Err(invalid(
            "traffic.load",
            "expected a fraction of line rate from 1e-6 to 1",
        ));
    }
    Ok(())
}
