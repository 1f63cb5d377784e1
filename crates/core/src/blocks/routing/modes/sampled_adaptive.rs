//! Aquila's routing modes (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
//! networks", NSDI '22, §3.2): per cell and per hop, a switch samples two of the eight minimal
//! routes its tables supply and three of 24 non-minimal candidates, and takes the one with the
//! lowest weighted output-queue depth, the comparison favouring minimal routes (locally adaptive
//! routing, Kim et al. ISCA 2008; sampling instead of a 24-way compare avoids flocking). The four
//! principal modes constrain it: Fully Adaptive (both lists), Minimal Adaptive (minimal only),
//! Deterministic and Minimal Deterministic (a hash of source and destination picks the route).
//!
//! What the paper leaves open, as we read it (`docs/validation/aquila.md`):
//! - the eight minimal slots are the table's minimal next hops toward the destination, repeated
//!   to fill eight slots; the 24 non-minimal slots are this switch's global ports to pods other
//!   than the source's and destination's, repeated likewise (a misroute through an intermediate
//!   pod, as Valiant's); slots are sampled without replacement;
//! - non-minimal candidates are offered at every hop while the cell is still in its source pod
//!   (so at most once: a misroute leaves the pod); a cell to its own pod stays minimal;
//! - a candidate's cost is its output queue in cells times its class's weight, plus a bias on
//!   non-minimal ones; the lowest wins, minimal candidates first among equals. On a VC router
//!   the queue is that of the VC the cell would take on the candidate port: the flits holding
//!   that VC's credits (its output queue, the link and the downstream FIFO), so a full buffer
//!   a hop away shows here as link-level flow control makes it (§3.2);
//! - with `routing.local_misroutes` (parity-sign unless `none`), Fully Adaptive's non-minimal
//!   slots also hold the local detours of [`crate::blocks::routing::local_misroute`] (two local
//!   hops under a turn rule), in every pod where the cell's minimal next hop is local (one per
//!   pod: none to a cell that arrived by a local hop); a detour in the source pod leaves the
//!   cell free to misroute through another pod from the next TiN.

use rand::Rng as _;

use super::super::{local_misroute, Decision, Mode, NO_ROUTE};
use crate::blocks::routing::table::NOT_A_SWITCH;

/// Minimal route slots the tables supply, of which [`MINIMAL_SAMPLES`] are sampled.
const MINIMAL_SLOTS: usize = 8;
/// Minimal routes sampled per decision.
const MINIMAL_SAMPLES: usize = 2;
/// Non-minimal candidate slots, of which [`NONMINIMAL_SAMPLES`] are sampled.
const NONMINIMAL_SLOTS: usize = 24;
/// Non-minimal candidates sampled per decision.
const NONMINIMAL_SAMPLES: usize = 3;

/// The weighted comparison: a candidate costs its output queue (cells) times its class's
/// weight, plus `nonminimal_bias_cells` if it is non-minimal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Weight of a minimal candidate's queue.
    pub minimal: f64,
    /// Weight of a non-minimal candidate's queue.
    pub nonminimal: f64,
    /// Cells added to a non-minimal candidate's cost.
    pub nonminimal_bias_cells: f64,
}

impl Default for Weights {
    /// 1 and 2 (a misroute's path is about twice as long, UGAL's ratio) and two maximum cells
    /// of bias: our reading, the paper gives no values.
    fn default() -> Self {
        Weights {
            minimal: 1.0,
            nonminimal: 2.0,
            nonminimal_bias_cells: 2.0,
        }
    }
}

/// The comparison's weights and what the modes count.
#[derive(Clone, Copy, Debug, Default)]
pub struct Adaptive {
    /// The weighted comparison.
    pub weights: Weights,
    /// Cells sent on a non-minimal route.
    pub nonminimal_cells: u64,
    /// Cells routed at their source switch by a mode that counts its non-minimal cells: the
    /// routing units (a cell, or a VC router's packet of flits) the count is a share of.
    pub cells_routed: u64,
    /// Fully Adaptive's local detours ([`local_misroute`]), off unless the router is given a
    /// rule (`routing.local_misroutes` gives parity-sign by default); where they are on,
    /// the hashed choice of a Fully Adaptive router's ordered VCs keeps the turn rule too.
    pub local_misroutes: local_misroute::TurnRule,
    /// Local detours taken (a cell takes at most one per pod it crosses).
    pub local_detours: u64,
}

/// Fully Adaptive: the cheapest of two sampled minimal and three sampled non-minimal routes.
pub const FULLY_ADAPTIVE: Mode = Mode {
    name: "aquila_fully_adaptive",
    description: "Aquila: the cheapest of 2 of 8 minimal and 3 of 24 non-minimal routes by weighted queue depth",
    needs_groups: true,
    per_flow: false,
    choose: fully_adaptive,
    plan: None,
};

/// Minimal Adaptive: the shorter queue of two sampled minimal routes.
pub const MINIMAL_ADAPTIVE: Mode = Mode {
    name: "aquila_minimal_adaptive",
    description: "Aquila: the shorter queue of 2 of 8 minimal routes",
    needs_groups: false,
    per_flow: false,
    choose: minimal_adaptive,
    plan: None,
};

/// Deterministic: a hash of source and destination picks among the minimal and non-minimal
/// slots.
pub const DETERMINISTIC: Mode = Mode {
    name: "aquila_deterministic",
    description: "Aquila: a hash of source and destination picks among the 8 minimal and 24 non-minimal slots",
    needs_groups: true,
    per_flow: true,
    choose: deterministic,
    plan: None,
};

/// Minimal Deterministic: a hash of source and destination picks among the minimal slots.
pub const MINIMAL_DETERMINISTIC: Mode = Mode {
    name: "aquila_minimal_deterministic",
    description: "Aquila: a hash of source and destination picks among the 8 minimal slots",
    needs_groups: false,
    per_flow: true,
    choose: minimal_deterministic,
    plan: None,
};

/// True for the modes that count their non-minimal cells in the summary.
pub fn counts_nonminimal(mode: &Mode) -> bool {
    [FULLY_ADAPTIVE.name, DETERMINISTIC.name].contains(&mode.name)
}

/// The candidates of one decision: minimal ones first.
struct Candidates {
    ports: [usize; MINIMAL_SAMPLES + NONMINIMAL_SAMPLES],
    /// Which candidates are local detours.
    local: [bool; MINIMAL_SAMPLES + NONMINIMAL_SAMPLES],
    minimal: usize,
    len: usize,
}

/// Up to `take` distinct slots of `0..slots`, uniformly without replacement, in drawn order.
fn sample_slots(d: &mut Decision<'_>, slots: usize, take: usize, out: &mut [usize]) -> usize {
    let mut pool = [0u8; NONMINIMAL_SLOTS];
    for (i, slot) in pool.iter_mut().enumerate().take(slots) {
        *slot = i as u8;
    }
    let take = take.min(slots);
    for i in 0..take {
        let j = d.rng.gen_range(i..slots);
        pool.swap(i, j);
        out[i] = pool[i] as usize;
    }
    take
}

/// This switch's non-minimal ports: global ports to a pod that is neither the cell's source
/// pod nor its destination pod; none once the cell has misrouted or left its source pod, and
/// none for a cell to its own pod.
fn nonminimal_ports<'a>(d: &'a Decision<'_>) -> impl Iterator<Item = usize> + 'a {
    let table = d.table;
    let here = table.group(d.switch);
    let (src_switch, _) = table.terminal_at(d.cell.src as usize);
    let there = d.destination_group();
    let offered = d.undecided() && table.group(src_switch) == here && here != there;
    (0..table.switch_ports(d.switch)).filter(move |&port| {
        let next = table.next_switch(d.switch, port);
        offered && next != NOT_A_SWITCH && {
            let pod = table.group(next);
            pod != here && pod != there
        }
    })
}

/// The port in slot `slot` of a list that repeats `ports` (of which there are `count`).
fn slot_port(mut ports: impl Iterator<Item = usize>, count: usize, slot: usize) -> usize {
    ports.nth(slot % count).expect("slot within the list")
}

/// The minimal candidate of `minimal` in slot `slot` (repeated to fill the slots) among those
/// `d`'s cell may take: every one, unless local detours are on and the cell arrived by a local
/// hop, then those the turn rule allows ([`local_misroute::allowed_minimal`]).
fn minimal_in_slot(d: &Decision<'_>, minimal: &[u16], slot: usize) -> usize {
    let rule = d.adaptive.local_misroutes;
    let previous = local_misroute::previous_hop(rule, d.table, d.switch, d.input);
    if previous.is_none() {
        return minimal[slot % minimal.len()] as usize;
    }
    let allowed = || local_misroute::allowed_minimal(rule, d.table, d.switch, previous, minimal);
    slot_port(allowed(), allowed().count(), slot)
}

/// The local detours offered to `d`'s cell toward minimal candidates `minimal`
/// ([`local_misroute::detours`]).
fn offered_detours<'a>(
    d: &'a Decision<'_>,
    minimal: &'a [u16],
) -> impl Iterator<Item = usize> + 'a {
    let rule = d.adaptive.local_misroutes;
    let previous = local_misroute::previous_hop(rule, d.table, d.switch, d.input);
    local_misroute::detours(rule, d.table, d.switch, previous, minimal)
}

/// Samples the minimal and (with `nonminimal`) the non-minimal candidates: global misroutes
/// first in the slots, then local detours.
fn sample(d: &mut Decision<'_>, nonminimal: bool) -> Candidates {
    let set = d.next_set();
    let mut c = Candidates {
        ports: [NO_ROUTE; MINIMAL_SAMPLES + NONMINIMAL_SAMPLES],
        local: [false; MINIMAL_SAMPLES + NONMINIMAL_SAMPLES],
        minimal: 0,
        len: 0,
    };
    let mut slots = [0usize; NONMINIMAL_SAMPLES];
    let taken = sample_slots(d, MINIMAL_SLOTS, MINIMAL_SAMPLES, &mut slots);
    let minimal = d.table.ports(set);
    for &slot in &slots[..taken] {
        c.ports[c.len] = minimal_in_slot(d, minimal, slot);
        c.len += 1;
    }
    c.minimal = c.len;
    let (global, local) = match nonminimal {
        true => (
            nonminimal_ports(d).count(),
            offered_detours(d, minimal).count(),
        ),
        false => (0, 0),
    };
    if global + local > 0 {
        let taken = sample_slots(d, NONMINIMAL_SLOTS, NONMINIMAL_SAMPLES, &mut slots);
        for &slot in &slots[..taken] {
            let slot = slot % (global + local);
            c.local[c.len] = slot >= global;
            c.ports[c.len] = match c.local[c.len] {
                false => slot_port(nonminimal_ports(d), global, slot),
                true => slot_port(offered_detours(d, minimal), local, slot - global),
            };
            c.len += 1;
        }
    }
    c
}

/// The cheapest usable candidate by the weighted comparison (minimal first among equals);
/// counts a non-minimal choice.
fn cheapest(d: &mut Decision<'_>, c: &Candidates) -> usize {
    let w = d.adaptive.weights;
    let mut best: Option<(f64, usize, usize)> = None;
    for (i, &port) in c.ports[..c.len].iter().enumerate() {
        if !d.view.usable(port) {
            continue;
        }
        let queue = d.view.vc_backlog_cells(port) as f64;
        let minimal = i < c.minimal;
        let cost = if minimal {
            queue * w.minimal
        } else {
            queue * w.nonminimal + w.nonminimal_bias_cells
        };
        if best.is_none_or(|(lowest, _, _)| cost < lowest) {
            best = Some((cost, port, i));
        }
    }
    let Some((_, port, i)) = best else {
        return NO_ROUTE;
    };
    if c.local[i] {
        // A detour leaves the cell in its pod: at the next TiN it may still misroute
        // through another pod.
        d.adaptive.local_detours += 1;
    } else if i >= c.minimal {
        d.adaptive.nonminimal_cells += 1;
        d.go_minimal();
    }
    port
}

/// Counts `d`'s cell as routed if this is its source switch (its first decision).
fn count_routed(d: &mut Decision<'_>) {
    let (src_switch, _) = d.table.terminal_at(d.cell.src as usize);
    d.adaptive.cells_routed += (src_switch == d.switch) as u64;
}

fn fully_adaptive(d: &mut Decision<'_>) -> usize {
    count_routed(d);
    let c = sample(d, true);
    cheapest(d, &c)
}

fn minimal_adaptive(d: &mut Decision<'_>) -> usize {
    let c = sample(d, false);
    cheapest(d, &c)
}

/// The slot a hash of source and destination picks among the minimal slots and (with
/// `nonminimal`) the non-minimal ones; a pick that is not usable is re-hashed over the usable
/// minimal next hops.
fn hashed(d: &mut Decision<'_>, nonminimal: bool) -> usize {
    let set = d.next_set();
    let hash = d.flow_hash();
    let count = if nonminimal {
        nonminimal_ports(d).count()
    } else {
        0
    };
    let slots = MINIMAL_SLOTS + if count > 0 { NONMINIMAL_SLOTS } else { 0 };
    let slot = (hash % slots as u64) as usize;
    if slot >= MINIMAL_SLOTS {
        let port = slot_port(nonminimal_ports(d), count, slot - MINIMAL_SLOTS);
        if d.view.usable(port) {
            d.adaptive.nonminimal_cells += 1;
            d.go_minimal();
            return port;
        }
    }
    let pick = minimal_in_slot(d, d.table.ports(set), slot % MINIMAL_SLOTS);
    d.usable_or_rehash(set, pick, hash)
}

fn deterministic(d: &mut Decision<'_>) -> usize {
    count_routed(d);
    hashed(d, true)
}

fn minimal_deterministic(d: &mut Decision<'_>) -> usize {
    hashed(d, false)
}

#[cfg(test)]
mod tests {
    use crate::blocks::cell::Cell;
    use crate::blocks::routing::{mode, Backlog, FabricRouter, LocalView, RouteTable, Router};
    use crate::blocks::topology::{Attachment, Topology};

    fn router(t: &Topology, name: &str) -> FabricRouter {
        FabricRouter::new(RouteTable::new(t).unwrap(), mode(name).unwrap(), 11, 4)
    }

    /// The switches a cell from `src` to `dst` crosses, the first switch seeing `first` and
    /// the others empty queues.
    fn walk(
        t: &Topology,
        r: &mut FabricRouter,
        src: usize,
        dst: usize,
        first: &Backlog,
    ) -> Vec<usize> {
        let mut cell = Cell::new(src as u16, dst as u16, 160, true, 0, 0);
        r.inject(src, &mut cell);
        let (mut switch, mut input) = t.endpoint_port(src).unwrap();
        let mut path = vec![];
        loop {
            path.push(switch);
            assert!(path.len() <= 6, "{src}->{dst} loops: {path:?}");
            let view = if path.len() == 1 {
                first
            } else {
                &Backlog(vec![])
            };
            let output = r.route(switch, input, &mut cell, view);
            match t.peer(switch, output).unwrap() {
                Attachment::Endpoint(e) => {
                    assert_eq!(e, dst);
                    return path;
                }
                Attachment::SwitchPort { switch: s, port } => (switch, input) = (s, port),
            }
        }
    }

    fn pairs(t: &Topology) -> impl Iterator<Item = (usize, usize)> {
        let hosts = t.endpoints();
        (0..hosts).flat_map(move |s| (0..hosts).filter(move |&d| d != s).map(move |d| (s, d)))
    }

    fn minimal_switches(t: &Topology, table: &RouteTable, src: usize, dst: usize) -> usize {
        let (a, _) = t.endpoint_port(src).unwrap();
        let (b, _) = t.endpoint_port(dst).unwrap();
        1 + table.hops(a, b) as usize
    }

    #[test]
    fn deterministic_modes_give_one_path_per_pair() {
        let t = Topology::small_clique(6);
        let table = RouteTable::new(&t).unwrap();
        for name in ["aquila_deterministic", "aquila_minimal_deterministic"] {
            let mut r = router(&t, name);
            let mut detours = 0;
            for (src, dst) in pairs(&t) {
                let first = walk(&t, &mut r, src, dst, &Backlog(vec![]));
                for _ in 0..4 {
                    assert_eq!(
                        walk(&t, &mut r, src, dst, &Backlog(vec![])),
                        first,
                        "{name}"
                    );
                }
                assert!(
                    first.len() <= 6,
                    "at most local, global, local, global, local: {first:?}"
                );
                if name == "aquila_minimal_deterministic" {
                    assert_eq!(first.len(), minimal_switches(&t, &table, src, dst));
                }
                let (a, b) = (t.group(first[0]), t.group(*first.last().unwrap()));
                detours += first.iter().any(|&s| t.group(s) != a && t.group(s) != b) as usize;
            }
            let misroutes = r.nonminimal_cells().map(|(nonminimal, _)| nonminimal);
            if name == "aquila_deterministic" {
                assert!(detours > 0, "some pairs hashed onto a non-minimal slot");
                assert_eq!(misroutes, Some(5 * detours as u64));
            } else {
                assert_eq!((detours, misroutes), (0, None));
            }
        }
    }

    #[test]
    fn minimal_adaptive_never_leaves_minimal_paths() {
        let t = Topology::small_clique(6);
        let table = RouteTable::new(&t).unwrap();
        let mut r = router(&t, "aquila_minimal_adaptive");
        for (i, (src, dst)) in pairs(&t).enumerate() {
            // Queues that differ from port to port and pair to pair.
            let queues = Backlog(
                (0..10)
                    .map(|p| ((p * 7 + i * 13) % 11) as u32 * 10)
                    .collect(),
            );
            let path = walk(&t, &mut r, src, dst, &queues);
            assert_eq!(
                path.len(),
                minimal_switches(&t, &table, src, dst),
                "{src}->{dst}"
            );
        }
    }

    #[test]
    fn fully_adaptive_misroutes_only_around_backed_up_minimal_routes() {
        let t = Topology::small_clique(6);
        let table = RouteTable::new(&t).unwrap();
        let mut r = router(&t, "aquila_fully_adaptive");
        // Idle: every cell minimal, none counted.
        for (src, dst) in pairs(&t) {
            let path = walk(&t, &mut r, src, dst, &Backlog(vec![]));
            assert_eq!(path.len(), minimal_switches(&t, &table, src, dst));
        }
        // Every pair on two switches was routed once at its source (one on a single switch is
        // delivered without a decision).
        let idle = pairs(&t)
            .filter(|&(src, dst)| {
                t.endpoint_port(src).unwrap().0 != t.endpoint_port(dst).unwrap().0
            })
            .count() as u64;
        assert_eq!(r.nonminimal_cells(), Some((0, idle)));
        // Host 0 (TiN 0, pod 0) to host 47 (pod 5): the minimal next hops backed up by 100
        // cells, every other port idle; the non-minimal candidates cost the 2-cell bias.
        let (src, dst) = (0, 47);
        let minimal = table.ports(table.toward_switch(0, 23)).to_vec();
        let mut queues = vec![0; 10];
        for &port in &minimal {
            queues[port as usize] = 100;
        }
        let mut detours = 0;
        for _ in 0..200 {
            let path = walk(&t, &mut r, src, dst, &Backlog(queues.clone()));
            if path.len() > minimal_switches(&t, &table, src, dst) {
                detours += 1;
                let pods: Vec<usize> = path.iter().map(|&s| t.group(s)).collect();
                assert!(
                    pods[1] != 0 && pods[1] != 5,
                    "through an intermediate pod: {pods:?}"
                );
            }
        }
        // TiN 0's two global ports both lead to intermediate pods (pod 0's link to pod 5 is
        // on another TiN), so every cell samples one and takes it.
        assert_eq!(detours, 200);
        assert_eq!(r.nonminimal_cells(), Some((200, idle + 200)));
    }

    /// Local detours (`routing.local_misroutes = "up_down"`): around a backed-up local hop in
    /// pod 0 a cell takes two local hops through a TiN the turn rule allows (above one end),
    /// counted apart from the global misroutes; where no TiN is allowed (TiN 3 to TiN 2, both
    /// others below both ends) it stays on its minimal hop.
    #[test]
    fn local_detours_go_around_a_backed_up_local_hop_by_the_turn_rule() {
        use crate::blocks::routing::local_misroute::TurnRule;
        let t = Topology::small_clique(6);
        let table = RouteTable::new(&t).unwrap();
        let mut r = router(&t, "aquila_fully_adaptive").with_local_misroutes(TurnRule::UpDown);
        let host_on = |switch| {
            (0..t.endpoints())
                .find(|&h| t.endpoint_port(h).unwrap().0 == switch)
                .unwrap()
        };
        let backed_up = |from: usize, to: usize| {
            let mut queues = vec![0; 10];
            for &port in table.ports(table.toward_switch(from, to)) {
                queues[port as usize] = 100;
            }
            Backlog(queues)
        };
        let mut through = [0; 4];
        for _ in 0..200 {
            let path = walk(&t, &mut r, host_on(0), host_on(1), &backed_up(0, 1));
            assert_eq!(path.len(), 3, "{path:?}");
            assert!(path[1] == 2 || path[1] == 3, "{path:?}");
            through[path[1]] += 1;
            let idle = walk(&t, &mut r, host_on(0), host_on(1), &Backlog(vec![]));
            assert_eq!(idle, [0, 1]);
        }
        assert!(through[2] > 50 && through[3] > 50, "{through:?}");
        for _ in 0..200 {
            let path = walk(&t, &mut r, host_on(3), host_on(2), &backed_up(3, 2));
            assert_eq!(path, [3, 2]);
        }
        assert_eq!(r.local_detours(), Some(200));
        assert_eq!(r.nonminimal_cells().map(|(cells, _)| cells), Some(0));
        let plain = router(&t, "aquila_fully_adaptive");
        assert_eq!(plain.local_detours(), None);
        let minimal = router(&t, "aquila_minimal_adaptive").with_local_misroutes(TurnRule::UpDown);
        assert_eq!(minimal.local_turn_rule(), TurnRule::Off);
    }

    /// The cells a Fully Adaptive router sends by a hash on its ordered VCs (RTS, §3.3) keep
    /// the turn rule where its detours are on: in a group where minimal routes take two local
    /// hops (3 → 2 → {0, 4} → 1), switch 2 sends what came from 3 only toward 0 (3 → 2 → 4 turns
    /// down then up), where without detours the hash spreads the pairs over both.
    #[test]
    fn hashed_cells_keep_the_turn_rule_where_detours_are_on() {
        use crate::blocks::routing::local_misroute::TurnRule;
        let text = "switch s0 ports=2 group=0\nswitch s1 ports=6 group=0\nswitch s2 ports=3 group=0\n\
                    switch s3 ports=5 group=0\nswitch s4 ports=2 group=0\n\
                    cable s3:0 s2:0\ncable s2:1 s0:0\ncable s2:2 s4:0\ncable s0:1 s1:0\ncable s4:1 s1:1\n\
                    host a\nhost b\nhost c\nhost d\nhost e\nhost f\nhost g\nhost h\n\
                    cable a s3:1\ncable b s3:2\ncable c s3:3\ncable d s3:4\n\
                    cable e s1:2\ncable f s1:3\ncable g s1:4\ncable h s1:5\n";
        let t = Topology::from_file_text(text).unwrap();
        let outputs = |rule| {
            let mut r = router(&t, "aquila_fully_adaptive")
                .with_local_misroutes(rule)
                .with_ordered_vcs(1);
            let mut seen = std::collections::BTreeSet::new();
            for src in 0..4 {
                for dst in 4..8 {
                    let mut cell = Cell::new(src, dst, 160, true, 0, 0);
                    r.inject(src as usize, &mut cell);
                    cell.vc = 0;
                    seen.insert(r.route(2, 0, &mut cell, &Backlog(vec![])));
                }
            }
            seen.into_iter().collect::<Vec<_>>()
        };
        assert_eq!(outputs(TurnRule::Off), [1, 2]);
        assert_eq!(outputs(TurnRule::UpDown), [1]);
    }

    /// A VC router's view: its ports' backlogs summed over VCs are idle, the VC the cell
    /// would take on each port is as a test sets it.
    struct PerVc(Vec<u32>);

    impl LocalView for PerVc {
        fn backlog_cells(&self, _output: usize) -> u32 {
            0
        }
        fn vc_backlog_cells(&self, output: usize) -> u32 {
            self.0.get(output).copied().unwrap_or(0)
        }
    }

    /// The comparison reads the per-VC queues (§3.2): minimal next hops whose VC is backed up
    /// send the cell non-minimally though their ports' totals look idle.
    #[test]
    fn fully_adaptive_compares_the_queues_of_the_cells_vc() {
        let t = Topology::small_clique(6);
        let table = RouteTable::new(&t).unwrap();
        let mut r = router(&t, "aquila_fully_adaptive");
        let mut queues = vec![0; 10];
        for &port in table.ports(table.toward_switch(0, 23)) {
            queues[port as usize] = 100;
        }
        let mut cell = Cell::new(0, 47, 160, true, 0, 0);
        r.inject(0, &mut cell);
        let (switch, input) = t.endpoint_port(0).unwrap();
        let output = r.route(switch, input, &mut cell, &PerVc(queues));
        assert!(!table
            .ports(table.toward_switch(0, 23))
            .contains(&(output as u16)));
        assert_eq!(r.nonminimal_cells(), Some((1, 1)));
    }

    #[test]
    fn slots_are_sampled_without_replacement() {
        let table = RouteTable::new(&Topology::small_clique(6)).unwrap();
        let mut rng =
            crate::engine::rng::stream(5, crate::engine::rng::ComponentId { kind: 0, index: 0 });
        let mut seen = [0u32; super::NONMINIMAL_SLOTS];
        for _ in 0..2_000 {
            let mut cell = Cell::new(0, 47, 160, true, 0, 0);
            let mut spray = crate::blocks::routing::Spray {
                order: vec![],
                next: vec![],
                passes_left: vec![],
                rounds: 1,
            };
            let mut adaptive = super::Adaptive::default();
            let mut d = crate::blocks::routing::Decision {
                table: &table,
                switch: 0,
                input: crate::blocks::routing::NO_ROUTE,
                cell: &mut cell,
                view: &Backlog(vec![]),
                rng: &mut rng,
                spray: &mut spray,
                adaptive: &mut adaptive,
                salt: 0,
                path_label: crate::blocks::routing::PathLabel::Unlabelled,
            };
            let mut out = [0; 3];
            assert_eq!(super::sample_slots(&mut d, 24, 3, &mut out), 3);
            assert!(
                out[0] != out[1] && out[1] != out[2] && out[0] != out[2],
                "{out:?}"
            );
            out.iter().for_each(|&s| seen[s] += 1);
        }
        assert!(seen.iter().all(|&n| (150..350).contains(&n)), "{seen:?}");
    }
}
