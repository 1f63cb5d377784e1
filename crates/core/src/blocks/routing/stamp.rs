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
/// A free slot of the cache.
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

/// The paths walked so far, by flow: a direct-mapped cache of (flow key, stamped tag). A flow
/// whose slot another took is walked again, to the same path, so what it holds never changes
/// a result.
pub struct PathCache {
    slots: Vec<(u64, u64)>,
}

impl PathCache {
    /// A cache of `2^bits` flows.
    pub fn new(bits: u32) -> Self {
        PathCache {
            slots: vec![(EMPTY, 0); 1 << bits],
        }
    }

    /// The key of a flow: its source, destination and path label.
    pub fn key(src: u16, dst: u16, label: u16) -> u64 {
        (label as u64) << 32 | (src as u64) << 16 | dst as u64
    }

    /// The stamped tag of flow `key`, if walked and still held.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        let (held, tag) = self.slots[self.slot(key)];
        (held == key).then_some(tag)
    }

    /// Keeps flow `key`'s stamped tag.
    pub fn put(&mut self, key: u64, tag: u64) {
        let slot = self.slot(key);
        self.slots[slot] = (key, tag);
    }

    fn slot(&self, key: u64) -> usize {
        mix(key) as usize & (self.slots.len() - 1)
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
    fn a_cache_holds_what_was_put_and_no_other_flows() {
        let mut cache = PathCache::new(4);
        let (a, b) = (PathCache::key(1, 2, 0), PathCache::key(2, 1, 0));
        cache.put(a, 42);
        assert_eq!(cache.get(a), Some(42));
        assert_eq!(cache.get(b), None);
    }
}
