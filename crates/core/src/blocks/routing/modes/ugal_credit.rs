//! UGAL-L as Kim, Dally, Scott and Abts's Dragonfly simulator decides it ("Technology-Driven,
//! Highly-Scalable Dragonfly Topology", ISCA 2008, §4.2; the Dragonfly UGAL routing of their
//! BookSim simulator): once, at the source router, the cell goes minimally unless the minimal
//! output's used credits exceed twice the Valiant output's plus a bias of 30 flits toward
//! minimal routing. The intermediate is the group of a random terminal: the cell's own group
//! means minimal, the destination's group a detour that crosses it first (the simulator
//! routes to the intermediate terminal's router; here to its group, as Valiant does).
//! It reads credits where the switch keeps them (a VC router's [`LocalView`] gives an
//! output's used credits; a cell switch gives its queue).
//!
//! [`LocalView`]: super::super::LocalView

use rand::Rng as _;

use super::super::{Decision, Mode};

/// The mode.
pub const MODE: Mode = Mode {
    name: "ugal_credit",
    description: "UGAL-L at the source router: minimal unless its used credits exceed 2 x Valiant's + 30 (Dragonfly)",
    needs_groups: true,
    ..Mode::choosing(choose)
};

/// Flits of bias toward the minimal route (the simulator's `adaptive_threshold`).
const MINIMAL_BIAS_CELLS: u64 = 30;

fn choose(d: &mut Decision<'_>) -> usize {
    let minimal = match d.minimal_unless_decided() {
        Ok(minimal) => minimal,
        Err(decided) => return decided,
    };
    let here = d.table.group(d.switch);
    let via = d.rng.gen_range(0..d.table.groups());
    if here == d.destination_group() || via == here {
        return minimal;
    }
    let detour = d.random(d.table.toward_group(d.switch, via));
    let minimal_used = d.view.backlog_cells(minimal) as u64;
    let detour_used = d.view.backlog_cells(detour) as u64;
    if minimal_used <= 2 * detour_used + MINIMAL_BIAS_CELLS {
        minimal
    } else {
        d.go_via(via);
        detour
    }
}
