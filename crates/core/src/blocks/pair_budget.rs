//! A finite workload: a byte budget per source–destination pair. RIFL Layer 2 (Shen and Chow
//! 2023, §V) measures its switch with "each device connected to the input port ... send 2.5
//! Megabytes (MBs) of data to every device connected to the output port": a source sends its
//! budget to every destination, choosing among those with bytes left, and stops when all are
//! spent.

use rand::Rng as _;

use crate::engine::rng::Rng;

/// Bytes a source has left for each destination.
pub struct PairBudget {
    /// Per destination terminal: payload bytes left.
    bytes_left: Vec<u64>,
    /// Destinations with bytes left, in no particular order.
    open: Vec<u16>,
}

impl PairBudget {
    /// `bytes_per_pair` to each of `ports` terminals, `source` included only if `include_self`.
    pub fn new(bytes_per_pair: u64, ports: u16, source: u16, include_self: bool) -> Self {
        let open: Vec<u16> = (0..ports)
            .filter(|&d| include_self || d != source)
            .collect();
        let mut bytes_left = vec![0; ports as usize];
        for &d in &open {
            bytes_left[d as usize] = bytes_per_pair;
        }
        PairBudget { bytes_left, open }
    }

    /// A destination drawn uniformly among those with bytes left; `None` once all are spent.
    pub fn draw(&self, rng: &mut Rng) -> Option<u16> {
        (!self.open.is_empty()).then(|| self.open[rng.gen_range(0..self.open.len())])
    }

    /// Takes up to `bytes` from `dst`'s budget and returns how many were taken (the last
    /// packet of a pair is cut to the bytes left).
    pub fn take(&mut self, dst: u16, bytes: u32) -> u32 {
        let left = &mut self.bytes_left[dst as usize];
        let taken = (*left).min(bytes as u64);
        *left -= taken;
        if *left == 0 {
            if let Some(i) = self.open.iter().position(|&d| d == dst) {
                self.open.swap_remove(i);
            }
        }
        taken as u32
    }

    /// True while `dst` has bytes left.
    pub fn has_left(&self, dst: u16) -> bool {
        self.bytes_left[dst as usize] > 0
    }

    /// True once every destination's budget is spent.
    pub fn is_spent(&self) -> bool {
        self.open.is_empty()
    }

    /// Bytes left over all destinations.
    pub fn total_left(&self) -> u64 {
        self.bytes_left.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    #[test]
    fn every_pair_gets_exactly_its_budget_and_then_nothing() {
        let mut rng = stream(5, ComponentId { kind: 9, index: 0 });
        let mut budget = PairBudget::new(1000, 4, 2, false);
        assert!(!budget.has_left(2), "no budget to itself");
        assert_eq!(budget.total_left(), 3000);
        let mut sent = [0u64; 4];
        while let Some(dst) = budget.draw(&mut rng) {
            sent[dst as usize] += budget.take(dst, 300) as u64;
        }
        assert_eq!(sent, [1000, 1000, 0, 1000]);
        assert!(budget.is_spent());
        assert_eq!(budget.total_left(), 0);
    }
}
