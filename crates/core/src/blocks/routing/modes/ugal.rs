//! Universal Globally-Adaptive Load-balanced routing with local information, UGAL-L (Kim,
//! Dally, Scott, Abts, ISCA 2008, §4.2): the source switch compares the minimal path's output
//! queue times its hop count with a random Valiant path's, and takes the smaller.

use super::super::{Decision, Mode};

/// The mode.
pub const MODE: Mode = Mode {
    name: "ugal",
    description:
        "UGAL-L: minimal or Valiant, whichever has the smaller local queue x hops (Dragonfly)",
    needs_groups: true,
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    let minimal = match d.minimal_unless_decided() {
        Ok(minimal) => minimal,
        Err(decided) => return decided,
    };
    let here = d.table.group(d.switch);
    let via = match d.random_intermediate_group() {
        Some(via) if here != d.destination_group() => via,
        _ => return minimal,
    };
    let (dst_switch, _) = d.table.terminal_at(d.cell.dst as usize);
    let minimal_cost =
        d.view.backlog_cells(minimal) as u64 * d.table.hops(d.switch, dst_switch) as u64;
    let detour = d.random(d.table.toward_group(d.switch, via));
    let detour_hops = d.table.hops_via_group(d.switch, via, dst_switch);
    let detour_cost = d.view.backlog_cells(detour) as u64 * detour_hops as u64;
    if minimal_cost <= detour_cost {
        minimal
    } else {
        d.go_via(via);
        detour
    }
}
