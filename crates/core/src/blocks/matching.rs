//! Crossbar matching: iSLIP (McKeown 1999) and PIM (Anderson et al. 1993) over port sets
//! ([`PortSet`]), so one iteration costs O(N) word operations whatever the load. A switch of at
//! most 64 ports is matched over plain 64-bit words ([`Ports`] for `u64`), with the same
//! choices and the same random draws as over the full sets.

use super::port_set::{after, PortSet, MAX_PORTS};
use crate::engine::rng::Rng;
use rand::Rng as _;

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
        if ports <= 64 {
            let mut requests = [0u64; 64];
            for (narrow, wide) in requests.iter_mut().zip(inputs_for_output) {
                *narrow = wide.low_word();
            }
            let mut grants_to_input = [0u64; 64];
            self.match_over(
                &requests[..ports],
                &mut grants_to_input[..ports],
                output_of_input,
                rng,
            );
        } else {
            let mut grants_to_input = std::mem::take(&mut self.grants_to_input);
            self.match_over(
                inputs_for_output,
                &mut grants_to_input,
                output_of_input,
                rng,
            );
            self.grants_to_input = grants_to_input;
        }
    }

    /// The matching over port sets of type `S`; `grants_to_input` is empty on entry and on
    /// return.
    fn match_over<S: Ports>(
        &mut self,
        inputs_for_output: &[S],
        grants_to_input: &mut [S],
        output_of_input: &mut [u16],
        rng: &mut Rng,
    ) {
        let ports = inputs_for_output.len();
        output_of_input.fill(UNMATCHED);
        let (mut matched_inputs, mut matched_outputs) = (S::EMPTY, S::EMPTY);
        for iteration in 0..self.iterations {
            let mut granted_inputs = S::EMPTY;
            for output in 0..ports {
                if matched_outputs.has(output) {
                    continue;
                }
                let requests = inputs_for_output[output].minus(matched_inputs);
                let grant = match &self.rule {
                    Rule::Islip { grant_ptr, .. } => requests.at_or_after(grant_ptr[output]),
                    Rule::Pim => requests.random(rng),
                };
                if let Some(input) = grant {
                    grants_to_input[input].add(output);
                    granted_inputs.add(input);
                }
            }
            if granted_inputs == S::EMPTY {
                break;
            }
            while let Some(input) = granted_inputs.at_or_after(0) {
                granted_inputs.take(input);
                let grants = std::mem::replace(&mut grants_to_input[input], S::EMPTY);
                let output = match &mut self.rule {
                    Rule::Islip {
                        grant_ptr,
                        accept_ptr,
                    } => {
                        let output = grants
                            .at_or_after(accept_ptr[input])
                            .expect("input was granted");
                        if iteration == 0 {
                            accept_ptr[input] = after(output, ports);
                            grant_ptr[output] = after(input, ports);
                        }
                        output
                    }
                    Rule::Pim => grants.random(rng).expect("input was granted"),
                };
                output_of_input[input] = output as u16;
                matched_inputs.add(input);
                matched_outputs.add(output);
            }
        }
    }
}

/// The set operations a matching needs, over a [`PortSet`] or, on at most 64 ports, a `u64`.
trait Ports: Copy + PartialEq {
    const EMPTY: Self;
    fn has(&self, port: usize) -> bool;
    fn add(&mut self, port: usize);
    fn take(&mut self, port: usize);
    fn minus(self, other: Self) -> Self;
    /// The round-robin pointer rule: the lowest member at or after `start`, wrapping.
    fn at_or_after(&self, start: usize) -> Option<usize>;
    /// A uniformly random member, drawn as [`PortSet::random_member`] draws it.
    fn random(&self, rng: &mut Rng) -> Option<usize>;
}

impl Ports for PortSet {
    const EMPTY: Self = PortSet::EMPTY;
    fn has(&self, port: usize) -> bool {
        self.contains(port)
    }
    fn add(&mut self, port: usize) {
        self.insert(port)
    }
    fn take(&mut self, port: usize) {
        self.remove(port)
    }
    fn minus(self, other: Self) -> Self {
        self.without(other)
    }
    fn at_or_after(&self, start: usize) -> Option<usize> {
        self.first_at_or_after(start)
    }
    fn random(&self, rng: &mut Rng) -> Option<usize> {
        self.random_member(rng)
    }
}

impl Ports for u64 {
    const EMPTY: Self = 0;
    #[inline]
    fn has(&self, port: usize) -> bool {
        self & (1 << port) != 0
    }
    #[inline]
    fn add(&mut self, port: usize) {
        *self |= 1 << port;
    }
    #[inline]
    fn take(&mut self, port: usize) {
        *self &= !(1 << port);
    }
    #[inline]
    fn minus(self, other: Self) -> Self {
        self & !other
    }
    #[inline]
    fn at_or_after(&self, start: usize) -> Option<usize> {
        let upper = self & (u64::MAX << (start % 64));
        let from = if upper != 0 { upper } else { *self };
        (from != 0).then(|| from.trailing_zeros() as usize)
    }
    #[inline]
    fn random(&self, rng: &mut Rng) -> Option<usize> {
        let len = self.count_ones();
        if len == 0 {
            return None;
        }
        let mut rest = *self;
        for _ in 0..rng.gen_range(0..len) {
            rest &= rest - 1;
        }
        Some(rest.trailing_zeros() as usize)
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

    /// The grant and accept pointers of an iSLIP matcher.
    fn pointers(m: &Matcher) -> (Vec<usize>, Vec<usize>) {
        match &m.rule {
            Rule::Islip {
                grant_ptr,
                accept_ptr,
            } => (grant_ptr.clone(), accept_ptr.clone()),
            Rule::Pim => unreachable!("PIM keeps no pointers"),
        }
    }

    /// A 4×4 switch with every VOQ backlogged, matched by 3-iteration iSLIP, worked by hand
    /// slot after slot (McKeown 1999: a grant pointer moves to one beyond the input it
    /// granted, and an accept pointer to one beyond the output it accepted, only if the grant
    /// is accepted in the first iteration; later iterations match without moving any pointer).
    /// Were the pointers moved in every iteration, or on grants that are not accepted, slot 1
    /// would leave them at [1, 2, 3, 0] (or grant pointers at [1, 2, 3, 3]).
    #[test]
    fn islip_pointers_follow_only_first_iteration_accepts_slot_by_slot() {
        let n = 4;
        let mut m = Matcher::islip(n, 3);
        let all = vec![set(0b1111); n];
        let mut out = vec![0u16; n];
        let mut r = rng();
        const U: u16 = UNMATCHED;
        // (matching after the slot, grant pointers, accept pointers)
        let slots: [([u16; 4], [usize; 4], [usize; 4]); 5] = [
            // All pointers at 0. Iteration 1: every output grants input 0, which accepts
            // output 0: g0 → 1, a0 → 1; outputs 1-3 were not accepted and stay at 0.
            // Iteration 2: outputs 1-3 grant input 1, which accepts output 1 (no pointer
            // moves). Iteration 3: outputs 2-3 grant input 2, which accepts output 2. Input 3
            // and output 3 are left over.
            ([0, 1, 2, U], [1, 0, 0, 0], [1, 0, 0, 0]),
            // g = [1,0,0,0], a = [1,0,0,0]. Iteration 1: output 0 grants input 1, outputs 1-3
            // grant input 0; input 0 accepts output 1 (its pointer at 1), input 1 accepts
            // output 0: g1 → 1, a0 → 2, g0 → 2, a1 → 1. Iteration 2: outputs 2 and 3 grant
            // input 2, which accepts 2. Iteration 3: output 3 grants input 3.
            ([1, 0, 2, 3], [2, 1, 0, 0], [2, 1, 0, 0]),
            // Iteration 1: outputs 0, 1, 2, 3 grant inputs 2, 1, 0, 0; input 0 accepts
            // output 2 (pointer at 2), inputs 1 and 2 their only grants: g2 → 1, a0 → 3,
            // g1 → 2, a1 → 2, g0 → 3, a2 → 1. Iteration 2: output 3 grants input 3.
            ([2, 1, 0, 3], [3, 2, 1, 0], [3, 2, 1, 0]),
            // Desynchronized: every output grants a different input, all accepted in the
            // first iteration, and every pointer moves on by one each slot.
            ([3, 2, 1, 0], [0, 3, 2, 1], [0, 3, 2, 1]),
            ([0, 3, 2, 1], [1, 0, 3, 2], [1, 0, 3, 2]),
        ];
        for (slot, (matching, grant_ptr, accept_ptr)) in slots.into_iter().enumerate() {
            m.schedule(&all, &mut out, &mut r);
            assert_eq!(out, matching, "matching of slot {}", slot + 1);
            assert_eq!(
                pointers(&m),
                (grant_ptr.to_vec(), accept_ptr.to_vec()),
                "(grant, accept) pointers after slot {}",
                slot + 1
            );
        }
    }

    /// PIM (Anderson et al. 1993): each unmatched output grants one of its requesting
    /// inputs uniformly at random, and each input accepts one of its grants uniformly at
    /// random. Four inputs contending for one output each win a quarter of the slots; one
    /// input granted by four outputs accepts each a quarter of the time.
    #[test]
    fn pim_grants_and_accepts_uniformly_at_random() {
        let (n, slots) = (4, 4_000);
        let mut m = Matcher::pim(n, 1);
        let mut r = rng();
        let mut out = vec![0u16; n];
        let mut wins = [0u32; 4];
        let one_output = [set(0b1111), set(0), set(0), set(0)];
        for _ in 0..slots {
            m.schedule(&one_output, &mut out, &mut r);
            let winners: Vec<usize> = (0..n).filter(|&i| out[i] != UNMATCHED).collect();
            assert_eq!(winners.len(), 1);
            wins[winners[0]] += 1;
        }
        // Binomial(4000, 1/4): mean 1000, standard deviation 27.
        assert!(
            wins.iter().all(|&w| (900..=1100).contains(&w)),
            "grants {wins:?}"
        );
        let mut accepted = [0u32; 4];
        let one_input = [set(0b1), set(0b1), set(0b1), set(0b1)];
        for _ in 0..slots {
            m.schedule(&one_input, &mut out, &mut r);
            assert_eq!(out[1..], [UNMATCHED; 3]);
            accepted[out[0] as usize] += 1;
        }
        assert!(
            accepted.iter().all(|&a| (900..=1100).contains(&a)),
            "accepts {accepted:?}"
        );
    }

    /// Under saturation (every VOQ backlogged) one PIM iteration matches an input exactly when
    /// at least one of the N outputs grants it: on average N·(1 − (1 − 1/N)^N), about 63% of
    /// the ports for large N (Anderson et al. 1993; McKeown 1999), where iSLIP
    /// reaches 100% (above). Enough iterations make the matching maximal, here perfect.
    #[test]
    fn one_pim_iteration_matches_about_63_percent_under_saturation() {
        let (n, slots) = (16, 10_000);
        let all = vec![PortSet::below(n); n];
        let mut out = vec![0u16; n];
        let mut r = rng();
        let mut m = Matcher::pim(n, 1);
        let per_slot: Vec<f64> = (0..slots)
            .map(|_| {
                m.schedule(&all, &mut out, &mut r);
                out.iter().filter(|&&o| o != UNMATCHED).count() as f64
            })
            .collect();
        let mean = per_slot.iter().sum::<f64>() / slots as f64;
        let variance =
            per_slot.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (slots as f64 - 1.0);
        let band = 4.0 * (variance / slots as f64).sqrt();
        let expected = n as f64 * (1.0 - (1.0 - 1.0 / n as f64).powi(n as i32));
        assert!(
            (mean - expected).abs() < band,
            "{mean} ± {band} of {expected}"
        );
        let mut m = Matcher::pim(n, n as u32);
        for _ in 0..100 {
            m.schedule(&all, &mut out, &mut r);
            assert!(out.iter().all(|&o| o != UNMATCHED), "{out:?}");
        }
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

        /// On at most 64 ports the matching over words chooses exactly what the matching over
        /// full port sets chooses, slot after slot, with the same random draws.
        #[test]
        fn the_narrow_matching_is_the_wide_one(requests in proptest::collection::vec(any::<u64>(), 1..=64), pim in any::<bool>(), iterations in 1u32..4) {
            let n = requests.len();
            let requests: Vec<u64> = requests.into_iter().map(|r| if n == 64 { r } else { r & ((1 << n) - 1) }).collect();
            let wide: Vec<PortSet> = requests.iter().map(|&r| set(r)).collect();
            let make = || if pim { Matcher::pim(n, iterations) } else { Matcher::islip(n, iterations) };
            let (mut narrow_matcher, mut wide_matcher) = (make(), make());
            let (mut narrow_rng, mut wide_rng) = (rng(), rng());
            for _ in 0..4 {
                let (mut narrow_out, mut wide_out) = (vec![0u16; n], vec![0u16; n]);
                let mut grants = vec![0u64; n];
                narrow_matcher.match_over(&requests, &mut grants, &mut narrow_out, &mut narrow_rng);
                let mut wide_grants = vec![PortSet::EMPTY; n];
                wide_matcher.match_over(&wide, &mut wide_grants, &mut wide_out, &mut wide_rng);
                prop_assert_eq!(&narrow_out, &wide_out);
                prop_assert!(narrow_out.iter().any(|&o| o != UNMATCHED) || requests.iter().all(|&r| r == 0));
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
