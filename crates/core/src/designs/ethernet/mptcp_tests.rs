//! MPTCP on the Ethernet baseline, where the fabric's state is visible: subflows labelled
//! apart take different paths between pods of a fat-tree, a finite connection's bytes arrive
//! once, and the packet ledger balances with every subflow's packets.

use super::*;

/// One flow from a random host into host 15 of a k = 4 fat-tree (four paths between pods).
fn one_flow(seed: u64, transport: &str, extra: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 4000000, "warmup_ns": 1000000}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "host": {{"transport": "{transport}", "packet_bytes": 1500 {extra}}},
            "traffic": {{"pattern": "incast", "incast_host": 15, "senders": 1}}}}"#
    )
}

fn finished(json: &str) -> (Ethernet, Clock) {
    super::run_until(json, None)
}

/// Core switches (16..20 on a k = 4 fat-tree) that forwarded data (not only ACKs) in the
/// measurement window.
fn cores_carrying_data(ethernet: &Ethernet) -> usize {
    let data_bytes = 1_000_000; // a quarter of a subflow's share; ACKs bring 0.2 MB
    ethernet
        .switch_nodes()
        .skip(16)
        .filter(|s| s.measured().iter().any(|m| m.bytes > data_bytes))
        .count()
}

#[test]
fn subflows_take_different_paths_between_pods() {
    let (mut pairs, mut two_paths) = (0, 0);
    for seed in 1..=12 {
        let (tcp, _) = finished(&one_flow(seed, "tcp", ""));
        if tcp.flows[0].src / 4 == 3 {
            continue; // in host 15's pod: no core on the way
        }
        pairs += 1;
        assert_eq!(
            cores_carrying_data(&tcp),
            1,
            "seed {seed}: one path per TCP flow"
        );
        let (mptcp, _) = finished(&one_flow(seed, "mptcp", r#", "subflows": 2"#));
        let cores = cores_carrying_data(&mptcp);
        assert!((1..=2).contains(&cores), "seed {seed}: {cores} cores");
        two_paths += (cores == 2) as u32;
    }
    // Two independent hashes over four paths (two cores per aggregation switch choice)
    // land on different cores half the time at least; never on more than two.
    assert!(
        pairs >= 6 && two_paths * 2 >= pairs,
        "{two_paths} of {pairs}"
    );
}

#[test]
fn a_finite_connection_delivers_its_bytes_once_and_the_ledger_balances() {
    let json = r#"{"design": "ethernet", "run": {"seed": 4, "duration_ns": 20000000, "warmup_ns": 0},
        "topology": {"kind": "fat_tree", "k": 4}, "host": {"transport": "mptcp", "subflows": 4},
        "traffic": {"pattern": "permutation", "flow_bytes": 1000001}}"#;
    let (ethernet, clock) = finished(json);
    let (summary, tables) = ethernet.finish(&clock).expect("the ledger balances");
    assert_eq!(summary.setup.flows, 16);
    assert_eq!(summary.flows_completed, 16);
    for (f, fct) in ethernet.flows.iter().zip(&tables.flows.goodput.fct_us) {
        let receiver = &ethernet.hosts().nth(f.dst as usize).unwrap().inflows[f.at_dst as usize];
        assert_eq!(receiver.bytes, 1_000_001, "each byte once");
        assert!(fct.is_some());
    }
    // 1000001 bytes are 112 full 9000-byte segments; each delivered once, so at least
    // 16 × 112 sent, and no segment is lost here without a retransmission to replace it.
    assert!(summary.senders.segments_sent >= 16 * 112);
    assert!(summary.senders.segments_sent <= 16 * 112 + summary.senders.retransmissions);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let json = one_flow(3, "mptcp", r#", "subflows": 8"#);
    let (a, clock_a) = finished(&json);
    let (b, clock_b) = finished(&json);
    let (sa, ta) = a.finish(&clock_a).unwrap();
    let (sb, tb) = b.finish(&clock_b).unwrap();
    assert_eq!(
        serde_json::to_string(&(sa, ta)).unwrap(),
        serde_json::to_string(&(sb, tb)).unwrap()
    );
}

/// LIA with one subflow is NewReno's increase: a one-subflow connection runs as a TCP flow.
#[test]
fn one_subflow_runs_as_tcp() {
    let json = |transport: &str, extra: &str| {
        format!(
            r#"{{"design": "ethernet", "run": {{"seed": 2, "duration_ns": 4000000, "warmup_ns": 1000000}},
                "topology": {{"kind": "fat_tree", "k": 4}},
                "host": {{"transport": "{transport}", "packet_bytes": 1500 {extra}}},
                "traffic": {{"pattern": "incast", "incast_host": 0, "senders": 4}}}}"#
        )
    };
    let (tcp, clock_tcp) = finished(&json("tcp", ""));
    let (mptcp, clock_mptcp) = finished(&json("mptcp", r#", "subflows": 1"#));
    let (t, tt) = tcp.finish(&clock_tcp).unwrap();
    let (m, mt) = mptcp.finish(&clock_mptcp).unwrap();
    assert!(t.packets.packets_dropped > 0, "a bottleneck that drops");
    assert_eq!(
        (
            t.packets.packets_dropped,
            t.senders.fast_retransmits,
            t.senders.timeouts
        ),
        (
            m.packets.packets_dropped,
            m.senders.fast_retransmits,
            m.senders.timeouts
        )
    );
    assert_eq!(tt.flows.goodput.goodput_gbps, mt.flows.goodput.goodput_gbps);
}
