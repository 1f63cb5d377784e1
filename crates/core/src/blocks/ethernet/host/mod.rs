//! A host on an Ethernet fabric, the NIC: it serializes at line rate, ACKs first (they are
//! small and the peer's window waits on them), then the flows' segments round robin, each
//! taken from its transport only when the NIC is free (so the NIC queue never holds more than
//! the ACKs due); flows' state in two arenas (one `Vec` of send sides, one of receive sides,
//! [`flows`]); every timer (NIC, retransmission, delayed ACK, NDP's pull pacer) through the
//! kernel, at most one pending per purpose, stale firings ignored. The transports' receiving
//! ends decide what goes back and when: NDP's ([`NdpReceiver`]: an ACK or NACK at once, PULLs
//! from its pacer; ACKs, NACKs and PULLs share the NIC's control queue, and its ACKs and NACKs
//! carry the path label of the packet they answer), DCQCN's notification point
//! ([`NotificationPoint`]: a CNP for marked data at most once per interval per flow), the TCP
//! family's cumulative (possibly delayed) ACKs. A header a switch returned (NDP §3.1) tells its
//! sender that packet was lost. A DCQCN flow is paced at its rate (a NIC wake-up at the
//! earliest paced start). A PFC PAUSE frame from the switch stops the NIC's data until the
//! resume frame; ACKs and CNPs still go. Flows opened during the run reuse slots
//! ([`slots`]); what a host counts is in [`counts`].

mod counts;
mod flows;
mod params;
mod slots;

use super::pause::{read_pause_frame, ClassPauses, PauseTarget};
use super::{reached_ps, ACK, BOUNCED, CE, CNP, CONTROL, ECE, ECT, NACK, PAUSE, PULL, TRIMMED};
use crate::blocks::cell::{Cell, CellId, CellQueue};
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::link::Link;
use crate::blocks::routing::Router;
use crate::blocks::traffic::NEVER_PS;
use crate::blocks::transport::dcqcn::notification::NotificationPoint;
use crate::blocks::transport::ndp::receiver::{Answer, NdpReceiver};
use crate::blocks::transport::ndp::PathFeedback;
use crate::blocks::transport::receiver::Arrival;
use crate::blocks::transport::tcp::mptcp::Lia;
use crate::blocks::transport::tcp::Sender;
use crate::blocks::transport::{FlowSender, TIMER_OFF};
use crate::blocks::workload::exponential_ps;
use crate::engine::cache::prefetch;
use crate::engine::time::TimePs;
pub use counts::{FlowSeries, HostCounters, SenderTotals};
pub use flows::{InFlow, OutFlow};
pub use params::{HostParams, NdpPathSpec};
use slots::Incoming;
pub use slots::{Destination, FlowSource, Opened, OpenedFlow};

/// Timer kinds, in the top bits of a timer's tag (the flow's index below).
const NIC: u32 = 0;
const RTO: u32 = 1 << 30;
const DELAYED_ACK: u32 = 2 << 30;
const PACER: u32 = 3 << 30;
const KIND: u32 = 3 << 30;
/// A NIC-kind timer tag of its own: the host's [`FlowSource`] opens its next flow.
const ARRIVAL: u32 = NIC | 1;
/// A NIC-kind timer tag of its own: the host opens its scheduled flows that are due.
const SCHEDULED: u32 = NIC | 2;

/// Bits of a flow key that name the send side's slot; the bits above hold its generation.
pub(super) const SLOT_BITS: u32 = 20;
pub(super) const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
/// Generations of a slot, counted modulo this.
pub(super) const GENERATIONS: u32 = 1 << (32 - SLOT_BITS);
/// Bit of a data segment's `seq` (flows opened during the run): its flow's last segment.
pub const LAST_SEGMENT: u32 = 1 << 31;
/// No receive side yet for a (sender, slot).
pub(super) const NONE: u32 = u32::MAX;

/// [`OutFlow::conn`] of a flow that is no MPTCP subflow.
pub(super) const NO_CONN: u32 = u32::MAX;

/// The path label of the flow of key `key` (opened during the run): flows between one pair of
/// hosts hash apart, as TCP connections of different ports do; never 0 (the pair's own hash).
pub(super) fn path_label(key: u32) -> u16 {
    (key % u16::MAX as u32) as u16 + 1
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
    /// NDP: the receiving end of its incoming flows (indexed as `inflows`); boxed once per
    /// host to keep the node small for the window transports.
    ndp: Option<Box<NdpReceiver>>,
    /// DCQCN: the notification point of its incoming flows (indexed as `inflows`).
    notification: Option<Box<NotificationPoint>>,
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
            ndp: params
                .ndp_pull_interval_ps
                .map(|interval_ps| Box::new(NdpReceiver::new(interval_ps))),
            notification: params
                .dcqcn
                .map(|d| Box::new(NotificationPoint::new(d.cnp_interval_ps))),
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

    /// Starts sending: a Poisson source books its first arrival, a closed loop opens its
    /// flows.
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        if let Some(at_ps) = self.opened.as_ref().and_then(|o| o.next_scheduled_ps()) {
            ctx.set_timer(at_ps.max(ctx.now_ps), SCHEDULED);
        }
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
        Lia::of_windows(subflows.filter_map(|f| f.sender.window()))
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
            self.counters.cnps_sent += (flags == CNP && self.notification.is_some()) as u64;
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

    /// An NDP data packet or trimmed header reached the host: its receiving end ACKs or NACKs
    /// it at once and owes the sender a pull (none once the flow has everything).
    fn ndp_segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, i: usize) {
        self.counters.segments_received += 1;
        let trimmed = cell.flags & TRIMMED != 0;
        if trimmed {
            self.counters.headers_received += 1;
        } else {
            let arrival = self.inflows[i].receiver.on_segment(cell.seq, false, false);
            self.deliver(ctx.now_ps, i, &arrival);
        }
        let done = self.inflows[i].done_ps.is_some();
        let ndp = self.ndp.as_mut().expect("an NDP host has a receiving end");
        let kind = match ndp.on_packet(i as u32, trimmed, done) {
            Answer::Ack => ACK,
            Answer::Nack => NACK,
        };
        // The ACK or NACK carries the packet's path label, which the sender scores (§3.3).
        let to = (self.inflows[i].src, self.inflows[i].remote, cell.next_vc);
        self.reply_to(ctx, to, kind, cell.seq, cell.inject_ps);
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

    /// Sends the PULL the NDP pacer releases now, if any, and books its next wake-up.
    fn pace<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let Some(ndp) = &mut self.ndp else {
            return;
        };
        let (pull, wake_ps) = ndp.pace(ctx.now_ps);
        if let Some((flow, pull_no)) = pull {
            let now_ps = ctx.now_ps;
            self.reply(ctx, flow as usize, PULL, pull_no, now_ps);
        }
        if let Some(wake_ps) = wake_ps {
            ctx.set_timer(wake_ps, PACER);
        }
    }

    /// A DCQCN data segment of receive side `i` reached the host: count it, and send a CNP if
    /// the notification point says so (DCQCN §3.2). A flow opened during the run whose last
    /// byte this delivered is acknowledged, cumulatively (the responder's ACK of a message's
    /// last packet, [`dcqcn`](crate::blocks::transport::dcqcn)).
    fn dcqcn_segment<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell, i: usize) {
        let ce = cell.flags & CE != 0;
        self.counters.segments_received += 1;
        self.counters.segments_marked += ce as u64;
        let was_done = self.inflows[i].done_ps.is_some();
        let arrival = self.inflows[i].receiver.on_segment(cell.seq, false, false);
        self.deliver(ctx.now_ps, i, &arrival);
        let notification = self.notification.as_mut().expect("a DCQCN host");
        if notification.on_data(i, ce, ctx.now_ps) {
            self.reply(ctx, i, CNP, 0, cell.inject_ps);
        }
        if self.opened.is_some() && !was_done && self.inflows[i].done_ps.is_some() {
            self.ack(ctx, i, arrival.ack, false, cell.inject_ps);
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
    /// An ACK, NACK or PULL (or a CNP) reached its send side: the transport's sender takes
    /// it; a flow opened during the run that has everything acknowledged completes.
    fn control<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: &Cell) {
        let i = (cell.packet & SLOT_MASK) as usize;
        if self.out[i].key != cell.packet {
            // An ACK, NACK or PULL of an earlier flow of a reused slot.
            self.opened.as_mut().expect("reused slots").stale_packets += 1;
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
            FlowSender::Dcqcn(s) if cell.flags & ECE != 0 => s.on_cnp(now_ps),
            FlowSender::Dcqcn(s) => s.on_ack(cell.seq),
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
    }

    /// A data segment (or an NDP header) reached its receive side, found by its key for a
    /// flow opened during the run; the transport's receiving end answers it.
    fn data<R: Router>(&mut self, ctx: &mut Context<'_, R>, mut cell: Cell) {
        let i = match self.opened.is_some() {
            true => {
                let last = cell.seq & LAST_SEGMENT != 0;
                cell.seq &= !LAST_SEGMENT;
                let i = match self.opened_inflow(&cell) {
                    Incoming::Flow(i) => i,
                    Incoming::Completed(packets) => {
                        self.ack_completed(ctx, &cell, packets);
                        return;
                    }
                    Incoming::Stale => return,
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
        if self.ndp.is_some() {
            self.ndp_segment(ctx, &cell, i);
        } else if self.notification.is_some() {
            self.dcqcn_segment(ctx, &cell, i);
        } else {
            self.segment(ctx, &cell, i);
        }
        if self.opened.is_some() && !was_done && self.inflows[i].done_ps.is_some() {
            self.release_inflow(i);
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
        let cell = ctx.cells[id];
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
                (PauseTarget::Flow(key), pause) => self.pause_flow(key, pause),
            }
        } else if cell.flags & CONTROL != 0 {
            self.control(ctx, &cell);
        } else if cell.flags & BOUNCED != 0 {
            self.returned(ctx, &cell);
        } else {
            self.data(ctx, cell);
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
                if let Some(ndp) = &mut self.ndp {
                    ndp.woken();
                }
                self.pace(ctx);
            }
            NIC if tag == ARRIVAL => {
                if let Some(next_ps) = self.arrive(now_ps) {
                    ctx.set_timer(next_ps, ARRIVAL);
                }
            }
            NIC if tag == SCHEDULED => {
                if let Some(next_ps) = self.open_scheduled(now_ps) {
                    ctx.set_timer(next_ps, SCHEDULED);
                }
            }
            _ => {}
        }
        self.kick(ctx);
    }
}
