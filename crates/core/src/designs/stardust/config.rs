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
use crate::blocks::routing::mode;
use crate::blocks::topology::Topology;
use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::Transport;
use crate::blocks::workload::FctKeys;
use crate::engine::time::{ps_from_ns, TimePs};
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
    #[schemars(with = "HostConfig")]
    pub host: HostSection,
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

/// Destination patterns.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Every host sends to one other host and receives from one (a random derangement).
    #[default]
    Permutation,
    /// The flows listed in `traffic.flows`.
    Flows,
    /// Every host but `traffic.incast_host` sends to it, each at `traffic.load`.
    Incast,
    /// Every host sends to every other, `traffic.load` of its line rate in all, split evenly
    /// (Fig. 9's flows between every pair of adapters).
    AllToAll,
    /// Fig. 10b: `traffic.fct_src` sends flows of sizes drawn from `traffic.flow_sizes` to
    /// `traffic.fct_dst`, arriving as a Poisson process at `traffic.fct_load` of its line rate
    /// and sent one after another at line rate; every other host keeps
    /// `traffic.background_flows` unending flows to random other hosts, `traffic.load` of its
    /// line rate in all.
    Fct,
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

/// One flow of `traffic.flows`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Offered rate as a fraction of the sending host's line rate.
    pub load: f64,
    /// Traffic class, 0 (served first) to 3.
    #[serde(default)]
    pub class: u32,
}

/// What the hosts send: packets of one size at a constant rate.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Who sends to whom.
    pub pattern: Pattern,
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
    pub flows: Vec<FlowConfig>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: Pattern::Permutation,
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
        let pattern = self.traffic.pattern;
        let because = format!("traffic.pattern = {}", serde_json::json!(pattern));
        let own: [(&[&str], Pattern); 3] = [
            (&["traffic.incast_host", "traffic.senders"], Pattern::Incast),
            (
                &[
                    "traffic.fct_src",
                    "traffic.fct_dst",
                    "traffic.fct_load",
                    "traffic.flow_sizes",
                    "traffic.background_flows",
                ],
                Pattern::Fct,
            ),
            (&["traffic.flows"], Pattern::Flows),
        ];
        for (keys, _) in own.into_iter().filter(|&(_, owner)| owner != pattern) {
            unused.add(keys, "traffic.pattern", &because);
        }
        if pattern == Pattern::Flows {
            unused.add(
                &["traffic.load"],
                "traffic.pattern",
                format!("{because} (each flow has its own load)"),
            );
        }
        self.reachability.unused(&mut unused);
        self.adapter.unused(&mut unused);
        self.host.unused(&mut unused);
        self.stardust.unused(&mut unused);
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
        self.validate_traffic()?;
        self.validate_host()
    }

    /// Transport hosts: the transports the fabric carries and the patterns they run; hosts
    /// the adapters pause.
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
        self.host.config.validate()?;
        let pattern = serde_json::json!(self.traffic.pattern);
        match self.traffic.pattern {
            Pattern::Permutation | Pattern::Incast => {}
            Pattern::Fct => crate::blocks::ethernet::opening::check_opening(
                transport,
                &pattern.to_string(),
                self.traffic.flow_bytes,
            )?,
            _ => {
                return Err(invalid(
                    "traffic.pattern",
                    format!(
                        "expected \"permutation\", \"incast\" or \"fct\" with host.transport, got {pattern}"
                    ),
                ))
            }
        }
        let mss = self.host.config.packet_bytes as u64;
        if self
            .traffic
            .flow_bytes
            .is_some_and(|b| b.div_ceil(mss) >= u32::MAX as u64)
        {
            return Err(invalid(
                "traffic.flow_bytes",
                "expected fewer than 2^32 packets (absent: an unending flow)",
            ));
        }
        Ok(())
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

    /// The `fct` pattern's keys, read as every design reads them.
    pub fn fct_keys(&self) -> FctKeys<'_> {
        let t = &self.traffic;
        FctKeys {
            src: t.fct_src,
            dst: t.fct_dst,
            load: t.fct_load,
            flow_sizes: t.flow_sizes.as_deref(),
            background_flows: t.background_flows,
        }
    }

    /// With transport hosts on the `fct` pattern: how they open flows during the run (`None`
    /// otherwise: flows made at build, or built-in sources).
    pub fn opening(&self) -> Option<Opening<'_>> {
        let opens = self.traffic.pattern == Pattern::Fct && self.host.transport().is_some();
        opens.then(|| Opening::Fct(self.fct_keys()))
    }

    fn validate_traffic(&self) -> Result<(), ScenarioError> {
        let t = &self.traffic;
        if t.packet_bytes == 0 {
            return Err(invalid("traffic.packet_bytes", "expected at least 1 byte"));
        }
        if t.flow_bytes == Some(0) {
            return Err(invalid("traffic.flow_bytes", "expected at least 1 byte"));
        }
        if t.pattern != Pattern::Incast && t.senders.is_some() {
            return Err(invalid(
                "traffic.senders",
                "applies only to traffic.pattern = \"incast\"",
            ));
        }
        let load_ok = crate::scenario::is_load;
        if t.pattern == Pattern::Fct {
            self.fct_keys().validate()?;
        }
        match t.pattern {
            Pattern::Permutation | Pattern::Incast | Pattern::Fct | Pattern::AllToAll => {
                if !t.flows.is_empty() {
                    return Err(invalid(
                        "traffic.flows",
                        "applies only to traffic.pattern = \"flows\"",
                    ));
                }
                if !load_ok(t.load) {
                    return Err(invalid(
                        "traffic.load",
                        "expected a fraction of line rate from 1e-6 to 1",
                    ));
                }
            }
            Pattern::Flows => {
                if t.flows.is_empty() {
                    return Err(invalid(
                        "traffic.flows",
                        "expected at least one {src, dst, load} with traffic.pattern = \"flows\"",
                    ));
                }
                for (i, flow) in t.flows.iter().enumerate() {
                    if flow.src == flow.dst {
                        return Err(invalid(
                            &format!("traffic.flows[{i}].dst"),
                            "expected a host other than src",
                        ));
                    }
                    if flow.class as usize >= super::MAX_CLASSES {
                        return Err(invalid(
                            &format!("traffic.flows[{i}].class"),
                            format!("expected 0 to {}", super::MAX_CLASSES - 1),
                        ));
                    }
                    if !load_ok(flow.load) {
                        return Err(invalid(
                            &format!("traffic.flows[{i}].load"),
                            "expected a fraction of line rate from 1e-6 to 1",
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
