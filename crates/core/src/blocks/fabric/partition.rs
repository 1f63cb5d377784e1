//! How a fabric is split for a run on several threads: which partition runs each node
//! ([`Partition`]), chosen so the partitions hold as many hosts each and cut few cables
//! ([`balanced_owners`]), and how far apart in simulated time they may run (the lookahead).

use super::{Fabric, Node};
use crate::blocks::routing::Router;
use crate::blocks::topology::{Attachment, Topology};
use crate::engine::queue::EventQueue;
use crate::engine::time::TimePs;

/// Which partition runs each node, and how far the partitions may run apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Per node: its partition.
    pub owner: Vec<u16>,
    /// How many partitions.
    pub parts: usize,
    /// The shortest propagation delay of a cable between two partitions.
    pub lookahead_ps: TimePs,
}

impl<N: Node<R>, R: Router> Fabric<N, R> {
    /// Makes this fabric, not started, partition `me` of `parts` (split as below, running only
    /// its own nodes), and returns the partition; fails, saying why, where it cannot be split.
    pub fn split(
        &mut self,
        topology: &Topology,
        (parts, me): (usize, u16),
        message_floor_ps: i64,
        cells_carry_packets: bool,
    ) -> Result<Partition, String> {
        let partition = self.partition(topology, parts, message_floor_ps)?;
        self.make_partition(&partition, me, cells_carry_packets);
        Ok(partition)
    }

    /// Splits the fabric of `topology` into `parts` partitions ([`balanced_owners`], each node
    /// that is not a switch, a host, with the switches it is cabled to). Anything sent between
    /// switches arrives at least its cable's delay plus `message_floor_ps` after the event that
    /// sends it (a cell time where only cells cross; minus one where a flow-control signal may
    /// leave when the cell it answers arrived, up to a cell time before the clock edge that
    /// latched it). Fails, saying why, when there are fewer switches than partitions, a host is
    /// cabled to two partitions, or something could cross between partitions in no time
    /// (nothing could run ahead).
    fn partition(
        &self,
        topology: &Topology,
        parts: usize,
        message_floor_ps: i64,
    ) -> Result<Partition, String> {
        let plumbing = &self.plumbing;
        if topology.switches() < parts {
            return Err(format!(
                "expected at most one thread per switch ({} switches)",
                topology.switches()
            ));
        }
        let switch_owner = balanced_owners(topology, parts);
        let mut owner: Vec<u16> = (0..self.nodes.len())
            .map(|n| match plumbing.router_index[n] {
                u32::MAX => u16::MAX,
                s => switch_owner[s as usize],
            })
            .collect();
        for node in 0..self.nodes.len() {
            if owner[node] == u16::MAX {
                owner[node] = self.host_partition(node, &owner)?;
            }
        }
        let lookahead_ps = (0..self.nodes.len())
            .flat_map(|node| {
                self.cabled(node)
                    .map(move |(port, peer)| (node, port, peer))
            })
            .filter(|&(node, _, peer)| owner[peer] != owner[node])
            .map(|(node, port, _)| plumbing.delay_ps(node, port) as i64 + message_floor_ps)
            .min()
            .unwrap_or(i64::MAX);
        if lookahead_ps <= 0 {
            return Err(format!(
                "a cable between partitions is too short to look ahead: what crosses it may arrive {} ps after the event that sends it, so no partition could run ahead of another; expected 1 thread (or longer cables between switches: credit links of at least a cell time)",
                lookahead_ps.max(0)
            ));
        }
        let lookahead_ps = lookahead_ps as TimePs;
        Ok(Partition {
            owner,
            parts,
            lookahead_ps,
        })
    }

    /// The ports of `node` with a cable, each with the node at its far end.
    fn cabled(&self, node: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.ports(node)).filter_map(move |port| {
            let (peer, _) = self.plumbing.peer[self.plumbing.port(node, port)];
            (peer != u32::MAX).then_some((port, peer as usize))
        })
    }

    /// The partition of `node`, not a switch: that of every switch it is cabled to.
    fn host_partition(&self, node: usize, owner: &[u16]) -> Result<u16, String> {
        let mut partitions = self.cabled(node).map(|(_, peer)| owner[peer]);
        let first = partitions.next().filter(|&p| p != u16::MAX);
        match first {
            Some(part) if partitions.all(|p| p == part) => Ok(part),
            _ => Err(format!(
                "node {node} is not cabled to the switches of one partition; expected 1 thread"
            )),
        }
    }

    /// Makes this fabric partition `me` of `partition`: it runs only its own nodes (call before
    /// the run starts; [`Fabric::start`] then starts only those). What its nodes send to
    /// another partition's goes out by [`Fabric::take_outbox`], each cell with the packets
    /// whose last bytes it carries where `cells_carry_packets` (a design that packs packets
    /// into cells: elsewhere [`Cell::packet`](crate::blocks::cell::Cell::packet) is the
    /// design's own word).
    fn make_partition(&mut self, partition: &Partition, me: u16, cells_carry_packets: bool) {
        assert_eq!(
            self.plumbing.queue.len(),
            0,
            "partitioned before the run starts"
        );
        for (remote, &owner) in self.plumbing.border.remote.iter_mut().zip(&partition.owner) {
            *remote = owner != me;
        }
        self.plumbing.border.cells_carry_packets = cells_carry_packets;
    }
}

/// Each switch's partition of `parts`. The switches with hosts go in runs of consecutive
/// hosts, as even in hosts as can be (a topology numbers a pod's or group's hosts together);
/// the others follow outward from them, layer by layer, each with the partition it has most
/// cables to, or on a tie the one with fewest switches (so a fat-tree's aggregation switches
/// go with their pod and its core switches are shared out). Where that leaves a partition
/// without a switch, the switches go in runs of consecutive numbers, as even in count as can
/// be. Needs `parts <= topology.switches()`.
pub fn balanced_owners(topology: &Topology, parts: usize) -> Vec<u16> {
    let switches = topology.switches();
    let hosts = topology.endpoints();
    let mut owner = vec![u16::MAX; switches];
    let mut count = vec![0usize; parts];
    for host in 0..hosts {
        if let Some((s, _)) = topology.endpoint_port(host) {
            if owner[s] == u16::MAX {
                owner[s] = (host * parts / hosts) as u16;
                count[owner[s] as usize] += 1;
            }
        }
    }
    let mut layer: Vec<usize> = (0..switches).filter(|&s| owner[s] != u16::MAX).collect();
    while !layer.is_empty() {
        let mut next: Vec<usize> = layer
            .iter()
            .flat_map(|&s| switch_peers(topology, s))
            .filter(|&peer| owner[peer] == u16::MAX)
            .collect();
        next.sort_unstable();
        next.dedup();
        let votes: Vec<Vec<usize>> = next
            .iter()
            .map(|&s| {
                let mut votes = vec![0; parts];
                for peer in switch_peers(topology, s).filter(|&p| owner[p] != u16::MAX) {
                    votes[owner[peer] as usize] += 1;
                }
                votes
            })
            .collect();
        for (&s, votes) in next.iter().zip(&votes) {
            let part = (0..parts)
                .max_by_key(|&p| (votes[p], std::cmp::Reverse((count[p], p))))
                .expect("at least one partition");
            owner[s] = part as u16;
            count[part] += 1;
        }
        layer = next;
    }
    for unowned in owner.iter_mut().filter(|o| **o == u16::MAX) {
        let part = (0..parts)
            .min_by_key(|&p| (count[p], p))
            .expect("a partition");
        *unowned = part as u16;
        count[part] += 1;
    }
    if count.contains(&0) {
        return (0..switches)
            .map(|s| (s * parts / switches) as u16)
            .collect();
    }
    owner
}

/// The switches cabled to switch `s`, once per cable.
fn switch_peers(topology: &Topology, s: usize) -> impl Iterator<Item = usize> + '_ {
    (0..topology.switch_ports(s)).filter_map(move |p| match topology.peer(s, p) {
        Some(Attachment::SwitchPort { switch, .. }) => Some(switch),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The switches each partition holds.
    fn members(owner: &[u16], part: u16) -> Vec<usize> {
        (0..owner.len()).filter(|&s| owner[s] == part).collect()
    }

    /// A k = 4 fat-tree on two threads: each partition holds two whole pods (their edge and
    /// aggregation switches, and so their hosts) and half the core switches, so only the
    /// cables up to the core cross between partitions.
    #[test]
    fn a_fat_tree_splits_by_pod_and_shares_its_core() {
        let topology = Topology::fat_tree(4).unwrap();
        let owner = balanced_owners(&topology, 2);
        let hosts_in = |part: u16| {
            (0..topology.endpoints())
                .filter(|&h| owner[topology.endpoint_port(h).unwrap().0] == part)
                .count()
        };
        assert_eq!((hosts_in(0), hosts_in(1)), (8, 8));
        assert_eq!(
            (members(&owner, 0).len(), members(&owner, 1).len()),
            (10, 10)
        );
        // Each of the 4 core switches has one cable to each pod: two of them cross. No other
        // cable does.
        let crossing: usize = (0..topology.switches())
            .map(|s| {
                switch_peers(&topology, s)
                    .filter(|&p| owner[p] != owner[s])
                    .count()
            })
            .sum();
        assert_eq!(crossing, 2 * 4 * 2, "cables counted from both ends");
    }

    /// Where hosts sit on few switches, a partition left without one gets switches by number.
    #[test]
    fn a_partition_without_a_switch_falls_back_to_runs_of_numbers() {
        let topology = Topology::leaf_spine(2, 4, 4);
        let owner = balanced_owners(&topology, 3);
        assert!((0..3).all(|p| !members(&owner, p).is_empty()), "{owner:?}");
        assert_eq!(owner, vec![0, 0, 1, 1, 2, 2]);
    }
}
