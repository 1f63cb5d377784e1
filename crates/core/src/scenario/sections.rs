//! The cell networks' scenario (designs `single_switch`, `cell_fabric`, `rifl`) and its
//! sections, with every mechanism name a section takes.

use serde::{Deserialize, Serialize};

use super::RunConfig;
use crate::blocks::bit_errors::BitErrors;
pub use crate::blocks::flow_control::FlowControlKind;
use crate::engine::time::{ps_from_ns, TimePs};
use crate::keys::{Named, ScenarioError};

/// A whole scenario.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The design: `single_switch` (absent), `cell_fabric` or `rifl`, the three cell networks
    /// that share these keys (`cellfabric list` names every design; the others have keys of
    /// their own).
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
    /// How switches pick among next hops (design `cell_fabric` only; absent: the section's
    /// defaults).
    #[serde(default)]
    pub routing: Option<RoutingConfig>,
    /// The virtual channels of `vc_separable` and `vc_islip` routers (absent: the section's
    /// defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vc: Option<super::vc::VcConfig>,
    /// Hosts sending their packets by IP over GNet (Aquila's RTS/CTS; absent: plain hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnet: Option<super::gnet::GnetConfig>,
    /// GNet hosts making 1RMA reads of each other (Aquila §3.4; needs `[gnet]`; absent: no
    /// reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rma: Option<super::rma::RmaConfig>,
    /// Cell tracing: the hops of a sampled fraction of the cells (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<super::trace::TraceConfig>,
    /// Links between VC routers cut mid-run (Aquila §3.2; absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<super::failures::FailureConfig>,
}

/// How switches pick among next hops.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// The routing mode, by name (`valiant` and `ugal` need a `dragonfly` topology).
    pub mode: String,
    /// `spray`: passes over one random order of the next hops before it is re-drawn.
    pub spray_rounds: u16,
    /// `aquila_fully_adaptive`: the weight of a minimal candidate's output queue (cells) in
    /// the comparison (Aquila §3.2 gives no value; 1 is our reading).
    pub minimal_weight: f64,
    /// `aquila_fully_adaptive`: the weight of a non-minimal candidate's output queue (2, a
    /// misroute's path being about twice as long, is our reading).
    pub nonminimal_weight: f64,
    /// `aquila_fully_adaptive`: cells added to a non-minimal candidate's cost, the bias toward
    /// minimal routes (2 maximum cells is our reading); where the TiNs move 16-byte flits (IP
    /// over GNet) their queues count flits, and the bias is the flits of as many 160-byte cells.
    pub nonminimal_bias_cells: f64,
    /// `aquila_fully_adaptive`: local detours, two local hops in a pod (or Dragonfly group)
    /// where the minimal route takes one, and their turn rule: `parity_sign` (García et al.'s rule,
    /// which Aquila §3.2 says its intra-pod turn rules resemble; on by default, our reading
    /// being that Aquila's Fully Adaptive routes through a third TiN of a pod), `none`,
    /// `up_down` (up*/down* on TiN numbers) or `any` (no rule: refused on VC routers with its
    /// dependency cycle named, unless `vc.check_dependencies = false`).
    pub local_misroutes: crate::blocks::routing::local_misroute::TurnRule,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        let weights = crate::blocks::routing::SampledWeights::default();
        RoutingConfig {
            mode: "deterministic".into(),
            spray_rounds: 4,
            minimal_weight: weights.minimal,
            nonminimal_weight: weights.nonminimal,
            nonminimal_bias_cells: weights.nonminimal_bias_cells,
            local_misroutes: crate::blocks::routing::local_misroute::TurnRule::ParitySign,
        }
    }
}

impl RoutingConfig {
    /// Mode `mode` with every other key at its default (a design's own default mode).
    pub fn of_mode(mode: &str) -> RoutingConfig {
        RoutingConfig {
            mode: mode.into(),
            ..RoutingConfig::default()
        }
    }

    /// The weights of Aquila's sampled comparison.
    pub fn sampled_weights(&self) -> crate::blocks::routing::SampledWeights {
        crate::blocks::routing::SampledWeights {
            minimal: self.minimal_weight,
            nonminimal: self.nonminimal_weight,
            nonminimal_bias_cells: self.nonminimal_bias_cells,
        }
    }
}

/// Topology names as written in scenarios.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
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
    /// A folded Clos (`tiers`, `radix`, `hosts_per_edge`, `uplinks_per_edge`, `bundle`,
    /// `edges`).
    Clos,
    /// A Dragonfly (`hosts_per_router`, `routers_per_group`, `global_links_per_router`,
    /// `groups`).
    Dragonfly,
    /// Aquila's Clique (`clique`).
    Clique,
    /// Read from a topology file (`file`).
    File,
}

impl Named for TopologyName {
    const ALL: &'static [TopologyName] = &[
        TopologyName::Star,
        TopologyName::TwoSwitch,
        TopologyName::LeafSpine,
        TopologyName::FatTree,
        TopologyName::Clos,
        TopologyName::Dragonfly,
        TopologyName::Clique,
        TopologyName::File,
    ];

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
            TopologyName::Clos => (
                "clos",
                "folded Clos of edge switches under 1 to 3 tiers, with planes and bundles (Stardust App. A)",
            ),
            TopologyName::Dragonfly => (
                "dragonfly",
                "groups of fully meshed routers joined by global links (Kim et al. 2008)",
            ),
            TopologyName::Clique => (
                "clique",
                "Aquila's Clique: pods of fully meshed TiNs, pods fully meshed by global links (Gibson et al. 2022)",
            ),
            TopologyName::File => (
                "file",
                "read from a plain text file of switches, hosts and cables (`file`)",
            ),
        }
    }
}

impl TopologyConfig {
    /// The cabling this section describes on its own (a star or two switches with the default
    /// `switch.ports`), with at most [`super::MAX_HOSTS`] hosts: the packet designs' topology.
    pub fn standalone(&self) -> Result<crate::blocks::topology::Topology, super::ScenarioError> {
        let scenario = Scenario {
            topology: self.clone(),
            ..Scenario::default()
        };
        let topology = scenario.topology()?;
        if topology.endpoints() > super::MAX_HOSTS {
            return Err(super::invalid(
                "topology",
                format!(
                    "at most {} hosts, got {}",
                    super::MAX_HOSTS,
                    topology.endpoints()
                ),
            ));
        }
        Ok(topology)
    }

    /// The k-ary fat-tree, every other key at its default (the packet designs' default shape).
    pub fn fat_tree(k: u32) -> TopologyConfig {
        TopologyConfig {
            kind: TopologyName::FatTree,
            k,
            ..TopologyConfig::default()
        }
    }

    /// The k = 4 fat-tree (16 hosts): the packet designs' default topology.
    pub fn fat_tree_4() -> TopologyConfig {
        TopologyConfig::fat_tree(4)
    }
}

/// How switches and hosts are cabled.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    /// Which shape: `star` in every cell network; `two_switch` and `leaf_spine` in `rifl` and
    /// `cell_fabric`; every shape in `cell_fabric` and the packet designs.
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
    /// Clos: tiers of fabric switches above the edge (1 to 3).
    pub tiers: u32,
    /// Clos: ports of a fabric switch.
    pub radix: u32,
    /// Clos: hosts per edge switch.
    pub hosts_per_edge: u32,
    /// Clos: uplink bundles per edge switch.
    pub uplinks_per_edge: u32,
    /// Clos: parallel cables between neighbouring switches.
    pub bundle: u32,
    /// Clos: edge switches; absent: the most the radix allows (fewer edges merge the top tier's
    /// planes, as in Stardust's Fig. 9).
    pub edges: Option<u32>,
    /// Dragonfly: hosts per router (p).
    pub hosts_per_router: u32,
    /// Dragonfly: routers per group (a).
    pub routers_per_group: u32,
    /// Dragonfly: global links per router (h).
    pub global_links_per_router: u32,
    /// Dragonfly: groups (g); the global links of a group must divide evenly among the other
    /// groups.
    pub groups: u32,
    /// Propagation delay of every host's cable, in nanoseconds; absent:
    /// `link.propagation_ns` (which then times only the cables between switches).
    pub host_propagation_ns: Option<f64>,
    /// Propagation delay of every cable between two groups (a Dragonfly's global links, a
    /// fat-tree's core links), in nanoseconds; absent: `link.propagation_ns`. Flow-control
    /// headroom counts the longest cable.
    pub global_propagation_ns: Option<f64>,
    /// Clique: its shape and its links' facts.
    pub clique: super::clique::CliqueConfig,
    /// File: path of the topology file, relative to the scenario file's folder: a plain text
    /// file of `switch NAME ports=N [group=G]`, `host NAME` and `cable END END
    /// [propagation_ns=X] [rate_gbps=X] [overhead_bytes=N] [flow_control=none|credit|onoff]
    /// [ber=X]` lines, END a host or SWITCH:PORT, a cable's attributes overriding the `link`
    /// section for it alone (a slotted switch sends on a slower cable only when it is free; a
    /// faster one delivers sooner but still takes one cell per cell time; in a RIFL rack a
    /// cable with bit errors runs Layer 1); see
    /// `scenarios/fabric/leaf-spine.topo`.
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
            tiers: 2,
            radix: 8,
            hosts_per_edge: 4,
            uplinks_per_edge: 4,
            bundle: 1,
            edges: None,
            hosts_per_router: 4,
            routers_per_group: 8,
            global_links_per_router: 4,
            groups: 33,
            host_propagation_ns: None,
            global_propagation_ns: None,
            clique: super::clique::CliqueConfig::default(),
            file: None,
        }
    }
}

/// The hosts' network interfaces.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Cells a NIC holds waiting to send (at least 1); a full NIC holds its traffic source back
    /// (closed loop). Absent: unbounded (open loop). A NIC keeps one queue per flow-control
    /// channel of its link, served round robin.
    pub queue_cells: Option<u32>,
}

/// Scheduler names as written in scenarios.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
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
    /// VC router, separable input-first allocation.
    VcSeparable,
    /// VC router, iSLIP allocation.
    VcIslip,
}

impl Named for SchedulerName {
    const ALL: &'static [SchedulerName] = &[
        SchedulerName::OutputQueued,
        SchedulerName::Fifo,
        SchedulerName::Islip,
        SchedulerName::Pim,
        SchedulerName::Safc,
        SchedulerName::VcSeparable,
        SchedulerName::VcIslip,
    ];

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
            SchedulerName::VcSeparable => (
                "vc_separable",
                "virtual-channel router (section `vc`): separable input-first allocation, round-robin arbiters, `iterations` per crossbar cycle",
            ),
            SchedulerName::VcIslip => (
                "vc_islip",
                "virtual-channel router (section `vc`): iSLIP over one request per VC per port, as Aquila's TiN (NSDI '22, §3.1)",
            ),
        }
    }
}

/// The switch.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Ports of the switch: 1 to 256, or to 4096 with `output_queued` (which needs no port
    /// sets). For the star and two-switch topologies; the other shapes give each switch its
    /// port count. A network has at most 65 535 hosts.
    pub ports: u32,
    /// Scheduler and queue organization.
    pub scheduler: SchedulerName,
    /// Iterations per slot for `islip` and `pim`.
    pub iterations: u32,
    /// Buffer per input port (per output port for `output_queued`; per VOQ with
    /// `per_voq_buffers`), in cells; absent: unbounded.
    pub buffer_cells: Option<u32>,
    /// Each VOQ has its own buffer and flow-control channel (RIFL's per-VOQ flow control; VOQ
    /// schedulers only; `rifl` fixes it on and refuses the key); absent: false.
    pub per_voq_buffers: Option<bool>,
    /// Carry matched cells through a Batcher-Banyan network and count internal blocking
    /// (input-queued schedulers only; `rifl` fixes it on unless `safc` and refuses the key);
    /// absent: false.
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

impl Named for FlowControlKind {
    const ALL: &'static [FlowControlKind] = &[
        FlowControlKind::None,
        FlowControlKind::Credit,
        FlowControlKind::Onoff,
    ];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            FlowControlKind::None => ("none", "no flow control: a full buffer drops"),
            FlowControlKind::Credit => (
                "credit",
                "credits, one per downstream buffer slot (lossless)",
            ),
            FlowControlKind::Onoff => (
                "onoff",
                "ON/OFF signals at thresholds, per link or per VOQ (RIFL §IV-D)",
            ),
        }
    }
}

/// Links between terminals and the switch (both directions alike).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Line rate in Gbit/s.
    pub rate_gbps: f64,
    /// One-way propagation delay in nanoseconds.
    pub propagation_ns: f64,
    /// Flow control from each buffer back to its sender (`onoff` with `off_threshold_cells`
    /// and `on_threshold_cells`).
    pub flow_control: FlowControlKind,
    /// Bytes every cell carries on the wire beyond its own (FEC, framing); a cell time is a
    /// cell and its overhead at the line rate.
    pub overhead_bytes: u32,
    /// Bit error rate of every cable, 0 to 1e-3 (design `rifl` only). Above 0 every cable of
    /// the rack is a RIFL Layer 1 retransmitting link (Shen and Chow 2023, §II-A): a corrupted
    /// frame is replayed hop by hop, both ends of its cable pause new data for 2.5 round trips,
    /// switches leave paused outputs out of their matching, and nothing is lost; the summary's
    /// `layer1` section counts errors, replayed frames and paused frame times. The propagation
    /// must then be a whole number (at least one) of cell times. Unit: errors per bit.
    pub ber: f64,
    /// Bit error rate inside error bursts, 0 to 1e-3 (design `rifl` only); above 0 errors
    /// fall by the Gilbert–Elliott model: `ber` between bursts, this rate inside them. Unit:
    /// errors per bit.
    pub error_burst_ber: f64,
    /// With bursts: the mean length of a burst, in frames (cell times; geometric, at least 1).
    pub error_burst_frames: f64,
    /// With bursts: the mean stretch between bursts, in frames (geometric, at least 1).
    pub error_burst_gap_frames: f64,
    /// On cables with bit errors (RIFL Layer 1): ON/OFF travels in flow-control frames, each
    /// taking a frame time from data and carrying one channel ON and one OFF, checked by the
    /// CRC and sent again if corrupted (Shen and Chow 2023, §IV-D, Fig. 4); `false` sends it
    /// out of band (the cable's propagation, no bandwidth), as cables without errors do.
    pub in_band_flow_control: bool,
    /// On cables with bit errors (RIFL Layer 1): the frame size, a power of two from 8 to 256
    /// bytes, each frame with a two-byte header (Shen and Chow 2023, §II-A), carrying cells as
    /// a byte stream; absent: a frame is a cell. Unit: bytes.
    pub frame_bytes: Option<u32>,
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
            flow_control: FlowControlKind::None,
            overhead_bytes: 0,
            ber: 0.0,
            error_burst_ber: 0.0,
            error_burst_frames: 0.0,
            error_burst_gap_frames: 0.0,
            in_band_flow_control: true,
            frame_bytes: None,
            off_threshold_cells: None,
            on_threshold_cells: None,
        }
    }
}

impl LinkConfig {
    /// How bit errors fall on every cable (the keys checked, naming the one at fault).
    pub fn bit_errors(&self) -> Result<BitErrors, ScenarioError> {
        BitErrors::from_keys(
            self.ber,
            self.error_burst_ber,
            self.error_burst_frames,
            self.error_burst_gap_frames,
        )
    }

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
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CellConfig {
    /// Bytes on the wire per cell, header included (`rifl`: 264).
    pub size_bytes: u32,
    /// Payload bytes per cell; absent: the whole cell (`rifl`: 256-byte segments).
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
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalName {
    /// Geometric gaps between packets.
    #[default]
    Bernoulli,
    /// Geometric bursts to one destination.
    Bursty,
}

/// How a burst's packets fill it (RIFL Layer 2, Shen and Chow 2023, §V, leaves it open).
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BurstPacketsName {
    /// The last packet is cut to the burst's cells left (bursts keep their mean; cut packets
    /// change the packet-size mix).
    Cut,
    /// Packets stay whole: a burst ends with the packet that reaches its drawn cells, or after
    /// its drawn count of packets (`burst_mean_packets`).
    #[default]
    Whole,
    /// Packets stay whole and every burst has exactly `burst_mean_packets` of them: messages of
    /// one size (Aquila's Fig. 10, Gibson et al., NSDI '22, §5.1).
    Fixed,
}

impl Named for BurstPacketsName {
    const ALL: &'static [BurstPacketsName] = &[
        BurstPacketsName::Cut,
        BurstPacketsName::Whole,
        BurstPacketsName::Fixed,
    ];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            BurstPacketsName::Cut => ("cut", "the last packet of a burst is cut to fit its cells"),
            BurstPacketsName::Whole => (
                "whole",
                "packets stay whole: a burst ends with the packet that reaches its length",
            ),
            BurstPacketsName::Fixed => (
                "fixed",
                "packets stay whole and every burst has exactly burst_mean_packets of them",
            ),
        }
    }
}

/// Destination pattern names.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
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
    /// The sources listed in `traffic.pairs` each send to their one destination; the other
    /// hosts send nothing.
    Pairs,
}

impl Named for DestinationName {
    const ALL: &'static [DestinationName] = &[
        DestinationName::Uniform,
        DestinationName::Permutation,
        DestinationName::Hotspot,
        DestinationName::GroupShift,
        DestinationName::Pairs,
    ];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            DestinationName::Uniform => ("uniform", "uniform over all hosts (include_self)"),
            DestinationName::Permutation => {
                ("permutation", "a random permutation drawn from the seed")
            }
            DestinationName::Hotspot => (
                "hotspot",
                "one hot host receives hotspot_fraction of the packets",
            ),
            DestinationName::GroupShift => (
                "group_shift",
                "every host to random hosts of the next group (pod or Dragonfly group)",
            ),
            DestinationName::Pairs => (
                "pairs",
                "each source of traffic.pairs to its destination; the other hosts send nothing",
            ),
        }
    }
}

/// Offered traffic.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Offered load per terminal, in cells: above 0 and at most 1. Unit: fraction of line
    /// rate.
    pub load: f64,
    /// Arrival process (`bursty` needs `burst_mean_cells` or `burst_mean_bytes`).
    pub arrival: ArrivalName,
    /// Bursty: mean burst length in cells.
    pub burst_mean_cells: Option<f64>,
    /// Bursty: mean burst length in payload bytes (alternative to `burst_mean_cells`).
    pub burst_mean_bytes: Option<f64>,
    /// Bursty, whole packets: mean number of packets per burst (the count geometric; an
    /// alternative to a length in cells or bytes).
    pub burst_mean_packets: Option<f64>,
    /// Bursty: whether a burst's last packet is cut to fit or kept whole.
    pub burst_packets: BurstPacketsName,
    /// A finite workload: payload bytes every host sends to every other host (uniform
    /// destinations), then stops; absent: hosts send until the run ends.
    pub bytes_per_pair: Option<u64>,
    /// Destination pattern.
    pub destinations: DestinationName,
    /// Pairs: `[source, destination]` host indices, a source at most once.
    pub pairs: Vec<[u32; 2]>,
    /// Uniform: whether a terminal may send to itself (`rifl`: false).
    pub include_self: bool,
    /// Uniform: only this many hosts send and receive, the others idle (Aquila's testbed ran
    /// 500 hosts on its 576 TiNs, Gibson et al. §5.1). They are taken a whole switch at a
    /// time (its hosts in order, the last switch's in part where the count ends inside it),
    /// from switches spread evenly over those with hosts; loads, throughputs and goodputs
    /// are then per active host. Absent: every host.
    pub active_hosts: Option<u32>,
    /// `rifl`: share of packets (whole bursts, under bursty arrivals) a host sends to every
    /// other host as one broadcast (Dst Port 255), the rest to `destinations`; the load counts
    /// a broadcast cell once at its source, its N − 1 copies at the outputs. Unit: fraction of
    /// packets.
    pub broadcast_fraction: f64,
    /// Hotspot: the hot terminal.
    pub hotspot_port: u32,
    /// Hotspot: share of packets sent to the hot terminal. Unit: fraction of packets.
    pub hotspot_fraction: f64,
    /// Fixed packet size in payload bytes, cut into cells (the last one padded); absent: one
    /// cell's payload.
    pub packet_bytes: Option<u32>,
    /// Variable packet sizes, uniformly distributed: the smallest, in payload bytes.
    pub packet_bytes_min: Option<u32>,
    /// Variable packet sizes, uniformly distributed: the largest, in payload bytes.
    pub packet_bytes_max: Option<u32>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            load: 0.5,
            arrival: ArrivalName::Bernoulli,
            burst_mean_cells: None,
            burst_mean_bytes: None,
            burst_mean_packets: None,
            burst_packets: BurstPacketsName::Whole,
            bytes_per_pair: None,
            destinations: DestinationName::Uniform,
            pairs: Vec::new(),
            include_self: true,
            active_hosts: None,
            broadcast_fraction: 0.0,
            hotspot_port: 0,
            hotspot_fraction: 0.0,
            packet_bytes: None,
            packet_bytes_min: None,
            packet_bytes_max: None,
        }
    }
}
