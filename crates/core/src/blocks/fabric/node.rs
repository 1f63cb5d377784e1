//! The node interface: one device of a fabric (a host, a switch, later an adapter or a fabric
//! element) and the [`Context`] it acts through.
//!
//! A node is told that a cell reached one of its inputs, that a flow-control signal reached
//! one of its outputs, that its clock ticked or that its timer fired. It acts only through the
//! context: it can send a cell or a signal on one of its ports, set its timer, record what it
//! delivers or drops, and read the time and the routing tables. It never reads another node,
//! so every node can be tested alone, and the fabric stays free to run nodes in parallel
//! partitions one day.

use super::Plumbing;
use crate::blocks::cell::{Cell, CellArena, CellId};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::packet::PacketArena;
use crate::blocks::routing::Router;
use crate::engine::time::TimePs;

/// One device of a fabric, routed by `R`. By default a node takes each cell as it arrives,
/// keeps what reaches it (it is no sink), has no clock, timer or flow-controlled outputs: a
/// device states only what it does.
pub trait Node<R: Router> {
    /// True for a slotted node: cells reaching it wait on its input wires and are latched at
    /// its next clock edge (inputs in port order), just before [`tick`](Self::tick). False (the
    /// default) for a node that takes each cell as it arrives.
    fn is_slotted(&self) -> bool {
        false
    }
    /// True for a node whose cell arrivals change nothing but what it counts (a host's sink):
    /// it is told of a cell as soon as the cell is sent, with the cell's arrival time as its
    /// now, and the cell costs no event. Arrivals after the end of the run stay on the wire.
    /// False by default.
    fn is_sink(&self) -> bool {
        false
    }
    /// Cells the node holds (waiting to send, buffered), counted where they are: the cell
    /// account's "in flight" term adds these to the fabric's wires.
    fn cells_held(&self) -> u64;
    /// Cell `cell` reached input `port` at `at_ps` (for a slotted node, latched at the clock
    /// edge `ctx.now_ps`).
    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs);
    /// A flow-control signal reached output `port` from downstream; by default ignored (a
    /// node whose outputs no flow control gates).
    fn signal_arrives(&mut self, _ctx: &mut Context<'_, R>, _port: usize, _signal: FlowSignal) {}
    /// The node's clock edge; returns the next one it needs, if any (the fabric books an
    /// earlier one for a cell still on the wires that arrives before it). By default none: an event-driven node has no clock.
    fn tick(&mut self, _ctx: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }
    /// The node's timer `tag` fired; by default nothing (a node that sets no timer).
    fn timer(&mut self, _ctx: &mut Context<'_, R>, _tag: u32) {}
    /// `cell` will reach input `port` soon (the event after the one running): the node may
    /// prefetch what it will touch then ([`crate::engine::cache::prefetch`]), so that the
    /// cache miss overlaps with the running event. A hint only: it changes nothing.
    #[inline]
    fn warm(&self, _cell: &Cell, _port: usize) {}
    /// The node's timer `tag` will fire soon (the event after the one running): as
    /// [`warm`](Self::warm), the node may prefetch what the timer will touch (an output's next
    /// cell). A hint only: it changes nothing.
    #[inline]
    fn warm_timer(&self, _cells: &CellArena, _tag: u32) {}
}

/// What a node may do while it handles an event.
pub struct Context<'a, R> {
    /// Now.
    pub now_ps: TimePs,
    /// Every cell; a node touches only the cells it holds or receives.
    pub cells: &'a mut CellArena,
    /// Every packet of a design that packs packets into cells; a node touches only the
    /// packets it holds or whose cells it receives.
    pub packets: &'a mut PacketArena,
    /// The routing tables and state (a switch routes through them, a host writes its cells'
    /// routes).
    pub router: &'a mut R,
    pub(super) node: usize,
    pub(super) plumbing: &'a mut Plumbing,
}

impl<R: Router> Context<'_, R> {
    /// This node's index among the switches the router knows, if it is one.
    pub fn router_index(&self) -> Option<usize> {
        self.plumbing.router_index(self.node)
    }

    /// Sends `cell` out of `port`; its last bit reaches the far end at `arrive_ps`.
    pub fn send_cell(&mut self, port: usize, cell: CellId, arrive_ps: TimePs) {
        self.plumbing
            .send_cell(self.node, port, cell, arrive_ps, self.cells);
    }

    /// Records a hop of `cell`, whose trace bit is set, through this switch.
    pub fn trace_hop(&mut self, cell: CellId, hop: super::trace::TraceHop) {
        self.plumbing
            .metrics
            .trace
            .record(cell, &self.cells[cell], hop);
    }

    /// Sends a flow-control signal back over the link on `port`, leaving at `leave_ps` (not
    /// before now); it takes the link's propagation delay.
    pub fn send_signal(&mut self, port: usize, signal: FlowSignal, leave_ps: TimePs) {
        let at_ps = (leave_ps + self.plumbing.delay_ps(self.node, port)).max(self.now_ps);
        self.plumbing.send_signal(self.node, port, signal, at_ps);
    }

    /// True unless the cable on `port` runs a link protocol that cannot take a cell now (a
    /// RIFL Layer 1 end pausing for a replay, or still holding the last cell handed to it).
    pub fn port_ready(&self, port: usize) -> bool {
        self.plumbing
            .layer1
            .is_ready(self.plumbing.port(self.node, port))
    }

    /// True if the cable on `port` is a plain wire (no link protocol of its own that may hold
    /// cells back).
    pub fn port_is_plain(&self, port: usize) -> bool {
        !self
            .plumbing
            .layer1
            .has(self.plumbing.port(self.node, port))
    }

    /// True if any cable of the fabric runs a link protocol (see [`port_ready`](Self::port_ready)).
    pub fn fabric_has_link_protocols(&self) -> bool {
        self.plumbing.layer1.is_used()
    }

    /// Sets this node's timer `tag` (the node's own numbering of its timers) to fire at
    /// `at_ps` (a node ignores the firings it no longer wants).
    pub fn set_timer(&mut self, at_ps: TimePs, tag: u32) {
        self.plumbing.set_timer(self.node, at_ps, tag);
    }

    /// Books a clock edge of this slotted node at `at_ps` (an edge of its clock), unless one
    /// is booked at or before it: a node that sleeps between edges with nothing to do wakes
    /// so on what it cannot foresee, such as a credit's arrival.
    pub fn wake_at(&mut self, at_ps: TimePs) {
        self.plumbing.book_edge(self.node, at_ps);
    }

    /// The flow-control channel `cell` will use on the link out of `port`: the VOQ it will join
    /// at the next switch where flow control is per VOQ, else the link's one channel.
    pub fn next_channel(&self, port: usize, cell: &Cell) -> u16 {
        self.plumbing
            .next_channel(self.node, port, cell, self.router)
    }

    /// The cell arena and a [`Routes`] writer, apart, so a host can route the cells it
    /// generates while it stores them.
    pub fn routes(&mut self) -> (&mut CellArena, Routes<'_, R>) {
        let routes = Routes {
            router: self.router,
            plumbing: self.plumbing,
            node: self.node,
        };
        (self.cells, routes)
    }

    /// Records `cell` as delivered to this host now (latency statistics) and releases it.
    pub fn deliver(&mut self, cell: CellId) {
        self.plumbing
            .metrics
            .deliver(self.now_ps, &self.cells[cell]);
        self.cells.free(cell);
    }

    /// Releases `cell`, which reached the node that consumes it (a design that keeps its own
    /// delivery statistics, per packet or per control message, counts it).
    pub fn consume(&mut self, cell: CellId) {
        self.cells.free(cell);
        self.plumbing.metrics.moves += 1;
    }

    /// Discards `cell` (a full buffer) and counts it as dropped.
    pub fn drop_cell(&mut self, cell: CellId) {
        self.cells.free(cell);
        self.plumbing.metrics.cells_dropped += 1;
        self.plumbing.metrics.moves += 1;
    }
}

/// Writes routes into cells a host generates: what the router writes at the source, and the
/// flow-control channel of the host's link.
pub struct Routes<'a, R> {
    router: &'a mut R,
    plumbing: &'a Plumbing,
    node: usize,
}

impl<R: Router> Routes<'_, R> {
    /// Routes `cell`, leaving this host on `port`.
    pub fn write(&mut self, port: usize, cell: &mut Cell) {
        self.router.inject(cell.src as usize, cell);
        cell.vc = self
            .plumbing
            .next_channel(self.node, port, cell, &*self.router);
    }
}
