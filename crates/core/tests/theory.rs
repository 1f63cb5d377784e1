//! The single-switch models against results we did not write: Karol–Hluchyj–Morgan (FIFO head-of-
//! line blocking), the output-queued switch's mean wait, iSLIP's and PIM's saturation throughput.
//! Every run also checks conservation (see `common::run`).

mod common;

use common::{run, switch};

/// Karol, Hluchyj & Morgan (1987), Table I: saturation throughput of FIFO input queueing, exact
/// for N = 4 and 8; it decreases with N toward 2 − √2, so N = 32 lies between that limit and
/// N = 8's value (the table gives no N = 32 entry).
#[test]
fn fifo_saturates_where_karol_hluchyj_morgan_predict() {
    for (ports, theory) in [(4, 0.6553), (8, 0.6184)] {
        let (s, _) = run(&switch(ports, "fifo", 1.0, 200_000, ""));
        assert!(
            (s.throughput - theory).abs() < 0.004,
            "N={ports}: throughput {:.4}, theory {theory}",
            s.throughput
        );
    }
    let (s, _) = run(&switch(32, "fifo", 1.0, 200_000, ""));
    let limit = 2.0 - 2f64.sqrt();
    assert!(
        s.throughput > limit && s.throughput < 0.6184,
        "N=32: throughput {:.4} outside ({limit:.4}, 0.6184)",
        s.throughput
    );
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

/// SAFC (N² dedicated queues, each output serving its own round robin with no input
/// constraint) is work-conserving per output, so its mean wait is the output-queued switch's:
/// a free theory check of the ideal switch RIFL's Table I compares against.
#[test]
fn safc_waits_like_an_output_queued_switch() {
    let ports = 32;
    for load in [0.5, 0.9] {
        let (s, _) = run(&switch(ports, "safc", load, 200_000, ""));
        let n = ports as f64;
        let theory = (n - 1.0) / n * load / (2.0 * (1.0 - load));
        let error = (s.switch_delay_mean_cells - theory).abs() / theory;
        assert!(
            error < 0.03,
            "p={load}: wait {:.4} slots, theory {theory:.4}",
            s.switch_delay_mean_cells
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
