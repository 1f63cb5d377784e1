//! All-to-all: every host sends to every other, `traffic.load` of its line rate in all, split
//! evenly (the flows between every pair of adapters of the Stardust paper's Fig. 9). Its flows
//! are rates, so it runs on a design's paced sources only.

use super::{Flows, PatternFlow, PatternKeys, TrafficPattern};
use crate::engine::rng::Rng;
use crate::keys::invalid;

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "all_to_all",
    description:
        "every host to every other, traffic.load of its line rate split evenly (Stardust Fig. 9)",
    transport_hosts: false,
    ..TrafficPattern::made_at_build(flows)
};

fn flows(keys: &PatternKeys<'_>, hosts: usize, _: &mut Rng) -> Flows {
    if hosts < 2 {
        return Err(invalid("topology", "all-to-all needs at least 2 hosts"));
    }
    let load = keys.load / (hosts - 1) as f64;
    Ok((0..hosts)
        .flat_map(|h| (0..hosts).filter(move |&d| d != h).map(move |d| (h, d)))
        .map(|(h, d)| PatternFlow {
            load,
            ..keys.flow(h, d)
        })
        .collect())
}
