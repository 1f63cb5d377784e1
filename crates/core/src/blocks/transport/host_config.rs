//! The `[host]` section of every fabric whose hosts run a transport (the Ethernet design's
//! hosts, and hosts on Stardust's host ports): the transport, its packets and its constants.
//! The keys every transport reads are checked here; each transport checks its own
//! ([`TransportKind::check_keys`](super::TransportKind::check_keys)) and lists them
//! ([`TransportKind::own_keys`](super::TransportKind::own_keys)).

use serde::{Deserialize, Serialize};

use super::dcqcn::keys::DcqcnKeys;
use super::ndp::keys::NdpKeys;
use super::tcp::dctcp_keys::DctcpKeys;
use super::{Transport, TRANSPORTS};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs};
use crate::keys::{invalid, ScenarioError};

/// The hosts' transport.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// The transport, by its name in [`TRANSPORTS`](super::TRANSPORTS).
    pub transport: Transport,
    /// MPTCP: subflows per connection, each on its own ECMP hash (8 in htsim's permutation
    /// runs the Stardust paper used, `-sub 8`).
    pub subflows: u32,
    /// Bytes of every data packet on the wire (9000 in the paper's baselines); goodput
    /// counts them whole, as htsim does.
    pub packet_bytes: u32,
    /// Bytes of an ACK on the wire (a minimum Ethernet frame).
    pub ack_bytes: u32,
    /// Initial congestion window in packets (RFC 6928: 10); NDP's initial window, sent at
    /// line rate before the first pull (htsim's `-cwnd`: 23 in the Stardust setup).
    pub initial_cwnd_packets: u32,
    /// Initial slow-start threshold in packets (htsim's permutation runs use 15); absent:
    /// unbounded (RFC 5681).
    pub initial_ssthresh_packets: Option<u32>,
    /// The smallest retransmission timeout, in nanoseconds (RFC 6298 says 1 s, far above a
    /// datacenter's round trips; 1 ms is a common datacenter setting).
    pub min_rto_ns: f64,
    /// The largest (backed-off) retransmission timeout, in nanoseconds.
    pub max_rto_ns: f64,
    /// Acknowledge every second segment (RFC 5681 §4.2) instead of each.
    pub delayed_ack: bool,
    /// With delayed ACKs: the longest an ACK waits, in nanoseconds.
    pub delayed_ack_ns: f64,
    /// DCTCP's constants (`[host.dctcp]`).
    pub dctcp: DctcpKeys,
    /// NDP's constants (`[host.ndp]`).
    pub ndp: NdpKeys,
    /// DCQCN's constants (`[host.dcqcn]`).
    pub dcqcn: DcqcnKeys,
    /// The line-rate sender: the most bytes a flow keeps unacknowledged (one bandwidth-delay
    /// product); absent: the fabric derives it from its longest path's base round trip.
    pub inflight_cap_bytes: Option<u64>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            transport: Transport::Tcp,
            subflows: 8,
            packet_bytes: 9000,
            ack_bytes: 64,
            initial_cwnd_packets: 10,
            initial_ssthresh_packets: None,
            min_rto_ns: 1_000_000.0,
            max_rto_ns: 1_000_000_000.0,
            delayed_ack: false,
            delayed_ack_ns: 40_000.0,
            dctcp: DctcpKeys::default(),
            ndp: NdpKeys::default(),
            dcqcn: DcqcnKeys::default(),
            inflight_cap_bytes: None,
        }
    }
}

/// Packets carry their size in 16 bits.
pub const MAX_PACKET_BYTES: u32 = u16::MAX as u32;
/// The most path labels a flow may use: an MPTCP connection's subflows or an NDP sender's
/// paths (labels are 16 bits; more than a fat-tree's paths between pods would only share
/// paths).
pub const MAX_PATH_LABELS: u32 = 1024;

/// The keys NewReno's loss recovery reads (its initial window and threshold, its
/// retransmission timer, its delayed ACKs): what a transport without it ignores.
pub const RECOVERY_KEYS: &[&str] = &[
    "host.initial_cwnd_packets",
    "host.initial_ssthresh_packets",
    "host.min_rto_ns",
    "host.max_rto_ns",
    "host.delayed_ack",
    "host.delayed_ack_ns",
];

impl HostConfig {
    /// The keys the window transports read that this one does not, and why (none for the
    /// window transports): the same on every fabric its hosts run on.
    pub fn unused_by_transport(&self) -> (Vec<&'static str>, &'static str) {
        let kind = self.transport.kind();
        (kind.ignored_keys.concat(), kind.ignored_because)
    }

    /// NDP's pull pacer interval on a host link of `rate_bps`: one data packet's time (NDP
    /// §3.2), scaled by htsim's pull rate modifier; `None` for the other transports.
    pub fn ndp_pull_interval_ps(&self, rate_bps: u64) -> Option<TimePs> {
        self.transport.kind().needs_trimming.then(|| {
            let packet_ps = serialization_ps(self.packet_bytes as u64, rate_bps);
            (packet_ps as f64 / self.ndp.pull_rate).round() as TimePs
        })
    }

    /// Checks the section's own values (those that need no other section).
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.check_common()?;
        TRANSPORTS.iter().try_for_each(|t| (t.check_keys)(self))
    }

    /// Checks the section's keys that every transport reads.
    fn check_common(&self) -> Result<(), ScenarioError> {
        let h = self;
        if !(1..=MAX_PACKET_BYTES).contains(&h.packet_bytes) {
            return Err(invalid(
                "host.packet_bytes",
                format!("expected 1 to {MAX_PACKET_BYTES} bytes"),
            ));
        }
        if !(1..=MAX_PACKET_BYTES).contains(&h.ack_bytes) {
            return Err(invalid(
                "host.ack_bytes",
                format!("expected 1 to {MAX_PACKET_BYTES} bytes"),
            ));
        }
        if h.initial_cwnd_packets == 0 {
            return Err(invalid(
                "host.initial_cwnd_packets",
                "expected at least 1 packet",
            ));
        }
        if h.initial_ssthresh_packets.is_some_and(|p| p < 2) {
            return Err(invalid(
                "host.initial_ssthresh_packets",
                "expected at least 2 packets (RFC 5681's smallest ssthresh)",
            ));
        }
        let positive_ns = |ns: f64| ns.is_finite() && ps_from_ns(ns) > 0;
        if !positive_ns(h.min_rto_ns) {
            return Err(invalid(
                "host.min_rto_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        if !(positive_ns(h.max_rto_ns) && h.max_rto_ns >= h.min_rto_ns) {
            return Err(invalid(
                "host.max_rto_ns",
                format!("expected at least host.min_rto_ns ({} ns)", h.min_rto_ns),
            ));
        }
        if !positive_ns(h.delayed_ack_ns) {
            return Err(invalid(
                "host.delayed_ack_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NDP §3.2: a host's pull pacer releases one PULL per data packet time on its own link,
    /// serialization of `host.packet_bytes` at the link's rate, stretched by 1/`host.ndp.pull_rate`.
    #[test]
    fn the_pull_interval_is_one_data_packet_time_on_the_host_link() {
        let ndp = HostConfig {
            transport: Transport::Ndp,
            ..HostConfig::default()
        };
        assert_eq!(ndp.packet_bytes, 9000);
        assert_eq!(
            ndp.ndp_pull_interval_ps(10_000_000_000),
            Some(7_200_000),
            "9000 B at 10 Gbit/s"
        );
        assert_eq!(ndp.ndp_pull_interval_ps(25_000_000_000), Some(2_880_000));
        assert_eq!(ndp.ndp_pull_interval_ps(100_000_000_000), Some(720_000));
        let small = HostConfig {
            packet_bytes: 1500,
            ..ndp.clone()
        };
        assert_eq!(small.ndp_pull_interval_ps(10_000_000_000), Some(1_200_000));
        let half = HostConfig {
            ndp: NdpKeys {
                pull_rate: 0.5,
                ..NdpKeys::default()
            },
            ..ndp.clone()
        };
        assert_eq!(half.ndp_pull_interval_ps(10_000_000_000), Some(14_400_000));
        assert_eq!(
            HostConfig::default().ndp_pull_interval_ps(10_000_000_000),
            None,
            "no pacer for TCP"
        );
    }
}
