//! Per-cell spraying as Stardust's fabric elements do it (Stardust §4.3, §5.3): each set of
//! equal-cost links is served round robin in a random order, and the order is re-drawn every
//! few passes, so consecutive cells take different links without a fixed pattern. Links that
//! are not usable are skipped.

use rand::seq::SliceRandom;

use super::super::{Decision, Mode, NO_ROUTE};

/// The mode.
pub const MODE: Mode = Mode {
    name: "spray",
    description: "per cell, round robin over a random order of the equal-cost next hops, re-drawn every few passes",
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    round_robin(d, true)
}

/// The next usable candidate in the round-robin order of the cell's candidate set; with
/// `redraw`, the order is shuffled every `rounds` passes (otherwise it stays the table's).
pub fn round_robin(d: &mut Decision<'_>, redraw: bool) -> usize {
    let set = d.next_set();
    let order = &mut d.spray.order[d.table.set_range(set)];
    let next = &mut d.spray.next[set];
    // The rest of this pass, then (re-drawn, perhaps) one whole pass: every candidate seen.
    for _ in 0..2 * order.len() {
        if *next == 0 && redraw {
            let passes_left = &mut d.spray.passes_left[set];
            if *passes_left == 0 {
                order.shuffle(d.rng);
                *passes_left = d.spray.rounds;
            }
            *passes_left -= 1;
        }
        let port = order[*next as usize] as usize;
        *next = (*next + 1) % order.len() as u16;
        if d.view.usable(port) {
            return port;
        }
    }
    NO_ROUTE
}
