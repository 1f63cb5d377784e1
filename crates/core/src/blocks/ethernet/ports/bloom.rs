//! A counting Bloom filter of flow keys (Bloom 1970; counting, Fan et al. 2000): BFC's record
//! of the flows its far end paused at an upstream port (Goyal et al., "Backpressure Flow
//! Control", NSDI 2022: a Bloom filter of paused flows keeps the switch's state bounded). A key
//! sets `hashes` of `bits` counters, chosen by double hashing; it tests present while all of
//! them are above 0, so a key never added may test present (a false positive) but an added key
//! always does.

use crate::engine::rng::mix;
use std::num::NonZeroU32;

/// Salts of the filter's two base hashes, apart from the flow table's and the queue choice's.
const FIRST_SALT: u64 = 0x9e37_79b9_7f4a_7c15;
const SECOND_SALT: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// A counting Bloom filter's size (`switch.per_flow.bloom_filter_bits`, `bloom_filter_hashes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomSpec {
    /// Counters (the filter's bits, each a counter so that keys can be removed).
    pub bits: NonZeroU32,
    /// Counters each key sets (at most [`MAX_HASHES`]).
    pub hashes: u8,
}

/// A counting Bloom filter of flow keys.
#[derive(Clone, Debug)]
pub struct CountingBloom {
    counters: Box<[u16]>,
    hashes: u32,
}

impl CountingBloom {
    /// An empty filter of `spec.bits` counters and `spec.hashes` hashes.
    pub fn new(spec: BloomSpec) -> Self {
        CountingBloom {
            counters: vec![0; spec.bits.get() as usize].into_boxed_slice(),
            hashes: spec.hashes as u32,
        }
    }

    /// The `i`th counter `key` sets: `h1 + i * h2` modulo the size (double hashing).
    fn slot(&self, key: u64, i: u32) -> usize {
        let (h1, h2) = (mix(key ^ FIRST_SALT), mix(key ^ SECOND_SALT) | 1);
        (h1.wrapping_add((i as u64).wrapping_mul(h2)) % self.counters.len() as u64) as usize
    }

    /// Adds `key` (once more, if it is in already).
    pub fn add(&mut self, key: u64) {
        for i in 0..self.hashes {
            let slot = self.slot(key, i);
            self.counters[slot] = self.counters[slot].saturating_add(1);
        }
    }

    /// Removes one addition of `key` (which was added).
    pub fn remove(&mut self, key: u64) {
        for i in 0..self.hashes {
            let slot = self.slot(key, i);
            self.counters[slot] = self.counters[slot].saturating_sub(1);
        }
    }

    /// True if `key` tests present: every counter it sets is above 0.
    pub fn contains(&self, key: u64) -> bool {
        (0..self.hashes).all(|i| self.counters[self.slot(key, i)] > 0)
    }
}

/// The most hashes a filter takes (`switch.per_flow.bloom_filter_hashes`).
pub const MAX_HASHES: u32 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(bits: u32, hashes: u8) -> BloomSpec {
        BloomSpec {
            bits: NonZeroU32::new(bits).unwrap(),
            hashes,
        }
    }

    /// Added keys test present until removed as often as added; a filter of one counter makes
    /// every key test present while any is in (false positives), a large one almost none.
    #[test]
    fn added_keys_test_present_and_a_small_filter_gives_false_positives() {
        let mut filter = CountingBloom::new(spec(1024, 3));
        filter.add(7);
        filter.add(7);
        filter.add(9);
        assert!(filter.contains(7) && filter.contains(9));
        filter.remove(7);
        assert!(filter.contains(7), "added twice, removed once");
        filter.remove(7);
        filter.remove(9);
        assert!((0..1000).all(|k| !filter.contains(k)), "empty again");
        for key in 0..10 {
            filter.add(key);
        }
        let false_positives = (1_000..11_000).filter(|&k| filter.contains(k)).count();
        // 10 keys x 3 hashes in 1024 counters: about (30/1024)^3 = 2.5e-5 of keys.
        assert!(false_positives < 10, "{false_positives}");
        let mut tiny = CountingBloom::new(spec(1, 2));
        tiny.add(1);
        assert!((2..100).all(|k| tiny.contains(k)), "one counter: every key");
    }
}
