//! Clint's central bulk arbiter (Eberle and Gura 2002, §3.3) as a component of its own: it hears
//! each node's configuration packet (the targets the node has a ready request for) as a message,
//! computes the Least Choice First schedule at its arbitration time, and answers every node with a
//! grant packet. It never reads a NIC.

use crate::blocks::lcf::LcfArbiter;
use crate::blocks::port_set::PortSet;

/// The bulk channel's arbiter and what it has heard this slot.
pub struct BulkArbiter {
    lcf: LcfArbiter,
    /// The request vector of each node's latest configuration packet.
    heard: Vec<PortSet>,
    /// Per target, the initiators it accepts (its enable vector).
    enabled: Vec<PortSet>,
    /// The schedule: each node's granted target, or `UNMATCHED`.
    grants: Vec<u16>,
    /// The request vectors the schedule is computed from (reused).
    considered: Vec<PortSet>,
    /// Initiators no target accepts.
    disabled: PortSet,
}

impl BulkArbiter {
    /// An arbiter for `nodes` nodes whose targets never accept the `disabled` initiators.
    pub fn new(nodes: usize, disabled: PortSet) -> Self {
        BulkArbiter {
            lcf: LcfArbiter::new(nodes),
            heard: vec![PortSet::EMPTY; nodes],
            enabled: vec![PortSet::below(nodes).without(disabled); nodes],
            grants: vec![0; nodes],
            considered: vec![PortSet::EMPTY; nodes],
            disabled,
        }
    }

    /// A configuration packet from `node`: the targets it has a ready request for.
    pub fn hear(&mut self, node: u16, requests: PortSet) {
        self.heard[node as usize] = requests;
    }

    /// Computes the schedule from the configuration packets heard, leaving out the inputs and
    /// outputs `busy` with speculative transfers that reach into the scheduled slot.
    pub fn arbitrate(&mut self, busy_inputs: PortSet, busy_outputs: PortSet) {
        for (node, considered) in self.considered.iter_mut().enumerate() {
            *considered = if busy_inputs.contains(node) {
                PortSet::EMPTY
            } else {
                self.heard[node].without(busy_outputs)
            };
        }
        self.lcf
            .schedule(&self.considered, &self.enabled, &mut self.grants);
    }

    /// True when every target's enable vector names `initiator`.
    pub fn enabled(&self, initiator: u16) -> bool {
        !self.disabled.contains(initiator as usize)
    }

    /// The target the last schedule grants `node` (or `UNMATCHED`), for its grant packet.
    pub fn grant(&self, node: usize) -> u16 {
        self.grants[node]
    }
}
