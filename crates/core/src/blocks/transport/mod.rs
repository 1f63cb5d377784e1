//! Host transports, one per file, each citing what it implements: the sender's sequence space
//! and timers here ([`Sender`]), its congestion control in [`newreno`] (TCP NewReno) and
//! [`dctcp`] (DCTCP on top of it), MPTCP's coupled increase in [`mptcp`], the retransmission
//! timer's value in [`rto`], and the receive side in [`receiver`]; NDP's receiver-pulled sender
//! and pull pacer in [`ndp`]; DCQCN's rate-based sender in [`dcqcn`] ([`FlowSender`] puts
//! every kind of sender behind one face for the host). Sequence numbers count segments; every segment but a finite flow's last is one
//! maximum segment.

pub mod dcqcn;
pub mod dctcp;
pub mod mptcp;
pub mod ndp;
pub mod newreno;
pub mod receiver;
pub mod rto;

use serde::{Deserialize, Serialize};

use crate::engine::time::TimePs;
use crate::keys::Named;
use dcqcn::DcqcnSender;
use dctcp::Dctcp;
use mptcp::Lia;
use ndp::NdpSender;
use newreno::NewReno;
use receiver::RECEIVE_WINDOW_PACKETS;
use rto::RtoEstimator;

/// [`Sender::rto_deadline_ps`] when the retransmission timer is off.
pub const TIMER_OFF: TimePs = TimePs::MAX;

/// A transport a scenario names (`host.transport`).
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP NewReno (RFC 5681, RFC 6582), not ECN-capable.
    #[default]
    Tcp,
    /// DCTCP (Alizadeh et al. 2010) over NewReno's loss recovery, ECN-capable.
    Dctcp,
    /// MPTCP: `host.subflows` NewReno subflows on their own ECMP paths, coupled by LIA
    /// (RFC 6356), not ECN-capable.
    Mptcp,
    /// NDP (Handley et al. 2017): receiver-pulled, over trimming switches.
    Ndp,
    /// DCQCN (Zhu et al. 2015): rate-based RoCE senders reacting to CNPs, over a lossless
    /// PFC fabric with RED-like ECN marking.
    Dcqcn,
}

impl Named for Transport {
    const ALL: &'static [Transport] = &[
        Transport::Tcp,
        Transport::Dctcp,
        Transport::Mptcp,
        Transport::Ndp,
        Transport::Dcqcn,
    ];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Transport::Tcp => ("tcp", "TCP NewReno: slow start, AIMD, fast retransmit and recovery with partial ACKs, RTO (RFC 5681, 6582, 6298)"),
            Transport::Dctcp => ("dctcp", "DCTCP: ECN marks at a threshold K, alpha with g = 1/16, window cut by alpha/2 (Alizadeh et al. 2010)"),
            Transport::Mptcp => ("mptcp", "MPTCP: host.subflows NewReno subflows, each on its own ECMP hash, with LIA's coupled increase (RFC 6356)"),
            Transport::Ndp => ("ndp", "NDP: initial window at line rate, then one packet per paced PULL, NACKs for trimmed headers (Handley et al. 2017); needs switch.trimming"),
            Transport::Dcqcn => ("dcqcn", "DCQCN: rate-based RoCE senders, CNPs from the receiver at most once per 50 us, alpha and rate recovery by timer and byte counter (Zhu et al. 2015); needs switch.pfc"),
        }
    }
}

/// How a sender starts and times out, the same for every flow of a run.
#[derive(Clone, Copy, Debug)]
pub struct SenderParams {
    /// Maximum segment (the size of every data packet on the wire).
    pub mss_bytes: u64,
    /// Initial window in segments.
    pub initial_cwnd_packets: u32,
    /// Initial slow-start threshold in segments (`None`: unbounded).
    pub initial_ssthresh_packets: Option<u32>,
    /// The smallest retransmission timeout.
    pub min_rto_ps: TimePs,
    /// The largest (a backed-off timeout stops doubling here).
    pub max_rto_ps: TimePs,
    /// DCTCP's gain g, for a DCTCP sender.
    pub dctcp_g: Option<f64>,
}

/// What a sender counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderCounters {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmissions (fast, partial-ACK and after timeouts).
    pub retransmissions: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// DCTCP's window cuts on ECN-Echo.
    pub ecn_cuts: u64,
    /// Round-trip samples taken (one per acknowledgment of new data).
    pub rtt_samples: u64,
    /// Their sum.
    pub rtt_sum_ps: u64,
}

/// One flow's send side: its sequence space, window and retransmission timer.
#[derive(Clone, Debug)]
pub struct Sender {
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send (set back to `snd_una` after a timeout: go-back-N).
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    /// Segments of the flow (`u32::MAX`: unending).
    pub packets: u32,
    /// NewReno's window and recovery.
    pub reno: NewReno,
    /// DCTCP's ECN reaction, for a DCTCP sender.
    pub dctcp: Option<Dctcp>,
    /// The retransmission timeout.
    pub rto: RtoEstimator,
    /// When the retransmission timer expires, or [`TIMER_OFF`].
    pub rto_deadline_ps: TimePs,
    /// A segment to retransmit before any new one.
    retransmit: Option<u32>,
    mss_bytes: u64,
    /// What it counted.
    pub counters: SenderCounters,
}

impl SenderCounters {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &SenderCounters) {
        self.segments_sent += other.segments_sent;
        self.retransmissions += other.retransmissions;
        self.fast_retransmits += other.fast_retransmits;
        self.timeouts += other.timeouts;
        self.ecn_cuts += other.ecn_cuts;
        self.rtt_samples += other.rtt_samples;
        self.rtt_sum_ps += other.rtt_sum_ps;
    }
}

impl Sender {
    /// A sender of `packets` segments (`u32::MAX`: unending).
    pub fn new(params: &SenderParams, packets: u32) -> Self {
        Sender {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            packets,
            reno: NewReno::new(
                params.mss_bytes,
                params.initial_cwnd_packets,
                params.initial_ssthresh_packets,
            ),
            dctcp: params.dctcp_g.map(Dctcp::new),
            rto: RtoEstimator::new(params.min_rto_ps, params.max_rto_ps),
            rto_deadline_ps: TIMER_OFF,
            retransmit: None,
            mss_bytes: params.mss_bytes,
            counters: SenderCounters::default(),
        }
    }

    /// True once every segment is acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.packets
    }

    /// Bytes outstanding (sent after `snd_una`, up to `snd_nxt`).
    fn flight_bytes(&self) -> u64 {
        (self.snd_nxt - self.snd_una) as u64 * self.mss_bytes
    }

    /// True if a segment may go now: a retransmission, or new data the windows allow.
    pub fn can_send(&self) -> bool {
        self.retransmit.is_some() || (self.snd_nxt < self.packets && self.window_open())
    }

    /// True if the congestion and receive windows allow one more segment in flight.
    fn window_open(&self) -> bool {
        let flight = self.snd_nxt - self.snd_una;
        flight < RECEIVE_WINDOW_PACKETS
            && self.flight_bytes() + self.mss_bytes <= self.reno.cwnd_bytes
    }

    /// True if the sender would send new data now were it given another segment (an MPTCP
    /// subflow that has sent all it was given, its window open).
    pub fn wants_data(&self) -> bool {
        self.retransmit.is_none() && self.snd_nxt == self.packets && self.window_open()
    }

    /// Gives the sender one more segment of new data to send (an MPTCP subflow taking the
    /// connection's next segment).
    pub fn give_segment(&mut self) {
        self.packets += 1;
    }

    /// Takes the next segment to send at `now_ps`, if any, starting the retransmission timer
    /// if it is off (RFC 6298 §5.1).
    pub fn next_segment(&mut self, now_ps: TimePs) -> Option<u32> {
        let seq = match self.retransmit.take() {
            Some(seq) => {
                self.counters.retransmissions += 1;
                seq
            }
            None if self.can_send() => {
                let seq = self.snd_nxt;
                if seq < self.snd_max {
                    self.counters.retransmissions += 1;
                }
                self.snd_nxt += 1;
                self.snd_max = self.snd_max.max(self.snd_nxt);
                seq
            }
            None => return None,
        };
        self.counters.segments_sent += 1;
        if self.rto_deadline_ps == TIMER_OFF {
            self.rto_deadline_ps = now_ps + self.rto.rto_ps();
        }
        Some(seq)
    }

    /// An acknowledgment for `ack` (the next segment the receiver expects) reached the sender
    /// at `now_ps`, echoing ECN-Echo `ece` and the send time `echo_ps` of the segment that
    /// caused it (the timestamp option, RFC 7323 §4.1, so every ACK is a round-trip sample).
    pub fn on_ack(&mut self, now_ps: TimePs, ack: u32, ece: bool, echo_ps: TimePs) {
        self.on_ack_coupled(now_ps, ack, ece, echo_ps, None);
    }

    /// [`Sender::on_ack`] for an MPTCP subflow whose congestion-avoidance increase is LIA's
    /// `coupling` (`None`: NewReno's own).
    pub fn on_ack_coupled(
        &mut self,
        now_ps: TimePs,
        ack: u32,
        ece: bool,
        echo_ps: TimePs,
        coupling: Option<&Lia>,
    ) {
        if ack > self.snd_max {
            return; // cannot happen: an acknowledgment of data never sent
        }
        let mut acked = 0;
        if ack > self.snd_una {
            acked = ack - self.snd_una;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            let rtt_ps = now_ps.saturating_sub(echo_ps);
            self.rto.sample(rtt_ps);
            self.counters.rtt_samples += 1;
            self.counters.rtt_sum_ps += rtt_ps;
            let flight = self.flight_bytes();
            if let Some(seq) = self.reno.on_new_ack(ack, acked, flight, coupling) {
                self.retransmit = Some(seq);
            }
            // RFC 6298 §5.2, §5.3: off when all is acknowledged, else restarted.
            self.rto_deadline_ps = if self.snd_una == self.snd_max {
                TIMER_OFF
            } else {
                now_ps + self.rto.rto_ps()
            };
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            let was_recovering = self.reno.in_recovery();
            let flight = (self.snd_max - self.snd_una) as u64 * self.mss_bytes;
            if let Some(seq) = self.reno.on_dupack(self.snd_una, self.snd_max, flight) {
                self.retransmit = Some(seq);
                if !was_recovering {
                    self.counters.fast_retransmits += 1;
                }
            }
        }
        if let Some(dctcp) = &mut self.dctcp {
            if let Some(factor) = dctcp.on_ack(ack, acked, ece, self.snd_max) {
                if !self.reno.in_recovery() {
                    let cut = (self.reno.cwnd_bytes as f64 * factor) as u64;
                    self.reno.reduce_to(cut);
                    self.counters.ecn_cuts += 1;
                }
            }
        }
    }

    /// The retransmission timer expired at `now_ps` (the caller checked the deadline):
    /// back off, shrink the window and resend from the oldest unacknowledged segment.
    pub fn on_timeout(&mut self, now_ps: TimePs) {
        self.counters.timeouts += 1;
        let flight = (self.snd_max - self.snd_una) as u64 * self.mss_bytes;
        self.reno.on_timeout(flight, self.snd_max);
        if let Some(dctcp) = &mut self.dctcp {
            dctcp.on_timeout(self.snd_max);
        }
        self.rto.back_off();
        self.snd_nxt = self.snd_una;
        self.retransmit = None;
        self.rto_deadline_ps = now_ps + self.rto.rto_ps();
    }
}

/// One flow's send side, whichever transport: a window sender (TCP, DCTCP), NDP's or DCQCN's.
#[derive(Clone, Debug)]
pub enum FlowSender {
    /// NewReno's window, with DCTCP's reaction for a DCTCP flow.
    Window(Sender),
    /// NDP's pulled sender.
    Ndp(NdpSender),
    /// DCQCN's rate-based sender.
    Dcqcn(DcqcnSender),
}

impl FlowSender {
    /// True if a segment may go now.
    pub fn can_send(&self) -> bool {
        match self {
            FlowSender::Window(s) => s.can_send(),
            FlowSender::Ndp(s) => s.can_send(),
            FlowSender::Dcqcn(s) => s.has_data(),
        }
    }

    /// True if a segment may start at `now_ps`: as [`FlowSender::can_send`], and for a paced
    /// (DCQCN) sender when its rate allows.
    pub fn ready(&self, now_ps: TimePs) -> bool {
        match self {
            FlowSender::Dcqcn(s) => s.ready(now_ps),
            _ => self.can_send(),
        }
    }

    /// A paced sender's next start time, if it has data (`None` for the others).
    pub fn paced_ps(&self) -> Option<TimePs> {
        match self {
            FlowSender::Dcqcn(s) => s.next_send_ps(),
            _ => None,
        }
    }

    /// Takes the next segment to send at `now_ps`, if any.
    pub fn next_segment(&mut self, now_ps: TimePs) -> Option<u32> {
        match self {
            FlowSender::Window(s) => s.next_segment(now_ps),
            FlowSender::Ndp(s) => s.next_segment(now_ps),
            FlowSender::Dcqcn(s) => s.next_segment(now_ps),
        }
    }

    /// When the retransmission timer expires, or [`TIMER_OFF`].
    pub fn rto_deadline_ps(&self) -> TimePs {
        match self {
            FlowSender::Window(s) => s.rto_deadline_ps,
            FlowSender::Ndp(s) => s.rto_deadline_ps,
            FlowSender::Dcqcn(s) => s.rto_deadline_ps(),
        }
    }

    /// The retransmission timer expired at `now_ps`.
    pub fn on_timeout(&mut self, now_ps: TimePs) {
        match self {
            FlowSender::Window(s) => s.on_timeout(now_ps),
            FlowSender::Ndp(s) => s.on_timeout(now_ps),
            FlowSender::Dcqcn(_) => {} // never armed
        }
    }

    /// What it counted.
    pub fn counters(&self) -> &SenderCounters {
        match self {
            FlowSender::Window(s) => &s.counters,
            FlowSender::Ndp(s) => &s.counters,
            FlowSender::Dcqcn(s) => &s.counters,
        }
    }
    /// True once every segment is acknowledged.
    pub fn done(&self) -> bool {
        match self {
            FlowSender::Window(s) => s.done(),
            FlowSender::Ndp(s) => s.done(),
            // No acknowledgments: it never knows (flows opened during a run refuse DCQCN).
            FlowSender::Dcqcn(_) => false,
        }
    }

    /// Makes this a fresh sender of `packets` segments, reusing its buffers.
    pub fn restart(&mut self, params: &SenderParams, packets: u32) {
        match self {
            FlowSender::Window(s) => *s = Sender::new(params, packets),
            FlowSender::Ndp(s) => s.restart(params, packets),
            FlowSender::Dcqcn(_) => {
                unreachable!("flows opened during a run refuse DCQCN (host.transport)")
            }
        }
    }

    /// The window sender (an MPTCP subflow's, to couple and feed it), if this is one.
    pub fn window(&self) -> Option<&Sender> {
        match self {
            FlowSender::Window(s) => Some(s),
            FlowSender::Ndp(_) | FlowSender::Dcqcn(_) => None,
        }
    }

    /// The window sender, mutably, if this is one.
    pub fn window_mut(&mut self) -> Option<&mut Sender> {
        match self {
            FlowSender::Window(s) => Some(s),
            FlowSender::Ndp(_) | FlowSender::Dcqcn(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SenderParams {
        SenderParams {
            mss_bytes: 1000,
            initial_cwnd_packets: 4,
            initial_ssthresh_packets: None,
            min_rto_ps: 1_000_000,
            max_rto_ps: 1_000_000_000,
            dctcp_g: None,
        }
    }

    fn send_all(s: &mut Sender, now_ps: TimePs) -> Vec<u32> {
        std::iter::from_fn(|| s.next_segment(now_ps)).collect()
    }

    #[test]
    fn a_window_goes_out_acks_open_it_and_a_finite_flow_ends() {
        let mut s = Sender::new(&params(), 6);
        assert_eq!(send_all(&mut s, 0), vec![0, 1, 2, 3]);
        assert_eq!(s.rto_deadline_ps, 1_000_000);
        s.on_ack(10, 2, false, 0);
        assert_eq!(
            send_all(&mut s, 10),
            vec![4, 5],
            "window 6 now, but 6 segments in all"
        );
        s.on_ack(20, 6, false, 0);
        assert!(s.done());
        assert_eq!(s.rto_deadline_ps, TIMER_OFF);
    }

    #[test]
    fn a_subflow_sends_only_the_segments_it_is_given() {
        let mut s = Sender::new(&params(), 0);
        assert!(!s.can_send() && s.wants_data());
        for _ in 0..4 {
            s.give_segment();
            assert!(s.next_segment(0).is_some());
        }
        assert!(!s.wants_data(), "a window of 4 full");
        s.on_ack(10, 4, false, 0);
        assert!(s.done() && s.wants_data());
    }

    #[test]
    fn a_lost_segment_is_fast_retransmitted_then_sending_resumes() {
        let mut s = Sender::new(&params(), u32::MAX);
        send_all(&mut s, 0);
        for _ in 0..3 {
            s.on_ack(10, 0, false, 0);
        }
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(s.next_segment(10), Some(0), "the retransmission first");
        s.on_ack(20, 4, false, 10);
        assert!(!s.reno.in_recovery());
        assert!(s.can_send());
    }

    #[test]
    fn a_timeout_goes_back_to_the_oldest_segment_with_a_doubled_timer() {
        let mut s = Sender::new(&params(), u32::MAX);
        send_all(&mut s, 0);
        s.on_timeout(1_000_000);
        assert_eq!(s.rto_deadline_ps, 3_000_000);
        assert_eq!(
            send_all(&mut s, 1_000_000),
            vec![0],
            "one segment of window"
        );
        assert_eq!(s.counters.retransmissions, 1);
    }

    /// A DCTCP sender (g = 1/16) that has sent its initial window of 10 packets.
    fn dctcp_sender_with_a_window_out() -> Sender {
        let mut s = Sender::new(
            &SenderParams {
                dctcp_g: Some(1.0 / 16.0),
                initial_cwnd_packets: 10,
                ..params()
            },
            u32::MAX,
        );
        send_all(&mut s, 0);
        s
    }

    /// The sender's window after an ECN-Echo is cwnd·(1 − α/2) (Alizadeh et al. 2010, §3.1),
    /// with α below 1: one unmarked ACK first lowers α to (1 − g)·1 + g·0 = 15/16.
    #[test]
    fn dctcp_cuts_the_window_to_cwnd_times_one_minus_alpha_over_two() {
        let mut s = dctcp_sender_with_a_window_out();
        s.on_ack(10, 1, false, 0);
        assert_eq!(s.dctcp.unwrap().alpha, 0.9375, "α = (1 − g)·1 + g·0");
        assert_eq!((s.reno.cwnd_bytes, s.counters.ecn_cuts), (11_000, 0));
        // Slow start takes the window to 12 000 bytes, then the cut: 12 000·(1 − 15/32).
        s.on_ack(20, 2, true, 0);
        assert_eq!(s.counters.ecn_cuts, 1);
        assert_eq!(s.reno.cwnd_bytes, 6_375, "12 000·(1 − α/2), α = 15/16");
        assert_eq!(s.reno.ssthresh_bytes, 6_375, "slow start ends at the cut");
        // The same window of data: no second cut, congestion avoidance's 1000²/6375 bytes.
        s.on_ack(30, 3, true, 0);
        assert_eq!(s.counters.ecn_cuts, 1);
        assert_eq!(s.reno.cwnd_bytes, 6_375 + 156);
    }

    #[test]
    fn dctcp_cuts_by_alpha_over_two_on_ecn_echo() {
        let mut s = dctcp_sender_with_a_window_out();
        s.on_ack(10, 1, true, 0);
        // α was updated once with F = 1 (still 1): the window of 10 (+1 from slow start) halves.
        assert_eq!(s.counters.ecn_cuts, 1);
        assert_eq!(s.reno.cwnd_bytes, 5_500);
    }
}
