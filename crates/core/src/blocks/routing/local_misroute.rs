//! Local misroutes: a detour of two local hops inside a pod (or Dragonfly group), `from` →
//! `via` → `to`, where the minimal route takes one. Gibson et al. ("Aquila", NSDI '22, §3.2)
//! keep them deadlock-free with "turn rules similar to the parity-sign approach" of García et
//! al. ("Efficient routing mechanisms for Dragonfly networks", ICPP 2013: Restricted Local
//! Misrouting). Two rules are built, on switch numbers, each a set of allowed turns from one
//! local hop to the next:
//!
//! - **parity-sign** (García et al.'s rule as its authors' simulator, FOGSim, states it; we
//!   have not read the paper): a hop's sign is whether it goes to a higher number (+) or a
//!   lower one (−), its parity that of the numbers' difference. A hop − odd never follows a
//!   local hop, a hop − even may follow any, a hop + odd follows + or − odd, a hop + even
//!   follows + even or − odd. Ranking the channels by class (− odd, + even, + odd, − even),
//!   then + hops by their upper end rising and − even hops by their lower end falling, every
//!   allowed turn climbs the rank, so the local channels of one VC close no cycle, whatever
//!   the numbers. Between any two of a pod's 12 TiNs it leaves 4 to 10 detours.
//! - **up*/down*** (Schroeder et al., "Autonet", 1991): a local hop to a higher-numbered
//!   switch goes up, and no route turns down then up, so a detour is allowed unless `via` is
//!   below both ends. Lopsided: no detour between a pod's two highest TiNs.
//!
//! The build-time dependency check ([`crate::blocks::vc_router::dependency`]) does not rely on
//! either argument: it verifies the fabric at hand, walking the same functions the router calls.
//!
//! A cell may take one detour per group: it is offered where the cell arrived from a host or
//! another group and its minimal next hop is local; a cell that arrived by a local hop takes
//! the minimal hops the turn rule allows from there.

use serde::{Deserialize, Serialize};

use super::table::{RouteTable, NOT_A_SWITCH};
use crate::keys::Named;

/// Whether local detours are offered, and under which turn rule (`routing.local_misroutes`).
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TurnRule {
    /// No local detours: the router's own default (a router offers detours only when given a
    /// rule); the scenario key `routing.local_misroutes` defaults to `ParitySign`.
    #[default]
    #[serde(rename = "none")]
    Off,
    /// Detours under García et al.'s parity-sign rule on switch numbers.
    ParitySign,
    /// Detours under up*/down* on switch numbers.
    UpDown,
    /// Every detour, with no turn rule: on VC routers the dependency check (unless turned off)
    /// refuses it with its cycle named wherever a detour can close one (pods of three TiNs or
    /// more), as `vc.assignment = "single"` is refused, to show what the rule is for.
    Any,
}

impl Named for TurnRule {
    const ALL: &'static [Self] = &[Self::Off, Self::ParitySign, Self::UpDown, Self::Any];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Self::Off => ("none", "no local detours"),
            Self::ParitySign => (
                "parity_sign",
                "two-local-hop detours under the parity-sign rule (García et al.'s Restricted Local Misrouting)",
            ),
            Self::UpDown => (
                "up_down",
                "two-local-hop detours, never turning down then up in switch numbers (up*/down*)",
            ),
            Self::Any => (
                "any",
                "every two-local-hop detour, no turn rule (the dependency check finds its cycle)",
            ),
        }
    }
}

impl TurnRule {
    /// True if detours are offered.
    pub fn on(self) -> bool {
        self != TurnRule::Off
    }

    /// True if the local hops `from` → `via` → `to` are allowed (the rules in the module's
    /// doc).
    pub fn allows(self, from: usize, via: usize, to: usize) -> bool {
        let odd = |a: usize, b: usize| (a ^ b) & 1 == 1;
        match self {
            TurnRule::ParitySign if to < via => !odd(via, to),
            TurnRule::ParitySign if via < from => odd(from, via),
            TurnRule::ParitySign => !odd(from, via) || odd(via, to),
            TurnRule::UpDown => via > from.min(to),
            TurnRule::Off | TurnRule::Any => true,
        }
    }
}

/// The switch at the other end of `port` of `switch`, if it is of the same group.
pub fn local_peer(table: &RouteTable, switch: usize, port: usize) -> Option<usize> {
    let next = table.next_switch(switch, port);
    (next != NOT_A_SWITCH && table.group(next) == table.group(switch)).then_some(next)
}

/// The switch a cell at `switch` arrived from by a local hop through port `input` (`None`
/// if it came from a host, from another group, or by an unknown port), where `rule` offers
/// detours: what the turn rule and the offer of a detour depend on. `None` when it offers none.
pub fn previous_hop(
    rule: TurnRule,
    table: &RouteTable,
    switch: usize,
    input: usize,
) -> Option<usize> {
    if !rule.on() || input >= table.switch_ports(switch) {
        return None;
    }
    local_peer(table, switch, input)
}

/// True if a cell that arrived at `switch` from `previous` ([`previous_hop`]) may take minimal
/// candidate `port`: any port but a local one `rule` forbids.
pub fn minimal_allowed(
    rule: TurnRule,
    table: &RouteTable,
    switch: usize,
    previous: Option<usize>,
    port: usize,
) -> bool {
    let Some(from) = previous else {
        return true;
    };
    local_peer(table, switch, port).is_none_or(|to| rule.allows(from, switch, to))
}

/// The minimal candidates of `minimal` a cell from `previous` may take: those
/// [`minimal_allowed`], or every one if the rule allows none (a fabric whose failures left no
/// allowed hop; the dependency check walks that too).
pub fn allowed_minimal<'a>(
    rule: TurnRule,
    table: &'a RouteTable,
    switch: usize,
    previous: Option<usize>,
    minimal: &'a [u16],
) -> impl Iterator<Item = usize> + 'a {
    let allowed = move |p: usize| minimal_allowed(rule, table, switch, previous, p);
    let any = minimal.iter().any(|&p| allowed(p as usize));
    minimal
        .iter()
        .map(|&p| p as usize)
        .filter(move |&p| !any || allowed(p))
}

/// The local detours `rule` offers a cell at `switch` that arrived from `previous`
/// ([`previous_hop`]) toward the minimal candidates `minimal`: none if the rule is off or the
/// cell arrived by a local hop (one detour per group); else the switch's local ports to a
/// switch no minimal candidate leads to, from which a minimal candidate's local switch is an
/// allowed turn away (none unless some minimal candidate is local).
pub fn detours<'a>(
    rule: TurnRule,
    table: &'a RouteTable,
    switch: usize,
    previous: Option<usize>,
    minimal: &'a [u16],
) -> impl Iterator<Item = usize> + 'a {
    let onward = move || {
        minimal
            .iter()
            .filter_map(move |&p| local_peer(table, switch, p as usize))
    };
    let offered = rule.on() && previous.is_none() && onward().next().is_some();
    let ports = if offered {
        table.switch_ports(switch)
    } else {
        0
    };
    (0..ports).filter(move |&port| {
        let Some(via) = local_peer(table, switch, port) else {
            return false;
        };
        onward().all(|to| to != via) && onward().any(|to| rule.allows(switch, via, to))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Up*/down*: a detour may climb then descend, or go the same way twice, but never descend
    /// then climb.
    #[test]
    fn a_detour_may_not_turn_down_then_up() {
        let rule = TurnRule::UpDown;
        assert!(rule.allows(0, 3, 1), "up then down");
        assert!(rule.allows(0, 1, 3), "up then up");
        assert!(rule.allows(3, 2, 1), "down then down");
        assert!(!rule.allows(3, 0, 1), "down then up");
        assert!(!rule.allows(1, 0, 3), "down then up");
        assert!(TurnRule::Any.allows(3, 0, 1));
    }

    /// The channel rank of the module's doc under parity-sign: class, then the + hops by their
    /// upper end rising and the − even ones by their lower end falling.
    fn parity_sign_rank(from: usize, to: usize) -> (u8, i64) {
        let (odd, up) = ((from ^ to) & 1 == 1, to > from);
        match (up, odd) {
            (false, true) => (0, 0),
            (true, false) => (1, to as i64),
            (true, true) => (2, to as i64),
            (false, false) => (3, -(to as i64)),
        }
    }

    /// Parity-sign: every allowed turn climbs the rank, so no cycle of local channels can form,
    /// on a pod's 12 TiNs and on numbers with gaps (a group's switches need not be
    /// consecutive); and between any two TiNs of a pod of 12 it leaves 4 to 10 detours (no pair
    /// without one, as up*/down* leaves TiNs 10 and 11), 700 in all against up*/down*'s 880.
    #[test]
    fn parity_sign_turns_climb_the_rank_and_leave_every_pair_a_detour() {
        let rule = TurnRule::ParitySign;
        for numbers in [
            (0..12).collect::<Vec<usize>>(),
            vec![3, 4, 8, 11, 17, 20, 25],
        ] {
            for &from in &numbers {
                for &via in &numbers {
                    for &to in &numbers {
                        if from == via || via == to || from == to || !rule.allows(from, via, to) {
                            continue;
                        }
                        assert!(
                            parity_sign_rank(from, via) < parity_sign_rank(via, to),
                            "{from} -> {via} -> {to}"
                        );
                    }
                }
            }
        }
        let detours = |rule: TurnRule, from: usize, to: usize| {
            (0..12)
                .filter(|&via| via != from && via != to && rule.allows(from, via, to))
                .count()
        };
        let pairs = || (0..12).flat_map(|a| (0..12).filter(move |&b| b != a).map(move |b| (a, b)));
        let counts: Vec<usize> = pairs().map(|(a, b)| detours(rule, a, b)).collect();
        assert_eq!(counts.iter().min(), Some(&4));
        assert_eq!(counts.iter().max(), Some(&10));
        assert_eq!(counts.iter().sum::<usize>(), 700);
        assert_eq!(detours(TurnRule::UpDown, 10, 11), 0);
        assert_eq!(
            pairs()
                .map(|(a, b)| detours(TurnRule::UpDown, a, b))
                .sum::<usize>(),
            880
        );
        assert!(!rule.allows(4, 2, 3), "- even then +");
        assert!(rule.allows(3, 2, 4), "- odd then + even");
        assert!(!rule.allows(0, 1, 3), "+ odd then + even");
        assert!(rule.allows(1, 0, 3), "- odd then + odd");
        assert!(
            !rule.allows(0, 2, 1),
            "a - odd hop never follows a local hop"
        );
    }
}
