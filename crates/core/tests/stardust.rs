//! Stardust (Zilberman et al., NSDI '19): push against pull (Fig. 7), fair credits, a lossless
//! permutation with both accounts settled, determinism, and bad input.

mod columns;

use columns::{f, run};

use cellfabric_core::Report;

/// The Fig. 7 fabric of `scenarios/stardust/push-pull.topo`: pull or push, port B's traffic in
/// class `b_class` (A's in class 0).
fn push_pull(credits: bool, b_class: u32) -> Report {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/stardust/push-pull.topo"
    );
    run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 1, "duration_ns": 1000000, "warmup_ns": 300000}},
            "topology": {{"kind": "file", "file": "{topo}"}},
            "link": {{"rate_gbps": 100, "propagation_ns": 100}},
            "stardust": {{"credits": {credits}}}, "adapter": {{"reassembly_timeout_ns": 5000}},
            "traffic": {{"pattern": "flows", "packet_bytes": 1500, "arrival": "poisson", "flows": [
                {{"src": 0, "dst": 3, "load": 1.0}}, {{"src": 1, "dst": 4, "load": 1.0, "class": {b_class}}},
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
    let pull = push_pull(true, 0);
    let (a, b) = (goodput_of(&pull, 3), goodput_of(&pull, 4));
    assert!(a > 99.0 && b > 98.0, "pull: A {a} G, B {b} G");
    assert_eq!(u(&pull, "cells_dropped"), 0);
    assert_eq!(u(&pull, "packets_dropped_fabric"), 0);
    assert!(
        u(&pull, "packets_dropped_ingress") > 0,
        "A's excess waits, then drops, at the ingress"
    );

    let push = push_pull(false, 0);
    let b = goodput_of(&push, 4);
    assert!((55.0..75.0).contains(&b), "push: B {b} G");
    assert!(u(&push, "cells_dropped") > 0);
    assert!(u(&push, "packets_dropped_fabric") > 0);
}

/// Fig. 12: with B in the low class, pull still gives both ports their line rate; push gives
/// the high class the contended links and B almost nothing.
#[test]
fn a_low_class_survives_pull_and_starves_in_push() {
    let pull = push_pull(true, 1);
    let (a, b) = (goodput_of(&pull, 3), goodput_of(&pull, 4));
    assert!(a > 99.0 && b > 98.0, "pull: A {a} G, B {b} G");
    assert_eq!(u(&pull, "cells_dropped"), 0);
    let push = push_pull(false, 1);
    let (a, b) = (goodput_of(&push, 3), goodput_of(&push, 4));
    // Cells wait at the adapter for an uplink with room, so the uplinks' queues hold one cell
    // each and B's cells find the contended links a little more often: about 8 G of 100.
    assert!(a > 95.0 && b < 10.0, "push: A {a} G, B {b} G");
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

/// §4.1: credits run "slightly below the fabric speed-up". A k = 4 fat-tree has fs = 1 (two
/// hosts and two uplinks per adapter), so with 16-byte headers on 256-byte cells its fabric
/// carries 240/256 of what the ports' credits at +3% would ask: bounded, the credits of all
/// of an adapter's ports together never exceed its fabric payload rate / 1.03 (one credit of
/// slack each at the start); as written (`credit.below_fabric = false`) they do.
#[test]
fn credits_stay_below_the_fabric_speedup() {
    let cells =
        r#", "cell": {"size_bytes": 256, "header_bytes": 16}, "credit": {"size_bytes": 2048"#;
    let bounded = run(&fat_tree(5, &format!("{cells}}}")));
    let as_written = run(&fat_tree(
        5,
        &format!(r#"{cells}, "below_fabric": false}}"#),
    ));
    let (adapters, duration_s) = (8.0, 1e-3);
    let fabric_payload_bps = 2.0 * 10e9 * 240.0 / 256.0;
    let bound = adapters * (duration_s * fabric_payload_bps / 1.03 / (2048.0 * 8.0) + 1.0);
    let credits = |r: &Report| u(r, "credits") as f64;
    assert!(
        credits(&bounded) <= bound,
        "{} credits against {bound}",
        credits(&bounded)
    );
    assert!(
        credits(&bounded) > 0.97 * bound,
        "the bound is what limits them"
    );
    assert!(
        credits(&as_written) > bound,
        "{} credits",
        credits(&as_written)
    );
    assert_eq!(u(&bounded, "cells_dropped"), 0);
}

/// DCQCN and NDP hosts over adapters that pause their hosts, a permutation of unending flows:
/// no cell, packet or host frame is lost, the same seed gives the same report, tables and all,
/// and another seed another.
#[test]
fn paused_hosts_run_dcqcn_and_ndp_losslessly_and_deterministically() {
    for transport in ["dcqcn", "ndp"] {
        let extra = format!(
            r#", "host": {{"transport": "{transport}"}}, "adapter": {{"pause_hosts": true}}"#
        );
        let first = run(&fat_tree(5, &extra));
        for key in [
            "cells_dropped",
            "packets_dropped_ingress",
            "packets_dropped_fabric",
            "packets_dropped_egress",
            "timeouts",
        ] {
            assert_eq!(u(&first, key), 0, "{transport}: {key}");
        }
        assert_eq!(first.summary["pfc"]["lossless_drops"], 0);
        assert!(
            first.summary["goodput"].as_f64().unwrap() > 0.7,
            "{transport}"
        );
        let again = run(&fat_tree(5, &extra));
        assert_eq!(first.summary, again.summary, "{transport}");
        assert_eq!(first.tables, again.tables, "{transport}");
        let other = run(&fat_tree(6, &extra));
        assert_ne!(
            first.summary, other.summary,
            "{transport}: the seed matters"
        );
    }
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
        (r#", "credit": {"unused": "banked"}"#, "credit.unused"),
        (
            r#", "credit": {"requests": "sometimes"}"#,
            "credit.requests",
        ),
        (
            r#", "traffic": {"pattern": "flows", "flows": [{"src": 0, "dst": 1, "load": 1, "class": 4}]}"#,
            "traffic.flows[0].class",
        ),
        (r#", "traffic": {"senders": 3}"#, "traffic.senders"),
        (
            r#", "stardust": {"class_weights": [1, 2]}"#,
            "stardust.class_weights",
        ),
        (r#", "traffic": {"pattern": "fct"}"#, "traffic.flow_sizes"),
        (
            r#", "traffic": {"pattern": "fct", "flow_sizes": "/no/such/file"}"#,
            "traffic.flow_sizes",
        ),
        (r#", "bogus": 1"#, "bogus"),
        (
            r#", "failures": [{"at_ns": 1000, "switch": 8, "port": 0}]"#,
            "failures",
        ),
        (
            r#", "reachability": {"mode": "messages", "slice_adapters": 129}"#,
            "reachability.slice_adapters",
        ),
        (
            r#", "reachability": {"mode": "messages", "threshold": 0}"#,
            "reachability.threshold",
        ),
        (
            r#", "reachability": {"interval_ns": 0}"#,
            "reachability.interval_ns",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 99}]"#,
            "failures[0].switch",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 0, "restore_ns": 2000}]"#,
            "failures[0].restore_ns",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 0, "port": 0}]"#,
            "failures[0].port",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 0, "port": 9}]"#,
            "failures[0].port",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 8, "restore_ns": 10}]"#,
            "failures[0].restore_ns",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 8, "port": 0, "cell_error_rate": 1.5}]"#,
            "failures[0].cell_error_rate",
        ),
        (
            r#", "reachability": {"mode": "messages"}, "failures": [{"at_ns": 1000, "switch": 8, "cell_error_rate": 0.1}]"#,
            "failures[0].cell_error_rate",
        ),
        (r#", "element": {"latency_ns": -1}"#, "element.latency_ns"),
        (
            r#", "reachability": {"mode": "messages", "faulty_errors": 0}"#,
            "reachability.faulty_errors",
        ),
        // DCQCN and NDP need adapters that pause their hosts; pausing needs transport hosts,
        // XON below XOFF, and VOQs that hold every host of an adapter up to its headroom.
        (r#", "host": {"transport": "dcqcn"}"#, "host.transport"),
        (r#", "host": {"transport": "ndp"}"#, "host.transport"),
        (
            r#", "adapter": {"pause_hosts": true}"#,
            "adapter.pause_hosts",
        ),
        // Transport hosts open the `fct` pattern's flows during the run: as on the Ethernet
        // design, MPTCP cannot, and sizes come from the file, not flow_bytes. The line-rate
        // sender needs its cap here (only the Ethernet design derives it).
        (
            r#", "host": {"transport": "mptcp"}, "traffic": {"pattern": "fct", "flow_sizes": "x"}"#,
            "host.transport",
        ),
        (
            r#", "host": {"transport": "line_rate"}"#,
            "host.inflight_cap_bytes",
        ),
        (
            r#", "host": {"transport": "tcp"}, "traffic": {"pattern": "fct", "flow_sizes": "x", "flow_bytes": 1000}"#,
            "traffic.flow_bytes",
        ),
        (
            r#", "host": {"transport": "dcqcn"}, "adapter": {"pause_hosts": true, "pause_xon_packets": 8}"#,
            "adapter.pause_xon_packets",
        ),
        (
            r#", "host": {"transport": "ndp"}, "adapter": {"pause_hosts": true, "voq_packets": 23}"#,
            "adapter.voq_packets",
        ),
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

/// §4.2.1: a last-stage link fed by many adapters is an M/D/1 queue. With Poisson one-cell
/// packets from 31 adapters into one element, the depth arriving cells find has the
/// Pollaczek-Khinchine mean rho^2 / (2 (1 - rho)) and a tail that decays by 1/z* per cell,
/// where z* > 1 solves z = exp(rho (z - 1)).
#[test]
fn a_last_stage_link_queues_like_md1() {
    for rho in [0.5, 0.8, 0.9] {
        let load = rho * (240.0 * 8.0 / 10.0) / (256.0 * 8.0 / 10.0) / 31.0;
        let report = run(&format!(
            r#"{{"design": "stardust", "run": {{"seed": 4, "duration_ns": 50000000, "warmup_ns": 1000000}},
                "topology": {{"kind": "clos", "tiers": 1, "radix": 32, "hosts_per_edge": 1, "uplinks_per_edge": 1}},
                "link": {{"rate_gbps": 10, "propagation_ns": 100}},
                "stardust": {{"credits": false}}, "element": {{"queue_cells": 4096}},
                "traffic": {{"pattern": "incast", "incast_host": 0, "packet_bytes": 240,
                             "arrival": "poisson", "load": {load}}}}}"#
        ));
        assert_eq!(u(&report, "cells_dropped"), 0);
        let mean = report.summary["last_stage_queue_mean_cells"]
            .as_f64()
            .unwrap();
        let theory = rho * rho / (2.0 * (1.0 - rho));
        assert!(
            (mean / theory - 1.0).abs() < 0.08,
            "rho {rho}: mean depth {mean}, M/D/1 {theory}"
        );
        // The tail: P(depth >= n) against n, fitted where it is above 1e-3.
        let table = &report.tables["last_stage_queue"];
        let depths: Vec<u64> = table["depth_cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        let counts: Vec<u64> = table["arrivals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let total: u64 = counts.iter().sum();
        let at_least = |n: u64| -> f64 {
            depths
                .iter()
                .zip(&counts)
                .filter(|(&d, _)| d >= n)
                .map(|(_, &c)| c)
                .sum::<u64>() as f64
                / total as f64
        };
        let points: Vec<(f64, f64)> = (2..200)
            .map(|n| (n as f64, at_least(n)))
            .take_while(|&(_, p)| p > 1e-3)
            .map(|(n, p)| (n, p.ln()))
            .collect();
        assert!(points.len() >= 4, "rho {rho}: too short a tail to fit");
        let (sx, sy) = points
            .iter()
            .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
        let k = points.len() as f64;
        let (mx, my) = (sx / k, sy / k);
        let slope = points
            .iter()
            .map(|&(x, y)| (x - mx) * (y - my))
            .sum::<f64>()
            / points
                .iter()
                .map(|&(x, _)| (x - mx) * (x - mx))
                .sum::<f64>();
        let mut z: f64 = 2.0 / rho; // Newton on f(z) = exp(rho (z - 1)) - z from the right of z*
        for _ in 0..100 {
            let f = (rho * (z - 1.0)).exp() - z;
            let df = rho * (rho * (z - 1.0)).exp() - 1.0;
            z -= f / df;
        }
        let decay = -z.ln();
        assert!(
            (slope / decay - 1.0).abs() < 0.1,
            "rho {rho}: tail slope {slope} per cell, M/D/1 {decay} (z* = {z})"
        );
    }
}

/// §5.4 and Fig. 10c: an incast of N senders × 450 KB to one 10G host waits at the ingress
/// adapters, loses nothing, and drains evenly: every sender (each on its own adapter, as
/// credits are fair between adapters' VOQs) finishes close to the last, which finishes close
/// to the ideal N × 450 KB at 10G.
#[test]
fn an_incast_is_absorbed_at_the_ingress_and_drains_evenly() {
    let n = 7;
    let report = incast_of_seven(4_000_000);
    assert_eq!(u(&report, "flows_completed"), n);
    assert_eq!(u(&report, "cells_dropped"), 0);
    assert_eq!(u(&report, "packets_dropped_ingress"), 0);
    let fct = &report.summary["fct_us"];
    let (first, last) = (
        fct["first"].as_f64().unwrap(),
        fct["last"].as_f64().unwrap(),
    );
    let ideal_us = n as f64 * 450_000.0 * 8.0 / 10e9 * 1e6;
    assert!(
        last > ideal_us && last < 1.05 * ideal_us,
        "last {last} us, ideal {ideal_us} us"
    );
    assert!(
        first > 0.9 * last,
        "first {first} us, last {last} us: not even"
    );
}

/// §5.4 with the paper's shallow egress buffering (the default egress stop): 40 random senders
/// of the 432-host fat-tree each send 50 packets of 9000 bytes on 4 KB credits to one host. The
/// deficit-aware scheduler keeps the port busy to within about 1% of N x 0.36 ms; one credit a
/// turn leaves VOQs that started together in step, releasing nothing in every other round, and
/// finishes over 20% late.
#[test]
fn a_shallow_egress_incast_finishes_near_the_ideal_with_deficit_turns() {
    let last_us = |scheduler: &str| {
        let report = run(&format!(
            r#"{{"design": "stardust", "run": {{"seed": 1, "duration_ns": 20000000, "warmup_ns": 0}},
                "topology": {{"kind": "fat_tree", "k": 12}},
                "link": {{"rate_gbps": 10, "propagation_ns": 1000}},
                "cell": {{"size_bytes": 512, "header_bytes": 16}},
                "credit": {{"size_bytes": 4096, "speedup": 0.03, "scheduler": "{scheduler}"}},
                "adapter": {{"voq_packets": 1000}},
                "traffic": {{"pattern": "incast", "incast_host": 0, "senders": 40,
                            "flow_bytes": 450000, "packet_bytes": 9000, "load": 1.0}}}}"#
        ));
        assert_eq!(u(&report, "flows_completed"), 40);
        assert_eq!(u(&report, "packets_dropped_egress"), 0);
        report.summary["fct_us"]["last"].as_f64().unwrap()
    };
    let ideal_us = 40.0 * 360.0;
    let deficit_us = last_us("deficit");
    assert!(
        deficit_us < 1.015 * ideal_us,
        "deficit turns: last {deficit_us} us, ideal {ideal_us} us"
    );
    let round_robin_us = last_us("round_robin");
    assert!(
        round_robin_us > 1.2 * ideal_us,
        "one credit a turn: last {round_robin_us} us"
    );
}

/// Seven hosts each send 450 KB at line rate (10G) to host 0 of a k = 4 fat-tree, for
/// `duration_ns` with no warm-up.
fn incast_of_seven(duration_ns: u64) -> Report {
    let flows: Vec<String> = (1..=7)
        .map(|a| format!(r#"{{"src": {}, "dst": 0, "load": 1.0}}"#, 2 * a))
        .collect();
    run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 7, "duration_ns": {duration_ns}, "warmup_ns": 0}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "traffic": {{"pattern": "flows", "flows": [{}], "flow_bytes": 450000}}}}"#,
        flows.join(", ")
    ))
}

/// The mean of a percentile set in the summary.
fn mean_of(report: &Report, key: &str) -> f64 {
    report.summary[key]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{key}"))
}

/// Latency over every packet: the incast cut at 1.5 ms, before host 0 has taken half of the
/// 3.15 MB, strands packets created in the first 360 µs at the ingress. The percentiles with
/// them count each at its age, so (the means being exact sums) the stranded packets' mean age
/// recovered from the two means must lie between 1.5 ms less the sending time and 1.5 ms;
/// a report that left them out, or aged them from anything but their creation, fails.
#[test]
fn stranded_packets_count_at_their_ages_in_the_latency_over_every_packet() {
    let end_us = 1_500.0;
    let report = incast_of_seven(1_500_000);
    let (created, delivered, held) = (
        u(&report, "packets_created"),
        u(&report, "packets_delivered"),
        u(&report, "packets_in_flight"),
    );
    assert_eq!(created, delivered + held, "nothing dropped");
    assert!(held * 3 > created, "{held} of {created} packets stranded");
    let sum_with_us = mean_of(&report, "packet_latency_with_in_flight_us") * created as f64;
    let sum_delivered_us = mean_of(&report, "packet_latency_us") * delivered as f64;
    let mean_age_us = (sum_with_us - sum_delivered_us) / held as f64;
    let sending_us = 450_000.0 * 8.0 / 10e9 * 1e6 * 1.1;
    assert!(
        mean_age_us > end_us - sending_us && mean_age_us <= end_us,
        "stranded packets' mean age {mean_age_us} us"
    );
    let tail = |key: &str| report.summary[key]["p99"].as_f64().unwrap();
    assert!(tail("packet_latency_with_in_flight_us") > end_us - sending_us);
    assert!(tail("packet_latency_us") < end_us);
    // The cells on their way count the same way (the pull fabric holds few: a handful of
    // credits' worth, each at most the run's length old).
    let cells_with = mean_of(&report, "fabric_latency_with_in_flight_ns");
    assert!(cells_with > 0.0 && cells_with < end_us * 1e3);
}

/// Fig. 10b's pattern: timed flows of Facebook web-server sizes under background load all
/// complete, none faster than its own serialization at line rate, and none lost in the fabric.
#[test]
fn timed_flows_complete_no_faster_than_the_line_allows() {
    let sizes = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/homasim_fb_webserver.txt"
    );
    let report = run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 3, "duration_ns": 10000000, "warmup_ns": 1000000}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "traffic": {{"pattern": "fct", "fct_src": 0, "fct_dst": 15, "fct_load": 0.5,
                         "flow_sizes": "{sizes}", "background_flows": 4, "load": 1.0}}}}"#
    ));
    assert_eq!(u(&report, "cells_dropped"), 0);
    let table = &report.tables["timed_flows"];
    let sizes = table["size_bytes"].as_array().unwrap();
    let starts = table["start_us"].as_array().unwrap();
    let fcts = table["fct_us"].as_array().unwrap();
    assert!(sizes.len() > 20, "{} timed flows", sizes.len());
    // Every timed flow in the completion times with the unfinished: each unfinished one at
    // its age at the end (10 ms); the exact means must agree with the table's.
    let end_us = 10_000.0;
    let sum_us: f64 = starts
        .iter()
        .zip(fcts)
        .map(|(start, fct)| fct.as_f64().unwrap_or(end_us - start.as_f64().unwrap()))
        .sum();
    let mean_with = mean_of(&report, "timed_fct_with_unfinished_us");
    assert!(
        (mean_with - sum_us / sizes.len() as f64).abs() < 1e-3,
        "mean {mean_with} us against the table's"
    );
    for ((size, start), fct) in sizes.iter().zip(starts).zip(fcts) {
        let size = size.as_u64().unwrap() as f64;
        match fct.as_f64() {
            Some(fct) => assert!(fct >= size * 8.0 / 10e3, "{size} B in {fct} us"),
            None => assert!(
                start.as_f64().unwrap() > 8_000.0,
                "a flow of {size} B never finished"
            ),
        }
    }
}

/// Traffic classes at a port's credit scheduler (§4.1): strict priority gives the high class
/// all it asks for; weights 3 : 1 split the port three to one.
#[test]
fn classes_share_a_port_by_priority_or_by_weight() {
    let shares = |weights: &str| {
        let report = run(&fat_tree(
            8,
            &format!(
                r#", "stardust": {{"credits": true {weights}}},
                   "traffic": {{"pattern": "flows", "flows": [
                       {{"src": 2, "dst": 0, "load": 1.0, "class": 0}},
                       {{"src": 4, "dst": 0, "load": 1.0, "class": 1}}]}}"#
            ),
        ));
        let goodput: Vec<f64> = report.tables["flows"]["goodput_gbps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_f64().unwrap())
            .collect();
        let total: f64 = goodput.iter().sum();
        assert!(total > 9.8, "the port is busy: {total} G");
        goodput[0] / total
    };
    // The high class offers the port's line rate, credits run 3% faster: the low class gets
    // what the high one leaves, a few percent.
    let strict = shares("");
    assert!(strict > 0.95, "strict priority: class 0 has {strict}");
    // Weights share the scheduler's turns; with deficit-aware turns (several credits a turn) the
    // shares of credits drift from the weights, so the weights are checked one credit a turn.
    let weighted = shares(r#", "class_weights": [3, 1]}, "credit": {"scheduler": "round_robin""#);
    assert!(
        (weighted - 0.75).abs() < 0.02,
        "weights 3:1: class 0 has {weighted}"
    );
}

/// Fig. 9's two-tier fabric at a sixteenth of the radix (8 adapters of 4 uplinks of 25G, 500 ns
/// links), all-to-all with 1500-byte packets from host ports of `host_rate_gbps`, with `extra`
/// JSON members.
fn two_tier(host_rate_gbps: f64, extra: &str) -> String {
    format!(
        r#"{{"design": "stardust", "run": {{"seed": 2, "duration_ns": 300000, "warmup_ns": 100000}},
            "topology": {{"kind": "clos", "tiers": 2, "radix": 8, "hosts_per_edge": 1,
                         "uplinks_per_edge": 4, "edges": 8}},
            "link": {{"rate_gbps": 25, "propagation_ns": 500, "host_rate_gbps": {host_rate_gbps}}},
            "credit": {{"speedup": 0.02}},
            "traffic": {{"pattern": "all_to_all", "packet_bytes": 1500, "load": 1.0}} {extra}}}"#
    )
}

/// Fig. 9's two-tier fabric at a sixteenth of the radix, all-to-all at 90% utilization: nothing
/// lost, and the fabric latency stays within a few microseconds of its floor.
#[test]
fn a_two_tier_fabric_carries_all_to_all_without_loss() {
    let report = run(&two_tier(84.375, ""));
    assert_eq!(u(&report, "cells_dropped"), 0);
    let goodput = report.summary["goodput"].as_f64().unwrap();
    assert!(goodput > 0.97, "goodput {goodput}");
    let p99_ns = report.summary["fabric_latency_ns"]["p99"].as_f64().unwrap();
    // Two 500 ns links each way and four 82 ns cell times are the floor: 2.3 us.
    assert!(
        (2_300.0..6_000.0).contains(&p99_ns),
        "fabric latency p99 {p99_ns} ns"
    );
}

/// Stardust §4.1 and §5.3: the adapter sprays its cells over all its uplinks so as to balance
/// the load. Offered more than the fabric carries (host ports at 120% of the uplinks' payload),
/// credits wait at every source, and no uplink of any adapter is ever idle while they do;
/// the sources then fill their uplinks, so the host ports get nearly all of the fabric side's
/// payload (the uplinks less headers and control cells).
#[test]
fn an_adapter_never_idles_an_uplink_while_credited_cells_wait() {
    let report = run(&two_tier(112.5, r#", "adapter": {"fci_decrease": 0}"#));
    assert!(u(&report, "credit_backlog_peak") > 10, "credits wait");
    let idle = report.summary["uplink_idle_with_credits"].as_f64().unwrap();
    assert_eq!(idle, 0.0, "uplink time idle with credits waiting");
    let goodput = report.summary["goodput"].as_f64().unwrap();
    // 93.75 G of payload (4 x 25G less 16-byte headers), about 2% of it control: 0.78 of 112.5 G.
    assert!(goodput > 0.78, "goodput {goodput} of 112.5 G");
}

/// An element's own latency (§6.2: 0.5-4 µs a device) adds to every cell's fabric latency once
/// per element it crosses: one in this single-stage Clos (adapter, element, adapter), so with
/// 2 µs elements the fastest cells (p1) are 2 µs slower than without (within the histogram's
/// buckets); nothing is lost either way.
#[test]
fn an_elements_latency_adds_once_per_element_crossed() {
    let latency = |element: &str| {
        let report = run(&format!(
            r#"{{"design": "stardust", "run": {{"seed": 2, "duration_ns": 200000, "warmup_ns": 50000}},
                "topology": {{"kind": "clos", "tiers": 2, "radix": 8, "hosts_per_edge": 1,
                             "uplinks_per_edge": 4, "edges": 8}},
                "link": {{"rate_gbps": 25, "propagation_ns": 500, "host_rate_gbps": 50}},
                "traffic": {{"pattern": "all_to_all", "packet_bytes": 1500, "load": 0.5}}{element}}}"#
        ));
        assert_eq!(u(&report, "cells_dropped"), 0);
        let spread = &report.summary["fabric_latency_ns"];
        (
            spread["p1"].as_f64().unwrap(),
            spread["mean"].as_f64().unwrap(),
        )
    };
    let (p1_ns, mean_ns) = latency("");
    let (slow_p1_ns, slow_mean_ns) = latency(r#", "element": {"latency_ns": 2000}"#);
    assert!(
        (slow_p1_ns - p1_ns - 2000.0).abs() < 200.0,
        "p1 {p1_ns} -> {slow_p1_ns} ns"
    );
    // The mean grows by more: requests and credits cross an element too, so the credit loop's
    // round trip is 4 µs longer, and cells that waited for a credit wait up to that much more.
    assert!(
        (2000.0..=6200.0).contains(&(slow_mean_ns - mean_ns)),
        "mean {mean_ns} -> {slow_mean_ns} ns"
    );
}

/// The fabric of `scenarios/stardust/self-heal.topo` (4 planes; plane 0 reaches adapter 0
/// only over the cable on switch 0's port 2) with reachability messages every microsecond,
/// 7 slices of 4 adapters and th = 3, run for `duration_ns` with `failures`.
fn self_heal(duration_ns: u64, failures: &str) -> Report {
    self_heal_marking(duration_ns, failures, 3)
}

/// [`self_heal`] with links marking themselves faulty at `faulty_errors` errors an interval.
fn self_heal_marking(duration_ns: u64, failures: &str, faulty_errors: u32) -> Report {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/stardust/self-heal.topo"
    );
    run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 3, "duration_ns": {duration_ns}, "warmup_ns": 10000}},
            "topology": {{"kind": "file", "file": "{topo}"}},
            "link": {{"rate_gbps": 50, "propagation_ns": 50}},
            "adapter": {{"reassembly_timeout_ns": 20000}},
            "traffic": {{"packet_bytes": 1500, "load": 0.8, "arrival": "poisson"}},
            "reachability": {{"mode": "messages", "interval_ns": 1000, "slice_adapters": 4,
                "threshold": 3, "request_refresh_ns": 50000, "faulty_errors": {faulty_errors}}},
            "failures": [{failures}]}}"#
    ))
}

/// §5.9 / App. E: a cut adapter-element cable is reported over 2n - 1 = 3 hops, each taking
/// th consecutive agreeing messages of the slice that changed, one every M intervals: every
/// source has stopped using it after between 3 (th - 1) M t' and 3 th M t' plus the hops'
/// propagation, and from then on nothing more is lost; congestion loses nothing throughout.
#[test]
fn a_cut_cable_is_routed_around_within_app_e_bound_and_losses_stop() {
    let cut = r#"{"at_ns": 50000, "switch": 0, "port": 2}"#;
    let report = self_heal(200_000, cut);
    let (t, m, th) = (1.0, 7.0, 3.0);
    let reroute = f(&report, "reroute_us");
    assert!(
        reroute >= 3.0 * (th - 1.0) * m * t && reroute <= 3.0 * th * m * t + 1.5,
        "rerouted after {reroute} us"
    );
    let settled = f(&report, "tables_settled_us");
    let delivered = f(&report, "rerouted_delivery_us");
    assert!(
        settled >= reroute,
        "elements settle no earlier than adapters"
    );
    // The last source to learn sends on its new routes at once (it is busy), and its cell
    // crosses the fabric in about two microseconds.
    assert!(
        delivered > reroute && delivered < reroute + 5.0,
        "first cell on the new routes delivered {delivered} us after the cut"
    );
    assert_eq!(u(&report, "cells_dropped_congestion"), 0);
    let lost = u(&report, "cells_lost_no_route") + u(&report, "cells_lost_link_cut");
    assert!(
        lost > 0,
        "cells sprayed into the dead plane are lost until sources learn"
    );
    assert_eq!(
        u(&report, "cells_dropped"),
        lost + u(&report, "reachability_cells_lost")
    );
    // Stopping just after the sources settled loses as much as running on: nothing after.
    let settled_ns = 50_000 + (reroute * 1e3) as u64 + 2_000;
    let early = self_heal(settled_ns, cut);
    assert_eq!(
        u(&early, "cells_lost_no_route") + u(&early, "cells_lost_link_cut"),
        lost
    );
    assert_eq!(
        report.summary,
        self_heal(200_000, cut).summary,
        "deterministic"
    );
}

/// Credits sprayed into the dead plane toward adapter 0 are lost, and its VOQs asking by count
/// would wait for them forever: the scheduler counted them as given. `self-heal.toml`'s run
/// (App. E's 10 µs messages, sources rerouted about 610 µs after the cut at 300 µs) with a
/// 100 µs refresh: a VOQ that waited that long writes the credits off and asks anew, so every
/// flow, adapter 0's hosts' among them, carries at least 40% of its 40 Gbit/s over the 1.9 ms
/// measured (a flow stalled from the cut on would carry 10%, as it did before the write-off).
#[test]
fn voqs_whose_credits_were_lost_ask_anew_and_every_flow_recovers() {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/stardust/self-heal.topo"
    );
    let report = run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 1, "duration_ns": 2000000, "warmup_ns": 100000}},
            "topology": {{"kind": "file", "file": "{topo}"}},
            "link": {{"rate_gbps": 50, "propagation_ns": 50}},
            "cell": {{"size_bytes": 256, "header_bytes": 16}},
            "traffic": {{"pattern": "permutation", "packet_bytes": 1500, "load": 0.8, "arrival": "poisson"}},
            "reachability": {{"mode": "messages", "interval_ns": 10000, "slice_adapters": 4,
                "threshold": 3, "request_refresh_ns": 100000}},
            "failures": [{{"at_ns": 300000, "switch": 0, "port": 2}}]}}"#
    ));
    assert!(u(&report, "credits_written_off") > 0);
    let flows = &report.tables["flows"];
    for (at, goodput) in flows["goodput_gbps"].as_array().unwrap().iter().enumerate() {
        let goodput = goodput.as_f64().unwrap();
        assert!(
            goodput > 0.4 * 40.0,
            "flow {} -> {} at {goodput} Gbit/s",
            flows["src"][at],
            flows["dst"][at]
        );
    }
}

/// A repaired cable comes back up after th messages, and its adapter's slice reaches every
/// source four hops later; a failed second-tier element is noticed by its neighbours after th
/// silent intervals, and since the other element of its plane still reaches every adapter,
/// no adapter's table changes.
#[test]
fn a_repaired_cable_returns_and_a_failed_element_is_bypassed() {
    let report = self_heal(
        300_000,
        r#"{"at_ns": 50000, "switch": 0, "port": 2, "restore_ns": 150000}"#,
    );
    let events = &report.tables["failures"];
    let back = events["adapters_settled_us"][1].as_f64().expect("settled");
    assert!(back <= 3.0 + 4.0 * 3.0 * 7.0 + 2.0, "back after {back} us");
    assert_eq!(u(&report, "cells_dropped_congestion"), 0);

    let report = self_heal(150_000, r#"{"at_ns": 50000, "switch": 56}"#);
    let events = &report.tables["failures"];
    assert!(events["adapters_settled_us"][0].is_null(), "{events}");
    let noticed = events["all_settled_us"][0]
        .as_f64()
        .expect("neighbours notice");
    assert!((2.0..=4.5).contains(&noticed), "noticed after {noticed} us");
    assert!(u(&report, "cells_lost_device_failed") > 0);
    assert_eq!(u(&report, "cells_dropped_congestion"), 0);
    let early = self_heal(60_000, r#"{"at_ns": 50000, "switch": 56}"#);
    assert_eq!(
        u(&early, "cells_lost_device_failed"),
        u(&report, "cells_lost_device_failed"),
        "nothing is sent to it once it is noticed"
    );
}

/// §5.10: an adapter that fails stops sending reachability messages; its elements notice after
/// th silent intervals and the news reaches every other adapter within the three hops a cut's
/// does. What it held (uplink queues, VOQs, reassembly, host ports) is lost and counted; the
/// other adapters empty their VOQs toward it (dropped, counted) and owe it no more credits;
/// once every table has settled nothing more is lost. Both accounts settle throughout.
#[test]
fn a_failed_adapter_is_given_up_by_the_fabric_and_by_every_source() {
    let fail = r#"{"at_ns": 50000, "switch": 0}"#;
    let report = self_heal(200_000, fail);
    let settled = f(&report, "tables_settled_us");
    let delivered = f(&report, "rerouted_delivery_us");
    assert!(delivered > f(&report, "reroute_us") && delivered < settled + 5.0);
    let (t, m, th) = (1.0, 7.0, 3.0);
    assert!(
        settled <= th * t + 3.0 * th * m * t + 2.0,
        "tables settled {settled} us after the failure"
    );
    assert!(u(&report, "cells_lost_device_failed") > 0);
    assert!(u(&report, "packets_lost_adapter_failed") > 0);
    assert!(u(&report, "packets_dropped_unreachable") > 0);
    assert_eq!(u(&report, "cells_dropped_congestion"), 0);
    let lost = |r: &Report| {
        u(r, "cells_lost_device_failed") + u(r, "cells_lost_no_route") + u(r, "cells_lost_link_cut")
    };
    let early = self_heal(50_000 + (settled * 1e3) as u64 + 2_000, fail);
    assert_eq!(lost(&early), lost(&report), "nothing is lost once settled");
    let flows = &report.tables["flows"];
    for (at, goodput) in flows["goodput_gbps"].as_array().unwrap().iter().enumerate() {
        let (src, dst) = (
            flows["src"][at].as_u64().unwrap(),
            flows["dst"][at].as_u64().unwrap(),
        );
        if src >= 2 && dst >= 2 {
            assert!(
                goodput.as_f64().unwrap() > 0.7 * 40.0,
                "flow {src} -> {dst} untouched by the failure"
            );
        }
    }
}

/// §5.10: a cable that corrupts 5% of its cells (both ways) from 50 µs to 150 µs. Each end
/// discards what arrives errored and, at 3 errors in one 1 µs interval, marks the link faulty
/// on its reachability cells: both ends stop forwarding onto it, the sources learn to avoid the
/// plane as after a cut, and once the errors stop 100 good reachability cells in a row (100
/// µs) declare it valid again and every source gets it back. Left unmarked (a threshold never
/// reached) the same errors keep discarding data cells until the repair: many more lost.
#[test]
fn a_link_with_errors_marks_itself_faulty_and_is_revalidated_once_clean() {
    let errors = r#"{"at_ns": 50000, "switch": 0, "port": 2, "cell_error_rate": 0.05, "restore_ns": 150000}"#;
    let report = self_heal(300_000, errors);
    assert!(u(&report, "links_marked_faulty") >= 1);
    let errored = u(&report, "cells_lost_errored");
    assert!(errored > 0);
    assert_eq!(
        u(&report, "cells_lost_link_cut"),
        0,
        "the cable keeps its signal"
    );
    assert_eq!(u(&report, "cells_dropped_congestion"), 0);
    assert_eq!(
        u(&report, "cells_dropped"),
        errored + u(&report, "cells_lost_no_route") + u(&report, "reachability_cells_lost")
    );
    let events = &report.tables["failures"];
    // A cut's App. E bound, 42-64.5 µs, plus the time for 3 errors to fall in one interval
    // (about 1 error per µs here): at most 10 intervals.
    let avoided = events["adapters_settled_us"][0].as_f64().expect("rerouted");
    assert!(
        (42.0..=3.0 * 3.0 * 7.0 + 1.5 + 10.0).contains(&avoided),
        "sources avoid it after {avoided} us"
    );
    let back = events["adapters_settled_us"][1]
        .as_f64()
        .expect("revalidated");
    assert!(
        (100.0..=100.0 + 4.0 * 3.0 * 7.0 + 2.0).contains(&back),
        "back after {back} us"
    );

    let unmarked = self_heal_marking(300_000, errors, 1_000_000);
    assert_eq!(u(&unmarked, "links_marked_faulty"), 0);
    let unmarked_errored = u(&unmarked, "cells_lost_errored");
    // Marked: the errors until each end has seen 3 in an interval, then 5% of the 200
    // reachability cells crossing while it is faulty (about 10). Unmarked: 5% of every cell
    // crossing for 100 µs.
    assert!(
        unmarked_errored > 3 * errored,
        "marked: {errored} errored cells; unmarked: {unmarked_errored}"
    );
    assert_eq!(
        report.summary,
        self_heal(300_000, errors).summary,
        "deterministic"
    );
}

/// Keys the chosen pattern, mode, reachability or FCI reaction ignore are refused by name (the
/// strict-key checks), and the same keys pass where they are read.
#[test]
fn keys_the_chosen_mechanisms_ignore_are_refused() {
    let refused = [
        (r#""traffic": {"incast_host": 3}"#, "traffic.incast_host"),
        (r#""traffic": {"fct_load": 0.1}"#, "traffic.fct_load"),
        (
            r#""reachability": {"threshold": 5}"#,
            "reachability.threshold",
        ),
        (
            r#""adapter": {"fci_decrease": 0, "fci_increase": 0.1}"#,
            "adapter.fci_increase",
        ),
        (
            r#""stardust": {"credits": false}, "element": {"pause_cells": 8}"#,
            "element.pause_cells",
        ),
        (
            r#""host": {"transport": "tcp"}, "adapter": {"pause_xoff_packets": 16}"#,
            "adapter.pause_xoff_packets",
        ),
        (
            r#""host": {"transport": "ndp", "initial_ssthresh_packets": 15}, "adapter": {"pause_hosts": true}"#,
            "host.initial_ssthresh_packets",
        ),
        (
            r#""host": {"transport": "dcqcn", "ndp": {"pull_rate": 0.5}}, "adapter": {"pause_hosts": true}"#,
            "host.ndp.pull_rate",
        ),
    ];
    for (extra, key) in refused {
        let json = fat_tree(1, &format!(", {extra}"));
        let error = cellfabric_core::build(&json)
            .err()
            .unwrap_or_else(|| panic!("{extra} was accepted"));
        assert_eq!(error.key, key, "{error}");
        assert!(error.message.contains("not used with"), "{error}");
    }
    let used = fat_tree(
        1,
        r#", "traffic": {"pattern": "incast", "incast_host": 3}, "adapter": {"fci_decrease": 0.125, "fci_increase": 0.1}"#,
    );
    assert!(cellfabric_core::build(&used).is_ok());
}

/// TCP hosts over the fabric with `run.sample_ns`: each flow's goodput per 100 µs interval;
/// the intervals after the warm-up average to the `flows` table's goodput (within one
/// 9000-byte segment over the window), and without `run.sample_ns` there is no series.
#[test]
fn transport_hosts_report_each_flows_goodput_per_interval() {
    let json = r#"{"design": "stardust", "run": {"seed": 2, "duration_ns": 1000000, "warmup_ns": 500000, "sample_ns": 100000},
        "topology": {"kind": "fat_tree", "k": 4}, "host": {"transport": "tcp", "initial_ssthresh_packets": 15}}"#;
    let report = run(json);
    let column = |name: &str| columns::column(&report, "flow_series", name);
    let (time_ns, flow, gbps) = (column("time_ns"), column("flow"), column("goodput_gbps"));
    let flows = report.tables["flows"]["goodput_gbps"].as_array().unwrap();
    assert_eq!(flows.len(), 16);
    assert_eq!(time_ns.len(), 10 * 16, "10 intervals × 16 flows");
    let one_segment_gbps = 9000.0 * 8.0 / 500e3;
    for (k, expected) in flows.iter().enumerate() {
        let late: Vec<f64> = (0..time_ns.len())
            .filter(|&i| flow[i] == k as f64 && time_ns[i] > 500e3)
            .map(|i| gbps[i])
            .collect();
        assert_eq!(late.len(), 5);
        let mean = late.iter().sum::<f64>() / 5.0;
        let expected = expected.as_f64().unwrap();
        assert!(
            (mean - expected).abs() <= one_segment_gbps,
            "flow {k}: {mean} vs {expected}"
        );
    }
    let unsampled = run(&json.replace(r#", "sample_ns": 100000"#, ""));
    assert!(unsampled.tables.get("flow_series").is_none());
}

/// A fabric where a cut leaves a destination reachable only over a longer path: adapter 1's
/// one uplink goes to element 2, which also reaches adapter 0; adapter 0 has a second uplink to
/// element 3; both elements go up to element 4. Cutting element 2's cable to adapter 0 leaves
/// adapter 1 only 1 → 2 → 4 → 3 → 0 (up, then down twice: an up/down path).
fn longer_path_fabric(routes: &str) -> Report {
    let topo = std::env::temp_dir().join(format!("stardust-longer-{routes}.topo"));
    std::fs::write(
        &topo,
        "switch a0 ports=3\nswitch a1 ports=2\nswitch e0 ports=3\nswitch e1 ports=2\n\
         switch s ports=2\nhost h0\nhost h1\ncable h0 a0:0\ncable h1 a1:0\n\
         cable a0:1 e0:0\ncable a0:2 e1:0\ncable a1:1 e0:1\ncable e0:2 s:0\ncable e1:1 s:1\n",
    )
    .unwrap();
    run(&format!(
        r#"{{"design": "stardust", "run": {{"seed": 1, "duration_ns": 200000, "warmup_ns": 60000}},
            "topology": {{"kind": "file", "file": "{}"}},
            "link": {{"rate_gbps": 50, "propagation_ns": 50}},
            "adapter": {{"reassembly_timeout_ns": 20000}},
            "traffic": {{"pattern": "flows", "packet_bytes": 1500, "arrival": "poisson",
                "flows": [{{"src": 1, "dst": 0, "load": 0.5}}, {{"src": 0, "dst": 1, "load": 0.5}}]}},
            "reachability": {{"mode": "messages", "interval_ns": 1000, "slice_adapters": 4,
                "threshold": 3, "request_refresh_ns": 20000, "routes": "{routes}"}},
            "failures": [{{"at_ns": 20000, "switch": 2, "port": 0}}]}}"#,
        topo.display()
    ))
}

/// §5.9-5.10 with `reachability.routes = "non_minimal"`: the element that lost its cable to
/// adapter 0 sends adapter 1's cells up and the spine brings them down through the other
/// element, so the flow keeps its rate; congestion loses nothing (the longer path is up, then
/// down: no cycle of channels). Minimal only, adapter 1 can no longer reach adapter 0 at all:
/// it gives up its VOQ toward it and the flow stops (and so does the other way: adapter 0's
/// one minimal uplink toward adapter 1 was the cut cable).
#[test]
fn a_destination_left_only_a_longer_path_is_reached_over_it_when_allowed() {
    let longer = longer_path_fabric("non_minimal");
    assert_eq!(u(&longer, "cells_dropped_congestion"), 0);
    let offered = 0.5 * 50.0;
    for host in [0, 1] {
        let gbps = goodput_of(&longer, host);
        assert!(
            gbps > 0.9 * offered,
            "{gbps} Gbit/s to host {host} over the longer path"
        );
    }
    assert_eq!(u(&longer, "packets_dropped_unreachable"), 0);
    let minimal = longer_path_fabric("minimal_only");
    assert!(
        goodput_of(&minimal, 0) < 0.01,
        "no path without the longer one"
    );
    assert!(u(&minimal, "packets_dropped_unreachable") > 0);
    assert!(
        goodput_of(&minimal, 1) < 0.01,
        "adapter 0 reaches adapter 1 minimally only through the cut cable too"
    );
}
