//! The NIC's active-message endpoint (Eberle and Gura 2002, §3.1, §3.3): an unbounded host queue, a
//! pool of send buffers filled from it (bulk: at most a cap per target, so a blocked target cannot
//! hold every buffer), receive buffers, and the request-acknowledge protocol that delivers exactly
//! once and in order per (initiator, target) pair (§3.2).
//!
//! A request carries its pair's link-layer sequence number (§3.1). The target acknowledges each
//! request it accepts into a free receive buffer, acknowledges duplicates again and NAKs a
//! request that finds no buffer; the initiator sends again what was NAKed or not acknowledged
//! within the fixed timeout, oldest first. Requests reach the host in sequence order:
//! [`Retransmission::Selective`] holds requests that arrive ahead of a missing one in their
//! receive buffers until it arrives; [`Retransmission::GoBackN`] NAKs them instead.

use crate::blocks::port_set::PortSet;
use crate::engine::arena::{Arena, Id, Queue};
use crate::engine::time::TimePs;

/// Where a packet is in its initiator's NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// In the host queue.
    Queued,
    /// In a send buffer, still coming over the PCI bus.
    Fetching,
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
    /// The current transmission was sent speculatively, unscheduled (B4).
    pub speculative: bool,
    /// Accepted by the target.
    pub delivered: bool,
    /// Where it is.
    pub state: State,
    /// Generated at.
    pub generated_ps: TimePs,
    /// Start of its first transmission out of the send buffer.
    pub first_sent_ps: TimePs,
    /// Start of its latest transmission out of the send buffer.
    pub sent_ps: TimePs,
}

impl Packet {
    /// A packet just generated, still to be queued by its host.
    pub fn new(src: u16, dst: u16, serial: u64, generated_ps: TimePs) -> Packet {
        Packet {
            src,
            dst,
            serial,
            pair_index: 0,
            seq: 0,
            attempt: 0,
            lost: false,
            speculative: false,
            delivered: false,
            state: State::Queued,
            generated_ps,
            first_sent_ps: 0,
            sent_ps: 0,
        }
    }
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

/// How a target treats a request that arrives ahead of a missing one of its pair.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Retransmission {
    /// Accept and hold it until the missing one arrives: only lost requests are sent again.
    #[default]
    Selective,
    /// NAK it: the initiator sends it again after the missing one.
    GoBackN,
}

/// Requests of one pair held ahead of a missing one, at most this many sequence numbers ahead.
/// A pair can be at most receive buffers + send buffers ahead, which the scenario keeps within
/// this window.
pub const REORDER_WINDOW: u32 = 64;

/// Target side, per initiator: the next request to hand to the host and those accepted ahead
/// of it, held in receive buffers.
#[derive(Clone, Copy, Debug)]
struct Reorder {
    /// Sequence number of the next request to hand to the host.
    expected_seq: u32,
    /// Bit k: the request with sequence number `expected_seq + k` is held.
    held: u64,
    /// Pair index of each held request, by sequence number modulo the window.
    pair_index: [u32; REORDER_WINDOW as usize],
    /// Generation time of each held request, by sequence number modulo the window.
    generated_ps: [TimePs; REORDER_WINDOW as usize],
    /// Pair index of the last request handed to the host.
    last_handed: Option<u32>,
}

impl Default for Reorder {
    fn default() -> Self {
        Reorder {
            expected_seq: 0,
            held: 0,
            pair_index: [0; REORDER_WINDOW as usize],
            generated_ps: [0; REORDER_WINDOW as usize],
            last_handed: None,
        }
    }
}

/// What a target did with an arriving request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// The transmission was stale or cut off: nothing is returned.
    Ignored,
    /// Accepted into a receive buffer; `handed` requests of the pair (this one and those held
    /// behind it) went on to the host, which will return their buffers.
    Accepted {
        /// Requests handed to the host now.
        handed: u32,
        /// Every request handed to the host followed its predecessor in generation order.
        in_order: bool,
    },
    /// Already accepted before: acknowledged again, discarded.
    Duplicate,
    /// Ahead of a missing request of its pair and not held (go-back-N, or too far ahead): NAKed.
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
    /// Target side: what to do with a request ahead of a missing one.
    retransmission: Retransmission,
    /// Target side, per initiator: requests awaiting their turn to the host.
    reorder: Vec<Reorder>,
    /// Target side: initiators with requests held behind a missing one.
    pairs_with_gaps: u32,
    /// Target side: generation times of the requests the last [`Nic::receive`] handed to the
    /// host, in order.
    handed_generated_ps: Vec<TimePs>,
    /// Free receive buffers.
    pub receive_free: u32,
    /// Acknowledgments waiting for the quick uplink.
    pub acks: std::collections::VecDeque<Ack>,
    /// Initiator side: packets released from a send buffer before their target accepted
    /// them, so lost for good (no copy is left to send again). A dropped transmission is not
    /// one: the packet stays in its send buffer until acknowledged.
    pub released_undelivered: u64,
}

impl Nic {
    /// A NIC for `nodes` nodes.
    pub fn new(
        nodes: usize,
        send_buffers: u32,
        prefetch_per_target: u32,
        receive_buffers: u32,
        retransmission: Retransmission,
    ) -> Nic {
        Nic {
            host: (0..nodes).map(|_| Queue::default()).collect(),
            send: Vec::with_capacity(send_buffers as usize),
            send_capacity: send_buffers as usize,
            send_per_target: vec![0; nodes],
            prefetch_per_target,
            next_seq: vec![0; nodes],
            generated: vec![0; nodes],
            retransmission,
            reorder: vec![Reorder::default(); nodes],
            pairs_with_gaps: 0,
            handed_generated_ps: Vec::with_capacity(REORDER_WINDOW as usize),
            receive_free: receive_buffers,
            acks: std::collections::VecDeque::with_capacity(nodes),
            released_undelivered: 0,
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
    /// their cap; returns how many moved. They are ready to send, or (`fetching`) still to come
    /// over the PCI bus: [`Nic::newest`] names them.
    pub fn prefetch(&mut self, packets: &mut Arena<Packet>, fetching: bool) -> usize {
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
            packet.state = if fetching {
                State::Fetching
            } else {
                State::Ready
            };
            self.next_seq[t] += 1;
            self.send_per_target[t] += 1;
            self.send.push(id);
            moved += 1;
        }
        moved
    }

    /// The `count` packets that entered send buffers last, oldest first.
    pub fn newest(&self, count: usize) -> &[Id<Packet>] {
        &self.send[self.send.len() - count..]
    }

    /// The oldest send buffer ready to go (to `dst` only, if given).
    pub fn oldest_ready(&self, packets: &Arena<Packet>, dst: Option<u16>) -> Option<Id<Packet>> {
        self.send.iter().copied().find(|&id| {
            let p = &packets[id];
            p.state == State::Ready && dst.is_none_or(|d| p.dst == d)
        })
    }

    /// Targets with a send buffer ready to go: the request vector of a configuration packet.
    pub fn request_vector(&self, packets: &Arena<Packet>) -> PortSet {
        self.send
            .iter()
            .map(|&id| &packets[id])
            .filter(|p| p.state == State::Ready)
            .map(|p| p.dst as usize)
            .collect()
    }

    /// Marks `id` sent now and returns the transmission.
    pub fn send(packets: &mut Arena<Packet>, id: Id<Packet>, now_ps: TimePs) -> Transmission {
        let p = &mut packets[id];
        debug_assert_eq!(p.state, State::Ready);
        p.state = State::Sent;
        if p.attempt == 0 {
            p.first_sent_ps = now_ps;
        }
        p.attempt += 1;
        p.lost = false;
        p.speculative = false;
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
    ///
    /// A request ahead of a missing one is held only while the free receive buffers outnumber
    /// the pairs waiting for a missing request, so every missing request finds a buffer once
    /// the host has returned the others: holding can never deadlock the target.
    pub fn receive(&mut self, packets: &mut Arena<Packet>, t: Transmission) -> Receipt {
        let Some(p) = Nic::current(packets, t) else {
            return Receipt::Ignored;
        };
        let (seq, pair_index, generated_ps) = (p.seq, p.pair_index, p.generated_ps);
        self.handed_generated_ps.clear();
        let pair = &mut self.reorder[p.src as usize];
        if seq < pair.expected_seq {
            return Receipt::Duplicate;
        }
        let ahead = seq - pair.expected_seq;
        if ahead >= REORDER_WINDOW {
            return Receipt::OutOfSequence;
        }
        if pair.held & 1 << ahead != 0 {
            return Receipt::Duplicate;
        }
        let had_gap = pair.held != 0;
        if ahead > 0 {
            if self.retransmission == Retransmission::GoBackN {
                return Receipt::OutOfSequence;
            }
            if self.receive_free <= self.pairs_with_gaps + u32::from(!had_gap) {
                return Receipt::NoBuffer;
            }
        } else if self.receive_free == 0 {
            return Receipt::NoBuffer;
        }
        self.receive_free -= 1;
        packets[t.packet].delivered = true;
        pair.held |= 1 << ahead;
        pair.pair_index[(seq % REORDER_WINDOW) as usize] = pair_index;
        pair.generated_ps[(seq % REORDER_WINDOW) as usize] = generated_ps;
        let (mut handed, mut in_order) = (0, true);
        while pair.held & 1 != 0 {
            let slot = (pair.expected_seq % REORDER_WINDOW) as usize;
            let index = pair.pair_index[slot];
            self.handed_generated_ps.push(pair.generated_ps[slot]);
            in_order &= pair.last_handed.map_or(0, |i| i + 1) == index;
            pair.last_handed = Some(index);
            pair.held >>= 1;
            pair.expected_seq += 1;
            handed += 1;
        }
        let has_gap = pair.held != 0;
        self.pairs_with_gaps = self.pairs_with_gaps + u32::from(has_gap) - u32::from(had_gap);
        Receipt::Accepted { handed, in_order }
    }

    /// Generation times of the requests the last [`Nic::receive`] handed to the host.
    pub fn handed_generated_ps(&self) -> &[TimePs] {
        &self.handed_generated_ps
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
        self.released_undelivered += u64::from(!p.delivered);
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

    /// Packets the NIC holds, counted where they are: host queues and send buffers (accepted
    /// ones wait there for their acknowledgment).
    pub fn held(&self) -> u64 {
        self.host.iter().map(|q| q.len() as u64).sum::<u64>() + self.send.len() as u64
    }

    /// Test fault: the handle of the first packet in a send buffer not yet accepted by its
    /// target vanishes (released nowhere, no counter changed); returns it.
    #[cfg(test)]
    pub fn lose_undelivered(&mut self, packets: &Arena<Packet>) -> Option<Id<Packet>> {
        let at = self.send.iter().position(|&id| !packets[id].delivered)?;
        Some(self.send.remove(at))
    }

    /// Test fault: the first packet in a send buffer not yet accepted by its target is
    /// released as if acknowledged; returns it.
    #[cfg(test)]
    pub fn release_undelivered(&mut self, packets: &mut Arena<Packet>) -> Option<Id<Packet>> {
        let id = *self.send.iter().find(|&&id| !packets[id].delivered)?;
        let p = packets[id];
        let ack = Ack {
            of: Transmission {
                packet: id,
                serial: p.serial,
                attempt: p.attempt,
            },
            to: p.src,
            ok: true,
        };
        self.acknowledge(packets, ack).then_some(id)
    }

    /// Packets not yet accepted by their target: in host queues, or in send buffers and not
    /// yet accepted.
    pub fn undelivered(&self, packets: &Arena<Packet>) -> u64 {
        let queued: u64 = self.host.iter().map(|q| q.len() as u64).sum();
        let buffered = self
            .send
            .iter()
            .filter(|&&id| !packets[id].delivered)
            .count();
        queued + buffered as u64
    }

    /// Generation times of the packets [`Nic::undelivered`] counts, read where they are.
    pub fn undelivered_generated_ps<'a>(
        &'a self,
        packets: &'a Arena<Packet>,
    ) -> impl Iterator<Item = TimePs> + 'a {
        let queued = self.host.iter().flat_map(|q| packets.queued(q));
        let buffered = self.send.iter().map(|&id| &packets[id]);
        queued
            .chain(buffered.filter(|p| !p.delivered))
            .map(|p| p.generated_ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two initiators (0, 1) sending to target 2, whose NIC has `receive_buffers`.
    struct Pairs {
        packets: Arena<Packet>,
        initiators: Vec<Nic>,
        target: Nic,
    }

    impl Pairs {
        fn new(receive_buffers: u32, retransmission: Retransmission) -> Pairs {
            let nic = |buffers| Nic::new(3, 8, 8, buffers, retransmission);
            let mut pairs = Pairs {
                packets: Arena::new(),
                initiators: vec![nic(1), nic(1)],
                target: nic(receive_buffers),
            };
            for src in 0..2u16 {
                for serial in 0..4 {
                    let packet = Packet::new(src, 2, u64::from(src) * 4 + serial, 0);
                    pairs.initiators[src as usize].enqueue(&mut pairs.packets, packet);
                }
                pairs.initiators[src as usize].prefetch(&mut pairs.packets, false);
            }
            pairs
        }

        /// Initiator `src` sends its request with sequence number `seq`; the target receives it.
        fn deliver(&mut self, src: usize, seq: u32) -> Receipt {
            let nic = &self.initiators[src];
            let id = nic
                .send
                .iter()
                .copied()
                .find(|&id| self.packets[id].seq == seq);
            let id = id.expect("in a send buffer");
            self.packets[id].state = State::Ready; // sent again, as after a timeout
            let tx = Nic::send(&mut self.packets, id, 0);
            self.target.receive(&mut self.packets, tx)
        }
    }

    const HELD: Receipt = Receipt::Accepted {
        handed: 0,
        in_order: true,
    };

    #[test]
    fn selective_repeat_holds_requests_behind_a_missing_one_and_hands_them_over_in_order() {
        let mut pairs = Pairs::new(8, Retransmission::Selective);
        assert_eq!(pairs.deliver(0, 1), HELD);
        assert_eq!(pairs.deliver(0, 3), HELD);
        assert_eq!(pairs.deliver(0, 1), Receipt::Duplicate);
        let handed = |handed| Receipt::Accepted {
            handed,
            in_order: true,
        };
        assert_eq!(pairs.deliver(0, 0), handed(2), "0 and the held 1");
        assert_eq!(pairs.deliver(0, 2), handed(2), "2 and the held 3");
        assert_eq!(pairs.deliver(0, 0), Receipt::Duplicate);
        assert_eq!(
            pairs.target.receive_free, 4,
            "held or handed, one buffer each"
        );
        assert_eq!(pairs.target.pairs_with_gaps, 0);
    }

    #[test]
    fn go_back_n_naks_requests_behind_a_missing_one() {
        let mut pairs = Pairs::new(8, Retransmission::GoBackN);
        assert_eq!(pairs.deliver(0, 1), Receipt::OutOfSequence);
        assert!(matches!(
            pairs.deliver(0, 0),
            Receipt::Accepted { handed: 1, .. }
        ));
        assert!(matches!(
            pairs.deliver(0, 1),
            Receipt::Accepted { handed: 1, .. }
        ));
    }

    #[test]
    fn holding_leaves_enough_buffers_for_every_missing_request() {
        // Two buffers: holding initiator 0's request 1 leaves one, which initiator 1's request 1
        // may not take (it would leave nothing for either missing request); both missing
        // requests still get in once the host returns what it was handed.
        let mut pairs = Pairs::new(2, Retransmission::Selective);
        assert_eq!(pairs.deliver(0, 1), HELD);
        assert_eq!(pairs.deliver(1, 1), Receipt::NoBuffer);
        assert!(matches!(
            pairs.deliver(0, 0),
            Receipt::Accepted { handed: 2, .. }
        ));
        pairs.target.receive_free += 2; // the host returns both buffers
        assert_eq!(pairs.deliver(1, 1), HELD);
        assert!(matches!(
            pairs.deliver(1, 0),
            Receipt::Accepted { handed: 2, .. }
        ));
    }
}
