//! Clint's scenario: the validated description of one run (Eberle and Gura 2002, §2–4), read from
//! the same JSON the front ends make of TOML files and `--set` overrides. Unknown keys, wrong types
//! and impossible values are rejected with one [`ScenarioError`] naming the key.

use serde::{Deserialize, Serialize};

use super::nic::{Retransmission, REORDER_WINDOW};
use crate::blocks::port_set::MAX_PORTS;
use crate::scenario::{RunConfig, ScenarioError, Unused, UnusedKeys};

fn invalid(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.into(),
        message: message.into(),
    }
}

/// A whole Clint scenario.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClintConfig {
    /// The design: `"clint"` (every other design has keys of its own: `cellfabric keys`).
    pub design: String,
    /// Hosts, each with a bulk and a quick port (16 in the paper).
    #[serde(default = "default_nodes")]
    pub nodes: u32,
    /// Run length, warm-up and seed (the paper's 10⁷ cycles of 4 ns are 40 ms).
    #[serde(default = "default_run")]
    pub run: RunConfig,
    /// Which architecture runs.
    #[serde(default)]
    pub channel: ChannelConfig,
    /// Offered traffic (§4.1).
    #[serde(default)]
    pub traffic: TrafficConfig,
    /// The network interface cards (§3.1).
    #[serde(default)]
    pub nic: NicConfig,
    /// The bulk channel (§3.2–3.3).
    #[serde(default)]
    pub bulk: BulkConfig,
    /// The quick channel (§3.2, §3.4).
    #[serde(default)]
    pub quick: QuickConfig,
    /// Every cable, both channels.
    #[serde(default)]
    pub link: LinkConfig,
}

fn default_nodes() -> u32 {
    16
}

fn default_run() -> RunConfig {
    RunConfig {
        seed: 1,
        duration_ns: 40_000_000.0,
        warmup_ns: 4_000_000.0,
        ..RunConfig::default()
    }
}

/// The architectures of §4.2: four bulk channels and two quick channels.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
pub enum Architecture {
    /// Unscheduled bulk channel; colliding packets are dropped and retransmitted.
    B1,
    /// Unscheduled bulk channel; back pressure holds colliding packets at their initiators.
    B2,
    /// Unscheduled bulk channel with output buffers; overflowing packets are dropped.
    B3,
    /// Clint's globally scheduled bulk channel.
    #[default]
    B4,
    /// Clint's best-effort quick channel.
    Q1,
    /// The quick channel interleaving acknowledgments into requests in switch and NIC.
    Q2,
}

impl Architecture {
    /// True for the quick-channel architectures (the data rides the quick channel).
    pub fn is_quick(self) -> bool {
        matches!(self, Architecture::Q1 | Architecture::Q2)
    }

    /// Name as in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            Architecture::B1 => "B1",
            Architecture::B2 => "B2",
            Architecture::B3 => "B3",
            Architecture::B4 => "B4",
            Architecture::Q1 => "Q1",
            Architecture::Q2 => "Q2",
        }
    }
}

/// Which architecture runs.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ChannelConfig {
    /// `B1`, `B2`, `B3`, `B4`, `Q1` or `Q2`.
    pub architecture: Architecture,
}

/// How the time between a node's injections is drawn (§4.1 says "a uniform distribution").
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Intervals {
    /// Uniform over [0, 2 × mean], the widest uniform law with the mean: the intervals are
    /// uniformly distributed.
    #[default]
    Uniform,
    /// Every 4 ns cycle injects with the same probability (geometric intervals, memoryless):
    /// the injection instants are uniformly distributed in time.
    Geometric,
}

/// Offered traffic (§4.1): uniform destinations, uniformly distributed injection intervals,
/// optional bursts of uniformly distributed length.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Request packets generated per node, as a fraction of the link's data bandwidth.
    pub load: f64,
    /// How intervals between injections are drawn.
    pub intervals: Intervals,
    /// Generate bursts of 1 to `burst_max_packets` packets (uniform) to one target.
    pub bursty: bool,
    /// Longest burst (5 in the paper).
    pub burst_max_packets: u32,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            load: 0.5,
            intervals: Intervals::Uniform,
            bursty: false,
            burst_max_packets: 5,
        }
    }
}

/// The network interface cards (§3.1).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Bulk send buffers per NIC (16 in §4.2).
    pub bulk_send_buffers: u32,
    /// Quick send buffers per NIC (4 in §4.2).
    pub quick_send_buffers: u32,
    /// Bulk send buffers one target may hold, so a blocked target cannot take them all (§3.1).
    pub bulk_prefetch_per_target: u32,
    /// Bulk receive buffers per NIC; a request finding none is NAKed.
    pub bulk_receive_buffers: u32,
    /// Quick receive buffers per NIC.
    pub quick_receive_buffers: u32,
    /// Time the host takes to consume a received message and return its buffer.
    pub host_receive_ns: u64,
    /// Bulk loss timeout after a request is sent; absent: 20 µs (the paper's bulk round trip),
    /// plus a full output buffer's drain time for B3.
    pub bulk_timeout_ns: Option<u64>,
    /// Quick loss timeout after a request is sent: twice the paper's 1 µs quick round trip (§3.2),
    /// above the longest loss-free round trip (Q1: an acknowledgment waits for a request).
    pub quick_timeout_ns: u64,
    /// What a target does with a request ahead of a missing one of its pair: `selective` holds
    /// it in a receive buffer, `go_back_n` NAKs it.
    pub retransmission: Retransmission,
    /// The PCI bus between host and NIC (§3.1), in Gbit/s: the NIC fetches each message from
    /// host memory into a send buffer and writes each received one into host memory over it,
    /// one transfer at a time. Absent: transfers take no time, as in the paper's simulation
    /// (§4.1); a 64-bit bus at the NIC's 66 MHz PCI clock (§3.5) carries 4.224.
    pub pci_gbps: Option<f64>,
    /// Fixed cost of each PCI transfer (arbitration, address phase, the IOMMU's translation),
    /// added to its bytes' time; read only with `nic.pci_gbps`.
    pub pci_overhead_ns: u64,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            bulk_send_buffers: 16,
            quick_send_buffers: 4,
            bulk_prefetch_per_target: 8,
            bulk_receive_buffers: 16,
            quick_receive_buffers: 16,
            host_receive_ns: 0,
            bulk_timeout_ns: None,
            quick_timeout_ns: 2_000,
            retransmission: Retransmission::Selective,
            pci_gbps: None,
            pci_overhead_ns: 0,
        }
    }
}

/// The bulk channel.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BulkConfig {
    /// Data rate in Gbit/s (2; 2.5 Gbaud on the wire with 8B/10B).
    pub rate_gbps: f64,
    /// Forwarding delay of the analog switch in nanoseconds (1.5).
    pub switch_delay_ns: f64,
    /// Gap at the start of each slot for receiver PLL locking and misalignment (5% of a slot,
    /// §3.5).
    pub slot_gap_ns: u64,
    /// Time the central arbiter takes to compute a schedule (not given in the paper).
    pub arbiter_ns: u64,
    /// B3: packet buffers per switch output (16 in §4.2).
    pub output_buffers: u32,
    /// Initiators every target's enable vector excludes (never granted).
    pub disabled_initiators: Vec<u32>,
    /// Bit error rate of every bulk link, per line bit (10 per byte with 8B/10B, §2): a request
    /// with an error fails its CRC at the target, which returns no acknowledgment (§3.3). The
    /// paper's simulation assumes none (§4.2).
    pub bit_error_rate: f64,
    /// B4: a node without a grant may send a ready request at once, unscheduled, over a
    /// connection the current slot leaves idle; the arbiter keeps its input and output out of
    /// the next slot's schedule (our reading of the speculative scheduling §4.2 mentions).
    pub speculative: bool,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            rate_gbps: 2.0,
            switch_delay_ns: 1.5,
            slot_gap_ns: 440,
            arbiter_ns: 1_000,
            output_buffers: 16,
            disabled_initiators: Vec::new(),
            bit_error_rate: 0.0,
            speculative: false,
        }
    }
}

/// The quick channel.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QuickConfig {
    /// Data rate in Gbit/s (0.53).
    pub rate_gbps: f64,
    /// Forwarding delay of the pipelined switch (90 ns).
    pub switch_delay_ns: u64,
    /// Bit error rate of every quick link, per line bit (10 per byte with 8B/10B): requests,
    /// acknowledgments and scheduling packets with an error fail their CRC and are discarded.
    pub bit_error_rate: f64,
    /// Initiators every target's quick enable vector excludes (§3.3: "separate enable vectors
    /// are provided for the quick and the bulk channel"): the quick switch drops their requests.
    pub disabled_initiators: Vec<u32>,
    /// Q1/Q2: how the bulk channel's packets on the quick channel are modelled. `windows`: as
    /// the paper's simulation does (§4.2, "a reduction of the available bandwidth"), fixed
    /// windows every slot that no quick packet may overlap; `packets`: configuration and grant
    /// packets keep their fixed times (nodes avoid them, §3.3), and bulk acknowledgments are
    /// packets through the quick switch, along a random matching each slot.
    pub bulk_packets: BulkPackets,
    /// With `quick.bulk_packets = "packets"`: the fraction of slots in which each node receives a
    /// bulk request and so sends a bulk acknowledgment (1: the fully loaded bulk channel the
    /// windows assume).
    pub bulk_load: f64,
}

/// How the bulk channel's packets on the quick channel are modelled in quick runs.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BulkPackets {
    /// Fixed windows every slot (the paper's simulation).
    #[default]
    Windows,
    /// Bulk acknowledgments as packets through the quick switch.
    Packets,
}

impl Default for QuickConfig {
    fn default() -> Self {
        QuickConfig {
            rate_gbps: 0.53,
            switch_delay_ns: 90,
            bit_error_rate: 0.0,
            disabled_initiators: Vec::new(),
            bulk_packets: BulkPackets::Windows,
            bulk_load: 1.0,
        }
    }
}

/// Every cable.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Propagation delay of a node-to-switch cable (up to 5 m of copper).
    pub propagation_ns: u64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { propagation_ns: 24 }
    }
}

impl ClintConfig {
    /// The keys the chosen architecture and traffic do not read: the other channel's buffers
    /// and timeout, B3's output buffers, B4's enable vectors, the burst bound without bursts.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let arch = self.channel.architecture;
        let because = format!("channel.architecture = {:?}", arch.name());
        let mut unused = UnusedKeys::default();
        if arch.is_quick() {
            unused.add(
                &[
                    "nic.bulk_send_buffers",
                    "nic.bulk_prefetch_per_target",
                    "nic.bulk_receive_buffers",
                    "nic.bulk_timeout_ns",
                    "bulk.bit_error_rate",
                ],
                "channel.architecture",
                format!("{because} (its data rides the quick channel)"),
            );
        } else {
            unused.add(
                &[
                    "nic.quick_send_buffers",
                    "nic.quick_receive_buffers",
                    "nic.quick_timeout_ns",
                    "quick.disabled_initiators",
                    "quick.bulk_packets",
                    "quick.bulk_load",
                ],
                "channel.architecture",
                format!("{because} (its data rides the bulk channel)"),
            );
        }
        for (key, owner) in [
            ("bulk.output_buffers", Architecture::B3),
            ("bulk.disabled_initiators", Architecture::B4),
            ("bulk.speculative", Architecture::B4),
        ] {
            if owner != arch {
                let only = format!("{because} (only {} reads it)", owner.name());
                unused.add(&[key], "channel.architecture", only);
            }
        }
        if self.nic.pci_gbps.is_none() {
            unused.add(
                &["nic.pci_overhead_ns"],
                "nic.pci_gbps",
                "nic.pci_gbps is absent (PCI transfers take no time)",
            );
        }
        if self.quick.bulk_packets == BulkPackets::Windows {
            unused.add(
                &["quick.bulk_load"],
                "quick.bulk_packets",
                "quick.bulk_packets = \"windows\" (the windows assume a fully loaded bulk channel)",
            );
        }
        if !self.traffic.bursty {
            unused.add(
                &["traffic.burst_max_packets"],
                "traffic.bursty",
                "traffic.bursty = false",
            );
        }
        unused.into_vec()
    }

    /// Parses and validates a Clint scenario from JSON text.
    pub fn from_json(text: &str) -> Result<ClintConfig, ScenarioError> {
        let config: ClintConfig = crate::scenario::parse(text)?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        let nic = &self.nic;
        if !(2..=MAX_PORTS as u32).contains(&self.nodes) {
            return Err(invalid("nodes", format!("expected 2 to {MAX_PORTS}")));
        }
        self.run.validate()?;
        let load = self.traffic.load;
        if !crate::scenario::is_load(load) {
            return Err(invalid(
                "traffic.load",
                format!("expected a fraction of link bandwidth from 1e-6 to 1, got {load}"),
            ));
        }
        if self.traffic.burst_max_packets == 0 {
            return Err(invalid("traffic.burst_max_packets", "expected at least 1"));
        }
        self.validate_buffers()?;
        for (key, value) in [
            ("bulk.rate_gbps", self.bulk.rate_gbps),
            ("quick.rate_gbps", self.quick.rate_gbps),
        ] {
            if !(value.is_finite() && value >= 0.001) {
                return Err(invalid(key, "expected a rate of at least 0.001 Gbit/s"));
            }
        }
        let switch_delay_ns = self.bulk.switch_delay_ns;
        if !(switch_delay_ns.is_finite() && switch_delay_ns >= 0.0) {
            return Err(invalid(
                "bulk.switch_delay_ns",
                "expected a delay of zero or more nanoseconds",
            ));
        }
        for (key, value) in [
            ("nic.quick_timeout_ns", nic.quick_timeout_ns),
            ("nic.bulk_timeout_ns", nic.bulk_timeout_ns.unwrap_or(1)),
        ] {
            if value == 0 {
                return Err(invalid(key, "expected a positive value"));
            }
        }
        self.validate_extensions()
    }

    /// The NICs' and B3's buffer counts.
    fn validate_buffers(&self) -> Result<(), ScenarioError> {
        let nic = &self.nic;
        for (key, count) in [
            ("nic.bulk_send_buffers", nic.bulk_send_buffers),
            ("nic.quick_send_buffers", nic.quick_send_buffers),
        ] {
            if !(1..=64).contains(&count) {
                return Err(invalid(key, "expected 1 to 64 buffers"));
            }
        }
        if !(1..=nic.bulk_send_buffers).contains(&nic.bulk_prefetch_per_target) {
            return Err(invalid(
                "nic.bulk_prefetch_per_target",
                "expected 1 to nic.bulk_send_buffers",
            ));
        }
        for (key, count) in [
            ("nic.bulk_receive_buffers", nic.bulk_receive_buffers),
            ("nic.quick_receive_buffers", nic.quick_receive_buffers),
            ("bulk.output_buffers", self.bulk.output_buffers),
        ] {
            if count == 0 {
                return Err(invalid(key, "expected at least 1 buffer"));
            }
        }
        for (key, receive, send) in [
            (
                "nic.bulk_receive_buffers",
                nic.bulk_receive_buffers,
                nic.bulk_prefetch_per_target,
            ),
            (
                "nic.quick_receive_buffers",
                nic.quick_receive_buffers,
                nic.quick_send_buffers,
            ),
        ] {
            if receive + send > REORDER_WINDOW {
                return Err(invalid(
                    key,
                    format!(
                        "expected receive buffers + send buffers per target (here {send}) of at \
                         most {REORDER_WINDOW}, the window a target reorders a pair's requests in"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The keys of the mechanisms beyond the paper's simulation: enable vectors, bit errors,
    /// PCI transfers, speculative scheduling and bulk packets on the quick channel.
    fn validate_extensions(&self) -> Result<(), ScenarioError> {
        let arch = self.channel.architecture;
        let disabled = &self.bulk.disabled_initiators;
        if !disabled.is_empty() && arch != Architecture::B4 {
            return Err(invalid(
                "bulk.disabled_initiators",
                "enable vectors are read by the bulk arbiter: expected channel.architecture = \"B4\"",
            ));
        }
        if !self.quick.disabled_initiators.is_empty() && !arch.is_quick() {
            return Err(invalid(
                "quick.disabled_initiators",
                "the quick enable vectors stop quick requests: expected channel.architecture = \"Q1\" or \"Q2\"",
            ));
        }
        for (key, nodes) in [
            ("bulk.disabled_initiators", disabled),
            ("quick.disabled_initiators", &self.quick.disabled_initiators),
        ] {
            if let Some(&bad) = nodes.iter().find(|&&i| i >= self.nodes) {
                return Err(invalid(
                    key,
                    format!(
                        "node {bad} does not exist: expected nodes below {}",
                        self.nodes
                    ),
                ));
            }
        }
        for (key, rate) in [
            ("bulk.bit_error_rate", self.bulk.bit_error_rate),
            ("quick.bit_error_rate", self.quick.bit_error_rate),
        ] {
            if !(0.0..1.0).contains(&rate) {
                return Err(invalid(
                    key,
                    format!("expected a bit error rate from 0 to below 1, got {rate}"),
                ));
            }
        }
        if let Some(rate) = self.nic.pci_gbps {
            if !(rate.is_finite() && rate >= 0.001) {
                return Err(invalid(
                    "nic.pci_gbps",
                    "expected a rate of at least 0.001 Gbit/s",
                ));
            }
        }
        let bulk_load = self.quick.bulk_load;
        if !(0.0..=1.0).contains(&bulk_load) {
            return Err(invalid(
                "quick.bulk_load",
                format!("expected a fraction of bulk slots from 0 to 1, got {bulk_load}"),
            ));
        }
        Ok(())
    }
}
