//! Aquarius over PFC switches (Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow Control with
//! Aquarius"): the slides' micro-benchmark (the victim keeps its rate where PFC and BFC with a
//! queue collision stop it), and a k = 4 fat-tree at full load, a permutation and a 15-to-1
//! incast, that drops nothing, reorders nothing, accounts for every packet and repeats exactly.

use super::lossless_fabrics::{fat_tree, lossless, run_pausing, INCAST, PERMUTATION};
use super::*;

/// The micro-benchmark of `scenarios/aquarius/micro.toml` with the switch keys `switch`: f1 at
/// 33 Gbit/s and f2-f4 at 100 into R1 (f4 to R2), DCQCN, 1000-byte packets, 1 ms.
fn micro(switch: &str) -> String {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/aquarius/micro.topo"
    );
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": 1, "duration_ns": 1000000, "warmup_ns": 300000}},
            "topology": {{"kind": "file", "file": "{topo}"}},
            "link": {{"rate_gbps": 100.0, "propagation_ns": 1000.0}},
            "switch": {{"queue_packets": 600, "pfc_xoff_packets": 400, "pfc_xon_packets": 390,
                        "pfc_headroom_packets": 150, "red_kmin_bytes": 400000,
                        "red_kmax_bytes": 1600000, "red_pmax": 0.2, {switch}}},
            "host": {{"transport": "dcqcn", "packet_bytes": 1000}},
            "traffic": {{"pattern": "pairs", "pairs": [[0, 4], [1, 4], [2, 4], [3, 5]]}}}}"#
    )
}

const AQUARIUS: &str = r#""port_kind": "aquarius", "per_flow": {"queues": 8}"#;

/// Each flow's goodput in Gbit/s (f1-f4), with every switch breaking per-flow pauses
/// (`pause_every_class`: a flow's PAUSE stops the whole port) or not; lossless either way.
fn goodputs(json: &str, pause_every_class: bool) -> Vec<f64> {
    run_pausing(json, pause_every_class)
        .1
        .flows
        .goodput
        .goodput_gbps
}

/// Over `ports`, f1-f3 share R1 about evenly (33.3 Gbit/s each) and the victim f4 keeps its 100.
fn assert_fair_and_the_victim_spared(ports: &str) {
    let gbps = goodputs(&micro(ports), false);
    for (flow, rate) in gbps[..3].iter().enumerate() {
        assert!((31.5..35.0).contains(rate), "f{}: {gbps:?}", flow + 1);
    }
    assert!(gbps[3] > 95.0, "{gbps:?}");
}

/// Aquarius: f1-f3 share R1 about evenly (f1 sending at 33 and never above its share) and the
/// victim f4 keeps its 100.
#[test]
fn aquarius_shares_the_bottleneck_fairly_and_spares_the_victim() {
    assert_fair_and_the_victim_spared(AQUARIUS);
}

/// PFC pauses the whole uplink and BFC with two queues makes f4 share a paused flow's queue:
/// the victim loses most of its rate either way.
#[test]
fn pfc_and_bfc_with_a_queue_collision_slow_the_victim() {
    let pfc = goodputs(&micro(r#""port_kind": "pfc""#), false);
    assert!(pfc[3] < 50.0, "{pfc:?}");
    let bfc = goodputs(
        &micro(r#""port_kind": "bfc", "per_flow": {"queues": 2}"#),
        false,
    );
    assert!(bfc[3] < 50.0, "{bfc:?}");
}

/// Broken on purpose: an upstream port that stops every queue when a PAUSE names one flow
/// (no isolation) holds the victim behind the paused flows, and its check fails.
#[test]
fn an_upstream_that_pauses_the_port_for_a_flow_stops_the_victim() {
    let gbps = goodputs(&micro(AQUARIUS), true);
    assert!(gbps[3] < 95.0, "{gbps:?}");
}

/// A k = 4 fat-tree at 10 Gbit/s, 9000-byte packets, Aquarius with `queues` queues per port,
/// `transport` hosts and the traffic keys `traffic`.
fn fabric(seed: u64, transport: &str, queues: u32, traffic: &str) -> String {
    let switch = format!(r#""port_kind": "aquarius", "per_flow": {{"queues": {queues}}}"#);
    fat_tree(seed, transport, &switch, traffic)
}

/// A permutation and an incast at full load, under DCQCN and TCP, with 8 queues and with
/// 2 (one normal and the isolation queue): nothing dropped, no TCP segment reordered into a
/// fast retransmit, and the incast's pauses name flows.
#[test]
fn aquarius_at_full_load_drops_and_reorders_nothing() {
    for transport in ["dcqcn", "tcp"] {
        for queues in [8, 2] {
            let permutation = lossless(&fabric(1, transport, queues, PERMUTATION));
            let incast = lossless(&fabric(1, transport, queues, INCAST));
            let aquarius = incast.pfc.as_ref().unwrap().aquarius.unwrap();
            assert!(aquarius.flow_pause_frames_sent > 0, "{aquarius:?}");
            for s in [&permutation, &incast] {
                let why = format!("{transport}, {queues} queues: {:?}", s.senders);
                assert_eq!(s.senders.fast_retransmits, 0, "{why}");
            }
            let total_gbps = incast.flow_goodput_gbps.as_ref().unwrap().mean * 15.0;
            assert!(total_gbps > 9.0, "{transport}, {queues}: {total_gbps}");
        }
    }
}

#[test]
fn an_aquarius_run_is_determined_by_its_seed() {
    let json = fabric(3, "dcqcn", 4, INCAST);
    let a = serde_json::to_string(&lossless(&json)).unwrap();
    let b = serde_json::to_string(&lossless(&json)).unwrap();
    assert_eq!(a, b);
}

const IDEAL: &str = r#""port_kind": "per_flow_ideal""#;

/// Ideal per-flow queues, the upper bound: f1-f3 share R1 about evenly and the victim f4 keeps
/// its 100, as under Aquarius.
#[test]
fn ideal_per_flow_queues_share_the_bottleneck_and_spare_the_victim() {
    assert_fair_and_the_victim_spared(IDEAL);
}

/// Broken on purpose: an upstream that stops the whole port when a PAUSE names one flow holds
/// the victim, and the check above fails.
#[test]
fn ideal_queues_that_pause_the_port_for_a_flow_stop_the_victim() {
    let gbps = goodputs(&micro(IDEAL), true);
    assert!(gbps[3] < 95.0, "{gbps:?}");
}

/// Ideal per-flow queues at full load, a permutation and a 15-to-1 incast under DCQCN and TCP:
/// nothing dropped, nothing reordered, flows paused by their id, a queue per flow.
#[test]
fn ideal_per_flow_queues_at_full_load_drop_and_reorder_nothing() {
    for transport in ["tcp", "dcqcn"] {
        let permutation = lossless(&fat_tree(1, transport, IDEAL, PERMUTATION));
        let incast = lossless(&fat_tree(1, transport, IDEAL, INCAST));
        let ideal = incast.pfc.as_ref().unwrap().ideal.expect("an ideal run");
        assert!(ideal.flow_pause_frames_sent > 0, "{ideal:?}");
        assert!(ideal.peak_active_flows >= 15, "{ideal:?}");
        assert_eq!((ideal.headroom_drops, ideal.buffer_drops), (0, 0));
        for s in [&permutation, &incast] {
            assert_eq!(s.senders.fast_retransmits, 0, "{transport}");
        }
        let total_gbps = incast.flow_goodput_gbps.as_ref().unwrap().mean * 15.0;
        // TCP fills the receiver's link; DCQCN's default marking (Kmin 5 KB) marks the 15
        // flows' queue at the receiver's port and cuts their rates (about 8.2 Gbit/s in all).
        if transport == "tcp" {
            assert!(total_gbps > 9.0, "{transport}: {total_gbps}");
        }
    }
}

/// Poisson arrivals of the Web Server distribution at 90% of line rate with a 5% 15-to-1
/// incast mixed in, on the k = 4 fat-tree (10 Gbit/s): PFC, BFC (8 queues), Aquarius (8
/// queues) and ideal per-flow queues drop nothing, balance the ledger, and open the incasts'
/// flows beside the Poisson ones.
#[test]
fn lossless_schemes_drop_nothing_at_full_load_with_incasts_mixed_in() {
    let sizes = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/homasim_fb_webserver.txt"
    );
    let traffic = format!(
        r#"{{"pattern": "poisson", "flow_sizes": "{sizes}", "load": 0.9,
            "incast_load": 0.05, "incast_fan_in": 15, "incast_flow_bytes": 20000}}"#
    );
    for switch in [
        r#""port_kind": "pfc""#,
        r#""port_kind": "bfc", "per_flow": {"queues": 8}"#,
        r#""port_kind": "aquarius", "per_flow": {"queues": 8, "high_threshold_bytes": 80000}"#,
        IDEAL,
    ] {
        let json = fat_tree(1, "dctcp", switch, &traffic).replace("9000", "1000");
        lossless(&json);
        let (ethernet, clock) = run_until(&json, None);
        let (_, tables) = ethernet.finish(&clock).expect("balanced");
        let sizes = &tables.timed_flows.size_bytes;
        let incast_flows = sizes.iter().filter(|&&b| b == 20_000).count();
        assert!(
            incast_flows >= 15 && sizes.len() > 1_000,
            "{switch}: {incast_flows}"
        );
    }
}
