//! The egress TiN's reassembly buffer and reordering (Gibson et al., NSDI '22, §3.3): when a
//! CTS is issued its packet is registered with the reordering logic; data cells arrive in any
//! order (sprayed adaptively); a packet is complete once all its cells are in, and is released
//! to the NIC only after every packet of its flow registered before it (CTS-issue order, which
//! follows RTS arrival order within an RTS queue).

use std::collections::VecDeque;

use super::{cells_of, Cts};
use crate::engine::time::TimePs;

/// A registered packet.
#[derive(Clone, Copy, Debug)]
struct Slot {
    cts: Cts,
    flow: u32,
    cells_left: u32,
}

/// A packet released to the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    /// The CTS it was fetched by (its RTS: source, size, class, when the RTS left).
    pub cts: Cts,
    /// When its last cell arrived.
    pub complete_ps: TimePs,
}

/// One egress TiN's reassembly slots and per-flow release order.
#[derive(Clone, Debug)]
pub struct Reassembly {
    classes: u8,
    ports: u8,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    /// Per flow: its registered packets' slots in CTS-issue order.
    order: Vec<VecDeque<u32>>,
    /// Per slot: when its packet completed (its last cell arrived).
    complete_ps: Vec<Option<TimePs>>,
}

impl Reassembly {
    /// Empty, for flows of `sources` sources × `classes` classes × `ports` egress ports.
    pub fn new(sources: u32, classes: u8, ports: u8) -> Self {
        let flows = sources as usize * classes as usize * ports as usize;
        Reassembly {
            classes,
            ports,
            slots: Vec::new(),
            free_slots: Vec::new(),
            order: vec![VecDeque::new(); flows],
            complete_ps: Vec::new(),
        }
    }

    /// Packets registered and not yet released.
    pub fn held(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    /// A free reassembly slot, taken as a CTS is issued.
    pub fn allocate(&mut self) -> u32 {
        self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.complete_ps.push(None);
            (self.slots.len() - 1) as u32
        })
    }

    /// Registers the packet `cts` grants in its slot, behind the earlier packets of its flow.
    pub fn register(&mut self, cts: Cts) {
        let flow = cts.rts.flow(self.classes, self.ports);
        let slot = cts.reassembly_slot as usize;
        debug_assert!(self.slots[slot].is_none(), "a reassembly slot given twice");
        self.slots[slot] = Some(Slot {
            cts,
            flow,
            cells_left: cells_of(cts.rts.size_bytes),
        });
        self.complete_ps[slot] = None;
        self.order[flow as usize].push_back(cts.reassembly_slot);
    }

    /// A data cell for `slot` arrived at `now_ps`: true if it was the packet's last.
    pub fn on_cell(&mut self, slot: u32, now_ps: TimePs) -> bool {
        let s = self.slots[slot as usize]
            .as_mut()
            .expect("a data cell for a registered packet");
        debug_assert!(s.cells_left > 0, "more data cells than the packet has");
        s.cells_left -= 1;
        let done = s.cells_left == 0;
        if done {
            self.complete_ps[slot as usize] = Some(now_ps);
        }
        done
    }

    /// Releases, in order, the complete packets at the front of `slot`'s flow, passing each
    /// to `release`.
    pub fn release_from(&mut self, slot: u32, mut release: impl FnMut(Released)) {
        let flow = self.slots[slot as usize].expect("a registered packet").flow;
        let order = &mut self.order[flow as usize];
        while let Some(&front) = order.front() {
            let Some(complete_ps) = self.complete_ps[front as usize] else {
                break;
            };
            order.pop_front();
            let s = self.slots[front as usize].take().expect("registered");
            self.free_slots.push(front);
            release(Released {
                cts: s.cts,
                complete_ps,
            });
        }
    }
}
