//! The shared buffer (`switch.port_kind = "shared_buffer"`, Choudhury & Hahne 1998) in whole runs on a
//! 32-port star: a burst into an idle port that a per-port queue drops is absorbed, the
//! dynamic threshold keeps part of the buffer free under a TCP incast, DCTCP still marks at K,
//! and the packet ledger balances with the drops counted by cause.

use super::*;

/// `senders` hosts each send `flow_bytes` of 9000-byte packets into host 0 of a 32-port star
/// (10 Gbit/s, 1 µs cables), all starting together, with `switch` (a JSON object's body).
fn incast(transport: &str, senders: u32, flow_bytes: Option<u64>, switch: &str) -> String {
    let flow_bytes = flow_bytes.map_or(String::new(), |b| format!(r#", "flow_bytes": {b}"#));
    format!(
        r#"{{"design": "ethernet", "run": {{"seed": 3, "duration_ns": 3000000, "warmup_ns": 1000000}},
            "topology": {{"kind": "star"}},
            "switch": {{{switch}}},
            "host": {{"transport": "{transport}"}},
            "traffic": {{"pattern": "incast", "incast_host": 0, "senders": {senders}{flow_bytes}}}}}"#
    )
}

fn summary(json: &str) -> EthernetSummary {
    let (ethernet, clock) = super::run_until(json, None);
    ethernet.finish(&clock).expect("the ledger balances").0
}

/// 24 senders' initial windows (10 packets each) reach the receiver's port together: a
/// 100-packet queue drops some of them; the same memory shared (100 packets per port of 32,
/// α = 1: one queue alone may hold 1600) takes them all, the queue growing past the static
/// share.
#[test]
fn a_burst_a_per_port_queue_drops_is_absorbed_by_the_shared_buffer() {
    let flow = Some(90_000);
    let per_port = summary(&incast("tcp", 24, flow, r#""queue_packets": 100"#));
    assert!(per_port.packets.packets_dropped > 0, "{per_port:?}");
    assert!(per_port.queue_peak_packets <= 100);
    assert!(per_port.shared_buffer.is_none());
    let shared = summary(&incast(
        "tcp",
        24,
        flow,
        r#""queue_packets": 100, "port_kind": "shared_buffer""#,
    ));
    assert_eq!(shared.packets.packets_dropped, 0, "{shared:?}");
    assert!(shared.queue_peak_packets > 100, "{shared:?}");
    assert_eq!(shared.flows_completed, 24);
    let buffer = shared.shared_buffer.unwrap();
    assert_eq!(buffer.threshold_drops + buffer.full_drops, 0);
    assert_eq!(buffer.occupied_peak_packets, shared.queue_peak_packets);
}

/// Unending TCP flows from 31 hosts into one over a 200-packet shared buffer, α = 1: the
/// receiver's queue stops at α·B/(1 + α) = 100 packets, every drop is a threshold drop (the
/// buffer never fills: half of it stays free), and the drops are the switch's drops in the
/// ledger. (An incast collapse: 310 packets of initial windows, timeouts of 1 ms.)
#[test]
fn under_a_tcp_incast_the_threshold_keeps_half_the_buffer_free() {
    let json = incast(
        "tcp",
        31,
        None,
        r#""port_kind": "shared_buffer", "shared_buffer_packets": 200, "dt_alpha": 1.0"#,
    );
    let s = summary(&json);
    let buffer = s.shared_buffer.unwrap();
    assert!(buffer.threshold_drops > 0, "{s:?}");
    assert_eq!(buffer.full_drops, 0);
    assert_eq!(buffer.threshold_drops, s.packets.packets_dropped);
    assert_eq!(s.queue_peak_packets, 100);
    assert_eq!(buffer.occupied_peak_packets, 100);
    let depth = s.bottleneck_queue_packets.expect("a queue measured");
    assert!(depth.max == 100 && depth.mean > 50.0, "{depth:?}");
}

/// DCTCP over a shared buffer marks at K = 15 as it does per port: it keeps the queue near K
/// and drops nothing, and the run repeats exactly.
#[test]
fn dctcp_marks_at_k_over_a_shared_buffer_and_repeats() {
    let json = incast(
        "dctcp",
        8,
        None,
        r#""port_kind": "shared_buffer", "dt_alpha": 2.0"#,
    );
    let s = summary(&json);
    assert!(
        s.senders.packets_marked > 0 && s.senders.ecn_cuts > 0,
        "{s:?}"
    );
    assert_eq!(s.packets.packets_dropped, 0);
    let depth = s.bottleneck_queue_packets.expect("a queue measured");
    assert!(depth.max < 40 && depth.mean > 5.0, "{depth:?}");
    let again = summary(&json);
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

/// A shared buffer too small for DCTCP's K to be reached is refused at build, naming the key.
#[test]
fn a_threshold_k_no_shared_queue_reaches_is_refused() {
    let json = incast(
        "dctcp",
        2,
        None,
        r#""port_kind": "shared_buffer", "shared_buffer_packets": 30, "ecn_threshold_packets": 15"#,
    );
    let err = build(&json).err().expect("refused").to_string();
    assert!(err.contains("switch.ecn_threshold_packets"), "{err}");
}
