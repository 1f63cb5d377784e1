//! The path between a node's host memory and its NIC (Eberle and Gura 2002, §3.1): the NIC
//! fetches each message from `HostSendBuffers` into a send buffer, and writes each received
//! message from its receive buffer into `HostRecvBuffers`, over the node's PCI bus, one transfer
//! at a time; the host then consumes the message and returns the buffer.
//!
//! The paper's simulation leaves the bus out (§4.1: packets move from the packet queue to the
//! send buffers "when space permits", and latency stops when transmission begins). Without a
//! bus rate, transfers take no time and the run is the paper's; with one, they delay when a
//! message becomes ready to send and when it reaches its target host, which the end-to-end
//! latency reports.

use crate::engine::time::{serialization_ps, TimePs, PS_PER_NS};

/// Every node's PCI bus and host.
pub struct HostBuses {
    /// Bus rate in bit/s, or `None`: transfers take no time.
    rate_bps: Option<u64>,
    /// Fixed cost of each transfer.
    overhead_ps: TimePs,
    /// Size of the run's messages on the bus (its request packets, Table 1).
    message_bytes: u64,
    /// Per node: when its bus is free.
    free_ps: Vec<TimePs>,
    /// Time a host takes to consume a received message and return its buffer.
    pub host_receive_ps: TimePs,
}

impl HostBuses {
    /// The buses of `nodes` nodes at `pci_gbps` (absent: no time), each transfer costing
    /// `overhead_ns` more, moving messages of `message_bytes`.
    pub fn new(
        nodes: usize,
        pci_gbps: Option<f64>,
        overhead_ns: u64,
        message_bytes: u64,
        host_receive_ns: u64,
    ) -> Self {
        HostBuses {
            rate_bps: pci_gbps.map(|gbps| (gbps * 1e9).round() as u64),
            overhead_ps: overhead_ns * PS_PER_NS,
            message_bytes,
            free_ps: vec![0; nodes],
            host_receive_ps: host_receive_ns * PS_PER_NS,
        }
    }

    /// True when transfers take time (a fetched message is not ready at once).
    pub fn modelled(&self) -> bool {
        self.rate_bps.is_some()
    }

    /// `node` asks its bus for one message's transfer at `now_ps`; returns when it ends (now
    /// if the bus is not modelled).
    pub fn transfer(&mut self, node: u16, now_ps: TimePs) -> TimePs {
        let Some(rate_bps) = self.rate_bps else {
            return now_ps;
        };
        let free_ps = &mut self.free_ps[node as usize];
        let start_ps = now_ps.max(*free_ps);
        *free_ps = start_ps + self.overhead_ps + serialization_ps(self.message_bytes, rate_bps);
        *free_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_queue_on_a_node_bus_and_cost_nothing_without_one() {
        let mut none = HostBuses::new(2, None, 100, 36, 0);
        assert_eq!(none.transfer(0, 5_000), 5_000);
        // 36 bytes at 4.224 Gbit/s: 68.18 ns, plus 100 ns.
        let mut pci = HostBuses::new(2, Some(4.224), 100, 36, 0);
        let first = pci.transfer(0, 0);
        assert_eq!(first, 100_000 + serialization_ps(36, 4_224_000_000));
        assert_eq!(
            pci.transfer(0, 10_000),
            2 * first,
            "the second waits for the first"
        );
        assert_eq!(
            pci.transfer(1, 10_000),
            10_000 + first,
            "each node has its own bus"
        );
    }
}
