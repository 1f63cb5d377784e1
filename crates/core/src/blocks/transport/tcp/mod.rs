//! The TCP family's send side: one flow's sequence space, window and retransmission timer
//! ([`Sender`]), its congestion control in [`newreno`] (TCP NewReno, RFC 5681 and RFC 6582) and
//! [`dctcp`] (DCTCP, Alizadeh et al. 2010, on top of it), and MPTCP's coupled increase and
//! shared data in [`mptcp`] (RFC 6356). Each of the three is a transport of its own
//! ([`newreno::TRANSPORT`], [`dctcp::TRANSPORT`], [`mptcp::TRANSPORT`]); all three share this
//! sender and the in-order receiver of [`super::receiver`].

pub mod dctcp;
pub mod dctcp_keys;
pub mod mptcp;
pub mod newreno;

use super::line_rate::InflightCap;
use super::receiver::RECEIVE_WINDOW_PACKETS;
use super::rto::RtoEstimator;
use super::{SenderCounters, SenderParams, WindowRule, TIMER_OFF};
use crate::engine::time::TimePs;
use dctcp::Dctcp;
use mptcp::Lia;
use newreno::NewReno;

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
    /// The line-rate sender's cap on inflight, its window instead of NewReno's.
    pub inflight_cap: Option<InflightCap>,
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
            dctcp: match params.window {
                WindowRule::Dctcp { g } => Some(Dctcp::new(g)),
                _ => None,
            },
            inflight_cap: match params.window {
                WindowRule::Capped(cap) => Some(cap),
                _ => None,
            },
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

    /// True if the congestion (or the line-rate sender's inflight cap) and receive windows
    /// allow one more segment in flight.
    fn window_open(&self) -> bool {
        let flight = self.snd_nxt - self.snd_una;
        let (flight_bytes, mss) = (self.flight_bytes(), self.mss_bytes);
        flight < RECEIVE_WINDOW_PACKETS
            && match self.inflight_cap {
                Some(cap) => cap.allows(flight_bytes, mss),
                None => flight_bytes + mss <= self.reno.cwnd_bytes,
            }
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
        self.debug_check_window();
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
        self.debug_check_window();
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
        self.debug_check_window();
    }

    /// The sequence space's order (`snd_una` ≤ `snd_nxt` ≤ `snd_max`) and the receive window
    /// (no more than [`RECEIVE_WINDOW_PACKETS`] beyond the oldest unacknowledged segment),
    /// asserted in debug builds.
    fn debug_check_window(&self) {
        debug_assert!(
            self.snd_una <= self.snd_nxt && self.snd_nxt <= self.snd_max,
            "sequence space out of order: una {} nxt {} max {}",
            self.snd_una,
            self.snd_nxt,
            self.snd_max
        );
        debug_assert!(
            self.snd_max - self.snd_una <= RECEIVE_WINDOW_PACKETS,
            "{} segments beyond the receive window",
            self.snd_max - self.snd_una
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SenderParams {
        SenderParams::newreno(1000, 4)
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

    /// The window check fires when the sequence space is broken on purpose (the highest
    /// segment sent below the next one to send).
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "sequence space out of order")]
    fn a_broken_sequence_space_fails_the_window_check() {
        let mut s = Sender::new(&params(), 6);
        send_all(&mut s, 0);
        s.snd_max = s.snd_nxt - 1;
        s.on_ack(10, 0, false, 0);
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

    /// The line-rate sender's window rule by hand: a cap of 5500 bytes lets 5 segments of
    /// 1000 go at once (a sixth would make 6000), whatever NewReno's window of 4; each ACK
    /// of k segments lets k more go; a loss (three duplicate ACKs) retransmits the hole and
    /// keeps the cap (NewReno's halving does not apply), and a timeout resends from the
    /// oldest segment with the whole cap, not one segment.
    #[test]
    fn the_line_rate_sender_keeps_one_cap_of_bytes_in_flight() {
        let capped = SenderParams {
            window: WindowRule::Capped(InflightCap { bytes: 5500 }),
            ..params()
        };
        let mut s = Sender::new(&capped, u32::MAX);
        assert_eq!(send_all(&mut s, 0), vec![0, 1, 2, 3, 4]);
        s.on_ack(10, 2, false, 0);
        assert_eq!(
            send_all(&mut s, 10),
            vec![5, 6],
            "two acknowledged, two more"
        );
        for _ in 0..3 {
            s.on_ack(20, 2, false, 0);
        }
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(
            send_all(&mut s, 20),
            vec![2],
            "the hole, then the cap is full"
        );
        s.on_ack(30, 7, false, 20);
        assert_eq!(
            send_all(&mut s, 30),
            vec![7, 8, 9, 10, 11],
            "the whole cap again"
        );
        s.on_timeout(2_000_000);
        assert_eq!(
            send_all(&mut s, 2_000_000),
            vec![7, 8, 9, 10, 11],
            "go-back-N over the whole cap"
        );
    }

    /// A DCTCP sender (g = 1/16) that has sent its initial window of 10 packets.
    fn dctcp_sender_with_a_window_out() -> Sender {
        let mut s = Sender::new(
            &SenderParams {
                window: WindowRule::Dctcp { g: 1.0 / 16.0 },
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
