//! BFC over PFC switches (Goyal et al. 2022 §3.2) on a k = 4 fat-tree at full load: a
//! permutation and a 15-to-1 incast of unending flows, DCQCN and TCP, many queues and few,
//! drop nothing, account for every packet (injected = delivered + dropped + in flight), and
//! keep the fabric busy; runs repeat exactly.

use super::*;
use crate::blocks::ethernet::summary::BfcSummary;

/// A k = 4 fat-tree at 10 Gbit/s, 9000-byte packets, PFC switches with BFC's `queues` queues
/// per port, `transport` hosts and the traffic keys `traffic`.
fn fabric(seed: u64, transport: &str, queues: u32, traffic: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 4000000, "warmup_ns": 2000000}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{"port_kind": "bfc", "per_flow": {{"queues": {queues}, "pause_packets": 4}}}},
            "host": {{"transport": "{transport}", "packet_bytes": 9000}},
            "traffic": {traffic}}}"#
    )
}

const PERMUTATION: &str = r#"{"pattern": "permutation"}"#;
const INCAST: &str = r#"{"pattern": "incast", "incast_host": 0, "senders": 15}"#;

/// The run's summary, checked lossless with its ledger balanced.
fn lossless(json: &str) -> EthernetSummary {
    let (ethernet, clock) = run_until(json, None);
    let (summary, _) = ethernet.finish(&clock).expect("balanced");
    let pfc = summary.pfc.as_ref().expect("a PFC run");
    assert_eq!(
        (summary.packets.packets_dropped, pfc.lossless_drops),
        (0, 0),
        "{json}"
    );
    assert_eq!(
        summary.packets.packets_created,
        summary.packets.packets_delivered
            + summary.packets.packets_dropped
            + summary.packets.packets_in_flight,
        "{json}"
    );
    summary
}

/// A permutation at full load drops nothing with 32 queues or with 2 (flows colliding), under
/// DCQCN and TCP, and its flows still get most of their links.
#[test]
fn a_bfc_permutation_at_full_load_drops_nothing() {
    for transport in ["dcqcn", "tcp"] {
        for queues in [32, 2] {
            let summary = lossless(&fabric(1, transport, queues, PERMUTATION));
            assert!(
                summary
                    .flow_goodput_gbps
                    .as_ref()
                    .expect("flows measured")
                    .mean
                    > 5.0,
                "{transport}, {queues} queues: {:?}",
                summary.flow_goodput_gbps
            );
        }
    }
}

/// A 15-to-1 incast of unending flows: BFC's queue pauses hold the senders back hop by hop,
/// nothing is dropped, and the receiver's link stays full.
#[test]
fn a_bfc_incast_at_full_load_drops_nothing_and_pauses_queues() {
    for transport in ["dcqcn", "tcp"] {
        let summary = lossless(&fabric(1, transport, 32, INCAST));
        let bfc = summary.pfc.as_ref().unwrap().bfc.expect("a BFC run");
        assert!(bfc.queue_pause_frames_sent > 0, "{transport}: {bfc:?}");
        let total_gbps = summary
            .flow_goodput_gbps
            .as_ref()
            .expect("flows measured")
            .mean
            * 15.0;
        assert!(total_gbps > 9.0, "{transport}: {summary:?}");
    }
}

#[test]
fn a_bfc_run_is_determined_by_its_seed() {
    let json = fabric(3, "dcqcn", 4, INCAST);
    let a = serde_json::to_string(&lossless(&json)).unwrap();
    let b = serde_json::to_string(&lossless(&json)).unwrap();
    assert_eq!(a, b);
}

/// The 15-to-1 incast with a Bloom filter of paused flows at every port: lossless either way;
/// a filter of one counter flags every flow that becomes active while any pause is held (false
/// positives, counted), a large one far fewer.
#[test]
fn a_bloom_filter_of_paused_flows_counts_its_false_positives() {
    let with = |bits: u32| {
        let json = fabric(1, "tcp", 4, INCAST).replace(
            r#""pause_packets": 4"#,
            &format!(r#""pause_packets": 4, "bloom_filter_bits": {bits}"#),
        );
        let summary = lossless(&json);
        summary.pfc.unwrap().bfc.unwrap()
    };
    let (tiny, large) = (with(1), with(1 << 16));
    let positives = |b: &BfcSummary| {
        (
            b.filter_positives.unwrap(),
            b.filter_false_positives.unwrap(),
        )
    };
    assert!(positives(&tiny).1 > 0, "{tiny:?}");
    assert!(
        positives(&large).1 < positives(&tiny).1,
        "{large:?} {tiny:?}"
    );
}
