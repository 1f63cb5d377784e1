//! BFC over PFC switches (Goyal et al. 2022 §3.2) on a k = 4 fat-tree at full load: a
//! permutation and a 15-to-1 incast of unending flows, DCQCN and TCP, many queues and few,
//! drop nothing, account for every packet (injected = delivered + dropped + in flight), and
//! keep the fabric busy; runs repeat exactly.

use super::lossless_fabrics::{fat_tree, lossless, INCAST, PERMUTATION};
use crate::blocks::ethernet::summary::BfcSummary;

/// The lossless fat-tree with BFC's `queues` queues per port (a pause at 4 packets).
fn fabric(seed: u64, transport: &str, queues: u32, traffic: &str) -> String {
    let switch =
        format!(r#""port_kind": "bfc", "per_flow": {{"queues": {queues}, "pause_packets": 4}}"#);
    fat_tree(seed, transport, &switch, traffic)
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
