//! An adapter's uplinks (Stardust §3.2, §5.3): each new cell is sprayed over the uplinks the
//! routing table allows toward its destination adapter (cells for the adapter's own hosts go
//! round robin over all uplinks and cross the fabric; our reading). Control cells go before
//! data on each link. The adapter packs more cells only while the data cells waiting on its
//! uplinks are below a bound, so credits wait in their FIFO rather than as cells. Debug builds
//! check that bound's count against the cells the uplinks hold.

use super::super::reach::DeviceReach;
use super::super::CellFormat;
use super::UPLINK;
use crate::blocks::cell::{Cell, CellId};
use crate::blocks::cell_element::transmit;
use crate::blocks::fabric::Context;
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};

/// The uplink queues and, where the adapter keeps them, its reachability tables for the
/// cell's destination host, as routing sees them (routing names its switch's ports).
struct Backlog<'a> {
    uplinks: &'a [PriorityPort],
    uplink_of_port: &'a [u16],
    reach: Option<&'a DeviceReach>,
    dst: u16,
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
    }
}

/// An adapter's uplinks.
pub struct Uplinks {
    /// The ports, in fabric port order.
    pub ports: Vec<PriorityPort>,
    /// For each port of the adapter's switch in the topology, the uplink it is (or `u16::MAX`).
    uplink_of_port: Vec<u16>,
    /// Data cells waiting on the uplinks.
    data_cells: u32,
    /// The adapter packs more only while `data_cells` is below this.
    room_cells: u32,
    /// Next uplink for cells to this adapter's own hosts.
    local_next: usize,
    /// Cells sent (cell-hops).
    pub cells_sent: u64,
}

impl Uplinks {
    /// Uplinks `ports`, keeping `cells_each` data cells queued per uplink.
    pub fn new(ports: Vec<PriorityPort>, uplink_of_port: Vec<u16>, cells_each: u32) -> Self {
        Uplinks {
            room_cells: cells_each * ports.len() as u32,
            ports,
            uplink_of_port,
            data_cells: 0,
            local_next: 0,
            cells_sent: 0,
        }
    }

    /// The uplinks can take more data cells.
    pub fn have_room(&self) -> bool {
        self.data_cells < self.room_cells
    }

    /// The uplink a new cell from switch `switch` takes: sprayed toward its destination
    /// adapter, or round robin when `local` (its destination is the adapter's own host);
    /// `None` if no uplink is usable.
    pub fn route<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        cell: &mut Cell,
        switch: usize,
        local: bool,
        reach: Option<&DeviceReach>,
    ) -> Option<usize> {
        ctx.router.inject(cell.src as usize, cell);
        if local {
            return self.next_usable(reach, cell.dst);
        }
        let view = Backlog {
            uplinks: &self.ports,
            uplink_of_port: &self.uplink_of_port,
            reach,
            dst: cell.dst,
        };
        let port = ctx.router.route(switch, 0, cell, &view);
        if port != NO_ROUTE {
            return Some(self.uplink_of_port[port] as usize);
        }
        // No minimal uplink left: with longer routes allowed, any uplink whose element still
        // reaches the destination.
        reach
            .filter(|r| r.non_minimal)
            .and_then(|_| self.next_usable(reach, cell.dst))
    }

    /// The next uplink, round robin, that reachability allows toward host `dst`.
    fn next_usable(&mut self, reach: Option<&DeviceReach>, dst: u16) -> Option<usize> {
        let n = self.ports.len();
        for _ in 0..n {
            self.local_next = (self.local_next + 1) % n;
            if reach.is_none_or(|r| r.usable(self.local_next, dst)) {
                return Some(self.local_next);
            }
        }
        None
    }

    /// Queues cell `id` on uplink `uplink`: data of class `class`, or control.
    pub fn push<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        uplink: usize,
        id: CellId,
        class: Option<usize>,
    ) {
        match class {
            Some(class) => {
                self.ports[uplink].push_data(ctx.cells, id, class);
                self.data_cells += 1;
            }
            None => self.ports[uplink].push_control(ctx.cells, id),
        }
    }

    /// Sends on uplink `uplink` if its link is free, else makes sure it wakes when it frees.
    pub fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, uplink: usize, format: CellFormat) {
        let port = &mut self.ports[uplink];
        let tag = UPLINK | uplink as u32;
        if let Some(d) = transmit(ctx, port, uplink, format, tag, |_, _| {}) {
            if d.data_depth > 0 {
                self.data_cells -= 1;
            }
            self.cells_sent += 1;
        }
        self.debug_check();
    }

    /// `cells` data cells of the uplinks were lost (a cut link's queue).
    pub fn lost(&mut self, cells: u32) {
        self.data_cells -= cells;
        self.debug_check();
    }

    /// Cells queued on the uplinks.
    pub fn cells_held(&self) -> u64 {
        self.ports.iter().map(|p| p.queued_cells() as u64).sum()
    }

    /// Debug builds: the data cells counted against the bound are those the uplinks hold.
    fn debug_check(&self) {
        if cfg!(debug_assertions) {
            let queued: u32 = self.ports.iter().map(PriorityPort::data_cells).sum();
            debug_assert_eq!(
                queued, self.data_cells,
                "uplink data cells against their count"
            );
        }
    }

    /// Test only: miscounts the data cells waiting.
    #[cfg(test)]
    pub(crate) fn miscount(&mut self) {
        self.data_cells += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::link::Link;

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "uplink data cells against their count")]
    fn a_miscounted_uplink_fires() {
        let ports = (0..2)
            .map(|_| PriorityPort::new(Link::new(10_000_000_000, 1_000), 1))
            .collect();
        let mut u = Uplinks::new(ports, vec![0, 1, u16::MAX], 1);
        assert!(u.have_room());
        u.miscount();
        u.lost(0);
    }
}
