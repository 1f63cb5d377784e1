//! The build-time deadlock check: the channel dependency graph of a topology, its routing and
//! a VC rule must be acyclic (Dally and Seitz's condition; Dally and Towles, "Principles and
//! Practices of Interconnection Networks", §14.1–14.2). A node is a channel, (router, output
//! port, VC); an edge joins the channel a packet arrives on to each channel the routing may
//! send it on next. The routing is taken as what it may do, a superset of what it will do:
//! any candidate of the minimal next hops (with local detours, those the turn rule allows, and
//! the detours, by the functions the router calls), and, for modes that route through an
//! intermediate group, every intermediate group, so a graph found acyclic is acyclic for every
//! choice the routing makes. It also finds the most VCs any route needs.

use super::assignment::{Hop, PortClass, VcRule};
use crate::blocks::routing::{local_misroute, FabricRouter, RouteTable};
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
    /// Per router: where its ports start in one numbering of every router's ports.
    port_base: Vec<usize>,
    /// Per router: bit `(in_port · vcs + in_vc) · width + out_port · vcs + out_vc`.
    turns: Vec<Vec<u64>>,
    /// Most VCs a route needs.
    needed: u16,
}

impl<'a> Graph<'a> {
    fn new(topology: &'a Topology, vcs: usize) -> Self {
        let mut port_base = Vec::with_capacity(topology.switches());
        let mut ports = 0;
        for router in 0..topology.switches() {
            port_base.push(ports);
            ports += topology.switch_ports(router);
        }
        let turns = (0..topology.switches())
            .map(|s| {
                let width = topology.switch_ports(s) * vcs;
                vec![0u64; (width * width).div_ceil(64)]
            })
            .collect();
        Graph {
            topology,
            vcs,
            port_base,
            turns,
            needed: 1,
        }
    }

    /// Channels in the graph.
    fn channels(&self) -> usize {
        let routers = self.topology.switches();
        let ports = match routers {
            0 => 0,
            n => self.port_base[n - 1] + self.topology.switch_ports(n - 1),
        };
        ports * self.vcs
    }

    /// The number of channel (`router`, `port`, `vc`) in `0..channels()`.
    fn channel_index(&self, router: usize, port: usize, vc: u16) -> usize {
        (self.port_base[router] + port) * self.vcs + vc as usize
    }

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

/// A set of channels, one bit each (numbered by [`Graph::channel_index`]).
struct ChannelSet(Vec<u64>);

impl ChannelSet {
    fn new(channels: usize) -> Self {
        ChannelSet(vec![0; channels.div_ceil(64)])
    }

    fn clear(&mut self) {
        self.0.fill(0);
    }

    /// Adds `channel`; true if it was not in the set.
    fn insert(&mut self, channel: usize) -> bool {
        let (word, bit) = (channel / 64, 1u64 << (channel % 64));
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }
}

/// What the routing may do, as the check walks it.
#[derive(Clone, Copy)]
pub struct RoutingReach<'a> {
    /// The route tables.
    pub table: &'a RouteTable,
    /// The mode may send packets through an intermediate group.
    pub nonminimal: bool,
    /// The local detours the mode may send packets on ([`local_misroute`]).
    pub local_misroutes: local_misroute::TurnRule,
}

impl<'a> RoutingReach<'a> {
    /// What `router` may do over `table` (its own, or the tables after a failure).
    pub fn of(router: &FabricRouter, table: &'a RouteTable) -> Self {
        RoutingReach {
            table,
            nonminimal: router.routes_nonminimally(),
            local_misroutes: router.local_turn_rule(),
        }
    }
}

/// Checks that `rule` over `vcs` VCs fits every route of `reach` on `topology` and, when
/// `check_cycles`, that the channel dependency graph is acyclic.
///
/// Where a packet goes next depends only on the channel it arrived on and on where it heads,
/// so the routes are walked once per destination router, every intermediate group at once,
/// each channel followed once. The leg toward an intermediate group does not depend on the
/// destination, only on which routers are sources (those outside the destination's group):
/// it is walked once per (intermediate group, destination group) and its arrivals in the
/// intermediate group start each destination's walk. A leg that passes a router with hosts
/// of the destination's group (where a packet for that router stops) is walked again per
/// destination. The graph is the one a walk per (destination, intermediate group) builds.
pub fn check(
    topology: &Topology,
    reach: &RoutingReach<'_>,
    rule: VcRule,
    vcs: u16,
    check_cycles: bool,
) -> Result<(), DependencyError> {
    let mut graph = Graph::new(topology, vcs as usize);
    let mut walker = Walker::new(reach, rule, &graph);
    for group in 0..reach.table.groups() {
        walker.walk_into_group(&mut graph, group);
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

/// A packet's state as the walk meets it: at `router`, arrived on (port, class, VC). Whether
/// it still heads for an intermediate group is the walk's to know.
#[derive(Clone, Copy)]
struct Step {
    router: usize,
    arrived: Option<(usize, u16)>,
    in_class: PortClass,
}

/// The walks of the routes, with the channels each has followed.
struct Walker<'r, 't> {
    reach: &'r RoutingReach<'t>,
    rule: VcRule,
    /// Routers with hosts: only those start or end routes.
    has_hosts: Vec<bool>,
    /// Channels followed toward the destination in its walk.
    followed: ChannelSet,
    /// Channels followed toward the intermediate group in its walk.
    followed_detour: ChannelSet,
    /// Scratch: the ports a step may leave by.
    ports: Vec<usize>,
    /// The local detours of each candidate set for a packet that did not arrive by a local
    /// hop (the only one offered any), listed the first time a walk needs them: the same
    /// ports [`local_misroute::detours`] gives, without scanning the router's ports at every
    /// step.
    detours: Vec<Option<Box<[u16]>>>,
}

impl<'r, 't> Walker<'r, 't> {
    fn new(reach: &'r RoutingReach<'t>, rule: VcRule, graph: &Graph<'_>) -> Self {
        let topology = graph.topology;
        let mut has_hosts = vec![false; topology.switches()];
        for host in 0..topology.endpoints() {
            if let Some((switch, _)) = topology.endpoint_port(host) {
                has_hosts[switch] = true;
            }
        }
        Walker {
            reach,
            rule,
            has_hosts,
            followed: ChannelSet::new(graph.channels()),
            followed_detour: ChannelSet::new(graph.channels()),
            ports: Vec::new(),
            detours: vec![None; reach.table.sets()],
        }
    }

    /// A packet just made at each router with hosts (`sources` filters them).
    fn sources(&self, sources: impl Fn(usize) -> bool) -> Vec<Step> {
        (0..self.has_hosts.len())
            .filter(|&s| self.has_hosts[s] && sources(s))
            .map(|router| Step {
                router,
                arrived: None,
                in_class: PortClass::Terminal,
            })
            .collect()
    }

    /// Adds every dependency of the routes to the routers with hosts of group `group`.
    fn walk_into_group(&mut self, graph: &mut Graph<'_>, group: usize) {
        let table = self.reach.table;
        let destinations = self.sources(|s| table.group(s) == group);
        if destinations.is_empty() {
            return;
        }
        let vias = if self.reach.nonminimal {
            table.groups()
        } else {
            0
        };
        let shared: Vec<Option<Vec<Step>>> = (0..vias)
            .map(|via| self.detour(graph, via, group, None))
            .collect();
        for destination in destinations.iter().map(|d| d.router) {
            let mut starts = self.sources(|_| true);
            for (via, arrivals) in shared.iter().enumerate() {
                match arrivals {
                    Some(arrivals) => starts.extend_from_slice(arrivals),
                    None => starts.extend(
                        self.detour(graph, via, group, Some(destination))
                            .expect("a leg walked for one destination is never refused"),
                    ),
                }
            }
            self.walk_to(graph, destination, starts);
        }
    }

    /// Walks the leg toward intermediate group `via` of the routes to group `group` (from
    /// every router with hosts outside both), adding its dependencies, and returns the packets
    /// as they arrive in `via`. With `stop` a packet at that router has arrived (it is the
    /// destination); without, a leg that passes a router with hosts of `group` is refused
    /// (`None`), since a packet for that router would stop there.
    fn detour(
        &mut self,
        graph: &mut Graph<'_>,
        via: usize,
        group: usize,
        stop: Option<usize>,
    ) -> Option<Vec<Step>> {
        let table = self.reach.table;
        self.followed_detour.clear();
        let mut stack = self.sources(|s| table.group(s) != group && table.group(s) != via);
        let mut arrivals = Vec::new();
        while let Some(step) = stack.pop() {
            if Some(step.router) == stop {
                continue;
            }
            if table.group(step.router) == via {
                arrivals.push(step);
                continue;
            }
            if stop.is_none() && self.has_hosts[step.router] && table.group(step.router) == group {
                return None;
            }
            let set = table.toward_group(step.router, via);
            self.follow(graph, step, set, true, &mut stack);
        }
        Some(arrivals)
    }

    /// Walks the routes to `destination` from `starts`, each channel followed once.
    fn walk_to(&mut self, graph: &mut Graph<'_>, destination: usize, starts: Vec<Step>) {
        let table = self.reach.table;
        self.followed.clear();
        let mut stack = starts;
        while let Some(step) = stack.pop() {
            if step.router == destination {
                continue;
            }
            let set = table.toward_switch(step.router, destination);
            self.follow(graph, step, set, false, &mut stack);
        }
    }

    /// The ports `step` may leave by toward candidate set `set`: the set's, and with local
    /// detours the ones [`local_misroute`] allows, as the router picks them.
    fn ports(&mut self, step: Step, set: usize) -> Vec<usize> {
        let table = self.reach.table;
        let minimal = table.ports(set);
        let mut ports = std::mem::take(&mut self.ports);
        ports.clear();
        let rule = self.reach.local_misroutes;
        let input = step.arrived.map_or(usize::MAX, |(input, _)| input);
        let previous = local_misroute::previous_hop(rule, table, step.router, input);
        let router = step.router;
        ports.extend(local_misroute::allowed_minimal(
            rule, table, router, previous, minimal,
        ));
        if previous.is_none() {
            let detours = self.detours[set].get_or_insert_with(|| {
                local_misroute::detours(rule, table, router, None, minimal)
                    .map(|port| port as u16)
                    .collect()
            });
            ports.extend(detours.iter().map(|&port| port as usize));
        }
        ports
    }

    /// Takes `step` out of its router by each port it may take toward candidate set `set`,
    /// adding the dependencies, and pushes the packet at the next router onto `stack` for each
    /// channel not yet followed (toward the intermediate group while `heading`).
    fn follow(
        &mut self,
        graph: &mut Graph<'_>,
        step: Step,
        set: usize,
        heading: bool,
        stack: &mut Vec<Step>,
    ) {
        let topology = graph.topology;
        let ports = self.ports(step, set);
        for &port in &ports {
            let out_class = PortClass::of(topology, step.router, port);
            let in_vc = step.arrived.map_or(0, |(_, vc)| vc);
            let vc = self.rule.out_vc(Hop {
                in_class: step.in_class,
                in_vc,
                out_class,
                toward_intermediate: heading,
                nonminimal_routing: self.reach.nonminimal,
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
            let followed = match heading {
                true => &mut self.followed_detour,
                false => &mut self.followed,
            };
            if followed.insert(graph.channel_index(step.router, port, vc)) {
                stack.push(Step {
                    router: switch,
                    arrived: Some((in_port, vc)),
                    in_class: out_class,
                });
            }
        }
        self.ports = ports;
    }
}

/// A cycle of the graph, if it has one.
fn find_cycle(graph: &Graph<'_>) -> Option<Vec<Channel>> {
    let topology = graph.topology;
    let mut channels = Vec::with_capacity(graph.channels());
    for router in 0..topology.switches() {
        for port in 0..topology.switch_ports(router) {
            channels.extend((0..graph.vcs as u16).map(|vc| Channel { router, port, vc }));
        }
    }
    let index = |c: Channel| graph.channel_index(c.router, c.port, c.vc);
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
    use local_misroute::TurnRule;

    fn dragonfly() -> Topology {
        Topology::dragonfly(2, 4, 2, 9).unwrap()
    }

    fn run(t: &Topology, rule: VcRule, vcs: u16, nonminimal: bool) -> Result<(), DependencyError> {
        let table = RouteTable::new(t).unwrap();
        let reach = RoutingReach {
            table: &table,
            nonminimal,
            local_misroutes: TurnRule::Off,
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
        let t = Topology::small_clique(4);
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

    /// The graph as a walk per (destination, intermediate group) builds it, each walk from
    /// every router with hosts on its own: the specification [`check`]'s walks must meet.
    fn graph_walked_per_destination_and_group<'a>(
        t: &'a Topology,
        reach: &RoutingReach<'_>,
        rule: VcRule,
        vcs: u16,
    ) -> Graph<'a> {
        let mut graph = Graph::new(t, vcs as usize);
        let mut walker = Walker::new(reach, rule, &graph);
        let table = reach.table;
        let vias: Vec<Option<usize>> = std::iter::once(None)
            .chain((0..table.groups()).filter(|_| reach.nonminimal).map(Some))
            .collect();
        let destinations: Vec<usize> = (0..t.switches()).filter(|&d| walker.has_hosts[d]).collect();
        for destination in destinations {
            for &via in &vias {
                let detours = |s: usize| {
                    via.is_none_or(|g| {
                        table.group(s) != table.group(destination) && g != table.group(s)
                    })
                };
                let mut seen = std::collections::HashSet::new();
                // Each packet with whether it still heads for the intermediate group.
                let mut stack: Vec<(Step, bool)> = walker
                    .sources(detours)
                    .into_iter()
                    .map(|step| (step, via.is_some()))
                    .collect();
                while let Some((step, toward_intermediate)) = stack.pop() {
                    if step.router == destination {
                        continue;
                    }
                    let heading =
                        toward_intermediate && via.is_some_and(|g| table.group(step.router) != g);
                    let set = match via {
                        Some(g) if heading => table.toward_group(step.router, g),
                        _ => table.toward_switch(step.router, destination),
                    };
                    for port in walker.ports(step, set) {
                        let out_class = PortClass::of(t, step.router, port);
                        let vc = rule.out_vc(Hop {
                            in_class: step.in_class,
                            in_vc: step.arrived.map_or(0, |(_, vc)| vc),
                            out_class,
                            toward_intermediate: heading,
                            nonminimal_routing: reach.nonminimal,
                        });
                        graph.needed = graph.needed.max(vc + 1);
                        if vc >= vcs {
                            continue;
                        }
                        if let Some(input) = step.arrived {
                            graph.add(step.router, input, (port, vc));
                        }
                        let Some(Attachment::SwitchPort { switch, port: p }) =
                            t.peer(step.router, port)
                        else {
                            continue;
                        };
                        if seen.insert((step.router, port, vc, heading)) {
                            let next = Step {
                                router: switch,
                                arrived: Some((p, vc)),
                                in_class: out_class,
                            };
                            stack.push((next, heading));
                        }
                    }
                }
            }
        }
        graph
    }

    /// Three groups in a line (0 – 1 – 2), a host on each router: a packet from group 0
    /// heading for group 2 passes group 1's router, where a packet for that router stops.
    fn groups_in_a_line() -> Topology {
        let text = "switch a ports=3 group=0\nswitch b ports=3 group=1\nswitch c ports=3 group=2\n\
                    host ha\nhost hb\nhost hc\ncable ha a:0\ncable hb b:0\ncable hc c:0\n\
                    cable a:1 b:1\ncable b:2 c:2\n";
        Topology::from_file_text(text).unwrap()
    }

    /// The walks per destination (every intermediate group at once, the leg toward an
    /// intermediate group shared by a destination group) build the same graph, bit for bit,
    /// and find the same VC count as a walk per (destination, intermediate group), on
    /// Dragonflies, Cliques and a fat-tree, minimal and not, with local detours and without,
    /// under every rule.
    #[test]
    fn the_walks_build_the_graph_a_walk_per_destination_and_group_builds() {
        use crate::blocks::topology::{Clique, SpareLocalPorts};
        // Four TiNs a pod, two links a pair: 6 local ports, 8 with two spare.
        let clique = |pods, local_ports, spare_local| {
            let global_ports = 2;
            let shape = Clique {
                pods,
                tins_per_pod: 4,
                hosts_per_tin: 2,
                local_ports,
                global_ports,
                spare_local,
            };
            Topology::clique(shape).unwrap()
        };
        let topologies = [
            dragonfly(),
            clique(4, 6, SpareLocalPorts::Unused),
            clique(3, 8, SpareLocalPorts::Partner),
            Topology::fat_tree(4).unwrap(),
            groups_in_a_line(),
        ];
        let rules = [
            VcRule::Single,
            VcRule::DragonflyDateline,
            VcRule::GlobalLocalIncrement,
        ];
        for (i, t) in topologies.iter().enumerate() {
            let table = RouteTable::new(t).unwrap();
            let reaches = [false, true].into_iter().flat_map(|nonminimal| {
                [
                    TurnRule::Off,
                    TurnRule::ParitySign,
                    TurnRule::UpDown,
                    TurnRule::Any,
                ]
                .map(|local_misroutes| RoutingReach {
                    table: &table,
                    nonminimal,
                    local_misroutes,
                })
            });
            for reach in reaches {
                let (nonminimal, local) = (reach.nonminimal, reach.local_misroutes);
                for rule in rules {
                    let expected = graph_walked_per_destination_and_group(t, &reach, rule, 3);
                    let mut graph = Graph::new(t, 3);
                    let mut walker = Walker::new(&reach, rule, &graph);
                    for group in 0..table.groups() {
                        walker.walk_into_group(&mut graph, group);
                    }
                    let case =
                        format!("topology {i}, non-minimal {nonminimal}, {local:?}, {rule:?}");
                    assert_eq!(graph.turns, expected.turns, "{case}");
                    assert_eq!(graph.needed, expected.needed, "{case}");
                    assert!(graph.turns.iter().flatten().any(|&w| w != 0), "{case}");
                }
            }
        }
    }

    /// In the line of groups the leg from group 0 toward group 2 passes group 1's router:
    /// it is not shared by group 1's destinations but walked for each, and the packet for
    /// that router stops there (no dependency onward from it toward group 2).
    #[test]
    fn a_leg_through_the_destination_group_is_walked_per_destination() {
        let t = groups_in_a_line();
        let table = RouteTable::new(&t).unwrap();
        let reach = RoutingReach {
            table: &table,
            nonminimal: true,
            local_misroutes: TurnRule::Off,
        };
        let mut graph = Graph::new(&t, 3);
        let mut walker = Walker::new(&reach, VcRule::Single, &graph);
        assert!(walker.detour(&mut graph, 2, 1, None).is_none());
        assert!(walker.detour(&mut graph, 2, 0, None).is_some());
        let arrivals = walker.detour(&mut graph, 2, 1, Some(1)).unwrap();
        assert!(
            arrivals.is_empty(),
            "the packet stops at router b, its destination"
        );
    }

    /// Local detours on Aquila's Clique (§3.2's turn rules within a pod): under parity-sign or
    /// up*/down* they
    /// need no VC more than the routes without them and leave the graph acyclic; with no turn
    /// rule the check finds a cycle, and it runs through the local channels of one pod on one
    /// VC.
    #[test]
    fn local_detours_need_the_turn_rule_and_no_extra_vc() {
        let t = Topology::small_clique(4);
        let table = RouteTable::new(&t).unwrap();
        let check_with = |nonminimal, local_misroutes, vcs| {
            let reach = RoutingReach {
                table: &table,
                nonminimal,
                local_misroutes,
            };
            check(&t, &reach, VcRule::GlobalLocalIncrement, vcs, true)
        };
        for rule in [TurnRule::ParitySign, TurnRule::UpDown] {
            assert_eq!(check_with(false, rule, 2), Ok(()), "{rule:?}");
            assert_eq!(check_with(true, rule, 3), Ok(()), "{rule:?}");
        }
        assert_eq!(
            check_with(true, TurnRule::UpDown, 2),
            Err(DependencyError::TooFewVcs { needed: 3 })
        );
        let Err(DependencyError::Cycle(cycle)) = check_with(true, TurnRule::Any, 3) else {
            panic!("detours with no turn rule must close a cycle");
        };
        let pod = table.group(cycle[0].router);
        for c in &cycle {
            assert_eq!(table.group(c.router), pod, "{cycle:?}");
            assert_eq!(c.vc, cycle[0].vc, "{cycle:?}");
            assert_eq!(PortClass::of(&t, c.router, c.port), PortClass::Local);
        }
    }

    /// Up/down routing on a fat-tree cannot close a cycle: one VC passes.
    #[test]
    fn a_fat_tree_needs_no_extra_vc() {
        let t = Topology::fat_tree(4).unwrap();
        assert_eq!(run(&t, VcRule::Single, 1, false), Ok(()));
    }
}
