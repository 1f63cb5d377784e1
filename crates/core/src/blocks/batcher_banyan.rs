//! The Batcher-Banyan self-routing network that carries a slot's matched cells from inputs to
//! outputs (RIFL, Shen and Chow 2023, §IV-C; Narasimha 1988).
//!
//! A Batcher sorting network orders the slot's cells by destination and packs them onto the top
//! lines; a banyan (here an Omega network of log2 N shuffle-exchange stages of 2×2 elements)
//! then routes each cell by the bits of its destination, most significant first. The pair is
//! internally non-blocking exactly when the destinations are distinct, which a matching
//! scheduler guarantees; a scheduler that lets two cells for one output through makes two cells
//! meet at some 2×2 element wanting the same link, and one of them is blocked. The model routes
//! every cell stage by stage, so it counts such blocking rather than assuming it away.

/// A Batcher-Banyan network for up to `lines` ports (rounded up to a power of two).
#[derive(Clone, Debug)]
pub struct BatcherBanyan {
    stages: u32,
    /// Scratch: per line, the destination of the cell on it (or `EMPTY`).
    lines: Vec<u16>,
    next: Vec<u16>,
}

const EMPTY: u16 = u16::MAX;

impl BatcherBanyan {
    /// A network serving `ports` ports.
    pub fn new(ports: usize) -> Self {
        let lines = ports.max(2).next_power_of_two();
        BatcherBanyan {
            stages: lines.trailing_zeros(),
            lines: vec![EMPTY; lines],
            next: vec![EMPTY; lines],
        }
    }

    /// Carries one slot's cells, given by destination output (`outputs`, one per cell, at most
    /// one cell per input line). Returns the number of cells blocked inside the network: zero
    /// whenever the destinations are distinct.
    pub fn route(&mut self, outputs: &mut [u16]) -> u32 {
        assert!(
            outputs.len() <= self.lines.len(),
            "more cells than input lines"
        );
        // Batcher: sort by destination and concentrate onto lines 0..k.
        outputs.sort_unstable();
        self.lines.fill(EMPTY);
        self.lines[..outputs.len()].copy_from_slice(outputs);
        let mut blocked = 0;
        let n = self.lines.len();
        for stage in 0..self.stages {
            let bit = self.stages - 1 - stage;
            self.next.fill(EMPTY);
            // Perfect shuffle (line l goes to l rotated left by one bit), then each 2×2 element
            // sends a cell up (bit 0) or down (bit 1).
            for element in 0..n / 2 {
                for side in 0..2 {
                    let line = 2 * element + side;
                    let from = (line >> 1) | ((line & 1) * (n >> 1));
                    let dst = self.lines[from];
                    if dst == EMPTY {
                        continue;
                    }
                    let out = 2 * element + ((dst as usize >> bit) & 1);
                    if self.next[out] == EMPTY {
                        self.next[out] = dst;
                    } else {
                        blocked += 1;
                    }
                }
            }
            std::mem::swap(&mut self.lines, &mut self.next);
        }
        for (line, &dst) in self.lines.iter().enumerate() {
            debug_assert!(
                dst == EMPTY || dst as usize == line,
                "cell left on a wrong line"
            );
        }
        blocked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn duplicate_destinations_block_inside_the_network() {
        let mut network = BatcherBanyan::new(8);
        assert_eq!(network.route(&mut [3, 3]), 1);
        assert_eq!(network.route(&mut [5, 5, 5, 1]), 2);
        assert_eq!(network.route(&mut []), 0);
    }

    proptest! {
        /// Any set of distinct destinations, from any inputs, for any port count, is delivered
        /// with no internal blocking, every cell on its own output line.
        #[test]
        fn distinct_destinations_never_block(ports in 2usize..=64, seed in any::<u64>(), fill in 0.0f64..=1.0) {
            let mut outputs: Vec<u16> = (0..ports as u16).collect();
            // A deterministic shuffle and a random subset size from the seed.
            let mut state = seed | 1;
            for i in (1..outputs.len()).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                outputs.swap(i, (state % (i as u64 + 1)) as usize);
            }
            outputs.truncate((fill * ports as f64) as usize);
            let mut network = BatcherBanyan::new(ports);
            prop_assert_eq!(network.route(&mut outputs), 0);
            let mut delivered: Vec<u16> = network.lines.iter().copied().filter(|&d| d != EMPTY).collect();
            delivered.sort_unstable();
            prop_assert_eq!(delivered, outputs);
        }
    }
}
