//! The Fabric Element (Stardust §4.2, Fig. 6): a cell switch with no packet logic. Every cell
//! is forwarded on arrival to one of the links its routing table allows toward the cell's
//! destination adapter, chosen per cell by the fabric's spraying mode (§3.2, §5.3); each output
//! link has a data queue and a control queue served first (the separate control crossbar);
//! data cells that leave a queue at or above the FCI threshold carry the congestion bit
//! (§4.2). As the last resort (§5.5) an output queue that reaches its pause threshold sends
//! OFF to each input that feeds it a cell, and ON once it has drained below the resume
//! threshold (link-level ON/OFF of the data path; control cells are never paused). A data cell
//! that still finds its queue full is dropped and counted, which fails a Stardust run's
//! lossless check. The push fabric of Fig. 7 has no pause: it drops, and discards whole
//! packets as cell switches do (Romanow and Floyd 1995): once a cell of a packet is dropped
//! the rest of the packet is too (partial packet discard), and a queue at the threshold
//! refuses new packets whole (early packet discard).

use serde::{Deserialize, Serialize};

use super::reach::{self, DeviceReach, Loss, ReachDevice};
use super::{class_of, transmit, CellFormat, FCI, FIRST};
use crate::blocks::cell::{Cell, CellId, NO_PACKET};
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::port_set::PortSet;
use crate::blocks::priority_port::{Departure, PriorityPort};
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};
use crate::engine::stats::OccupancyHistogram;
use crate::engine::time::TimePs;
use crate::scenario::{invalid, ScenarioError};

/// What an element counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElementCounters {
    /// Cells sent on its links (cell-hops).
    pub cells_sent: u64,
    /// Data cells dropped on a full queue.
    pub cells_dropped: u64,
    /// Packets lost with them (those whose last byte a dropped cell carried; the packets a
    /// dropped cell began or crossed are discarded at reassembly).
    pub packets_lost: u64,
    /// Data cells sent with the FCI bit.
    pub cells_marked: u64,
    /// Deepest data queue seen, in cells.
    pub queue_peak_cells: u32,
    /// OFF signals sent upstream.
    pub pauses: u64,
}

/// What an element does about a filling queue.
#[derive(Clone, Copy, Debug)]
pub enum Congestion {
    /// Stardust: a data queue at `off_cells` pauses each input that adds to it, and releases
    /// them all once down to `on_cells`; queues draw on a pool shared by all the element's
    /// links (§5.5), and a cell is dropped only when the pool is full.
    Pause {
        /// Queue depth that pauses an input.
        off_cells: u32,
        /// Queue depth that resumes the inputs it paused.
        on_cells: u32,
        /// Data cells the element holds in all.
        pool_cells: u32,
    },
    /// A push fabric: a queue at `early_cells` refuses new packets; a packet that lost a cell
    /// loses the rest.
    Discard {
        /// Queue depth from which a packet's first cell is refused.
        early_cells: u32,
    },
}

/// A fabric element.
pub struct Element {
    /// Index among the router's switches.
    switch: usize,
    ports: Vec<PriorityPort>,
    format: CellFormat,
    queue_cells: u32,
    fci_threshold_cells: u32,
    congestion: Congestion,
    /// Push fabric: streams (source adapter, destination host) whose current packet is being
    /// discarded.
    discarding: Vec<(u16, u16)>,
    /// Per output: the inputs it paused.
    paused_by: Vec<PortSet>,
    /// Per input: the outputs holding it paused.
    pauses_on: Vec<u16>,
    /// Data cells held in all its queues (what the shared pool holds).
    pool_used: u32,
    /// Per output: it leads to an adapter (a last-stage link).
    last_stage: Vec<bool>,
    measure_from_ps: TimePs,
    /// What it counted.
    pub counters: ElementCounters,
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

    /// An element as `spec` says.
    pub fn new(spec: ElementSpec) -> Self {
        let n = spec.ports.len();
        Element {
            switch: spec.switch,
            ports: spec.ports,
            format: spec.format,
            queue_cells: spec.queue_cells,
            fci_threshold_cells: spec.fci_threshold_cells,
            congestion: spec.congestion,
            pool_used: 0,
            discarding: Vec::new(),
            paused_by: vec![PortSet::EMPTY; n],
            pauses_on: vec![0; n],
            last_stage: spec.last_stage,
            measure_from_ps: spec.measure_from_ps,
            counters: ElementCounters::default(),
            last_stage_depth: OccupancyHistogram::default(),
            reach: spec.reach,
        }
    }

    /// A data cell from `input` joined `output`'s queue, now `depth` deep: pause the input if
    /// the queue is at its threshold.
    fn maybe_pause<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        input: usize,
        output: usize,
        depth: u32,
    ) {
        let Congestion::Pause { off_cells, .. } = self.congestion else {
            return;
        };
        if depth < off_cells || self.paused_by[output].contains(input) {
            return;
        }
        self.paused_by[output].insert(input);
        self.pauses_on[input] += 1;
        if self.pauses_on[input] == 1 {
            self.counters.pauses += 1;
            ctx.send_signal(input, FlowSignal::Off { channel: 0 }, ctx.now_ps);
        }
    }

    /// `output`'s queue drained a cell: release the inputs it paused once it is low enough.
    fn maybe_resume<R: Router>(&mut self, ctx: &mut Context<'_, R>, output: usize) {
        let Congestion::Pause { on_cells, .. } = self.congestion else {
            return;
        };
        if self.ports[output].data_cells() > on_cells || self.paused_by[output].is_empty() {
            return;
        }
        for input in std::mem::take(&mut self.paused_by[output]).iter() {
            self.pauses_on[input] -= 1;
            if self.pauses_on[input] == 0 {
                ctx.send_signal(input, FlowSignal::On { channel: 0 }, ctx.now_ps);
            }
        }
    }

    /// True if data cell `cell` is dropped rather than joining its class's queue, `depth`
    /// deep: a full queue (each class has `queue_cells`), or a push fabric discarding the
    /// cell's packet.
    fn refuses(&mut self, cell: &Cell, depth: u32) -> bool {
        let early_cells = match self.congestion {
            Congestion::Pause { pool_cells, .. } => return self.pool_used >= pool_cells,
            Congestion::Discard { early_cells } => early_cells,
        };
        let stream = (cell.src, cell.dst);
        let ends_packet = cell.packet != NO_PACKET;
        if let Some(at) = self.discarding.iter().position(|&s| s == stream) {
            if ends_packet {
                self.discarding.swap_remove(at);
            }
            return true;
        }
        let refused =
            depth >= self.queue_cells || (cell.flags & FIRST != 0 && depth >= early_cells);
        if refused && !ends_packet {
            self.discarding.push(stream);
        }
        refused
    }

    /// Sends on `port` if its link is free, else makes sure it wakes when it frees.
    fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let threshold = self.fci_threshold_cells;
        let counters = &mut self.counters;
        let mark = |cell: &mut Cell, d: &Departure| {
            if d.data_depth >= threshold && d.data_depth > 0 {
                cell.flags |= FCI;
                counters.cells_marked += 1;
            }
        };
        let departure = transmit(
            ctx,
            &mut self.ports[port],
            port,
            self.format,
            port as u32,
            mark,
        );
        if let Some(d) = departure {
            self.counters.cells_sent += 1;
            if d.data_depth > 0 {
                self.pool_used -= 1;
                self.maybe_resume(ctx, port);
            }
        }
    }
}

#[cfg(test)]
impl Element {
    /// Injects `fault` into every port (test only).
    pub(crate) fn inject_fault(&mut self, fault: crate::blocks::switch::Fault) {
        for port in &mut self.ports {
            port.fault = fault;
        }
    }

    /// Data cells its ports took from their queues under a fault (test only).
    pub(crate) fn fault_taken(&self) -> u64 {
        self.ports.iter().map(|p| p.fault.taken).sum()
    }
}

impl<R: Router> Node<R> for Element {
    fn is_slotted(&self) -> bool {
        false
    }

    fn is_sink(&self) -> bool {
        false
    }

    fn cells_held(&self) -> u64 {
        self.ports.iter().map(|p| p.queued_cells() as u64).sum()
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        if reach::arrival(self, ctx, port, cell) {
            return;
        }
        let dst = ctx.cells[cell].dst;
        let view = Backlog {
            ports: &self.ports,
            reach: self.reach.as_ref(),
            dst,
        };
        let output = ctx
            .router
            .route(self.switch, port, &mut ctx.cells[cell], &view);
        if output == NO_ROUTE {
            let reach = self
                .reach
                .as_mut()
                .expect("only reachability leaves no route");
            reach::lose(ctx, &mut reach.counters, cell, Loss::NoRoute);
            return;
        }
        if CellFormat::is_control(&ctx.cells[cell]) {
            self.ports[output].push_control(ctx.cells, cell);
        } else {
            let depth = self.ports[output].data_cells();
            if self.last_stage[output] && ctx.now_ps >= self.measure_from_ps {
                self.last_stage_depth.record_n(depth as usize, 1);
            }
            let class = class_of(ctx.cells[cell].flags);
            let class_depth = self.ports[output].class_cells(class);
            if self.refuses(&ctx.cells[cell], class_depth) {
                self.counters.cells_dropped += 1;
                self.counters.packets_lost += super::drop_with_packets(ctx, cell);
                return;
            }
            self.ports[output].push_data(ctx.cells, cell, class);
            self.pool_used += 1;
            self.counters.queue_peak_cells = self.counters.queue_peak_cells.max(depth + 1);
            self.maybe_pause(ctx, port, output, depth + 1);
        }
        self.kick(ctx, output);
    }

    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        if self.reach.as_ref().is_some_and(|r| r.failed) {
            return;
        }
        self.ports[port].pause_data(matches!(signal, FlowSignal::Off { .. }));
        self.kick(ctx, port);
    }

    fn tick(&mut self, _: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        if reach::is_reach_tag(tag) {
            reach::timer(self, ctx, tag);
        } else {
            self.kick(ctx, tag as usize);
        }
    }
}

impl ReachDevice for Element {
    fn reach(&mut self) -> Option<&mut DeviceReach> {
        self.reach.as_mut()
    }

    fn fabric_ports(&self) -> usize {
        self.ports.len()
    }

    fn queue_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId) {
        self.ports[port].push_control(ctx.cells, cell);
        self.kick(ctx, port);
    }

    fn flush<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, loss: Loss) {
        let reach = self.reach.as_mut().expect("only reachability flushes");
        self.pool_used -= reach::flush_port(ctx, &mut reach.counters, &mut self.ports[port], loss);
        if !reach.failed {
            self.maybe_resume(ctx, port);
        }
    }

    fn release<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        self.ports[port].pause_data(false);
        self.kick(ctx, port);
    }

    fn reset(&mut self) {
        self.discarding.clear();
        self.paused_by.fill(PortSet::EMPTY);
        self.pauses_on.fill(0);
    }
}

/// Fabric elements.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElementConfig {
    /// Data cells per output link (128 in §6.2's extrapolation). With credits the queues share
    /// a pool of this many per link (§5.5, reading R13) and a data cell is dropped only when
    /// the pool is full; in push mode each queue (per traffic class) holds this many.
    pub queue_cells: u32,
    /// Queue depth at and above which data cells leaving the queue carry the FCI bit (§4.2;
    /// reading R12: 32 cells).
    pub fci_threshold_cells: u32,
    /// Queue depth at which an output pauses the inputs that feed it (§5.5's last resort);
    /// it resumes them at half this depth. Absent: half the queue, leaving the other half
    /// for the cells paused inputs still have on their way (each link keeps its pool to itself;
    /// reading R13's pool shared by the element's links is not modelled). Push mode never
    /// pauses.
    pub pause_cells: Option<u32>,
}

impl Default for ElementConfig {
    fn default() -> Self {
        ElementConfig {
            queue_cells: 128,
            fci_threshold_cells: 32,
            pause_cells: None,
        }
    }
}

impl ElementConfig {
    /// The queue depth that pauses inputs.
    pub fn pause_cells(&self) -> u32 {
        self.pause_cells.unwrap_or(self.queue_cells.div_ceil(2))
    }
}

impl ElementConfig {
    /// Checks the element keys.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.queue_cells == 0 {
            return Err(invalid("element.queue_cells", "expected at least 1 cell"));
        }
        if self.fci_threshold_cells > self.queue_cells {
            return Err(invalid(
                "element.fci_threshold_cells",
                format!(
                    "expected at most element.queue_cells ({})",
                    self.queue_cells
                ),
            ));
        }
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
