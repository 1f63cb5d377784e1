//! Broadcasts through RIFL racks (Shen and Chow 2023, §IV-A, Eq. 1): every host receives every
//! other host's broadcasts exactly once, in order with the unicast traffic of the same source,
//! on one switch and through a tree of switches. The sources stop halfway, so the runs drain
//! and every copy can be counted at its host.

use super::{network_spec, Network};
use crate::blocks::cell_network::{PortTable, Summary};
use crate::scenario::Scenario;

/// A RIFL rack of `topology` (JSON of the topology section) at `load`, `broadcast_fraction` of
/// its packets (512 bytes, two segments) broadcast; sources stop halfway through the run.
fn drained(topology: &str, load: f64, broadcast_fraction: f64, seed: u64) -> (Summary, PortTable) {
    let json = format!(
        r#"{{"design": "rifl",
            "run": {{"seed": {seed}, "duration_ns": 422400, "warmup_ns": 0}},
            "topology": {topology},
            "switch": {{"ports": 8, "scheduler": "islip", "iterations": 3, "buffer_cells": 24, "pipeline_ns": 42.24}},
            "link": {{"rate_gbps": 100.0, "propagation_ns": 147.84, "flow_control": "onoff", "off_threshold_cells": 8, "on_threshold_cells": 4}},
            "cell": {{"size_bytes": 264, "payload_bytes": 256}},
            "nic": {{"queue_cells": 8}},
            "traffic": {{"load": {load}, "arrival": "bursty", "burst_mean_bytes": 1024,
                         "include_self": false, "packet_bytes": 512,
                         "broadcast_fraction": {broadcast_fraction}}}}}"#
    );
    let scenario = Scenario::from_json(&json).expect("valid scenario");
    let (mut spec, router) = network_spec(&scenario).expect("valid RIFL scenario");
    spec.traffic.stop_ps = scenario.end_ps() / 2;
    let (summary, tables) = Network::new(spec, router)
        .run()
        .expect("the run keeps its invariants");
    assert_eq!(summary.cells.cells_in_flight, 0, "the run drained");
    assert_eq!(summary.cells.cells_dropped, 0, "RIFL is lossless");
    assert_eq!(summary.hosts.cells_out_of_order, Some(0), "in order");
    (summary, tables.ports)
}

const STAR: &str = r#"{"kind": "star"}"#;
/// Three leaves of three hosts on one spine: a tree of four switches, three hops leaf to leaf.
const TREE: &str = r#"{"kind": "leaf_spine", "leaves": 3, "spines": 1, "hosts_per_leaf": 3}"#;

/// With only broadcasts, each host receives exactly the cells every other host injected: one
/// copy of each, none of its own.
#[test]
fn every_host_receives_every_other_hosts_broadcasts_once() {
    for (topology, hosts) in [(STAR, 8), (TREE, 9)] {
        let (summary, ports) = drained(topology, 0.05, 1.0, 3);
        let injected: u64 = ports.cells_injected.iter().sum();
        assert!(injected > 500, "{topology}: {injected} cells");
        for (host, &delivered) in ports.cells_delivered.iter().enumerate() {
            assert_eq!(
                delivered,
                injected - ports.cells_injected[host],
                "{topology}: host {host}"
            );
        }
        assert_eq!(
            summary.cells.cells_delivered,
            (hosts - 1) * injected,
            "{topology}"
        );
        // Every cell is copied once per output but the one it arrives on and its own, at
        // every switch it crosses: on one 8-port switch, 6 new cells per broadcast cell.
        if topology == STAR {
            assert_eq!(summary.cells.cells_copied, Some(6 * injected));
        }
    }
}

/// Broadcasts mixed with unicast traffic, under load: every cell of a source, copies and all,
/// reaches each host in the order the source made it, and the account of copies balances:
/// injected + copied = delivered.
#[test]
fn broadcasts_keep_their_place_among_a_sources_unicast_cells() {
    for topology in [STAR, TREE] {
        let (summary, _) = drained(topology, 0.2, 0.2, 5);
        let cells = &summary.cells;
        let copied = cells.cells_copied.expect("the traffic broadcasts");
        assert!(copied > 1_000, "{topology}: {copied} copies");
        assert_eq!(cells.cells_injected + copied, cells.cells_delivered);
        assert!(summary.switching.flow_control_signals > 0, "{topology}");
    }
}

#[test]
fn broadcasts_run_the_same_for_the_same_seed() {
    let a = drained(TREE, 0.2, 0.2, 7);
    let b = drained(TREE, 0.2, 0.2, 7);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_ne!(
        format!("{a:?}"),
        format!("{:?}", drained(TREE, 0.2, 0.2, 8))
    );
}
