//! A slab of values addressed by small integer handles, with FIFO queues threaded through it.
//!
//! Cells live here for their whole life; queues link them by handle, so enqueueing, dequeueing
//! and moving a cell between queues never touches the heap once the slab has grown to the
//! simulation's high-water mark.

use std::marker::PhantomData;

const NIL: u32 = u32::MAX;

/// A handle to a value in an [`Arena`].
pub struct Id<T>(u32, PhantomData<fn() -> T>);

impl<T> Id<T> {
    /// The slot index behind the handle.
    pub fn index(self) -> u32 {
        self.0
    }

    /// The handle of slot `index` (one that [`index`](Self::index) gave, stored compactly).
    pub fn from_index(index: u32) -> Self {
        Id(index, PhantomData)
    }
}

impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Id<T> {}
impl<T> PartialEq for Id<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<T> Eq for Id<T> {}
impl<T> std::fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// One cache line per slot where the value fits (a cell and its link fill one exactly): an
/// unaligned slot straddles two lines, and every cold cell costs two misses instead of one.
#[repr(align(64))]
struct Slot<T> {
    value: T,
    /// Next element in the queue this slot is on, or in the free list.
    next: u32,
    /// On the free list (it fits in the slot's padding beside `next`).
    freed: bool,
}

/// A growable slab with a free list. Releasing a handle twice (a cell delivered or dropped
/// twice) is not an error here but is counted, so that a run's account can fail on it.
pub struct Arena<T> {
    slots: Vec<Slot<T>>,
    free_head: u32,
    live: usize,
    released_twice: u64,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Arena {
            slots: Vec::new(),
            free_head: NIL,
            live: 0,
            released_twice: 0,
        }
    }

    /// Stores `value` and returns its handle, reusing a freed slot when there is one. Inlined:
    /// every generated cell comes here, and out of line the call cost the iSLIP reference run 4%.
    #[inline]
    pub fn alloc(&mut self, value: T) -> Id<T> {
        self.live += 1;
        if self.free_head != NIL {
            let index = self.free_head;
            let slot = &mut self.slots[index as usize];
            self.free_head = slot.next;
            slot.value = value;
            slot.next = NIL;
            slot.freed = false;
            return Id(index, PhantomData);
        }
        self.grow(value)
    }

    /// A new slot at the end, for [`alloc`](Self::alloc) when no freed one is left (rare once a
    /// run has warmed up).
    #[cold]
    fn grow(&mut self, value: T) -> Id<T> {
        let index = u32::try_from(self.slots.len()).expect("arena holds at most 2^32 - 1 values");
        assert!(index != NIL, "arena holds at most 2^32 - 1 values");
        self.slots.push(Slot {
            value,
            next: NIL,
            freed: false,
        });
        Id(index, PhantomData)
    }

    /// Releases the slot of `id`; the handle must not be used again. A handle already
    /// released is counted ([`released_twice`](Self::released_twice)) and left alone.
    pub fn free(&mut self, id: Id<T>) {
        let slot = &mut self.slots[id.0 as usize];
        if slot.freed {
            self.released_twice += 1;
            return;
        }
        slot.freed = true;
        slot.next = self.free_head;
        self.free_head = id.0;
        self.live -= 1;
    }

    /// Handles released again after their release: each is a cell (or packet) delivered or
    /// dropped twice, which a run's account reports as broken.
    pub fn released_twice(&self) -> u64 {
        self.released_twice
    }

    /// The values currently stored, in slot order (for end-of-run reports).
    pub fn live_values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter(|s| !s.freed).map(|s| &s.value)
    }

    /// The values on `queue`, front to back (for end-of-run reports).
    pub fn queued<'a>(&'a self, queue: &Queue<T>) -> impl Iterator<Item = &'a T> + 'a {
        let mut at = queue.head;
        std::iter::from_fn(move || {
            (at != NIL).then(|| {
                let slot = &self.slots[at as usize];
                at = slot.next;
                &slot.value
            })
        })
    }

    /// Number of values currently stored.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Asks the processor to bring `id`'s slot into cache ahead of its use, so that a batch of
    /// cold cells (the heads a switch's slot dequeues) miss together instead of one by one.
    #[inline]
    pub fn prefetch(&self, id: Id<T>) {
        if let Some(slot) = self.slots.get(id.0 as usize) {
            super::cache::prefetch(slot);
        }
    }

    /// Appends `id` to the back of `queue`.
    pub fn push_back(&mut self, queue: &mut Queue<T>, id: Id<T>) {
        self.slots[id.0 as usize].next = NIL;
        if queue.tail == NIL {
            queue.head = id.0;
        } else {
            self.slots[queue.tail as usize].next = id.0;
        }
        queue.tail = id.0;
        queue.len += 1;
    }

    /// Removes and returns the front of `queue`.
    pub fn pop_front(&mut self, queue: &mut Queue<T>) -> Option<Id<T>> {
        if queue.head == NIL {
            return None;
        }
        let index = queue.head;
        queue.head = self.slots[index as usize].next;
        if queue.head == NIL {
            queue.tail = NIL;
        }
        queue.len -= 1;
        Some(Id(index, PhantomData))
    }
}

impl<T> std::ops::Index<Id<T>> for Arena<T> {
    type Output = T;
    fn index(&self, id: Id<T>) -> &T {
        &self.slots[id.0 as usize].value
    }
}

impl<T> std::ops::IndexMut<Id<T>> for Arena<T> {
    fn index_mut(&mut self, id: Id<T>) -> &mut T {
        &mut self.slots[id.0 as usize].value
    }
}

/// A FIFO of arena values, linked through the arena's slots: three words, never allocates.
pub struct Queue<T> {
    head: u32,
    tail: u32,
    len: u32,
    _values: PhantomData<fn() -> T>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            head: NIL,
            tail: NIL,
            len: 0,
            _values: PhantomData,
        }
    }
}

impl<T> Queue<T> {
    /// Number of values queued.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The front of the queue, without removing it.
    pub fn front(&self) -> Option<Id<T>> {
        (self.head != NIL).then_some(Id(self.head, PhantomData))
    }

    /// The back of the queue (the value queued last), without removing it.
    pub fn back(&self) -> Option<Id<T>> {
        (self.tail != NIL).then_some(Id(self.tail, PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_fifo_and_slots_are_reused() {
        let mut arena = Arena::new();
        let mut a = Queue::default();
        let mut b = Queue::default();
        let ids: Vec<_> = (0..5).map(|v| arena.alloc(v)).collect();
        for &id in &ids[..3] {
            arena.push_back(&mut a, id);
        }
        for &id in &ids[3..] {
            arena.push_back(&mut b, id);
        }
        assert_eq!(a.len(), 3);
        let first = arena.pop_front(&mut a).unwrap();
        assert_eq!(arena[first], 0);
        arena.push_back(&mut b, first);
        let drained: Vec<_> = std::iter::from_fn(|| arena.pop_front(&mut b)).collect();
        let order: Vec<i32> = drained.into_iter().map(|id| arena[id]).collect();
        assert_eq!(order, vec![3, 4, 0]);
        assert_eq!(arena.queued(&a).copied().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(arena.queued(&b).count(), 0);
        assert_eq!(a.front().map(|id| arena[id]), Some(1));
        arena.free(ids[3]);
        assert_eq!(arena.live(), 4);
        let reused = arena.alloc(9);
        assert_eq!(reused, ids[3]);
        assert_eq!(arena[reused], 9);
    }
}
