//! The keys of a Stardust fabric adapter (Zilberman et al., NSDI '19, §3.3, §4.1): credits, pull
//! or push, and the `[adapter]` section, with their checks and the keys a choice leaves unread.

use serde::{Deserialize, Serialize};

use crate::blocks::sar::Packing;
use crate::engine::time::ps_from_ns;
use crate::scenario::{invalid, ScenarioError, UnusedKeys};

/// What becomes of the part of a credit a VOQ could not use because it emptied (§3.3: "the
/// amount of surplus data is stored for later accounting").
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UnusedCredit {
    /// Kept as the VOQ's balance, up to one credit, and spent on its next packets as they
    /// arrive, with no credit of their own (reading R7): a 64-byte ACK no longer costs a
    /// whole credit.
    #[default]
    Kept,
    /// Forfeited: every credit is spent at once or lost.
    Forfeited,
}

/// How a VOQ asks its destination port's credit scheduler (§4.1: the scheduler "is aware of
/// all VOQs toward its ports").
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RequestMode {
    /// The request carries the credits the VOQ's backlog needs beyond its balance and the
    /// credits already on their way; the scheduler grants exactly that many, round robin with
    /// the other VOQs owed credits (reading R1).
    #[default]
    Backlog,
    /// On when the VOQ needs credits, off when it needs none; the scheduler credits it round
    /// robin until the off arrives.
    OnOff,
}

/// How a port's credit scheduler picks among the VOQs owed credits (§4.1: it "is aware of all
/// VOQs toward its ports").
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CreditScheduler {
    /// Round robin over the VOQs, a turn giving a VOQ the credits that let it send again: one,
    /// plus one per whole credit it owes for overshooting its last with a whole packet (§3.3's
    /// surplus accounting, as far as the port can tell from the data it received), the next
    /// turn that many credit periods later (reading R38).
    #[default]
    Deficit,
    /// One credit per turn, round robin.
    RoundRobin,
}

/// What a VOQ holds (§3.2: "Each destination port (and priority) has an assigned VOQ"; App. G:
/// the htsim scheduler "uses a simple round robin between all flows").
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VoqKeying {
    /// One VOQ per destination host and class at each adapter: a port's scheduler takes
    /// turns over the source adapters (§3.2).
    #[default]
    PerPort,
    /// One VOQ per flow, a flow being one source host's packets to one destination host in
    /// one class: a port's scheduler takes turns over the flows (App. G; reading R43).
    PerFlow,
}

/// Credits.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CreditConfig {
    /// Bytes one credit lets a VOQ send (2–4 KB in the paper).
    pub size_bytes: u32,
    /// Credit rate above the port rate (3% in the htsim runs of §6.3).
    pub speedup: f64,
    /// What becomes of the part of a credit a VOQ could not use: "kept" (its balance, up to
    /// one credit, reading R7) or "forfeited".
    pub unused: UnusedCredit,
    /// How VOQs ask for credits: "backlog" (the credits they need, reading R1) or "on_off".
    pub requests: RequestMode,
    /// Credits also stay below the fabric's speed-up by the same margin (§4.1: "slightly
    /// below the fabric speed-up, to avoid congestion"; reading R5): where the fabric carries
    /// no more payload than the host ports take (fs = 1 with cell headers), the credit rate is
    /// the fabric's payload share less `speedup`, not the port rate plus it. False: the port
    /// rate plus `speedup` whatever the fabric.
    pub below_fabric: bool,
    /// How a port's scheduler takes turns: "deficit" (a turn gives a VOQ the credits that let
    /// it send again, reading R38) or "round_robin" (one credit a turn).
    pub scheduler: CreditScheduler,
}

impl Default for CreditConfig {
    fn default() -> Self {
        CreditConfig {
            size_bytes: 2048,
            speedup: 0.03,
            unused: UnusedCredit::default(),
            requests: RequestMode::default(),
            below_fabric: true,
            scheduler: CreditScheduler::default(),
        }
    }
}

/// Pull or push.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ModeConfig {
    /// True: VOQs send only on credit (Stardust). False: adapters push what arrives, round
    /// robin over their VOQs, and elements drop what does not fit (the push fabric of Fig. 7).
    pub credits: bool,
    /// True: a credit's packets are packed into cells as one unit, a cell ending one packet
    /// and beginning the next (§3.4). False: every packet begins a cell of its own and its
    /// last cell is padded to a full cell on the wire, as in a conventional cell switch (the
    /// "non-packed cells" design of §6.1.1, Fig. 8).
    pub packing: bool,
    /// Weights of the traffic classes at the ports' credit schedulers (weighted round robin,
    /// §4.1), one per class in use; absent: strict priority, class 0 first. Element queues
    /// serve classes by strict priority either way.
    pub class_weights: Option<Vec<u32>>,
}

impl Default for ModeConfig {
    fn default() -> Self {
        ModeConfig {
            credits: true,
            packing: true,
            class_weights: None,
        }
    }
}

/// Fabric adapters.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AdapterConfig {
    /// Packets a VOQ holds; a packet arriving at a full VOQ is dropped at the ingress
    /// (reading R14: 100 packets).
    pub voq_packets: u32,
    /// Data cells per uplink the adapter keeps queued for the fabric before it serves the next
    /// credit (the paper does not say; more keeps the uplinks busier under spraying, fewer
    /// holds data in VOQs: the permutation gets 94.2% at 1 and 94.8% at 2).
    pub uplink_cells: u32,
    /// Egress buffer (bytes queued for a host port) above which its scheduler stops issuing
    /// credits, resuming a credit below it. Absent: three fabric round trips of data at the
    /// port rate plus twice what one credit can release (a credit and, with surplus
    /// accounting, one more packet). Reading R6 says two credits plus one round trip; a
    /// credit's loop is longer (the credit's trip, then its data's, each with queueing, and
    /// the burst of a jumbo packet at the source's uplinks), and at R6's value jumbo packets
    /// on small credits starve the port (an incast finishes 13% late).
    pub egress_stop_bytes: Option<u64>,
    /// Bytes a host port's queue holds; a reassembled packet that does not fit is dropped at
    /// the egress. Absent: twice the stop threshold.
    pub egress_buffer_bytes: Option<u64>,
    /// Bytes of inter-packet gap and preamble every packet costs on a host link beyond its own
    /// (App. B: G = 12 + 8 = 20 on Ethernet; §2.3: packing pays them once per packed unit,
    /// not per packet). The built-in hosts space their packets and the host ports send them
    /// that much further apart. Default 0: the paper's simulations count utilization net of
    /// physical-protocol overheads (§6.2), and htsim (§6.3) has no gap. Not with transport
    /// hosts (their NICs have no gap).
    pub host_gap_bytes: u32,
    /// A stream gap still open after this long is given up and the packets it broke are
    /// discarded (§4.1; reading R15: 100 µs).
    pub reassembly_timeout_ns: f64,
    /// An adapter that receives a cell marked FCI cuts the credit rate of all its ports by
    /// this fraction, at most once per `fci_window_ns` (§4.2, §5.5: credits are "throttled"
    /// when a queue starts building; reading R12: 1/8, calibrated with the other two FCI keys
    /// so that Fig. 9's fabric offered 120% settles near the paper's 0.9). 0: no reaction.
    pub fci_decrease: f64,
    /// Every `fci_window_ns` without a cut, the credit rate recovers by this fraction of the
    /// nominal rate (additive increase, reading R12: 1/64; the paper gives no law).
    pub fci_increase: f64,
    /// The FCI reaction's window; absent: one fabric round trip (reading R12).
    pub fci_window_ns: Option<f64>,
    /// Host ports pause their hosts with 802.1Qbb PAUSE frames on the host link (plain
    /// Ethernet; not in the paper, whose adapter drops at a full VOQ, §3.1): a host whose
    /// data frames waiting in the adapter's VOQs reach `pause_xoff_packets` is paused until
    /// they drain to `pause_xon_packets`. Lets DCQCN and NDP run (`host.transport`); needs
    /// transport hosts.
    pub pause_hosts: bool,
    /// A host's data frames in the VOQs that pause it.
    pub pause_xoff_packets: u32,
    /// A paused host's data frames in the VOQs that resume it.
    pub pause_xon_packets: u32,
    /// Low-latency VOQs (§5.6: "a low latency VOQ starts transmitting immediately"): a packet
    /// of at most this many bytes that finds its VOQ empty (and no balance to send on) is sent
    /// at once, with no request and no credit, while the adapter's low-latency bound
    /// (`low_latency_gbps`) has room for it; else it waits for credits like any packet
    /// (readings R40, R41). Packets sent so may overflow element queues and egress buffers,
    /// which then drop them, counted there. Absent: off (pull mode only).
    pub low_latency_bytes: Option<u32>,
    /// The aggregate rate of an adapter's low-latency sends (§5.6: "a limited aggregate
    /// bandwidth of all low latency VOQs"), a token bucket one credit or one low-latency
    /// packet deep, whichever is larger (reading R41).
    pub low_latency_gbps: f64,
    /// The adapter's VOQs share one memory of this many bytes (§3.2: "MBs to GBs"): a packet
    /// that does not fit is dropped at the ingress, counted apart from a full VOQ's; each VOQ
    /// still holds at most `voq_packets` (reading R42). Absent: only `voq_packets` bounds the
    /// VOQs.
    pub ingress_buffer_bytes: Option<u64>,
    /// What a VOQ holds: "per_port" (one per destination host and class, §3.2) or "per_flow"
    /// (one per source host, destination host and class, the flows of App. G's htsim runs;
    /// reading R43): with per-flow VOQs the destination port's credit scheduler takes turns
    /// over the flows, not over the source adapters.
    pub voqs: VoqKeying,
    /// Data frames a host may still send past XOFF (what is on its way when it pauses: the
    /// frame the PAUSE waits behind on the host link, the host's frame on the wire and two
    /// propagation delays, under 3 jumbo frames at 10 Gbit/s and 1 µs); one more is dropped.
    pub pause_headroom_packets: u32,
}

impl Default for AdapterConfig {
    fn default() -> Self {
        AdapterConfig {
            voq_packets: 100,
            uplink_cells: 1,
            egress_stop_bytes: None,
            egress_buffer_bytes: None,
            host_gap_bytes: 0,
            reassembly_timeout_ns: 100_000.0,
            fci_decrease: 0.125,
            fci_increase: 1.0 / 64.0,
            fci_window_ns: None,
            pause_hosts: false,
            pause_xoff_packets: 8,
            pause_xon_packets: 4,
            pause_headroom_packets: 4,
            low_latency_bytes: None,
            low_latency_gbps: 1.0,
            ingress_buffer_bytes: None,
            voqs: VoqKeying::default(),
        }
    }
}

/// The largest host-link gap accepted: far above Ethernet's 20 bytes, and small enough that a
/// packet with its gap keeps within a host link's 32-bit byte counts.
const MAX_HOST_GAP_BYTES: u32 = 10_000;

impl CreditConfig {
    /// Checks the credit keys against the cell size.
    pub fn validate(&self, cell_bytes: u32) -> Result<(), ScenarioError> {
        if self.size_bytes < cell_bytes {
            return Err(invalid(
                "credit.size_bytes",
                format!("expected at least one cell (cell.size_bytes = {cell_bytes})"),
            ));
        }
        if !(self.speedup.is_finite() && (0.0..=1.0).contains(&self.speedup)) {
            return Err(invalid(
                "credit.speedup",
                "expected 0 to 1 (a fraction above the port rate)",
            ));
        }
        Ok(())
    }
}

impl ModeConfig {
    /// How packets are cut into cells: packed, or a cell per packet.
    pub fn cell_packing(&self) -> Packing {
        if self.packing {
            Packing::Packed
        } else {
            Packing::PerPacket
        }
    }

    /// Checks the class weights against the `classes` traffic classes in use.
    pub fn validate(&self, classes: usize) -> Result<(), ScenarioError> {
        if let Some(weights) = &self.class_weights {
            if weights.len() != classes || weights.contains(&0) {
                return Err(invalid(
                    "stardust.class_weights",
                    format!("expected {classes} positive weights, one per traffic class in use"),
                ));
            }
        }
        Ok(())
    }

    /// Adds the keys push mode does not read.
    pub fn unused(&self, unused: &mut UnusedKeys) {
        if !self.credits {
            unused.add(
                &[
                    "stardust.class_weights",
                    "element.pause_cells",
                    "credit.unused",
                    "credit.requests",
                    "adapter.low_latency_bytes",
                    "adapter.low_latency_gbps",
                ],
                "stardust.credits",
                "stardust.credits = false (push mode has no credit schedulers and never pauses)",
            );
        }
    }
}

impl AdapterConfig {
    /// Checks the adapter's own keys (the pause thresholds are checked with the hosts).
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.voq_packets == 0 {
            return Err(invalid("adapter.voq_packets", "expected at least 1 packet"));
        }
        if self.uplink_cells == 0 {
            return Err(invalid("adapter.uplink_cells", "expected at least 1 cell"));
        }
        if self.host_gap_bytes > MAX_HOST_GAP_BYTES {
            return Err(invalid(
                "adapter.host_gap_bytes",
                format!("expected 0 to {MAX_HOST_GAP_BYTES} bytes (Ethernet's is 20)"),
            ));
        }
        let positive_ns = |ns: f64| ns.is_finite() && ps_from_ns(ns) > 0;
        if !positive_ns(self.reassembly_timeout_ns) {
            return Err(invalid(
                "adapter.reassembly_timeout_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        let fraction = |x: f64| x.is_finite() && (0.0..1.0).contains(&x);
        if !fraction(self.fci_decrease) {
            return Err(invalid(
                "adapter.fci_decrease",
                "expected at least 0, below 1",
            ));
        }
        if !fraction(self.fci_increase) {
            return Err(invalid(
                "adapter.fci_increase",
                "expected at least 0, below 1",
            ));
        }
        if self.fci_window_ns.is_some_and(|ns| !positive_ns(ns)) {
            return Err(invalid(
                "adapter.fci_window_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        if self.low_latency_bytes == Some(0) {
            return Err(invalid(
                "adapter.low_latency_bytes",
                "expected at least 1 byte (absent: no low-latency VOQs)",
            ));
        }
        if !(self.low_latency_gbps.is_finite() && self.low_latency_rate_bps() > 0) {
            return Err(invalid(
                "adapter.low_latency_gbps",
                "expected a positive rate in Gbit/s",
            ));
        }
        if self.ingress_buffer_bytes == Some(0) {
            return Err(invalid(
                "adapter.ingress_buffer_bytes",
                "expected at least 1 byte (absent: VOQs bounded by adapter.voq_packets only)",
            ));
        }
        Ok(())
    }

    /// `low_latency_gbps` in bit/s.
    pub fn low_latency_rate_bps(&self) -> u64 {
        (self.low_latency_gbps * 1e9).round() as u64
    }

    /// Adds the keys an adapter that never pauses its hosts, or never reacts to FCI, does not
    /// read.
    pub fn unused(&self, unused: &mut UnusedKeys) {
        if !self.pause_hosts {
            unused.add(
                &[
                    "adapter.pause_xoff_packets",
                    "adapter.pause_xon_packets",
                    "adapter.pause_headroom_packets",
                ],
                "adapter.pause_hosts",
                "adapter.pause_hosts = false (adapters never pause their hosts)",
            );
        }
        if self.low_latency_bytes.is_none() {
            unused.add(
                &["adapter.low_latency_gbps"],
                "adapter.low_latency_bytes",
                "adapter.low_latency_bytes absent (no low-latency VOQs)",
            );
        }
        if self.fci_decrease == 0.0 {
            unused.add(
                &["adapter.fci_increase", "adapter.fci_window_ns"],
                "adapter.fci_decrease",
                "adapter.fci_decrease = 0 (no FCI reaction)",
            );
        }
    }
}
