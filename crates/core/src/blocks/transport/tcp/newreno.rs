//! TCP NewReno congestion control: slow start and congestion avoidance (RFC 5681 §3.1), fast
//! retransmit and fast recovery (§3.2) with NewReno's partial acknowledgments (RFC 6582 §3.2),
//! and the window after a retransmission timeout (RFC 5681 §3.1, eq. 4, and RFC 6582 §4's
//! `recover` guard against a second fast retransmit for the same losses). Sequence numbers
//! count segments of one maximum size; the window counts bytes, as the RFCs do.

use super::mptcp::Lia;
use crate::blocks::transport::{no_check, Marks, TransportKind};

/// The congestion state of one NewReno sender.
#[derive(Clone, Copy, Debug)]
pub struct NewReno {
    /// Congestion window.
    pub cwnd_bytes: u64,
    /// Slow-start threshold.
    pub ssthresh_bytes: u64,
    /// Sender maximum segment size.
    mss_bytes: u64,
    /// Duplicate acknowledgments in a row.
    dupacks: u32,
    /// In fast recovery.
    in_recovery: bool,
    /// One past the highest segment sent when the last recovery (or timeout) began: RFC 6582's
    /// `recover`, exclusive.
    recover: u32,
}

impl NewReno {
    /// A sender with an initial window of `initial_cwnd_packets` segments (RFC 6928 allows
    /// 10) and an initial slow-start threshold (`None`: arbitrarily high, RFC 5681 §3.1).
    pub fn new(mss_bytes: u64, initial_cwnd_packets: u32, ssthresh_packets: Option<u32>) -> Self {
        NewReno {
            cwnd_bytes: initial_cwnd_packets as u64 * mss_bytes,
            ssthresh_bytes: ssthresh_packets.map_or(u64::MAX, |p| p as u64 * mss_bytes),
            mss_bytes,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
        }
    }

    /// True in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// An acknowledgment of new data: `ack` (the next segment expected) acknowledges
    /// `acked_packets` more; `flight_bytes` are still outstanding after it; `coupling`, for an
    /// MPTCP subflow, replaces congestion avoidance's increase with LIA's. Returns the segment
    /// to retransmit at once, for a partial acknowledgment in fast recovery.
    pub fn on_new_ack(
        &mut self,
        ack: u32,
        acked_packets: u32,
        flight_bytes: u64,
        coupling: Option<&Lia>,
    ) -> Option<u32> {
        let mss = self.mss_bytes;
        let acked_bytes = acked_packets as u64 * mss;
        self.dupacks = 0;
        if self.in_recovery {
            if ack >= self.recover {
                // Full acknowledgment (RFC 6582 §3.2 step 3, option 1): deflate the window.
                self.in_recovery = false;
                self.cwnd_bytes = self.ssthresh_bytes.min(flight_bytes.max(mss) + mss);
                return None;
            }
            // Partial acknowledgment (step 4): retransmit the first unacknowledged segment,
            // deflate by the amount acknowledged, add back one segment.
            self.cwnd_bytes = self.cwnd_bytes.saturating_sub(acked_bytes).max(mss);
            if acked_bytes >= mss {
                self.cwnd_bytes += mss;
            }
            return Some(ack);
        }
        if self.cwnd_bytes < self.ssthresh_bytes {
            // Slow start (RFC 5681 eq. 2).
            self.cwnd_bytes += acked_bytes.min(mss);
        } else {
            // Congestion avoidance (eq. 3): about one segment per window; coupled, RFC 6356's.
            self.cwnd_bytes += match coupling {
                None => (mss * mss / self.cwnd_bytes).max(1),
                Some(lia) => lia.increase_bytes(mss, self.cwnd_bytes),
            };
        }
        None
    }

    /// A duplicate acknowledgment of `snd_una`, with `snd_max` one past the highest segment
    /// sent and `flight_bytes` outstanding. Returns the segment to retransmit at once: on the
    /// third duplicate, unless it still belongs to the losses of the last recovery (RFC 6582
    /// §3.2 step 2, §4).
    pub fn on_dupack(&mut self, snd_una: u32, snd_max: u32, flight_bytes: u64) -> Option<u32> {
        let mss = self.mss_bytes;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4: each further duplicate means a segment left the network.
            self.cwnd_bytes += mss;
            return None;
        }
        self.dupacks += 1;
        if self.dupacks != 3 || snd_una < self.recover {
            return None;
        }
        self.ssthresh_bytes = (flight_bytes / 2).max(2 * mss);
        self.cwnd_bytes = self.ssthresh_bytes + 3 * mss;
        self.in_recovery = true;
        self.recover = snd_max;
        Some(snd_una)
    }

    /// The retransmission timer expired with `flight_bytes` outstanding and `snd_max` one past
    /// the highest segment sent: one segment of window, half the flight as threshold.
    pub fn on_timeout(&mut self, flight_bytes: u64, snd_max: u32) {
        let mss = self.mss_bytes;
        self.ssthresh_bytes = (flight_bytes / 2).max(2 * mss);
        self.cwnd_bytes = mss;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = snd_max;
    }

    /// An ECN-driven reduction (DCTCP's cut): the window becomes `cwnd_bytes` (at least one
    /// segment) and slow start ends there.
    pub fn reduce_to(&mut self, cwnd_bytes: u64) {
        self.cwnd_bytes = cwnd_bytes.max(self.mss_bytes);
        self.ssthresh_bytes = self.cwnd_bytes;
    }
}

/// TCP NewReno as a transport: not ECN-capable, ACKs that may be delayed, no keys of its own.
/// DCTCP and the line-rate sender state only what differs from it (MPTCP, whose coupling
/// NewReno's window uses, states all).
pub const TRANSPORT: TransportKind = TransportKind {
    name: "tcp",
    description: "TCP NewReno: slow start, AIMD, fast retransmit and recovery with partial ACKs, RTO (RFC 5681, 6582, 6298)",
    marks: Marks::None,
    needs_trimming: false,
    needs_lossless: false,
    delayed_acks: true,
    subflows: false,
    no_opening: None,
    own_keys: &[],
    ignored_keys: &[],
    ignored_because: "",
    check_keys: |_| Ok(()),
    check_routing: no_check,
};

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_doubles_per_round_then_avoidance_adds_one_segment_per_round() {
        let mut cc = NewReno::new(MSS, 2, Some(8));
        // Round 1: 2 ACKs -> 4 segments; round 2: 4 ACKs -> 8.
        for ack in 1..=6 {
            cc.on_new_ack(ack, 1, 0, None);
        }
        assert_eq!(cc.cwnd_bytes, 8 * MSS);
        // At ssthresh: a window of 8 ACKs adds about one segment.
        for ack in 7..=14 {
            cc.on_new_ack(ack, 1, 0, None);
        }
        assert!(
            (8 * MSS + 900..=9 * MSS).contains(&cc.cwnd_bytes),
            "{}",
            cc.cwnd_bytes
        );
    }

    #[test]
    fn three_dupacks_halve_partial_acks_retransmit_and_a_full_ack_deflates() {
        let mut cc = NewReno::new(MSS, 10, None);
        // Segments 0..10 in flight, 0 lost: three duplicate ACKs of 0.
        assert_eq!(cc.on_dupack(0, 10, 10 * MSS), None);
        assert_eq!(cc.on_dupack(0, 10, 10 * MSS), None);
        assert_eq!(cc.on_dupack(0, 10, 10 * MSS), Some(0));
        assert!(cc.in_recovery());
        assert_eq!(cc.ssthresh_bytes, 5 * MSS);
        assert_eq!(cc.cwnd_bytes, 8 * MSS);
        cc.on_dupack(0, 10, 10 * MSS);
        assert_eq!(cc.cwnd_bytes, 9 * MSS, "inflated by each further duplicate");
        // Segment 4 was lost too: the retransmission of 0 is acknowledged up to 4 (partial).
        assert_eq!(cc.on_new_ack(4, 4, 6 * MSS, None), Some(4));
        assert_eq!(cc.cwnd_bytes, 6 * MSS);
        assert!(cc.in_recovery());
        // Everything up to the recovery point: full acknowledgment.
        assert_eq!(cc.on_new_ack(10, 6, 0, None), None);
        assert!(!cc.in_recovery());
        assert_eq!(
            cc.cwnd_bytes,
            2 * MSS,
            "min(ssthresh, max(flight, mss) + mss)"
        );
    }

    #[test]
    fn a_timeout_restarts_from_one_segment_and_old_dupacks_do_not_retransmit_again() {
        let mut cc = NewReno::new(MSS, 10, None);
        cc.on_timeout(10 * MSS, 10);
        assert_eq!((cc.cwnd_bytes, cc.ssthresh_bytes), (MSS, 5 * MSS));
        for _ in 0..3 {
            assert_eq!(
                cc.on_dupack(3, 10, 7 * MSS),
                None,
                "losses of before the timeout"
            );
        }
    }
}
