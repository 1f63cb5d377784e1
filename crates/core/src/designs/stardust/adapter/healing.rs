//! What an adapter knows of failures elsewhere (Stardust §5.9, §5.10, App. E): which adapters
//! no uplink reaches any more (they failed: their VOQs are given up), whether its own tables
//! changed (its data cells then go on new routes and say so), and, as a destination, when the
//! first such cell of each source arrived: the self-healing time measured from the run.

use super::super::reach::DeviceReach;
use super::super::wire::REROUTED;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;

/// An adapter's view of failures; empty with static tables.
#[derive(Default)]
pub struct Healing {
    /// Per adapter: no uplink reaches it.
    unreachable: Vec<bool>,
    /// Its tables changed: its data cells go on routes chosen since.
    rerouted: bool,
    /// Per source adapter: when its first data cell sent on new routes arrived here.
    pub first_rerouted_arrival_ps: Vec<TimePs>,
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
            rerouted: false,
            first_rerouted_arrival_ps: vec![NEVER_PS; adapters],
        }
    }

    /// True if no uplink reaches adapter `adapter`.
    #[inline]
    pub fn unreachable(&self, adapter: u16) -> bool {
        self.unreachable.get(adapter as usize).is_some_and(|&u| u)
    }

    /// The tables of adapter `me` with `uplinks` uplinks changed: the adapters that just
    /// became unreachable.
    pub fn tables_changed(&mut self, reach: &DeviceReach, me: u16, uplinks: usize) -> Vec<u16> {
        self.rerouted = true;
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

    /// The flag its data cells carry: [`REROUTED`] once its tables changed.
    #[inline]
    pub fn flag(&self) -> u8 {
        if self.rerouted {
            REROUTED
        } else {
            0
        }
    }

    /// A data cell from adapter `src` with flags `flags` arrived at `now_ps`.
    #[inline]
    pub fn arrived(&mut self, src: u16, flags: u8, now_ps: TimePs) {
        if flags & REROUTED != 0 {
            let first = &mut self.first_rerouted_arrival_ps[src as usize];
            *first = (*first).min(now_ps);
        }
    }
}
