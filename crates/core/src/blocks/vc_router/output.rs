//! Output arbitration between the VCs of one output port: which VC's queued flit the link
//! carries next, by weighted round robin or strict priority (Aquila's output QoS, Gibson et
//! al., NSDI '22, §3.1; Dally and Towles, ch. 19 on arbiters).

use crate::blocks::cell::CellQueue;

/// How an output port chooses among its VCs, by name (`vc.output_arbitration`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputArbitration {
    /// Weighted round robin: VC `v` sends up to `weights[v]` flits per turn.
    WeightedRoundRobin {
        /// Flits per turn, per VC (at least 1 each).
        weights: Vec<u32>,
    },
    /// The lowest-numbered VC with a flit goes first.
    StrictPriority,
}

/// One output port's arbiter state.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputArbiter {
    /// The VC whose turn it is.
    turn: u16,
    /// Flits it sent in this turn.
    sent_in_turn: u32,
}

impl OutputArbiter {
    /// Picks the VC among `queues` (one per VC, the first of them VC `first_vc` of the port,
    /// whose weight it takes) whose head flit goes next, if any holds one.
    pub fn pick(
        &mut self,
        rule: &OutputArbitration,
        queues: &[CellQueue],
        first_vc: usize,
    ) -> Option<usize> {
        let vcs = queues.len();
        match rule {
            OutputArbitration::StrictPriority => queues.iter().position(|q| !q.is_empty()),
            OutputArbitration::WeightedRoundRobin { weights } => {
                let turn = self.turn as usize;
                if !queues[turn].is_empty() && self.sent_in_turn < weights[first_vc + turn] {
                    self.sent_in_turn += 1;
                    return Some(turn);
                }
                let next = (1..=vcs)
                    .map(|k| (turn + k) % vcs)
                    .find(|&vc| !queues[vc].is_empty())?;
                self.turn = next as u16;
                self.sent_in_turn = 1;
                Some(next)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::{Cell, CellArena};

    /// Queues of `lengths` cells, one per VC.
    fn queues(cells: &mut CellArena, lengths: &[usize]) -> Vec<CellQueue> {
        lengths
            .iter()
            .map(|&n| {
                let mut q = CellQueue::default();
                for _ in 0..n {
                    let id = cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
                    cells.push_back(&mut q, id);
                }
                q
            })
            .collect()
    }

    /// Serves `n` flits, popping each from its queue, and returns the VCs served.
    fn serve(rule: &OutputArbitration, lengths: &[usize], n: usize) -> Vec<usize> {
        let mut cells = CellArena::new();
        let mut qs = queues(&mut cells, lengths);
        let mut arbiter = OutputArbiter::default();
        (0..n)
            .map_while(|_| {
                let vc = arbiter.pick(rule, &qs, 0)?;
                cells.pop_front(&mut qs[vc]);
                Some(vc)
            })
            .collect()
    }

    #[test]
    fn weighted_round_robin_gives_each_vc_its_weight_per_turn() {
        let rule = OutputArbitration::WeightedRoundRobin {
            weights: vec![2, 1, 1],
        };
        assert_eq!(serve(&rule, &[9, 9, 9], 8), [0, 0, 1, 2, 0, 0, 1, 2]);
        assert_eq!(
            serve(&rule, &[1, 0, 3], 4),
            [0, 2, 2, 2],
            "empty VCs give way"
        );
    }

    #[test]
    fn strict_priority_drains_the_lowest_vc_first() {
        let rule = OutputArbitration::StrictPriority;
        assert_eq!(serve(&rule, &[2, 1, 1], 5), [0, 0, 1, 2]);
    }
}
