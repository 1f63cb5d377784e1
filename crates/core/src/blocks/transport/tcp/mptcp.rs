//! Multipath TCP's coupled congestion control, LIA (RFC 6356 §3–4; Raiciu et al., "Improving
//! datacenter performance and robustness with multipath TCP", SIGCOMM 2011): a connection runs
//! several subflows, each a NewReno sender with its own sequence space, loss recovery, slow
//! start and retransmission timer (RFC 6356 §3: "the algorithm only applies to the increase
//! phase of congestion avoidance"), whose congestion-avoidance increase per ACK of
//! `bytes_acked` is `min(alpha·bytes_acked·MSS/cwnd_total, bytes_acked·MSS/cwnd_i)`, with
//! `alpha = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²` (§3, §4). The goals
//! (§2): take no more than one TCP would on the best path, and at least as much as one TCP on
//! it. Here `bytes_acked` is one segment per ACK, as NewReno's own increase counts it (RFC 5681
//! eq. 3), so the second term is exactly NewReno's increase.
//!
//! The connection's data is shared among the subflows by [`SharedData`]: a subflow takes the
//! connection's next segment when its window opens, and retransmits on itself only.

use super::Sender;
use crate::blocks::transport::host_config::{HostConfig, MAX_PATH_LABELS};
use crate::blocks::transport::{no_check, Marks, TransportKind};
use crate::engine::time::TimePs;
use crate::keys::{invalid, ScenarioError};

/// What LIA needs of a connection at one ACK: its alpha and its total window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lia {
    /// RFC 6356's alpha: how aggressive the connection may be, as a whole, against one TCP.
    pub alpha: f64,
    /// The sum of the subflows' windows.
    pub total_cwnd_bytes: u64,
}

impl Lia {
    /// Alpha and the total window of a connection's subflows' window senders.
    pub fn of_windows<'a>(windows: impl Iterator<Item = &'a Sender> + Clone) -> Lia {
        Lia::of(windows.map(|s| (s.reno.cwnd_bytes, s.rto.srtt_ps())))
    }

    /// Alpha and the total window of subflows given as `(cwnd_bytes, srtt_ps)`, the smoothed
    /// round-trip times of RFC 6298. A subflow without a round-trip sample yet (srtt 0) counts
    /// toward the total window but not toward alpha's rates; with no sample at all, alpha is 1.
    pub fn of(subflows: impl Iterator<Item = (u64, TimePs)> + Clone) -> Lia {
        let total_cwnd_bytes: u64 = subflows.clone().map(|(cwnd, _)| cwnd).sum();
        let (mut best, mut sum) = (0.0f64, 0.0f64);
        for (cwnd, srtt_ps) in subflows.filter(|&(_, srtt)| srtt > 0) {
            let (cwnd, rtt) = (cwnd as f64, srtt_ps as f64);
            best = best.max(cwnd / (rtt * rtt));
            sum += cwnd / rtt;
        }
        let alpha = if sum > 0.0 {
            total_cwnd_bytes as f64 * best / (sum * sum)
        } else {
            1.0
        };
        Lia {
            alpha,
            total_cwnd_bytes,
        }
    }

    /// The coupled increase of a subflow's window `cwnd_bytes` per ACK of one `mss_bytes`
    /// segment in congestion avoidance (RFC 6356 §3), rounded, at least one byte as NewReno's.
    pub fn increase_bytes(&self, mss_bytes: u64, cwnd_bytes: u64) -> u64 {
        let mss = mss_bytes as f64;
        let coupled = self.alpha * mss * mss / self.total_cwnd_bytes.max(1) as f64;
        let tcp = mss_bytes * mss_bytes / cwnd_bytes.max(1);
        (coupled.round() as u64).min(tcp).max(1)
    }
}

/// A finite connection's segments not yet given to a subflow (unending: never short).
#[derive(Clone, Copy, Debug)]
pub struct SharedData {
    /// Segments left to hand out (`u32::MAX`: unending).
    unassigned_packets: u32,
}

impl SharedData {
    /// A connection of `packets` segments (`u32::MAX`: unending).
    pub fn new(packets: u32) -> Self {
        SharedData {
            unassigned_packets: packets,
        }
    }

    /// True while a segment is left to hand out.
    pub fn has_data(&self) -> bool {
        self.unassigned_packets > 0
    }

    /// Hands the next segment to a subflow: false if none is left.
    pub fn take(&mut self) -> bool {
        match self.unassigned_packets {
            0 => false,
            u32::MAX => true,
            _ => {
                self.unassigned_packets -= 1;
                true
            }
        }
    }
}

/// MPTCP as a transport: `host.subflows` NewReno subflows per connection, made at build.
pub const TRANSPORT: TransportKind = TransportKind {
    name: "mptcp",
    description: "MPTCP: host.subflows NewReno subflows, each on its own ECMP hash, with LIA's coupled increase (RFC 6356)",
    marks: Marks::None,
    needs_trimming: false,
    needs_lossless: false,
    delayed_acks: true,
    subflows: true,
    no_opening: Some("its subflows are made at build"),
    own_keys: &["host.subflows", "traffic.single_path_flows"],
    ignored_keys: &[],
    ignored_because: "",
    check_keys,
    check_routing: no_check,
};

/// The subflows of a connection: 1 to [`MAX_PATH_LABELS`].
fn check_keys(h: &HostConfig) -> Result<(), ScenarioError> {
    if !(1..=MAX_PATH_LABELS).contains(&h.subflows) {
        return Err(invalid(
            "host.subflows",
            format!("expected 1 to {MAX_PATH_LABELS} subflows"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::newreno::NewReno;
    use super::super::{Sender, SenderParams};
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn alpha_of_a_hand_computed_case() {
        // Windows 10 and 20 segments over 100 µs and 200 µs: rates 0.1 and 0.1 per µs,
        // max(cwnd/rtt²) = 10/100² = 1e-3, alpha = 30 · 1e-3 / 0.2² = 0.75.
        let lia = Lia::of([(10 * MSS, 100_000_000), (20 * MSS, 200_000_000)].into_iter());
        assert_eq!(lia.total_cwnd_bytes, 30 * MSS);
        assert!((lia.alpha - 0.75).abs() < 1e-12, "{}", lia.alpha);
        // The coupled term: 0.75 · 1000² / 30000 = 25 bytes, below TCP's 1000²/10000 = 100.
        assert_eq!(lia.increase_bytes(MSS, 10 * MSS), 25);
    }

    /// RFC 6356 §3-4 by hand on three subflows of unequal windows and round trips (MSS
    /// 1000 B), in this order: 30 segments over 50 µs, 4 over 10 µs, 200 over 200 µs.
    /// cwnd/rtt (segments per µs): 0.6, 0.4, 1, summing to 2; cwnd/rtt²: 0.012, 0.04, 0.005,
    /// the largest the second subflow's. alpha = cwnd_total · max(cwnd/rtt²) / (Σ cwnd/rtt)²
    /// = 234 · 0.04 / 2² = 2.34. Per ACK of one segment on subflow i the window grows by
    /// min(alpha·MSS²/cwnd_total, MSS²/cwnd_i): the coupled term is 2.34 · 1000² / 234 000 =
    /// 10 bytes for every subflow, TCP's 33, 250 and 5 bytes: the first two grow by 10 bytes,
    /// the third, whose window exceeds cwnd_total/alpha = 100 segments, by one TCP's 5.
    #[test]
    fn coupled_increase_of_three_unequal_subflows_by_hand() {
        let subflows = [
            (30 * MSS, 50_000_000),
            (4 * MSS, 10_000_000),
            (200 * MSS, 200_000_000),
        ];
        let lia = Lia::of(subflows.into_iter());
        assert_eq!(lia.total_cwnd_bytes, 234 * MSS);
        assert!((lia.alpha - 2.34).abs() < 1e-12, "alpha {}", lia.alpha);
        for (&(cwnd, _), increase) in subflows.iter().zip([10, 10, 5]) {
            assert_eq!(lia.increase_bytes(MSS, cwnd), increase, "cwnd {cwnd}");
            // A subflow in congestion avoidance (cwnd = ssthresh) takes the coupled increase.
            let segments = (cwnd / MSS) as u32;
            let mut reno = NewReno::new(MSS, segments, Some(segments));
            reno.on_new_ack(1, 1, cwnd - MSS, Some(&lia));
            assert_eq!(reno.cwnd_bytes, cwnd + increase, "cwnd {cwnd}");
        }
        // The same through a subflow's sender: its window of 4 grows by 10 bytes, not TCP's 250.
        let params = SenderParams {
            initial_ssthresh_packets: Some(4),
            ..SenderParams::newreno(MSS, 4)
        };
        let mut subflow = Sender::new(&params, u32::MAX);
        while subflow.next_segment(0).is_some() {}
        subflow.on_ack_coupled(10_000_000, 1, false, 0, Some(&lia));
        assert_eq!(subflow.reno.cwnd_bytes, 4 * MSS + 10);
    }

    #[test]
    fn one_subflow_is_tcp_and_equal_paths_share_one_tcps_increase() {
        let one = Lia::of([(12 * MSS, 50_000_000)].into_iter());
        assert!((one.alpha - 1.0).abs() < 1e-12);
        assert_eq!(one.increase_bytes(MSS, 12 * MSS), MSS * MSS / (12 * MSS));
        // n equal subflows of window w on equal RTTs: alpha = 1/n, and each grows by
        // MSS²/(n²·w) per ACK: MSS/n per round trip for the connection, whose losses (one
        // subflow's halving) cost it 1/n of a TCP's: in equilibrium, one TCP.
        let n = 4u64;
        let lia = Lia::of((0..n).map(|_| (10 * MSS, 50_000_000)));
        assert!((lia.alpha - 1.0 / n as f64).abs() < 1e-12);
        let each = lia.increase_bytes(MSS, 10 * MSS);
        assert_eq!(each, MSS * MSS / (n * n * 10 * MSS));
    }

    #[test]
    fn the_coupled_increase_never_exceeds_one_tcps() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |range: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            1 + state % range
        };
        for _ in 0..10_000 {
            let subflows: Vec<(u64, TimePs)> = (0..next(8))
                .map(|_| (next(200) * MSS, next(1_000) * 1_000_000 * (next(3) - 1)))
                .collect();
            let lia = Lia::of(subflows.iter().copied());
            for &(cwnd, _) in &subflows {
                let tcp = (MSS * MSS / cwnd).max(1);
                assert!(lia.increase_bytes(MSS, cwnd) <= tcp, "{subflows:?}");
            }
        }
    }

    #[test]
    fn shared_data_is_handed_out_once() {
        let mut data = SharedData::new(3);
        assert_eq!((0..5).filter(|_| data.take()).count(), 3);
        assert!(!data.has_data());
        let mut unending = SharedData::new(u32::MAX);
        assert!((0..5).all(|_| unending.take()) && unending.has_data());
    }
}
