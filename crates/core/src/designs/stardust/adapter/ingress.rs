//! An adapter's ingress (Stardust §3.2–3.4, §4.1, §5.3): a VOQ per (destination host, traffic
//! class); a packet that finds its VOQ full is dropped (§3.1). A VOQ that becomes non-empty asks
//! the destination port's scheduler with a request, and one that empties withdraws (reading
//! R1 of `docs/validation/stardust.md`); credits that arrive wait in the grant FIFOs and are
//! served in arrival order within a class (§3.3), each packing whole packets of its VOQ into
//! cells as one burst with surplus accounting ([`pack_credit`]). In push mode there are no
//! credits: non-empty VOQs are served round robin, one packet at a time.
//!
//! The part is pure bookkeeping: it says what to send (a request, a burst of cells) and the
//! adapter sends it. Debug builds check each VOQ after every change (its packets against its
//! capacity and its byte count) and the credits after every arrival and spend (none spent that
//! was not received, and those waiting are exactly the difference).

use std::collections::VecDeque;

use super::super::{class_flags, Kind, REQUEST_ON};
use crate::blocks::packet::{Packet, PacketArena, PacketQueue};
use crate::blocks::sar::{pack_credit, CreditBalance, CutCell};
use crate::blocks::solicitation::{Asker, Grants};
use crate::engine::time::TimePs;

/// What an ingress counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressCounters {
    /// Packets its hosts created.
    pub packets_created: u64,
    /// Packets dropped at a full VOQ.
    pub packets_dropped: u64,
    /// Packets taken from VOQs into cells.
    pub packets_packed: u64,
    /// Data cells cut.
    pub data_cells: u64,
    /// Data cells cut shorter than a full cell.
    pub short_cells: u64,
    /// Payload bytes of the data cells cut.
    pub payload_bytes_cut: u64,
    /// Request cells sent.
    pub requests_sent: u64,
    /// Requests sent again by VOQs that waited too long for a credit.
    pub requests_refreshed: u64,
    /// Credit bytes forfeited by VOQs that had nothing left to send.
    pub credit_bytes_forfeited: u64,
    /// Most credits waiting to be served.
    pub credit_backlog_peak: u32,
}

/// One VOQ: the packets for one destination host and class, and its credit state.
#[derive(Default)]
struct Voq {
    packets: PacketQueue,
    /// Bytes of the packets it holds.
    bytes: u64,
    balance: CreditBalance,
    /// Next cell sequence number of the stream to the destination.
    next_seq: u32,
    /// Its requests to the destination port's scheduler (push mode: `active` says it is in
    /// the round robin).
    asker: Asker,
}

/// What became of a packet handed to the ingress.
#[derive(Debug)]
pub enum Admission {
    /// Its VOQ was full: the caller releases it.
    Dropped(Packet),
    /// It joined a VOQ that already had packets.
    Queued,
    /// It joined empty VOQ `key`, now active: pull mode asks for credits, push mode serves.
    Activated(u32),
}

/// A request to send: to the adapter of host `dst`, with these flags and this number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The destination host (its adapter's port scheduler is asked).
    pub dst: u16,
    /// The cell's flags.
    pub flags: u8,
    /// The request's number.
    pub number: u32,
    /// When to check the VOQ still waits for a credit (a refresh timer to set), if due.
    pub refresh_at_ps: Option<TimePs>,
}

/// What a VOQ's refresh timer finds.
#[derive(Debug, PartialEq, Eq)]
pub enum Refresh {
    /// The VOQ is inactive: nothing to do.
    Idle,
    /// It waited the whole refresh time: ask again.
    AskAgain,
    /// It heard since: check again at this time.
    WaitUntil(TimePs),
}

/// How an ingress is configured.
pub struct IngressSpec {
    /// Hosts of the fabric.
    pub hosts: usize,
    /// Traffic classes.
    pub classes: usize,
    /// Packets a VOQ holds.
    pub voq_packets: u32,
    /// Credits (pull) or push.
    pub credits: bool,
    /// The ports weigh classes (credits are then served in arrival order, whatever the class).
    pub weighted: bool,
    /// Bytes per credit.
    pub credit_bytes: u32,
    /// Payload of a full data cell.
    pub payload_bytes: u32,
    /// A VOQ that has waited this long for a credit asks again (`None`: never).
    pub request_refresh_ps: Option<TimePs>,
}

/// An adapter's ingress.
pub struct Ingress {
    spec: IngressSpec,
    voqs: Vec<Voq>,
    /// Push mode: non-empty VOQs, round robin.
    ring: VecDeque<u32>,
    /// Pull mode: credited VOQs, per class in credit arrival order.
    grants: Grants,
    /// What it counted.
    pub counters: IngressCounters,
}

impl Ingress {
    /// An empty ingress as `spec` says.
    pub fn new(spec: IngressSpec) -> Self {
        Ingress {
            voqs: (0..spec.hosts * spec.classes)
                .map(|_| Voq::default())
                .collect(),
            ring: VecDeque::new(),
            grants: Grants::new(spec.classes),
            counters: IngressCounters::default(),
            spec,
        }
    }

    /// Pull mode (credits).
    pub fn credits(&self) -> bool {
        self.spec.credits
    }

    /// The destination host and traffic class of VOQ `key`.
    fn voq_of(&self, key: u32) -> (u16, usize) {
        let classes = self.spec.classes as u32;
        ((key / classes) as u16, (key % classes) as usize)
    }

    /// A host hands `packet` of class `class` to its VOQ.
    pub fn admit(&mut self, packets: &mut PacketArena, packet: Packet, class: usize) -> Admission {
        self.counters.packets_created += 1;
        let key = packet.dst as u32 * self.spec.classes as u32 + class as u32;
        let voq = &mut self.voqs[key as usize];
        if voq.packets.len() >= self.spec.voq_packets {
            self.counters.packets_dropped += 1;
            return Admission::Dropped(packet);
        }
        voq.bytes += packet.size_bytes as u64;
        let id = packets.alloc(packet);
        packets.push_back(&mut voq.packets, id);
        let admission = if voq.asker.active {
            Admission::Queued
        } else {
            voq.asker.active = true;
            if !self.spec.credits {
                self.ring.push_back(key);
            }
            Admission::Activated(key)
        };
        self.debug_check(key);
        admission
    }

    /// VOQ `key` tells its destination's port scheduler it has packets (`on`) or none left.
    pub fn request(&mut self, key: u32, on: bool, now_ps: TimePs) -> Request {
        self.counters.requests_sent += 1;
        let (dst, class) = self.voq_of(key);
        let flags = Kind::Request as u8 | class_flags(class) | if on { REQUEST_ON } else { 0 };
        let asker = &mut self.voqs[key as usize].asker;
        let number = asker.next_request();
        let mut refresh_at_ps = None;
        if let (true, Some(refresh_ps)) = (on, self.spec.request_refresh_ps) {
            asker.waited_from_ps = now_ps;
            if !asker.refresh_armed {
                asker.refresh_armed = true;
                refresh_at_ps = Some(now_ps + refresh_ps);
            }
        }
        Request {
            dst,
            flags,
            number,
            refresh_at_ps,
        }
    }

    /// VOQ `key`'s refresh timer: if it still waits for a credit after the refresh time, its
    /// request (or the credits answering it) may have been lost to a failure.
    pub fn refresh(&mut self, key: u32, now_ps: TimePs) -> Refresh {
        let refresh_ps = self
            .spec
            .request_refresh_ps
            .expect("set only with refreshes");
        let asker = &mut self.voqs[key as usize].asker;
        asker.refresh_armed = false;
        if !asker.active {
            return Refresh::Idle;
        }
        let due_ps = asker.waited_from_ps + refresh_ps;
        if now_ps >= due_ps {
            self.counters.requests_refreshed += 1;
            Refresh::AskAgain
        } else {
            asker.refresh_armed = true;
            Refresh::WaitUntil(due_ps)
        }
    }

    /// A credit of class `class` arrived for the VOQ toward host `dst` (the credit's source):
    /// it waits its turn.
    pub fn credit_arrived(&mut self, dst: u16, class: usize, now_ps: TimePs) {
        let key = dst as u32 * self.spec.classes as u32 + class as u32;
        self.voqs[key as usize].asker.waited_from_ps = now_ps;
        let priority = if self.spec.weighted { 0 } else { class };
        self.grants.push(key, priority);
        let backlog = self.grants.waiting() as u32;
        self.counters.credit_backlog_peak = self.counters.credit_backlog_peak.max(backlog);
    }

    /// The VOQ to serve next: credited VOQs in credit order (pull), or non-empty VOQs round
    /// robin (push).
    pub fn next_to_serve(&mut self) -> Option<u32> {
        if self.spec.credits {
            self.grants.pop()
        } else {
            self.ring.pop_front()
        }
    }

    /// Spends one credit on VOQ `key`: packs its packets into `cut` (emptied first) and says
    /// the burst's destination host and class.
    pub fn pack(
        &mut self,
        packets: &mut PacketArena,
        key: u32,
        cut: &mut Vec<CutCell>,
    ) -> (u16, usize) {
        let (dst, class) = self.voq_of(key);
        let voq = &mut self.voqs[key as usize];
        cut.clear();
        let packets_before = voq.packets.len();
        let forfeited_before = voq.balance.forfeited_bytes();
        // Push: one packet at a time, as it arrived (an element can then discard it whole).
        let budget_bytes = if self.spec.credits {
            self.spec.credit_bytes
        } else {
            voq.balance = CreditBalance::default();
            1
        };
        let payload_max = self.spec.payload_bytes;
        let taken = pack_credit(
            packets,
            &mut voq.packets,
            &mut voq.balance,
            budget_bytes,
            payload_max,
            &mut voq.next_seq,
            |c| cut.push(c),
        );
        voq.bytes -= taken;
        let c = &mut self.counters;
        c.packets_packed += (packets_before - voq.packets.len()) as u64;
        c.credit_bytes_forfeited += voq.balance.forfeited_bytes() - forfeited_before;
        c.payload_bytes_cut += cut.iter().map(|c| c.payload_bytes as u64).sum::<u64>();
        c.data_cells += cut.len() as u64;
        c.short_cells += cut.iter().filter(|c| c.payload_bytes < payload_max).count() as u64;
        self.debug_check(key);
        (dst, class)
    }

    /// After a burst of VOQ `key`: true if it emptied and must withdraw its request (pull
    /// mode); in push mode a VOQ with packets left rejoins the round robin.
    pub fn after_burst(&mut self, key: u32) -> bool {
        let voq = &mut self.voqs[key as usize];
        let (emptied, was_active) = (voq.packets.is_empty(), voq.asker.active);
        if emptied {
            voq.asker.active = false;
            return was_active && self.spec.credits;
        }
        if !self.spec.credits {
            self.ring.push_back(key);
        }
        false
    }

    /// Packets in its VOQs.
    pub fn packets_held(&self) -> u64 {
        self.voqs.iter().map(|v| v.packets.len() as u64).sum()
    }

    /// Debug builds: VOQ `key` holds no more packets than it may, holds bytes exactly when it
    /// holds packets (at least one per packet). The credits themselves are checked by the grant
    /// FIFOs ([`Grants::debug_check`]: none spent that was not received).
    fn debug_check(&self, key: u32) {
        let voq = &self.voqs[key as usize];
        let len = voq.packets.len();
        debug_assert!(len <= self.spec.voq_packets, "VOQ {key} over its capacity");
        debug_assert!(
            (len == 0) == (voq.bytes == 0) && voq.bytes >= len as u64,
            "VOQ {key}: {len} packets against {} bytes",
            voq.bytes
        );
    }

    /// Test only: VOQ `key` forgets `bytes` of its packets.
    #[cfg(test)]
    fn miscount(&mut self, key: u32, bytes: u64) {
        self.voqs[key as usize].bytes -= bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::NO_PACKET;

    fn ingress(credits: bool, voq_packets: u32) -> Ingress {
        Ingress::new(IngressSpec {
            hosts: 4,
            classes: 2,
            voq_packets,
            credits,
            weighted: false,
            credit_bytes: 1_000,
            payload_bytes: 240,
            request_refresh_ps: Some(1_000_000),
        })
    }

    #[test]
    fn a_full_voq_drops_and_the_first_packet_activates() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 2);
        let p = Packet::new(0, 3, 500, 0);
        assert!(matches!(
            i.admit(&mut packets, p, 1),
            Admission::Activated(7)
        ));
        assert!(matches!(i.admit(&mut packets, p, 1), Admission::Queued));
        assert!(matches!(i.admit(&mut packets, p, 1), Admission::Dropped(_)));
        assert_eq!(
            (i.counters.packets_created, i.counters.packets_dropped),
            (3, 1)
        );
        assert_eq!(i.packets_held(), 2);
        let r = i.request(7, true, 10);
        assert_eq!((r.dst, r.number, r.refresh_at_ps), (3, 1, Some(1_000_010)));
        assert_eq!(Kind::of(r.flags), Kind::Request);
        assert_ne!(r.flags & REQUEST_ON, 0);
        assert_eq!(
            i.request(7, true, 20).refresh_at_ps,
            None,
            "one refresh timer"
        );
    }

    #[test]
    fn a_credit_packs_whole_packets_and_an_emptied_voq_withdraws() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        for _ in 0..3 {
            i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        }
        i.credit_arrived(1, 0, 5);
        let key = i.next_to_serve().expect("a credit");
        let mut cut = Vec::new();
        assert_eq!(i.pack(&mut packets, key, &mut cut), (1, 0));
        // 1 000 bytes of credit take two 600-byte packets (owing 200) as 5 cells of 240.
        assert_eq!(i.counters.packets_packed, 2);
        assert_eq!(cut.iter().map(|c| c.payload_bytes).sum::<u32>(), 1_200);
        assert_eq!(cut.len(), 5);
        assert_ne!(
            cut[2].packet, NO_PACKET,
            "the first packet ends in the third cell"
        );
        assert!(!i.after_burst(key), "a packet left");
        i.credit_arrived(1, 0, 6);
        let key = i.next_to_serve().unwrap();
        i.pack(&mut packets, key, &mut cut);
        // 800 left after the debt: the last packet, and 200 forfeited.
        assert_eq!(i.counters.credit_bytes_forfeited, 200);
        assert!(i.after_burst(key), "emptied: withdraw");
        assert_eq!(i.next_to_serve(), None);
    }

    #[test]
    fn push_mode_serves_one_packet_per_turn_round_robin() {
        let mut packets = PacketArena::new();
        let mut i = ingress(false, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        i.admit(&mut packets, Packet::new(0, 2, 600, 0), 0);
        let mut cut = Vec::new();
        let mut order = Vec::new();
        while let Some(key) = i.next_to_serve() {
            order.push(i.pack(&mut packets, key, &mut cut).0);
            i.after_burst(key);
        }
        assert_eq!(order, [1, 2, 1]);
    }

    #[test]
    fn a_refresh_asks_again_only_after_a_quiet_refresh_time() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        i.request(2, true, 0);
        i.credit_arrived(1, 0, 400_000);
        assert_eq!(i.refresh(2, 1_000_000), Refresh::WaitUntil(1_400_000));
        assert_eq!(i.refresh(2, 1_400_000), Refresh::AskAgain);
        assert_eq!(i.counters.requests_refreshed, 1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "packets against")]
    fn a_voq_whose_bytes_disagree_with_its_packets_fires() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        i.miscount(2, 600);
        i.debug_check(2);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "over its capacity")]
    fn a_voq_over_its_capacity_fires() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0);
        i.spec.voq_packets = 0;
        i.debug_check(2);
    }
}
