//! Event queues ordered by time, then phase, then origin component, then the origin's own
//! sequence number.
//!
//! The order of same-instant events never depends on the order they were inserted in, only on
//! who sent them and in which order each sender sent its own: the day components run in parallel
//! partitions, results stay the same whatever the thread count. (A queue-wide counter, the order
//! this replaced, made the order of two senders' events depend on which ran first.)
//!
//! Two implementations share one contract ([`EventQueue`]): [`CalendarQueue`], a bucketed
//! calendar for the near future with a heap for far events (the one simulations use, O(1)
//! amortized for the near-future events that dominate), and [`HeapQueue`], a plain binary heap
//! kept as the reference the calendar is tested and benchmarked against.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rand::seq::SliceRandom;

use super::rng::Rng;
use super::time::TimePs;

/// The component that sends an event (a design numbers its components from 0).
pub type Origin = u32;

/// Bits of an event's order word: phase, origin, then the origin's sequence number.
const ORIGIN_BITS: u32 = 23;
const SEQ_BITS: u32 = 40;

/// The largest origin a queue accepts.
pub const MAX_ORIGIN: Origin = (1 << ORIGIN_BITS) - 1;

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

/// The total order of events: time, then one word of phase (top bit), origin and the origin's
/// sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    time_ps: TimePs,
    order: u64,
}

impl Key {
    #[inline]
    fn new(time_ps: TimePs, phase: Phase, origin: Origin, seq: u64) -> Key {
        debug_assert!(origin <= MAX_ORIGIN && seq < 1 << SEQ_BITS);
        Key {
            time_ps,
            order: ((phase as u64) << 63) | ((origin as u64) << SEQ_BITS) | seq,
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

/// An event's place in the order, fixed by its sender: an event for another partition's queue
/// ([`CalendarQueue::key_for`], [`CalendarQueue::push_keyed`]) keeps the place its sender's own
/// sequence gave it, so it runs where it would have run in one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventKey(Key);

impl EventKey {
    /// When the event is due.
    pub fn time_ps(self) -> TimePs {
        self.0.time_ps
    }
}

/// Each origin's next sequence number.
#[derive(Clone, Debug, Default)]
struct Sequencer {
    next: Vec<u64>,
}

impl Sequencer {
    #[inline]
    fn key(&mut self, time_ps: TimePs, phase: Phase, origin: Origin) -> Key {
        let index = origin as usize;
        if index >= self.next.len() {
            self.next.resize(index + 1, 0);
        }
        let seq = self.next[index];
        self.next[index] += 1;
        Key::new(time_ps, phase, origin, seq)
    }
}

/// A priority queue of timestamped events; both implementations pop in the same order.
pub trait EventQueue<E: Copy> {
    /// Schedules `event`, sent by `origin`, at `time_ps`; `time_ps` must not precede the last
    /// popped event.
    fn push(&mut self, time_ps: TimePs, phase: Phase, origin: Origin, event: E);
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
    sequencer: Sequencer,
}

impl<E: Copy> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
            sequencer: Sequencer::default(),
        }
    }
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> for HeapQueue<E> {
    fn push(&mut self, time_ps: TimePs, phase: Phase, origin: Origin, event: E) {
        let key = self.sequencer.key(time_ps, phase, origin);
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
    sequencer: Sequencer,
    /// Reused buffer for merging a bucket's sorted runs.
    scratch: Vec<Entry<E>>,
    /// Test mode: events held back and inserted at the next pop in a shuffled order of origins.
    shuffle: Option<Shuffle<E>>,
}

/// Pushes held back by the insertion-order test mode.
struct Shuffle<E> {
    rng: Rng,
    pending: Vec<(TimePs, Phase, Origin, E)>,
    origins: Vec<Origin>,
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
            sequencer: Sequencer::default(),
            scratch: Vec::new(),
            shuffle: None,
        }
    }

    /// Test mode: from now on, every push is held back until the next pop and then inserted
    /// with the origins in an order drawn from `rng` (each origin's own events keep their
    /// order). A model whose results change under it depends on insertion order.
    pub fn shuffle_insertion_order(&mut self, rng: Rng) {
        self.shuffle = Some(Shuffle {
            rng,
            pending: Vec::new(),
            origins: Vec::new(),
        });
    }

    #[inline(always)]
    fn insert(&mut self, time_ps: TimePs, phase: Phase, origin: Origin, event: E) {
        let key = self.sequencer.key(time_ps, phase, origin);
        self.place(Entry { key, event });
    }

    /// The key of an event `origin` sends for `time_ps` to another partition's queue (taken
    /// from this queue's count of `origin`'s events, as a push would).
    pub fn key_for(&mut self, time_ps: TimePs, phase: Phase, origin: Origin) -> EventKey {
        EventKey(self.sequencer.key(time_ps, phase, origin))
    }

    /// Schedules `event` with the key another partition's queue gave it.
    pub fn push_keyed(&mut self, key: EventKey, event: E) {
        self.place(Entry { key: key.0, event });
    }

    /// Inserts the held-back pushes, origin by origin in a random order.
    fn flush_shuffled(&mut self) {
        let Some(mut shuffle) = self.shuffle.take() else {
            return;
        };
        shuffle.origins.clear();
        shuffle
            .origins
            .extend(shuffle.pending.iter().map(|&(_, _, origin, _)| origin));
        shuffle.origins.sort_unstable();
        shuffle.origins.dedup();
        let Shuffle { rng, origins, .. } = &mut shuffle;
        origins.shuffle(rng);
        for &origin in &shuffle.origins {
            for &(time_ps, phase, from, event) in &shuffle.pending {
                if from == origin {
                    self.insert(time_ps, phase, from, event);
                }
            }
        }
        shuffle.pending.clear();
        self.shuffle = Some(shuffle);
    }

    /// A calendar sized for events spaced about `typical_gap_ps` apart.
    pub fn for_gap(typical_gap_ps: TimePs) -> Self {
        let width = typical_gap_ps.max(1);
        Self::new(63 - width.leading_zeros(), 6)
    }

    /// A calendar whose buckets are about `bucket_ps` wide and whose ring reaches at least
    /// `horizon_ps` ahead (events scheduled further go to the heap): for event-driven fabrics
    /// where many nodes schedule events a link's delay ahead.
    pub fn for_horizon(bucket_ps: TimePs, horizon_ps: TimePs) -> Self {
        let shift = 63 - bucket_ps.max(1).leading_zeros();
        let buckets = (horizon_ps >> shift).max(1).next_power_of_two();
        Self::new(shift, buckets.trailing_zeros().clamp(6, 16))
    }

    fn ring_mask(&self) -> u64 {
        self.ring.len() as u64 - 1
    }

    fn bucket_of(&self, key: Key) -> u64 {
        key.time_ps() >> self.bucket_shift
    }

    #[inline(always)]
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
    fn refill(&mut self, limit_bucket: u64) -> bool {
        while self.current_head == self.current.len() {
            self.current.clear();
            self.current_head = 0;
            let next = match self.ring_len {
                0 => match self.far.peek() {
                    Some(Reverse(first)) => self.bucket_of(first.key),
                    None => return false,
                },
                _ => self.cursor + 1,
            };
            if next > limit_bucket {
                return false; // nothing due by the limit: stay, so what arrives meanwhile is ahead
            }
            self.cursor = next;
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
            sort_bucket(&mut self.current, &mut self.scratch, self.bucket_shift);
        }
        true
    }
}

/// Sub-buckets a large unsorted bucket is distributed over before sorting (bits of time below
/// the bucket width).
const SUB_BUCKET_BITS: u32 = 6;
/// Buckets smaller than this are sorted outright.
const DISTRIBUTE_MIN_LEN: usize = 48;

/// Sorts a bucket of width `2^bucket_shift` ps. A bucket is often one or two sorted runs (what
/// one round of events pushed for a later instant, in key order, after a few pushed earlier),
/// so two runs are merged in linear time through `scratch`. A large bucket in no order (an
/// event-driven fabric's arrivals, hundreds per bucket from many links) is distributed by the
/// next bits of its times into sub-buckets of a few events each, in two linear passes, and
/// each is sorted: that takes about a third of sorting the whole bucket at once. Anything
/// else is sorted outright.
fn sort_bucket<E: Copy>(
    bucket: &mut Vec<Entry<E>>,
    scratch: &mut Vec<Entry<E>>,
    bucket_shift: u32,
) {
    let Some(split) = bucket.windows(2).position(|w| w[1] < w[0]).map(|i| i + 1) else {
        return;
    };
    if !bucket[split..].is_sorted() {
        if bucket.len() >= DISTRIBUTE_MIN_LEN && bucket_shift >= SUB_BUCKET_BITS {
            distribute_and_sort(bucket, scratch, bucket_shift - SUB_BUCKET_BITS);
        } else {
            bucket.sort_unstable();
        }
        return;
    }
    scratch.clear();
    let (left, right) = bucket.split_at(split);
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if right[j] < left[i] {
            scratch.push(right[j]);
            j += 1;
        } else {
            scratch.push(left[i]);
            i += 1;
        }
    }
    scratch.extend_from_slice(&left[i..]);
    scratch.extend_from_slice(&right[j..]);
    std::mem::swap(bucket, scratch);
}

/// Sorts `bucket` (whose times share every bit above `sub_shift + SUB_BUCKET_BITS`) by a
/// counting sort on the time bits from `sub_shift` up, then a sort within each sub-bucket.
fn distribute_and_sort<E: Copy>(
    bucket: &mut Vec<Entry<E>>,
    scratch: &mut Vec<Entry<E>>,
    sub_shift: u32,
) {
    const SUBS: usize = 1 << SUB_BUCKET_BITS;
    let sub = |e: &Entry<E>| ((e.key.time_ps() >> sub_shift) as usize) & (SUBS - 1);
    let mut starts = [0usize; SUBS + 1];
    for e in bucket.iter() {
        starts[sub(e) + 1] += 1;
    }
    for i in 0..SUBS {
        starts[i + 1] += starts[i];
    }
    scratch.clear();
    scratch.extend_from_slice(bucket);
    let mut next = starts;
    for e in bucket.iter() {
        let s = sub(e);
        scratch[next[s]] = *e;
        next[s] += 1;
    }
    for range in starts.windows(2) {
        scratch[range[0]..range[1]].sort_unstable();
    }
    std::mem::swap(bucket, scratch);
}

impl<E: Copy> CalendarQueue<E> {
    /// The event `ahead` places after the next one due (0: the next), if the calendar holds
    /// it at hand (in the bucket being served).
    #[inline]
    pub fn peek_at_hand(&self, ahead: usize) -> Option<&E> {
        self.current
            .get(self.current_head + ahead)
            .map(|entry| &entry.event)
    }
}

impl<E: Copy> EventQueue<E> for CalendarQueue<E> {
    #[inline]
    fn push(&mut self, time_ps: TimePs, phase: Phase, origin: Origin, event: E) {
        match &mut self.shuffle {
            None => self.insert(time_ps, phase, origin, event),
            Some(shuffle) => shuffle.pending.push((time_ps, phase, origin, event)),
        }
    }

    #[inline]
    fn pop_until(&mut self, limit_ps: TimePs) -> Option<(TimePs, E)> {
        if self.shuffle.is_some() {
            self.flush_shuffled();
        }
        if self.current_head == self.current.len() && !self.refill(limit_ps >> self.bucket_shift) {
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
        let held = self.shuffle.as_ref().map_or(0, |s| s.pending.len());
        self.current.len() - self.current_head + self.ring_len + self.far.len() + held
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
    fn same_time_events_run_by_origin_then_each_origins_order_and_clock_after_messages() {
        let mut q = CalendarQueue::new(4, 3);
        q.push(100, Phase::Clock, 0, 1);
        q.push(100, Phase::Message, 7, 2);
        q.push(100, Phase::Message, 3, 3);
        q.push(100, Phase::Message, 7, 4);
        q.push(50, Phase::Clock, 9, 5);
        assert_eq!(
            drain(&mut q),
            vec![(50, 5), (100, 3), (100, 2), (100, 4), (100, 1)]
        );
    }

    /// Two senders' same-instant events pop in the same order whichever was inserted first;
    /// had they shared one origin (a queue-wide counter), the insertion order would decide.
    #[test]
    fn insertion_order_of_different_origins_does_not_matter() {
        for shared in [false, true] {
            let orders: Vec<Vec<(TimePs, u32)>> = [[1u32, 2], [2, 1]]
                .iter()
                .map(|pair| {
                    let mut q = CalendarQueue::new(4, 3);
                    for &sender in pair {
                        let origin = if shared { 0 } else { sender };
                        q.push(100, Phase::Message, origin, sender);
                    }
                    drain(&mut q)
                })
                .collect();
            assert_eq!(orders[0] == orders[1], !shared);
        }
    }

    /// A pop that finds nothing due by its limit leaves the calendar where it was: another
    /// partition's cell due before the next pending event, pushed after, runs first.
    #[test]
    fn an_event_pushed_after_a_limited_pop_before_the_next_pending_one_runs_first() {
        let mut q = CalendarQueue::for_gap(10);
        q.push(1_000, Phase::Message, 0, 1);
        assert_eq!(q.pop_until(100), None);
        q.push(200, Phase::Message, 1, 2);
        q.push(150, Phase::Message, 2, 3);
        assert_eq!(drain(&mut q), vec![(150, 3), (200, 2), (1_000, 1)]);
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = CalendarQueue::new(2, 2);
        q.push(10, Phase::Message, 0, 1);
        q.push(1_000_000, Phase::Message, 0, 2);
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
                    let at_hand = cal.peek_at_hand(0).copied();
                    let a = cal.pop_until(TimePs::MAX);
                    let b = heap.pop_until(TimePs::MAX);
                    prop_assert_eq!(a, b);
                    if at_hand.is_some() {
                        prop_assert_eq!(at_hand, a.map(|(_, event)| event));
                    }
                    if let Some((t, _)) = a { now = t; }
                } else {
                    let phase = if clock { Phase::Clock } else { Phase::Message };
                    let delay = if op == 3 { delay * 1000 } else { delay % 64 };
                    cal.push(now + delay, phase, id % 5, id);
                    heap.push(now + delay, phase, id % 5, id);
                    id += 1;
                }
                prop_assert_eq!(cal.len(), heap.len());
            }
            prop_assert_eq!(drain(&mut cal), drain(&mut heap));
        }

        /// Wide buckets crowded with events in no order (the path that distributes a bucket
        /// into sub-buckets before sorting) pop exactly what the heap pops, same-time events
        /// included.
        #[test]
        fn crowded_wide_buckets_match_heap(delays in proptest::collection::vec((0u64..8_192, 0u32..7), 1..600)) {
            let mut cal = CalendarQueue::new(10, 3);
            let mut heap = HeapQueue::new();
            for (id, &(delay, origin)) in delays.iter().enumerate() {
                let time_ps = delay / 3 * 3;
                cal.push(time_ps, Phase::Message, origin, id as u32);
                heap.push(time_ps, Phase::Message, origin, id as u32);
            }
            prop_assert_eq!(drain(&mut cal), drain(&mut heap));
        }
    }
}

#[cfg(test)]
mod shuffle_tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};
    use proptest::prelude::*;

    proptest! {
        /// Under the shuffled-insertion test mode the calendar pops exactly what it pops in
        /// normal mode, for any pushes between pops.
        #[test]
        fn shuffled_insertion_pops_the_same(ops in proptest::collection::vec((0u8..4, 0u64..300, 0u32..6), 1..300), seed in 0u64..1000) {
            let mut plain = CalendarQueue::new(3, 4);
            let mut shuffled = CalendarQueue::new(3, 4);
            shuffled.shuffle_insertion_order(stream(seed, ComponentId { kind: 0, index: 0 }));
            let mut now = 0;
            for (i, (op, delay, origin)) in ops.into_iter().enumerate() {
                if op == 0 {
                    let a = plain.pop_until(TimePs::MAX);
                    prop_assert_eq!(a, shuffled.pop_until(TimePs::MAX));
                    if let Some((t, _)) = a { now = t; }
                } else {
                    plain.push(now + delay, Phase::Message, origin, i as u32);
                    shuffled.push(now + delay, Phase::Message, origin, i as u32);
                }
                prop_assert_eq!(plain.len(), shuffled.len());
            }
        }
    }
}
