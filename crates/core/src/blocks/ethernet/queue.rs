//! A switch's output queue: one FIFO per port on its link, drop-tail over a buffer of packets
//! (and optionally bytes), with ECN marking on the instantaneous queue as DCTCP asks of
//! switches (Alizadeh et al. 2010 §3.1: an arriving ECN-capable packet is marked CE when the
//! queue holds more than K packets).

use super::{CE, ECT};
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::link::Link;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;

/// What an output queue holds and when it marks.
#[derive(Clone, Copy, Debug)]
pub struct QueueSpec {
    /// Packets the queue holds (the one on the wire not counted).
    pub capacity_packets: u32,
    /// Bytes the queue holds, if bounded in bytes too.
    pub capacity_bytes: Option<u64>,
    /// Mark ECN-capable packets arriving at more than this many queued packets (`None`: never).
    pub ecn_threshold_packets: Option<u32>,
}

/// What became of a packet offered to the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued.
    Queued,
    /// Queued with CE set.
    Marked,
    /// No room: the caller drops it.
    Full,
}

/// The queue depth packets found on arrival during the measurement window (dropped ones
/// included): DCTCP's analysis predicts its range for N long flows (§3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArrivalDepths {
    /// Packets that arrived.
    pub arrivals: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Sum of the depths they found (for the mean).
    pub depth_sum: u64,
    /// Shallowest depth found.
    pub min_packets: u32,
    /// Deepest.
    pub max_packets: u32,
}

impl Default for ArrivalDepths {
    fn default() -> Self {
        ArrivalDepths {
            arrivals: 0,
            bytes: 0,
            depth_sum: 0,
            min_packets: u32::MAX,
            max_packets: 0,
        }
    }
}

impl ArrivalDepths {
    /// Mean depth found on arrival.
    pub fn mean_packets(&self) -> f64 {
        self.depth_sum as f64 / self.arrivals.max(1) as f64
    }
}

/// One port's output queue and link. The FIFO is a ring of (packet, size) allocated once at
/// its capacity, so queueing and sending touch neither the packets before it nor the one
/// leaving (a queue threaded through the packets costs a cache miss at each end).
pub struct OutputQueue {
    link: Link,
    /// Packets and their sizes in bytes, `len` of them from `head`.
    ring: Box<[(u32, u32)]>,
    head: u32,
    len: u32,
    /// When the port's wake-up timer is set for, or `NEVER_PS`.
    wake_at_ps: TimePs,
    spec: QueueSpec,
    bytes: u64,
    /// Deepest the queue has been, in packets.
    pub peak_packets: u32,
    /// Arrivals from this time on are measured.
    measure_from_ps: TimePs,
    /// What arrivals found in the measurement window.
    pub measured: ArrivalDepths,
}

impl OutputQueue {
    /// An empty queue on `link`, measuring what arrivals find from `measure_from_ps` on.
    pub fn new(link: Link, spec: QueueSpec, measure_from_ps: TimePs) -> Self {
        OutputQueue {
            link,
            ring: vec![(0, 0); spec.capacity_packets as usize].into_boxed_slice(),
            head: 0,
            len: 0,
            wake_at_ps: NEVER_PS,
            spec,
            bytes: 0,
            peak_packets: 0,
            measure_from_ps,
            measured: ArrivalDepths::default(),
        }
    }

    /// Packets queued.
    pub fn packets(&self) -> u32 {
        self.len
    }

    /// Offers `cell` (its `payload_bytes` are its frame) to the queue at `now_ps`.
    pub fn enqueue(&mut self, cells: &mut CellArena, cell: CellId, now_ps: TimePs) -> Enqueued {
        let depth = self.len;
        let size_bytes = cells[cell].payload_bytes as u64;
        if now_ps >= self.measure_from_ps {
            let m = &mut self.measured;
            m.arrivals += 1;
            m.bytes += size_bytes;
            m.depth_sum += depth as u64;
            m.min_packets = m.min_packets.min(depth);
            m.max_packets = m.max_packets.max(depth);
        }
        let over_bytes = self
            .spec
            .capacity_bytes
            .is_some_and(|cap| self.bytes + size_bytes > cap);
        if depth >= self.spec.capacity_packets || over_bytes {
            return Enqueued::Full;
        }
        let c = &mut cells[cell];
        let marked =
            c.flags & ECT != 0 && self.spec.ecn_threshold_packets.is_some_and(|k| depth > k);
        if marked {
            c.flags |= CE;
        }
        let tail = (self.head + self.len) % self.spec.capacity_packets;
        self.ring[tail as usize] = (cell.index(), size_bytes as u32);
        self.len += 1;
        self.bytes += size_bytes;
        self.peak_packets = self.peak_packets.max(depth + 1);
        if marked {
            Enqueued::Marked
        } else {
            Enqueued::Queued
        }
    }

    /// If the link is free at `now_ps`, puts the next packet on it and returns it with the time
    /// its last bit reaches the far end; otherwise, if packets wait and no wake-up is set for
    /// when the link frees, returns that time in `wake` (and the same after sending, if more
    /// wait).
    pub fn send_next(
        &mut self,
        now_ps: TimePs,
        wake: &mut Option<TimePs>,
    ) -> Option<(CellId, TimePs)> {
        if self.wake_at_ps <= now_ps {
            self.wake_at_ps = NEVER_PS;
        }
        if self.len == 0 {
            return None;
        }
        if !self.link.is_idle(now_ps) {
            let free_ps = self.link.busy_until_ps();
            if self.wake_at_ps != free_ps {
                self.wake_at_ps = free_ps;
                *wake = Some(free_ps);
            }
            return None;
        }
        let (cell, size_bytes) = self.ring[self.head as usize];
        self.head = (self.head + 1) % self.spec.capacity_packets;
        self.len -= 1;
        self.bytes -= size_bytes as u64;
        let arrive_ps = self.link.transmit(now_ps, size_bytes as u64);
        if self.len > 0 {
            let free_ps = self.link.busy_until_ps();
            self.wake_at_ps = free_ps;
            *wake = Some(free_ps);
        }
        Some((CellId::from_index(cell), arrive_ps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;

    fn packet(cells: &mut CellArena, flags: u8) -> CellId {
        let mut c = Cell::new(0, 1, 1000, true, 0, 0);
        c.flags = flags;
        cells.alloc(c)
    }

    #[test]
    fn marks_above_k_drops_when_full_and_paces_at_line_rate() {
        let mut cells = CellArena::new();
        let spec = QueueSpec {
            capacity_packets: 4,
            capacity_bytes: None,
            ecn_threshold_packets: Some(2),
        };
        let mut q = OutputQueue::new(Link::new(8_000_000_000, 0), spec, 0); // 1 byte/ns
        let got: Vec<Enqueued> = (0..5)
            .map(|_| {
                let p = packet(&mut cells, ECT);
                q.enqueue(&mut cells, p, 0)
            })
            .collect();
        use Enqueued::*;
        assert_eq!(got, vec![Queued, Queued, Queued, Marked, Full]);
        let plain = packet(&mut cells, 0);
        let mut wake = None;
        let first = q.send_next(0, &mut wake).unwrap();
        assert_eq!(first.1, 1_000_000);
        assert_eq!(wake, Some(1_000_000));
        assert_eq!(
            q.enqueue(&mut cells, plain, 0),
            Queued,
            "not ECN-capable: queued unmarked"
        );
        assert_eq!(cells[plain].flags & CE, 0);
        assert!(q.send_next(500_000, &mut wake).is_none());
        assert_eq!(q.packets(), 4);
        assert_eq!(q.peak_packets, 4);
        let m = q.measured;
        assert_eq!((m.arrivals, m.min_packets, m.max_packets), (6, 0, 4));
        assert!((m.mean_packets() - 13.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn a_byte_bound_drops_what_does_not_fit() {
        let mut cells = CellArena::new();
        let spec = QueueSpec {
            capacity_packets: 100,
            capacity_bytes: Some(2_500),
            ecn_threshold_packets: None,
        };
        let mut q = OutputQueue::new(Link::new(8_000_000_000, 0), spec, 0);
        let a = packet(&mut cells, 0);
        let b = packet(&mut cells, 0);
        let c = packet(&mut cells, 0);
        assert_eq!(q.enqueue(&mut cells, a, 0), Enqueued::Queued);
        assert_eq!(q.enqueue(&mut cells, b, 0), Enqueued::Queued);
        assert_eq!(q.enqueue(&mut cells, c, 0), Enqueued::Full);
    }
}
