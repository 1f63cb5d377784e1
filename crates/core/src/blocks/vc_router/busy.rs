//! The busy signals of Aquila's crossbar (Gibson et al., "Aquila: A unified, low-latency
//! fabric for datacenter networks", NSDI '22, §3.1): iSLIP modified for variable cell sizes,
//! "the ingress and egress ports communicate a 'busy' signal to the crossbar arbiter", which
//! "indicates that the ports are transferring a cell across the crossbar", and the arbiter
//! leaves them out of the next request-grant-accept cycles. A cell of `n` flits granted the
//! crossbar holds its input port and its output port for `n` crossbar cycles, so no other
//! cell crosses from that input or into that output (any of its VCs) meanwhile.

use crate::blocks::port_set::PortSet;
use crate::engine::time::TimePs;

/// The ports transferring a cell, and when each is free again.
#[derive(Clone, Debug)]
pub struct Busy {
    /// Input ports transferring a cell.
    pub inputs: PortSet,
    /// Output ports receiving one.
    pub outputs: PortSet,
    /// (free at, input port, output port) of each transfer under way.
    until: Vec<(TimePs, u16, u16)>,
    /// When the first transfer under way ends (`TimePs::MAX` if none).
    first_free_ps: TimePs,
}

impl Default for Busy {
    fn default() -> Self {
        Busy {
            inputs: PortSet::EMPTY,
            outputs: PortSet::EMPTY,
            until: Vec::new(),
            first_free_ps: TimePs::MAX,
        }
    }
}

impl Busy {
    /// Input `input` and output `output` are busy until `free_ps`.
    pub fn hold(&mut self, input: usize, output: usize, free_ps: TimePs) {
        self.inputs.insert(input);
        self.outputs.insert(output);
        self.until.push((free_ps, input as u16, output as u16));
        self.first_free_ps = self.first_free_ps.min(free_ps);
    }

    /// True if a transfer under way ends before `at_ps`.
    #[inline]
    pub fn ends_before(&self, at_ps: TimePs) -> bool {
        self.first_free_ps < at_ps
    }

    /// When the first transfer under way ends (`TimePs::MAX` if none).
    pub fn first_free_ps(&self) -> TimePs {
        self.first_free_ps
    }

    /// Frees the ports whose transfer ends by `now_ps`.
    #[inline]
    pub fn release(&mut self, now_ps: TimePs) {
        if self.first_free_ps > now_ps {
            return;
        }
        let (inputs, outputs) = (&mut self.inputs, &mut self.outputs);
        self.until.retain(|&(free_ps, input, output)| {
            let done = free_ps <= now_ps;
            if done {
                inputs.remove(input as usize);
                outputs.remove(output as usize);
            }
            !done
        });
        self.first_free_ps = self.until.iter().map(|u| u.0).min().unwrap_or(TimePs::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transfer holds both its ports until its end, and only those.
    #[test]
    fn a_transfer_holds_its_ports_until_it_ends() {
        let mut busy = Busy::default();
        busy.hold(1, 3, 100);
        busy.hold(2, 4, 50);
        assert!(busy.ends_before(51) && !busy.ends_before(50));
        busy.release(49);
        assert!(busy.inputs.contains(1) && busy.inputs.contains(2));
        busy.release(50);
        assert!(!busy.inputs.contains(2) && !busy.outputs.contains(4));
        assert!(busy.inputs.contains(1) && busy.outputs.contains(3));
        busy.release(100);
        assert!(busy.inputs.is_empty() && busy.outputs.is_empty());
    }
}
