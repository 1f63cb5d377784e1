//! Permutation: every host sends one flow to one other host and receives one, a random
//! derangement drawn from the pattern stream (the permutation of the Stardust paper's §6.3 and
//! of the htsim runs it reuses).

use rand::seq::SliceRandom;

use super::{Flows, PatternKeys, TrafficPattern};
use crate::engine::rng::Rng;
use crate::keys::invalid;

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "permutation",
    description: "every host sends to one other host and receives from one (a random derangement)",
    ..TrafficPattern::made_at_build(flows)
};

fn flows(keys: &PatternKeys<'_>, hosts: usize, rng: &mut Rng) -> Flows {
    if hosts < 2 {
        return Err(invalid("topology", "a permutation needs at least 2 hosts"));
    }
    let to = derangement(hosts, rng);
    Ok((0..hosts).map(|h| keys.flow(h, to[h])).collect())
}

/// A random derangement of `hosts` hosts (at least 2): host `h` sends to `to[h] != h`, and
/// every host receives from exactly one. Shuffle, then swap away every fixed point.
pub fn derangement(hosts: usize, rng: &mut Rng) -> Vec<usize> {
    debug_assert!(hosts >= 2);
    let mut to: Vec<usize> = (0..hosts).collect();
    to.shuffle(rng);
    for i in 0..hosts {
        if to[i] == i {
            let j = (i + 1) % hosts;
            to.swap(i, j);
        }
    }
    to
}
