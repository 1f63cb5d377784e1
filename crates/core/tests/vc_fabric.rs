//! Virtual-channel routers in the cell fabric, on the small balanced Dragonfly (p = 2, a = 4,
//! h = 2, g = 9): deadlock freedom at full load under the VC rules of Kim, Dally, Scott and
//! Abts ("Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008) and the
//! minimal-routing bound under the group shift; the build-time refusal of a rule that leaves a
//! dependency cycle, and the runtime report of the deadlock it leads to.

use cellfabric_core::designs::cell_fabric;
use cellfabric_core::{RunError, Scenario, Summary};

/// The small Dragonfly of VC routers, one cycle a nanosecond (64-byte flits at 512 Gbit/s),
/// channel latencies terminal / local / global of 1 / 10 / 100 cycles, 10-flit packets,
/// `vc` the `vc` section's keys.
fn dragonfly(mode: &str, destinations: &str, load: f64, cycles: u64, vc: &str) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": {cycles}, "warmup_ns": {warmup}}},
            "topology": {{"kind": "dragonfly", "hosts_per_router": 2, "routers_per_group": 4,
                "global_links_per_router": 2, "groups": 9, "host_propagation_ns": 0,
                "global_propagation_ns": 99}},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "vc_separable"}},
            "vc": {{"buffer_cells": 256, "speedup": 2.0, "credit_delay_cycles": 2, {vc}}},
            "link": {{"rate_gbps": 512.0, "propagation_ns": 9, "flow_control": "credit"}},
            "cell": {{"size_bytes": 64}},
            "traffic": {{"load": {load}, "destinations": "{destinations}", "packet_bytes": 640}}}}"#,
        warmup = cycles / 4,
    )
}

fn build(json: &str) -> Result<cell_fabric::CellFabric, String> {
    let scenario = Scenario::from_json(json).map_err(|e| format!("{}: {}", e.key, e.message))?;
    cell_fabric::build(&scenario).map_err(|e| format!("{}: {}", e.key, e.message))
}

fn run(json: &str) -> Summary {
    let (summary, _) = build(json)
        .expect("buildable fabric")
        .run()
        .expect("no deadlock, every cell accounted for");
    summary
}

const MINIMAL_2: &str = r#""count": 2, "assignment": "dragonfly_dateline""#;
const UGAL_3: &str = r#""count": 3, "assignment": "dragonfly_dateline""#;

/// Minimal routing with the dateline on 2 VCs, at offered 1.0: uniform traffic flows near
/// line rate, and the group shift is held to the one global channel between two groups,
/// 1/(a·p) = 1/8 of line rate per host (Kim et al., §4.2), within 2%; nothing is lost and
/// nothing deadlocks.
#[test]
fn minimal_routing_at_full_load_meets_the_group_shift_bound_without_deadlock() {
    let uniform = run(&dragonfly(
        "deterministic",
        "uniform",
        1.0,
        8_000,
        MINIMAL_2,
    ));
    assert!(
        uniform.rates.throughput > 0.8,
        "uniform {}",
        uniform.rates.throughput
    );
    let shift = run(&dragonfly(
        "deterministic",
        "group_shift",
        1.0,
        8_000,
        MINIMAL_2,
    ));
    let bound = 1.0 / 8.0;
    let gap = (shift.rates.throughput - bound).abs() / bound;
    assert!(gap < 0.02, "group shift {} vs 1/8", shift.rates.throughput);
    for s in [&uniform, &shift] {
        assert_eq!(s.cells.cells_dropped, 0);
        assert_eq!(
            s.cells.cells_injected,
            s.cells.cells_delivered + s.cells.cells_in_flight
        );
    }
}

/// UGAL-L deciding at the source router by used credits, with the dateline's three phases on
/// 3 VCs, at offered 1.0 under uniform traffic and the group shift: no deadlock, and under the
/// group shift it carries several times what minimal routing can.
#[test]
fn ugal_at_full_load_does_not_deadlock_and_beats_minimal_under_the_shift() {
    let uniform = run(&dragonfly("ugal_credit", "uniform", 1.0, 8_000, UGAL_3));
    assert!(
        uniform.rates.throughput > 0.6,
        "uniform {}",
        uniform.rates.throughput
    );
    let shift = run(&dragonfly("ugal_credit", "group_shift", 1.0, 8_000, UGAL_3));
    assert!(
        shift.rates.throughput > 0.3,
        "group shift {}",
        shift.rates.throughput
    );
    assert_eq!(shift.cells.cells_dropped, 0);
}

/// The iSLIP allocator, virtual cut-through and strict priority carry Valiant routing below
/// its half-of-line-rate capacity deadlock-free, and a run is the same run twice.
#[test]
fn islip_cut_through_and_strict_priority_run_and_repeat() {
    let json = dragonfly(
        "valiant",
        "uniform",
        0.4,
        4_000,
        r#""count": 3, "switching": "virtual_cut_through", "output_arbitration": "strict_priority""#,
    )
    .replace("vc_separable", "vc_islip");
    let first = run(&json);
    let again = run(&json);
    assert!(
        (first.rates.throughput - 0.4).abs() < 0.02,
        "{}",
        first.rates.throughput
    );
    assert_eq!(first.cells.cells_delivered, again.cells.cells_delivered);
    assert_eq!(
        first.latency.latency_cells.mean,
        again.latency.latency_cells.mean
    );
}

/// One VC under minimal routing: local, global and local channels of three groups close a
/// cycle, and the build refuses the rule, naming the cycle.
#[test]
fn one_vc_on_a_dragonfly_is_refused_with_the_cycle_named() {
    let json = dragonfly(
        "deterministic",
        "uniform",
        0.5,
        1_000,
        r#""count": 1, "assignment": "single""#,
    );
    let error = build(&json).err().expect("refused");
    assert!(error.starts_with("vc.assignment: "), "{error}");
    assert!(
        error.contains("cycle") && error.contains("(router "),
        "{error}"
    );
}

/// Too few VCs for the rule's phases: refused on `vc.count`.
#[test]
fn too_few_vcs_for_the_rule_are_refused() {
    let json = dragonfly("ugal_credit", "uniform", 0.5, 1_000, MINIMAL_2);
    let error = build(&json).err().expect("refused");
    assert!(
        error.starts_with("vc.count: expected at least 3 VCs"),
        "{error}"
    );
}

/// With the check turned off, one VC under the group shift at full load deadlocks, and the
/// run stops with a report naming a cycle of (router, input port, VC) buffers.
#[test]
fn a_cycle_the_check_would_refuse_deadlocks_and_is_named() {
    let json = dragonfly(
        "deterministic",
        "group_shift",
        1.0,
        40_000,
        r#""count": 1, "assignment": "single", "buffer_cells": 16, "check_dependencies": false"#,
    )
    .replace(r#""buffer_cells": 256, "#, "");
    let outcome = build(&json).expect("built without the check").run();
    let Err(RunError::Deadlock(report)) = outcome else {
        panic!(
            "expected a deadlock, got {:?}",
            outcome.map(|(s, _)| s.rates.throughput)
        );
    };
    assert!(report.contains("cycle of full VC buffers"), "{report}");
    assert!(report.contains("(router "), "{report}");
}
