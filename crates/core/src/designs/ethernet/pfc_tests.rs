//! PFC over several priorities (IEEE 802.1Qbb; DCQCN §2's victim flow): an incast on class 0
//! and an unrelated flow on class 1 sharing its upstream links. With two classes the incast's
//! pauses stop class 0 alone and the victim keeps what the incast leaves of the shared links;
//! with one class the same pauses stop the victim too. Lossless, balanced and repeatable
//! either way; a switch that ignores the class in a PAUSE fails the victim's check. BFC
//! (Goyal et al. 2022 §3.2) on the same fabric: with enough queues the incast's pauses name
//! the incast flows' queues and the victim keeps its share; with one queue every flow
//! collides and the victim is blocked as under one class; an upstream that pauses every
//! queue whatever the frame names fails the victim's check.

use super::lossless_fabrics::run_pausing;
use super::*;

/// `scenarios/baselines/pfc-victim.toml` over `classes` PFC classes: four senders into
/// host 5 (host 0 across the spine) on class 0, host 1 to host 9 on class 1 (class 0 with
/// one class).
fn victim(seed: u64, classes: u32) -> String {
    victim_served(seed, classes, "strict_priority")
}

/// [`victim`] with ports serving their classes as `service` says.
fn victim_served(seed: u64, classes: u32, service: &str) -> String {
    victim_with(
        seed,
        &format!(
            r#""port_kind": "pfc", "pfc_classes": {classes}, "pfc_class_service": "{service}""#
        ),
        &format!(r#", "flow_classes": [0, 0, 0, 0, {}]"#, classes - 1),
    )
}

/// [`victim`] with one class and BFC's `queues` queues per port and NIC.
fn victim_bfc(seed: u64, queues: u32) -> String {
    victim_with(
        seed,
        &format!(r#""port_kind": "bfc", "per_flow": {{"queues": {queues}, "pause_packets": 4}}"#),
        "",
    )
}

/// The victim's fabric with `switch` added to the PFC switch's keys and `traffic` to the
/// traffic's.
fn victim_with(seed: u64, switch: &str, traffic: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 10000000, "warmup_ns": 2000000}},
            "topology": {{"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 5}},
            "switch": {{"pfc_xoff_packets": 40, "pfc_xon_packets": 38, {switch}}},
            "host": {{"transport": "tcp", "packet_bytes": 9000}},
            "traffic": {{"pattern": "pairs", "pairs": [[0, 5], [6, 5], [7, 5], [8, 5], [1, 9]] {traffic}}}}}"#
    )
}

/// The run to its end with every switch breaking 802.1Qbb (`pause_every_class`) or not:
/// its summary and each flow's goodput in Gbit/s (the victim's last).
fn run(json: &str, pause_every_class: bool) -> (EthernetSummary, Vec<f64>) {
    let (summary, tables) = run_pausing(json, pause_every_class);
    (summary, tables.flows.goodput.goodput_gbps)
}

/// The victim (10 Gbit/s links): the incast's four flows share host 5's link, a quarter each
/// (PFC shares a congested output among its paused ingresses, one flow each here); host 0's
/// 2.5 Gbit/s leaves 7.5 of the shared links to the victim if only class 0 is paused.
fn victim_keeps_its_share(goodput_gbps: &[f64]) -> bool {
    goodput_gbps[4] > 7.0
}

#[test]
fn a_pause_of_one_class_leaves_the_other_going() {
    let (summary, gbps) = run(&victim(1, 2), false);
    let pfc = summary.pfc.expect("a PFC run");
    assert_eq!(pfc.lossless_drops, 0);
    let classes = pfc.classes.expect("per class");
    assert!(classes[0].pause_frames_sent > 0, "{classes:?}");
    // Class 1 is paused only by its own congestion point: host 1 offers 10 Gbit/s to an
    // uplink class 0 goes first on.
    assert!(
        classes[0].paused_us > 5.0 * classes[1].paused_us,
        "{classes:?}"
    );
    for (flow, &g) in gbps[..4].iter().enumerate() {
        assert!((g - 2.5).abs() < 0.3, "incast flow {flow}: {gbps:?}");
    }
    assert!(victim_keeps_its_share(&gbps), "{gbps:?}");
}

/// Round robin between the classes (ETS) changes nothing here: class 0 wants no more than
/// the 2.5 Gbit/s its pauses allow, so the victim keeps the rest either way.
#[test]
fn round_robin_between_classes_keeps_the_victims_share_too() {
    let (summary, gbps) = run(&victim_served(1, 2, "round_robin"), false);
    assert_eq!(summary.pfc.unwrap().lossless_drops, 0);
    assert!(victim_keeps_its_share(&gbps), "{gbps:?}");
}

/// The victim shares the incast's pauses: it falls near host 0's 2.5 Gbit/s.
fn assert_the_victim_paused_with_the_incast(gbps: &[f64]) {
    assert!(!victim_keeps_its_share(gbps), "{gbps:?}");
    assert!(gbps[4] < 3.5, "near host 0's 2.5 Gbit/s: {gbps:?}");
}

#[test]
fn with_one_class_the_victim_is_paused_with_the_incast() {
    let (summary, gbps) = run(&victim(1, 1), false);
    assert!(
        summary.pfc.as_ref().unwrap().classes.is_none(),
        "one class: no table"
    );
    assert_the_victim_paused_with_the_incast(&gbps);
}

/// Broken on purpose: a switch that stops every class on any PAUSE (the class ignored) makes
/// two classes behave as one, and the victim's check fails (worse than one class: the uplink
/// serves class 0 first whenever it may send, so the victim starves).
#[test]
fn a_pause_that_ignores_its_class_fails_the_victims_check() {
    let (_, gbps) = run(&victim(1, 2), true);
    assert!(!victim_keeps_its_share(&gbps), "{gbps:?}");
}

#[test]
fn a_multi_class_run_is_determined_by_its_seed() {
    let json = victim(3, 2);
    let a = serde_json::to_string(&run(&json, false).0).unwrap();
    let b = serde_json::to_string(&run(&json, false).0).unwrap();
    assert_eq!(a, b);
}

/// BFC with 32 queues: every flow has a queue of its own at every port, so the incast's pauses
/// name the incast flows' queues alone: the incast flows split host 5's link and the victim
/// keeps the rest of the shared links, without a backstop pause.
#[test]
fn bfc_gives_the_victim_a_queue_of_its_own_and_its_share() {
    let (summary, gbps) = run(&victim_bfc(1, 32), false);
    let pfc = summary.pfc.expect("a PFC run");
    let bfc = pfc.bfc.expect("a BFC run");
    assert_eq!(pfc.lossless_drops, 0);
    assert_eq!(
        pfc.pause_frames_sent, 0,
        "the backstop never paused: {pfc:?}"
    );
    assert!(bfc.queue_pause_frames_sent > 0, "{bfc:?}");
    assert_eq!(bfc.flow_collisions, 0, "{bfc:?}");
    for (flow, &g) in gbps[..4].iter().enumerate() {
        assert!((g - 2.5).abs() < 0.3, "incast flow {flow}: {gbps:?}");
    }
    assert!(victim_keeps_its_share(&gbps), "{gbps:?}");
}

/// BFC with 128 queues (the most its paper's evaluation uses, Goyal et al. 2022) runs as with
/// 32: no collision, lossless, and the victim keeps its share.
#[test]
fn bfc_with_128_queues_gives_the_victim_its_share() {
    let (summary, gbps) = run(&victim_bfc(1, 128), false);
    let bfc = summary.pfc.expect("a PFC run").bfc.expect("a BFC run");
    assert!(bfc.queue_pause_frames_sent > 0, "{bfc:?}");
    assert_eq!(bfc.flow_collisions, 0, "{bfc:?}");
    assert!(victim_keeps_its_share(&gbps), "{gbps:?}");
}

/// BFC with one queue: every active flow collides in it, so a pause of the incast flow's
/// queue stops the victim too, as one PFC class does.
#[test]
fn with_one_bfc_queue_the_victim_is_paused_with_the_incast() {
    let (summary, gbps) = run(&victim_bfc(1, 1), false);
    let bfc = summary.pfc.unwrap().bfc.unwrap();
    assert!(bfc.flow_collisions > 0, "{bfc:?}");
    assert_the_victim_paused_with_the_incast(&gbps);
}

/// Broken on purpose: an upstream port that stops every queue when a PAUSE names one (the
/// queue ignored) blocks the victim behind the incast flow, and its check fails.
#[test]
fn a_bfc_pause_that_ignores_its_queue_fails_the_victims_check() {
    let (_, gbps) = run(&victim_bfc(1, 32), true);
    assert!(!victim_keeps_its_share(&gbps), "{gbps:?}");
}
