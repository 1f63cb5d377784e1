//! An adapter's uplinks (Stardust §3.2, §5.3): the adapter "sprays the cells over all the
//! fabric links in a way that balances the load". The cells of a credit's burst wait at the
//! adapter, in order, and each goes to an uplink with room (fewer than `adapter.uplink_cells`
//! data cells queued): the next uplink in the spray's order toward its destination adapter
//! among those with room, so no uplink idles while the adapter holds credited cells and no
//! queue grows deeper than the bound (reassembly puts the cells back in order). Cells for the
//! adapter's own hosts go round robin over the uplinks with room and cross the fabric (our
//! reading). Control cells go before data on each link, sprayed over every usable uplink as
//! they are made. A new burst is cut only when the last one's cells have all found an uplink
//! and some uplink has room, so credits wait in their FIFO rather than as cells.
//!
//! The uplinks also meter what the scheme is for: the time an uplink spends idle while its
//! adapter holds credited data (credits waiting, or cut cells waiting for an uplink). Debug
//! builds check after every dispatch that cells wait only while every uplink is full.

use std::collections::VecDeque;

use super::super::reach::DeviceReach;
use super::super::CellFormat;
use super::UPLINK;
use crate::blocks::cell::{Cell, CellId};
use crate::blocks::cell_element::transmit;
use crate::blocks::fabric::Context;
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};
use crate::engine::time::TimePs;

/// The uplink queues and, where the adapter keeps them, its reachability tables for the
/// cell's destination host, as routing sees them (routing names its switch's ports); with
/// `room_each`, only uplinks holding fewer data cells than that may take the cell.
struct Backlog<'a> {
    uplinks: &'a [PriorityPort],
    uplink_of_port: &'a [u16],
    reach: Option<&'a DeviceReach>,
    dst: u16,
    room_each: Option<u32>,
}

impl LocalView for Backlog<'_> {
    fn backlog_cells(&self, output: usize) -> u32 {
        match self.uplink_of_port.get(output) {
            Some(&uplink) if uplink != u16::MAX => self.uplinks[uplink as usize].data_cells(),
            _ => u32::MAX,
        }
    }

    fn usable(&self, output: usize) -> bool {
        let uplink = self.uplink_of_port[output] as usize;
        self.reach.is_none_or(|r| r.usable(uplink, self.dst))
            && self
                .room_each
                .is_none_or(|n| self.uplinks[uplink].data_cells() < n)
    }
}

/// A data cell cut and waiting for an uplink: the cell and its traffic class.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: CellId,
    class: usize,
}

/// An adapter's uplinks.
pub struct Uplinks {
    /// The ports, in fabric port order.
    pub ports: Vec<PriorityPort>,
    /// For each port of the adapter's switch in the topology, the uplink it is (or `u16::MAX`).
    uplink_of_port: Vec<u16>,
    /// Data cells an uplink may hold queued.
    cells_each: u32,
    /// Data cells cut and waiting for an uplink with room, in order.
    waiting: VecDeque<Waiting>,
    /// Cells dispatched that no uplink could carry (reachability lost their destination).
    unroutable: Vec<CellId>,
    /// Next uplink for cells to this adapter's own hosts.
    local_next: usize,
    /// Cells sent (cell-hops).
    pub cells_sent: u64,
    /// The idle meter: uplink time idle while credited data waited.
    pub idle: IdleMeter,
}

/// Uplink time spent idle while the adapter held credited data, metered between the
/// adapter's events (an uplink's queue changes only at them).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleMeter {
    /// Uplink-picoseconds idle while credited data waited.
    pub idle_ps: u64,
    /// When the meter last ran.
    last_ps: TimePs,
    /// The adapter held credited data after its last event.
    credited: bool,
}

impl Uplinks {
    /// Uplinks `ports`, each holding at most `cells_each` data cells queued.
    pub fn new(ports: Vec<PriorityPort>, uplink_of_port: Vec<u16>, cells_each: u32) -> Self {
        Uplinks {
            ports,
            uplink_of_port,
            cells_each,
            waiting: VecDeque::new(),
            unroutable: Vec::new(),
            local_next: 0,
            cells_sent: 0,
            idle: IdleMeter::default(),
        }
    }

    /// A new burst may be cut: the last one's cells all found an uplink, and one has room.
    pub fn have_room(&self) -> bool {
        self.waiting.is_empty() && self.some_room()
    }

    /// Some uplink holds fewer data cells than its bound.
    fn some_room(&self) -> bool {
        self.ports.iter().any(|p| p.data_cells() < self.cells_each)
    }

    /// Before an event at `now_ps`: adds the time each uplink was idle since the last event,
    /// if the adapter held credited data all that time.
    pub fn meter(&mut self, now_ps: TimePs) {
        let m = &mut self.idle;
        if m.credited {
            for p in &self.ports {
                if p.queued_cells() == 0 {
                    let from_ps = p.link.busy_until_ps().max(m.last_ps);
                    m.idle_ps += now_ps.saturating_sub(from_ps);
                }
            }
        }
        m.last_ps = now_ps;
    }

    /// After an event: whether the adapter holds credited data (credits waiting or cells cut)
    /// until its next.
    pub fn set_credited(&mut self, credits_waiting: bool) {
        self.idle.credited = credits_waiting || !self.waiting.is_empty();
    }

    /// Routes a new cell from switch `switch`: injected, then the uplink sprayed toward its
    /// destination adapter, or round robin when `local` (its destination is the adapter's own
    /// host); with `room`, among the uplinks with room first; `None` if no uplink is usable.
    pub fn route<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        cell: &mut Cell,
        switch: usize,
        local: bool,
        reach: Option<&DeviceReach>,
        room: bool,
    ) -> Option<usize> {
        ctx.router.inject(cell.src as usize, cell);
        let room_each = room.then_some(self.cells_each);
        if local {
            let found = self.next_usable(reach, cell.dst, room_each);
            return found.or_else(|| self.next_usable(reach, cell.dst, None));
        }
        let mut view = Backlog {
            uplinks: &self.ports,
            uplink_of_port: &self.uplink_of_port,
            reach,
            dst: cell.dst,
            room_each,
        };
        let mut port = ctx.router.route(switch, 0, cell, &view);
        if port == NO_ROUTE && room {
            // The cell's candidates are all full (a topology whose candidates are not every
            // uplink): it joins the spray's pick among them.
            view.room_each = None;
            port = ctx.router.route(switch, 0, cell, &view);
        }
        if port != NO_ROUTE {
            return Some(self.uplink_of_port[port] as usize);
        }
        // No minimal uplink left: with longer routes allowed, any uplink whose element still
        // reaches the destination.
        reach
            .filter(|r| r.non_minimal)
            .and_then(|_| self.next_usable(reach, cell.dst, None))
    }

    /// The next uplink, round robin, that reachability allows toward host `dst` (with
    /// `room_each`, holding fewer data cells than that).
    fn next_usable(
        &mut self,
        reach: Option<&DeviceReach>,
        dst: u16,
        room_each: Option<u32>,
    ) -> Option<usize> {
        let n = self.ports.len();
        for _ in 0..n {
            self.local_next = (self.local_next + 1) % n;
            let u = self.local_next;
            if reach.is_none_or(|r| r.usable(u, dst))
                && room_each.is_none_or(|each| self.ports[u].data_cells() < each)
            {
                return Some(u);
            }
        }
        None
    }

    /// Data cell `id` of class `class`, just cut, waits for an uplink.
    pub fn queue_data(&mut self, id: CellId, class: usize) {
        self.waiting.push_back(Waiting { id, class });
    }

    /// Hands the waiting cells, in order, to uplinks with room (each to the spray's next
    /// uplink with room toward its destination) and starts them; a cell no uplink can carry
    /// toward its destination is set aside for the caller to lose ([`Self::take_unroutable`]).
    /// `local` says whether a host is the adapter's own.
    pub fn dispatch<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        switch: usize,
        format: CellFormat,
        reach: Option<&DeviceReach>,
        local: impl Fn(u16) -> bool,
    ) {
        while let Some(&Waiting { id, class }) = self.waiting.front() {
            if !self.some_room() {
                break;
            }
            self.waiting.pop_front();
            let mut cell = ctx.cells[id];
            let is_local = local(cell.dst);
            let uplink = self.route(ctx, &mut cell, switch, is_local, reach, true);
            ctx.cells[id] = cell;
            match uplink {
                Some(uplink) => {
                    self.ports[uplink].push_data(ctx.cells, id, class);
                    self.kick(ctx, uplink, format);
                }
                None => self.unroutable.push(id),
            }
        }
        self.debug_check();
    }

    /// Queues control cell `id` on uplink `uplink`.
    pub fn push_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, uplink: usize, id: CellId) {
        self.ports[uplink].push_control(ctx.cells, id);
    }

    /// Sends on uplink `uplink` if its link is free, else makes sure it wakes when it frees.
    pub fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, uplink: usize, format: CellFormat) {
        let port = &mut self.ports[uplink];
        let tag = UPLINK | uplink as u32;
        if transmit(ctx, port, uplink, format, tag, |_, _| {}).is_some() {
            self.cells_sent += 1;
        }
    }

    /// The cells [`Self::dispatch`] found no uplink for, taken (the caller loses them).
    pub fn take_unroutable(&mut self) -> Vec<CellId> {
        std::mem::take(&mut self.unroutable)
    }

    /// Takes the cells waiting for an uplink out (the adapter failed), for the caller to lose.
    pub fn drain_waiting(&mut self) -> impl Iterator<Item = CellId> + '_ {
        self.waiting.drain(..).map(|w| w.id)
    }

    /// Cells queued on the uplinks and waiting for one.
    pub fn cells_held(&self) -> u64 {
        let queued: u64 = self.ports.iter().map(|p| p.queued_cells() as u64).sum();
        queued + self.waiting.len() as u64
    }

    /// Debug builds: cells wait for an uplink only while every uplink is full.
    fn debug_check(&self) {
        debug_assert!(
            self.waiting.is_empty() || !self.some_room(),
            "an uplink has room while cut cells wait"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::CellArena;
    use crate::blocks::link::Link;

    fn uplinks(n: usize, cells_each: u32) -> Uplinks {
        let ports = (0..n)
            .map(|_| PriorityPort::new(Link::new(10_000_000_000, 1_000), 1))
            .collect();
        Uplinks::new(ports, (0..n as u16).collect(), cells_each)
    }

    #[test]
    fn a_burst_is_cut_only_when_the_last_found_uplinks_and_one_has_room() {
        let mut cells = CellArena::new();
        let mut u = uplinks(2, 1);
        assert!(u.have_room());
        let id = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        u.ports[0].push_data(&mut cells, id, 0);
        assert!(u.have_room(), "uplink 1 has room");
        u.queue_data(id, 0);
        assert!(!u.have_room(), "a cell still waits");
        assert_eq!(u.cells_held(), 2);
    }

    #[test]
    fn the_meter_counts_an_idle_uplink_only_while_credited_data_waits() {
        let mut u = uplinks(3, 1);
        u.meter(100);
        u.set_credited(false);
        u.meter(1_000);
        assert_eq!(u.idle.idle_ps, 0, "nothing credited: idle is not waste");
        u.set_credited(true);
        u.meter(1_500);
        assert_eq!(u.idle.idle_ps, 3 * 500, "three idle uplinks for 500 ps");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "an uplink has room while cut cells wait")]
    fn a_cell_held_back_from_an_uplink_with_room_fires() {
        let mut cells = CellArena::new();
        let mut u = uplinks(2, 1);
        let id = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        u.queue_data(id, 0);
        u.debug_check();
    }
}
