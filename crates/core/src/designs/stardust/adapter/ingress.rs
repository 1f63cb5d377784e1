//! An adapter's ingress (Stardust §3.2–3.4, §4.1, §5.3): a VOQ per (destination host, traffic
//! class), or with per-flow VOQs (App. G, reading R43) per (source host port, destination host,
//! traffic class); a packet that finds its VOQ full is dropped (§3.1). A VOQ asks the destination
//! port's scheduler with requests (reading R1 of `docs/validation/stardust.md`): by count, the
//! credits its backlog needs beyond its balance and the credits on their way (`credit.requests =
//! "backlog"`), or on when it needs credits and off when it needs none (`"on_off"`). Credits
//! that arrive wait in the grant FIFOs and are served in arrival order within a class (§3.3),
//! each packing whole packets of its VOQ into cells as one burst with surplus accounting
//! ([`pack_credit`]). What a VOQ that empties could not use of a credit is kept as its balance,
//! up to one credit, and packets that arrive while it is positive are sent on it at once
//! (`credit.unused = "kept"`, reading R7), or forfeited. In push mode there are no credits:
//! non-empty VOQs are served round robin, one packet at a time.
//!
//! Two options: low-latency VOQs (§5.6, `adapter.low_latency_bytes`): a small packet that finds
//! its VOQ empty is sent at once, with no request and no credit, while the adapter's
//! [`LowLatencyBucket`] holds its bytes (readings R40, R41); and the VOQs' packets as one
//! [`SharedMemory`] of bytes (`adapter.ingress_buffer_bytes`, reading R42) besides each VOQ's
//! packet count.
//!
//! The VOQs of one destination host and class, one per flow or the only one, share the cell
//! numbering of the adapter's stream to that host and class (reassembly is per source adapter):
//! a burst packs whole packets, so bursts of different flows never split a packet.
//!
//! The part is pure bookkeeping: it says what to send (a request, a burst of cells) and the
//! adapter sends it. Debug builds check each VOQ after every change (its packets against its
//! capacity and its byte count) and the credits after every arrival and spend (none spent that
//! was not received, and those waiting are exactly the difference).

use std::collections::VecDeque;

use super::super::{class_flags, Kind, REQUEST_ON};
use super::low_latency::LowLatencyBucket;
use super::memory::SharedMemory;
use crate::blocks::packet::{Packet, PacketArena, PacketId, PacketQueue};
use crate::blocks::sar::{pack_credit, CellShape, CreditBalance, CutCell, Packing};
use crate::blocks::solicitation::{Asker, Grants};
use crate::engine::time::TimePs;
use crate::run::Ledger;

/// What an ingress counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressCounters {
    /// Packets its hosts created.
    pub packets_created: u64,
    /// Packets dropped at a full VOQ or a full shared memory.
    pub packets_dropped: u64,
    /// Of `packets_dropped`, those the shared memory had no room for (its VOQ had).
    pub packets_dropped_memory: u64,
    /// Packets sent at once by low-latency VOQs, with no credit (§5.6).
    pub packets_low_latency: u64,
    /// Packets small enough for a low-latency send that found their VOQ empty but the
    /// adapter's low-latency bucket short, and waited for credits.
    pub packets_low_latency_refused: u64,
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
    /// Credits owed that refreshing VOQs (asking by count) gave up for lost.
    pub credits_written_off: u64,
    /// Credit bytes forfeited by VOQs that had nothing left to send.
    pub credit_bytes_forfeited: u64,
    /// Most credits waiting to be served.
    pub credit_backlog_peak: u32,
    /// Packets dropped because their destination adapter became unreachable (§5.10: a
    /// failed adapter), in its VOQs or on arrival.
    pub packets_dropped_unreachable: u64,
    /// Packets lost when this adapter failed (§5.10), in its VOQs or created after.
    pub packets_lost_failed: u64,
}

/// One VOQ: the packets for one destination host and class (from one source host, with
/// per-flow VOQs), and its credit state.
#[derive(Default)]
struct Voq {
    packets: PacketQueue,
    /// Bytes of the packets it holds.
    bytes: u64,
    balance: CreditBalance,
    /// Its requests to the destination port's scheduler (push mode: `active` says it is in
    /// the round robin; by count: it waits for credits promised).
    asker: Asker,
    /// Credits received in all (wrapping).
    credits_received: u32,
    /// By count: the credits its requests were promised in all (wrapping).
    promised: u32,
    /// By count: credits promised that a refresh gave up for lost (a failure dropped them on
    /// their way), not yet made good by a late one (wrapping).
    written_off: u32,
    /// It waits in the ingress's FIFO of VOQs that may send on their balance.
    ready: bool,
}

impl Voq {
    /// By count: credits promised that have neither arrived nor been written off (wrapping).
    fn outstanding(&self) -> u32 {
        self.promised
            .wrapping_sub(self.credits_received)
            .wrapping_sub(self.written_off)
    }
}

/// What a burst spends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Burst {
    /// A credit of these bytes (0: none, the VOQ's balance only).
    Credit(u32),
    /// Nothing: a low-latency VOQ's one packet, sent at once, leaving its balance as it was.
    LowLatency,
}

/// What became of a packet handed to the ingress.
#[derive(Debug)]
pub enum Admission {
    /// Its VOQ was full: the caller releases it.
    Dropped(Packet),
    /// Push: it joined a VOQ already in the round robin.
    Queued,
    /// Push: it joined an empty VOQ, now in the round robin: the caller serves.
    Activated,
    /// Pull: it joined VOQ `key`: the caller sends the request it owes
    /// ([`Ingress::request_due`]) and serves if a balance lets it send ([`Ingress::has_ready`]).
    Joined(u32),
}

/// A request to send: from requester `from` to the adapter of host `dst`, with these flags
/// and this number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The requester the port scheduler knows the VOQ by (its slot's, [`IngressSpec::requesters`]).
    pub from: u16,
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
    /// Per VOQ slot, the requester its VOQs' requests name: one slot, the adapter (per-port
    /// VOQs), or one per host port, its host (per-flow VOQs: a flow's slot is its source's
    /// host port).
    pub requesters: Vec<u16>,
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
    /// A VOQ keeps what it could not use of a credit, up to one credit (else forfeits it).
    pub keeps_unused: bool,
    /// VOQs ask by count (the credits their backlog needs), not on/off.
    pub counts_requests: bool,
    /// Payload of a full data cell.
    pub payload_bytes: u32,
    /// Packets of a burst share cells, or each begins its own (`stardust.packing`).
    pub packing: Packing,
    /// A VOQ that has waited this long for a credit asks again (`None`: never).
    pub request_refresh_ps: Option<TimePs>,
    /// Low-latency VOQs and their bound (pull mode only); `None`: every packet waits for
    /// credits.
    pub low_latency: Option<LowLatencyBucket>,
    /// The VOQs' packets share this memory; `None`: only each VOQ's packet count bounds them.
    pub memory: Option<SharedMemory>,
}

/// An adapter's ingress.
pub struct Ingress {
    spec: IngressSpec,
    /// Per (slot, destination host, class).
    voqs: Vec<Voq>,
    /// Per (destination host, class): the next cell sequence number of the stream there.
    next_seq: Vec<u32>,
    /// Push mode: non-empty VOQs, round robin.
    ring: VecDeque<u32>,
    /// Pull mode: credited VOQs, per class in credit arrival order.
    grants: Grants,
    /// Pull mode: VOQs whose balance lets them send packets that arrived, in arrival order.
    ready: VecDeque<u32>,
    /// Pull mode, low-latency VOQs: VOQs whose one packet goes at once, in arrival order.
    at_once: VecDeque<u32>,
    /// What it counted.
    pub counters: IngressCounters,
}

impl Ingress {
    /// An empty ingress as `spec` says.
    pub fn new(spec: IngressSpec) -> Self {
        let streams = spec.hosts * spec.classes;
        Ingress {
            voqs: (0..spec.requesters.len() * streams)
                .map(|_| Voq {
                    balance: CreditBalance::keeping(if spec.keeps_unused {
                        spec.credit_bytes
                    } else {
                        0
                    }),
                    ..Voq::default()
                })
                .collect(),
            next_seq: vec![0; streams],
            ring: VecDeque::new(),
            ready: VecDeque::new(),
            at_once: VecDeque::new(),
            grants: Grants::new(spec.classes),
            counters: IngressCounters::default(),
            spec,
        }
    }

    /// The key of the VOQ of slot `slot` toward host `dst` in class `class`.
    fn key(&self, slot: usize, dst: u16, class: usize) -> u32 {
        debug_assert!(slot < self.spec.requesters.len(), "VOQ slot {slot}");
        ((slot * self.spec.hosts + dst as usize) * self.spec.classes + class) as u32
    }

    /// The slot, destination host and traffic class of VOQ `key`.
    fn voq_of(&self, key: u32) -> (usize, u16, usize) {
        let (hosts, classes) = (self.spec.hosts as u32, self.spec.classes as u32);
        let stream = key % (hosts * classes);
        (
            (key / (hosts * classes)) as usize,
            (stream / classes) as u16,
            (stream % classes) as usize,
        )
    }

    /// A host hands `packet` of class `class` to its VOQ in slot `slot` (0 with per-port
    /// VOQs; its source's host port with per-flow VOQs) at `now_ps`.
    pub fn admit(
        &mut self,
        packets: &mut PacketArena,
        packet: Packet,
        slot: usize,
        class: usize,
        now_ps: TimePs,
    ) -> Admission {
        self.counters.packets_created += 1;
        let key = self.key(slot, packet.dst, class);
        let voq = &mut self.voqs[key as usize];
        if voq.packets.len() >= self.spec.voq_packets {
            self.counters.packets_dropped += 1;
            return Admission::Dropped(packet);
        }
        let size_bytes = packet.size_bytes as u64;
        if let Some(memory) = &mut self.spec.memory {
            if !memory.take(size_bytes, now_ps) {
                self.counters.packets_dropped += 1;
                self.counters.packets_dropped_memory += 1;
                return Admission::Dropped(packet);
            }
        }
        voq.bytes += packet.size_bytes as u64;
        let id = packets.alloc(packet);
        packets.push_back(&mut voq.packets, id);
        let admission = if self.spec.credits {
            if voq.balance.bytes() > 0 && !voq.ready {
                voq.ready = true;
                self.ready.push_back(key);
            }
            Admission::Joined(key)
        } else if voq.asker.active {
            Admission::Queued
        } else {
            voq.asker.active = true;
            self.ring.push_back(key);
            Admission::Activated
        };
        self.debug_check(key);
        admission
    }

    /// Pull mode: the request VOQ `key` owes its destination's scheduler after a change, if
    /// any (true: on, or by count, more credits; false: off). By count it asks when its
    /// packets need more credits beyond its balance (and debt) than are on their way, for all
    /// they need; on/off, when it starts or stops needing credits.
    pub fn request_due(&mut self, key: u32) -> Option<bool> {
        let credit_bytes = self.spec.credit_bytes as u64;
        let voq = &mut self.voqs[key as usize];
        // What its packets need beyond its balance; an empty VOQ's debt waits for its next
        // packets.
        let need_bytes = if voq.packets.is_empty() {
            0
        } else {
            voq.bytes as i64 - voq.balance.bytes()
        };
        if self.spec.counts_requests {
            let wanted = (need_bytes.max(0) as u64).div_ceil(credit_bytes) as u32;
            if wanted <= voq.outstanding() {
                return None;
            }
            voq.promised = voq
                .credits_received
                .wrapping_add(voq.written_off)
                .wrapping_add(wanted);
            voq.asker.active = true;
            return Some(true);
        }
        let needs = need_bytes > 0;
        if needs == voq.asker.active {
            return None;
        }
        voq.asker.active = needs;
        Some(needs)
    }

    /// Pull mode, low-latency VOQs (§5.6): VOQ `key`, which just took a packet, sends it at
    /// once (true: it waits first in line to be served, as [`Burst::LowLatency`], and owes no
    /// request): it holds that packet only, has no balance to send it on, and the packet is
    /// small enough and fits the adapter's low-latency bucket (reading R40: a packet behind
    /// others would pass them, so it waits with them).
    pub fn send_at_once(&mut self, packets: &PacketArena, key: u32, now_ps: TimePs) -> bool {
        let Some(bucket) = &mut self.spec.low_latency else {
            return false;
        };
        let voq = &self.voqs[key as usize];
        if voq.packets.len() != 1 || voq.balance.bytes() > 0 {
            return false;
        }
        let size_bytes = packets[voq.packets.front().expect("one packet")].size_bytes;
        if size_bytes > bucket.max_packet_bytes {
            return false;
        }
        let due = bucket.spend(size_bytes, now_ps);
        if due {
            self.at_once.push_back(key);
        } else {
            self.counters.packets_low_latency_refused += 1;
        }
        due
    }

    /// Pull mode: credits wait to be served, or a VOQ may send on its balance.
    pub fn credits_waiting(&self) -> bool {
        self.grants.waiting() > 0 || self.has_ready()
    }

    /// Pull mode: some VOQ may send on its balance, or at once.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty() || !self.at_once.is_empty()
    }

    /// VOQ `key` tells its destination's port scheduler it has packets (`on`) or none left.
    pub fn request(&mut self, key: u32, on: bool, now_ps: TimePs) -> Request {
        self.counters.requests_sent += 1;
        let (slot, dst, class) = self.voq_of(key);
        let from = self.spec.requesters[slot];
        let flags = Kind::Request as u8 | class_flags(class) | if on { REQUEST_ON } else { 0 };
        let voq = &mut self.voqs[key as usize];
        let asker = &mut voq.asker;
        let number = if self.spec.counts_requests {
            voq.promised
        } else {
            asker.next_request()
        };
        let mut refresh_at_ps = None;
        if let (true, Some(refresh_ps)) = (on, self.spec.request_refresh_ps) {
            asker.waited_from_ps = now_ps;
            if !asker.refresh_armed {
                asker.refresh_armed = true;
                refresh_at_ps = Some(now_ps + refresh_ps);
            }
        }
        Request {
            from,
            dst,
            flags,
            number,
            refresh_at_ps,
        }
    }

    /// VOQ `key`'s refresh timer: if it still waits for a credit after the refresh time, its
    /// request (or the credits answering it) may have been lost to a failure. Asking by count,
    /// it then gives the credits still owed up for lost and asks anew for all its packets
    /// need: the scheduler counted the lost credits as given, so a request repeating the old
    /// count would be ignored and the VOQ would wait forever. A written-off credit that does
    /// arrive after all is spent like any other.
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
            if self.spec.counts_requests {
                let voq = &mut self.voqs[key as usize];
                let lost = voq.outstanding();
                voq.written_off = voq.written_off.wrapping_add(lost);
                self.counters.credits_written_off += lost as u64;
                voq.asker.active = false;
                if self.request_due(key) != Some(true) {
                    return Refresh::Idle;
                }
            }
            Refresh::AskAgain
        } else {
            asker.refresh_armed = true;
            Refresh::WaitUntil(due_ps)
        }
    }

    /// A credit of class `class` arrived for the VOQ of slot `slot` toward host `dst` (the
    /// credit's source): it waits its turn.
    pub fn credit_arrived(&mut self, slot: usize, dst: u16, class: usize, now_ps: TimePs) {
        let key = self.key(slot, dst, class);
        let voq = &mut self.voqs[key as usize];
        voq.asker.waited_from_ps = now_ps;
        if self.spec.counts_requests && voq.outstanding() == 0 && voq.written_off != 0 {
            voq.written_off = voq.written_off.wrapping_sub(1); // late, not lost
        }
        voq.credits_received = voq.credits_received.wrapping_add(1);
        if self.spec.counts_requests {
            voq.asker.active = voq.outstanding() != 0;
        }
        self.debug_check_credits(key);
        let priority = if self.spec.weighted { 0 } else { class };
        self.grants.push(key, priority);
        let backlog = self.grants.waiting() as u32;
        self.counters.credit_backlog_peak = self.counters.credit_backlog_peak.max(backlog);
    }

    /// The VOQ to serve next and what it spends: low-latency VOQs sending at once, then
    /// credited VOQs in credit order, then VOQs that may send on their balance (no credit), in
    /// the order their packets came (pull); or non-empty VOQs round robin (push).
    pub fn next_to_serve(&mut self) -> Option<(u32, Burst)> {
        if !self.spec.credits {
            return self.ring.pop_front().map(|key| (key, Burst::Credit(0)));
        }
        while let Some(key) = self.at_once.pop_front() {
            if !self.voqs[key as usize].packets.is_empty() {
                return Some((key, Burst::LowLatency));
            }
        }
        if let Some(key) = self.grants.pop() {
            return Some((key, Burst::Credit(self.spec.credit_bytes)));
        }
        while let Some(key) = self.ready.pop_front() {
            let voq = &mut self.voqs[key as usize];
            voq.ready = false;
            if voq.balance.bytes() > 0 && !voq.packets.is_empty() {
                return Some((key, Burst::Credit(0)));
            }
        }
        None
    }

    /// Spends `burst` on VOQ `key` at `now_ps`: packs its packets into `cut` (emptied first)
    /// and says the burst's destination host and class. Push mode takes one packet, whatever
    /// `burst`; a low-latency burst takes the VOQ's one packet on a balance of its own.
    pub fn pack(
        &mut self,
        packets: &mut PacketArena,
        key: u32,
        burst: Burst,
        cut: &mut Vec<CutCell>,
        now_ps: TimePs,
    ) -> (u16, usize) {
        let (_, dst, class) = self.voq_of(key);
        let stream = dst as usize * self.spec.classes + class;
        let voq = &mut self.voqs[key as usize];
        cut.clear();
        let packets_before = voq.packets.len();
        let forfeited_before = voq.balance.forfeited_bytes();
        let mut at_once = CreditBalance::default();
        // Push: one packet at a time, as it arrived (an element can then discard it whole).
        let (balance, budget_bytes) = match burst {
            _ if !self.spec.credits => {
                voq.balance = CreditBalance::default();
                (&mut voq.balance, 1)
            }
            Burst::Credit(bytes) => (&mut voq.balance, bytes),
            Burst::LowLatency => {
                self.counters.packets_low_latency += 1;
                let front = voq
                    .packets
                    .front()
                    .expect("a low-latency VOQ holds a packet");
                (&mut at_once, packets[front].size_bytes)
            }
        };
        let payload_max = self.spec.payload_bytes;
        let shape = CellShape {
            payload_max,
            packing: self.spec.packing,
        };
        let taken = pack_credit(
            packets,
            &mut voq.packets,
            balance,
            budget_bytes,
            shape,
            &mut self.next_seq[stream],
            |c| cut.push(c),
        );
        voq.bytes -= taken;
        if let Some(memory) = &mut self.spec.memory {
            memory.give(taken, now_ps);
        }
        let c = &mut self.counters;
        c.packets_packed += (packets_before - voq.packets.len()) as u64;
        c.credit_bytes_forfeited += voq.balance.forfeited_bytes() - forfeited_before;
        c.payload_bytes_cut += cut.iter().map(|c| c.payload_bytes as u64).sum::<u64>();
        c.data_cells += cut.len() as u64;
        c.short_cells += cut.iter().filter(|c| c.payload_bytes < payload_max).count() as u64;
        self.debug_check(key);
        (dst, class)
    }

    /// After a burst of VOQ `key`: the request it owes (pull mode, [`Self::request_due`]); in
    /// push mode a VOQ with packets left rejoins the round robin.
    pub fn after_burst(&mut self, key: u32) -> Option<bool> {
        if self.spec.credits {
            return self.request_due(key);
        }
        let voq = &mut self.voqs[key as usize];
        if voq.packets.is_empty() {
            voq.asker.active = false;
        } else {
            self.ring.push_back(key);
        }
        None
    }

    /// Empties the VOQs toward host `host` (every class and slot) into `out` at `now_ps` (the
    /// caller releases the packets) and forgets that they asked for credits.
    pub fn empty_voqs(
        &mut self,
        packets: &mut PacketArena,
        host: u16,
        out: &mut Vec<PacketId>,
        now_ps: TimePs,
    ) {
        let (slots, classes) = (self.spec.requesters.len(), self.spec.classes);
        let keys = (0..slots).flat_map(|slot| (0..classes).map(move |class| (slot, class)));
        for (slot, class) in keys {
            let key = self.key(slot, host, class);
            let voq = &mut self.voqs[key as usize];
            while let Some(id) = packets.pop_front(&mut voq.packets) {
                out.push(id);
            }
            if let Some(memory) = &mut self.spec.memory {
                memory.give(voq.bytes, now_ps);
            }
            voq.bytes = 0;
            voq.asker.active = false;
            self.debug_check(key);
        }
    }

    /// Packets in its VOQs.
    pub fn packets_held(&self) -> u64 {
        self.voqs.iter().map(|v| v.packets.len() as u64).sum()
    }

    /// Its shared memory, if it has one.
    pub fn memory(&self) -> Option<&SharedMemory> {
        self.spec.memory.as_ref()
    }

    /// The shared memory's byte account against the bytes its VOQs hold (summed over every
    /// VOQ: for the end of a run, not per packet); `None` without a shared memory.
    pub fn memory_ledger(&self) -> Option<Ledger> {
        let held_bytes = self.voqs.iter().map(|v| v.bytes).sum();
        Some(self.spec.memory.as_ref()?.ledger(held_bytes))
    }

    /// Debug builds: VOQ `key` holds no more packets than it may, holds bytes exactly when it
    /// holds packets (at least one per packet), and no more than the shared memory counts. The
    /// credits themselves are checked by the grant FIFOs ([`Grants::debug_check`]: none spent
    /// that was not received).
    fn debug_check(&self, key: u32) {
        let voq = &self.voqs[key as usize];
        let len = voq.packets.len();
        debug_assert!(len <= self.spec.voq_packets, "VOQ {key} over its capacity");
        debug_assert!(
            self.spec
                .memory
                .as_ref()
                .is_none_or(|m| m.bytes() >= voq.bytes),
            "VOQ {key} holds more than the shared memory counts"
        );
        debug_assert!(
            (len == 0) == (voq.bytes == 0) && voq.bytes >= len as u64,
            "VOQ {key}: {len} packets against {} bytes",
            voq.bytes
        );
    }

    /// Debug builds, asking by count: VOQ `key` received no more credits than it was
    /// promised.
    fn debug_check_credits(&self, key: u32) {
        let voq = &self.voqs[key as usize];
        debug_assert!(
            !self.spec.counts_requests || voq.outstanding() as i32 >= 0,
            "VOQ {key} received more credits than it was promised"
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
    use crate::blocks::solicitation::GrantScheduler;

    /// An ingress that forfeits unused credit and asks on/off (`credits`: pull mode).
    fn ingress(credits: bool, voq_packets: u32) -> Ingress {
        ingress_asking(credits, voq_packets, false, false)
    }

    /// A pull ingress of 10-packet VOQs holding one 600-byte packet for destination 1.
    fn holding_one_packet() -> (PacketArena, Ingress) {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        (packets, i)
    }

    fn ingress_asking(
        credits: bool,
        voq_packets: u32,
        keeps_unused: bool,
        counts_requests: bool,
    ) -> Ingress {
        Ingress::new(IngressSpec {
            hosts: 4,
            requesters: vec![0],
            classes: 2,
            voq_packets,
            credits,
            weighted: false,
            credit_bytes: 1_000,
            keeps_unused,
            counts_requests,
            payload_bytes: 240,
            packing: Packing::Packed,
            request_refresh_ps: Some(1_000_000),
            low_latency: None,
            memory: None,
        })
    }

    #[test]
    fn a_full_voq_drops_and_the_first_packet_activates() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 2);
        let p = Packet::new(0, 3, 500, 0);
        assert!(matches!(
            i.admit(&mut packets, p, 0, 1, 0),
            Admission::Joined(7)
        ));
        assert_eq!(i.request_due(7), Some(true), "on");
        assert!(matches!(
            i.admit(&mut packets, p, 0, 1, 0),
            Admission::Joined(7)
        ));
        assert_eq!(i.request_due(7), None, "already on");
        assert!(matches!(
            i.admit(&mut packets, p, 0, 1, 0),
            Admission::Dropped(_)
        ));
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
            i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        }
        assert_eq!(i.request_due(2), Some(true));
        i.credit_arrived(0, 1, 0, 5);
        let (key, credit) = i.next_to_serve().expect("a credit");
        let mut cut = Vec::new();
        assert_eq!(i.pack(&mut packets, key, credit, &mut cut, 0), (1, 0));
        // 1 000 bytes of credit take two 600-byte packets (owing 200) as 5 cells of 240.
        assert_eq!(i.counters.packets_packed, 2);
        assert_eq!(cut.iter().map(|c| c.payload_bytes).sum::<u32>(), 1_200);
        assert_eq!(cut.len(), 5);
        assert_ne!(
            cut[2].packet, NO_PACKET,
            "the first packet ends in the third cell"
        );
        assert_eq!(i.after_burst(key), None, "a packet left");
        i.credit_arrived(0, 1, 0, 6);
        let (key, credit) = i.next_to_serve().unwrap();
        i.pack(&mut packets, key, credit, &mut cut, 0);
        // 800 left after the debt: the last packet, and 200 forfeited.
        assert_eq!(i.counters.credit_bytes_forfeited, 200);
        assert_eq!(i.after_burst(key), Some(false), "emptied: withdraw");
        assert_eq!(i.next_to_serve(), None);
    }

    /// Reading R7's balance: an ACK-sized packet spends a sliver of its credit, and the
    /// packets after it go on what is left, with no request and no credit, until it runs out.
    #[test]
    fn a_kept_balance_sends_small_packets_without_credits() {
        let mut packets = PacketArena::new();
        let mut i = ingress_asking(true, 10, true, true);
        let ack = Packet::new(0, 1, 64, 0);
        i.admit(&mut packets, ack, 0, 0, 0);
        assert_eq!(i.request_due(2), Some(true), "one credit wanted");
        assert_eq!(i.request(2, true, 0).number, 1, "promised one in all");
        i.credit_arrived(0, 1, 0, 10);
        let mut cut = Vec::new();
        let (key, credit) = i.next_to_serve().unwrap();
        i.pack(&mut packets, key, credit, &mut cut, 0);
        assert_eq!(i.after_burst(key), None);
        assert_eq!(i.voqs[2].balance.bytes(), 936, "kept, not forfeited");
        let mut sent_on_balance = 0;
        for _ in 0..16 {
            assert!(matches!(
                i.admit(&mut packets, ack, 0, 0, 0),
                Admission::Joined(2)
            ));
            if let Some(on) = i.request_due(2) {
                assert!(on);
                break;
            }
            assert!(i.has_ready());
            assert_eq!(
                i.next_to_serve(),
                Some((2, Burst::Credit(0))),
                "no credit spent"
            );
            i.pack(&mut packets, 2, Burst::Credit(0), &mut cut, 0);
            assert_eq!(i.after_burst(2), None);
            sent_on_balance += 1;
        }
        assert_eq!(
            sent_on_balance, 14,
            "936 bytes cover 14 more 64-byte packets; the 15th (40 bytes left) asks for a credit"
        );
        assert_eq!(i.counters.credit_bytes_forfeited, 0);
    }

    /// Asking by count: a VOQ asks for the credits its backlog needs beyond its balance and
    /// the credits on their way, and again only when that grows.
    #[test]
    fn a_count_request_asks_for_what_the_backlog_needs() {
        let mut packets = PacketArena::new();
        let mut i = ingress_asking(true, 10, true, true);
        i.admit(&mut packets, Packet::new(0, 1, 2_500, 0), 0, 0, 0);
        assert_eq!(i.request_due(2), Some(true));
        assert_eq!(
            i.request(2, true, 0).number,
            3,
            "2 500 bytes: three credits"
        );
        i.admit(&mut packets, Packet::new(0, 1, 400, 0), 0, 0, 0);
        assert_eq!(i.request_due(2), None, "2 900 bytes: still three");
        i.admit(&mut packets, Packet::new(0, 1, 400, 0), 0, 0, 0);
        assert_eq!(i.request_due(2), Some(true), "3 300: a fourth");
        assert_eq!(i.request(2, true, 0).number, 4);
        let mut cut = Vec::new();
        for credit in 0..4 {
            i.credit_arrived(0, 1, 0, 10 + credit);
            let (key, bytes) = i.next_to_serve().unwrap();
            i.pack(&mut packets, key, bytes, &mut cut, 0);
            assert_eq!(
                i.after_burst(key),
                None,
                "credit {credit}: nothing more to ask"
            );
        }
        assert_eq!(i.packets_held(), 0);
        assert_eq!(i.voqs[2].balance.bytes(), 700, "4 000 credited for 3 300");
        assert!(!i.voqs[2].asker.active, "waits for no credit");
    }

    /// A pull ingress (on/off, forfeiting) with low-latency VOQs for packets of at most
    /// 1 500 bytes, bounded at 1 Gbit/s and 2 000 bytes deep.
    fn low_latency_ingress() -> Ingress {
        let mut i = ingress(true, 10);
        i.spec.low_latency = Some(LowLatencyBucket::new(1_500, 1_000_000_000, 2_000));
        i
    }

    /// §5.6: a small packet that finds its VOQ empty goes at once, owing no request; one
    /// behind it, a large one, or one the bound has no room for waits for credits.
    #[test]
    fn a_low_latency_voq_sends_at_once_within_its_bound() {
        let mut packets = PacketArena::new();
        let mut i = low_latency_ingress();
        let mut cut = Vec::new();
        i.admit(&mut packets, Packet::new(0, 1, 1_000, 0), 0, 0, 0);
        assert!(i.send_at_once(&packets, 2, 0));
        assert!(i.has_ready());
        assert_eq!(i.next_to_serve(), Some((2, Burst::LowLatency)));
        i.pack(&mut packets, 2, Burst::LowLatency, &mut cut, 0);
        assert_eq!(cut.iter().map(|c| c.payload_bytes).sum::<u32>(), 1_000);
        assert_eq!(i.after_burst(2), None, "no request: nothing waits");
        assert_eq!(i.voqs[2].balance.bytes(), 0, "its balance untouched");
        // 1 000 of 2 000 bytes left in the bound: a second 1 000 goes, a third waits.
        i.admit(&mut packets, Packet::new(0, 2, 1_000, 0), 0, 0, 0);
        assert!(i.send_at_once(&packets, 4, 0));
        i.admit(&mut packets, Packet::new(0, 3, 1_000, 0), 0, 0, 0);
        assert!(!i.send_at_once(&packets, 6, 0), "the bound is spent");
        assert_eq!(i.request_due(6), Some(true), "it asks for credits");
        // Behind a packet, or too large: credits.
        i.admit(
            &mut packets,
            Packet::new(0, 3, 100, 8_000_000),
            0,
            0,
            8_000_000,
        );
        assert!(
            !i.send_at_once(&packets, 6, 8_000_000),
            "a packet ahead of it"
        );
        i.admit(
            &mut packets,
            Packet::new(0, 1, 1_501, 8_000_000),
            0,
            0,
            8_000_000,
        );
        assert!(!i.send_at_once(&packets, 2, 8_000_000), "too large");
        assert_eq!(
            (
                i.counters.packets_low_latency,
                i.counters.packets_low_latency_refused
            ),
            (1, 1),
            "one packed at once so far; one refused by the bound"
        );
    }

    /// The shared memory drops what does not fit, counted apart, and its bytes come back as
    /// packets leave; its account settles against the VOQs' bytes.
    #[test]
    fn a_full_shared_memory_drops_and_settles_its_bytes() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.spec.memory = Some(SharedMemory::new(2_000, 0));
        let p = |dst| Packet::new(0, dst, 900, 0);
        assert!(matches!(
            i.admit(&mut packets, p(1), 0, 0, 0),
            Admission::Joined(2)
        ));
        assert!(matches!(
            i.admit(&mut packets, p(2), 0, 0, 0),
            Admission::Joined(4)
        ));
        assert!(matches!(
            i.admit(&mut packets, p(3), 0, 0, 10),
            Admission::Dropped(_)
        ));
        assert_eq!(
            (
                i.counters.packets_dropped,
                i.counters.packets_dropped_memory
            ),
            (1, 1)
        );
        i.credit_arrived(0, 1, 0, 20);
        let (key, burst) = i.next_to_serve().unwrap();
        let mut cut = Vec::new();
        i.pack(&mut packets, key, burst, &mut cut, 30);
        assert_eq!(i.memory().unwrap().bytes(), 900);
        assert_eq!(i.memory().unwrap().peak_bytes, 1_800);
        assert!(matches!(
            i.admit(&mut packets, p(3), 0, 0, 40),
            Admission::Joined(6)
        ));
        assert!(i.memory_ledger().unwrap().check(false).is_ok());
        i.miscount(4, 900);
        assert!(
            i.memory_ledger().unwrap().check(false).is_err(),
            "a VOQ that forgot bytes breaks the memory's account"
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "more than the shared memory counts")]
    fn a_voq_holding_more_than_the_memory_counts_fires() {
        let (_packets, mut i) = holding_one_packet();
        i.spec.memory = Some(SharedMemory::new(2_000, 0));
        i.debug_check(2);
    }

    #[test]
    fn push_mode_serves_one_packet_per_turn_round_robin() {
        let mut packets = PacketArena::new();
        let mut i = ingress(false, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        i.admit(&mut packets, Packet::new(0, 2, 600, 0), 0, 0, 0);
        let mut cut = Vec::new();
        let mut order = Vec::new();
        while let Some((key, credit)) = i.next_to_serve() {
            order.push(i.pack(&mut packets, key, credit, &mut cut, 0).0);
            i.after_burst(key);
        }
        assert_eq!(order, [1, 2, 1]);
    }

    #[test]
    fn a_refresh_asks_again_only_after_a_quiet_refresh_time() {
        let mut packets = PacketArena::new();
        let mut i = ingress(true, 10);
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        assert_eq!(i.request_due(2), Some(true));
        i.request(2, true, 0);
        i.credit_arrived(0, 1, 0, 400_000);
        assert_eq!(i.refresh(2, 1_000_000), Refresh::WaitUntil(1_400_000));
        assert_eq!(i.refresh(2, 1_400_000), Refresh::AskAgain);
        assert_eq!(i.counters.requests_refreshed, 1);
    }

    /// Asking by count, credits lost to a failure would leave a VOQ waiting forever: the
    /// scheduler counted them as given, so repeating the old count is ignored. A refresh
    /// writes them off and asks anew above the old count, which the scheduler hears and
    /// answers; a written-off credit that turns up late is spent, not an error.
    #[test]
    fn a_refresh_by_count_writes_lost_credits_off_and_asks_above_the_old_count() {
        let mut packets = PacketArena::new();
        let mut i = ingress_asking(true, 10, true, true);
        for _ in 0..3 {
            i.admit(&mut packets, Packet::new(0, 1, 600, 0), 0, 0, 0);
        }
        assert_eq!(i.request_due(2), Some(true));
        let first = i.request(2, true, 0).number;
        assert_eq!(first, 2, "1 800 bytes: two credits of 1 000");
        let mut scheduler = GrantScheduler::new(2, 4, 1);
        assert!(scheduler.hear_count(0, 0, first));
        for now_ps in 0..2 {
            scheduler.arm(now_ps);
            assert_eq!(scheduler.grant(now_ps, || 1.0, None), Some((0, 0)));
        }
        // Both credits are lost on their way; the old count asks for nothing more.
        assert!(!scheduler.hear_count(0, 0, first));
        assert_eq!(i.refresh(2, 1_000_000), Refresh::AskAgain);
        assert_eq!(i.counters.credits_written_off, 2);
        let again = i.request(2, true, 1_000_000).number;
        assert_eq!(again, 4, "two more, above the old count");
        assert!(scheduler.hear_count(0, 0, again));
        assert_eq!(
            scheduler.arm(1_000_000),
            Some(1_000_000),
            "owed grants again"
        );
        for t in [1_000_100, 1_000_200] {
            i.credit_arrived(0, 1, 0, t);
        }
        assert!(!i.voqs[2].asker.active, "all it asked for came");
        i.credit_arrived(0, 1, 0, 1_000_300); // one of the lost two, late
        assert_eq!(i.voqs[2].written_off, 1);
        i.debug_check_credits(2);
    }

    /// Per-flow VOQs (reading R43): two slots whose requests name hosts 10 and 11, asking by
    /// count and keeping unused credit.
    fn per_flow_ingress() -> Ingress {
        let mut i = ingress_asking(true, 10, true, true);
        i.voqs = (0..2 * 4 * 2).map(|_| Voq::default()).collect();
        i.spec.requesters = vec![10, 11];
        i
    }

    /// Two flows to one host from two source hosts: a VOQ each, each asking and credited under
    /// its own requester, their bursts numbering the one stream to that host in turn.
    #[test]
    fn per_flow_voqs_ask_apart_and_share_the_stream_numbering() {
        let mut packets = PacketArena::new();
        let mut i = per_flow_ingress();
        let mut keys = Vec::new();
        for slot in 0..2 {
            let Admission::Joined(key) =
                i.admit(&mut packets, Packet::new(0, 1, 600, 0), slot, 0, 0)
            else {
                panic!("a pull ingress joins");
            };
            assert_eq!(i.request_due(key), Some(true));
            assert_eq!(i.request(key, true, 0).from, 10 + slot as u16);
            keys.push(key);
        }
        assert_eq!(
            keys,
            [2, 10],
            "slot 1's VOQs follow slot 0's 4 hosts x 2 classes"
        );
        let mut cut = Vec::new();
        let mut seqs = Vec::new();
        for slot in [1, 0] {
            i.credit_arrived(slot, 1, 0, 10);
            let (key, burst) = i.next_to_serve().unwrap();
            assert_eq!(key, keys[slot], "the credit reached its flow's VOQ");
            i.pack(&mut packets, key, burst, &mut cut, 10);
            seqs.extend(cut.iter().map(|c| c.seq));
        }
        assert_eq!(
            seqs,
            [0, 1, 2, 3, 4, 5],
            "one stream's numbering, burst after burst"
        );
        assert_eq!(i.packets_held(), 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "VOQ 10: 1 packets against")]
    fn a_flow_voq_whose_bytes_disagree_with_its_packets_fires() {
        let mut packets = PacketArena::new();
        let mut i = per_flow_ingress();
        i.admit(&mut packets, Packet::new(0, 1, 600, 0), 1, 0, 0);
        i.miscount(10, 600);
        i.debug_check(10);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "VOQ 10 received more credits than it was promised")]
    fn a_credit_a_flow_voq_never_asked_for_fires() {
        let mut i = per_flow_ingress();
        i.credit_arrived(1, 1, 0, 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "packets against")]
    fn a_voq_whose_bytes_disagree_with_its_packets_fires() {
        let (_packets, mut i) = holding_one_packet();
        i.miscount(2, 600);
        i.debug_check(2);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "more credits than it was promised")]
    fn a_credit_never_asked_for_fires() {
        let mut i = ingress_asking(true, 10, true, true);
        i.credit_arrived(0, 1, 0, 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "over its capacity")]
    fn a_voq_over_its_capacity_fires() {
        let (_packets, mut i) = holding_one_packet();
        i.spec.voq_packets = 0;
        i.debug_check(2);
    }
}
