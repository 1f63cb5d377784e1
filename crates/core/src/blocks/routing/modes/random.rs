//! A uniformly random equal-cost next hop for every cell.

use super::super::{Decision, Mode};

/// The mode.
pub const MODE: Mode = Mode {
    name: "random",
    description: "a random equal-cost next hop per cell",
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    let set = d.next_set();
    d.random(set)
}
