//! The `[host]` section of every fabric whose hosts run a transport (the Ethernet design's
//! hosts, and hosts on Stardust's host ports): the transport, its packets and its constants,
//! read into the [`HostParams`] of each [`Host`](super::host::Host).

use serde::{Deserialize, Serialize};

use super::host::HostParams;
use crate::blocks::transport::dcqcn::DcqcnParams;
use crate::blocks::transport::{SenderParams, Transport};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs};
use crate::keys::{invalid, ScenarioError};

/// The hosts' transport.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// `tcp` (NewReno), `dctcp`, `mptcp`, `ndp` or `dcqcn`.
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
    /// DCTCP's estimation gain g (1/16 in the paper).
    pub dctcp_g: f64,
    /// NDP: the pull pacer's rate as a fraction of the host's line rate in data packets
    /// (htsim's `pull_rate_modifier`; 1: one PULL per data packet time, as its mains run).
    pub ndp_pull_rate: f64,
    /// NDP: path labels per flow (§3.3, htsim's `PULL_BASED` path choice): each sender puts
    /// every packet on the next label of a permutation of `0..ndp_paths`, which ECMP hashes
    /// to a path (`routing.mode = "ecmp"`), and skips labels whose NACKs and returned headers
    /// run above the others'; 0 (the default): no labels, the switches spray.
    pub ndp_paths: u32,
    /// DCQCN: α's gain g (1/256 in the paper).
    pub dcqcn_g: f64,
    /// DCQCN: α decays after this long without a CNP, in nanoseconds (K = 55 µs).
    pub dcqcn_alpha_interval_ns: f64,
    /// DCQCN: the rate-increase timer's period, in nanoseconds (T = 55 µs).
    pub dcqcn_timer_ns: f64,
    /// DCQCN: the rate-increase byte counter's period (B = 10 MB).
    pub dcqcn_byte_counter_bytes: u64,
    /// DCQCN: fast-recovery stages before additive increase (F = 5).
    pub dcqcn_fast_recovery_stages: u32,
    /// DCQCN: additive increase step R_AI in Mbit/s (the paper's 40 at 40 Gbit/s, scaled
    /// to 10); also the lowest rate a cut reaches.
    pub dcqcn_rate_ai_mbps: f64,
    /// DCQCN: hyper increase step R_HAI in Mbit/s (10 × R_AI).
    pub dcqcn_rate_hai_mbps: f64,
    /// DCQCN: a receiver sends a flow at most one CNP per this interval, in nanoseconds
    /// (N = 50 µs).
    pub dcqcn_cnp_interval_ns: f64,
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
            dctcp_g: 1.0 / 16.0,
            ndp_pull_rate: 1.0,
            ndp_paths: 0,
            dcqcn_g: 1.0 / 256.0,
            dcqcn_alpha_interval_ns: 55_000.0,
            dcqcn_timer_ns: 55_000.0,
            dcqcn_byte_counter_bytes: 10_000_000,
            dcqcn_fast_recovery_stages: 5,
            dcqcn_rate_ai_mbps: 10.0,
            dcqcn_rate_hai_mbps: 100.0,
            dcqcn_cnp_interval_ns: 50_000.0,
        }
    }
}

/// The `[host]` keys only DCQCN reads.
pub const DCQCN_HOST_KEYS: &[&str] = &[
    "host.dcqcn_g",
    "host.dcqcn_alpha_interval_ns",
    "host.dcqcn_timer_ns",
    "host.dcqcn_byte_counter_bytes",
    "host.dcqcn_fast_recovery_stages",
    "host.dcqcn_rate_ai_mbps",
    "host.dcqcn_rate_hai_mbps",
    "host.dcqcn_cnp_interval_ns",
];

/// Packets carry their size in 16 bits.
const MAX_PACKET_BYTES: u32 = u16::MAX as u32;
/// The most subflows an MPTCP connection may have (their path labels are 16 bits; more than
/// a fat-tree's paths between pods would only share paths).
const MAX_SUBFLOWS: u32 = 1024;

impl HostConfig {
    /// The hosts' settings this section gives, goodput counted from `measure_from_ps`: one
    /// reading for every fabric whose hosts run a transport (Ethernet's hosts, and hosts on
    /// Stardust's host ports).
    pub fn params(&self, measure_from_ps: TimePs) -> HostParams {
        let dctcp = self.transport == Transport::Dctcp;
        let dcqcn = self.transport == Transport::Dcqcn;
        HostParams {
            sender: SenderParams {
                mss_bytes: self.packet_bytes as u64,
                initial_cwnd_packets: self.initial_cwnd_packets,
                initial_ssthresh_packets: self.initial_ssthresh_packets,
                min_rto_ps: ps_from_ns(self.min_rto_ns),
                max_rto_ps: ps_from_ns(self.max_rto_ns),
                dctcp_g: dctcp.then_some(self.dctcp_g),
            },
            ack_bytes: self.ack_bytes as u16,
            ecn_capable: dctcp || dcqcn,
            delayed_ack_ps: (self.delayed_ack
                && !matches!(self.transport, Transport::Ndp | Transport::Dcqcn))
            .then(|| ps_from_ns(self.delayed_ack_ns)),
            measure_from_ps,
            ndp_pull_interval_ps: None,
            ndp_paths: None,
            pfc_classes: 1,
            bfc_queues: None,
            dcqcn: dcqcn.then(|| DcqcnParams {
                g: self.dcqcn_g,
                alpha_interval_ps: ps_from_ns(self.dcqcn_alpha_interval_ns),
                timer_ps: ps_from_ns(self.dcqcn_timer_ns),
                byte_counter_bytes: self.dcqcn_byte_counter_bytes,
                fast_recovery_stages: self.dcqcn_fast_recovery_stages,
                rate_ai_bps: self.dcqcn_rate_ai_mbps * 1e6,
                rate_hai_bps: self.dcqcn_rate_hai_mbps * 1e6,
                cnp_interval_ps: ps_from_ns(self.dcqcn_cnp_interval_ns),
            }),
            into_cut_through: false,
        }
    }

    /// The host keys NDP and DCQCN do not read, and why (none for the window transports):
    /// the same on every fabric their hosts run on.
    pub fn unused_by_transport(&self) -> (&'static [&'static str], &'static str) {
        match self.transport {
            Transport::Dcqcn => (
                &[
                    "host.dctcp_g",
                    "host.initial_cwnd_packets",
                    "host.initial_ssthresh_packets",
                    "host.min_rto_ns",
                    "host.max_rto_ns",
                    "host.delayed_ack",
                    "host.delayed_ack_ns",
                ],
                "host.transport = \"dcqcn\" (rate-based: no window, no retransmission, no ACKs; RED marks)",
            ),
            Transport::Ndp => (
                &[
                    "host.dctcp_g",
                    "host.initial_ssthresh_packets",
                    "host.delayed_ack",
                    "host.delayed_ack_ns",
                ],
                "host.transport = \"ndp\" (no ECN, no slow start, an ACK or NACK per packet)",
            ),
            Transport::Tcp | Transport::Dctcp | Transport::Mptcp => (&[], ""),
        }
    }

    /// NDP's pull pacer interval on a host link of `rate_bps`: one data packet's time (NDP
    /// §3.2), scaled by htsim's pull rate modifier; `None` for the other transports.
    pub fn ndp_pull_interval_ps(&self, rate_bps: u64) -> Option<TimePs> {
        (self.transport == Transport::Ndp).then(|| {
            let packet_ps = serialization_ps(self.packet_bytes as u64, rate_bps);
            (packet_ps as f64 / self.ndp_pull_rate).round() as TimePs
        })
    }

    /// Checks the section's own values (those that need no other section).
    pub fn validate(&self) -> Result<(), ScenarioError> {
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
        if !(1..=MAX_SUBFLOWS).contains(&h.subflows) {
            return Err(invalid(
                "host.subflows",
                format!("expected 1 to {MAX_SUBFLOWS} subflows"),
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
        if !(h.dctcp_g.is_finite() && h.dctcp_g > 0.0 && h.dctcp_g <= 1.0) {
            return Err(invalid("host.dctcp_g", "expected above 0, at most 1"));
        }
        if !(h.dcqcn_g.is_finite() && h.dcqcn_g > 0.0 && h.dcqcn_g <= 1.0) {
            return Err(invalid("host.dcqcn_g", "expected above 0, at most 1"));
        }
        for (key, ns) in [
            ("host.dcqcn_alpha_interval_ns", h.dcqcn_alpha_interval_ns),
            ("host.dcqcn_timer_ns", h.dcqcn_timer_ns),
            ("host.dcqcn_cnp_interval_ns", h.dcqcn_cnp_interval_ns),
        ] {
            if !positive_ns(ns) {
                return Err(invalid(key, "expected a positive number of nanoseconds"));
            }
        }
        if h.dcqcn_byte_counter_bytes == 0 {
            return Err(invalid(
                "host.dcqcn_byte_counter_bytes",
                "expected at least 1 byte",
            ));
        }
        if h.dcqcn_fast_recovery_stages == 0 {
            return Err(invalid(
                "host.dcqcn_fast_recovery_stages",
                "expected at least 1",
            ));
        }
        for (key, mbps) in [
            ("host.dcqcn_rate_ai_mbps", h.dcqcn_rate_ai_mbps),
            ("host.dcqcn_rate_hai_mbps", h.dcqcn_rate_hai_mbps),
        ] {
            if !(mbps.is_finite() && mbps > 0.0 && mbps <= 1e6) {
                return Err(invalid(key, "expected above 0, at most 1e6 Mbit/s"));
            }
        }
        if h.ndp_paths > MAX_SUBFLOWS {
            return Err(invalid(
                "host.ndp_paths",
                format!("expected 0 to {MAX_SUBFLOWS} path labels"),
            ));
        }
        if !(h.ndp_pull_rate.is_finite() && h.ndp_pull_rate >= 0.01 && h.ndp_pull_rate <= 10.0) {
            return Err(invalid(
                "host.ndp_pull_rate",
                "expected 0.01 to 10 (a fraction of the line rate)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NDP §3.2: a host's pull pacer releases one PULL per data packet time on its own link,
    /// serialization of `host.packet_bytes` at the link's rate, stretched by 1/`ndp_pull_rate`.
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
            ndp_pull_rate: 0.5,
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
