//! What the lossless-port tests (PFC, BFC, Aquarius, ideal per-flow queues) share: a k = 4
//! fat-tree scenario and its two patterns, a run checked lossless with its ledger balanced, and
//! a run whose switches break per-flow and per-class pauses on purpose.

use super::*;

/// A k = 4 fat-tree at 10 Gbit/s, 9000-byte packets, 4 ms with 2 of warm-up, the switch keys
/// `switch`, `transport` hosts and the traffic keys `traffic`.
pub(super) fn fat_tree(seed: u64, transport: &str, switch: &str, traffic: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 4000000, "warmup_ns": 2000000}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{{switch}}},
            "host": {{"transport": "{transport}", "packet_bytes": 9000}},
            "traffic": {traffic}}}"#
    )
}

/// Every host sends to one other.
pub(super) const PERMUTATION: &str = r#"{"pattern": "permutation"}"#;
/// Fifteen hosts send to host 0.
pub(super) const INCAST: &str = r#"{"pattern": "incast", "incast_host": 0, "senders": 15}"#;

/// The run's summary, checked lossless with its ledger balanced.
pub(super) fn lossless(json: &str) -> EthernetSummary {
    let (ethernet, clock) = run_until(json, None);
    let (summary, _) = ethernet.finish(&clock).expect("balanced");
    let pfc = summary.pfc.as_ref().expect("a PFC run");
    assert_eq!(
        (summary.packets.packets_dropped, pfc.lossless_drops),
        (0, 0),
        "{json}"
    );
    if let Some(aquarius) = pfc.aquarius {
        assert_eq!((aquarius.headroom_drops, aquarius.buffer_drops), (0, 0));
    }
    let p = &summary.packets;
    assert_eq!(
        p.packets_created,
        p.packets_delivered + p.packets_dropped + p.packets_in_flight,
        "{json}"
    );
    summary
}

/// The run to its end with every switch's PFC ports pausing the whole port for any PAUSE
/// (`pause_every_class`, 802.1Qbb broken on purpose) or not: its summary and tables, checked
/// lossless.
pub(super) fn run_pausing(
    json: &str,
    pause_every_class: bool,
) -> (EthernetSummary, EthernetTables) {
    let mut ethernet = build(json).unwrap();
    for node in ethernet.fabric.nodes_mut() {
        if let EthernetNode::Switch(s) = node {
            s.pfc_mut().expect("PFC ports").pause_every_class = pause_every_class;
        }
    }
    let (ethernet, clock) = super::run_built(ethernet, None);
    let (summary, tables) = ethernet.finish(&clock).expect("balanced");
    assert_eq!(summary.packets.packets_dropped, 0, "lossless");
    (summary, tables)
}
