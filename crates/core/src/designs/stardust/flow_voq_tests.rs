//! Per-flow VOQs (`adapter.voqs = "per_flow"`, Stardust App. G; reading R43) against theory:
//! a destination port's credit scheduler takes turns over what asks it, so one port asked by
//! two flows from one adapter and one from another shares out as 1/4, 1/4, 1/2 with a VOQ per
//! port (the shared adapter's VOQ gets half, its two flows splitting it) and as 1/3 each with a
//! VOQ per flow. A permutation has one flow per VOQ, so there the two keyings run the same.

use super::*;
use crate::engine::kernel::Kernel;

/// Three saturated flows to host 15 of a k = 4 fat-tree: hosts 0 and 1 (one adapter) and host 2
/// (the next), with `adapter.voqs = voqs`, run for 4 ms. Their packets arrive as Poisson
/// processes at line rate: at constant rate the two flows feeding one full per-port VOQ lock in
/// phase, and the one whose packets come first after a departure takes most of its room (0.40
/// and 0.10 of the port at this seed, the adapter's half still exact).
fn three_flows(voqs: &str) -> String {
    let flow = |src: u32| format!(r#"{{"src": {src}, "dst": 15, "load": 1.0}}"#);
    format!(
        r#"{{"design": "stardust", "run": {{"seed": 3, "duration_ns": 4000000, "warmup_ns": 500000}},
            "topology": {{"kind": "fat_tree", "k": 4}}, "adapter": {{"voqs": "{voqs}"}},
            "traffic": {{"pattern": "flows", "arrival": "poisson", "flows": [{}, {}, {}]}}}}"#,
        flow(0),
        flow(1),
        flow(2)
    )
}

/// The run `json` describes, to its end, with every account settled.
fn finished(json: &str) -> (Stardust, StardustSummary) {
    let stardust = build(json).unwrap();
    let end_ps = stardust.end_ps();
    let mut kernel = Kernel::new(stardust, end_ps);
    kernel.advance(end_ps);
    let (stardust, clock, deadlock) = kernel.into_parts();
    assert!(deadlock.is_none(), "{deadlock:?}");
    let (summary, _) = stardust.finish(&clock).expect("the ledgers balance");
    (stardust, summary)
}

/// Each sender's share of the bytes host 15 received after the warm-up, in host order.
fn shares_at_host_15(stardust: &Stardust) -> Vec<(u16, f64)> {
    let host = stardust
        .adapters()
        .flat_map(|a| a.delivered())
        .find(|d| d.host == 15)
        .expect("host 15's port");
    let mut from: Vec<(u16, f64)> = host
        .from
        .iter()
        .map(|f| (f.src, f.bytes_measured as f64 / host.bytes_measured as f64))
        .collect();
    from.sort_by_key(|f| f.0);
    from
}

/// The shares within 2% of `fair` (relative), senders 0, 1 and 2 in order.
fn assert_shares(shares: &[(u16, f64)], fair: [f64; 3], keying: &str) {
    let senders: Vec<u16> = shares.iter().map(|s| s.0).collect();
    assert_eq!(senders, [0, 1, 2], "{keying}");
    for ((src, share), fair) in shares.iter().zip(fair) {
        assert!(
            (share - fair).abs() <= 0.02 * fair,
            "{keying}: host {src} got {share:.4} of the port, its fair share {fair:.4}"
        );
    }
}

#[test]
fn per_port_voqs_share_a_port_by_adapter_and_per_flow_voqs_by_flow() {
    let (per_port, summary) = finished(&three_flows("per_port"));
    assert_eq!(summary.accounts.cells_dropped, 0);
    assert_shares(&shares_at_host_15(&per_port), [0.25, 0.25, 0.5], "per port");
    let (per_flow, summary) = finished(&three_flows("per_flow"));
    assert_eq!(summary.accounts.cells_dropped, 0);
    let third = 1.0 / 3.0;
    assert_shares(&shares_at_host_15(&per_flow), [third; 3], "per flow");
}
