//! Equal-cost multi-path per flow: a hash of (source, destination) salted per switch picks one
//! of the equal-cost next hops, so every cell of a flow takes the same path and flows collide
//! as balls in bins.

use super::super::{Decision, Mode};

/// The mode.
pub const MODE: Mode = Mode {
    name: "ecmp",
    description: "per-flow hash over the equal-cost next hops",
    per_flow: true,
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    let set = d.next_set();
    let ports = d.table.ports(set);
    let hash = d.flow_hash();
    let pick = ports[(hash % ports.len() as u64) as usize] as usize;
    d.usable_or_rehash(set, pick, hash)
}
