//! NDP (Handley, Raiciu, Agache, Voinescu, Moore, Antichi, Wójcik, "Re-architecting datacenter
//! networks and stacks for low latency and high performance", SIGCOMM 2017), the end hosts of
//! §3.2 with the details of htsim's `ndp.cpp`: the sender starts a flow by sending a full
//! initial window at line rate (sprayed per packet by the switches), then sends one packet
//! for each PULL the receiver returns, a NACKed packet's retransmission before new data. The
//! receiver ACKs every data packet, NACKs every trimmed header, and for each of them queues
//! one PULL in its host's [`PullPacer`](receiver::PullPacer), which releases PULLs across all the host's incoming
//! flows at the rate that makes the pulled packets arrive at its link rate (§3.2 "the
//! receiver ... paces PULLs"; htsim's `NdpPullPacer`). Pull numbers are cumulative per flow,
//! so a lost PULL is made up by the next one (htsim's `pull_packets`). A retransmission
//! timer covers what no NACK reports (a dropped header, §3.2's rare case): packets sent more
//! than an RTO ago without an ACK or NACK are resent without waiting for a pull.
//!
//! A header a full header queue returned (§3.1 return-to-sender) tells the sender the packet
//! was lost: it is queued for resending like a NACKed one, and resent at once when no pull is
//! due to send it (htsim's `processRTS`: the flow expects no pull and has at most this packet
//! of its first window out) or when it came back from a bad path. With path labels
//! ([`NdpPaths`], §3.3 and htsim's `PULL_BASED` strategy) the sender picks each packet's path
//! itself, in a permutation of its paths re-drawn every pass, and scores each path by the
//! ACKs, NACKs and returns it brought: a path that NACKs well above the others is skipped for
//! a while.
//!
//! Sequence numbers count packets; per-packet state lives in fixed rings of
//! [`NDP_WINDOW_PACKETS`] (no allocation per packet).

pub mod keys;
pub mod receiver;

use std::collections::VecDeque;

use super::rto::RtoEstimator;
use super::{SenderCounters, SenderParams, TIMER_OFF};
use crate::blocks::routing::{self, Mode};
use crate::blocks::transport::host_config::{HostConfig, MAX_PATH_LABELS};
use crate::blocks::transport::{Marks, TransportKind};
use crate::engine::rng::mix;
use crate::engine::stats::{only_counts, Tally};
use crate::engine::time::TimePs;
use crate::keys::{invalid, ScenarioError};

/// Packets a sender may have between its oldest unacknowledged one and the next new one (a
/// receive window; far above NDP's initial window of tens).
pub const NDP_WINDOW_PACKETS: u32 = 1024;

/// `sent_ps` of a packet acknowledged.
const ACKED: TimePs = TimePs::MAX;
/// `sent_ps` of a packet waiting to be retransmitted (NACKed or timed out).
const AWAITING: TimePs = TimePs::MAX - 1;

/// What an NDP sender counts beyond [`SenderCounters`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NdpCounters {
    /// NACKs received (each a trimmed packet to resend).
    pub nacks: u64,
    /// Pulls received (counted by pull number, so a lost PULL's pull is counted by the next).
    pub pulls: u64,
    /// Pulls that found nothing to send (the flow had sent everything).
    pub pulls_unused: u64,
    /// Returned headers received (each a lost packet to resend, §3.1).
    pub returns: u64,
    /// Of them, resent at once rather than on a coming pull.
    pub returns_resent_at_once: u64,
    /// Turns of a path skipped because it was penalized (§3.3).
    pub path_skips: u64,
}

impl Tally for NdpCounters {
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.nacks,
            &mut self.pulls,
            &mut self.pulls_unused,
            &mut self.returns,
            &mut self.returns_resent_at_once,
            &mut self.path_skips,
        ]
    }
}

const _: () = assert!(only_counts::<NdpCounters>(6));

/// What a packet's path brought back, for its score (htsim's `count_feedback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathFeedback {
    /// An ACK: the packet arrived whole.
    Ack,
    /// A NACK: it arrived trimmed.
    Nack,
    /// Its header came back from a full header queue (weighs as three NACKs).
    Returned,
}

/// Feedback a returned header's sender looks back on to tell a bad path from an incast
/// (htsim's `is_bad_path` history; our reading of its length).
const HISTORY: usize = 12;
/// Feedback a path must have brought before it may be judged (htsim: 100).
const JUDGED_AFTER: u32 = 100;
/// ACKs a path must have brought before its NACK ratio counts (htsim: 10).
const RATIO_AFTER_ACKS: u32 = 10;

/// One path label's score.
#[derive(Clone, Copy, Debug, Default)]
struct PathScore {
    acks: u32,
    /// NACKs, a returned header counting three.
    nacks: u32,
    /// How many turns the path is skipped after each use: raised each time its feedback finds
    /// it bad, lowered each time not.
    avoid_turns: u16,
    /// Turns it still skips before its next use.
    skips_left: u16,
}

/// An NDP sender's own choice of path per packet (NDP §3.3; htsim's `choose_route` and
/// `count_feedback`): the packet's path label (ECMP hashes it, with the source and
/// destination, to one of the equal-cost paths) is the next of a permutation of the labels,
/// re-drawn after each pass; a label whose NACK ratio is above 30% and 1.25 times the mean
/// over its paths, once it brought 100 feedbacks, is penalized: it skips one more turn after
/// each use, and one fewer each time its feedback finds it fine again.
#[derive(Clone, Debug)]
pub struct NdpPaths {
    /// The labels in this pass's order.
    order: Box<[u16]>,
    /// Position in `order` of the next label.
    next: usize,
    /// Per label: its score.
    scores: Box<[PathScore]>,
    acks_total: u64,
    nacks_total: u64,
    /// The latest feedbacks, oldest overwritten first.
    history: [Option<PathFeedback>; HISTORY],
    history_next: usize,
    /// Seeds each pass's permutation, with the pass's number.
    salt: u64,
    passes: u64,
}

impl NdpPaths {
    /// Labels `0..paths`, permuted from `salt` (deterministic per run and flow).
    pub fn new(paths: u16, salt: u64) -> Self {
        let mut p = NdpPaths {
            order: (0..paths).collect(),
            next: 0,
            scores: vec![PathScore::default(); paths as usize].into_boxed_slice(),
            acks_total: 0,
            nacks_total: 0,
            history: [None; HISTORY],
            history_next: 0,
            salt,
            passes: 0,
        };
        p.permute();
        p
    }

    /// Forgets every score (a new flow in a reused slot).
    fn reset(&mut self) {
        self.scores.fill(PathScore::default());
        (self.acks_total, self.nacks_total) = (0, 0);
        self.history = [None; HISTORY];
        (self.history_next, self.passes) = (0, 0);
        self.permute();
    }

    /// Draws the next pass's order (Fisher-Yates from a splitmix sequence).
    fn permute(&mut self) {
        let mut state = mix(self.salt ^ self.passes);
        for i in (1..self.order.len()).rev() {
            state = mix(state);
            let j = (state % (i as u64 + 1)) as usize;
            self.order.swap(i, j);
        }
        self.passes += 1;
        self.next = 0;
    }

    /// The next label to send on, skipping penalized ones for their turns (at most one pass
    /// of skips: if every label skips, the last one turned to is used); counts skips in
    /// `skips`.
    fn choose(&mut self, skips: &mut u64) -> u16 {
        let mut label = 0;
        for _ in 0..self.order.len() {
            if self.next == self.order.len() {
                self.permute();
            }
            label = self.order[self.next];
            self.next += 1;
            let score = &mut self.scores[label as usize];
            if score.skips_left == 0 {
                break;
            }
            score.skips_left -= 1;
            *skips += 1;
        }
        let score = &mut self.scores[label as usize];
        score.skips_left = score.avoid_turns;
        label
    }

    /// Counts `feedback` from label `label` (another flow's or a stale label is ignored) and
    /// judges the label again.
    fn count(&mut self, label: u16, feedback: PathFeedback) {
        let paths = self.scores.len() as u64;
        let Some(score) = self.scores.get_mut(label as usize) else {
            return;
        };
        self.history[self.history_next] = Some(feedback);
        self.history_next = (self.history_next + 1) % HISTORY;
        match feedback {
            PathFeedback::Ack => {
                score.acks += 1;
                self.acks_total += 1;
            }
            PathFeedback::Nack | PathFeedback::Returned => {
                let weight = if feedback == PathFeedback::Nack { 1 } else { 3 };
                score.nacks += weight;
                self.nacks_total += weight as u64;
            }
        }
        let ratio_pct = match score.acks > RATIO_AFTER_ACKS {
            true => score.nacks as u64 * 100 / score.acks as u64,
            false => 0,
        };
        let (mean_acks, mean_nacks) = (self.acks_total / paths, self.nacks_total / paths);
        let mean_ratio_pct = match mean_acks {
            0 => 100,
            acks => mean_nacks * 100 / acks,
        };
        let bad = score.acks + score.nacks > JUDGED_AFTER
            && ratio_pct as f64 > mean_ratio_pct as f64 * 1.25
            && ratio_pct > 30;
        score.avoid_turns = match bad {
            true => score.avoid_turns.saturating_add(1),
            false => score.avoid_turns.saturating_sub(1),
        };
    }

    /// True if the latest feedback says a returned header came from a bad path rather than
    /// an incast: at least a quarter of it ACKs (htsim's `is_bad_path`).
    fn returned_from_bad_path(&self) -> bool {
        let mut acks = 0;
        let mut total = 0;
        for feedback in self.history.iter().flatten() {
            acks += (*feedback == PathFeedback::Ack) as u32;
            total += 1;
        }
        acks > 0 && total / acks <= 3
    }
}

/// One flow's NDP send side.
#[derive(Clone, Debug)]
pub struct NdpSender {
    /// Packets of the flow (`u32::MAX`: unending).
    packets: u32,
    /// Oldest packet not acknowledged.
    snd_una: u32,
    /// Next new packet.
    next_new: u32,
    /// Per packet of the window (`seq % NDP_WINDOW_PACKETS`): when it was last sent, or
    /// [`ACKED`] or [`AWAITING`].
    sent_ps: Box<[TimePs]>,
    /// Packets to resend, oldest NACK first; each is [`AWAITING`] in `sent_ps`.
    retransmit: VecDeque<u32>,
    /// Packets it may send now: the initial window, then one per pull (and one per packet a
    /// timeout resends).
    credit: u32,
    /// Highest pull number received.
    last_pull: u32,
    /// Pulls the receiver owes: one per ACK or NACK received, less the pulls received
    /// (htsim's `_pull_window`; negative when a pull overtook its ACK).
    pull_window: i64,
    /// Packets of the initial window not yet reported by an ACK, NACK or return (htsim's
    /// `_first_window_count`, decremented by any report).
    first_window_left: i64,
    /// The sender's own path choice, if it labels paths.
    paths: Option<Box<NdpPaths>>,
    rto: RtoEstimator,
    /// When the retransmission timer next looks for packets sent more than an RTO ago, or
    /// [`TIMER_OFF`].
    pub rto_deadline_ps: TimePs,
    /// What it counted (`fast_retransmits`, `ecn_cuts`: 0).
    pub counters: SenderCounters,
    /// NDP's own counts.
    pub ndp: NdpCounters,
}

impl NdpSender {
    /// A sender of `packets` packets (`u32::MAX`: unending) that may send
    /// `params.initial_cwnd_packets` at once.
    pub fn new(params: &SenderParams, packets: u32) -> Self {
        NdpSender {
            packets,
            snd_una: 0,
            next_new: 0,
            sent_ps: vec![ACKED; NDP_WINDOW_PACKETS as usize].into_boxed_slice(),
            retransmit: VecDeque::with_capacity(
                params.initial_cwnd_packets.min(NDP_WINDOW_PACKETS) as usize,
            ),
            credit: params.initial_cwnd_packets.min(packets),
            last_pull: 0,
            pull_window: 0,
            first_window_left: params.initial_cwnd_packets.min(packets) as i64,
            paths: None,
            rto: RtoEstimator::new(params.min_rto_ps, params.max_rto_ps),
            rto_deadline_ps: TIMER_OFF,
            counters: SenderCounters::default(),
            ndp: NdpCounters::default(),
        }
    }

    /// The same sender choosing each packet's path label itself from `paths` (§3.3).
    pub fn with_paths(self, paths: NdpPaths) -> Self {
        NdpSender {
            paths: Some(Box::new(paths)),
            ..self
        }
    }

    /// Makes this a fresh sender of `packets` packets, reusing its buffers (a host reusing the
    /// slot of a flow that completed).
    pub fn restart(&mut self, params: &SenderParams, packets: u32) {
        self.sent_ps.fill(ACKED);
        self.retransmit.clear();
        (self.packets, self.snd_una, self.next_new, self.last_pull) = (packets, 0, 0, 0);
        self.credit = params.initial_cwnd_packets.min(packets);
        (self.pull_window, self.first_window_left) = (0, self.credit as i64);
        if let Some(paths) = &mut self.paths {
            paths.reset();
        }
        self.rto = RtoEstimator::new(params.min_rto_ps, params.max_rto_ps);
        self.rto_deadline_ps = TIMER_OFF;
        self.counters = SenderCounters::default();
        self.ndp = NdpCounters::default();
    }

    fn slot(seq: u32) -> usize {
        (seq % NDP_WINDOW_PACKETS) as usize
    }

    /// True once every packet is acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.packets
    }

    /// New packets the window allows now.
    fn new_sendable(&self) -> u32 {
        let window_left = NDP_WINDOW_PACKETS - (self.next_new - self.snd_una);
        (self.packets - self.next_new).min(window_left)
    }

    /// Packets it still has to send (retransmissions and new ones, the window aside: a pull
    /// that arrives while the window is full is kept for when it opens), credit aside.
    fn sendable(&self) -> u32 {
        (self.retransmit.len() as u32).saturating_add(self.packets - self.next_new)
    }

    /// True if a packet may go now: it has credit and something to send.
    pub fn can_send(&self) -> bool {
        self.credit > 0 && (!self.retransmit.is_empty() || self.new_sendable() > 0)
    }

    /// Takes the next packet to send at `now_ps`, a retransmission first, starting the
    /// retransmission timer if it is off.
    pub fn next_segment(&mut self, now_ps: TimePs) -> Option<u32> {
        if !self.can_send() {
            return None;
        }
        let seq = match self.retransmit.pop_front() {
            Some(seq) => {
                self.counters.retransmissions += 1;
                seq
            }
            None => {
                self.next_new += 1;
                self.next_new - 1
            }
        };
        self.sent_ps[Self::slot(seq)] = now_ps;
        self.credit -= 1;
        self.counters.segments_sent += 1;
        if self.rto_deadline_ps == TIMER_OFF {
            self.rto_deadline_ps = now_ps + self.rto.rto_ps();
        }
        Some(seq)
    }

    /// The path label of the packet about to go, if the sender picks paths (§3.3).
    pub fn choose_path(&mut self) -> Option<u16> {
        let paths = self.paths.as_mut()?;
        Some(paths.choose(&mut self.ndp.path_skips))
    }

    /// Counts `feedback` that came back from path label `label`, if the sender picks paths.
    pub fn path_feedback(&mut self, label: u16, feedback: PathFeedback) {
        if let Some(paths) = &mut self.paths {
            paths.count(label, feedback);
        }
    }

    /// The state of packet `seq` if it is in the window.
    fn outstanding(&self, seq: u32) -> Option<TimePs> {
        (self.snd_una..self.next_new)
            .contains(&seq)
            .then(|| self.sent_ps[Self::slot(seq)])
    }

    /// An ACK of packet `seq` reached the sender at `now_ps`, echoing the send time `echo_ps`
    /// of the copy that arrived (a round-trip sample, as htsim takes one per ACK).
    pub fn on_ack(&mut self, now_ps: TimePs, seq: u32, echo_ps: TimePs) {
        self.pull_window += 1;
        self.first_window_left -= 1;
        let Some(state) = self.outstanding(seq) else {
            return;
        };
        if state == ACKED {
            return;
        }
        if state == AWAITING {
            // Resent by a timeout or NACKed while the first copy arrived after all.
            self.retransmit.retain(|&s| s != seq);
        }
        let rtt_ps = now_ps.saturating_sub(echo_ps);
        self.rto.sample(rtt_ps);
        self.counters.rtt_samples += 1;
        self.counters.rtt_sum_ps += rtt_ps;
        self.sent_ps[Self::slot(seq)] = ACKED;
        while self.snd_una < self.next_new && self.sent_ps[Self::slot(self.snd_una)] == ACKED {
            self.snd_una += 1;
        }
        self.credit = self.credit.min(self.sendable());
    }

    /// A NACK of packet `seq`: it was trimmed; resend it on a coming pull.
    pub fn on_nack(&mut self, seq: u32) {
        self.ndp.nacks += 1;
        self.pull_window += 1;
        self.first_window_left -= 1;
        match self.outstanding(seq) {
            Some(state) if state < AWAITING => {
                self.sent_ps[Self::slot(seq)] = AWAITING;
                self.retransmit.push_back(seq);
            }
            _ => {} // acknowledged or already waiting (a duplicate)
        }
    }

    /// A PULL numbered `pull_no` (cumulative): one more packet may go for each pull not seen
    /// before; a pull that finds nothing to send is spent (htsim's `send_packet` sends nothing).
    pub fn on_pull(&mut self, pull_no: u32) {
        if pull_no <= self.last_pull {
            return; // overtaken by a later pull on another path
        }
        let new_pulls = pull_no - self.last_pull;
        self.last_pull = pull_no;
        self.pull_window -= new_pulls as i64;
        self.ndp.pulls += new_pulls as u64;
        let credit = (self.credit + new_pulls).min(self.sendable());
        self.ndp.pulls_unused += (self.credit + new_pulls - credit) as u64;
        self.credit = credit;
    }

    /// Packet `seq`'s header came back from a full header queue on path label `label`
    /// (§3.1): it is lost; it is resent first, on the next pull, or at once if no pull is due
    /// to send it or the path looks bad (htsim's `processRTS`, which waits for a pull
    /// otherwise so as not to make a second incast at the receiver).
    pub fn on_returned(&mut self, seq: u32, label: u16) {
        self.ndp.returns += 1;
        self.first_window_left -= 1;
        self.path_feedback(label, PathFeedback::Returned);
        match self.outstanding(seq) {
            Some(state) if state < AWAITING => {
                self.sent_ps[Self::slot(seq)] = AWAITING;
                self.retransmit.push_front(seq);
            }
            _ => return, // acknowledged or already waiting
        }
        let no_pull_due = self.pull_window <= 0 && self.first_window_left <= 1;
        let bad_path = self
            .paths
            .as_ref()
            .is_some_and(|p| p.returned_from_bad_path());
        if no_pull_due || bad_path {
            self.credit += 1;
            self.ndp.returns_resent_at_once += 1;
        }
    }

    /// The retransmission timer fired at `now_ps` (the caller checked the deadline): every
    /// packet sent an RTO ago or more with no ACK or NACK since is resent at once, ahead of
    /// the NACKed ones (htsim's `retransmit_packet` sends them without a pull); the timer is
    /// set for the oldest of the others.
    pub fn on_timeout(&mut self, now_ps: TimePs) {
        let rto_ps = self.rto.rto_ps();
        let mut next_ps = TIMER_OFF;
        let mut resent = 0;
        for seq in (self.snd_una..self.next_new).rev() {
            let sent_ps = self.sent_ps[Self::slot(seq)];
            if sent_ps >= AWAITING {
                continue;
            }
            if sent_ps + rto_ps <= now_ps {
                self.sent_ps[Self::slot(seq)] = AWAITING;
                self.retransmit.push_front(seq);
                resent += 1;
            } else {
                next_ps = next_ps.min(sent_ps + rto_ps);
            }
        }
        if resent > 0 {
            self.counters.timeouts += 1;
            self.credit += resent;
        }
        self.rto_deadline_ps = next_ps;
    }
}

/// NDP as a transport: over trimming ports only, its packets sprayed per packet (or labelled
/// by their senders over ECMP, §3.3).
pub const TRANSPORT: TransportKind = TransportKind {
    name: "ndp",
    description: "NDP: initial window at line rate, then one packet per paced PULL, NACKs for trimmed headers (Handley et al. 2017); needs trimming switch ports",
    marks: Marks::None,
    needs_trimming: true,
    needs_lossless: false,
    delayed_acks: false,
    subflows: false,
    no_opening: None,
    own_keys: &["host.ndp.pull_rate", "host.ndp.paths"],
    ignored_keys: &[&[
        "host.dctcp.g",
        "host.initial_ssthresh_packets",
        "host.delayed_ack",
        "host.delayed_ack_ns",
    ]],
    ignored_because: "host.transport = \"ndp\" (no ECN, no slow start, an ACK or NACK per packet)",
    check_keys,
    check_routing,
};

/// The routing mode whose per-flow hash takes a packet's path label (so NDP's senders can
/// label their packets' paths, §3.3).
const LABEL_HASHING_MODE: &str = "ecmp";

/// The pull rate and the path labels.
fn check_keys(h: &HostConfig) -> Result<(), ScenarioError> {
    if h.ndp.paths > MAX_PATH_LABELS {
        return Err(invalid(
            "host.ndp.paths",
            format!("expected 0 to {MAX_PATH_LABELS} path labels"),
        ));
    }
    if !(h.ndp.pull_rate.is_finite() && h.ndp.pull_rate >= 0.01 && h.ndp.pull_rate <= 10.0) {
        return Err(invalid(
            "host.ndp.pull_rate",
            "expected 0.01 to 10 (a fraction of the line rate)",
        ));
    }
    Ok(())
}

/// NDP sprays every packet (§3.1): a per-packet mode, or ECMP hashing the senders' labels.
fn check_routing(h: &HostConfig, mode: &Mode) -> Result<(), ScenarioError> {
    if h.ndp.paths > 0 && mode.name != LABEL_HASHING_MODE {
        return Err(invalid(
            "host.ndp.paths",
            format!(
                "expected 0 unless routing.mode = {LABEL_HASHING_MODE:?} (its hash takes a packet's path label), got routing.mode = {:?}",
                mode.name
            ),
        ));
    }
    if h.ndp.paths == 0 && mode.per_flow {
        let per_packet = routing::names_where(|m| !m.per_flow && !m.needs_groups);
        return Err(invalid(
            "routing.mode",
            format!(
                "NDP sprays every packet: expected {} (or {LABEL_HASHING_MODE} with host.ndp.paths), got {:?}",
                per_packet,
                mode.name
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(initial_cwnd_packets: u32) -> SenderParams {
        SenderParams::newreno(9000, initial_cwnd_packets)
    }

    fn send_all(s: &mut NdpSender, now_ps: TimePs) -> Vec<u32> {
        std::iter::from_fn(|| s.next_segment(now_ps)).collect()
    }

    #[test]
    fn the_initial_window_goes_then_one_packet_per_pull_retransmissions_first() {
        let mut s = NdpSender::new(&params(3), 10);
        assert_eq!(send_all(&mut s, 0), vec![0, 1, 2]);
        s.on_ack(10, 0, 0);
        s.on_nack(1);
        assert!(!s.can_send(), "an ACK or NACK alone sends nothing");
        s.on_pull(1);
        assert_eq!(send_all(&mut s, 20), vec![1], "the NACKed packet first");
        s.on_pull(3); // pull 2 was lost: pull 3 stands for both
        assert_eq!(send_all(&mut s, 30), vec![3, 4]);
        s.on_pull(2);
        assert!(!s.can_send(), "a late pull is not counted twice");
        assert_eq!(s.counters.retransmissions, 1);
        assert_eq!((s.ndp.nacks, s.ndp.pulls), (1, 3));
    }

    #[test]
    fn a_finite_flow_ends_and_spare_pulls_are_spent() {
        let mut s = NdpSender::new(&params(23), 2);
        assert_eq!(
            send_all(&mut s, 0),
            vec![0, 1],
            "a window larger than the flow"
        );
        s.on_ack(5, 1, 0);
        assert!(!s.done());
        s.on_pull(1);
        assert!(!s.can_send());
        assert_eq!(s.ndp.pulls_unused, 1);
        s.on_ack(6, 0, 0);
        assert!(s.done());
    }

    #[test]
    fn pulls_that_find_the_window_full_wait_for_it_to_open() {
        let mut s = NdpSender::new(&params(NDP_WINDOW_PACKETS), u32::MAX);
        assert_eq!(send_all(&mut s, 0).len(), NDP_WINDOW_PACKETS as usize);
        // Packet 0 is lost; every other one is acknowledged and pulls for it arrive.
        for seq in 1..NDP_WINDOW_PACKETS {
            s.on_ack(10, seq, 0);
        }
        s.on_pull(5);
        assert!(!s.can_send(), "the window is full behind packet 0");
        assert_eq!(s.ndp.pulls_unused, 0);
        s.on_ack(20, 0, 0);
        assert_eq!(
            send_all(&mut s, 20).len(),
            5,
            "the kept pulls send once it opens"
        );
    }

    #[test]
    fn a_timeout_resends_what_no_ack_or_nack_reported() {
        let mut s = NdpSender::new(&params(3), u32::MAX);
        send_all(&mut s, 0);
        assert_eq!(s.rto_deadline_ps, 1_000_000);
        s.on_ack(10, 0, 0);
        s.on_nack(2); // waits for a pull, not for the timer
        s.on_timeout(1_000_000);
        assert_eq!(s.rto_deadline_ps, TIMER_OFF, "nothing else is outstanding");
        assert_eq!(
            send_all(&mut s, 1_000_000),
            vec![1],
            "the lost packet at once; the NACKed one waits for a pull"
        );
        assert_eq!(s.counters.timeouts, 1);
        assert_eq!(s.rto_deadline_ps, 2_000_000, "set again by the resend");
        s.on_pull(1);
        assert_eq!(send_all(&mut s, 1_000_010), vec![2]);
    }

    /// A returned header's packet goes first on the next pull while pulls are due; once the
    /// receiver owes none (every other packet reported and pulled for), it goes at once.
    #[test]
    fn a_returned_packet_waits_for_a_pull_unless_none_is_due() {
        let mut s = NdpSender::new(&params(3), 10);
        assert_eq!(send_all(&mut s, 0), vec![0, 1, 2]);
        s.on_ack(10, 0, 0);
        s.on_returned(1, 0);
        assert!(
            !s.can_send(),
            "packet 0's pull is due: packet 1 waits for it"
        );
        s.on_pull(1);
        assert_eq!(send_all(&mut s, 20), vec![1]);
        s.on_returned(2, 0);
        assert_eq!(send_all(&mut s, 30), vec![2], "no pull due: resent at once");
        s.on_returned(2, 0);
        assert_eq!((s.ndp.returns, s.ndp.returns_resent_at_once), (3, 2));
        assert_eq!(
            send_all(&mut s, 40),
            vec![2],
            "the second return, at once too"
        );
        s.on_ack(50, 2, 40);
        s.on_returned(2, 0);
        assert!(
            !s.can_send(),
            "a late return of an acknowledged packet is ignored"
        );
    }

    /// Labels go in a permutation, every one once per pass; a label that brings NACKs well
    /// above the others' is skipped on its next turns, and takes its turns again once its
    /// feedback is fine.
    #[test]
    fn a_path_that_nacks_more_than_the_others_is_skipped() {
        let mut p = NdpPaths::new(4, 9);
        let mut skips = 0;
        let mut pass: Vec<u16> = (0..4).map(|_| p.choose(&mut skips)).collect();
        pass.sort_unstable();
        assert_eq!((pass, skips), (vec![0, 1, 2, 3], 0));
        for _ in 0..60 {
            for label in 0..4 {
                p.count(label, PathFeedback::Ack);
            }
            p.count(3, PathFeedback::Nack);
        }
        assert!(p.scores[3].avoid_turns > 5, "{:?}", p.scores[3]);
        let used: Vec<u16> = (0..400).map(|_| p.choose(&mut skips)).collect();
        let on_3 = used.iter().filter(|&&l| l == 3).count();
        assert!(on_3 < 20 && skips > 0, "label 3 used {on_3} times of 400");
        // Fine once its NACK ratio falls under 30% (140 ACKs more), then one turn fewer per
        // fine feedback.
        for _ in 0..400 {
            p.count(3, PathFeedback::Ack);
        }
        assert_eq!(p.scores[3].avoid_turns, 0);
        let back: Vec<u16> = (0..400).map(|_| p.choose(&mut skips)).collect();
        // The skips it was given at its last use run out first, then it takes every turn.
        let on_3 = back.iter().filter(|&&l| l == 3).count();
        assert!(
            (80..=100).contains(&on_3),
            "label 3 used {on_3} times of 400"
        );
        assert_eq!(back[300..].iter().filter(|&&l| l == 3).count(), 25);
    }
}
