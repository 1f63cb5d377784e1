//! A TCP receiver's sequence space: cumulative acknowledgment of in-order segments, with
//! out-of-order segments held in a fixed ring of flags (no allocation per packet) up to a
//! receive window, and the delayed-ACK rule (RFC 1122 §4.2.3.2, RFC 5681 §4.2: at least every
//! second full segment, at once for out-of-order data) with DCTCP's rule that a change of the
//! CE state acknowledges at once what came before it (Alizadeh et al. 2010 §3.1, Fig. 10).

/// Segments beyond the next expected one a receiver holds: its receive window, which senders
/// respect.
pub const RECEIVE_WINDOW_PACKETS: u32 = 4096;

const WORDS: usize = RECEIVE_WINDOW_PACKETS as usize / 64;

/// What the receiver does with an arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Segments newly delivered in order (this one and the held ones it released).
    pub delivered_from: u32,
    /// One past the last segment delivered: the cumulative acknowledgment.
    pub ack: u32,
    /// Acknowledge at once (otherwise the ACK may wait for a second segment or the timer).
    pub ack_now: bool,
    /// Before this segment, an ACK for `ack_before` with the previous CE state is due first
    /// (DCTCP's state change with a delayed ACK pending).
    pub flush_before: Option<u32>,
}

/// One flow's receive side.
#[derive(Clone, Debug)]
pub struct Receiver {
    /// Next segment expected.
    rcv_nxt: u32,
    /// Segments held beyond `rcv_nxt`, flag `s % window`.
    held: Box<[u64; WORDS]>,
    /// In-order segments not yet acknowledged (delayed ACKs).
    pending: u32,
    /// CE state of the last segment (DCTCP's receiver state machine).
    last_ce: bool,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            rcv_nxt: 0,
            held: Box::new([0; WORDS]),
            pending: 0,
            last_ce: false,
        }
    }
}

impl Receiver {
    fn flag(seq: u32) -> (usize, u64) {
        let bit = seq % RECEIVE_WINDOW_PACKETS;
        ((bit / 64) as usize, 1u64 << (bit % 64))
    }

    /// Makes this a fresh receive side, reusing its ring (a host reusing the slot of a flow
    /// that completed).
    pub fn reset(&mut self) {
        self.held.fill(0);
        (self.rcv_nxt, self.pending, self.last_ce) = (0, 0, false);
    }

    /// The next segment expected.
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// The CE state of the last segment, which ACKs echo.
    pub fn last_ce(&self) -> bool {
        self.last_ce
    }

    /// Takes segment `seq` carrying CE mark `ce`; `delayed` says whether ACKs may be delayed.
    /// A segment beyond the window is discarded (acknowledged at once, nothing delivered).
    pub fn on_segment(&mut self, seq: u32, ce: bool, delayed: bool) -> Arrival {
        let mut flush_before = None;
        if ce != self.last_ce && self.pending > 0 {
            flush_before = Some(self.rcv_nxt);
            self.pending = 0;
        }
        self.last_ce = ce;
        let from = self.rcv_nxt;
        if seq != self.rcv_nxt {
            if seq > self.rcv_nxt && seq - self.rcv_nxt < RECEIVE_WINDOW_PACKETS {
                let (word, bit) = Self::flag(seq);
                self.held[word] |= bit;
            }
            self.pending = 0;
            return Arrival {
                delivered_from: from,
                ack: self.rcv_nxt,
                ack_now: true,
                flush_before,
            };
        }
        self.rcv_nxt += 1;
        let mut filled_hole = false;
        loop {
            let (word, bit) = Self::flag(self.rcv_nxt);
            if self.held[word] & bit == 0 {
                break;
            }
            self.held[word] &= !bit;
            self.rcv_nxt += 1;
            filled_hole = true;
        }
        self.pending += 1;
        let ack_now = !delayed || filled_hole || self.pending >= 2;
        if ack_now {
            self.pending = 0;
        }
        Arrival {
            delivered_from: from,
            ack: self.rcv_nxt,
            ack_now,
            flush_before,
        }
    }

    /// The delayed-ACK timer fired: true if an ACK is due.
    pub fn take_pending(&mut self) -> bool {
        std::mem::take(&mut self.pending) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_acknowledged_at_once_and_filled_cumulatively() {
        let mut r = Receiver::default();
        assert_eq!(r.on_segment(0, false, false).ack, 1);
        let dup = r.on_segment(2, false, true);
        assert_eq!((dup.ack, dup.ack_now, dup.delivered_from), (1, true, 1));
        r.on_segment(3, false, true);
        let filled = r.on_segment(1, false, true);
        assert_eq!(
            (filled.delivered_from, filled.ack, filled.ack_now),
            (1, 4, true)
        );
        let old = r.on_segment(2, false, true);
        assert_eq!(
            (old.delivered_from, old.ack),
            (4, 4),
            "a duplicate delivers nothing"
        );
    }

    #[test]
    fn delayed_acks_cover_two_segments_and_a_ce_change_flushes_first() {
        let mut r = Receiver::default();
        assert!(!r.on_segment(0, false, true).ack_now);
        assert!(r.on_segment(1, false, true).ack_now);
        assert!(!r.on_segment(2, false, true).ack_now);
        let changed = r.on_segment(3, true, true);
        assert_eq!(
            changed.flush_before,
            Some(3),
            "segment 2 acknowledged without ECE"
        );
        assert!(!changed.ack_now);
        assert!(r.take_pending());
        assert!(!r.take_pending());
    }
}
