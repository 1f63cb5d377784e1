//! Virtual-channel assignment by routing phase, chosen by name: which VC a packet takes on
//! its next channel, from the kinds of the channels it arrives on and leaves by, the VC it
//! arrives on and whether it is still on its way to an intermediate group.
//!
//! Each rule makes the VC index non-decreasing along every route and strictly increasing
//! where a route could close a cycle, so the channel dependency graph is acyclic when enough
//! VCs exist (Dally and Towles, "Principles and Practices of Interconnection Networks",
//! §14.1–14.3); [`super::dependency`] checks that for the topology and routing at hand.

use crate::blocks::topology::{Attachment, Topology};

/// What a router port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortClass {
    /// A host (injection or ejection channel).
    Terminal,
    /// A router of the same group.
    Local,
    /// A router of another group (a Dragonfly's global channel).
    Global,
}

impl PortClass {
    /// The class of port `port` of switch `switch` of `topology` (an uncabled port counts as
    /// a host's: nothing routes through it).
    pub fn of(topology: &Topology, switch: usize, port: usize) -> PortClass {
        match topology.peer(switch, port) {
            Some(Attachment::SwitchPort { switch: other, .. }) => {
                if topology.group(other) == topology.group(switch) {
                    PortClass::Local
                } else {
                    PortClass::Global
                }
            }
            _ => PortClass::Terminal,
        }
    }
}

/// A VC assignment rule, by name (`vc.assignment`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcRule {
    /// Every hop on VC 0: no protection (the dependency check refuses it where routes can
    /// close a cycle).
    Single,
    /// The Dragonfly dateline of Kim, Dally, Scott and Abts ("Technology-Driven,
    /// Highly-Scalable Dragonfly Topology", ISCA 2008, §4.1), as their simulator assigns it:
    /// on the minimal part of a route, VC `b` before the global channel and VC `b + 1` from
    /// the global channel on; the non-minimal part (toward a Valiant or UGAL intermediate
    /// group) on VC 0, with `b = 1` under routing that may go non-minimal (3 VCs) and `b = 0`
    /// under minimal routing (2 VCs).
    DragonflyDateline,
    /// Aquila's rule (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
    /// networks", NSDI '22, §3.2, after Kim et al.): the VC is incremented on every
    /// global → local transition, so a global channel keeps the VC of the hops before it.
    /// A group crossed without a local hop (global → global: the gateway of an intermediate
    /// group holds the global channel onward) counts as such a transition too, our reading:
    /// the VC counts the groups entered, and without it the global channels of three groups
    /// close a cycle on one VC.
    GlobalLocalIncrement,
}

/// One hop, as a VC rule sees it.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    /// The channel the packet arrived on.
    pub in_class: PortClass,
    /// The VC it arrived on.
    pub in_vc: u16,
    /// The channel it leaves by.
    pub out_class: PortClass,
    /// True while it heads for an intermediate group (the non-minimal part of its route).
    pub toward_intermediate: bool,
    /// The routing may send packets non-minimally.
    pub nonminimal_routing: bool,
}

impl VcRule {
    /// Every rule, by name, with what it does.
    pub const NAMED: &'static [(&'static str, VcRule, &'static str)] = &[
        ("single", VcRule::Single, "every hop on VC 0 (no deadlock protection)"),
        (
            "dragonfly_dateline",
            VcRule::DragonflyDateline,
            "Kim et al. (ISCA 2008): a VC per routing phase, the next from the global channel on (2 VCs minimal, 3 non-minimal)",
        ),
        (
            "global_local_increment",
            VcRule::GlobalLocalIncrement,
            "Aquila (NSDI '22, §3.2): the VC increments on every global-to-local transition (and global-to-global)",
        ),
    ];

    /// The rule called `name`.
    pub fn by_name(name: &str) -> Option<VcRule> {
        Self::NAMED
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|&(_, rule, _)| rule)
    }

    /// The rule's name.
    pub fn name(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(_, rule, _)| *rule == self)
            .map(|&(n, _, _)| n)
            .expect("every rule is named")
    }

    /// The VC the packet takes on its outgoing channel (an ejection channel to a host takes
    /// any VC: the caller does not ask).
    pub fn out_vc(self, hop: Hop) -> u16 {
        let from_host = hop.in_class == PortClass::Terminal;
        match self {
            VcRule::Single => 0,
            VcRule::DragonflyDateline => {
                if hop.toward_intermediate {
                    return 0;
                }
                let base = hop.nonminimal_routing as u16;
                let crossed = !from_host && hop.in_vc > base;
                base + (crossed || hop.out_class == PortClass::Global) as u16
            }
            VcRule::GlobalLocalIncrement => {
                if from_host {
                    return 0;
                }
                let entered_group = hop.in_class == PortClass::Global;
                hop.in_vc + entered_group as u16
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PortClass::*;

    /// Walks a route of channel kinds (after the injection channel) and returns the VC of
    /// each, with `intermediate_hops` hops toward an intermediate group first.
    fn walk(rule: VcRule, route: &[PortClass], intermediate_hops: usize, nonmin: bool) -> Vec<u16> {
        let (mut in_class, mut in_vc) = (Terminal, 0);
        route
            .iter()
            .enumerate()
            .map(|(i, &out_class)| {
                let hop = Hop {
                    in_class,
                    in_vc,
                    out_class,
                    toward_intermediate: i < intermediate_hops,
                    nonminimal_routing: nonmin,
                };
                in_vc = rule.out_vc(hop);
                in_class = out_class;
                in_vc
            })
            .collect()
    }

    /// Kim et al.'s phases: minimal L G L on VCs 0 1 1; under UGAL a minimal route takes
    /// 1 2 2 and a Valiant one L G (to the intermediate group) on 0 0, then L G L on 1 2 2.
    #[test]
    fn the_dateline_gives_each_phase_its_vc() {
        let rule = VcRule::DragonflyDateline;
        assert_eq!(walk(rule, &[Local, Global, Local], 0, false), [0, 1, 1]);
        assert_eq!(walk(rule, &[Local, Global, Local], 0, true), [1, 2, 2]);
        let valiant = [Local, Global, Local, Global, Local];
        assert_eq!(walk(rule, &valiant, 2, true), [0, 0, 1, 2, 2]);
        assert_eq!(walk(rule, &[Global, Global], 1, true), [0, 2]);
    }

    /// Aquila's worst route, L G L G L: VCs 0 0 1 1 2 (global hops on the VC of the segment
    /// before them); an intermediate group crossed without a local hop increments too.
    #[test]
    fn aquila_increments_on_each_global_to_local_turn() {
        let rule = VcRule::GlobalLocalIncrement;
        let route = [Local, Global, Local, Global, Local];
        assert_eq!(walk(rule, &route, 2, true), [0, 0, 1, 1, 2]);
        assert_eq!(walk(rule, &[Global, Global, Local], 1, true), [0, 1, 2]);
        assert_eq!(walk(rule, &[Local, Global, Global], 2, true), [0, 0, 1]);
        assert_eq!(walk(VcRule::Single, &route, 2, true), [0; 5]);
    }

    #[test]
    fn every_rule_is_found_by_its_name() {
        for &(name, rule, _) in VcRule::NAMED {
            assert_eq!(VcRule::by_name(name), Some(rule));
            assert_eq!(rule.name(), name);
        }
        assert_eq!(VcRule::by_name("dateline"), None);
    }
}
