//! A link between two VC routers that fails mid-run (Gibson et al., "Aquila: A unified,
//! low-latency fabric for datacenter networks", NSDI '22, §3.2). As the paper describes it,
//! and as we read what it leaves open:
//! - at the failure both directions stop: the output never sends again, so its queue and the
//!   used credits of its VCs grow as cells are switched to it, and the adaptive modes, which
//!   compare exactly those, steer around it "by queue depth" at once; cells on the wire are
//!   lost, and so are credits;
//! - a delay later (`failures[i].tables_after_ns`, 10 ms by default: the paper gives none) the
//!   SDN Routing Engine removes the link from every switch's tables: the fabric's router takes
//!   tables computed without it, and each end drops the cells it still holds for the dead
//!   output (queued at it, or waiting for it in an input FIFO, whose credits then go back
//!   upstream), which no table can move any more;
//! - a failed switch (a TiN, with its hosts) drops every cell it holds and every cell that
//!   reaches it, and sends nothing: each of its links fails as above at its other end; once
//!   the tables drop it, a cell for one of its hosts has no route and is dropped at the first
//!   router it reaches (`cells_unroutable`), its credit returned upstream;
//! - nothing is repaired, and loss is not recovered (the paper leaves that to the hosts' IP
//!   stack, which is not modelled).

use super::{VcRouter, FREE, NO_VC};
use crate::blocks::cell::CellId;
use crate::blocks::fabric::Context;
use crate::blocks::routing::Router;
use crate::engine::time::TimePs;

/// A link cut or a switch failed, in the units the network runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// When it fails.
    pub at_ps: TimePs,
    /// When the tables drop it.
    pub tables_ps: TimePs,
    /// The switch that fails, or one end of the link that does, by its number in the topology.
    pub switch: usize,
    /// The port of `switch` the failing link is cabled to; `None`: the whole switch fails.
    pub port: Option<usize>,
}

impl Failure {
    /// `failures` with their index as written, in the order their table updates come: by
    /// time, then by switch (the order the fabric runs same-instant timers of different
    /// switches in), then as written.
    pub fn in_update_order(failures: &[Failure]) -> Vec<(usize, Failure)> {
        let mut ordered: Vec<(usize, Failure)> = failures.iter().copied().enumerate().collect();
        ordered.sort_by_key(|(i, f)| (f.tables_ps, f.switch, *i));
        ordered
    }
}

/// What a router does at one of its failure timers, for the port in the tag's low bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureStep {
    /// The link on the port fails.
    Fail,
    /// The whole router fails (the tag's port is unused).
    FailSwitch,
    /// The tables drop the link: the router drops what it holds for the port.
    Tables,
    /// As `Tables`, and this end also installs the fabric's new tables (one end of each link
    /// does).
    TablesAndRouter,
}

const STEP_SHIFT: u32 = 16;

impl FailureStep {
    /// The timer tag of this step for `port`.
    pub fn tag(self, port: usize) -> u32 {
        let step = match self {
            FailureStep::Fail => 1,
            FailureStep::Tables => 2,
            FailureStep::TablesAndRouter => 3,
            FailureStep::FailSwitch => 4,
        };
        (step << STEP_SHIFT) | port as u32
    }

    /// The step and port of timer tag `tag`.
    fn of(tag: u32) -> (FailureStep, usize) {
        let step = match tag >> STEP_SHIFT {
            1 => FailureStep::Fail,
            2 => FailureStep::Tables,
            3 => FailureStep::TablesAndRouter,
            4 => FailureStep::FailSwitch,
            other => panic!("a VC router sets no timer of kind {other}"),
        };
        (step, (tag & ((1 << STEP_SHIFT) - 1)) as usize)
    }
}

/// Cells one router lost to dead links, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailureLosses {
    /// Cells on a link's wire toward this router when the link failed, or reaching this
    /// router after it failed.
    pub lost_on_wire: u64,
    /// Cells this router still held for a dead output when the tables dropped its link.
    pub stranded: u64,
    /// Cells this router held when it failed.
    pub lost_in_failed_switch: u64,
    /// Cells that reached this router for a host of a failed switch after the tables dropped
    /// it: no route.
    pub unroutable: u64,
}

/// A router's dead links and what they cost it.
#[derive(Clone, Debug)]
pub(super) struct Failures {
    /// Some link has failed (so that a router whose links are all up, the rule, reads no
    /// more than this flag per arrival).
    any_down: bool,
    /// Per port: when its link failed ([`TimePs::MAX`]: it has not).
    down_since_ps: Vec<TimePs>,
    pub(super) losses: FailureLosses,
}

impl Failures {
    /// `ports` ports, every link up.
    pub(super) fn new(ports: usize) -> Self {
        Failures {
            any_down: false,
            down_since_ps: vec![TimePs::MAX; ports],
            losses: FailureLosses::default(),
        }
    }

    /// The link on `port` fails at `now_ps`, unless it failed before.
    fn fail(&mut self, port: usize, now_ps: TimePs) {
        self.any_down = true;
        let since = &mut self.down_since_ps[port];
        *since = (*since).min(now_ps);
    }

    /// True if the link on `port` had failed at `at_ps`.
    #[inline]
    pub(super) fn down_at(&self, port: usize, at_ps: TimePs) -> bool {
        self.any_down && at_ps >= self.down_since_ps[port]
    }
}

impl VcRouter {
    /// Runs the failure step timer `tag` names.
    pub(super) fn failure_step<R: Router>(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        let (step, port) = FailureStep::of(tag);
        match step {
            FailureStep::Fail => {
                self.failures.fail(port, ctx.now_ps);
                self.outputs.links[port].hold_until(TimePs::MAX);
            }
            FailureStep::FailSwitch => self.fail_switch(ctx),
            FailureStep::Tables => self.strand(ctx, port),
            FailureStep::TablesAndRouter => {
                ctx.router.update_tables();
                self.strand(ctx, port);
            }
        }
    }

    /// `cell` reached `port` after the link failed: it was on the wire, and is lost.
    pub(super) fn lose_on_wire<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: CellId) {
        ctx.drop_cell(cell);
        self.failures.losses.lost_on_wire += 1;
    }

    /// `cell`, a head that reached input `port` on its VC, has no route (its destination's
    /// switch failed): it is dropped, and its buffer space credited back upstream.
    pub(super) fn lose_unroutable<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        cell: CellId,
    ) {
        let c = &ctx.cells[cell];
        let credit = (port as u16, c.vc, self.spec.unit.flits(c));
        self.scratch.credits.push(credit);
        ctx.drop_cell(cell);
        self.failures.losses.unroutable += 1;
        self.allocation_due = true;
        self.wake_at_next_edge(ctx);
    }

    /// The whole router fails: every link stops, every cell it holds is lost, and it will
    /// take in nothing more (every later arrival is lost as on a dead link's wire).
    fn fail_switch<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        self.catch_up(ctx.now_ps);
        for port in 0..self.ports {
            // Failed since time 0: a cell latched after now is lost, even one that reached
            // the input wire between the last clock edge and now.
            self.failures.fail(port, 0);
            self.outputs.links[port].hold_until(TimePs::MAX);
        }
        let queues = self.inputs.fifos.iter_mut().chain(&mut self.outputs.queues);
        for queue in queues {
            while let Some(cell) = ctx.cells.pop_front(queue) {
                ctx.drop_cell(cell);
                self.failures.losses.lost_in_failed_switch += 1;
            }
        }
        self.inputs.out_vc.fill(NO_VC);
        self.inputs.occupancy = super::occupancy::Occupancy::new(self.ports);
        self.outputs.owner.fill(FREE);
        self.outputs.queued.fill(0);
        self.outputs.ports_queued = crate::blocks::port_set::PortSet::EMPTY;
        self.scratch.credits.clear();
        self.held_cells = 0;
        self.allocation_due = false;
        self.vc_allocation_due = false;
        self.slept_from = None;
    }

    /// Drops every cell held for dead output `port`: its queues, and the cells in the input
    /// FIFOs routed to it (their credits go back upstream); frees the output VCs of `port`
    /// that input VCs held.
    fn strand<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let vcs = self.vcs;
        let mut stranded = 0u64;
        for output_vc in port * vcs..(port + 1) * vcs {
            while let Some(cell) = ctx.cells.pop_front(&mut self.outputs.queues[output_vc]) {
                self.held_cells -= self.spec.unit.flits(&ctx.cells[cell]) as u64;
                ctx.drop_cell(cell);
                stranded += 1;
            }
            let owner = std::mem::replace(&mut self.outputs.owner[output_vc], FREE);
            if owner != FREE {
                let input_vc = owner as usize;
                self.inputs.out_vc[input_vc] = NO_VC;
                self.inputs
                    .occupancy
                    .clear_holder(input_vc / vcs, input_vc % vcs);
            }
        }
        self.outputs.queued[port] = 0;
        self.outputs.ports_queued.remove(port);
        let mut kept = Vec::new();
        for input_vc in 0..self.ports * vcs {
            let fifo = &self.inputs.fifos[input_vc];
            if !ctx.cells.queued(fifo).any(|c| c.out_port as usize == port) {
                continue;
            }
            while let Some(cell) = ctx.cells.pop_front(&mut self.inputs.fifos[input_vc]) {
                kept.push(cell);
            }
            for cell in kept.drain(..) {
                if ctx.cells[cell].out_port as usize != port {
                    ctx.cells.push_back(&mut self.inputs.fifos[input_vc], cell);
                    continue;
                }
                let flits = self.spec.unit.flits(&ctx.cells[cell]);
                self.held_cells -= flits as u64;
                let (input, vc) = (input_vc / vcs, input_vc % vcs);
                self.scratch.credits.push((input as u16, vc as u16, flits));
                ctx.drop_cell(cell);
                stranded += 1;
            }
            self.refront(ctx.cells, input_vc);
        }
        self.failures.losses.stranded += stranded;
        if stranded > 0 {
            self.allocation_due = true;
            self.vc_allocation_due = true;
            self.wake_at_next_edge(ctx);
        }
    }

    /// Sets the front state of input VC `input_vc` from its FIFO after cells were taken out
    /// of it (failures run with one-cell packets: every cell is a head).
    fn refront(&mut self, cells: &crate::blocks::cell::CellArena, input_vc: usize) {
        let (port, vc) = (input_vc / self.vcs, input_vc % self.vcs);
        let occupancy = &mut self.inputs.occupancy;
        occupancy.clear_head(port, vc);
        match self.inputs.fifos[input_vc].front() {
            None => {
                occupancy.clear_holder(port, vc);
            }
            Some(front) => {
                self.inputs.front_flits[input_vc] = self.spec.unit.flits(&cells[front]);
                if self.inputs.out_vc[input_vc] == NO_VC {
                    let c = &cells[front];
                    self.inputs.front_wants[input_vc] = (c.out_port, c.next_vc);
                    occupancy.set_head(port, vc);
                }
            }
        }
    }
}
