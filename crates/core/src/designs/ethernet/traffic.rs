//! The Ethernet baseline's traffic section: who sends to whom ([`TrafficConfig`]), by the
//! traffic patterns of `blocks/patterns/` it offers ([`PATTERNS`]).

use serde::{Deserialize, Serialize};

use crate::blocks::ethernet::opening::{IncastMix, Opening};
use crate::blocks::patterns::{self, permutation, poisson, PatternKeys, TrafficPattern};
use crate::blocks::workload::FctKeys;
use crate::keys::invalid;
use crate::scenario::ScenarioError;

/// The patterns the Ethernet baseline runs, in the order its messages list them (what each
/// sends: `blocks/patterns/`).
pub const PATTERNS: &[&TrafficPattern] = patterns::PATTERNS.split_at(6).0;

/// `traffic.pattern`'s schema: the names of [`PATTERNS`].
fn pattern_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    patterns::names_schema(PATTERNS)
}

/// Who sends to whom.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// The pattern, one of [`PATTERNS`] (what each sends: `blocks/patterns/`).
    #[schemars(schema_with = "pattern_names")]
    pub pattern: String,
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
    /// Poisson: incasts mixed in, their bytes this share of the hosts' line rates (the
    /// Aquarius slides' 5%: 0.05); 0: none.
    pub incast_load: f64,
    /// Poisson with incasts: senders per incast, drawn at random, to one receiver drawn at
    /// random (the slides' 100-to-1: 100).
    pub incast_fan_in: u32,
    /// Poisson with incasts: bytes of each incast sender's flow.
    pub incast_flow_bytes: u64,
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
            pattern: permutation::PATTERN.name.into(),
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
            incast_load: 0.0,
            incast_fan_in: 100,
            incast_flow_bytes: 20_000,
            pairs: Vec::new(),
            flow_classes: None,
        }
    }
}

impl TrafficConfig {
    /// The section as the traffic patterns read it; the error names `traffic.pattern` if it
    /// is not one of [`PATTERNS`].
    pub fn keys(&self) -> Result<PatternKeys<'_>, ScenarioError> {
        Ok(PatternKeys {
            pattern: patterns::resolve(PATTERNS, &self.pattern)?,
            flow_bytes: self.flow_bytes,
            incast_host: self.incast_host,
            senders: self.senders,
            fct: FctKeys {
                src: self.fct_src,
                dst: self.fct_dst,
                load: self.fct_load,
                flow_sizes: self.flow_sizes.as_deref(),
                background_flows: self.background_flows,
            },
            load: self.load,
            flows_per_host: self.flows_per_host,
            pairs: &self.pairs,
            flows: &[],
            classes: 0,
        })
    }

    /// The incasts mixed into Poisson arrivals, if any.
    pub fn incast_mix(&self) -> Option<IncastMix> {
        (self.incast_load > 0.0).then_some(IncastMix {
            load: self.incast_load,
            fan_in: self.incast_fan_in,
            flow_bytes: self.incast_flow_bytes,
        })
    }

    /// The incast mix's keys: a share from 0 to 1, only with `poisson`; at least one byte.
    pub fn validate_incast_mix(&self) -> Result<(), ScenarioError> {
        if !(self.incast_load.is_finite() && (0.0..=1.0).contains(&self.incast_load)) {
            return Err(invalid(
                "traffic.incast_load",
                "expected a share of the hosts' line rates from 0 (no incast) to 1",
            ));
        }
        if self.incast_load > 0.0 && self.pattern != poisson::PATTERN.name {
            return Err(invalid(
                "traffic.incast_load",
                format!(
                    "incasts mix into traffic.pattern = \"poisson\" only, got {:?}",
                    self.pattern
                ),
            ));
        }
        if self.incast_flow_bytes == 0 {
            return Err(invalid(
                "traffic.incast_flow_bytes",
                "expected at least 1 byte",
            ));
        }
        Ok(())
    }

    /// How hosts open flows during the run (`None` for the patterns whose flows are made at
    /// build).
    pub fn opening(&self) -> Option<Opening<'_>> {
        self.keys().ok()?.opening()
    }
}
