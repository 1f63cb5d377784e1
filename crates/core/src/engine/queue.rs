//! Event queues ordered by time, then phase, then scheduling order.
//!
//! Two implementations share one contract ([`EventQueue`]): [`CalendarQueue`], a bucketed
//! calendar for the near future with a heap for far events (the one simulations use, O(1)
//! amortized for the near-future events that dominate), and [`HeapQueue`], a plain binary heap
//! kept as the reference the calendar is tested and benchmarked against.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::time::TimePs;

/// When, among events of the same instant, an event runs.
///
/// Messages (cells and signals arriving) run before clock edges, so a slotted component's tick
/// sees every message that arrived at the same instant, as a register latches its inputs at the
/// clock edge. Within a phase, events run in the order they were scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A message delivery.
    Message = 0,
    /// A clock edge of a slotted component.
    Clock = 1,
}

/// The total order of events: time, then phase and scheduling sequence (phase in the top bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    time_ps: TimePs,
    phase_seq: u64,
}

impl Key {
    #[inline]
    fn new(time_ps: TimePs, phase: Phase, seq: u64) -> Key {
        debug_assert!(seq < 1 << 63);
        Key {
            time_ps,
            phase_seq: ((phase as u64) << 63) | seq,
        }
    }

    #[inline]
    fn time_ps(self) -> TimePs {
        self.time_ps
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: Key,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// A priority queue of timestamped events; both implementations pop in the same order.
pub trait EventQueue<E: Copy> {
    /// Schedules `event` at `time_ps`; `time_ps` must not precede the last popped event.
    fn push(&mut self, time_ps: TimePs, phase: Phase, event: E);
    /// Removes and returns the earliest event if it is due at or before `limit_ps`.
    fn pop_until(&mut self, limit_ps: TimePs) -> Option<(TimePs, E)>;
    /// Number of pending events.
    fn len(&self) -> usize;
    /// True when no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The reference queue: one binary heap over all pending events.
pub struct HeapQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
}

impl<E: Copy> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> for HeapQueue<E> {
    fn push(&mut self, time_ps: TimePs, phase: Phase, event: E) {
        let key = Key::new(time_ps, phase, self.next_seq);
        self.next_seq += 1;
        self.heap.push(Reverse(Entry { key, event }));
    }

    fn pop_until(&mut self, limit_ps: TimePs) -> Option<(TimePs, E)> {
        let Reverse(head) = self.heap.peek()?;
        if head.key.time_ps() > limit_ps {
            return None;
        }
        let Reverse(entry) = self.heap.pop()?;
        Some((entry.key.time_ps(), entry.event))
    }

    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// A calendar queue: a ring of time buckets covering the near future, plus a heap for events
/// beyond the ring's horizon.
///
/// The bucket being drained is kept as a sorted vector, so popping is a pointer bump; a bucket is
/// sorted once when the calendar reaches it (events are mostly pushed in order, which the sort
/// detects). Bucket vectors are reused, so a warmed-up queue never allocates.
pub struct CalendarQueue<E> {
    bucket_shift: u32,
    ring: Vec<Vec<Entry<E>>>,
    ring_len: usize,
    /// Absolute index (time >> bucket_shift) of the bucket held in `current`.
    cursor: u64,
    current: Vec<Entry<E>>,
    current_head: usize,
    far: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
}

impl<E: Copy> CalendarQueue<E> {
    /// A calendar with `2^ring_bits` buckets, each `2^bucket_shift` picoseconds wide.
    ///
    /// Choose the bucket width near the typical gap between events (for a slotted fabric, a
    /// fraction of the cell time) and the ring long enough to cover the usual scheduling horizon.
    pub fn new(bucket_shift: u32, ring_bits: u32) -> Self {
        assert!(bucket_shift < 64 && ring_bits <= 24);
        CalendarQueue {
            bucket_shift,
            ring: (0..1usize << ring_bits).map(|_| Vec::new()).collect(),
            ring_len: 0,
            cursor: 0,
            current: Vec::new(),
            current_head: 0,
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// A calendar sized for events spaced about `typical_gap_ps` apart.
    pub fn for_gap(typical_gap_ps: TimePs) -> Self {
        let width = typical_gap_ps.max(1);
        Self::new(63 - width.leading_zeros(), 6)
    }

    fn ring_mask(&self) -> u64 {
        self.ring.len() as u64 - 1
    }

    fn bucket_of(&self, key: Key) -> u64 {
        key.time_ps() >> self.bucket_shift
    }

    #[inline]
    fn place(&mut self, entry: Entry<E>) {
        let bucket = self.bucket_of(entry.key);
        debug_assert!(bucket >= self.cursor, "event scheduled in the past");
        if bucket == self.cursor {
            let tail = &self.current[self.current_head..];
            let at = self.current_head + tail.partition_point(|e| e.key < entry.key);
            if at == self.current.len() {
                self.current.push(entry);
            } else {
                self.current.insert(at, entry);
            }
        } else if bucket - self.cursor <= self.ring_mask() {
            let slot = (bucket & self.ring_mask()) as usize;
            self.ring[slot].push(entry);
            self.ring_len += 1;
        } else {
            self.far.push(Reverse(entry));
        }
    }

    /// Moves the calendar forward until `current` holds the earliest pending events.
    fn refill(&mut self) -> bool {
        while self.current_head == self.current.len() {
            self.current.clear();
            self.current_head = 0;
            if self.ring_len == 0 {
                let Some(Reverse(first)) = self.far.peek() else {
                    return false;
                };
                self.cursor = self.bucket_of(first.key);
            } else {
                self.cursor += 1;
            }
            let horizon = self.cursor + self.ring_mask();
            while let Some(Reverse(first)) = self.far.peek() {
                if self.bucket_of(first.key) > horizon {
                    break;
                }
                let Some(Reverse(entry)) = self.far.pop() else {
                    break;
                };
                let slot = (self.bucket_of(entry.key) & self.ring_mask()) as usize;
                self.ring[slot].push(entry);
                self.ring_len += 1;
            }
            let slot = (self.cursor & self.ring_mask()) as usize;
            std::mem::swap(&mut self.current, &mut self.ring[slot]);
            self.ring_len -= self.current.len();
            self.current.sort_unstable();
        }
        true
    }
}

impl<E: Copy> EventQueue<E> for CalendarQueue<E> {
    #[inline]
    fn push(&mut self, time_ps: TimePs, phase: Phase, event: E) {
        let key = Key::new(time_ps, phase, self.next_seq);
        self.next_seq += 1;
        self.place(Entry { key, event });
    }

    #[inline]
    fn pop_until(&mut self, limit_ps: TimePs) -> Option<(TimePs, E)> {
        if self.current_head == self.current.len() && !self.refill() {
            return None;
        }
        let entry = self.current[self.current_head];
        if entry.key.time_ps() > limit_ps {
            return None;
        }
        self.current_head += 1;
        Some((entry.key.time_ps(), entry.event))
    }

    fn len(&self) -> usize {
        self.current.len() - self.current_head + self.ring_len + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn drain<Q: EventQueue<u32>>(q: &mut Q) -> Vec<(TimePs, u32)> {
        std::iter::from_fn(|| q.pop_until(TimePs::MAX)).collect()
    }

    #[test]
    fn same_time_events_run_in_scheduling_order_and_clock_after_messages() {
        let mut q = CalendarQueue::new(4, 3);
        q.push(100, Phase::Clock, 1);
        q.push(100, Phase::Message, 2);
        q.push(100, Phase::Message, 3);
        q.push(50, Phase::Clock, 4);
        assert_eq!(drain(&mut q), vec![(50, 4), (100, 2), (100, 3), (100, 1)]);
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = CalendarQueue::new(2, 2);
        q.push(10, Phase::Message, 1);
        q.push(1_000_000, Phase::Message, 2);
        assert_eq!(q.pop_until(500), Some((10, 1)));
        assert_eq!(q.pop_until(500), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(1_000_000), Some((1_000_000, 2)));
        assert!(q.is_empty());
    }

    proptest! {
        /// The calendar pops exactly what the reference heap pops, for any interleaving of pushes
        /// (near, far, same-time) and pops.
        #[test]
        fn calendar_matches_heap(ops in proptest::collection::vec((0u8..4, 0u64..5_000, any::<bool>()), 1..400)) {
            let mut cal = CalendarQueue::new(3, 4);
            let mut heap = HeapQueue::new();
            let mut now = 0;
            let mut id = 0u32;
            for (op, delay, clock) in ops {
                if op == 0 {
                    let a = cal.pop_until(TimePs::MAX);
                    let b = heap.pop_until(TimePs::MAX);
                    prop_assert_eq!(a, b);
                    if let Some((t, _)) = a { now = t; }
                } else {
                    let phase = if clock { Phase::Clock } else { Phase::Message };
                    let delay = if op == 3 { delay * 1000 } else { delay % 64 };
                    cal.push(now + delay, phase, id);
                    heap.push(now + delay, phase, id);
                    id += 1;
                }
                prop_assert_eq!(cal.len(), heap.len());
            }
            prop_assert_eq!(drain(&mut cal), drain(&mut heap));
        }
    }
}
