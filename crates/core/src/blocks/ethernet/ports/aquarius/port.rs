//! One Aquarius egress port's state ([`AquariusPort`]): its flow table (❶ each flow's queue,
//! ❷ its buffered bytes and the pause it sent upstream, ❸ whether its far end paused it) and
//! the reserved isolation queue's resume conditions. The port's queues themselves are a
//! [`PriorityPort`](crate::blocks::priority_port::PriorityPort)'s, which the PFC ports hold;
//! this file decides which queue a packet joins, which frames go upstream, and when the rsvQ
//! may send.

use super::AquariusSpec;
use crate::blocks::ethernet::pause::{PauseClock, PauseTarget};
use crate::blocks::priority_port::ClassMask;
use crate::engine::stats::{only_counts, Tally};
use crate::engine::time::TimePs;
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A flow known at the port: it has packets here, holds its upstream paused, or is paused by
/// the far end.
#[derive(Clone, Copy, Debug, Default)]
struct AquariusFlow {
    /// Bytes buffered here (❷'s size).
    bytes: u64,
    /// Packets in its normal queue.
    normal_packets: u32,
    /// Packets in the rsvQ.
    isolated_packets: u32,
    /// Its normal queue while `normal_packets > 0` (❶).
    queue: u16,
    /// The port it paused upstream through, while it holds it paused (❷).
    pausing: Option<u16>,
    /// The far end paused it (❸: isolated).
    paused_here: bool,
}

impl AquariusFlow {
    /// True while the entry must stay: packets here, a pause sent, or a pause received.
    fn is_known(&self) -> bool {
        self.bytes > 0 || self.pausing.is_some() || self.paused_here
    }
}

/// What an Aquarius port counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct AquariusCounters {
    /// PAUSE frames naming a flow sent upstream from this port's congestion (❷).
    pub flow_pause_frames_sent: u64,
    /// RESUME frames naming a flow sent upstream.
    pub flow_resume_frames_sent: u64,
    /// ... of the pauses, sent above the high threshold (every arriving flow).
    pub pauses_above_high: u64,
    /// Flows the far end paused that this port isolated in its rsvQ (❸).
    pub flows_isolated: u64,
    /// Packets that joined the rsvQ.
    pub isolated_packets: u64,
    /// Flows that became active here and took a normal queue (❶).
    pub flows_mapped: u64,
}

impl Tally for AquariusCounters {
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.flow_pause_frames_sent,
            &mut self.flow_resume_frames_sent,
            &mut self.pauses_above_high,
            &mut self.flows_isolated,
            &mut self.isolated_packets,
            &mut self.flows_mapped,
        ]
    }
}

const _: () = assert!(only_counts::<AquariusCounters>(6));

/// A frame for upstream: the port to send it on, the flow, and PAUSE (true) or RESUME.
pub type FlowFrame = (u16, PauseTarget, bool);

/// What a packet's arrival did at an Aquarius port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AquariusEnqueued {
    /// The queue it joins.
    pub queue: u16,
    /// A PAUSE for its flow, to send back on the port it came in on.
    pub frame: Option<FlowFrame>,
}

/// One egress port's Aquarius state.
#[derive(Clone, Debug)]
pub struct AquariusPort {
    /// The flows known here, by flow key (a fixed hasher: runs repeat).
    flows: HashMap<u64, AquariusFlow, BuildHasherDefault<DefaultHasher>>,
    /// Active flows per normal queue (❶'s load).
    flows_per_queue: Vec<u32>,
    /// Flows with bytes here (❷'s N).
    active_flows: u32,
    /// Isolated flows the far end still pauses.
    isolated_paused: u32,
    /// Flows with packets in the rsvQ and, older, in a normal queue.
    isolated_waiting: u32,
    /// The rsvQ's index.
    isolation_queue: u16,
    /// When the rsvQ was paused, and for how long.
    pub isolation_clock: PauseClock,
    /// What it counted.
    pub counters: AquariusCounters,
    /// Breaks ❸'s order on purpose (tests): the rsvQ resumes once its flows are resumed,
    /// without waiting for their earlier packets in the normal queues to drain.
    #[cfg(test)]
    pub ignores_earlier_packets: bool,
}

/// ceil(log2 n) for n >= 1.
fn ceil_log2(n: u32) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

impl AquariusPort {
    /// A port of `spec.queues` queues, no flow known.
    pub fn new(spec: &AquariusSpec) -> Self {
        AquariusPort {
            flows: HashMap::default(),
            flows_per_queue: vec![0; spec.isolation_queue() as usize],
            active_flows: 0,
            isolated_paused: 0,
            isolated_waiting: 0,
            isolation_queue: spec.isolation_queue(),
            isolation_clock: PauseClock::default(),
            counters: AquariusCounters::default(),
            #[cfg(test)]
            ignores_earlier_packets: false,
        }
    }

    /// True while the rsvQ may not send: an isolated flow is still paused by the far end, or
    /// a flow in it still has older packets in a normal queue.
    pub fn isolation_paused(&self) -> bool {
        #[cfg(test)]
        if self.ignores_earlier_packets {
            return self.isolated_paused > 0;
        }
        self.isolated_paused > 0 || self.isolated_waiting > 0
    }

    /// The port's queues the rsvQ's state pauses: its bit while it may not send.
    pub fn paused_mask(&self) -> ClassMask {
        (self.isolation_paused() as ClassMask) << self.isolation_queue
    }

    /// True while some flow is isolated and still paused by the far end.
    pub fn any_flow_paused(&self) -> bool {
        self.isolated_paused > 0
    }

    /// The fair size: `backlog >> ceil(log2 N)`.
    fn fair_bytes(&self, backlog_bytes: u64) -> u64 {
        backlog_bytes >> ceil_log2(self.active_flows)
    }

    /// A packet of `size_bytes` of flow `flow` arrived on `in_port`; the port now buffers
    /// `backlog_bytes` of data, this packet included: its queue (❶, ❸), and the PAUSE (❷).
    pub fn enqueue(
        &mut self,
        spec: &AquariusSpec,
        flow: u64,
        in_port: u16,
        size_bytes: u64,
        backlog_bytes: u64,
        now_ps: TimePs,
    ) -> AquariusEnqueued {
        let was_paused = self.isolation_paused();
        let rsv = spec.isolation_queue();
        let e = self.flows.entry(flow).or_default();
        let queue = if e.paused_here || e.isolated_packets > 0 {
            if e.isolated_packets == 0 && e.normal_packets > 0 {
                self.isolated_waiting += 1;
            }
            e.isolated_packets += 1;
            self.counters.isolated_packets += 1;
            rsv
        } else {
            if e.normal_packets == 0 {
                let least = (0..self.flows_per_queue.len())
                    .min_by_key(|&q| self.flows_per_queue[q])
                    .expect("a normal queue");
                self.flows_per_queue[least] += 1;
                self.counters.flows_mapped += 1;
                e.queue = least as u16;
            }
            e.normal_packets += 1;
            e.queue
        };
        if e.bytes == 0 {
            self.active_flows += 1;
        }
        e.bytes += size_bytes;
        let e = *e;
        let fair = self.fair_bytes(backlog_bytes);
        let above_high = backlog_bytes > spec.high_bytes as u64;
        let pause = e.pausing.is_none()
            && (above_high || (backlog_bytes > spec.low_bytes as u64 && e.bytes > fair));
        let mut frame = None;
        if pause {
            self.flows.get_mut(&flow).expect("just entered").pausing = Some(in_port);
            self.counters.flow_pause_frames_sent += 1;
            self.counters.pauses_above_high += above_high as u64;
            frame = Some((in_port, PauseTarget::Flow(flow), true));
        }
        self.clock_isolation(was_paused, now_ps);
        AquariusEnqueued { queue, frame }
    }

    /// A packet of `size_bytes` of flow `flow` left queue `queue`; the port now buffers
    /// `backlog_bytes`: the RESUME for the flow, if it held its upstream paused and now holds
    /// less than the fair size, the backlog fell below Q_l, or it drained.
    pub fn dequeue(
        &mut self,
        spec: &AquariusSpec,
        flow: u64,
        queue: u16,
        size_bytes: u64,
        backlog_bytes: u64,
        now_ps: TimePs,
    ) -> Option<FlowFrame> {
        let was_paused = self.isolation_paused();
        let Entry::Occupied(mut slot) = self.flows.entry(flow) else {
            unreachable!("a flow with packets here");
        };
        let e = slot.get_mut();
        if queue == spec.isolation_queue() {
            e.isolated_packets -= 1;
        } else {
            e.normal_packets -= 1;
            if e.normal_packets == 0 {
                self.flows_per_queue[e.queue as usize] -= 1;
                if e.isolated_packets > 0 {
                    self.isolated_waiting -= 1;
                }
            }
        }
        e.bytes -= size_bytes;
        if e.bytes == 0 {
            self.active_flows -= 1;
        }
        let fair = backlog_bytes >> ceil_log2(self.active_flows);
        let resume = e.pausing.filter(|_| {
            e.bytes == 0
                || backlog_bytes < spec.low_bytes as u64
                || (backlog_bytes <= spec.high_bytes as u64 && e.bytes < fair)
        });
        let mut frame = None;
        if let Some(in_port) = resume {
            e.pausing = None;
            self.counters.flow_resume_frames_sent += 1;
            frame = Some((in_port, PauseTarget::Flow(flow), false));
        }
        if !e.is_known() {
            slot.remove();
        }
        self.clock_isolation(was_paused, now_ps);
        frame
    }

    /// The far end paused (`pause`) or resumed flow `flow` at `now_ps` (❸).
    pub fn far_end(&mut self, flow: u64, pause: bool, now_ps: TimePs) {
        let was_paused = self.isolation_paused();
        let e = self.flows.entry(flow).or_default();
        if pause && !e.paused_here {
            e.paused_here = true;
            self.isolated_paused += 1;
            self.counters.flows_isolated += 1;
        } else if !pause && e.paused_here {
            e.paused_here = false;
            self.isolated_paused -= 1;
        }
        if !self.flows[&flow].is_known() {
            self.flows.remove(&flow);
        }
        self.clock_isolation(was_paused, now_ps);
    }

    /// Starts or ends the rsvQ's pause clock if its state changed from `was_paused`.
    fn clock_isolation(&mut self, was_paused: bool, now_ps: TimePs) {
        let paused = self.isolation_paused();
        if paused != was_paused {
            self.isolation_clock.apply(paused, now_ps);
        }
    }

    /// Flows known here (tests).
    #[cfg(test)]
    pub fn flows_known(&self) -> usize {
        self.flows.len()
    }
}
