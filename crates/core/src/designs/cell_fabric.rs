//! A fabric of cell switches on any named topology (star, two switches, leaf-spine, k-ary
//! fat-tree, Dragonfly, Aquila's Clique), routed by a mechanism chosen by name (deterministic,
//! ECMP, spraying, random, least loaded, Valiant, UGAL, Aquila's sampled adaptive modes): the multi-tier setting of Stardust's and Aquila's
//! fabrics with the shared switch, link, flow-control and routing blocks, and nothing
//! design-specific. It shows what the blocks alone do at scale, and is checked against balls
//! into bins and the Dragonfly throughput bounds of Kim et al. (ISCA 2008).

use crate::blocks::cell_network::{Network, NetworkSpec};
use crate::blocks::fabric::partition::Partition;
use crate::blocks::gnet::wire::{flits_of, DATA_CELL_BYTES};
use crate::blocks::routing::local_misroute::TurnRule;
use crate::blocks::routing::{mode, FabricRouter, RouteTable};
use crate::blocks::topology::{Topology, TopologyError};
use crate::blocks::vc_router::assignment::VcRule;
use crate::blocks::vc_router::dependency::{self, DependencyError, RoutingReach};
use crate::blocks::vc_router::failure::Failure;
use crate::blocks::vc_router::VcSpec;
use crate::scenario::{Named, Scenario, ScenarioError};

/// The fabric simulation.
pub type CellFabric = Network<FabricRouter>;

/// Builds the fabric a validated scenario describes.
pub fn build(scenario: &Scenario) -> Result<CellFabric, ScenarioError> {
    let (spec, router) = spec_and_router(scenario)?;
    Ok(Network::new(spec, router))
}

/// Builds partition `me` of the fabric split into `parts` for a run on as many threads, with
/// the partition (refused under `run.threads`, saying why, where the fabric cannot be split).
pub fn build_partition(
    scenario: &Scenario,
    parts: usize,
    me: u16,
) -> Result<(CellFabric, Partition), ScenarioError> {
    let (spec, router) = spec_and_router(scenario)?;
    Network::partition(spec, router, parts, me).map_err(|message| ScenarioError {
        key: "run.threads".into(),
        message,
    })
}

/// What the network is and how it routes, validated.
fn spec_and_router(scenario: &Scenario) -> Result<(NetworkSpec, FabricRouter), ScenarioError> {
    let topology = scenario.topology()?;
    let table = tables_of(&topology, "topology")?;
    let after_failures = tables_after_failures(scenario, &topology)?;
    let routing = scenario.routing.clone().unwrap_or_default();
    let mode = mode(&routing.mode).expect("validated routing mode");
    let mut spec = scenario.network_spec("cell_fabric", topology);
    let mut weights = routing.sampled_weights();
    if let Some(gnet) = &spec.gnet {
        // The VC routers count their queues in flits: the bias, in maximum cells, becomes the
        // flits of as many 160-byte cells.
        weights.nonminimal_bias_cells *= flits_of(DATA_CELL_BYTES, gnet.flit_bytes) as f64;
    }
    let router = FabricRouter::new(table, mode, scenario.run.seed, routing.spray_rounds)
        .with_sampled_weights(weights)
        .with_local_misroutes(routing.local_misroutes);
    let name = routing.mode;
    if let Some(vc) = &spec.vc {
        refuse_unannounced_misroutes_by_phase(&router, vc, &name)?;
    }
    let mut updates = Vec::with_capacity(after_failures.len());
    for (i, cut, table) in after_failures {
        if let Some(vc) = &spec.vc {
            check_vc_rule(&cut, &RoutingReach::of(&router, &table), vc, &name).map_err(|e| {
                ScenarioError {
                    key: format!("failures[{i}]"),
                    message: format!(
                        "the routes left after it do not fit {}: {}",
                        e.key, e.message
                    ),
                }
            })?;
        }
        updates.push(table);
    }
    let mut router = router.with_table_updates(updates);
    if let Some(vc) = &spec.vc {
        check_vc_rule(
            &spec.topology,
            &RoutingReach::of(&router, router.table()),
            vc,
            &name,
        )?;
        if spec.gnet.is_some() {
            // RTS, CTS and CTD (the first class) go deterministically (Aquila §3.3).
            router = router.with_ordered_vcs(vc.vcs_per_class());
        }
    }
    spec.routing = Some(name);
    Ok((spec, router))
}

/// The tables of `topology`, refused under `key` unless every host reaches every other.
fn tables_of(topology: &Topology, key: &str) -> Result<RouteTable, ScenarioError> {
    RouteTable::new(topology).map_err(|e| unreachable_error(topology, e, key))
}

/// `e`, a failure to route `topology`, as the error of `key`.
fn unreachable_error(topology: &Topology, e: TopologyError, key: &str) -> ScenarioError {
    let message = match e {
        TopologyError::Unreachable { src, dst } => format!(
            "host {} cannot reach host {}: every host must reach every other",
            topology.endpoint_name(src),
            topology.endpoint_name(dst)
        ),
        other => other.to_string(),
    };
    ScenarioError {
        key: key.into(),
        message,
    }
}

/// The tables after each failure, in the order the updates come (by time, then switch), each
/// with the failure's index and the topology it routes: each without every link and switch
/// failed so far. A failure must name a switch, and a link of it
/// to another switch that is still up (or none: the switch fails); the fabric without them must
/// still connect every pair of hosts whose switch is up.
fn tables_after_failures(
    scenario: &Scenario,
    topology: &Topology,
) -> Result<Vec<(usize, Topology, RouteTable)>, ScenarioError> {
    let mut cut = topology.clone();
    let mut failed_switches = Vec::new();
    let mut tables = Vec::new();
    for (i, f) in Failure::in_update_order(&scenario.scheduled_failures()) {
        let invalid = |key: &str, message: String| ScenarioError {
            key: format!("failures[{i}].{key}"),
            message,
        };
        if f.switch >= cut.switches() || failed_switches.contains(&f.switch) {
            let expected = format!(
                "expected a switch below {} that has not failed",
                cut.switches()
            );
            return Err(invalid("switch", format!("{expected}, got {}", f.switch)));
        }
        match f.port {
            Some(port) => {
                if port >= cut.switch_ports(f.switch) || cut.cut(f.switch, port).is_none() {
                    let expected = format!(
                        "expected a port of switch {} cabled to another switch (and not failed before)",
                        f.switch
                    );
                    return Err(invalid("port", format!("{expected}, got {port}")));
                }
            }
            None => {
                for port in 0..cut.switch_ports(f.switch) {
                    cut.cut(f.switch, port);
                }
                failed_switches.push(f.switch);
            }
        }
        let table = RouteTable::without_switches(&cut, &failed_switches)
            .map_err(|e| unreachable_error(&cut, e, &format!("failures[{i}]")))?;
        tables.push((i, cut.clone(), table));
    }
    Ok(tables)
}

/// Refuses the Dragonfly dateline under a mode that misroutes hop by hop without naming an
/// intermediate group (Aquila's): the rule would put its misroutes on the minimal phase's VCs,
/// which the dependency check, walking them as Valiant legs, would not see (unless
/// `vc.check_dependencies` is off).
fn refuse_unannounced_misroutes_by_phase(
    router: &FabricRouter,
    vc: &VcSpec,
    mode: &str,
) -> Result<(), ScenarioError> {
    let unseen = vc.rule == VcRule::DragonflyDateline && router.misroutes_unannounced();
    if !unseen || !vc.check_dependencies {
        return Ok(());
    }
    Err(ScenarioError {
        key: "vc.assignment".into(),
        message: format!(
            "routing.mode = {mode:?} misroutes hop by hop without naming an intermediate group, so \"dragonfly_dateline\", which reads the routing phase, cannot keep its misroutes apart: expected \"global_local_increment\" (Aquila's rule; vc.check_dependencies = false runs it anyway)"
        ),
    })
}

/// True if the routes close no cycle without their local detours: the detours' turn rule is
/// what closes it.
fn detours_close_it(topology: &Topology, reach: &RoutingReach<'_>, vc: &VcSpec) -> bool {
    let without = RoutingReach {
        local_misroutes: TurnRule::Off,
        ..*reach
    };
    reach.local_misroutes.on()
        && dependency::check(topology, &without, vc.rule, vc.vcs_per_class(), true).is_ok()
}

/// Refuses a VC rule that does not fit the routes (too few VCs) or leaves a cycle in the
/// channel dependency graph (unless `vc.check_dependencies` is off), naming the key.
fn check_vc_rule(
    topology: &Topology,
    reach: &RoutingReach<'_>,
    vc: &VcSpec,
    mode: &str,
) -> Result<(), ScenarioError> {
    let setting = format!(
        "vc.assignment = {:?} with routing.mode = {mode:?}",
        vc.rule.name()
    );
    // Each class keeps to its own VCs (the rule applied within the class), so the graph is
    // `classes` disjoint copies of one class's: checking one class checks them all.
    let per_class = vc.vcs_per_class();
    let checked = dependency::check(topology, reach, vc.rule, per_class, vc.check_dependencies);
    match checked {
        Ok(()) => Ok(()),
        Err(DependencyError::TooFewVcs { needed }) => Err(ScenarioError {
            key: "vc.count".into(),
            message: format!(
                "expected at least {needed} VCs{}: {setting} puts some route on VC {} of its class, got {}",
                match vc.classes {
                    1 => String::new(),
                    classes => format!(" per class ({classes} classes)"),
                },
                needed - 1,
                vc.vcs
            ),
        }),
        Err(DependencyError::Cycle(cycle)) if detours_close_it(topology, reach, vc) => {
            let (what, expected) = match reach.local_misroutes {
                TurnRule::Any => (
                    "local detours with no turn rule",
                    "\"parity_sign\" or \"up_down\"",
                ),
                _ => (
                    "local detours, with minimal routes of two local hops in a pod that the turn rule does not order (the tables give them where a pair's local links failed)",
                    "\"none\"",
                ),
            };
            Err(ScenarioError {
                key: "routing.local_misroutes".into(),
                message: format!(
                    "{:?} ({what}) leaves a cycle among a pod's local channels, (router, output port, VC): {}; expected {expected} (vc.check_dependencies = false runs it anyway)",
                    reach.local_misroutes.as_str(),
                    dependency::describe_cycle(&cycle)
                ),
            })
        }
        Err(DependencyError::Cycle(cycle)) => Err(ScenarioError {
            key: "vc.assignment".into(),
            message: format!(
                "{setting} leaves a cycle in the channel dependency graph, (router, output port, VC): {}; expected a rule that orders the VCs along every route (vc.check_dependencies = false runs it anyway)",
                dependency::describe_cycle(&cycle)
            ),
        }),
    }
}
