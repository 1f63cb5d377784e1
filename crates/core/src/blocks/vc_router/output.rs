//! Output arbitration at one output port: which VC's queued flit the link carries next, and
//! with traffic classes, which class's first; by weighted round robin or strict priority
//! (Aquila's output QoS, "weighted round robin and strict priority", Gibson et al., NSDI '22,
//! §3.1; Dally and Towles, ch. 19 on arbiters).

use crate::blocks::cell::CellQueue;

/// How an output port chooses among its VCs (`vc.output_arbitration`) or its VC classes
/// (`vc.class_weights`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputArbitration {
    /// Weighted round robin: contender `i` sends up to `weights[i]` units (flits, or cells
    /// switched whole) per turn.
    WeightedRoundRobin {
        /// Units per turn, per contender (at least 1 each).
        weights: Vec<u32>,
    },
    /// The lowest-numbered contender with a unit queued goes first.
    StrictPriority,
}

/// One arbiter's state (one per output port and class between VCs, one per output port
/// between classes).
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputArbiter {
    /// The contender whose turn it is.
    turn: u16,
    /// Units it sent in this turn.
    sent_in_turn: u32,
}

impl OutputArbiter {
    /// Picks the VC among `queues` (one per VC, the first of them VC `first_vc` of the port,
    /// whose weight it takes) whose head goes next, if any holds one.
    pub fn pick_vc(
        &mut self,
        rule: &OutputArbitration,
        queues: &[CellQueue],
        first_vc: usize,
    ) -> Option<usize> {
        self.pick(rule, queues.len(), first_vc, |vc| !queues[vc].is_empty())
    }

    /// Picks among `count` contenders, the first of them number `first` of `rule`'s weights,
    /// those for which `ready` holds, which goes next, if any is ready.
    pub fn pick(
        &mut self,
        rule: &OutputArbitration,
        count: usize,
        first: usize,
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        match rule {
            OutputArbitration::StrictPriority => (0..count).find(|&i| ready(i)),
            OutputArbitration::WeightedRoundRobin { weights } => {
                let turn = self.turn as usize;
                if ready(turn) && self.sent_in_turn < weights[first + turn] {
                    self.sent_in_turn += 1;
                    return Some(turn);
                }
                let next = (1..=count)
                    .map(|k| (turn + k) % count)
                    .find(|&i| ready(i))?;
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
                let vc = arbiter.pick_vc(rule, &qs, 0)?;
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

    /// Between classes the same arbiter takes turns over whichever classes have a unit
    /// queued: weights 3 : 1 give three units of class 0 to one of class 1 while both wait,
    /// and a class with nothing queued gives way; strict priority starves class 1.
    #[test]
    fn classes_take_turns_by_their_weights() {
        let pick_n = |rule: &OutputArbitration, ready: &[bool], n: usize| {
            let mut arbiter = OutputArbiter::default();
            (0..n)
                .map(|_| arbiter.pick(rule, ready.len(), 0, |c| ready[c]))
                .collect::<Vec<_>>()
        };
        let weighted = OutputArbitration::WeightedRoundRobin {
            weights: vec![3, 1],
        };
        let both = [true, true];
        assert_eq!(
            pick_n(&weighted, &both, 8),
            [0, 0, 0, 1, 0, 0, 0, 1].map(Some)
        );
        assert_eq!(pick_n(&weighted, &[false, true], 3), [Some(1); 3]);
        assert_eq!(pick_n(&weighted, &[false, false], 1), [None]);
        assert_eq!(
            pick_n(&OutputArbitration::StrictPriority, &both, 4),
            [Some(0); 4]
        );
    }

    #[test]
    fn strict_priority_drains_the_lowest_vc_first() {
        let rule = OutputArbitration::StrictPriority;
        assert_eq!(serve(&rule, &[2, 1, 1], 5), [0, 0, 1, 2]);
    }
}
