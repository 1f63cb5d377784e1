//! The mechanisms beyond the paper's simulation, each seen working: bit errors, PCI transfers,
//! the quick enable vectors, speculative bulk transfers and bulk acknowledgments as quick
//! packets.

use super::*;
use crate::engine::kernel::{Clock, Kernel};
use crate::run::{Design, RunError};

const RUN_NS: u64 = 4_000_000;

fn scenario(architecture: &str, load: f64, extra: &str) -> String {
    format!(
        r#"{{"design": "clint", "run": {{"seed": 1, "duration_ns": {RUN_NS}, "warmup_ns": 400000}},
            "channel": {{"architecture": "{architecture}"}}, "traffic": {{"load": {load}}}{extra}}}"#
    )
}

/// Runs a built scenario to its end.
fn finish(clint: Clint) -> (Clint, Clock) {
    Kernel::run_until(clint, RUN_NS * 1_000, RUN_NS * 1_000)
}

/// A run's summary, after checking its packet account and invariants.
fn summary(architecture: &str, load: f64, extra: &str) -> ClintSummary {
    let (clint, clock) = finish(build(&scenario(architecture, load, extra)).unwrap());
    let summary = clint.summary(&clock);
    assert!(Design::report(clint, clock).is_ok());
    summary
}

#[test]
fn bit_errors_exercise_the_timeout_path_on_both_channels() {
    let errors = r#", "bulk": {"bit_error_rate": 1e-5}, "quick": {"bit_error_rate": 1e-4}"#;
    let s = summary("B4", 0.5, errors);
    assert!(
        s.faults.crc_requests > 0 && s.faults.crc_acks > 0,
        "{:?}",
        s.faults
    );
    assert!(s.faults.crc_scheduling > 0, "{:?}", s.faults);
    // B4 loses nothing else: every timeout is an error's (those counted at the ends of the
    // measurement window aside).
    let losses = s.faults.crc_requests + s.faults.crc_acks;
    assert!(
        s.targets.timeouts.abs_diff(losses) * 100 <= losses,
        "{} against {losses}",
        s.targets.timeouts
    );
    assert!(
        s.targets.duplicates > 0,
        "a lost acknowledgment's request comes again"
    );
    assert!(
        (s.rates.throughput / 0.5 - 1.0).abs() < 0.05,
        "{}",
        s.rates.throughput
    );
    let quick = summary("Q2", 0.1, r#", "quick": {"bit_error_rate": 1e-4}"#);
    assert!(quick.faults.crc_requests > 0 && quick.faults.crc_acks > 0);
    assert_eq!(quick.targets.out_of_order, 0);
}

#[test]
fn a_lost_request_under_go_back_n_draws_naks_for_those_behind_it() {
    let errors = r#", "bulk": {"bit_error_rate": 1e-5}, "nic": {"retransmission": "go_back_n"}"#;
    let s = summary("B4", 0.5, errors);
    assert!(s.faults.crc_requests > 0);
    assert!(
        s.targets.naks_out_of_sequence > 0,
        "requests behind a lost one are NAKed"
    );
    assert_eq!(s.targets.out_of_order, 0);
}

#[test]
fn pci_transfers_delay_sending_and_delivery() {
    let without = summary("B4", 0.1, "");
    let with = summary("B4", 0.1, r#", "nic": {"pci_gbps": 4.224}"#);
    // 2086 bytes at 4.224 Gbit/s: 3.95 µs each way.
    let transfer_ns = 2086.0 * 8.0 / 4.224;
    let added_ns =
        with.latency.latency_end_to_end_ns.mean - without.latency.latency_end_to_end_ns.mean;
    assert!(added_ns > 1.5 * transfer_ns, "{added_ns}");
    assert!(with.latency.latency_ns.mean > without.latency.latency_ns.mean);
    // Without a bus, end to end adds the packet's way through the channel to the paper's latency.
    let quick = summary("Q2", 0.05, "");
    let way_ns = 544.0 + 24.0 + 90.0 + 24.0;
    assert!(quick.latency.latency_end_to_end_ns.mean >= quick.latency.latency_ns.mean + way_ns);
}

#[test]
fn quick_enable_vectors_stop_a_disabled_initiator() {
    let (clint, clock) = finish(
        build(&scenario(
            "Q2",
            0.1,
            r#", "quick": {"disabled_initiators": [3]}"#,
        ))
        .unwrap(),
    );
    let delivered = clint.node_table.delivered.clone();
    let s = clint.summary(&clock);
    assert_eq!(delivered[3], 0);
    assert!(delivered.iter().enumerate().all(|(n, &d)| n == 3 || d > 0));
    assert!(s.faults.disabled_drops > 0);
    assert!(Design::report(clint, clock).is_ok());
}

#[test]
fn speculation_cuts_light_load_latency_and_never_meets_the_schedule() {
    let scheduled = summary("B4", 0.1, "");
    let speculative = summary("B4", 0.1, r#", "bulk": {"speculative": true}"#);
    assert!(speculative.speculative.sent > 0);
    assert!(
        speculative.latency.latency_ns.mean < scheduled.latency.latency_ns.mean / 2.0,
        "{} against {}",
        speculative.latency.latency_ns.mean,
        scheduled.latency.latency_ns.mean
    );
    assert_eq!(speculative.channel.scheduled_collisions, 0);
    assert_eq!(
        speculative.channel.ack_drops, 0,
        "acknowledgments keep inverted paths"
    );
}

/// An arbiter blind to speculative transfers schedules over them: the run fails.
#[test]
fn a_schedule_blind_to_speculation_fails_the_run() {
    let mut clint = build(&scenario("B4", 0.3, r#", "bulk": {"speculative": true}"#)).unwrap();
    clint.bulk.hide_speculation = true;
    let (clint, clock) = finish(clint);
    assert!(matches!(
        Design::report(clint, clock),
        Err(RunError::LossInLosslessRun(n)) if n > 0
    ));
}

#[test]
fn bulk_acknowledgments_as_packets_collide_with_quick_requests() {
    let windows = summary("Q1", 0.1, "");
    let packets = summary("Q1", 0.1, r#", "quick": {"bulk_packets": "packets"}"#);
    assert!(
        packets.channel.ack_collision_rate > windows.channel.ack_collision_rate * 1.3,
        "{} against {}",
        packets.channel.ack_collision_rate,
        windows.channel.ack_collision_rate
    );
    let idle = summary(
        "Q1",
        0.1,
        r#", "quick": {"bulk_packets": "packets", "bulk_load": 0.0}"#,
    );
    assert!(idle.channel.ack_collision_rate < packets.channel.ack_collision_rate);
}

#[test]
fn new_keys_are_checked() {
    for (extra, key) in [
        (
            r#", "quick": {"bit_error_rate": 1.5}"#,
            "quick.bit_error_rate",
        ),
        (r#", "bulk": {"bit_error_rate": -1}"#, "bulk.bit_error_rate"),
        (r#", "nic": {"pci_gbps": 0}"#, "nic.pci_gbps"),
        (r#", "quick": {"bulk_load": 2}"#, "quick.bulk_load"),
        (
            r#", "quick": {"disabled_initiators": [16]}"#,
            "quick.disabled_initiators",
        ),
    ] {
        let err = build(&scenario("Q2", 0.1, extra)).err().expect(extra);
        assert_eq!(err.key, key, "{}", err.message);
    }
    let err = build(&scenario(
        "B4",
        0.1,
        r#", "quick": {"disabled_initiators": [1]}"#,
    ))
    .err()
    .unwrap();
    assert_eq!(err.key, "quick.disabled_initiators");
}
