//! A fabric: nodes of a design's kinds ([`Node`]) wired port to port by a topology, moving
//! cells and flow-control signals by timestamped events on the one kernel loop. The fabric is
//! generic over the design's node enum and its router, and dispatches to nodes by `match`
//! (static dispatch, nothing boxed on the hot path).
//!
//! Events: a node's clock edge, its timer, a cell reaching a node that takes cells as they
//! arrive, a flow-control signal reaching a node. A cell on its way to a slotted node costs no
//! event: it waits on the input's wire, a FIFO in arrival order, until the node's first clock
//! edge at or after its arrival latches it, inputs in port order (as a register latches its
//! inputs). So what a slotted node does never depends on the order in which its neighbours'
//! events ran, and it costs one event per cell time however many cells it moves.
//!
//! A cell on its way to a sink (a host, whose arrivals only count) costs no event either: the
//! sink is told of it as the sender's handler returns, at the cell's arrival time.
//!
//! Every event carries its sender as its origin, so same-instant events run in an order that
//! does not depend on which node ran first (see [`crate::engine::queue`]).

pub mod layer1;
pub mod model;
pub mod node;
pub mod parallel;
pub mod partition;
pub mod trace;

use crate::blocks::cell::{Cell, CellArena, CellId, CellQueue, TRACED};
use crate::blocks::flow_control::{FlowSignal, EVERY_CHANNEL};
use crate::blocks::packet::PacketArena;
use crate::blocks::routing::Router;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::cache::prefetch;
use crate::engine::queue::{CalendarQueue, EventQueue, Origin, Phase};
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::{next_boundary_ps, TimePs};
use layer1::Layer1;
pub use layer1::{Framing, Layer1Counters, Layer1Spec, LAYER1_HEADER_BYTES};
pub use model::FabricModel;
pub use node::{Context, Node};
use parallel::{Border, Crossing};
use trace::CellTrace;

/// The messages of a fabric; small and `Copy`.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A node's clock edge.
    Tick(u32),
    /// A node's timer.
    Timer {
        /// The node.
        node: u32,
        /// Which of its timers (the node's own numbering).
        tag: u32,
    },
    /// A cell reaches a node that takes cells as they arrive.
    Cell {
        /// Receiving node.
        node: u32,
        /// Its input port.
        port: u16,
        /// The cell.
        cell: CellId,
    },
    /// Every Layer 1 cable runs one frame time.
    Layer1Step,
    /// A flow-control signal reaches a node's output.
    Signal {
        /// Receiving node.
        node: u32,
        /// Its output port.
        port: u16,
        /// The signal.
        signal: FlowSignal,
    },
}

/// What a fabric measures as cells move: latency at delivery, drops, signals, progress.
pub struct Metrics {
    /// Latencies are recorded for cells generated at or after this time.
    pub warmup_ps: TimePs,
    /// Latencies that are both a cell's and its packet's (the last cell of a packet generated
    /// with its first, a one-cell packet above all): recorded once, counted in both
    /// distributions.
    shared_latency: LatencyHistogram,
    /// The other cells' latencies, generation to delivery.
    cell_only_latency: LatencyHistogram,
    /// The other packets' latencies, first cell's generation to last cell's delivery.
    packet_only_latency: LatencyHistogram,
    /// Cells dropped.
    pub cells_dropped: u64,
    /// Flow-control signals sent.
    pub flow_control_signals: u64,
    /// Cells sent, delivered or dropped: the kernel's progress count.
    pub moves: u64,
    /// Cells delivered.
    pub cells_delivered: u64,
    /// The traced cells' hops (Aquila's cell tracing; off unless a fraction is set).
    pub trace: CellTrace,
}

impl Metrics {
    fn new(warmup_ps: TimePs) -> Self {
        Metrics {
            warmup_ps,
            shared_latency: LatencyHistogram::new(),
            cell_only_latency: LatencyHistogram::new(),
            packet_only_latency: LatencyHistogram::new(),
            cells_dropped: 0,
            flow_control_signals: 0,
            moves: 0,
            cells_delivered: 0,
            trace: CellTrace::off(),
        }
    }

    fn deliver(&mut self, now_ps: TimePs, cell: &Cell) {
        self.moves += 1;
        self.cells_delivered += 1;
        let cell_measured = cell.inject_ps > self.warmup_ps;
        let packet_measured = cell.last_of_packet && cell.packet_inject_ps > self.warmup_ps;
        if cell_measured && packet_measured && cell.inject_ps == cell.packet_inject_ps {
            self.shared_latency.record(now_ps - cell.inject_ps);
            return;
        }
        if cell_measured {
            self.cell_only_latency.record(now_ps - cell.inject_ps);
        }
        if packet_measured {
            self.packet_only_latency
                .record(now_ps - cell.packet_inject_ps);
        }
    }

    /// Adds what `other` (another partition's) measured.
    fn add(&mut self, other: &Metrics) {
        self.shared_latency.add(&other.shared_latency);
        self.cell_only_latency.add(&other.cell_only_latency);
        self.packet_only_latency.add(&other.packet_only_latency);
        self.cells_dropped += other.cells_dropped;
        self.flow_control_signals += other.flow_control_signals;
        self.moves += other.moves;
        self.cells_delivered += other.cells_delivered;
    }

    /// Cell latency, generation to delivery, of the measured cells.
    pub fn cell_latency(&self) -> LatencyHistogram {
        let mut all = LatencyHistogram::new();
        all.add(&self.shared_latency);
        all.add(&self.cell_only_latency);
        all
    }

    /// Packet latency, first cell's generation to last cell's delivery, of the measured packets.
    pub fn packet_latency(&self) -> LatencyHistogram {
        let mut all = LatencyHistogram::new();
        all.add(&self.shared_latency);
        all.add(&self.packet_only_latency);
        all
    }
}

/// Everything of a fabric but its nodes and router: the wiring, the wires, the clock edges
/// and the event queue. Nodes reach it only through their [`Context`].
pub struct Plumbing {
    queue: CalendarQueue<Event>,
    /// First port index of each node in the per-port arrays.
    port_base: Vec<u32>,
    /// Far end of each node port: (node, port).
    peer: Vec<(u32, u16)>,
    /// Cells on their way to each input of a slotted node, in arrival order.
    wires: Vec<CellQueue>,
    /// When the first cell on each wire arrives (`NEVER_PS` for an empty wire): kept beside the
    /// wires so that a clock edge finds what is due without touching cells not yet due.
    wire_front_ps: Vec<TimePs>,
    /// Cells on the wires into each node.
    wire_cells: Vec<u32>,
    /// Cells travelling as events (to a node that takes cells as they arrive).
    cells_in_events: u64,
    /// Each node's next clock edge, or `NEVER_PS`.
    tick_at_ps: Vec<TimePs>,
    slotted: Vec<bool>,
    sink: Vec<bool>,
    /// Cells sent to sinks by the handler running now: (node, port, cell, arrival), in order.
    to_sinks: Vec<(u32, u16, CellId, TimePs)>,
    /// The end of the run: cells reaching a sink later stay on the wire (as events never run).
    end_ps: TimePs,
    /// Each node's index among the router's switches, or `u32::MAX`.
    router_index: Vec<u32>,
    slot_ps: TimePs,
    /// Propagation delay of the cable on each node port (flow-control signals take it too).
    delay_ps: Vec<TimePs>,
    /// Flow control is per VOQ: a cell's channel on a link is its VOQ at the next switch.
    per_voq: bool,
    /// The cables that run RIFL Layer 1.
    layer1: Layer1,
    /// Which nodes another partition runs, and what was sent to them.
    border: Border,
    /// Scratch: the cells a Layer 1 step delivers, and the flow-control signals its frames
    /// carry.
    layer1_out: (Layer1Arrivals, Layer1Signals),
    /// What the fabric measures.
    pub metrics: Metrics,
}

/// Cells a Layer 1 step delivers: (node, port, cell, arrival).
type Layer1Arrivals = Vec<(u32, u16, CellId, TimePs)>;
/// Flow-control signals a Layer 1 step's frames carry: (node, port, signal, arrival).
type Layer1Signals = Vec<(u32, u16, FlowSignal, TimePs)>;

/// The origin of the fabric's own events (Layer 1 steps): before every node's at an instant.
const FABRIC_ORIGIN: Origin = 0;

/// The origin of node `node`'s events.
fn origin(node: usize) -> Origin {
    node as Origin + 1
}

impl Plumbing {
    fn port(&self, node: usize, port: usize) -> usize {
        self.port_base[node] as usize + port
    }

    fn router_index(&self, node: usize) -> Option<usize> {
        let index = self.router_index[node];
        (index != u32::MAX).then_some(index as usize)
    }

    fn send_cell(
        &mut self,
        node: usize,
        port: usize,
        cell: CellId,
        arrive_ps: TimePs,
        cells: &mut CellArena,
    ) {
        self.metrics.moves += 1;
        if self.metrics.trace.is_on() && self.router_index[node] == u32::MAX {
            // A host sends the cell: it sets the trace bit on the sampled fraction.
            if self.metrics.trace.sample(cell) {
                cells[cell].flags |= TRACED;
            } else {
                cells[cell].flags &= !TRACED;
            }
        }
        let index = self.port(node, port);
        if self.layer1.hand_over(index, cell, cells) {
            return;
        }
        let (peer, peer_port) = self.peer[index];
        self.arrive(
            origin(node),
            peer as usize,
            peer_port as usize,
            cell,
            arrive_ps,
            cells,
        );
    }

    /// `cell` reaches input `peer_port` of `peer` at `arrive_ps`, sent by `origin`: a sink is
    /// told at once, a node that takes cells as they arrive gets an event, a slotted node finds
    /// it on the wire at its clock edge.
    fn arrive(
        &mut self,
        sender: Origin,
        peer: usize,
        peer_port: usize,
        cell: CellId,
        arrive_ps: TimePs,
        cells: &mut CellArena,
    ) {
        if self.border.remote[peer] {
            self.cross_cell(sender, peer, peer_port, cell, arrive_ps, cells);
            return;
        }
        if self.sink[peer] && arrive_ps <= self.end_ps {
            self.to_sinks
                .push((peer as u32, peer_port as u16, cell, arrive_ps));
            return;
        }
        if !self.slotted[peer] {
            let event = Event::Cell {
                node: peer as u32,
                port: peer_port as u16,
                cell,
            };
            self.queue.push(arrive_ps, Phase::Message, sender, event);
            self.cells_in_events += 1;
            return;
        }
        cells[cell].switch_arrive_ps = arrive_ps;
        let wire = self.port(peer, peer_port);
        if self.wires[wire].is_empty() {
            self.wire_front_ps[wire] = arrive_ps;
        }
        cells.push_back(&mut self.wires[wire], cell);
        self.wire_cells[peer] += 1;
        // An edge already pending at or before the arrival comes first and books the edge
        // that latches the cell (see `Fabric::tick`): no division.
        if self.tick_at_ps[peer] <= arrive_ps {
            return;
        }
        self.book_edge(peer, next_boundary_ps(arrive_ps, self.slot_ps));
    }

    /// Books slotted `node`'s clock edge at `edge_ps` unless one is booked at or before it
    /// (the later one, still queued, is then passed over).
    fn book_edge(&mut self, node: usize, edge_ps: TimePs) {
        if edge_ps < self.tick_at_ps[node] {
            self.tick_at_ps[node] = edge_ps;
            let event = Event::Tick(node as u32);
            self.queue.push(edge_ps, Phase::Clock, origin(node), event);
        }
    }

    /// The propagation delay of the cable on `port` of `node`.
    fn delay_ps(&self, node: usize, port: usize) -> TimePs {
        self.delay_ps[self.port(node, port)]
    }

    fn send_signal(&mut self, node: usize, port: usize, signal: FlowSignal, at_ps: TimePs) {
        self.metrics.flow_control_signals += 1;
        let index = self.port(node, port);
        if self.layer1.queue_signal(index, signal) {
            return; // in band: the cable's next flow-control frame carries it
        }
        let (peer, peer_port) = self.peer[self.port(node, port)];
        if self.border.remote[peer as usize] {
            let key = self.queue.key_for(at_ps, Phase::Message, origin(node));
            self.border.outbox.push(Crossing::Signal {
                node: peer,
                port: peer_port,
                signal,
                key,
            });
            return;
        }
        let event = Event::Signal {
            node: peer,
            port: peer_port,
            signal,
        };
        self.queue.push(at_ps, Phase::Message, origin(node), event);
    }

    fn set_timer(&mut self, node: usize, at_ps: TimePs, tag: u32) {
        let event = Event::Timer {
            node: node as u32,
            tag,
        };
        self.queue.push(at_ps, Phase::Message, origin(node), event);
    }

    fn next_channel<R: Router>(&self, node: usize, port: usize, cell: &Cell, router: &R) -> u16 {
        if !self.per_voq {
            return 0;
        }
        let (peer, peer_port) = self.peer[self.port(node, port)];
        match self.router_index(peer as usize) {
            Some(switch) if router.is_broadcast(switch, peer_port as usize, cell) => EVERY_CHANNEL,
            Some(switch) => {
                let output = router.planned_output(switch, peer_port as usize, cell);
                output.expect("per-VOQ flow control needs a router that plans its outputs") as u16
            }
            None => 0,
        }
    }

    /// The clock edge at which the earliest cell on a wire into `node` is latched.
    fn first_wire_edge(&self, node: usize, ports: usize) -> Option<TimePs> {
        let base = self.port_base[node] as usize;
        let first_ps = *self.wire_front_ps[base..base + ports].iter().min()?;
        (first_ps != NEVER_PS).then(|| next_boundary_ps(first_ps, self.slot_ps))
    }

    /// Takes the first cell off wire `wire` if it has arrived by `now_ps`, with its arrival.
    fn latch(
        &mut self,
        wire: usize,
        now_ps: TimePs,
        cells: &mut CellArena,
    ) -> Option<(CellId, TimePs)> {
        let arrive_ps = self.wire_front_ps[wire];
        if arrive_ps > now_ps {
            return None;
        }
        let cell = cells
            .pop_front(&mut self.wires[wire])
            .expect("a wire with a front");
        self.wire_front_ps[wire] = self.wires[wire]
            .front()
            .map_or(NEVER_PS, |next| cells[next].switch_arrive_ps);
        Some((cell, arrive_ps))
    }
}

/// How a fabric is wired: for each node, its ports' far ends, whether it is slotted, and its
/// index among the router's switches.
pub struct Wiring {
    /// Per node: the far end (node, port) of each of its ports.
    pub peers: Vec<Vec<(u32, u16)>>,
    /// Per node: the propagation delay of the cable on each of its ports.
    pub delays_ps: Vec<Vec<TimePs>>,
    /// Per node: slotted (latches its inputs at clock edges).
    pub slotted: Vec<bool>,
    /// Per node: a sink (told of a cell when it is sent; see [`Node::is_sink`]).
    pub sink: Vec<bool>,
    /// The end of the run.
    pub end_ps: TimePs,
    /// Per node: its index among the router's switches, if it is one.
    pub router_index: Vec<Option<usize>>,
    /// Length of a slotted node's cell time.
    pub slot_ps: TimePs,
    /// Flow control is per VOQ.
    pub per_voq: bool,
    /// The cables that run RIFL Layer 1.
    pub layer1: Vec<Layer1Spec>,
}

/// Nodes of kind `N`, routed by `R`, wired into a fabric.
pub struct Fabric<N, R> {
    nodes: Vec<N>,
    router: R,
    cells: CellArena,
    packets: PacketArena,
    plumbing: Plumbing,
    /// The cells and packets of the other partitions of a run on several threads, taken in
    /// for the report ([`Fabric::absorb`]).
    absorbed: Vec<(CellArena, PacketArena)>,
}

impl<N: Node<R>, R: Router> Fabric<N, R> {
    /// A fabric of `nodes` wired as `wiring` says; latencies count from `warmup_ps`.
    pub fn new(nodes: Vec<N>, router: R, wiring: Wiring, warmup_ps: TimePs) -> Self {
        let Wiring {
            peers,
            delays_ps,
            slotted,
            sink,
            end_ps,
            router_index,
            slot_ps,
            per_voq,
            layer1,
        } = wiring;
        let port_base = peers
            .iter()
            .scan(0u32, |base, ports| {
                let at = *base;
                *base += ports.len() as u32;
                Some(at)
            })
            .collect();
        let ports: usize = peers.iter().map(Vec::len).sum();
        let layer1 = {
            let base: &Vec<u32> = &port_base;
            Layer1::new(layer1, ports, slot_ps, |node, port| {
                base[node] as usize + port
            })
        };
        let mut plumbing = Plumbing {
            queue: CalendarQueue::for_gap(slot_ps),
            port_base,
            peer: peers.into_iter().flatten().collect(),
            wires: (0..ports).map(|_| CellQueue::default()).collect(),
            wire_front_ps: vec![NEVER_PS; ports],
            wire_cells: vec![0; nodes.len()],
            cells_in_events: 0,
            tick_at_ps: vec![NEVER_PS; nodes.len()],
            slotted,
            sink,
            to_sinks: Vec::new(),
            end_ps,
            router_index: router_index
                .into_iter()
                .map(|i| i.map_or(u32::MAX, |i| i as u32))
                .collect(),
            slot_ps,
            delay_ps: delays_ps.into_iter().flatten().collect(),
            per_voq,
            layer1,
            border: Border::none(nodes.len()),
            layer1_out: (Vec::new(), Vec::new()),
            metrics: Metrics::new(warmup_ps),
        };
        if plumbing.layer1.is_used() {
            plumbing
                .queue
                .push(0, Phase::Message, FABRIC_ORIGIN, Event::Layer1Step);
        }
        Fabric {
            nodes,
            router,
            cells: CellArena::new(),
            packets: PacketArena::new(),
            plumbing,
            absorbed: Vec::new(),
        }
    }

    /// Sizes the event calendar for event-driven nodes that schedule about every `bucket_ps`
    /// and up to `horizon_ps` ahead (a slotted fabric's calendar is sized by its cell time).
    /// Call before any event is scheduled.
    pub fn set_calendar(&mut self, bucket_ps: TimePs, horizon_ps: TimePs) {
        assert_eq!(
            self.plumbing.queue.len(),
            0,
            "the calendar is set before the run starts"
        );
        self.plumbing.queue = CalendarQueue::for_horizon(bucket_ps, horizon_ps);
    }

    /// Traces `fraction` of the cells the hosts send, drawn from `rng` (Aquila's cell
    /// tracing); call before the run starts.
    pub fn trace_cells(&mut self, fraction: f64, rng: crate::engine::rng::Rng) {
        self.plumbing.metrics.trace = CellTrace::sampling(fraction, rng);
    }

    /// What the Layer 1 cables counted.
    pub fn layer1_counters(&self) -> Option<Layer1Counters> {
        let layer1 = &self.plumbing.layer1;
        layer1.is_used().then(|| layer1.counters())
    }

    /// One frame time of every Layer 1 cable: deliver what the far ends accept, and book the
    /// next frame time.
    fn step_layer1(&mut self, now_ps: TimePs) {
        let plumbing = &mut self.plumbing;
        let (mut arrivals, mut signals) = std::mem::take(&mut plumbing.layer1_out);
        plumbing
            .layer1
            .step(now_ps, &mut self.cells, &mut arrivals, &mut signals);
        for &(node, port, signal, at_ps) in &signals {
            let event = Event::Signal { node, port, signal };
            plumbing
                .queue
                .push(at_ps, Phase::Message, FABRIC_ORIGIN, event);
        }
        signals.clear();
        for &(node, port, cell, arrive_ps) in &arrivals {
            plumbing.arrive(
                FABRIC_ORIGIN,
                node as usize,
                port as usize,
                cell,
                arrive_ps,
                &mut self.cells,
            );
        }
        arrivals.clear();
        plumbing.layer1_out = (arrivals, signals);
        if !plumbing.to_sinks.is_empty() {
            self.reach_sinks();
        }
        let next_ps = now_ps + self.plumbing.slot_ps;
        if next_ps <= self.plumbing.end_ps {
            self.plumbing
                .queue
                .push(next_ps, Phase::Message, FABRIC_ORIGIN, Event::Layer1Step);
        }
    }

    /// The nodes.
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The nodes, to finish them at the end of a run.
    pub fn nodes_mut(&mut self) -> &mut [N] {
        &mut self.nodes
    }

    /// What the fabric measured.
    pub fn metrics(&self) -> &Metrics {
        &self.plumbing.metrics
    }

    /// Packets alive in the packet store: created and neither delivered nor dropped.
    pub fn packets_live(&self) -> u64 {
        self.packet_stores().map(|p| p.live() as u64).sum()
    }

    /// The cell stores: this fabric's, then those of the partitions it absorbed.
    fn cell_stores(&self) -> impl Iterator<Item = &CellArena> {
        std::iter::once(&self.cells).chain(self.absorbed.iter().map(|(cells, _)| cells))
    }

    /// The packet stores: this fabric's, then those of the partitions it absorbed.
    fn packet_stores(&self) -> impl Iterator<Item = &PacketArena> {
        std::iter::once(&self.packets).chain(self.absorbed.iter().map(|(_, packets)| packets))
    }

    /// The router, to read its tables after the run.
    pub fn router(&self) -> &R {
        &self.router
    }

    /// Tests that break the accounts on purpose: the cell store and the fabric's counters.
    #[cfg(test)]
    pub(crate) fn accounts_mut(&mut self) -> (&mut CellArena, &mut Metrics) {
        (&mut self.cells, &mut self.plumbing.metrics)
    }

    /// Every cell (for what a deadlock report says of the cells stuck in queues).
    pub fn cells(&self) -> &CellArena {
        &self.cells
    }

    /// The cells alive at the end of a run (for what a report says of them).
    pub fn live_cells(&self) -> impl Iterator<Item = &crate::blocks::cell::Cell> {
        self.cell_stores().flat_map(|cells| cells.live_values())
    }

    /// The packets alive at the end of a run (for the ages of those still on their way).
    pub fn live_packets(&self) -> impl Iterator<Item = &crate::blocks::packet::Packet> {
        self.packet_stores()
            .flat_map(|packets| packets.live_values())
    }

    /// Cells alive in the arena: generated and neither delivered nor dropped.
    pub fn cells_live(&self) -> u64 {
        self.cell_stores().map(|cells| cells.live() as u64).sum()
    }

    /// Fails if a cell or packet was released twice (delivered or dropped twice).
    pub fn check_released_once(&self) -> Result<(), crate::run::RunError> {
        let cells: u64 = self.cell_stores().map(|c| c.released_twice()).sum();
        let packets: u64 = self.packet_stores().map(|p| p.released_twice()).sum();
        match cells + packets {
            0 => Ok(()),
            twice => Err(crate::run::RunError::ReleasedTwice(twice)),
        }
    }

    /// Cells counted where they are: held by the nodes, on the wires, in link protocols and
    /// in events on their way. It equals [`cells_live`](Self::cells_live) unless a cell was
    /// lost from every queue or held in two.
    pub fn cells_held(&self) -> u64 {
        let plumbing = &self.plumbing;
        let on_wires: u64 = plumbing.wire_cells.iter().map(|&c| c as u64).sum();
        let in_nodes: u64 = self.nodes.iter().map(|n| n.cells_held()).sum();
        in_nodes + on_wires + plumbing.layer1.cells_held() + plumbing.cells_in_events
    }

    /// Runs `act` on node `node` with its context at `now_ps`.
    fn with_node<T>(
        &mut self,
        now_ps: TimePs,
        node: usize,
        act: impl FnOnce(&mut N, &mut Context<'_, R>) -> T,
    ) -> T {
        let mut ctx = Context {
            now_ps,
            cells: &mut self.cells,
            packets: &mut self.packets,
            router: &mut self.router,
            node,
            plumbing: &mut self.plumbing,
        };
        let result = act(&mut self.nodes[node], &mut ctx);
        if !self.plumbing.to_sinks.is_empty() {
            self.reach_sinks();
        }
        result
    }

    /// Tells sinks of the cells just sent to them, in the order they were sent.
    fn reach_sinks(&mut self) {
        let mut to_sinks = std::mem::take(&mut self.plumbing.to_sinks);
        for &(node, port, cell, arrive_ps) in &to_sinks {
            self.with_node(arrive_ps, node as usize, |n, ctx| {
                n.cell_arrives(ctx, port as usize, cell, arrive_ps)
            });
        }
        debug_assert!(self.plumbing.to_sinks.is_empty(), "a sink sent a cell");
        to_sinks.clear();
        self.plumbing.to_sinks = to_sinks;
    }

    /// Runs a node's part of the start of the run (in a partition of a run on several threads,
    /// only if the partition runs the node).
    pub fn start(&mut self, node: usize, act: impl FnOnce(&mut N, &mut Context<'_, R>)) {
        if !self.plumbing.border.remote[node] {
            self.with_node(0, node, act);
        }
    }

    /// Handles one event due at `now_ps`; false for a clock edge an earlier one superseded,
    /// which does nothing (how many there are depends on when arrivals booked edges, which
    /// differs between a run on one thread and on several).
    pub fn dispatch(&mut self, now_ps: TimePs, event: Event) -> bool {
        match event {
            Event::Tick(node) if self.plumbing.tick_at_ps[node as usize] == now_ps => {
                self.tick(now_ps, node as usize)
            }
            Event::Tick(_) => return false,
            Event::Timer { node, tag } => {
                self.warm_next();
                self.with_node(now_ps, node as usize, |n, ctx| n.timer(ctx, tag))
            }
            Event::Cell { node, port, cell } => {
                self.warm_next();
                self.plumbing.cells_in_events -= 1;
                self.with_node(now_ps, node as usize, |n, ctx| {
                    n.cell_arrives(ctx, port as usize, cell, now_ps)
                })
            }
            Event::Layer1Step => self.step_layer1(now_ps),
            Event::Signal { node, port, signal } => {
                self.with_node(now_ps, node as usize, |n, ctx| {
                    n.signal_arrives(ctx, port as usize, signal)
                })
            }
        }
        true
    }

    /// Warms the events after this one, if the calendar has them at hand, so that their cache
    /// misses overlap with this event's work instead of stalling theirs (an event-driven
    /// fabric's next event is for a node and cell far from this one's): the node (and cell) of
    /// the one after next are prefetched, and the next one's node, prefetched by the event
    /// before, prefetches what its cell or timer will touch ([`Node::warm`], [`Node::warm_timer`]).
    #[inline]
    fn warm_next(&self) {
        let queue = &self.plumbing.queue;
        let after_next = queue.peek_at_hand(1);
        if let Some(&Event::Cell { cell, .. }) = after_next {
            self.cells.prefetch(cell);
        }
        if let Some(&(Event::Cell { node, .. } | Event::Timer { node, .. })) = after_next {
            if let Some(next) = self.nodes.get(node as usize) {
                prefetch(next);
            }
        }
        match queue.peek_at_hand(0) {
            Some(&Event::Cell { node, port, cell }) => {
                if let Some(next) = self.nodes.get(node as usize) {
                    next.warm(&self.cells[cell], port as usize);
                }
            }
            Some(&Event::Timer { node, tag }) => {
                if let Some(next) = self.nodes.get(node as usize) {
                    next.warm_timer(&self.cells, tag);
                }
            }
            _ => {}
        }
    }

    /// A slotted node's clock edge: latch what has arrived, tick, and book the next edge.
    fn tick(&mut self, now_ps: TimePs, node: usize) {
        let ports = self.ports(node);
        if self.plumbing.wire_cells[node] > 0 {
            let base = self.plumbing.port_base[node] as usize;
            for port in 0..ports {
                while let Some((cell, arrive_ps)) =
                    self.plumbing.latch(base + port, now_ps, &mut self.cells)
                {
                    self.plumbing.wire_cells[node] -= 1;
                    self.with_node(now_ps, node, |n, ctx| {
                        n.cell_arrives(ctx, port, cell, arrive_ps)
                    });
                }
            }
        }
        let wanted_ps = self
            .with_node(now_ps, node, |n, ctx| n.tick(ctx))
            .unwrap_or(NEVER_PS);
        // A node that sleeps past the next edge still latches the next cell on its wires
        // when it arrives (a cell left on a wire arrives after now, at the next edge or later).
        let next_ps = match self.plumbing.wire_cells[node] > 0 {
            true if wanted_ps > now_ps + self.plumbing.slot_ps => self
                .plumbing
                .first_wire_edge(node, ports)
                .expect("a wire holds a cell")
                .min(wanted_ps),
            _ => wanted_ps,
        };
        self.plumbing.tick_at_ps[node] = NEVER_PS; // this edge is done
        self.plumbing.book_edge(node, next_ps);
    }

    fn ports(&self, node: usize) -> usize {
        let next = self
            .plumbing
            .port_base
            .get(node + 1)
            .map_or(self.plumbing.peer.len(), |&b| b as usize);
        next - self.plumbing.port_base[node] as usize
    }

    /// The event queue (for the kernel).
    pub fn queue(&mut self) -> &mut CalendarQueue<Event> {
        &mut self.plumbing.queue
    }
}
