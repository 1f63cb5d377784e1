//! Pairs: the flows `traffic.pairs` lists, `[sending host, receiving host]` each, all starting
//! together (the PFC victim-flow and BFC scenarios' hand-placed flows).

use super::{Flows, PatternKeys, TrafficPattern};
use crate::engine::rng::Rng;
use crate::keys::{invalid, ScenarioError};

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "pairs",
    description: "the flows traffic.pairs lists, [src, dst] each, all together",
    keys: &["traffic.pairs"],
    check,
    ..TrafficPattern::made_at_build(flows)
};

fn check(keys: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    if keys.pairs.is_empty() {
        return Err(invalid(
            "traffic.pairs",
            "expected at least one [src, dst] pair",
        ));
    }
    Ok(())
}

fn flows(keys: &PatternKeys<'_>, hosts: usize, _: &mut Rng) -> Flows {
    let pair = |&[src, dst]: &[u32; 2]| (src as usize, dst as usize);
    if let Some((s, d)) = keys
        .pairs
        .iter()
        .map(pair)
        .find(|&(s, d)| s == d || s.max(d) >= hosts)
    {
        return Err(invalid(
            "traffic.pairs",
            format!("expected two distinct hosts below {hosts} in each pair, got [{s}, {d}]"),
        ));
    }
    Ok(keys
        .pairs
        .iter()
        .map(pair)
        .map(|(s, d)| keys.flow(s, d))
        .collect())
}
