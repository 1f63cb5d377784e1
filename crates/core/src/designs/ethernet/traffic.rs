//! The Ethernet baseline's traffic section: who sends to whom ([`Pattern`], [`TrafficConfig`]).

use serde::{Deserialize, Serialize};

use crate::blocks::ethernet::opening::Opening;
use crate::blocks::transport::Transport;
use crate::blocks::workload::{FctKeys, FlowSizes};
use crate::scenario::{invalid, is_load, ScenarioError};

/// Destination patterns.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Every host sends one flow to one other host and receives one (a random derangement).
    #[default]
    Permutation,
    /// Hosts send one flow each to `traffic.incast_host`, all starting together.
    Incast,
    /// The flows `traffic.pairs` lists, `[src, dst]` each, all starting together.
    Pairs,
    /// Stardust's Fig. 10b, with the keys and meaning of Stardust's `fct` pattern:
    /// `traffic.fct_src` opens flows of sizes drawn from `traffic.flow_sizes` to
    /// `traffic.fct_dst`, arriving as a Poisson process at `traffic.fct_load` of its line rate
    /// (each its own connection, opened when it arrives); every other host keeps
    /// `traffic.background_flows` unending flows to random other hosts (never the timed
    /// receiver).
    Fct,
    /// Every host opens flows of sizes drawn from `traffic.flow_sizes` to uniformly drawn
    /// other hosts, arriving as a Poisson process at `traffic.load` of its line rate.
    Poisson,
    /// Every host keeps `traffic.flows_per_host` flows of sizes drawn from
    /// `traffic.flow_sizes` in flight to uniformly drawn other hosts, opening a new one as
    /// one completes.
    ClosedLoop,
}

impl Pattern {
    /// Every pattern.
    pub(super) const ALL_PATTERNS: [Pattern; 6] = [
        Pattern::Permutation,
        Pattern::Incast,
        Pattern::Pairs,
        Pattern::Fct,
        Pattern::Poisson,
        Pattern::ClosedLoop,
    ];

    /// True for the patterns whose flows are opened during the run, with completion times.
    pub fn opens_flows(self) -> bool {
        matches!(self, Pattern::Fct | Pattern::Poisson | Pattern::ClosedLoop)
    }
}

/// Who sends to whom.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// The pattern.
    pub pattern: Pattern,
    /// Bytes each flow sends (450 KB in the paper's incast); absent: flows never end.
    pub flow_bytes: Option<u64>,
    /// Incast: the receiving host.
    pub incast_host: u32,
    /// Incast: how many hosts send (drawn from the run's seed); absent: every other host.
    pub senders: Option<u32>,
    /// MPTCP: this many of the pattern's flows (its first) run one subflow, which LIA leaves
    /// a TCP NewReno flow: TCP beside MPTCP (RFC 6356 §2's fairness goal).
    pub single_path_flows: u32,
    /// Fct: the host whose flows are timed, and the host it sends them to.
    pub fct_src: u32,
    /// Fct: see `fct_src`.
    pub fct_dst: u32,
    /// Fct: the timed flows' offered load, a fraction of the source's line rate.
    pub fct_load: f64,
    /// Fct, poisson, closed loop: a flow-size distribution file (`size cdf` lines; relative
    /// paths in a scenario file are resolved against its folder by the front end).
    pub flow_sizes: Option<String>,
    /// Fct: unending flows per background host.
    pub background_flows: u32,
    /// Poisson: every host's offered load, a fraction of its line rate.
    pub load: f64,
    /// Closed loop: flows each host keeps in flight.
    pub flows_per_host: u32,
    /// Pairs: the flows, `[sending host, receiving host]` each.
    pub pairs: Vec<[u32; 2]>,
    /// PFC: the traffic class of each of the pattern's flows, cycled: flow k (in the
    /// pattern's order) rides `flow_classes[k % len]`; absent: class `k % switch.pfc_classes`.
    /// Flows opened during the run ride class 0.
    pub flow_classes: Option<Vec<u32>>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: Pattern::Permutation,
            flow_bytes: None,
            incast_host: 0,
            senders: None,
            single_path_flows: 0,
            fct_src: 0,
            fct_dst: 1,
            fct_load: 0.5,
            flow_sizes: None,
            background_flows: 4,
            load: 0.5,
            flows_per_host: 1,
            pairs: Vec::new(),
            flow_classes: None,
        }
    }
}

impl TrafficConfig {
    /// The `fct` pattern's keys, read as every design reads them.
    pub fn fct_keys(&self) -> FctKeys<'_> {
        FctKeys {
            src: self.fct_src,
            dst: self.fct_dst,
            load: self.fct_load,
            flow_sizes: self.flow_sizes.as_deref(),
            background_flows: self.background_flows,
        }
    }

    /// How hosts open flows during the run (`None` for the patterns whose flows are made at
    /// build).
    pub fn opening(&self) -> Option<Opening<'_>> {
        match self.pattern {
            Pattern::Fct => Some(Opening::Fct(self.fct_keys())),
            Pattern::Poisson => Some(Opening::Poisson { load: self.load }),
            Pattern::ClosedLoop => Some(Opening::ClosedLoop {
                flows_per_host: self.flows_per_host,
            }),
            Pattern::Permutation | Pattern::Incast | Pattern::Pairs => None,
        }
    }

    /// The keys each pattern reads of its own, by pattern.
    pub(super) fn own_keys(pattern: Pattern) -> &'static [&'static str] {
        match pattern {
            Pattern::Permutation => &[],
            Pattern::Incast => &["traffic.incast_host", "traffic.senders"],
            Pattern::Pairs => &["traffic.pairs"],
            Pattern::Fct => &[
                "traffic.fct_src",
                "traffic.fct_dst",
                "traffic.fct_load",
                "traffic.flow_sizes",
                "traffic.background_flows",
            ],
            Pattern::Poisson => &["traffic.flow_sizes", "traffic.load"],
            Pattern::ClosedLoop => &["traffic.flow_sizes", "traffic.flows_per_host"],
        }
    }

    /// Checks the pattern's keys.
    pub(super) fn validate(&self, transport: Transport) -> Result<(), ScenarioError> {
        if !self.pattern.opens_flows() {
            return Ok(());
        }
        let name = serde_json::json!(self.pattern);
        crate::blocks::ethernet::opening::check_opening(
            transport,
            &name.to_string(),
            self.flow_bytes,
        )?;
        match self.pattern {
            Pattern::Fct => self.fct_keys().validate(),
            _ if self.flow_sizes.is_none() => Err(invalid(
                "traffic.flow_sizes",
                format!("expected a flow-size distribution file with traffic.pattern = {name}"),
            )),
            Pattern::Poisson if !is_load(self.load) => Err(invalid(
                "traffic.load",
                "expected a fraction of line rate from 1e-6 to 1",
            )),
            Pattern::ClosedLoop if self.flows_per_host == 0 => {
                Err(invalid("traffic.flows_per_host", "expected at least 1"))
            }
            _ => Ok(()),
        }
    }

    /// The distribution `traffic.flow_sizes` names, read and checked.
    pub fn sizes(&self) -> Result<FlowSizes, ScenarioError> {
        let key = "traffic.flow_sizes";
        let path = self
            .flow_sizes
            .as_deref()
            .ok_or_else(|| invalid(key, "expected a file"))?;
        FlowSizes::read(key, path)
    }
}
