//! One fixed path per destination: among the equal-cost candidates, the one indexed by the
//! destination terminal modulo their number ("D-mod-k", as fat-tree tables are classically
//! filled), so destinations spread evenly over parallel links.

use super::super::{Decision, Mode, RouteTable};
use crate::blocks::cell::Cell;

/// The mode.
pub const MODE: Mode = Mode {
    name: "deterministic",
    description: "one path per destination (D-mod-k over the equal-cost next hops)",
    needs_groups: false,
    choose,
};

fn choose(d: &mut Decision<'_>) -> usize {
    output(d.table, d.switch, d.cell)
}

/// The output at `switch` for `cell` (not at its destination switch): fixed by the tables.
pub fn output(table: &RouteTable, switch: usize, cell: &Cell) -> usize {
    let (dst_switch, _) = table.terminal_at(cell.dst as usize);
    let ports = table.ports(table.toward_switch(switch, dst_switch));
    ports[cell.dst as usize % ports.len()] as usize
}
