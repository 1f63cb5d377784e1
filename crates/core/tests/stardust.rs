//! Stardust (seed 001): push against pull (Fig. 7), fair credits, a lossless permutation with
//! both accounts settled, determinism, and bad input.

use cellfabric_core::Report;

/// The Fig. 7 fabric of `scenarios/stardust/push-pull.topo` with `extra` JSON members.
fn push_pull(credits: bool) -> Report {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/stardust/push-pull.topo"
    );
    run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 1, "duration_ns": 1000000, "warmup_ns": 300000}},
            "topology": {{"kind": "file", "file": "{topo}"}},
            "link": {{"rate_gbps": 100, "propagation_ns": 100}},
            "stardust": {{"credits": {credits}}},
            "traffic": {{"pattern": "flows", "packet_bytes": 1500, "flows": [
                {{"src": 0, "dst": 3, "load": 1.0}}, {{"src": 1, "dst": 4, "load": 1.0}},
                {{"src": 2, "dst": 3, "load": 1.0}}]}}}}"#
    ))
}

/// A k = 4 fat-tree (16 hosts) with `extra` JSON members.
fn fat_tree(seed: u64, extra: &str) -> String {
    format!(
        r#"{{"design": "stardust", "run": {{"seed": {seed}, "duration_ns": 1000000, "warmup_ns": 300000}},
            "topology": {{"kind": "fat_tree", "k": 4}} {extra}}}"#
    )
}

fn run(json: &str) -> Report {
    let mut sim = cellfabric_core::build(json).expect("valid scenario");
    sim.advance(u64::MAX);
    sim.finish().expect("run keeps its invariants")
}

fn goodput_of(report: &Report, host: u64) -> f64 {
    let hosts = &report.tables["hosts"];
    let at = hosts["host"]
        .as_array()
        .unwrap()
        .iter()
        .position(|h| h.as_u64() == Some(host))
        .expect("host receives");
    hosts["goodput_gbps"][at].as_f64().unwrap()
}

fn u(report: &Report, key: &str) -> u64 {
    report.summary[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}"))
}

/// Fig. 7: with credits, port B gets its 100G although port A is oversubscribed, and nothing
/// is lost in the fabric; pushed, the element's queue to the egress device drops A's and B's
/// cells alike and B loses about a third.
#[test]
fn pull_gives_both_ports_line_rate_and_push_starves_the_uncongested_one() {
    let pull = push_pull(true);
    let (a, b) = (goodput_of(&pull, 3), goodput_of(&pull, 4));
    assert!(a > 99.0 && b > 99.0, "pull: A {a} G, B {b} G");
    assert_eq!(u(&pull, "cells_dropped"), 0);
    assert_eq!(u(&pull, "packets_dropped_fabric"), 0);
    assert!(
        u(&pull, "packets_dropped_ingress") > 0,
        "A's excess waits, then drops, at the ingress"
    );

    let push = push_pull(false);
    let b = goodput_of(&push, 4);
    assert!((60.0..85.0).contains(&b), "push: B {b} G");
    assert!(u(&push, "cells_dropped") > 0);
    assert!(u(&push, "packets_dropped_fabric") > 0);
}

/// Three senders to one host share its port's credits round robin: each gets a third.
#[test]
fn credits_split_a_port_evenly() {
    let report = run(&fat_tree(
        3,
        r#", "traffic": {"pattern": "flows", "flows": [
            {"src": 0, "dst": 12, "load": 1.0}, {"src": 4, "dst": 12, "load": 1.0},
            {"src": 8, "dst": 12, "load": 1.0}]}"#,
    ));
    let total = goodput_of(&report, 12);
    assert!(total > 9.9, "the port is kept busy: {total} G");
    let shares: Vec<f64> = report.tables["flows"]["goodput_gbps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_f64().unwrap() / total)
        .collect();
    assert_eq!(shares.len(), 3);
    for share in &shares {
        assert!((share - 1.0 / 3.0).abs() < 0.02, "shares {shares:?}");
    }
    assert_eq!(u(&report, "cells_dropped"), 0);
}

/// The permutation at line rate on a k = 4 fat-tree: no cell lost, both accounts settle, the
/// goodput is near the cell-header ceiling (240 of 256 bytes) and the same seed gives the
/// same run.
#[test]
fn a_permutation_is_lossless_deterministic_and_near_the_header_ceiling() {
    let json = fat_tree(5, "");
    let first = run(&json);
    let s = &first.summary;
    assert_eq!(u(&first, "cells_dropped"), 0);
    assert_eq!(u(&first, "packets_dropped_fabric"), 0);
    assert_eq!(
        u(&first, "cells_injected"),
        u(&first, "cells_delivered") + u(&first, "cells_in_flight")
    );
    let goodput = s["goodput"].as_f64().unwrap();
    assert!(
        goodput > 0.88 && goodput < 240.0 / 256.0,
        "goodput {goodput}"
    );
    assert!(u(&first, "short_cells") > 0 && u(&first, "credits") > 0);
    let again = run(&json);
    assert_eq!(first.summary, again.summary);
    assert_eq!(first.tables, again.tables);
    let other = run(&fat_tree(6, ""));
    assert_ne!(first.summary, other.summary, "the seed matters");
}

/// Bad values get one message naming the key.
#[test]
fn bad_input_names_the_key() {
    let cases = [
        (
            r#", "cell": {"size_bytes": 64, "header_bytes": 64}"#,
            "cell.header_bytes",
        ),
        (r#", "credit": {"size_bytes": 128}"#, "credit.size_bytes"),
        (
            r#", "element": {"queue_cells": 16, "fci_threshold_cells": 32}"#,
            "element.fci_threshold_cells",
        ),
        (r#", "routing": {"mode": "ugal"}"#, "routing.mode"),
        (r#", "traffic": {"load": 0}"#, "traffic.load"),
        (
            r#", "traffic": {"pattern": "flows", "flows": [{"src": 0, "dst": 99, "load": 1}]}"#,
            "traffic.flows[0].dst",
        ),
        (r#", "credit": {"speedup": -0.1}"#, "credit.speedup"),
        (r#", "bogus": 1"#, "bogus"),
    ];
    for (extra, key) in cases {
        let error = cellfabric_core::build(&fat_tree(1, extra))
            .err()
            .unwrap_or_else(|| panic!("{extra} was accepted"));
        assert!(error.key.starts_with(key), "{extra}: {error}");
    }
}

/// An adapter cabled to no fabric element cannot send: a star (one edge switch, no fabric)
/// is refused.
#[test]
fn an_adapter_without_uplinks_is_refused() {
    let json = r#"{"design": "stardust", "topology": {"kind": "star"}}"#;
    let error = cellfabric_core::build(json).err().expect("refused");
    assert!(
        error.to_string().contains("no link to a fabric element"),
        "{error}"
    );
    assert_eq!(error.key, "topology");
}
