//! Closed loop: every host keeps `traffic.flows_per_host` flows of sizes drawn from
//! `traffic.flow_sizes` in flight to uniformly drawn other hosts, opening a new one as one
//! completes.

use super::{PatternKeys, TrafficPattern};
use crate::blocks::ethernet::opening::Opening;
use crate::keys::{invalid, ScenarioError};

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "closed_loop",
    description: "every host keeps traffic.flows_per_host flows (sizes from traffic.flow_sizes) in flight to uniform other hosts",
    keys: &["traffic.flow_sizes", "traffic.flows_per_host"],
    ..TrafficPattern::opened_during_run(check, |keys| Opening::ClosedLoop {
        flows_per_host: keys.flows_per_host,
    })
};

fn check(keys: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    keys.require_flow_sizes()?;
    if keys.flows_per_host == 0 {
        return Err(invalid("traffic.flows_per_host", "expected at least 1"));
    }
    Ok(())
}
