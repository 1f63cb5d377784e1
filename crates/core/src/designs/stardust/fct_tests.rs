//! Transport hosts on Stardust's `fct` pattern (their flows opened during the run by the
//! Ethernet design's machinery): every transport that can open flows completes them with the
//! cell, packet and host-frame ledgers balanced and no cell dropped (no packet either over
//! adapters that pause their hosts), a flow within the initial
//! window on an idle fabric takes its ideal time plus the pull handshake, the timed source
//! offers its load, the same seed gives the same run, and the workload is the Ethernet
//! design's to the flow.

use super::*;
use crate::blocks::ethernet::opening::TimedTable;
use crate::engine::kernel::Kernel;
use report::{StardustSummary, StardustTables, TimedFlows};

const FB_WEBSERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../workloads/homasim_fb_webserver.txt"
);

/// The `fct` pattern on a k = 4 fat-tree, host 0 timing flows to host 15, hosts running
/// `transport` (NDP over adapters that pause their hosts).
fn fct(seed: u64, duration_ns: u64, transport: &str, design: &str) -> String {
    let paused = match transport {
        "ndp" => r#""adapter": {"pause_hosts": true},"#,
        _ => "",
    };
    format!(
        r#"{{"design": "{design}", "run": {{"seed": {seed}, "duration_ns": {duration_ns}, "warmup_ns": 0}},
            "topology": {{"kind": "fat_tree", "k": 4}}, "host": {{"transport": "{transport}"}}, {paused}
            "traffic": {{"pattern": "fct", "fct_src": 0, "fct_dst": 15, "fct_load": 0.5,
                         "flow_sizes": "{FB_WEBSERVER}", "background_flows": 2}}}}"#
    )
}

/// The run `json` describes, advanced to `until_ps` (its end: `None`) without a stall.
fn run_until(json: &str, until_ps: Option<TimePs>) -> (Stardust, Clock) {
    let stardust = build(json).unwrap();
    let end_ps = stardust.end_ps();
    let mut kernel = Kernel::new(stardust, end_ps);
    kernel.advance(until_ps.unwrap_or(end_ps));
    let (stardust, clock, deadlock) = kernel.into_parts();
    assert!(deadlock.is_none(), "{deadlock:?}");
    (stardust, clock)
}

fn finished(json: &str) -> (Stardust, StardustSummary, StardustTables) {
    let (stardust, clock) = run_until(json, None);
    let (summary, tables) = stardust.finish(&clock).expect("the ledgers balance");
    (stardust, summary, tables)
}

fn opened_table(tables: &StardustTables) -> &TimedTable {
    match &tables.timed_flows {
        TimedFlows::Opened(t) => t,
        TimedFlows::BuiltIn(_) => panic!("built-in sources' table"),
    }
}

/// TCP, DCTCP and NDP (over adapters that pause their hosts) open, complete and account for
/// the timed flows under background load; the pull fabric drops no cell, and NDP's lossless
/// path no packet.
#[test]
fn every_transport_that_opens_flows_completes_them() {
    for name in ["tcp", "dctcp", "ndp"] {
        let (stardust, summary, tables) = finished(&fct(1, 10_000_000, name, "stardust"));
        let counts = &summary.delivery.timed;
        assert!(counts.timed_flows_started > 50, "{name}: {counts:?}");
        assert!(
            counts.timed_flows_completed + 10 >= counts.timed_flows_started,
            "{name}: {counts:?}"
        );
        assert_eq!(summary.accounts.cells_dropped, 0, "{name}");
        if name == "ndp" {
            let dropped =
                summary.accounts.packets_dropped_ingress + summary.accounts.packets_dropped_egress;
            assert_eq!(
                dropped + summary.accounts.packets_dropped_fabric,
                0,
                "lossless"
            );
        }
        let opened = summary.delivery.opened.as_ref().expect("opened flows");
        // 14 background hosts of 2 unending flows each, beside the timed ones.
        assert_eq!(opened.flows_opened, counts.timed_flows_started + 28);
        let timed = opened_table(&tables);
        assert_eq!(timed.src.len() as u64, counts.timed_flows_started);
        assert!(timed.src.iter().all(|&s| s == 0) && timed.dst.iter().all(|&d| d == 15));
        let received: u64 = stardust.hosts().nth(15).unwrap().bytes_received_measured();
        let completed: u64 = timed
            .size_bytes
            .iter()
            .zip(&timed.fct_us)
            .filter_map(|(s, f)| f.map(|_| s))
            .sum();
        assert!(received >= completed, "{name}: {received} < {completed}");
        assert!(summary.delivery.goodput > 0.0);
    }
}

/// Halfway, with opened flows' packets in VOQs, cells and host cables, every ledger settles;
/// a frame counted as created but held nowhere breaks the host-frame ledger.
#[test]
fn a_miscounted_frame_of_an_opened_flow_fails_the_run() {
    let (mut stardust, clock) =
        run_until(&fct(1, 4_000_000, "tcp", "stardust"), Some(2_000_000_000));
    let (summary, _) = stardust.finish(&clock).expect("balanced");
    assert!(
        summary.accounts.packets_in_flight > 0 && summary.delivery.timed.timed_flows_started > 0
    );
    let sender = stardust.first_node_mut(|n| match n {
        StardustNode::Host(h) => Some(h),
        _ => None,
    });
    sender.counters.packets_created += 1;
    assert!(stardust.finish(&clock).is_err());
}

/// One seed, one run; another seed, another run.
#[test]
fn an_fct_run_is_determined_by_its_seed() {
    let summary = |seed| {
        let (_, summary, tables) = finished(&fct(seed, 3_000_000, "dctcp", "stardust"));
        serde_json::to_string(&(summary, tables)).unwrap()
    };
    assert_eq!(summary(7), summary(7));
    assert_ne!(summary(7), summary(8));
}

/// Pull and push run the same flows: the Ethernet design's timed flows, to the byte and the
/// picosecond of arrival, with the same ideals.
#[test]
fn the_workload_is_the_ethernet_designs_to_the_flow() {
    let (_, _, tables) = finished(&fct(2, 3_000_000, "tcp", "stardust"));
    let stardust = opened_table(&tables).clone();
    let (ethernet, clock) =
        crate::designs::ethernet::run_until(&fct(2, 3_000_000, "tcp", "ethernet"), None);
    let ethernet = ethernet.finish(&clock).unwrap().1.timed_flows;
    let n = stardust.src.len().min(ethernet.src.len());
    assert!(n > 20, "{n}");
    assert_eq!(stardust.size_bytes[..n], ethernet.size_bytes[..n]);
    assert_eq!(stardust.start_us[..n], ethernet.start_us[..n]);
    assert_eq!(stardust.ideal_us[..n], ethernet.ideal_us[..n]);
}

/// The timed source's flows arrive at `fct_load` of its line rate: its measured arrival rate
/// is the load over the mean flow size, within four standard deviations of a Poisson count.
#[test]
fn the_poisson_source_offers_its_load() {
    let (_, summary, _) = finished(&fct(2, 20_000_000, "tcp", "stardust"));
    let mean_bytes = crate::blocks::workload::FlowSizes::read("f", FB_WEBSERVER)
        .unwrap()
        .mean_bytes();
    let expected = 0.5 * 10e9 / (mean_bytes * 8.0) * 0.02;
    let got = summary.delivery.timed.timed_flows_started as f64;
    assert!(
        (got - expected).abs() < 4.0 * expected.sqrt(),
        "{got} flows, expected {expected}"
    );
}

/// Three adapters on one fabric element, a host each: host 0 times flows to host 2, and host
/// 1's background flows (which may go to host 0 only) cross none of their data's links.
fn idle(seed: u64, transport: &str) -> String {
    let topo = std::env::temp_dir().join(format!("cellfabric-idle-{}.topo", std::process::id()));
    std::fs::write(
        &topo,
        "switch a0 ports=2\nswitch a1 ports=2\nswitch a2 ports=2\nswitch fe ports=3\n\
         host h0\nhost h1\nhost h2\n\
         cable h0 a0:0\ncable h1 a1:0\ncable h2 a2:0\n\
         cable a0:1 fe:0\ncable a1:1 fe:1\ncable a2:1 fe:2\n",
    )
    .unwrap();
    format!(
        r#"{{"design": "stardust", "run": {{"seed": {seed}, "duration_ns": 50000000, "warmup_ns": 0}},
            "topology": {{"kind": "file", "file": "{}"}}, "host": {{"transport": "{transport}"}},
            "traffic": {{"pattern": "fct", "fct_src": 0, "fct_dst": 2, "fct_load": 0.01,
                         "flow_sizes": "{FB_WEBSERVER}", "background_flows": 1}}}}"#,
        topo.display()
    )
}

/// On an idle fabric (5% load, the background on other links), a flow within the initial
/// window (10 segments) goes out back to back and takes its ideal time (the Ethernet
/// design's, [`Stardust::opened_report`]) plus Stardust's pull handshake: one fabric round
/// trip of a request to the egress adapter and its credit back (four fabric link
/// traversals, each a propagation and a control cell), plus at most one credit's time at
/// line rate (the egress port's credit scheduler paces credits at one per credit of bytes),
/// within two cell times of scheduling. A flow of one cell that starts alone takes exactly
/// that; none takes less than its bytes at line rate and its path's propagation.
#[test]
fn flows_within_the_initial_window_on_an_idle_fabric_take_their_ideal_time_and_a_handshake() {
    // A VOQ that forfeits unused credit starts every flow with a handshake.
    let json = idle(5, "tcp")
        .replace("\"fct_load\": 0.01", "\"fct_load\": 0.05")
        .replace("50000000", "100000000")
        .replace(
            "\"host\":",
            "\"credit\": {\"unused\": \"forfeited\"}, \"host\":",
        );
    let (_, _, tables) = finished(&json);
    let t = opened_table(&tables);
    let ps = |bytes| serialization_ps(bytes, 10_000_000_000) as f64;
    let propagation_ps = 1e6;
    let handshake_ps = 4.0 * (propagation_ps + ps(24));
    let (low_ps, high_ps) = (
        handshake_ps - 2.0 * ps(256),
        handshake_ps + ps(2048) + 2.0 * ps(256),
    );
    let (mut within, mut bounded, mut alone) = (0, 0, 0);
    // When the latest of the earlier flows completed (unfinished: never).
    let mut busy_until_us = 0.0f64;
    for i in 0..t.src.len() {
        let Some(fct_us) = t.fct_us[i] else {
            busy_until_us = f64::INFINITY;
            continue;
        };
        let size = t.size_bytes[i];
        assert!(
            fct_us * 1e6 >= ps(size) + 4.0 * propagation_ps,
            "{size} B in {fct_us} us"
        );
        let starts_alone = t.start_us[i] > busy_until_us;
        busy_until_us = busy_until_us.max(t.start_us[i] + fct_us);
        if size > 10 * 9000 {
            continue;
        }
        within += 1;
        let excess_ps = (fct_us - t.ideal_us[i]) * 1e6;
        bounded += (excess_ps <= high_ps) as u32;
        if size <= 240 && starts_alone {
            alone += 1;
            assert!(
                low_ps <= excess_ps && excess_ps <= high_ps,
                "{size} B alone: {fct_us} us, ideal {} us",
                t.ideal_us[i]
            );
        }
    }
    assert!(within > 50 && alone > 10, "{within}, {alone}");
    // Two flows at once are rare at 5% load: nearly every one is within the bound.
    assert!(bounded * 10 >= within * 9, "{bounded} of {within}");
}

/// Reading R7's kept balance: a flow of one cell that finds its VOQ holding what the previous
/// flow left of a credit goes at once, with no handshake: never later than the bound above,
/// and most such flows well under it.
#[test]
fn a_kept_balance_spares_small_flows_the_handshake() {
    let json = idle(5, "tcp")
        .replace("\"fct_load\": 0.01", "\"fct_load\": 0.05")
        .replace("50000000", "100000000");
    let (_, _, tables) = finished(&json);
    let t = opened_table(&tables);
    let ps = |bytes| serialization_ps(bytes, 10_000_000_000) as f64;
    let handshake_ps = 4.0 * (1e6 + ps(24));
    let (mut alone, mut spared) = (0, 0);
    let mut busy_until_us = 0.0f64;
    for i in 0..t.src.len() {
        let Some(fct_us) = t.fct_us[i] else {
            busy_until_us = f64::INFINITY;
            continue;
        };
        let starts_alone = t.start_us[i] > busy_until_us;
        busy_until_us = busy_until_us.max(t.start_us[i] + fct_us);
        if t.size_bytes[i] <= 240 && starts_alone {
            alone += 1;
            let excess_ps = (fct_us - t.ideal_us[i]) * 1e6;
            assert!(excess_ps <= handshake_ps + ps(2048) + 2.0 * ps(256));
            spared += (excess_ps < handshake_ps / 2.0) as u32;
        }
    }
    assert!(
        alone > 10 && spared * 2 > alone,
        "{spared} of {alone} spared the handshake"
    );
}
