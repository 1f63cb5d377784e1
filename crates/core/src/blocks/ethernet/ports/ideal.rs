//! Ideal per-flow queues: the upper bound that BFC (Goyal et al., "Backpressure Flow Control",
//! NSDI 2022, §2: "ideal" per-hop flow control gives every flow a queue of its own at every
//! switch and pauses it alone) and Aquarius (Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow
//! Control with Aquarius", slide "Background": "ideal flow control" is a dedicated queue per flow
//! at every port) are measured against. On PFC's lossless ports (one class; its XOFF the
//! last-resort backstop, `switch.per_flow.backstop`), every egress port:
//!
//! - keeps a queue for every flow with packets there, however many, and serves the flows that
//!   may send in round robin, one packet each in turn;
//! - pauses a flow upstream by its id (the frame Aquarius' PAUSE/RESUME carry) while the flow
//!   holds `switch.per_flow.pause_packets` packets there (absent: one hop's bandwidth-delay
//!   product, BFC's threshold, §3.2), and resumes it when it holds fewer;
//! - when the far end pauses a flow, holds that flow's queue alone; every other flow goes on.
//!
//! The port's physical queue ([`PriorityPort`](crate::blocks::priority_port::PriorityPort)'s,
//! one data queue) holds at most the one packet picked for the link: a packet is taken from its
//! flow's queue only when the link is free, so a pause that arrives before a packet starts
//! always holds it back. A host NIC that receives a PAUSE naming one of its flows stops that
//! flow alone, as under Aquarius.

use super::bfc::check_pause_packets;
use super::{check_lossless, EthernetSwitchConfig, PortCheck, PortKind, PFC_THRESHOLD_KEYS};
use crate::blocks::cell::{CellArena, CellId, CellQueue};
use crate::blocks::ethernet::pause::PauseTarget;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;
use crate::keys::ScenarioError;
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use super::aquarius::port::FlowFrame;

/// Ideal per-flow queues' ports.
pub const KIND: PortKind = PortKind {
    name: "per_flow_ideal",
    description: "ideal per-flow queues (the upper bound of BFC and Aquarius): PFC's lossless ports (one class) whose egress ports give every flow a queue of its own, served in round robin, and pause a flow upstream by its id while it holds switch.per_flow.pause_packets there; PFC's XOFF the backstop; needs per-flow routing",
    keys: &[
        PFC_THRESHOLD_KEYS,
        &["switch.per_flow.pause_packets", "switch.per_flow.backstop"],
    ],
    ..PortKind::per_flow_lossless(check)
};

/// PFC's buffer with one class, and a flow's pause before the backstop's XOFF.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    check_lossless(c, 1)?;
    check_pause_packets(c)
}

/// Ideal per-flow queues' settings of every egress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdealSpec {
    /// A flow holding this many packets at a port pauses itself upstream.
    pub pause_packets: u32,
}

impl IdealSpec {
    /// The settings of the ports `switch` gives, if its ports are ideal per-flow queues; a flow
    /// pauses at `hop_bdp_packets` unless `switch.per_flow.pause_packets` says otherwise.
    pub fn of(switch: &EthernetSwitchConfig, hop_bdp_packets: u32) -> Option<IdealSpec> {
        (switch.kind().name == KIND.name).then_some(IdealSpec {
            pause_packets: switch.per_flow.pause_packets.unwrap_or(hop_bdp_packets),
        })
    }
}

/// A flow known at the port: it has packets here, holds its upstream paused, or is paused by
/// the far end.
#[derive(Default)]
struct IdealFlow {
    /// Its packets here, oldest first.
    queue: CellQueue,
    /// The port it paused upstream through, while it holds it paused.
    pausing: Option<u16>,
    /// The far end paused it.
    paused_here: bool,
    /// Its key is in the round robin's ring.
    in_ring: bool,
}

impl IdealFlow {
    /// True while the entry must stay.
    fn is_known(&self) -> bool {
        !self.queue.is_empty() || self.pausing.is_some() || self.paused_here || self.in_ring
    }
}

/// What an ideal port counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdealCounters {
    /// PAUSE frames naming a flow sent upstream.
    pub flow_pause_frames_sent: u64,
    /// RESUME frames naming a flow sent upstream.
    pub flow_resume_frames_sent: u64,
    /// Flows that became active here and took a queue of their own.
    pub flows_queued: u64,
    /// The most flows with packets here at once (queues the port needed).
    pub peak_active_flows: u32,
}

impl IdealCounters {
    /// These counts and `o`'s: sums, and the larger peak.
    pub fn plus(self, o: &IdealCounters) -> IdealCounters {
        IdealCounters {
            flow_pause_frames_sent: self.flow_pause_frames_sent + o.flow_pause_frames_sent,
            flow_resume_frames_sent: self.flow_resume_frames_sent + o.flow_resume_frames_sent,
            flows_queued: self.flows_queued + o.flows_queued,
            peak_active_flows: self.peak_active_flows.max(o.peak_active_flows),
        }
    }
}

/// One egress port's per-flow queues.
#[derive(Default)]
pub struct IdealPort {
    /// The flows known here, by flow key (a fixed hasher: runs repeat).
    flows: HashMap<u64, IdealFlow, BuildHasherDefault<DefaultHasher>>,
    /// The round robin's turn order: flows that may have a packet to send (a flow paused or
    /// emptied since it joined is dropped from it when its turn comes).
    ring: VecDeque<u64>,
    /// Packets in the flows' queues.
    packets: u32,
    /// Flows with packets here.
    active_flows: u32,
    /// Flows the far end pauses.
    paused_flows: u32,
    /// When the wake-up it asked for fires, or `NEVER_PS`.
    wake_at_ps: TimePs,
    /// What it counted.
    pub counters: IdealCounters,
}

impl IdealPort {
    /// A port with no flow.
    pub fn new() -> Self {
        IdealPort {
            wake_at_ps: NEVER_PS,
            ..Default::default()
        }
    }

    /// Packets in the flows' queues (not the one picked for the link).
    pub fn packets(&self) -> u32 {
        self.packets
    }

    /// Queues `cell` of flow `flow`, which arrived on `in_port`: the PAUSE for its flow, if it
    /// now holds `pause_packets` here.
    pub fn enqueue(
        &mut self,
        spec: &IdealSpec,
        cells: &mut CellArena,
        cell: CellId,
        flow: u64,
        in_port: u16,
    ) -> Option<FlowFrame> {
        let f = self.flows.entry(flow).or_default();
        if f.queue.is_empty() {
            self.active_flows += 1;
            self.counters.flows_queued += 1;
            self.counters.peak_active_flows =
                self.counters.peak_active_flows.max(self.active_flows);
        }
        cells.push_back(&mut f.queue, cell);
        self.packets += 1;
        if !f.paused_here && !f.in_ring {
            f.in_ring = true;
            self.ring.push_back(flow);
        }
        if f.pausing.is_none() && f.queue.len() >= spec.pause_packets {
            f.pausing = Some(in_port);
            self.counters.flow_pause_frames_sent += 1;
            return Some((in_port, PauseTarget::Flow(flow), true));
        }
        None
    }

    /// The next packet for the link, in round robin over the flows the far end has not
    /// paused, and the RESUME for its flow if it now holds fewer than `pause_packets`.
    pub fn next(
        &mut self,
        spec: &IdealSpec,
        cells: &mut CellArena,
    ) -> Option<(CellId, Option<FlowFrame>)> {
        while let Some(flow) = self.ring.pop_front() {
            let Entry::Occupied(mut slot) = self.flows.entry(flow) else {
                unreachable!("a flow in the ring is known");
            };
            let f = slot.get_mut();
            let Some(cell) = (!f.paused_here)
                .then(|| cells.pop_front(&mut f.queue))
                .flatten()
            else {
                f.in_ring = false;
                if !f.is_known() {
                    slot.remove();
                }
                continue;
            };
            self.packets -= 1;
            let mut resume = None;
            if let Some(in_port) = f.pausing.filter(|_| f.queue.len() < spec.pause_packets) {
                f.pausing = None;
                self.counters.flow_resume_frames_sent += 1;
                resume = Some((in_port, PauseTarget::Flow(flow), false));
            }
            if f.queue.is_empty() {
                self.active_flows -= 1;
                f.in_ring = false;
                if !f.is_known() {
                    slot.remove();
                }
            } else {
                self.ring.push_back(flow);
            }
            return Some((cell, resume));
        }
        None
    }

    /// The far end paused (`pause`) or resumed flow `flow`.
    pub fn far_end(&mut self, flow: u64, pause: bool) {
        let f = self.flows.entry(flow).or_default();
        if f.paused_here != pause {
            self.paused_flows = if pause {
                self.paused_flows + 1
            } else {
                self.paused_flows - 1
            };
        }
        f.paused_here = pause;
        if !pause && !f.queue.is_empty() && !f.in_ring {
            f.in_ring = true;
            self.ring.push_back(flow);
        }
        if !f.is_known() {
            self.flows.remove(&flow);
        }
    }

    /// True while the far end pauses some flow.
    pub fn any_flow_paused(&self) -> bool {
        self.paused_flows > 0
    }

    /// The wake-up to book for when the link frees at `free_ps`, if a flow may have a packet
    /// for it and none is booked for then.
    pub fn wake_for(&mut self, free_ps: TimePs) -> Option<TimePs> {
        if self.ring.is_empty() || self.wake_at_ps == free_ps {
            return None;
        }
        self.wake_at_ps = free_ps;
        Some(free_ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: IdealSpec = IdealSpec { pause_packets: 2 };

    fn packet(cells: &mut CellArena, flow: u32) -> CellId {
        super::super::test_packet(cells, |c| c.packet = flow)
    }

    /// Three flows, each its own queue: served one packet each in turn; the second packet of a
    /// flow pauses it upstream and its departure resumes it; a flow the far end paused waits
    /// while the others go, then goes on where it stopped.
    #[test]
    fn flows_are_served_in_turn_paused_alone_and_resumed_in_order() {
        let mut cells = CellArena::new();
        let mut port = IdealPort::new();
        let mut sent = Vec::new();
        let mut frames = Vec::new();
        for (flow, in_port) in [(1, 4), (1, 4), (2, 5), (3, 6), (3, 6)] {
            let cell = packet(&mut cells, flow);
            frames.extend(port.enqueue(&SPEC, &mut cells, cell, flow as u64, in_port));
        }
        assert_eq!(
            frames,
            vec![
                (4, PauseTarget::Flow(1), true),
                (6, PauseTarget::Flow(3), true)
            ]
        );
        assert_eq!((port.packets(), port.counters.peak_active_flows), (5, 3));
        port.far_end(2, true);
        let mut resumes = Vec::new();
        while let Some((cell, resume)) = port.next(&SPEC, &mut cells) {
            sent.push(cells[cell].packet);
            resumes.extend(resume);
        }
        assert_eq!(sent, vec![1, 3, 1, 3], "flow 2 paused: the others go");
        assert_eq!(
            resumes,
            vec![
                (4, PauseTarget::Flow(1), false),
                (6, PauseTarget::Flow(3), false)
            ]
        );
        assert_eq!(port.packets(), 1, "flow 2's packet waits");
        port.far_end(2, false);
        let (cell, _) = port.next(&SPEC, &mut cells).expect("flow 2 resumed");
        assert_eq!(cells[cell].packet, 2);
        assert!(port.next(&SPEC, &mut cells).is_none());
        assert!(
            port.flows.is_empty() && port.ring.is_empty(),
            "all forgotten"
        );
        assert_eq!(port.counters.flows_queued, 3);
    }

    /// A wake-up is asked for once per time the link frees, and only while a flow waits.
    #[test]
    fn a_wake_up_is_booked_once_while_a_flow_waits() {
        let mut cells = CellArena::new();
        let mut port = IdealPort::new();
        assert_eq!(port.wake_for(100), None, "nothing waits");
        let cell = packet(&mut cells, 7);
        port.enqueue(&SPEC, &mut cells, cell, 7, 0);
        assert_eq!(port.wake_for(100), Some(100));
        assert_eq!(port.wake_for(100), None, "already booked");
        assert_eq!(port.wake_for(200), Some(200));
    }
}
