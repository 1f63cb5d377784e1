//! A switch's output queue: one FIFO per port on its link, drop-tail over a buffer of packets
//! (and optionally bytes), with ECN marking on the instantaneous queue as DCTCP asks of
//! switches (Alizadeh et al. 2010 §3.1: an arriving ECN-capable packet is marked CE when the
//! queue holds more than K packets), and optionally htsim's random drop near the top of the
//! buffer (its `RandomQueue`, which the MPTCP runs the Stardust paper used queue on).

use rand::Rng as _;

use super::{PortCheck, PortKind};
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::ethernet::{reached_ps, CE, ECT};
use crate::blocks::link::Link;
use crate::blocks::transport::Marks;
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use crate::keys::{at_most, invalid, ScenarioError};

/// Drop-tail output queues, one buffer each.
pub const KIND: PortKind = PortKind {
    name: "drop_tail",
    description: "drop-tail output queues of switch.queue_packets each (and switch.queue_bytes), ECN marks at a threshold, optionally htsim's random drop near the top and cut-through switching",
    trims: false,
    lossless: false,
    classes: false,
    per_flow_routing: false,
    keys: &[&[
        "switch.queue_bytes",
        "switch.random_drop_packets",
        "switch.random_drop_probability",
        "switch.cut_through",
    ]],
    check,
};

/// Random drop within the queue, a byte bound of at least a packet, DCTCP's K below a full
/// queue.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    let s = c.switch;
    let (drop_packets, queue_packets) = (s.random_drop_packets, s.queue_packets);
    at_most(
        "switch.random_drop_packets",
        drop_packets,
        "switch.queue_packets",
        queue_packets,
    )?;
    if !(s.random_drop_probability > 0.0 && s.random_drop_probability <= 1.0) {
        return Err(invalid(
            "switch.random_drop_probability",
            "expected above 0, at most 1",
        ));
    }
    if s.queue_bytes.is_some_and(|b| b < c.packet_bytes as u64) {
        return Err(invalid(
            "switch.queue_bytes",
            format!(
                "expected at least one packet (host.packet_bytes = {})",
                c.packet_bytes
            ),
        ));
    }
    if c.marks == Marks::Threshold && s.ecn_threshold_packets >= s.queue_packets {
        return Err(invalid(
            "switch.ecn_threshold_packets",
            format!(
                "expected fewer packets than switch.queue_packets ({}): a full queue drops before it marks",
                s.queue_packets
            ),
        ));
    }
    Ok(())
}

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

/// htsim's `RandomQueue`: an arrival that finds the queue within `top_packets` of full is
/// dropped with `probability` even if it fits (htsim: the top 3 of 100 packets, 0.1), so that
/// flows sharing a full queue see losses spread over them rather than in drop-tail's bursts.
#[derive(Clone, Debug)]
pub struct RandomDrop {
    /// How near the top of the buffer arrivals are dropped at random, in packets.
    pub top_packets: u32,
    /// The probability each such arrival is dropped.
    pub probability: f64,
    /// The queue's own coin.
    pub coin: Rng,
}

/// What became of a packet offered to the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued; its last bit reaches the far end of the link at `arrive_ps`.
    Queued {
        /// When its last bit reaches the far end.
        arrive_ps: TimePs,
        /// CE was set.
        marked: bool,
    },
    /// No room (or a random-drop queue's coin dropped it): the caller drops it.
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
    /// A packet of `size_bytes` arrived and found `depth` packets queued.
    #[inline]
    pub fn record(&mut self, size_bytes: u64, depth: u32) {
        self.arrivals += 1;
        self.bytes += size_bytes;
        self.depth_sum += depth as u64;
        self.min_packets = self.min_packets.min(depth);
        self.max_packets = self.max_packets.max(depth);
    }

    /// Mean depth found on arrival.
    pub fn mean_packets(&self) -> f64 {
        self.depth_sum as f64 / self.arrivals.max(1) as f64
    }
}

/// One port's output queue and link. A FIFO on one link serves packets back to back in
/// arrival order, so a packet's transmission start is known when it is queued: the queue
/// hands it to the wire at once with its arrival time at the far end (no wake-up event per
/// packet), and keeps only the start times and sizes of the packets still waiting, in a ring
/// allocated once at its capacity, to know its depth at any later arrival.
///
/// What every arrival reads and writes is the first cache line of the queue, its link the
/// second: an arrival finds a queue cold more often than not on a large fabric, and pays two
/// misses, not three.
#[repr(C, align(64))]
pub struct OutputQueue {
    /// The start time of the packet at `head` (`TimePs::MAX` when none waits): kept here so an
    /// arrival reads the ring only when a packet has started since.
    front_start_ps: TimePs,
    /// Start time and size in bytes of each packet waiting, `len` of them from `head`; its
    /// length is the queue's capacity in packets.
    ring: Box<[(TimePs, u32)]>,
    bytes: u64,
    /// Arrivals from this time on are measured.
    measure_from_ps: TimePs,
    head: u32,
    len: u32,
    /// ECN-capable arrivals finding more packets than this are marked (`u32::MAX`: never).
    ecn_above_packets: u32,
    /// Deepest the queue has been, in packets.
    pub peak_packets: u32,
    /// Arrivals finding this many packets or more may be dropped at random (`u32::MAX`: off).
    random_drop_from_packets: u32,
    /// Its far end is a cut-through switch, which has a frame at its header.
    into_cut_through: bool,
    link: Link,
    /// Bytes the queue holds (`u64::MAX`: bounded in packets only).
    capacity_bytes: u64,
    /// What arrivals found in the measurement window.
    pub measured: ArrivalDepths,
    /// Random drop near the top of the buffer, if on.
    random_drop: Option<RandomDrop>,
    /// Arrivals dropped at random (counted among the queue's drops as well).
    pub random_drops: u64,
}

impl OutputQueue {
    /// An empty queue on `link`, measuring what arrivals find from `measure_from_ps` on.
    pub fn new(link: Link, spec: QueueSpec, measure_from_ps: TimePs) -> Self {
        OutputQueue {
            link,
            ring: vec![(0, 0); spec.capacity_packets as usize].into_boxed_slice(),
            head: 0,
            len: 0,
            front_start_ps: TimePs::MAX,
            capacity_bytes: spec.capacity_bytes.unwrap_or(u64::MAX),
            ecn_above_packets: spec.ecn_threshold_packets.unwrap_or(u32::MAX),
            bytes: 0,
            peak_packets: 0,
            measure_from_ps,
            measured: ArrivalDepths::default(),
            into_cut_through: false,
            random_drop_from_packets: u32::MAX,
            random_drop: None,
            random_drops: 0,
        }
    }

    /// The same queue on a link into a cut-through switch: what it sends arrives there at its
    /// header.
    pub fn into_cut_through(self) -> Self {
        OutputQueue {
            into_cut_through: true,
            ..self
        }
    }

    /// The same queue dropping arrivals at random near the top of its buffer.
    pub fn with_random_drop(self, random_drop: RandomDrop) -> Self {
        OutputQueue {
            random_drop_from_packets: self
                .capacity_packets()
                .saturating_sub(random_drop.top_packets),
            random_drop: Some(random_drop),
            ..self
        }
    }

    /// Packets the queue holds (the one on the wire not counted).
    fn capacity_packets(&self) -> u32 {
        self.ring.len() as u32
    }

    /// Forgets the packets whose transmission has started by `now_ps`.
    fn start_due(&mut self, now_ps: TimePs) {
        while self.front_start_ps <= now_ps {
            let size_bytes = self.ring[self.head as usize].1;
            self.head += 1;
            if self.head == self.capacity_packets() {
                self.head = 0;
            }
            self.len -= 1;
            self.bytes -= size_bytes as u64;
            self.front_start_ps = if self.len == 0 {
                TimePs::MAX
            } else {
                self.ring[self.head as usize].0
            };
        }
    }

    /// Packets waiting at `now_ps`, without forgetting the started ones (for a router's view).
    pub fn waiting(&self, now_ps: TimePs) -> u32 {
        let started = (0..self.len)
            .take_while(|&i| {
                let at = (self.head + i) % self.capacity_packets();
                self.ring[at as usize].0 <= now_ps
            })
            .count() as u32;
        self.len - started
    }

    /// Packets waiting at `now_ps` (the one on the wire not counted).
    pub fn packets(&mut self, now_ps: TimePs) -> u32 {
        self.start_due(now_ps);
        self.len
    }

    /// The link the queue sends on.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Prefetches the two cache lines an arrival reads (its state and its link).
    #[inline]
    pub fn prefetch(&self) {
        crate::engine::cache::prefetch(self);
        crate::engine::cache::prefetch(&self.link);
    }

    /// Offers `cell` (its `payload_bytes` are its frame) to the queue at `now_ps`; it may
    /// start leaving at `ready_ps` at the earliest (`now_ps`, or later for a frame cut
    /// through from a slower link, which must not outrun its own arrival).
    pub fn enqueue(
        &mut self,
        cells: &mut CellArena,
        cell: CellId,
        now_ps: TimePs,
        ready_ps: TimePs,
    ) -> Enqueued {
        let capacity_packets = self.capacity_packets();
        self.enqueue_below(cells, cell, now_ps, ready_ps, capacity_packets)
    }

    /// [`OutputQueue::enqueue`], taking the packet only while fewer than `limit_packets`
    /// wait (a shared buffer's dynamic threshold; never more than the queue's capacity).
    /// Inlined always, so that [`OutputQueue::enqueue`]'s per-port path compiles to the
    /// capacity check alone.
    #[inline(always)]
    pub fn enqueue_below(
        &mut self,
        cells: &mut CellArena,
        cell: CellId,
        now_ps: TimePs,
        ready_ps: TimePs,
        limit_packets: u32,
    ) -> Enqueued {
        self.start_due(now_ps);
        let depth = self.len;
        let size_bytes = cells[cell].payload_bytes as u64;
        if now_ps >= self.measure_from_ps {
            self.measured.record(size_bytes, depth);
        }
        let over_bytes = self.bytes + size_bytes > self.capacity_bytes;
        let capacity_packets = self.capacity_packets();
        if depth >= limit_packets.min(capacity_packets) || over_bytes {
            return Enqueued::Full;
        }
        if depth >= self.random_drop_from_packets {
            let drop = self
                .random_drop
                .as_mut()
                .expect("a random-drop depth has its coin");
            if drop.coin.gen::<f64>() < drop.probability {
                self.random_drops += 1;
                return Enqueued::Full;
            }
        }
        let c = &mut cells[cell];
        let marked = c.flags & ECT != 0 && depth > self.ecn_above_packets;
        if marked {
            c.flags |= CE;
        }
        let start_ps = ready_ps.max(self.link.busy_until_ps());
        let last_bit_ps = self.link.transmit(start_ps, size_bytes);
        let arrive_ps = reached_ps(&self.link, last_bit_ps, size_bytes, self.into_cut_through);
        if start_ps > now_ps {
            let mut tail = self.head + self.len;
            if tail >= self.capacity_packets() {
                tail -= self.capacity_packets();
            }
            self.ring[tail as usize] = (start_ps, size_bytes as u32);
            if self.len == 0 {
                self.front_start_ps = start_ps;
            }
            self.len += 1;
            self.bytes += size_bytes;
        }
        self.peak_packets = self.peak_packets.max(self.len);
        Enqueued::Queued { arrive_ps, marked }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arrival at a cold queue misses on the first line (its state) and the second (its
    /// link): everything it reads and writes beside the link stays in the first.
    #[test]
    fn an_arrivals_state_fits_the_first_cache_line() {
        assert_eq!(std::mem::align_of::<OutputQueue>(), 64);
        assert!(std::mem::offset_of!(OutputQueue, into_cut_through) < 64);
        assert_eq!(std::mem::offset_of!(OutputQueue, link), 64);
        assert!(std::mem::offset_of!(OutputQueue, capacity_bytes) + 8 <= 128);
    }

    fn packet(cells: &mut CellArena, flags: u8) -> CellId {
        super::super::test_packet(cells, |c| c.flags = flags)
    }

    #[test]
    fn marks_above_k_drops_when_full_and_paces_at_line_rate() {
        let mut cells = CellArena::new();
        let spec = QueueSpec {
            capacity_packets: 3,
            capacity_bytes: None,
            ecn_threshold_packets: Some(1),
        };
        let mut q = OutputQueue::new(Link::new(8_000_000_000, 500), spec, 0); // 1 byte/ns
        let got: Vec<Enqueued> = (0..5)
            .map(|_| {
                let p = packet(&mut cells, ECT);
                q.enqueue(&mut cells, p, 0, 0)
            })
            .collect();
        let queued = |at_ns: u64, marked| Enqueued::Queued {
            arrive_ps: at_ns * 1000 + 500,
            marked,
        };
        // The first goes on the wire at once; three wait (the third above K = 1); one is dropped.
        assert_eq!(
            got,
            vec![
                queued(1000, false),
                queued(2000, false),
                queued(3000, false),
                queued(4000, true),
                Enqueued::Full
            ]
        );
        assert_eq!(q.packets(999_999), 3);
        assert_eq!(q.packets(1_000_000), 2, "the second started");
        let plain = packet(&mut cells, 0);
        assert_eq!(
            q.enqueue(&mut cells, plain, 1_000_000, 1_000_000),
            queued(5000, false),
            "not ECN-capable: unmarked"
        );
        assert_eq!(cells[plain].flags & CE, 0);
        assert_eq!(q.packets(10_000_000), 0);
        assert_eq!(q.peak_packets, 3);
        let m = q.measured;
        assert_eq!((m.arrivals, m.min_packets, m.max_packets), (6, 0, 3));
        // Depths found: 0, 0, 1, 2, 3 (full) at 0 ns, then 2 at 1 000 ns.
        assert!((m.mean_packets() - 8.0 / 6.0).abs() < 1e-12);
    }

    /// Within the top 3 of 10 packets an arrival is dropped with probability 0.25, below them
    /// never: over 4 000 queues filled to 7 waiting, none drops while filling and a quarter of
    /// the next arrivals are dropped, within sampling error (±4.4 standard deviations).
    #[test]
    fn random_drop_takes_its_share_near_the_top_only() {
        let spec = QueueSpec {
            capacity_packets: 10,
            capacity_bytes: None,
            ecn_threshold_packets: None,
        };
        let trials = 4_000u32;
        let mut dropped = 0;
        for trial in 0..trials {
            let mut cells = CellArena::new();
            let coin = crate::engine::rng::stream(
                u64::from(trial),
                crate::engine::rng::ComponentId { kind: 0, index: 0 },
            );
            let drop = RandomDrop {
                top_packets: 3,
                probability: 0.25,
                coin,
            };
            let mut q =
                OutputQueue::new(Link::new(8_000_000_000, 0), spec, 0).with_random_drop(drop);
            // One on the wire, then 7 waiting: each found at most 6 waiting, below the top 3.
            for _ in 0..8 {
                let p = packet(&mut cells, 0);
                assert_ne!(q.enqueue(&mut cells, p, 0, 0), Enqueued::Full);
            }
            assert_eq!(q.packets(0), 7);
            let p = packet(&mut cells, 0);
            if q.enqueue(&mut cells, p, 0, 0) == Enqueued::Full {
                dropped += 1;
                assert_eq!(q.random_drops, 1);
            }
        }
        let share = dropped as f64 / trials as f64;
        let band = crate::engine::stats::binomial_band(0.25, trials as f64);
        assert!(
            (share - 0.25).abs() < band,
            "dropped share {share} ± {band}"
        );
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
        let results: Vec<bool> = (0..4)
            .map(|_| {
                let p = packet(&mut cells, 0);
                q.enqueue(&mut cells, p, 0, 0) != Enqueued::Full
            })
            .collect();
        assert_eq!(
            results,
            vec![true, true, true, false],
            "one on the wire, two waiting"
        );
    }
}
