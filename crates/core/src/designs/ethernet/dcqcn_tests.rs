//! DCQCN over PFC switches on the Ethernet baseline: an incast that overloads its receiver
//! drops nothing and pauses upstream, a fabric whose headroom is too small drops and its
//! ledger shows it, two flows on one bottleneck share it evenly, and runs repeat exactly.

use super::*;
use crate::run::assert_conservation_fails;

/// DCQCN over PFC on a k = 4 fat-tree: `senders` hosts send `flow` (a `flow_bytes` value,
/// or `null`: unending) to host 0, with the switch settings `switch` added.
fn incast(seed: u64, senders: u32, flow: &str, switch: &str, duration_ns: u64) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": {duration_ns}, "warmup_ns": {warmup}}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{"port_kind": "pfc" {switch}}},
            "host": {{"transport": "dcqcn", "packet_bytes": 9000}},
            "traffic": {{"pattern": "incast", "incast_host": 0, "senders": {senders}, "flow_bytes": {flow}}}}}"#,
        warmup = duration_ns / 2
    )
}

fn finished(json: &str) -> (Ethernet, Clock) {
    super::run_until(json, None)
}

/// 15 senders × 450 KB into one 10 Gbit/s host over PFC ports with XOFF at 8 packets and
/// XON at 6, run for up to 10 ms.
fn pfc_incast() -> String {
    let pfc = r#", "pfc_xoff_packets": 8, "pfc_xon_packets": 6"#;
    incast(1, 15, "450000", pfc, 10_000_000)
}

/// 15 senders × 450 KB into one 10 Gbit/s host, XOFF at 8 packets so the edge switch pauses
/// its neighbours: nothing dropped, pauses sent and resumed, every byte delivered at about
/// line rate (6.75 MB take 5.4 ms), the ledger balanced with the PAUSE frames in it.
#[test]
fn a_pfc_incast_drops_nothing_and_pauses_upstream() {
    let json = pfc_incast();
    let (ethernet, clock) = finished(&json);
    let (summary, _) = ethernet.finish(&clock).expect("balanced");
    let pfc = summary.pfc.expect("a PFC run");
    assert_eq!(
        (summary.packets.packets_dropped, pfc.lossless_drops),
        (0, 0)
    );
    assert!(pfc.pause_frames_sent > 0, "{pfc:?}");
    assert_eq!(pfc.resume_frames_sent, pfc.pause_frames_sent, "all resumed");
    assert!(pfc.switch_paused_us + pfc.host_paused_us > 0.0);
    assert!(pfc.headroom_peak_packets <= 4, "{pfc:?}");
    assert_eq!(summary.flows_completed, 15);
    let ideal_us = 15.0 * 450_000.0 * 8.0 / 10e9 * 1e6;
    assert!(
        summary.fct_us.as_ref().expect("a flow completed").last < 1.05 * ideal_us,
        "{:?}",
        summary.fct_us
    );
    assert!(summary.dcqcn.unwrap().cnps_sent > 0);
}

/// On a star every ingress is a host: 8 senders into host 0 with XOFF at 4 packets make the
/// switch pause the senders' NICs, which hold their data until XON; nothing is dropped and
/// every flow completes.
#[test]
fn a_paused_host_holds_its_data_until_resumed() {
    let json = r#"{"design": "ethernet", "run": {"seed": 1, "duration_ns": 10000000, "warmup_ns": 0},
        "topology": {"kind": "star"},
        "switch": {"port_kind": "pfc", "pfc_xoff_packets": 4, "pfc_xon_packets": 2},
        "host": {"transport": "dcqcn", "packet_bytes": 9000},
        "traffic": {"pattern": "incast", "incast_host": 0, "senders": 8, "flow_bytes": 450000}}"#;
    let (ethernet, clock) = finished(json);
    let (summary, _) = ethernet.finish(&clock).expect("balanced");
    let pfc = summary.pfc.unwrap();
    assert!(
        pfc.host_paused_us > 0.0 && pfc.pause_frames_sent > 0,
        "{pfc:?}"
    );
    assert_eq!(pfc.switch_paused_us, 0.0, "hosts never pause the switch");
    assert_eq!(
        (summary.packets.packets_dropped, summary.flows_completed),
        (0, 8)
    );
    assert!(pfc.headroom_peak_packets <= 4, "{pfc:?}");
    let paused: u64 = ethernet.hosts().map(|h| h.pause.pauses() as u64).sum();
    assert_eq!(paused, pfc.pause_frames_sent, "every XOFF reached its host");
}

/// No headroom (XOFF at the whole share): packets already on the wire when XOFF goes find
/// their ingress full and are dropped; the ledger counts them, and a drop counted for a
/// packet still held breaks it.
#[test]
fn without_headroom_the_fabric_drops_and_the_ledger_shows_it() {
    let json = incast(
        1,
        15,
        "null",
        r#", "queue_packets": 8, "pfc_xoff_packets": 8, "pfc_xon_packets": 6, "pfc_headroom_packets": 0"#,
        4_000_000,
    );
    let (mut ethernet, clock) = finished(&json);
    let (summary, _) = ethernet.finish(&clock).expect("balanced");
    let pfc = summary.pfc.unwrap();
    assert!(pfc.lossless_drops > 0, "{pfc:?}");
    assert_eq!(summary.packets.packets_dropped, pfc.lossless_drops);
    let switch = match &mut ethernet.fabric.nodes_mut()[0] {
        EthernetNode::Switch(s) => s,
        EthernetNode::Host(_) => unreachable!("switches come first"),
    };
    switch.counters.packets_dropped += 1;
    assert_conservation_fails(ethernet.finish(&clock));
}

/// Two unending flows from other pods into one host (its 10 Gbit/s link the bottleneck):
/// both start at line rate, the first CNPs cut both far down (α starts at 1), and additive
/// increase brings them back; over 20–40 ms they share the link evenly (Jain's index above
/// 0.99) and fill most of it (above 85% of line rate between them).
#[test]
fn two_flows_converge_to_fair_shares() {
    let json = incast(3, 2, "null", "", 40_000_000);
    let (ethernet, clock) = finished(&json);
    let (summary, tables) = ethernet.finish(&clock).expect("balanced");
    let rates = &tables.flows.goodput.goodput_gbps;
    assert!(
        summary.flow_fairness.expect("flows measured") > 0.99,
        "{rates:?}"
    );
    assert!(rates.iter().sum::<f64>() > 8.5, "{rates:?}");
    assert!(summary.dcqcn.unwrap().rate_cuts > 10);
    assert_eq!(summary.packets.packets_dropped, 0);
}

#[test]
fn a_dcqcn_run_is_determined_by_its_seed() {
    let summary = |seed| {
        let (ethernet, clock) = finished(&incast(seed, 6, "450000", "", 4_000_000));
        serde_json::to_string(&ethernet.finish(&clock).unwrap().0).unwrap()
    };
    assert_eq!(summary(4), summary(4));
    assert_ne!(
        summary(4),
        summary(5),
        "senders and RED's coin follow the seed"
    );
}

/// PFC ports that lose one data packet in 10 as they send (the handle vanishes, no counter
/// changes) break the packet account: the packets a PFC port holds are counted in its queues.
#[test]
fn a_pfc_port_losing_one_packet_in_10_fails_the_account() {
    let json = pfc_incast();
    assert_lost_packets_fail_the_account(&json, 10, 2_000_000_000);
}
