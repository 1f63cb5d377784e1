//! Valiant's randomized routing on a Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008, §4.2): the
//! source switch sends each cell minimally to a random intermediate group, then minimally to
//! its destination, so any traffic pattern looks uniform to the global links at the price of
//! crossing two of them. Traffic inside one group stays minimal.

use super::super::{Decision, Mode};

/// The mode.
pub const MODE: Mode = Mode {
    name: "valiant",
    description: "through a random intermediate group, then to the destination (Dragonfly)",
    needs_groups: true,
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    if d.undecided() {
        match d.random_intermediate_group() {
            Some(via) if d.table.group(d.switch) != d.destination_group() => d.go_via(via),
            _ => d.go_minimal(),
        }
    }
    let set = d.next_set();
    d.random(set)
}
