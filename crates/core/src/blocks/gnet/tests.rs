//! The IP-over-GNet state machines on their own and together over a model fabric that
//! delivers each message after a delay (data cells after random ones: sprayed cells overtake
//! each other).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng as _;

use super::cts::{CtsLimits, CtsScheduler};
use super::ingress::IngressBuffer;
use super::reorder::{Reassembly, Released};
use super::{cells_of, Ctd, Cts, DropCause, Rts};
use crate::engine::rng::{stream, ComponentId};

fn limits() -> CtsLimits {
    CtsLimits {
        classes: 8,
        ports: 4,
        queue_rts: 64,
        ctd_threshold_rts: 64,
        reassembly_bytes: 1 << 20,
        fetch_window: 64,
        ecn_threshold_rts: 16,
    }
}

fn rts(source: u32, slot: u32, class: u8, port: u8) -> Rts {
    Rts {
        source,
        ingress_slot: slot,
        size_bytes: 4096,
        class,
        port,
        sent_ps: 0,
    }
}

#[test]
fn a_ctd_threshold_above_its_queue_is_refused_by_name() {
    let bad = CtsLimits {
        ctd_threshold_rts: 65,
        ..limits()
    };
    let (key, message) = bad.check().expect_err("threshold above the queue");
    assert_eq!(key, "ctd_threshold_rts");
    assert!(
        message.contains("64") && message.contains("65"),
        "{message}"
    );
    let zero = CtsLimits {
        ctd_threshold_rts: 0,
        ..limits()
    };
    assert_eq!(zero.check().unwrap_err().0, "ctd_threshold_rts");
    assert_eq!(limits().check(), Ok(()));
}

/// An RTS that finds its queue at the threshold is answered CTD; other queues still take RTSs.
#[test]
fn an_rts_over_the_threshold_is_answered_ctd() {
    let mut s = CtsScheduler::new(CtsLimits {
        ctd_threshold_rts: 2,
        reassembly_bytes: 0,
        ..limits()
    });
    assert_eq!(s.hear(rts(0, 0, 1, 2)), None);
    assert_eq!(s.hear(rts(1, 0, 1, 2)), None);
    let ctd = s
        .hear(rts(2, 0, 1, 2))
        .expect("the queue is at its threshold");
    assert_eq!(
        (ctd.rts.source, ctd.cause),
        (2, DropCause::RtsQueueOverThreshold)
    );
    assert_eq!(s.hear(rts(2, 1, 1, 3)), None, "another port's queue");
    assert_eq!((s.depth(1, 2), s.waiting()), (2, 3));
    assert_eq!((s.counters.rts_heard, s.counters.ctd_sent), (4, 1));
}

/// A CTS only once the whole packet's reassembly space is allocated; the window of
/// outstanding fetches holds CTSs back until a fetch completes.
#[test]
fn reassembly_space_and_the_fetch_window_hold_cts_back() {
    let mut s = CtsScheduler::new(CtsLimits {
        reassembly_bytes: 8192,
        fetch_window: 2,
        ..limits()
    });
    for source in 0..4 {
        s.hear(rts(source, 0, 0, 0));
    }
    assert!(s.next_cts(|_| 0).is_some());
    assert!(s.next_cts(|_| 1).is_some());
    assert_eq!(s.free_bytes(), 0);
    assert!(
        s.next_cts(|_| 2).is_none(),
        "no space, and the window is full"
    );
    s.released(4096);
    assert!(
        s.next_cts(|_| 2).is_none(),
        "space, but two fetches outstanding"
    );
    s.fetched();
    assert_eq!(s.next_cts(|_| 2).map(|c| c.rts.source), Some(2));
    s.fetched();
    assert!(s.next_cts(|_| 3).is_none(), "window open, no space");
}

/// A packet leaving is ECN-marked while its RTS queue is deeper than the threshold.
#[test]
fn ecn_marks_follow_the_rts_queue_depth() {
    let mut s = CtsScheduler::new(CtsLimits {
        ecn_threshold_rts: 2,
        ..limits()
    });
    for source in 0..3 {
        s.hear(rts(source, 0, 0, 1));
    }
    assert!(s.marks_ecn(&rts(9, 0, 0, 1)), "three RTSs queued");
    assert!(
        !s.marks_ecn(&rts(9, 0, 0, 2)),
        "another port's queue is empty"
    );
    s.next_cts(|_| 0);
    assert!(!s.marks_ecn(&rts(9, 0, 0, 1)), "two RTSs queued");
    assert_eq!(s.counters.ecn_marked, 1);
}

/// Strict priority across classes, round robin across the ports of a class.
#[test]
fn classes_go_by_priority_and_ports_round_robin() {
    let mut s = CtsScheduler::new(limits());
    for (source, class, port) in [(0, 3, 0), (1, 3, 0), (2, 3, 1), (3, 0, 2), (4, 5, 0)] {
        s.hear(rts(source, 0, class, port));
    }
    let order: Vec<u32> = std::iter::from_fn(|| s.next_cts(|_| 0))
        .map(|c| c.rts.source)
        .collect();
    assert_eq!(order, [3, 0, 2, 1, 4]);
}

/// A complete packet waits for the earlier packets of its flow; another flow's does not.
#[test]
fn packets_are_released_in_cts_order_per_flow() {
    let mut r = Reassembly::new(4, 8, 4);
    let grant = |r: &mut Reassembly, source: u32, size_bytes: u32| {
        let cts = Cts {
            rts: Rts {
                size_bytes,
                ..rts(source, 0, 0, 0)
            },
            reassembly_slot: r.allocate(),
        };
        r.register(cts);
        cts.reassembly_slot
    };
    let first = grant(&mut r, 1, 300);
    let second = grant(&mut r, 1, 100);
    let other = grant(&mut r, 2, 100);
    let mut out = vec![];
    assert!(r.on_cell(second, 10));
    r.release_from(second, |p| out.push(p));
    assert!(out.is_empty(), "the flow's first packet is not in");
    assert!(r.on_cell(other, 11));
    r.release_from(other, |p| out.push(p));
    assert_eq!(out.len(), 1);
    assert!(!r.on_cell(first, 12));
    assert!(r.on_cell(first, 13), "300 bytes are two cells");
    r.release_from(first, |p| out.push(p));
    let order: Vec<(u32, u32, u64)> = out
        .iter()
        .map(|p| (p.cts.rts.source, p.cts.reassembly_slot, p.complete_ps))
        .collect();
    assert_eq!(order, [(2, other, 11), (1, first, 13), (1, second, 10)]);
    assert_eq!(r.held(), 0);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "more data cells than the packet has")]
fn a_cell_beyond_the_packet_fires() {
    let mut r = Reassembly::new(1, 1, 1);
    let slot = r.allocate();
    r.register(Cts {
        rts: Rts {
            size_bytes: 100,
            ..rts(0, 0, 0, 0)
        },
        reassembly_slot: slot,
    });
    r.on_cell(slot, 1);
    r.on_cell(slot, 2);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "a fetch completed that was never granted")]
fn a_fetch_never_granted_fires() {
    CtsScheduler::new(limits()).fetched();
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "more reassembly space released than allocated")]
fn space_released_twice_fires() {
    CtsScheduler::new(limits()).released(1);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "the answer carries the packet's own RTS")]
fn an_answer_for_another_packet_fires() {
    let mut b = IngressBuffer::new(0, 1 << 20);
    let stored = b.admit((), (4096, 0, 0), 5).unwrap();
    let wrong = Rts {
        size_bytes: 100,
        ..stored
    };
    b.on_cts(&Cts {
        rts: wrong,
        reassembly_slot: 0,
    });
}

/// A full ingress buffer drops before any RTS, counted by its cause.
#[test]
fn a_full_ingress_buffer_drops_with_its_cause() {
    let mut b = IngressBuffer::new(3, 8192);
    let a = b.admit('a', (4096, 0, 1), 0).unwrap();
    b.admit('b', (4096, 0, 1), 0).unwrap();
    assert_eq!(
        b.admit('c', (1, 0, 1), 0),
        Err(('c', DropCause::IngressBufferFull))
    );
    let ctd = Ctd {
        rts: a,
        cause: DropCause::RtsQueueOverThreshold,
    };
    assert_eq!(b.on_ctd(&ctd), 'a');
    assert_eq!((b.held(), b.used_bytes()), (1, 4096));
    let c = b.counters;
    assert_eq!((c.admitted, c.dropped_ctd, c.dropped_full), (2, 1, 1));
}

/// A message of the model fabric, delivered at its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Message {
    Rts(u32, u32),
    Answer(u32, u32, bool),
    Data(u32),
}

/// The model fabric's state: the ingress buffers, the egress TiN and the messages in flight.
struct Incast {
    ingress: Vec<IngressBuffer<u32>>,
    egress: CtsScheduler,
    reassembly: Reassembly,
    /// RTSs by (source, ingress slot) and CTSs by reassembly slot, as the messages carry them.
    rts: std::collections::HashMap<(u32, u32), Rts>,
    cts: std::collections::HashMap<u32, Cts>,
    flight: BinaryHeap<Reverse<(u64, Message)>>,
    released: Vec<Released>,
}

impl Incast {
    /// Issues every CTS the egress may, each sent after `delay_ps`.
    fn grant(&mut self, now_ps: u64, delay_ps: u64) {
        let reassembly = &mut self.reassembly;
        while let Some(cts) = self.egress.next_cts(|_| reassembly.allocate()) {
            reassembly.register(cts);
            self.cts.insert(cts.reassembly_slot, cts);
            let answer = Message::Answer(cts.rts.source, cts.reassembly_slot, true);
            self.flight.push(Reverse((now_ps + delay_ps, answer)));
        }
    }
}

/// Eight sources each send 20 packets of 4 KB to one egress port at once (an incast): RTSs beyond
/// the threshold of 32 are answered CTD; the others are granted within the window and the
/// reassembly space, their cells arrive out of order, and every packet is released in its
/// flow's RTS order, ECN-marked while the RTS queue is deeper than 16. Every packet admitted
/// is released or dropped by CTD, and the RTS to last cell latency of each is at least three
/// one-way delays (RTS, CTS, data).
#[test]
fn an_incast_closes_its_account_and_releases_in_order() {
    let (sources, packets, delay_ps) = (8u32, 20u32, 1_000u64);
    let mut rng = stream(3, ComponentId { kind: 0, index: 0 });
    let mut m = Incast {
        ingress: (0..sources)
            .map(|s| IngressBuffer::new(s, 1 << 20))
            .collect(),
        egress: CtsScheduler::new(CtsLimits {
            ctd_threshold_rts: 32,
            reassembly_bytes: 16 * 4096,
            fetch_window: 8,
            ..limits()
        }),
        reassembly: Reassembly::new(sources, 8, 4),
        rts: Default::default(),
        cts: Default::default(),
        flight: BinaryHeap::new(),
        released: vec![],
    };
    for p in 0..packets {
        for s in 0..sources {
            let rts = m.ingress[s as usize].admit(p, (4096, 0, 0), 0).unwrap();
            m.rts.insert((s, rts.ingress_slot), rts);
            m.flight
                .push(Reverse((delay_ps, Message::Rts(s, rts.ingress_slot))));
        }
    }
    while let Some(Reverse((now_ps, message))) = m.flight.pop() {
        match message {
            Message::Rts(s, slot) => {
                if let Some(ctd) = m.egress.hear(m.rts[&(s, slot)]) {
                    let answer = Message::Answer(s, ctd.rts.ingress_slot, false);
                    m.flight.push(Reverse((now_ps + delay_ps, answer)));
                }
            }
            Message::Answer(s, slot, true) => {
                let cts = m.cts[&slot];
                let packet = m.ingress[s as usize].on_cts(&cts);
                assert_eq!(packet, cts.rts.ingress_slot, "the CTS pulls its own packet");
                for _ in 0..cells_of(cts.rts.size_bytes) {
                    let at = now_ps + delay_ps + rng.gen_range(0..5 * delay_ps);
                    m.flight.push(Reverse((at, Message::Data(slot))));
                }
            }
            Message::Answer(s, slot, false) => {
                let rts = m.rts[&(s, slot)];
                let cause = DropCause::RtsQueueOverThreshold;
                m.ingress[s as usize].on_ctd(&Ctd { rts, cause });
            }
            Message::Data(slot) => {
                if m.reassembly.on_cell(slot, now_ps) {
                    m.egress.fetched();
                    let (egress, released) = (&mut m.egress, &mut m.released);
                    m.reassembly.release_from(slot, |p| {
                        egress.marks_ecn(&p.cts.rts);
                        egress.released(p.cts.rts.size_bytes);
                        released.push(p);
                    });
                }
                m.grant(now_ps, delay_ps);
            }
        }
        if matches!(message, Message::Rts(..)) {
            m.grant(now_ps, delay_ps);
        }
    }
    check_incast(&m, sources * packets, delay_ps);
}

/// The incast's account and order (see [`an_incast_closes_its_account_and_releases_in_order`]).
fn check_incast(m: &Incast, admitted: u32, delay_ps: u64) {
    let (mut sent, mut dropped) = (0, 0);
    for b in &m.ingress {
        assert_eq!(b.held(), 0);
        sent += b.counters.sent;
        dropped += b.counters.dropped_ctd;
    }
    assert_eq!(
        sent + dropped,
        admitted as u64,
        "admitted = sent + dropped by CTD"
    );
    assert_eq!(m.released.len() as u64, sent);
    assert_eq!(
        (m.egress.counters.cts_sent, m.egress.counters.ctd_sent),
        (sent, dropped)
    );
    assert!(dropped > 0 && sent > 32, "sent {sent}, dropped {dropped}");
    let marked = m.egress.counters.ecn_marked;
    assert!(marked > 0 && marked < sent, "{marked} of {sent} ECN-marked");
    assert_eq!((m.reassembly.held(), m.egress.waiting()), (0, 0));
    assert_eq!(m.egress.free_bytes(), 16 * 4096);
    let mut last = vec![None; m.ingress.len()];
    for p in &m.released {
        let rts = p.cts.rts;
        let before = last[rts.source as usize].replace(rts.ingress_slot);
        assert!(before < Some(rts.ingress_slot), "released in RTS order");
        assert!(
            p.complete_ps - rts.sent_ps >= 3 * delay_ps,
            "RTS, CTS, data"
        );
    }
}
