//! Traffic patterns: who sends to whom, for every design whose hosts send flows (the Ethernet
//! baseline, Stardust). One file per pattern holds its descriptor ([`TrafficPattern`]: its name,
//! the `traffic` keys it reads of its own, its checks, its flow list and how transport hosts
//! open its flows during a run); [`PATTERNS`] lists them in one line each. A design names the
//! patterns it offers (a slice of descriptors) and fills a [`PatternKeys`] from its `traffic`
//! section: resolving the name, the checks, the unused-key rules and the flows are then this
//! module's, the same for every design. Random draws (a derangement, an incast's senders, the
//! `fct` background) come from the scenario's pattern stream, one stream per flow list.
//!
//! Adding a pattern: a file here with its `PATTERN` (its keys, `check`, `flows` and/or
//! `opening`), its line in [`PATTERNS`], and its descriptor in the `PATTERNS` list of each
//! design that runs it, whose `traffic` section gains the keys it reads. Whether transport
//! hosts can run it, whether its flows carry their own loads and whether hosts open its flows
//! during the run are its flags, which the shared checks and unused-key rules ask.
//!
//! Not here yet: the cell networks' destination laws (`traffic.destinations`: uniform,
//! permutation, hotspot, group shift), which pick each packet's destination for the on/off
//! sources of `blocks/traffic.rs` rather than a list of flows; `scenario/` still maps those.

pub mod all_to_all;
pub mod closed_loop;
pub mod fct;
pub mod incast;
pub mod listed;
pub mod pairs;
pub mod permutation;
pub mod poisson;

use crate::blocks::ethernet::opening::{check_opening, Opening};
use crate::blocks::transport::Transport;
use crate::blocks::workload::{pattern_rng, FctKeys, FlowSizes};
use crate::engine::rng::Rng;
use crate::keys::{invalid, ScenarioError};
pub use listed::ListedFlow;

/// A pattern's flows made at build, or what is wrong with its keys on this topology.
pub type Flows = Result<Vec<PatternFlow>, ScenarioError>;

/// A pattern's flows made at build among `hosts` hosts, drawing from the pattern stream.
pub type FlowsFn = fn(&PatternKeys<'_>, usize, &mut Rng) -> Flows;

/// How transport hosts open a pattern's flows during the run.
pub type OpeningFn = for<'a> fn(&PatternKeys<'a>) -> Opening<'a>;

/// A traffic pattern by name (`traffic.pattern`).
#[derive(Debug)]
pub struct TrafficPattern {
    /// Name in scenarios.
    pub name: &'static str,
    /// What it sends, in one line.
    pub description: &'static str,
    /// The `traffic` keys it reads of its own: unused with every other pattern.
    pub keys: &'static [&'static str],
    /// Its flows carry their own loads, so a design's `traffic.load` is unused.
    pub own_loads: bool,
    /// Transport hosts can run it (its flows are connections; false where flows are rates).
    pub transport_hosts: bool,
    /// Checks its keys' own values (those that need no topology).
    pub check: fn(&PatternKeys<'_>) -> Result<(), ScenarioError>,
    /// Its flows made at build; `None` if every flow is opened during the run.
    pub flows: Option<FlowsFn>,
    /// How transport hosts open its flows during the run; `None` if they are made at build.
    pub opening: Option<OpeningFn>,
}

/// What a pattern's descriptor starts from: unnamed, no keys of its own to check, runnable
/// by transport hosts, and no flows either way (a constructor below adds them).
const UNNAMED: TrafficPattern = TrafficPattern {
    name: "",
    description: "",
    keys: &[],
    own_loads: false,
    transport_hosts: true,
    check: no_check,
    flows: None,
    opening: None,
};

impl TrafficPattern {
    /// A pattern whose flows `flows` makes at build, with no keys of its own to check, that
    /// transport hosts can run; a pattern's descriptor names itself and changes what differs.
    pub const fn made_at_build(flows: FlowsFn) -> TrafficPattern {
        TrafficPattern {
            flows: Some(flows),
            ..UNNAMED
        }
    }

    /// A pattern whose flows transport hosts open during the run as `opening` says (none made
    /// at build), its keys checked by `check`; a pattern's descriptor names itself over it.
    pub const fn opened_during_run(
        check: fn(&PatternKeys<'_>) -> Result<(), ScenarioError>,
        opening: OpeningFn,
    ) -> TrafficPattern {
        TrafficPattern {
            check,
            opening: Some(opening),
            ..UNNAMED
        }
    }
}

/// Every traffic pattern, by name: first the six that transport hosts run (the Ethernet
/// baseline's), then those whose flows are rates.
pub const PATTERNS: &[&TrafficPattern] = &[
    &permutation::PATTERN,
    &incast::PATTERN,
    &pairs::PATTERN,
    &fct::PATTERN,
    &poisson::PATTERN,
    &closed_loop::PATTERN,
    &listed::PATTERN,
    &all_to_all::PATTERN,
];

/// The schema of a design's `traffic.pattern`: a string naming one of `offered`, for the key
/// reference (which lists only these of the registry's patterns).
pub fn names_schema(offered: &[&TrafficPattern]) -> schemars::Schema {
    let names: Vec<&str> = offered.iter().map(|p| p.name).collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// A pattern's check that has nothing to check beyond the keys every pattern shares.
pub fn no_check(_: &PatternKeys<'_>) -> Result<(), ScenarioError> {
    Ok(())
}

/// One flow of a pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatternFlow {
    /// Sending host.
    pub src: usize,
    /// Receiving host.
    pub dst: usize,
    /// Offered load of a paced source, a fraction of the sender's line rate (designs whose
    /// flows are transport connections ignore it).
    pub load: f64,
    /// Traffic class (0 unless the pattern lists classes).
    pub class: u32,
}

/// The transport hosts a design runs the pattern on: their transport and segment size.
#[derive(Clone, Copy, Debug)]
pub struct TransportHosts {
    /// The hosts' transport.
    pub transport: Transport,
    /// Bytes of a full segment (`host.packet_bytes`).
    pub packet_bytes: u32,
}

/// A design's `traffic` keys as the patterns read them.
#[derive(Clone, Copy, Debug)]
pub struct PatternKeys<'a> {
    /// `traffic.pattern`, resolved among the design's patterns.
    pub pattern: &'static TrafficPattern,
    /// `traffic.flow_bytes`: bytes every flow made at build sends; absent: unending.
    pub flow_bytes: Option<u64>,
    /// `traffic.incast_host`.
    pub incast_host: u32,
    /// `traffic.senders`.
    pub senders: Option<u32>,
    /// The `fct` keys (`traffic.flow_sizes` among them, which `poisson` and `closed_loop` read).
    pub fct: FctKeys<'a>,
    /// `traffic.load`: `poisson`'s arrival load, or the rate of a design's paced sources.
    pub load: f64,
    /// `traffic.flows_per_host` (0 where the design has no such key).
    pub flows_per_host: u32,
    /// `traffic.pairs` (empty where the design has no such key).
    pub pairs: &'a [[u32; 2]],
    /// `traffic.flows` (empty where the design has no such key).
    pub flows: &'a [ListedFlow],
    /// Traffic classes a listed flow may name (`0..classes`).
    pub classes: usize,
}

/// The pattern called `name` among `offered` (a design's patterns); the error names
/// `traffic.pattern` and lists them.
pub fn resolve(
    offered: &[&'static TrafficPattern],
    name: &str,
) -> Result<&'static TrafficPattern, ScenarioError> {
    offered
        .iter()
        .find(|p| p.name == name)
        .copied()
        .ok_or_else(|| {
            invalid(
                "traffic.pattern",
                format!("expected {}, got {name:?}", one_of(offered.iter().copied())),
            )
        })
}

/// `"a", "b" or "c"`.
fn one_of<'a>(patterns: impl Iterator<Item = &'a TrafficPattern>) -> String {
    let names: Vec<String> = patterns.map(|p| format!("{:?}", p.name)).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

impl<'a> PatternKeys<'a> {
    /// The pattern's name as a scenario writes it, quoted (`"fct"`), for messages.
    pub fn quoted(&self) -> String {
        format!("{:?}", self.pattern.name)
    }

    /// A flow from `src` to `dst` at the design's load, class 0.
    pub fn flow(&self, src: usize, dst: usize) -> PatternFlow {
        PatternFlow {
            src,
            dst,
            load: self.load,
            class: 0,
        }
    }

    /// Checks the keys: those every pattern shares, then, on `hosts` (transport hosts, if the
    /// design runs them), what they can run, then the pattern's own.
    pub fn validate(
        &self,
        offered: &[&'static TrafficPattern],
        hosts: Option<TransportHosts>,
    ) -> Result<(), ScenarioError> {
        if self.flow_bytes == Some(0) {
            return Err(invalid("traffic.flow_bytes", "expected at least 1 byte"));
        }
        if self.senders == Some(0) {
            return Err(invalid("traffic.senders", "expected at least 1"));
        }
        if let Some(hosts) = hosts {
            self.validate_on(offered, hosts)?;
        }
        (self.pattern.check)(self)
    }

    /// What transport hosts can run: a pattern of connections, flows they can open during the
    /// run, and no flow of 2^32 segments or more.
    fn validate_on(
        &self,
        offered: &[&'static TrafficPattern],
        hosts: TransportHosts,
    ) -> Result<(), ScenarioError> {
        if !self.pattern.transport_hosts {
            let runnable = offered.iter().copied().filter(|p| p.transport_hosts);
            return Err(invalid(
                "traffic.pattern",
                format!(
                    "expected {} with host.transport, got {}",
                    one_of(runnable),
                    self.quoted()
                ),
            ));
        }
        if self.pattern.opening.is_some() {
            check_opening(hosts.transport, &self.quoted(), self.flow_bytes)?;
        }
        let segment = hosts.packet_bytes as u64;
        if self
            .flow_bytes
            .is_some_and(|b| b.div_ceil(segment) >= u32::MAX as u64)
        {
            return Err(invalid(
                "traffic.flow_bytes",
                "expected fewer than 2^32 packets (absent: an unending flow)",
            ));
        }
        Ok(())
    }

    /// Refuses `key` (whose value is `set`) unless the pattern reads it: for keys a design
    /// does not let stand unused.
    pub fn refuse_unless_own(&self, key: &str, set: bool) -> Result<(), ScenarioError> {
        if !set || self.pattern.keys.contains(&key) {
            return Ok(());
        }
        let owners = PATTERNS.iter().copied().filter(|p| p.keys.contains(&key));
        let owners: Vec<String> = owners
            .map(|p| format!("traffic.pattern = {:?}", p.name))
            .collect();
        Err(invalid(
            key,
            format!("applies only to {}", owners.join(" or ")),
        ))
    }

    /// The keys of `offered` patterns that this one does not read, once each in the
    /// registry's order, and `traffic.load` if its flows carry their own loads: each with why
    /// (`traffic.pattern = "x"`), for the design's unused keys under `traffic.pattern`.
    pub fn unused(&self, offered: &[&'static TrafficPattern]) -> Vec<(&'static str, String)> {
        let own = self.pattern.keys;
        let because = format!("traffic.pattern = {}", self.quoted());
        let mut unused: Vec<(&'static str, String)> = Vec::new();
        let offered_in_order = PATTERNS
            .iter()
            .filter(|p| offered.iter().any(|o| o.name == p.name));
        for key in offered_in_order.flat_map(|p| p.keys.iter().copied()) {
            if !own.contains(&key) && !unused.iter().any(|(k, _)| *k == key) {
                unused.push((key, because.clone()));
            }
        }
        if self.pattern.own_loads {
            unused.push((
                "traffic.load",
                format!("{because} (each flow has its own load)"),
            ));
        }
        unused
    }

    /// The flows made at build among `hosts` hosts, drawn from the pattern stream of `seed`;
    /// none where transport hosts (`transport_hosts`) open the pattern's flows during the run.
    pub fn flows(&self, hosts: usize, seed: u64, transport_hosts: bool) -> Flows {
        if transport_hosts && self.pattern.opening.is_some() {
            return Ok(Vec::new());
        }
        match self.pattern.flows {
            Some(flows) => flows(self, hosts, &mut pattern_rng(seed)),
            None => Ok(Vec::new()),
        }
    }

    /// How transport hosts open the pattern's flows during the run (`None`: made at build).
    pub fn opening(&self) -> Option<Opening<'a>> {
        self.pattern.opening.map(|open| open(self))
    }

    /// The timed flows' keys, for the pattern that times one host's flows (`fct`).
    pub fn timed(&self) -> Option<FctKeys<'a>> {
        match self.opening()? {
            Opening::Fct(keys) => Some(keys),
            _ => None,
        }
    }

    /// An error naming `traffic.flow_sizes` unless it names a file: the patterns that draw
    /// flow sizes need one.
    pub fn require_flow_sizes(&self) -> Result<(), ScenarioError> {
        match self.fct.flow_sizes {
            Some(_) => Ok(()),
            None => Err(invalid(
                "traffic.flow_sizes",
                format!(
                    "expected a flow-size distribution file with traffic.pattern = {}",
                    self.quoted()
                ),
            )),
        }
    }

    /// The distribution `traffic.flow_sizes` names, read and checked.
    pub fn sizes(&self) -> Result<FlowSizes, ScenarioError> {
        self.fct.sizes()
    }
}

#[cfg(test)]
mod tests;
