//! Aquila's Clique lossless on virtual-channel routers (Gibson et al., "Aquila: A unified,
//! low-latency fabric for datacenter networks", NSDI '22, §3.1–3.2): per-VC credits, the iSLIP
//! crossbar, the VC incremented on every entry into a pod, and the four sampled routing modes
//! deciding on per-VC queues. No mode deadlocks at full load under uniform traffic or the pod
//! shift, no cell is dropped, minimal routing is held to the pod pair's global links and Fully
//! Adaptive carries far more.

mod clique;

use clique::{build, run, MODES};

/// Six pods of four TiNs with two hosts each (48 hosts), two local links per TiN pair, three
/// global ports per TiN (two links per pod pair), hosts at 50 Gb/s and GNet links at 25 Gb/s;
/// iSLIP VC routers with 16-flit VC buffers under credits and Aquila's VC rule on `vcs` VCs.
fn clique(mode: &str, destinations: &str, load: f64, vcs: u16) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": 40000, "warmup_ns": 10000}},
            "topology": {{"kind": "clique", "global_propagation_ns": 250,
                "clique": {{"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 3}}}},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "vc_islip", "pipeline_ns": 40}},
            "vc": {{"count": {vcs}, "assignment": "global_local_increment", "buffer_cells": 16}},
            "link": {{"rate_gbps": 50, "propagation_ns": 2, "flow_control": "credit"}},
            "cell": {{"size_bytes": 160, "payload_bytes": 152}},
            "traffic": {{"load": {load}, "destinations": "{destinations}"}}}}"#
    )
}

/// Every mode at offered 1.0 under uniform traffic and the pod shift, on three VCs: the run
/// ends without a deadlock report, drops nothing, and its cells are all delivered or in flight.
#[test]
fn no_mode_deadlocks_or_drops_at_full_load() {
    for mode in MODES {
        for destinations in ["uniform", "group_shift"] {
            let s = run(&clique(mode, destinations, 1.0, 3));
            let c = &s.cells;
            assert_eq!(c.cells_dropped, 0, "{mode} {destinations}");
            assert_eq!(
                c.cells_injected,
                c.cells_delivered + c.cells_in_flight,
                "{mode} {destinations}"
            );
            assert!(
                s.rates.throughput > 0.1,
                "{mode} {destinations} carried {}",
                s.rates.throughput
            );
        }
    }
}

/// The pod shift at offered 1.0: a pod's 8 hosts at 50 Gb/s share the two 25 Gb/s links to
/// the next pod on minimal routes, 1/8 of line rate each, which both minimal modes meet
/// within 2%. Misrouted through the four other pods a cell crosses two global links that no
/// minimal route of the shift uses, so a pod reaches the next at (2 + 4·2/2)·25 Gb/s at most,
/// 3/8 of line rate; Fully Adaptive, now seeing downstream congestion through the credits,
/// carries well over twice the minimal share.
#[test]
fn pod_shift_holds_minimal_routes_to_the_pod_pairs_links_and_fully_adaptive_carries_more() {
    let bound = 1.0 / 8.0;
    for mode in ["aquila_minimal_adaptive", "aquila_minimal_deterministic"] {
        let carried = run(&clique(mode, "group_shift", 1.0, 2)).rates.throughput;
        assert!(
            (carried - bound).abs() / bound < 0.02,
            "{mode} {carried} vs 1/8"
        );
    }
    let adaptive = run(&clique("aquila_fully_adaptive", "group_shift", 1.0, 3));
    let carried = adaptive.rates.throughput;
    assert!(
        (2.4 * bound..=3.0 * bound).contains(&carried),
        "fully adaptive {carried}"
    );
    let misrouted = adaptive.nonminimal.expect("counted");
    assert!(misrouted.nonminimal_fraction > 0.1, "{misrouted:?}");
}

/// Non-minimal modes on two VCs are refused for the count (a misroute through an
/// intermediate pod enters two pods, VC 2), and one VC with its dependency cycle named.
#[test]
fn too_few_vcs_for_misroutes_are_refused_by_name() {
    let error = build(&clique("aquila_fully_adaptive", "uniform", 0.5, 2))
        .err()
        .expect("two VCs cannot carry misroutes");
    assert!(
        error.starts_with("vc.count: expected at least 3 VCs"),
        "{error}"
    );
    let json = clique("aquila_minimal_adaptive", "uniform", 0.5, 1)
        .replace("global_local_increment", "single");
    let error = build(&json).err().expect("one VC closes a cycle");
    assert!(error.starts_with("vc.assignment: "), "{error}");
    assert!(
        error.contains("cycle") && error.contains("(router "),
        "{error}"
    );
}
