//! The build-time deadlock check: the channel dependency graph of a topology, its routing and
//! a VC rule must be acyclic (Dally and Seitz's condition; Dally and Towles, "Principles and
//! Practices of Interconnection Networks", §14.1–14.2). A node is a channel, (router, output
//! port, VC); an edge joins the channel a packet arrives on to each channel the routing may
//! send it on next. The routing is taken as what it may do, a superset of what it will do:
//! any candidate of the minimal next hops, and, for modes that route through an intermediate
//! group, every intermediate group, so a graph found acyclic is acyclic for every choice the
//! routing makes. It also finds the most VCs any route needs.

use super::assignment::{Hop, PortClass, VcRule};
use crate::blocks::routing::RouteTable;
use crate::blocks::topology::{Attachment, Topology};
use crate::engine::graph::find_cycle as find_cycle_in;

/// One channel: VC `vc` of the link out of `port` of `router`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    /// The router sending on it.
    pub router: usize,
    /// Its output port.
    pub port: usize,
    /// The VC.
    pub vc: u16,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "(router {}, port {}, VC {})",
            self.router, self.port, self.vc
        )
    }
}

/// Why a VC rule does not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependencyError {
    /// Some route needs VC `needed - 1`.
    TooFewVcs {
        /// VCs the routes need.
        needed: u16,
    },
    /// The channel dependency graph has this cycle.
    Cycle(Vec<Channel>),
}

/// Names a cycle of channels: the first few, and how many there are.
pub fn describe_cycle(cycle: &[Channel]) -> String {
    const SHOWN: usize = 8;
    let mut names: Vec<String> = cycle.iter().take(SHOWN).map(Channel::to_string).collect();
    if cycle.len() > SHOWN {
        names.push(format!("... ({} channels)", cycle.len()));
    }
    names.push(cycle[0].to_string());
    names.join(" -> ")
}

/// The graph, kept per router as a bit matrix from its (input port, VC) to its (output port,
/// VC): a dependency always joins a channel into a router to a channel out of it.
struct Graph<'a> {
    topology: &'a Topology,
    vcs: usize,
    /// Per router: bit `(in_port · vcs + in_vc) · width + out_port · vcs + out_vc`.
    turns: Vec<Vec<u64>>,
    /// Most VCs a route needs.
    needed: u16,
}

impl Graph<'_> {
    fn width(&self, router: usize) -> usize {
        self.topology.switch_ports(router) * self.vcs
    }

    fn add(&mut self, router: usize, input: (usize, u16), output: (usize, u16)) {
        let width = self.width(router);
        let bit = (input.0 * self.vcs + input.1 as usize) * width + output.0 * self.vcs;
        let bit = bit + output.1 as usize;
        self.turns[router][bit / 64] |= 1 << (bit % 64);
    }

    /// The channels a packet on `channel` may take next.
    fn successors(&self, channel: Channel) -> Vec<Channel> {
        let Some(Attachment::SwitchPort { switch, port }) =
            self.topology.peer(channel.router, channel.port)
        else {
            return Vec::new();
        };
        let width = self.width(switch);
        let row = (port * self.vcs + channel.vc as usize) * width;
        (0..width)
            .filter(|&k| self.turns[switch][(row + k) / 64] >> ((row + k) % 64) & 1 == 1)
            .map(|k| Channel {
                router: switch,
                port: k / self.vcs,
                vc: (k % self.vcs) as u16,
            })
            .collect()
    }
}

/// What the routing may do, as the check walks it.
pub struct RoutingReach<'a> {
    /// The route tables.
    pub table: &'a RouteTable,
    /// The mode may send packets through an intermediate group.
    pub nonminimal: bool,
}

/// Checks that `rule` over `vcs` VCs fits every route of `reach` on `topology` and, when
/// `check_cycles`, that the channel dependency graph is acyclic.
pub fn check(
    topology: &Topology,
    reach: &RoutingReach<'_>,
    rule: VcRule,
    vcs: u16,
    check_cycles: bool,
) -> Result<(), DependencyError> {
    let mut graph = Graph {
        topology,
        vcs: vcs as usize,
        turns: (0..topology.switches())
            .map(|s| {
                let width = topology.switch_ports(s) * vcs as usize;
                vec![0u64; (width * width).div_ceil(64)]
            })
            .collect(),
        needed: 1,
    };
    let table = reach.table;
    let vias: Vec<Option<usize>> = std::iter::once(None)
        .chain((0..table.groups()).filter(|_| reach.nonminimal).map(Some))
        .collect();
    // Packets enter and leave at routers with hosts: only those start or end routes.
    let mut has_hosts = vec![false; topology.switches()];
    for host in 0..topology.endpoints() {
        if let Some((switch, _)) = topology.endpoint_port(host) {
            has_hosts[switch] = true;
        }
    }
    for destination in (0..topology.switches()).filter(|&d| has_hosts[d]) {
        for &via in &vias {
            walk_routes(&mut graph, reach, rule, (destination, via), &has_hosts);
        }
    }
    if graph.needed > vcs {
        return Err(DependencyError::TooFewVcs {
            needed: graph.needed,
        });
    }
    match check_cycles.then(|| find_cycle(&graph)).flatten() {
        Some(cycle) => Err(DependencyError::Cycle(cycle)),
        None => Ok(()),
    }
}

/// A packet's state as the walk meets it: at `router`, arrived on (port, class, VC), still
/// heading for the intermediate group or not.
#[derive(Clone, Copy)]
struct Step {
    router: usize,
    arrived: Option<(usize, u16)>,
    in_class: PortClass,
    toward_intermediate: bool,
}

/// Adds every dependency of the routes to `destination` (through group `via`, if any) from
/// every router with hosts.
fn walk_routes(
    graph: &mut Graph<'_>,
    reach: &RoutingReach<'_>,
    rule: VcRule,
    (destination, via): (usize, Option<usize>),
    has_hosts: &[bool],
) {
    let (topology, table) = (graph.topology, reach.table);
    let mut seen = std::collections::HashSet::new();
    let detours = |s: usize| {
        via.is_none_or(|g| table.group(s) != table.group(destination) && g != table.group(s))
    };
    let mut stack: Vec<Step> = (0..topology.switches())
        .filter(|&s| has_hosts[s] && detours(s))
        .map(|router| Step {
            router,
            arrived: None,
            in_class: PortClass::Terminal,
            toward_intermediate: via.is_some(),
        })
        .collect();
    while let Some(step) = stack.pop() {
        if step.router == destination {
            continue;
        }
        let heading =
            step.toward_intermediate && via.is_some_and(|g| table.group(step.router) != g);
        let set = match via {
            Some(g) if heading => table.toward_group(step.router, g),
            _ => table.toward_switch(step.router, destination),
        };
        for &port in table.ports(set) {
            let port = port as usize;
            let out_class = PortClass::of(topology, step.router, port);
            let in_vc = step.arrived.map_or(0, |(_, vc)| vc);
            let vc = rule.out_vc(Hop {
                in_class: step.in_class,
                in_vc,
                out_class,
                toward_intermediate: heading,
                nonminimal_routing: reach.nonminimal,
            });
            graph.needed = graph.needed.max(vc + 1);
            if vc as usize >= graph.vcs {
                continue;
            }
            if let Some(input) = step.arrived {
                graph.add(step.router, input, (port, vc));
            }
            let Some(Attachment::SwitchPort {
                switch,
                port: in_port,
            }) = topology.peer(step.router, port)
            else {
                continue;
            };
            if seen.insert((step.router, port, vc, heading)) {
                stack.push(Step {
                    router: switch,
                    arrived: Some((in_port, vc)),
                    in_class: out_class,
                    toward_intermediate: heading,
                });
            }
        }
    }
}

/// A cycle of the graph, if it has one.
fn find_cycle(graph: &Graph<'_>) -> Option<Vec<Channel>> {
    let topology = graph.topology;
    let mut channels = Vec::new();
    let mut port_base = Vec::with_capacity(topology.switches());
    for router in 0..topology.switches() {
        port_base.push(channels.len() / graph.vcs);
        for port in 0..topology.switch_ports(router) {
            channels.extend((0..graph.vcs as u16).map(|vc| Channel { router, port, vc }));
        }
    }
    let index = |c: Channel| (port_base[c.router] + c.port) * graph.vcs + c.vc as usize;
    let successors = |n: usize| {
        graph
            .successors(channels[n])
            .into_iter()
            .map(index)
            .collect()
    };
    let cycle = find_cycle_in(channels.len(), successors)?;
    Some(cycle.into_iter().map(|n| channels[n]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dragonfly() -> Topology {
        Topology::dragonfly(2, 4, 2, 9).unwrap()
    }

    fn run(t: &Topology, rule: VcRule, vcs: u16, nonminimal: bool) -> Result<(), DependencyError> {
        let table = RouteTable::new(t).unwrap();
        let reach = RoutingReach {
            table: &table,
            nonminimal,
        };
        check(t, &reach, rule, vcs, true)
    }

    /// One VC on a Dragonfly: local, global and local channels of three groups close a cycle,
    /// and the check names it.
    #[test]
    fn one_vc_on_a_dragonfly_is_refused_with_its_cycle() {
        let t = dragonfly();
        let Err(DependencyError::Cycle(cycle)) = run(&t, VcRule::Single, 1, false) else {
            panic!("one VC on a Dragonfly must close a cycle");
        };
        assert!(cycle.len() >= 2, "{cycle:?}");
        for (i, c) in cycle.iter().enumerate() {
            let next = cycle[(i + 1) % cycle.len()];
            let Some(Attachment::SwitchPort { switch, .. }) = t.peer(c.router, c.port) else {
                panic!("a cycle runs between routers");
            };
            assert_eq!(switch, next.router, "consecutive channels meet at a router");
        }
        let text = describe_cycle(&cycle);
        assert!(text.starts_with("(router "), "{text}");
    }

    /// Kim et al.'s dateline fits minimal routing in 2 VCs and non-minimal in 3, and is
    /// acyclic with them; with one VC fewer it is refused for the count.
    #[test]
    fn the_dateline_needs_two_vcs_minimal_and_three_non_minimal() {
        let t = dragonfly();
        let rule = VcRule::DragonflyDateline;
        assert_eq!(run(&t, rule, 2, false), Ok(()));
        assert_eq!(run(&t, rule, 3, true), Ok(()));
        assert_eq!(
            run(&t, rule, 1, false),
            Err(DependencyError::TooFewVcs { needed: 2 })
        );
        assert_eq!(
            run(&t, rule, 2, true),
            Err(DependencyError::TooFewVcs { needed: 3 })
        );
    }

    /// Aquila's increment fits minimal routing in 2 VCs.
    #[test]
    fn the_global_local_increment_is_acyclic_for_minimal_routing() {
        let t = dragonfly();
        assert_eq!(run(&t, VcRule::GlobalLocalIncrement, 2, false), Ok(()));
    }

    /// Aquila's Clique (Gibson et al., NSDI '22, §3.2), 4 pods of 4 TiNs: the increment per
    /// group entered fits minimal routes in 2 VCs and misroutes through an intermediate pod in
    /// 3, acyclic with no turn rule (no route takes two local hops in a pod); one VC fewer is
    /// refused for the count, and one VC is refused with its cycle.
    #[test]
    fn the_clique_needs_two_vcs_minimal_and_three_non_minimal() {
        use crate::blocks::topology::{Clique, SpareLocalPorts};
        let t = Topology::clique(Clique {
            pods: 4,
            tins_per_pod: 4,
            hosts_per_tin: 2,
            local_ports: 6,
            global_ports: 2,
            spare_local: SpareLocalPorts::Unused,
        })
        .unwrap();
        let rule = VcRule::GlobalLocalIncrement;
        assert_eq!(run(&t, rule, 2, false), Ok(()));
        assert_eq!(run(&t, rule, 3, true), Ok(()));
        assert_eq!(
            run(&t, rule, 2, true),
            Err(DependencyError::TooFewVcs { needed: 3 })
        );
        assert!(matches!(
            run(&t, VcRule::Single, 1, true),
            Err(DependencyError::Cycle(_))
        ));
    }

    /// Up/down routing on a fat-tree cannot close a cycle: one VC passes.
    #[test]
    fn a_fat_tree_needs_no_extra_vc() {
        let t = Topology::fat_tree(4).unwrap();
        assert_eq!(run(&t, VcRule::Single, 1, false), Ok(()));
    }
}
