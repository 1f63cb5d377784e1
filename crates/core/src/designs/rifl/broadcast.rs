//! RIFL broadcasts (Shen and Chow 2023, §IV-A, Eq. 1): a Dst Port field of 255 makes the switch
//! send the packet out of every port but the one it came in on. A host broadcasts by writing 255
//! into every Dst Port field it uses, with as many hops as the most switches on a path from its
//! own switch: every switch the copies reach then floods them on, and each host gets one copy.
//!
//! Flooding reaches every host exactly once only when the switches form a tree (no cycle and no
//! two cables between the same switches): around a cycle, or over parallel cables, copies would
//! come back and go round until Remain Hops ran out. The paper gives no spanning tree or
//! duplicate filter, so a network that is not a tree is refused for broadcasts.

use std::collections::VecDeque;

use super::header::{Header, BROADCAST, MAX_HOPS};
use crate::blocks::topology::{Attachment, Topology};

/// Why a network cannot carry RIFL broadcasts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BroadcastError {
    /// The switches are not cabled as a tree (n switches, n − 1 cables between them).
    #[error(
        "{switches} switches joined by {cables} cables are not a tree: flooding every port but the input (Eq. 1, Dst Port 255) would send copies round a cycle or over parallel cables; broadcasts need the switches cabled as a tree (a single switch, or a topology file without loops)"
    )]
    NotATree {
        /// Switches in the network.
        switches: usize,
        /// Cables between switches.
        cables: usize,
    },
    /// Some switch cannot be reached from another.
    #[error("the switches are not all connected, so a broadcast cannot reach every host")]
    Disconnected,
    /// A path through more switches than the header has Dst Port fields.
    #[error("a broadcast from host {host:?} crosses {hops} switches, more than the header's {MAX_HOPS} Dst Port fields")]
    TooManyHops {
        /// The host's name.
        host: String,
        /// Switches on its longest path.
        hops: usize,
    },
}

/// The header each host (by index) starts its broadcasts with.
pub fn broadcast_headers(topology: &Topology) -> Result<Vec<Header>, BroadcastError> {
    let neighbours = switch_neighbours(topology)?;
    (0..topology.endpoints())
        .map(|host| {
            let (switch, _) = topology.endpoint_port(host).expect("every host is cabled");
            let hops = 1 + farthest_switch(&neighbours, switch)?;
            if hops > MAX_HOPS {
                return Err(BroadcastError::TooManyHops {
                    host: topology.endpoint_name(host).to_string(),
                    hops,
                });
            }
            Ok(Header::new(&[BROADCAST; MAX_HOPS][..hops]).expect("one to five hops"))
        })
        .collect()
}

/// Each switch's neighbouring switches, if the switches form a tree.
fn switch_neighbours(topology: &Topology) -> Result<Vec<Vec<usize>>, BroadcastError> {
    let switches = topology.switches();
    let mut neighbours = vec![Vec::new(); switches];
    let mut cables = 0;
    for (s, p) in topology.switch_port_list() {
        if let Some(Attachment::SwitchPort { switch, port }) = topology.peer(s, p) {
            if (s, p) < (switch, port) {
                cables += 1;
                neighbours[s].push(switch);
                neighbours[switch].push(s);
            }
        }
    }
    if cables + 1 != switches {
        return Err(BroadcastError::NotATree { switches, cables });
    }
    Ok(neighbours)
}

/// The most cables between `from` and any switch (breadth first over a tree).
fn farthest_switch(neighbours: &[Vec<usize>], from: usize) -> Result<usize, BroadcastError> {
    let mut distance = vec![usize::MAX; neighbours.len()];
    distance[from] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(s) = queue.pop_front() {
        for &next in &neighbours[s] {
            if distance[next] == usize::MAX {
                distance[next] = distance[s] + 1;
                queue.push_back(next);
            }
        }
    }
    match distance.iter().max() {
        Some(&usize::MAX) => Err(BroadcastError::Disconnected),
        other => Ok(other.copied().unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Switches 0..n, each with `hosts` hosts on ports 0.., joined by `links` as (a, b) pairs
    /// on the ports after the hosts.
    fn network(switches: usize, hosts: usize, links: &[(usize, usize)]) -> Topology {
        let mut t = Topology::new();
        let ports = hosts + links.len() * 2;
        let ids: Vec<usize> = (0..switches).map(|_| t.add_switch(ports)).collect();
        let mut next_port = vec![hosts; switches];
        for &(a, b) in links {
            let (pa, pb) = (next_port[a], next_port[b]);
            next_port[a] += 1;
            next_port[b] += 1;
            let at = |switch, port| Attachment::SwitchPort { switch, port };
            t.connect(at(ids[a], pa), at(ids[b], pb)).unwrap();
        }
        for s in 0..switches {
            for p in 0..hosts {
                let h = t.add_endpoint(format!("h{s}.{p}"));
                let port = Attachment::SwitchPort { switch: s, port: p };
                t.connect(Attachment::Endpoint(h), port).unwrap();
            }
        }
        t
    }

    #[test]
    fn a_host_floods_as_many_hops_as_switches_on_its_longest_path() {
        let headers = broadcast_headers(&network(1, 4, &[])).unwrap();
        assert!(headers
            .iter()
            .all(|h| h.total_hops == 1 && h.dst_ports[0] == 255));
        // A chain 0 - 1 - 2: the end switches' hosts need 3 hops, the middle one's 2.
        let chain = broadcast_headers(&network(3, 1, &[(0, 1), (1, 2)])).unwrap();
        let hops: Vec<u8> = chain.iter().map(|h| h.total_hops).collect();
        assert_eq!(hops, vec![3, 2, 3]);
        assert!(chain[1].dst_ports[..2].iter().all(|&f| f == BROADCAST));
    }

    #[test]
    fn networks_that_are_not_trees_or_too_deep_are_refused() {
        assert_eq!(
            broadcast_headers(&network(2, 1, &[(0, 1), (0, 1)])),
            Err(BroadcastError::NotATree {
                switches: 2,
                cables: 2
            })
        );
        assert!(matches!(
            broadcast_headers(&network(3, 1, &[(0, 1), (1, 2), (2, 0)])),
            Err(BroadcastError::NotATree { .. })
        ));
        assert_eq!(
            broadcast_headers(&network(3, 1, &[(0, 1)])),
            Err(BroadcastError::NotATree {
                switches: 3,
                cables: 1
            })
        );
        let chain: Vec<(usize, usize)> = (0..5).map(|s| (s, s + 1)).collect();
        assert!(matches!(
            broadcast_headers(&network(6, 1, &chain)),
            Err(BroadcastError::TooManyHops { hops: 6, .. })
        ));
    }
}
