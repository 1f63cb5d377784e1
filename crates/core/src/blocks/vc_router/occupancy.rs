//! Which input VCs of a router have work, as bitmaps, so that VC and switch allocation visit
//! only the occupied VCs instead of every port and VC in every cycle. An input VC with a flit
//! at the front of its FIFO is in exactly one of two sets: its front is a head holding no
//! output VC (it waits for VC allocation), or its packet holds an output VC (its front flit
//! asks the switch allocator for the crossbar). An empty FIFO is in neither.

use crate::blocks::port_set::PortSet;

/// The occupied input VCs of one router: per input port a bitmap of its VCs (at most 64,
/// `vc.count`'s limit) in each set, and the ports with any VC in each.
#[derive(Clone, Debug)]
pub struct Occupancy {
    /// Per input port: VCs whose front flit is a head holding no output VC.
    heads: Vec<u64>,
    /// Per input port: VCs whose front flit's packet holds an output VC.
    holders: Vec<u64>,
    /// Input ports with a VC in `heads`.
    ports_with_heads: PortSet,
    /// Input ports with a VC in `holders`.
    ports_with_holders: PortSet,
}

impl Occupancy {
    /// Every input VC of `ports` ports empty.
    pub fn new(ports: usize) -> Self {
        Occupancy {
            heads: vec![0; ports],
            holders: vec![0; ports],
            ports_with_heads: PortSet::EMPTY,
            ports_with_holders: PortSet::EMPTY,
        }
    }

    /// Input VC (`port`, `vc`) has a head at its front that holds no output VC.
    #[inline]
    pub fn set_head(&mut self, port: usize, vc: usize) {
        self.heads[port] |= 1 << vc;
        self.ports_with_heads.insert(port);
    }

    /// Input VC (`port`, `vc`)'s packet holds an output VC and a flit of it is at the front.
    #[inline]
    pub fn set_holder(&mut self, port: usize, vc: usize) {
        self.holders[port] |= 1 << vc;
        self.ports_with_holders.insert(port);
    }

    /// The head of input VC (`port`, `vc`) got its output VC.
    #[inline]
    pub fn head_to_holder(&mut self, port: usize, vc: usize) {
        self.clear_head(port, vc);
        self.set_holder(port, vc);
    }

    /// Input VC (`port`, `vc`) has no head waiting for VC allocation at its front (its front
    /// cells were taken out: a link failed).
    #[inline]
    pub fn clear_head(&mut self, port: usize, vc: usize) {
        self.heads[port] &= !(1 << vc);
        if self.heads[port] == 0 {
            self.ports_with_heads.remove(port);
        }
    }

    /// Input VC (`port`, `vc`) no longer sends through an output VC (its tail left, or its
    /// FIFO emptied).
    #[inline]
    pub fn clear_holder(&mut self, port: usize, vc: usize) {
        self.holders[port] &= !(1 << vc);
        if self.holders[port] == 0 {
            self.ports_with_holders.remove(port);
        }
    }

    /// The VCs of input `port` whose front head waits for VC allocation.
    #[inline]
    pub fn heads(&self, port: usize) -> u64 {
        self.heads[port]
    }

    /// The VCs of input `port` whose packet holds an output VC.
    #[inline]
    pub fn holders(&self, port: usize) -> u64 {
        self.holders[port]
    }

    /// Input ports with a head waiting for VC allocation.
    #[inline]
    pub fn ports_with_heads(&self) -> PortSet {
        self.ports_with_heads
    }

    /// Input ports with a VC whose packet holds an output VC.
    #[inline]
    pub fn ports_with_holders(&self) -> PortSet {
        self.ports_with_holders
    }
}

/// The members of a bitmap of VCs in increasing order.
#[derive(Clone, Copy, Debug)]
pub struct Bits(pub u64);

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(bit)
    }
}

/// The members of `mask` in round-robin order from `start` (below 64): those at or after it,
/// then those before it, as a pointer `start` visits `start, start + 1, …, 0, 1, …`.
#[inline]
pub fn round_robin(mask: u64, start: usize) -> impl Iterator<Item = usize> {
    let at_or_after = u64::MAX << start;
    Bits(mask & at_or_after).chain(Bits(mask & !at_or_after))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap order is the order of a pointer stepping modulo the VC count and skipping
    /// VCs not in the set, for every set of up to 6 VCs and every start.
    #[test]
    fn round_robin_visits_members_as_a_modular_pointer_does() {
        for vcs in 1..=6usize {
            for mask in 0..(1u64 << vcs) {
                for start in 0..vcs {
                    let modular: Vec<usize> = (0..vcs)
                        .map(|k| (start + k) % vcs)
                        .filter(|&vc| mask & (1 << vc) != 0)
                        .collect();
                    let bits: Vec<usize> = round_robin(mask, start).collect();
                    assert_eq!(bits, modular, "vcs {vcs}, mask {mask:b}, start {start}");
                }
            }
        }
        assert_eq!(round_robin(1 << 63 | 1, 63).collect::<Vec<_>>(), [63, 0]);
    }

    /// A port leaves a set when its last VC does, and not before.
    #[test]
    fn a_port_leaves_the_set_with_its_last_vc() {
        let mut occupancy = Occupancy::new(3);
        occupancy.set_head(2, 0);
        occupancy.set_head(2, 5);
        occupancy.head_to_holder(2, 5);
        assert_eq!(occupancy.ports_with_heads().iter().collect::<Vec<_>>(), [2]);
        assert_eq!(occupancy.heads(2), 1);
        occupancy.head_to_holder(2, 0);
        assert!(occupancy.ports_with_heads().is_empty());
        assert_eq!(occupancy.holders(2), 1 | 1 << 5);
        occupancy.clear_holder(2, 5);
        assert_eq!(
            occupancy.ports_with_holders().iter().collect::<Vec<_>>(),
            [2]
        );
        occupancy.clear_holder(2, 0);
        assert!(occupancy.ports_with_holders().is_empty());
    }
}
