//! The Least Choice First arbiter (Gura & Eberle, IPDPS 2002), as Clint's central bulk scheduler
//! uses it (Eberle and Gura 2002, §3.3): each target goes to the requesting initiator with the
//! fewest choices left, a round-robin diagonal served first bounds every request's wait, and each
//! target's enable vector names the initiators it accepts.
//!
//! Requests and enable vectors are port sets ([`PortSet`]).

use super::matching::UNMATCHED;
use super::port_set::{PortSet, MAX_PORTS};

/// A central arbiter computing one conflict-free initiator → target schedule per slot.
#[derive(Clone, Debug)]
pub struct LcfArbiter {
    ports: usize,
    /// Slots scheduled so far; picks the round-robin diagonal and the tie-break start.
    round: u64,
    /// Scratch: requests left after the enable vectors, per initiator.
    allowed: Vec<PortSet>,
}

impl LcfArbiter {
    /// An arbiter for `ports` initiators and as many targets.
    pub fn new(ports: usize) -> Self {
        assert!((1..=MAX_PORTS).contains(&ports));
        LcfArbiter {
            ports,
            round: 0,
            allowed: vec![PortSet::EMPTY; ports],
        }
    }

    /// Computes one slot's schedule. `requests[i]` is the set of targets initiator i has data for;
    /// `enabled[t]` the set of initiators target t accepts. On return `target_of[i]` is initiator
    /// i's target or [`UNMATCHED`]; every target is given to at most one initiator.
    ///
    /// First the round-robin diagonal `t = (i + round) mod N` is granted wherever requested (a
    /// diagonal is itself a matching), so a request that stays up is granted within N slots.
    /// Then the remaining targets, in round-robin order, each go to the free initiator that
    /// requests it with the fewest requests to still-free targets (ties: round robin).
    pub fn schedule(&mut self, requests: &[PortSet], enabled: &[PortSet], target_of: &mut [u16]) {
        let n = self.ports;
        assert!(requests.len() == n && enabled.len() == n && target_of.len() == n);
        let rr = (self.round % n as u64) as usize;
        self.round += 1;
        target_of.fill(UNMATCHED);
        for (i, allowed) in self.allowed.iter_mut().enumerate() {
            *allowed = requests[i]
                .iter()
                .filter(|&t| enabled[t].contains(i))
                .collect();
        }
        let (mut free_initiators, mut free_targets) = (PortSet::below(n), PortSet::below(n));
        for (i, target) in target_of.iter_mut().enumerate() {
            let t = (i + rr) % n;
            if self.allowed[i].contains(t) {
                *target = t as u16;
                free_initiators.remove(i);
                free_targets.remove(t);
            }
        }
        for step in 0..n {
            let t = (rr + step) % n;
            if !free_targets.contains(t) {
                continue;
            }
            let candidates: PortSet = free_initiators
                .iter()
                .filter(|&i| self.allowed[i].contains(t))
                .collect();
            let choices = |i: usize| (self.allowed[i] & free_targets).len();
            let Some(fewest) = candidates.iter().map(choices).min() else {
                continue;
            };
            let least: PortSet = candidates
                .iter()
                .filter(|&i| choices(i) == fewest)
                .collect();
            let i = least
                .first_at_or_after(rr)
                .expect("a candidate has the fewest choices");
            target_of[i] = t as u16;
            free_initiators.remove(i);
            free_targets.remove(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: u64 = u64::MAX;

    /// The ports of the low 64 whose bits are set in `bits`.
    fn set(bits: u64) -> PortSet {
        (0..64).filter(|&p| bits & (1 << p) != 0).collect()
    }

    fn sets(bits: &[u64]) -> Vec<PortSet> {
        bits.iter().map(|&b| set(b)).collect()
    }

    #[test]
    fn the_initiator_with_fewest_requests_is_served_first() {
        // Round 0's diagonal is (i, i): nobody requests it here. Target 0 is wanted by initiator
        // 1 (three requests) and initiator 3 (one request): LCF gives it to 3, leaving 1 its
        // other targets; serving the lower index first would have left 3 without a target.
        let mut arbiter = LcfArbiter::new(4);
        let mut out = [0u16; 4];
        arbiter.schedule(&sets(&[0, 0b1101, 0, 0b0001]), &sets(&[ALL; 4]), &mut out);
        assert_eq!(out[3], 0);
        assert_eq!(out[1], 2);
        assert_eq!((out[0], out[2]), (UNMATCHED, UNMATCHED));
    }

    #[test]
    fn disabled_initiators_are_never_granted() {
        let mut arbiter = LcfArbiter::new(4);
        let mut out = [0u16; 4];
        // Target 2 accepts nobody but initiator 0; initiator 3 is disabled everywhere.
        let enabled = sets(&[0b0111, 0b0111, 0b0001, 0b0111]);
        for _ in 0..8 {
            arbiter.schedule(&sets(&[0b0100, 0b0100, 0b0100, 0b1111]), &enabled, &mut out);
            assert_eq!(out[3], UNMATCHED);
            assert_eq!((out[0], out[1], out[2]), (2, UNMATCHED, UNMATCHED));
        }
    }

    #[test]
    fn a_persistent_request_is_granted_within_n_slots() {
        // Every initiator wants target 5; initiator 0 wants every other target too, so LCF alone
        // would never give it target 5. The diagonal still grants each (i, 5) within N slots.
        let n = 8;
        let mut arbiter = LcfArbiter::new(n);
        let mut requests: Vec<PortSet> = vec![[5].into_iter().collect(); n];
        requests[0] = PortSet::below(n);
        let mut out = vec![0u16; n];
        let mut waited = vec![0u32; n];
        for _ in 0..10 * n {
            arbiter.schedule(&requests, &vec![set(ALL); n], &mut out);
            for i in 0..n {
                waited[i] = if out[i] == 5 { 0 } else { waited[i] + 1 };
                assert!(
                    waited[i] < n as u32,
                    "initiator {i} waited {} slots",
                    waited[i]
                );
            }
        }
    }

    proptest! {
        /// Any requests and enable vectors yield a matching of requested, enabled pairs that is
        /// maximal: no free initiator still requests a free, enabling target.
        #[test]
        fn schedules_are_maximal_matchings(
            requests in proptest::collection::vec(0u64..1 << 8, 8),
            enabled in proptest::collection::vec(0u64..1 << 8, 8),
            rounds in 0u64..20,
        ) {
            let n = 8;
            let (requests, enabled) = (sets(&requests), sets(&enabled));
            let mut arbiter = LcfArbiter::new(n);
            let mut out = vec![0u16; n];
            for _ in 0..=rounds {
                arbiter.schedule(&requests, &enabled, &mut out);
            }
            let mut used = PortSet::EMPTY;
            for (i, &t) in out.iter().enumerate() {
                if t == UNMATCHED {
                    continue;
                }
                prop_assert!(requests[i].contains(t as usize) && enabled[t as usize].contains(i));
                prop_assert!(!used.contains(t as usize));
                used.insert(t as usize);
            }
            for (i, &t) in out.iter().enumerate() {
                if t != UNMATCHED {
                    continue;
                }
                for t in requests[i].without(used).iter() {
                    prop_assert!(!enabled[t].contains(i), "({i}, {t}) left out");
                }
            }
        }
    }
}
