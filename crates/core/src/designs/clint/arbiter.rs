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
}

impl BulkArbiter {
    /// An arbiter for `nodes` nodes whose targets never accept the `disabled` initiators.
    pub fn new(nodes: usize, disabled: PortSet) -> Self {
        BulkArbiter {
            lcf: LcfArbiter::new(nodes),
            heard: vec![PortSet::EMPTY; nodes],
            enabled: vec![PortSet::below(nodes).without(disabled); nodes],
            grants: vec![0; nodes],
        }
    }

    /// A configuration packet from `node`: the targets it has a ready request for.
    pub fn hear(&mut self, node: u16, requests: PortSet) {
        self.heard[node as usize] = requests;
    }

    /// Computes the schedule from the configuration packets heard.
    pub fn arbitrate(&mut self) {
        self.lcf
            .schedule(&self.heard, &self.enabled, &mut self.grants);
    }

    /// The target the last schedule grants `node` (or `UNMATCHED`), for its grant packet.
    pub fn grant(&self, node: usize) -> u16 {
        self.grants[node]
    }
}
