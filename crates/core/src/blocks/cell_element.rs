//! The event-driven cell element: a cell switch with no packet logic, every cell queued on
//! arrival for the output its caller's routing picked, each output a [`PriorityPort`] with a
//! control queue served first and one data queue per virtual channel. Parameterized by the
//! number of virtual channels (the ports' data classes) and the arbitration among them at each
//! output (strict priority, or round robin), and by what a design's cells say
//! ([`CellWire`]: which are control, their channel, their bytes on a link, how one is marked).
//!
//! Stardust (Zilberman, Bracha and Schzukin, "Stardust: Divide and Conquer in the Data Center
//! Network", NSDI '19, §4.2, §5.5, Fig. 6) is the first user: data cells that leave a queue at or
//! above the marking threshold carry the congestion bit (FCI); the queues draw on a pool shared
//! by all the element's links (§5.5), and as the last resort a queue that reaches its pause
//! threshold sends OFF to each input that feeds it a cell, and ON once it has drained below the
//! resume threshold (link-level ON/OFF of the data path; control cells are never paused). A
//! push fabric instead discards whole packets as cell switches do (Romanow and Floyd 1995):
//! once a cell of a packet is dropped the rest of the packet is too (partial packet discard),
//! and a queue at the threshold refuses new packets whole (early packet discard).
//!
//! Aquila (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter networks",
//! NSDI '22, §3.1) would use it with 32 virtual channels and round robin among them at each
//! output; its per-VC credit flow control, input FIFOs and iSLIP crossbar are not built here
//! (this element is output-queued, with link-level pause only).

use crate::blocks::cell::{Cell, CellArena, CellId, NO_PACKET};
use crate::blocks::fabric::Context;
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::port_set::PortSet;
use crate::blocks::priority_port::{Departure, PriorityPort};
use crate::blocks::routing::Router;
use crate::engine::time::TimePs;

/// What a design's cells say to the devices that carry them.
pub trait CellWire: Copy {
    /// True for control cells (served first, never paused or dropped for congestion).
    fn is_control(&self, cell: &Cell) -> bool;
    /// The virtual channel (traffic class) of a data cell.
    fn channel(&self, cell: &Cell) -> usize;
    /// True if a data cell begins a packet (or a burst of packets).
    fn begins_packet(&self, cell: &Cell) -> bool;
    /// Bytes the cell takes on a link.
    fn wire_bytes(&self, cell: &Cell) -> u64;
    /// Marks a data cell that leaves a congested queue.
    fn mark(&self, cell: &mut Cell);
}

/// Puts the next cell of `port` (the node's port `index`) on its link if the link is free,
/// letting `depart` see it first (to mark it), and sets the node's timer `tag` for when the
/// link frees if cells still wait.
pub fn transmit<R: Router, W: CellWire>(
    ctx: &mut Context<'_, R>,
    port: &mut PriorityPort,
    index: usize,
    wire: W,
    tag: u32,
    depart: impl FnOnce(&mut Cell, &Departure),
) -> Option<Departure> {
    let mut wake = None;
    let departure = port.send_next(
        ctx.now_ps,
        ctx.cells,
        |c, cells| wire.wire_bytes(&cells[c]),
        &mut wake,
    );
    if let Some(d) = &departure {
        depart(&mut ctx.cells[d.cell], d);
        ctx.send_cell(index, d.cell, d.arrive_ps);
    }
    if let Some(at_ps) = wake {
        ctx.set_timer(at_ps, tag);
    }
    departure
}

/// What an element counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElementCounters {
    /// Cells sent on its links (cell-hops).
    pub cells_sent: u64,
    /// Data cells dropped on a full queue.
    pub cells_dropped: u64,
    /// Packets lost with them (those whose last byte a dropped cell carried; the packets a
    /// dropped cell began or crossed are discarded at reassembly); the caller counts them.
    pub packets_lost: u64,
    /// Data cells sent marked.
    pub cells_marked: u64,
    /// Deepest data queue seen, in cells.
    pub queue_peak_cells: u32,
    /// OFF signals sent upstream.
    pub pauses: u64,
}

/// What an element does about a filling queue.
#[derive(Clone, Copy, Debug)]
pub enum Congestion {
    /// A data queue at `off_cells` pauses each input that adds to it, and releases them all
    /// once down to `on_cells`; queues draw on a pool shared by all the element's links, and
    /// a cell is dropped only when the pool is full.
    Pause {
        /// Queue depth that pauses an input.
        off_cells: u32,
        /// Queue depth that resumes the inputs it paused.
        on_cells: u32,
        /// Data cells the element holds in all.
        pool_cells: u32,
    },
    /// A queue at `early_cells` refuses new packets; a packet that lost a cell loses the
    /// rest.
    Discard {
        /// Queue depth from which a packet's first cell is refused.
        early_cells: u32,
    },
}

/// How an output chooses among its virtual channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arbitration {
    /// Channel 0 first.
    StrictPriority,
    /// One cell per channel in turn.
    RoundRobin,
}

/// How an element is configured.
pub struct CellElementSpec<W> {
    /// Its ports' transmit sides, each with one data queue per virtual channel.
    pub ports: Vec<PriorityPort>,
    /// What its cells say.
    pub wire: W,
    /// How an output chooses among its channels.
    pub arbitration: Arbitration,
    /// Data cells a queue (per channel) holds in a discarding element.
    pub queue_cells: u32,
    /// Depth from which departing data cells are marked.
    pub mark_threshold_cells: u32,
    /// What it does about a filling queue.
    pub congestion: Congestion,
    /// The least time a data cell holds its output link (a pipeline slot per cell; 0: its
    /// serialization only).
    pub data_slot_ps: TimePs,
}

/// A cell element.
pub struct CellElement<W> {
    ports: Vec<PriorityPort>,
    wire: W,
    queue_cells: u32,
    mark_threshold_cells: u32,
    congestion: Congestion,
    data_slot_ps: TimePs,
    /// Discarding: streams (source, destination) whose current packet is being discarded.
    discarding: Vec<(u16, u16)>,
    /// Per output: the inputs it paused.
    paused_by: Vec<PortSet>,
    /// Per input: the outputs holding it paused.
    pauses_on: Vec<u16>,
    /// Data cells held in all its queues (what the shared pool holds).
    pool_used: u32,
    /// What it counted.
    pub counters: ElementCounters,
}

impl<W: CellWire> CellElement<W> {
    /// An element as `spec` says.
    pub fn new(spec: CellElementSpec<W>) -> Self {
        let n = spec.ports.len();
        let mut ports = spec.ports;
        if spec.arbitration == Arbitration::RoundRobin {
            ports
                .iter_mut()
                .for_each(PriorityPort::serve_classes_round_robin);
        }
        CellElement {
            ports,
            wire: spec.wire,
            queue_cells: spec.queue_cells,
            mark_threshold_cells: spec.mark_threshold_cells,
            congestion: spec.congestion,
            data_slot_ps: spec.data_slot_ps,
            discarding: Vec::new(),
            paused_by: vec![PortSet::EMPTY; n],
            pauses_on: vec![0; n],
            pool_used: 0,
            counters: ElementCounters::default(),
        }
    }

    /// Its ports.
    pub fn ports(&self) -> &[PriorityPort] {
        &self.ports
    }

    /// Its ports, to flush or pause.
    pub fn ports_mut(&mut self) -> &mut [PriorityPort] {
        &mut self.ports
    }

    /// Cells queued on its ports.
    pub fn cells_held(&self) -> u64 {
        self.ports.iter().map(|p| p.queued_cells() as u64).sum()
    }

    /// Queues `cell`, from `input`, on `output` and sends if the link is free; false if it is
    /// a data cell the element refuses (the caller drops it).
    pub fn accept<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        input: usize,
        output: usize,
        cell: CellId,
    ) -> bool {
        if self.wire.is_control(&ctx.cells[cell]) {
            self.ports[output].push_control(ctx.cells, cell);
        } else {
            let depth = self.ports[output].data_cells();
            let channel = self.wire.channel(&ctx.cells[cell]);
            let channel_depth = self.ports[output].class_cells(channel);
            if self.refuses(&ctx.cells[cell], channel_depth) {
                self.counters.cells_dropped += 1;
                return false;
            }
            self.ports[output].push_data(ctx.cells, cell, channel);
            self.pool_used += 1;
            self.counters.queue_peak_cells = self.counters.queue_peak_cells.max(depth + 1);
            self.maybe_pause(ctx, input, output, depth + 1);
            self.debug_check_pool(output);
        }
        self.kick(ctx, output);
        true
    }

    /// A data cell from `input` joined `output`'s queue, now `depth` deep: pause the input if
    /// the queue is at its threshold.
    fn maybe_pause<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        input: usize,
        output: usize,
        depth: u32,
    ) {
        let Congestion::Pause { off_cells, .. } = self.congestion else {
            return;
        };
        if depth < off_cells || self.paused_by[output].contains(input) {
            return;
        }
        self.paused_by[output].insert(input);
        self.pauses_on[input] += 1;
        if self.pauses_on[input] == 1 {
            self.counters.pauses += 1;
            ctx.send_signal(input, FlowSignal::Off { channel: 0 }, ctx.now_ps);
        }
        self.debug_check_pauses(input);
    }

    /// `output`'s queue drained: release the inputs it paused once it is low enough.
    pub fn maybe_resume<R: Router>(&mut self, ctx: &mut Context<'_, R>, output: usize) {
        let Congestion::Pause { on_cells, .. } = self.congestion else {
            return;
        };
        if self.ports[output].data_cells() > on_cells || self.paused_by[output].is_empty() {
            return;
        }
        for input in std::mem::take(&mut self.paused_by[output]).iter() {
            self.pauses_on[input] -= 1;
            if self.pauses_on[input] == 0 {
                ctx.send_signal(input, FlowSignal::On { channel: 0 }, ctx.now_ps);
            }
            self.debug_check_pauses(input);
        }
    }

    /// True if data cell `cell` is dropped rather than joining its channel's queue, `depth`
    /// deep: a full pool, or a discarding element refusing the cell's packet.
    fn refuses(&mut self, cell: &Cell, depth: u32) -> bool {
        let early_cells = match self.congestion {
            Congestion::Pause { pool_cells, .. } => return self.pool_used >= pool_cells,
            Congestion::Discard { early_cells } => early_cells,
        };
        let stream = (cell.src, cell.dst);
        let ends_packet = cell.packet != NO_PACKET;
        if let Some(at) = self.discarding.iter().position(|&s| s == stream) {
            if ends_packet {
                self.discarding.swap_remove(at);
            }
            return true;
        }
        let refused =
            depth >= self.queue_cells || (self.wire.begins_packet(cell) && depth >= early_cells);
        if refused && !ends_packet {
            self.discarding.push(stream);
        }
        refused
    }

    /// Sends on `port` if its link is free (marking a data cell that leaves a queue at the
    /// threshold), else makes sure it wakes when it frees.
    pub fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let threshold = self.mark_threshold_cells;
        let counters = &mut self.counters;
        let wire = self.wire;
        let mark = |cell: &mut Cell, d: &Departure| {
            if d.data_depth >= threshold && d.data_depth > 0 {
                wire.mark(cell);
                counters.cells_marked += 1;
            }
        };
        let departure = transmit(ctx, &mut self.ports[port], port, wire, port as u32, mark);
        if let Some(d) = departure {
            self.counters.cells_sent += 1;
            if d.data_depth > 0 {
                if self.data_slot_ps > 0 {
                    // The cell's pipeline slot: the output takes no other cell before it ends.
                    self.ports[port]
                        .link
                        .hold_until(ctx.now_ps + self.data_slot_ps);
                }
                self.pool_used -= 1;
                self.maybe_resume(ctx, port);
            }
        }
    }

    /// Prefetches what [`kick`](Self::kick) of `port` will take first (a hint).
    #[inline]
    pub fn warm(&self, cells: &CellArena, port: usize) {
        if let Some(p) = self.ports.get(port) {
            p.warm(cells);
        }
    }

    /// The far end of `port` paused (OFF) or resumed (ON) its data.
    pub fn signal<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, off: bool) {
        self.ports[port].pause_data(off);
        self.kick(ctx, port);
    }

    /// `cells` data cells of the pool were lost with a port's queue.
    pub fn lost(&mut self, cells: u32) {
        self.pool_used -= cells;
        self.debug_check_all();
    }

    /// Forgets every pause and discard (the element failed).
    pub fn reset(&mut self) {
        self.discarding.clear();
        self.paused_by.fill(PortSet::EMPTY);
        self.pauses_on.fill(0);
    }

    /// Debug builds: the pool holds at least the data cells of `output`, and no more than
    /// it may.
    fn debug_check_pool(&self, output: usize) {
        debug_assert!(
            self.pool_used >= self.ports[output].data_cells(),
            "the shared pool holds fewer cells than output {output}'s queue"
        );
        if let Congestion::Pause { pool_cells, .. } = self.congestion {
            debug_assert!(
                self.pool_used <= pool_cells,
                "the shared pool over its size"
            );
        }
    }

    /// Debug builds: `input` is held paused by exactly the outputs that list it.
    fn debug_check_pauses(&self, input: usize) {
        if cfg!(debug_assertions) {
            let holding = self.paused_by.iter().filter(|s| s.contains(input)).count();
            debug_assert_eq!(
                holding, self.pauses_on[input] as usize,
                "input {input}'s pause count against the outputs pausing it"
            );
        }
    }

    /// Debug builds: the pool holds exactly the data cells of all the queues.
    pub fn debug_check_all(&self) {
        if cfg!(debug_assertions) {
            let queued: u32 = self.ports.iter().map(PriorityPort::data_cells).sum();
            debug_assert_eq!(queued, self.pool_used, "shared pool against the queues");
        }
    }

    /// Test only: miscounts the pool by one cell.
    #[cfg(test)]
    pub(crate) fn miscount_pool(&mut self) {
        self.pool_used += 1;
    }

    /// Test only: forgets that output `output` pauses `input`.
    #[cfg(test)]
    pub(crate) fn forget_pause(&mut self, output: usize, input: usize) {
        self.paused_by[output].remove(input);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::link::Link;

    /// Cells whose flags' low bit says control and whose `seq` is their channel.
    #[derive(Clone, Copy)]
    struct TestWire;

    impl CellWire for TestWire {
        fn is_control(&self, cell: &Cell) -> bool {
            cell.flags & 1 != 0
        }
        fn channel(&self, cell: &Cell) -> usize {
            cell.seq as usize
        }
        fn begins_packet(&self, _: &Cell) -> bool {
            true
        }
        fn wire_bytes(&self, _: &Cell) -> u64 {
            64
        }
        fn mark(&self, cell: &mut Cell) {
            cell.flags |= 2;
        }
    }

    /// An element that pauses its inputs, its outputs served by strict priority.
    fn pausing_element() -> CellElement<TestWire> {
        element(
            Arbitration::StrictPriority,
            Congestion::Pause {
                off_cells: 4,
                on_cells: 2,
                pool_cells: 24,
            },
        )
    }

    fn element(arbitration: Arbitration, congestion: Congestion) -> CellElement<TestWire> {
        CellElement::new(CellElementSpec {
            ports: (0..3)
                .map(|_| PriorityPort::new(Link::new(10_000_000_000, 1_000), 2))
                .collect(),
            wire: TestWire,
            arbitration,
            queue_cells: 8,
            mark_threshold_cells: 2,
            congestion,
            data_slot_ps: 0,
        })
    }

    #[test]
    fn round_robin_arbitration_is_set_on_every_port() {
        let e = element(
            Arbitration::RoundRobin,
            Congestion::Discard { early_cells: 4 },
        );
        assert_eq!(e.ports().len(), 3);
        assert_eq!(e.cells_held(), 0);
    }

    #[test]
    fn a_discarding_element_refuses_the_rest_of_a_packet() {
        let mut e = element(
            Arbitration::StrictPriority,
            Congestion::Discard { early_cells: 0 },
        );
        let mut cell = Cell::new(1, 2, 64, false, 0, 0);
        assert!(e.refuses(&cell, 0), "early discard from depth 0");
        cell.packet = 0;
        assert!(
            e.refuses(&cell, 0),
            "the packet's last cell is discarded too"
        );
        assert!(e.discarding.is_empty(), "and ends the discard");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "holds fewer cells than output 0's queue")]
    fn a_queue_beyond_the_pool_fires() {
        let mut e = pausing_element();
        let mut cells = crate::blocks::cell::CellArena::new();
        let id = cells.alloc(Cell::new(1, 2, 64, false, 0, 0));
        e.ports_mut()[0].push_data(&mut cells, id, 0);
        e.debug_check_pool(0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "the shared pool over its size")]
    fn a_pool_over_its_size_fires() {
        let mut e = pausing_element();
        for _ in 0..25 {
            e.miscount_pool();
        }
        e.debug_check_pool(0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "shared pool against the queues")]
    fn a_miscounted_pool_fires() {
        let mut e = pausing_element();
        e.miscount_pool();
        e.lost(0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "pause count against the outputs pausing it")]
    fn a_forgotten_pause_fires() {
        let mut e = pausing_element();
        e.paused_by[0].insert(1);
        e.pauses_on[1] = 1;
        e.forget_pause(0, 1);
        e.debug_check_pauses(1);
    }
}
