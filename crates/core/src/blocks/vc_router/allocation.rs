//! The allocators of an input-queued virtual-channel router (Dally and Towles, "Principles and
//! Practices of Interconnection Networks", ch. 18–19): VC allocation, which gives a packet at
//! the head of an input VC an output VC, and switch allocation, which gives flits of input VCs
//! that hold an output VC a crossbar path for one internal cycle. VC allocation is separable,
//! input first (each input VC asks for the one VC its rule names, each output VC's round-robin
//! arbiter grants one request). Switch allocation is separable input-first with round-robin
//! arbiters at the inputs (over their VCs) and at the outputs (over the inputs), or iSLIP
//! (McKeown 1999) over one request per (input port, output port) that any VC of the input
//! makes, as Aquila's crossbar (Gibson et al., NSDI '22, §3.1); both iterate.

use super::occupancy::{round_robin, Bits};
use crate::blocks::matching::{Matcher, UNMATCHED};
use crate::blocks::port_set::{after, PortSet};
use crate::engine::rng::Rng;

/// The switch allocator, by name (`switch.scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchAllocatorKind {
    /// Separable input-first with round-robin arbiters.
    SeparableInputFirst {
        /// Iterations per internal cycle.
        iterations: u32,
    },
    /// iSLIP over the ports, a request per (input, output) that any VC of the input makes.
    Islip {
        /// Iterations per internal cycle.
        iterations: u32,
    },
}

/// What the switch allocator reads of the router: per input VC, the output its packet holds
/// a VC of and whether its next flit may cross now.
pub trait Eligibility {
    /// The output input VC `input_vc` may send a flit to now, if any.
    fn ready_output(&self, input_vc: usize) -> Option<usize>;
    /// The input ports with a VC that may be ready: [`ready_output`](Self::ready_output) is
    /// `None` for every VC of every other port.
    fn candidate_inputs(&self) -> PortSet;
    /// The VCs of `input` that may be ready, as a bitmap: `ready_output` is `None` for the
    /// others.
    fn candidate_vcs(&self, input: usize) -> u64;
}

/// Switch-allocation state: the arbiters' pointers and the scratch a round reuses.
pub struct SwitchAllocator {
    kind: SwitchAllocatorKind,
    ports: usize,
    vcs: usize,
    /// Per input: the VC its arbiter serves first.
    input_ptr: Vec<usize>,
    /// Per output: the input its arbiter serves first.
    output_ptr: Vec<usize>,
    matcher: Option<Matcher>,
    /// Per output: inputs requesting it (empty between rounds: a round clears the outputs it
    /// filled, so it costs what is requested, not the port count).
    requests: Vec<PortSet>,
    /// Per input: the VC it put forward (input-first), or `usize::MAX`.
    chosen_vc: Vec<usize>,
    /// iSLIP's answer: per input, its output or [`UNMATCHED`].
    output_of_input: Vec<u16>,
}

impl SwitchAllocator {
    /// An allocator of `kind` for `ports` ports of `vcs` VCs, every pointer at 0.
    pub fn new(kind: SwitchAllocatorKind, ports: usize, vcs: usize) -> Self {
        let matcher = match kind {
            SwitchAllocatorKind::Islip { iterations } => Some(Matcher::islip(ports, iterations)),
            SwitchAllocatorKind::SeparableInputFirst { .. } => None,
        };
        SwitchAllocator {
            kind,
            ports,
            vcs,
            input_ptr: vec![0; ports],
            output_ptr: vec![0; ports],
            matcher,
            requests: vec![PortSet::EMPTY; ports],
            chosen_vc: vec![usize::MAX; ports],
            output_of_input: vec![UNMATCHED; ports],
        }
    }

    /// One internal cycle's matching: pushes (input port, input VC, output port) transfers,
    /// each input and each output at most once.
    pub fn allocate(
        &mut self,
        router: &impl Eligibility,
        rng: &mut Rng,
        transfers: &mut Vec<(usize, usize, usize)>,
    ) {
        transfers.clear();
        match self.kind {
            SwitchAllocatorKind::SeparableInputFirst { iterations } => {
                for _ in 0..iterations {
                    if !self.separable_iteration(router, transfers) {
                        break;
                    }
                }
            }
            SwitchAllocatorKind::Islip { .. } => self.islip(router, rng, transfers),
        }
    }

    /// One iteration of the separable input-first allocator over the inputs and outputs not
    /// matched yet; false if it matched nothing. Only the inputs with a candidate VC are
    /// visited, each input's VCs in its arbiter's round-robin order, as a pointer stepping
    /// over every VC would find them.
    fn separable_iteration(
        &mut self,
        router: &impl Eligibility,
        transfers: &mut Vec<(usize, usize, usize)>,
    ) -> bool {
        let (mut inputs_used, mut outputs_used) = (PortSet::EMPTY, PortSet::EMPTY);
        for &(input, _, output) in transfers.iter() {
            inputs_used.insert(input);
            outputs_used.insert(output);
        }
        let mut requested = PortSet::EMPTY;
        for input in router.candidate_inputs().without(inputs_used).iter() {
            for vc in round_robin(router.candidate_vcs(input), self.input_ptr[input]) {
                match router.ready_output(input * self.vcs + vc) {
                    Some(output) if !outputs_used.contains(output) => {
                        self.chosen_vc[input] = vc;
                        self.requests[output].insert(input);
                        requested.insert(output);
                        break;
                    }
                    _ => {}
                }
            }
        }
        for output in requested.iter() {
            let requests = std::mem::replace(&mut self.requests[output], PortSet::EMPTY);
            let input = requests
                .first_at_or_after(self.output_ptr[output])
                .expect("a requested output has a requesting input");
            let vc = self.chosen_vc[input];
            self.output_ptr[output] = after(input, self.ports);
            self.input_ptr[input] = after(vc, self.vcs);
            transfers.push((input, vc, output));
        }
        !requested.is_empty()
    }

    /// iSLIP over the ports; each matched input sends from its VCs for the output in
    /// round-robin order. Only the inputs with a candidate VC make requests.
    fn islip(
        &mut self,
        router: &impl Eligibility,
        rng: &mut Rng,
        transfers: &mut Vec<(usize, usize, usize)>,
    ) {
        let candidates = router.candidate_inputs();
        let mut requested = PortSet::EMPTY;
        for input in candidates.iter() {
            for vc in Bits(router.candidate_vcs(input)) {
                if let Some(output) = router.ready_output(input * self.vcs + vc) {
                    self.requests[output].insert(input);
                    requested.insert(output);
                }
            }
        }
        if requested.is_empty() {
            return; // no request: iSLIP grants nothing and moves no pointer
        }
        let matcher = self.matcher.as_mut().expect("iSLIP has a matcher");
        matcher.schedule(&self.requests, &mut self.output_of_input, rng);
        for output in requested.iter() {
            self.requests[output] = PortSet::EMPTY;
        }
        for input in candidates.iter() {
            let output = self.output_of_input[input];
            if output == UNMATCHED {
                continue;
            }
            let vc = round_robin(router.candidate_vcs(input), self.input_ptr[input])
                .find(|&vc| router.ready_output(input * self.vcs + vc) == Some(output as usize))
                .expect("a matched input has a VC for its output");
            self.input_ptr[input] = after(vc, self.vcs);
            transfers.push((input, vc, output as usize));
        }
    }
}

/// VC allocation: per output VC, a round-robin arbiter over the input VCs asking for it.
pub struct VcAllocator {
    /// Per output VC: the input VC its arbiter serves first.
    ptr: Vec<usize>,
    /// Per output VC: the input VC winning this cycle so far, or `usize::MAX`.
    best: Vec<usize>,
    /// Output VCs asked for this cycle.
    asked: Vec<usize>,
    input_vcs: usize,
}

impl VcAllocator {
    /// An allocator over `input_vcs` input VCs and as many output VCs.
    pub fn new(input_vcs: usize) -> Self {
        VcAllocator {
            ptr: vec![0; input_vcs],
            best: vec![usize::MAX; input_vcs],
            asked: Vec::with_capacity(input_vcs),
            input_vcs,
        }
    }

    /// Input VC `input_vc` asks for output VC `output_vc`.
    pub fn request(&mut self, input_vc: usize, output_vc: usize) {
        let n = self.input_vcs;
        let distance = |iv: usize| (iv + n - self.ptr[output_vc]) % n;
        match self.best[output_vc] {
            usize::MAX => {
                self.best[output_vc] = input_vc;
                self.asked.push(output_vc);
            }
            held if distance(input_vc) < distance(held) => self.best[output_vc] = input_vc,
            _ => {}
        }
    }

    /// The grants, (input VC, output VC), each output VC to one input VC; the arbiters move
    /// past their winners.
    pub fn grant(&mut self, mut granted: impl FnMut(usize, usize)) {
        for &output_vc in &self.asked {
            let input_vc = std::mem::replace(&mut self.best[output_vc], usize::MAX);
            self.ptr[output_vc] = after(input_vc, self.input_vcs);
            granted(input_vc, output_vc);
        }
        self.asked.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    /// Input VCs ready for the outputs a test lists (`usize::MAX`: not ready).
    struct Ready(Vec<usize>);

    /// VCs per input in the tests.
    const VCS: usize = 2;

    impl Eligibility for Ready {
        fn ready_output(&self, input_vc: usize) -> Option<usize> {
            self.0.get(input_vc).copied().filter(|&o| o != usize::MAX)
        }

        fn candidate_inputs(&self) -> PortSet {
            (0..self.0.len() / VCS)
                .filter(|&input| self.candidate_vcs(input) != 0)
                .collect()
        }

        fn candidate_vcs(&self, input: usize) -> u64 {
            (0..VCS)
                .filter(|&vc| self.ready_output(input * VCS + vc).is_some())
                .fold(0, |mask, vc| mask | 1 << vc)
        }
    }

    const NONE: usize = usize::MAX;

    fn rng() -> Rng {
        stream(3, ComponentId { kind: 0, index: 0 })
    }

    /// Two inputs of two VCs, every VC ready for output 0: one transfer per cycle, the output
    /// alternating between the inputs and each input between its VCs.
    #[test]
    fn separable_input_first_serves_inputs_and_vcs_round_robin() {
        let kind = SwitchAllocatorKind::SeparableInputFirst { iterations: 1 };
        let mut allocator = SwitchAllocator::new(kind, 2, 2);
        let ready = Ready(vec![0, 0, 0, 0]);
        let mut transfers = Vec::new();
        let mut served = Vec::new();
        for _ in 0..4 {
            allocator.allocate(&ready, &mut rng(), &mut transfers);
            assert_eq!(transfers.len(), 1, "one output");
            served.push((transfers[0].0, transfers[0].1));
        }
        assert_eq!(served, [(0, 0), (1, 0), (0, 1), (1, 1)]);
    }

    /// Input 0's VC 0 wants output 0, its VC 1 output 1; input 1 wants output 0 only. One
    /// iteration of input-first leaves output 1 idle when both inputs put forward output 0;
    /// a second iteration lets input 0 (refused) try its other VC.
    #[test]
    fn a_second_iteration_fills_what_the_first_left() {
        let ready = Ready(vec![0, 1, 0, NONE]);
        let mut transfers = Vec::new();
        let one = SwitchAllocatorKind::SeparableInputFirst { iterations: 1 };
        let mut allocator = SwitchAllocator::new(one, 2, 2);
        allocator.output_ptr[0] = 1;
        allocator.allocate(&ready, &mut rng(), &mut transfers);
        assert_eq!(transfers, [(1, 0, 0)]);
        let two = SwitchAllocatorKind::SeparableInputFirst { iterations: 2 };
        let mut allocator = SwitchAllocator::new(two, 2, 2);
        allocator.output_ptr[0] = 1;
        allocator.allocate(&ready, &mut rng(), &mut transfers);
        assert_eq!(transfers, [(1, 0, 0), (0, 1, 1)]);
    }

    /// iSLIP matches the ports, then the input sends from a VC ready for its output.
    #[test]
    fn islip_matches_ports_and_picks_a_vc_for_the_output() {
        let kind = SwitchAllocatorKind::Islip { iterations: 2 };
        let mut allocator = SwitchAllocator::new(kind, 2, 2);
        let ready = Ready(vec![NONE, 1, 0, 1]);
        let mut transfers = Vec::new();
        allocator.allocate(&ready, &mut rng(), &mut transfers);
        transfers.sort();
        assert_eq!(transfers, [(0, 1, 1), (1, 0, 0)]);
    }

    /// Three input VCs ask for one output VC: it goes round robin among them.
    #[test]
    fn vc_allocation_grants_each_output_vc_round_robin() {
        let mut allocator = VcAllocator::new(4);
        let mut winners = Vec::new();
        for _ in 0..4 {
            for input_vc in [3, 1, 2] {
                allocator.request(input_vc, 0);
            }
            allocator.grant(|input_vc, output_vc| {
                assert_eq!(output_vc, 0);
                winners.push(input_vc);
            });
        }
        assert_eq!(winners, [1, 2, 3, 1]);
    }
}
