//! The single-switch models against results we did not write: Karol–Hluchyj–Morgan (FIFO head-of-
//! line blocking), the output-queued switch's mean wait, iSLIP's and PIM's saturation throughput,
//! and Little's law. Every run also checks conservation (see `common::run`).

mod common;

use common::{run, switch};

/// Karol, Hluchyj & Morgan (1987), Table I: saturation throughput of FIFO input queueing.
#[test]
fn fifo_saturates_where_karol_hluchyj_morgan_predict() {
    for (ports, theory, tolerance) in [(4, 0.6553, 0.008), (8, 0.6184, 0.008), (32, 0.5900, 0.01)] {
        let (s, _) = run(&switch(ports, "fifo", 1.0, 200_000, ""));
        assert!(
            (s.throughput - theory).abs() < tolerance,
            "N={ports}: throughput {:.4}, theory {theory}",
            s.throughput
        );
    }
}

/// Output-queued switch under Bernoulli uniform load p: mean wait (N-1)/N · p / (2(1-p)) slots.
#[test]
fn output_queued_mean_wait_matches_theory() {
    let ports = 32;
    for load in [0.5, 0.9] {
        let (s, _) = run(&switch(ports, "output_queued", load, 200_000, ""));
        let n = ports as f64;
        let theory = (n - 1.0) / n * load / (2.0 * (1.0 - load));
        let error = (s.switch_delay_mean_cells - theory).abs() / theory;
        assert!(
            error < 0.03,
            "p={load}: wait {:.4} slots, theory {theory:.4}",
            s.switch_delay_mean_cells
        );
        // End to end adds one serialization on each link: exactly two cell times.
        assert!((s.latency_cells.mean - s.switch_delay_mean_cells - 2.0).abs() < 0.05);
        assert_eq!(
            s.latency_cells.p1, 2.0,
            "an unqueued cell takes two cell times"
        );
    }
}

/// McKeown (1999): iSLIP with one iteration sustains 100% of uniform Bernoulli traffic.
#[test]
fn islip_one_iteration_reaches_full_throughput() {
    let (s, _) = run(&switch(32, "islip", 1.0, 100_000, r#", "iterations": 1"#));
    assert!(s.throughput >= 0.98, "throughput {:.4}", s.throughput);
}

/// PIM with one iteration saturates at 1 - (1 - 1/N)^N (→ 1 - 1/e ≈ 0.632 for large N).
#[test]
fn pim_one_iteration_saturates_near_one_minus_one_over_e() {
    let ports = 32;
    let (s, _) = run(&switch(ports, "pim", 1.0, 100_000, r#", "iterations": 1"#));
    let theory = 1.0 - (1.0 - 1.0 / ports as f64).powi(ports as i32);
    assert!(
        (s.throughput - theory).abs() < 0.01,
        "throughput {:.4}, theory {theory:.4}",
        s.throughput
    );
    assert!((s.throughput - (1.0 - (-1.0f64).exp())).abs() < 0.015);
}

/// Little's law: mean occupancy = arrival rate × mean time in the switch.
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
        let predicted = s.throughput * ports as f64 * s.switch_delay_mean_cells;
        let error = (s.queue_occupancy_mean_cells - predicted).abs() / predicted;
        assert!(
            error < 0.02,
            "{scheduler}: occupancy {:.3}, λW {predicted:.3}",
            s.queue_occupancy_mean_cells
        );
    }
}

/// Below saturation every scheduler carries the offered load.
#[test]
fn every_scheduler_carries_light_load() {
    for scheduler in ["output_queued", "fifo", "islip", "pim", "safc"] {
        let (s, _) = run(&switch(16, scheduler, 0.3, 50_000, ""));
        assert!(
            (s.throughput - s.offered_load).abs() < 0.005,
            "{scheduler}: {:.4} vs {:.4}",
            s.throughput,
            s.offered_load
        );
        assert!((s.offered_load - 0.3).abs() < 0.01);
    }
}
