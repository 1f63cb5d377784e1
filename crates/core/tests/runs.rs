//! Whole-run properties: determinism, conservation under drops, lossless flow control, tables.

mod common;

use common::{run, switch};

fn comparable(s: &cellfabric_core::Summary) -> String {
    format!("{s:?}")
}

#[test]
fn same_seed_gives_identical_results_and_another_seed_differs() {
    for scheduler in ["fifo", "islip", "pim"] {
        let json = switch(16, scheduler, 0.8, 20_000, "");
        let (a, ta) = run(&json);
        let (b, tb) = run(&json);
        assert_eq!(comparable(&a), comparable(&b));
        assert_eq!(format!("{ta:?}"), format!("{tb:?}"));
        let (c, _) = run(&json.replace(r#""seed": 7"#, r#""seed": 8"#));
        assert_ne!(
            format!("{:?}", a.latency.latency_ns),
            format!("{:?}", c.latency.latency_ns)
        );
    }
}

#[test]
fn finite_buffers_without_flow_control_drop_and_account_for_every_cell() {
    let (s, t) = run(&switch(8, "fifo", 1.0, 20_000, r#", "buffer_cells": 4"#));
    assert!(s.cells.cells_dropped > 0);
    assert_eq!(
        t.ports.cells_dropped.iter().sum::<u64>(),
        s.cells.cells_dropped
    );
}

fn with_flow_control(json: String, link: &str) -> String {
    json.replace(
        r#""traffic""#,
        &format!(r#""link": {{"propagation_ns": 20, {link}}}, "traffic""#),
    )
}

/// Credits make tiny buffers lossless; a buffer smaller than the credit round trip caps each input
/// at buffer / round trip (here 2 cells per 5.12 + 2 × 20 ns ≈ 8.8 cell times).
#[test]
fn credit_flow_control_is_lossless_and_limited_by_the_round_trip() {
    let credit = r#""flow_control": "credit""#;
    for scheduler in ["fifo", "islip", "safc"] {
        let (s, _) = run(&with_flow_control(
            switch(8, scheduler, 1.0, 20_000, r#", "buffer_cells": 2"#),
            credit,
        ));
        assert_eq!(s.cells.cells_dropped, 0, "{scheduler}");
        let bound = 2.0 * 5_120.0 / (5_120.0 + 2.0 * 20_000.0);
        assert!(
            s.rates.throughput <= bound && s.rates.throughput > 0.9 * bound,
            "{scheduler}: {} vs {bound}",
            s.rates.throughput
        );
    }
    // Well above the round trip, credits no longer limit: a FIFO switch is back at its
    // head-of-line bound (0.6184 at N = 8, Karol et al.).
    let (s, _) = run(&with_flow_control(
        switch(8, "fifo", 1.0, 40_000, r#", "buffer_cells": 64"#),
        credit,
    ));
    assert_eq!(s.cells.cells_dropped, 0);
    assert!(
        (s.rates.throughput - 0.6184).abs() < 0.015,
        "{}",
        s.rates.throughput
    );
}

/// ON/OFF: with a buffer that has a round trip of headroom above the OFF threshold nothing is
/// dropped; with none, the cells in flight when OFF is sent overflow it.
#[test]
fn on_off_flow_control_with_round_trip_headroom_drops_nothing() {
    let onoff = r#""flow_control": "onoff", "off_threshold_cells": 16, "on_threshold_cells": 10"#;
    let (s, _) = run(&with_flow_control(
        switch(8, "fifo", 1.0, 40_000, r#", "buffer_cells": 28"#),
        onoff,
    ));
    assert_eq!(s.cells.cells_dropped, 0);
    assert!(
        (s.rates.throughput - 0.6184).abs() < 0.015,
        "ON/OFF keeps the FIFO at its HOL bound: {}",
        s.rates.throughput
    );
    let (tight, _) = run(&with_flow_control(
        switch(8, "fifo", 1.0, 20_000, r#", "buffer_cells": 16"#),
        onoff,
    ));
    assert!(tight.cells.cells_dropped > 0);
}

#[test]
fn tables_agree_with_the_summary() {
    let (s, t) = run(&switch(8, "islip", 0.7, 20_000, ""));
    assert_eq!(
        t.latency_histogram.count.iter().sum::<u64>(),
        s.cells.cells_measured
    );
    assert_eq!(
        t.ports.cells_injected.iter().sum::<u64>(),
        s.cells.cells_injected
    );
    assert_eq!(
        t.ports.cells_delivered.iter().sum::<u64>(),
        s.cells.cells_delivered
    );
    let slots: u64 = t.queue_occupancy.slots.iter().sum();
    assert_eq!(
        slots,
        20_000 - 2_000 + 1,
        "one occupancy sample per measured slot boundary"
    );
    let mean_throughput = t.ports.throughput.iter().sum::<f64>() / 8.0;
    assert!((mean_throughput - s.rates.throughput).abs() < 1e-9);
}

#[test]
fn bursty_packets_and_patterns_run_and_conserve() {
    for traffic in [
        r#""traffic": {"load": 0.6, "arrival": "bursty", "burst_mean_cells": 16}"#,
        r#""traffic": {"load": 0.6, "packet_bytes_min": 64, "packet_bytes_max": 2048}"#,
        r#""traffic": {"load": 0.9, "destinations": "permutation"}"#,
        r#""traffic": {"load": 0.5, "destinations": "hotspot", "hotspot_fraction": 0.05}"#,
    ] {
        let json = format!(
            r#"{{"run": {{"duration_ns": 102400, "warmup_ns": 10240}}, "switch": {{"ports": 16}}, {traffic}}}"#
        );
        let (s, _) = run(&json);
        assert!(
            s.rates.throughput > 0.45,
            "{traffic}: {}",
            s.rates.throughput
        );
        // Goodput is throughput less the padding of packets' last cells (64-byte cells).
        let padded = if traffic.contains("packet_bytes_min") {
            let cells: f64 = (64..=2048u32).map(|b| b.div_ceil(64) as f64).sum();
            let bytes: f64 = (64..=2048u32).map(f64::from).sum();
            bytes / (cells * 64.0)
        } else {
            1.0
        };
        let ratio = s.rates.goodput / s.rates.throughput;
        assert!(
            (ratio - padded).abs() < 0.01,
            "{traffic}: {ratio} vs {padded}"
        );
    }
}

/// Port sets span 256 ports, a Stardust fabric element's radix: 256-port switches of every
/// organization run, conserve and carry their load (the output-queued switch, and iSLIP and PIM
/// with log₂ N / 2 iterations, all of it; the FIFO switch saturates near 2 − √2 ≈ 0.586, Karol
/// et al. 1987).
#[test]
fn switches_take_256_ports() {
    for (scheduler, carried, extra) in [
        ("output_queued", 0.8, ""),
        ("islip", 0.8, r#", "iterations": 4"#),
        ("pim", 0.8, r#", "iterations": 4"#),
        ("fifo", 0.586, ""),
    ] {
        let (s, t) = run(&switch(256, scheduler, 0.8, 3_000, extra));
        assert_eq!((s.ports, t.ports.port.len()), (256, 256));
        assert!(
            (s.rates.throughput - carried).abs() < 0.02,
            "{scheduler}: {}",
            s.rates.throughput
        );
    }
}

/// Little's law (mean occupancy = arrival rate × mean time in the switch) holds here by
/// bookkeeping, since occupancy and time in the switch are counted from the same arrivals and
/// departures: a check of the statistics code, not of the switch.
#[test]
fn littles_law_holds_in_the_switch() {
    for (scheduler, load) in [
        ("islip", 0.8),
        ("fifo", 0.5),
        ("output_queued", 0.9),
        ("safc", 0.7),
    ] {
        let ports = 16;
        let (s, _) = run(&switch(ports, scheduler, load, 200_000, ""));
        let predicted = s.rates.throughput * ports as f64 * s.switching.switch_delay_mean_cells;
        let error = (s.switching.queue_occupancy_mean_cells - predicted).abs() / predicted;
        assert!(
            error < 0.02,
            "{scheduler}: occupancy {:.3}, λW {predicted:.3}",
            s.switching.queue_occupancy_mean_cells
        );
    }
}

/// Cells still in flight at the end are reported with their ages, a censored tail the latency
/// percentiles leave out: an overloaded FIFO switch ends with a growing backlog, whose oldest
/// cell has waited longer than the median delivered cell, and no age exceeds the
/// measured window.
#[test]
fn cells_in_flight_at_the_end_are_reported_with_their_ages() {
    let cells = 20_000;
    let (s, _) = run(&switch(16, "fifo", 1.0, cells, ""));
    assert!(
        s.cells.cells_in_flight_measured > 1_000,
        "{}",
        s.cells.cells_in_flight_measured
    );
    assert!(s.cells.cells_in_flight_measured <= s.cells.cells_in_flight);
    assert!(s.cells.in_flight_age_cells.max > s.latency.latency_cells.p50);
    assert!(s.cells.in_flight_age_cells.max <= (cells - cells / 10) as f64);
    // Every measured cell counted, the in-flight ones at their ages: more samples than the
    // delivered ones alone, exactly those plus the in-flight ones, and a tail no shorter.
    let all = &s.latency.latency_with_in_flight_cells;
    assert_eq!(
        all.samples,
        s.latency.latency_cells.samples + s.cells.cells_in_flight_measured
    );
    assert!(all.p99 >= s.latency.latency_cells.p99 && all.max >= s.cells.in_flight_age_cells.max);
    let (light, _) = run(&switch(16, "output_queued", 0.3, cells, ""));
    assert!(light.cells.cells_in_flight_measured < 50);
    assert!(light.cells.in_flight_age_cells.max < 50.0);
    assert_eq!(
        light.hosts.source_wait_max_cells, 0.0,
        "open-loop hosts never wait"
    );
}
