//! The line-rate sender capped at one bandwidth-delay product of inflight (BFC's end host,
//! Goyal et al. 2022) on the Ethernet baseline: with the cap the fabric derives, a lone flow
//! fills its link; with a quarter of it, it gets a quarter; under BFC on a fat-tree with
//! flows opened during the run and an incast, nothing is dropped, the flows complete, and the
//! run repeats exactly.

/// One unending flow from host 0 to host 1 on a star at 100 Gbit/s and 1 µs, 1000-byte
/// packets, its cap set by `host` (added to the `[host]` keys).
fn lone_flow(host: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": 1, "duration_ns": 200000, "warmup_ns": 50000}},
            "topology": {{"kind": "star"}},
            "link": {{"rate_gbps": 100.0, "propagation_ns": 1000.0}},
            "host": {{"transport": "line_rate", "packet_bytes": 1000 {host}}},
            "traffic": {{"pattern": "pairs", "pairs": [[0, 1]]}}}}"#
    )
}

fn goodput_gbps(json: &str) -> f64 {
    let (ethernet, clock) = super::run_until(json, None);
    let (summary, tables) = ethernet.finish(&clock).expect("balanced");
    assert_eq!(summary.packets.packets_dropped, 0);
    tables.flows.goodput.goodput_gbps[0]
}

/// By hand: the star's longest path is 2 links; per link a 1000-byte segment takes 80 ns, a
/// 64-byte ACK 5.12 ns, and 2 µs of propagation there and back, so the base round trip is
/// 4170.24 ns and one BDP 52 128 bytes: 52 segments, 4160 ns of sending per 4170.24 ns round
/// trip, 99.75 Gbit/s of wire at most. A cap of 13 000 bytes (13 segments) gives
/// 13 × 80 / 4170.24 of it: 24.9 Gbit/s.
#[test]
fn a_lone_flow_fills_its_link_with_one_bdp_and_a_quarter_with_a_quarter() {
    let full = goodput_gbps(&lone_flow(""));
    assert!(full > 97.0, "{full}");
    let quarter = goodput_gbps(&lone_flow(r#", "inflight_cap_bytes": 13000"#));
    assert!((quarter - 24.9).abs() < 1.0, "{quarter}");
}

/// BFC with 8 queues on a k = 4 fat-tree at 10 Gbit/s: Poisson flows of the Web Server
/// distribution at 60% load, and a 15-to-1 incast of 64 KB flows, all from line-rate senders.
fn under_bfc(seed: u64) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 3000000, "warmup_ns": 0}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{"port_kind": "bfc", "per_flow": {{"queues": 8}}}},
            "host": {{"transport": "line_rate", "packet_bytes": 1000}},
            "traffic": {{"pattern": "poisson", "load": 0.6,
                "flow_sizes": "{sizes}",
                "incast_load": 0.05, "incast_fan_in": 15, "incast_flow_bytes": 64000}}}}"#,
        sizes = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../workloads/homasim_fb_webserver.txt"
        )
    )
}

#[test]
fn under_bfc_line_rate_flows_complete_losslessly_and_repeat() {
    let run = |seed| {
        let (ethernet, clock) = super::run_until(&under_bfc(seed), None);
        let (summary, tables) = ethernet.finish(&clock).expect("balanced");
        assert_eq!(summary.packets.packets_dropped, 0, "lossless");
        assert_eq!(summary.pfc.as_ref().unwrap().lossless_drops, 0);
        let counts = &summary.opened.as_ref().unwrap().counts;
        assert!(counts.timed_flows_started > 300, "{counts:?}");
        assert!(
            counts.timed_flows_completed * 10 >= counts.timed_flows_started * 9,
            "{counts:?}"
        );
        serde_json::to_string(&(summary, tables)).unwrap()
    };
    assert_eq!(run(2), run(2));
}
