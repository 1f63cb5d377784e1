//! The quick channel (Eberle and Gura 2002, §3.4, §4.2): best effort, no scheduling. A node sends a
//! packet as soon as it has one and its uplink is free, except in the fixed windows of the
//! scheduling and bulk acknowledgment packets (§3.3: initiators stay silent at grant times). The
//! pipelined switch is first come first considered (`blocks::collision_switch`): the later of
//! colliding requests is dropped and sent again after the NIC's timeout; acknowledgments win over
//! requests.
//!
//! Q1 drops a request that meets an acknowledgment, and a NIC sends an acknowledgment only when
//! its uplink is free, acknowledgments before requests. Q2 interleaves acknowledgments into
//! requests in the switch (both pass) and in the NIC (an acknowledgment goes out at once,
//! stretching a request being sent).
//!
//! In the bulk architectures the quick channel carries the bulk acknowledgments the same way. In
//! the quick architectures the bulk channel's packets take fixed windows by default, as the
//! paper's simulation models them (§4.2: "a reduction of the available bandwidth"); with
//! `quick.bulk_packets = "packets"` the bulk acknowledgments are packets instead
//! ([`BulkAckSchedule`]): every slot each target acknowledges, with the bulk load's probability,
//! the initiator a random matching (the inverted schedule, §3.3) pairs it with, at the
//! acknowledgment stage's time, and the packet meets quick requests in the switch like a quick
//! acknowledgment does.
//!
//! The quick enable vectors (§3.3) name the initiators each target accepts quick packets from;
//! the switch drops requests from the others, and their initiators' timeouts send them again.

use rand::seq::SliceRandom;
use rand::Rng as _;

use super::nic::{Ack, Nic, Transmission};
use super::timing::ReservedWindows;
use super::{Architecture, Clint, Event};
use crate::blocks::collision_switch::{
    CollisionSwitch, Contender, Mixing, OnBusy, Priority, Verdict,
};
use crate::blocks::port_set::PortSet;
use crate::engine::rng::{stream, ComponentId, Rng};

use crate::engine::time::TimePs;

/// What crosses the quick switch.
#[derive(Clone, Copy, Debug)]
pub enum QuickMessage {
    /// A quick request.
    Request(Transmission),
    /// A quick or bulk acknowledgment.
    Ack(Ack),
    /// A bulk acknowledgment of the bulk traffic a quick run assumes (it acknowledges no
    /// packet of the run).
    BulkAck,
}

/// The bulk acknowledgments of a quick run with `quick.bulk_packets = "packets"`: each slot a
/// random matching of targets to initiators (the inverted bulk schedule), each target
/// acknowledging with probability `bulk_load`.
pub struct BulkAckSchedule {
    rng: Rng,
    bulk_load: f64,
    /// The matching being drawn (reused).
    matching: Vec<u16>,
    /// Per target: the initiator its next bulk acknowledgment goes to.
    due: Vec<Option<u16>>,
}

impl BulkAckSchedule {
    /// The schedule of `nodes` nodes, seeded from the run's `seed`.
    pub fn new(nodes: usize, seed: u64, bulk_load: f64) -> Self {
        let id = ComponentId {
            kind: crate::blocks::stream_kind::CLINT_BULK_ACKS,
            index: 0,
        };
        BulkAckSchedule {
            rng: stream(seed, id),
            bulk_load,
            matching: (0..nodes as u16).collect(),
            due: vec![None; nodes],
        }
    }

    /// Draws this slot's acknowledgments: a matching without a node paired with itself (no
    /// node sends itself a bulk request), each pair kept with the bulk load's probability.
    fn draw(&mut self) {
        let BulkAckSchedule {
            rng,
            matching,
            due,
            bulk_load,
        } = self;
        loop {
            matching.shuffle(rng);
            if matching.iter().enumerate().all(|(t, &i)| t != i as usize) {
                break;
            }
        }
        for (target, &initiator) in matching.iter().enumerate() {
            debug_assert!(due[target].is_none(), "a bulk acknowledgment a slot late");
            due[target] = rng.gen_bool(*bulk_load).then_some(initiator);
        }
    }
}

/// A quick packet on its way through the quick switch.
#[derive(Clone, Copy, Debug)]
pub struct QuickMove {
    /// Sender (switch input).
    pub from: u16,
    /// Receiver (switch output).
    pub to: u16,
    /// The packet.
    pub message: QuickMessage,
}

/// A node's quick uplink: until when requests and acknowledgments occupy it.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuickUplink {
    request_until_ps: TimePs,
    ack_until_ps: TimePs,
}

impl QuickUplink {
    fn busy_until_ps(&self) -> TimePs {
        self.request_until_ps.max(self.ack_until_ps)
    }
}

/// The quick channel's own state: each node's uplink, the windows kept free for the bulk
/// channel's scheduling packets, and the first-come-first-considered crossbar. It decides when a
/// node may send and what the switch does with colliding packets; Clint's loop carries its
/// decisions as events and tells the NICs.
pub struct QuickChannel {
    /// Q2: acknowledgments are interleaved into requests, in the NIC and in the switch.
    interleaving: bool,
    /// Windows kept free every slot (the quick architectures, where B4's packets share the
    /// channel's timing).
    windows: Option<ReservedWindows>,
    uplinks: Vec<QuickUplink>,
    switch: CollisionSwitch<QuickMove>,
    /// Initiators whose requests the targets' enable vectors refuse.
    disabled: PortSet,
    /// Bulk acknowledgments as packets (quick runs with `quick.bulk_packets = "packets"`).
    bulk_acks: Option<BulkAckSchedule>,
}

impl QuickChannel {
    /// The quick channel of `nodes` nodes in architecture `arch`, keeping `windows` free.
    pub fn new(nodes: usize, arch: Architecture, windows: Option<ReservedWindows>) -> Self {
        let interleaving = arch == Architecture::Q2;
        let mixing = if interleaving {
            Mixing::Interleave
        } else {
            Mixing::Preempt
        };
        QuickChannel {
            interleaving,
            windows,
            uplinks: vec![QuickUplink::default(); nodes],
            switch: CollisionSwitch::new(nodes, OnBusy::Drop, mixing),
            disabled: PortSet::EMPTY,
            bulk_acks: None,
        }
    }

    /// The same channel whose targets refuse requests from the `disabled` initiators.
    pub fn with_disabled(self, disabled: PortSet) -> Self {
        QuickChannel { disabled, ..self }
    }

    /// The same channel carrying `bulk_acks` as packets.
    pub fn with_bulk_acks(self, bulk_acks: Option<BulkAckSchedule>) -> Self {
        QuickChannel { bulk_acks, ..self }
    }

    /// True when bulk acknowledgments are packets.
    pub fn has_bulk_acks(&self) -> bool {
        self.bulk_acks.is_some()
    }

    /// Takes `node`'s bulk acknowledgment, if one is due.
    fn take_bulk_ack(&mut self, node: u16) -> Option<u16> {
        self.bulk_acks.as_mut()?.due[node as usize].take()
    }

    /// True when `node` has a bulk acknowledgment due.
    fn bulk_ack_due(&self, node: u16) -> bool {
        self.bulk_acks
            .as_ref()
            .is_some_and(|acks| acks.due[node as usize].is_some())
    }

    /// The first time at or after `now_ps` that a packet of `duration_ps` may start.
    pub fn clear_start(&self, now_ps: TimePs, duration_ps: TimePs) -> TimePs {
        self.windows
            .map_or(now_ps, |w| w.clear_start(now_ps, duration_ps))
    }

    /// When `node`'s uplink may start an acknowledgment: once it is idle, or (Q2) once the last
    /// acknowledgment is out, interleaved into a request being sent.
    pub fn ack_free_ps(&self, node: u16) -> TimePs {
        let uplink = self.uplinks[node as usize];
        if self.interleaving {
            uplink.ack_until_ps
        } else {
            uplink.busy_until_ps()
        }
    }

    /// When `node`'s uplink is idle.
    pub fn busy_until_ps(&self, node: u16) -> TimePs {
        self.uplinks[node as usize].busy_until_ps()
    }

    /// `node` starts an acknowledgment of `ack_ps` now; returns when its uplink is idle again
    /// (Q2: a request being sent ends later by as much).
    pub fn start_ack(&mut self, node: u16, now_ps: TimePs, ack_ps: TimePs) -> TimePs {
        let uplink = &mut self.uplinks[node as usize];
        uplink.ack_until_ps = now_ps + ack_ps;
        if uplink.request_until_ps > now_ps {
            uplink.request_until_ps += ack_ps;
        }
        uplink.busy_until_ps()
    }

    /// `node` sends a request until `end_ps`.
    pub fn start_request(&mut self, node: u16, end_ps: TimePs) {
        self.uplinks[node as usize].request_until_ps = end_ps;
    }

    /// A packet's head reaches its output; true for the first head of the instant (the caller
    /// schedules the resolution).
    pub fn offer(&mut self, contender: Contender<QuickMove>) -> bool {
        self.switch.offer(contender)
    }
}

impl Clint {
    /// The first time at or after now that a packet of `duration_ps` may start.
    fn clear_start(&self, duration_ps: TimePs) -> TimePs {
        self.quick.clear_start(self.now_ps, duration_ps)
    }

    /// Target `at` queues an acknowledgment for its quick uplink.
    pub(super) fn send_ack(&mut self, at: u16, ack: Ack) {
        self.nics[at as usize].acks.push_back(ack);
        self.quick_wake(at);
    }

    /// Quick runs with bulk packets: the acknowledgment stage of a slot; every target with a
    /// bulk acknowledgment due queues it.
    pub(super) fn bulk_acks(&mut self) {
        if let Some(acks) = self.quick.bulk_acks.as_mut() {
            acks.draw();
        }
        for node in 0..self.nodes() as u16 {
            if self.quick.bulk_ack_due(node) {
                self.quick_wake(node);
            }
        }
        self.schedule_clock(self.now_ps + self.t.slot_ps, Event::BulkAcks);
    }

    /// The node's quick uplink may start something: a bulk acknowledgment first, then its
    /// oldest quick acknowledgment, then (in the quick architectures) its oldest ready request.
    pub(super) fn quick_wake(&mut self, node: u16) {
        let n = node as usize;
        if self.quick.bulk_ack_due(node) || !self.nics[n].acks.is_empty() {
            if self.now_ps < self.quick.ack_free_ps(node) {
                return;
            }
            let start_ps = self.clear_start(self.t.ack_ps);
            if start_ps > self.now_ps {
                self.schedule(start_ps, Event::QuickWake(node));
                return;
            }
            let (to, message) = match self.quick.take_bulk_ack(node) {
                Some(initiator) => (initiator, QuickMessage::BulkAck),
                None => {
                    let ack = self.nics[n]
                        .acks
                        .pop_front()
                        .expect("an acknowledgment waits");
                    (ack.to, QuickMessage::Ack(ack))
                }
            };
            let next_ps = self.quick.start_ack(node, self.now_ps, self.t.ack_ps);
            self.schedule(next_ps, Event::QuickWake(node));
            self.send_quick(node, to, message);
            return;
        }
        if !self.arch.is_quick() || self.now_ps < self.quick.busy_until_ps(node) {
            return;
        }
        let Some(id) = self.nics[n].oldest_ready(&self.packets, None) else {
            return;
        };
        let start_ps = self.clear_start(self.t.qreq_ps);
        if start_ps > self.now_ps {
            self.schedule(start_ps, Event::QuickWake(node));
            return;
        }
        let to = self.packets[id].dst;
        let tx = self.transmit(id, self.now_ps);
        let end_ps = self.now_ps + self.t.qreq_ps;
        self.quick.start_request(node, end_ps);
        self.schedule(end_ps, Event::QuickWake(node));
        self.send_quick(node, to, QuickMessage::Request(tx));
    }

    fn send_quick(&mut self, from: u16, to: u16, message: QuickMessage) {
        let head_ps = self.now_ps + self.t.quick_to_output_ps();
        self.schedule(head_ps, Event::QuickHead(QuickMove { from, to, message }));
    }

    fn duration_ps(&self, message: QuickMessage) -> TimePs {
        match message {
            QuickMessage::Request(_) => self.t.qreq_ps,
            QuickMessage::Ack(_) | QuickMessage::BulkAck => self.t.ack_ps,
        }
    }

    pub(super) fn quick_head(&mut self, head: QuickMove) {
        let priority = match head.message {
            QuickMessage::Request(_) if self.quick.disabled.contains(head.from as usize) => {
                // The target's enable vector refuses the initiator: the switch drops it.
                self.counters.faults.disabled_drops += u64::from(self.measuring());
                return;
            }
            QuickMessage::Request(_) => Priority::Low,
            QuickMessage::Ack(_) | QuickMessage::BulkAck => Priority::High,
        };
        let contender = Contender {
            input: head.from,
            output: head.to,
            priority,
            duration_ps: self.duration_ps(head.message),
            payload: head,
        };
        if self.quick.offer(contender) {
            self.schedule_clock(self.now_ps, Event::QuickResolve);
        }
    }

    pub(super) fn quick_resolve(&mut self) {
        let mut verdicts = self.quick.switch.resolve(self.now_ps);
        let measuring = u64::from(self.measuring());
        for verdict in verdicts.drain(..) {
            match verdict {
                Verdict::Forward { payload, start_ps } => {
                    let arrive_ps =
                        start_ps + self.duration_ps(payload.message) + self.t.propagation_ps;
                    let event = match payload.message {
                        QuickMessage::Request(tx) => Event::RequestArrive { at: payload.to, tx },
                        QuickMessage::Ack(ack) => Event::AckArrive(ack),
                        QuickMessage::BulkAck => continue, // acknowledges nothing of the run
                    };
                    self.schedule(arrive_ps, event);
                }
                Verdict::Drop { payload, by } => match (payload.message, by) {
                    (QuickMessage::Request(_), Priority::Low) => {
                        self.counters.collisions_with_request += measuring;
                    }
                    (QuickMessage::Request(_), Priority::High) => {
                        self.counters.collisions_with_ack += measuring;
                    }
                    (QuickMessage::Ack(_) | QuickMessage::BulkAck, _) => {
                        if self.arch == Architecture::B4 {
                            self.counters.scheduled_collisions += 1;
                        }
                        self.counters.ack_drops += measuring;
                    }
                },
                Verdict::Preempted { payload } => {
                    let QuickMessage::Request(tx) = payload.message else {
                        unreachable!("only requests are preempted")
                    };
                    if Nic::current(&self.packets, tx).is_some() {
                        self.packets[tx.packet].lost = true;
                    }
                    self.counters.collisions_with_ack += measuring;
                }
                Verdict::Wait { .. } => unreachable!("the quick switch never holds packets back"),
            }
        }
        self.quick.switch.recycle(verdicts);
    }
}
