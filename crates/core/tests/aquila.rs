//! Aquila's Clique on the cell fabric (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22): the sampled adaptive routing modes against the pod shift's
//! bounds, and the Clique's keys refused by name.

use cellfabric_core::designs::cell_fabric;
use cellfabric_core::{Scenario, Summary};

/// Six pods of four TiNs with two hosts each (48 hosts), one global link per pod pair, hosts at
/// 50 Gb/s and GNet links at 25 Gb/s; output-queued TiNs whose 64-cell queues drop when full.
fn small_clique(mode: &str, destinations: &str, load: f64) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": 60000, "warmup_ns": 15000}},
            "topology": {{"kind": "clique", "global_propagation_ns": 250,
                "clique": {{"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 2}}}},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "output_queued", "buffer_cells": 64, "pipeline_ns": 40}},
            "link": {{"rate_gbps": 50, "propagation_ns": 2}},
            "cell": {{"size_bytes": 160, "payload_bytes": 152}},
            "traffic": {{"load": {load}, "destinations": "{destinations}"}}}}"#
    )
}

fn run(json: &str) -> Summary {
    let scenario = Scenario::from_json(json).expect("valid scenario");
    let (summary, _) = cell_fabric::build(&scenario)
        .expect("buildable fabric")
        .run()
        .expect("run keeps its invariants");
    summary
}

/// Under the pod shift a pod's 8 hosts at 50 Gb/s share the one 25 Gb/s link to the next pod
/// on minimal routes: 1/16 of line rate each. Misrouted through the other four pods, a pod
/// reaches the next over five links, 5/16 at most; Fully Adaptive, deciding on its own queues
/// only, carries well over twice the minimal share.
#[test]
fn pod_shift_bounds_minimal_routing_and_fully_adaptive_carries_more() {
    let minimal = run(&small_clique("aquila_minimal_adaptive", "group_shift", 0.9));
    let adaptive = run(&small_clique("aquila_fully_adaptive", "group_shift", 0.9));
    let bound = 1.0 / 16.0;
    let carried = minimal.rates.throughput;
    assert!(
        (0.95 * bound..=bound * 1.001).contains(&carried),
        "minimal {carried}"
    );
    assert!(
        minimal.nonminimal.is_none(),
        "minimal modes count no misroutes"
    );
    let carried = adaptive.rates.throughput;
    assert!(
        (2.0 * bound..=5.0 * bound).contains(&carried),
        "adaptive {carried}"
    );
    let misrouted = adaptive
        .nonminimal
        .expect("fully adaptive counts its misroutes");
    assert!(misrouted.cells_nonminimal > 0 && misrouted.nonminimal_fraction < 1.0);
}

/// Uniform traffic at a light load: Fully Adaptive stays on minimal routes (its queues are
/// short, and a misroute pays the bias), and every cell is delivered.
#[test]
fn fully_adaptive_stays_minimal_at_light_uniform_load() {
    let s = run(&small_clique("aquila_fully_adaptive", "uniform", 0.1));
    assert_eq!(s.cells.cells_dropped, 0);
    let misrouted = s.nonminimal.expect("counted");
    assert!(misrouted.nonminimal_fraction < 0.01, "{misrouted:?}");
    assert!((0.09..0.11).contains(&s.rates.throughput));
}

/// A Clique's keys refused with the key named: a pod its local ports cannot mesh, more pods
/// than the global ports reach, cells outside GNet's 16 to 160 bytes or without room for the
/// 8-byte header.
#[test]
fn clique_keys_that_cannot_build_are_refused_by_name() {
    let base = small_clique("aquila_fully_adaptive", "uniform", 0.5);
    for (from, to, key) in [
        (
            r#""tins_per_pod": 4"#,
            r#""tins_per_pod": 8"#,
            "topology.clique.tins_per_pod",
        ),
        (r#""pods": 6"#, r#""pods": 10"#, "topology.clique.pods"),
        (
            r#""size_bytes": 160"#,
            r#""size_bytes": 192"#,
            "cell.size_bytes",
        ),
        (
            r#""payload_bytes": 152"#,
            r#""payload_bytes": 156"#,
            "cell.payload_bytes",
        ),
        (
            r#""rate_gbps": 50"#,
            r#""rate_gbps": 20"#,
            "topology.clique.effective_gbps",
        ),
    ] {
        let json = base.replace(from, to);
        assert_ne!(json, base);
        let error = Scenario::from_json(&json).expect_err(key);
        assert_eq!(error.key, key, "{error:?}");
    }
}

/// A cell's one-way latency at zero load in our model: generated at a clock edge (25.6 ns: a
/// 160-byte cell at the hosts' 50 Gb/s), sent at once; each TiN latches it at its next clock
/// edge and sends it at once, so a leg costs the output's serialization, the cable's
/// propagation and the 40 ns per-hop pipeline. `legs` are the TiNs' outputs as
/// (serialization, propagation) in picoseconds.
fn zero_load_ps(legs: &[(u64, u64)]) -> u64 {
    const SLOT_PS: u64 = 25_600;
    const PIPELINE_PS: u64 = 40_000;
    let host = 25_600 + 2_000;
    legs.iter().fold(host, |t, &(serialization, propagation)| {
        t.div_ceil(SLOT_PS) * SLOT_PS + serialization + propagation + PIPELINE_PS
    })
}

/// At 1% uniform load every percentile of the latency is the zero-load latency of a 1-, 2-, 3-
/// or 4-TiN minimal path computed from the hop counts and per-hop delays: local links 25 Gb/s
/// over 2 ns, global links 25 Gb/s over 250 ns of fibre plus 30 ns of FEC, the last leg to the
/// host at 50 Gb/s.
#[test]
fn zero_load_latency_is_the_hop_count_times_the_per_hop_delays() {
    let (local, global, host) = ((51_200, 2_000), (51_200, 280_000), (25_600, 2_000));
    let paths = [
        zero_load_ps(&[host]),
        zero_load_ps(&[local, host]),
        zero_load_ps(&[global, local, host]),
        zero_load_ps(&[local, global, host]),
        zero_load_ps(&[local, global, local, host]),
    ];
    assert_eq!(paths[4], 707_600, "the 4-TiN path: 707.6 ns");
    let s = run(&small_clique("aquila_minimal_adaptive", "uniform", 0.01));
    let latency = s.latency.latency_ns;
    for (name, ns) in [
        ("p50", latency.p50),
        ("p90", latency.p90),
        ("p1", latency.p1),
    ] {
        let ps = (ns * 1_000.0).round() as u64;
        assert!(
            paths.iter().any(|&p| p.abs_diff(ps) <= 100),
            "{name} {ns} ns is none of {paths:?} ps"
        );
    }
}
