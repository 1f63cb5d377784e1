//! Whole systems wired from the building blocks, one module per design; this module is only
//! their registry: each design's name, a one-line description and its builder, all run by the
//! kernel behind the one [`Simulation`] contract.

pub mod cell_fabric;
pub mod clint;
pub mod rifl;
pub mod single_switch;
pub mod stardust;

use serde::Deserialize;
use serde_json::Value;

use crate::engine::kernel::{Kernel, Supervision};
use crate::run::{Design, Simulation};
use crate::scenario::{check_unused, RunConfig, Scenario, ScenarioError, Unused};

/// A design a scenario may name in its `design` key.
pub struct DesignEntry {
    /// Name in scenarios.
    pub name: &'static str,
    /// What it models, in one line.
    pub description: &'static str,
    /// Validates a scenario (JSON text) and builds the run.
    pub build: fn(&str) -> Result<Box<dyn Simulation>, ScenarioError>,
    /// A scenario's run section and the keys its mechanisms leave unused; `None` when the
    /// scenario does not parse (`build` then says why) or the design has no shared run
    /// section.
    pub review: fn(&Value) -> Option<Review>,
}

/// What [`build`] needs of a scenario before building it: its run section and the keys its
/// chosen mechanisms leave unused.
pub type Review = (RunConfig, Vec<Unused>);

/// A cell network's run section and unused keys.
fn review_cell_network(scenario: &Value) -> Option<Review> {
    let scenario = Scenario::deserialize(scenario).ok()?;
    Some((scenario.run.clone(), scenario.unused_keys()))
}

/// Every design, by name; the first is the default.
pub const DESIGNS: &[DesignEntry] = &[
    DesignEntry {
        name: "single_switch",
        description:
            "N hosts on one cell switch: FIFO, iSLIP, PIM, SAFC or output-queued (switch theory)",
        build: |json| {
            Ok(on_kernel(single_switch::build(&Scenario::from_json(
                json,
            )?)?))
        },
        review: review_cell_network,
    },
    DesignEntry {
        name: "cell_fabric",
        description:
            "cell switches on any named topology (fat-tree, Dragonfly, ...), routed by mode",
        build: |json| Ok(on_kernel(cell_fabric::build(&Scenario::from_json(json)?)?)),
        review: review_cell_network,
    },
    DesignEntry {
        name: "rifl",
        description:
            "RIFL Layer 2 racks: source-routed iSLIP switches with per-VOQ ON/OFF (seed 004)",
        build: |json| Ok(on_kernel(rifl::build(&Scenario::from_json(json)?)?)),
        review: review_cell_network,
    },
    DesignEntry {
        name: "rifl_link",
        description: "RIFL Layer 1: one retransmitting link against bit errors (seed 004 §II-A)",
        build: |json| Ok(on_kernel(rifl::link::build(json)?)),
        review: |_| None,
    },
    DesignEntry {
        name: "stardust",
        description:
            "Stardust: fabric adapters and elements, packed cells solicited by credits (seed 001)",
        build: |json| Ok(on_kernel(stardust::build(json)?)),
        review: |scenario| {
            let config = stardust::StardustConfig::deserialize(scenario).ok()?;
            Some((config.run, Vec::new()))
        },
    },
    DesignEntry {
        name: "clint",
        description: "Clint: scheduled bulk and best-effort quick channels (seed 002)",
        build: |json| Ok(on_kernel(clint::build(json)?)),
        review: |scenario| {
            let config = clint::ClintConfig::deserialize(scenario).ok()?;
            Some((config.run, Vec::new()))
        },
    },
];

fn on_kernel<D: Design + Send + Sync + 'static>(design: D) -> Box<dyn Simulation> {
    let end_ps = design.end_ps();
    Box::new(Kernel::new(design, end_ps))
}

/// Validates a scenario (JSON text) and builds the design its `design` key names.
pub fn build(json: &str) -> Result<Box<dyn Simulation>, ScenarioError> {
    build_with_overrides(json, &[])
}

/// [`build`] for a scenario whose keys `overridden` came from the user's overrides (`--set`),
/// supervised by its run section: keys its mechanisms leave unused are rejected (or, with
/// `run.strict = false` or where only an overridden choice left them unused, reported as
/// warnings) before anything is built.
pub fn build_with_overrides(
    json: &str,
    overridden: &[String],
) -> Result<Box<dyn Simulation>, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| ScenarioError {
        key: "scenario".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    let name = match value.get("design") {
        None => DESIGNS[0].name,
        Some(serde_json::Value::String(name)) => name.as_str(),
        Some(_) => "",
    };
    match DESIGNS.iter().find(|d| d.name == name) {
        Some(design) => {
            let review = (design.review)(&value);
            let warnings = match &review {
                Some((run, unused)) => check_unused(&value, unused, run.strict, overridden)?,
                None => Vec::new(),
            };
            let mut sim = (design.build)(json)?;
            if let Some((run, _)) = review {
                sim.supervise(Supervision {
                    warmup_ps: run.warmup_ps(),
                    max_in_flight: run.max_cells_in_flight,
                    warnings,
                });
            }
            Ok(sim)
        }
        None => Err(ScenarioError {
            key: "design".into(),
            message: format!(
                "expected one of {}, got {name:?}",
                DESIGNS
                    .iter()
                    .map(|d| d.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}
