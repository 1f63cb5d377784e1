//! The Ethernet baseline: TCP NewReno and DCTCP over drop-tail, ECN-marking switches. Long
//! flows share a bottleneck fairly and fill it; DCTCP keeps the queue near K where NewReno
//! fills it and drops; the permutation runs on a fat-tree with every packet accounted for;
//! same seed, same summary; bad input names its key.

mod columns;

use columns::{f, run};

use cellfabric_core::Report;

fn u(report: &Report, key: &str) -> u64 {
    report.summary[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}"))
}

/// `senders` unending flows into host 0 of a k = 4 fat-tree (16 hosts): one bottleneck, the
/// receiver's link.
fn incast(transport: &str, senders: u32, duration_ns: u64, extra: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": 3, "duration_ns": {duration_ns}, "warmup_ns": {warmup}}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "host": {{"transport": "{transport}", "packet_bytes": 1500}},
            "traffic": {{"pattern": "incast", "incast_host": 0, "senders": {senders}}} {extra}}}"#,
        warmup = duration_ns / 2
    )
}

#[test]
fn long_flows_fill_a_shared_bottleneck() {
    for transport in ["tcp", "dctcp"] {
        let report = run(&incast(transport, 4, 20_000_000, ""));
        let goodput = f(&report, "goodput") * 4.0;
        println!("{transport}: {}", report.summary);
        assert!(goodput > 0.9, "{transport}: bottleneck {goodput}");
    }
}

/// A permutation on a k = 4 fat-tree with `extra` JSON members.
fn permutation(seed: u64, transport: &str, extra: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 4000000, "warmup_ns": 2000000}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "host": {{"transport": "{transport}", "initial_ssthresh_packets": 15}} {extra}}}"#
    )
}

#[test]
fn the_same_seed_gives_the_same_summary_and_another_seed_another() {
    let json = permutation(5, "dctcp", "");
    let (a, b) = (run(&json), run(&json));
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.tables, b.tables);
    let other = run(&permutation(6, "dctcp", ""));
    assert_ne!(a.tables["flows"]["dst"], other.tables["flows"]["dst"]);
}

/// DCTCP holds the bottleneck queue near K without loss where NewReno fills it and drops.
#[test]
fn dctcp_keeps_the_queue_near_k_and_newreno_fills_it() {
    let dctcp = run(&incast("dctcp", 8, 20_000_000, ""));
    let tcp = run(&incast("tcp", 8, 20_000_000, ""));
    assert_eq!(u(&dctcp, "packets_dropped"), 0);
    assert!(u(&dctcp, "packets_marked") > 0 && u(&dctcp, "ecn_cuts") > 0);
    let queue = &dctcp.summary["bottleneck_queue_packets"];
    let (mean, max) = (
        queue["mean"].as_f64().unwrap(),
        queue["max"].as_u64().unwrap(),
    );
    // K = 15 and N = 8: the DCTCP paper's Q_max = K + N = 23 (§3.3).
    assert!(
        (10.0..=23.0).contains(&mean) && max <= 30,
        "DCTCP queue {queue}"
    );
    assert_eq!(
        u(&tcp, "queue_peak_packets"),
        100,
        "NewReno fills the queue"
    );
    assert!(u(&tcp, "packets_dropped") > 0 && u(&tcp, "packets_marked") == 0);
    assert!(f(&dctcp, "flow_fairness") > 0.95, "{}", dctcp.summary);
}

/// Finite flows of an incast all complete; the last no sooner than the bytes take at line rate.
#[test]
fn an_incast_of_finite_flows_completes() {
    let report = run(
        r#"{"design": "ethernet", "run": {"seed": 3, "duration_ns": 20000000, "warmup_ns": 0},
            "topology": {"kind": "fat_tree", "k": 4}, "host": {"transport": "dctcp"},
            "traffic": {"pattern": "incast", "senders": 15, "flow_bytes": 450000}}"#,
    );
    assert_eq!(u(&report, "flows_completed"), 15);
    let last_us = report.summary["fct_us"]["last"].as_f64().unwrap();
    let line_rate_us = 15.0 * 450_000.0 * 8.0 / 10e9 * 1e6;
    assert!(
        last_us > line_rate_us && last_us < 1.3 * line_rate_us,
        "{last_us} vs {line_rate_us}"
    );
}

/// Per-flow ECMP collides flows on a fat-tree; per-packet spraying spreads them.
#[test]
fn spraying_beats_ecmp_collisions_on_a_permutation() {
    let ecmp = run(&permutation(1, "dctcp", ""));
    let spray = run(&permutation(
        1,
        "dctcp",
        r#", "routing": {"mode": "spray"}"#,
    ));
    let (e, s) = (f(&ecmp, "goodput"), f(&spray, "goodput"));
    assert!(s > e, "spray {s} vs ecmp {e}");
    assert!(
        u(&ecmp, "packets_created")
            == u(&ecmp, "packets_delivered")
                + u(&ecmp, "packets_dropped")
                + u(&ecmp, "packets_in_flight")
    );
}

#[test]
fn bad_input_names_its_key() {
    let cases = [
        (
            r#""switch": {"ecn_threshold_packets": 100}, "host": {"transport": "dctcp"}"#,
            "switch.ecn_threshold_packets",
        ),
        (r#""switch": {"queue_packets": 0}"#, "switch.queue_packets"),
        (r#""host": {"transport": "ndp"}"#, "host.transport"),
        (r#""host": {"min_rto_ns": 0}"#, "host.min_rto_ns"),
        (r#""host": {"packet_bytes": 70000}"#, "host.packet_bytes"),
        (
            r#""traffic": {"pattern": "incast", "incast_host": 99}"#,
            "traffic.incast_host",
        ),
        (
            r#""traffic": {"pattern": "incast", "senders": 16}"#,
            "traffic.senders",
        ),
        (r#""routing": {"mode": "valiant"}"#, "routing.mode"),
        (r#""switch": {"queue_bytes": 100}"#, "switch.queue_bytes"),
        (
            r#""switch": {"return_to_sender": true}"#,
            "switch.return_to_sender",
        ),
        (
            r#""switch": {"return_to_sender": 1}"#,
            "switch.return_to_sender",
        ),
        (
            r#""switch": {"port_kind": "trimming"}, "host": {"transport": "ndp", "ndp": {"paths": 8}}, "routing": {"mode": "spray"}"#,
            "host.ndp.paths",
        ),
        (
            r#""switch": {"port_kind": "trimming"}, "host": {"transport": "ndp", "ndp": {"paths": 1025}}, "routing": {"mode": "ecmp"}"#,
            "host.ndp.paths",
        ),
        (r#""host": {"ndp": {"paths": -1}}"#, "host.ndp.paths"),
        (r#""host": {"ndp": {"pulls": 1}}"#, "host.ndp.pulls"),
        (r#""host": {"dcqcn_g": 0.5}"#, "host.dcqcn_g"),
    ];
    for (members, key) in cases {
        let json = format!(r#"{{"design": "ethernet", {members}}}"#);
        let error = cellfabric_core::build(&json).err().expect("rejected");
        assert_eq!(error.key, key, "{members}: {error}");
    }
}

/// A transport's constants moved into its own table: the old flat key is refused with a
/// message naming the new one.
#[test]
fn a_transport_key_moved_into_its_table_names_its_new_key() {
    let json = r#"{"design": "ethernet", "host": {"transport": "dcqcn", "dcqcn_g": 0.5}}"#;
    let error = cellfabric_core::build(json).err().expect("rejected");
    assert_eq!(error.key, "host.dcqcn_g");
    assert!(error.message.contains("renamed to host.dcqcn.g"), "{error}");
}

#[test]
fn keys_the_transport_or_pattern_ignore_are_refused() {
    let cases = [
        (
            r#""switch": {"ecn_threshold_packets": 20}"#,
            "switch.ecn_threshold_packets",
        ),
        (r#""host": {"dctcp": {"g": 0.1}}"#, "host.dctcp.g"),
        (r#""host": {"delayed_ack_ns": 1000}"#, "host.delayed_ack_ns"),
        (r#""traffic": {"senders": 3}"#, "traffic.senders"),
        (
            r#""topology": {"kind": "fat_tree", "leaves": 3}"#,
            "topology.leaves",
        ),
        (
            r#""routing": {"mode": "ecmp", "spray_rounds": 2}"#,
            "routing.spray_rounds",
        ),
    ];
    for (members, key) in cases {
        let json = format!(r#"{{"design": "ethernet", {members}}}"#);
        let error = cellfabric_core::designs::build_with_overrides(&json, &[])
            .err()
            .expect("rejected");
        assert_eq!(error.key, key, "{members}: {error}");
    }
    let used = r#"{"design": "ethernet", "switch": {"ecn_threshold_packets": 20},
        "host": {"transport": "dctcp", "dctcp": {"g": 0.1}, "delayed_ack": true, "delayed_ack_ns": 1000}}"#;
    assert!(cellfabric_core::designs::build_with_overrides(used, &[]).is_ok());
}

/// One 9000-byte segment from a random host to host 0 of a leaf-spine fabric (4 leaves of 4
/// hosts, 10 Gbit/s between switches, hosts at `host_gbps`, 1 µs cables) arrives when the
/// hop-by-hop timing of its switching mode says, to the picosecond: store-and-forward takes
/// every link's whole frame time; cut-through sends a frame on once its 64-byte header is in,
/// unless the next link is faster, when it waits until sending cannot outrun its arrival.
#[test]
fn one_segment_takes_its_switching_modes_exact_time() {
    let frame_ps = |bytes: u64, gbps: u64| bytes * 8_000 / gbps;
    let mut paths_seen = std::collections::BTreeSet::new();
    for host_gbps in [10u64, 40] {
        for cut_through in [false, true] {
            for seed in 1..=4 {
                let report = run(&format!(
                    r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 1000000, "warmup_ns": 0}},
                    "topology": {{"kind": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 4}},
                    "link": {{"rate_gbps": 10, "host_rate_gbps": {host_gbps}, "propagation_ns": 1000}},
                    "switch": {{"cut_through": {cut_through}}}, "host": {{"transport": "tcp"}},
                    "traffic": {{"pattern": "incast", "incast_host": 0, "senders": 1, "flow_bytes": 9000}}}}"#
                ));
                let src = report.tables["flows"]["src"][0].as_u64().unwrap();
                // Host, leaf, (spine, leaf,) host: the rates of the links crossed.
                let rates: Vec<u64> = if src / 4 == 0 {
                    vec![host_gbps, host_gbps]
                } else {
                    vec![host_gbps, 10, 10, host_gbps]
                };
                paths_seen.insert(rates.len());
                let mut start_ps = 0;
                for (hop, &rate) in rates.iter().enumerate() {
                    let last_bit_ps = start_ps + frame_ps(9000, rate) + 1_000_000;
                    let Some(&next) = rates.get(hop + 1) else {
                        let fct_us = report.summary["fct_us"]["last"].as_f64().unwrap();
                        assert_eq!(
                            (fct_us * 1e6).round() as u64,
                            last_bit_ps,
                            "{host_gbps} G hosts, cut-through {cut_through}, from host {src}"
                        );
                        break;
                    };
                    start_ps = if cut_through {
                        let header_ps = start_ps + frame_ps(64, rate) + 1_000_000;
                        header_ps.max(last_bit_ps.saturating_sub(frame_ps(9000, next)))
                    } else {
                        last_bit_ps
                    };
                }
            }
        }
    }
    assert_eq!(paths_seen.len(), 2, "both a one-leaf and a two-leaf path");
}

/// With `run.sample_ns`, each flow's goodput per interval: four DCTCP flows into one host,
/// 1 ms intervals over 10 ms. Every interval's flows share the receiver's 10 Gbit/s link, at
/// most a packet more (DCTCP drops nothing here, so no recovered burst is delivered at once),
/// and each flow's
/// intervals after the warm-up average to its goodput in the `flows` table, which is counted
/// apart (within one packet).
#[test]
fn per_flow_goodput_series_adds_up_to_the_flows_table() {
    let json = incast("dctcp", 4, 10_000_000, "").replace(
        r#""warmup_ns": 5000000}"#,
        r#""warmup_ns": 5000000, "sample_ns": 1000000}"#,
    );
    let report = run(&json);
    assert_eq!(u(&report, "packets_dropped"), 0);
    let column = |name: &str| columns::column(&report, "flow_series", name);
    let (time_ns, flow, gbps) = (column("time_ns"), column("flow"), column("goodput_gbps"));
    assert_eq!(time_ns.len(), 40, "10 intervals × 4 flows");
    // Whole packets per interval: an interval may hold one more than 1 ms of the link.
    let one_packet_per_interval_gbps = 1500.0 * 8.0 / 1e6;
    for interval in gbps.chunks(4) {
        let sum: f64 = interval.iter().sum();
        assert!(sum <= 10.0 + one_packet_per_interval_gbps, "{interval:?}");
        assert!(sum > 9.0, "the bottleneck stays busy: {interval:?}");
    }
    let table = &report.tables["flows"]["goodput_gbps"];
    for k in 0..4 {
        let after_warmup: Vec<f64> = (0..40)
            .filter(|&i| flow[i] == k as f64 && time_ns[i] > 5e6)
            .map(|i| gbps[i])
            .collect();
        assert_eq!(after_warmup.len(), 5);
        let mean = after_warmup.iter().sum::<f64>() / 5.0;
        let expected = table[k].as_f64().unwrap();
        let one_packet_gbps = 1500.0 * 8.0 / 5e6;
        assert!(
            (mean - expected).abs() <= one_packet_gbps,
            "flow {k}: {mean} vs {expected}"
        );
    }
}
