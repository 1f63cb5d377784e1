//! RIFL Layer 2 runs: the paper's Table I (Shen and Chow 2023) at light load, losslessness, rack
//! routing, the scenario rules RIFL adds, and determinism.

use cellfabric_core::blocks::cell::Cell;
use cellfabric_core::blocks::routing::{LocalView, Router};
use cellfabric_core::blocks::topology::{Attachment, Topology};
use cellfabric_core::designs::rifl::router::RiflRouter;
use cellfabric_core::designs::rifl::{self};
use cellfabric_core::engine::stats::binomial_band;
use cellfabric_core::{Scenario, Summary};

/// `scenarios/rifl/table1.toml` as JSON, with `extra` merged into its sections.
fn table1(extra: &[(&str, &str, &str)]) -> String {
    let mut v: serde_json::Value = serde_json::from_str(
        r#"{"design": "rifl",
            "run": {"seed": 1, "duration_ns": 1267200, "warmup_ns": 105600},
            "switch": {"ports": 32, "scheduler": "islip", "iterations": 3, "buffer_cells": 24, "pipeline_ns": 42.24},
            "link": {"rate_gbps": 100.0, "propagation_ns": 147.84, "flow_control": "onoff", "off_threshold_cells": 8, "on_threshold_cells": 4},
            "cell": {"size_bytes": 264, "payload_bytes": 256},
            "nic": {"queue_cells": 8},
            "traffic": {"load": 0.3, "arrival": "bernoulli", "include_self": false, "packet_bytes": 256}}"#,
    )
    .unwrap();
    for &(section, key, value) in extra {
        v[section][key] = serde_json::from_str(value).unwrap();
    }
    v.to_string()
}

fn run(json: &str) -> Summary {
    let scenario = Scenario::from_json(json).expect("valid scenario");
    let (s, _) = rifl::build(&scenario)
        .expect("valid RIFL scenario")
        .run()
        .expect("run keeps its invariants");
    assert_eq!(
        s.cells.cells_injected,
        s.cells.cells_delivered + s.cells.cells_dropped + s.cells.cells_in_flight
    );
    assert_eq!(
        s.hosts.cells_out_of_order,
        Some(0),
        "cells of a pair arrive in order"
    );
    assert_eq!(
        s.switching.internal_blocking, 0,
        "a matching never blocks the Batcher-Banyan network"
    );
    s
}

/// Table I, Bernoulli 30%: iSLIP 18 18 18 19 20 21 30 and SAFC 18 18 18 19 19 20 30 (cell times
/// at the 1st ... 99th percentiles and the maximum). Our run is shorter than the paper's, so the
/// maximum is only bounded.
#[test]
fn light_load_latency_matches_table_one() {
    for (scheduler, paper) in [
        ("islip", [18.0, 18.0, 18.0, 19.0, 20.0, 21.0]),
        ("safc", [18.0, 18.0, 18.0, 19.0, 19.0, 20.0]),
    ] {
        let s = run(&table1(&[(
            "switch",
            "scheduler",
            &format!("\"{scheduler}\""),
        )]));
        let l = s.latency.latency_cells;
        let ours = [l.p1, l.p50, l.p75, l.p90, l.p95, l.p99];
        for (q, (o, p)) in ours.iter().zip(paper).enumerate() {
            assert!(
                (o - p).abs() <= 1.0,
                "{scheduler} percentile #{q}: {o} vs {p}"
            );
        }
        assert!(l.max <= 40.0, "{scheduler} max {}", l.max);
        // 32 hosts, a one-cell packet with probability 0.3 per cell time, over the measured
        // 55 000 cell times of 21.12 ns.
        let band = binomial_band(0.3, 32.0 * 55_000.0);
        assert!((s.rates.throughput - 0.3).abs() < band, "{scheduler}");
    }
}

/// Table I's shape: SAFC is never slower than iSLIP, and the tail grows with load.
#[test]
fn safc_beats_islip_and_tails_grow_with_load() {
    let at = |scheduler: &str, load: &str| {
        run(&table1(&[
            ("switch", "scheduler", &format!("\"{scheduler}\"")),
            ("traffic", "load", load),
        ]))
        .latency
        .latency_cells
    };
    let (islip60, islip90) = (at("islip", "0.6"), at("islip", "0.9"));
    let safc90 = at("safc", "0.9");
    assert!(islip90.p99 > islip60.p99 && islip90.p50 > islip60.p50);
    assert!(safc90.p99 < islip90.p99 && safc90.mean < islip90.mean);
}

/// At full load with bursts the switch saturates; per-VOQ ON/OFF keeps it lossless and the
/// closed-loop hosts are held back instead.
#[test]
fn full_bursty_load_is_lossless() {
    let s = run(&table1(&[
        ("traffic", "load", "1.0"),
        ("traffic", "arrival", "\"bursty\""),
        ("traffic", "burst_mean_bytes", "1024"),
        ("traffic", "packet_bytes", "null"),
        ("traffic", "packet_bytes_min", "64"),
        ("traffic", "packet_bytes_max", "2048"),
    ]));
    assert!(s.switching.flow_control_signals > 0, "VOQs were paused");
    assert!(s.rates.injected_load < 1.0, "hosts were held back");
    assert!(
        s.hosts.source_wait_mean_cells > 0.0
            && s.hosts.source_wait_max_cells >= s.hosts.source_wait_mean_cells
    );
    assert!(
        s.rates.goodput < s.rates.throughput,
        "padding costs bandwidth"
    );
    assert!(s.hosts.packets_delivered > 0);
}

/// Forwards `cell` from endpoint `src` hop by hop through the cabling; returns the endpoint it
/// reaches.
fn walk(topology: &Topology, router: &mut RiflRouter, src: usize, cell: &mut Cell) -> usize {
    struct NoQueues;
    impl LocalView for NoQueues {
        fn backlog_cells(&self, _output: usize) -> u32 {
            0
        }
    }
    let (mut switch, mut input) = topology.endpoint_port(src).unwrap();
    loop {
        let output = router.route(switch, input, cell, &NoQueues);
        match topology.peer(switch, output).unwrap() {
            Attachment::Endpoint(e) => return e,
            Attachment::SwitchPort { switch: s, port } => (switch, input) = (s, port),
        }
    }
}

/// Every pair of a leaf-spine and of two switches joined by four links: the source's header,
/// forwarded hop by hop through the cabling, reaches the destination with Remain Hops 0, and
/// the header recovered by reversing its fields routes a reply back to the source.
#[test]
fn headers_walk_racks_and_reverse() {
    for topology in [Topology::leaf_spine(4, 3, 5), Topology::two_switch(8, 4)] {
        let mut router = RiflRouter::new(&topology).unwrap();
        let n = topology.endpoints();
        for src in 0..n {
            for dst in (0..n).filter(|&d| d != src) {
                let mut cell = Cell::new(src as u16, dst as u16, 256, true, 0, 0);
                router.inject(src, &mut cell);
                assert_eq!(walk(&topology, &mut router, src, &mut cell), dst);
                let arrived = RiflRouter::header(&cell);
                assert_eq!(arrived.remain_hops, 0);
                RiflRouter::set_header(&mut cell, arrived.return_route().unwrap().encode());
                assert_eq!(walk(&topology, &mut router, dst, &mut cell), src);
            }
        }
    }
}

/// Racks run lossless and in order; a second switch adds hops, so latency grows.
#[test]
fn racks_run_lossless_with_more_hops_than_one_switch() {
    let one = run(&table1(&[("switch", "ports", "16")]));
    let two = run(&table1(&[
        ("switch", "ports", "16"),
        ("topology", "kind", "\"two_switch\""),
        ("topology", "links", "4"),
    ]));
    let leaf_spine = run(&table1(&[
        ("topology", "kind", "\"leaf_spine\""),
        ("topology", "leaves", "4"),
        ("topology", "spines", "4"),
        ("topology", "hosts_per_leaf", "4"),
    ]));
    assert_eq!((two.switches, two.terminals), (2, 24));
    assert_eq!((leaf_spine.switches, leaf_spine.terminals), (8, 16));
    assert!(two.latency.latency_cells.mean > one.latency.latency_cells.mean);
    assert!(leaf_spine.latency.latency_cells.p50 > two.latency.latency_cells.p1);
    for s in [&two, &leaf_spine] {
        assert!(
            (s.rates.throughput - 0.3).abs() < 0.02,
            "{}",
            s.rates.throughput
        );
    }
}

#[test]
fn same_seed_same_run() {
    let json = table1(&[("traffic", "load", "0.9")]);
    assert_eq!(format!("{:?}", run(&json)), format!("{:?}", run(&json)));
}

/// What RIFL fixes is checked by name before anything runs.
#[test]
fn rifl_rules_name_the_key() {
    let key = |extra: &[(&str, &str, &str)]| {
        let scenario = Scenario::from_json(&table1(extra)).unwrap();
        rifl::validate(&scenario).unwrap_err().key
    };
    assert_eq!(key(&[("cell", "size_bytes", "256")]), "cell.size_bytes");
    assert_eq!(
        key(&[("link", "flow_control", "\"credit\"")]),
        "link.flow_control"
    );
    assert_eq!(
        key(&[("switch", "buffer_cells", "16")]),
        "switch.buffer_cells"
    );
    assert_eq!(
        key(&[("link", "off_threshold_cells", "12")]),
        "link.off_threshold_cells"
    );
    assert_eq!(
        key(&[("traffic", "include_self", "true")]),
        "traffic.include_self"
    );
    let broadcast = ("traffic", "broadcast_fraction", "0.1");
    let build_key = |extra: &[(&str, &str, &str)]| {
        let scenario = Scenario::from_json(&table1(extra)).unwrap();
        rifl::build(&scenario).err().expect("refused").key
    };
    for rack in [
        [
            ("topology", "kind", "\"two_switch\""),
            ("topology", "links", "2"),
        ],
        [
            ("topology", "kind", "\"leaf_spine\""),
            ("topology", "spines", "2"),
        ],
    ] {
        assert_eq!(
            build_key(&[rack[0], rack[1], broadcast]),
            "traffic.broadcast_fraction",
            "flooding a rack with loops would duplicate copies"
        );
    }
    for extra in [
        &[broadcast, ("traffic", "bytes_per_pair", "1000")][..],
        &[("traffic", "broadcast_fraction", "1.5")],
    ] {
        let error = Scenario::from_json(&table1(extra)).unwrap_err();
        assert_eq!(error.key, "traffic.broadcast_fraction");
    }
    let bad_links = Scenario::from_json(&table1(&[
        ("topology", "kind", "\"two_switch\""),
        ("topology", "links", "32"),
    ]));
    assert_eq!(bad_links.unwrap_err().key, "topology.links");
}

/// A Layer 1 cable with no error, its flow control out of band, is a plain cable: the run's
/// summary is the plain run's (but for the event count and the Layer 1 counters), which
/// checks that Layer 1's frame-time pipeline adds exactly the cable's propagation.
#[test]
fn error_free_layer_one_cables_deliver_when_plain_cables_do() {
    let load = ("traffic", "load", "0.9");
    let plain = run(&table1(&[load]));
    let layer1 = run(&table1(&[
        load,
        ("link", "ber", "1e-30"),
        ("link", "in_band_flow_control", "false"),
    ]));
    let counters = layer1.layer1.clone().expect("Layer 1 counters").counters;
    assert_eq!((counters.errors_detected, counters.frames_replayed), (0, 0));
    let comparable = |s: &Summary| {
        let mut v = serde_json::to_value(s).unwrap();
        let object = v.as_object_mut().unwrap();
        object.remove("events");
        object.remove("layer1");
        v
    };
    assert_eq!(comparable(&plain), comparable(&layer1));
}

/// Flow control in band (§IV-D, Fig. 4): every ON/OFF the switches send travels in a
/// flow-control frame carrying at most one of each, so the frames number between half the
/// signals and all of them; each takes a frame time from data, so at full load the rack
/// carries less than with the same signals out of band, by no more than the frames' share of
/// the cables' frame times, and still loses nothing.
#[test]
fn in_band_flow_control_frames_carry_every_signal_and_take_frame_times_from_data() {
    let full = [
        ("traffic", "load", "1.0"),
        ("link", "ber", "1e-30"),
        ("traffic", "arrival", "\"bursty\""),
        ("traffic", "burst_mean_bytes", "1024"),
    ];
    let in_band = run(&table1(&full));
    let out_of_band = run(&table1(
        &[&full[..], &[("link", "in_band_flow_control", "false")]].concat(),
    ));
    let counters = in_band.layer1.clone().expect("Layer 1 counters").counters;
    let signals = in_band.switching.flow_control_signals;
    assert!(signals > 1000, "{signals} signals");
    let frames = counters.flow_control_frames;
    assert!(
        frames * 2 >= signals - 64 && frames <= signals,
        "{frames} frames for {signals} signals"
    );
    assert_eq!(in_band.cells.cells_dropped, 0);
    let (with, without) = (in_band.rates.throughput, out_of_band.rates.throughput);
    assert!(with < without, "in band {with}, out of band {without}");
}

/// `link.in_band_flow_control` is read only where a cable runs Layer 1: without bit errors it is
/// an unused key, named with the choice that ignores it.
#[test]
fn in_band_flow_control_without_bit_errors_is_an_unused_key() {
    let unused = |extra: &[(&str, &str, &str)]| {
        let scenario = Scenario::from_json(&table1(extra)).expect("valid scenario");
        scenario
            .unused_keys()
            .into_iter()
            .map(|u| (u.key, u.choice))
            .collect::<Vec<_>>()
    };
    let key = ("link", "in_band_flow_control", "false");
    let named = ("link.in_band_flow_control".to_string(), "link.ber");
    assert!(unused(&[key]).contains(&named));
    assert!(!unused(&[key, ("link", "ber", "1e-9")]).contains(&named));
}

/// Bit errors cost time, never cells. Each corrupted frame pauses new data at both ends of its
/// cable for at least 2.5 round trips (Shen and Chow 2023, §II-A), so an end is paused for a
/// fraction of about 2 · p · 2.5 · RTT of its frame times, p the frame error probability; with
/// RTT = 14 frame times (7 of propagation each way), 2 112-bit frames and a BER of 1e-7 that is
/// 1.48%.
#[test]
fn bit_errors_cost_time_and_no_cell() {
    let errors = run(&table1(&[
        ("traffic", "load", "0.9"),
        ("link", "ber", "1e-7"),
    ]));
    let plain = run(&table1(&[("traffic", "load", "0.9")]));
    let counters = errors.layer1.clone().expect("Layer 1 counters").counters;
    let frame_p = 1.0 - (1.0 - 1e-7_f64).powi(2112);
    let ends = 2.0 * 32.0; // 32 host cables
    let frames = (errors.run.sim_time_ps / errors.run.cell_time_ps) as f64;
    let paused = counters.pause_slots as f64 / (ends * frames);
    let expected = 2.0 * frame_p * 2.5 * 14.0;
    assert!(
        (paused / expected - 1.0).abs() < 0.25,
        "paused {paused:.4}, expected about {expected:.4}"
    );
    assert!(counters.errors_detected > 0 && counters.frames_replayed > 0);
    assert!(
        errors.latency.latency_cells.p99 > plain.latency.latency_cells.p99,
        "replays delay cells: p99 {} against {}",
        errors.latency.latency_cells.p99,
        plain.latency.latency_cells.p99
    );
}

/// A rack from a topology file whose cables choose their own bit error rate (Shen and Chow
/// 2023, §II-A: Layer 1 per cable): only the cable between the switches has errors, so it alone
/// runs Layer 1; its replays cost time and no cell, and cells still arrive in order.
#[test]
fn a_cable_with_its_own_bit_error_rate_alone_runs_layer_one() {
    let rack = |spine_attributes: &str| {
        let path = std::env::temp_dir().join(format!(
            "cellfabric-rifl-rack-{}-{}.topo",
            std::process::id(),
            spine_attributes.len()
        ));
        std::fs::write(
            &path,
            format!(
                "switch s0 ports=3\nswitch s1 ports=3\nhost a\nhost b\nhost c\nhost d\n\
                 cable a s0:0\ncable b s0:1\ncable c s1:0\ncable d s1:1\n\
                 cable s0:2 s1:2 {spine_attributes}\n"
            ),
        )
        .unwrap();
        let file = serde_json::to_string(path.to_str().unwrap()).unwrap();
        run(&table1(&[
            ("traffic", "load", "0.5"),
            ("switch", "ports", "3"),
            ("topology", "kind", "\"file\""),
            ("topology", "file", &file),
        ]))
    };
    for (attributes, key, says) in [
        ("ber=1e-5 rate_gbps=200", "topology.file", "rate_gbps"),
        (
            "ber=1e-5 propagation_ns=30",
            "topology.file",
            "whole number",
        ),
        ("ber=0.5", "topology.file", "ber=0.5"),
    ] {
        let path =
            std::env::temp_dir().join(format!("cellfabric-rifl-bad-{}.topo", std::process::id()));
        std::fs::write(
            &path,
            format!("switch s0 ports=2\nhost a\nhost b\ncable a s0:0 {attributes}\ncable b s0:1\n"),
        )
        .unwrap();
        let file = serde_json::to_string(path.to_str().unwrap()).unwrap();
        let json = table1(&[
            ("topology", "kind", "\"file\""),
            ("topology", "file", &file),
        ]);
        let error = Scenario::from_json(&json)
            .and_then(|s| rifl::build(&s).map(|_| ()))
            .expect_err(attributes);
        assert_eq!(error.key, key, "{attributes}");
        assert!(
            error.message.contains(says),
            "{attributes}: {}",
            error.message
        );
        if attributes.starts_with("ber=1e-5 rate") {
            let fabric = format!(
                r#"{{"design": "cell_fabric", "run": {{"duration_ns": 1000, "warmup_ns": 0}},
                    "topology": {{"kind": "file", "file": {file}}}}}"#
            );
            let error = cellfabric_core::build(&fabric)
                .map(|_| ())
                .expect_err("not a RIFL rack");
            assert!(error.to_string().contains("design = \"rifl\""), "{error}");
        }
    }
    let plain = rack("");
    assert!(plain.layer1.is_none());
    let noisy = rack("ber=1e-5");
    let layer1 = noisy.layer1.clone().expect("the spine cable runs Layer 1");
    assert_eq!(layer1.counters.cables, 1);
    assert!(layer1.counters.errors_detected > 0 && layer1.counters.frames_replayed > 0);
    assert_eq!(noisy.cells.cells_dropped, 0);
}

/// RIFL Layer 1 frames of their own size inside the rack (§II-A: 8 to 256 bytes, a two-byte
/// header each). 256-byte frames carry a 262-byte cell in 262/254 frames: within 1% of the
/// frame-is-a-cell default. 16-byte frames spend 2 of every 16 bytes on headers, so a cable
/// carries at most 264 · 14/16 / 262 cells per cell time and the saturated switch is held to
/// that; 64-byte frames lose 3% to headers, which the switch's own ceiling hides.
#[test]
fn layer_one_frame_size_sets_the_racks_goodput() {
    let saturated = |frame_bytes: Option<&str>| {
        let mut extra = vec![
            ("traffic", "load", "1.0"),
            ("link", "ber", "1e-30"),
            ("switch", "ports", "8"),
        ];
        if let Some(bytes) = frame_bytes {
            extra.push(("link", "frame_bytes", bytes));
        }
        let s = run(&table1(&extra));
        assert_eq!(
            s.layer1.as_ref().unwrap().frame_bytes,
            frame_bytes.map(|b| b.parse().unwrap())
        );
        s.rates.goodput
    };
    let cell = saturated(None);
    let [f256, f64_, f16] = [Some("256"), Some("64"), Some("16")].map(saturated);
    assert!((f256 / cell - 1.0).abs() < 0.01, "{f256} vs {cell}");
    let cable_capacity = 264.0 * 14.0 / 16.0 / 262.0 * 256.0 / 264.0;
    assert!(
        f16 <= cable_capacity + 1e-3 && f16 > cable_capacity - 0.03,
        "{f16} against {cable_capacity}"
    );
    assert!(f16 < f64_.min(f256), "{f16} {f64_} {f256}");
    let bad = Scenario::from_json(&table1(&[
        ("link", "ber", "1e-7"),
        ("link", "frame_bytes", "100"),
    ]));
    assert_eq!(bad.unwrap_err().key, "link.frame_bytes");
}
