//! Topologies by name: the shapes scenarios ask for, each a function that cables a
//! [`Topology`]. Hosts are numbered in the order their switches are, so host `i` of a shape is
//! endpoint `i`.

use super::{Attachment, Topology, TopologyError};

impl Topology {
    /// One switch of `ports` ports with endpoint `h<i>` on port `i`.
    pub fn star(ports: usize) -> Topology {
        let mut t = Topology::new();
        let switch = t.add_switch(ports);
        for port in 0..ports {
            t.attach_host(switch, port);
        }
        t
    }

    /// Two switches of `ports` ports joined by `links` parallel cables on their top ports;
    /// the other ports carry hosts, numbered across the first switch and then the second.
    pub fn two_switch(ports: usize, links: usize) -> Topology {
        assert!(
            0 < links && links < ports,
            "two switches need 1 to ports - 1 links"
        );
        let mut t = Topology::new();
        let switches = [t.add_switch(ports), t.add_switch(ports)];
        let hosts = ports - links;
        for &switch in &switches {
            for port in 0..hosts {
                t.attach_host(switch, port);
            }
        }
        for port in hosts..ports {
            let end = |switch| Attachment::SwitchPort { switch, port };
            t.connect(end(switches[0]), end(switches[1]))
                .expect("each port is cabled once");
        }
        t
    }

    /// A two-tier leaf-spine: `leaves` leaves with `hosts_per_leaf` hosts each on their low
    /// ports and one cable to each of `spines` spines on their high ports; spine port `l` goes
    /// to leaf `l`.
    pub fn leaf_spine(leaves: usize, spines: usize, hosts_per_leaf: usize) -> Topology {
        let mut t = Topology::new();
        let leaf_ids: Vec<usize> = (0..leaves)
            .map(|_| t.add_switch(hosts_per_leaf + spines))
            .collect();
        let spine_ids: Vec<usize> = (0..spines).map(|_| t.add_switch(leaves)).collect();
        for &leaf in &leaf_ids {
            for port in 0..hosts_per_leaf {
                t.attach_host(leaf, port);
            }
        }
        for (l, &leaf) in leaf_ids.iter().enumerate() {
            for (s, &spine) in spine_ids.iter().enumerate() {
                let up = Attachment::SwitchPort {
                    switch: leaf,
                    port: hosts_per_leaf + s,
                };
                let down = Attachment::SwitchPort {
                    switch: spine,
                    port: l,
                };
                t.connect(up, down).expect("each port is cabled once");
            }
        }
        t
    }

    /// Cables a new host, named `h<index>`, to a free port.
    pub fn attach_host(&mut self, switch: usize, port: usize) {
        let host = self.add_endpoint(format!("h{}", self.endpoints()));
        self.connect(
            Attachment::Endpoint(host),
            Attachment::SwitchPort { switch, port },
        )
        .expect("a fresh port takes one cable");
    }

    /// The k-ary three-tier fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008): `k` pods of
    /// `k/2` edge and `k/2` aggregation switches, `(k/2)²` core switches, `k³/4` hosts; k = 12
    /// gives the 432 hosts of the Stardust paper's Fig. 10 (seed 001, §5.4).
    ///
    /// Switches are numbered edges (pod-major), then aggregations, then cores. Edge ports
    /// `0..k/2` carry hosts, `k/2 + i` goes to aggregation switch `i` of the pod; aggregation
    /// switch `j`'s ports `0..k/2` go down to the pod's edges and `k/2 + c` up to core
    /// `j·k/2 + c`; core port `p` goes to pod `p`. Each pod is a group.
    pub fn fat_tree(k: usize) -> Result<Topology, TopologyError> {
        if k < 2 || k % 2 == 1 {
            return Err(TopologyError::Shape(format!(
                "a fat-tree needs an even k >= 2, got {k}"
            )));
        }
        let half = k / 2;
        let mut t = Topology::new();
        let edges: Vec<usize> = (0..k * half).map(|_| t.add_switch(k)).collect();
        let aggregations: Vec<usize> = (0..k * half).map(|_| t.add_switch(k)).collect();
        let cores: Vec<usize> = (0..half * half).map(|_| t.add_switch(k)).collect();
        let port = |switch, port| Attachment::SwitchPort { switch, port };
        for (e, &edge) in edges.iter().enumerate() {
            t.set_group(edge, e / half);
            for host_port in 0..half {
                t.attach_host(edge, host_port);
            }
        }
        for pod in 0..k {
            for j in 0..half {
                let aggregation = aggregations[pod * half + j];
                t.set_group(aggregation, pod);
                for i in 0..half {
                    t.connect(port(edges[pod * half + i], half + j), port(aggregation, i))?;
                }
                for c in 0..half {
                    t.connect(port(aggregation, half + c), port(cores[j * half + c], pod))?;
                }
            }
        }
        for &core in &cores {
            t.set_group(core, k);
        }
        Ok(t)
    }

    /// A Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): `groups` groups of `routers_per_group`
    /// routers, fully meshed inside a group by local links; each router has `terminals` hosts
    /// and `global_links` global links, and every pair of groups is joined by the same number of
    /// global links (`routers_per_group · global_links` must be a multiple of `groups − 1`).
    /// The balanced canonical one (p = 4, a = 8, h = 4, g = 33) has 1 056 hosts.
    ///
    /// Router ports: `0..p` hosts, then `a − 1` local links (to the other routers of the group
    /// in increasing order), then `h` global links. Global link `j` of a group (router `j / h`,
    /// its global port `j % h`) goes to group `G + 1 + j mod (g − 1)`, which sees it as its own
    /// link `(j div (g − 1))·(g − 1) + g − 2 − j mod (g − 1)`: the "consecutive" arrangement.
    pub fn dragonfly(
        terminals: usize,
        routers_per_group: usize,
        global_links: usize,
        groups: usize,
    ) -> Result<Topology, TopologyError> {
        let (p, a, h, g) = (terminals, routers_per_group, global_links, groups);
        let shape = |message: String| Err(TopologyError::Shape(message));
        if p == 0 || a == 0 || g < 2 || h == 0 {
            return shape(format!(
                "a Dragonfly needs terminals, routers_per_group, global_links >= 1 and groups >= 2 (got p = {p}, a = {a}, h = {h}, g = {g})"
            ));
        }
        if (a * h) % (g - 1) != 0 {
            return shape(format!(
                "the {} global links of a group (routers_per_group · global_links) must divide evenly among the other {} groups",
                a * h,
                g - 1
            ));
        }
        let mut t = Topology::new();
        let router = |group: usize, r: usize| group * a + r;
        for group in 0..g {
            for _ in 0..a {
                let id = t.add_switch(p + a - 1 + h);
                t.set_group(id, group);
                for host_port in 0..p {
                    t.attach_host(id, host_port);
                }
            }
        }
        let port = |switch, port| Attachment::SwitchPort { switch, port };
        // Local links: router r's local port for peer q is p + q (q < r) or p + q - 1 (q > r).
        for group in 0..g {
            for r in 0..a {
                for q in r + 1..a {
                    t.connect(
                        port(router(group, r), p + q - 1),
                        port(router(group, q), p + r),
                    )?;
                }
            }
        }
        let others = g - 1;
        for group in 0..g {
            for j in 0..a * h {
                let (bundle, offset) = (j / others, j % others);
                let peer_group = (group + 1 + offset) % g;
                let peer_j = bundle * others + others - 1 - offset;
                if (peer_group, peer_j) < (group, j) {
                    continue; // cabled from the other end
                }
                let end = |group: usize, j: usize| port(router(group, j / h), p + a - 1 + j % h);
                t.connect(end(group, j), end(peer_group, peer_j))?;
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch_neighbours(t: &Topology, switch: usize) -> Vec<usize> {
        (0..t.switch_ports(switch))
            .filter_map(|port| match t.peer(switch, port) {
                Some(Attachment::SwitchPort { switch, .. }) => Some(switch),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn fat_tree_k12_has_the_papers_sizes_and_every_port_cabled() {
        let t = Topology::fat_tree(12).unwrap();
        assert_eq!(t.endpoints(), 432);
        assert_eq!(t.switches(), 72 + 72 + 36);
        for s in 0..t.switches() {
            assert_eq!(t.switch_ports(s), 12);
            assert!(
                (0..12).all(|p| t.peer(s, p).is_some()),
                "switch {s} has a free port"
            );
        }
        // Every core reaches exactly one aggregation switch in each of the 12 pods.
        for core in 144..180 {
            let mut pods: Vec<usize> = switch_neighbours(&t, core)
                .iter()
                .map(|&a| t.group(a))
                .collect();
            pods.sort();
            assert_eq!(pods, (0..12).collect::<Vec<_>>());
        }
        assert_eq!(t.groups(), 13, "12 pods and the core");
    }

    #[test]
    fn canonical_dragonfly_joins_every_pair_of_groups_once() {
        let t = Topology::dragonfly(4, 8, 4, 33).unwrap();
        assert_eq!(t.endpoints(), 1056);
        assert_eq!(t.switches(), 264);
        let mut links = vec![0; 33 * 33];
        for s in 0..t.switches() {
            assert_eq!(t.switch_ports(s), 4 + 7 + 4);
            assert!(
                (0..15).all(|p| t.peer(s, p).is_some()),
                "router {s} has a free port"
            );
            let neighbours = switch_neighbours(&t, s);
            let local = neighbours
                .iter()
                .filter(|&&n| t.group(n) == t.group(s))
                .count();
            assert_eq!(local, 7, "router {s} meets its group");
            for n in neighbours.into_iter().filter(|&n| t.group(n) != t.group(s)) {
                links[t.group(s) * 33 + t.group(n)] += 1;
            }
        }
        for a in 0..33 {
            for b in 0..33 {
                assert_eq!(links[a * 33 + b], (a != b) as usize, "groups {a} and {b}");
            }
        }
    }

    #[test]
    fn impossible_shapes_are_errors() {
        assert!(matches!(
            Topology::fat_tree(5),
            Err(TopologyError::Shape(_))
        ));
        assert!(matches!(
            Topology::dragonfly(2, 4, 2, 6),
            Err(TopologyError::Shape(_))
        ));
        assert!(
            Topology::dragonfly(2, 4, 2, 5).is_ok(),
            "8 global links over 4 other groups"
        );
    }
}
