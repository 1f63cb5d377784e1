//! Minimal adaptive routing: the equal-cost next hop whose output queue in this switch is
//! shortest among the usable ones, ties broken from a random starting candidate.

use rand::Rng as _;

use super::super::{Decision, Mode, NO_ROUTE};

/// The mode.
pub const MODE: Mode = Mode {
    name: "least_loaded",
    description: "minimal adaptive: the equal-cost next hop with the shortest local output queue",
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    let set = d.next_set();
    let ports = d.table.ports(set);
    let start = d.rng.gen_range(0..ports.len());
    let rotated = ports[start..].iter().chain(&ports[..start]);
    rotated
        .filter(|&&port| d.view.usable(port as usize))
        .min_by_key(|&&port| d.view.backlog_cells(port as usize))
        .map_or(NO_ROUTE, |&port| port as usize)
}
