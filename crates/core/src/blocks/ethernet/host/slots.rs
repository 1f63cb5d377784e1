//! Flows opened during the run ([`Host::open`], by the host's [`FlowSource`] on a kernel
//! timer, or at the start): every data segment names its sender's flow by a key (the send
//! side's slot and the slot's generation, bumped each time a completed flow's slot is reused),
//! the receiving host finds or makes the receive side for that key (in a receive slot freed
//! when an earlier flow completed there), packets of an earlier generation are ignored, late
//! copies of a completed flow's segments are acknowledged in full, and a finite flow's last
//! segment carries [`LAST_SEGMENT`] so the receiver learns the flow's size and when it
//! completes. Memory then follows the flows in flight, not the flows ever opened (beside 12
//! bytes per sending host's slot seen, and the timed flows' records).

use super::{path_label, Host, GENERATIONS, NONE, SLOT_BITS, SLOT_MASK};
use crate::blocks::cell::Cell;
use crate::blocks::ethernet::ACK;
use crate::blocks::fabric::Context;
use crate::blocks::routing::Router;
use crate::blocks::traffic::NEVER_PS;
use crate::blocks::transport::ndp::NdpCounters;
use crate::blocks::transport::{FlowSender, SenderCounters};
use crate::blocks::workload::{exponential_ps, FlowSizes};
use crate::engine::rng::Rng;
use crate::engine::stats::Tally;
use crate::engine::time::TimePs;
use rand::Rng as _;
use std::collections::VecDeque;
use std::sync::Arc;

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
pub(super) enum Incoming {
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
    pub(super) retired: SenderCounters,
    /// What the same senders counted as NDP senders.
    pub(super) retired_ndp: NdpCounters,
    /// Flows its source opened, in order.
    pub flows: Vec<OpenedFlow>,
    /// Finite flows that completed here (as senders).
    pub completed: u64,
    /// Packets of an earlier flow of a reused slot that arrived here and were ignored.
    pub stale_packets: u64,
    /// The source of flows, if the host has one.
    pub(super) source: Option<FlowSource>,
    /// Flows to open at set times (an incast's), earliest first: when, to whom, bytes.
    scheduled: VecDeque<(TimePs, u16, u64)>,
}

impl Opened {
    /// When the next scheduled flow opens, if any.
    pub(super) fn next_scheduled_ps(&self) -> Option<TimePs> {
        self.scheduled.front().map(|&(at_ps, ..)| at_ps)
    }
}

impl Host {
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
    pub(super) fn opened_inflow(&mut self, cell: &Cell) -> Incoming {
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
                if let Some(ndp) = &mut self.ndp {
                    ndp.reset_flow(i);
                }
                if let Some(notification) = &mut self.notification {
                    notification.reset_flow(i as usize);
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
    pub(super) fn release_inflow(&mut self, i: usize) {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let flow = &self.inflows[i];
        let peer = &mut opened.in_by_sender[flow.src as usize][(flow.remote & SLOT_MASK) as usize];
        (peer.inflow, peer.packets) = (NONE, flow.receiver.rcv_nxt());
        opened.free_in.push(i as u32);
    }

    /// A late copy of a segment of a flow that completed here (its last ACK may have been
    /// lost): acknowledge everything (an NDP flow: that segment).
    pub(super) fn ack_completed<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        cell: &Cell,
        packets: u32,
    ) {
        let ack = if self.ndp.is_some() {
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
    pub(super) fn complete<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        let flow = &mut self.out[i];
        if flow.timed != NONE {
            opened.flows[flow.timed as usize].done_ps = Some(flow.acked_made_ps);
        }
        opened.completed += 1;
        opened.retired.add(flow.sender.counters());
        if let FlowSender::Ndp(s) = &flow.sender {
            opened.retired_ndp.add(&s.ndp);
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

    /// Schedules a timed flow to `dst` of `size_bytes` to open at `at_ps` (no earlier than
    /// the flows scheduled before it: an incast's, drawn in time order).
    pub fn schedule(&mut self, at_ps: TimePs, dst: u16, size_bytes: u64) {
        let opened = self.opened.as_mut().expect("a host that opens flows");
        debug_assert!(opened.next_scheduled_ps().is_none_or(|_| {
            opened
                .scheduled
                .back()
                .is_some_and(|&(last_ps, ..)| last_ps <= at_ps)
        }));
        opened.scheduled.push_back((at_ps, dst, size_bytes));
    }

    /// Opens the scheduled flows due at `now_ps`; when the next one is due, if any.
    pub(super) fn open_scheduled(&mut self, now_ps: TimePs) -> Option<TimePs> {
        loop {
            let opened = self.opened.as_mut().expect("a host that opens flows");
            match opened.scheduled.front() {
                Some(&(at_ps, dst, size_bytes)) if at_ps <= now_ps => {
                    opened.scheduled.pop_front();
                    self.open(now_ps, dst, Some(size_bytes), true);
                }
                next => return next.map(|&(at_ps, ..)| at_ps),
            }
        }
    }

    /// The host's source opens its next flow at `now_ps` (a Poisson arrival, or a closed
    /// loop's replacement).
    pub(super) fn arrive(&mut self, now_ps: TimePs) -> Option<TimePs> {
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
}
