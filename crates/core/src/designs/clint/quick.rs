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
//! In the bulk architectures the quick channel carries the bulk acknowledgments the same way.

use super::nic::{Ack, Nic, Transmission};
use super::timing::ReservedWindows;
use super::{Architecture, Clint, Event};
use crate::blocks::collision_switch::{
    CollisionSwitch, Contender, Mixing, OnBusy, Priority, Verdict,
};

use crate::engine::time::TimePs;

/// What crosses the quick switch.
#[derive(Clone, Copy, Debug)]
pub enum QuickMessage {
    /// A quick request.
    Request(Transmission),
    /// A quick or bulk acknowledgment.
    Ack(Ack),
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
    /// The verdicts of the instant being resolved (kept to reuse their memory).
    verdicts: Vec<Verdict<QuickMove>>,
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
            verdicts: Vec::with_capacity(nodes),
        }
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

    /// Decides this instant's contending heads; give the verdicts back with [`Self::recycle`].
    pub fn resolve(&mut self, now_ps: TimePs) -> Vec<Verdict<QuickMove>> {
        let mut verdicts = std::mem::take(&mut self.verdicts);
        self.switch.resolve(now_ps, &mut verdicts);
        verdicts
    }

    /// Takes back the (drained) verdicts of [`Self::resolve`], to reuse their memory.
    pub fn recycle(&mut self, verdicts: Vec<Verdict<QuickMove>>) {
        debug_assert!(verdicts.is_empty());
        self.verdicts = verdicts;
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

    /// The node's quick uplink may start something: its oldest acknowledgment first, then (in
    /// the quick architectures) its oldest ready request.
    pub(super) fn quick_wake(&mut self, node: u16) {
        let n = node as usize;
        if let Some(&ack) = self.nics[n].acks.front() {
            if self.now_ps < self.quick.ack_free_ps(node) {
                return;
            }
            let start_ps = self.clear_start(self.t.ack_ps);
            if start_ps > self.now_ps {
                self.schedule(start_ps, Event::QuickWake(node));
                return;
            }
            self.nics[n].acks.pop_front();
            let next_ps = self.quick.start_ack(node, self.now_ps, self.t.ack_ps);
            self.schedule(next_ps, Event::QuickWake(node));
            self.send_quick(node, ack.to, QuickMessage::Ack(ack));
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
            QuickMessage::Ack(_) => self.t.ack_ps,
        }
    }

    pub(super) fn quick_head(&mut self, head: QuickMove) {
        let priority = match head.message {
            QuickMessage::Request(_) => Priority::Low,
            QuickMessage::Ack(_) => Priority::High,
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
        let mut verdicts = self.quick.resolve(self.now_ps);
        let measuring = u64::from(self.measuring());
        for verdict in verdicts.drain(..) {
            match verdict {
                Verdict::Forward { payload, start_ps } => {
                    let arrive_ps =
                        start_ps + self.duration_ps(payload.message) + self.t.propagation_ps;
                    let event = match payload.message {
                        QuickMessage::Request(tx) => Event::RequestArrive { at: payload.to, tx },
                        QuickMessage::Ack(ack) => Event::AckArrive(ack),
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
                    (QuickMessage::Ack(_), _) => {
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
        self.quick.recycle(verdicts);
    }
}
