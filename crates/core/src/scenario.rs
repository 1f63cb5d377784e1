//! The scenario: the validated description of one run, read from JSON (the front ends turn TOML
//! files and `--set` overrides into JSON). Unknown keys, wrong types and impossible values are
//! rejected with one message naming the key and what was expected.

use rand::seq::SliceRandom;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::blocks::fabric::cell_network::NetworkSpec;
use crate::blocks::flow_control::{LinkFlowControl, RxFlowControl};
use crate::blocks::link::Link;
use crate::blocks::matching::MAX_PORTS;
use crate::blocks::routing::{mode, MODES};
use crate::blocks::switch::SchedulerKind;
use crate::blocks::switch::SwitchSpec;
use crate::blocks::topology::Topology;
use crate::blocks::traffic::{Arrival, Destinations, PacketSizes, TrafficSpec};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs};

/// The most ports an output-queued switch may have.
pub const MAX_PORTS_OUTPUT_QUEUED: u32 = 4096;
/// The most hosts a network may have (cells address hosts with 16 bits).
pub const MAX_HOSTS: usize = u16::MAX as usize;

/// Random-stream kind of the destination permutation.
const KIND_PATTERN: u32 = 3;

/// A scenario rejected before it ran: the offending key and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ScenarioError {
    /// Dotted path of the offending key (`traffic.load`), or `scenario` for the whole document.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

fn invalid(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// A whole scenario.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The system to build (read by [`crate::designs::build`]).
    #[serde(default)]
    pub design: Option<String>,
    /// Run length, warm-up and seed.
    #[serde(default)]
    pub run: RunConfig,
    /// The switch.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// Every link (terminal to switch and back).
    #[serde(default)]
    pub link: LinkConfig,
    /// Cell format.
    #[serde(default)]
    pub cell: CellConfig,
    /// Offered traffic.
    #[serde(default)]
    pub traffic: TrafficConfig,
    /// The hosts' network interfaces.
    #[serde(default)]
    pub nic: NicConfig,
    /// How switches and hosts are cabled.
    #[serde(default)]
    pub topology: TopologyConfig,
    /// How switches pick among next hops (design `cell_fabric` only).
    #[serde(default)]
    pub routing: Option<RoutingConfig>,
}

/// How switches pick among next hops.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// A mechanism of [`crate::blocks::routing::MODES`] by name.
    pub mode: String,
    /// Spraying: passes over one random order of the links before it is re-drawn.
    pub spray_rounds: u16,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            mode: "deterministic".into(),
            spray_rounds: 4,
        }
    }
}

/// Topology names as written in scenarios.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyName {
    /// One switch with a host on every port.
    #[default]
    Star,
    /// Two switches joined by `links` parallel cables.
    TwoSwitch,
    /// Leaves with hosts, each cabled once to every spine.
    LeafSpine,
    /// The k-ary three-tier fat-tree (`k`).
    FatTree,
    /// A Dragonfly (`hosts_per_router`, `routers_per_group`, `global_links_per_router`,
    /// `groups`).
    Dragonfly,
    /// Read from a topology file (`file`).
    File,
}

impl TopologyName {
    /// Every topology, for `cellfabric list`.
    pub const ALL: [TopologyName; 6] = [
        TopologyName::Star,
        TopologyName::TwoSwitch,
        TopologyName::LeafSpine,
        TopologyName::FatTree,
        TopologyName::Dragonfly,
        TopologyName::File,
    ];

    /// The name as written in scenarios.
    pub fn as_str(self) -> &'static str {
        self.entry().0
    }

    /// What it is, in one line.
    pub fn description(self) -> &'static str {
        self.entry().1
    }

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            TopologyName::Star => ("star", "one switch with a host on every port"),
            TopologyName::TwoSwitch => (
                "two_switch",
                "two switches joined by `links` parallel cables",
            ),
            TopologyName::LeafSpine => (
                "leaf_spine",
                "leaves with hosts, each cabled once to every spine",
            ),
            TopologyName::FatTree => (
                "fat_tree",
                "k-ary three-tier fat-tree, k³/4 hosts (Al-Fares et al. 2008)",
            ),
            TopologyName::Dragonfly => (
                "dragonfly",
                "groups of fully meshed routers joined by global links (Kim et al. 2008)",
            ),
            TopologyName::File => (
                "file",
                "read from a plain text file of switches, hosts and cables (`file`)",
            ),
        }
    }
}

/// How switches and hosts are cabled.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    /// Which shape.
    pub kind: TopologyName,
    /// Two switches: cables between them (each switch has `switch.ports` ports).
    pub links: u32,
    /// Leaf-spine: leaves.
    pub leaves: u32,
    /// Leaf-spine: spines.
    pub spines: u32,
    /// Leaf-spine: hosts per leaf.
    pub hosts_per_leaf: u32,
    /// Fat-tree: switch radix (even); k³/4 hosts.
    pub k: u32,
    /// Dragonfly: hosts per router (p).
    pub hosts_per_router: u32,
    /// Dragonfly: routers per group (a).
    pub routers_per_group: u32,
    /// Dragonfly: global links per router (h).
    pub global_links_per_router: u32,
    /// Dragonfly: groups (g).
    pub groups: u32,
    /// Propagation delay of every cable between two groups (a Dragonfly's global links, a
    /// fat-tree's core links), in nanoseconds; absent: `link.propagation_ns`.
    pub global_propagation_ns: Option<f64>,
    /// File: path of the topology file (relative paths in a scenario file are resolved against
    /// its folder by the front end).
    pub file: Option<String>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            kind: TopologyName::Star,
            links: 4,
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 4,
            k: 4,
            hosts_per_router: 4,
            routers_per_group: 8,
            global_links_per_router: 4,
            groups: 33,
            global_propagation_ns: None,
            file: None,
        }
    }
}

/// The hosts' network interfaces.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Cells a NIC holds waiting to send; a full NIC holds its traffic source back (closed
    /// loop). Absent: unbounded (open loop).
    pub queue_cells: Option<u32>,
}

/// Run length, warm-up and seed; every design's `run` section. Like every duration and delay
/// in a scenario, in nanoseconds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seed of every random stream in the run.
    pub seed: u64,
    /// Simulated time, including warm-up, in nanoseconds.
    pub duration_ns: f64,
    /// Leading time excluded from statistics, in nanoseconds.
    pub warmup_ns: f64,
}

impl Default for RunConfig {
    /// 10⁵ cell times of 64 bytes at 100 Gbit/s, a tenth of them warm-up.
    fn default() -> Self {
        RunConfig {
            seed: 1,
            duration_ns: 512_000.0,
            warmup_ns: 51_200.0,
        }
    }
}

impl RunConfig {
    /// When the run ends.
    pub fn end_ps(&self) -> TimePs {
        ps_from_ns(self.duration_ns)
    }

    /// When statistics start.
    pub fn warmup_ps(&self) -> TimePs {
        ps_from_ns(self.warmup_ns)
    }

    /// A positive duration and a warm-up shorter than it.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.duration_ns.is_finite() && self.end_ps() > 0) {
            return Err(invalid(
                "run.duration_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        if !(self.warmup_ns.is_finite() && self.warmup_ns >= 0.0)
            || self.warmup_ps() >= self.end_ps()
        {
            return Err(invalid(
                "run.warmup_ns",
                format!(
                    "expected 0 to less than run.duration_ns ({} ns) nanoseconds",
                    self.duration_ns
                ),
            ));
        }
        Ok(())
    }
}

/// Keys renamed when every design took one unit convention (durations and delays in ns, rates
/// in Gbit/s); a scenario using one gets a message naming its new key.
const RENAMED: &[(&str, &str)] = &[
    ("run.duration_cells", "run.duration_ns"),
    ("run.warmup_cells", "run.warmup_ns"),
    ("run.duration_us", "run.duration_ns"),
    ("run.warmup_us", "run.warmup_ns"),
    ("link.propagation_delay_ps", "link.propagation_ns"),
    ("switch.pipeline_delay_ps", "switch.pipeline_ns"),
    ("bulk.rate_mbps", "bulk.rate_gbps"),
    ("bulk.switch_delay_ps", "bulk.switch_delay_ns"),
    ("quick.rate_mbps", "quick.rate_gbps"),
];

/// Scheduler names as written in scenarios.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerName {
    /// Ideal output-queued switch.
    OutputQueued,
    /// FIFO input queues.
    Fifo,
    /// VOQs with iSLIP.
    #[default]
    Islip,
    /// VOQs with PIM.
    Pim,
    /// N² dedicated queues.
    Safc,
}

impl SchedulerName {
    /// Every scheduler, for `cellfabric list`.
    pub const ALL: [SchedulerName; 5] = [
        SchedulerName::OutputQueued,
        SchedulerName::Fifo,
        SchedulerName::Islip,
        SchedulerName::Pim,
        SchedulerName::Safc,
    ];

    /// The name as written in scenarios.
    pub fn as_str(self) -> &'static str {
        self.entry().0
    }

    /// What it is, in one line.
    pub fn description(self) -> &'static str {
        self.entry().1
    }

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            SchedulerName::OutputQueued => (
                "output_queued",
                "ideal output-queued switch (N cells per slot into each output)",
            ),
            SchedulerName::Fifo => (
                "fifo",
                "FIFO input queues, random head-of-line contention (Karol et al. 1987)",
            ),
            SchedulerName::Islip => (
                "islip",
                "virtual output queues matched by iSLIP, `iterations` per slot (McKeown 1999)",
            ),
            SchedulerName::Pim => (
                "pim",
                "virtual output queues matched by PIM (Anderson et al. 1993)",
            ),
            SchedulerName::Safc => (
                "safc",
                "statically allocated, fully connected: N² queues, no input constraint (RIFL §V)",
            ),
        }
    }
}

/// The switch.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Number of ports (1 to 64).
    pub ports: u32,
    /// Scheduler and queue organization.
    pub scheduler: SchedulerName,
    /// Iterations per slot for iSLIP and PIM.
    pub iterations: u32,
    /// Buffer per buffer port (input, or output when output-queued), or per VOQ with
    /// `per_voq_buffers`, in cells; absent: unbounded.
    pub buffer_cells: Option<u32>,
    /// Each VOQ has its own buffer and flow-control channel (RIFL per-VOQ flow control).
    pub per_voq_buffers: Option<bool>,
    /// Carry matched cells through a Batcher-Banyan network (counting internal blocking).
    pub batcher_banyan: Option<bool>,
    /// Fixed latency added to every cell crossing the switch, in nanoseconds.
    pub pipeline_ns: f64,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            ports: 32,
            scheduler: SchedulerName::Islip,
            iterations: 1,
            buffer_cells: None,
            per_voq_buffers: None,
            batcher_banyan: None,
            pipeline_ns: 0.0,
        }
    }
}

/// Link flow-control names as written in scenarios.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowControlName {
    /// None: a full buffer drops.
    #[default]
    None,
    /// Credits, one per buffer slot.
    Credit,
    /// ON/OFF with thresholds.
    Onoff,
}

impl FlowControlName {
    /// Every link flow control, with what it does, for `cellfabric list`.
    pub const ALL: [(&'static str, &'static str); 3] = [
        ("none", "no flow control: a full buffer drops"),
        (
            "credit",
            "credits, one per downstream buffer slot (lossless)",
        ),
        (
            "onoff",
            "ON/OFF signals at thresholds, per link or per VOQ (RIFL §IV-D)",
        ),
    ];
}

/// Links between terminals and the switch (both directions alike).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Line rate in Gbit/s.
    pub rate_gbps: f64,
    /// One-way propagation delay in nanoseconds.
    pub propagation_ns: f64,
    /// Flow control from the switch's input buffers back to the terminals.
    pub flow_control: FlowControlName,
    /// ON/OFF: occupancy (cells) at which the switch sends OFF.
    pub off_threshold_cells: Option<u32>,
    /// ON/OFF: occupancy (cells) at which the switch sends ON again.
    pub on_threshold_cells: Option<u32>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate_gbps: 100.0,
            propagation_ns: 0.0,
            flow_control: FlowControlName::None,
            off_threshold_cells: None,
            on_threshold_cells: None,
        }
    }
}

impl LinkConfig {
    /// Line rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        (self.rate_gbps * 1e9).round() as u64
    }

    /// One-way propagation delay.
    pub fn propagation_ps(&self) -> TimePs {
        ps_from_ns(self.propagation_ns)
    }
}

/// Cell format.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CellConfig {
    /// Bytes on the wire per cell, header included.
    pub size_bytes: u32,
    /// Payload bytes per cell; absent: the whole cell.
    pub payload_bytes: Option<u32>,
}

impl Default for CellConfig {
    fn default() -> Self {
        CellConfig {
            size_bytes: 64,
            payload_bytes: None,
        }
    }
}

impl CellConfig {
    /// Payload bytes per cell.
    pub fn payload_bytes(&self) -> u32 {
        self.payload_bytes.unwrap_or(self.size_bytes)
    }
}

/// Arrival process names.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalName {
    /// Geometric gaps between packets.
    #[default]
    Bernoulli,
    /// Geometric bursts to one destination.
    Bursty,
}

/// Destination pattern names.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DestinationName {
    /// Uniform over terminals.
    #[default]
    Uniform,
    /// A random permutation drawn from the seed.
    Permutation,
    /// One hot terminal receives a fixed share.
    Hotspot,
    /// Every host sends uniformly to the hosts of the next group (the Dragonfly's adversarial
    /// pattern, Kim et al. 2008).
    GroupShift,
}

impl DestinationName {
    /// Every destination pattern, with what it does, for `cellfabric list`.
    pub const ALL: [(&'static str, &'static str); 4] = [
        ("uniform", "uniform over all hosts (include_self)"),
        ("permutation", "a random permutation drawn from the seed"),
        (
            "hotspot",
            "one hot host receives hotspot_fraction of the packets",
        ),
        (
            "group_shift",
            "every host to random hosts of the next group (pod or Dragonfly group)",
        ),
    ];
}

/// Offered traffic.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Offered load per terminal, as a fraction of line rate in cells, 0 to 1.
    pub load: f64,
    /// Arrival process.
    pub arrival: ArrivalName,
    /// Bursty: mean burst length in cells.
    pub burst_mean_cells: Option<f64>,
    /// Bursty: mean burst length in payload bytes (alternative to `burst_mean_cells`).
    pub burst_mean_bytes: Option<f64>,
    /// Destination pattern.
    pub destinations: DestinationName,
    /// Uniform: whether a terminal may send to itself.
    pub include_self: bool,
    /// Hotspot: the hot terminal.
    pub hotspot_port: u32,
    /// Hotspot: share of packets sent to the hot terminal.
    pub hotspot_fraction: f64,
    /// Fixed packet size in payload bytes; absent: one cell's payload.
    pub packet_bytes: Option<u32>,
    /// Variable packet size: smallest (uniform distribution).
    pub packet_bytes_min: Option<u32>,
    /// Variable packet size: largest (uniform distribution).
    pub packet_bytes_max: Option<u32>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            load: 0.5,
            arrival: ArrivalName::Bernoulli,
            burst_mean_cells: None,
            burst_mean_bytes: None,
            destinations: DestinationName::Uniform,
            include_self: true,
            hotspot_port: 0,
            hotspot_fraction: 0.0,
            packet_bytes: None,
            packet_bytes_min: None,
            packet_bytes_max: None,
        }
    }
}

/// The hosts of each group of switches, as ranges of host indices in group order (the shapes
/// number hosts group by group); groups without hosts are left out.
fn host_groups(topology: &Topology) -> Vec<std::ops::Range<u16>> {
    let mut ranges: Vec<std::ops::Range<u16>> = Vec::new();
    let mut last_group = usize::MAX;
    for host in 0..topology.endpoints() {
        let (switch, _) = topology.endpoint_port(host).expect("hosts are cabled");
        let group = topology.group(switch);
        match ranges.last_mut() {
            Some(range) if group == last_group => range.end = host as u16 + 1,
            _ => ranges.push(host as u16..host as u16 + 1),
        }
        last_group = group;
    }
    ranges
}

/// Reads any design's scenario type from JSON text; a wrong type or an unknown key is reported
/// by its dotted path.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| invalid("scenario", format!("not valid JSON: {e}")))?;
    for &(old, new) in RENAMED {
        let (section, key) = old.split_once('.').expect("dotted key");
        if value.get(section).and_then(|s| s.get(key)).is_some() {
            return Err(invalid(
                old,
                format!("renamed to {new} (in every design, durations and delays are in nanoseconds and rates in Gbit/s)"),
            ));
        }
    }
    serde_path_to_error::deserialize(value).map_err(|error| {
        let key = error.path().to_string();
        let key = if key == "." { "scenario" } else { &key };
        invalid(key, error.into_inner().to_string())
    })
}

impl Scenario {
    /// Parses and validates a scenario from JSON text.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = parse(text)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Length of one cell time on the links.
    pub fn cell_time_ps(&self) -> TimePs {
        serialization_ps(self.cell.size_bytes as u64, self.link.rate_bps())
    }

    /// The switch scheduler as a building-block choice.
    pub fn scheduler(&self) -> SchedulerKind {
        let iterations = self.switch.iterations;
        match self.switch.scheduler {
            SchedulerName::OutputQueued => SchedulerKind::OutputQueued,
            SchedulerName::Fifo => SchedulerKind::Fifo,
            SchedulerName::Islip => SchedulerKind::Islip { iterations },
            SchedulerName::Pim => SchedulerKind::Pim { iterations },
            SchedulerName::Safc => SchedulerKind::Safc,
        }
    }

    /// The packet size distribution.
    pub fn packet_sizes(&self) -> PacketSizes {
        let t = &self.traffic;
        match (t.packet_bytes_min, t.packet_bytes_max) {
            (Some(min), Some(max)) => PacketSizes::Uniform { min, max },
            _ => PacketSizes::Fixed(t.packet_bytes.unwrap_or(self.cell.payload_bytes())),
        }
    }

    /// The arrival process.
    pub fn arrival(&self) -> Arrival {
        let t = &self.traffic;
        match t.arrival {
            ArrivalName::Bernoulli => Arrival::Bernoulli,
            ArrivalName::Bursty => {
                let from_bytes = t
                    .burst_mean_bytes
                    .map(|b| b / self.cell.payload_bytes() as f64);
                Arrival::Bursty {
                    mean_burst_cells: t.burst_mean_cells.or(from_bytes).unwrap_or(1.0),
                }
            }
        }
    }

    /// Whether the configuration promises to drop nothing: unbounded buffers, credits, or
    /// ON/OFF with at least a round trip of headroom above the OFF threshold.
    pub fn is_lossless(&self) -> bool {
        let link = &self.link;
        match (self.switch.buffer_cells, link.flow_control) {
            (None, _) | (_, FlowControlName::Credit) => true,
            (Some(buffer), FlowControlName::Onoff) => {
                let off = link.off_threshold_cells.unwrap_or(buffer);
                buffer.saturating_sub(off) as u64 >= self.round_trip_cells()
            }
            (Some(_), FlowControlName::None) => false,
        }
    }

    /// Cells a transmitter can still put on a link after the receiver decides to stop it: the
    /// signal's and the last cells' propagation both ways, one cell being serialized at each
    /// end, rounded up.
    pub fn round_trip_cells(&self) -> u64 {
        let cell_ps = self.cell_time_ps();
        (2 * self.longest_cable_ps()).div_ceil(cell_ps) + 2
    }

    /// The cabling the topology section describes.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let mut topology = self.shape()?;
        if let Some(ns) = self.topology.global_propagation_ns {
            topology.set_global_cable_delay(ps_from_ns(ns));
        }
        Ok(topology)
    }

    /// The longest cable's propagation delay (what a flow-control round trip takes).
    pub fn longest_cable_ps(&self) -> TimePs {
        let cables = self.topology().map_or(0, |t| {
            (0..t.switches())
                .flat_map(|s| (0..t.switch_ports(s)).map(move |p| (s, p)))
                .filter_map(|(s, p)| t.cable_delay_ps(s, p))
                .max()
                .unwrap_or(0)
        });
        cables.max(self.link.propagation_ps())
    }

    /// The named shape, before cables between groups get their own delay.
    fn shape(&self) -> Result<Topology, ScenarioError> {
        let t = &self.topology;
        let ports = self.switch.ports as usize;
        let shape =
            |key: &str, e: crate::blocks::topology::TopologyError| invalid(key, e.to_string());
        Ok(match t.kind {
            TopologyName::Star => Topology::star(ports),
            TopologyName::TwoSwitch => Topology::two_switch(ports, t.links as usize),
            TopologyName::LeafSpine => Topology::leaf_spine(
                t.leaves as usize,
                t.spines as usize,
                t.hosts_per_leaf as usize,
            ),
            TopologyName::FatTree => {
                Topology::fat_tree(t.k as usize).map_err(|e| shape("topology.k", e))?
            }
            TopologyName::Dragonfly => Topology::dragonfly(
                t.hosts_per_router as usize,
                t.routers_per_group as usize,
                t.global_links_per_router as usize,
                t.groups as usize,
            )
            .map_err(|e| shape("topology.groups", e))?,
            TopologyName::File => {
                let path = t.file.as_deref().ok_or_else(|| {
                    invalid(
                        "topology.file",
                        "required by kind = \"file\": the path of a topology file",
                    )
                })?;
                let text = std::fs::read_to_string(path)
                    .map_err(|e| invalid("topology.file", format!("cannot read {path}: {e}")))?;
                Topology::from_file_text(&text)
                    .map_err(|e| invalid("topology.file", format!("{path}: {e}")))?
            }
        })
    }

    /// Hosts in the topology.
    pub fn terminals(&self) -> u32 {
        let t = &self.topology;
        match t.kind {
            TopologyName::Star => self.switch.ports,
            TopologyName::TwoSwitch => 2 * (self.switch.ports.saturating_sub(t.links)),
            TopologyName::LeafSpine => t.leaves * t.hosts_per_leaf,
            TopologyName::FatTree => t.k.saturating_pow(3) / 4,
            TopologyName::Dragonfly => t
                .hosts_per_router
                .saturating_mul(t.routers_per_group)
                .saturating_mul(t.groups),
            TopologyName::File => self.topology().map_or(0, |t| t.endpoints() as u32),
        }
    }

    /// Link-level flow control as a building-block choice.
    pub fn flow_control(&self) -> LinkFlowControl {
        let link = &self.link;
        match link.flow_control {
            FlowControlName::None => LinkFlowControl::None,
            FlowControlName::Credit => LinkFlowControl::Credit,
            FlowControlName::Onoff => LinkFlowControl::OnOff {
                off_at_cells: link.off_threshold_cells.unwrap_or(0),
                on_at_cells: link.on_threshold_cells.unwrap_or(0),
            },
        }
    }

    /// The network a scenario's switch, link, cell, NIC and traffic sections describe, over
    /// `topology`; shared by every design built on a `Network`.
    pub fn network_spec(&self, design: &'static str, topology: Topology) -> NetworkSpec {
        let link = Link::new(self.link.rate_bps(), self.link.propagation_ps());
        let sw = &self.switch;
        NetworkSpec {
            design,
            scheduler: sw.scheduler.as_str().to_string(),
            routing: None,
            seed: self.run.seed,
            destinations: self.destinations(&topology),
            topology,
            switch: SwitchSpec {
                ports: sw.ports as usize,
                cell_bytes: self.cell.size_bytes as u64,
                scheduler: self.scheduler(),
                buffer_cells: sw.buffer_cells,
                per_voq_buffers: sw.per_voq_buffers.unwrap_or(false),
                batcher_banyan: sw.batcher_banyan.unwrap_or(false),
                rx_flow_control: RxFlowControl::None,
                out_link: link.clone(),
                pipeline_ps: ps_from_ns(sw.pipeline_ns),
            },
            link,
            flow_control: self.flow_control(),
            traffic: self.traffic_spec(),
            nic_queue_cells: self.nic.queue_cells,
            warmup_ps: self.warmup_ps(),
            end_ps: self.end_ps(),
            lossless: self.is_lossless(),
        }
    }

    /// When statistics start.
    pub fn warmup_ps(&self) -> TimePs {
        self.run.warmup_ps()
    }

    /// When the run ends.
    pub fn end_ps(&self) -> TimePs {
        self.run.end_ps()
    }

    /// What every terminal's source offers.
    pub fn traffic_spec(&self) -> TrafficSpec {
        TrafficSpec {
            load: self.traffic.load,
            arrival: self.arrival(),
            sizes: self.packet_sizes(),
            cell_payload_bytes: self.cell.payload_bytes(),
            slot_ps: self.cell_time_ps(),
            stop_ps: self.end_ps(),
        }
    }

    /// Where each host of `topology` sends; the permutation is drawn from the run's seed.
    pub fn destinations(&self, topology: &Topology) -> Vec<Destinations> {
        let t = &self.traffic;
        let terminals = topology.endpoints();
        let mut permutation: Vec<u16> = (0..terminals as u16).collect();
        let id = ComponentId {
            kind: KIND_PATTERN,
            index: 0,
        };
        permutation.shuffle(&mut stream(self.run.seed, id));
        let host_groups = host_groups(topology);
        (0..terminals)
            .map(|i| match t.destinations {
                DestinationName::Uniform => Destinations::Uniform {
                    ports: terminals as u16,
                    include_self: t.include_self,
                },
                DestinationName::Permutation => Destinations::Fixed(permutation[i]),
                DestinationName::Hotspot => Destinations::Hotspot {
                    ports: terminals as u16,
                    port: t.hotspot_port as u16,
                    fraction: t.hotspot_fraction,
                },
                DestinationName::GroupShift => {
                    let at = host_groups.iter().position(|g| g.contains(&(i as u16)));
                    let next = &host_groups
                        [(at.expect("every host is in a group") + 1) % host_groups.len()];
                    Destinations::Range {
                        first: next.start,
                        count: next.end - next.start,
                    }
                }
            })
            .collect()
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        let (run, sw, link, cell, t) = (
            &self.run,
            &self.switch,
            &self.link,
            &self.cell,
            &self.traffic,
        );
        run.validate()?;
        for (key, value) in [
            ("link.propagation_ns", link.propagation_ns),
            ("switch.pipeline_ns", sw.pipeline_ns),
            (
                "topology.global_propagation_ns",
                self.topology.global_propagation_ns.unwrap_or(0.0),
            ),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(key, "expected a delay of zero or more nanoseconds"));
            }
        }
        if sw.ports == 0 || sw.ports > self.max_ports() {
            return Err(invalid(
                "switch.ports",
                format!("expected 1 to {}, got {}", self.port_limit(), sw.ports),
            ));
        }
        let voq = matches!(
            sw.scheduler,
            SchedulerName::Islip | SchedulerName::Pim | SchedulerName::Safc
        );
        if sw.per_voq_buffers == Some(true) && !voq {
            return Err(invalid(
                "switch.per_voq_buffers",
                format!(
                    "per-VOQ buffers need virtual output queues: expected scheduler islip, pim or safc, got {:?}",
                    sw.scheduler.as_str()
                ),
            ));
        }
        if sw.batcher_banyan == Some(true) && sw.scheduler == SchedulerName::OutputQueued {
            return Err(invalid(
                "switch.batcher_banyan",
                "the output-queued switch has no input-to-output network to model: expected an input-queued scheduler",
            ));
        }
        if sw.iterations == 0 || sw.iterations > 64 {
            return Err(invalid("switch.iterations", "expected 1 to 64 iterations"));
        }
        if sw.buffer_cells == Some(0) {
            return Err(invalid(
                "switch.buffer_cells",
                "expected at least one cell (omit it for unbounded buffers)",
            ));
        }
        if !(link.rate_gbps.is_finite() && link.rate_gbps > 0.0) {
            return Err(invalid(
                "link.rate_gbps",
                "expected a positive rate in Gbit/s",
            ));
        }
        if cell.size_bytes == 0 || cell.size_bytes > u16::MAX as u32 {
            return Err(invalid("cell.size_bytes", "expected 1 to 65535 bytes"));
        }
        if cell
            .payload_bytes
            .is_some_and(|p| p == 0 || p > cell.size_bytes)
        {
            return Err(invalid(
                "cell.payload_bytes",
                "expected 1 to cell.size_bytes bytes",
            ));
        }
        self.validate_topology()?;
        self.validate_routing()?;
        self.validate_flow_control()?;
        self.validate_traffic(t)
    }

    /// The most ports a switch may have: bitmap schedulers match over 64-bit port sets; the
    /// output-queued switch keeps one queue per output and needs none.
    pub fn max_ports(&self) -> u32 {
        match self.switch.scheduler {
            SchedulerName::OutputQueued => MAX_PORTS_OUTPUT_QUEUED,
            _ => MAX_PORTS as u32,
        }
    }

    /// The port limit, said with its reason, for error messages.
    fn port_limit(&self) -> String {
        format!(
            "{} ports for scheduler {:?}",
            self.max_ports(),
            self.switch.scheduler.as_str()
        )
    }

    fn validate_topology(&self) -> Result<(), ScenarioError> {
        let t = &self.topology;
        let max = self.max_ports();
        let hosts = self.terminals();
        if hosts as usize > MAX_HOSTS {
            let key = match t.kind {
                TopologyName::Star | TopologyName::TwoSwitch => "switch.ports",
                TopologyName::LeafSpine => "topology.leaves",
                TopologyName::FatTree => "topology.k",
                TopologyName::Dragonfly => "topology.groups",
                TopologyName::File => "topology.file",
            };
            return Err(invalid(
                key,
                format!(
                    "this {} would have {hosts} hosts; at most {MAX_HOSTS} are supported",
                    t.kind.as_str()
                ),
            ));
        }
        match t.kind {
            TopologyName::Star => Ok(()),
            TopologyName::TwoSwitch if t.links == 0 || t.links >= self.switch.ports => {
                Err(invalid(
                    "topology.links",
                    "expected 1 to switch.ports - 1 cables between the two switches",
                ))
            }
            TopologyName::TwoSwitch => Ok(()),
            TopologyName::LeafSpine => {
                if !(2..=max).contains(&t.leaves) {
                    return Err(invalid(
                        "topology.leaves",
                        format!("expected 2 to {max} leaves"),
                    ));
                }
                if t.spines == 0 || t.hosts_per_leaf == 0 || t.spines + t.hosts_per_leaf > max {
                    return Err(invalid(
                        "topology.hosts_per_leaf",
                        format!("expected hosts_per_leaf >= 1, spines >= 1 and hosts_per_leaf + spines <= {} (leaf ports)", self.port_limit()),
                    ));
                }
                Ok(())
            }
            TopologyName::FatTree if t.k > max => Err(invalid(
                "topology.k",
                format!("expected an even radix from 2 to {}", self.port_limit()),
            )),
            TopologyName::Dragonfly
                if t.hosts_per_router + t.routers_per_group + t.global_links_per_router
                    > max + 1 =>
            {
                Err(invalid(
                    "topology.routers_per_group",
                    format!("a router has hosts_per_router + routers_per_group - 1 + global_links_per_router ports: expected at most {}", self.port_limit()),
                ))
            }
            TopologyName::FatTree | TopologyName::Dragonfly => self.topology().map(|_| ()),
            TopologyName::File => {
                let topology = self.topology()?;
                match (0..topology.switches()).find(|&s| topology.switch_ports(s) as u32 > max) {
                    Some(s) => Err(invalid(
                        "topology.file",
                        format!(
                            "switch {s} has {} ports; expected at most {}",
                            topology.switch_ports(s),
                            self.port_limit()
                        ),
                    )),
                    None => Ok(()),
                }
            }
        }
    }

    fn validate_routing(&self) -> Result<(), ScenarioError> {
        let fabric = self.design.as_deref() == Some("cell_fabric");
        let Some(routing) = &self.routing else {
            return Ok(());
        };
        if !fabric {
            return Err(invalid(
                "routing",
                "only design \"cell_fabric\" routes by mode (single_switch has one path, rifl routes by source)",
            ));
        }
        let names = || MODES.iter().map(|m| m.name).collect::<Vec<_>>().join(", ");
        let Some(mode) = mode(&routing.mode) else {
            return Err(invalid(
                "routing.mode",
                format!("expected one of {}, got {:?}", names(), routing.mode),
            ));
        };
        if mode.needs_groups && self.topology.kind != TopologyName::Dragonfly {
            return Err(invalid(
                "routing.mode",
                format!(
                    "{} routes through an intermediate Dragonfly group: expected topology.kind = \"dragonfly\" (got {:?})",
                    mode.name,
                    self.topology.kind.as_str()
                ),
            ));
        }
        if self.switch.per_voq_buffers == Some(true) && mode.name != "deterministic" {
            return Err(invalid(
                "switch.per_voq_buffers",
                "per-VOQ flow control books the next switch's VOQ in advance: it needs routing.mode = \"deterministic\"",
            ));
        }
        if routing.spray_rounds == 0 {
            return Err(invalid(
                "routing.spray_rounds",
                "expected at least one pass per random order",
            ));
        }
        Ok(())
    }

    fn validate_flow_control(&self) -> Result<(), ScenarioError> {
        let link = &self.link;
        if link.flow_control == FlowControlName::None {
            return Ok(());
        }
        if !self.scheduler().is_input_buffered() {
            return Err(invalid(
                "link.flow_control",
                "flow control protects input buffers; the output_queued switch has none (use \"none\")",
            ));
        }
        let Some(buffer) = self.switch.buffer_cells else {
            return Err(invalid(
                "switch.buffer_cells",
                "flow control needs a finite input buffer",
            ));
        };
        if link.flow_control == FlowControlName::Onoff {
            let off = link
                .off_threshold_cells
                .ok_or_else(|| invalid("link.off_threshold_cells", "required by onoff"))?;
            let on = link
                .on_threshold_cells
                .ok_or_else(|| invalid("link.on_threshold_cells", "required by onoff"))?;
            if off == 0 || off > buffer {
                return Err(invalid(
                    "link.off_threshold_cells",
                    "expected 1 to switch.buffer_cells",
                ));
            }
            if on >= off {
                return Err(invalid(
                    "link.on_threshold_cells",
                    "expected fewer cells than link.off_threshold_cells",
                ));
            }
        }
        Ok(())
    }

    fn validate_traffic(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        if !(0.0..=1.0).contains(&t.load) {
            return Err(invalid(
                "traffic.load",
                format!(
                    "expected a fraction of line rate from 0 to 1, got {}",
                    t.load
                ),
            ));
        }
        for (key, value) in [
            ("traffic.burst_mean_cells", t.burst_mean_cells),
            ("traffic.burst_mean_bytes", t.burst_mean_bytes),
        ] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(invalid(key, "expected a positive mean burst length"));
            }
        }
        if t.burst_mean_cells.is_some() && t.burst_mean_bytes.is_some() {
            return Err(invalid(
                "traffic.burst_mean_bytes",
                "give burst_mean_cells or burst_mean_bytes, not both",
            ));
        }
        let grouped = matches!(
            self.topology.kind,
            TopologyName::FatTree | TopologyName::Dragonfly
        );
        if t.destinations == DestinationName::GroupShift && !grouped {
            return Err(invalid(
                "traffic.destinations",
                "group_shift sends each group's hosts to the next group: expected topology.kind = \"fat_tree\" (pods) or \"dragonfly\"",
            ));
        }
        if t.hotspot_port >= self.terminals() {
            return Err(invalid(
                "traffic.hotspot_port",
                "expected a terminal index below the number of hosts",
            ));
        }
        if !(0.0..=1.0).contains(&t.hotspot_fraction) {
            return Err(invalid(
                "traffic.hotspot_fraction",
                "expected a fraction from 0 to 1",
            ));
        }
        if !t.include_self && self.terminals() < 2 {
            return Err(invalid(
                "traffic.include_self",
                "a one-port switch can only send to itself",
            ));
        }
        if t.packet_bytes == Some(0) {
            return Err(invalid(
                "traffic.packet_bytes",
                "expected at least one byte",
            ));
        }
        match (t.packet_bytes_min, t.packet_bytes_max) {
            (None, None) => Ok(()),
            (Some(min), Some(max)) if min >= 1 && min <= max && t.packet_bytes.is_none() => Ok(()),
            (Some(_), Some(_)) if t.packet_bytes.is_some() => Err(invalid(
                "traffic.packet_bytes",
                "give packet_bytes or packet_bytes_min/max, not both",
            )),
            (Some(_), Some(_)) => Err(invalid(
                "traffic.packet_bytes_min",
                "expected 1 <= packet_bytes_min <= packet_bytes_max",
            )),
            (Some(_), None) => Err(invalid(
                "traffic.packet_bytes_max",
                "required with packet_bytes_min",
            )),
            (None, Some(_)) => Err(invalid(
                "traffic.packet_bytes_min",
                "required with packet_bytes_max",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(json: &str) -> ScenarioError {
        Scenario::from_json(json).expect_err("scenario should be rejected")
    }

    #[test]
    fn defaults_are_valid() {
        let s = Scenario::from_json("{}").unwrap();
        assert_eq!(s.cell_time_ps(), 5_120);
        assert_eq!(s.scheduler(), SchedulerKind::Islip { iterations: 1 });
    }

    #[test]
    fn bad_input_names_the_key() {
        assert_eq!(error(r#"{"traffic": {"lod": 0.5}}"#).key, "traffic.lod");
        assert_eq!(error(r#"{"bogus": 1}"#).key, "bogus");
        let wrong_type = error(r#"{"traffic": {"load": "high"}}"#);
        assert_eq!(wrong_type.key, "traffic.load");
        assert!(wrong_type.message.contains("expected f64"), "{wrong_type}");
        assert_eq!(error(r#"{"traffic": {"load": 1.5}}"#).key, "traffic.load");
        assert_eq!(error(r#"{"traffic": {"load": -0.1}}"#).key, "traffic.load");
        assert_eq!(error(r#"{"switch": {"ports": 0}}"#).key, "switch.ports");
        assert_eq!(
            error(r#"{"link": {"propagation_ns": -5}}"#).key,
            "link.propagation_ns"
        );
        let renamed = error(r#"{"link": {"propagation_delay_ps": 5}}"#);
        assert_eq!(renamed.key, "link.propagation_delay_ps");
        assert!(renamed.message.contains("link.propagation_ns"), "{renamed}");
        let scheduler = error(r#"{"switch": {"scheduler": "magic"}}"#);
        assert_eq!(scheduler.key, "switch.scheduler");
        assert!(scheduler.message.contains("islip"), "{scheduler}");
        assert_eq!(
            error(r#"{"link": {"flow_control": "credit"}}"#).key,
            "switch.buffer_cells"
        );
        assert_eq!(
            error(r#"{"switch": {"scheduler": "output_queued", "buffer_cells": 8}, "link": {"flow_control": "credit"}}"#).key,
            "link.flow_control"
        );
        assert_eq!(
            error(r#"{"traffic": {"packet_bytes_min": 64}}"#).key,
            "traffic.packet_bytes_max"
        );
        assert_eq!(
            error(r#"{"run": {"warmup_ns": 2000000}}"#).key,
            "run.warmup_ns"
        );
        assert_eq!(
            error(r#"{"run": {"duration_ns": 0}}"#).key,
            "run.duration_ns"
        );
    }

    #[test]
    fn burst_length_in_bytes_converts_to_cells() {
        let s = Scenario::from_json(r#"{"cell": {"size_bytes": 256}, "traffic": {"arrival": "bursty", "burst_mean_bytes": 1024}}"#)
            .unwrap();
        assert_eq!(
            s.arrival(),
            Arrival::Bursty {
                mean_burst_cells: 4.0
            }
        );
    }
}
