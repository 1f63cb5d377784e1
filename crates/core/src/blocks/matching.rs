//! Crossbar matching: iSLIP (McKeown 1999) and PIM (Anderson et al. 1993) over port bitmaps.
//!
//! Requests, grants and accepts are bitmaps of at most [`MAX_PORTS`] ports, so one iteration
//! costs O(N) word operations whatever the load.

use rand::Rng as _;

use crate::engine::rng::Rng;

/// The largest port count a bitmap-based scheduler supports.
pub const MAX_PORTS: usize = 64;

/// Marks an input left unmatched in a matching.
pub const UNMATCHED: u16 = u16::MAX;

/// The lowest member of `set` at or after `start`, wrapping around (round-robin pointer rule).
pub fn first_at_or_after(set: u64, start: usize) -> Option<usize> {
    if set == 0 {
        return None;
    }
    let upper = if start >= 64 {
        0
    } else {
        set & (u64::MAX << start)
    };
    Some(if upper != 0 {
        upper.trailing_zeros()
    } else {
        set.trailing_zeros()
    } as usize)
}

/// A member of `set` chosen uniformly at random.
pub fn random_member(set: u64, rng: &mut Rng) -> Option<usize> {
    if set == 0 {
        return None;
    }
    let mut rest = set;
    for _ in 0..rng.gen_range(0..set.count_ones()) {
        rest &= rest - 1;
    }
    Some(rest.trailing_zeros() as usize)
}

/// Iterates over the members of a port bitmap in increasing order.
pub fn members(mut set: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let member = first_at_or_after(set, 0)?;
        set &= set - 1;
        Some(member)
    })
}

/// How grants and accepts are chosen.
#[derive(Clone, Debug)]
enum Rule {
    /// Round-robin pointers per output (grant) and per input (accept), moved only when a grant
    /// is accepted in the first iteration.
    Islip {
        grant_ptr: Vec<usize>,
        accept_ptr: Vec<usize>,
    },
    /// Uniformly random grants and accepts.
    Pim,
}

/// An iterative request-grant-accept matcher for an N×N crossbar.
#[derive(Clone, Debug)]
pub struct Matcher {
    rule: Rule,
    iterations: u32,
    grants_to_input: Vec<u64>,
}

impl Matcher {
    /// iSLIP with `iterations` iterations on `ports` ports, all pointers at port 0.
    pub fn islip(ports: usize, iterations: u32) -> Self {
        let rule = Rule::Islip {
            grant_ptr: vec![0; ports],
            accept_ptr: vec![0; ports],
        };
        Self::new(rule, ports, iterations)
    }

    /// PIM with `iterations` iterations on `ports` ports.
    pub fn pim(ports: usize, iterations: u32) -> Self {
        Self::new(Rule::Pim, ports, iterations)
    }

    fn new(rule: Rule, ports: usize, iterations: u32) -> Self {
        assert!(ports <= MAX_PORTS && iterations >= 1);
        Matcher {
            rule,
            iterations,
            grants_to_input: vec![0; ports],
        }
    }

    /// Computes one slot's matching. `inputs_for_output[j]` is the set of inputs holding a cell
    /// for output j; on return `output_of_input[i]` is input i's output or [`UNMATCHED`].
    pub fn schedule(
        &mut self,
        inputs_for_output: &[u64],
        output_of_input: &mut [u16],
        rng: &mut Rng,
    ) {
        let ports = inputs_for_output.len();
        output_of_input.fill(UNMATCHED);
        let (mut matched_inputs, mut matched_outputs) = (0u64, 0u64);
        for iteration in 0..self.iterations {
            let mut granted_inputs = 0u64;
            for output in 0..ports {
                if matched_outputs & (1 << output) != 0 {
                    continue;
                }
                let requests = inputs_for_output[output] & !matched_inputs;
                let grant = match &self.rule {
                    Rule::Islip { grant_ptr, .. } => first_at_or_after(requests, grant_ptr[output]),
                    Rule::Pim => random_member(requests, rng),
                };
                if let Some(input) = grant {
                    self.grants_to_input[input] |= 1 << output;
                    granted_inputs |= 1 << input;
                }
            }
            if granted_inputs == 0 {
                break;
            }
            for input in members(granted_inputs) {
                let grants = std::mem::take(&mut self.grants_to_input[input]);
                let output = match &mut self.rule {
                    Rule::Islip {
                        grant_ptr,
                        accept_ptr,
                    } => {
                        let output = first_at_or_after(grants, accept_ptr[input])
                            .expect("input was granted");
                        if iteration == 0 {
                            accept_ptr[input] = (output + 1) % ports;
                            grant_ptr[output] = (input + 1) % ports;
                        }
                        output
                    }
                    Rule::Pim => random_member(grants, rng).expect("input was granted"),
                };
                output_of_input[input] = output as u16;
                matched_inputs |= 1 << input;
                matched_outputs |= 1 << output;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId, Rng};
    use proptest::prelude::*;

    fn rng() -> Rng {
        stream(1, ComponentId { kind: 0, index: 0 })
    }

    #[test]
    fn pointer_rule_wraps() {
        assert_eq!(first_at_or_after(0b1001, 1), Some(3));
        assert_eq!(first_at_or_after(0b1001, 4), Some(0));
        assert_eq!(first_at_or_after(0b1001, 0), Some(0));
        assert_eq!(first_at_or_after(0, 2), None);
        assert_eq!(members(0b10110).collect::<Vec<_>>(), vec![1, 2, 4]);
    }

    #[test]
    fn islip_pointers_move_only_on_first_iteration_accepts() {
        // Inputs 0 and 1 both want outputs 0 and 1. Iteration 1: both outputs grant input 0
        // (pointers at 0); input 0 accepts output 0; output 1's grant is not accepted, so its
        // pointer stays. Iteration 2: output 1 grants input 1, which accepts, pointers unchanged.
        let mut m = Matcher::islip(2, 2);
        let mut out = [0u16; 2];
        m.schedule(&[0b11, 0b11], &mut out, &mut rng());
        assert_eq!(out, [0, 1]);
        let Rule::Islip {
            grant_ptr,
            accept_ptr,
        } = &m.rule
        else {
            unreachable!()
        };
        assert_eq!(grant_ptr, &vec![1, 0]);
        assert_eq!(accept_ptr, &vec![1, 0]);
        // Next slot: output 0 now prefers input 1, output 1 still input 0: a full match at once.
        m.schedule(&[0b11, 0b11], &mut out, &mut rng());
        assert_eq!(out, [1, 0]);
    }

    #[test]
    fn single_iteration_islip_desynchronizes_under_saturation() {
        // With every VOQ non-empty, one-iteration iSLIP reaches a full matching within N slots.
        let n = 8;
        let mut m = Matcher::islip(n, 1);
        let mut out = vec![0u16; n];
        let all = vec![(1u64 << n) - 1; n];
        for _ in 0..n {
            m.schedule(&all, &mut out, &mut rng());
        }
        m.schedule(&all, &mut out, &mut rng());
        assert!(out.iter().all(|&o| o != UNMATCHED));
    }

    proptest! {
        /// Any request pattern yields a valid matching: each input and output used at most once,
        /// only along requested pairs, and maximal once iterations reach N.
        #[test]
        fn schedulers_return_valid_matchings(requests in proptest::collection::vec(0u64..256, 8), pim in any::<bool>(), iterations in 1u32..9) {
            let n = 8;
            let mut m = if pim { Matcher::pim(n, iterations) } else { Matcher::islip(n, iterations) };
            let mut out = vec![0u16; n];
            let mut r = rng();
            m.schedule(&requests, &mut out, &mut r);
            let mut used = 0u64;
            for (input, &output) in out.iter().enumerate() {
                if output == UNMATCHED { continue; }
                prop_assert!(requests[output as usize] & (1 << input) != 0);
                prop_assert!(used & (1 << output) == 0);
                used |= 1 << output;
            }
            if iterations as usize >= n {
                for (output, &reqs) in requests.iter().enumerate() {
                    let free_inputs = (0..n).filter(|&i| out[i] == UNMATCHED).fold(0u64, |s, i| s | 1 << i);
                    prop_assert!(used & (1 << output) != 0 || reqs & free_inputs == 0, "not maximal");
                }
            }
        }
    }
}
