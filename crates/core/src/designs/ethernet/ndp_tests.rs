//! NDP's return-to-sender (Handley et al. 2017 §3.1) and its senders' path penalties (§3.3)
//! on whole runs: an incast whose initial windows overflow the receiver's header queue, and
//! two flows over a leaf-spine with one slow spine.

use super::*;
use crate::designs::ethernet::EthernetSummary;

/// 100 × 450 KB NDP flows into host 0 of a k = 8 fat-tree (8-packet trimming queues,
/// sprayed, initial window 23), with or without return-to-sender. The minimum RTO is 10 ms
/// (htsim's NDP mains set 50 ms): at 1 ms, headers queued behind the receiver's ~1 100
/// others (served ten per data packet) wait close to it, and time out spuriously.
fn incast_json(return_to_sender: bool) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": 1, "duration_ns": 60000000, "warmup_ns": 0}},
        "topology": {{"kind": "fat_tree", "k": 8}}, "routing": {{"mode": "spray"}},
        "switch": {{"queue_packets": 8, "port_kind": "trimming", "return_to_sender": {return_to_sender}}},
        "host": {{"transport": "ndp", "initial_cwnd_packets": 23, "min_rto_ns": 10000000}},
        "traffic": {{"pattern": "incast", "incast_host": 0, "senders": 100, "flow_bytes": 450000}}}}"#
    )
}

fn summary(ethernet: &Ethernet, clock: &Clock) -> EthernetSummary {
    ethernet.finish(clock).expect("balanced").0
}

/// The incast run to its end, its hosts ignoring returned headers if `ignoring`.
fn incast(return_to_sender: bool, ignoring: bool) -> EthernetSummary {
    let mut ethernet = build(&incast_json(return_to_sender)).unwrap();
    for node in ethernet.fabric.nodes_mut() {
        if let EthernetNode::Host(h) = node {
            h.ignores_returned_headers = ignoring;
        }
    }
    let (ethernet, clock) = super::run_built(ethernet, None);
    summary(&ethernet, &clock)
}

/// 100 × 23 initial-window packets overflow the receiver's header queue (72 KB: 1 125
/// headers). Dropped, those headers' packets wait for the RTO; returned, their senders resend
/// them without one, and the last flow ends near the line-rate ideal (100 × 450 KB at
/// 10 Gbit/s: 36 ms), as the NDP paper's incast claims.
#[test]
fn returned_headers_leave_an_incast_without_timeouts() {
    let dropping = incast(false, false);
    let ndp = dropping.ndp.unwrap();
    assert!(ndp.return_to_sender.is_none());
    assert!(
        ndp.headers_dropped > 0 && dropping.senders.timeouts > 0,
        "{ndp:?}"
    );

    let returning = incast(true, false);
    let ndp = returning.ndp.unwrap();
    let rts = ndp.return_to_sender.unwrap();
    println!(
        "incast 100: dropping last {:.0} µs, {} timeouts, {} header drops; returning last {:.0} µs, {} timeouts, {rts:?}",
        dropping.fct_us.as_ref().expect("a flow completed").last, dropping.senders.timeouts, dropping.ndp.unwrap().headers_dropped,
        returning.fct_us.as_ref().expect("a flow completed").last, returning.senders.timeouts
    );
    assert_eq!(returning.flows_completed, 100);
    assert_eq!(returning.senders.timeouts, 0, "{rts:?}");
    assert!(rts.headers_returned > 0, "{rts:?}");
    assert_eq!(rts.returns_dropped, 0);
    assert_eq!(rts.returns_received, rts.headers_returned);
    assert_eq!(
        (ndp.headers_dropped, returning.packets.packets_dropped),
        (0, 0)
    );
    let ideal_us = 100.0 * 450_000.0 * 8.0 / 10e3;
    let last_us = returning.fct_us.as_ref().expect("a flow completed").last;
    assert!(last_us < ideal_us * 1.01, "{last_us} µs against {ideal_us}");
}

/// The check above fails when senders ignore returned headers: the packets are lost to
/// them until the RTO.
#[test]
fn senders_that_ignore_returned_headers_time_out() {
    let broken = incast(true, true);
    assert!(
        broken
            .ndp
            .unwrap()
            .return_to_sender
            .unwrap()
            .headers_returned
            > 0
    );
    assert!(
        broken.senders.timeouts > 0,
        "returned headers ignored, yet no timeout"
    );
}

/// Mid-run, with returned headers on their way back, every packet is accounted for: a
/// returned header is neither delivered nor dropped until it reaches its sender.
#[test]
fn the_account_settles_with_headers_on_their_way_back() {
    let mut on_their_way = 0;
    for until_us in (100..=1000).step_by(50) {
        let (ethernet, clock) = run_until(&incast_json(true), Some(until_us * 1_000_000));
        let s = summary(&ethernet, &clock);
        let rts = s.ndp.unwrap().return_to_sender.unwrap();
        on_their_way += rts.headers_returned - rts.returns_received;
        assert_eq!(
            s.packets.packets_created,
            s.packets.packets_delivered + s.packets.packets_dropped + s.packets.packets_in_flight
        );
    }
    assert!(on_their_way > 0, "no returned header caught on its way");
}

/// Two unending NDP flows from leaf 0 to leaf 1 of a leaf-spine of four spines, one of whose
/// cables to leaf 1 runs at 1 Gbit/s (the others at 10), over 40 ms (goodput from 10 ms):
/// sprayed by the switches (`labels` 0), or each flow labelling `labels` paths that ECMP
/// hashes to the spines, with penalties or (`penalties` false) without.
fn bad_spine(labels: u32, penalties: bool, seed: u64) -> EthernetSummary {
    let mut topo = String::from("switch leaf0 ports=6\nswitch leaf1 ports=6\n");
    for s in 0..4 {
        topo += &format!("switch spine{s} ports=2\n");
    }
    for h in 0..4 {
        topo += &format!("host h{h}\ncable h{h} leaf{}:{}\n", h / 2, h % 2);
    }
    for s in 0..4 {
        let slow = if s == 3 { " rate_gbps=1" } else { "" };
        topo += &format!("cable leaf0:{} spine{s}:0\n", 2 + s);
        topo += &format!("cable leaf1:{} spine{s}:1{slow}\n", 2 + s);
    }
    let path = std::env::temp_dir().join(format!(
        "cellfabric-ndp-bad-spine-{}-{labels}-{penalties}-{seed}.topo",
        std::process::id()
    ));
    std::fs::write(&path, topo).unwrap();
    let mode = if labels == 0 { "spray" } else { "ecmp" };
    let json = format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 40000000, "warmup_ns": 10000000}},
        "topology": {{"kind": "file", "file": {:?}}}, "routing": {{"mode": "{mode}"}},
        "switch": {{"queue_packets": 8, "port_kind": "trimming", "return_to_sender": true}},
        "host": {{"transport": "ndp", "initial_cwnd_packets": 23, "ndp": {{"paths": {labels}}}}},
        "traffic": {{"pattern": "pairs", "pairs": [[0, 2], [1, 3]]}}}}"#,
        path.to_str().unwrap()
    );
    let built = build(&json);
    std::fs::remove_file(&path).unwrap();
    let mut ethernet = built.unwrap();
    for node in ethernet.fabric.nodes_mut() {
        if let EthernetNode::Host(h) = node {
            h.ignores_path_feedback = !penalties;
        }
    }
    let (ethernet, clock) = super::run_built(ethernet, None);
    summary(&ethernet, &clock)
}

/// A quarter of the paths cross a cable at a tenth of the rate: sprayed, or labelled without
/// penalties, a quarter of each flow's packets queue for it and most are trimmed; with
/// penalties the labels that NACK most are skipped, and the flows run near line rate.
#[test]
fn penalized_paths_steer_traffic_off_a_slow_spine() {
    for seed in [1, 2] {
        let sprayed = bad_spine(0, false, seed);
        let blind = bad_spine(16, false, seed);
        let steered = bad_spine(16, true, seed);
        println!(
            "seed {seed}: sprayed {:.3} ({} trimmed), labels without penalties {:.3} ({}), with {:.3} ({}, {:?})",
            sprayed.goodput, sprayed.ndp.unwrap().packets_trimmed, blind.goodput,
            blind.ndp.unwrap().packets_trimmed, steered.goodput,
            steered.ndp.unwrap().packets_trimmed, steered.ndp.unwrap().paths
        );
        assert_eq!(blind.ndp.unwrap().paths.unwrap().path_skips, 0);
        assert!(steered.ndp.unwrap().paths.unwrap().path_skips > 0);
        assert!(steered.goodput > 0.95, "{}", steered.goodput);
        assert!(steered.goodput > sprayed.goodput + 0.1);
        assert!(steered.goodput > blind.goodput + 0.1);
    }
}

/// Same seed, same summary, with returned headers and penalized paths both at work.
#[test]
fn return_to_sender_and_path_choice_are_determined_by_the_seed() {
    let json = |seed| serde_json::to_string(&bad_spine(16, true, seed)).unwrap();
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}

/// Trimming switches whose ports lose one data packet in 10 as they send (the handle vanishes,
/// no counter changes) break the packet account: packets held are counted in the ports'
/// queues.
#[test]
fn a_trimming_port_losing_one_packet_in_10_fails_the_account() {
    let json = r#"{"design": "ethernet", "run": {"seed": 1, "duration_ns": 2000000, "warmup_ns": 0},
        "topology": {"kind": "fat_tree", "k": 4}, "routing": {"mode": "spray"},
        "switch": {"queue_packets": 8, "port_kind": "trimming"},
        "host": {"transport": "ndp", "initial_cwnd_packets": 23},
        "traffic": {"pattern": "incast", "incast_host": 0, "senders": 8, "flow_bytes": 450000}}"#;
    assert_lost_packets_fail_the_account(json, 10, 500_000_000);
}
