//! Paths fixed per flow, stamped on a cell as its source sends it. Where a mode's choice depends
//! only on the tables, the switch's salt and the cell's source, destination and path label
//! ([`Mode::per_flow`](super::Mode::per_flow): ECMP, deterministic) and the design's switches
//! never refuse an output, every cell of a flow takes the path its first one took; the router
//! walks it once per flow, keeps it, and writes it into each cell's `route_tag` as a list of
//! output ports, so that a switch pops its output instead of looking up the tables and hashing
//! (the same choices: the walk asks the mode itself, switch by switch).

use crate::blocks::cell::Cell;
use crate::engine::rng::mix;

/// Top byte of a stamped `route_tag` (the router's other tags, a group number or its two
/// markers near `u64::MAX`, never have it).
const MARK: u64 = 0xA5 << 56;
/// Bits of a stamped tag holding ports, one byte per switch, the next switch's lowest.
const PORT_BITS: u64 = (1 << 56) - 1;
/// The most switches a stamped path crosses.
pub const MAX_SWITCHES: usize = 7;
/// The highest port a stamped path names (a byte holds the port plus one; 0 ends the path).
pub const MAX_PORT: usize = 254;
/// A free slot of the cache (no flow has this key: its top bits are zero).
const EMPTY: u64 = u64::MAX;

/// The outputs of a path's switches, in order, as a stamped `route_tag`; `None` if the path
/// is too long or a port too high to stamp (the cell is then routed hop by hop).
pub fn header(outputs: &[usize]) -> Option<u64> {
    if outputs.len() > MAX_SWITCHES || outputs.iter().any(|&p| p > MAX_PORT) {
        return None;
    }
    let ports = outputs
        .iter()
        .rev()
        .fold(0, |tag, &port| tag << 8 | (port as u64 + 1));
    Some(MARK | ports)
}

/// The output at the cell's current switch if its path is stamped, taking it off the path.
#[inline]
pub fn pop(cell: &mut Cell) -> Option<usize> {
    let port = peek(cell)?;
    cell.route_tag = MARK | (cell.route_tag & PORT_BITS) >> 8;
    Some(port)
}

/// The output at the cell's current switch if its path is stamped.
#[inline]
pub fn peek(cell: &Cell) -> Option<usize> {
    if cell.route_tag & !PORT_BITS != MARK {
        return None;
    }
    let next = cell.route_tag & 0xff;
    debug_assert!(next != 0, "a stamped path ran out before its last switch");
    Some(next as usize - 1)
}

/// The paths walked so far, by flow: an open-addressed table of (flow key, stamped tag) that
/// keeps every flow it was given (at most one per source, destination and path label, so it
/// stops growing once every flow of a run has sent), doubling at half full.
pub struct PathCache {
    slots: Vec<(u64, u64)>,
    len: usize,
}

impl PathCache {
    /// A cache with room for about `flows` flows before it first grows.
    pub fn new(flows: usize) -> Self {
        PathCache {
            slots: vec![(EMPTY, 0); (2 * flows).next_power_of_two().max(16)],
            len: 0,
        }
    }

    /// The key of a flow: its source, destination and path label.
    pub fn key(src: u16, dst: u16, label: u16) -> u64 {
        (label as u64) << 32 | (src as u64) << 16 | dst as u64
    }

    /// The stamped tag of flow `key`, if walked.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        let (held, tag) = self.slots[self.slot_of(key)];
        (held == key).then_some(tag)
    }

    /// Keeps flow `key`'s stamped tag.
    pub fn put(&mut self, key: u64, tag: u64) {
        if 2 * (self.len + 1) > self.slots.len() {
            let grown = vec![(EMPTY, 0); 2 * self.slots.len()];
            let old = std::mem::replace(&mut self.slots, grown);
            for (held, tag) in old.into_iter().filter(|&(held, _)| held != EMPTY) {
                let slot = self.slot_of(held);
                self.slots[slot] = (held, tag);
            }
        }
        let slot = self.slot_of(key);
        if self.slots[slot].0 == EMPTY {
            self.len += 1;
        }
        self.slots[slot] = (key, tag);
    }

    /// The slot holding `key`, or the empty one where it would go (linear probing).
    fn slot_of(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut slot = mix(key) as usize & mask;
        while self.slots[slot].0 != key && self.slots[slot].0 != EMPTY {
            slot = (slot + 1) & mask;
        }
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_path_pops_its_ports_in_order() {
        let mut cell = Cell::new(0, 1, 64, true, 0, 0);
        cell.route_tag = header(&[3, 0, 254, 7]).unwrap();
        assert_eq!(peek(&cell), Some(3));
        let popped: Vec<usize> = (0..4).map(|_| pop(&mut cell).unwrap()).collect();
        assert_eq!(popped, vec![3, 0, 254, 7]);
    }

    #[test]
    fn paths_too_long_or_ports_too_high_are_not_stamped() {
        assert_eq!(header(&[1; MAX_SWITCHES + 1]), None);
        assert_eq!(header(&[MAX_PORT + 1]), None);
        assert!(header(&[1; MAX_SWITCHES]).is_some());
    }

    #[test]
    fn the_routers_other_tags_are_not_stamps() {
        let mut cell = Cell::new(0, 1, 64, true, 0, 0);
        for tag in [0, 5, u64::MAX, u64::MAX - 1] {
            cell.route_tag = tag;
            assert_eq!(peek(&cell), None);
        }
    }

    #[test]
    fn a_cache_keeps_every_flow_put_through_its_growth() {
        let mut cache = PathCache::new(1);
        let keys: Vec<u64> = (0..1000).map(|k| PathCache::key(k, k + 1, k % 3)).collect();
        for (tag, &key) in keys.iter().enumerate() {
            assert_eq!(cache.get(key), None);
            cache.put(key, tag as u64);
        }
        for (tag, &key) in keys.iter().enumerate() {
            assert_eq!(cache.get(key), Some(tag as u64));
        }
        assert_eq!(cache.get(PathCache::key(2, 1, 0)), None);
    }
}
