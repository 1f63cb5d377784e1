//! The `gnet` section: hosts that send their IP packets over GNet's RTS/CTS protocol (Gibson
//! et al., "Aquila: A unified, low-latency fabric for datacenter networks", NSDI '22, §3.3,
//! Fig. 3) on a Clique of VC routers, and its own checks.

use serde::{Deserialize, Serialize};

use crate::blocks::gnet::classes::ClassLayout;
use crate::blocks::gnet::cts::CtsLimits;
use crate::blocks::gnet::wire::MAX_CLASSES_OF_SERVICE;
use crate::keys::{invalid, one_to, ScenarioError};

/// The largest IP packet a host sends (a jumbo frame's payload).
pub const MAX_PACKET_BYTES: u32 = 9_000;

/// IP over GNet at every host: `cell.size_bytes` is then the VC routers' flit, a data cell
/// (160 bytes) is several flits and an RTS, CTS or CTD (16 bytes) one; `vc_classes` places
/// each kind of cell in a VC class (`vc.classes` of them), RTS and CTS on the first by
/// default.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GnetConfig {
    /// Every IP packet's length, bytes (1 to 9 000); `traffic.load` is the share of the
    /// hosts' line rate their data cells take.
    pub packet_bytes: u32,
    /// Each host's ingress buffer, bytes: a packet that does not fit is dropped before its
    /// RTS (at least one packet).
    pub ingress_buffer_bytes: u64,
    /// RTSs an RTS queue holds.
    pub rts_queue_rts: u32,
    /// An RTS that finds this many RTSs in its queue is answered CTD, the packet dropped at
    /// its source (1 to `rts_queue_rts`).
    pub ctd_threshold_rts: u32,
    /// Packets granted (CTS sent) whose last data cell has not arrived, at most (at least 1).
    pub fetch_window_packets: u32,
    /// Each host port's reassembly buffer, bytes: a CTS goes out only once the packet's
    /// space is allocated (at least one packet).
    pub reassembly_bytes: u64,
    /// A packet leaving reassembly is ECN-marked if its RTS queue holds more RTSs than this
    /// (at most `rts_queue_rts`).
    pub ecn_threshold_rts: u32,
    /// The hosts stop generating packets at this time, in nanoseconds, so that the run
    /// drains; absent, or after the run's end (a run cut short): they send to the end.
    pub stop_ns: Option<f64>,
    /// The TiN's endpoint ports a host's data cells enter its switch by (Aquila §3.1), each
    /// its own input FIFO (one of the data class's VCs on the host's port), the cells spread
    /// over them in turn: 1 to the data class's VCs (`vc.count / vc.classes`).
    pub endpoint_ports: u16,
    /// The VC classes in priority order (served by strict priority, the first first), each
    /// the kinds of cell it carries: `rts`, `cts` (CTS and CTD), `req` (1RMA Req),
    /// `resp_high` and `resp_low` (1RMA Resp of high- and low-priority reads), `ip_data`,
    /// and `ip_data_0` to `ip_data_7` (the data cells of that IP class of service, which
    /// otherwise ride `ip_data`'s class); every kind in one class, `rts` in the first (its
    /// cells are routed deterministically). `vc.classes` is their number. Absent: RTS and
    /// CTS first, the rest after.
    pub vc_classes: Vec<Vec<String>>,
    /// The share of the packets in each IP class of service, class 0 first: 1 to 8 shares
    /// that sum to 1, each packet's class drawn at random. The egress queues a packet's RTS
    /// by its class and grants the classes by strict priority, and the ingress sends the
    /// granted packets of a class before those of the next on each VC class (§3.3); a class's
    /// data cells ride the `ip_data` VC class unless `vc_classes` names `ip_data_<c>`, and ECN
    /// marks read the depth of the packet's own class's RTS queue. Several classes add the
    /// `gnet_classes` table. Absent: one class.
    pub classes_of_service: Vec<f64>,
}

impl Default for GnetConfig {
    /// 4 KB packets (Fig. 7's lookups); a reassembly buffer of 64 KB, about the bandwidth-delay
    /// product of a 50 Gb/s host port over a fabric round trip of a few microseconds with room
    /// for reordering (§3.3 sizes it so); a fetch window of 8 packets; RTS queues of 64 with
    /// CTD at 48 and ECN above 16 (our values: the paper gives none).
    fn default() -> Self {
        GnetConfig {
            packet_bytes: 4_096,
            ingress_buffer_bytes: 4 << 20,
            rts_queue_rts: 64,
            ctd_threshold_rts: 48,
            fetch_window_packets: 8,
            reassembly_bytes: 64 << 10,
            ecn_threshold_rts: 16,
            stop_ns: None,
            endpoint_ports: 1,
            vc_classes: vec![
                vec!["rts".into(), "cts".into()],
                vec![
                    "ip_data".into(),
                    "req".into(),
                    "resp_high".into(),
                    "resp_low".into(),
                ],
            ],
            classes_of_service: vec![1.0],
        }
    }
}

impl GnetConfig {
    /// The CTS scheduler's limits: an RTS queue per class of service, one port per host
    /// endpoint.
    pub(super) fn limits(&self) -> CtsLimits {
        CtsLimits {
            classes: self.classes_of_service.len() as u8,
            ports: 1,
            queue_rts: self.rts_queue_rts,
            ctd_threshold_rts: self.ctd_threshold_rts,
            reassembly_bytes: self.reassembly_bytes,
            fetch_window: self.fetch_window_packets,
            ecn_threshold_rts: self.ecn_threshold_rts,
        }
    }

    /// The share of each class of service, 0 beyond the classes.
    pub(super) fn class_shares(&self) -> [f64; MAX_CLASSES_OF_SERVICE] {
        let mut shares = [0.0; MAX_CLASSES_OF_SERVICE];
        shares[..self.classes_of_service.len()].copy_from_slice(&self.classes_of_service);
        shares
    }

    /// The class layout `vc_classes` writes, or what is wrong with it.
    pub(super) fn layout(&self) -> Result<ClassLayout, ScenarioError> {
        ClassLayout::from_names(&self.vc_classes).map_err(|m| invalid("gnet.vc_classes", m))
    }

    /// Refuses sizes and thresholds the protocol cannot run with, naming the key.
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        one_to(
            "gnet.packet_bytes",
            self.packet_bytes,
            MAX_PACKET_BYTES,
            "bytes",
        )?;
        let packet = self.packet_bytes as u64;
        for (key, bytes) in [
            ("gnet.ingress_buffer_bytes", self.ingress_buffer_bytes),
            ("gnet.reassembly_bytes", self.reassembly_bytes),
        ] {
            if bytes < packet {
                return Err(invalid(
                    key,
                    format!("expected room for at least one packet of gnet.packet_bytes = {packet} bytes, got {bytes}"),
                ));
            }
        }
        if self.rts_queue_rts == 0 {
            return Err(invalid("gnet.rts_queue_rts", "expected at least one RTS"));
        }
        if self.ecn_threshold_rts > self.rts_queue_rts {
            return Err(invalid(
                "gnet.ecn_threshold_rts",
                format!(
                    "expected a marking threshold of at most the RTS queue's {} RTSs, got {}",
                    self.rts_queue_rts, self.ecn_threshold_rts
                ),
            ));
        }
        self.validate_classes_of_service()?;
        let services = self.classes_of_service.len();
        if let Some(named) = self.layout()?.last_service_named() {
            if named as usize >= services {
                let message = format!("ip_data_{named} names a class of service beyond gnet.classes_of_service's {services}: expected ip_data_0 to ip_data_{}", services - 1);
                return Err(invalid("gnet.vc_classes", message));
            }
        }
        self.limits().check().map_err(|(key, message)| match key {
            "fetch_window" => invalid("gnet.fetch_window_packets", message),
            _ => invalid(&format!("gnet.{key}"), message),
        })
    }

    /// Refuses shares that are not 1 to 8 non-negative numbers summing to 1.
    fn validate_classes_of_service(&self) -> Result<(), ScenarioError> {
        let key = "gnet.classes_of_service";
        let shares = &self.classes_of_service;
        if shares.is_empty() || shares.len() > MAX_CLASSES_OF_SERVICE {
            let message = format!(
                "expected 1 to {MAX_CLASSES_OF_SERVICE} shares, one per class of service, got {}",
                shares.len()
            );
            return Err(invalid(key, message));
        }
        if let Some(bad) = shares.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
            return Err(invalid(
                key,
                format!("expected shares of 0 to 1, got {bad}"),
            ));
        }
        let sum: f64 = shares.iter().sum();
        if (sum - 1.0).abs() > 1e-9 {
            return Err(invalid(
                key,
                format!("expected shares summing to 1, got {sum}"),
            ));
        }
        Ok(())
    }
}
