//! BFC, Backpressure Flow Control (Goyal et al., NSDI 2022), on the egress ports of a
//! [`super::pfc`] switch, as the Aquarius talk slides (Li, Zeng, Hu and Chen) summarize it; see
//! `docs/validation/transports.md`. Each egress port has a few physical data queues, served in
//! round robin, one packet per unpaused queue in turn (§3.1's "DRR among unpaused queues" with
//! equal quanta, per packet). A flow table keyed by the flow (its source, destination and
//! receiver-side index) holds, for each flow with packets buffered at the port, those packets and
//! its queue: a flow that becomes active takes an empty queue if one is free, else shares the queue
//! its key hashes to (a collision), and keeps its queue while it has packets here (§3.2's dynamic
//! assignment). A flow holding `pause_packets` at the port pauses the queue it came from at the
//! upstream port (every packet carries its upstream queue in `Cell::vc`, the channel of the link it
//! crossed); the upstream counts pauses per queue ([`ClassPauses`]) and holds a queue while its
//! count is above 0; the flow resumes it when it holds fewer (§3.2's per-hop pause). A flow paused
//! through one upstream queue that arrives through another (its upstream entry drained and it was
//! reassigned) moves its pause to the new queue. Queue-mates of a paused flow wait with it: with
//! fewer queues than active flows BFC blocks heads of line as PFC does.

use super::{check_lossless, EthernetSwitchConfig, PortCheck, PortKind};
use crate::blocks::cell::Cell;
use crate::blocks::ethernet::pause::MAX_PAUSE_TARGETS;
use crate::blocks::ethernet::pause::{ClassPauses, PauseTarget};
use crate::engine::rng::mix;
use crate::keys::{invalid, ScenarioError};
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// BFC's settings of every egress port (`switch.bfc_queues`, `switch.bfc_pause_packets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfcSpec {
    /// Physical data queues per egress port (1 to 64; BFC's evaluation: 32).
    pub queues: u16,
    /// A flow holding this many packets at an egress port pauses its upstream queue
    /// (about a one-hop bandwidth-delay product, §3.2).
    pub pause_packets: u32,
}

/// BFC's per-flow queues on PFC's lossless ports.
pub const KIND: PortKind = PortKind {
    name: "bfc",
    description: "BFC (Goyal et al. 2022): PFC's lossless ports (one class) whose egress ports give each active flow a queue of switch.bfc_queues and pause the upstream queue a flow holding switch.bfc_pause_packets came from; PFC's XOFF the backstop; needs per-flow routing",
    trims: false,
    lossless: true,
    classes: false,
    per_flow_routing: true,
    keys: &[
        "switch.pfc_xoff_packets",
        "switch.pfc_xon_packets",
        "switch.pfc_headroom_packets",
        "switch.bfc_queues",
        "switch.bfc_pause_packets",
    ],
    check,
};

/// PFC's buffer with one class, 1 to 64 queues, a flow's pause before the ingress's XOFF.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    check_lossless(c, 1)?;
    let s = c.switch;
    if !(1..=MAX_PAUSE_TARGETS as u32).contains(&s.bfc_queues) {
        return Err(invalid(
            "switch.bfc_queues",
            format!(
                "expected 1 to {MAX_PAUSE_TARGETS} queues per port, got {}",
                s.bfc_queues
            ),
        ));
    }
    if s.bfc_pause_packets == 0 || s.bfc_pause_packets >= s.pfc_xoff_packets {
        return Err(invalid(
            "switch.bfc_pause_packets",
            format!(
                "expected at least 1 packet and fewer than switch.pfc_xoff_packets ({}): a flow pauses its upstream queue before the backstop pauses the port, got {}",
                s.pfc_xoff_packets, s.bfc_pause_packets
            ),
        ));
    }
    Ok(())
}

impl BfcSpec {
    /// BFC's settings of the ports `switch` gives, if its ports are BFC's.
    pub fn of(switch: &EthernetSwitchConfig) -> Option<BfcSpec> {
        (switch.kind().name == KIND.name).then_some(BfcSpec {
            queues: switch.bfc_queues as u16,
            pause_packets: switch.bfc_pause_packets,
        })
    }
}

/// A flow's key in a port's flow table: the packet's source and destination hosts and the
/// flow's index at the receiver (a data packet's `Cell::packet`).
pub fn flow_key(cell: &Cell) -> u64 {
    (cell.src as u64) << 48 | (cell.dst as u64) << 32 | cell.packet as u64
}

/// A flow with packets buffered at a port.
#[derive(Clone, Copy, Debug)]
struct BfcFlow {
    packets: u32,
    queue: u16,
    /// The upstream queue it paused, if it holds it paused.
    pausing: Option<u16>,
}

/// What a packet's arrival did at a BFC port.
#[derive(Clone, Copy, Debug, Default)]
pub struct BfcEnqueued {
    /// The queue it joins.
    pub queue: u16,
    /// Frames for the port it came in on (a resume of the queue a pause moves off, then a
    /// pause).
    pub frames: [Option<(PauseTarget, bool)>; 2],
}

/// What one BFC port counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct BfcCounters {
    /// PAUSE frames naming an upstream queue sent on this port.
    pub queue_pause_frames_sent: u64,
    /// Resume frames naming an upstream queue sent on this port.
    pub queue_resume_frames_sent: u64,
    /// Flows that became active here and took a queue.
    pub flows_assigned: u64,
    /// ... a queue another active flow held (none was empty).
    pub flow_collisions: u64,
}

impl BfcCounters {
    /// Counts a PAUSE (`pause`) or resume frame sent.
    pub fn count_frame(&mut self, pause: bool) {
        if pause {
            self.queue_pause_frames_sent += 1;
        } else {
            self.queue_resume_frames_sent += 1;
        }
    }

    /// These counts and `other`'s, summed.
    pub fn plus(self, other: &BfcCounters) -> BfcCounters {
        BfcCounters {
            queue_pause_frames_sent: self.queue_pause_frames_sent + other.queue_pause_frames_sent,
            queue_resume_frames_sent: self.queue_resume_frames_sent
                + other.queue_resume_frames_sent,
            flows_assigned: self.flows_assigned + other.flows_assigned,
            flow_collisions: self.flow_collisions + other.flow_collisions,
        }
    }
}

/// One egress port's BFC state: its queues' pauses by the far end, its flow table, and what
/// it counted.
#[derive(Clone, Debug)]
pub struct BfcPort {
    /// The far end's pause counters of this port's queues.
    pub pauses: ClassPauses,
    /// What it counted.
    pub counters: BfcCounters,
    /// The flows with packets here, by [`flow_key`] (a fixed hasher: runs repeat).
    flows: HashMap<u64, BfcFlow, BuildHasherDefault<DefaultHasher>>,
}

impl BfcPort {
    /// A port of `queues` queues, none paused, no flow active.
    pub fn new(queues: u16) -> Self {
        BfcPort {
            pauses: ClassPauses::new(queues as usize),
            counters: BfcCounters::default(),
            flows: HashMap::default(),
        }
    }

    /// A packet of flow `flow` arrived through upstream queue `upstream_queue`; the port's
    /// queues hold `queue_packets(q)` packets each: its queue, and the frames to send back.
    pub fn enqueue(
        &mut self,
        spec: &BfcSpec,
        flow: u64,
        upstream_queue: u16,
        queue_packets: impl Fn(u16) -> u32,
    ) -> BfcEnqueued {
        let mut got = BfcEnqueued::default();
        let entry = match self.flows.entry(flow) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                let free = (0..spec.queues).find(|&q| queue_packets(q) == 0);
                self.counters.flows_assigned += 1;
                self.counters.flow_collisions += free.is_none() as u64;
                let hashed = (mix(flow) % spec.queues as u64) as u16;
                v.insert(BfcFlow {
                    packets: 0,
                    queue: free.unwrap_or(hashed),
                    pausing: None,
                })
            }
        };
        entry.packets += 1;
        got.queue = entry.queue;
        if entry.packets >= spec.pause_packets && entry.pausing != Some(upstream_queue) {
            let pause = Some((PauseTarget::Queue(upstream_queue), true));
            got.frames = match entry.pausing {
                None => [pause, None],
                Some(old) => [Some((PauseTarget::Queue(old), false)), pause],
            };
            entry.pausing = Some(upstream_queue);
        }
        got
    }

    /// A packet of flow `flow` left: the upstream queue to resume, if the flow now holds
    /// fewer than `pause_packets` and held it paused.
    pub fn dequeue(&mut self, spec: &BfcSpec, flow: u64) -> Option<PauseTarget> {
        let entry = self.flows.get_mut(&flow).expect("a flow with packets here");
        entry.packets -= 1;
        let resume = match entry.pausing {
            Some(queue) if entry.packets < spec.pause_packets => {
                entry.pausing = None;
                Some(PauseTarget::Queue(queue))
            }
            _ => None,
        };
        if entry.packets == 0 {
            self.flows.remove(&flow);
        }
        resume
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: BfcSpec = BfcSpec {
        queues: 2,
        pause_packets: 2,
    };

    /// Two flows take the two empty queues, a third collides; the second packet of a flow
    /// pauses its upstream queue, a packet through another upstream queue moves the pause,
    /// and draining below the threshold resumes it.
    #[test]
    fn flows_take_empty_queues_then_collide_and_pause_their_upstream_queue() {
        let mut port = BfcPort::new(2);
        let mut held = [0u32; 2];
        let mut offer = |port: &mut BfcPort, flow: u64, upstream: u16| {
            let got = port.enqueue(&SPEC, flow, upstream, |q| held[q as usize]);
            held[got.queue as usize] += 1;
            got
        };
        let a = offer(&mut port, 10, 5);
        let b = offer(&mut port, 11, 5);
        assert_eq!((a.queue, b.queue, port.counters.flow_collisions), (0, 1, 0));
        offer(&mut port, 12, 5);
        assert_eq!(port.counters.flow_collisions, 1, "no queue was empty");
        let again = offer(&mut port, 10, 5);
        assert_eq!(again.queue, 0, "sticky");
        assert_eq!(port.counters.flows_assigned, 3);
        assert_eq!(again.frames, [Some((PauseTarget::Queue(5), true)), None]);
        let moved = offer(&mut port, 10, 7);
        assert_eq!(
            moved.frames,
            [
                Some((PauseTarget::Queue(5), false)),
                Some((PauseTarget::Queue(7), true))
            ]
        );
        assert_eq!(port.dequeue(&SPEC, 10), None, "holds 2 of flow 10");
        assert_eq!(port.dequeue(&SPEC, 10), Some(PauseTarget::Queue(7)));
        assert_eq!(port.dequeue(&SPEC, 10), None);
        assert!(!port.flows.contains_key(&10), "drained: forgotten");
    }

    #[test]
    fn a_queue_stays_paused_until_every_pause_is_resumed() {
        let mut pauses = ClassPauses::new(4);
        pauses.apply(3, true, 100);
        pauses.apply(3, true, 200);
        pauses.apply(3, false, 300);
        assert!(pauses.is_paused(3));
        assert_eq!(pauses.paused_mask(), 1 << 3);
        pauses.apply(3, false, 400);
        assert!(!pauses.any_paused());
        assert_eq!(pauses.totals_ps(1_000), (300, 300));
    }
}
