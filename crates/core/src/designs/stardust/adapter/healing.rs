//! What an adapter knows of failures elsewhere (Stardust §5.9, §5.10, App. E): which adapters
//! no uplink reaches any more (they failed: their VOQs are given up), whether its own tables
//! changed (its data cells then go on new routes and say when the tables last changed), and, as
//! a destination, when the first cell each source sent after its latest change arrived: the
//! self-healing time measured from the run.

use super::super::reach::DeviceReach;
use super::super::wire::REROUTED;
use crate::blocks::cell::Cell;
use crate::engine::time::TimePs;

/// An adapter's view of failures; empty with static tables.
#[derive(Default)]
pub struct Healing {
    /// Per adapter: no uplink reaches it.
    unreachable: Vec<bool>,
    /// When its tables last changed, if they did: its data cells go on routes chosen since.
    changed_ps: Option<TimePs>,
    /// Per source adapter: each table change its cells here said, in order, and when the
    /// first cell sent after it arrived.
    pub rerouted_from: Vec<Vec<(TimePs, TimePs)>>,
}

impl Healing {
    /// The view of an adapter in a fabric of `adapters` adapters, kept only if its tables are
    /// kept by messages (`tracked`).
    pub fn new(adapters: usize, tracked: bool) -> Self {
        if !tracked {
            return Healing::default();
        }
        Healing {
            unreachable: vec![false; adapters],
            changed_ps: None,
            rerouted_from: vec![Vec::new(); adapters],
        }
    }

    /// True if no uplink reaches adapter `adapter`.
    #[inline]
    pub fn unreachable(&self, adapter: u16) -> bool {
        self.unreachable.get(adapter as usize).is_some_and(|&u| u)
    }

    /// The tables of adapter `me` with `uplinks` uplinks changed at `now_ps`: the adapters
    /// that just became unreachable.
    pub fn tables_changed(
        &mut self,
        reach: &DeviceReach,
        me: u16,
        uplinks: usize,
        now_ps: TimePs,
    ) -> Vec<u16> {
        self.changed_ps = Some(now_ps);
        let mut gone = Vec::new();
        for x in 0..self.unreachable.len() as u16 {
            let reached = x == me || (0..uplinks).any(|p| reach.table.usable(p, x));
            if !reached && !self.unreachable[x as usize] {
                gone.push(x);
            }
            self.unreachable[x as usize] = !reached;
        }
        gone
    }

    /// Marks a data cell it sends once its tables changed: [`REROUTED`], with the time of the
    /// latest change in `packet_inject_ps` (a Stardust data cell's packets carry their own
    /// creation times, so the field is otherwise a copy of `inject_ps`).
    #[inline]
    pub fn mark(&self, cell: &mut Cell) {
        if let Some(changed_ps) = self.changed_ps {
            cell.flags |= REROUTED;
            cell.packet_inject_ps = changed_ps;
        }
    }

    /// A data cell `cell` arrived at `now_ps`: the first sent after its source's latest change
    /// is kept.
    #[inline]
    pub fn arrived(&mut self, cell: &Cell, now_ps: TimePs) {
        if cell.flags & REROUTED == 0 {
            return;
        }
        let seen = &mut self.rerouted_from[cell.src as usize];
        match seen.iter_mut().rev().find(|e| e.0 <= cell.packet_inject_ps) {
            Some(e) if e.0 == cell.packet_inject_ps => e.1 = e.1.min(now_ps),
            _ => {
                seen.push((cell.packet_inject_ps, now_ps));
                seen.sort_unstable();
            }
        }
    }
}
