//! Stardust's scenario (Zilberman et al., NSDI '19): the validated description of one run. Unknown
//! keys, wrong types and impossible values are rejected with one [`ScenarioError`] naming the key.
//! Where the paper leaves a value open, the default is the reading named beside it (R1, R2, ...,
//! each stated in the Readings section of `docs/validation/stardust.md`). Each part's keys, checks
//! and unused-key rules live with the part ([`CellConfig`] with the wire format, the adapter's in
//! `adapter/keys.rs`, [`ElementConfig`] with the element, reachability's with it, the hosts' in
//! `host_keys.rs`); this file puts them together, with the traffic section and the checks that
//! span sections.

use serde::{Deserialize, Serialize};

use super::adapter::keys::{AdapterConfig, CreditConfig, ModeConfig};
use super::element::ElementConfig;
use super::host_keys::{transport_error, HostSection};
use super::reach::{FailureConfig, ReachabilityConfig};
use super::wire::CellConfig;
use crate::blocks::ethernet::opening::Opening;
use crate::blocks::ethernet::ports::pfc::PauseThresholds;
use crate::blocks::link::LinkConfig;
use crate::blocks::patterns::{
    self, all_to_all, fct, incast, listed, permutation, ListedFlow, PatternKeys, TrafficPattern,
    TransportHosts,
};
use crate::blocks::routing::mode;
use crate::blocks::topology::Topology;
use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::Transport;
use crate::blocks::workload::FctKeys;
use crate::scenario::{
    invalid, RoutingConfig, RunConfig, ScenarioError, TopologyConfig, Unused, UnusedKeys,
};

/// A whole Stardust scenario.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StardustConfig {
    /// The design: `"stardust"` (every other design has keys of its own: `cellfabric keys`).
    pub design: String,
    /// Run length, warm-up and seed.
    #[serde(default)]
    pub run: RunConfig,
    /// The Clos: edge switches become fabric adapters, every other switch a fabric element.
    #[serde(default = "TopologyConfig::fat_tree_4")]
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
    #[schemars(with = "HostConfig")]
    pub host: HostSection,
}

/// Spraying, the paper's (§5.3).
fn default_routing() -> RoutingConfig {
    RoutingConfig::of_mode("spray")
}

/// The patterns Stardust's hosts run, in the order its messages list them.
pub const PATTERNS: &[&TrafficPattern] = &[
    &permutation::PATTERN,
    &listed::PATTERN,
    &incast::PATTERN,
    &all_to_all::PATTERN,
    &fct::PATTERN,
];

/// `traffic.pattern`'s schema: the names of [`PATTERNS`].
fn pattern_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    patterns::names_schema(PATTERNS)
}

/// How a flow's packets are spaced.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly, at the flow's rate.
    #[default]
    Constant,
    /// Exponential gaps of the same mean (Poisson arrivals).
    Poisson,
}

/// What the hosts send: packets of one size at a constant rate.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Who sends to whom, one of [`PATTERNS`] (what each sends: `blocks/patterns/`).
    #[schemars(schema_with = "pattern_names")]
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

impl StardustConfig {
    /// The keys the chosen traffic pattern, mode, reachability and FCI reaction do not read.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let mut unused = UnusedKeys::default();
        if let Ok(keys) = self.traffic_keys() {
            for (key, because) in keys.unused(PATTERNS) {
                unused.add(&[key], "traffic.pattern", because);
            }
        }
        self.reachability.unused(&mut unused);
        self.adapter.unused(&mut unused);
        self.host.unused(&mut unused);
        self.stardust.unused(&mut unused);
        self.routing.add_unused_weights(&mut unused);
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
        self.cell.validate()?;
        self.credit.validate(self.cell.size_bytes)?;
        self.stardust.validate(self.classes())?;
        self.adapter.validate()?;
        self.element.validate()?;
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
        self.reachability.validate(&self.failures)?;
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
        if a.host_gap_bytes > 0 {
            return Err(invalid(
                "adapter.host_gap_bytes",
                "expected 0 with host.transport (a transport host's NIC sends no inter-packet gap; the gap is modelled for the built-in hosts only)",
            ));
        }
        if matches!(transport, Transport::Ndp | Transport::Dcqcn) && !self.adapter.pause_hosts {
            return Err(invalid(
                "host.transport",
                format!(
                    "expected \"tcp\", \"dctcp\" or \"mptcp\" on a Stardust fabric, got {} without adapter.pause_hosts = true (DCQCN needs a lossless path that pauses its senders, NDP trimming or a lossless path: a Stardust fabric never trims, and adapters that do not pause their hosts drop at a full VOQ)",
                    serde_json::json!(transport)
                ),
            ));
        }
        if transport == Transport::LineRate && self.host.config.inflight_cap_bytes.is_none() {
            return Err(invalid(
                "host.inflight_cap_bytes",
                "expected a cap in bytes with host.transport = \"line_rate\" on a Stardust fabric (only an Ethernet fabric derives it from its longest path)",
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
