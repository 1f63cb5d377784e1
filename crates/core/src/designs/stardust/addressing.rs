//! How a Stardust fabric numbers its hosts (Zilberman et al., NSDI '19, §3.2): each host is a
//! port of one fabric adapter (an edge switch of the topology), and cells address hosts.

use crate::blocks::topology::{Attachment, Topology};
use crate::scenario::ScenarioError;

/// Which adapter and host port each host is, and each adapter's first host.
pub struct Addressing {
    adapter_of_host: Vec<u16>,
    port_of_host: Vec<u16>,
    first_host: Vec<u16>,
}

impl Addressing {
    /// Adapters.
    pub fn adapters(&self) -> usize {
        self.first_host.len()
    }

    /// Hosts.
    pub fn hosts(&self) -> usize {
        self.adapter_of_host.len()
    }

    /// The adapter of `host`.
    pub fn adapter_of(&self, host: u16) -> u16 {
        self.adapter_of_host[host as usize]
    }

    /// The host port of `host` on its adapter.
    pub fn port_of(&self, host: u16) -> usize {
        self.port_of_host[host as usize] as usize
    }

    /// The first host of `adapter` (what credits to it are addressed to).
    pub fn first_host(&self, adapter: u16) -> u16 {
        self.first_host[adapter as usize]
    }
}

/// The edge switches (those with hosts), in switch order: adapter `i` is `edges[i]`.
pub fn edges(topology: &Topology) -> Vec<usize> {
    (0..topology.switches())
        .filter(|&s| {
            (0..topology.switch_ports(s))
                .any(|p| matches!(topology.peer(s, p), Some(Attachment::Endpoint(_))))
        })
        .collect()
}

/// Numbers hosts by adapter and port.
pub fn addressing(topology: &Topology) -> Result<Addressing, ScenarioError> {
    let hosts = topology.endpoints();
    let mut adapter_of_host = vec![0u16; hosts];
    let mut port_of_host = vec![0u16; hosts];
    let mut first_host = Vec::new();
    for (adapter, s) in edges(topology).into_iter().enumerate() {
        let mut port = 0u16;
        for p in 0..topology.switch_ports(s) {
            if let Some(Attachment::Endpoint(h)) = topology.peer(s, p) {
                if port == 0 {
                    first_host.push(h as u16);
                }
                adapter_of_host[h] = adapter as u16;
                port_of_host[h] = port;
                port += 1;
            }
        }
    }
    Ok(Addressing {
        adapter_of_host,
        port_of_host,
        first_host,
    })
}
