//! The line-rate sender capped at one bandwidth-delay product of inflight, the end host the
//! evaluation of Goyal et al., "Backpressure Flow Control" (NSDI 2022) runs under BFC: a flow
//! starts at line rate and keeps sending at line rate while its unacknowledged bytes stay
//! within one BDP (line rate × the base round trip); it has no congestion control of its own
//! and leaves congestion to the switches' per-hop backpressure.
//!
//! The window rule is [`InflightCap`]: a segment may go when the bytes in flight plus that
//! segment fit in the cap. The cap is `host.inflight_cap_bytes` when given; without it, the
//! fabric derives it ([`base_rtt_ps`], [`InflightCap::of_path`]) from its longest host-to-host
//! path: the host's line rate times the base round trip of that path (a full data segment
//! stored and forwarded on every link, an ACK back the same way, every link's propagation
//! both ways). So every flow of a run has the cap of the fabric's longest path, one cap per
//! run; a shorter path's flow may have more than its own path's BDP in flight.
//!
//! Acknowledgments and loss recovery are the TCP family's ([`super::tcp::Sender`] and the
//! in-order receiver): cumulative ACKs (delayed if `host.delayed_ack`), NewReno's fast
//! retransmit and partial-ACK retransmissions (RFC 6582), and the retransmission timer with
//! go-back-N (RFC 6298). Only the window differs: the cap replaces NewReno's congestion
//! window, which never limits this sender, so a loss costs no rate.

use super::host_config::HostConfig;
use super::TransportKind;
use crate::engine::time::{serialization_ps, TimePs};
use crate::keys::{invalid, ScenarioError};

/// The line-rate sender as a transport: no ECN, NewReno's loss recovery, any port kind (what
/// it does not state is NewReno's).
pub const TRANSPORT: TransportKind = TransportKind {
    name: "line_rate",
    description: "line-rate senders capped at one bandwidth-delay product of inflight (host.inflight_cap_bytes, or the fabric's longest path), TCP's ACKs and loss recovery: BFC's end hosts (Goyal et al. 2022)",
    own_keys: &["host.inflight_cap_bytes"],
    ignored_keys: &[&[
        "host.initial_cwnd_packets",
        "host.initial_ssthresh_packets",
        "host.dctcp.g",
    ]],
    ignored_because: "host.transport = \"line_rate\" (no congestion window: one bandwidth-delay product of inflight from the start)",
    check_keys,
    ..super::tcp::newreno::TRANSPORT
};

/// The cap, when given, holds at least one segment.
fn check_keys(h: &HostConfig) -> Result<(), ScenarioError> {
    match h.inflight_cap_bytes {
        Some(cap) if cap < h.packet_bytes as u64 => Err(invalid(
            "host.inflight_cap_bytes",
            format!(
                "expected at least one segment (host.packet_bytes = {}), got {cap}",
                h.packet_bytes
            ),
        )),
        _ => Ok(()),
    }
}

/// The base round trip of a path of `links` store-and-forward links of `rate_bps` and
/// `propagation_ps` each: a data segment of `mss_bytes` out and an ACK of `ack_bytes` back,
/// each serialized on every link, and every link's propagation both ways.
pub fn base_rtt_ps(
    links: u64,
    rate_bps: u64,
    propagation_ps: TimePs,
    mss_bytes: u64,
    ack_bytes: u64,
) -> TimePs {
    let per_link_ps = serialization_ps(mss_bytes, rate_bps)
        + serialization_ps(ack_bytes, rate_bps)
        + 2 * propagation_ps;
    links * per_link_ps
}

/// One flow's window rule: its unacknowledged bytes stay within `bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InflightCap {
    /// The most bytes in flight (one bandwidth-delay product).
    pub bytes: u64,
}

impl InflightCap {
    /// One BDP: `rate_bps` times `rtt_ps`, in whole bytes (rounded down), and at least
    /// `mss_bytes` so a segment can always go.
    pub fn of_path(rate_bps: u64, rtt_ps: TimePs, mss_bytes: u64) -> Self {
        let bytes = (rate_bps as u128 * rtt_ps as u128 / 8 / 1_000_000_000_000) as u64;
        InflightCap {
            bytes: bytes.max(mss_bytes),
        }
    }

    /// True if a segment of `segment_bytes` may go with `flight_bytes` unacknowledged.
    pub fn allows(&self, flight_bytes: u64, segment_bytes: u64) -> bool {
        flight_bytes + segment_bytes <= self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Aquarius slides' fat-tree longest path, by hand: 6 links of 100 Gbit/s and 1 µs.
    /// Per link: a 1000-byte segment 80 ns, a 64-byte ACK 5.12 ns, 2 µs of propagation, so
    /// 2085.12 ns; six links 12 510.72 ns. At 100 Gbit/s that is 12 510.72 ns × 12.5 B/ns =
    /// 156 384 bytes: 156 segments of 1000 bytes may be in flight, not 157.
    #[test]
    fn one_bdp_of_the_fat_trees_longest_path_worked_by_hand() {
        let rtt_ps = base_rtt_ps(6, 100_000_000_000, 1_000_000, 1000, 64);
        assert_eq!(rtt_ps, 12_510_720);
        let cap = InflightCap::of_path(100_000_000_000, rtt_ps, 1000);
        assert_eq!(cap.bytes, 156_384);
        let mut flight = 0;
        while cap.allows(flight, 1000) {
            flight += 1000;
        }
        assert_eq!(flight, 156_000, "156 segments");
        assert!(cap.allows(155_000, 1000) && !cap.allows(156_000, 1000));
        assert!(
            cap.allows(156_000, 384),
            "a short last segment fits exactly"
        );
        assert!(!cap.allows(156_000, 385));
    }

    /// A path too short for one segment still lets one go (the sender never stalls).
    #[test]
    fn the_cap_holds_at_least_one_segment() {
        let cap = InflightCap::of_path(1_000_000_000, 1_000, 9000);
        assert_eq!(cap.bytes, 9000);
        assert!(cap.allows(0, 9000) && !cap.allows(1, 9000));
    }

    #[test]
    fn a_cap_below_one_segment_is_refused_naming_the_key() {
        let h = HostConfig {
            inflight_cap_bytes: Some(999),
            packet_bytes: 1000,
            ..HostConfig::default()
        };
        let e = check_keys(&h).unwrap_err();
        assert_eq!(e.key, "host.inflight_cap_bytes");
        assert!(e.to_string().contains("got 999"), "{e}");
        let fits = HostConfig {
            inflight_cap_bytes: Some(1000),
            ..h
        };
        assert!(check_keys(&fits).is_ok());
    }
}
