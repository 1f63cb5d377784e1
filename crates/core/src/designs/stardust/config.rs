//! Stardust's scenario (Zilberman et al., NSDI '19): the validated description of one run. Unknown
//! keys, wrong types and impossible values are rejected with one [`ScenarioError`] naming the key.
//! Where the paper leaves a value open, the default is the reading named beside it (R1, R2, ...,
//! each stated in the Readings section of `docs/validation/stardust.md`).

use serde::{Deserialize, Serialize};

use crate::blocks::ethernet::host_config::{HostConfig, DCQCN_HOST_KEYS};
use crate::blocks::ethernet::opening::Opening;
use crate::blocks::ethernet::pfc::PauseThresholds;
use crate::blocks::link::LinkConfig;
use crate::blocks::patterns::{
    self, all_to_all, fct, incast, listed, permutation, ListedFlow, PatternKeys, TrafficPattern,
    TransportHosts,
};
use crate::blocks::reachability::MAX_SLICE_ADAPTERS;
use crate::blocks::routing::mode;
use crate::blocks::topology::Topology;
use crate::blocks::transport::Transport;
use crate::blocks::workload::FctKeys;
use crate::engine::time::{ps_from_ns, TimePs};
use crate::scenario::{
    invalid, Named, RoutingConfig, RunConfig, ScenarioError, TopologyConfig, Unused, UnusedKeys,
};

/// A whole Stardust scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StardustConfig {
    /// Always `"stardust"` (read by [`crate::designs::build`]).
    pub design: String,
    /// Run length, warm-up and seed.
    #[serde(default)]
    pub run: RunConfig,
    /// The Clos: edge switches become fabric adapters, every other switch a fabric element.
    #[serde(default = "default_topology")]
    pub topology: TopologyConfig,
    /// Every cable (a topology file may give a cable its own rate and length).
    #[serde(default)]
    pub link: LinkConfig,
    /// Cell format (§4.1).
    #[serde(default)]
    pub cell: CellConfig,
    /// Credits (§3.3, §4.1).
    #[serde(default)]
    pub credit: CreditConfig,
    /// Pull (credits) or push.
    #[serde(default)]
    pub stardust: ModeConfig,
    /// Fabric adapters (§3.3, §4.1).
    #[serde(default)]
    pub adapter: AdapterConfig,
    /// Fabric elements (§4.2).
    #[serde(default)]
    pub element: ElementConfig,
    /// How adapters and elements spray cells over the links toward a destination (§5.3).
    #[serde(default = "default_routing")]
    pub routing: RoutingConfig,
    /// What the hosts send.
    #[serde(default)]
    pub traffic: TrafficConfig,
    /// How devices learn which links reach which adapter (§4.2, §5.9, App. E).
    #[serde(default)]
    pub reachability: ReachabilityConfig,
    /// Links cut and elements failed during the run (§5.9, §5.10).
    #[serde(default)]
    pub failures: Vec<FailureConfig>,
    /// Hosts that run a transport over the adapters' host ports (§6.3: unmodified TCP
    /// NewReno), keyed as the Ethernet design's `[host]`; without `host.transport` the hosts
    /// are the built-in sources of `traffic`.
    #[serde(default)]
    pub host: HostSection,
}

/// The `[host]` section: the Ethernet design's host keys, read only when `transport` is
/// given (its presence is what turns the built-in sources into transport hosts).
#[derive(Clone, Debug, Default)]
pub struct HostSection {
    /// True when the scenario names `host.transport`.
    pub transport_set: bool,
    /// The keys, with the Ethernet design's defaults.
    pub config: HostConfig,
}

impl HostSection {
    /// The hosts' transport, if they run one.
    pub fn transport(&self) -> Option<Transport> {
        self.transport_set.then_some(self.config.transport)
    }
}

impl<'de> Deserialize<'de> for HostSection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = serde_json::Map::deserialize(d)?;
        let transport_set = table.contains_key("transport");
        let config = HostConfig::deserialize(serde_json::Value::Object(table))
            .map_err(serde::de::Error::custom)?;
        Ok(HostSection {
            transport_set,
            config,
        })
    }
}

impl Serialize for HostSection {
    /// The section as the run reads it: absent without a transport.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.transport_set {
            true => self.config.serialize(s),
            false => s.serialize_none(),
        }
    }
}

/// The error naming `host.transport` when it is not a transport at all (the `[host]` section
/// is read whole, so a parse error inside it would name only `host`).
fn transport_error(json: &str) -> Option<ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    let transport = value.get("host")?.get("transport")?;
    let error = Transport::deserialize(transport).err()?;
    Some(invalid("host.transport", error.to_string()))
}

/// Every key of `[host]` but `transport`: unused without a transport.
const HOST_KEYS: &[&str] = &[
    "host.packet_bytes",
    "host.ack_bytes",
    "host.initial_cwnd_packets",
    "host.initial_ssthresh_packets",
    "host.min_rto_ns",
    "host.max_rto_ns",
    "host.delayed_ack",
    "host.delayed_ack_ns",
    "host.dctcp_g",
    "host.subflows",
    "host.ndp_pull_rate",
    "host.ndp_paths",
];

/// Where reachability tables come from.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReachMode {
    /// Computed from the topology before the run; no messages (runs without failures).
    #[default]
    Static,
    /// Kept by reachability messages on every fabric link (§4.2), starting converged.
    Messages,
}

/// Reachability tables.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReachabilityConfig {
    /// Static tables, or tables kept by messages (needed for failures).
    pub mode: ReachMode,
    /// Time between a device's reachability messages on a link (t' of App. E: 10 µs).
    pub interval_ns: f64,
    /// Adapters a message's bitmap covers (b of App. E is 128; at most 64 here, since the
    /// bitmap travels in one 64-bit word; a full table takes M = adapters / b messages).
    pub slice_adapters: u32,
    /// Agreeing intervals before a link or a table entry changes state (th of App. E: 3).
    pub threshold: u32,
    /// A VOQ that has waited this long for a credit asks again: with failures, a request (or
    /// every credit answering it) can be lost, and the paper does not say how a VOQ recovers
    /// (reading R1 names periodic reports). 1 ms is far above any credit wait of a healthy
    /// fabric. Messages mode only (static tables mean no failures, so nothing is lost).
    pub request_refresh_ns: f64,
}

impl Default for ReachabilityConfig {
    fn default() -> Self {
        ReachabilityConfig {
            mode: ReachMode::Static,
            interval_ns: 10_000.0,
            slice_adapters: 64,
            threshold: 3,
            request_refresh_ns: 1_000_000.0,
        }
    }
}

/// A scripted failure: a cable cut (both directions lose their signal at once) or a fabric
/// element failing, at a time, and optionally its repair.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    /// When it fails, in nanoseconds from the start.
    pub at_ns: f64,
    /// The switch of the topology (its number in the topology's numbering).
    pub switch: u32,
    /// The port of `switch` whose cable is cut; absent: the switch itself fails (it must be a
    /// fabric element).
    pub port: Option<u32>,
    /// When it is repaired; absent: never.
    pub restore_ns: Option<f64>,
}

fn default_topology() -> TopologyConfig {
    TopologyConfig::fat_tree(4)
}

fn default_routing() -> RoutingConfig {
    RoutingConfig {
        mode: "spray".into(),
        ..RoutingConfig::default()
    }
}

/// Cell format.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CellConfig {
    /// Largest cell on the wire, header included (C; 256 B in §4.1).
    pub size_bytes: u32,
    /// Header of a data cell (H; not given by the paper, reading R2).
    pub header_bytes: u32,
    /// A control cell (credit, request) on the wire (reading R3: the 24 B of Table 4).
    pub control_bytes: u32,
}

impl Default for CellConfig {
    fn default() -> Self {
        CellConfig {
            size_bytes: 256,
            header_bytes: 16,
            control_bytes: 24,
        }
    }
}

/// Credits.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CreditConfig {
    /// Bytes one credit lets a VOQ send (2–4 KB in the paper).
    pub size_bytes: u32,
    /// Credit rate above the port rate (3% in the htsim runs of §6.3).
    pub speedup: f64,
}

impl Default for CreditConfig {
    fn default() -> Self {
        CreditConfig {
            size_bytes: 2048,
            speedup: 0.03,
        }
    }
}

/// Pull or push.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModeConfig {
    /// True: VOQs send only on credit (Stardust). False: adapters push what arrives, round
    /// robin over their VOQs, and elements drop what does not fit (the push fabric of Fig. 7).
    pub credits: bool,
    /// Weights of the traffic classes at the ports' credit schedulers (weighted round robin,
    /// §4.1), one per class in use; absent: strict priority, class 0 first. Element queues
    /// serve classes by strict priority either way.
    pub class_weights: Option<Vec<u32>>,
}

impl Default for ModeConfig {
    fn default() -> Self {
        ModeConfig {
            credits: true,
            class_weights: None,
        }
    }
}

/// Fabric adapters.
#[derive(Clone, Debug, Deserialize, Serialize)]
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
    /// A stream gap still open after this long is given up and the packets it broke are
    /// discarded (§4.1; reading R15: 100 µs).
    pub reassembly_timeout_ns: f64,
    /// An adapter that receives a cell marked FCI cuts the credit rate of all its ports by
    /// this fraction, at most once per `fci_window_ns` (§4.2; reading R12 suggests 1/8).
    /// Default 0, no reaction: the paper gives no law, reading R12's must be calibrated
    /// against Fig. 9's 120% → 0.9 (not built yet), and uncalibrated it cuts credits on the
    /// bursts of jumbo packets in fabrics that are not over-subscribed.
    pub fci_decrease: f64,
    /// Every `fci_window_ns` without a cut, the credit rate recovers by this fraction of the
    /// nominal rate (additive increase; the paper gives no law).
    pub fci_increase: f64,
    /// The FCI reaction's window; absent: four fabric round trips (reading R12).
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
            reassembly_timeout_ns: 100_000.0,
            fci_decrease: 0.0,
            fci_increase: 1.0 / 64.0,
            fci_window_ns: None,
            pause_hosts: false,
            pause_xoff_packets: 8,
            pause_xon_packets: 4,
            pause_headroom_packets: 4,
        }
    }
}

/// Fabric elements.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElementConfig {
    /// Data cells per output link (128 in §6.2's extrapolation). With credits the queues share
    /// a pool of this many per link (§5.5, reading R13) and a data cell is dropped only when
    /// the pool is full; in push mode each queue (per traffic class) holds this many.
    pub queue_cells: u32,
    /// Queue depth at and above which data cells leaving the queue carry the FCI bit (§4.2;
    /// reading R12: 32 cells).
    pub fci_threshold_cells: u32,
    /// Queue depth at which an output pauses the inputs that feed it (§5.5's last resort);
    /// it resumes them at half this depth. Absent: half the queue, leaving the other half
    /// for the cells paused inputs still have on their way (each link keeps its pool to itself;
    /// reading R13's pool shared by the element's links is not modelled). Push mode never
    /// pauses.
    pub pause_cells: Option<u32>,
}

impl Default for ElementConfig {
    fn default() -> Self {
        ElementConfig {
            queue_cells: 128,
            fci_threshold_cells: 32,
            pause_cells: None,
        }
    }
}

impl ElementConfig {
    /// The queue depth that pauses inputs.
    pub fn pause_cells(&self) -> u32 {
        self.pause_cells.unwrap_or(self.queue_cells.div_ceil(2))
    }
}

/// The patterns Stardust's hosts run, in the order its messages list them.
pub const PATTERNS: &[&TrafficPattern] = &[
    &permutation::PATTERN,
    &listed::PATTERN,
    &incast::PATTERN,
    &all_to_all::PATTERN,
    &fct::PATTERN,
];

/// How a flow's packets are spaced.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly, at the flow's rate.
    #[default]
    Constant,
    /// Exponential gaps of the same mean (Poisson arrivals).
    Poisson,
}

/// What the hosts send: packets of one size at a constant rate.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Who sends to whom, one of [`PATTERNS`] (what each sends: `blocks/patterns/`).
    pub pattern: String,
    /// Bytes per host packet (9000 in §6.3).
    pub packet_bytes: u32,
    /// Permutation and incast: offered rate per sending host as a fraction of its line rate
    /// (1: saturated).
    pub load: f64,
    /// How packets are spaced.
    pub arrival: Arrival,
    /// Incast: the receiving host.
    pub incast_host: u32,
    /// Incast: how many hosts send (drawn at random from the run's seed); absent: all others.
    pub senders: Option<u32>,
    /// Bytes every flow sends before it ends (finite flows all start at time 0, and report
    /// their completion times); absent: flows never end.
    pub flow_bytes: Option<u64>,
    /// Fct: the host whose flows are timed, and the host it sends them to.
    pub fct_src: u32,
    /// Fct: see `fct_src`.
    pub fct_dst: u32,
    /// Fct: the timed flows' offered load, a fraction of the line rate.
    pub fct_load: f64,
    /// Fct: a flow-size distribution file (`size cdf` lines; relative paths in a scenario
    /// file are resolved against its folder by the front end).
    pub flow_sizes: Option<String>,
    /// Fct: unending flows per background host.
    pub background_flows: u32,
    /// Flows: the list.
    pub flows: Vec<ListedFlow>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: permutation::PATTERN.name.into(),
            packet_bytes: 9000,
            load: 1.0,
            arrival: Arrival::Constant,
            incast_host: 0,
            senders: None,
            flow_bytes: None,
            fct_src: 0,
            fct_dst: 1,
            fct_load: 0.5,
            flow_sizes: None,
            background_flows: 4,
            flows: Vec::new(),
        }
    }
}

/// The largest cell: cells count their payload in 16 bits.
const MAX_CELL_BYTES: u32 = 16_384;

impl StardustConfig {
    /// The keys the chosen traffic pattern, mode, reachability and FCI reaction do not read.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let mut unused = UnusedKeys::default();
        if let Ok(keys) = self.traffic_keys() {
            for (key, because) in keys.unused(PATTERNS) {
                unused.add(&[key], "traffic.pattern", because);
            }
        }
        if self.reachability.mode == ReachMode::Static {
            unused.add(
                &[
                    "reachability.interval_ns",
                    "reachability.slice_adapters",
                    "reachability.threshold",
                ],
                "reachability.mode",
                "reachability.mode = \"static\" (no reachability messages)",
            );
        }
        if !self.adapter.pause_hosts {
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
        if self.adapter.fci_decrease == 0.0 {
            unused.add(
                &["adapter.fci_increase", "adapter.fci_window_ns"],
                "adapter.fci_decrease",
                "adapter.fci_decrease = 0 (no FCI reaction)",
            );
        }
        match self.host.transport() {
            None => {
                for keys in [HOST_KEYS, DCQCN_HOST_KEYS] {
                    unused.add(
                        keys,
                        "host.transport",
                        "host.transport absent (the hosts are the built-in sources of traffic)",
                    );
                }
            }
            Some(transport) => {
                unused.add(
                    &["traffic.packet_bytes", "traffic.load", "traffic.arrival"],
                    "host.transport",
                    "host.transport set (the hosts' transport paces them; host.packet_bytes sizes their segments)",
                );
                let named = format!("host.transport = {:?}", transport.as_str());
                let (keys, because) = self.host.config.unused_by_transport();
                unused.add(keys, "host.transport", because);
                if !matches!(
                    transport,
                    Transport::Dctcp | Transport::Ndp | Transport::Dcqcn
                ) {
                    unused.add(
                        &["host.dctcp_g"],
                        "host.transport",
                        format!("{named} (not ECN-capable)"),
                    );
                }
                if transport != Transport::Mptcp {
                    unused.add(
                        &["host.subflows"],
                        "host.transport",
                        format!("{named} (one path per flow)"),
                    );
                }
                if transport != Transport::Ndp {
                    unused.add(&["host.ndp_pull_rate"], "host.transport", &named);
                }
                unused.add(
                    &["host.ndp_paths"],
                    "host.transport",
                    "Stardust's fabric sprays cells itself: no host labels paths",
                );
                if transport != Transport::Dcqcn {
                    unused.add(DCQCN_HOST_KEYS, "host.transport", &named);
                }
                if !self.host.config.delayed_ack
                    && !matches!(transport, Transport::Ndp | Transport::Dcqcn)
                {
                    unused.add(
                        &["host.delayed_ack_ns"],
                        "host.delayed_ack",
                        "host.delayed_ack = false (an ACK per segment)",
                    );
                }
            }
        }
        if !self.stardust.credits {
            unused.add(
                &["stardust.class_weights", "element.pause_cells"],
                "stardust.credits",
                "stardust.credits = false (push mode has no credit schedulers and never pauses)",
            );
        }
        unused.into_vec()
    }

    /// Reads and validates a scenario.
    pub fn from_json(json: &str) -> Result<StardustConfig, ScenarioError> {
        let config: StardustConfig =
            crate::scenario::parse(json).map_err(|e| transport_error(json).unwrap_or(e))?;
        config.validate()?;
        Ok(config)
    }

    /// The cabling; edge switches (those with hosts) are the adapters.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        self.topology.standalone()
    }

    /// Line rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        (self.link.rate_gbps * 1e9).round() as u64
    }

    /// Line rate of a host's link in bit/s.
    pub fn host_rate_bps(&self) -> u64 {
        (self.link.host_rate_gbps.unwrap_or(self.link.rate_gbps) * 1e9).round() as u64
    }

    /// Propagation delay of a cable.
    pub fn propagation_ps(&self) -> TimePs {
        ps_from_ns(self.link.propagation_ns)
    }

    /// Traffic classes the flows use.
    pub fn classes(&self) -> usize {
        self.traffic
            .flows
            .iter()
            .map(|f| f.class as usize + 1)
            .max()
            .unwrap_or(1)
    }

    /// Payload bytes of a full data cell.
    pub fn payload_bytes(&self) -> u32 {
        self.cell.size_bytes - self.cell.header_bytes
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        self.run.validate()?;
        self.link.validate()?;
        let cell = &self.cell;
        if cell.size_bytes > MAX_CELL_BYTES {
            return Err(invalid(
                "cell.size_bytes",
                format!("expected at most {MAX_CELL_BYTES} bytes"),
            ));
        }
        if cell.header_bytes >= cell.size_bytes {
            return Err(invalid(
                "cell.header_bytes",
                format!(
                    "expected fewer bytes than the cell (cell.size_bytes = {})",
                    cell.size_bytes
                ),
            ));
        }
        if cell.control_bytes == 0 || cell.control_bytes > cell.size_bytes {
            return Err(invalid(
                "cell.control_bytes",
                format!("expected 1 to cell.size_bytes ({}) bytes", cell.size_bytes),
            ));
        }
        if self.credit.size_bytes < cell.size_bytes {
            return Err(invalid(
                "credit.size_bytes",
                format!(
                    "expected at least one cell (cell.size_bytes = {})",
                    cell.size_bytes
                ),
            ));
        }
        if !(self.credit.speedup.is_finite() && (0.0..=1.0).contains(&self.credit.speedup)) {
            return Err(invalid(
                "credit.speedup",
                "expected 0 to 1 (a fraction above the port rate)",
            ));
        }
        if let Some(weights) = &self.stardust.class_weights {
            if weights.len() != self.classes() || weights.contains(&0) {
                return Err(invalid(
                    "stardust.class_weights",
                    format!(
                        "expected {} positive weights, one per traffic class in use",
                        self.classes()
                    ),
                ));
            }
        }
        if self.adapter.voq_packets == 0 {
            return Err(invalid("adapter.voq_packets", "expected at least 1 packet"));
        }
        if self.adapter.uplink_cells == 0 {
            return Err(invalid("adapter.uplink_cells", "expected at least 1 cell"));
        }
        let timeout = self.adapter.reassembly_timeout_ns;
        if !(timeout.is_finite() && ps_from_ns(timeout) > 0) {
            return Err(invalid(
                "adapter.reassembly_timeout_ns",
                "expected a positive number of nanoseconds",
            ));
        }
        let fraction = |x: f64| x.is_finite() && (0.0..1.0).contains(&x);
        if !fraction(self.adapter.fci_decrease) {
            return Err(invalid(
                "adapter.fci_decrease",
                "expected at least 0, below 1",
            ));
        }
        if !fraction(self.adapter.fci_increase) {
            return Err(invalid(
                "adapter.fci_increase",
                "expected at least 0, below 1",
            ));
        }
        if let Some(ns) = self.adapter.fci_window_ns {
            if !(ns.is_finite() && ps_from_ns(ns) > 0) {
                return Err(invalid(
                    "adapter.fci_window_ns",
                    "expected a positive number of nanoseconds",
                ));
            }
        }
        let element = &self.element;
        if element.queue_cells == 0 {
            return Err(invalid("element.queue_cells", "expected at least 1 cell"));
        }
        if element.fci_threshold_cells > element.queue_cells {
            return Err(invalid(
                "element.fci_threshold_cells",
                format!(
                    "expected at most element.queue_cells ({})",
                    element.queue_cells
                ),
            ));
        }
        let pause = element.pause_cells();
        if pause == 0 || pause > element.queue_cells {
            return Err(invalid(
                "element.pause_cells",
                format!(
                    "expected 1 to element.queue_cells ({})",
                    element.queue_cells
                ),
            ));
        }
        match mode(&self.routing.mode) {
            Some(m) if !m.needs_groups => {}
            _ => {
                return Err(invalid(
                    "routing.mode",
                    format!(
                        "expected spray, rr_fixed, random, least_loaded, ecmp or deterministic, got {:?}",
                        self.routing.mode
                    ),
                ))
            }
        }
        if self.routing.spray_rounds == 0 {
            return Err(invalid("routing.spray_rounds", "expected at least 1"));
        }
        self.validate_reachability()?;
        self.validate_host()?;
        self.validate_traffic()
    }

    /// Transport hosts: the transports the fabric carries; hosts the adapters pause.
    fn validate_host(&self) -> Result<(), ScenarioError> {
        let a = &self.adapter;
        if a.pause_hosts {
            if self.host.transport().is_none() {
                return Err(invalid(
                    "adapter.pause_hosts",
                    "expected host.transport with adapter.pause_hosts = true (built-in sources are never paused)",
                ));
            }
            if let Some(thresholds) = self.pause_thresholds() {
                thresholds.validate("adapter.pause_")?;
            }
        }
        let Some(transport) = self.host.transport() else {
            return Ok(());
        };
        if matches!(transport, Transport::Ndp | Transport::Dcqcn) && !self.adapter.pause_hosts {
            return Err(invalid(
                "host.transport",
                format!(
                    "expected \"tcp\", \"dctcp\" or \"mptcp\" on a Stardust fabric, got {} without adapter.pause_hosts = true (DCQCN needs a lossless path that pauses its senders, NDP trimming or a lossless path: a Stardust fabric never trims, and adapters that do not pause their hosts drop at a full VOQ)",
                    serde_json::json!(transport)
                ),
            ));
        }
        self.host.config.validate()
    }

    /// With `adapter.pause_hosts`, the thresholds at which host ports pause their hosts.
    pub fn pause_thresholds(&self) -> Option<PauseThresholds> {
        let a = &self.adapter;
        a.pause_hosts.then_some(PauseThresholds {
            xoff_packets: a.pause_xoff_packets,
            xon_packets: a.pause_xon_packets,
            headroom_packets: a.pause_headroom_packets,
        })
    }

    /// Bytes of the largest packet a host sends: a transport's segment, or a built-in
    /// source's packet.
    pub fn packet_bytes(&self) -> u32 {
        match self.host.transport() {
            Some(_) => self.host.config.packet_bytes,
            None => self.traffic.packet_bytes,
        }
    }

    /// Reachability and failures, as far as they can be checked without the topology (the
    /// switches and ports failures name are checked when the fabric is built).
    fn validate_reachability(&self) -> Result<(), ScenarioError> {
        let r = &self.reachability;
        if !(r.interval_ns.is_finite() && r.interval_ns >= 1.0) {
            return Err(invalid(
                "reachability.interval_ns",
                "expected at least 1 nanosecond",
            ));
        }
        if !(1..=MAX_SLICE_ADAPTERS).contains(&r.slice_adapters) {
            return Err(invalid(
                "reachability.slice_adapters",
                format!("expected 1 to {MAX_SLICE_ADAPTERS}"),
            ));
        }
        if r.threshold == 0 {
            return Err(invalid("reachability.threshold", "expected at least 1"));
        }
        if !(r.request_refresh_ns.is_finite() && r.request_refresh_ns >= 1.0) {
            return Err(invalid(
                "reachability.request_refresh_ns",
                "expected at least 1 nanosecond",
            ));
        }
        if !self.failures.is_empty() && r.mode != ReachMode::Messages {
            return Err(invalid(
                "failures",
                "scripted failures need reachability.mode = \"messages\" (static tables cannot notice them)",
            ));
        }
        for (i, f) in self.failures.iter().enumerate() {
            if !(f.at_ns.is_finite() && f.at_ns >= 0.0) {
                return Err(invalid(
                    &format!("failures[{i}].at_ns"),
                    "expected 0 or more nanoseconds",
                ));
            }
            if let Some(restore_ns) = f.restore_ns {
                if !(restore_ns.is_finite() && restore_ns > f.at_ns) {
                    return Err(invalid(
                        &format!("failures[{i}].restore_ns"),
                        format!("expected a time after failures[{i}].at_ns ({} ns)", f.at_ns),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The traffic section as the traffic patterns read it; the error names
    /// `traffic.pattern` if it is not one of [`PATTERNS`].
    pub fn traffic_keys(&self) -> Result<PatternKeys<'_>, ScenarioError> {
        let t = &self.traffic;
        Ok(PatternKeys {
            pattern: patterns::resolve(PATTERNS, &t.pattern)?,
            flow_bytes: t.flow_bytes,
            incast_host: t.incast_host,
            senders: t.senders,
            fct: FctKeys {
                src: t.fct_src,
                dst: t.fct_dst,
                load: t.fct_load,
                flow_sizes: t.flow_sizes.as_deref(),
                background_flows: t.background_flows,
            },
            load: t.load,
            flows_per_host: 0,
            pairs: &[],
            flows: &t.flows,
            classes: super::MAX_CLASSES,
        })
    }

    /// With transport hosts: how they open flows during the run (`None` otherwise: flows made
    /// at build, or built-in sources).
    pub fn opening(&self) -> Option<Opening<'_>> {
        self.host.transport()?;
        self.traffic_keys().ok()?.opening()
    }

    /// The built-in sources' keys, then the pattern's (on transport hosts, if they run one):
    /// `traffic.senders` and `traffic.flows` are refused with a pattern that does not read
    /// them, and `traffic.load` checked where the flows do not carry their own.
    fn validate_traffic(&self) -> Result<(), ScenarioError> {
        let t = &self.traffic;
        if t.packet_bytes == 0 {
            return Err(invalid("traffic.packet_bytes", "expected at least 1 byte"));
        }
        let keys = self.traffic_keys()?;
        keys.refuse_unless_own("traffic.senders", t.senders.is_some())?;
        keys.refuse_unless_own("traffic.flows", !t.flows.is_empty())?;
        if !keys.pattern.own_loads && !crate::scenario::is_load(t.load) {
            return Err(invalid(
                "traffic.load",
                "expected a fraction of line rate from 1e-6 to 1",
            ));
        }
        let hosts = self.host.transport().map(|transport| TransportHosts {
            transport,
            packet_bytes: self.host.config.packet_bytes,
        });
        keys.validate(PATTERNS, hosts)
    }
}
