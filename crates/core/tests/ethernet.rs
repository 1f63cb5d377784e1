//! The Ethernet baseline: TCP NewReno and DCTCP over drop-tail, ECN-marking switches. Long
//! flows share a bottleneck fairly and fill it; DCTCP keeps the queue near K where NewReno
//! fills it and drops; the permutation runs on a fat-tree with every packet accounted for;
//! same seed, same summary; bad input names its key.

use cellfabric_core::Report;

fn run(json: &str) -> Report {
    let mut sim = cellfabric_core::build(json).expect("valid scenario");
    sim.advance(u64::MAX);
    sim.finish().expect("run keeps its invariants")
}

fn f(report: &Report, key: &str) -> f64 {
    report.summary[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key}"))
}

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
