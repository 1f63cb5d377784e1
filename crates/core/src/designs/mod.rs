//! Whole systems wired from the building blocks, one module per design; this module is only
//! their registry: each design's name, a one-line description and its builder, all run by the
//! kernel behind the one [`Simulation`] contract.

pub mod cell_fabric;
pub mod clint;
pub mod rifl;
pub mod single_switch;
pub mod stardust;

use crate::engine::kernel::Kernel;
use crate::run::{Design, Simulation};
use crate::scenario::{Scenario, ScenarioError};

/// A design a scenario may name in its `design` key.
pub struct DesignEntry {
    /// Name in scenarios.
    pub name: &'static str,
    /// What it models, in one line.
    pub description: &'static str,
    /// Validates a scenario (JSON text) and builds the run.
    pub build: fn(&str) -> Result<Box<dyn Simulation>, ScenarioError>,
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
    },
    DesignEntry {
        name: "cell_fabric",
        description:
            "cell switches on any named topology (fat-tree, Dragonfly, ...), routed by mode",
        build: |json| Ok(on_kernel(cell_fabric::build(&Scenario::from_json(json)?)?)),
    },
    DesignEntry {
        name: "rifl",
        description:
            "RIFL Layer 2 racks: source-routed iSLIP switches with per-VOQ ON/OFF (seed 004)",
        build: |json| Ok(on_kernel(rifl::build(&Scenario::from_json(json)?)?)),
    },
    DesignEntry {
        name: "rifl_link",
        description: "RIFL Layer 1: one retransmitting link against bit errors (seed 004 §II-A)",
        build: |json| Ok(on_kernel(rifl::link::build(json)?)),
    },
    DesignEntry {
        name: "stardust",
        description:
            "Stardust: fabric adapters and elements, packed cells solicited by credits (seed 001)",
        build: |json| Ok(on_kernel(stardust::build(json)?)),
    },
    DesignEntry {
        name: "clint",
        description: "Clint: scheduled bulk and best-effort quick channels (seed 002)",
        build: |json| Ok(on_kernel(clint::build(json)?)),
    },
];

fn on_kernel<D: Design + Send + Sync + 'static>(design: D) -> Box<dyn Simulation> {
    let end_ps = design.end_ps();
    Box::new(Kernel::new(design, end_ps))
}

/// Validates a scenario (JSON text) and builds the design its `design` key names.
pub fn build(json: &str) -> Result<Box<dyn Simulation>, ScenarioError> {
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
        Some(design) => (design.build)(json),
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
