//! Whole systems wired from the building blocks, one module per design; this module is only
//! their registry: each design's name, a one-line description and its builder, all run by the
//! kernel behind the one [`Simulation`] contract.

pub mod cell_fabric;
pub mod clint;
pub mod ethernet;
pub mod rifl;
pub mod single_switch;
pub mod stardust;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::blocks::fabric::parallel::{on_threads, Sharded};
use crate::blocks::fabric::partition::Partition;
use crate::blocks::fabric::FabricModel;
use crate::engine::kernel::{Kernel, Supervision};
use crate::engine::time::ps_from_ns;
use crate::run::{Design, Simulation};
use crate::scenario::{check_unused, RunConfig, Scenario, ScenarioError, Threads, Unused};

/// A design a scenario may name in its `design` key.
pub struct DesignEntry {
    /// Name in scenarios.
    pub name: &'static str,
    /// What it models, in one line.
    pub description: &'static str,
    /// Validates a scenario (JSON text) and builds the run.
    pub build: fn(&str) -> Result<Box<dyn Simulation>, ScenarioError>,
    /// What [`build`] needs of a scenario before building it; `None` when the scenario does
    /// not parse (`build` then says why).
    pub review: fn(&Value) -> Option<Review>,
    /// The schema of its scenario (keys, defaults and doc comments), for the key reference.
    pub keys: fn() -> schemars::Schema,
    /// It runs on several threads (`run.threads`); the others refuse more than one.
    pub parallel: bool,
}

/// A scenario as its design reads it, before it is built.
pub struct Review {
    /// Its run section (every design's but the link study's, which holds no cells).
    pub run: Option<RunConfig>,
    /// The keys its chosen mechanisms leave unused.
    pub unused: Vec<Unused>,
    /// Values that make the run say little (a measured window shorter than a round trip), read
    /// from the scenario once it has built (so it is valid).
    pub warnings: fn(&Value) -> Vec<String>,
    /// The scenario with every default filled in.
    pub effective: Value,
}

impl Review {
    /// A design's parsed scenario, with its run section and unused keys.
    fn of(config: &impl Serialize, run: Option<RunConfig>, unused: Vec<Unused>) -> Review {
        Review {
            run,
            unused,
            warnings: |_| Vec::new(),
            effective: serde_json::to_value(config).expect("scenarios serialize"),
        }
    }
}

/// The review of a design whose scenario `C` has a run section (`run`) and lists the keys its
/// mechanisms leave unused (`unused`).
fn review_of<C: DeserializeOwned + Serialize>(
    scenario: &Value,
    run: fn(&C) -> &RunConfig,
    unused: fn(&C) -> Vec<Unused>,
) -> Option<Review> {
    let config = C::deserialize(scenario).ok()?;
    Some(Review::of(
        &config,
        Some(run(&config).clone()),
        unused(&config),
    ))
}

/// A cell network's review.
fn review_cell_network(scenario: &Value) -> Option<Review> {
    Some(Review {
        warnings: |valid| {
            Scenario::deserialize(valid).map_or_else(|_| Vec::new(), |s| s.warnings())
        },
        ..review_of(scenario, |s: &Scenario| &s.run, Scenario::unused_keys)?
    })
}

/// A design read from the cell networks' one [`Scenario`]: its review and keys are theirs.
const fn cell_network(
    name: &'static str,
    description: &'static str,
    build: fn(&str) -> Result<Box<dyn Simulation>, ScenarioError>,
    parallel: bool,
) -> DesignEntry {
    DesignEntry {
        name,
        description,
        build,
        review: review_cell_network,
        keys: || schemars::schema_for!(Scenario),
        parallel,
    }
}

/// Every design, by name; the first is the default.
pub const DESIGNS: &[DesignEntry] = &[
    cell_network(
        "single_switch",
        "N hosts on one cell switch: FIFO, iSLIP, PIM, SAFC or output-queued (switch theory)",
        |json| Ok(on_kernel(single_switch::build(&Scenario::from_json(json)?)?)),
        false,
    ),
    cell_network(
        "cell_fabric",
        "cell switches on any named topology (fat-tree, Dragonfly, ...), routed by mode",
        |json| {
            let scenario = Scenario::from_json(json)?;
            on_threads_or_one(
                scenario.run.threads,
                || Ok(scenario.topology()?.switches()),
                || cell_fabric::build(&scenario),
                |parts, me| cell_fabric::build_partition(&scenario, parts, me),
            )
        },
        true,
    ),
    cell_network(
        "rifl",
        "RIFL Layer 2 racks: source-routed iSLIP switches, per-VOQ ON/OFF (Shen and Chow 2023)",
        |json| Ok(on_kernel(rifl::build(&Scenario::from_json(json)?)?)),
        false,
    ),
    DesignEntry {
        name: "rifl_link",
        description:
            "RIFL Layer 1: one retransmitting link against bit errors (Shen and Chow 2023, §II-A)",
        build: |json| Ok(on_kernel(rifl::link::build(json)?)),
        review: |scenario| {
            let config = rifl::link::LinkScenario::deserialize(scenario).ok()?;
            Some(Review::of(&config, None, Vec::new()))
        },
        keys: || schemars::schema_for!(rifl::link::LinkScenario),
        parallel: false,
    },
    DesignEntry {
        name: "stardust",
        description:
            "Stardust: fabric adapters and elements, packed cells solicited by credits (NSDI '19)",
        build: |json| {
            let config = stardust::StardustConfig::from_json(json)?;
            on_threads_or_one(
                config.run.threads,
                || Ok(config.topology()?.switches()),
                || stardust::build(json),
                |parts, me| stardust::build_partition(json, parts, me),
            )
        },
        review: |scenario| {
            review_of(
                scenario,
                |c: &stardust::StardustConfig| &c.run,
                stardust::StardustConfig::unused_keys,
            )
        },
        keys: || schemars::schema_for!(stardust::StardustConfig),
        parallel: true,
    },
    DesignEntry {
        name: "ethernet",
        description:
            "push-and-drop Ethernet: TCP, DCTCP, MPTCP, NDP or DCQCN hosts over drop-tail, ECN, trimming, PFC or BFC switches",
        build: |json| {
            let config = ethernet::EthernetConfig::from_json(json)?;
            on_threads_or_one(
                config.run.threads,
                || Ok(config.topology()?.switches()),
                || ethernet::build(json),
                |parts, me| ethernet::build_partition(json, parts, me),
            )
        },
        review: |scenario| {
            review_of(
                scenario,
                |c: &ethernet::EthernetConfig| &c.run,
                ethernet::EthernetConfig::unused_keys,
            )
        },
        keys: || schemars::schema_for!(ethernet::EthernetConfig),
        parallel: true,
    },
    DesignEntry {
        name: "clint",
        description: "Clint: scheduled bulk and best-effort quick channels (Eberle and Gura 2002)",
        build: |json| Ok(on_kernel(clint::build(json)?)),
        review: |scenario| {
            review_of(
                scenario,
                |c: &clint::ClintConfig| &c.run,
                clint::ClintConfig::unused_keys,
            )
        },
        keys: || schemars::schema_for!(clint::ClintConfig),
        parallel: false,
    },
];

/// The run on `threads` threads: built `whole` on one, else as partitions (`part(parts, me)`).
/// `"auto"` takes the machine's cores, at most one per switch (of `switches()`), and one
/// thread where the fabric cannot be split (a cable between partitions too short to look
/// ahead): the results are the same on any count, so it takes what helps.
fn on_threads_or_one<D: FabricModel + Design + Send + Sync + 'static>(
    threads: Threads,
    switches: impl FnOnce() -> Result<usize, ScenarioError>,
    whole: impl FnOnce() -> Result<D, ScenarioError>,
    part: impl Fn(usize, u16) -> Result<(D, Partition), ScenarioError> + Sync,
) -> Result<Box<dyn Simulation>, ScenarioError> {
    let parts = match threads {
        Threads::Auto => threads.count().min(switches()?),
        Threads::Count(_) => threads.count(),
    };
    if parts <= 1 {
        return Ok(on_kernel(whole()?));
    }
    match sharded(parts, |me| part(parts, me)) {
        Ok(shards) => Ok(on_kernel(shards)),
        Err(e) if threads == Threads::Auto && e.key == "run.threads" => Ok(on_kernel(whole()?)),
        Err(e) => Err(e),
    }
}

/// The model built as `parts` partitions (side by side, one thread each: building is a good
/// share of a large fabric's run), to run side by side.
fn sharded<D: FabricModel + Send>(
    parts: usize,
    build: impl Fn(u16) -> Result<(D, Partition), ScenarioError> + Sync,
) -> Result<Sharded<D>, ScenarioError> {
    let built = on_threads(0..parts, |_, me| build(me as u16));
    let mut shards = Vec::with_capacity(parts);
    let mut partition = None;
    for result in built {
        let (shard, part) = result?;
        shards.push(shard);
        partition = Some(part);
    }
    Ok(Sharded::new(
        shards,
        partition.expect("at least one partition"),
    ))
}

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
    let (value, design) = design_of(json)?;
    let review = (design.review)(&value);
    let mut warnings = match &review {
        Some(Review {
            run: Some(run),
            unused,
            ..
        }) => check_unused(&value, unused, run.strict, overridden)?,
        _ => Vec::new(),
    };
    if let Some(Review { run: Some(run), .. }) = &review {
        // "auto" asks for whatever helps: a design that runs on one thread takes one.
        if run.threads != Threads::Auto && run.threads.count() > 1 && !design.parallel {
            return Err(ScenarioError {
                key: "run.threads".into(),
                message: format!(
                    "expected 1: design {} runs on one thread (only cell_fabric, ethernet and stardust run on several yet)",
                    design.name
                ),
            });
        }
    }
    let mut sim = (design.build)(json)?;
    if let Some(Review {
        run: Some(run),
        warnings: warnings_of,
        ..
    }) = review
    {
        warnings.extend(warnings_of(&value));
        sim.supervise(Supervision {
            warmup_ps: run.warmup_ps(),
            max_in_flight: run.max_cells_in_flight,
            warnings,
            series_every_ps: run.sample_ns.map(ps_from_ns),
        });
    }
    Ok(sim)
}

/// A scenario (JSON text) with every default of its design filled in and nothing its
/// mechanisms leave unused: the scenario as the run reads it, itself a valid scenario, for
/// provenance and `cellfabric show`. It is parsed, not validated (a build does that).
pub fn effective_scenario(json: &str) -> Result<Value, ScenarioError> {
    let (value, design) = design_of(json)?;
    match (design.review)(&value) {
        Some(Review {
            mut effective,
            unused,
            ..
        }) => {
            effective["design"] = design.name.into();
            for Unused { key, .. } in unused {
                remove_key(&mut effective, &key);
            }
            Ok(without_nulls(effective))
        }
        None => Err((design.build)(json)
            .err()
            .expect("a scenario that does not parse does not build")),
    }
}

/// Removes the dotted `key` from `value` (a key of a nested table included), and a nested
/// table that this leaves empty (`switch.per_flow` of a port kind that reads none of it).
fn remove_key(value: &mut Value, key: &str) {
    let Some((head, rest)) = key.split_once('.') else {
        if let Value::Object(table) = value {
            table.remove(key);
        }
        return;
    };
    let Some(child) = value.get_mut(head) else {
        return;
    };
    remove_key(child, rest);
    if let Some((inner, _)) = rest.split_once('.') {
        let emptied = child
            .get(inner)
            .and_then(Value::as_object)
            .is_some_and(|t| t.is_empty());
        if let (true, Value::Object(table)) = (emptied, child) {
            table.remove(inner);
        }
    }
}

/// `value` without its null (absent) members, at every depth.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(table) => Value::Object(
            table
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// A scenario's JSON document and the design its `design` key names.
fn design_of(json: &str) -> Result<(Value, &'static DesignEntry), ScenarioError> {
    let value: Value = serde_json::from_str(json).map_err(|e| ScenarioError {
        key: "scenario".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    let design = match value.get("design") {
        None => &DESIGNS[0],
        Some(Value::String(name)) => design_entry(name)?,
        Some(other) => return Err(refuse_design(format!("{other} (not a name in quotes)"))),
    };
    Ok((value, design))
}

/// The design named `name`; an unknown name is refused naming every design.
pub fn design_entry(name: &str) -> Result<&'static DesignEntry, ScenarioError> {
    DESIGNS
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| refuse_design(format!("{name:?}")))
}

/// The error for a `design` that names no design: every design's name, and what it got.
fn refuse_design(got: String) -> ScenarioError {
    let names: Vec<_> = DESIGNS.iter().map(|d| d.name).collect();
    ScenarioError {
        key: "design".into(),
        message: format!("expected one of {}, got {got}", names.join(", ")),
    }
}
