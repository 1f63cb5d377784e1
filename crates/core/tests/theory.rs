//! The single-switch models against results we did not write: Karol–Hluchyj–Morgan (FIFO head-of-
//! line blocking), the output-queued switch's mean wait, iSLIP's and PIM's saturation throughput.
//! Every run also checks conservation (see `common::run`).

mod common;

use cellfabric_core::engine::stats::binomial_band;
use common::{run, switch};

/// The mean of `measure` over independent seeds 1..=`seeds` and its standard error: tolerances
/// below are a few standard errors of the runs themselves, not fixed percentages.
fn over_seeds(
    json: &str,
    seeds: u64,
    measure: impl Fn(&cellfabric_core::Summary) -> f64,
) -> (f64, f64) {
    let values: Vec<f64> = (1..=seeds)
        .map(|seed| {
            let (s, _) = run(&json.replace(r#""seed": 7"#, &format!(r#""seed": {seed}"#)));
            measure(&s)
        })
        .collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// `mean ± se` agrees with `theory` within four standard errors (plus `floor`, for quantities
/// whose seeds agree to every printed digit).
fn assert_agrees(what: &str, (mean, se): (f64, f64), theory: f64, floor: f64) {
    assert!(
        (mean - theory).abs() <= 4.0 * se + floor,
        "{what}: {mean:.5} ± {se:.5} (4 s.e. + {floor}), theory {theory:.5}"
    );
}

/// Karol, Hluchyj & Morgan (1987), Table I: saturation throughput of FIFO input queueing, exact
/// for N = 4 and 8; it decreases with N toward 2 − √2, so N = 32 lies between that limit and
/// N = 8's value (the table gives no N = 32 entry).
#[test]
fn fifo_saturates_where_karol_hluchyj_morgan_predict() {
    for (ports, theory) in [(4, 0.6553), (8, 0.6184)] {
        let json = switch(ports, "fifo", 1.0, 100_000, "");
        let measured = over_seeds(&json, 4, |s| s.rates.throughput);
        assert_agrees(&format!("FIFO N={ports}"), measured, theory, 0.0005);
    }
    let (s, _) = run(&switch(32, "fifo", 1.0, 200_000, ""));
    let limit = 2.0 - 2f64.sqrt();
    assert!(
        s.rates.throughput > limit && s.rates.throughput < 0.6184,
        "N=32: throughput {:.4} outside ({limit:.4}, 0.6184)",
        s.rates.throughput
    );
}

/// Output-queued switch under Bernoulli uniform load p: mean wait (N-1)/N · p / (2(1-p)) slots.
#[test]
fn output_queued_mean_wait_matches_theory() {
    let ports = 32;
    for load in [0.5, 0.9] {
        let json = switch(ports, "output_queued", load, 100_000, "");
        let n = ports as f64;
        let theory = (n - 1.0) / n * load / (2.0 * (1.0 - load));
        let wait = over_seeds(&json, 4, |s| s.switching.switch_delay_mean_cells);
        assert_agrees(
            &format!("output-queued wait, p={load}"),
            wait,
            theory,
            0.002,
        );
        let (s, _) = run(&json);
        // End to end adds one serialization on each link: exactly two cell times.
        assert!(
            (s.latency.latency_cells.mean - s.switching.switch_delay_mean_cells - 2.0).abs() < 0.05
        );
        assert_eq!(
            s.latency.latency_cells.p1, 2.0,
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
        let json = switch(ports, "safc", load, 100_000, "");
        let n = ports as f64;
        let theory = (n - 1.0) / n * load / (2.0 * (1.0 - load));
        let wait = over_seeds(&json, 4, |s| s.switching.switch_delay_mean_cells);
        assert_agrees(&format!("SAFC wait, p={load}"), wait, theory, 0.002);
    }
}

/// McKeown (1999): iSLIP with one iteration sustains 100% of uniform Bernoulli traffic.
#[test]
fn islip_one_iteration_reaches_full_throughput() {
    let (s, _) = run(&switch(32, "islip", 1.0, 100_000, r#", "iterations": 1"#));
    assert!(
        s.rates.throughput >= 0.98,
        "throughput {:.4}",
        s.rates.throughput
    );
}

/// PIM with one iteration saturates at 1 - (1 - 1/N)^N (→ 1 - 1/e ≈ 0.632 for large N).
#[test]
fn pim_one_iteration_saturates_near_one_minus_one_over_e() {
    let ports = 32;
    let json = switch(ports, "pim", 1.0, 50_000, r#", "iterations": 1"#);
    let theory = 1.0 - (1.0 - 1.0 / ports as f64).powi(ports as i32);
    assert_agrees(
        "PIM-1",
        over_seeds(&json, 4, |s| s.rates.throughput),
        theory,
        0.0005,
    );
}

/// Below saturation every scheduler carries the offered load.
#[test]
fn every_scheduler_carries_light_load() {
    for scheduler in ["output_queued", "fifo", "islip", "pim", "safc"] {
        let (s, _) = run(&switch(16, scheduler, 0.3, 50_000, ""));
        // 16 hosts, each a Bernoulli draw per measured cell time (45 000 of them).
        let band = binomial_band(0.3, 16.0 * 45_000.0);
        assert!(
            (s.rates.throughput - 0.3).abs() < band,
            "{scheduler}: {:.4} vs 0.3 ± {band:.4}",
            s.rates.throughput,
        );
        assert!((s.rates.injected_load - 0.3).abs() < band);
    }
}
