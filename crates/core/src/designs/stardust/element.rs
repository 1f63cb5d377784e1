//! The Fabric Element (Stardust §4.2, Fig. 6): a cell switch with no packet logic, built on the
//! [`CellElement`] block. Every cell is forwarded on arrival to one of the links its routing
//! table allows toward the cell's destination adapter, chosen per cell by the fabric's spraying
//! mode (§3.2, §5.3); each output link has a data queue per traffic class and a control queue
//! served first (the separate control crossbar); data cells that leave a queue at or above the
//! FCI threshold carry the congestion bit (§4.2). As the last resort (§5.5) an output queue
//! that reaches its pause threshold pauses the inputs that feed it (link-level ON/OFF of the
//! data path; control cells are never paused). A data cell that still finds the pool full is
//! dropped and counted, which fails a Stardust run's lossless check. The push fabric of Fig. 7
//! has no pause: it drops, and discards whole packets as cell switches do. This file adds what
//! is Stardust's own: reachability messages and failures, and the last-stage queue depths of
//! §4.2.1.

use serde::{Deserialize, Serialize};

use super::reach::{self, DeviceReach, Loss, ReachDevice};
use super::CellFormat;
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::cell_element::{Arbitration, CellElement, CellElementSpec};
pub use crate::blocks::cell_element::{Congestion, ElementCounters};
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};
use crate::engine::stats::OccupancyHistogram;
use crate::engine::time::TimePs;
use crate::keys::at_most;
use crate::scenario::{invalid, ScenarioError};

/// A fabric element.
pub struct Element {
    /// Index among the router's switches.
    switch: usize,
    core: CellElement<CellFormat>,
    /// Per output: it leads to an adapter (a last-stage link).
    last_stage: Vec<bool>,
    measure_from_ps: TimePs,
    /// Depth of the last-stage data queue each data cell found on arrival, during measurement
    /// (§4.2.1's quantity, sampled per cell arrival: the paper does not say how; our reading).
    pub last_stage_depth: OccupancyHistogram,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
}

/// Where an element sits and what it measures.
pub struct ElementSpec {
    /// Index among the router's switches.
    pub switch: usize,
    /// Its ports' transmit sides.
    pub ports: Vec<PriorityPort>,
    /// Per port: it leads to an adapter.
    pub last_stage: Vec<bool>,
    /// Cell sizes.
    pub format: CellFormat,
    /// Data cells a queue holds.
    pub queue_cells: u32,
    /// Depth from which departing data cells carry FCI.
    pub fci_threshold_cells: u32,
    /// The least time a data cell holds its output link (the pipeline's slot per cell).
    pub cell_slot_ps: TimePs,
    /// What it does about a filling queue.
    pub congestion: Congestion,
    /// Queue depths are sampled from here.
    pub measure_from_ps: TimePs,
    /// Its reachability tables, if the fabric keeps them by messages.
    pub reach: Option<DeviceReach>,
}

/// The element's output queues and, where it keeps them, its reachability tables for the
/// cell's destination host, as routing sees them.
struct Backlog<'a> {
    ports: &'a [PriorityPort],
    reach: Option<&'a DeviceReach>,
    dst: u16,
}

impl LocalView for Backlog<'_> {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.ports[output].data_cells()
    }

    fn usable(&self, output: usize) -> bool {
        self.reach.is_none_or(|r| r.usable(output, self.dst))
    }
}

impl Element {
    /// Its switch in the topology.
    pub fn switch(&self) -> usize {
        self.switch
    }

    /// What it counted.
    pub fn counters(&self) -> &ElementCounters {
        &self.core.counters
    }

    /// An element as `spec` says: traffic classes are its virtual channels, served by strict
    /// priority (class 0 first).
    pub fn new(spec: ElementSpec) -> Self {
        Element {
            switch: spec.switch,
            core: CellElement::new(CellElementSpec {
                ports: spec.ports,
                wire: spec.format,
                arbitration: Arbitration::StrictPriority,
                queue_cells: spec.queue_cells,
                mark_threshold_cells: spec.fci_threshold_cells,
                congestion: spec.congestion,
                data_slot_ps: spec.cell_slot_ps,
            }),
            last_stage: spec.last_stage,
            measure_from_ps: spec.measure_from_ps,
            last_stage_depth: OccupancyHistogram::default(),
            reach: spec.reach,
        }
    }
}

#[cfg(test)]
impl Element {
    /// Injects `fault` into every port (test only).
    pub(crate) fn inject_fault(&mut self, fault: crate::blocks::switch::Fault) {
        for port in self.core.ports_mut() {
            port.fault = fault;
        }
    }

    /// Data cells its ports took from their queues under a fault (test only).
    pub(crate) fn fault_taken(&self) -> u64 {
        self.core.ports().iter().map(|p| p.fault.taken).sum()
    }

    /// Its counters, to change (test only).
    pub(crate) fn counters_mut(&mut self) -> &mut ElementCounters {
        &mut self.core.counters
    }
}

impl<R: Router> Node<R> for Element {
    fn cells_held(&self) -> u64 {
        self.core.cells_held()
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        if reach::arrival(self, ctx, port, cell) {
            return;
        }
        let dst = ctx.cells[cell].dst;
        let view = Backlog {
            ports: self.core.ports(),
            reach: self.reach.as_ref(),
            dst,
        };
        let mut output = ctx
            .router
            .route(self.switch, port, &mut ctx.cells[cell], &view);
        if output == NO_ROUTE {
            if let Some(up) = self.reach.as_mut().and_then(|r| r.longer_route(port, dst)) {
                output = up;
            }
        }
        if output == NO_ROUTE {
            let reach = self
                .reach
                .as_mut()
                .expect("only reachability leaves no route");
            reach::lose(ctx, &mut reach.counters, cell, Loss::NoRoute);
            return;
        }
        let control = CellFormat::is_control(&ctx.cells[cell]);
        if !control && self.last_stage[output] && ctx.now_ps >= self.measure_from_ps {
            let depth = self.core.ports()[output].data_cells();
            self.last_stage_depth.record_n(depth as usize, 1);
        }
        if !self.core.accept(ctx, port, output, cell) {
            self.core.counters.packets_lost += super::drop_with_packets(ctx, cell);
        }
    }

    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        if self.reach.as_ref().is_some_and(|r| r.failed) {
            return;
        }
        self.core
            .signal(ctx, port, matches!(signal, FlowSignal::Off { .. }));
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        if reach::is_reach_tag(tag) {
            reach::timer(self, ctx, tag);
        } else {
            self.core.kick(ctx, tag as usize);
        }
    }
}

impl Element {
    /// Prefetches what timer `tag` will touch: an output's next cell (a hint).
    #[inline]
    pub(super) fn warm_timer(&self, cells: &CellArena, tag: u32) {
        if !reach::is_reach_tag(tag) {
            self.core.warm(cells, tag as usize);
        }
    }
}

impl ReachDevice for Element {
    fn reach(&mut self) -> Option<&mut DeviceReach> {
        self.reach.as_mut()
    }

    fn fabric_ports(&self) -> usize {
        self.core.ports().len()
    }

    fn queue_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId) {
        self.core.ports_mut()[port].push_control(ctx.cells, cell);
        self.core.kick(ctx, port);
    }

    fn flush<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, loss: Loss) {
        let reach = self.reach.as_mut().expect("only reachability flushes");
        let ports = self.core.ports_mut();
        let lost = reach::flush_port(ctx, &mut reach.counters, &mut ports[port], loss);
        self.core.lost(lost);
        if !reach.failed {
            self.core.maybe_resume(ctx, port);
        }
    }

    fn release<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        self.core.ports_mut()[port].pause_data(false);
        self.core.kick(ctx, port);
    }

    fn reset<R: Router>(&mut self, _ctx: &mut Context<'_, R>) {
        self.core.reset();
    }
}

/// The default pause depth, in percent of an element's queue (reading R13: a pause is the
/// last resort of a nearly full queue, §5.5).
const PAUSE_PERCENT: u64 = 95;

/// Fabric elements.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ElementConfig {
    /// Data cells per output link (128 in §6.2's extrapolation). With credits the queues share
    /// a pool of this many per link (§5.5, reading R13) and a data cell is dropped only when
    /// the pool is full; in push mode each queue (per traffic class) holds this many.
    pub queue_cells: u32,
    /// Queue depth at and above which data cells leaving the queue carry the FCI bit (§4.2;
    /// reading R12: 64 cells, half the queue, so a fabric at 95% utilization rarely marks).
    pub fci_threshold_cells: u32,
    /// Queue depth at which an output pauses the inputs that feed it (§5.5: "as a last
    /// resort, the Fabric Element pipe can be paused", an event of "infinitesimal"
    /// probability); it resumes them at half this depth. Absent: 95% of `queue_cells`
    /// (reading R13), so a pause answers a queue that is nearly full, not routine load; the
    /// cells paused inputs still have on their way borrow from the pool the element's links
    /// share. Push mode never pauses: there it is the depth from which a queue refuses new
    /// packets (early packet discard; absent, half the queue).
    pub pause_cells: Option<u32>,
    /// The device's latency from a cell's arrival to its leaving, beyond queueing and
    /// serialization (§5.6 puts it at 0.5-4 µs a hop; 0 by default, as the paper's
    /// simulations leave it out). Modelled as a pipeline at the outputs: everything an element
    /// sends, cells and flow-control signals, reaches the far end this much later.
    pub latency_ns: f64,
    /// The least time a data cell holds its output link, whatever its bytes: the element's
    /// pipeline slot per cell (App. B: a pipeline handles one unit per clock, so cells per
    /// second are a limit beside bits per second; §4.2: an element "handles only fixed size
    /// cells"; §4.2.1's unit is the fabric cell time). The paper gives no number for a fabric
    /// element: 0 (the default) leaves only serialization, so a short cell (a burst's last)
    /// takes only its bytes' time; a full cell's time on the link (204.8 ns for 256 bytes at
    /// 10 Gbit/s) makes every data cell cost a whole cell time, as a fixed-cell device does.
    /// Control cells, on the separate control crossbar (§4.2), are not held.
    pub cell_slot_ns: f64,
}

impl Default for ElementConfig {
    fn default() -> Self {
        ElementConfig {
            queue_cells: 128,
            fci_threshold_cells: 64,
            pause_cells: None,
            latency_ns: 0.0,
            cell_slot_ns: 0.0,
        }
    }
}

impl ElementConfig {
    /// The queue depth that pauses inputs: `pause_cells`, or 95% of the queue (rounded up).
    pub fn pause_cells(&self) -> u32 {
        self.pause_cells
            .unwrap_or((self.queue_cells as u64 * PAUSE_PERCENT).div_ceil(100) as u32)
    }

    /// A push fabric's early packet discard depth: `pause_cells`, or half the queue.
    pub fn early_discard_cells(&self) -> u32 {
        self.pause_cells.unwrap_or(self.queue_cells.div_ceil(2))
    }
}

impl ElementConfig {
    /// Checks the element keys.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.latency_ns.is_finite() && self.latency_ns >= 0.0) {
            return Err(invalid(
                "element.latency_ns",
                "expected 0 or more nanoseconds",
            ));
        }
        if !(self.cell_slot_ns.is_finite() && self.cell_slot_ns >= 0.0) {
            return Err(invalid(
                "element.cell_slot_ns",
                "expected 0 or more nanoseconds",
            ));
        }
        if self.queue_cells == 0 {
            return Err(invalid("element.queue_cells", "expected at least 1 cell"));
        }
        let (fci_cells, queue_cells) = (self.fci_threshold_cells, self.queue_cells);
        at_most(
            "element.fci_threshold_cells",
            fci_cells,
            "element.queue_cells",
            queue_cells,
        )?;
        let pause = self.pause_cells();
        if pause == 0 || pause > self.queue_cells {
            return Err(invalid(
                "element.pause_cells",
                format!("expected 1 to element.queue_cells ({})", self.queue_cells),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ElementConfig;

    #[test]
    fn the_pause_depth_defaults_to_95_percent_of_the_queue() {
        let mut element = ElementConfig::default();
        assert_eq!(element.pause_cells(), 122, "95% of 128 cells, rounded up");
        assert_eq!(element.early_discard_cells(), 64, "push: half the queue");
        element.queue_cells = 20;
        assert_eq!(element.pause_cells(), 19);
        element.pause_cells = Some(10);
        assert_eq!(
            (element.pause_cells(), element.early_discard_cells()),
            (10, 10)
        );
    }
}
