//! Segmentation and reassembly with packing (Zilberman, Bracha and Schzukin, "Stardust: Divide
//! and Conquer in the Data Center Network", NSDI '19, §3.2, §3.4, §4.1, Fig. 4): on a credit,
//! whole packets of one queue are taken as one unit and cut into cells of up to the cell
//! payload, so a cell may end one packet and start the next, and only a burst's last cell may
//! be short. Without packing ([`Packing::PerPacket`], the conventional cell switch §3.4 and
//! §6.1.1 compare against) every packet starts a cell of its own, so each packet's last cell
//! may be short. The receiver puts each stream's cells back in sequence and releases whole
//! packets in order.

use crate::blocks::cell::{CellId, NO_PACKET};
use crate::blocks::packet::{PacketArena, PacketId, PacketQueue};
use std::collections::VecDeque;

use crate::engine::time::TimePs;

/// A queue's credit balance in bytes (Stardust §3.3: "the amount of surplus data is stored for
/// later accounting"). Whole packets are taken while the balance is positive; the overshoot of
/// the last one is owed by the next credit. What a queue that empties could not use of its
/// credit is kept, up to a cap ([`CreditBalance::keeping`]), for its next packets, and the rest
/// forfeited (reading R7 of `docs/validation/stardust.md`; by default nothing is kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditBalance {
    bytes: i64,
    forfeited_bytes: u64,
    keep_bytes: u32,
}

impl CreditBalance {
    /// An empty balance that keeps up to `keep_bytes` of a credit its queue could not use.
    pub fn keeping(keep_bytes: u32) -> Self {
        CreditBalance {
            keep_bytes,
            ..CreditBalance::default()
        }
    }

    /// Bytes the queue may still take (negative: owed).
    pub fn bytes(self) -> i64 {
        self.bytes
    }

    /// Credit bytes forfeited so far because the queue had nothing left to send.
    pub fn forfeited_bytes(self) -> u64 {
        self.forfeited_bytes
    }
}

/// How packets are cut into cells (§3.4: "packet packing avoids such waste").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Packing {
    /// A credit's packets are cut as one unit: a cell may end one packet and begin the next.
    #[default]
    Packed,
    /// Every packet begins a new cell: its last cell is short (padded on the wire by the
    /// caller), whatever follows it.
    PerPacket,
}

/// The cells a burst is cut into: the payload of a full cell, and whether packets share cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellShape {
    /// Payload bytes of a full cell.
    pub payload_max: u32,
    /// Packed, or a cell per packet.
    pub packing: Packing,
}

/// One cell cut from a burst: its payload, its sequence number in the stream, and the first
/// packet whose last byte it carries ([`NO_PACKET`] if none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutCell {
    /// Payload bytes (the cell's header is the caller's).
    pub payload_bytes: u32,
    /// Position in the stream.
    pub seq: u32,
    /// First packet ending in the cell, as a packet index, or [`NO_PACKET`].
    pub packet: u32,
}

/// Spends a credit of `credit_bytes` on `queue`: takes whole packets while the balance is
/// positive, cuts them as one burst into cells of at most `shape.payload_max` bytes numbered
/// from `next_seq` (advanced), each packet starting a new cell unless `shape` packs them, and
/// hands each cell to `emit` in order. Returns the bytes taken.
pub fn pack_credit(
    packets: &mut PacketArena,
    queue: &mut PacketQueue,
    balance: &mut CreditBalance,
    credit_bytes: u32,
    shape: CellShape,
    next_seq: &mut u32,
    mut emit: impl FnMut(CutCell),
) -> u64 {
    let payload_max = shape.payload_max;
    debug_assert!(payload_max > 0);
    balance.bytes += credit_bytes as i64;
    let mut taken = 0u64;
    let mut fill = 0u32;
    let mut first_end = NO_PACKET;
    let mut last_end: Option<PacketId> = None;
    while balance.bytes > 0 {
        let Some(id) = packets.pop_front(queue) else {
            let kept = balance.bytes.min(balance.keep_bytes as i64);
            balance.forfeited_bytes += (balance.bytes - kept) as u64;
            balance.bytes = kept;
            break;
        };
        let size = packets[id].size_bytes;
        packets[id].start_seq = *next_seq;
        balance.bytes -= size as i64;
        taken += size as u64;
        let mut remaining = size;
        while remaining > 0 {
            let take = remaining.min(payload_max - fill);
            fill += take;
            remaining -= take;
            if remaining == 0 {
                packets[id].end_seq = *next_seq;
                match last_end {
                    Some(previous) => packets[previous].next_in_cell = id.index(),
                    None => first_end = id.index(),
                }
                last_end = Some(id);
            }
            let packet_done = remaining == 0 && shape.packing == Packing::PerPacket;
            if fill == payload_max || (packet_done && fill > 0) {
                emit(CutCell {
                    payload_bytes: fill,
                    seq: *next_seq,
                    packet: first_end,
                });
                *next_seq = next_seq.wrapping_add(1);
                (fill, first_end, last_end) = (0, NO_PACKET, None);
            }
        }
    }
    if fill > 0 {
        emit(CutCell {
            payload_bytes: fill,
            seq: *next_seq,
            packet: first_end,
        });
        *next_seq = next_seq.wrapping_add(1);
    }
    taken
}

/// The receiving end of one stream: cells arrive in any order and leave in sequence. A gap
/// is given up once a cell behind it has waited the reassembly timeout (§4.1: after a link
/// error, say): the stream goes on from the next cell it holds, and packets that began before
/// that point are incomplete ([`Reassembly::is_complete`] says so, and the caller discards
/// them). A cell that arrives after its gap was given up is released at once (its packets
/// are incomplete too).
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    next_seq: u32,
    /// The cells after `next_seq`, by distance from it: each held cell and its arrival.
    window: VecDeque<Option<(CellId, TimePs)>>,
    held: usize,
    /// Arrival of the longest-waiting held cell.
    oldest_ps: TimePs,
    /// Packets that began before this cell lost part of themselves in a gap given up.
    complete_from: u32,
}

/// `a` comes before `b` in a stream's wrapping sequence numbers.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl Reassembly {
    /// Takes cell `cell` numbered `seq` at `now_ps`, and hands `release` every cell now in
    /// sequence (it, then those it unblocked), in order, giving up the gap a cell has waited
    /// behind for `timeout_ps`. Returns the cells held back after it.
    pub fn accept(
        &mut self,
        seq: u32,
        cell: CellId,
        now_ps: TimePs,
        timeout_ps: TimePs,
        mut release: impl FnMut(CellId),
    ) -> usize {
        if before(seq, self.next_seq) {
            release(cell); // late: its gap was given up
            return self.held;
        }
        // window[i] is the cell numbered next_seq + i.
        let ahead = seq.wrapping_sub(self.next_seq) as usize;
        if self.window.len() <= ahead {
            self.window.resize(ahead + 1, None);
        }
        self.window[ahead] = Some((cell, now_ps));
        self.held += 1;
        if ahead > 0 && self.held == 1 {
            self.oldest_ps = now_ps;
        }
        self.release_run(&mut release);
        self.give_up_overdue(now_ps, timeout_ps, &mut release);
        self.held
    }

    /// When the longest-waiting held cell will have waited `timeout_ps`, if a cell is held.
    pub fn overdue_at(&self, timeout_ps: TimePs) -> Option<TimePs> {
        (self.held > 0).then(|| self.oldest_ps + timeout_ps)
    }

    /// Gives up every gap a held cell has waited behind for `timeout_ps` by `now_ps`, handing
    /// `release` the cells that are then in sequence (a timer's work, or an arrival's).
    pub fn give_up_overdue(
        &mut self,
        now_ps: TimePs,
        timeout_ps: TimePs,
        release: &mut impl FnMut(CellId),
    ) {
        while self.held > 0 && now_ps >= self.oldest_ps + timeout_ps {
            // Give up the gap: go on from the first held cell.
            while let Some(None) = self.window.front() {
                self.window.pop_front();
                self.next_seq = self.next_seq.wrapping_add(1);
            }
            self.complete_from = self.next_seq;
            self.release_run(release);
        }
    }

    /// Releases the cells in sequence at the front of the window.
    fn release_run(&mut self, release: &mut impl FnMut(CellId)) {
        let mut oldest_gone = false;
        while let Some(Some((cell, at_ps))) = self.window.front().copied() {
            self.window.pop_front();
            self.held -= 1;
            self.next_seq = self.next_seq.wrapping_add(1);
            oldest_gone |= at_ps == self.oldest_ps;
            release(cell);
        }
        // The longest-waiting cell went: find the next (a scan per gap closed).
        if oldest_gone && self.held > 0 {
            self.oldest_ps = self
                .window
                .iter()
                .flatten()
                .map(|&(_, at)| at)
                .min()
                .expect("held");
        }
    }

    /// True if a packet whose first byte was in cell `start_seq` lost none of its cells.
    pub fn is_complete(&self, start_seq: u32) -> bool {
        !before(start_seq, self.complete_from)
    }

    /// Cells held back waiting for an earlier one.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Debug builds: the window holds exactly `held` cells, none of them at its front (a cell
    /// in sequence is released at once), and none that arrived before the longest-waiting one.
    pub fn debug_check(&self) {
        if cfg!(debug_assertions) {
            let mut cells = 0;
            for &(_, at_ps) in self.window.iter().flatten() {
                cells += 1;
                debug_assert!(at_ps >= self.oldest_ps, "a held cell older than the oldest");
            }
            debug_assert_eq!(cells, self.held, "reassembly window against its held count");
            debug_assert!(
                !matches!(self.window.front(), Some(Some(_))),
                "a cell in sequence still held"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reassembly that took one cell, of sequence number `seq`, at time 0.
    fn holding(seq: u32) -> Reassembly {
        let mut r = Reassembly::default();
        r.accept(seq, CellId::from_index(5), 0, 1_000, |_| {});
        r
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reassembly window against its held count")]
    fn a_held_count_that_disagrees_with_the_window_fires() {
        let mut r = holding(2);
        r.held += 1;
        r.debug_check();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a held cell older than the oldest")]
    fn a_stale_oldest_arrival_fires() {
        let mut r = holding(2);
        r.oldest_ps = 10;
        r.debug_check();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a cell in sequence still held")]
    fn a_cell_left_in_sequence_fires() {
        let mut r = holding(1);
        r.next_seq = 1;
        r.window.pop_front();
        r.debug_check();
    }
    use crate::blocks::packet::Packet;
    use crate::engine::arena::{Arena, Id};
    use proptest::prelude::*;

    /// Packed cells of 240 payload bytes (256-byte cells, 16-byte headers).
    const PACKED_240: CellShape = CellShape {
        payload_max: 240,
        packing: Packing::Packed,
    };

    fn queue_of(packets: &mut PacketArena, sizes: &[u32]) -> PacketQueue {
        let mut queue = PacketQueue::default();
        for &size in sizes {
            let id = packets.alloc(Packet::new(0, 1, size, 0));
            packets.push_back(&mut queue, id);
        }
        queue
    }

    /// One credit of 1000 bytes spent on a queue of packets of `sizes`, cells numbered from
    /// `first_seq`.
    struct OneCredit {
        packets: PacketArena,
        balance: CreditBalance,
        cells: Vec<CutCell>,
        taken: u64,
        next_seq: u32,
    }

    fn one_credit_of_1000(sizes: &[u32], shape: CellShape, first_seq: u32) -> OneCredit {
        let mut packets = Arena::new();
        let mut queue = queue_of(&mut packets, sizes);
        let mut balance = CreditBalance::default();
        let (mut next_seq, mut cells) = (first_seq, Vec::new());
        let taken = pack_credit(
            &mut packets,
            &mut queue,
            &mut balance,
            1000,
            shape,
            &mut next_seq,
            |c| cells.push(c),
        );
        OneCredit {
            packets,
            balance,
            cells,
            taken,
            next_seq,
        }
    }

    /// Fig. 4's situation: packets are cut as one unit, so a cell carries the tail of one and
    /// the head of the next, and only the burst's last cell is short.
    #[test]
    fn a_burst_is_cut_as_one_unit() {
        let OneCredit {
            packets,
            balance,
            cells,
            taken,
            next_seq,
        } = one_credit_of_1000(&[300, 100, 50, 700], PACKED_240, 7);
        assert_eq!(taken, 1150);
        let payloads: Vec<u32> = cells.iter().map(|c| c.payload_bytes).collect();
        assert_eq!(payloads, vec![240, 240, 240, 240, 190]);
        assert_eq!(next_seq, 12);
        // Packet 0 ends in cell 8 (bytes 240..480); packets 1 and 2 both end in cell 8 too
        // (bytes 300..400 and 400..450); packet 3 ends in the last cell.
        assert_eq!(cells[0].packet, NO_PACKET);
        assert_eq!(cells[1].packet, 0);
        assert_eq!(packets[Id::from_index(0)].next_in_cell, 1);
        assert_eq!(packets[Id::from_index(1)].next_in_cell, 2);
        assert_eq!(packets[Id::from_index(2)].next_in_cell, NO_PACKET);
        assert_eq!(cells[4].packet, 3);
        assert_eq!(packets[Id::from_index(3)].end_seq, 11);
        // The last packet overshot the credit by 150 bytes: owed by the next one.
        assert_eq!(balance.bytes(), -150);
    }

    /// Without packing (§3.4's waste): every packet begins a cell, so a packet one byte over a
    /// cell takes two, and small packets a cell each.
    #[test]
    fn unpacked_packets_each_begin_a_cell() {
        let shape = CellShape {
            packing: Packing::PerPacket,
            ..PACKED_240
        };
        let OneCredit {
            packets,
            cells,
            taken,
            ..
        } = one_credit_of_1000(&[300, 100, 50, 241], shape, 0);
        assert_eq!(taken, 691);
        let payloads: Vec<u32> = cells.iter().map(|c| c.payload_bytes).collect();
        assert_eq!(payloads, vec![240, 60, 100, 50, 240, 1]);
        let ends: Vec<u32> = cells.iter().map(|c| c.packet).collect();
        assert_eq!(ends, vec![NO_PACKET, 0, 1, 2, NO_PACKET, 3]);
        assert!((0..4).all(|p| packets[Id::from_index(p)].next_in_cell == NO_PACKET));
        assert_eq!(packets[Id::from_index(3)].start_seq, 4);
    }

    #[test]
    fn the_overshoot_is_owed_by_the_next_credit() {
        let mut packets = Arena::new();
        let mut queue = queue_of(&mut packets, &[1500, 1500, 1500]);
        let mut balance = CreditBalance::default();
        let mut seq = 0;
        // One credit of 2000 bytes: what it took, and the balance after.
        let mut credit_of_2000 = || {
            let taken = pack_credit(
                &mut packets,
                &mut queue,
                &mut balance,
                2000,
                PACKED_240,
                &mut seq,
                |_| {},
            );
            (taken, balance.bytes())
        };
        assert_eq!(credit_of_2000(), (3000, -1000));
        assert_eq!(credit_of_2000(), (1500, -500));
        assert_eq!(
            credit_of_2000(),
            (0, 0),
            "a credit an empty queue cannot use is forfeited"
        );
        assert_eq!(balance.forfeited_bytes(), 1500);
    }

    /// A queue that keeps its unused credit spends it on the packets that come next, with no
    /// credit of their own, and forfeits only what exceeds its cap.
    #[test]
    fn an_unused_credit_is_kept_up_to_the_cap() {
        let mut packets = Arena::new();
        let mut queue = queue_of(&mut packets, &[64]);
        let mut balance = CreditBalance::keeping(4096);
        let mut seq = 0;
        let mut spend = |packets: &mut PacketArena, queue: &mut PacketQueue, credit| {
            pack_credit(
                packets,
                queue,
                &mut balance,
                credit,
                PACKED_240,
                &mut seq,
                |_| {},
            );
            (balance.bytes(), balance.forfeited_bytes())
        };
        assert_eq!(
            spend(&mut packets, &mut queue, 4096),
            (4032, 0),
            "an ACK's credit"
        );
        for _ in 0..3 {
            let id = packets.alloc(Packet::new(0, 1, 64, 0));
            packets.push_back(&mut queue, id);
        }
        assert_eq!(
            spend(&mut packets, &mut queue, 0),
            (3840, 0),
            "three more ACKs, no credit"
        );
        assert_eq!(
            spend(&mut packets, &mut queue, 4096),
            (4096, 3840),
            "a credit on top of a full balance: the excess is forfeited"
        );
    }

    /// A lost cell holds its stream back until the timeout, then the stream goes on and the
    /// packets that spanned the gap are known to be incomplete.
    #[test]
    fn a_gap_is_given_up_after_the_timeout() {
        let mut cells = Arena::new();
        let ids: Vec<_> = (0..5u32)
            .map(|i| cells.alloc(crate::blocks::cell::Cell::new(0, 1, i as u16, true, 0, 0)))
            .collect();
        let mut r = Reassembly::default();
        let mut out = Vec::new();
        r.accept(0, ids[0], 0, 100, |c| out.push(c));
        // Cell 1 is lost; 2 and 3 wait.
        assert_eq!(r.accept(2, ids[2], 10, 100, |c| out.push(c)), 1);
        assert_eq!(r.accept(3, ids[3], 50, 100, |c| out.push(c)), 2);
        assert_eq!(out, vec![ids[0]]);
        // Cell 4 arrives after the timeout: the stream goes on from 2.
        assert_eq!(r.accept(4, ids[4], 110, 100, |c| out.push(c)), 0);
        assert_eq!(out, vec![ids[0], ids[2], ids[3], ids[4]]);
        assert!(!r.is_complete(1), "a packet that began in the lost cell");
        assert!(!r.is_complete(0), "a packet that spanned it");
        assert!(r.is_complete(2));
    }

    proptest! {
        /// Payload bytes are conserved, at most one cell per burst is short (packed) or per
        /// packet (not packed, where no cell holds the end of two packets), and every packet
        /// ends in the cell its end_seq names.
        #[test]
        fn packing_conserves_bytes(sizes in proptest::collection::vec(1u32..3000, 1..40), credit in 64u32..8192, payload in 16u32..600, packed in any::<bool>()) {
            let packing = if packed { Packing::Packed } else { Packing::PerPacket };
            let shape = CellShape { payload_max: payload, packing };
            let mut packets = Arena::new();
            let mut queue = queue_of(&mut packets, &sizes);
            let mut balance = CreditBalance::default();
            let mut seq = 0;
            let mut cells = Vec::new();
            let (mut taken, mut credits) = (0, 0);
            while !queue.is_empty() {
                credits += 1;
                taken += pack_credit(&mut packets, &mut queue, &mut balance, credit, shape, &mut seq, |c| cells.push(c));
            }
            prop_assert_eq!(taken, sizes.iter().map(|&s| s as u64).sum::<u64>());
            prop_assert_eq!(cells.iter().map(|c| c.payload_bytes as u64).sum::<u64>(), taken);
            let short = cells.iter().filter(|c| c.payload_bytes < payload).count();
            let bound = if packed { credits } else { sizes.len() };
            prop_assert!(short <= bound, "{short} short cells from {credits} credits, {} packets", sizes.len());
            if !packed {
                let expected: u64 = sizes.iter().map(|&s| s.div_ceil(payload) as u64).sum();
                prop_assert_eq!(cells.len() as u64, expected, "a packet of S bytes takes ceil(S / payload) cells");
            }
            let mut ends = 0;
            for c in &cells {
                let mut p = c.packet;
                while p != NO_PACKET {
                    prop_assert_eq!(packets[Id::from_index(p)].end_seq, c.seq);
                    ends += 1;
                    p = packets[Id::from_index(p)].next_in_cell;
                }
            }
            prop_assert_eq!(ends, sizes.len());
        }

        /// With cells lost and the rest in any order, every cell that arrives leaves exactly
        /// once, in sequence, once the timeout has passed.
        #[test]
        fn lost_cells_are_given_up_and_the_rest_released_in_order(
            order in Just((0u32..60).collect::<Vec<_>>()).prop_shuffle(),
            lost in proptest::collection::btree_set(0u32..60, 0..10),
        ) {
            let mut cells = Arena::new();
            let ids: Vec<_> = (0..62u32).map(|i| cells.alloc(crate::blocks::cell::Cell::new(0, 1, i as u16, true, 0, 0))).collect();
            let mut r = Reassembly::default();
            let mut out = Vec::new();
            for (t, &seq) in order.iter().filter(|s| !lost.contains(s)).enumerate() {
                r.accept(seq, ids[seq as usize], t as u64, 1_000, |c| out.push(c));
            }
            // Two late arrivals: by the second, every gap has waited out the timeout.
            r.accept(60, ids[60], 10_000, 1_000, |c| out.push(c));
            r.accept(61, ids[61], 20_000, 1_000, |c| out.push(c));
            let expected: Vec<_> = (0..62u32).filter(|s| !lost.contains(s)).map(|s| ids[s as usize]).collect();
            prop_assert_eq!(out, expected);
            prop_assert_eq!(r.held(), 0);
            if let Some(&first_lost) = lost.iter().next() {
                prop_assert!(!r.is_complete(first_lost));
            }
        }

        /// Whatever the arrival order, cells leave in sequence.
        #[test]
        fn reassembly_releases_in_sequence(order in Just((0u32..50).collect::<Vec<_>>()).prop_shuffle()) {
            let mut cells = Arena::new();
            let ids: Vec<_> = (0..50u32).map(|i| cells.alloc(crate::blocks::cell::Cell::new(0, 1, i as u16, true, 0, 0))).collect();
            let mut r = Reassembly::default();
            let mut out = Vec::new();
            for &seq in &order {
                r.accept(seq, ids[seq as usize], 0, 1_000, |c| out.push(c));
            }
            prop_assert_eq!(out, ids);
            prop_assert_eq!(r.held(), 0);
            prop_assert!(r.is_complete(0));
        }
    }
}
