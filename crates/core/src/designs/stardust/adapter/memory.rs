//! An adapter's ingress buffer as one shared memory (Stardust §3.2: the adapter's buffer is
//! "MBs to GBs"; App. G's model gives each VOQ a packet count instead): every VOQ's packets
//! take bytes of one memory, and a packet that does not fit is dropped (reading R42). It
//! measures its occupancy (the peak over the run and the time-weighted mean over the
//! measurement window) and keeps a byte account the run settles: bytes taken = bytes given
//! back + bytes the VOQs hold.

use crate::engine::time::TimePs;
use crate::run::Ledger;

/// The shared ingress memory of one adapter.
#[derive(Clone, Debug)]
pub struct SharedMemory {
    /// Bytes it holds in all.
    capacity_bytes: u64,
    /// Bytes its packets take now.
    bytes: u64,
    /// Bytes taken in all.
    taken_bytes: u64,
    /// Bytes given back in all.
    given_bytes: u64,
    /// Most bytes it held.
    pub peak_bytes: u64,
    /// Byte-picoseconds held from `from_ps` to `last_ps`.
    area: u128,
    /// When the mean starts (the end of the warm-up).
    from_ps: TimePs,
    /// The last change.
    last_ps: TimePs,
}

impl SharedMemory {
    /// An empty memory of `capacity_bytes`, its mean measured from `from_ps`.
    pub fn new(capacity_bytes: u64, from_ps: TimePs) -> Self {
        SharedMemory {
            capacity_bytes,
            bytes: 0,
            taken_bytes: 0,
            given_bytes: 0,
            peak_bytes: 0,
            area: 0,
            from_ps,
            last_ps: from_ps,
        }
    }

    /// Adds the time since the last change at the bytes held then to the mean's area.
    fn advance(&mut self, now_ps: TimePs) {
        if now_ps > self.last_ps {
            self.area += self.bytes as u128 * (now_ps - self.last_ps) as u128;
            self.last_ps = now_ps;
        }
    }

    /// Takes `size_bytes` for a packet if they fit (true), else nothing (false: the caller
    /// drops it).
    pub fn take(&mut self, size_bytes: u64, now_ps: TimePs) -> bool {
        if self.bytes + size_bytes > self.capacity_bytes {
            return false;
        }
        self.advance(now_ps);
        self.bytes += size_bytes;
        self.taken_bytes += size_bytes;
        self.peak_bytes = self.peak_bytes.max(self.bytes);
        true
    }

    /// Gives back `size_bytes` of packets that left their VOQs.
    pub fn give(&mut self, size_bytes: u64, now_ps: TimePs) {
        self.advance(now_ps);
        self.bytes = self
            .bytes
            .checked_sub(size_bytes)
            .expect("a shared memory gives back no more than it holds");
        self.given_bytes += size_bytes;
    }

    /// Its byte account against `held_bytes`, the bytes its VOQs hold (counted there).
    pub fn ledger(&self, held_bytes: u64) -> Ledger {
        Ledger {
            injected: self.taken_bytes,
            delivered: self.given_bytes,
            dropped: 0,
            in_flight: held_bytes,
        }
    }

    /// Bytes its packets take now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Mean bytes held from the end of the warm-up to `end_ps`, time-weighted (0 for an empty
    /// window).
    pub fn mean_bytes(&self, end_ps: TimePs) -> f64 {
        if end_ps <= self.from_ps {
            return 0.0;
        }
        let tail = self.bytes as u128 * end_ps.saturating_sub(self.last_ps) as u128;
        (self.area + tail) as f64 / (end_ps - self.from_ps) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_that_does_not_fit_is_refused_and_the_mean_is_time_weighted() {
        let mut m = SharedMemory::new(10_000, 1_000);
        assert!(
            m.take(6_000, 0),
            "before the window: counts for the peak only"
        );
        assert!(!m.take(5_000, 500), "6 000 + 5 000 > 10 000");
        assert!(m.take(4_000, 2_000), "exactly full");
        assert_eq!((m.bytes(), m.peak_bytes), (10_000, 10_000));
        m.give(10_000, 3_000);
        // 6 000 bytes for 1 000 ps, 10 000 for 1 000 ps, then empty for 2 000 ps.
        assert_eq!(m.mean_bytes(5_000), 16_000_000.0 / 4_000.0);
        assert_eq!(m.mean_bytes(1_000), 0.0, "an empty window");
        assert!(m.ledger(0).check(false).is_ok());
        assert!(
            m.ledger(1).check(false).is_err(),
            "VOQs holding a byte the memory gave back"
        );
    }

    #[test]
    #[should_panic(expected = "no more than it holds")]
    fn giving_back_more_than_it_holds_fires() {
        let mut m = SharedMemory::new(10_000, 0);
        assert!(m.take(1_000, 0));
        m.give(1_001, 10);
    }
}
