//! Topologies by name: the shapes scenarios ask for, each a function that cables a
//! [`Topology`]. Hosts are numbered in the order their switches are, so host `i` of a shape is
//! endpoint `i`.

use super::{Attachment, Topology, TopologyError};

/// The parameters of a folded Clos ([`Topology::clos`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clos {
    /// Tiers of fabric switches above the edge: 1, 2 or 3.
    pub tiers: usize,
    /// Ports (cables) of a fabric switch.
    pub radix: usize,
    /// Hosts on each edge switch.
    pub hosts_per_edge: usize,
    /// Uplink bundles of each edge switch (its speed-up over its hosts is
    /// `uplinks_per_edge · bundle / hosts_per_edge`).
    pub uplinks_per_edge: usize,
    /// Parallel cables between two neighbouring switches.
    pub bundle: usize,
    /// Edge switches; `None`: the most the radix allows (`radix/bundle` top-level blocks).
    pub edges: Option<usize>,
}

/// How a [`Clos`] is laid out.
struct ClosPlan {
    /// Edge switches.
    edges: usize,
    /// Bundles down (and up) of a fabric switch below the top tier.
    half: usize,
    /// Edges under one top-level block (one group).
    edges_per_group: usize,
    /// Top-level blocks under the top tier.
    top_blocks: usize,
    /// Switch positions of the blocks below that share one plane of the top tier.
    top_merge: usize,
}

impl Clos {
    /// Edge switches this Clos has, once its parameters are checked.
    pub fn edge_count(&self) -> Result<usize, TopologyError> {
        self.plan().map(|plan| plan.edges)
    }

    /// Checks the parameters and lays the Clos out.
    fn plan(&self) -> Result<ClosPlan, TopologyError> {
        let shape =
            |name: &'static str, message: String| Err(TopologyError::Parameter { name, message });
        let Clos {
            tiers,
            radix,
            hosts_per_edge,
            uplinks_per_edge,
            bundle,
            edges,
        } = *self;
        if !(1..=3).contains(&tiers) {
            return shape("tiers", format!("a Clos has 1, 2 or 3 tiers, got {tiers}"));
        }
        for (name, value) in [
            ("hosts_per_edge", hosts_per_edge),
            ("uplinks_per_edge", uplinks_per_edge),
            ("bundle", bundle),
        ] {
            if value == 0 {
                return shape(name, "expected at least 1".into());
            }
        }
        let bundles = radix / bundle;
        if radix % bundle != 0 || bundles < 2 || (tiers > 1 && bundles % 2 == 1) {
            return shape("radix", format!(
                "a Clos of {tiers} tiers needs a radix that is {} multiple of the bundle ({bundle}) and at least two bundles, got {radix}",
                if tiers > 1 { "an even" } else { "a" }
            ));
        }
        let half = bundles / 2;
        let edges_per_group = half.saturating_pow(tiers as u32 - 1);
        // Switch positions of one top-level block's top tier.
        let positions = match tiers {
            1 => 1,
            _ => uplinks_per_edge.saturating_mul(half.saturating_pow(tiers as u32 - 2)),
        };
        let edges = edges.unwrap_or(edges_per_group.saturating_mul(bundles));
        let top_blocks = edges / edges_per_group;
        if edges == 0 || edges % edges_per_group != 0 || top_blocks > bundles {
            return shape("edges", format!(
                "a Clos of {tiers} tiers and radix {radix} takes a multiple of {edges_per_group} edges up to {}, got {edges}",
                edges_per_group.saturating_mul(bundles)
            ));
        }
        let top_merge = (1..=positions)
            .rev()
            .find(|&r| positions % r == 0 && r * top_blocks <= bundles)
            .unwrap_or(1);
        Ok(ClosPlan {
            edges,
            half,
            edges_per_group,
            top_blocks,
            top_merge,
        })
    }
}

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
    /// gives the 432 hosts of the Stardust paper's Fig. 10 (§6.3). It is the full
    /// two-tier [`clos`](Self::clos) of radix k with k/2 hosts and k/2 uplinks per edge.
    pub fn fat_tree(k: usize) -> Result<Topology, TopologyError> {
        if k < 2 || k % 2 == 1 {
            return Err(TopologyError::Shape(format!(
                "a fat-tree needs an even k >= 2, got {k}"
            )));
        }
        Topology::clos(Clos {
            tiers: 2,
            radix: k,
            hosts_per_edge: k / 2,
            uplinks_per_edge: k / 2,
            bundle: 1,
            edges: None,
        })
    }

    /// A folded Clos of edge switches (hosts on their low ports) under `tiers` tiers of
    /// fabric switches, built recursively as the Stardust paper's App. A and Table 2 count it
    /// (Zilberman et al., NSDI '19): a tier-1 block is `radix/2` edges (all `radix` for one tier)
    /// fully joined to `uplinks_per_edge` tier-1 switches; a tier-m block is `radix/2` tier-(m−1)
    /// blocks (at the top tier: as many as fit, `radix`) joined by planes, one per switch position
    /// of the blocks below, each plane as many switches as one of those has uplinks. Neighbours are
    /// joined by `bundle` parallel cables; ports count cables, so a fabric switch has
    /// `radix/bundle` bundles. Where fewer blocks than fit share the top tier, its planes merge so
    /// that every top switch fills its ports (the Stardust paper's Fig. 9: 4 pods of 64 edges under
    /// 64 top switches of 128 ports).
    ///
    /// Switches are numbered by tier (edges first), then block, then (plane, index); an edge's
    /// uplink bundle to switch c of its plane is on ports `hosts + c·bundle ..`, a fabric
    /// switch's down bundle to block b on `b·bundle ..` and its up bundle to switch c of its
    /// plane after its down ports. Switches of one top-level block share a group; the top tier
    /// is a group of its own.
    pub fn clos(spec: Clos) -> Result<Topology, TopologyError> {
        let plan = spec.plan()?;
        let Clos {
            tiers,
            hosts_per_edge,
            uplinks_per_edge,
            bundle,
            ..
        } = spec;
        let mut t = Topology::new();
        // Each block: its group and the switches on its top tier, in position order.
        let mut blocks: Vec<(usize, Vec<usize>)> = (0..plan.edges)
            .map(|e| {
                let edge = t.add_switch(hosts_per_edge + uplinks_per_edge * bundle);
                for port in 0..hosts_per_edge {
                    t.attach_host(edge, port);
                }
                (e / plan.edges_per_group, vec![edge])
            })
            .collect();
        let mut up_port_base = hosts_per_edge;
        let mut uplinks = uplinks_per_edge;
        for level in 1..=tiers {
            let top = level == tiers;
            let (per_block, merge, up_bundles) = if top {
                (plan.top_blocks, plan.top_merge, 0)
            } else {
                (plan.half, 1, plan.half)
            };
            let down_bundles = per_block * merge;
            let mut next_blocks = Vec::with_capacity(blocks.len() / per_block);
            for below in blocks.chunks(per_block) {
                let group = if top { plan.top_blocks } else { below[0].0 };
                let positions = below[0].1.len();
                let mut tops = Vec::with_capacity(positions / merge * uplinks);
                for plane in 0..positions / merge {
                    for c in 0..uplinks {
                        let switch = t.add_switch((down_bundles + up_bundles) * bundle);
                        t.set_group(switch, group);
                        for (b, (_, block)) in below.iter().enumerate() {
                            for r in 0..merge {
                                for lane in 0..bundle {
                                    let up = Attachment::SwitchPort {
                                        switch: block[plane * merge + r],
                                        port: up_port_base + c * bundle + lane,
                                    };
                                    let down = Attachment::SwitchPort {
                                        switch,
                                        port: (b * merge + r) * bundle + lane,
                                    };
                                    t.connect(up, down)?;
                                }
                            }
                        }
                        tops.push(switch);
                    }
                }
                next_blocks.push((group, tops));
            }
            blocks = next_blocks;
            up_port_base = down_bundles * bundle;
            uplinks = up_bundles;
        }
        for edge in 0..plan.edges {
            t.set_group(edge, edge / plan.edges_per_group);
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
            let mut pods: Vec<usize> = t
                .switch_neighbours(core)
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
            let neighbours = t.switch_neighbours(s);
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

    fn clos(tiers: usize, radix: usize, t: usize, bundle: usize, edges: Option<usize>) -> Topology {
        let spec = Clos {
            tiers,
            radix,
            hosts_per_edge: 4,
            uplinks_per_edge: t,
            bundle,
            edges,
        };
        Topology::clos(spec).unwrap()
    }

    #[test]
    fn clos_counts_match_the_stardust_papers_table_2() {
        // Table 2 (Stardust App. A), l = 1: ToRs k, k²/2, k³/4; switches t, 3/2·t·k, 5/4·t·k².
        let (k, t) = (8, 2);
        for (tiers, tors, switches) in [
            (1, k, t),
            (2, k * k / 2, 3 * t * k / 2),
            (3, k * k * k / 4, 5 * t * k * k / 4),
        ] {
            let topology = clos(tiers, k, t, 1, None);
            let fabric = topology.switches() - tors;
            assert_eq!(
                (tiers, topology.endpoints(), fabric),
                (tiers, tors * 4, switches)
            );
            assert!(
                (0..topology.switches())
                    .all(|s| (0..topology.switch_ports(s)).all(|p| topology.peer(s, p).is_some())),
                "{tiers} tiers: every port cabled"
            );
        }
    }

    #[test]
    fn clos_builds_the_stardust_fig9_fabric() {
        // §6.2: 256 adapters × 32 uplinks; 128 tier-1 switches (64 down + 64 up); 64 tier-2
        // switches with all 128 links down, each tier-1 switch joined once to each of them.
        let t = clos(2, 128, 32, 1, Some(256));
        assert_eq!(t.switches(), 256 + 128 + 64);
        let neighbours = |s: usize| t.switch_neighbours(s);
        for fe1 in 256..384 {
            assert_eq!(t.switch_ports(fe1), 128);
            let mut up: Vec<usize> = neighbours(fe1).into_iter().filter(|&n| n >= 384).collect();
            up.sort();
            assert_eq!(up, (384..448).collect::<Vec<_>>(), "tier-1 switch {fe1}");
        }
        for fe2 in 384..448 {
            assert_eq!(t.switch_ports(fe2), 128);
            assert!(neighbours(fe2).iter().all(|&n| (256..384).contains(&n)));
        }
        assert!((0..t.switches()).all(|s| (0..t.switch_ports(s)).all(|p| t.peer(s, p).is_some())));
        assert_eq!(t.groups(), 5, "4 pods and the top tier");
    }

    #[test]
    fn clos_bundles_join_neighbours_with_parallel_cables() {
        let t = clos(2, 8, 2, 2, None);
        // 4 bundles of 2 per fabric switch: pods of 2 edges, 4 pods.
        assert_eq!(t.endpoints(), 8 * 4);
        let edge_up: Vec<usize> = t.switch_neighbours(0);
        assert_eq!(edge_up.len(), 4, "two bundles of two cables");
        assert_eq!(edge_up[0], edge_up[1]);
        assert_eq!(edge_up[2], edge_up[3]);
        assert_ne!(edge_up[0], edge_up[2]);
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
        for (tiers, radix, bundle, edges) in [
            (4, 8, 1, None),
            (2, 7, 1, None),
            (2, 8, 3, None),
            (2, 8, 1, Some(6)),
            (2, 8, 1, Some(40)),
        ] {
            let spec = Clos {
                tiers,
                radix,
                hosts_per_edge: 1,
                uplinks_per_edge: 1,
                bundle,
                edges,
            };
            assert!(
                matches!(Topology::clos(spec), Err(TopologyError::Parameter { .. })),
                "{spec:?}"
            );
        }
    }
}
