//! The runtime deadlock report of a fabric of VC routers: a cycle of input VCs, each holding a
//! flit that waits for a VC of the next one's buffer (a cycle that the build-time check rules
//! out unless it was turned off).

use super::dependency::Channel;
use super::VcRouter;
use crate::blocks::cell::CellArena;
use crate::blocks::topology::{Attachment, Topology};
use crate::engine::graph::find_cycle;

/// A cycle of input VCs, (router, input port, VC), each waiting for the next: `routers` in
/// topology order, `cells` the fabric's cells.
pub fn wait_cycle(
    routers: &[&VcRouter],
    topology: &Topology,
    cells: &CellArena,
) -> Option<Vec<Channel>> {
    let vcs = routers.first()?.vcs;
    let mut channels = Vec::new();
    let mut port_base = Vec::with_capacity(routers.len());
    for (router, r) in routers.iter().enumerate() {
        port_base.push(channels.len() / vcs);
        for port in 0..r.ports {
            channels.extend((0..vcs as u16).map(|vc| Channel { router, port, vc }));
        }
    }
    let index =
        |router: usize, port: usize, vc: u16| (port_base[router] + port) * vcs + vc as usize;
    let successors = |n: usize| -> Vec<usize> {
        let Channel { router, port, vc } = channels[n];
        let front_route = |cell| (cells[cell].out_port, cells[cell].next_vc);
        routers[router]
            .waiting_vcs(front_route)
            .filter(|&(input, in_vc, _, _)| (input, in_vc as u16) == (port, vc))
            .filter_map(
                |(_, _, output, out_vc)| match topology.peer(router, output) {
                    Some(Attachment::SwitchPort { switch, port }) => {
                        Some(index(switch, port, out_vc))
                    }
                    _ => None,
                },
            )
            .collect()
    };
    let cycle = find_cycle(channels.len(), successors)?;
    Some(cycle.into_iter().map(|n| channels[n]).collect())
}
