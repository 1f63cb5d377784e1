//! The NIC's active-message endpoint (seed 002 §3.1, §3.3): an unbounded host queue, a pool of
//! send buffers filled from it (bulk: at most a cap per target, so a blocked target cannot hold
//! every buffer), receive buffers, and the request-acknowledge protocol that delivers exactly
//! once and in order per (initiator, target) pair.
//!
//! The protocol is go-back-N per pair: a request carries its pair's sequence number; the target
//! accepts only the next one expected and only into a free receive buffer, acknowledges
//! duplicates again, and NAKs the rest; the initiator sends again what was NAKed or not
//! acknowledged within the fixed timeout, oldest first.

use crate::engine::arena::{Arena, Id, Queue};
use crate::engine::time::TimePs;

/// Where a packet is in its initiator's NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// In the host queue.
    Queued,
    /// In a send buffer, to be sent (again).
    Ready,
    /// Sent; waiting for its acknowledgment.
    Sent,
    /// Acknowledged and released (the arena slot may be reused).
    Done,
}

/// A request packet and its bookkeeping.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Initiator.
    pub src: u16,
    /// Target.
    pub dst: u16,
    /// Run-wide injection number: identifies the packet across slot reuse.
    pub serial: u64,
    /// Generation number within its pair (checked at delivery for order).
    pub pair_index: u32,
    /// Link-layer sequence number within its pair, given when it enters a send buffer.
    pub seq: u32,
    /// Transmissions so far.
    pub attempt: u32,
    /// Set when the current transmission is cut off in the switch.
    pub lost: bool,
    /// Accepted by the target.
    pub delivered: bool,
    /// Where it is.
    pub state: State,
    /// Generated at.
    pub generated_ps: TimePs,
    /// Start of its latest transmission out of the send buffer.
    pub sent_ps: TimePs,
}

/// One transmission of a packet, as carried by events: stale references (an older attempt, a
/// released packet) are recognised and ignored.
#[derive(Clone, Copy, Debug)]
pub struct Transmission {
    /// The packet.
    pub packet: Id<Packet>,
    /// Its injection number.
    pub serial: u64,
    /// Which attempt.
    pub attempt: u32,
}

/// A (negative) acknowledgment on its way back to an initiator.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    /// The acknowledged transmission.
    pub of: Transmission,
    /// Initiator it goes to.
    pub to: u16,
    /// True: accepted (or a duplicate); false: NAK.
    pub ok: bool,
}

/// What a target did with an arriving request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// The transmission was stale or cut off: nothing is returned.
    Ignored,
    /// Accepted into a receive buffer; `in_order` if it is the pair's next in generation order.
    Accepted {
        /// Follows the pair's previously accepted packet.
        in_order: bool,
    },
    /// Already accepted before: acknowledged again, discarded.
    Duplicate,
    /// Not the next in order for its pair: NAKed.
    OutOfSequence,
    /// No receive buffer free: NAKed.
    NoBuffer,
}

/// One node's NIC for the channel that carries the run's requests.
pub struct Nic {
    /// Host queue per target, FIFO.
    host: Vec<Queue<Packet>>,
    /// Packets in send buffers, in the order they entered.
    send: Vec<Id<Packet>>,
    send_capacity: usize,
    /// Send buffers held per target.
    send_per_target: Vec<u32>,
    prefetch_per_target: u32,
    /// Next sequence number per target.
    next_seq: Vec<u32>,
    /// Packets generated per target.
    generated: Vec<u32>,
    /// Target side: next sequence number expected per initiator.
    expected_seq: Vec<u32>,
    /// Target side: pair index of the last packet accepted per initiator.
    last_accepted: Vec<Option<u32>>,
    /// Free receive buffers.
    pub receive_free: u32,
    /// Acknowledgments waiting for the quick uplink.
    pub acks: std::collections::VecDeque<Ack>,
}

impl Nic {
    /// A NIC for `nodes` nodes.
    pub fn new(
        nodes: usize,
        send_buffers: u32,
        prefetch_per_target: u32,
        receive_buffers: u32,
    ) -> Nic {
        Nic {
            host: (0..nodes).map(|_| Queue::default()).collect(),
            send: Vec::with_capacity(send_buffers as usize),
            send_capacity: send_buffers as usize,
            send_per_target: vec![0; nodes],
            prefetch_per_target,
            next_seq: vec![0; nodes],
            generated: vec![0; nodes],
            expected_seq: vec![0; nodes],
            last_accepted: vec![None; nodes],
            receive_free: receive_buffers,
            acks: std::collections::VecDeque::with_capacity(nodes),
        }
    }

    /// The host writes a message for `dst` into its queue.
    pub fn enqueue(&mut self, packets: &mut Arena<Packet>, mut packet: Packet) {
        let dst = packet.dst as usize;
        packet.pair_index = self.generated[dst];
        self.generated[dst] += 1;
        let id = packets.alloc(packet);
        packets.push_back(&mut self.host[dst], id);
    }

    /// Fills free send buffers from the host queue, oldest message first among targets below
    /// their cap; returns how many moved.
    pub fn prefetch(&mut self, packets: &mut Arena<Packet>) -> usize {
        let mut moved = 0;
        while self.send.len() < self.send_capacity {
            let oldest = (0..self.host.len())
                .filter(|&t| self.send_per_target[t] < self.prefetch_per_target)
                .filter_map(|t| self.host[t].front().map(|id| (packets[id].serial, t)))
                .min();
            let Some((_, t)) = oldest else { break };
            let id = packets
                .pop_front(&mut self.host[t])
                .expect("queue has a front");
            let packet = &mut packets[id];
            packet.seq = self.next_seq[t];
            packet.state = State::Ready;
            self.next_seq[t] += 1;
            self.send_per_target[t] += 1;
            self.send.push(id);
            moved += 1;
        }
        moved
    }

    /// The oldest send buffer ready to go (to `dst` only, if given).
    pub fn oldest_ready(&self, packets: &Arena<Packet>, dst: Option<u16>) -> Option<Id<Packet>> {
        self.send.iter().copied().find(|&id| {
            let p = &packets[id];
            p.state == State::Ready && dst.is_none_or(|d| p.dst == d)
        })
    }

    /// Targets with a send buffer ready to go: the request vector of a configuration packet.
    pub fn request_vector(&self, packets: &Arena<Packet>) -> u64 {
        self.send
            .iter()
            .map(|&id| &packets[id])
            .filter(|p| p.state == State::Ready)
            .fold(0, |set, p| set | 1 << p.dst)
    }

    /// Marks `id` sent now and returns the transmission.
    pub fn send(packets: &mut Arena<Packet>, id: Id<Packet>, now_ps: TimePs) -> Transmission {
        let p = &mut packets[id];
        debug_assert_eq!(p.state, State::Ready);
        p.state = State::Sent;
        p.attempt += 1;
        p.lost = false;
        p.sent_ps = now_ps;
        Transmission {
            packet: id,
            serial: p.serial,
            attempt: p.attempt,
        }
    }

    /// The packet of a transmission that still matters: not released, same attempt, not cut off.
    pub fn current(packets: &Arena<Packet>, t: Transmission) -> Option<&Packet> {
        let p = &packets[t.packet];
        (p.serial == t.serial && p.state != State::Done && p.attempt == t.attempt && !p.lost)
            .then_some(p)
    }

    /// Target side: a request's last byte has arrived.
    pub fn receive(&mut self, packets: &mut Arena<Packet>, t: Transmission) -> Receipt {
        let Some(p) = Nic::current(packets, t) else {
            return Receipt::Ignored;
        };
        let src = p.src as usize;
        let expected = self.expected_seq[src];
        if p.seq < expected {
            return Receipt::Duplicate;
        }
        if p.seq > expected {
            return Receipt::OutOfSequence;
        }
        if self.receive_free == 0 {
            return Receipt::NoBuffer;
        }
        let in_order = self.last_accepted[src].map_or(0, |i| i + 1) == p.pair_index;
        self.receive_free -= 1;
        self.expected_seq[src] += 1;
        self.last_accepted[src] = Some(p.pair_index);
        packets[t.packet].delivered = true;
        Receipt::Accepted { in_order }
    }

    /// Initiator side: an acknowledgment arrived. Returns true if it released a send buffer.
    pub fn acknowledge(&mut self, packets: &mut Arena<Packet>, ack: Ack) -> bool {
        let p = &mut packets[ack.of.packet];
        if p.serial != ack.of.serial || p.state == State::Done {
            return false;
        }
        if !ack.ok {
            if p.state == State::Sent && p.attempt == ack.of.attempt {
                p.state = State::Ready;
            }
            return false;
        }
        debug_assert!(p.delivered);
        p.state = State::Done;
        let dst = p.dst as usize;
        self.send_per_target[dst] -= 1;
        let at = self.send.iter().position(|&id| id == ack.of.packet);
        self.send
            .remove(at.expect("acknowledged packet is in a send buffer"));
        packets.free(ack.of.packet);
        true
    }

    /// Initiator side: the timeout of a transmission expired; true if it is to be sent again.
    pub fn time_out(packets: &mut Arena<Packet>, t: Transmission) -> bool {
        let p = &mut packets[t.packet];
        let pending = p.serial == t.serial && p.state == State::Sent && p.attempt == t.attempt;
        if pending {
            p.state = State::Ready;
        }
        pending
    }

    /// Packets not yet accepted by their target: queued on the host or in send buffers.
    pub fn undelivered(&self, packets: &Arena<Packet>) -> u64 {
        let queued: u64 = self.host.iter().map(|q| q.len() as u64).sum();
        let buffered = self
            .send
            .iter()
            .filter(|&&id| !packets[id].delivered)
            .count();
        queued + buffered as u64
    }
}
