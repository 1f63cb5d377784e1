//! Aquarius' port state alone: ❶ mapping, ❷ contribution-aware pausing, ❸ the rsvQ and the
//! order it keeps.

use super::port::AquariusPort;
use super::AquariusSpec;
use crate::blocks::ethernet::pause::PauseTarget;
use std::collections::{HashMap, VecDeque};

const SPEC: AquariusSpec = AquariusSpec {
    queues: 3,
    low_bytes: 2_000,
    high_bytes: 10_000,
};

/// Three flows of 1000-byte packets: below Q_l nobody is paused; above it, with N = 3 the
/// fair size is Q / 4 and only the flow holding more is; above Q_h every arriving flow is.
#[test]
fn flows_above_the_fair_size_are_paused_between_the_thresholds_and_all_above_the_high() {
    let mut port = AquariusPort::new(&SPEC);
    let mut backlog = 0;
    let mut offer = |port: &mut AquariusPort, flow: u64| {
        backlog += 1_000;
        port.enqueue(&SPEC, flow, 7, 1_000, backlog, 0)
    };
    for flow in [1, 2] {
        assert_eq!(offer(&mut port, flow).frame, None, "Q <= Q_l");
    }
    // Q = 3000 > Q_l, N = 3: fair = 3000 >> 2 = 750; flow 3 holds 1000.
    let third = offer(&mut port, 3);
    assert_eq!(third.frame, Some((7, PauseTarget::Flow(3), true)));
    // Flow 1 now holds 2000 of 4000 (fair 1000): paused; flow 3 again: paused already.
    assert_eq!(
        offer(&mut port, 1).frame,
        Some((7, PauseTarget::Flow(1), true))
    );
    assert_eq!(offer(&mut port, 3).frame, None, "one PAUSE per transition");
    assert_eq!(port.counters.flow_pause_frames_sent, 2);
    // Flow 2 fills the port to Q_h (paused on the way, by its size); then flow 4's first
    // packet, far below the fair size, is paused because Q > Q_h.
    for _ in 0..5 {
        offer(&mut port, 2);
    }
    assert_eq!(port.counters.pauses_above_high, 0);
    assert_eq!(
        offer(&mut port, 4).frame,
        Some((7, PauseTarget::Flow(4), true))
    );
    assert_eq!(port.counters.pauses_above_high, 1);
    // A packet of flow 3 leaves: it holds 1000 of 10 000 <= Q_h, below the fair 2500 (N = 4):
    // resumed.
    assert_eq!(backlog, 11_000);
    backlog -= 1_000;
    let resumed = port.dequeue(&SPEC, 3, 0, 1_000, backlog, 0);
    assert_eq!(resumed, Some((7, PauseTarget::Flow(3), false)));
}

/// A lone flow is never paused below Q_h: N = 1 makes its fair size the whole backlog.
#[test]
fn a_lone_flow_is_paused_only_above_the_high_threshold() {
    let mut port = AquariusPort::new(&SPEC);
    let paused_at = (1..=20u64)
        .find(|k| {
            port.enqueue(&SPEC, 9, 0, 1_000, k * 1_000, 0)
                .frame
                .is_some()
        })
        .unwrap();
    assert_eq!(paused_at, 11);
}

/// New flows spread over the normal queues, fewest active flows first, and keep theirs.
#[test]
fn flows_take_the_least_loaded_normal_queue_and_keep_it() {
    let spec = AquariusSpec { queues: 4, ..SPEC };
    let mut port = AquariusPort::new(&spec);
    let queues: Vec<u16> = [1, 2, 3, 4, 1]
        .iter()
        .map(|&f| port.enqueue(&spec, f, 0, 100, 100, 0).queue)
        .collect();
    assert_eq!(queues, vec![0, 1, 2, 0, 0], "rsvQ (3) never mapped");
}

/// A flow its far end paused: its new packets join the rsvQ, which stays paused until the
/// flow is resumed and its earlier packet in the normal queue has left.
#[test]
fn the_isolation_queue_resumes_when_its_flows_are_resumed_and_their_earlier_packets_left() {
    let mut port = AquariusPort::new(&SPEC);
    let first = port.enqueue(&SPEC, 5, 0, 100, 100, 0);
    assert_eq!(first.queue, 0);
    port.far_end(5, true, 1_000);
    let second = port.enqueue(&SPEC, 5, 0, 100, 200, 1_000);
    assert_eq!(second.queue, SPEC.isolation_queue());
    assert!(port.isolation_paused());
    port.far_end(5, false, 3_000);
    assert!(
        port.isolation_paused(),
        "its earlier packet still waits in queue 0"
    );
    port.dequeue(&SPEC, 5, 0, 100, 100, 4_000);
    assert!(!port.isolation_paused());
    assert_eq!(port.isolation_clock.totals_ps(10_000), (3_000, 3_000));
    port.dequeue(&SPEC, 5, SPEC.isolation_queue(), 100, 0, 5_000);
    assert_eq!(port.flows_known(), 0, "drained and resumed: forgotten");
    assert_eq!(port.counters.flows_isolated, 1);
}

/// A small deterministic generator for the pause patterns.
struct Draws(u64);

impl Draws {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Runs one random pattern of arrivals, far-end pauses and resumes, and departures (round
/// robin over the queues the port lets send) through `port`: the flows' sequence numbers in
/// departure order, each flow's in its own list.
fn departures(port: &mut AquariusPort, seed: u64) -> HashMap<u64, Vec<u32>> {
    let spec = AquariusSpec {
        queues: 3,
        low_bytes: 1_000_000,
        high_bytes: 2_000_000,
    };
    let mut draws = Draws(seed);
    let mut queues: Vec<VecDeque<(u64, u32)>> = vec![VecDeque::new(); 3];
    let mut next_seq: HashMap<u64, u32> = HashMap::new();
    let mut paused: HashMap<u64, bool> = HashMap::new();
    let mut sent: HashMap<u64, Vec<u32>> = HashMap::new();
    let (mut backlog, mut turn) = (0u64, 0usize);
    for step in 0..4_000u64 {
        let flow = draws.below(6);
        match draws.below(4) {
            0 => {
                let now = !paused.get(&flow).copied().unwrap_or(false);
                paused.insert(flow, now);
                port.far_end(flow, now, step);
            }
            1 | 2 => {
                backlog += 100;
                let seq = next_seq.entry(flow).or_default();
                let got = port.enqueue(&spec, flow, 0, 100, backlog, step);
                queues[got.queue as usize].push_back((flow, *seq));
                *seq += 1;
            }
            _ => {
                let mask = port.paused_mask();
                let pick = (0..3)
                    .map(|k| (turn + k) % 3)
                    .find(|&q| mask & (1 << q) == 0 && !queues[q].is_empty());
                if let Some(q) = pick {
                    turn = q + 1;
                    let (f, seq) = queues[q].pop_front().unwrap();
                    backlog -= 100;
                    port.dequeue(&spec, f, q as u16, 100, backlog, step);
                    sent.entry(f).or_default().push(seq);
                }
            }
        }
    }
    sent
}

/// True if every flow's packets left in the order they arrived.
fn in_order(sent: &HashMap<u64, Vec<u32>>) -> bool {
    sent.values()
        .all(|seqs| seqs.windows(2).all(|w| w[0] < w[1]))
}

/// ❸'s order: under many random pause patterns no packet of a flow leaves before an earlier
/// one, and packets do leave the rsvQ.
#[test]
fn no_flow_is_reordered_under_any_pause_pattern() {
    for seed in 1..=50 {
        let mut port = AquariusPort::new(&SPEC);
        let sent = departures(&mut port, seed);
        assert!(in_order(&sent), "seed {seed}: {sent:?}");
        assert!(port.counters.isolated_packets > 0, "seed {seed}");
    }
}

/// The check fires: an rsvQ that resumes before its flows' earlier packets drained reorders.
#[test]
fn an_isolation_queue_that_ignores_earlier_packets_reorders() {
    let reordered = (1..=50).any(|seed| {
        let mut port = AquariusPort::new(&SPEC);
        port.ignores_earlier_packets = true;
        !in_order(&departures(&mut port, seed))
    });
    assert!(reordered);
}
