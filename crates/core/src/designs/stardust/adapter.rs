//! The Fabric Adapter (Stardust §3.2–3.3, §4.1, Fig. 5): the edge device between hosts and the
//! fabric.
//!
//! Ingress: packets from the adapter's hosts wait in a VOQ per destination host (a full VOQ drops
//! at the ingress, §3.1); a VOQ that becomes non-empty tells the destination port's scheduler with
//! a request cell, and one that empties withdraws (reading R1 of `docs/validation/stardust.md`). A
//! credit that arrives joins a FIFO; the adapter serves credits in arrival order whenever its
//! uplinks can take more cells (§3.3), packing whole packets of the credited VOQ into cells as one
//! burst with surplus accounting ([`pack_credit`]) and spraying the cells over every uplink the
//! routing table allows toward the destination (§3.2, §5.3). In push mode there are no credits: the
//! adapter serves its non-empty VOQs round robin, one credit's worth at a time.
//!
//! Egress: cells from the fabric are put back in sequence per (source adapter, destination
//! host) stream ([`Reassembly`]) and whole packets join the host port's queue, which drains
//! at the host's line rate. Each host port has a credit scheduler: round robin over the
//! adapters whose VOQs asked, one credit of `credit_bytes` every `credit_bytes` / (port rate ×
//! (1 + speed-up)) (§4.1), stopping while the port's queue is above a threshold and resuming
//! below another (reading R6). A data cell marked FCI by an element cuts the credit rate of all
//! the adapter's ports (§4.2; reading R12), at most once a window; the rate recovers
//! additively while no mark arrives.
//!
//! Hosts are either built-in sources ([`Flow`], [`Foreground`]) or, with a transport, nodes of
//! their own cabled to the host ports (fabric ports after the uplinks): a host's frame (a data
//! segment or an ACK, one cell of the shared arena) arriving there joins the VOQ of its
//! destination host as a packet that carries the frame, crosses the fabric in cells like any
//! packet, and after reassembly is sent whole to the receiving host at the host port's rate.
//! Stardust is transport-agnostic (§6.3): ACKs take the same VOQs and credits as data.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::Rng as _;

use super::host_pause::HostPause;
use super::reach::{self, DeviceReach, Loss, ReachDevice};
use super::{
    class_flags, class_of, release_frame, release_packet, transmit, Addressing, CellFormat, Kind,
    FCI, FIRST, REQUEST_ON,
};
use crate::blocks::cell::{Cell, CellId, NO_PACKET};
use crate::blocks::ethernet::pause::{pause_frame, PauseTarget};
use crate::blocks::ethernet::ports::pfc::{PauseThresholds, PfcCounters, LOSSLESS_CLASS};
use crate::blocks::ethernet::CONTROL;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::packet::{Packet, PacketId, PacketQueue, NO_FRAME};
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};
use crate::blocks::sar::{pack_credit, CreditBalance, CutCell, Reassembly};
use crate::blocks::traffic::NEVER_PS;
use crate::blocks::workload::{exponential_ps, FlowSizes};
use crate::engine::rng::Rng;
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::{serialization_ps, TimePs};

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

/// A host's flow: packets of one size to one host at a constant rate.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Sending host (one of the adapter's).
    pub src: u16,
    /// Receiving host.
    pub dst: u16,
    /// Traffic class (0 first).
    pub class: u8,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// Mean time between packets.
    pub gap_ps: TimePs,
    /// Gaps are exponential (Poisson arrivals) rather than all equal.
    pub poisson: bool,
    /// Bytes the flow sends in all (the last packet may be shorter); `None`: it never ends.
    pub size_bytes: Option<u64>,
}

/// The class a port's next credit goes to, among those with asking VOQs: the first (strict
/// priority), or with `weights` the one a smooth weighted round robin picks (each asking
/// class gains its weight, the highest score wins and pays the total), so classes share
/// credits in proportion to their weights without bursts.
fn next_class(
    asking: &[VecDeque<u16>],
    scores: &mut [i64],
    weights: Option<&[u32]>,
) -> Option<usize> {
    let Some(weights) = weights else {
        return asking.iter().position(|a| !a.is_empty());
    };
    let mut total = 0;
    let mut best: Option<usize> = None;
    for class in (0..asking.len()).filter(|&c| !asking[c].is_empty()) {
        scores[class] += weights[class] as i64;
        total += weights[class] as i64;
        if best.is_none_or(|b| scores[class] > scores[b]) {
            best = Some(class);
        }
    }
    let chosen = best?;
    scores[chosen] -= total;
    Some(chosen)
}

impl Flow {
    /// The time to the flow's next packet.
    fn next_gap_ps(&self, rng: &mut Rng) -> TimePs {
        if self.poisson {
            exponential_ps(self.gap_ps, rng)
        } else {
            self.gap_ps
        }
    }
}

/// A host whose flows are timed (Fig. 10b): flows of drawn sizes arrive as a Poisson process
/// and are sent one after another at the host's line rate.
pub struct Foreground {
    /// The sending host (one of the adapter's).
    pub src: u16,
    /// The receiving host.
    pub dst: u16,
    /// Flow sizes.
    pub sizes: Arc<FlowSizes>,
    /// Mean time between flow arrivals.
    pub mean_gap_ps: TimePs,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// The host's line rate.
    pub rate_bps: u64,
}

/// A timed flow as its source saw it.
#[derive(Clone, Copy, Debug)]
pub struct TimedFlow {
    /// Its number.
    pub id: u32,
    /// Bytes.
    pub size_bytes: u64,
    /// When it arrived at its source.
    pub start_ps: TimePs,
}

/// The foreground source's state.
struct ForegroundState {
    spec: Foreground,
    /// Flows waiting their turn, and the one being sent with its bytes left.
    waiting: VecDeque<TimedFlow>,
    current: Option<(TimedFlow, u64)>,
    sending: bool,
}

/// One VOQ: the packets for one destination host and its credit state.
#[derive(Default)]
struct Voq {
    packets: PacketQueue,
    balance: CreditBalance,
    /// Next cell sequence number of the stream to the destination.
    next_seq: u32,
    /// Requests sent so far: numbers each, so the scheduler can ignore one that a later
    /// request overtook in the fabric (requests are sprayed too).
    requests: u32,
    /// Push mode: the VOQ is in the round-robin ring. Pull mode: the destination's scheduler
    /// was told the VOQ has packets.
    active: bool,
    /// When it last asked for or received a credit.
    credited_ps: TimePs,
    /// A request refresh timer is set.
    refresh_armed: bool,
}

/// A host port's credit scheduler (§4.1).
struct CreditScheduler {
    /// Per traffic class: adapters whose VOQs for this port asked for credits, in round-robin
    /// order; classes are served by strict priority (class 0 first; our reading for Fig. 12's two
    /// classes).
    asking: Vec<VecDeque<u16>>,
    /// Per (class, adapter): the number of the latest request heard from its VOQ for this
    /// port (0: none yet).
    heard: Vec<u32>,
    period_ps: TimePs,
    /// Earliest time of the next credit.
    next_ps: TimePs,
    /// A credit timer is set.
    armed: bool,
    /// Stopped: the port's queue is above `stop_bytes`.
    stopped: bool,
    /// Weighted classes: each class's running score (smooth weighted round robin).
    scores: Vec<i64>,
}

/// The egress side of one host port.
struct EgressPort {
    host: u16,
    queue: PacketQueue,
    queued_bytes: u64,
    rate_bps: u64,
    propagation_ps: TimePs,
    /// The packet on the host link, if any.
    sending: Option<PacketId>,
    scheduler: CreditScheduler,
    /// With `adapter.pause_hosts`: its pause of its host.
    pause: Option<HostPause>,
}

/// How an adapter's credit rate reacts to FCI marks.
#[derive(Clone, Copy, Debug)]
pub struct FciReaction {
    /// Fraction cut on a mark.
    pub decrease: f64,
    /// Fraction of the nominal rate regained per quiet window.
    pub increase: f64,
    /// At most one cut, or one raise, per window.
    pub window_ps: TimePs,
}

/// The adapter's credit rate as a fraction of nominal, moved by FCI.
struct CreditRate {
    reaction: FciReaction,
    fraction: f64,
    last_cut_ps: Option<TimePs>,
    last_raise_ps: TimePs,
}

impl CreditRate {
    /// A marked cell arrived.
    fn mark(&mut self, now_ps: TimePs) -> bool {
        let r = self.reaction;
        if r.decrease == 0.0 || self.last_cut_ps.is_some_and(|t| now_ps < t + r.window_ps) {
            return false;
        }
        self.fraction *= 1.0 - r.decrease;
        self.last_cut_ps = Some(now_ps);
        self.last_raise_ps = now_ps;
        true
    }

    /// The fraction to issue a credit at now, after any raise due.
    fn now(&mut self, now_ps: TimePs) -> f64 {
        let r = self.reaction;
        if self.fraction < 1.0 && now_ps >= self.last_raise_ps + r.window_ps {
            self.fraction = (self.fraction + r.increase).min(1.0);
            self.last_raise_ps = now_ps;
        }
        self.fraction
    }
}

/// What an adapter counts.
#[derive(Clone, Debug, Default)]
pub struct AdapterCounters {
    /// Packets its hosts created.
    pub packets_created: u64,
    /// Packets dropped at a full VOQ.
    pub packets_dropped: u64,
    /// Packets discarded at reassembly: part of them was lost in the fabric.
    pub packets_discarded: u64,
    /// Reassembled packets dropped at a full host port queue.
    pub packets_dropped_egress: u64,
    /// Packets taken from VOQs into cells.
    pub packets_packed: u64,
    /// Packets reassembled at this adapter's egress.
    pub packets_reassembled: u64,
    /// Packets delivered to its hosts.
    pub packets_delivered: u64,
    /// Data cells cut.
    pub data_cells: u64,
    /// Data cells cut shorter than a full cell.
    pub short_cells: u64,
    /// Payload bytes of the data cells cut.
    pub payload_bytes_cut: u64,
    /// Request cells sent.
    pub requests_sent: u64,
    /// Requests sent again by VOQs that waited too long for a credit.
    pub requests_refreshed: u64,
    /// Credit cells sent.
    pub credits_sent: u64,
    /// Credit bytes forfeited by VOQs that had nothing left to send.
    pub credit_bytes_forfeited: u64,
    /// Cells sent on its uplinks (cell-hops).
    pub cells_sent: u64,
    /// Cells that reached this adapter and were consumed here (data, requests, credits).
    pub cells_received: u64,
    /// Data cells received carrying the FCI bit.
    pub fci_cells_received: u64,
    /// Cuts of the credit rate on FCI.
    pub fci_cuts: u64,
    /// Most cells held for reordering in one stream.
    pub reorder_peak_cells: u32,
    /// Deepest egress port queue, in bytes.
    pub egress_peak_bytes: u64,
    /// Most credits waiting to be served.
    pub credit_backlog_peak: u32,
    /// Host frames (transport segments and ACKs) that reached its host ports.
    pub frames_received: u64,
    /// Host frames it sent whole to its hosts after reassembly.
    pub frames_sent: u64,
    /// With `adapter.pause_hosts`: PAUSE and resume frames it sent its hosts (counted as they
    /// leave on the host link), data frames dropped past a host's headroom (among
    /// `packets_dropped`), and the most frames a host port held beyond XOFF.
    pub pfc: PfcCounters,
}

/// Bytes delivered to one host, in all and per sending host.
#[derive(Clone, Debug, Default)]
pub struct HostDelivery {
    /// The host.
    pub host: u16,
    /// Payload bytes delivered since the warm-up.
    pub bytes_measured: u64,
    /// Per sending host.
    pub from: Vec<FromHost>,
}

/// What one host received from one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct FromHost {
    /// The sender.
    pub src: u16,
    /// Payload bytes delivered since the warm-up.
    pub bytes_measured: u64,
    /// Payload bytes delivered since the start.
    pub bytes: u64,
    /// When the last of them reached the host.
    pub last_ps: TimePs,
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
    /// Its hosts' links: (host, rate, propagation), one per host port.
    pub host_links: Vec<(u16, u64, TimePs)>,
    /// Its hosts' flows.
    pub flows: Vec<Flow>,
    /// Cell sizes.
    pub format: CellFormat,
    /// Credits (pull) or push.
    pub credits: bool,
    /// Traffic classes.
    pub classes: usize,
    /// Weights of the classes at the credit schedulers; `None`: strict priority.
    pub class_weights: Option<Vec<u32>>,
    /// Bytes per credit.
    pub credit_bytes: u32,
    /// Credit rate above the port rate.
    pub credit_speedup: f64,
    /// Egress queue bytes that stop a port's credits.
    pub egress_stop_bytes: u64,
    /// Bytes a host port queue holds.
    pub egress_buffer_bytes: u64,
    /// How long a stream gap stays open before it is given up.
    pub reassembly_timeout_ps: TimePs,
    /// The credit rate's reaction to FCI.
    pub fci: FciReaction,
    /// Packets a VOQ holds.
    pub voq_packets: u32,
    /// Data cells per uplink the adapter keeps queued before it packs more.
    pub uplink_cells: u32,
    /// Statistics count from here.
    pub measure_from_ps: TimePs,
    /// Its timed host, if it has it.
    pub foreground: Option<Foreground>,
    /// The adapter's random stream (source start times).
    pub rng: Rng,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
    /// Where cells can be lost (reachability kept by messages, failures): a VOQ that has
    /// waited this long for a credit asks again.
    pub request_refresh_ps: Option<TimePs>,
    /// Host ports pause their hosts at these thresholds (`None`: never).
    pub pause_hosts: Option<PauseThresholds>,
}

/// A fabric adapter.
pub struct Adapter {
    index: u16,
    switch: usize,
    addressing: Arc<Addressing>,
    uplinks: Vec<PriorityPort>,
    uplink_of_port: Vec<u16>,
    /// Data cells waiting on the uplinks: the adapter packs more only while it is below
    /// `uplink_room_cells`, so credits wait in their FIFO rather than as cells.
    uplink_data_cells: u32,
    uplink_room_cells: u32,
    /// Next uplink for cells to this adapter's own hosts (they cross the fabric; our reading).
    local_next: usize,
    format: CellFormat,
    credits: bool,
    classes: usize,
    class_weights: Option<Vec<u32>>,
    credit_bytes: u32,
    egress_stop_bytes: u64,
    egress_buffer_bytes: u64,
    reassembly_timeout_ps: TimePs,
    credit_rate: CreditRate,
    voq_packets: u32,
    voqs: Vec<Voq>,
    /// Push mode: non-empty VOQs, round robin.
    ring: VecDeque<u32>,
    /// Pull mode, per traffic class: credited VOQs in credit arrival order; classes are served
    /// by strict priority (§3.3: "by the order of credit arrival and a priority").
    credit_fifo: Vec<VecDeque<u32>>,
    flows: Vec<Flow>,
    /// Per flow: bytes created so far.
    flow_bytes_created: Vec<u64>,
    egress: Vec<EgressPort>,
    /// Per (source adapter, host port, class).
    streams: Vec<Reassembly>,
    /// Per stream: when its reassembly timer is set for, or `NEVER_PS`.
    gap_timer_ps: Vec<TimePs>,
    cut: Vec<CutCell>,
    released: Vec<CellId>,
    measure_from_ps: TimePs,
    rng: Rng,
    foreground: Option<ForegroundState>,
    /// Timed flows its foreground host started.
    pub timed_flows: Vec<TimedFlow>,
    /// Timed flows delivered to its hosts: (flow, when its last byte arrived).
    pub timed_done: Vec<(u32, TimePs)>,
    /// What it counted.
    pub counters: AdapterCounters,
    /// Per host port: bytes delivered during measurement.
    pub delivered: Vec<HostDelivery>,
    /// Packet latency, creation to the last bit reaching the host.
    pub packet_latency: LatencyHistogram,
    /// Data cell latency through the fabric, cut to arrival here.
    pub fabric_latency: LatencyHistogram,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
    request_refresh_ps: Option<TimePs>,
    /// Host ports pause their hosts (`adapter.pause_hosts`).
    pauses_hosts: bool,
}

/// The adapter's uplink queues and, where it keeps them, its reachability tables for the
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

impl Adapter {
    /// Its switch in the topology.
    pub fn switch(&self) -> usize {
        self.switch
    }

    /// An adapter as `spec` says.
    pub fn new(spec: AdapterSpec) -> Self {
        let adapters = spec.addressing.adapters();
        let hosts = spec.addressing.hosts();
        let rate_factor = 1.0 + spec.credit_speedup;
        let egress: Vec<EgressPort> = spec
            .host_links
            .iter()
            .map(|&(host, rate_bps, propagation_ps)| EgressPort {
                host,
                queue: PacketQueue::default(),
                queued_bytes: 0,
                rate_bps,
                propagation_ps,
                sending: None,
                scheduler: CreditScheduler {
                    asking: vec![VecDeque::new(); spec.classes],
                    heard: vec![0; adapters * spec.classes],
                    period_ps: (spec.credit_bytes as f64 * 8e12 / (rate_bps as f64 * rate_factor))
                        .round() as TimePs,
                    next_ps: 0,
                    armed: false,
                    stopped: false,
                    scores: vec![0; spec.classes],
                },
                pause: spec.pause_hosts.map(HostPause::new),
            })
            .collect();
        Adapter {
            index: spec.index,
            switch: spec.switch,
            addressing: spec.addressing,
            uplink_room_cells: spec.uplink_cells * spec.uplinks.len() as u32,
            uplinks: spec.uplinks,
            uplink_of_port: spec.uplink_of_port,
            uplink_data_cells: 0,

            local_next: 0,
            format: spec.format,
            credits: spec.credits,
            classes: spec.classes,
            class_weights: spec.class_weights,
            credit_bytes: spec.credit_bytes,
            egress_stop_bytes: spec.egress_stop_bytes,
            egress_buffer_bytes: spec.egress_buffer_bytes,
            reassembly_timeout_ps: spec.reassembly_timeout_ps,
            credit_rate: CreditRate {
                reaction: spec.fci,
                fraction: 1.0,
                last_cut_ps: None,
                last_raise_ps: 0,
            },
            voq_packets: spec.voq_packets,
            voqs: (0..hosts * spec.classes).map(|_| Voq::default()).collect(),
            ring: VecDeque::new(),
            credit_fifo: vec![VecDeque::new(); spec.classes],
            flow_bytes_created: vec![0; spec.flows.len()],
            flows: spec.flows,
            delivered: egress
                .iter()
                .map(|p| HostDelivery {
                    host: p.host,
                    bytes_measured: 0,
                    from: Vec::new(),
                })
                .collect(),
            streams: vec![Reassembly::default(); adapters * egress.len() * spec.classes],
            gap_timer_ps: vec![NEVER_PS; adapters * egress.len() * spec.classes],
            egress,
            cut: Vec::new(),
            released: Vec::new(),
            measure_from_ps: spec.measure_from_ps,
            rng: spec.rng,
            foreground: spec.foreground.map(|spec| ForegroundState {
                spec,
                waiting: VecDeque::new(),
                current: None,
                sending: false,
            }),
            timed_flows: Vec::new(),
            timed_done: Vec::new(),
            counters: AdapterCounters::default(),
            packet_latency: LatencyHistogram::new(),
            fabric_latency: LatencyHistogram::new(),
            reach: spec.reach,
            request_refresh_ps: spec.request_refresh_ps,
            pauses_hosts: spec.pause_hosts.is_some(),
        }
    }

    /// Starts the adapter's flows, each at a random point of its first packet gap (so that
    /// saturated hosts do not start in lockstep).
    /// Finite flows all start at time 0 (an incast's senders answer together).
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        for (i, flow) in self.flows.iter().enumerate() {
            let offset_ps = match flow.size_bytes {
                Some(_) => 0,
                None => self.rng.gen_range(0..flow.gap_ps.max(1)),
            };
            ctx.set_timer(offset_ps, SOURCE | i as u32);
        }
        if let Some(fg) = &self.foreground {
            let first_ps = exponential_ps(fg.spec.mean_gap_ps, &mut self.rng);
            ctx.set_timer(first_ps, FLOW_ARRIVES);
        }
    }

    /// A timed flow arrives at the foreground host: it waits its turn.
    fn flow_arrives<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let fg = self.foreground.as_mut().expect("a foreground host");
        let flow = TimedFlow {
            id: self.timed_flows.len() as u32,
            size_bytes: fg.spec.sizes.draw(&mut self.rng),
            start_ps: ctx.now_ps,
        };
        self.timed_flows.push(flow);
        fg.waiting.push_back(flow);
        ctx.set_timer(
            ctx.now_ps + exponential_ps(fg.spec.mean_gap_ps, &mut self.rng),
            FLOW_ARRIVES,
        );
        if !fg.sending {
            fg.sending = true;
            ctx.set_timer(ctx.now_ps, FLOW_SENDS);
        }
    }

    /// The foreground host sends the next packet of its current flow.
    fn flow_sends<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let fg = self.foreground.as_mut().expect("a foreground host");
        let Some((flow, left)) = fg
            .current
            .take()
            .or_else(|| fg.waiting.pop_front().map(|f| (f, f.size_bytes)))
        else {
            fg.sending = false;
            return;
        };
        let size = left.min(fg.spec.packet_bytes as u64);
        let mut packet = Packet::new(fg.spec.src, fg.spec.dst, size as u32, ctx.now_ps);
        packet.flow = flow.id;
        packet.last_of_flow = size == left;
        if size < left {
            fg.current = Some((flow, left - size));
        }
        ctx.set_timer(
            ctx.now_ps + serialization_ps(size, fg.spec.rate_bps),
            FLOW_SENDS,
        );
        self.enqueue(ctx, packet, 0);
    }

    /// Packets held at this adapter: in VOQs and host port queues.
    pub fn packets_held(&self) -> u64 {
        let in_voqs: u64 = self.voqs.iter().map(|v| v.packets.len() as u64).sum();
        let at_ports: u64 = self.egress.iter().map(|p| p.queue.len() as u64).sum();
        let sending = self.egress.iter().filter(|p| p.sending.is_some()).count() as u64;
        in_voqs + at_ports + sending
    }

    fn measuring(&self, now_ps: TimePs) -> bool {
        now_ps >= self.measure_from_ps
    }

    /// Flow `i` creates its next packet.
    fn generate<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) {
        let flow = self.flows[i];
        let size_bytes = match flow.size_bytes {
            None => flow.packet_bytes,
            Some(total) => {
                let left = total - self.flow_bytes_created[i];
                self.flow_bytes_created[i] += left.min(flow.packet_bytes as u64);
                left.min(flow.packet_bytes as u64) as u32
            }
        };
        if flow
            .size_bytes
            .is_none_or(|total| self.flow_bytes_created[i] < total)
        {
            ctx.set_timer(
                ctx.now_ps + flow.next_gap_ps(&mut self.rng),
                SOURCE | i as u32,
            );
        }
        let packet = Packet::new(flow.src, flow.dst, size_bytes, ctx.now_ps);
        self.enqueue(ctx, packet, flow.class as usize);
    }

    /// A host's frame reached host port `port`: it joins its destination's VOQ as a packet
    /// that carries it (class 0; a full VOQ drops it, and the host's transport recovers).
    /// With `adapter.pause_hosts` a data frame is charged to the port, which may owe its host
    /// a PAUSE frame, or dropped if the host overran its headroom.
    fn receive_frame<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, frame: CellId) {
        self.counters.frames_received += 1;
        let c = &ctx.cells[frame];
        let mut packet = Packet::new(c.src, c.dst, c.payload_bytes as u32, c.inject_ps);
        packet.frame = frame.index();
        let charged = c.flags & CONTROL == 0 && self.pauses_hosts;
        if charged
            && !self.egress[port]
                .pause
                .as_ref()
                .is_some_and(HostPause::has_room)
        {
            self.counters.packets_created += 1;
            self.counters.packets_dropped += 1;
            self.counters.pfc.drops += 1;
            release_frame(ctx, packet.frame);
            return;
        }
        if !self.enqueue(ctx, packet, 0) || !charged {
            return;
        }
        let pause = self.egress[port].pause.as_mut().expect("a pausing port");
        let owed = pause.charge();
        let peak = &mut self.counters.pfc.headroom_peak_packets;
        *peak = (*peak).max(pause.beyond_xoff());
        if owed {
            self.egress_kick(ctx, port);
        }
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
        let pause = self.egress[port].pause.as_mut().expect("a pausing port");
        if pause.release() {
            self.egress_kick(ctx, port);
        }
    }

    /// A host hands `packet` of traffic class `class` to its VOQ, or it is dropped there
    /// (false).
    fn enqueue<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        packet: Packet,
        class: usize,
    ) -> bool {
        self.counters.packets_created += 1;
        let key = packet.dst as u32 * self.classes as u32 + class as u32;
        let voq = &mut self.voqs[key as usize];
        if voq.packets.len() >= self.voq_packets {
            self.counters.packets_dropped += 1;
            release_frame(ctx, packet.frame);
            return false;
        }
        let id = ctx.packets.alloc(packet);
        ctx.packets.push_back(&mut voq.packets, id);
        if voq.active {
            return true;
        }
        voq.active = true;
        if self.credits {
            self.send_request(ctx, key, true);
        } else {
            self.ring.push_back(key);
            self.serve(ctx);
        }
        true
    }

    /// The destination host and traffic class of VOQ `key`.
    fn voq_of(&self, key: u32) -> (u16, usize) {
        let classes = self.classes as u32;
        ((key / classes) as u16, (key % classes) as usize)
    }

    /// Tells the scheduler of its destination's port that VOQ `key` has packets (`on`) or has
    /// none left.
    fn send_request<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32, on: bool) {
        self.counters.requests_sent += 1;
        let (dst, class) = self.voq_of(key);
        let flags = Kind::Request as u8 | class_flags(class) | if on { REQUEST_ON } else { 0 };
        let voq = &mut self.voqs[key as usize];
        voq.requests = voq.requests.wrapping_add(1);
        let number = voq.requests;
        if let (true, Some(refresh_ps)) = (on, self.request_refresh_ps) {
            voq.credited_ps = ctx.now_ps;
            if !voq.refresh_armed {
                voq.refresh_armed = true;
                ctx.set_timer(ctx.now_ps + refresh_ps, REFRESH | key);
            }
        }
        self.send_control(ctx, self.index, dst, flags, number);
    }

    /// VOQ `key`'s refresh timer: if it still waits for a credit after the refresh time, its
    /// request (or the credits answering it) may have been lost to a failure: ask again.
    fn refresh_request<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32) {
        let refresh_ps = self.request_refresh_ps.expect("set only with refreshes");
        let voq = &mut self.voqs[key as usize];
        voq.refresh_armed = false;
        if !voq.active {
            return;
        }
        let due_ps = voq.credited_ps + refresh_ps;
        if ctx.now_ps >= due_ps {
            self.counters.requests_refreshed += 1;
            self.send_request(ctx, key, true);
        } else {
            voq.refresh_armed = true;
            ctx.set_timer(due_ps, REFRESH | key);
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
        self.launch(ctx, cell, None);
    }

    /// Sends a new cell (data of traffic class `class`, or control) toward its destination:
    /// queued on the uplink routing picks, or lost if no uplink is usable.
    fn launch<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        mut cell: Cell,
        class: Option<usize>,
    ) {
        let uplink = self.route(ctx, &mut cell);
        let id = ctx.cells.alloc(cell);
        let Some(uplink) = uplink else {
            let reach = self
                .reach
                .as_mut()
                .expect("only reachability leaves no route");
            reach::lose(ctx, &mut reach.counters, id, Loss::NoRoute);
            return;
        };
        match class {
            Some(class) => {
                self.uplinks[uplink].push_data(ctx.cells, id, class);
                self.uplink_data_cells += 1;
            }
            None => self.uplinks[uplink].push_control(ctx.cells, id),
        }
        self.kick(ctx, uplink);
    }

    /// The uplink a new cell takes: sprayed toward its destination adapter, or round robin
    /// for this adapter's own hosts; `None` if no uplink is usable.
    fn route<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &mut Cell) -> Option<usize> {
        ctx.router.inject(cell.src as usize, cell);
        if self.addressing.adapter_of(cell.dst) == self.index {
            let n = self.uplinks.len();
            for _ in 0..n {
                self.local_next = (self.local_next + 1) % n;
                if self
                    .reach
                    .as_ref()
                    .is_none_or(|r| r.usable(self.local_next, cell.dst))
                {
                    return Some(self.local_next);
                }
            }
            return None;
        }
        let view = Backlog {
            uplinks: &self.uplinks,
            uplink_of_port: &self.uplink_of_port,
            reach: self.reach.as_ref(),
            dst: cell.dst,
        };
        let port = ctx.router.route(self.switch, 0, cell, &view);
        (port != NO_ROUTE).then(|| self.uplink_of_port[port] as usize)
    }

    /// Sends on uplink `uplink` if its link is free, else makes sure it wakes when it frees.
    fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, uplink: usize) {
        let port = &mut self.uplinks[uplink];
        let tag = UPLINK | uplink as u32;
        if let Some(d) = transmit(ctx, port, uplink, self.format, tag, |_, _| {}) {
            if d.data_depth > 0 {
                self.uplink_data_cells -= 1;
            }
            self.counters.cells_sent += 1;
        }
    }

    /// Packs and sends while the uplinks have room: credited VOQs in credit order (pull), or
    /// non-empty VOQs round robin (push).
    fn serve<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        while self.uplink_data_cells < self.uplink_room_cells {
            let next = if self.credits && self.class_weights.is_some() {
                // Weighted at the egress already: serve credits in arrival order.
                self.credit_fifo[0].pop_front()
            } else if self.credits {
                self.credit_fifo
                    .iter_mut()
                    .find_map(|fifo| fifo.pop_front())
            } else {
                self.ring.pop_front()
            };
            let Some(key) = next else { return };
            self.send_burst(ctx, key);
            let voq = &mut self.voqs[key as usize];
            let (emptied, was_active) = (voq.packets.is_empty(), voq.active);
            if emptied {
                voq.active = false;
                if was_active && self.credits {
                    self.send_request(ctx, key, false);
                }
            } else if !self.credits {
                self.ring.push_back(key);
            }
        }
    }

    /// Spends one credit on VOQ `key`: packs its packets and sprays the cells.
    fn send_burst<R: Router>(&mut self, ctx: &mut Context<'_, R>, key: u32) {
        let (dst, class) = self.voq_of(key);
        let voq = &mut self.voqs[key as usize];
        let mut cut = std::mem::take(&mut self.cut);
        let packets_before = voq.packets.len();
        let forfeited_before = voq.balance.forfeited_bytes();
        // Push: one packet at a time, as it arrived (an element can then discard it whole).
        let budget_bytes = if self.credits {
            self.credit_bytes
        } else {
            voq.balance = CreditBalance::default();
            1
        };
        pack_credit(
            ctx.packets,
            &mut voq.packets,
            &mut voq.balance,
            budget_bytes,
            self.format.payload_bytes,
            &mut voq.next_seq,
            |c| cut.push(c),
        );
        self.counters.packets_packed += (packets_before - voq.packets.len()) as u64;
        self.counters.credit_bytes_forfeited += voq.balance.forfeited_bytes() - forfeited_before;
        self.counters.payload_bytes_cut += cut.iter().map(|c| c.payload_bytes as u64).sum::<u64>();
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
            self.counters.data_cells += 1;
            self.counters.short_cells += u64::from(c.payload_bytes < self.format.payload_bytes);
            self.launch(ctx, cell, Some(class));
        }
        self.cut = cut;
    }

    /// A data cell from the fabric: back in sequence, and whole packets to the host port.
    fn receive_data<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: CellId) {
        let c = ctx.cells[cell];
        let port = self.addressing.port_of(c.dst);
        if c.flags & FCI != 0 {
            self.counters.fci_cells_received += 1;
            self.counters.fci_cuts += u64::from(self.credit_rate.mark(ctx.now_ps));
        }
        if self.measuring(c.inject_ps) {
            self.fabric_latency.record(ctx.now_ps - c.inject_ps);
        }
        let stream = (c.src as usize * self.egress.len() + port) * self.classes + class_of(c.flags);
        let mut released = std::mem::take(&mut self.released);
        let timeout_ps = self.reassembly_timeout_ps;
        let reassembly = &mut self.streams[stream];
        let held = reassembly.accept(c.seq, cell, ctx.now_ps, timeout_ps, |id| released.push(id));
        self.counters.reorder_peak_cells = self.counters.reorder_peak_cells.max(held as u32);
        self.deliver_released(ctx, port, stream, &mut released);
        self.released = released;
        self.watch_gap(ctx, stream);
    }

    /// Sets the timer that gives up stream `stream`'s gap if it holds cells and has none set
    /// (§4.1's reassembly timer). A timer set for an earlier gap fires no later than this one
    /// is due, and sets the next: at most one timer per stream is pending.
    fn watch_gap<R: Router>(&mut self, ctx: &mut Context<'_, R>, stream: usize) {
        if self.gap_timer_ps[stream] != NEVER_PS {
            return;
        }
        if let Some(at_ps) = self.streams[stream].overdue_at(self.reassembly_timeout_ps) {
            self.gap_timer_ps[stream] = at_ps;
            ctx.set_timer(at_ps, GAP | stream as u32);
        }
    }

    /// Stream `stream`'s reassembly timer: give up what is overdue and deliver what follows.
    fn gap_timer<R: Router>(&mut self, ctx: &mut Context<'_, R>, stream: usize) {
        self.gap_timer_ps[stream] = NEVER_PS;
        let mut released = std::mem::take(&mut self.released);
        let timeout_ps = self.reassembly_timeout_ps;
        self.streams[stream].give_up_overdue(ctx.now_ps, timeout_ps, &mut |id| released.push(id));
        let port = stream / self.classes % self.egress.len();
        self.deliver_released(ctx, port, stream, &mut released);
        self.released = released;
        self.watch_gap(ctx, stream);
    }

    /// Cells of stream `stream` now in sequence: their whole packets join host port `port`'s
    /// queue (or are discarded, if a gap broke them, or dropped, if the port is full).
    fn deliver_released<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        stream: usize,
        released: &mut Vec<CellId>,
    ) {
        for id in released.drain(..) {
            let mut packet = ctx.cells[id].packet;
            while packet != NO_PACKET {
                let pid = PacketId::from_index(packet);
                let p = ctx.packets[pid];
                packet = p.next_in_cell;
                self.counters.packets_reassembled += 1;
                let egress = &mut self.egress[port];
                if !self.streams[stream].is_complete(p.start_seq) {
                    self.counters.packets_discarded += 1;
                    release_packet(ctx, pid);
                } else if egress.queued_bytes + p.size_bytes as u64 > self.egress_buffer_bytes {
                    self.counters.packets_dropped_egress += 1;
                    release_packet(ctx, pid);
                } else {
                    egress.queued_bytes += p.size_bytes as u64;
                    ctx.packets.push_back(&mut egress.queue, pid);
                }
            }
            ctx.consume(id);
            self.counters.cells_received += 1;
        }
        let egress = &self.egress[port];
        self.counters.egress_peak_bytes = self.counters.egress_peak_bytes.max(egress.queued_bytes);
        self.egress_kick(ctx, port);
    }

    /// Starts the next frame on host port `port` if its link is free: a PAUSE or resume
    /// frame owed to the host first, else the next packet.
    fn egress_kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let egress = &mut self.egress[port];
        if egress.sending.is_some() || egress.pause.as_ref().is_some_and(HostPause::is_sending) {
            return;
        }
        if egress.pause.as_mut().is_some_and(HostPause::start_next) {
            let done_ps = ctx.now_ps + serialization_ps(HostPause::FRAME_BYTES, egress.rate_bps);
            ctx.set_timer(done_ps, EGRESS | port as u32);
            return;
        }
        let Some(id) = ctx.packets.pop_front(&mut egress.queue) else {
            return;
        };
        egress.sending = Some(id);
        let size = ctx.packets[id].size_bytes as u64;
        let done_ps = ctx.now_ps + serialization_ps(size, egress.rate_bps);
        ctx.set_timer(done_ps, EGRESS | port as u32);
    }

    /// Host port `port` finished sending a PAUSE or resume frame: it goes to the host.
    fn pause_frame_done<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, pause: bool) {
        let frame = pause_frame(PauseTarget::Class(LOSSLESS_CLASS), pause, ctx.now_ps);
        let id = ctx.cells.alloc(frame);
        let arrive_ps = ctx.now_ps + self.egress[port].propagation_ps;
        ctx.send_cell(self.uplinks.len() + port, id, arrive_ps);
        if pause {
            self.counters.pfc.pause_frames_sent += 1;
        } else {
            self.counters.pfc.resume_frames_sent += 1;
        }
        self.egress_kick(ctx, port);
    }

    /// Host port `port` finished sending a packet (or a PAUSE frame): it is delivered.
    fn egress_done<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        if let Some(pause) = self.egress[port].pause.as_mut().and_then(HostPause::finish) {
            return self.pause_frame_done(ctx, port, pause);
        }
        let measuring = self.measuring(ctx.now_ps);
        let counted = |created_ps| created_ps >= self.measure_from_ps;
        let egress = &mut self.egress[port];
        let id = egress
            .sending
            .take()
            .expect("a packet was on the host link");
        let packet = ctx.packets[id];
        egress.queued_bytes -= packet.size_bytes as u64;
        let arrive_ps = ctx.now_ps + egress.propagation_ps;
        let host = &mut self.delivered[port];
        let at = match host.from.iter().position(|f| f.src == packet.src) {
            Some(at) => at,
            None => {
                host.from.push(FromHost {
                    src: packet.src,
                    ..FromHost::default()
                });
                host.from.len() - 1
            }
        };
        let from = &mut host.from[at];
        let size = packet.size_bytes as u64;
        from.bytes += size;
        from.last_ps = arrive_ps;
        if measuring {
            from.bytes_measured += size;
            host.bytes_measured += size;
        }
        if counted(packet.created_ps) {
            self.packet_latency.record(arrive_ps - packet.created_ps);
        }
        if packet.last_of_flow {
            self.timed_done.push((packet.flow, arrive_ps));
        }
        ctx.packets.free(id);
        self.counters.packets_delivered += 1;
        if packet.frame != NO_FRAME {
            // The host is a node: its frame goes to it over the host port's cable.
            self.counters.frames_sent += 1;
            let frame = CellId::from_index(packet.frame);
            ctx.send_cell(self.uplinks.len() + port, frame, arrive_ps);
        }
        let resume_bytes = self
            .egress_stop_bytes
            .saturating_sub(self.credit_bytes as u64);
        let egress = &mut self.egress[port];
        if egress.scheduler.stopped && egress.queued_bytes <= resume_bytes {
            egress.scheduler.stopped = false;
            self.arm(ctx, port);
        }
        self.egress_kick(ctx, port);
    }

    /// Request cell `request` (numbered in its `seq`) reached host port `port`'s scheduler;
    /// one older than the latest heard from its VOQ is stale and ignored.
    fn receive_request<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        request: &Cell,
    ) {
        let (from, class, number) = (request.src, class_of(request.flags), request.seq);
        let on = request.flags & REQUEST_ON != 0;
        let adapters = self.addressing.adapters();
        let s = &mut self.egress[port].scheduler;
        let heard = &mut s.heard[class * adapters + from as usize];
        if (number.wrapping_sub(*heard) as i32) <= 0 && *heard != 0 {
            return;
        }
        *heard = number;
        let asking = &mut s.asking[class];
        let at = asking.iter().position(|&a| a == from);
        match (on, at) {
            (true, None) => asking.push_back(from),
            (false, Some(at)) => {
                asking.remove(at);
            }
            _ => {}
        }
        self.arm(ctx, port);
    }

    /// Sets port `port`'s credit timer if it has someone to credit and may.
    fn arm<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let s = &mut self.egress[port].scheduler;
        if s.armed || s.stopped || s.asking.iter().all(VecDeque::is_empty) {
            return;
        }
        s.armed = true;
        ctx.set_timer(s.next_ps.max(ctx.now_ps), CREDIT | port as u32);
    }

    /// Port `port`'s credit timer: issue one credit round robin, unless the port is full.
    fn issue_credit<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let egress = &mut self.egress[port];
        let s = &mut egress.scheduler;
        s.armed = false;
        if egress.queued_bytes >= self.egress_stop_bytes {
            s.stopped = true;
            return;
        }
        let Some(class) = next_class(&s.asking, &mut s.scores, self.class_weights.as_deref())
        else {
            return;
        };
        let adapter = s.asking[class].pop_front().expect("a non-empty class");
        s.asking[class].push_back(adapter);
        let fraction = self.credit_rate.now(ctx.now_ps);
        s.next_ps = ctx.now_ps + (s.period_ps as f64 / fraction).round() as TimePs;
        let (host, to) = (egress.host, self.addressing.first_host(adapter));
        self.counters.credits_sent += 1;
        self.send_control(ctx, host, to, Kind::Credit as u8 | class_flags(class), 0);
        self.arm(ctx, port);
    }
}

impl<R: Router> Node<R> for Adapter {
    fn is_slotted(&self) -> bool {
        false
    }

    fn is_sink(&self) -> bool {
        false
    }

    fn cells_held(&self) -> u64 {
        let queued: u64 = self.uplinks.iter().map(|p| p.queued_cells() as u64).sum();
        let reordering: u64 = self.streams.iter().map(|s| s.held() as u64).sum();
        queued + reordering
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        if port >= self.uplinks.len() {
            return self.receive_frame(ctx, port - self.uplinks.len(), cell);
        }
        if reach::arrival(self, ctx, port, cell) {
            return;
        }
        let c = ctx.cells[cell];
        match Kind::of(c.flags) {
            Kind::Data => self.receive_data(ctx, cell),
            Kind::Request => {
                ctx.consume(cell);
                self.counters.cells_received += 1;
                let port = self.addressing.port_of(c.dst);
                self.receive_request(ctx, port, &c);
            }
            Kind::Credit => {
                ctx.consume(cell);
                self.counters.cells_received += 1;
                let class = class_of(c.flags);
                let fifo = if self.class_weights.is_some() {
                    0
                } else {
                    class
                };
                let key = c.src as u32 * self.classes as u32 + class as u32;
                self.voqs[key as usize].credited_ps = ctx.now_ps;
                self.credit_fifo[fifo].push_back(key);
                let backlog = self.credit_fifo.iter().map(VecDeque::len).sum::<usize>() as u32;
                self.counters.credit_backlog_peak = self.counters.credit_backlog_peak.max(backlog);
                self.serve(ctx);
            }
            Kind::Reach => unreachable!("reachability cells are taken on arrival"),
        }
    }

    /// An element paused (OFF) or resumed (ON) data on uplink `port`.
    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        self.uplinks[port].pause_data(matches!(signal, FlowSignal::Off { .. }));
        self.kick(ctx, port);
        self.serve(ctx);
    }

    fn tick(&mut self, _: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        if reach::is_reach_tag(tag) {
            return reach::timer(self, ctx, tag);
        }
        let index = (tag & INDEX) as usize;
        match tag & !INDEX {
            UPLINK => {
                self.kick(ctx, index);
                self.serve(ctx);
            }
            SOURCE => self.generate(ctx, index),
            FLOW_ARRIVES => self.flow_arrives(ctx),
            FLOW_SENDS => self.flow_sends(ctx),
            GAP => self.gap_timer(ctx, index),
            REFRESH => self.refresh_request(ctx, index as u32),
            EGRESS => self.egress_done(ctx, index),
            _ => self.issue_credit(ctx, index),
        }
    }
}

impl ReachDevice for Adapter {
    fn reach(&mut self) -> Option<&mut DeviceReach> {
        self.reach.as_mut()
    }

    fn fabric_ports(&self) -> usize {
        self.uplinks.len()
    }

    fn queue_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId) {
        self.uplinks[port].push_control(ctx.cells, cell);
        self.kick(ctx, port);
    }

    fn flush<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, loss: Loss) {
        let reach = self.reach.as_mut().expect("only reachability flushes");
        let uplink = &mut self.uplinks[port];
        self.uplink_data_cells -= reach::flush_port(ctx, &mut reach.counters, uplink, loss);
        self.serve(ctx);
    }

    fn release<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        self.uplinks[port].pause_data(false);
        self.kick(ctx, port);
        self.serve(ctx);
    }

    /// Adapters do not fail (a scenario may fail elements only).
    fn reset(&mut self) {}
}
