//! The bulk channel (Eberle and Gura 2002, §3.2–3.3, §4.2).
//!
//! B4, Clint: a pipeline of three slot-long stages. In slot s−1 every node sends a configuration
//! packet (its request vector; the targets' enable vectors) to the central arbiter as late as
//! lets the grant packets return by the slot's end; the arbiter computes a Least Choice First
//! schedule; grants arrive at the slot boundary and synchronize the nodes. In slot s each granted
//! initiator sends its request through the bufferless crossbar after the slot gap; in slot s+1
//! the targets send their acknowledgments over the quick channel along the inverted schedule.
//!
//! Speculative transfers (B4 with `bulk.speculative`): the paper names a method "to
//! speculatively schedule the bulk schedule to reduce the synchronization penalty under light
//! load" and leaves it to a future publication (§4.2). Our reading: a node without a grant in
//! the current slot sends a ready request at once, unscheduled, after the slot gap and before
//! the arbiter computes the next slot's schedule. The switch forwards it if its output is idle
//! and drops it otherwise (the initiator's timeout finds the loss); scheduled transfers take
//! precedence. The arbiter, which sees the switch's connections, keeps the input and output of
//! a speculative transfer out of the next slot's schedule, and the target acknowledges it in the
//! acknowledgment stage after that, so neither its request nor its acknowledgment can meet a
//! scheduled packet.
//!
//! B1–B3: unscheduled. A node sends its oldest ready request whenever its bulk link is free.
//! A request meeting a busy output is dropped (B1), held at its initiator by back pressure until
//! the output frees (B2, head-of-line blocking the node), or stored in a 16-packet output buffer
//! and dropped only when that is full (B3). Acknowledgments travel over the quick channel at once.

use std::collections::VecDeque;

use super::errors::Channel;
use super::nic::{Nic, Packet, State, Transmission};
use super::timing::bytes;
use super::Architecture;
use super::{Clint, Event};
use crate::blocks::collision_switch::{
    CollisionSwitch, Contender, Mixing, OnBusy, Priority, Verdict,
};
use crate::blocks::matching::UNMATCHED;
use crate::blocks::port_set::PortSet;
use crate::engine::arena::Id;

use crate::engine::time::TimePs;

/// A bulk request on its way through the bulk switch.
#[derive(Clone, Copy, Debug)]
pub struct BulkMove {
    /// Initiator (switch input).
    pub from: u16,
    /// Target (switch output).
    pub to: u16,
    /// The transmission.
    pub tx: Transmission,
    /// Sent unscheduled (B4's speculative transfers).
    pub speculative: bool,
}

/// B3's output buffers: per output, a FIFO of whole packets sent on at line rate, dropping
/// arrivals that find it full.
pub struct OutputBuffers {
    capacity: usize,
    /// Per output: start times of the packets stored, waiting or leaving.
    starts_ps: Vec<VecDeque<TimePs>>,
}

impl OutputBuffers {
    /// `outputs` outputs of `capacity` packets each.
    pub fn new(outputs: usize, capacity: u32) -> Self {
        let capacity = capacity as usize;
        OutputBuffers {
            capacity,
            starts_ps: (0..outputs)
                .map(|_| VecDeque::with_capacity(capacity + 1))
                .collect(),
        }
    }

    /// A packet of `duration_ps` arrives at `output` now: the time it starts leaving (at once on
    /// an idle output), or `None` when every buffer is taken.
    pub fn admit(&mut self, now_ps: TimePs, output: u16, duration_ps: TimePs) -> Option<TimePs> {
        let queue = &mut self.starts_ps[output as usize];
        // Packets that have finished leaving free their buffer.
        while queue.front().is_some_and(|&s| s + duration_ps <= now_ps) {
            queue.pop_front();
        }
        if queue.len() >= self.capacity {
            return None;
        }
        let start_ps = queue
            .back()
            .map_or(now_ps, |&s| (s + duration_ps).max(now_ps));
        queue.push_back(start_ps);
        Some(start_ps)
    }
}

/// The bulk channel's own state: each node's uplink, the bufferless crossbar, and B3's output
/// buffers. It decides what happens to a request at the switch; Clint's loop carries its
/// decisions as events and tells the NICs.
pub struct BulkChannel {
    /// Until when each node's uplink sends (`TimePs::MAX`: a request held by back pressure).
    uplink_busy_until_ps: Vec<TimePs>,
    switch: CollisionSwitch<BulkMove>,
    /// B3's output buffers; `None` in the other architectures.
    output_buffers: Option<OutputBuffers>,
    /// Outputs with a `BulkFree` event pending (B2).
    free_pending: Vec<bool>,
    /// B4: the arbiter schedules the switch.
    scheduled: bool,
    /// B4: nodes may send speculatively.
    speculative: bool,
    /// B4: until when each input and each output carries a speculative transfer.
    speculative_input_until_ps: Vec<TimePs>,
    speculative_output_until_ps: Vec<TimePs>,
    /// Test fault: the arbiter is not told of speculative transfers.
    #[cfg(test)]
    pub hide_speculation: bool,
}

/// What became of a request whose head reached its switch output.
pub enum HeadOutcome {
    /// Stored in B3's output buffer; it leaves at `start_ps`.
    Buffered(TimePs),
    /// B3's output buffer was full: dropped.
    Overflow,
    /// Contends with the other heads of this instant; `resolve` decides. True for the first
    /// head of the instant (the caller schedules the resolution).
    Contending(bool),
}

impl BulkChannel {
    /// The bulk channel of `nodes` nodes in architecture `arch`, B3's outputs holding
    /// `output_buffers` requests each, B4's nodes sending `speculative` transfers or not.
    pub fn new(nodes: usize, arch: Architecture, output_buffers: u32, speculative: bool) -> Self {
        let on_busy = if arch == Architecture::B2 {
            OnBusy::Wait
        } else {
            OnBusy::Drop
        };
        BulkChannel {
            uplink_busy_until_ps: vec![0; nodes],
            switch: CollisionSwitch::new(nodes, on_busy, Mixing::Preempt),
            output_buffers: (arch == Architecture::B3)
                .then(|| OutputBuffers::new(nodes, output_buffers)),
            free_pending: vec![false; nodes],
            scheduled: arch == Architecture::B4,
            speculative: speculative && arch == Architecture::B4,
            speculative_input_until_ps: vec![0; nodes],
            speculative_output_until_ps: vec![0; nodes],
            #[cfg(test)]
            hide_speculation: false,
        }
    }

    /// A speculative transfer passes the switch until `until_ps`.
    pub fn hold_speculative(&mut self, head: BulkMove, until_ps: TimePs) {
        self.speculative_input_until_ps[head.from as usize] = until_ps;
        self.speculative_output_until_ps[head.to as usize] = until_ps;
    }

    /// The inputs and the outputs speculative transfers hold after `at_ps`.
    pub fn speculating_after(&self, at_ps: TimePs) -> (PortSet, PortSet) {
        #[cfg(test)]
        if self.hide_speculation {
            return (PortSet::EMPTY, PortSet::EMPTY);
        }
        let busy = |until: &Vec<TimePs>| -> PortSet {
            until
                .iter()
                .enumerate()
                .filter(|&(_, &until_ps)| until_ps > at_ps)
                .map(|(port, _)| port)
                .collect()
        };
        (
            busy(&self.speculative_input_until_ps),
            busy(&self.speculative_output_until_ps),
        )
    }

    /// True when B4's nodes may send speculatively.
    pub fn speculative(&self) -> bool {
        self.speculative
    }

    /// True when `node`'s uplink is not sending at `now_ps`.
    pub fn uplink_idle(&self, node: u16, now_ps: TimePs) -> bool {
        now_ps >= self.uplink_busy_until_ps[node as usize]
    }

    /// `node`'s uplink sends until `until_ps` (`TimePs::MAX`: held by back pressure).
    pub fn occupy(&mut self, node: u16, until_ps: TimePs) {
        self.uplink_busy_until_ps[node as usize] = until_ps;
    }

    /// A request of `duration_ps` has its head at its output now.
    pub fn head(&mut self, now_ps: TimePs, head: BulkMove, duration_ps: TimePs) -> HeadOutcome {
        if let Some(buffers) = &mut self.output_buffers {
            return match buffers.admit(now_ps, head.to, duration_ps) {
                Some(start_ps) => HeadOutcome::Buffered(start_ps),
                None => HeadOutcome::Overflow,
            };
        }
        // Scheduled transfers (B4) take precedence over speculative ones.
        let contender = Contender {
            input: head.from,
            output: head.to,
            priority: if self.scheduled && !head.speculative {
                Priority::High
            } else {
                Priority::Low
            },
            duration_ps,
            payload: head,
        };
        HeadOutcome::Contending(self.switch.offer(contender))
    }

    /// B2: when `output` frees, if requests wait for it and no `BulkFree` is pending yet.
    pub fn watch(&mut self, output: u16) -> Option<TimePs> {
        let o = output as usize;
        if self.free_pending[o] || self.switch.waiters(output) == 0 {
            return None;
        }
        self.free_pending[o] = true;
        Some(self.switch.busy_until_ps(output))
    }

    /// B2: `output` is free: the longest-waiting request takes it, for `restart_ps` from now.
    pub fn free(&mut self, now_ps: TimePs, output: u16, restart_ps: TimePs) -> Option<BulkMove> {
        self.free_pending[output as usize] = false;
        self.switch.next_waiter(now_ps, output, restart_ps)
    }
}

impl Clint {
    /// The node's bulk link is free: unscheduled, send its oldest ready request; B4, consider a
    /// speculative transfer.
    pub(super) fn bulk_wake(&mut self, node: u16) {
        let n = node as usize;
        if !self.bulk.uplink_idle(node, self.now_ps) {
            return;
        }
        if self.arch == Architecture::B4 {
            self.speculate(node);
            return;
        }
        let Some(id) = self.nics[n].oldest_ready(&self.packets, None) else {
            return;
        };
        self.start_request(node, id, self.now_ps, false);
    }

    /// B4 with speculative transfers: an idle node sends its oldest ready request unscheduled,
    /// if its head reaches the switch after the slot gap (when the scheduled transfers have
    /// taken their outputs) and before the arbiter computes the next slot's schedule.
    fn speculate(&mut self, node: u16) {
        if !self.bulk.speculative() {
            return;
        }
        let t = &self.t;
        let slot_start_ps = self.now_ps - self.now_ps % t.slot_ps;
        let opens_ps = slot_start_ps + t.slot_gap_ps;
        let arbitration_ps = slot_start_ps + t.cfg_offset_ps + t.cfg_ps + t.propagation_ps;
        if self.now_ps < opens_ps {
            self.schedule(opens_ps, Event::BulkWake(node));
            return;
        }
        if self.now_ps + t.bulk_to_output_ps() >= arbitration_ps {
            return; // the next slot's grant wakes the node
        }
        let Some(id) = self.nics[node as usize].oldest_ready(&self.packets, None) else {
            return;
        };
        self.counters.speculative.sent += u64::from(self.measuring());
        self.start_request(node, id, self.now_ps, true);
    }

    /// Starts sending request `id` from `node` at `start_ps`, scheduled or not.
    fn start_request(&mut self, node: u16, id: Id<Packet>, start_ps: TimePs, speculative: bool) {
        let to = self.packets[id].dst;
        let tx = self.transmit(id, start_ps);
        self.packets[id].speculative = speculative;
        let end_ps = start_ps + self.t.breq_ps;
        self.bulk.occupy(node, end_ps);
        if self.arch != Architecture::B4 || speculative {
            self.schedule(end_ps, Event::BulkWake(node));
        }
        let head = BulkMove {
            from: node,
            to,
            tx,
            speculative,
        };
        self.schedule(start_ps + self.t.bulk_to_output_ps(), Event::BulkHead(head));
    }

    pub(super) fn bulk_head(&mut self, head: BulkMove) {
        if head.speculative && !self.arbiter.enabled(head.from) {
            // The switch sets no connection its target's enable vector refuses.
            self.counters.speculative.lost += u64::from(self.measuring());
            return;
        }
        match self.bulk.head(self.now_ps, head, self.t.breq_ps) {
            HeadOutcome::Buffered(start_ps) => self.forward_request(head, start_ps),
            HeadOutcome::Overflow => self.counters.overflow_drops += u64::from(self.measuring()),
            HeadOutcome::Contending(first) => {
                if first {
                    self.schedule_clock(self.now_ps, Event::BulkResolve);
                }
            }
        }
    }

    fn forward_request(&mut self, head: BulkMove, start_ps: TimePs) {
        let arrive_ps = start_ps + self.t.breq_ps + self.t.propagation_ps;
        let (at, tx) = (head.to, head.tx);
        self.schedule(arrive_ps, Event::RequestArrive { at, tx });
    }

    pub(super) fn bulk_resolve(&mut self) {
        let mut verdicts = self.bulk.switch.resolve(self.now_ps);
        for verdict in verdicts.drain(..) {
            match verdict {
                Verdict::Forward { payload, start_ps } => {
                    if payload.speculative {
                        self.bulk
                            .hold_speculative(payload, start_ps + self.t.breq_ps);
                    }
                    self.forward_request(payload, start_ps);
                }
                Verdict::Drop { payload, .. } if payload.speculative => {
                    self.counters.speculative.lost += u64::from(self.measuring());
                }
                Verdict::Drop { .. } => {
                    if self.arch == Architecture::B4 {
                        self.counters.scheduled_collisions += 1;
                    }
                    self.counters.collisions_with_request += u64::from(self.measuring());
                }
                Verdict::Wait { payload } => self.stall(payload),
                Verdict::Preempted { payload } => {
                    // A scheduled transfer cut a speculative one off: the arbiter kept its
                    // paths out of the schedule, so this is a scheduling fault.
                    debug_assert!(payload.speculative);
                    if Nic::current(&self.packets, payload.tx).is_some() {
                        self.packets[payload.tx.packet].lost = true;
                    }
                    self.counters.scheduled_collisions += 1;
                }
            }
        }
        self.bulk.switch.recycle(verdicts);
    }

    /// B2: back pressure stops the request; its initiator holds it until the output is free.
    fn stall(&mut self, head: BulkMove) {
        self.counters.back_pressure_stalls += u64::from(self.measuring());
        self.packets[head.tx.packet].state = State::Ready;
        self.bulk.occupy(head.from, TimePs::MAX);
        self.watch_output(head.to);
    }

    fn watch_output(&mut self, output: u16) {
        if let Some(free_ps) = self.bulk.watch(output) {
            self.schedule(free_ps, Event::BulkFree(output));
        }
    }

    /// B2: the output is free: the longest-waiting request gets it; the go signal reaches its
    /// initiator one propagation delay later, which sends the request again from the start.
    pub(super) fn bulk_free(&mut self, output: u16) {
        let restart_ps = 2 * self.t.propagation_ps + self.t.bulk_switch_ps;
        if let Some(head) = self.bulk.free(self.now_ps, output, restart_ps) {
            let start_ps = self.now_ps + self.t.propagation_ps;
            let tx = self.transmit(head.tx.packet, start_ps);
            let end_ps = start_ps + self.t.breq_ps;
            self.bulk.occupy(head.from, end_ps);
            self.schedule(end_ps, Event::BulkWake(head.from));
            let output_start_ps = start_ps + self.t.bulk_to_output_ps();
            self.forward_request(BulkMove { tx, ..head }, output_start_ps);
        }
        self.watch_output(output);
    }

    /// B4, arbitration stage: every node sends the arbiter a configuration packet naming the
    /// targets it has a ready request for; one that fails its CRC names none.
    pub(super) fn configure(&mut self) {
        let cfg_at_arbiter_ps = self.now_ps + self.t.cfg_ps + self.t.propagation_ps;
        for node in 0..self.nodes() {
            let mut requests = self.nics[node].request_vector(&self.packets);
            if self.errors.corrupted(Channel::Quick, bytes::CFG, 1) {
                self.counters.faults.crc_scheduling += u64::from(self.measuring());
                requests = PortSet::EMPTY;
            }
            let node = node as u16;
            self.schedule(cfg_at_arbiter_ps, Event::Configuration { node, requests });
        }
        self.schedule_clock(cfg_at_arbiter_ps, Event::Arbitrate);
        self.schedule_clock(self.now_ps + self.t.slot_ps, Event::Configure);
    }

    /// B4: the arbiter computes the schedule from the configuration packets it heard and sends
    /// every node its grant packet; a grant that fails its CRC is not acted on.
    pub(super) fn arbitrate(&mut self) {
        let t = &self.t;
        let grant_ps = self.now_ps + t.arbiter_ps + t.gnt_ps + t.propagation_ps;
        debug_assert_eq!(
            grant_ps % t.slot_ps,
            0,
            "grants arrive at the slot boundary"
        );
        let (busy_inputs, busy_outputs) = self.bulk.speculating_after(self.now_ps);
        self.arbiter.arbitrate(busy_inputs, busy_outputs);
        for node in 0..self.nodes() {
            let mut target = self.arbiter.grant(node);
            if self.errors.corrupted(Channel::Quick, bytes::GNT, 1) {
                self.counters.faults.crc_scheduling += u64::from(self.measuring());
                target = UNMATCHED;
            }
            self.schedule_clock(
                grant_ps,
                Event::Grant {
                    node: node as u16,
                    target,
                },
            );
        }
    }

    /// B4, transfer stage: a granted initiator sends its oldest request to the granted target;
    /// one without a grant may send speculatively.
    pub(super) fn grant(&mut self, node: u16, target: u16) {
        if target == UNMATCHED {
            self.bulk_wake(node);
            return;
        }
        let node = node as usize;
        self.node_table.grants[node] += 1;
        let id = self.nics[node]
            .oldest_ready(&self.packets, Some(target))
            .expect("a requested target still has its request ready");
        self.start_request(node as u16, id, self.now_ps + self.t.slot_gap_ps, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_buffers_queue_at_line_rate_and_drop_when_full() {
        let mut buffers = OutputBuffers::new(1, 2);
        assert_eq!(buffers.admit(0, 0, 100), Some(0));
        assert_eq!(buffers.admit(10, 0, 100), Some(100));
        assert_eq!(buffers.admit(20, 0, 100), None);
        assert_eq!(buffers.admit(100, 0, 100), Some(200));
        assert_eq!(buffers.admit(500, 0, 100), Some(500));
    }
}
