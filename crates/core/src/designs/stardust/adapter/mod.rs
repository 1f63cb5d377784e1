//! The Fabric Adapter (Stardust §3.2–3.3, §4.1, Fig. 5): the edge device between hosts and the
//! fabric, put together from its parts.
//!
//! - [`sources`]: the built-in hosts ([`Flow`], [`Foreground`]) that make packets;
//! - [`ingress`]: VOQs, requests, credits waiting, packing; its options [`low_latency`]
//!   (VOQs that send at once, §5.6) and [`memory`] (one shared ingress memory);
//! - [`uplinks`]: spraying the cells over the uplinks;
//! - [`reassembly`]: cells from the fabric back in sequence per stream;
//! - [`egress`]: host ports and their credit schedulers, FCI reaction, host pauses.
//!
//! This file routes events between them: a packet from a host goes to the ingress, whose
//! requests and bursts go out on the uplinks; a data cell from the fabric goes through
//! reassembly to the egress, a request to the egress's scheduler, a credit to the ingress.
//!
//! Hosts are either built-in sources or, with a transport, nodes of their own cabled to the
//! host ports (fabric ports after the uplinks): a host's frame (a data segment or an ACK, one
//! cell of the shared arena) arriving there joins the VOQ of its destination host as a packet
//! that carries the frame, crosses the fabric in cells like any packet, and after reassembly is
//! sent whole to the receiving host at the host port's rate. Stardust is transport-agnostic
//! (§6.3): ACKs take the same VOQs and credits as data.

pub mod egress;
mod healing;
pub mod ingress;
pub mod keys;
pub mod low_latency;
pub mod memory;
mod reassembly;
pub mod sources;
mod uplinks;

use std::sync::Arc;

use super::reach::{self, DeviceReach, Loss, ReachDevice};
use super::{
    class_flags, class_of, release_frame, release_packet, Addressing, CellFormat, Kind, FCI, FIRST,
};
use crate::blocks::cell::{Cell, CellArena, CellId, NO_PACKET};
use crate::blocks::ethernet::CONTROL;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::packet::{Packet, PacketId, NO_FRAME};
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::Router;
use crate::blocks::sar::CutCell;
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use egress::{Egress, HostDelivery};
pub use egress::{EgressSpec, FciReaction};
use healing::Healing;
use ingress::{Admission, Burst, Ingress, IngressSpec, Refresh};
use reassembly::Streams;
use sources::Sources;
pub use sources::{Flow, Foreground, TimedFlow};
use uplinks::Uplinks;

/// Timer tags: the kind in the top byte, the uplink, flow or host port below.
const UPLINK: u32 = 0;
const SOURCE: u32 = 1 << 24;
const EGRESS: u32 = 2 << 24;
const CREDIT: u32 = 3 << 24;
const FLOW_ARRIVES: u32 = 4 << 24;
const FLOW_SENDS: u32 = 5 << 24;
const GAP: u32 = 6 << 24;
const REFRESH: u32 = 7 << 24;
const INDEX: u32 = (1 << 24) - 1;

/// What an adapter counts, by part.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdapterCounters {
    /// The ingress's.
    pub ingress: ingress::IngressCounters,
    /// The egress's.
    pub egress: egress::EgressCounters,
    /// Cells that reached this adapter and were consumed here (data, requests, credits).
    pub cells_received: u64,
    /// Host frames (transport segments and ACKs) that reached its host ports.
    pub frames_received: u64,
}

/// How an adapter is configured.
pub struct AdapterSpec {
    /// Its index among adapters.
    pub index: u16,
    /// Its index among the router's switches.
    pub switch: usize,
    /// Host and adapter numbering of the fabric.
    pub addressing: Arc<Addressing>,
    /// Its uplinks, in fabric port order.
    pub uplinks: Vec<PriorityPort>,
    /// For each port of its switch in the topology, the uplink it is (or `u16::MAX`).
    pub uplink_of_port: Vec<u16>,
    /// Data cells per uplink the adapter keeps queued before it packs more.
    pub uplink_cells: u32,
    /// Cell sizes.
    pub format: CellFormat,
    /// Its ingress.
    pub ingress: IngressSpec,
    /// A VOQ per flow (`adapter.voqs = "per_flow"`): requests name their flow's source host,
    /// not the adapter, to the destination port's scheduler, and credits come back to that
    /// host (reading R43).
    pub flow_voqs: bool,
    /// Its egress.
    pub egress: EgressSpec,
    /// How long a stream gap stays open before it is given up.
    pub reassembly_timeout_ps: TimePs,
    /// Its hosts' flows.
    pub flows: Vec<Flow>,
    /// Its timed host, if it has it.
    pub foreground: Option<Foreground>,
    /// The adapter's random stream (source start times).
    pub rng: Rng,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
}

/// A fabric adapter.
pub struct Adapter {
    index: u16,
    switch: usize,
    addressing: Arc<Addressing>,
    format: CellFormat,
    uplinks: Uplinks,
    ingress: Ingress,
    streams: Streams,
    egress: Egress,
    sources: Sources,
    /// Cells of the burst being sent (kept to reuse its allocation).
    cut: Vec<CutCell>,
    /// Host ports pause their hosts (`adapter.pause_hosts`).
    pauses_hosts: bool,
    /// A VOQ per flow ([`AdapterSpec::flow_voqs`]).
    flow_voqs: bool,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
    /// Adapters it gave up, and self-healing measured (§5.9, §5.10).
    pub healing: Healing,
    /// What it counted itself (its parts count the rest).
    counters: AdapterCounters,
}

impl Adapter {
    /// An adapter as `spec` says.
    pub fn new(spec: AdapterSpec) -> Self {
        let adapters = spec.addressing.adapters();
        let classes = spec.ingress.classes;
        let ports = spec.egress.host_links.len();
        Adapter {
            index: spec.index,
            switch: spec.switch,
            addressing: spec.addressing,
            format: spec.format,
            uplinks: Uplinks::new(spec.uplinks, spec.uplink_of_port, spec.uplink_cells),
            ingress: Ingress::new(spec.ingress),
            streams: Streams::new(adapters, ports, classes, spec.reassembly_timeout_ps),
            pauses_hosts: spec.egress.pause_hosts.is_some(),
            flow_voqs: spec.flow_voqs,
            egress: Egress::new(spec.egress),
            sources: Sources::new(spec.flows, spec.foreground, spec.rng),
            cut: Vec::new(),
            healing: Healing::new(adapters, spec.reach.is_some()),
            reach: spec.reach,
            counters: AdapterCounters::default(),
        }
    }

    /// Its switch in the topology.
    pub fn switch(&self) -> usize {
        self.switch
    }

    /// True once it has failed (a scripted failure, §5.10).
    fn failed(&self) -> bool {
        self.reach.as_ref().is_some_and(|r| r.failed)
    }

    /// Takes `packet`, created by a host, out of the run before it reaches a VOQ: this adapter
    /// failed, or the packet's destination adapter is unreachable; true if it was.
    fn refuse<R: Router>(&mut self, ctx: &mut Context<'_, R>, packet: &Packet) -> bool {
        let unreachable = self
            .healing
            .unreachable(self.addressing.adapter_of(packet.dst));
        let failed = self.failed();
        if !(failed || unreachable) {
            return false;
        }
        let counters = &mut self.ingress.counters;
        counters.packets_created += 1;
        if failed {
            counters.packets_lost_failed += 1;
        } else {
            counters.packets_dropped_unreachable += 1;
        }
        release_frame(ctx, packet.frame);
        true
    }

    /// The counters of its parts, gathered.
    pub fn counters(&self) -> AdapterCounters {
        AdapterCounters {
            ingress: self.ingress.counters,
            egress: self.egress.counters,
            ..self.counters
        }
    }

    /// Cells it sent on its uplinks (cell-hops).
    pub fn cells_sent(&self) -> u64 {
        self.uplinks.cells_sent
    }

    /// Uplink-picoseconds its uplinks spent idle while it held credited data.
    pub fn uplink_idle_ps(&self) -> u64 {
        self.uplinks.idle.idle_ps
    }

    /// Its uplinks.
    pub fn uplink_count(&self) -> usize {
        self.uplinks.ports.len()
    }

    /// Most cells one of its streams held for reordering.
    pub fn reorder_peak_cells(&self) -> u32 {
        self.streams.reorder_peak_cells
    }

    /// Per host port: bytes delivered.
    pub fn delivered(&self) -> &[HostDelivery] {
        &self.egress.delivered
    }

    /// Its egress (delivery tables and latencies).
    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    /// Timed flows its foreground host started.
    pub fn timed_flows(&self) -> &[TimedFlow] {
        &self.sources.timed_flows
    }

    /// Starts the adapter's sources.
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        self.sources.start(ctx);
    }

    /// Its ingress (the shared memory's occupancy and check).
    pub fn ingress(&self) -> &Ingress {
        &self.ingress
    }

    /// Packets held at this adapter: in VOQs and host port queues.
    pub fn packets_held(&self) -> u64 {
        self.ingress.packets_held() + self.egress.packets_held()
    }

    /// A host's frame reached host port `port`: it joins its destination's VOQ as a packet
    /// that carries it (class 0; a full VOQ drops it, and the host's transport recovers).
    /// With `adapter.pause_hosts` a data frame is charged to the port, which may owe its host
    /// a PAUSE frame, or dropped if the host overran its headroom.
    fn receive_frame<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, frame: CellId) {
        self.counters.frames_received += 1;
        let c = ctx.cells[frame];
        let mut packet = Packet::new(c.src, c.dst, c.payload_bytes as u32, c.inject_ps);
        packet.frame = frame.index();
        if self.refuse(ctx, &packet) {
            return;
        }
        let charged = c.flags & CONTROL == 0 && self.pauses_hosts;
        if charged && !self.egress.pause_of(port).is_some_and(|p| p.has_room()) {
            let ingress = &mut self.ingress.counters;
            ingress.packets_created += 1;
            ingress.packets_dropped += 1;
            self.egress.counters.pfc.drops += 1;
            release_frame(ctx, packet.frame);
            return;
        }
        if self.enqueue(ctx, packet, 0) && charged {
            let pause = self.egress.pause_of(port).expect("a pausing port");
            let owed = pause.charge();
            let beyond = pause.beyond_xoff();
            let peak = &mut self.egress.counters.pfc.headroom_peak_packets;
            *peak = (*peak).max(beyond);
            if owed {
                self.egress.kick(ctx, port);
            }
        }
        // Sent on a balance only now that the frame is charged, so its release follows.
        self.serve_ready(ctx);
    }

    /// Releases the charge of a host's data frame that `packet` carried out of its VOQ; a
    /// port drained to XON owes its host a resume frame.
    fn release_host_frame<R: Router>(&mut self, ctx: &mut Context<'_, R>, packet: &Packet) {
        if packet.frame == NO_FRAME
            || ctx.cells[CellId::from_index(packet.frame)].flags & CONTROL != 0
        {
            return;
        }
        let port = self.addressing.port_of(packet.src);
        let pause = self.egress.pause_of(port).expect("a pausing port");
        if pause.release() {
            self.egress.kick(ctx, port);
        }
    }

    /// Serves the VOQs that may send on their balance, if any.
    fn serve_ready<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        if self.ingress.has_ready() {
            self.serve(ctx);
        }
    }

    /// A host hands `packet` of traffic class `class` to its VOQ, or it is dropped there
    /// (false); a VOQ that may send it on its balance, or at once (a low-latency VOQ), waits
    /// for [`Self::serve_ready`].
    fn enqueue<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        packet: Packet,
        class: usize,
    ) -> bool {
        if self.refuse(ctx, &packet) {
            return false;
        }
        // Per-flow VOQs: the slot of the packet's source host; per-port VOQs have one.
        let slot = if self.flow_voqs {
            self.addressing.port_of(packet.src)
        } else {
            0
        };
        match self
            .ingress
            .admit(ctx.packets, packet, slot, class, ctx.now_ps)
        {
            Admission::Dropped(packet) => {
                release_frame(ctx, packet.frame);
                return false;
            }
            Admission::Queued => {}
            Admission::Activated => self.serve(ctx),
            Admission::Joined(key) => {
                if self.ingress.send_at_once(ctx.packets, key, ctx.now_ps) {
                    return true;
                }
                if let Some(on) = self.ingress.request_due(key) {
                    self.send_request(ctx, key, on);
                }
            }
        }
        true
    }

    /// Tells the scheduler of its destination's port that VOQ `key` has packets (`on`) or has
    /// none left.
    fn send_request<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32, on: bool) {
        let request = self.ingress.request(key, on, ctx.now_ps);
        debug_assert!(key <= INDEX, "VOQ {key} beyond the timer tags' index");
        if let Some(at_ps) = request.refresh_at_ps {
            ctx.set_timer(at_ps, REFRESH | key);
        }
        self.send_control(
            ctx,
            request.from,
            request.dst,
            request.flags,
            request.number,
        );
    }

    /// VOQ `key`'s refresh timer: a VOQ that still waits for a credit asks again.
    fn refresh_request<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32) {
        if self.failed() {
            return;
        }
        match self.ingress.refresh(key, ctx.now_ps) {
            Refresh::Idle => {}
            Refresh::AskAgain => self.send_request(ctx, key, true),
            Refresh::WaitUntil(at_ps) => ctx.set_timer(at_ps, REFRESH | key),
        }
    }

    /// Sends a control cell addressed to host `dst`'s adapter, numbered `seq`.
    fn send_control<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        src: u16,
        dst: u16,
        flags: u8,
        seq: u32,
    ) {
        let mut cell = Cell::new(src, dst, 0, true, ctx.now_ps, ctx.now_ps);
        cell.flags = flags;
        cell.seq = seq;
        self.launch(ctx, cell);
    }

    /// Sends a new control cell toward its destination: queued on the uplink routing picks,
    /// or lost if no uplink is usable.
    fn launch(&mut self, ctx: &mut Context<'_, impl Router>, mut cell: Cell) {
        let local = self.addressing.adapter_of(cell.dst) == self.index;
        let reach = self.reach.as_ref();
        let uplink = self
            .uplinks
            .route(ctx, &mut cell, self.switch, local, reach, false);
        let id = ctx.cells.alloc(cell);
        let Some(uplink) = uplink else {
            return self.lose_unroutable(ctx, id);
        };
        self.uplinks.push_control(ctx, uplink, id);
        self.uplinks.kick(ctx, uplink, self.format);
    }

    /// Cell `id` has no usable uplink: lost (only reachability leaves a cell no route).
    fn lose_unroutable<R: Router>(&mut self, ctx: &mut Context<'_, R>, id: CellId) {
        let reach = self
            .reach
            .as_mut()
            .expect("only reachability leaves no route");
        reach::lose(ctx, &mut reach.counters, id, Loss::NoRoute);
    }

    /// Hands the cut cells waiting to the uplinks with room (Stardust §4.1, §5.3: the adapter
    /// keeps every uplink busy while it holds credited cells).
    fn dispatch<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let (addressing, index) = (&self.addressing, self.index);
        let local = |dst| addressing.adapter_of(dst) == index;
        self.uplinks
            .dispatch(ctx, self.switch, self.format, self.reach.as_ref(), local);
        for id in self.uplinks.take_unroutable() {
            self.lose_unroutable(ctx, id);
        }
    }

    /// Sends the cells waiting, then packs and sends while the uplinks have room: credited
    /// VOQs in credit order, then VOQs sending on their balance (pull), or non-empty VOQs
    /// round robin (push).
    fn serve<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        if self.failed() {
            return;
        }
        self.dispatch(ctx);
        while self.uplinks.have_room() {
            let Some((key, burst)) = self.ingress.next_to_serve() else {
                return;
            };
            self.send_burst(ctx, key, burst);
            if let Some(on) = self.ingress.after_burst(key) {
                self.send_request(ctx, key, on);
            }
        }
    }

    /// Spends `burst` (a credit, its balance, or a low-latency send) on VOQ `key`: packs its
    /// packets and sprays the cells.
    fn send_burst<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32, burst: Burst) {
        let mut cut = std::mem::take(&mut self.cut);
        let (dst, class) = self
            .ingress
            .pack(ctx.packets, key, burst, &mut cut, ctx.now_ps);
        if self.pauses_hosts {
            // Every packet taken from the VOQ ends in one of the cells just cut.
            for c in &cut {
                let mut next = c.packet;
                while next != NO_PACKET {
                    let packet = ctx.packets[PacketId::from_index(next)];
                    next = packet.next_in_cell;
                    self.release_host_frame(ctx, &packet);
                }
            }
        }
        for (i, c) in cut.drain(..).enumerate() {
            let mut cell = Cell::new(
                self.index,
                dst,
                c.payload_bytes as u16,
                c.packet != NO_PACKET,
                ctx.now_ps,
                ctx.now_ps,
            );
            cell.seq = c.seq;
            cell.packet = c.packet;
            cell.flags = Kind::Data as u8 | class_flags(class) | if i == 0 { FIRST } else { 0 };
            self.healing.mark(&mut cell);
            let id = ctx.cells.alloc(cell);
            self.uplinks.queue_data(id, class);
        }
        self.cut = cut;
        self.dispatch(ctx);
    }

    /// A data cell from the fabric: back in sequence, and whole packets to the host port.
    fn receive_data<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: CellId) {
        let c = ctx.cells[cell];
        let port = self.addressing.port_of(c.dst);
        self.egress
            .data_arrived(ctx.now_ps, c.inject_ps, c.flags & FCI != 0);
        let class = class_of(c.flags);
        if !self.flow_voqs {
            // Per-flow VOQs: counted per packet, by its source host ([`Self::deliver_released`]).
            self.egress
                .count_delivered(port, c.src, class, c.payload_bytes as u32);
        }
        self.healing.arrived(&c, ctx.now_ps);
        let stream = self.streams.stream(c.src, port, class_of(c.flags));
        let released = self.streams.accept(stream, c.seq, cell, ctx.now_ps);
        self.deliver_released(ctx, stream, released);
    }

    /// Stream `stream`'s reassembly timer: give up what is overdue and deliver what follows.
    fn gap_timer<R: Router>(&mut self, ctx: &mut Context<'_, R>, stream: usize) {
        let released = self.streams.gap_timer(stream, ctx.now_ps);
        self.deliver_released(ctx, stream, released);
    }

    /// Cells of stream `stream` now in sequence: their whole packets go to the stream's host
    /// port (discarded there if a gap broke them); then the stream's timer is set if due. With
    /// per-flow VOQs the port's scheduler counts each packet's bytes against its source host
    /// (the flow's requester; a cell does not name its packets' hosts).
    fn deliver_released<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        stream: usize,
        mut released: Vec<CellId>,
    ) {
        let port = self.streams.port_of(stream);
        for id in released.drain(..) {
            let mut packet = ctx.cells[id].packet;
            while packet != NO_PACKET {
                let pid = PacketId::from_index(packet);
                let p = ctx.packets[pid];
                packet = p.next_in_cell;
                if self.flow_voqs {
                    let class = self.streams.class_of(stream);
                    self.egress
                        .count_delivered(port, p.src, class, p.size_bytes);
                }
                let complete = self.streams.is_complete(stream, p.start_seq);
                self.egress.offer(ctx, port, pid, complete);
            }
            ctx.consume(id);
            self.counters.cells_received += 1;
        }
        self.streams.recycle(released);
        self.egress.offered(ctx, port);
        if let Some(at_ps) = self.streams.watch(stream) {
            ctx.set_timer(at_ps, GAP | stream as u32);
        }
    }

    /// Port `port`'s credit timer: issue one credit round robin, unless the port is full.
    fn issue_credit<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        if self.failed() {
            return;
        }
        let Some(credit) = self.egress.issue_credit(ctx, port) else {
            return;
        };
        let to = if self.flow_voqs {
            credit.requester
        } else {
            self.addressing.first_host(credit.requester)
        };
        let flags = Kind::Credit as u8 | class_flags(credit.class);
        for _ in 0..credit.count {
            self.send_control(ctx, credit.from, to, flags, 0);
        }
        self.egress.arm(ctx, port);
    }

    /// A control cell reached this adapter: a request for one of its ports' schedulers, or a
    /// credit for one of its VOQs.
    fn receive_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: CellId) {
        let c = ctx.cells[cell];
        ctx.consume(cell);
        self.counters.cells_received += 1;
        let class = class_of(c.flags);
        if Kind::of(c.flags) == Kind::Request {
            let port = self.addressing.port_of(c.dst);
            let on = c.flags & super::REQUEST_ON != 0;
            self.egress.request(ctx, port, c.src, class, c.seq, on);
        } else {
            // Per-port credits go to the adapter's first host, its port 0: slot 0.
            let slot = self.addressing.port_of(c.dst);
            self.ingress.credit_arrived(slot, c.src, class, ctx.now_ps);
            self.serve(ctx);
        }
    }
}

#[cfg(test)]
impl Adapter {
    /// Its egress's counters, to change (test only).
    pub(crate) fn egress_counters_mut(&mut self) -> &mut egress::EgressCounters {
        &mut self.egress.counters
    }
}

impl<R: Router> Node<R> for Adapter {
    fn cells_held(&self) -> u64 {
        self.uplinks.cells_held() + self.streams.held()
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        self.uplinks.meter(ctx.now_ps);
        self.cell_arrives_metered(ctx, port, cell);
        self.after_event();
    }

    /// An element paused (OFF) or resumed (ON) data on uplink `port`.
    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        self.uplinks.meter(ctx.now_ps);
        let paused = matches!(signal, FlowSignal::Off { .. });
        self.uplinks.ports[port].pause_data(paused);
        self.uplinks.kick(ctx, port, self.format);
        self.serve(ctx);
        self.after_event();
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        self.uplinks.meter(ctx.now_ps);
        self.timer_metered(ctx, tag);
        self.after_event();
    }
}

impl Adapter {
    /// Prefetches what timer `tag` will touch: an uplink's next cell (a hint).
    #[inline]
    pub(crate) fn warm_timer(&self, cells: &CellArena, tag: u32) {
        if tag & !INDEX == UPLINK {
            if let Some(port) = self.uplinks.ports.get((tag & INDEX) as usize) {
                port.warm(cells);
            }
        }
    }

    /// After each event: whether credited data waits, for the uplinks' idle meter.
    fn after_event(&mut self) {
        let credited = self.ingress.credits_waiting();
        self.uplinks.set_credited(credited);
    }

    /// A cell arrived on fabric port `port` (an uplink) or from a host (a host port).
    fn cell_arrives_metered<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        cell: CellId,
    ) {
        let uplinks = self.uplinks.ports.len();
        if port >= uplinks {
            return self.receive_frame(ctx, port - uplinks, cell);
        }
        if reach::arrival(self, ctx, port, cell) {
            return;
        }
        match Kind::of(ctx.cells[cell].flags) {
            Kind::Data => self.receive_data(ctx, cell),
            Kind::Request | Kind::Credit => self.receive_control(ctx, cell),
            Kind::Reach => unreachable!("reachability cells are taken on arrival"),
        }
    }

    /// An adapter timer: the kind in the tag's top byte.
    fn timer_metered<R: Router>(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        if reach::is_reach_tag(tag) {
            return reach::timer(self, ctx, tag);
        }
        let index = (tag & INDEX) as usize;
        match tag & !INDEX {
            UPLINK => {
                self.uplinks.kick(ctx, index, self.format);
                self.serve(ctx);
            }
            SOURCE => {
                let (packet, class) = self.sources.generate(ctx, index);
                self.enqueue(ctx, packet, class);
                self.serve_ready(ctx);
            }
            FLOW_ARRIVES => self.sources.flow_arrives(ctx),
            FLOW_SENDS => {
                if let Some(packet) = self.sources.flow_sends(ctx) {
                    self.enqueue(ctx, packet, 0);
                    self.serve_ready(ctx);
                }
            }
            GAP => self.gap_timer(ctx, index),
            REFRESH => self.refresh_request(ctx, index as u32),
            EGRESS => {
                let cable = self.uplinks.ports.len() + index;
                self.egress.done(ctx, index, cable);
            }
            _ => self.issue_credit(ctx, index),
        }
    }
}

impl ReachDevice for Adapter {
    fn reach(&mut self) -> Option<&mut DeviceReach> {
        self.reach.as_mut()
    }

    fn fabric_ports(&self) -> usize {
        self.uplinks.ports.len()
    }

    fn queue_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId) {
        self.uplinks.push_control(ctx, port, cell);
        self.uplinks.kick(ctx, port, self.format);
    }

    fn flush<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, loss: Loss) {
        let reach = self.reach.as_mut().expect("only reachability flushes");
        let uplink = &mut self.uplinks.ports[port];
        reach::flush_port(ctx, &mut reach.counters, uplink, loss);
        self.serve(ctx);
    }

    fn release<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        self.uplinks.ports[port].pause_data(false);
        self.uplinks.kick(ctx, port, self.format);
        self.serve(ctx);
    }

    /// The adapter failed (§5.10): the packets in its VOQs and at its host ports, and the
    /// cells it held for reordering, are lost; it sends nothing more (its uplinks were
    /// flushed, and every path that would send checks [`Adapter::failed`]).
    fn reset<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let mut packets = Vec::new();
        for host in 0..self.addressing.hosts() as u16 {
            self.ingress
                .empty_voqs(ctx.packets, host, &mut packets, ctx.now_ps);
        }
        self.ingress.counters.packets_lost_failed += packets.len() as u64;
        for id in packets {
            release_packet(ctx, id);
        }
        let reach = self
            .reach
            .as_mut()
            .expect("only reachability fails a device");
        let held = self.streams.drain().into_iter();
        for cell in held.chain(self.uplinks.drain_waiting()) {
            reach::lose(ctx, &mut reach.counters, cell, Loss::DeviceFailed);
        }
        self.egress.fail(ctx);
    }

    /// Adapters no uplink reaches any more (§5.10: they failed) are given up: the VOQs toward
    /// them are emptied (their packets dropped and counted) and no port owes them credits;
    /// an adapter reachable again is served again.
    fn tables_changed<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let reach = self
            .reach
            .as_ref()
            .expect("only reachability changes tables");
        let uplinks = self.uplinks.ports.len();
        let gone = self
            .healing
            .tables_changed(reach, self.index, uplinks, ctx.now_ps);
        for x in gone {
            let mut packets = Vec::new();
            for host in 0..self.addressing.hosts() as u16 {
                if self.addressing.adapter_of(host) == x {
                    self.ingress
                        .empty_voqs(ctx.packets, host, &mut packets, ctx.now_ps);
                    if self.flow_voqs {
                        self.egress.forget(host); // its flows' requester
                    }
                }
            }
            self.ingress.counters.packets_dropped_unreachable += packets.len() as u64;
            for id in packets {
                release_packet(ctx, id);
            }
            if !self.flow_voqs {
                self.egress.forget(x);
            }
        }
    }
}
