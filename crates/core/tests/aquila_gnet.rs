//! IP over GNet in Aquila's Clique (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22, §3.3, Fig. 3): hosts send 4 KB packets by RTS/CTS over VC
//! routers whose flits are 16 bytes, RTS, CTS and CTD on their own high-priority VC class.
//! Every admitted packet is released or dropped by CTD once the hosts stop, releases follow
//! each flow's RTS order, no routing mode deadlocks at full load under uniform traffic or the
//! pod shift, and runs are deterministic.

mod clique;

use clique::{build, run, MODES};

/// Six pods of four TiNs with two hosts each (48 hosts), two local links per TiN pair, two
/// links per pod pair, hosts at 50 Gb/s and GNet links at 25 Gb/s; iSLIP VC routers with
/// 16-byte flits, 3 routing VCs per class and 2 classes; `gnet` the section's extra keys.
fn clique(mode: &str, destinations: &str, load: f64, gnet: &str) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": 30000, "warmup_ns": 5000}},
            "topology": {{"kind": "clique", "global_propagation_ns": 250,
                "clique": {{"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 3}}}},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "vc_islip", "pipeline_ns": 40}},
            "vc": {{"count": 6, "classes": 2, "assignment": "global_local_increment", "buffer_cells": 160}},
            "link": {{"rate_gbps": 50, "propagation_ns": 2, "flow_control": "credit"}},
            "cell": {{"size_bytes": 16, "payload_bytes": 8}},
            "traffic": {{"load": {load}, "destinations": "{destinations}"}},
            "gnet": {{"packet_bytes": 4096 {gnet}}}}}"#
    )
}

/// The hosts stop at 10 µs and the run goes on to 30 µs: every packet admitted has been
/// released or dropped by CTD, nothing is held or in flight, and releases kept RTS order.
#[test]
fn every_admitted_packet_is_released_or_dropped_by_ctd_in_rts_order() {
    // A small RTS queue and CTD threshold so that an incast-heavy pattern draws CTDs.
    let gnet = r#", "stop_ns": 10000, "rts_queue_rts": 4, "ctd_threshold_rts": 2, "ecn_threshold_rts": 1, "fetch_window_packets": 2"#;
    for destinations in ["uniform", "group_shift"] {
        let s = run(&clique("aquila_fully_adaptive", destinations, 0.9, gnet));
        let g = s.gnet.as_ref().expect("a GNet summary");
        let p = &g.packets;
        assert!(p.gnet_packets_generated > 100, "{destinations}: {p:?}");
        assert_eq!(p.gnet_packets_dropped_ingress_full, 0);
        assert_eq!(
            p.gnet_packets_released + p.gnet_packets_dropped_ctd,
            p.gnet_packets_generated,
            "{destinations}: {p:?}"
        );
        assert_eq!(p.gnet_packets_held, 0);
        assert_eq!(p.gnet_packets_out_of_rts_order, 0, "{destinations}");
        let f = &g.flits;
        assert_eq!(f.control_flits_in_flight + f.data_flits_in_flight, 0);
        assert_eq!(f.control_flits_injected, f.control_flits_delivered);
        // RTS, CTS or CTD per packet, and a CTS per packet released.
        assert!(f.control_flits_injected >= 2 * p.gnet_packets_generated);
        assert_eq!(s.cells.cells_dropped, 0, "CTD drops are not fabric losses");
    }
    let shift = run(&clique("aquila_fully_adaptive", "group_shift", 0.9, gnet));
    let p = &shift.gnet.unwrap().packets;
    assert!(
        p.gnet_packets_dropped_ctd > 0,
        "the pod shift fills RTS queues: {p:?}"
    );
}

/// Every mode at offered 1.0 under uniform traffic and the pod shift: no deadlock, no fabric
/// drop, packets released in RTS order, and the accounts settle (`run` fails otherwise).
#[test]
fn no_mode_deadlocks_at_full_load() {
    for mode in MODES {
        for destinations in ["uniform", "group_shift"] {
            let s = run(&clique(mode, destinations, 1.0, ""));
            let p = &s.gnet.as_ref().unwrap().packets;
            assert!(p.gnet_packets_released > 50, "{mode} {destinations}: {p:?}");
            assert_eq!(p.gnet_packets_out_of_rts_order, 0, "{mode} {destinations}");
            assert_eq!(s.cells.cells_dropped, 0);
        }
    }
}

/// The same scenario and seed give the same summary.
#[test]
fn runs_are_deterministic() {
    let json = clique("aquila_fully_adaptive", "uniform", 0.6, "");
    let a = serde_json::to_string(&run(&json)).unwrap();
    let b = serde_json::to_string(&run(&json)).unwrap();
    assert_eq!(a, b);
}

/// Control cells go ahead of data: at 70% load an RTS waits at its source for at most a
/// flit or two, while data cells queue behind the host's granted packets.
#[test]
fn control_cells_have_priority_over_data() {
    let s = run(&clique("aquila_fully_adaptive", "uniform", 0.7, ""));
    let g = s.gnet.unwrap();
    assert!(
        g.gnet_rts_wait_mean_ns < 10.0,
        "{}",
        g.gnet_rts_wait_mean_ns
    );
    assert!(g.gnet_packet_latency_ns.p50 > 0.0);
}

/// A host's data cells spread over two endpoint ports (two input FIFOs at its TiN, §3.1)
/// wait less at their source at full load than over one, where a data cell waiting at the
/// head of the host's one FIFO holds back the cells behind it, and carry as much (within 1%:
/// on this small Clique the global links, not the FIFOs, bound what full load carries); the
/// accounts close either way (`run` fails otherwise) and RTS order holds.
#[test]
fn endpoint_ports_relieve_head_of_line_blocking_at_the_tin() {
    let at = |ports: u16| {
        let extra = format!(r#", "endpoint_ports": {ports}"#);
        let s = run(&clique("aquila_fully_adaptive", "uniform", 1.0, &extra));
        let g = s.gnet.expect("a GNet summary");
        assert_eq!(g.packets.gnet_packets_out_of_rts_order, 0, "{ports} ports");
        (s.rates.throughput, g.gnet_data_wait_mean_ns)
    };
    let (one, two) = (at(1), at(2));
    assert!(two.0 > 0.99 * one.0, "carried: {two:?} against {one:?}");
    assert!(two.1 < one.1, "data wait: {two:?} against {one:?}");
}

/// Each key of the section, and what it needs of the others, refused with the key named.
/// Whole cells and flit by flit carry the same packets (the hosts stop at 10 µs of 30, so
/// every packet is released) with the flit ledgers settled in both; switching whole cells
/// moves the same flits in fewer events and fewer flow-control signals (one credit message
/// per cell instead of one per flit).
#[test]
fn whole_cells_and_flits_carry_the_same_packets() {
    let gnet = r#", "stop_ns": 10000"#;
    let whole = run(&clique("aquila_fully_adaptive", "uniform", 0.7, gnet));
    let flits = clique("aquila_fully_adaptive", "uniform", 0.7, gnet).replace(
        r#""classes": 2"#,
        r#""classes": 2, "switching_unit": "flit""#,
    );
    let flits = run(&flits);
    let (w, f) = (whole.gnet.unwrap(), flits.gnet.unwrap());
    assert_eq!(
        w.packets.gnet_packets_generated,
        f.packets.gnet_packets_generated
    );
    assert_eq!(
        w.packets.gnet_packets_released,
        w.packets.gnet_packets_generated
    );
    assert_eq!(
        f.packets.gnet_packets_released,
        f.packets.gnet_packets_generated
    );
    assert_eq!(w.flits.data_flits_injected, f.flits.data_flits_injected);
    assert_eq!(w.flits.data_flits_delivered, w.flits.data_flits_injected);
    assert!(
        whole.run.events * 2 < flits.run.events,
        "{} against {}",
        whole.run.events,
        flits.run.events
    );
}

#[test]
fn bad_gnet_settings_are_refused_with_the_key_named() {
    let base = |extra: &str| clique("aquila_fully_adaptive", "uniform", 0.5, extra);
    for (extra, key) in [
        (r#", "packet_bytes": 0"#, "gnet.packet_bytes"),
        (
            r#", "rts_queue_rts": 8, "ctd_threshold_rts": 9, "ecn_threshold_rts": 1"#,
            "gnet.ctd_threshold_rts",
        ),
        (
            r#", "fetch_window_packets": 0"#,
            "gnet.fetch_window_packets",
        ),
        (r#", "reassembly_bytes": 1000"#, "gnet.reassembly_bytes"),
        (
            r#", "ingress_buffer_bytes": 1000"#,
            "gnet.ingress_buffer_bytes",
        ),
        (r#", "ecn_threshold_rts": 65"#, "gnet.ecn_threshold_rts"),
        (r#", "stop_ns": -1"#, "gnet.stop_ns"),
        (r#", "endpoint_ports": 0"#, "gnet.endpoint_ports"),
        (r#", "endpoint_ports": 4"#, "gnet.endpoint_ports"),
        (r#", "classes_of_service": []"#, "gnet.classes_of_service"),
        (
            r#", "classes_of_service": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2]"#,
            "gnet.classes_of_service",
        ),
        (
            r#", "classes_of_service": [0.5, 0.4]"#,
            "gnet.classes_of_service",
        ),
        (
            r#", "classes_of_service": [1.5, -0.5]"#,
            "gnet.classes_of_service",
        ),
        (
            r#", "classes_of_service": [0.5, 0.5], "vc_classes": [["rts", "cts"], ["ip_data_2"], ["ip_data", "req", "resp_high", "resp_low"]]"#,
            "gnet.vc_classes",
        ),
    ] {
        let error = build(&base(extra)).err().unwrap_or_default();
        assert!(error.starts_with(&format!("{key}: ")), "{extra}: {error}");
    }
    // A stop after the run's end (a run cut short) stops nothing, and is no error.
    assert!(build(&base(r#", "stop_ns": 40000"#)).is_ok());
    let one_class = base("").replace(r#""classes": 2"#, r#""classes": 1"#);
    let error = build(&one_class).err().unwrap_or_default();
    assert!(error.starts_with("vc.classes: "), "{error}");
    let odd = base("").replace(r#""count": 6"#, r#""count": 5"#);
    let error = build(&odd).err().unwrap_or_default();
    assert!(error.starts_with("vc.classes: "), "{error}");
    let too_few = base("").replace(r#""count": 6"#, r#""count": 4"#);
    let error = build(&too_few).err().unwrap_or_default();
    assert!(
        error.starts_with("vc.count: expected at least 3 VCs per class"),
        "{error}"
    );
    let sized = base("").replace(r#""load": 0.5"#, r#""load": 0.5, "packet_bytes": 64"#);
    let error = build(&sized).err().unwrap_or_default();
    assert!(error.starts_with("traffic: "), "{error}");
    let unit = base("").replace(
        r#""classes": 2"#,
        r#""classes": 2, "switching_unit": "packet""#,
    );
    let error = build(&unit).err().unwrap_or_default();
    assert!(
        error.contains("vc.switching_unit") && error.contains("cell"),
        "{error}"
    );
}

/// The summary and `gnet_classes` table (null where there is none) of `json`.
fn summary_and_classes(json: &str) -> (serde_json::Value, serde_json::Value) {
    let mut sim = cellfabric_core::build(json).expect("valid scenario");
    sim.advance(u64::MAX);
    let report = sim.finish().expect("run keeps its invariants");
    let classes = report.tables["gnet_classes"].clone();
    (report.summary, classes)
}

/// Every host sends `hot_fraction` of its packets to host 0 and the rest to uniformly random
/// hosts at 30% load, the packets in classes of service by `shares`; the hosts stop at 60 µs
/// of 120 (time for the queues at host 0 to drain). Host 0's port is offered 48 × 0.3 × (f + (1 − f) / 48) of its rate: 1.71 for
/// f = 0.1, 0.86 for f = 0.04.
fn hot_host(hot_fraction: f64, shares: &str) -> String {
    let gnet = format!(r#", "stop_ns": 60000, "classes_of_service": {shares}"#);
    clique("aquila_fully_adaptive", "hotspot", 0.3, &gnet)
        .replace(r#""duration_ns": 30000"#, r#""duration_ns": 120000"#)
        .replace(
            r#""destinations": "hotspot""#,
            &format!(r#""destinations": "hotspot", "hotspot_fraction": {hot_fraction}"#),
        )
}

/// A column of a table as numbers (NaN where null: nothing measured).
fn column(table: &serde_json::Value, name: &str) -> Vec<f64> {
    let values = table[name].as_array().expect("a column");
    values
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect()
}

/// The mean over the classes of `name`, weighted by the packets each released.
fn weighted_mean(table: &serde_json::Value, name: &str) -> f64 {
    let (values, released) = (column(table, name), column(table, "packets_released"));
    let weighted: f64 = values.iter().zip(&released).map(|(v, n)| v * n).sum();
    weighted / released.iter().sum::<f64>()
}

/// IP classes of service (§3.3) at a hot egress offered 1.71 of its port: the CTS scheduler
/// grants class 0 first, so class 0 (half the packets, 0.86 of the port) waits little from RTS
/// to CTS and loses nothing, while class 1 takes every CTD; each class carries its share of
/// the packets, every packet is released or dropped by CTD, in RTS order within its flow; one
/// class and a second class with no packets give the same run, without a class table.
#[test]
fn the_cts_scheduler_grants_classes_of_service_by_strict_priority() {
    let (one, none) = summary_and_classes(&hot_host(0.1, "[1.0]"));
    assert!(none.is_null(), "one class: no class table");
    let (with_empty, fifo) = summary_and_classes(&hot_host(0.1, "[1.0, 0.0]"));
    let strip = |s: &serde_json::Value| {
        let mut s = s.clone();
        s.as_object_mut().unwrap().remove("perf");
        s
    };
    assert_eq!(
        strip(&one),
        strip(&with_empty),
        "an empty class changes nothing"
    );
    assert_eq!(fifo["packets_released"][1], 0);
    assert!(fifo["latency_mean_ns"][1].is_null() && fifo["rts_to_cts_mean_ns"][1].is_null());
    let (summary, table) = summary_and_classes(&hot_host(0.1, "[0.5, 0.5]"));
    assert_eq!(summary["gnet_packets_out_of_rts_order"], 0);
    assert_eq!(summary["gnet_packets_held"], 0);
    let generated = summary["gnet_packets_generated"].as_u64().unwrap();
    let released = summary["gnet_packets_released"].as_u64().unwrap();
    let ctd = summary["gnet_packets_dropped_ctd"].as_u64().unwrap();
    assert_eq!(released + ctd, generated);
    let released = column(&table, "packets_released");
    let share_0 = released[0] / (released[0] + released[1]);
    assert!((share_0 - 0.5).abs() < 0.05, "{released:?}");
    let ctd = column(&table, "packets_dropped_ctd");
    assert!(ctd[0] == 0.0 && ctd[1] > 0.0, "CTDs {ctd:?}");
    let wait = column(&table, "rts_to_cts_mean_ns");
    assert!(wait[0] < 0.75 * wait[1], "RTS to CTS {wait:?}");
    let (latency, p99) = (
        column(&table, "latency_mean_ns"),
        column(&table, "latency_p99_ns"),
    );
    assert!(latency[0] < latency[1], "latency {latency:?}");
    assert!(p99[0] < 0.75 * p99[1], "p99 {p99:?}");
}

/// Kleinrock's conservation law: packets of one size under a scheduler that idles no sooner for
/// one class than another wait as long on average, whichever class goes first. Below
/// saturation (host 0's port at 0.86, no CTD), the mean time from RTS to CTS over the two
/// classes is that of one class, within 3%.
#[test]
fn classes_of_service_keep_the_mean_wait_of_one_class() {
    let (summary, fifo) = summary_and_classes(&hot_host(0.04, "[1.0, 0.0]"));
    assert_eq!(summary["gnet_packets_dropped_ctd"], 0);
    let one_class = column(&fifo, "rts_to_cts_mean_ns")[0];
    for shares in ["[0.5, 0.5]", "[0.2, 0.8]"] {
        let (summary, table) = summary_and_classes(&hot_host(0.04, shares));
        assert_eq!(summary["gnet_packets_dropped_ctd"], 0);
        let mean = weighted_mean(&table, "rts_to_cts_mean_ns");
        assert!(
            (mean / one_class - 1.0).abs() < 0.03,
            "{shares}: {mean} against {one_class}"
        );
        let wait = column(&table, "rts_to_cts_mean_ns");
        assert!(wait[0] <= wait[1], "{shares}: {wait:?}");
    }
}

/// The data cells of class of service 0 on a VC class of their own (`ip_data_0`, ahead of the
/// others' by strict priority) at 70% uniform load: traced, they cross on that class's VCs and
/// the others' data on the last class's; class 0's packets wait less than class 1's;
/// with three more VCs, an input FIFO more per port, the head-of-line blocking of a shared
/// data class thins and the run answers no more CTDs than with one data class.
#[test]
fn a_class_of_service_on_vcs_of_its_own_goes_first_through_the_fabric() {
    let shared = clique(
        "aquila_fully_adaptive",
        "uniform",
        0.7,
        r#", "stop_ns": 60000, "classes_of_service": [0.5, 0.5]"#,
    )
    .replace(r#""duration_ns": 30000"#, r#""duration_ns": 120000"#);
    let apart = shared
        .replace(r#""count": 6, "classes": 2"#, r#""count": 9, "classes": 3"#)
        .replace(
            r#""classes_of_service": [0.5, 0.5]"#,
            r#""classes_of_service": [0.5, 0.5], "vc_classes": [["rts", "cts"], ["ip_data_0"], ["ip_data", "req", "resp_high", "resp_low"]]"#,
        );
    let (shared_summary, _) = summary_and_classes(&shared);
    // A tenth of the cells traced: class 0's data cells cross on the second class's VCs (3 to
    // 5), the others' on the third's (6 to 8).
    let traced = apart.replacen(r#""run": {"#, r#""trace": {"fraction": 0.1}, "run": {"#, 1);
    let mut sim = cellfabric_core::build(&traced).expect("valid scenario");
    sim.advance(u64::MAX);
    let report = sim.finish().expect("run keeps its invariants");
    let vcs = column(&report.tables["cell_trace"], "vc");
    let on =
        |range: std::ops::RangeInclusive<f64>| vcs.iter().filter(|v| range.contains(v)).count();
    assert!(
        on(3.0..=5.0) > 100 && on(6.0..=8.0) > 100,
        "{} {}",
        on(3.0..=5.0),
        on(6.0..=8.0)
    );
    let (summary, table) = summary_and_classes(&apart);
    assert_eq!(summary["gnet_packets_held"], 0);
    assert_eq!(summary["gnet_packets_out_of_rts_order"], 0);
    let latency = column(&table, "latency_mean_ns");
    assert!(latency[0] < latency[1], "latency {latency:?}");
    let ctd = |s: &serde_json::Value| s["gnet_packets_dropped_ctd"].as_u64().unwrap();
    let (apart_ctd, shared_ctd) = (ctd(&summary), ctd(&shared_summary));
    assert!(apart_ctd <= shared_ctd, "{apart_ctd} against {shared_ctd}");
}

/// Flit by flit (`vc.switching_unit = "flit"`: a data cell is ten flits, each its own credit
/// and wire hop), class 0's data on a VC class of its own is sent whole on its VC before
/// another cell starts there: every packet is released or answered CTD, nothing is held, and
/// the flit ledgers settle (the run fails otherwise).
#[test]
fn a_class_of_service_apart_crosses_flit_by_flit_too() {
    let apart = clique(
        "aquila_fully_adaptive",
        "uniform",
        0.7,
        r#", "stop_ns": 20000, "classes_of_service": [0.5, 0.5], "vc_classes": [["rts", "cts"], ["ip_data_0"], ["ip_data", "req", "resp_high", "resp_low"]]"#,
    )
    .replace(
        r#""count": 6, "classes": 2"#,
        r#""count": 9, "classes": 3, "switching_unit": "flit""#,
    )
    .replace(r#""duration_ns": 30000"#, r#""duration_ns": 60000"#);
    let (summary, table) = summary_and_classes(&apart);
    assert_eq!(summary["gnet_packets_held"], 0, "{summary}");
    let generated = summary["gnet_packets_generated"].as_u64().unwrap();
    let released = summary["gnet_packets_released"].as_u64().unwrap();
    let ctd = summary["gnet_packets_dropped_ctd"].as_u64().unwrap();
    assert_eq!(released + ctd, generated);
    assert!(
        column(&table, "packets_released").iter().all(|&n| n > 50.0),
        "{table}"
    );
}
