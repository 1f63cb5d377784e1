//! The ingress TiN's buffer (Gibson et al., NSDI '22, §3.3): a packet from the NIC is stored
//! and its RTS generated at once; it stays until the egress answers. A CTS pulls it out to be
//! sent as data cells, a CTD pulls it out to be discarded, so an incast's drops cost no fabric
//! bandwidth. A packet the buffer has no room for is dropped before any RTS (our reading: the
//! paper does not say what a full ingress buffer does; the NIC would hold it back instead
//! under host flow control, which is not modelled).

use super::{Ctd, Cts, DropCause, Rts};
use crate::engine::time::TimePs;

/// What the ingress buffer counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressCounters {
    /// Packets stored (an RTS sent for each).
    pub admitted: u64,
    /// Packets pulled out by a CTS.
    pub sent: u64,
    /// Packets discarded on a CTD.
    pub dropped_ctd: u64,
    /// Packets dropped because the buffer was full.
    pub dropped_full: u64,
}

/// A stored packet: its RTS and what the caller keeps of it (its cells).
#[derive(Clone, Debug)]
struct Stored<T> {
    rts: Rts,
    packet: T,
}

/// One ingress TiN's buffer of packets waiting for CTS or CTD; `T` is what the caller stores
/// per packet (its cells).
#[derive(Clone, Debug)]
pub struct IngressBuffer<T> {
    source: u32,
    capacity_bytes: u64,
    used_bytes: u64,
    slots: Vec<Option<Stored<T>>>,
    free_slots: Vec<u32>,
    /// What it counted.
    pub counters: IngressCounters,
}

impl<T> IngressBuffer<T> {
    /// An empty buffer of `capacity_bytes` at ingress endpoint `source`.
    pub fn new(source: u32, capacity_bytes: u64) -> Self {
        IngressBuffer {
            source,
            capacity_bytes,
            used_bytes: 0,
            slots: Vec::new(),
            free_slots: Vec::new(),
            counters: IngressCounters::default(),
        }
    }

    /// Packets stored.
    pub fn held(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    /// Bytes stored.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Stores `packet` of `size_bytes` (class `class`, for egress port `port`) at `now_ps`
    /// and returns its RTS, or gives the packet back with the cause if there is no room.
    pub fn admit(
        &mut self,
        packet: T,
        (size_bytes, class, port): (u32, u8, u8),
        now_ps: TimePs,
    ) -> Result<Rts, (T, DropCause)> {
        if self.used_bytes + size_bytes as u64 > self.capacity_bytes {
            self.counters.dropped_full += 1;
            return Err((packet, DropCause::IngressBufferFull));
        }
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let rts = Rts {
            source: self.source,
            ingress_slot: slot,
            size_bytes,
            class,
            port,
            sent_ps: now_ps,
        };
        self.slots[slot as usize] = Some(Stored { rts, packet });
        self.used_bytes += size_bytes as u64;
        self.counters.admitted += 1;
        Ok(rts)
    }

    /// The RTS of the packet stored in `slot`, if one is.
    pub fn rts_at(&self, slot: u32) -> Option<Rts> {
        self.slots
            .get(slot as usize)?
            .as_ref()
            .map(|stored| stored.rts)
    }

    /// Takes the packet an answer names out of the buffer.
    fn take(&mut self, rts: &Rts) -> T {
        let stored = self.slots[rts.ingress_slot as usize]
            .take()
            .expect("an answer names a stored packet");
        debug_assert_eq!(stored.rts, *rts, "the answer carries the packet's own RTS");
        self.free_slots.push(rts.ingress_slot);
        self.used_bytes -= rts.size_bytes as u64;
        stored.packet
    }

    /// A CTS arrived: the packet, to be sent as data cells.
    pub fn on_cts(&mut self, cts: &Cts) -> T {
        self.counters.sent += 1;
        self.take(&cts.rts)
    }

    /// A CTD arrived: the packet, to be discarded.
    pub fn on_ctd(&mut self, ctd: &Ctd) -> T {
        self.counters.dropped_ctd += 1;
        self.take(&ctd.rts)
    }
}
