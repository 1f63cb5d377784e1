//! A set of ports as a fixed bitmap: the request, grant and accept vectors of crossbar
//! schedulers, the channels of a NIC. Fixed size and `Copy`, so a scheduler's vectors live in
//! place with no allocation, and one iteration of a matcher costs O(N) word operations.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign};

use rand::Rng as _;

use crate::engine::rng::Rng;

/// The most ports a [`PortSet`] holds: a Stardust fabric element has 128–256 links.
pub const MAX_PORTS: usize = 256;

const WORDS: usize = MAX_PORTS / 64;

/// The port after `port` among `ports`, round robin (a pointer's next position; a comparison,
/// not a division, on the schedulers' hot path).
#[inline]
pub fn after(port: usize, ports: usize) -> usize {
    if port + 1 >= ports {
        0
    } else {
        port + 1
    }
}

/// A set of port indices below [`MAX_PORTS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortSet([u64; WORDS]);

impl PortSet {
    /// No port.
    pub const EMPTY: PortSet = PortSet([0; WORDS]);

    /// Ports `0..n`.
    #[inline]
    pub fn below(n: usize) -> PortSet {
        let mut set = PortSet::EMPTY;
        for (w, word) in set.0.iter_mut().enumerate() {
            let bits = n.saturating_sub(w * 64).min(64);
            *word = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
        }
        set
    }

    /// The word holding `port` (masked into range: ports are below [`MAX_PORTS`], and the
    /// mask spares a bounds check on the schedulers' hot path).
    #[inline]
    fn word(port: usize) -> usize {
        debug_assert!(port < MAX_PORTS, "port {port} beyond {MAX_PORTS}");
        (port / 64) & (WORDS - 1)
    }

    /// Adds `port`.
    #[inline]
    pub fn insert(&mut self, port: usize) {
        self.0[Self::word(port)] |= 1 << (port % 64);
    }

    /// Removes `port`.
    #[inline]
    pub fn remove(&mut self, port: usize) {
        self.0[Self::word(port)] &= !(1 << (port % 64));
    }

    /// True if `port` is in the set.
    #[inline]
    pub fn contains(&self, port: usize) -> bool {
        self.0[Self::word(port)] & (1 << (port % 64)) != 0
    }

    /// True if the set has no port.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Number of ports in the set.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The ports of `self` not in `other`.
    #[inline]
    pub fn without(self, other: PortSet) -> PortSet {
        let mut set = self;
        for (word, other) in set.0.iter_mut().zip(other.0) {
            *word &= !other;
        }
        set
    }

    /// The lowest member at or after `start`, wrapping around (the round-robin pointer rule).
    #[inline]
    pub fn first_at_or_after(&self, start: usize) -> Option<usize> {
        if start >= MAX_PORTS {
            return self.first();
        }
        let start_word = Self::word(start);
        let upper = self.0[start_word] & (u64::MAX << (start % 64));
        if upper != 0 {
            return Some(start_word * 64 + upper.trailing_zeros() as usize);
        }
        (start_word + 1..WORDS)
            .find(|&w| self.0[w] != 0)
            .map(|w| w * 64 + self.0[w].trailing_zeros() as usize)
            .or_else(|| self.first())
    }

    /// The members at or after `start`, then those before it (round-robin order).
    #[inline]
    pub fn iter_from(self, start: usize) -> impl Iterator<Item = usize> {
        let (after, before) = (
            self.without(PortSet::below(start)),
            self & PortSet::below(start),
        );
        after.iter().chain(before.iter())
    }

    /// The lowest member.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        let w = self.0.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.0[w].trailing_zeros() as usize)
    }

    /// A member chosen uniformly at random.
    #[inline]
    pub fn random_member(&self, rng: &mut Rng) -> Option<usize> {
        let len = self.len();
        if len == 0 {
            return None;
        }
        let mut skip = rng.gen_range(0..len as u32);
        for (w, &word) in self.0.iter().enumerate() {
            let ones = word.count_ones();
            if skip < ones {
                let mut rest = word;
                for _ in 0..skip {
                    rest &= rest - 1;
                }
                return Some(w * 64 + rest.trailing_zeros() as usize);
            }
            skip -= ones;
        }
        unreachable!("the set has {len} members")
    }

    /// The members below 64 as a bitmap (the whole set on a switch of at most 64 ports).
    #[inline]
    pub fn low_word(&self) -> u64 {
        self.0[0]
    }

    /// The members in increasing order.
    #[inline]
    pub fn iter(self) -> Members {
        Members {
            rest: self,
            word: 0,
        }
    }
}

/// The members of a [`PortSet`] in increasing order.
pub struct Members {
    rest: PortSet,
    word: usize,
}

impl Iterator for Members {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word < WORDS {
            let bits = &mut self.rest.0[self.word];
            if *bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
        }
        None
    }
}

impl FromIterator<usize> for PortSet {
    #[inline]
    fn from_iter<I: IntoIterator<Item = usize>>(ports: I) -> Self {
        let mut set = PortSet::EMPTY;
        for port in ports {
            set.insert(port);
        }
        set
    }
}

impl BitAnd for PortSet {
    type Output = PortSet;
    #[inline]
    fn bitand(mut self, other: PortSet) -> PortSet {
        self &= other;
        self
    }
}

impl BitAndAssign for PortSet {
    #[inline]
    fn bitand_assign(&mut self, other: PortSet) {
        for (word, other) in self.0.iter_mut().zip(other.0) {
            *word &= other;
        }
    }
}

impl BitOr for PortSet {
    type Output = PortSet;
    #[inline]
    fn bitor(mut self, other: PortSet) -> PortSet {
        self |= other;
        self
    }
}

impl BitOrAssign for PortSet {
    #[inline]
    fn bitor_assign(&mut self, other: PortSet) {
        for (word, other) in self.0.iter_mut().zip(other.0) {
            *word |= other;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};
    use proptest::prelude::*;

    #[test]
    fn pointer_rule_wraps_across_words() {
        let set: PortSet = [3, 70, 200].into_iter().collect();
        assert_eq!(set.first_at_or_after(0), Some(3));
        assert_eq!(set.first_at_or_after(4), Some(70));
        assert_eq!(set.first_at_or_after(71), Some(200));
        assert_eq!(set.first_at_or_after(201), Some(3));
        assert_eq!(set.first_at_or_after(255), Some(3));
        assert_eq!(
            set.first_at_or_after(266),
            Some(3),
            "a start past the last port wraps"
        );
        assert_eq!(set.iter_from(71).collect::<Vec<_>>(), vec![200, 3, 70]);
        assert_eq!(PortSet::EMPTY.first_at_or_after(9), None);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![3, 70, 200]);
        assert_eq!(PortSet::below(130).len(), 130);
        assert_eq!(PortSet::below(256).len(), 256);
        assert_eq!(set.without([70].into_iter().collect()).len(), 2);
    }

    proptest! {
        /// The bitmap agrees with a sorted list of ports on every query.
        #[test]
        fn agrees_with_a_list(ports in proptest::collection::btree_set(0usize..MAX_PORTS, 0..40), start in 0usize..MAX_PORTS, seed in 0u64..100) {
            let set: PortSet = ports.iter().copied().collect();
            prop_assert_eq!(set.len(), ports.len());
            prop_assert_eq!(set.iter().collect::<Vec<_>>(), ports.iter().copied().collect::<Vec<_>>());
            let expected = ports.range(start..).next().or(ports.iter().next()).copied();
            prop_assert_eq!(set.first_at_or_after(start), expected);
            let mut rng = stream(seed, ComponentId { kind: 0, index: 0 });
            match set.random_member(&mut rng) {
                Some(port) => prop_assert!(ports.contains(&port)),
                None => prop_assert!(ports.is_empty()),
            }
        }
    }
}
