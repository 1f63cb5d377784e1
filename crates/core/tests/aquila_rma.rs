//! 1RMA on GNet in Aquila's Clique (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22, §3.4, §5.1): hosts read 4 KB from each other by a 48-byte
//! Req and one Resp cell per 64-byte PCIe completion, over VC routers whose flits are 16 bytes.
//! Every read commanded completes once the hosts stop, the latency is no less than its parts,
//! high-priority reads on VCs of their own keep their latency under bulk IP while
//! low-priority reads on the bulk VCs do not, runs are deterministic, and bad settings are
//! refused by key.

mod clique;

use clique::{build, run, MODES};

/// The five classes of our reading of the paper's set (RTS; CTS and CTD; Req; Resp of
/// high-priority reads; IP data with Resp of low-priority reads), 3 routing VCs each.
const FIVE_CLASSES: &str = r#"[["rts"], ["cts"], ["req"], ["resp_high"], ["ip_data", "resp_low"]]"#;

/// Six pods of four TiNs with two hosts each (48 hosts), hosts at 50 Gb/s, GNet links at
/// 25 Gb/s, iSLIP VC routers with 16-byte flits and 3 routing VCs per class, Fully Adaptive;
/// bulk IP at `ip_load`, reads at `rma`'s keys, `gnet` the gnet section's extra keys.
fn clique(ip_load: f64, rma: &str, gnet: &str) -> String {
    let classes = match gnet.contains("vc_classes") {
        true => 5,
        false => 2,
    };
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": 30000, "warmup_ns": 5000}},
            "topology": {{"kind": "clique", "global_propagation_ns": 250,
                "clique": {{"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 3}}}},
            "routing": {{"mode": "aquila_fully_adaptive"}},
            "switch": {{"scheduler": "vc_islip", "pipeline_ns": 40}},
            "vc": {{"count": {}, "classes": {classes}, "assignment": "global_local_increment", "buffer_cells": 160}},
            "link": {{"rate_gbps": 50, "propagation_ns": 2, "flow_control": "credit"}},
            "cell": {{"size_bytes": 16, "payload_bytes": 8}},
            "traffic": {{"load": {ip_load}, "destinations": "uniform"}},
            "gnet": {{"packet_bytes": 4096 {gnet}}},
            "rma": {{"read_bytes": 4096 {rma}}}}}"#,
        classes * 3
    )
}

/// The hosts stop at 10 µs and the run goes on to 30 µs: every read commanded has
/// completed, every Req and Resp flit sent was received, and each read had 64 Resps.
#[test]
fn every_read_completes_once_the_hosts_stop() {
    let s = run(&clique(0.3, r#", "load": 0.3"#, r#", "stop_ns": 10000"#));
    let g = s.gnet.expect("a GNet summary");
    let r = g.rma.expect("an RMA summary");
    assert!(r.rma_reads_issued > 50, "{r:?}");
    assert_eq!(r.rma_reads_completed, r.rma_reads_issued);
    assert_eq!(r.rma_reads_outstanding, 0);
    assert_eq!(r.rma_resp_cells_received, 64 * r.rma_reads_issued);
    let f = &r.flits;
    assert_eq!(
        f.rma_req_flits_injected,
        3 * r.rma_reads_issued,
        "48-byte Reqs"
    );
    assert_eq!(
        f.rma_resp_flits_injected,
        5 * 64 * r.rma_reads_issued,
        "80-byte Resps"
    );
    assert_eq!(f.rma_resp_flits_injected, f.rma_resp_flits_delivered);
    assert_eq!(f.rma_req_flits_in_flight + f.rma_resp_flits_in_flight, 0);
    assert_eq!(
        g.packets.gnet_packets_held, 0,
        "IP beside the reads drains too"
    );
}

/// At 5% load a read costs at least the client's host term, the server's PCIe read and its
/// 64 Resps of 80 bytes on the server's 50 Gb/s link (819.2 ns), and little more: the Req's
/// and last Resp's trips across at most two pods.
#[test]
fn a_read_costs_its_parts_at_low_load() {
    let rma = r#", "load": 0.05, "remote_read_ns": 500, "host_latency_ns": 1000"#;
    let s = run(&clique(0.0, rma, ""));
    let r = s.gnet.unwrap().rma.unwrap();
    let floor_ns = 1000.0 + 500.0 + 64.0 * 12.8;
    let l = &r.rma_read_latency_ns;
    assert!(l.samples > 30, "{l:?}");
    assert!(l.p1 >= floor_ns, "{l:?} against {floor_ns}");
    assert!(l.p50 < floor_ns + 2_000.0, "{l:?}");
    assert!(r.rma_req_wait_mean_ns < 50.0, "{r:?}");
}

/// Bulk IP at 80% of line rate beside reads at 5%: reads whose Resps ride VCs of their own
/// (high priority) keep near their latency without the bulk, while reads on the bulk IP's
/// VCs (low priority) queue behind its data cells (Fig. 9, §5.1).
#[test]
fn high_priority_reads_are_isolated_from_bulk_ip() {
    let layout = format!(r#", "vc_classes": {FIVE_CLASSES}"#);
    let p50 = |ip_load: f64, priority: &str| {
        let rma = format!(r#", "load": 0.05, "priority": "{priority}""#);
        let s = run(&clique(ip_load, &rma, &layout));
        s.gnet.unwrap().rma.unwrap().rma_read_latency_ns.p50
    };
    let (high_alone, high_bulk) = (p50(0.0, "high"), p50(0.8, "high"));
    let low_bulk = p50(0.8, "low");
    // Seed 5: 3.33, 4.39 and 9.83 µs. The high-priority reads still meet the bulk in the
    // TiNs' crossbars, whose iSLIP serves every VC alike (§3.1), and, cells crossing whole,
    // a Resp waits for the data cell holding its crossbar port busy or its link (up to ten
    // flit times a hop), hence the 32% (17% when flits of the classes interleaved).
    assert!(
        high_bulk < 1.4 * high_alone,
        "{high_bulk} against {high_alone}"
    );
    assert!(low_bulk > 2.0 * high_bulk, "{low_bulk} against {high_bulk}");
}

/// Every routing mode with reads at full load beside bulk IP at half, on the five classes:
/// no deadlock, no fabric drop, and the accounts settle (`run` fails otherwise).
#[test]
fn no_mode_deadlocks_with_reads_at_full_load() {
    let layout = format!(r#", "vc_classes": {FIVE_CLASSES}"#);
    for mode in MODES {
        let json = clique(0.5, r#", "load": 1.0"#, &layout).replace("aquila_fully_adaptive", mode);
        let s = run(&json);
        let r = s.gnet.unwrap().rma.unwrap();
        assert!(r.rma_reads_completed > 100, "{mode}: {r:?}");
        assert_eq!(s.cells.cells_dropped, 0, "{mode}");
    }
}

/// The same scenario and seed give the same summary.
#[test]
fn runs_are_deterministic() {
    let json = clique(0.4, r#", "load": 0.2"#, "");
    let a = serde_json::to_string(&run(&json)).unwrap();
    let b = serde_json::to_string(&run(&json)).unwrap();
    assert_eq!(a, b);
}

/// A load, size or layout out of range is refused with the key named.
#[test]
fn bad_rma_settings_are_refused_with_the_key_named() {
    for (rma, key) in [
        (r#", "load": 0"#, "rma.load"),
        (r#", "load": 1.5"#, "rma.load"),
        (r#", "completion_bytes": 150"#, "rma.completion_bytes"),
        (r#", "completion_bytes": 62"#, "rma.completion_bytes"),
        (r#", "read_bytes": 0"#, "rma.read_bytes"),
        (r#", "remote_read_ns": -1"#, "rma.remote_read_ns"),
    ] {
        let error = build(&clique(0.2, rma, "")).err().unwrap_or_default();
        assert!(error.starts_with(&format!("{key}: ")), "{rma}: {error}");
    }
    let twice =
        r#", "vc_classes": [["rts", "cts"], ["cts", "ip_data", "req", "resp_high", "resp_low"]]"#;
    let error = build(&clique(0.2, "", twice)).err().unwrap_or_default();
    assert!(error.starts_with("gnet.vc_classes: "), "{error}");
    let five = format!(r#", "vc_classes": {FIVE_CLASSES}"#);
    let mismatched = clique(0.2, "", &five).replace(r#""classes": 5"#, r#""classes": 3"#);
    let error = build(&mismatched.replace(r#""count": 15"#, r#""count": 9"#))
        .err()
        .unwrap_or_default();
    assert!(
        error.starts_with("vc.classes: gnet.vc_classes lays out 5"),
        "{error}"
    );
    let cramped = clique(0.2, "", &five).replace(r#""count": 15"#, r#""count": 10"#);
    let error = build(&cramped).err().unwrap_or_default();
    assert!(
        error.starts_with("vc.count: expected at least 3 VCs per class (5 classes)"),
        "{error}"
    );
    let without_gnet = clique(0.2, "", "").replace(r#""gnet": {"packet_bytes": 4096 },"#, "");
    let error = build(&without_gnet).err().unwrap_or_default();
    assert!(
        error.starts_with("rma: 1RMA reads are GNet cells"),
        "{error}"
    );
}
