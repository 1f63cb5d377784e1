//! Routing: how a switch picks a cell's output. A [`Router`] is called once per cell per hop
//! with a read-only view of the local switch's output queues ([`LocalView`]); it may keep state
//! (spraying pointers, random streams). [`FabricRouter`] serves every topology from a
//! [`RouteTable`] of equal-cost candidates, with the choice among them made by a mechanism
//! picked by name from [`MODES`] (one file per mechanism in `modes/`).

pub mod local_misroute;
mod modes;
pub mod stamp;
pub mod table;

use rand::Rng as _;

use crate::blocks::cell::Cell;
use crate::engine::rng::{mix, stream, ComponentId, Rng};
pub use modes::sampled_adaptive::{Adaptive, Weights as SampledWeights, FULLY_ADAPTIVE};
use stamp::PathCache;
pub use table::RouteTable;

/// What a router may read of the switch it routes in: its own output queues and which of its
/// outputs may carry the cell being routed, nothing else.
pub trait LocalView {
    /// Cells queued in this switch for `output`.
    fn backlog_cells(&self, output: usize) -> u32;
    /// Cells queued for `output` on the virtual channel the cell being routed would take
    /// there (a VC router's per-VC queue, which Aquila's adaptive routing compares, Gibson et
    /// al., NSDI '22, §3.2); a switch without VCs answers [`backlog_cells`](Self::backlog_cells).
    fn vc_backlog_cells(&self, output: usize) -> u32 {
        self.backlog_cells(output)
    }
    /// False if `output` may not carry the cell now (its link is down, or the switch's
    /// reachability table says the destination cannot be reached through it); every mode
    /// picks among the usable candidates only.
    fn usable(&self, _output: usize) -> bool {
        true
    }
}

/// What [`Router::route`] returns when no candidate output is usable (the cell has no route
/// until the tables change).
pub const NO_ROUTE: usize = usize::MAX;

/// Picks a cell's output at each switch.
pub trait Router {
    /// Writes what the cell carries for routing (a source-route header, say) as terminal `src`
    /// sends it.
    fn inject(&mut self, src: usize, cell: &mut Cell);
    /// Picks the output of `switch` for `cell`, arriving on `input`, and updates what the cell
    /// carries for routing (a header shift, a reached intermediate group).
    fn route(
        &mut self,
        switch: usize,
        input: usize,
        cell: &mut Cell,
        view: &dyn LocalView,
    ) -> usize;
    /// The output `switch` will pick for `cell` arriving on `input`, where that is fixed in
    /// advance (per-VOQ flow control reserves the downstream VOQ before the cell gets there);
    /// `None` for routers that decide on arrival.
    fn planned_output(&self, switch: usize, input: usize, cell: &Cell) -> Option<usize>;
    /// Installs the next tables the router was given (an SDN update after a link failed); by
    /// default the tables never change.
    fn update_tables(&mut self) {}
    /// Makes `cell`, whose destination changed mid-path (NDP's return-to-sender, §3.1), routable
    /// from the switch it is at: whatever it carried for its old route is forgotten.
    fn turn_around(&mut self, _cell: &mut Cell) {}
    /// True while `cell`, routed at this hop, heads for an intermediate group (the
    /// non-minimal part of a Valiant or UGAL route): the routing phase VC rules read.
    fn toward_intermediate(&self, _cell: &Cell) -> bool {
        false
    }

    /// Cells sent on a non-minimal route so far and cells routed at their source switch (what
    /// the first is a share of), for routers whose mode counts them.
    fn nonminimal_cells(&self) -> Option<(u64, u64)> {
        None
    }

    /// Local detours taken so far, for routers that offer them ([`local_misroute`]).
    fn local_detours(&self) -> Option<u64> {
        None
    }

    /// Adds what `other`, the router of another partition of a run on several threads,
    /// counted (see [`Router::nonminimal_cells`]).
    fn absorb_counts(&mut self, other: &Self)
    where
        Self: Sized;

    /// True if `cell`, arriving on `input` of `switch`, is a broadcast that the switch copies
    /// to every output but the input (RIFL's Dst Port 255); no other router broadcasts.
    fn is_broadcast(&self, _switch: usize, _input: usize, _cell: &Cell) -> bool {
        false
    }

    /// Writes into one copy of a broadcast `cell` (see [`is_broadcast`](Self::is_broadcast))
    /// what it carries out of `output` of `switch`, having arrived on `input`.
    fn route_copy(&mut self, _switch: usize, _input: usize, _output: usize, _cell: &mut Cell) {
        panic!("this router broadcasts nothing, so it copies no cell");
    }
}

/// A routing mechanism: picks the output at a switch that is not the cell's last.
pub type Choose = fn(&mut Decision<'_>) -> usize;

/// A routing mechanism by name, for scenarios and `cellfabric list`.
pub struct Mode {
    /// Name in scenarios (`routing.mode`).
    pub name: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// Routes through a random intermediate group, so needs a topology with groups.
    pub needs_groups: bool,
    /// Its choice depends only on the tables, the switch's salt and the cell's source,
    /// destination and path label (no queue, no random draw), so a flow's path is known as
    /// its source sends it ([`FabricRouter::with_stamped_paths`]).
    pub per_flow: bool,
    /// The choice.
    pub choose: Choose,
    /// The output the mode will choose, known before the cell arrives (it depends only on the
    /// tables, the switch's salt and the cell), for modes that plan; per-VOQ flow control
    /// needs one.
    pub plan: Option<Plan>,
}

impl Mode {
    /// A mode that chooses each cell's output with `choose` as the cell arrives: it needs no
    /// groups, its paths are not per flow, and it plans nothing. A mode's descriptor names
    /// itself over it and changes what differs.
    pub const fn choosing(choose: Choose) -> Mode {
        Mode {
            name: "",
            description: "",
            needs_groups: false,
            per_flow: false,
            choose,
            plan: None,
        }
    }
}

/// A planned output: `(tables, switch, switch's salt, cell)` to the port.
pub type Plan = fn(&RouteTable, usize, u64, &Cell) -> usize;

/// Every routing mechanism, by name.
pub const MODES: &[Mode] = &[
    modes::deterministic::MODE,
    modes::ecmp::MODE,
    modes::spray::MODE,
    modes::rr_fixed::MODE,
    modes::random::MODE,
    modes::least_loaded::MODE,
    modes::valiant::MODE,
    modes::ugal::MODE,
    modes::ugal_credit::MODE,
    modes::sampled_adaptive::FULLY_ADAPTIVE,
    modes::sampled_adaptive::MINIMAL_ADAPTIVE,
    modes::sampled_adaptive::DETERMINISTIC,
    modes::sampled_adaptive::MINIMAL_DETERMINISTIC,
];

/// The mode called `name`.
pub fn mode(name: &str) -> Option<&'static Mode> {
    MODES.iter().find(|m| m.name == name)
}

/// The names of the modes that `keep` picks, for a message.
pub fn names_where(keep: impl Fn(&Mode) -> bool) -> String {
    let names: Vec<&str> = MODES.iter().filter(|m| keep(m)).map(|m| m.name).collect();
    names.join(", ")
}

/// The view of a switch that never refuses an output, in which a stamped path is walked.
struct NeverRefuses;

impl LocalView for NeverRefuses {
    fn backlog_cells(&self, _: usize) -> u32 {
        0
    }
}

/// Output queues as a test sets them, cells per output (an output past the list is empty).
#[cfg(test)]
pub(crate) struct Backlog(pub Vec<u32>);

#[cfg(test)]
impl LocalView for Backlog {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.0.get(output).copied().unwrap_or(0)
    }
}

/// `route_tag` of a cell on a minimal route (or past its intermediate group).
const MINIMAL: u64 = u64::MAX;
/// `route_tag` of a cell whose source switch has not yet chosen its route.
const UNDECIDED: u64 = u64::MAX - 1;

/// Everything a mechanism may use to pick an output: the tables, the cell, the local switch's
/// queues, the switch's random stream and the router's spraying state.
pub struct Decision<'a> {
    /// The routing tables.
    pub table: &'a RouteTable,
    /// The switch deciding.
    pub switch: usize,
    /// The port the cell came in by (a value past the switch's ports where unknown: a
    /// stamped path walked ahead of the cell).
    pub input: usize,
    /// The cell (its `route_tag` holds an intermediate group while it heads there).
    pub cell: &'a mut Cell,
    /// This switch's output queues.
    pub view: &'a dyn LocalView,
    /// This switch's random stream.
    pub rng: &'a mut Rng,
    /// Spraying pointers.
    pub spray: &'a mut Spray,
    /// Aquila's weighted comparison and its count of non-minimal cells.
    pub adaptive: &'a mut Adaptive,
    /// This switch's salt for flow hashing.
    pub salt: u64,
    /// Where the design keeps the cell's path label (an MPTCP subflow's), which per-flow
    /// hashing mixes in; a design that labels none reads 0.
    pub path_label: PathLabel,
}

impl Decision<'_> {
    /// The candidates of the cell's next hop: toward its intermediate group while it has one
    /// (clearing it once reached), else toward its destination switch.
    pub fn next_set(&mut self) -> usize {
        let (dst_switch, _) = self.table.terminal_at(self.cell.dst as usize);
        if self.cell.route_tag < UNDECIDED {
            let via = self.cell.route_tag as usize;
            if self.table.group(self.switch) != via {
                return self.table.toward_group(self.switch, via);
            }
            self.cell.route_tag = MINIMAL;
        }
        self.table.toward_switch(self.switch, dst_switch)
    }

    /// Group of the cell's destination switch.
    pub fn destination_group(&self) -> usize {
        let (dst_switch, _) = self.table.terminal_at(self.cell.dst as usize);
        self.table.group(dst_switch)
    }

    /// True at the cell's source switch before its route is chosen (Valiant, UGAL).
    pub fn undecided(&self) -> bool {
        self.cell.route_tag == UNDECIDED
    }

    /// UGAL's first step at a cell's source: a random candidate along the route already decided
    /// (`Err`), or, for a cell still undecided, the minimal route's random candidate, the cell
    /// marked minimal until the mode decides otherwise (`Ok`).
    pub fn minimal_unless_decided(&mut self) -> Result<usize, usize> {
        if !self.undecided() {
            let set = self.next_set();
            return Err(self.random(set));
        }
        self.go_minimal();
        let minimal_set = self.next_set();
        Ok(self.random(minimal_set))
    }

    /// Sends the cell through group `via` before its destination.
    pub fn go_via(&mut self, via: usize) {
        self.cell.route_tag = via as u64;
    }

    /// Keeps the cell on minimal routes.
    pub fn go_minimal(&mut self) {
        self.cell.route_tag = MINIMAL;
    }

    /// A uniformly random usable candidate of `set`, or [`NO_ROUTE`].
    pub fn random(&mut self, set: usize) -> usize {
        let ports = self.table.ports(set);
        let port = ports[self.rng.gen_range(0..ports.len())] as usize;
        if self.view.usable(port) {
            return port;
        }
        let usable = self.usable_count(set) as u64;
        if usable == 0 {
            return NO_ROUTE;
        }
        let k = self.rng.gen_range(0..usable);
        self.nth_usable(set, k)
    }

    /// `pick` if it is usable, else the usable candidate of `set` that `hash` picks among the
    /// usable ones (or [`NO_ROUTE`]): hashing modes keep their choice while every candidate is
    /// usable.
    pub fn usable_or_rehash(&self, set: usize, pick: usize, hash: u64) -> usize {
        if self.view.usable(pick) {
            return pick;
        }
        match self.usable_count(set) as u64 {
            0 => NO_ROUTE,
            usable => self.nth_usable(set, hash % usable),
        }
    }

    /// How many candidates of `set` are usable.
    fn usable_count(&self, set: usize) -> usize {
        let ports = self.table.ports(set);
        ports
            .iter()
            .filter(|&&p| self.view.usable(p as usize))
            .count()
    }

    /// The `k`-th usable candidate of `set`, in table order (`k` below their count).
    fn nth_usable(&self, set: usize, k: u64) -> usize {
        let ports = self.table.ports(set);
        let mut usable = ports.iter().filter(|&&p| self.view.usable(p as usize));
        *usable.nth(k as usize).expect("k counts usable candidates") as usize
    }

    /// A random group other than the cell's source and destination groups, or `None` when there
    /// is none (fewer than three groups).
    pub fn random_intermediate_group(&mut self) -> Option<usize> {
        let groups = self.table.groups();
        let (dst_switch, _) = self.table.terminal_at(self.cell.dst as usize);
        let (here, there) = (self.table.group(self.switch), self.table.group(dst_switch));
        let ordered = [here.min(there), here.max(there)];
        let skipped = if here == there {
            &ordered[..1]
        } else {
            &ordered[..]
        };
        if groups <= skipped.len() {
            return None;
        }
        let mut pick = self.rng.gen_range(0..groups - skipped.len());
        for &skip in skipped {
            if pick >= skip {
                pick += 1;
            }
        }
        Some(pick)
    }

    /// The flow hash of the cell at this switch: per (source, destination, path label), so
    /// subflows of one connection labelled apart hash apart; label 0 hashes the pair alone.
    pub fn flow_hash(&self) -> u64 {
        let (src, dst) = (self.cell.src as u64, self.cell.dst as u64);
        let path = self.path_label.of(self.cell) as u64;
        mix(self.salt ^ (path << 32 | src << 16 | dst))
    }
}

/// Spraying state: per candidate set, a position in a random order of its ports, re-drawn every
/// `rounds` passes (Stardust §4.3's "round robin over a random permutation").
pub struct Spray {
    /// Per set: the current order of its ports (same layout as the table's port list).
    pub order: Vec<u16>,
    /// Per set: next position in its order.
    pub next: Vec<u16>,
    /// Per set: passes left before the order is re-drawn.
    pub passes_left: Vec<u16>,
    /// Passes over one order before it is re-drawn.
    pub rounds: u16,
}

impl Spray {
    /// Every set of `table` in table order, re-drawn every `rounds` passes.
    fn over(table: &RouteTable, rounds: u16) -> Spray {
        Spray {
            order: (0..table.sets())
                .flat_map(|set| table.ports(set).to_vec())
                .collect(),
            next: vec![0; table.sets()],
            passes_left: vec![0; table.sets()],
            rounds,
        }
    }
}

/// Routing over a [`RouteTable`] with the mechanism a scenario names.
pub struct FabricRouter {
    table: RouteTable,
    mode: &'static Mode,
    rngs: Vec<Rng>,
    salts: Vec<u64>,
    spray: Spray,
    adaptive: Adaptive,
    path_label: PathLabel,
    /// With [`FabricRouter::with_stamped_paths`] and a per-flow mode: the flows' paths.
    paths: Option<PathCache>,
    /// Cells on a VC below this one are routed by Aquila's Minimal Deterministic mode whatever
    /// the mode (see [`FabricRouter::with_ordered_vcs`]); 0: none.
    ordered_below_vc: u16,
    /// Tables to install at the next updates, the next one last.
    table_updates: Vec<RouteTable>,
}

/// Where a design keeps a cell's path label (an MPTCP subflow's number), which per-flow
/// hashing mixes in (see [`Decision::flow_hash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathLabel {
    /// The design labels no paths: every cell's label is 0.
    Unlabelled,
    /// In the cell's `next_vc`, for a design without channels (Ethernet).
    NextVc,
}

impl PathLabel {
    /// The label of `cell`.
    pub fn of(self, cell: &Cell) -> u16 {
        match self {
            PathLabel::Unlabelled => 0,
            PathLabel::NextVc => cell.next_vc,
        }
    }
}

impl FabricRouter {
    /// A router for `table` using `mode`, its random streams drawn from `seed`; spraying
    /// re-draws its orders every `spray_rounds` passes.
    pub fn new(table: RouteTable, mode: &'static Mode, seed: u64, spray_rounds: u16) -> Self {
        let rngs: Vec<Rng> = (0..table.switches())
            .map(|s| {
                let id = ComponentId {
                    kind: super::stream_kind::ROUTER,
                    index: s as u32,
                };
                stream(seed, id)
            })
            .collect();
        let salts = (0..table.switches())
            .map(|s| mix(seed ^ mix(s as u64 + 1)))
            .collect();
        let spray = Spray::over(&table, spray_rounds.max(1));
        FabricRouter {
            table,
            mode,
            rngs,
            salts,
            spray,
            adaptive: Adaptive::default(),
            path_label: PathLabel::Unlabelled,
            paths: None,
            ordered_below_vc: 0,
            table_updates: Vec::new(),
        }
    }

    /// The router installing `tables` one after the other, at each
    /// [`Router::update_tables`] (the tables after each of a run's link failures, in the order
    /// their updates come).
    pub fn with_table_updates(mut self, tables: Vec<RouteTable>) -> Self {
        self.table_updates = tables;
        self.table_updates.reverse();
        self
    }

    /// The router sending the cells on VCs `0..vcs` (a high-priority class) by a hash of
    /// source and destination over the minimal routes, as Aquila routes its RTS cells: "RTS
    /// VCs are routed deterministically over the GNet fabric, using a path selected by a hash
    /// of the flow-invariant fields", so a flow's RTSs arrive in order (Gibson et al., NSDI
    /// '22, §3.3).
    pub fn with_ordered_vcs(mut self, vcs: u16) -> Self {
        self.ordered_below_vc = vcs;
        self
    }

    /// The router comparing Aquila's sampled candidates with `weights`.
    pub fn with_sampled_weights(mut self, weights: SampledWeights) -> Self {
        self.adaptive.weights = weights;
        self
    }

    /// The router offering local detours ([`local_misroute`]) under `rule` if its mode is
    /// Fully Adaptive (the other modes offer none).
    pub fn with_local_misroutes(mut self, rule: local_misroute::TurnRule) -> Self {
        if self.mode.name == FULLY_ADAPTIVE.name {
            self.adaptive.local_misroutes = rule;
        }
        self
    }

    /// The turn rule of the local detours the router offers ([`local_misroute::TurnRule::Off`]
    /// for none).
    pub fn local_turn_rule(&self) -> local_misroute::TurnRule {
        self.adaptive.local_misroutes
    }

    /// True if the mode misroutes hop by hop without naming an intermediate group (Aquila's
    /// sampled and hashed modes): a VC rule that reads the routing phase cannot see its
    /// misroutes.
    pub fn misroutes_unannounced(&self) -> bool {
        modes::sampled_adaptive::counts_nonminimal(self.mode)
    }

    /// The router stamping each cell's whole path on it at its source, where the mode's choice
    /// is fixed per flow ([`Mode::per_flow`]; otherwise it routes hop by hop as before): for
    /// designs whose switches never refuse an output ([`LocalView::usable`] always true), so
    /// that the stamped path is the one hop-by-hop routing would take.
    pub fn with_stamped_paths(mut self) -> Self {
        if self.mode.per_flow {
            self.paths = Some(PathCache::new(2 * self.table.terminals()));
        }
        self
    }

    /// With stamped paths: the `route_tag` `cell` leaves its source with, its flow's path
    /// walked once and kept ([`MINIMAL`] for a path too long to stamp, so that it is not walked
    /// again: the cell is routed hop by hop).
    fn stamp_of(&mut self, cell: &Cell) -> Option<u64> {
        let paths = self.paths.as_ref()?;
        let key = PathCache::key(cell.src, cell.dst, self.path_label.of(cell));
        if let Some(tag) = paths.get(key) {
            return Some(tag);
        }
        let tag = self.walk(cell).unwrap_or(MINIMAL);
        self.paths.as_mut()?.put(key, tag);
        Some(tag)
    }

    /// The stamped `route_tag` of `cell`'s path from its source's switch, or `None` if the path
    /// cannot be stamped (see [`stamp::header`]).
    fn walk(&mut self, cell: &Cell) -> Option<u64> {
        let (dst_switch, dst_port) = self.table.terminal_at(cell.dst as usize);
        let (mut switch, _) = self.table.terminal_at(cell.src as usize);
        let mut scratch = *cell;
        let mut outputs = [0; stamp::MAX_SWITCHES];
        for hop in 0..stamp::MAX_SWITCHES {
            if switch == dst_switch {
                outputs[hop] = dst_port;
                return stamp::header(&outputs[..=hop]);
            }
            let mut decision = Decision {
                table: &self.table,
                switch,
                input: NO_ROUTE,
                cell: &mut scratch,
                view: &NeverRefuses,
                rng: &mut self.rngs[switch],
                spray: &mut self.spray,
                adaptive: &mut self.adaptive,
                salt: self.salts[switch],
                path_label: self.path_label,
            };
            outputs[hop] = (self.mode.choose)(&mut decision);
            switch = self.table.next_switch(switch, outputs[hop]);
            if switch == table::NOT_A_SWITCH {
                return None;
            }
        }
        None
    }

    /// The router reading each cell's path label where `label` says (by default, none).
    pub fn with_path_label(mut self, label: PathLabel) -> Self {
        self.path_label = label;
        self
    }

    /// True if the mode may route cells non-minimally (through an intermediate group).
    pub fn routes_nonminimally(&self) -> bool {
        self.mode.needs_groups
    }

    /// The tables routed over.
    pub fn table(&self) -> &RouteTable {
        &self.table
    }
}

impl Router for FabricRouter {
    /// The next tables replace the current ones, with spraying orders over them and no
    /// stamped path kept from the old ones.
    fn update_tables(&mut self) {
        let Some(table) = self.table_updates.pop() else {
            return;
        };
        self.spray = Spray::over(&table, self.spray.rounds);
        self.table = table;
        if self.paths.is_some() {
            self.paths = Some(PathCache::new(2 * self.table.terminals()));
        }
    }

    fn inject(&mut self, _src: usize, cell: &mut Cell) {
        cell.route_tag = if self.mode.needs_groups {
            UNDECIDED
        } else {
            MINIMAL
        };
        if let Some(tag) = self.stamp_of(cell) {
            cell.route_tag = tag;
        }
    }

    fn route(
        &mut self,
        switch: usize,
        input: usize,
        cell: &mut Cell,
        view: &dyn LocalView,
    ) -> usize {
        if let Some(output) = stamp::pop(cell) {
            return output;
        }
        let (dst_switch, dst_port) = self.table.terminal_at(cell.dst as usize);
        if switch == dst_switch {
            return dst_port;
        }
        if !self.table.complete() && !self.table.reaches(switch, dst_switch) {
            return NO_ROUTE; // the destination's switch failed
        }
        let mut decision = Decision {
            table: &self.table,
            switch,
            input,
            cell,
            view,
            rng: &mut self.rngs[switch],
            spray: &mut self.spray,
            adaptive: &mut self.adaptive,
            salt: self.salts[switch],
            path_label: self.path_label,
        };
        let choose = if decision.cell.vc < self.ordered_below_vc {
            modes::sampled_adaptive::MINIMAL_DETERMINISTIC.choose
        } else {
            self.mode.choose
        };
        choose(&mut decision)
    }

    /// A stamped path or a chosen intermediate group is dropped: the cell goes back on
    /// minimal routes, hop by hop.
    fn turn_around(&mut self, cell: &mut Cell) {
        cell.route_tag = MINIMAL;
    }

    fn toward_intermediate(&self, cell: &Cell) -> bool {
        self.mode.needs_groups && cell.route_tag < UNDECIDED
    }

    fn absorb_counts(&mut self, other: &Self) {
        self.adaptive.nonminimal_cells += other.adaptive.nonminimal_cells;
        self.adaptive.cells_routed += other.adaptive.cells_routed;
        self.adaptive.local_detours += other.adaptive.local_detours;
    }

    fn nonminimal_cells(&self) -> Option<(u64, u64)> {
        modes::sampled_adaptive::counts_nonminimal(self.mode)
            .then_some((self.adaptive.nonminimal_cells, self.adaptive.cells_routed))
    }

    fn local_detours(&self) -> Option<u64> {
        self.local_turn_rule()
            .on()
            .then_some(self.adaptive.local_detours)
    }

    fn planned_output(&self, switch: usize, _input: usize, cell: &Cell) -> Option<usize> {
        if let Some(output) = stamp::peek(cell) {
            return Some(output);
        }
        let (dst_switch, dst_port) = self.table.terminal_at(cell.dst as usize);
        if switch == dst_switch {
            return Some(dst_port);
        }
        let plan = self.mode.plan?;
        Some(plan(&self.table, switch, self.salts[switch], cell))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::topology::{Attachment, Topology};

    fn cell(src: usize, dst: usize) -> Cell {
        Cell::new(src as u16, dst as u16, 64, true, 0, 0)
    }

    /// Walks a cell from `src` to wherever the router sends it; returns the endpoint reached and
    /// the switches crossed.
    fn walk(
        t: &Topology,
        router: &mut FabricRouter,
        src: usize,
        dst: usize,
    ) -> (usize, Vec<usize>) {
        let mut c = cell(src, dst);
        router.inject(src, &mut c);
        let (mut switch, mut input) = t.endpoint_port(src).unwrap();
        let mut path = vec![];
        loop {
            path.push(switch);
            assert!(path.len() < 16, "routing loops: {path:?}");
            let output = router.route(switch, input, &mut c, &Backlog(vec![]));
            match t.peer(switch, output).unwrap() {
                Attachment::Endpoint(e) => return (e, path),
                Attachment::SwitchPort { switch: s, port } => (switch, input) = (s, port),
            }
        }
    }

    /// Every mode that routes minimally on any topology.
    const MINIMAL_MODES: [&str; 6] = [
        "deterministic",
        "ecmp",
        "spray",
        "rr_fixed",
        "random",
        "least_loaded",
    ];

    fn router(t: &Topology, name: &str) -> FabricRouter {
        FabricRouter::new(RouteTable::new(t).unwrap(), mode(name).unwrap(), 7, 4)
    }

    /// A stamped path is the one hop-by-hop routing takes, for every pair, label and
    /// per-flow mode, on a fat-tree and a Dragonfly, whether walked or found in the cache;
    /// modes that are not per flow stamp nothing.
    #[test]
    fn stamped_paths_are_the_hop_by_hop_paths() {
        let topologies = [
            Topology::fat_tree(4).unwrap(),
            Topology::dragonfly(2, 4, 2, 9).unwrap(),
        ];
        for t in &topologies {
            for name in MINIMAL_MODES {
                let label = PathLabel::NextVc;
                let mut hop_by_hop = router(t, name).with_path_label(label);
                let mut stamped = router(t, name).with_path_label(label).with_stamped_paths();
                for round in 0..2 {
                    for src in 0..t.endpoints() {
                        for dst in (0..t.endpoints()).filter(|&d| d != src) {
                            let mut c = cell(src, dst);
                            c.next_vc = round * 3;
                            stamped.inject(src, &mut c);
                            let is_stamped = stamp::peek(&c).is_some();
                            assert_eq!(is_stamped, mode(name).unwrap().per_flow, "{name}");
                            if !is_stamped {
                                continue;
                            }
                            let mut plain = cell(src, dst);
                            plain.next_vc = c.next_vc;
                            hop_by_hop.inject(src, &mut plain);
                            let (mut switch, mut input) = t.endpoint_port(src).unwrap();
                            loop {
                                let view = Backlog(vec![]);
                                let expected = hop_by_hop.route(switch, input, &mut plain, &view);
                                let got = stamped.route(switch, input, &mut c, &view);
                                assert_eq!(got, expected, "{name} {src}->{dst} at {switch}");
                                match t.peer(switch, got).unwrap() {
                                    Attachment::Endpoint(e) => break assert_eq!(e, dst),
                                    Attachment::SwitchPort { switch: s, port } => {
                                        (switch, input) = (s, port)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_minimal_mode_takes_a_shortest_path_on_a_fat_tree() {
        let t = Topology::fat_tree(4).unwrap();
        for name in MINIMAL_MODES {
            let mut r = router(&t, name);
            for src in 0..t.endpoints() {
                for dst in 0..t.endpoints() {
                    let (reached, path) = walk(&t, &mut r, src, dst);
                    assert_eq!(reached, dst, "{name}");
                    let expected = if src / 2 == dst / 2 {
                        1
                    } else if src / 4 == dst / 4 {
                        3
                    } else {
                        5
                    };
                    assert_eq!(path.len(), expected, "{name} {src}->{dst}: {path:?}");
                }
            }
        }
    }

    #[test]
    fn ecmp_keeps_a_flow_on_one_path_and_spray_uses_every_core() {
        let t = Topology::fat_tree(4).unwrap();
        let mut ecmp = router(&t, "ecmp");
        let first = walk(&t, &mut ecmp, 0, 15).1;
        assert!((0..20).all(|_| walk(&t, &mut ecmp, 0, 15).1 == first));
        let mut spray = router(&t, "spray");
        let mut cores: Vec<usize> = (0..40).map(|_| walk(&t, &mut spray, 0, 15).1[2]).collect();
        cores.sort();
        cores.dedup();
        assert_eq!(cores, vec![16, 17, 18, 19], "four cores, all used");
    }

    /// Walks a cell labelled `path` (kept in `next_vc` here) under a labelling ECMP router.
    fn walk_labelled(
        t: &Topology,
        router: &mut FabricRouter,
        src: usize,
        dst: usize,
        path: u16,
    ) -> Vec<usize> {
        let mut c = cell(src, dst);
        c.next_vc = path;
        router.inject(src, &mut c);
        let (mut switch, mut input) = t.endpoint_port(src).unwrap();
        let mut hops = vec![];
        loop {
            hops.push(switch);
            let output = router.route(switch, input, &mut c, &Backlog(vec![]));
            match t.peer(switch, output).unwrap() {
                Attachment::Endpoint(_) => return hops,
                Attachment::SwitchPort { switch: s, port } => (switch, input) = (s, port),
            }
        }
    }

    #[test]
    fn ecmp_hashes_path_labels_apart_and_label_zero_as_the_pair_alone() {
        let t = Topology::fat_tree(4).unwrap();
        let mut plain = router(&t, "ecmp");
        let mut labelled = router(&t, "ecmp").with_path_label(PathLabel::NextVc);
        let (mut pairs, mut apart) = (0, 0);
        for src in 0..16 {
            for dst in (0..16).filter(|d| d / 4 != src / 4) {
                let zero = walk_labelled(&t, &mut labelled, src, dst, 0);
                assert_eq!(
                    zero,
                    walk(&t, &mut plain, src, dst).1,
                    "label 0: the pair's hash"
                );
                let one = walk_labelled(&t, &mut labelled, src, dst, 1);
                assert_eq!(
                    one,
                    walk_labelled(&t, &mut labelled, src, dst, 1),
                    "one path per label"
                );
                pairs += 1;
                apart += (zero != one) as u32;
            }
        }
        // Four paths between pods: independent hashes differ 3 times in 4.
        assert!(apart * 2 > pairs, "{apart} of {pairs} pairs apart");
    }

    #[test]
    fn spray_serves_each_order_round_robin() {
        let t = Topology::fat_tree(8).unwrap();
        let mut spray = router(&t, "spray");
        // Edge uplinks: every pass over the four aggregation switches uses each exactly once.
        for _ in 0..12 {
            let mut pass: Vec<usize> = (0..4).map(|_| walk(&t, &mut spray, 0, 127).1[1]).collect();
            pass.sort();
            assert_eq!(pass, vec![32, 33, 34, 35]);
        }
    }

    /// Queues with some outputs unusable.
    struct Masked(Vec<usize>);

    impl LocalView for Masked {
        fn backlog_cells(&self, _: usize) -> u32 {
            0
        }
        fn usable(&self, output: usize) -> bool {
            !self.0.contains(&output)
        }
    }

    #[test]
    fn every_minimal_mode_avoids_unusable_outputs_and_says_when_none_is_left() {
        let t = Topology::fat_tree(4).unwrap();
        // Edge switch 0 (hosts 0 and 1) reaches host 15 over uplinks on ports 2 and 3.
        for name in MINIMAL_MODES {
            let mut r = router(&t, name);
            for _ in 0..20 {
                let mut c = cell(0, 15);
                r.inject(0, &mut c);
                assert_eq!(r.route(0, 0, &mut c, &Masked(vec![2])), 3, "{name}");
                let mut c = cell(1, 15);
                r.inject(1, &mut c);
                assert_eq!(r.route(0, 1, &mut c, &Masked(vec![3])), 2, "{name}");
            }
            let mut c = cell(0, 15);
            r.inject(0, &mut c);
            assert_eq!(
                r.route(0, 0, &mut c, &Masked(vec![2, 3])),
                NO_ROUTE,
                "{name}"
            );
        }
    }

    #[test]
    fn rr_fixed_serves_the_table_order_every_pass() {
        let t = Topology::fat_tree(8).unwrap();
        let mut r = router(&t, "rr_fixed");
        let first: Vec<usize> = (0..4).map(|_| walk(&t, &mut r, 0, 127).1[1]).collect();
        for _ in 0..6 {
            let pass: Vec<usize> = (0..4).map(|_| walk(&t, &mut r, 0, 127).1[1]).collect();
            assert_eq!(pass, first);
        }
    }

    #[test]
    fn valiant_crosses_an_intermediate_group_and_ugal_stays_minimal_when_idle() {
        let t = Topology::dragonfly(2, 4, 2, 9).unwrap();
        let group = |s: usize| t.group(s);
        let mut valiant = router(&t, "valiant");
        let mut ugal = router(&t, "ugal");
        for (src, dst) in [(0, 70), (5, 20), (17, 3)] {
            let (reached, path) = walk(&t, &mut valiant, src, dst);
            assert_eq!(reached, dst);
            let (first, last) = (group(path[0]), group(*path.last().unwrap()));
            assert!(
                path.iter().any(|&s| group(s) != first && group(s) != last),
                "{path:?}"
            );
            let (reached, path) = walk(&t, &mut ugal, src, dst);
            assert_eq!(reached, dst);
            let table = RouteTable::new(&t).unwrap();
            assert_eq!(
                path.len() as u32,
                1 + table.hops(path[0], *path.last().unwrap())
            );
        }
        // Inside one group Valiant stays minimal.
        let (_, path) = walk(&t, &mut valiant, 0, 7);
        assert!(path.iter().all(|&s| group(s) == 0));
    }

    #[test]
    fn ugal_detours_when_the_minimal_output_is_backed_up() {
        let t = Topology::dragonfly(2, 4, 2, 9).unwrap();
        let mut r = router(&t, "ugal");
        let (src, dst) = (0, 70);
        let (switch, input) = t.endpoint_port(src).unwrap();
        let mut detours = 0;
        for _ in 0..50 {
            let mut c = cell(src, dst);
            r.inject(src, &mut c);
            // Every output is loaded, the minimal one (the local link to the router holding
            // the global link to group 8) far more. One of the seven intermediate groups is
            // reached through that router too, so UGAL detours through the other six.
            let minimal = r
                .table()
                .ports(r.table().toward_switch(switch, 35))
                .to_vec();
            assert_eq!(minimal.len(), 1);
            let mut backlog = vec![1; 16];
            for &port in &minimal {
                backlog[port as usize] = 100;
            }
            let output = r.route(switch, input, &mut c, &Backlog(backlog.clone()));
            if c.route_tag != MINIMAL {
                detours += 1;
                assert_eq!(backlog[output], 1, "a detour takes an idle output");
            }
        }
        assert!(
            (34..=50).contains(&detours),
            "{detours} of 50 detoured, expected about 43"
        );
    }

    #[test]
    fn routing_tables_for_the_big_topologies_build() {
        let fat = RouteTable::new(&Topology::fat_tree(12).unwrap()).unwrap();
        assert_eq!(fat.terminals(), 432);
        let dragonfly = RouteTable::new(&Topology::dragonfly(4, 8, 4, 33).unwrap()).unwrap();
        assert_eq!(dragonfly.terminals(), 1056);
        // Any two routers of a canonical Dragonfly are at most local-global-local apart.
        assert!((0..264).all(|a| (0..264).all(|b| dragonfly.hops(a, b) <= 3)));
    }

    /// A failed switch's hosts are unreachable: the tables without it build only when told it
    /// failed, and then route no cell toward it.
    #[test]
    fn tables_without_a_failed_switch_route_nothing_to_its_hosts() {
        let mut t = Topology::fat_tree(4).unwrap();
        for port in 0..t.switch_ports(0) {
            t.cut(0, port);
        }
        assert!(RouteTable::new(&t).is_err(), "switch 0's hosts are cut off");
        let table = RouteTable::without_switches(&t, &[0]).unwrap();
        assert!(!table.complete() && !table.reaches(1, 0) && table.reaches(1, 2));
        let mut r = FabricRouter::new(table, mode("ecmp").unwrap(), 7, 4);
        let mut c = cell(2, 0); // host 2 (switch 1) to host 0 (switch 0)
        r.inject(2, &mut c);
        assert_eq!(r.route(1, 0, &mut c, &NeverRefuses), NO_ROUTE);
    }
}
