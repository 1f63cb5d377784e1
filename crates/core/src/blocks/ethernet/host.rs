//! A host on an Ethernet fabric: a NIC that serializes at line rate, ACKs first (they are
//! small and the peer's window waits on them), then the flows' segments round robin, each
//! taken from its transport only when the NIC is free (so the NIC queue never holds more than
//! the ACKs due); flows' state in two arenas (one `Vec` of send sides, one of receive sides);
//! every timer (NIC, retransmission, delayed ACK, NDP's pull pacer) through the kernel, at
//! most one pending per purpose, stale firings ignored. An MPTCP connection is consecutive
//! send sides (its subflows, each labelled with its path) sharing the data its first one
//! holds, and consecutive receive sides whose bytes its first one counts, each once. An NDP
//! host (Handley et al. 2017 §3.2) answers each data packet with an ACK and each trimmed
//! header with a NACK at once, and sends the PULLs its [`PullPacer`] releases; ACKs, NACKs
//! and PULLs share the NIC's control queue; its ACKs and NACKs carry the path label of the
//! packet they answer, and a header a switch returned (§3.1) tells its sender that packet was
//! lost. With `ndp_paths` its senders label each packet's path themselves (§3.3). A DCQCN host (Zhu et al. 2015) paces each flow
//! at its rate (a NIC wake-up at the earliest paced start) and, as notification point, answers
//! marked data with a CNP at most once per interval per flow. A PFC PAUSE frame from the
//! switch stops the NIC's data until the resume frame; ACKs and CNPs still go.
//!
//! Flows may also be opened during the run ([`Host::open`], by the host's [`FlowSource`] on a
//! kernel timer, or at the start): then every data segment names its sender's flow by a key
//! (the send side's slot and the slot's generation, bumped each time a completed flow's slot
//! is reused), the receiving host finds or makes the receive side for that key (in a receive
//! slot freed when an earlier flow completed there), packets of an earlier generation are
//! ignored, late copies of a completed flow's segments are acknowledged in full, and a finite
//! flow's last segment carries [`LAST_SEGMENT`] so the receiver learns the flow's size and
//! when it completes. Memory then follows the flows in flight, not the flows ever opened
//! (beside 12 bytes per sending host's slot seen, and the timed flows' records).

use serde::Serialize;

use super::pause::{read_pause_frame, ClassPauses, PauseTarget};
use super::{reached_ps, ACK, BOUNCED, CE, CNP, CONTROL, ECE, ECT, NACK, PAUSE, PULL, TRIMMED};
use crate::blocks::cell::{Cell, CellId, CellQueue};
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::link::Link;
use crate::blocks::routing::Router;
use crate::blocks::traffic::NEVER_PS;
use crate::blocks::transport::dcqcn::{DcqcnParams, DcqcnSender};
use crate::blocks::transport::mptcp::{Lia, SharedData};
use crate::blocks::transport::ndp::{NdpCounters, NdpPaths, NdpSender, PathFeedback, PullPacer};
use crate::blocks::transport::receiver::{Arrival, Receiver};
use crate::blocks::transport::{FlowSender, Sender, SenderCounters, SenderParams, TIMER_OFF};
use crate::blocks::workload::{exponential_ps, FlowSizes};
use crate::engine::cache::prefetch;
use crate::engine::rng::{mix, Rng};
use crate::engine::time::TimePs;
use rand::Rng as _;
use std::sync::Arc;

/// Timer kinds, in the top bits of a timer's tag (the flow's index below).
const NIC: u32 = 0;
const RTO: u32 = 1 << 30;
const DELAYED_ACK: u32 = 2 << 30;
const PACER: u32 = 3 << 30;
const KIND: u32 = 3 << 30;
/// A NIC-kind timer tag of its own: the host's [`FlowSource`] opens its next flow.
const ARRIVAL: u32 = NIC | 1;

/// Bits of a flow key that name the send side's slot; the bits above hold its generation.
const SLOT_BITS: u32 = 20;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
/// Generations of a slot, counted modulo this.
const GENERATIONS: u32 = 1 << (32 - SLOT_BITS);
/// Bit of a data segment's `seq` (flows opened during the run): its flow's last segment.
pub const LAST_SEGMENT: u32 = 1 << 31;
/// No receive side yet for a (sender, slot).
const NONE: u32 = u32::MAX;

/// [`OutFlow::conn`] of a flow that is no MPTCP subflow.
const NO_CONN: u32 = u32::MAX;

/// The path label of the flow of key `key` (opened during the run): flows between one pair of
/// hosts hash apart, as TCP connections of different ports do; never 0 (the pair's own hash).
fn path_label(key: u32) -> u16 {
    (key % u16::MAX as u32) as u16 + 1
}

/// How every host of a run behaves.
#[derive(Clone, Copy, Debug)]
pub struct HostParams {
    /// The transport's sender settings.
    pub sender: SenderParams,
    /// Bytes of an ACK on the wire.
    pub ack_bytes: u16,
    /// Data segments carry ECT (DCTCP).
    pub ecn_capable: bool,
    /// Delayed ACKs: the longest an ACK waits for a second segment (`None`: an ACK per
    /// segment).
    pub delayed_ack_ps: Option<TimePs>,
    /// Bytes delivered from this time on count toward goodput.
    pub measure_from_ps: TimePs,
    /// NDP: the pull pacer's interval, one data packet's time on the host's link (`None`: a
    /// window transport).
    pub ndp_pull_interval_ps: Option<TimePs>,
    /// NDP: its senders label each packet's path themselves (§3.3); `None`: the switches
    /// spray.
    pub ndp_paths: Option<NdpPathSpec>,
    /// DCQCN: its reaction and notification points' settings (`None`: another transport).
    pub dcqcn: Option<DcqcnParams>,
    /// The host's switch cuts through: it has a frame at its header.
    pub into_cut_through: bool,
    /// PFC: the lossless classes its switch may pause apart (802.1Qbb; 1 without PFC).
    pub pfc_classes: u8,
    /// BFC: the NIC's data queues, which its switch pauses apart (Goyal et al. 2022 §3.2,
    /// the NIC as the first upstream port); flow `i` rides queue `i` modulo them. `None`:
    /// no BFC.
    pub bfc_queues: Option<u16>,
}

/// How NDP senders label their packets' paths (NDP §3.3).
#[derive(Clone, Copy, Debug)]
pub struct NdpPathSpec {
    /// Path labels per flow, `0..paths`.
    pub paths: u16,
    /// The run's salt for the labels' permutations (from its seed).
    pub salt: u64,
}

/// The send side of one flow.
pub struct OutFlow {
    /// Receiving host.
    pub dst: u16,
    /// The flow's index at the receiving host.
    remote: u32,
    /// Bytes of the flow (`None`: unending).
    size_bytes: Option<u64>,
    /// The transport.
    pub sender: FlowSender,
    /// When its pending retransmission timer event fires, or `NEVER_PS`.
    timer_ps: TimePs,
    /// Its path label (an MPTCP subflow's number; 0 for a TCP flow).
    path: u16,
    /// Its traffic class (802.1Q priority; PFC pauses it alone), carried in `Cell::vc`.
    class: u8,
    /// BFC: its NIC queue (a BFC switch pauses it with its queue-mates), carried in
    /// `Cell::vc` instead of the class.
    queue: u16,
    /// An MPTCP subflow's connection: its first subflow's index, or [`NO_CONN`].
    conn: u32,
    /// On an MPTCP connection's first subflow: the segments not yet given to a subflow.
    data: SharedData,
    /// The key its segments carry and its ACKs must carry (a flow made at build: its index).
    key: u32,
    /// A flow opened during the run: its number among the host's timed flows, or [`NONE`].
    timed: u32,
    /// The latest time a receiver made an ACK that reached this sender (a flow opened during
    /// the run completes at the receiver when it makes the ACK that completes it here).
    acked_made_ps: TimePs,
}

/// The receive side of one flow.
pub struct InFlow {
    /// Sending host.
    pub src: u16,
    /// The flow's index at the sending host.
    remote: u32,
    /// Bytes of the flow (`None`: unending); of an MPTCP connection, on its first subflow.
    size_bytes: Option<u64>,
    receiver: Receiver,
    /// Bytes delivered in order (an MPTCP connection's, on its first subflow: each delivered
    /// data segment once, in order on its subflow).
    pub bytes: u64,
    /// Of them, delivered in the measurement window.
    pub bytes_measured: u64,
    /// When the last byte of a finite flow arrived.
    pub done_ps: Option<TimePs>,
    /// Send time of the last segment, echoed by a delayed ACK.
    echo_ps: TimePs,
    /// When its pending delayed-ACK timer event fires, or `NEVER_PS`.
    timer_ps: TimePs,
    /// Its path label, which its ACKs carry.
    path: u16,
    /// The receive side counting its bytes: itself, or its MPTCP connection's first subflow.
    record: u32,
    /// An MPTCP subflow: every segment is full size (the connection's last one included).
    full_segments: bool,
    /// DCQCN: the earliest the next CNP may go.
    cnp_ps: TimePs,
}

/// Where a host's flows opened during the run go.
#[derive(Clone, Copy, Debug)]
pub enum Destination {
    /// Always this host.
    Host(u16),
    /// A host drawn uniformly among the other `hosts - 1` for each flow.
    Uniform {
        /// Hosts of the fabric.
        hosts: u16,
    },
}

/// A host's source of flows opened during the run: flows of sizes drawn from a distribution,
/// opened on a kernel timer as a Poisson process, or kept at a number in flight (closed loop).
pub struct FlowSource {
    /// Where each flow goes.
    pub destination: Destination,
    /// Flow sizes.
    pub sizes: Arc<FlowSizes>,
    /// Poisson arrivals: the mean time between them; `None` for a closed loop.
    pub mean_gap_ps: Option<TimePs>,
    /// Closed loop: flows kept in flight, a new one opened as one completes.
    pub in_flight: u32,
    /// The source's random stream (sizes, gaps, destinations).
    pub rng: Rng,
}

/// A flow the host opened during the run from its [`FlowSource`]: what its FCT table lists.
#[derive(Clone, Copy, Debug)]
pub struct OpenedFlow {
    /// Receiving host.
    pub dst: u16,
    /// Bytes.
    pub size_bytes: u64,
    /// When it arrived (was opened).
    pub start_ps: TimePs,
    /// When its last byte reached the receiver (the receiver made the ACK that completed
    /// it); `None` while unfinished.
    pub done_ps: Option<TimePs>,
}

/// What a receiving host keeps of one send-side slot of a sending host.
#[derive(Clone, Copy, Debug)]
struct Peer {
    /// The key of the slot's latest flow seen here ([`NONE`]: none yet).
    key: u32,
    /// Its receive side, or [`NONE`] once it completed here.
    inflow: u32,
    /// A completed flow's segments (what a late copy's ACK acknowledges).
    packets: u32,
}

impl Peer {
    const NEW: Peer = Peer {
        key: NONE,
        inflow: NONE,
        packets: 0,
    };
}

/// Where a data segment of a flow opened during the run goes at its receiver.
enum Incoming {
    /// To this receive side.
    Flow(usize),
    /// Nowhere: its flow completed here, with this many segments.
    Completed(u32),
    /// Nowhere: it is of an earlier flow of its sender's slot.
    Stale,
}

/// The state of flows opened during the run: slot reuse on both sides.
#[derive(Default)]
pub struct Opened {
    /// Send-side slots free for reuse.
    free_out: Vec<u32>,
    /// Per sending host, per its slot: its latest flow's receive side here.
    in_by_sender: Vec<Vec<Peer>>,
    /// Receive-side slots free for reuse.
    free_in: Vec<u32>,
    /// What the senders of completed flows counted, kept when their slots were reused.
    retired: SenderCounters,
    /// What the same senders counted as NDP senders.
    retired_ndp: NdpCounters,
    /// Flows its source opened, in order.
    pub flows: Vec<OpenedFlow>,
    /// Finite flows that completed here (as senders).
    pub completed: u64,
    /// Packets of an earlier flow of a reused slot that arrived here and were ignored.
    pub stale_packets: u64,
    /// The source of flows, if the host has one.
    source: Option<FlowSource>,
}

/// What a host counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostCounters {
    /// Packets it created: data segments and ACKs (an ACK waits at the NIC once created).
    pub packets_created: u64,
    /// ACKs among them.
    pub acks_sent: u64,
    /// Packets that reached it.
    pub packets_received: u64,
    /// Data segments that reached it (retransmitted duplicates included).
    pub segments_received: u64,
    /// Of them, segments carrying CE.
    pub segments_marked: u64,
    /// DCTCP window cuts of its senders in the measurement window.
    pub ecn_cuts_measured: u64,
    /// Round-trip samples of its senders in the measurement window.
    pub rtt_samples_measured: u64,
    /// Their sum.
    pub rtt_sum_ps_measured: u64,
    /// NDP: trimmed headers that reached it.
    pub headers_received: u64,
    /// NDP: NACKs among the ACKs it sent.
    pub nacks_sent: u64,
    /// NDP: PULLs it sent.
    pub pulls_sent: u64,
    /// DCQCN: CNPs it sent (among `acks_sent`).
    pub cnps_sent: u64,
}

impl HostCounters {
    /// Adds what a sender counted between `before` and `after` to the measured counts.
    fn add_measured(&mut self, before: &SenderCounters, after: &SenderCounters) {
        self.ecn_cuts_measured += after.ecn_cuts - before.ecn_cuts;
        self.rtt_samples_measured += after.rtt_samples - before.rtt_samples;
        self.rtt_sum_ps_measured += after.rtt_sum_ps - before.rtt_sum_ps;
    }
}

/// Every flow's goodput through a run, one row per flow per `run.sample_ns` interval: the
/// bytes its receiver delivered in order in the interval (an MPTCP connection's once). Every
/// design with transport hosts keeps one (the Ethernet baseline, Stardust's host ports).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSeries {
    /// End of the interval, nanoseconds.
    pub time_ns: Vec<f64>,
    /// The flow's row in the run's `flows` table.
    pub flow: Vec<u32>,
    /// Its goodput over the interval.
    pub goodput_gbps: Vec<f64>,
    /// Each flow's bytes at the last sample.
    #[serde(skip)]
    bytes_seen: Vec<u64>,
}

impl FlowSeries {
    /// True without a row.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Adds a row per flow for the interval of `every_ns` ending at `at_ps`, from each flow's
    /// bytes delivered in order so far (`bytes`, in flow order).
    pub fn record(&mut self, at_ps: TimePs, every_ns: f64, bytes: impl Iterator<Item = u64>) {
        for (k, bytes) in bytes.enumerate() {
            if k == self.bytes_seen.len() {
                self.bytes_seen.push(0);
            }
            let delta = bytes - std::mem::replace(&mut self.bytes_seen[k], bytes);
            self.time_ns.push(at_ps as f64 / 1e3);
            self.flow.push(k as u32);
            self.goodput_gbps.push(delta as f64 * 8.0 / every_ns);
        }
    }
}

/// What the senders of a set of hosts counted, summed: the transport columns every design
/// with transport hosts reports (the Ethernet baseline, Stardust's host ports).
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderTotals {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmissions.
    pub retransmissions: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// DCTCP's window cuts.
    pub ecn_cuts: u64,
    /// Mean round-trip sample in the measurement window, in µs.
    pub rtt_mean_us: Option<f64>,
}

impl SenderTotals {
    /// The sums over every send side of `hosts`.
    pub fn of(hosts: &[&Host]) -> Self {
        let mut totals = SenderTotals::default();
        for c in hosts.iter().flat_map(|h| {
            let retired = h.opened.as_ref().map(|o| &o.retired);
            h.out.iter().map(|f| f.sender.counters()).chain(retired)
        }) {
            totals.segments_sent += c.segments_sent;
            totals.retransmissions += c.retransmissions;
            totals.fast_retransmits += c.fast_retransmits;
            totals.timeouts += c.timeouts;
            totals.ecn_cuts += c.ecn_cuts;
        }
        let rtt_sum_ps: u64 = hosts.iter().map(|h| h.counters.rtt_sum_ps_measured).sum();
        let samples: u64 = hosts.iter().map(|h| h.counters.rtt_samples_measured).sum();
        totals.rtt_mean_us = (samples > 0).then(|| rtt_sum_ps as f64 / 1e6 / samples as f64);
        totals
    }
}

/// A host.
pub struct Host {
    index: u16,
    link: Link,
    params: HostParams,
    /// ACKs waiting for the NIC.
    acks: CellQueue,
    /// Send sides, by the index receivers' ACKs carry.
    pub out: Vec<OutFlow>,
    /// Receive sides, by the index senders' segments carry.
    pub inflows: Vec<InFlow>,
    /// Round-robin position among the send sides.
    next_out: usize,
    /// When the NIC's pending wake-up fires, or `NEVER_PS`.
    wake_at_ps: TimePs,
    /// NDP: the pull pacer of its incoming flows (indexed as `inflows`); boxed once per host
    /// to keep the node small for the window transports.
    pacer: Option<Box<PullPacer>>,
    /// When the pacer's pending wake-up fires, or `NEVER_PS`.
    pacer_wake_ps: TimePs,
    /// PFC: the switch's pauses of its data, per class (PAUSE frames count among
    /// `packets_received`).
    pub pause: ClassPauses,
    /// BFC: the switch's pauses of its NIC queues (one queue, never paused, without BFC).
    pub queue_pause: ClassPauses,
    /// What it counted.
    pub counters: HostCounters,
    /// Flows opened during the run (`None`: every flow was made at build).
    pub opened: Option<Box<Opened>>,
    /// Breaks return-to-sender on purpose: returned headers are consumed unread.
    #[cfg(test)]
    pub ignores_returned_headers: bool,
    /// Turns NDP's path penalties off: its senders label paths but count no feedback.
    #[cfg(test)]
    pub ignores_path_feedback: bool,
}

impl Host {
    /// Host `index` on `link` (its side of its cable).
    pub fn new(index: u16, link: Link, params: HostParams) -> Self {
        Host {
            index,
            link,
            params,
            acks: CellQueue::default(),
            out: Vec::new(),
            inflows: Vec::new(),
            next_out: 0,
            wake_at_ps: NEVER_PS,
            pacer: params
                .ndp_pull_interval_ps
                .map(|interval_ps| Box::new(PullPacer::new(interval_ps))),
            pacer_wake_ps: NEVER_PS,
            pause: ClassPauses::new(params.pfc_classes as usize),
            queue_pause: ClassPauses::new(params.bfc_queues.unwrap_or(1) as usize),
            counters: HostCounters::default(),
            opened: None,
            #[cfg(test)]
            ignores_returned_headers: false,
            #[cfg(test)]
            ignores_path_feedback: false,
        }
    }

    /// Lets flows be opened during the run on this host (every host of a run that opens any,
    /// as any may receive them), with `source` opening this host's own, if any.
    pub fn open_flows(&mut self, source: Option<FlowSource>) {
        self.opened = Some(Box::new(Opened {
            source,
            ..Opened::default()
        }));
    }

    /// Opens a flow to `dst` of `size_bytes` (`None`: unending) at `now_ps`, in a free
    /// send-side slot if there is one; `timed` flows are listed in [`Opened::flows`]. The host
    /// sends it once kicked (the caller's event ends in a kick, or [`Host::start`] follows).
    pub fn open(&mut self, now_ps: TimePs, dst: u16, size_bytes: Option<u64>, timed: bool) -> u32 {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let mss = self.params.sender.mss_bytes;
        let packets = size_bytes.map_or(u32::MAX, |b| b.div_ceil(mss) as u32);
        let number = if timed {
            opened.flows.push(OpenedFlow {
                dst,
                size_bytes: size_bytes.unwrap_or(0),
                start_ps: now_ps,
                done_ps: None,
            });
            opened.flows.len() as u32 - 1
        } else {
            NONE
        };
        let slot = match opened.free_out.pop() {
            Some(slot) => {
                let flow = &mut self.out[slot as usize];
                flow.sender.restart(&self.params.sender, packets);
                (flow.dst, flow.size_bytes) = (dst, size_bytes);
                (flow.timed, flow.acked_made_ps) = (number, 0);
                flow.timer_ps = NEVER_PS;
                slot
            }
            None => {
                let slot = self.add_out(dst, 0, size_bytes);
                assert!(slot < SLOT_MASK, "2^20 flows open at one host");
                self.out[slot as usize].timed = number;
                slot
            }
        };
        let flow = &mut self.out[slot as usize];
        flow.remote = flow.key;
        flow.path = path_label(flow.key);
        slot
    }

    /// The receive side here of the flow that `cell` (a data segment of a flow opened during
    /// the run) belongs to: found, or made in a free receive slot for a new flow of its
    /// sender's slot; [`Incoming::Completed`] for a late copy of a flow that completed here;
    /// [`Incoming::Stale`] for a packet of an earlier flow of its sender's slot.
    fn opened_inflow(&mut self, cell: &Cell) -> Incoming {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let (src, slot) = (cell.src as usize, (cell.packet & SLOT_MASK) as usize);
        if opened.in_by_sender.len() <= src {
            opened.in_by_sender.resize_with(src + 1, Vec::new);
        }
        let row = &mut opened.in_by_sender[src];
        if row.len() <= slot {
            row.resize(slot + 1, Peer::NEW);
        }
        let peer = &mut row[slot];
        if peer.key == cell.packet {
            return match peer.inflow {
                NONE => Incoming::Completed(peer.packets),
                i => Incoming::Flow(i as usize),
            };
        }
        if peer.key != NONE {
            let ahead =
                ((cell.packet >> SLOT_BITS).wrapping_sub(peer.key >> SLOT_BITS)) % GENERATIONS;
            if ahead >= GENERATIONS / 2 {
                opened.stale_packets += 1;
                return Incoming::Stale;
            }
        }
        // A new flow of the sender's slot: in the receive side its earlier flow left (if that
        // one never completed here), else in a free one, else a new one.
        peer.key = cell.packet;
        let reused = match peer.inflow {
            NONE => opened.free_in.pop(),
            i => Some(i),
        };
        let i = match reused {
            Some(i) => {
                let flow = &mut self.inflows[i as usize];
                flow.receiver.reset();
                (flow.src, flow.remote) = (cell.src, cell.packet);
                (flow.size_bytes, flow.bytes, flow.done_ps) = (None, 0, None);
                if let Some(pacer) = &mut self.pacer {
                    pacer.reset_flow(i);
                }
                i
            }
            None => self.add_in(cell.src, cell.packet, None),
        };
        self.inflows[i as usize].path = path_label(cell.packet);
        let opened = self.opened.as_mut().expect("a host that opens flows");
        opened.in_by_sender[src][slot].inflow = i;
        Incoming::Flow(i as usize)
    }

    /// Receive side `i` (a flow opened during the run) has every byte: its slot is freed for
    /// the next incoming flow; its sender's slot remembers the flow's segments, to acknowledge
    /// late copies.
    fn release_inflow(&mut self, i: usize) {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let flow = &self.inflows[i];
        let peer = &mut opened.in_by_sender[flow.src as usize][(flow.remote & SLOT_MASK) as usize];
        (peer.inflow, peer.packets) = (NONE, flow.receiver.rcv_nxt());
        opened.free_in.push(i as u32);
    }

    /// A late copy of a segment of a flow that completed here (its last ACK may have been
    /// lost): acknowledge everything (an NDP flow: that segment).
    fn ack_completed<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, packets: u32) {
        let ack = if self.pacer.is_some() {
            cell.seq
        } else {
            packets
        };
        let (src, key) = (cell.src, cell.packet);
        self.reply_to(ctx, (src, key, path_label(key)), ACK, ack, cell.inject_ps);
    }

    /// Send side `i` (a flow opened during the run) has every byte acknowledged: its slot is
    /// freed for the next flow, its generation bumped so its late packets are told apart, its
    /// counts kept; a closed-loop source opens the next flow.
    fn complete<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let flow = &mut self.out[i];
        if flow.timed != NONE {
            opened.flows[flow.timed as usize].done_ps = Some(flow.acked_made_ps);
        }
        opened.completed += 1;
        opened.retired.add(flow.sender.counters());
        if let FlowSender::Ndp(s) = &flow.sender {
            opened.retired_ndp = opened.retired_ndp + s.ndp;
        }
        flow.sender.restart(&self.params.sender, 0);
        let generation = ((flow.key >> SLOT_BITS) + 1) % GENERATIONS;
        flow.key = i as u32 | (generation << SLOT_BITS);
        (flow.timed, flow.size_bytes) = (NONE, Some(0));
        opened.free_out.push(i as u32);
        if opened
            .source
            .as_ref()
            .is_some_and(|s| s.mean_gap_ps.is_none())
        {
            self.arrive(ctx.now_ps);
        }
    }

    /// The host's source opens its next flow at `now_ps` (a Poisson arrival, or a closed
    /// loop's replacement).
    fn arrive(&mut self, now_ps: TimePs) -> Option<TimePs> {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let source = opened.source.as_mut().expect("a host with a flow source");
        let size = source.sizes.draw(&mut source.rng);
        let dst = match source.destination {
            Destination::Host(dst) => dst,
            Destination::Uniform { hosts } => {
                let d = source.rng.gen_range(0..hosts - 1);
                d + (d >= self.index) as u16
            }
        };
        let next_ps = source
            .mean_gap_ps
            .map(|mean_ps| now_ps + exponential_ps(mean_ps, &mut source.rng));
        self.open(now_ps, dst, Some(size), true);
        next_ps
    }

    /// What its NDP senders counted, those whose slots were reused included.
    pub fn ndp_counters(&self) -> NdpCounters {
        let retired = self
            .opened
            .as_ref()
            .map_or_else(NdpCounters::default, |o| o.retired_ndp);
        self.out
            .iter()
            .filter_map(|f| match &f.sender {
                FlowSender::Ndp(s) => Some(s.ndp),
                FlowSender::Window(_) | FlowSender::Dcqcn(_) => None,
            })
            .fold(retired, |sum, c| sum + c)
    }

    /// Adds a flow to `dst` of `size_bytes` (`None`: unending), known there as `remote`;
    /// returns its index here.
    pub fn add_out(&mut self, dst: u16, remote: u32, size_bytes: Option<u64>) -> u32 {
        let mss = self.params.sender.mss_bytes;
        let packets = size_bytes.map_or(u32::MAX, |b| b.div_ceil(mss) as u32);
        self.out.push(OutFlow {
            dst,
            remote,
            size_bytes,
            sender: match (self.params.ndp_pull_interval_ps, self.params.dcqcn) {
                (Some(_), _) => {
                    let sender = NdpSender::new(&self.params.sender, packets);
                    FlowSender::Ndp(match self.params.ndp_paths {
                        None => sender,
                        Some(spec) => sender.with_paths(NdpPaths::new(
                            spec.paths,
                            mix(spec.salt ^ ((self.index as u64) << 32) ^ self.out.len() as u64),
                        )),
                    })
                }
                (None, Some(dcqcn)) => {
                    FlowSender::Dcqcn(DcqcnSender::new(dcqcn, mss, packets, self.link.rate_bps))
                }
                (None, None) => FlowSender::Window(Sender::new(&self.params.sender, packets)),
            },
            timer_ps: NEVER_PS,
            path: 0,
            class: 0,
            queue: self.nic_queue(self.out.len()),
            conn: NO_CONN,
            data: SharedData::new(0),
            key: self.out.len() as u32,
            timed: NONE,
            acked_made_ps: 0,
        });
        self.out.len() as u32 - 1
    }

    /// BFC: the NIC queue of send side `i` (0 without BFC).
    fn nic_queue(&self, i: usize) -> u16 {
        (i % self.params.bfc_queues.unwrap_or(1) as usize) as u16
    }

    /// True while the switch pauses `flow`'s class or (BFC) its NIC queue.
    fn is_paused(&self, flow: &OutFlow) -> bool {
        self.pause.is_paused(flow.class as u16) || self.queue_pause.is_paused(flow.queue)
    }

    /// Puts send side `flow` (an MPTCP connection's first subflow: all its subflows) on
    /// traffic class `class` (below `HostParams::pfc_classes`).
    pub fn set_class(&mut self, flow: u32, class: u8) {
        debug_assert!(class < self.params.pfc_classes, "a class the fabric keeps");
        let conn = self.out[flow as usize].conn;
        for (i, f) in self.out.iter_mut().enumerate().skip(flow as usize) {
            if i != flow as usize && (conn == NO_CONN || f.conn != conn) {
                break;
            }
            f.class = class;
        }
    }

    /// Adds an MPTCP connection of `subflows` subflows to `dst` of `size_bytes` (`None`:
    /// unending), its receive sides there from `remote` on; returns its first subflow's index
    /// here (the others follow).
    pub fn add_out_connection(
        &mut self,
        dst: u16,
        remote: u32,
        subflows: u32,
        size_bytes: Option<u64>,
    ) -> u32 {
        let mss = self.params.sender.mss_bytes;
        let packets = size_bytes.map_or(u32::MAX, |b| b.div_ceil(mss) as u32);
        let first = self.out.len() as u32;
        // A finite connection's subflows are given its segments one at a time as they send.
        let given = if size_bytes.is_some() { 0 } else { u32::MAX };
        for path in 0..subflows {
            self.out.push(OutFlow {
                dst,
                remote: remote + path,
                size_bytes: None,
                sender: FlowSender::Window(Sender::new(&self.params.sender, given)),
                timer_ps: NEVER_PS,
                path: path as u16,
                class: 0,
                queue: self.nic_queue((first + path) as usize),
                conn: first,
                data: SharedData::new(if path == 0 { packets } else { 0 }),
                key: first + path,
                timed: NONE,
                acked_made_ps: 0,
            });
        }
        first
    }

    /// Adds the receive side of a flow from `src`, known there as `remote`; returns its index.
    pub fn add_in(&mut self, src: u16, remote: u32, size_bytes: Option<u64>) -> u32 {
        if let Some(pacer) = &mut self.pacer {
            pacer.add_flow();
        }
        self.inflows.push(InFlow {
            src,
            remote,
            size_bytes,
            receiver: Receiver::default(),
            bytes: 0,
            bytes_measured: 0,
            done_ps: None,
            echo_ps: 0,
            timer_ps: NEVER_PS,
            path: 0,
            record: self.inflows.len() as u32,
            full_segments: false,
            cnp_ps: 0,
        });
        self.inflows.len() as u32 - 1
    }

    /// Adds the receive side of an MPTCP connection of `subflows` subflows from `src`, its
    /// send sides there from `remote` on; returns its first subflow's index here, which
    /// counts the connection's bytes.
    pub fn add_in_connection(
        &mut self,
        src: u16,
        remote: u32,
        subflows: u32,
        size_bytes: Option<u64>,
    ) -> u32 {
        let first = self.inflows.len() as u32;
        for path in 0..subflows {
            self.add_in(src, remote + path, size_bytes.filter(|_| path == 0));
            let flow = self.inflows.last_mut().expect("just added");
            (flow.path, flow.record, flow.full_segments) = (path as u16, first, true);
        }
        first
    }

    /// In-order bytes its receive sides delivered in the measurement window, over all flows.
    pub fn bytes_received_measured(&self) -> u64 {
        self.inflows.iter().map(|f| f.bytes_measured).sum()
    }

    /// What receive side `at_dst` measured over a window of `window_s`: its goodput in Gbit/s
    /// and, for a finite flow that completed, its completion time in µs.
    pub fn received(&self, at_dst: u32, window_s: f64) -> (f64, Option<f64>) {
        let flow = &self.inflows[at_dst as usize];
        let gbps = flow.bytes_measured as f64 * 8.0 / window_s / 1e9;
        (gbps, flow.done_ps.map(|ps| ps as f64 / 1e6))
    }

    /// Starts sending: a Poisson source books its first arrival, a closed loop opens its
    /// flows.
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        if let Some(source) = self.opened.as_mut().and_then(|o| o.source.as_mut()) {
            match source.mean_gap_ps {
                Some(mean_ps) => {
                    let first_ps = exponential_ps(mean_ps, &mut source.rng);
                    ctx.set_timer(ctx.now_ps + first_ps, ARRIVAL);
                }
                None => {
                    for _ in 0..source.in_flight {
                        self.arrive(ctx.now_ps);
                    }
                }
            }
        }
        self.kick(ctx);
    }

    /// Bytes of segment `seq` of a flow of `size_bytes`.
    fn segment_bytes(&self, size_bytes: Option<u64>, seq: u32) -> u64 {
        let mss = self.params.sender.mss_bytes;
        match size_bytes {
            None => mss,
            Some(size) => (size - seq as u64 * mss).min(mss),
        }
    }

    /// Routes `cell` out of the NIC and puts it on the link (which is free).
    fn transmit<R: Router>(&mut self, ctx: &mut Context<'_, R>, id: CellId) {
        let size_bytes = ctx.cells[id].payload_bytes as u64;
        let last_bit_ps = self.link.transmit(ctx.now_ps, size_bytes);
        let cuts_through = self.params.into_cut_through;
        let arrive_ps = reached_ps(&self.link, last_bit_ps, size_bytes, cuts_through);
        ctx.send_cell(0, id, arrive_ps);
    }

    /// A fresh packet from this host, routed.
    fn packet<R: Router>(&mut self, ctx: &mut Context<'_, R>, mut cell: Cell) -> CellId {
        self.counters.packets_created += 1;
        let (cells, mut routes) = ctx.routes();
        routes.write(0, &mut cell);
        cells.alloc(cell)
    }

    /// Prefetches the flow state `cell` will update here: its sender's for an ACK, NACK or
    /// PULL, its receiver's for data of a flow that lives for the run (see [`Node::warm`]).
    #[inline]
    pub fn warm(&self, cell: &Cell) {
        if cell.flags & PAUSE != 0 {
            return;
        }
        if cell.flags & CONTROL != 0 {
            if let Some(flow) = self.out.get((cell.packet & SLOT_MASK) as usize) {
                prefetch(flow);
            }
        } else if self.opened.is_none() {
            if let Some(flow) = self.inflows.get(cell.packet as usize) {
                prefetch(flow);
            }
        }
    }

    /// Sends while the NIC is free and something may go; sets the NIC's wake-up for when
    /// something may go next otherwise.
    fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let now_ps = ctx.now_ps;
        if self.wake_at_ps <= now_ps {
            self.wake_at_ps = NEVER_PS;
        }
        if self.link.is_idle(now_ps) {
            if let Some(ack) = ctx.cells.pop_front(&mut self.acks) {
                self.transmit(ctx, ack);
            } else if let Some(i) = self.next_sender(now_ps) {
                self.send_segment(ctx, i);
            }
        }
        if let Some(at_ps) = self.next_work_ps(now_ps) {
            let at_ps = at_ps.max(self.link.busy_until_ps());
            if at_ps < self.wake_at_ps && at_ps > now_ps {
                self.wake_at_ps = at_ps;
                ctx.set_timer(at_ps, NIC);
            }
        }
    }

    /// Sends send side `i`'s next segment (the NIC is free and the side may send).
    fn send_segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) {
        let now_ps = ctx.now_ps;
        if self.out[i].conn != NO_CONN && !self.out[i].sender.can_send() {
            // An MPTCP subflow with an open window takes the connection's next segment.
            let conn = self.out[i].conn as usize;
            let taken = self.out[conn].data.take();
            debug_assert!(taken, "may_send checked the connection's data");
            self.out[i]
                .sender
                .window_mut()
                .expect("an MPTCP subflow has a window")
                .give_segment();
        }
        let flow = &mut self.out[i];
        let seq = flow
            .sender
            .next_segment(now_ps)
            .expect("a sender that can send");
        let (dst, remote, size_bytes) = (flow.dst, flow.remote, flow.size_bytes);
        let (mut path, class, queue) = (flow.path, flow.class, flow.queue);
        if self.params.ndp_paths.is_some() {
            if let FlowSender::Ndp(s) = &mut flow.sender {
                path = s.choose_path().unwrap_or(path);
            }
        }
        let bytes = self.segment_bytes(size_bytes, seq);
        let mut cell = Cell::new(self.index, dst, bytes as u16, true, now_ps, now_ps);
        cell.seq = seq;
        if self.opened.is_some()
            && size_bytes
                .is_some_and(|b| b.div_ceil(self.params.sender.mss_bytes) == seq as u64 + 1)
        {
            cell.seq |= LAST_SEGMENT;
        }
        cell.packet = remote;
        cell.next_vc = path;
        cell.flags = if self.params.ecn_capable { ECT } else { 0 };
        let id = self.packet(ctx, cell);
        // The class rides as the frame's priority (routing left its channel 0); with BFC, the
        // NIC queue it left, which the switch's pauses name.
        ctx.cells[id].vc = match self.params.bfc_queues {
            None => class as u16,
            Some(_) => queue,
        };
        self.transmit(ctx, id);
        self.arm_rto(ctx, i);
    }

    /// The earliest something may go, given the link were free: now if an ACK or a segment
    /// waits; a DCQCN flow's paced start; `None` if nothing will without an arrival or a
    /// timer. A flow's data waits while the switch pauses its class.
    fn next_work_ps(&self, now_ps: TimePs) -> Option<TimePs> {
        if !self.acks.is_empty() {
            return Some(now_ps);
        }
        let unpaused = |f: &&OutFlow| !self.is_paused(f);
        if self.params.dcqcn.is_some() {
            return self
                .out
                .iter()
                .filter(unpaused)
                .filter_map(|f| f.sender.paced_ps())
                .min()
                .map(|at_ps| at_ps.max(now_ps));
        }
        self.out
            .iter()
            .filter(unpaused)
            .any(|f| self.may_send(f, now_ps))
            .then_some(now_ps)
    }

    /// True if send side `flow` may send at `now_ps`: a TCP flow its sender allows, an MPTCP
    /// subflow that may also take its connection's next segment, a DCQCN flow its pacing.
    fn may_send(&self, flow: &OutFlow, now_ps: TimePs) -> bool {
        flow.sender.ready(now_ps)
            || (flow.conn != NO_CONN
                && flow.sender.window().is_some_and(Sender::wants_data)
                && self.out[flow.conn as usize].data.has_data())
    }

    /// LIA's alpha and total window now of the MPTCP connection whose first subflow is
    /// `conn`.
    fn coupling(&self, conn: u32) -> Lia {
        let subflows = self.out[conn as usize..]
            .iter()
            .take_while(|f| f.conn == conn);
        let windows = subflows.filter_map(|f| f.sender.window());
        Lia::of(windows.map(|s| (s.reno.cwnd_bytes, s.rto.srtt_ps())))
    }

    /// The next send side, round robin, that may send at `now_ps` (none of a paused class).
    fn next_sender(&mut self, now_ps: TimePs) -> Option<usize> {
        let n = self.out.len();
        let found = (0..n).map(|k| (self.next_out + k) % n).find(|&i| {
            let f = &self.out[i];
            !self.is_paused(f) && self.may_send(f, now_ps)
        })?;
        self.next_out = (found + 1) % n;
        Some(found)
    }

    /// Books flow `i`'s retransmission timer event if its deadline is earlier than the one
    /// pending.
    fn arm_rto<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) {
        let flow = &mut self.out[i];
        let deadline_ps = flow.sender.rto_deadline_ps();
        if deadline_ps != TIMER_OFF && deadline_ps < flow.timer_ps {
            flow.timer_ps = deadline_ps;
            ctx.set_timer(deadline_ps, RTO | i as u32);
        }
    }

    /// Queues an ACK for flow `i` of `ack`, echoing `ece` and `echo_ps`.
    fn ack<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        i: usize,
        ack: u32,
        ece: bool,
        echo_ps: TimePs,
    ) {
        self.reply(ctx, i, ACK | if ece { ECE } else { 0 }, ack, echo_ps);
    }

    /// Queues a control packet (`flags`: an ACK, NACK or PULL) for flow `i` carrying `seq`
    /// and echoing `echo_ps`.
    fn reply<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        i: usize,
        flags: u8,
        seq: u32,
        echo_ps: TimePs,
    ) {
        let flow = &self.inflows[i];
        let to = (flow.src, flow.remote, flow.path);
        self.reply_to(ctx, to, flags, seq, echo_ps);
    }

    /// Queues a control packet to `(host, its flow's key, path label)`.
    fn reply_to<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        (src, remote, path): (u16, u32, u16),
        flags: u8,
        seq: u32,
        echo_ps: TimePs,
    ) {
        let bytes = self.params.ack_bytes;
        let mut cell = Cell::new(self.index, src, bytes, true, ctx.now_ps, echo_ps);
        cell.seq = seq;
        cell.packet = remote;
        cell.next_vc = path;
        cell.flags = flags;
        let id = self.packet(ctx, cell);
        ctx.cells.push_back(&mut self.acks, id);
        if flags & PULL != 0 {
            self.counters.pulls_sent += 1;
        } else {
            self.counters.cnps_sent += (flags == CNP && self.params.dcqcn.is_some()) as u64;
            self.counters.acks_sent += 1;
            self.counters.nacks_sent += (flags & NACK != 0) as u64;
        }
    }

    /// Counts the segments `arrival` delivered in order to flow `i` at `now_ps`.
    /// An MPTCP subflow's segments are counted on its connection's first receive side.
    fn deliver(&mut self, now_ps: TimePs, i: usize, arrival: &Arrival) {
        let measured = now_ps >= self.params.measure_from_ps;
        let flow = &self.inflows[i];
        let record = flow.record as usize;
        let size_bytes = flow.size_bytes.filter(|_| !flow.full_segments);
        let delivered: u64 = (arrival.delivered_from..arrival.ack)
            .map(|seq| self.segment_bytes(size_bytes, seq))
            .sum();
        let counter = &mut self.inflows[record];
        // An MPTCP connection's segments are all full size: the last to arrive may carry
        // past its end (a TCP flow's never does).
        let counted = counter
            .size_bytes
            .map_or(delivered, |size| delivered.min(size - counter.bytes));
        counter.bytes += counted;
        if measured {
            counter.bytes_measured += counted;
        }
        if counter.size_bytes == Some(counter.bytes) && counted > 0 {
            counter.done_ps = Some(now_ps);
        }
    }

    /// An NDP data packet or trimmed header reached the host: ACK or NACK it at once and owe
    /// the sender a pull (none once the flow has everything).
    fn ndp_segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, i: usize) {
        self.counters.segments_received += 1;
        let kind = if cell.flags & TRIMMED != 0 {
            self.counters.headers_received += 1;
            NACK
        } else {
            let arrival = self.inflows[i].receiver.on_segment(cell.seq, false, false);
            self.deliver(ctx.now_ps, i, &arrival);
            ACK
        };
        // The ACK or NACK carries the packet's path label, which the sender scores (§3.3).
        let to = (self.inflows[i].src, self.inflows[i].remote, cell.next_vc);
        self.reply_to(ctx, to, kind, cell.seq, cell.inject_ps);
        let done = self.inflows[i].done_ps.is_some();
        let pacer = self.pacer.as_mut().expect("an NDP host has a pacer");
        if done {
            pacer.release(i as u32);
        } else {
            pacer.request(i as u32);
        }
        self.pace(ctx);
    }

    /// A header a switch returned (NDP §3.1, its source and destination swapped) reached its
    /// sender: the send side that sent it learns the packet was lost. A copy of a flow no
    /// longer here (its slot reused) is counted stale.
    fn returned<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell) {
        #[cfg(test)]
        if self.ignores_returned_headers {
            return;
        }
        let Some(i) = self
            .out
            .iter()
            .position(|f| f.dst == cell.src && f.remote == cell.packet)
        else {
            self.opened.as_mut().expect("reused slots").stale_packets += 1;
            return;
        };
        if let FlowSender::Ndp(s) = &mut self.out[i].sender {
            s.on_returned(cell.seq & !LAST_SEGMENT, cell.next_vc);
        }
        self.arm_rto(ctx, i);
    }

    /// Sends the PULL the pacer releases now, if any, and books its next wake-up.
    fn pace<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let now_ps = ctx.now_ps;
        let Some(pacer) = &mut self.pacer else {
            return;
        };
        let pull = pacer.take(now_ps);
        let due_ps = pacer.next_due_ps();
        if let Some((flow, pull_no)) = pull {
            self.reply(ctx, flow as usize, PULL, pull_no, now_ps);
        }
        if let Some(due_ps) = due_ps {
            if due_ps > now_ps && self.pacer_wake_ps != due_ps {
                self.pacer_wake_ps = due_ps;
                ctx.set_timer(due_ps, PACER);
            }
        }
    }

    /// A DCQCN data segment of receive side `i` reached the host (the notification point,
    /// DCQCN §3.2): count it, and if it carries CE and the flow's CNP interval has passed,
    /// send a CNP now.
    fn dcqcn_segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, i: usize) {
        let ce = cell.flags & CE != 0;
        self.counters.segments_received += 1;
        self.counters.segments_marked += ce as u64;
        let arrival = self.inflows[i].receiver.on_segment(cell.seq, false, false);
        self.deliver(ctx.now_ps, i, &arrival);
        let interval_ps = self.params.dcqcn.expect("a DCQCN host").cnp_interval_ps;
        if ce && ctx.now_ps >= self.inflows[i].cnp_ps {
            self.inflows[i].cnp_ps = ctx.now_ps + interval_ps;
            self.reply(ctx, i, CNP, 0, cell.inject_ps);
        }
    }

    /// A data segment of receive side `i` reached the host.
    fn segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, i: usize) {
        let ce = cell.flags & CE != 0;
        self.counters.segments_received += 1;
        self.counters.segments_marked += ce as u64;
        let delayed = self.params.delayed_ack_ps;
        let arrival = self.inflows[i]
            .receiver
            .on_segment(cell.seq, ce, delayed.is_some());
        if let Some(ack) = arrival.flush_before {
            let echo_ps = self.inflows[i].echo_ps;
            self.ack(ctx, i, ack, !ce, echo_ps);
        }
        self.inflows[i].echo_ps = cell.inject_ps;
        let was_done = self.inflows[i].done_ps.is_some();
        self.deliver(ctx.now_ps, i, &arrival);
        // A flow opened during the run acknowledges its last byte at once (as a FIN would
        // be): its sender then knows when it completed here.
        let completed = self.opened.is_some() && !was_done && self.inflows[i].done_ps.is_some();
        if completed {
            self.inflows[i].receiver.take_pending();
        }
        if arrival.ack_now || completed {
            self.ack(ctx, i, arrival.ack, ce, cell.inject_ps);
        } else if let Some(wait_ps) = delayed {
            let at_ps = ctx.now_ps + wait_ps;
            if self.inflows[i].timer_ps == NEVER_PS {
                self.inflows[i].timer_ps = at_ps;
                ctx.set_timer(at_ps, DELAYED_ACK | i as u32);
            }
        }
    }
}

impl<R: Router> Node<R> for Host {
    fn is_slotted(&self) -> bool {
        false
    }

    fn is_sink(&self) -> bool {
        false
    }

    fn cells_held(&self) -> u64 {
        self.acks.len() as u64
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, _: usize, id: CellId, _: TimePs) {
        let mut cell = ctx.cells[id];
        ctx.consume(id);
        self.counters.packets_received += 1;
        if cell.flags & PAUSE != 0 {
            match read_pause_frame(&cell) {
                (PauseTarget::Class(class), pause) => {
                    self.pause.apply(class as u16, pause, ctx.now_ps)
                }
                (PauseTarget::Queue(queue), pause) => {
                    self.queue_pause.apply(queue, pause, ctx.now_ps)
                }
            }
        } else if cell.flags & CONTROL != 0 {
            let i = (cell.packet & SLOT_MASK) as usize;
            if self.out[i].key != cell.packet {
                // An ACK, NACK or PULL of an earlier flow of a reused slot.
                self.opened.as_mut().expect("reused slots").stale_packets += 1;
                self.kick(ctx);
                return;
            }
            if cell.flags & ACK != 0 {
                let flow = &mut self.out[i];
                flow.acked_made_ps = flow.acked_made_ps.max(cell.inject_ps);
            }
            let now_ps = ctx.now_ps;
            let conn = self.out[i].conn;
            let coupling = (conn != NO_CONN).then(|| self.coupling(conn));
            let sender = &mut self.out[i].sender;
            let before = *sender.counters();
            let mut feedback = None;
            match sender {
                FlowSender::Window(s) => {
                    let ece = cell.flags & ECE != 0;
                    let echo_ps = cell.packet_inject_ps;
                    s.on_ack_coupled(now_ps, cell.seq, ece, echo_ps, coupling.as_ref());
                }
                FlowSender::Ndp(s) if cell.flags & NACK != 0 => {
                    s.on_nack(cell.seq);
                    feedback = Some(PathFeedback::Nack);
                }
                FlowSender::Ndp(s) if cell.flags & PULL != 0 => s.on_pull(cell.seq),
                FlowSender::Ndp(s) => {
                    s.on_ack(now_ps, cell.seq, cell.packet_inject_ps);
                    feedback = Some(PathFeedback::Ack);
                }
                FlowSender::Dcqcn(s) => s.on_cnp(now_ps),
            }
            #[cfg(test)]
            let feedback = feedback.filter(|_| !self.ignores_path_feedback);
            if let (Some(feedback), FlowSender::Ndp(s)) = (feedback, &mut *sender) {
                // The label the ACK or NACK echoes scores the packet's path (§3.3).
                s.path_feedback(cell.next_vc, feedback);
            }
            if now_ps >= self.params.measure_from_ps {
                self.counters.add_measured(&before, sender.counters());
            }
            let flow = &self.out[i];
            if self.opened.is_some() && flow.size_bytes.is_some() && flow.sender.done() {
                self.complete(ctx, i);
            } else {
                self.arm_rto(ctx, i);
            }
        } else if cell.flags & BOUNCED != 0 {
            self.returned(ctx, &cell);
        } else {
            let i = match self.opened.is_some() {
                true => {
                    let last = cell.seq & LAST_SEGMENT != 0;
                    cell.seq &= !LAST_SEGMENT;
                    let i = match self.opened_inflow(&cell) {
                        Incoming::Flow(i) => i,
                        Incoming::Completed(packets) => {
                            self.ack_completed(ctx, &cell, packets);
                            self.kick(ctx);
                            return;
                        }
                        Incoming::Stale => {
                            self.kick(ctx);
                            return;
                        }
                    };
                    if last && cell.flags & TRIMMED == 0 {
                        let mss = self.params.sender.mss_bytes;
                        let size = cell.seq as u64 * mss + cell.payload_bytes as u64;
                        self.inflows[i].size_bytes = Some(size);
                    }
                    i
                }
                false => cell.packet as usize,
            };
            let was_done = self.inflows[i].done_ps.is_some();
            if self.pacer.is_some() {
                self.ndp_segment(ctx, &cell, i);
            } else if self.params.dcqcn.is_some() {
                self.dcqcn_segment(ctx, &cell, i);
            } else {
                self.segment(ctx, &cell, i);
            }
            if self.opened.is_some() && !was_done && self.inflows[i].done_ps.is_some() {
                self.release_inflow(i);
            }
        }
        self.kick(ctx);
    }

    #[inline]
    fn warm(&self, cell: &Cell, _: usize) {
        Host::warm(self, cell)
    }

    fn signal_arrives(&mut self, _: &mut Context<'_, R>, _: usize, _: FlowSignal) {}

    fn tick(&mut self, _: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        let i = (tag & !KIND) as usize;
        let now_ps = ctx.now_ps;
        match tag & KIND {
            RTO => {
                let flow = &mut self.out[i];
                if flow.timer_ps != now_ps {
                    return; // superseded by an earlier one
                }
                flow.timer_ps = NEVER_PS;
                if flow.sender.rto_deadline_ps() <= now_ps {
                    flow.sender.on_timeout(now_ps);
                }
                self.arm_rto(ctx, i);
            }
            DELAYED_ACK => {
                let flow = &mut self.inflows[i];
                flow.timer_ps = NEVER_PS;
                if flow.receiver.take_pending() {
                    let (ack, ece, echo_ps) = (
                        flow.receiver.rcv_nxt(),
                        flow.receiver.last_ce(),
                        flow.echo_ps,
                    );
                    self.ack(ctx, i, ack, ece, echo_ps);
                }
            }
            PACER => {
                self.pacer_wake_ps = NEVER_PS;
                self.pace(ctx);
            }
            NIC if tag == ARRIVAL => {
                if let Some(next_ps) = self.arrive(now_ps) {
                    ctx.set_timer(next_ps, ARRIVAL);
                }
            }
            _ => {}
        }
        self.kick(ctx);
    }
}
