//! Strict keys: a key a scenario sets that its chosen mechanisms do not use is an error naming
//! the key and the choice that ignores it, or, with `run.strict = false`, a warning in the
//! summary. A scenario then says only what the run does.
//!
//! One exception keeps overrides usable: a key of the scenario file left unused by a choice the
//! user overrode (`--set switch.scheduler=safc` on a file that sets iSLIP's `iterations`) is
//! only a warning, since an override cannot remove a file's key.

use serde_json::Value;

use super::{
    invalid, RoutingConfig, Scenario, ScenarioError, SchedulerName, TopologyConfig, TopologyName,
};
use super::{ArrivalName, DestinationName, FlowControlKind, Named};
use crate::blocks::traffic::Arrival;

/// A key the chosen mechanisms ignore, and the choice that ignores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Unused {
    /// Dotted path of the key.
    pub key: String,
    /// Dotted path of the choice that ignores it (`traffic.arrival`).
    pub choice: &'static str,
    /// The choice as the user wrote it (`traffic.arrival = "bernoulli"`), and why, if not plain.
    pub because: String,
}

/// A scenario's unused keys, collected choice by choice.
#[derive(Default)]
pub struct UnusedKeys(Vec<Unused>);

impl UnusedKeys {
    /// Adds `keys`, left unused by the choice `choice` (`because`: as the user wrote it, and
    /// why if not plain).
    pub fn add(&mut self, keys: &[&str], choice: &'static str, because: impl AsRef<str>) {
        self.0.extend(keys.iter().map(|key| Unused {
            key: key.to_string(),
            choice,
            because: because.as_ref().to_string(),
        }));
    }

    /// Adds the topology keys of every shape but the one `topology` names: the part of the
    /// review every design with a `topology` section shares.
    pub fn add_other_shapes(&mut self, topology: &TopologyConfig) {
        let kind = format!("topology.kind = {:?}", topology.kind.as_str());
        let own = topology_keys(topology.kind);
        let others = TopologyName::ALL
            .iter()
            .flat_map(|&kind| topology_keys(kind))
            .filter(|key| !own.contains(key));
        for key in others {
            self.add(&[&format!("topology.{key}")], "topology.kind", &kind);
        }
    }

    /// The keys collected.
    pub fn into_vec(self) -> Vec<Unused> {
        self.0
    }
}

/// True when the scenario (its JSON document) sets the dotted `key`.
fn is_set(scenario: &Value, key: &str) -> bool {
    key.split('.')
        .try_fold(scenario, |table, part| table.get(part))
        .is_some()
}

/// Checks the keys `scenario` sets against those its mechanisms leave `unused`, given the
/// keys the user `overridden` (`--set`): the first one set is an error when `strict`, unless
/// only an overridden choice left it unused; every other one set is a warning.
pub fn check_unused(
    scenario: &Value,
    unused: &[Unused],
    strict: bool,
    overridden: &[String],
) -> Result<Vec<String>, ScenarioError> {
    let mut warnings = Vec::new();
    let is_overridden = |key: &str| overridden.iter().any(|o| o == key);
    for u in unused.iter().filter(|u| is_set(scenario, &u.key)) {
        let orphaned = is_overridden(u.choice) && !is_overridden(&u.key);
        if strict && !orphaned {
            return Err(invalid(
                &u.key,
                format!(
                    "not used with {}: remove it, or set run.strict = false to run with it ignored",
                    u.because
                ),
            ));
        }
        warnings.push(format!("{}: not used with {}, ignored", u.key, u.because));
    }
    Ok(warnings)
}

/// The topology keys each kind reads.
fn topology_keys(kind: TopologyName) -> &'static [&'static str] {
    match kind {
        TopologyName::Star => &[],
        TopologyName::TwoSwitch => &["links"],
        TopologyName::LeafSpine => &["leaves", "spines", "hosts_per_leaf"],
        TopologyName::FatTree => &["k"],
        TopologyName::Clos => &[
            "tiers",
            "radix",
            "hosts_per_edge",
            "uplinks_per_edge",
            "bundle",
            "edges",
        ],
        TopologyName::Dragonfly => &[
            "hosts_per_router",
            "routers_per_group",
            "global_links_per_router",
            "groups",
        ],
        TopologyName::Clique => &["clique"],
        TopologyName::File => &["file"],
    }
}

impl Scenario {
    /// Values that leave a cell network's run with little to say: a measured window shorter
    /// than a flow-control round trip over the longest cable, or than one mean burst.
    pub fn warnings(&self) -> Vec<String> {
        let window_ps = self.run.end_ps().saturating_sub(self.run.warmup_ps());
        let cell_ps = self.cell_time_ps();
        let mut warnings = Vec::new();
        let round_trip_ps = 2 * (self.longest_cable_ps() + cell_ps);
        if window_ps < round_trip_ps {
            warnings.push(format!(
                "run.duration_ns: the measured window ({} ns) is shorter than one round trip over the longest cable ({} ns)",
                window_ps / 1_000,
                round_trip_ps / 1_000
            ));
        }
        if let Arrival::Bursty(burst) = self.arrival() {
            let mean_burst_cells = burst.mean_cells(self.packet_sizes(), self.cell.payload_bytes());
            if mean_burst_cells * cell_ps as f64 > window_ps as f64 {
                warnings.push(format!(
                    "traffic.burst_mean_cells: a mean burst ({mean_burst_cells:.1} cells) lasts longer than the measured window ({} cell times)",
                    window_ps / cell_ps.max(1)
                ));
            }
        }
        warnings
    }

    /// The switch keys the scheduler does not read.
    fn unused_switch_keys(&self, unused: &mut UnusedKeys) {
        let sw = &self.switch;
        let scheduler = format!("switch.scheduler = {:?}", sw.scheduler.as_str());
        if !matches!(
            sw.scheduler,
            SchedulerName::Islip
                | SchedulerName::Pim
                | SchedulerName::VcSeparable
                | SchedulerName::VcIslip
        ) {
            unused.add(&["switch.iterations"], "switch.scheduler", &scheduler);
        }
        if self.uses_vcs() {
            let keys = [
                "switch.buffer_cells",
                "switch.per_voq_buffers",
                "switch.batcher_banyan",
            ];
            unused.add(
                &keys,
                "switch.scheduler",
                format!("{scheduler} (VC buffers are vc.buffer_cells)"),
            );
        }
        if matches!(
            sw.scheduler,
            SchedulerName::Fifo | SchedulerName::OutputQueued
        ) {
            unused.add(&["switch.per_voq_buffers"], "switch.scheduler", &scheduler);
        }
        if sw.scheduler == SchedulerName::OutputQueued {
            unused.add(&["switch.batcher_banyan"], "switch.scheduler", &scheduler);
        }
    }

    /// The keys of a cell network's scenario that its chosen mechanisms do not read.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let (t, topology) = (&self.traffic, &self.topology);
        let mut unused = UnusedKeys::default();
        if t.arrival != ArrivalName::Bursty {
            unused.add(
                &[
                    "traffic.burst_mean_cells",
                    "traffic.burst_mean_bytes",
                    "traffic.burst_mean_packets",
                    "traffic.burst_packets",
                ],
                "traffic.arrival",
                "traffic.arrival = \"bernoulli\" (it draws no bursts)",
            );
        }
        let destinations = format!("traffic.destinations = {:?}", t.destinations.as_str());
        if t.destinations != DestinationName::Pairs {
            unused.add(&["traffic.pairs"], "traffic.destinations", &destinations);
        }
        if t.destinations != DestinationName::Hotspot {
            unused.add(
                &["traffic.hotspot_port", "traffic.hotspot_fraction"],
                "traffic.destinations",
                &destinations,
            );
        }
        if t.destinations != DestinationName::Uniform {
            unused.add(
                &["traffic.include_self", "traffic.active_hosts"],
                "traffic.destinations",
                &destinations,
            );
        }
        self.unused_switch_keys(&mut unused);
        self.unused_link_keys(&mut unused);
        let kind = format!("topology.kind = {:?}", topology.kind.as_str());
        if !matches!(topology.kind, TopologyName::Star | TopologyName::TwoSwitch) {
            unused.add(
                &["switch.ports"],
                "topology.kind",
                format!("{kind} (its switches' ports follow from the topology's own keys)"),
            );
        }
        unused.add_other_shapes(topology);
        if topology.kind == TopologyName::Clique {
            let (keys, because) = topology.clique.unused_keys();
            unused.add(keys, "topology.clique.link_rates", because);
        }
        if let Some(routing) = &self.routing {
            routing.add_unused(&mut unused);
        }
        unused.into_vec()
    }

    /// The `link` keys the chosen flow control and bit errors leave unused.
    fn unused_link_keys(&self, unused: &mut UnusedKeys) {
        let onoff = self
            .flow_control_kinds()
            .is_ok_and(|kinds| kinds.contains(&FlowControlKind::Onoff));
        if !onoff {
            unused.add(
                &["link.off_threshold_cells", "link.on_threshold_cells"],
                "link.flow_control",
                format!(
                    "link.flow_control = {:?} (thresholds are ON/OFF's)",
                    self.link.flow_control.as_str()
                ),
            );
        }
        if self.link.ber == 0.0
            && self.link.error_burst_ber == 0.0
            && self.topology.kind != TopologyName::File
        {
            unused.add(
                &["link.in_band_flow_control", "link.frame_bytes"],
                "link.ber",
                "link.ber = 0 (no cable runs RIFL Layer 1)",
            );
        }
        if self.link.error_burst_ber == 0.0 {
            unused.add(
                &["link.error_burst_frames", "link.error_burst_gap_frames"],
                "link.error_burst_ber",
                "link.error_burst_ber = 0 (no bursts)",
            );
        }
    }
}

impl RoutingConfig {
    /// Adds the routing keys the chosen mode does not read: `spray_rounds` but for `spray`,
    /// and the weights (see [`RoutingConfig::add_unused_weights`]).
    pub fn add_unused(&self, unused: &mut UnusedKeys) {
        if self.mode != "spray" {
            unused.add(
                &["routing.spray_rounds"],
                "routing.mode",
                format!("routing.mode = {:?}", self.mode),
            );
        }
        self.add_unused_weights(unused);
    }

    /// Adds the weights of Aquila's comparison but for `aquila_fully_adaptive`, which reads them.
    pub fn add_unused_weights(&self, unused: &mut UnusedKeys) {
        if self.mode != crate::blocks::routing::FULLY_ADAPTIVE.name {
            unused.add(
                &[
                    "routing.minimal_weight",
                    "routing.nonminimal_weight",
                    "routing.nonminimal_bias_cells",
                    "routing.local_misroutes",
                ],
                "routing.mode",
                format!(
                    "routing.mode = {:?} (the weights and local detours are Fully Adaptive's)",
                    self.mode
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(json: &str, strict: bool, overridden: &[&str]) -> Result<Vec<String>, String> {
        let scenario: Scenario = super::super::parse(json).unwrap();
        let value: Value = serde_json::from_str(json).unwrap();
        let overridden: Vec<String> = overridden.iter().map(|k| k.to_string()).collect();
        check_unused(&value, &scenario.unused_keys(), strict, &overridden).map_err(|e| e.key)
    }

    fn rejected(json: &str) -> String {
        checked(json, true, &[]).expect_err("an unused key is rejected")
    }

    #[test]
    fn a_key_the_mechanism_ignores_is_named_and_a_used_one_passes() {
        let accepted = |json: &str| checked(json, true, &[]).expect("every key is used");
        assert_eq!(
            rejected(r#"{"traffic": {"burst_mean_cells": 8}}"#),
            "traffic.burst_mean_cells"
        );
        accepted(r#"{"traffic": {"arrival": "bursty", "burst_mean_cells": 8}}"#);
        assert_eq!(
            rejected(r#"{"switch": {"scheduler": "fifo", "iterations": 4}}"#),
            "switch.iterations"
        );
        accepted(r#"{"switch": {"scheduler": "pim", "iterations": 4}}"#);
        assert_eq!(
            rejected(r#"{"topology": {"leaves": 4}}"#),
            "topology.leaves"
        );
        assert_eq!(
            rejected(r#"{"topology": {"kind": "leaf_spine"}, "switch": {"ports": 8}}"#),
            "switch.ports"
        );
        assert_eq!(
            rejected(r#"{"switch": {"scheduler": "output_queued", "batcher_banyan": false}}"#),
            "switch.batcher_banyan"
        );
        assert_eq!(
            rejected(r#"{"link": {"on_threshold_cells": 3}}"#),
            "link.on_threshold_cells"
        );
        assert_eq!(
            rejected(
                r#"{"design": "cell_fabric", "topology": {"kind": "fat_tree"}, "routing": {"mode": "ecmp", "spray_rounds": 2}}"#
            ),
            "routing.spray_rounds"
        );
    }

    #[test]
    fn without_strict_every_unused_key_is_a_warning() {
        let warnings = checked(
            r#"{"run": {"strict": false}, "traffic": {"burst_mean_cells": 8, "hotspot_port": 2}}"#,
            false,
            &[],
        )
        .unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("traffic.burst_mean_cells: not used with traffic.arrival"));
    }

    #[test]
    fn a_file_key_orphaned_by_an_overridden_choice_is_a_warning_but_an_overridden_key_is_not() {
        let json = r#"{"switch": {"scheduler": "safc", "iterations": 3}}"#;
        assert_eq!(
            checked(json, true, &["switch.scheduler"]).unwrap(),
            ["switch.iterations: not used with switch.scheduler = \"safc\", ignored"]
        );
        assert_eq!(
            checked(json, true, &["switch.scheduler", "switch.iterations"]).unwrap_err(),
            "switch.iterations"
        );
    }
}
