//! Flows opened during an Ethernet run (patterns `fct`, `poisson`, `closed_loop`): completed
//! flows' slots are reused (memory follows the flows in flight, not the run's length), every
//! transport that can open flows completes them with the packet ledger balanced, small flows
//! on an idle fabric take exactly their ideal time, the Poisson source offers its load, and
//! the seed determines the run.

use super::*;

const FB_WEBSERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../workloads/homasim_fb_webserver.txt"
);

/// The transports' settings: NDP over trimming queues with spraying, DCQCN over PFC.
fn transport(name: &str) -> String {
    match name {
        "dcqcn" => r#""host": {"transport": "dcqcn"}, "switch": {"port_kind": "pfc"}"#.into(),
        "ndp" => r#""host": {"transport": "ndp", "initial_cwnd_packets": 23},
            "switch": {"queue_packets": 8, "port_kind": "trimming"}, "routing": {"mode": "spray"}"#
            .into(),
        _ => format!(r#""host": {{"transport": "{name}"}}"#),
    }
}

/// A scenario of `duration_ns` with `transport`'s settings and `traffic` (its flow sizes the
/// Facebook web server distribution) on `topology`.
fn scenario(seed: u64, duration_ns: u64, transport: &str, topology: &str, traffic: &str) -> String {
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": {duration_ns}, "warmup_ns": 0}},
            "topology": {topology}, {},
            "traffic": {{"flow_sizes": "{FB_WEBSERVER}", {traffic}}}}}"#,
        self::transport(transport)
    )
}

fn fct(seed: u64, duration_ns: u64, transport: &str) -> String {
    scenario(
        seed,
        duration_ns,
        transport,
        r#"{"kind": "fat_tree", "k": 4}"#,
        r#""pattern": "fct", "fct_src": 0, "fct_dst": 15, "fct_load": 0.5, "background_flows": 2"#,
    )
}

/// 50 ms of Poisson arrivals at 1% load on a star of `transport` hosts: an idle fabric.
fn idle_star(transport: &str) -> String {
    scenario(
        5,
        50_000_000,
        transport,
        r#"{"kind": "star"}"#,
        r#""pattern": "poisson", "load": 0.01"#,
    )
}

fn finished(json: &str) -> (Ethernet, EthernetSummary, EthernetTables) {
    let (ethernet, clock) = super::run_until(json, None);
    let (summary, tables) = ethernet.finish(&clock).expect("the ledger balances");
    (ethernet, summary, tables)
}

/// A Poisson source that never stops: thousands of flows through a few slots. The send and
/// receive slots a host holds stay at the flows in flight, the same over a run four times as
/// long (a host that never reused a slot would hold one per flow it ever opened or received).
#[test]
fn completed_flows_slots_are_reused_so_memory_does_not_grow_with_time() {
    let poisson = |duration_ns| {
        scenario(
            3,
            duration_ns,
            "dctcp",
            r#"{"kind": "star"}"#,
            r#""pattern": "poisson", "load": 0.4"#,
        )
    };
    let (_, short, _) = finished(&poisson(5_000_000));
    let (ethernet, long, _) = finished(&poisson(20_000_000));
    let (short, long) = (short.opened.unwrap(), long.opened.unwrap());
    assert!(
        long.detail.flows_opened > 1_000,
        "{}",
        long.detail.flows_opened
    );
    assert!(long.counts.timed_flows_completed > 1_000);
    let opened_per_host = long.detail.flows_opened as u32 / summary_hosts(&ethernet);
    assert!(
        long.detail.send_slots_peak < 40 && long.detail.send_slots_peak * 10 < opened_per_host,
        "{} slots for {opened_per_host} flows a host",
        long.detail.send_slots_peak
    );
    // Four times the flows, not four times the slots.
    assert!(long.detail.flows_opened > 3 * short.detail.flows_opened);
    assert!(long.detail.send_slots_peak <= 2 * short.detail.send_slots_peak.max(8));
    // Receive sides are freed as their flows complete: they too follow the flows in flight.
    assert!(long.detail.receive_slots_peak <= 2 * short.detail.receive_slots_peak.max(8));
    // Never more than the other hosts' slots.
    let slots: u32 = ethernet.hosts().map(|h| h.out.len() as u32).sum();
    for host in ethernet.hosts() {
        assert!(host.inflows.len() as u32 <= slots - host.out.len() as u32);
    }
    assert!(long.detail.receive_slots_peak * 10 < opened_per_host * summary_hosts(&ethernet));
}

/// TCP, DCTCP, NDP and DCQCN (on the ACK of each flow's last byte) open, complete and
/// account for the timed flows under background load.
#[test]
fn every_transport_that_opens_flows_completes_them() {
    for name in ["tcp", "dctcp", "ndp", "dcqcn"] {
        let (ethernet, summary, tables) = finished(&fct(1, 20_000_000, name));
        let fct = summary.opened.as_ref().unwrap().counts.clone();
        assert!(fct.timed_flows_started > 100, "{name}: {fct:?}");
        // All but those still in flight at the end.
        assert!(
            fct.timed_flows_completed + 10 >= fct.timed_flows_started,
            "{name}: {fct:?}"
        );
        let timed = &tables.timed_flows;
        assert_eq!(timed.src.len() as u64, fct.timed_flows_started);
        assert!(timed.dst.iter().all(|&d| d == 15));
        // No flow beats its ideal on one path; a sprayed one (NDP) by at most its largest
        // packet's store-and-forward at the five switches between pods (the last segment no
        // longer waits behind it).
        let spread_us = if name == "ndp" { 5.0 * 7.2 } else { 0.0 };
        for (fct_us, ideal_us) in timed.fct_us.iter().zip(&timed.ideal_us) {
            if let Some(fct_us) = fct_us {
                assert!(
                    *fct_us >= ideal_us - spread_us - 1e-6,
                    "{name}: {fct_us} < {ideal_us}"
                );
            }
        }
        // The timed receiver's bytes: every completed flow's, at least.
        let completed: u64 = timed
            .size_bytes
            .iter()
            .zip(&timed.fct_us)
            .filter(|(_, f)| f.is_some())
            .map(|(s, _)| s)
            .sum();
        let received: u64 = ethernet.hosts().nth(15).unwrap().bytes_received_measured();
        assert!(received >= completed, "{name}: {received} < {completed}");
        assert!(summary.packets.packets_delivered > 0);
    }
}

/// MPTCP's subflows are made at build: it refuses the patterns that open flows.
#[test]
fn mptcp_is_refused_for_flows_opened_during_a_run() {
    let json = fct(1, 1_000_000, "mptcp");
    let Err(e) = build(&json) else {
        panic!("built")
    };
    assert_eq!(e.key, "host.transport");
    assert!(e.to_string().contains("cannot open flows"), "{e}");
}

/// On an idle fabric (a star, 1% load), a flow within the initial window (10 segments) goes
/// out back to back at line rate and takes exactly its ideal time: its bytes at the host, its
/// largest segment's store-and-forward at the switch, two propagations.
#[test]
fn flows_within_the_initial_window_on_an_idle_fabric_take_their_ideal_time() {
    let json = idle_star("tcp");
    let (_, _, tables) = finished(&json);
    let t = &tables.timed_flows;
    let (mut exact, mut within, mut multi) = (0, 0, 0);
    for i in 0..t.src.len() {
        if let (true, Some(slowdown)) = (t.size_bytes[i] <= 10 * 9000, t.slowdown[i]) {
            within += 1;
            multi += (t.size_bytes[i] > 9000) as u32;
            exact += ((slowdown - 1.0).abs() < 1e-6) as u32;
        }
    }
    assert!(within > 20 && multi > 5, "{within}, {multi}");
    // Two flows at once on a host are rare at 1% load: nearly every one is exact.
    assert!(exact * 10 >= within * 9, "{exact} of {within}");
}

/// DCQCN starts every flow at line rate (Zhu et al. 2015 §3.3), so on an idle fabric (a star,
/// 1% load) a flow of any size, beyond a TCP initial window too, takes exactly its ideal time, learned from the receiver's one
/// ACK of its last byte; the run repeats exactly for its seed.
#[test]
fn dcqcn_flows_on_an_idle_fabric_take_their_ideal_time_on_one_ack_each() {
    let json = idle_star("dcqcn");
    let (_, summary, tables) = finished(&json);
    let t = &tables.timed_flows;
    let done: Vec<f64> = t.slowdown.iter().flatten().copied().collect();
    let exact = done.iter().filter(|s| (*s - 1.0).abs() < 1e-6).count();
    let large = (0..t.src.len())
        .filter(|&i| t.size_bytes[i] > 10 * 9000 && t.slowdown[i].is_some())
        .count();
    assert!(
        done.len() > 50 && large > 0,
        "{} done, {large} large",
        done.len()
    );
    assert!(exact * 10 >= done.len() * 9, "{exact} of {}", done.len());
    let opened = summary.opened.as_ref().unwrap();
    assert!(opened.counts.timed_flows_completed + 2 >= opened.counts.timed_flows_started);
    let again = finished(&json);
    assert_eq!(
        serde_json::to_string(&(summary, tables)).unwrap(),
        serde_json::to_string(&(again.1, again.2)).unwrap()
    );
}

/// The timed source's flows arrive at `fct_load` of its line rate: its measured arrival rate
/// is the load over the mean flow size, within four standard deviations of a Poisson count.
#[test]
fn the_poisson_source_offers_its_load() {
    let (_, summary, _) = finished(&fct(2, 40_000_000, "dctcp"));
    let opened = summary.opened.unwrap();
    let mean_bytes = crate::blocks::workload::FlowSizes::read("f", FB_WEBSERVER)
        .unwrap()
        .mean_bytes();
    let expected_per_s = 0.5 * 10e9 / (mean_bytes * 8.0);
    let expected = expected_per_s * 0.04;
    let got = opened.counts.timed_flows_started as f64;
    assert!(
        (got - expected).abs() < 4.0 * expected.sqrt(),
        "{got} flows, expected {expected}"
    );
}

#[test]
fn an_fct_run_is_determined_by_its_seed() {
    let summary = |seed| {
        let (_, summary, tables) = finished(&fct(seed, 5_000_000, "dctcp"));
        serde_json::to_string(&(summary, tables)).unwrap()
    };
    assert_eq!(summary(7), summary(7));
    assert_ne!(summary(7), summary(8));
}

/// A closed loop keeps its flows in flight: each host's slots never exceed them.
#[test]
fn a_closed_loop_keeps_its_flows_in_flight() {
    let json = scenario(
        4,
        10_000_000,
        "tcp",
        r#"{"kind": "fat_tree", "k": 4}"#,
        r#""pattern": "closed_loop", "flows_per_host": 3"#,
    );
    let (ethernet, summary, _) = finished(&json);
    let opened = summary.opened.unwrap();
    assert!(opened.counts.timed_flows_completed > 16 * 3 * 5);
    assert_eq!(opened.detail.send_slots_peak, 3);
    for host in ethernet.hosts() {
        let flows = host.opened.as_ref().unwrap();
        let open = flows.flows.len() as u64 - flows.completed;
        assert_eq!(open, 3, "a host keeps its three flows open");
    }
}

fn summary_hosts(ethernet: &Ethernet) -> u32 {
    ethernet.hosts().count() as u32
}
