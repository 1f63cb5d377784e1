//! One fixed path per destination: among the equal-cost candidates, the one picked by a hash of
//! the destination salted per switch. (The same destination index at every tier, as a plain
//! "destination mod k" would take, sends every flow that shares an uplink at the edge onto one
//! core link as well.)

use super::super::{Decision, Mode, RouteTable};
use crate::blocks::cell::Cell;
use crate::engine::rng::mix;

/// The mode.
pub const MODE: Mode = Mode {
    name: "deterministic",
    description: "one path per destination (a per-switch hash of the destination over the equal-cost next hops)",
    needs_groups: false,
    per_flow: true,
    choose,
    plan: Some(output),
};

fn choose(d: &mut Decision<'_>) -> usize {
    let pick = output(d.table, d.switch, d.salt, d.cell);
    let set = d.next_set();
    d.usable_or_rehash(set, pick, mix(d.salt ^ d.cell.dst as u64))
}

/// The output at `switch` (whose salt is `salt`) for `cell`, not at its destination switch:
/// fixed by the tables and the destination.
pub fn output(table: &RouteTable, switch: usize, salt: u64, cell: &Cell) -> usize {
    let (dst_switch, _) = table.terminal_at(cell.dst as usize);
    let ports = table.ports(table.toward_switch(switch, dst_switch));
    ports[(mix(salt ^ cell.dst as u64) % ports.len() as u64) as usize] as usize
}
