//! Crossbar matching: iSLIP (McKeown 1999) and PIM (Anderson et al. 1993) over port sets
//! ([`PortSet`]), so one iteration costs O(N) word operations whatever the load.

use super::port_set::{after, PortSet, MAX_PORTS};
use crate::engine::rng::Rng;

/// Marks an input left unmatched in a matching.
pub const UNMATCHED: u16 = u16::MAX;

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
    grants_to_input: Vec<PortSet>,
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
            grants_to_input: vec![PortSet::EMPTY; ports],
        }
    }

    /// Computes one slot's matching. `inputs_for_output[j]` is the set of inputs holding a cell
    /// for output j; on return `output_of_input[i]` is input i's output or [`UNMATCHED`].
    pub fn schedule(
        &mut self,
        inputs_for_output: &[PortSet],
        output_of_input: &mut [u16],
        rng: &mut Rng,
    ) {
        let ports = inputs_for_output.len();
        output_of_input.fill(UNMATCHED);
        let (mut matched_inputs, mut matched_outputs) = (PortSet::EMPTY, PortSet::EMPTY);
        for iteration in 0..self.iterations {
            let mut granted_inputs = PortSet::EMPTY;
            for output in 0..ports {
                if matched_outputs.contains(output) {
                    continue;
                }
                let requests = inputs_for_output[output].without(matched_inputs);
                let grant = match &self.rule {
                    Rule::Islip { grant_ptr, .. } => requests.first_at_or_after(grant_ptr[output]),
                    Rule::Pim => requests.random_member(rng),
                };
                if let Some(input) = grant {
                    self.grants_to_input[input].insert(output);
                    granted_inputs.insert(input);
                }
            }
            if granted_inputs.is_empty() {
                break;
            }
            for input in granted_inputs.iter() {
                let grants = std::mem::take(&mut self.grants_to_input[input]);
                let output = match &mut self.rule {
                    Rule::Islip {
                        grant_ptr,
                        accept_ptr,
                    } => {
                        let output = grants
                            .first_at_or_after(accept_ptr[input])
                            .expect("input was granted");
                        if iteration == 0 {
                            accept_ptr[input] = after(output, ports);
                            grant_ptr[output] = after(input, ports);
                        }
                        output
                    }
                    Rule::Pim => grants.random_member(rng).expect("input was granted"),
                };
                output_of_input[input] = output as u16;
                matched_inputs.insert(input);
                matched_outputs.insert(output);
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

    /// The ports of the low 64 whose bits are set in `bits`.
    fn set(bits: u64) -> PortSet {
        (0..64).filter(|&p| bits & (1 << p) != 0).collect()
    }

    #[test]
    fn islip_pointers_move_only_on_first_iteration_accepts() {
        // Inputs 0 and 1 both want outputs 0 and 1. Iteration 1: both outputs grant input 0
        // (pointers at 0); input 0 accepts output 0; output 1's grant is not accepted, so its
        // pointer stays. Iteration 2: output 1 grants input 1, which accepts, pointers unchanged.
        let mut m = Matcher::islip(2, 2);
        let mut out = [0u16; 2];
        m.schedule(&[set(0b11), set(0b11)], &mut out, &mut rng());
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
        m.schedule(&[set(0b11), set(0b11)], &mut out, &mut rng());
        assert_eq!(out, [1, 0]);
    }

    #[test]
    fn single_iteration_islip_desynchronizes_under_saturation() {
        // With every VOQ non-empty, one-iteration iSLIP reaches a full matching within N slots,
        // on a small switch and on one of a Stardust fabric element's 256 ports.
        for n in [8, MAX_PORTS] {
            let mut m = Matcher::islip(n, 1);
            let mut out = vec![0u16; n];
            let all = vec![PortSet::below(n); n];
            for _ in 0..n {
                m.schedule(&all, &mut out, &mut rng());
            }
            m.schedule(&all, &mut out, &mut rng());
            assert!(out.iter().all(|&o| o != UNMATCHED), "{n} ports");
        }
    }

    proptest! {
        /// Any request pattern yields a valid matching: each input and output used at most once,
        /// only along requested pairs, and maximal once iterations reach N.
        #[test]
        fn schedulers_return_valid_matchings(requests in proptest::collection::vec(proptest::collection::btree_set(0usize..130, 0..6), 130), pim in any::<bool>(), iterations in 1u32..4) {
            let n = 130;
            let requests: Vec<PortSet> = requests.into_iter().map(|r| r.into_iter().collect()).collect();
            let mut m = if pim { Matcher::pim(n, iterations) } else { Matcher::islip(n, iterations) };
            let mut out = vec![0u16; n];
            m.schedule(&requests, &mut out, &mut rng());
            let mut used = PortSet::EMPTY;
            for (input, &output) in out.iter().enumerate() {
                if output == UNMATCHED { continue; }
                prop_assert!(requests[output as usize].contains(input));
                prop_assert!(!used.contains(output as usize));
                used.insert(output as usize);
            }
        }

        #[test]
        fn enough_iterations_give_a_maximal_matching(requests in proptest::collection::vec(0u64..256, 8), pim in any::<bool>()) {
            let n = 8;
            let requests: Vec<PortSet> = requests.into_iter().map(set).collect();
            let mut m = if pim { Matcher::pim(n, 8) } else { Matcher::islip(n, 8) };
            let mut out = vec![0u16; n];
            m.schedule(&requests, &mut out, &mut rng());
            let used: PortSet = out.iter().filter(|&&o| o != UNMATCHED).map(|&o| o as usize).collect();
            let free_inputs: PortSet = (0..n).filter(|&i| out[i] == UNMATCHED).collect();
            for (output, reqs) in requests.iter().enumerate() {
                prop_assert!(used.contains(output) || (*reqs & free_inputs).is_empty(), "not maximal");
            }
        }
    }
}
