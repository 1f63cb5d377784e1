//! Routing tables: every equal-cost next hop per (switch, destination switch), and per (switch,
//! group) for non-minimal routes through an intermediate group, built by one shortest-path
//! search from each destination over the switch graph (no search per pair, no allocation per
//! lookup).
//!
//! A cable between two groups costs [`GLOBAL_COST`] local hops, so minimal routes cross as few
//! groups as possible: on a Dragonfly a minimal route is local-global-local (Kim et al. 2008),
//! never two global hops that happen to be as short in hops; on a fat-tree every up-down route
//! crosses the same number of tiers, so all of them stay candidates.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::blocks::topology::{Attachment, Topology, TopologyError};

/// Hop count of a switch that cannot reach the destination.
const UNREACHABLE: u8 = u8::MAX;
/// Cost of a cable between switches of different groups, in cables inside a group.
pub const GLOBAL_COST: u32 = 64;
/// Cost of a switch that cannot reach the destination.
const FAR: u32 = u32::MAX;

/// A set of candidate output ports of one switch, as a range of [`RouteTable::ports`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CandidateSet {
    start: u32,
    len: u16,
}

/// Minimal candidates toward every switch and every group, with hop counts.
pub struct RouteTable {
    switches: usize,
    groups: usize,
    /// Switch and port each terminal is cabled to.
    terminal_at: Vec<(u16, u16)>,
    group_of: Vec<u16>,
    /// `hops[s * switches + d]`: switch-to-switch hops from `s` to `d`.
    hops: Vec<u8>,
    /// `to_switch[s * switches + d]`: index into `sets` of the outputs of `s` one hop closer to `d`.
    to_switch: Vec<u32>,
    /// `to_group[s * groups + g]`: outputs of `s` one hop closer to the nearest switch of `g`.
    to_group: Vec<u32>,
    /// `group_hops[s * groups + g]`: hops from `s` to the nearest switch of group `g`.
    group_hops: Vec<u8>,
    /// `from_group_hops[g * switches + d]`: fewest hops from a switch of `g` to `d`.
    from_group_hops: Vec<u8>,
    sets: Vec<CandidateSet>,
    ports: Vec<u16>,
    /// `port_base[s] + p`: where port `p` of switch `s` is in `next_switch`.
    port_base: Vec<u32>,
    /// The switch each switch port is cabled to ([`NOT_A_SWITCH`] for a terminal or nothing).
    next_switch: Vec<u16>,
    /// No switch has failed: every switch reaches every other.
    complete: bool,
}

/// [`RouteTable::next_switch`] of a port cabled to a terminal, or to nothing.
pub const NOT_A_SWITCH: usize = u16::MAX as usize;

/// The (switch, port) each terminal is cabled to.
fn terminal_ports(topology: &Topology) -> Result<Vec<(u16, u16)>, TopologyError> {
    (0..topology.endpoints())
        .map(|t| {
            let (s, p) = topology
                .endpoint_port(t)
                .ok_or(TopologyError::Unreachable { src: t, dst: t })?;
            Ok((s as u16, p as u16))
        })
        .collect()
}

/// The cables between switches, per switch: its port, the neighbour, and the cost (a global
/// cable between groups costs more).
fn switch_cables(topology: &Topology) -> Vec<Vec<Cable>> {
    (0..topology.switches())
        .map(|s| {
            (0..topology.switch_ports(s))
                .filter_map(|port| match topology.peer(s, port) {
                    Some(Attachment::SwitchPort { switch, .. }) => Some(Cable {
                        port: port as u16,
                        next: switch,
                        cost: if topology.group(switch) == topology.group(s) {
                            1
                        } else {
                            GLOBAL_COST
                        },
                    }),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Where each switch's ports start in one flat list, and the switch each port is cabled to
/// ([`NOT_A_SWITCH`] for a terminal or nothing).
fn port_map(topology: &Topology) -> (Vec<u32>, Vec<u16>) {
    let mut port_base = Vec::with_capacity(topology.switches());
    let mut next_switch = Vec::new();
    for s in 0..topology.switches() {
        port_base.push(next_switch.len() as u32);
        next_switch.extend((0..topology.switch_ports(s)).map(
            |port| match topology.peer(s, port) {
                Some(Attachment::SwitchPort { switch, .. }) => switch as u16,
                _ => NOT_A_SWITCH as u16,
            },
        ));
    }
    (port_base, next_switch)
}

impl RouteTable {
    /// Builds the tables of `topology`; every terminal must reach every other.
    pub fn new(topology: &Topology) -> Result<RouteTable, TopologyError> {
        RouteTable::without_switches(topology, &[])
    }

    /// Builds the tables of `topology` whose switches `failed` have failed: every terminal
    /// not cabled to one of them must reach every other such terminal; the failed switches'
    /// terminals are unreachable.
    pub fn without_switches(
        topology: &Topology,
        failed: &[usize],
    ) -> Result<RouteTable, TopologyError> {
        let switches = topology.switches();
        let groups = topology.groups().max(1);
        let (port_base, next_switch) = port_map(topology);
        let mut table = RouteTable {
            switches,
            groups,
            terminal_at: terminal_ports(topology)?,
            group_of: (0..switches).map(|s| topology.group(s) as u16).collect(),
            hops: vec![UNREACHABLE; switches * switches],
            to_switch: vec![0; switches * switches],
            to_group: vec![0; switches * groups],
            group_hops: vec![UNREACHABLE; switches * groups],
            from_group_hops: vec![UNREACHABLE; groups * switches],
            sets: Vec::new(),
            ports: Vec::new(),
            port_base,
            next_switch,
            complete: failed.is_empty(),
        };
        table.fill(&switch_cables(topology));
        table.check_reachable(failed)?;
        Ok(table)
    }

    /// Fills the hop counts and candidate sets over the cables `links` between switches.
    fn fill(&mut self, links: &[Vec<Cable>]) {
        let (switches, groups) = (self.switches, self.groups);
        let mut builder = SetBuilder::default();
        let mut search = Search::new(switches);
        // Destination-major: one search per destination switch, then one per group.
        let mut per_destination: Vec<u32> = vec![FAR; switches * switches];
        for d in 0..switches {
            search.run(links, [d].into_iter());
            per_destination[d * switches..(d + 1) * switches].copy_from_slice(&search.cost);
            for s in 0..switches {
                self.hops[s * switches + d] = search.hops[s];
            }
        }
        let mut per_group: Vec<u32> = vec![FAR; groups * switches];
        for g in 0..groups {
            let members = (0..switches).filter(|&s| self.group_of[s] as usize == g);
            search.run(links, members);
            per_group[g * switches..(g + 1) * switches].copy_from_slice(&search.cost);
            for s in 0..switches {
                self.group_hops[s * groups + g] = search.hops[s];
            }
        }
        for s in 0..switches {
            builder.start_switch();
            for d in 0..switches {
                let cost = &per_destination[d * switches..(d + 1) * switches];
                self.to_switch[s * switches + d] = builder.set(&links[s], cost[s], cost, self);
            }
            for g in 0..groups {
                let cost = &per_group[g * switches..(g + 1) * switches];
                self.to_group[s * groups + g] = builder.set(&links[s], cost[s], cost, self);
            }
        }
        for g in 0..groups {
            for d in 0..switches {
                self.from_group_hops[g * switches + d] = (0..switches)
                    .filter(|&s| self.group_of[s] as usize == g)
                    .map(|s| self.hops[s * switches + d])
                    .min()
                    .unwrap_or(UNREACHABLE);
            }
        }
    }

    /// Every terminal reaches every other, but those of switches `failed`.
    fn check_reachable(&self, failed: &[usize]) -> Result<(), TopologyError> {
        let live = |&(_, &(s, _)): &(usize, &(u16, u16))| !failed.contains(&(s as usize));
        for (src, &(s, _)) in self.terminal_at.iter().enumerate().filter(live) {
            for (dst, &(d, _)) in self.terminal_at.iter().enumerate().filter(live) {
                if self.hops[s as usize * self.switches + d as usize] == UNREACHABLE {
                    return Err(TopologyError::Unreachable { src, dst });
                }
            }
        }
        Ok(())
    }

    /// Number of terminals.
    pub fn terminals(&self) -> usize {
        self.terminal_at.len()
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.switches
    }

    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Switch and port terminal `terminal` is cabled to.
    #[inline]
    pub fn terminal_at(&self, terminal: usize) -> (usize, usize) {
        let (s, p) = self.terminal_at[terminal];
        (s as usize, p as usize)
    }

    /// Group of `switch`.
    #[inline]
    pub fn group(&self, switch: usize) -> usize {
        self.group_of[switch] as usize
    }

    /// True if every switch reaches every other (no switch has failed).
    #[inline]
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// True if switch `from` reaches switch `to`.
    #[inline]
    pub fn reaches(&self, from: usize, to: usize) -> bool {
        self.hops[from * self.switches + to] != UNREACHABLE
    }

    /// Switch hops from `from` to `to`.
    #[inline]
    pub fn hops(&self, from: usize, to: usize) -> u32 {
        self.hops[from * self.switches + to] as u32
    }

    /// Hops from `from` to the nearest switch of `group`, then on to switch `to`.
    #[inline]
    pub fn hops_via_group(&self, from: usize, group: usize, to: usize) -> u32 {
        self.group_hops[from * self.groups + group] as u32
            + self.from_group_hops[group * self.switches + to] as u32
    }

    /// Outputs of `switch` on a shortest path to switch `to` (index of the set).
    #[inline]
    pub fn toward_switch(&self, switch: usize, to: usize) -> usize {
        self.to_switch[switch * self.switches + to] as usize
    }

    /// Outputs of `switch` on a shortest path to group `group` (index of the set).
    #[inline]
    pub fn toward_group(&self, switch: usize, group: usize) -> usize {
        self.to_group[switch * self.groups + group] as usize
    }

    /// Ports of `switch`.
    pub fn switch_ports(&self, switch: usize) -> usize {
        let end = self
            .port_base
            .get(switch + 1)
            .map_or(self.next_switch.len(), |&base| base as usize);
        end - self.port_base[switch] as usize
    }

    /// The switch cabled to port `port` of `switch`, or [`NOT_A_SWITCH`].
    pub fn next_switch(&self, switch: usize, port: usize) -> usize {
        self.next_switch[self.port_base[switch] as usize + port] as usize
    }

    /// Number of distinct candidate sets (each belongs to one switch).
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// Where set `set` lies in the list of all sets' ports.
    #[inline]
    pub fn set_range(&self, set: usize) -> std::ops::Range<usize> {
        let CandidateSet { start, len } = self.sets[set];
        start as usize..start as usize + len as usize
    }

    /// The candidate ports of set `set`.
    #[inline]
    pub fn ports(&self, set: usize) -> &[u16] {
        &self.ports[self.set_range(set)]
    }
}

/// A cable from a switch: its port, the switch at the far end, and its routing cost.
#[derive(Clone, Copy)]
struct Cable {
    port: u16,
    next: usize,
    cost: u32,
}

/// Shortest paths (Dijkstra) over switch cables toward a set of sources, reusing its buffers.
struct Search {
    /// Cost from each switch to the nearest source.
    cost: Vec<u32>,
    /// Fewest hops among each switch's cheapest paths.
    hops: Vec<u8>,
    heap: BinaryHeap<Reverse<(u32, usize)>>,
}

impl Search {
    fn new(switches: usize) -> Search {
        Search {
            cost: vec![FAR; switches],
            hops: vec![UNREACHABLE; switches],
            heap: BinaryHeap::with_capacity(switches),
        }
    }

    /// Cables are full duplex with the same cost both ways, so searching from the sources
    /// gives every switch's cost toward them.
    fn run(&mut self, links: &[Vec<Cable>], sources: impl Iterator<Item = usize>) {
        self.cost.fill(FAR);
        self.hops.fill(UNREACHABLE);
        self.heap.clear();
        for s in sources {
            self.cost[s] = 0;
            self.hops[s] = 0;
            self.heap.push(Reverse((0, s)));
        }
        while let Some(Reverse((cost, s))) = self.heap.pop() {
            if cost > self.cost[s] {
                continue;
            }
            for cable in &links[s] {
                let (next, via) = (cable.next, cost + cable.cost);
                let hops = self.hops[s].saturating_add(1);
                if via < self.cost[next] {
                    self.cost[next] = via;
                    self.hops[next] = hops;
                    self.heap.push(Reverse((via, next)));
                } else if via == self.cost[next] {
                    self.hops[next] = self.hops[next].min(hops);
                }
            }
        }
    }
}

/// Interns candidate sets per switch, so spraying keeps one pointer per distinct set.
#[derive(Default)]
struct SetBuilder {
    scratch: Vec<u16>,
    known: HashMap<Vec<u16>, u32>,
}

impl SetBuilder {
    fn start_switch(&mut self) {
        self.known.clear();
    }

    /// The set of this switch's outputs on a cheapest path: `here` is the switch's own cost
    /// (0 at the destination: an empty set).
    fn set(&mut self, links: &[Cable], here: u32, cost: &[u32], table: &mut RouteTable) -> u32 {
        self.scratch.clear();
        if here != 0 && here != FAR {
            let closer = links
                .iter()
                .filter(|c| cost[c.next] != FAR && cost[c.next] + c.cost == here);
            self.scratch.extend(closer.map(|c| c.port));
        }
        if let Some(&set) = self.known.get(self.scratch.as_slice()) {
            return set;
        }
        let set = table.sets.len() as u32;
        table.sets.push(CandidateSet {
            start: table.ports.len() as u32,
            len: self.scratch.len() as u16,
        });
        table.ports.extend_from_slice(&self.scratch);
        self.known.insert(self.scratch.clone(), set);
        set
    }
}
