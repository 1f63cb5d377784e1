//! A cell network: hosts ([`Terminal`]) and slotted cell switches ([`CellSwitch`]) on a
//! [`Fabric`], wired by a [`Topology`], with the account and the report every cell network
//! keeps. Designs configure it (switch organization, flow control, routing); the single switch
//! of switch theory is the one-switch case.

pub mod gnet_account;
pub mod rma_account;

use std::sync::Arc;

use serde::Serialize;

use crate::blocks::bit_errors::{BitErrors, FrameErrors};
use crate::blocks::cell::CellId;
use crate::blocks::fabric::partition::Partition;
use crate::blocks::fabric::trace::TraceTable;
use crate::blocks::fabric::{
    Context, Fabric, FabricModel, Framing, Layer1Counters, Layer1Spec, Node, Wiring,
    LAYER1_HEADER_BYTES,
};
use crate::blocks::flow_control::{FlowControlPlan, FlowSignal, LinkFlowControl};
use crate::blocks::gnet::endpoint::{Endpoint, GnetSpec};
use crate::blocks::gnet::host::GnetHost;
use crate::blocks::gnet::rma::RmaSpec;
use crate::blocks::link::Link;
use crate::blocks::routing::Router;
use crate::blocks::stream_kind;
use crate::blocks::switch::{CellSwitch, SwitchSpec, SwitchStats};
use crate::blocks::terminal::{Terminal, TerminalCounters};
use crate::blocks::topology::{Attachment, Topology};
use crate::blocks::traffic::{Destinations, Generator, TrafficSpec};
use crate::blocks::vc_router::assignment::PortClass;
use crate::blocks::vc_router::dependency::describe_cycle;
use crate::blocks::vc_router::failure::{Failure, FailureStep};
use crate::blocks::vc_router::{deadlock, VcRouter, VcSpec};
use crate::engine::kernel::{Clock, Kernel};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::stats::{Fairness, LatencyHistogram, Percentiles};
use crate::engine::time::{serialization_ps, TimePs, PS_PER_NS};
use crate::run::{Design, Ledger, Perf, Report, RunError};
use gnet_account::GnetSummary;

/// The most hosts for which a network checks in-order delivery: every host keeps a word per
/// source, so the check costs 8 · hosts² bytes (32 MB at 2 048 hosts, 512 MB at 8 192).
pub const IN_ORDER_CHECK_MAX_HOSTS: usize = 2048;

/// The node kinds of a cell network. Nodes live inline in one vector, indexed by node: a host
/// wastes the difference in size, which costs less than a pointer chase on every event. A GNet
/// host, twice a switch's size, is boxed: inline it would double every node's footprint (and
/// cost the fat-tree reference run 4%) for the one design that has it.
#[allow(clippy::large_enum_variant)]
pub enum CellNode {
    /// A host.
    Terminal(Terminal),
    /// A slotted cell switch.
    Switch(CellSwitch),
    /// A virtual-channel router.
    VcRouter(VcRouter),
    /// A host speaking IP over GNet (Aquila's RTS/CTS).
    Gnet(Box<GnetHost>),
}

impl<R: Router> Node<R> for CellNode {
    fn is_slotted(&self) -> bool {
        !matches!(self, CellNode::Terminal(_) | CellNode::Gnet(_))
    }

    fn is_sink(&self) -> bool {
        matches!(self, CellNode::Terminal(_))
    }

    fn cells_held(&self) -> u64 {
        match self {
            CellNode::Terminal(t) => Node::<R>::cells_held(t),
            CellNode::Gnet(g) => Node::<R>::cells_held(g.as_ref()),
            CellNode::Switch(s) => Node::<R>::cells_held(s),
            CellNode::VcRouter(r) => Node::<R>::cells_held(r),
        }
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs) {
        match self {
            CellNode::Terminal(t) => t.cell_arrives(ctx, port, cell, at_ps),
            CellNode::Gnet(g) => g.cell_arrives(ctx, port, cell, at_ps),
            CellNode::Switch(s) => s.cell_arrives(ctx, port, cell, at_ps),
            CellNode::VcRouter(r) => r.cell_arrives(ctx, port, cell, at_ps),
        }
    }

    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        match self {
            CellNode::Terminal(t) => t.signal_arrives(ctx, port, signal),
            CellNode::Gnet(g) => g.signal_arrives(ctx, port, signal),
            CellNode::Switch(s) => Node::<R>::signal_arrives(s, ctx, port, signal),
            CellNode::VcRouter(r) => Node::<R>::signal_arrives(r, ctx, port, signal),
        }
    }

    fn tick(&mut self, ctx: &mut Context<'_, R>) -> Option<TimePs> {
        match self {
            CellNode::Terminal(t) => Node::<R>::tick(t, ctx),
            CellNode::Gnet(g) => Node::<R>::tick(g.as_mut(), ctx),
            CellNode::Switch(s) => Node::<R>::tick(s, ctx),
            CellNode::VcRouter(r) => Node::<R>::tick(r, ctx),
        }
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        match self {
            CellNode::Terminal(t) => t.timer(ctx, tag),
            CellNode::Gnet(g) => g.timer(ctx, tag),
            CellNode::Switch(s) => Node::<R>::timer(s, ctx, tag),
            CellNode::VcRouter(r) => Node::<R>::timer(r, ctx, tag),
        }
    }
}

/// Sets the hosts of `fabric` going, after the cell tracing where `trace_fraction` is set (its
/// draws from a stream of their own).
fn start<R: Router>(
    fabric: &mut Fabric<CellNode, R>,
    hosts: usize,
    trace_fraction: f64,
    seed: u64,
) {
    if trace_fraction > 0.0 {
        let id = ComponentId {
            kind: stream_kind::CELL_TRACE,
            index: 0,
        };
        fabric.trace_cells(trace_fraction, stream(seed, id));
    }
    for host in 0..hosts {
        fabric.start(host, |node, ctx| match node {
            CellNode::Terminal(t) => t.start(ctx),
            CellNode::Gnet(g) => g.start(ctx),
            _ => {}
        });
    }
}

/// Makes `fabric` partition `part.1` of `part.0` (see [`Fabric::split`]), and the
/// partition; fails, saying why, where it cannot be split, or uses (by `refused`: per-VOQ
/// flow control, the fraction of cells traced, failures) a mechanism that does not run on
/// several threads yet.
fn split<R: Router>(
    fabric: &mut Fabric<CellNode, R>,
    topology: &Topology,
    part: (usize, u16),
    message_floor_ps: i64,
    refused: (bool, f64, &[Failure]),
) -> Result<Partition, String> {
    refuse_partition(fabric, refused)?;
    fabric.split(topology, part, message_floor_ps, false)
}

/// Fails, naming the mechanism, where a network uses one that does not run on several threads
/// yet: RIFL Layer 1 cables (one step for every cable), per-VOQ flow control (a sender reads the
/// next switch's plan), cell tracing (one sampling stream) and failures (one switch installs
/// every router's tables).
fn refuse_partition<R: Router>(
    fabric: &Fabric<CellNode, R>,
    (per_voq, trace_fraction, failures): (bool, f64, &[Failure]),
) -> Result<(), String> {
    let refused = [
        (fabric.layer1_counters().is_some(), "RIFL Layer 1 links"),
        (per_voq, "per-VOQ flow control"),
        (trace_fraction > 0.0, "cell tracing"),
        (!failures.is_empty(), "failures"),
    ];
    match refused.iter().find(|(used, _)| *used) {
        Some((_, what)) => Err(format!(
            "{what} do not run on several threads yet; expected 1 thread"
        )),
        None => Ok(()),
    }
}

/// Sets the timers of each failure at the routers it touches: a failed link at both its ends
/// (it fails at both; at its table update both drop what they hold for it), a failed switch at
/// itself and at the far end of each of its links to other switches; the named switch also
/// installs the fabric's next tables at the update (timers set in the order of the updates,
/// the order the router was given its tables in).
fn schedule_failures<R: Router>(
    fabric: &mut Fabric<CellNode, R>,
    topology: &Topology,
    failures: &[Failure],
) {
    let hosts = topology.endpoints();
    for (_, f) in Failure::in_update_order(failures) {
        let (fail, ports) = match f.port {
            Some(port) => (FailureStep::Fail.tag(port), port..port + 1),
            None => (
                FailureStep::FailSwitch.tag(0),
                0..topology.switch_ports(f.switch),
            ),
        };
        // The named switch's own table step; a failed switch holds nothing to drop.
        let tables = FailureStep::TablesAndRouter.tag(f.port.unwrap_or(0));
        fabric.start(hosts + f.switch, |_, ctx| {
            ctx.set_timer(f.at_ps, fail);
            ctx.set_timer(f.tables_ps, tables);
        });
        for port in ports {
            let Some(Attachment::SwitchPort { switch, port }) = topology.peer(f.switch, port)
            else {
                continue; // a host's port, or none
            };
            fabric.start(hosts + switch, |_, ctx| {
                ctx.set_timer(f.at_ps, FailureStep::Fail.tag(port));
                ctx.set_timer(f.tables_ps, FailureStep::Tables.tag(port));
            });
        }
    }
}

/// One end of a Layer 1 cable as it is built: (node, port, the sending node's pipeline delay).
type CableEnd = (u32, u16, TimePs);

/// How the cables with bit errors run RIFL Layer 1.
#[derive(Clone, Copy)]
pub struct Layer1Plan {
    /// Bit errors of every cable; unless error-free every cable runs RIFL Layer 1
    /// retransmission (its propagation a whole number of at least one cell time).
    pub bit_errors: BitErrors,
    /// On Layer 1 cables: ON/OFF travels in flow-control frames that take a frame time from
    /// data (RIFL §IV-D), else out of band (the cable's propagation, no bandwidth).
    pub in_band_flow_control: bool,
    /// On Layer 1 cables: the frame size, a power of two from 8 to 256 bytes (RIFL §II-A);
    /// `None`: a frame is a cell.
    pub frame_bytes: Option<u32>,
}

impl Layer1Plan {
    /// The frames of `frame_bytes` on `link`, each carrying its size less its header of
    /// `cell_bytes` cells.
    fn framing(&self, link: &Link, cell_bytes: u64) -> Option<Framing> {
        self.frame_bytes.map(|bytes| Framing {
            frame_ps: serialization_ps(bytes as u64, link.rate_bps),
            payload_bytes: bytes - LAYER1_HEADER_BYTES,
            cell_bytes: cell_bytes as u32 - LAYER1_HEADER_BYTES,
        })
    }
}

/// The cables of `topology` with bit errors as RIFL Layer 1 cables: each corrupted by its own
/// `ber` where the topology gives one, else by the links' `bit_errors`; a cable left error-free
/// runs no Layer 1. A host's cable has the host as end 0, a cable between switches its lower
/// (switch, port) end.
fn layer1_cables(
    topology: &Topology,
    plan: Layer1Plan,
    seed: u64,
    slot_ps: TimePs,
    link: &Link,
    switch: &SwitchSpec,
) -> Vec<Layer1Spec> {
    let hosts = topology.endpoints();
    let cell_bytes = switch.cell_bytes + link.overhead_bytes as u64;
    let framing = plan.framing(link, cell_bytes);
    let frame_bytes = plan.frame_bytes.map_or(cell_bytes, u64::from);
    // Each cable: its two ends as (node, port, sender's pipeline), and the switch port it is
    // cabled to (where the topology keeps its length).
    let switch_end = |s: usize, p: usize| ((hosts + s) as u32, p as u16, switch.pipeline_ps);
    let mut cables: Vec<([CableEnd; 2], (usize, usize))> = Vec::new();
    for host in 0..hosts {
        let (s, p) = topology.endpoint_port(host).expect("every host is cabled");
        cables.push(([(host as u32, 0, 0), switch_end(s, p)], (s, p)));
    }
    for (s, p) in topology.switch_port_list() {
        if let Some(Attachment::SwitchPort {
            switch: s2,
            port: p2,
        }) = topology.peer(s, p)
        {
            if (s, p) < (s2, p2) {
                cables.push(([switch_end(s, p), switch_end(s2, p2)], (s, p)));
            }
        }
    }
    cables
        .into_iter()
        .enumerate()
        .filter_map(|(c, ([a, b], (s, p)))| {
            let cable = topology.cable(s, p);
            let bit_errors = cable
                .ber
                .map_or(plan.bit_errors, |ber| BitErrors::Independent { ber });
            if bit_errors.is_error_free() {
                return None;
            }
            let propagation_ps = cable.propagation_ps.unwrap_or(link.propagation_ps);
            let errors = [0, 1].map(|end| {
                let id = ComponentId {
                    kind: stream_kind::LAYER1_ERRORS,
                    index: (2 * c + end) as u32,
                };
                FrameErrors::new(bit_errors, frame_bytes, stream(seed, id))
            });
            // Whole frame times of propagation: whole cell times by validation, else rounded.
            let frames = match framing {
                None => propagation_ps / slot_ps,
                Some(f) => ((propagation_ps + f.frame_ps / 2) / f.frame_ps).max(1),
            };
            Some(Layer1Spec {
                ends: [(a.0, a.1), (b.0, b.1)],
                latency_slots: frames.saturating_sub(1) as u32,
                errors,
                after_ps: [a.2, b.2],
                in_band_flow_control: plan.in_band_flow_control,
                framing,
            })
        })
        .collect()
}

/// Everything a [`Network`] is built from.
pub struct NetworkSpec {
    /// Design name reported in the summary.
    pub design: &'static str,
    /// Scheduler name reported in the summary.
    pub scheduler: String,
    /// Routing mode reported in the summary, where the design routes by mode.
    pub routing: Option<String>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Switches, terminals (the topology's endpoints, in order) and cables.
    pub topology: Topology,
    /// Every switch alike but for its port count, which the topology gives.
    pub switch: SwitchSpec,
    /// Every link, both directions, unless its cable in the topology says otherwise.
    pub link: Link,
    /// Link-level flow control into every switch input, by the cable's protocol.
    pub flow_control: FlowControlPlan,
    /// What every terminal offers.
    pub traffic: TrafficSpec,
    /// Where each terminal's packets go.
    pub destinations: Vec<Destinations>,
    /// Cells a terminal may hold waiting to send; a full terminal holds its source back.
    /// `None`: unbounded (an open-loop source).
    pub nic_queue_cells: Option<u32>,
    /// Statistics start here.
    pub warmup_ps: TimePs,
    /// The run ends here.
    pub end_ps: TimePs,
    /// The configuration promises to drop nothing; a drop fails the run.
    pub lossless: bool,
    /// How the cables run RIFL Layer 1 (bit errors, flow control, frames).
    pub layer1: Layer1Plan,
    /// The switches are virtual-channel routers made of this (`None`: cell switches).
    pub vc: Option<VcSpec>,
    /// The hosts speak IP over GNet, made of this (`None`: plain hosts); `traffic` then
    /// makes their packets, in data cells at the hosts' rate.
    pub gnet: Option<GnetSpec>,
    /// Fraction of the cells the hosts send that carry the trace bit (0: no tracing).
    pub trace_fraction: f64,
    /// Links between VC routers cut mid-run.
    pub failures: Vec<Failure>,
}

/// The headline numbers of a run. The groups are flattened: the summary is one flat table.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Design that ran.
    pub design: &'static str,
    /// Scheduler name as in the scenario.
    pub scheduler: String,
    /// Routing mode as in the scenario, where the design routes by mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<String>,
    /// Ports of the largest switch.
    pub ports: u32,
    /// Switches in the network.
    pub switches: u32,
    /// Terminals (hosts) in the network.
    pub terminals: u32,
    /// Seed of the run.
    pub seed: u64,
    /// Loads and throughputs during measurement.
    #[serde(flatten)]
    pub rates: Rates,
    /// Latencies of the cells and packets delivered during measurement.
    #[serde(flatten)]
    pub latency: Latencies,
    /// The cell account.
    #[serde(flatten)]
    pub cells: CellCounts,
    /// What the hosts saw.
    #[serde(flatten)]
    pub hosts: HostCounts,
    /// What the switches saw.
    #[serde(flatten)]
    pub switching: SwitchingCounts,
    /// The run's length and cost.
    #[serde(flatten)]
    pub run: RunLength,
    /// What the RIFL Layer 1 cables counted, where the cables run it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer1: Option<Layer1Summary>,
    /// A finite workload's completion (`traffic.bytes_per_pair`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSummary>,
    /// Cells routed non-minimally, where the routing mode counts them.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub nonminimal: Option<NonminimalSummary>,
    /// What the hosts' IP over GNet measured, where they speak it.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub gnet: Option<GnetSummary>,
    /// The cells traced and their hops, where `trace.fraction` is set.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    /// The links and switches that failed and the cells they cost, where `failures` lists any.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureSummary>,
}

/// What the links and switches that failed cost (Aquila §3.2), counted by the routers that
/// lost the cells.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FailureSummary {
    /// Links cut during the run (scheduled; one failing after the end counts too).
    pub links_failed: u64,
    /// Switches failed during the run (scheduled, as links).
    pub switches_failed: u64,
    /// Cells that were on a link's wire when it failed, or reached a failed switch.
    pub cells_lost_on_wire: u64,
    /// Cells a router still held for a dead link when the tables dropped it.
    pub cells_stranded: u64,
    /// Cells a switch held when it failed.
    pub cells_lost_in_failed_switches: u64,
    /// Cells for a failed switch's hosts dropped where they found no route after the tables
    /// dropped it.
    pub cells_unroutable: u64,
}

impl FailureSummary {
    /// Every cell the failures cost.
    pub fn cells_lost(&self) -> u64 {
        self.cells_lost_on_wire
            + self.cells_stranded
            + self.cells_lost_in_failed_switches
            + self.cells_unroutable
    }
}

/// What cell tracing recorded (the hops are the `cell_trace` table).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TraceSummary {
    /// Cells the hosts sent with the trace bit set.
    pub cells_traced: u64,
    /// Hops the switches recorded of them.
    pub trace_hops: u64,
}

/// Cells a routing mode sent on a non-minimal route (Aquila's misroutes through an
/// intermediate pod).
#[derive(Clone, Debug, Serialize)]
pub struct NonminimalSummary {
    /// Cells sent on a non-minimal route over the whole run.
    pub cells_nonminimal: u64,
    /// Their share of the cells routed at their source switch over the whole run (cells, or
    /// a VC router's packets of flits: a GNet cell of ten flits is one).
    pub nonminimal_fraction: f64,
    /// Local detours taken by routing units (as above), where the routing offers them
    /// (`routing.local_misroutes`): a unit takes at most one per pod it crosses, and one that
    /// also misroutes through another pod counts in `cells_nonminimal` as well.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_detours: Option<u64>,
}

/// Loads and throughputs during measurement, per terminal per cell time.
#[derive(Clone, Debug, Serialize)]
pub struct Rates {
    /// The configured offered load per terminal (`traffic.load`), cells per cell time.
    pub offered_load: f64,
    /// Cells generated during measurement per terminal per cell time.
    pub injected_load: f64,
    /// Cells delivered during measurement per terminal per cell time.
    pub throughput: f64,
    /// How evenly that throughput is spread over the receiving hosts.
    pub host_throughput: Option<Fairness>,
    /// Payload bytes delivered during measurement per byte of line capacity.
    pub goodput: f64,
}

/// Latencies of what was delivered during measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Latencies {
    /// Cell latency from generation to delivery, in nanoseconds.
    pub latency_ns: Percentiles,
    /// Cell latency from generation to delivery, in cell times.
    pub latency_cells: Percentiles,
    /// Packet latency from the generation of its first cell to the delivery of its last, in
    /// cell times (packets reassembled at the destination terminal).
    pub packet_latency_cells: Percentiles,
    /// Every cell generated during measurement and not dropped, in cell times: the delivered
    /// ones at their latency, those still in flight at their age at the end. A lower bound
    /// (an in-flight cell's latency is at least its age) that, unlike `latency_cells`, does
    /// not leave out the slowest cells when many are still in flight.
    pub latency_with_in_flight_cells: Percentiles,
    /// VC routers: the part of the packet latency spent at the source, from the generation
    /// of a packet's first cell to its leaving the host, mean and max in cell times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_queueing_cells: Option<SourceQueueing>,
}

/// Source queueing of the measured packets, in cell times.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SourceQueueing {
    /// Mean.
    pub mean: f64,
    /// Longest.
    pub max: f64,
}

/// The cell account, each term counted where the cells are, and the cells left unmeasured:
/// cells injected (plus cells copied, where switches copy broadcasts) = delivered + dropped +
/// in flight.
#[derive(Clone, Debug, Serialize)]
pub struct CellCounts {
    /// Cells generated over the whole run.
    pub cells_injected: u64,
    /// Cells the switches made by copying broadcasts over the whole run, beyond the cell that
    /// arrived (a broadcast cell injected once and copied once per other output is delivered
    /// once to every other host); absent where the traffic broadcasts nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells_copied: Option<u64>,
    /// Cells delivered over the whole run.
    pub cells_delivered: u64,
    /// Cells dropped over the whole run.
    pub cells_dropped: u64,
    /// Cells still in the system at the end.
    pub cells_in_flight: u64,
    /// Cells whose latency was measured.
    pub cells_measured: u64,
    /// Cells generated during measurement and still in flight at the end: their latency is
    /// not in `latency_cells`, which therefore reads low when many are.
    pub cells_in_flight_measured: u64,
    /// How long those cells had been in flight at the end, in cell times: a censored tail
    /// (each is a lower bound of that cell's latency).
    pub in_flight_age_cells: Percentiles,
}

/// What the hosts saw: waits at the sources, packets and order at the destinations.
#[derive(Clone, Debug, Serialize)]
pub struct HostCounts {
    /// Mean time a packet generated during measurement was held back at its source by a full
    /// host queue (closed-loop hosts), in cell times; `latency_cells` starts after it.
    pub source_wait_mean_cells: f64,
    /// The longest such wait, in cell times.
    pub source_wait_max_cells: f64,
    /// Packets whose last cell was delivered over the whole run.
    pub packets_delivered: u64,
    /// Cells that reached their terminal ahead of an earlier cell of the same source; absent
    /// above [`IN_ORDER_CHECK_MAX_HOSTS`] hosts, where the check's word per host pair would
    /// cost too much memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells_out_of_order: Option<u64>,
}

/// What the switches saw.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchingCounts {
    /// Time-average number of cells held in the switches.
    pub queue_occupancy_mean_cells: f64,
    /// Mean time a cell spends in a switch, in cell times (from arrival to its slot).
    pub switch_delay_mean_cells: f64,
    /// Flow-control signals sent upstream by the switches.
    pub flow_control_signals: u64,
    /// Cells blocked inside Batcher-Banyan networks.
    pub internal_blocking: u64,
}

/// The run's length and cost.
#[derive(Clone, Debug, Serialize)]
pub struct RunLength {
    /// Length of one cell time.
    pub cell_time_ps: u64,
    /// Simulated time.
    pub sim_time_ps: u64,
    /// Leading simulated time excluded from statistics.
    pub warmup_ps: u64,
    /// Events processed.
    pub events: u64,
    /// Cells switched (one cell crossing one switch) over the whole run.
    pub cell_hops: u64,
}

/// How a finite workload (a byte budget per source–destination pair) completed.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSummary {
    /// True if every source generated all its bytes and every cell was delivered.
    pub complete: bool,
    /// Payload bytes not yet generated at the end, over all sources.
    pub bytes_left: u64,
    /// When the last cell was delivered, in nanoseconds from the start of the run.
    pub completion_ns: f64,
    /// The same in cell times.
    pub completion_cells: f64,
    /// Cells delivered per host per cell time up to the completion.
    pub throughput_to_completion: f64,
}

/// What the RIFL Layer 1 cables of a network counted over the whole run (both directions of
/// every cable), with their bit errors.
#[derive(Clone, Debug, Serialize)]
pub struct Layer1Summary {
    /// Long-run bit error rate of the links (with bursts, the states' rates weighted by their
    /// shares of time); a cable with a `ber` of its own in the topology file has that instead.
    pub ber: f64,
    /// How the errors fall: `independent` or `gilbert_elliott` (bursts).
    pub error_model: &'static str,
    /// The frame size, where it is not the cell's (`link.frame_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_bytes: Option<u32>,
    /// The counts.
    #[serde(flatten)]
    pub counters: Layer1Counters,
}

/// Latency histogram rows: bucket upper bound and count.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyTable {
    /// Upper bound of the bucket, picoseconds.
    pub latency_ps: Vec<u64>,
    /// Upper bound of the bucket, cell times.
    pub latency_cells: Vec<f64>,
    /// Cells in the bucket.
    pub count: Vec<u64>,
}

/// Per-terminal counters, with the switch port the terminal is cabled to.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PortTable {
    /// Terminal index.
    pub port: Vec<u32>,
    /// Cells the terminal generated (whole run).
    pub cells_injected: Vec<u64>,
    /// Cells the terminal received (whole run).
    pub cells_delivered: Vec<u64>,
    /// Cells dropped at the switch input the terminal feeds (whole run).
    pub cells_dropped: Vec<u64>,
    /// Cells received per cell time during measurement.
    pub throughput: Vec<f64>,
}

/// Distribution of each switch's occupancy, sampled once per measured cell time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OccupancyTable {
    /// Switch index.
    pub switch: Vec<u32>,
    /// Cells held in the switch.
    pub occupancy_cells: Vec<u64>,
    /// Cell times with that occupancy.
    pub slots: Vec<u64>,
}

/// The tables a run produces beside its summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tables {
    /// Latency histogram.
    pub latency_histogram: LatencyTable,
    /// Per-terminal counters.
    pub ports: PortTable,
    /// Switch occupancy distributions.
    pub queue_occupancy: OccupancyTable,
    /// 1RMA read latency histogram (command to last Resp plus the host term), where the
    /// hosts make reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rma_latency_histogram: Option<LatencyTable>,
    /// The traced cells' hops, where `trace.fraction` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell_trace: Option<TraceTable>,
    /// Per IP class of service, where the GNet hosts' packets have several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gnet_classes: Option<gnet_account::ClassTable>,
}

/// A cell network simulation: hosts are nodes `0..hosts`, switch `s` is node `hosts + s`.
pub struct Network<R: Router> {
    fabric: Fabric<CellNode, R>,
    design: &'static str,
    scheduler: String,
    routing: Option<String>,
    seed: u64,
    topology: Topology,
    slot_ps: TimePs,
    /// Propagation delay of the longest cable.
    longest_cable_ps: TimePs,
    warmup_ps: TimePs,
    end_ps: TimePs,
    lossless: bool,
    cell_payload_bytes: u32,
    bit_errors: BitErrors,
    offered_load: f64,
    /// The hosts broadcast (the account then counts the switches' copies).
    broadcasts: bool,
    /// Layer 1 frame size, where it is not the cell's.
    layer1_frame_bytes: Option<u32>,
    /// The hosts' link rate.
    host_rate_bps: u64,
    /// Links and switches scheduled to fail.
    failures_scheduled: (u64, u64),
    /// The hosts that send and receive, where not all do (`traffic.active_hosts`): loads
    /// and throughputs are per active host.
    active_hosts: Option<Arc<[u16]>>,
}

impl<R: Router> Network<R> {
    /// Builds the network `spec` describes, routed by `router`.
    pub fn new(spec: NetworkSpec, router: R) -> Self {
        Self::build(spec, router, None)
            .expect("a network of one partition")
            .0
    }

    /// Builds partition `me` of the network `spec` describes split into `parts` (a run on
    /// `parts` threads, [`crate::blocks::fabric::parallel`]), with the partition; fails, saying
    /// why, where the network cannot be split.
    pub fn partition(
        spec: NetworkSpec,
        router: R,
        parts: usize,
        me: u16,
    ) -> Result<(Self, Partition), String> {
        let (network, partition) = Self::build(spec, router, Some((parts, me)))?;
        Ok((network, partition.expect("asked for")))
    }

    /// [`Network::new`], or its partition `part.1` of `part.0` where `part` is given.
    fn build(
        spec: NetworkSpec,
        router: R,
        part: Option<(usize, u16)>,
    ) -> Result<(Self, Option<Partition>), String> {
        let NetworkSpec {
            design,
            scheduler,
            routing,
            seed,
            topology,
            switch,
            link,
            flow_control,
            traffic,
            destinations,
            nic_queue_cells,
            warmup_ps,
            end_ps,
            lossless,
            layer1: plan,
            vc,
            gnet,
            trace_fraction,
            failures,
        } = spec;
        let hosts = topology.endpoints();
        let cabling = Cabling {
            topology: &topology,
            link: &link,
            flow_control: &flow_control,
            switch: &switch,
            vc: vc.as_ref(),
            gnet,
        };
        let nodes = cabling.nodes(&destinations, traffic, seed, warmup_ps, nic_queue_cells);
        let slot_ps = link.frame_ps(switch.cell_bytes);
        let layer1 = layer1_cables(&topology, plan, seed, slot_ps, &link, &switch);
        let wiring = cabling.fabric_wiring::<R>(&nodes, slot_ps, end_ps, layer1);
        let longest_cable_ps = wiring
            .delays_ps
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or(0);
        let message_floor_ps = cabling.message_floor_ps(slot_ps);
        let mut fabric = Fabric::new(nodes, router, wiring, warmup_ps);
        let refused = (switch.per_voq_buffers, trace_fraction, failures.as_slice());
        let partition = part
            .map(|part| split(&mut fabric, &topology, part, message_floor_ps, refused))
            .transpose()?;
        start(&mut fabric, hosts, trace_fraction, seed);
        schedule_failures(&mut fabric, &topology, &failures);
        let network = Network {
            fabric,
            design,
            scheduler,
            routing,
            seed,
            topology,
            slot_ps,
            longest_cable_ps,
            warmup_ps,
            end_ps,
            lossless,
            // GNet hosts: goodput per byte of flit capacity.
            cell_payload_bytes: gnet.map_or(traffic.cell_payload_bytes, |g| g.flit_bytes),
            bit_errors: plan.bit_errors,
            offered_load: traffic.load,
            broadcasts: traffic.broadcast_fraction > 0.0,
            layer1_frame_bytes: plan.frame_bytes,
            host_rate_bps: link.rate_bps,
            failures_scheduled: failures_scheduled(&failures),
            active_hosts: active_hosts(&destinations),
        };
        Ok((network, partition))
    }

    /// The hosts.
    fn terminals(&self) -> impl Iterator<Item = &Terminal> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::Terminal(t) => Some(t),
            _ => None,
        })
    }

    /// The cell switches, in topology order.
    fn cell_switches(&self) -> impl Iterator<Item = &CellSwitch> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::Switch(s) => Some(s),
            _ => None,
        })
    }

    /// The VC routers, in topology order.
    fn vc_routers(&self) -> impl Iterator<Item = &VcRouter> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::VcRouter(r) => Some(r),
            _ => None,
        })
    }

    /// What every switch (cell switch or VC router) measured, in topology order.
    fn switches(&self) -> impl Iterator<Item = &SwitchStats> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::Switch(s) => Some(&s.stats),
            CellNode::VcRouter(r) => Some(&r.stats),
            CellNode::Terminal(_) | CellNode::Gnet(_) => None,
        })
    }

    /// Every host's counters, plain or GNet, in host order.
    fn host_counters(&self) -> impl Iterator<Item = &TerminalCounters> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::Terminal(t) => Some(&t.counters),
            CellNode::Gnet(g) => Some(&g.counters),
            _ => None,
        })
    }

    /// The GNet hosts.
    fn gnet_hosts(&self) -> impl Iterator<Item = &GnetHost> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            CellNode::Gnet(g) => Some(g.as_ref()),
            _ => None,
        })
    }

    /// Runs to the end on the kernel and reports.
    pub fn run(self) -> Result<(Summary, Tables), RunError> {
        let end_ps = self.end_ps;
        let mut kernel = Kernel::new(self, end_ps);
        kernel.advance(TimePs::MAX);
        let (network, clock, deadlock) = kernel.into_parts();
        if let Some(report) = deadlock {
            return Err(RunError::Deadlock(report));
        }
        network
            .finish(clock)
            .map(|(summary, tables, _)| (summary, tables))
    }

    /// What is stuck: the cells held back, and a cycle of switches each waiting for the next
    /// one's buffer (an output with cells for it that flow control keeps shut), if there is one.
    fn deadlock_report(&self) -> String {
        let waiting = self.terminals().filter(|t| t.queued_cells() > 0).count();
        let held: u64 = self.cell_switches().map(|s| s.held_cells()).sum::<u64>()
            + self.vc_routers().map(|r| r.held_cells()).sum::<u64>();
        let mut report = format!(
            "{} cells in flight, {held} of them in switches; {waiting} hosts hold cells they may not send; {} cells' work waits at GNet hosts",
            self.fabric.cells_live(),
            self.held_outside_cells()
        );
        let routers: Vec<&VcRouter> = self.vc_routers().collect();
        if let Some(cycle) = deadlock::wait_cycle(&routers, &self.topology, self.fabric.cells()) {
            report += &format!(
                "; cycle of full VC buffers (router, input port, VC): {}",
                describe_cycle(&cycle)
            );
        }
        if let Some(cycle) = self.wait_cycle() {
            let names: Vec<String> = cycle.iter().map(|s| format!("switch {s}")).collect();
            report += &format!(
                "; cycle of full buffers: {} -> {}",
                names.join(" -> "),
                names[0]
            );
        }
        report
    }

    /// A cycle in the graph where switch `a` waits for switch `b` when `a` holds cells for an
    /// output cabled to `b` that flow control keeps shut.
    fn wait_cycle(&self) -> Option<Vec<usize>> {
        let switches: Vec<&CellSwitch> = self.cell_switches().collect();
        let waits_for = |s: usize| -> Vec<usize> {
            switches[s]
                .shut_outputs()
                .filter_map(|port| self.topology.peer_switch(s, port))
                .collect()
        };
        crate::engine::graph::find_cycle(switches.len(), waits_for)
    }

    /// Checks the run's invariants and reports its summary, tables and perf section.
    pub fn finish(mut self, clock: Clock) -> Result<(Summary, Tables, Perf), RunError> {
        // Rates describe the window simulated: to the end, or to where a partial run stopped.
        let reached_ps = self.warmup_ps + clock.measured_ps(self.warmup_ps);
        self.count_empty_slots(reached_ps);
        let ledger = self.settle()?;
        let gnet_hosts: Vec<&GnetHost> = self.gnet_hosts().collect();
        let gnet = match gnet_hosts.is_empty() {
            true => None,
            false => {
                let settled = gnet_account::settle(&gnet_hosts, self.fabric.live_cells())?;
                let measured_ps = reached_ps - self.warmup_ps;
                Some(gnet_account::summary(
                    &gnet_hosts,
                    settled,
                    measured_ps,
                    (self.measured_hosts(), self.host_rate_bps),
                ))
            }
        };
        let measured_slots = (reached_ps - self.warmup_ps) / self.slot_ps;
        let mut summary = self.summary(&clock, &ledger, measured_slots);
        summary.gnet = gnet;
        let mut tables = self.tables(measured_slots);
        tables.rma_latency_histogram = self.rma_latency_table();
        tables.gnet_classes = gnet_account::class_table(&gnet_hosts);
        let perf = clock.perf(Some(("cell-hops", summary.run.cell_hops)));
        Ok((summary, tables, perf))
    }

    /// Slots up to `reached_ps` in which a switch held nothing were not sampled: counts them
    /// as empty.
    fn count_empty_slots(&mut self, reached_ps: TimePs) {
        let slot_ps = self.slot_ps;
        let boundaries =
            (reached_ps / slot_ps + 1).saturating_sub(self.warmup_ps.div_ceil(slot_ps));
        for node in self.fabric.nodes_mut() {
            let stats = match node {
                CellNode::Switch(sw) => Some(&mut sw.stats),
                CellNode::VcRouter(r) => {
                    r.settle_sleep(reached_ps);
                    Some(&mut r.stats)
                }
                CellNode::Terminal(_) | CellNode::Gnet(_) => None,
            };
            if let Some(stats) = stats {
                let samples = &mut stats.occupancy_samples;
                let sampled_slots: u64 = samples.counts().iter().sum();
                samples.record_n(0, boundaries.saturating_sub(sampled_slots));
            }
        }
    }

    /// The cell account, each term counted where the cells are: injected (and copied, by the
    /// switches that copy broadcasts) and delivered by the terminals, dropped where the drops happened, in flight as the lengths of the queues
    /// (which must equal the cells allocated, each released once).
    fn settle(&self) -> Result<Ledger, RunError> {
        self.fabric.check_released_once()?;
        let in_flight = self.fabric.cells_held();
        let allocated = self.fabric.cells_live();
        if in_flight != allocated {
            return Err(RunError::Unaccounted {
                held: in_flight,
                allocated,
            });
        }
        let ledger = Ledger {
            injected: self.terminal_sum(|t| t.cells_injected) + self.cells_copied(),
            delivered: self.terminal_sum(|t| t.cells_delivered),
            dropped: self.fabric.metrics().cells_dropped,
            in_flight,
        };
        // A configuration without loss drops nothing but what dead links cost.
        let failure_losses = self.failure_summary().map_or(0, |f| f.cells_lost());
        ledger.check_excusing(self.lossless, failure_losses)?;
        Ok(ledger)
    }

    /// Cells the switches made by copying broadcasts.
    fn cells_copied(&self) -> u64 {
        self.cell_switches()
            .map(|s| s.stats.switch_counters.cells_copied)
            .sum()
    }

    /// `count` summed over the terminals.
    fn terminal_sum(&self, count: fn(&TerminalCounters) -> u64) -> u64 {
        self.host_counters().map(count).sum()
    }

    /// A wait the hosts time, in cell times: its mean over `count` waits (`sum_ps` summed over
    /// the hosts) and the longest of the plain terminals' (`max_ps`).
    fn mean_and_max_cells(
        &self,
        sum_ps: fn(&TerminalCounters) -> u64,
        count: u64,
        max_ps: fn(&TerminalCounters) -> u64,
    ) -> (f64, f64) {
        let slot_ps = self.slot_ps as f64;
        let mean = self.terminal_sum(sum_ps) as f64 / slot_ps / (count as f64).max(1.0);
        let max = self
            .terminals()
            .map(|t| max_ps(&t.counters))
            .max()
            .unwrap_or(0) as f64
            / slot_ps;
        (mean, max)
    }

    /// The summary of a settled run measured over `measured_slots` cell times.
    fn summary(&self, clock: &Clock, ledger: &Ledger, measured_slots: u64) -> Summary {
        let terminals = self.host_counters().count();
        let in_flight_ages = self.in_flight_ages(clock.now_ps);
        Summary {
            design: self.design,
            scheduler: self.scheduler.clone(),
            routing: self.routing.clone(),
            ports: (0..self.topology.switches())
                .map(|s| self.topology.switch_ports(s) as u32)
                .max()
                .unwrap_or(0),
            switches: self.switches().count() as u32,
            terminals: terminals as u32,
            seed: self.seed,
            rates: self.rates(measured_slots),
            latency: self.latencies(&in_flight_ages),
            cells: self.cell_counts(ledger, &in_flight_ages),
            hosts: self.host_counts(terminals),
            switching: self.switching_counts(),
            run: RunLength {
                cell_time_ps: self.slot_ps,
                sim_time_ps: clock.now_ps,
                warmup_ps: self.warmup_ps,
                events: clock.events,
                cell_hops: self
                    .switches()
                    .flat_map(|s| s.counters.iter())
                    .map(|c| c.cells_out)
                    .sum(),
            },
            layer1: self.fabric.layer1_counters().map(|counters| Layer1Summary {
                ber: self.bit_errors.long_run_ber(),
                error_model: self.bit_errors.name(),
                frame_bytes: self.layer1_frame_bytes,
                counters,
            }),
            workload: self.workload_summary(ledger.in_flight),
            nonminimal: self
                .fabric
                .router()
                .nonminimal_cells()
                .map(|(cells, routed)| NonminimalSummary {
                    cells_nonminimal: cells,
                    nonminimal_fraction: cells as f64 / routed.max(1) as f64,
                    local_detours: self.fabric.router().local_detours(),
                }),
            gnet: None,
            trace: self.trace_summary(),
            failures: self.failure_summary(),
        }
    }

    /// What the links and switches that failed cost, if any was to fail.
    fn failure_summary(&self) -> Option<FailureSummary> {
        let (links_failed, switches_failed) = self.failures_scheduled;
        (links_failed + switches_failed > 0).then(|| {
            let mut summary = FailureSummary {
                links_failed,
                switches_failed,
                cells_lost_on_wire: 0,
                cells_stranded: 0,
                cells_lost_in_failed_switches: 0,
                cells_unroutable: 0,
            };
            for losses in self.vc_routers().map(|r| r.failure_losses()) {
                summary.cells_lost_on_wire += losses.lost_on_wire;
                summary.cells_stranded += losses.stranded;
                summary.cells_lost_in_failed_switches += losses.lost_in_failed_switch;
                summary.cells_unroutable += losses.unroutable;
            }
            summary
        })
    }

    /// What cell tracing recorded, if it was on.
    fn trace_summary(&self) -> Option<TraceSummary> {
        let trace = &self.fabric.metrics().trace;
        trace.is_on().then(|| TraceSummary {
            cells_traced: trace.cells_traced(),
            trace_hops: trace.hops(),
        })
    }

    /// The hosts loads and throughputs are per: the active ones, or all.
    fn measured_hosts(&self) -> usize {
        match &self.active_hosts {
            Some(hosts) => hosts.len(),
            None => self.host_counters().count(),
        }
    }

    /// Loads and throughputs over `measured_slots` cell times, per measured host.
    fn rates(&self, measured_slots: u64) -> Rates {
        let capacity_cells = (self.measured_hosts() as u64 * measured_slots) as f64;
        let payload_capacity = capacity_cells * self.cell_payload_bytes as f64;
        let active = |host: usize| {
            let hosts = self.active_hosts.as_deref();
            hosts.is_none_or(|hosts| hosts.binary_search(&(host as u16)).is_ok())
        };
        let per_host: Vec<f64> = self
            .terminals()
            .enumerate()
            .filter(|&(host, _)| active(host))
            .map(|(_, t)| t.counters.cells_delivered_measured as f64 / measured_slots as f64)
            .collect();
        Rates {
            offered_load: self.offered_load,
            injected_load: self.terminal_sum(|t| t.cells_injected_measured) as f64 / capacity_cells,
            throughput: self.terminal_sum(|t| t.cells_delivered_measured) as f64 / capacity_cells,
            host_throughput: Fairness::of(&per_host),
            goodput: self.terminal_sum(|t| t.payload_bytes_delivered_measured) as f64
                / payload_capacity,
        }
    }

    /// Latencies of the cells and packets delivered during measurement, and of every measured
    /// cell with those still in flight at their ages (`in_flight_ages`).
    fn latencies(&self, in_flight_ages: &LatencyHistogram) -> Latencies {
        let slot_ps = self.slot_ps as f64;
        let delivered = self.fabric.metrics().cell_latency();
        let mut with_in_flight = LatencyHistogram::new();
        with_in_flight.add(&delivered);
        with_in_flight.add(in_flight_ages);
        let latency = delivered.percentiles();
        Latencies {
            latency_ns: latency.scaled(PS_PER_NS as f64),
            latency_cells: latency.scaled(slot_ps),
            packet_latency_cells: self
                .fabric
                .metrics()
                .packet_latency()
                .percentiles()
                .scaled(slot_ps),
            latency_with_in_flight_cells: with_in_flight.percentiles().scaled(slot_ps),
            source_queueing_cells: self.vc_routers().next().map(|_| {
                let (mean, max) = self.mean_and_max_cells(
                    |t| t.source_queueing_ps_sum,
                    self.terminal_sum(|t| t.heads_sent_measured),
                    |t| t.source_queueing_ps_max,
                );
                SourceQueueing { mean, max }
            }),
        }
    }

    /// How long each cell generated during measurement and still in flight at `now_ps` has
    /// been in flight.
    fn in_flight_ages(&self, now_ps: TimePs) -> LatencyHistogram {
        let mut ages = LatencyHistogram::new();
        for cell in self.fabric.live_cells() {
            if cell.inject_ps > self.warmup_ps {
                ages.record(now_ps.saturating_sub(cell.inject_ps));
            }
        }
        ages
    }

    /// The settled account, with the cells measured and the ages of those still in flight.
    fn cell_counts(&self, ledger: &Ledger, in_flight_ages: &LatencyHistogram) -> CellCounts {
        let copied = self.cells_copied();
        CellCounts {
            cells_injected: ledger.injected - copied,
            cells_copied: self.broadcasts.then_some(copied),
            cells_delivered: ledger.delivered,
            cells_dropped: ledger.dropped,
            cells_in_flight: ledger.in_flight,
            cells_measured: self.fabric.metrics().cell_latency().count(),
            cells_in_flight_measured: in_flight_ages.count(),
            in_flight_age_cells: in_flight_ages.percentiles().scaled(self.slot_ps as f64),
        }
    }

    /// What the `terminals` hosts saw.
    fn host_counts(&self, terminals: usize) -> HostCounts {
        let (source_wait_mean_cells, source_wait_max_cells) = self.mean_and_max_cells(
            |t| t.source_wait_ps_sum,
            self.terminal_sum(|t| t.packets_generated_measured),
            |t| t.source_wait_ps_max,
        );
        HostCounts {
            source_wait_mean_cells,
            source_wait_max_cells,
            packets_delivered: self.terminal_sum(|t| t.packets_delivered),
            cells_out_of_order: (terminals <= IN_ORDER_CHECK_MAX_HOSTS)
                .then(|| self.terminal_sum(|t| t.cells_out_of_order)),
        }
    }

    /// What the switches saw.
    fn switching_counts(&self) -> SwitchingCounts {
        let (delay_sum, delay_samples) = self.switches().fold((0, 0), |(a, b), s| {
            (a + s.delay_slots_sum, b + s.delay_samples)
        });
        SwitchingCounts {
            queue_occupancy_mean_cells: self.switches().map(|s| s.occupancy_samples.mean()).sum(),
            switch_delay_mean_cells: delay_sum as f64 / (delay_samples as f64).max(1.0),
            flow_control_signals: self.fabric.metrics().flow_control_signals,
            internal_blocking: self
                .switches()
                .map(|s| s.switch_counters.internal_blocking)
                .sum(),
        }
    }

    /// A finite workload's completion, if the hosts run one.
    fn workload_summary(&self, in_flight: u64) -> Option<WorkloadSummary> {
        if self.gnet_hosts().next().is_some() {
            return None;
        }
        let bytes_left = self
            .terminals()
            .map(Terminal::workload_bytes_left)
            .sum::<Option<u64>>()?;
        let completion_ps = self
            .terminals()
            .map(|t| t.counters.last_delivery_ps)
            .max()
            .unwrap_or(0);
        let delivered: u64 = self.terminals().map(|t| t.counters.cells_delivered).sum();
        let completion_cells = completion_ps as f64 / self.slot_ps as f64;
        let host_slots = self.terminals().count() as f64 * completion_cells;
        Some(WorkloadSummary {
            complete: bytes_left == 0 && in_flight == 0,
            bytes_left,
            completion_ns: completion_ps as f64 / PS_PER_NS as f64,
            completion_cells,
            throughput_to_completion: delivered as f64 / host_slots.max(1.0),
        })
    }

    /// The 1RMA reads' latency histogram, where the hosts make reads.
    fn rma_latency_table(&self) -> Option<LatencyTable> {
        let mut latency = crate::engine::stats::LatencyHistogram::new();
        let mut clients = self.gnet_hosts().filter_map(|h| h.endpoint.rma.as_ref());
        let first = clients.next()?;
        latency.add(&first.client.latency);
        for rma in clients {
            latency.add(&rma.client.latency);
        }
        let mut table = LatencyTable::default();
        for (value_ps, count) in latency.buckets() {
            table.latency_ps.push(value_ps);
            table
                .latency_cells
                .push(value_ps as f64 / self.slot_ps as f64);
            table.count.push(count);
        }
        Some(table)
    }

    fn tables(&self, measured_slots: u64) -> Tables {
        let slot_ps = self.slot_ps as f64;
        let mut latency = LatencyTable::default();
        for (value_ps, count) in self.fabric.metrics().cell_latency().buckets() {
            latency.latency_ps.push(value_ps);
            latency.latency_cells.push(value_ps as f64 / slot_ps);
            latency.count.push(count);
        }
        let mut ports = PortTable::default();
        let switches: Vec<&SwitchStats> = self.switches().collect();
        for (i, t) in self.host_counters().enumerate() {
            let (s, p) = self.topology.endpoint_port(i).expect("hosts are cabled");
            ports.port.push(i as u32);
            ports.cells_injected.push(t.cells_injected);
            ports.cells_delivered.push(t.cells_delivered);
            ports
                .cells_dropped
                .push(switches[s].counters[p].cells_dropped);
            ports
                .throughput
                .push(t.cells_delivered_measured as f64 / measured_slots as f64);
        }
        let mut occupancy = OccupancyTable::default();
        for (s, sw) in switches.iter().enumerate() {
            for (cells, &slots) in sw.occupancy_samples.counts().iter().enumerate() {
                if slots > 0 {
                    occupancy.switch.push(s as u32);
                    occupancy.occupancy_cells.push(cells as u64);
                    occupancy.slots.push(slots);
                }
            }
        }
        Tables {
            latency_histogram: latency,
            ports,
            queue_occupancy: occupancy,
            rma_latency_histogram: None,
            cell_trace: self.fabric.metrics().trace.table(),
            gnet_classes: None,
        }
    }
}

/// What a host's source of 1RMA read commands offers: reads of `rma.read_bytes` as packets
/// of Resp-sized cells at the Resp cells' pace, `rma.load` the share of the client's link
/// their Resps take, until `stop_ps` (each read is commanded as its first cell is due).
fn rma_traffic(rma: &RmaSpec, stop_ps: TimePs) -> TrafficSpec {
    TrafficSpec {
        load: rma.load,
        arrival: crate::blocks::traffic::Arrival::Bernoulli,
        sizes: crate::blocks::traffic::PacketSizes::Fixed(rma.read_bytes),
        cell_payload_bytes: rma.completion_bytes,
        slot_ps: rma.resp_slot_ps,
        stop_ps,
        bytes_per_pair: None,
        broadcast_fraction: 0.0,
    }
}

/// What the cables of a network are made of: the topology's cables with the defaults every
/// cable takes unless the topology gives its own.
struct Cabling<'a> {
    topology: &'a Topology,
    link: &'a Link,
    flow_control: &'a FlowControlPlan,
    switch: &'a SwitchSpec,
    /// The VC routers' make, when the switches are VC routers.
    vc: Option<&'a VcSpec>,
    /// The GNet endpoints' make, when the hosts speak IP over GNet.
    gnet: Option<GnetSpec>,
}

impl Cabling<'_> {
    /// The link each way over the cable on switch port (`s`, `p`).
    fn link(&self, s: usize, p: usize) -> Link {
        let cable = self.topology.cable(s, p);
        Link::new(
            cable.rate_bps.unwrap_or(self.link.rate_bps),
            cable.propagation_ps.unwrap_or(self.link.propagation_ps),
        )
        .with_overhead(cable.overhead_bytes.unwrap_or(self.link.overhead_bytes))
    }

    /// The flow control of the cable on switch port (`s`, `p`).
    fn flow_control(&self, s: usize, p: usize) -> LinkFlowControl {
        self.flow_control
            .for_cable(self.topology.cable(s, p).flow_control)
    }

    /// Flow-control channels into a switch of `ports` ports: one per VOQ with per-VOQ buffers,
    /// one per VC into a VC router.
    fn channels(&self, ports: usize) -> usize {
        match self.vc {
            Some(vc) => vc.vcs as usize,
            None if self.switch.per_voq_buffers => ports,
            None => 1,
        }
    }

    /// The buffer behind each flow-control channel into a switch.
    fn channel_buffer_cells(&self) -> Option<u32> {
        self.vc
            .map_or(self.switch.buffer_cells, |vc| Some(vc.buffer_cells))
    }

    /// The switch port host `t` is cabled to.
    fn host_port(&self, t: usize) -> (usize, usize) {
        self.topology
            .endpoint_port(t)
            .expect("every host is cabled to a switch")
    }

    /// Host `t`, sending what `generator` makes over its cable.
    fn terminal(&self, t: usize, generator: Generator) -> Terminal {
        let (s, p) = self.host_port(t);
        let channels = self.channels(self.topology.switch_ports(s));
        let gate = self
            .flow_control(s, p)
            .transmitter(channels, self.channel_buffer_cells());
        Terminal::new(
            generator,
            self.link(s, p),
            gate,
            channels,
            self.switch.cell_bytes,
        )
    }

    /// GNet host `t` of `spec`, sending the packets `generator` makes and, where the hosts
    /// make 1RMA reads, reads to `destinations` (a stream of their own from `seed`).
    fn gnet_host(
        &self,
        t: usize,
        spec: GnetSpec,
        generator: Generator,
        (destinations, seed): (Destinations, u64),
        warmup_ps: TimePs,
    ) -> GnetHost {
        let (s, p) = self.host_port(t);
        let channels = self.channels(self.topology.switch_ports(s));
        let gate = self
            .flow_control(s, p)
            .transmitter(channels, self.channel_buffer_cells());
        let hosts = self.topology.endpoints() as u32;
        let endpoint = Endpoint::new(t as u16, hosts, spec);
        let reads = spec.rma.map(|rma| {
            let id = ComponentId {
                kind: stream_kind::RMA_SOURCE,
                index: t as u32,
            };
            let traffic = rma_traffic(&rma, generator.stop_ps());
            Generator::new(t as u16, traffic, destinations, stream(seed, id))
        });
        let mut host = GnetHost::new(endpoint, (generator, reads), self.link(s, p), gate);
        let classes = ComponentId {
            kind: stream_kind::IP_CLASS,
            index: t as u32,
        };
        host.draw_classes_from(stream(seed, classes));
        host.set_measure_from(warmup_ps);
        host
    }

    /// VC router `s` made as `vc` says, its outputs on their cables under credits toward
    /// routers (a host takes every flit).
    fn vc_router(&self, s: usize, vc: &VcSpec, rng: crate::engine::rng::Rng) -> VcRouter {
        let ports = self.topology.switch_ports(s);
        let (link, pipeline_ps) = (self.switch.out_link.clone(), self.switch.pipeline_ps);
        let mut router = VcRouter::new(ports, self.switch.cell_bytes, link, pipeline_ps, vc, rng);
        for port in 0..ports {
            let class = PortClass::of(self.topology, s, port);
            let gate = match class {
                PortClass::Terminal => crate::blocks::flow_control::TxGate::Open,
                _ => self
                    .flow_control(s, port)
                    .transmitter(vc.vcs as usize, Some(vc.buffer_cells)),
            };
            router.set_port(port, class, self.link(s, port), gate);
        }
        router
    }

    /// Switch `s`, its outputs on their cables under their flow control.
    fn cell_switch(&self, s: usize, rng: crate::engine::rng::Rng) -> CellSwitch {
        let ports = self.topology.switch_ports(s);
        let spec = SwitchSpec {
            ports,
            ..self.switch.clone()
        };
        let mut cell_switch = CellSwitch::new(spec, rng);
        for port in 0..ports {
            let flow_control = self.flow_control(s, port);
            cell_switch.set_output_link(port, self.link(s, port));
            cell_switch.set_input_flow_control(port, flow_control.receiver(self.channels(ports)));
            if let Some(next) = self.topology.peer_switch(s, port) {
                let channels = self.channels(self.topology.switch_ports(next));
                let gate = flow_control.transmitter(channels, self.switch.buffer_cells);
                cell_switch.set_output_gate(port, gate);
            }
        }
        cell_switch
    }

    /// The hosts (each sending to `destinations` as `traffic` says, measured after
    /// `warmup_ps`, holding at most `nic_queue_cells`) and then the switches, their random
    /// streams drawn from `seed`.
    fn nodes(
        &self,
        destinations: &[Destinations],
        traffic: TrafficSpec,
        seed: u64,
        warmup_ps: TimePs,
        nic_queue_cells: Option<u32>,
    ) -> Vec<CellNode> {
        let hosts = self.topology.endpoints();
        let mut nodes: Vec<CellNode> = Vec::with_capacity(hosts + self.topology.switches());
        for (i, dst) in destinations.iter().enumerate() {
            let id = ComponentId {
                kind: stream_kind::TERMINAL,
                index: i as u32,
            };
            let generator = Generator::new(i as u16, traffic, dst.clone(), stream(seed, id));
            if let Some(spec) = self.gnet {
                let reads = (dst.clone(), seed);
                nodes.push(CellNode::Gnet(Box::new(
                    self.gnet_host(i, spec, generator, reads, warmup_ps),
                )));
                continue;
            }
            let mut terminal = self.terminal(i, generator);
            terminal.measure_from_ps = warmup_ps;
            terminal.queue_limit_cells = nic_queue_cells;
            if destinations.len() <= IN_ORDER_CHECK_MAX_HOSTS {
                terminal.set_peers(destinations.len());
            }
            nodes.push(CellNode::Terminal(terminal));
        }
        for s in 0..self.topology.switches() {
            let id = ComponentId {
                kind: stream_kind::SWITCH,
                index: s as u32,
            };
            let rng = stream(seed, id);
            nodes.push(match self.vc {
                Some(vc) => {
                    let mut router = self.vc_router(s, vc, rng);
                    router.stats.measure_from_ps = warmup_ps;
                    CellNode::VcRouter(router)
                }
                None => {
                    let mut cell_switch = self.cell_switch(s, rng);
                    cell_switch.stats.measure_from_ps = warmup_ps;
                    CellNode::Switch(cell_switch)
                }
            });
        }
        nodes
    }

    /// How `nodes` are wired into a fabric of cell time `slot_ps` that ends at `end_ps`.
    fn fabric_wiring<R: Router>(
        &self,
        nodes: &[CellNode],
        slot_ps: TimePs,
        end_ps: TimePs,
        layer1: Vec<Layer1Spec>,
    ) -> Wiring {
        let (peers, delays_ps) = self.wiring();
        let hosts = self.topology.endpoints();
        Wiring {
            peers,
            delays_ps,
            slotted: nodes.iter().map(|n| Node::<R>::is_slotted(n)).collect(),
            sink: nodes.iter().map(|n| Node::<R>::is_sink(n)).collect(),
            end_ps,
            router_index: (0..nodes.len()).map(|n| n.checked_sub(hosts)).collect(),
            slot_ps,
            per_voq: self.switch.per_voq_buffers,
            layer1,
        }
    }

    /// How much more than its cable's delay anything sent between switches takes, at least
    /// (see [`Fabric::partition`]): a cell's time on the fastest cable where only cells travel
    /// between switches; minus a cell time (`slot_ps`) where flow control sends signals back,
    /// which a switch may send when the cell they answer arrived, up to a cell time before the
    /// clock edge that latched it.
    fn message_floor_ps(&self, slot_ps: TimePs) -> i64 {
        let topology = self.topology;
        let ports = || {
            (0..topology.switches())
                .flat_map(|s| (0..topology.switch_ports(s)).map(move |p| (s, p)))
        };
        let signals = self.vc.is_some()
            || ports().any(|(s, p)| self.flow_control(s, p) != LinkFlowControl::None);
        match signals {
            true => -(slot_ps as i64),
            false => ports()
                .map(|(s, p)| self.link(s, p).frame_ps(self.switch.cell_bytes) as i64)
                .min()
                .unwrap_or(slot_ps as i64),
        }
    }

    /// Each node's far ends (node, port) and cable delays, port by port: hosts are nodes
    /// `0..hosts`, switch `s` is node `hosts + s`.
    #[allow(clippy::type_complexity)]
    fn wiring(&self) -> (Vec<Vec<(u32, u16)>>, Vec<Vec<TimePs>>) {
        let topology = self.topology;
        let hosts = topology.endpoints();
        let node_of = |end: Option<Attachment>| -> (u32, u16) {
            match end {
                Some(Attachment::Endpoint(t)) => (t as u32, 0),
                Some(Attachment::SwitchPort { switch, port }) => {
                    ((hosts + switch) as u32, port as u16)
                }
                None => (u32::MAX, u16::MAX),
            }
        };
        let mut peers: Vec<Vec<(u32, u16)>> = (0..hosts)
            .map(|t| {
                let (s, p) = self.host_port(t);
                vec![((hosts + s) as u32, p as u16)]
            })
            .collect();
        peers.extend((0..topology.switches()).map(|s| {
            (0..topology.switch_ports(s))
                .map(|port| node_of(topology.peer(s, port)))
                .collect()
        }));
        let mut delays_ps: Vec<Vec<TimePs>> = (0..hosts)
            .map(|t| {
                let (s, p) = self.host_port(t);
                vec![self.link(s, p).propagation_ps]
            })
            .collect();
        delays_ps.extend((0..topology.switches()).map(|s| {
            (0..topology.switch_ports(s))
                .map(|port| self.link(s, port).propagation_ps)
                .collect()
        }));
        (peers, delays_ps)
    }
}

/// The links and the switches `failures` fail.
fn failures_scheduled(failures: &[Failure]) -> (u64, u64) {
    let links = failures.iter().filter(|f| f.port.is_some()).count() as u64;
    (links, failures.len() as u64 - links)
}

/// The hosts that send and receive where not all do: those the sources choose among.
fn active_hosts(destinations: &[Destinations]) -> Option<Arc<[u16]>> {
    destinations.iter().find_map(|d| match d {
        Destinations::Among { hosts, .. } => Some(hosts.clone()),
        _ => None,
    })
}

impl<R: Router> FabricModel for Network<R> {
    type Node = CellNode;
    type Router = R;

    fn fabric(&self) -> &Fabric<CellNode, R> {
        &self.fabric
    }

    fn fabric_mut(&mut self) -> &mut Fabric<CellNode, R> {
        &mut self.fabric
    }

    /// The GNet hosts' work not yet in the fabric, in the fabric's units (IP packets waiting
    /// in their ingress buffers, Reqs waiting, Resps owed).
    fn held_outside_cells(&self) -> u64 {
        self.gnet_hosts()
            .map(|h| h.endpoint.units_not_yet_sent())
            .sum()
    }

    /// A thousand cell times, plus ten flow-control round trips over the longest cable.
    fn stuck_after_ps(&self) -> TimePs {
        1_000 * self.slot_ps + 20 * self.longest_cable_ps
    }

    fn stuck_report(&self) -> String {
        self.deadlock_report()
    }
}

impl<R: Router> Design for Network<R> {
    fn end_ps(&self) -> TimePs {
        self.end_ps
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        let (summary, tables, perf) = self.finish(clock)?;
        Ok(Report::new(&summary, &tables, perf))
    }
}

#[cfg(test)]
mod tests {
    use crate::blocks::cell::Cell;
    use crate::blocks::switch::Fault;
    use crate::designs::{cell_fabric, single_switch};
    use crate::engine::kernel::Kernel;
    use crate::run::{assert_conservation_fails, assert_unaccounted, RunError};
    use crate::scenario::Scenario;

    /// `network` run to half of `end_ps` and stopped there, with no deadlock.
    fn stopped_halfway<R: crate::blocks::routing::Router>(
        network: super::Network<R>,
        end_ps: u64,
    ) -> (super::Network<R>, crate::engine::kernel::Clock) {
        Kernel::run_until(network, end_ps, end_ps / 2)
    }

    /// The scenario `base` (a JSON object) with `sections` (another) put in, each in place of
    /// the base's section of its name.
    fn scenario_with(mut base: serde_json::Value, sections: serde_json::Value) -> Scenario {
        let serde_json::Value::Object(sections) = sections else {
            panic!("sections are a JSON object")
        };
        base.as_object_mut().unwrap().extend(sections);
        Scenario::from_json(&base.to_string()).unwrap()
    }

    /// A k = 4 fat tree of cell switches spraying cells, with `sections` (`run`, `switch`,
    /// `traffic`) put in.
    fn fat_tree_with(
        sections: serde_json::Value,
    ) -> super::Network<crate::blocks::routing::FabricRouter> {
        let base = serde_json::json!({"design": "cell_fabric",
            "topology": {"kind": "fat_tree", "k": 4},
            "routing": {"mode": "spray"}});
        cell_fabric::build(&scenario_with(base, sections)).unwrap()
    }

    /// A small fabric stopped halfway through, with cells in every place they can be.
    fn halfway() -> (
        super::Network<crate::blocks::routing::FabricRouter>,
        crate::engine::kernel::Clock,
    ) {
        let network = fat_tree_with(serde_json::json!({
            "run": {"seed": 2, "duration_ns": 5120, "warmup_ns": 512},
            "switch": {"scheduler": "output_queued", "buffer_cells": 4},
            "traffic": {"load": 1.0}}));
        stopped_halfway(network, 5_120_000)
    }

    #[test]
    fn the_account_settles_where_the_cells_are() {
        let (network, clock) = halfway();
        assert!(
            network.fabric.cells_held() > 0,
            "cells are in flight halfway"
        );
        assert!(network.finish(clock).is_ok());
    }

    /// A cell allocated but held in no queue (a lost handle) breaks the account.
    #[test]
    fn a_cell_held_nowhere_fails_the_run() {
        let (mut network, clock) = halfway();
        network
            .fabric
            .accounts_mut()
            .0
            .alloc(Cell::new(0, 1, 64, true, 0, 0));
        assert_unaccounted(network.finish(clock), Some(1));
    }

    /// A cell lost without being counted (here: an injection no cell stands for) breaks the
    /// balance.
    #[test]
    fn a_cell_lost_silently_fails_the_run() {
        let (mut network, clock) = halfway();
        let terminal = network
            .fabric
            .nodes_mut()
            .iter_mut()
            .find_map(|n| match n {
                super::CellNode::Terminal(t) => Some(t),
                _ => None,
            })
            .unwrap();
        terminal.counters.cells_injected += 1;
        assert_conservation_fails(network.finish(clock));
    }

    /// A cell delivered twice breaks the account.
    #[test]
    fn a_cell_delivered_twice_fails_the_run() {
        let (mut network, clock) = halfway();
        network.fabric.start(0, |_, ctx| {
            let cell = ctx.cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
            ctx.deliver(cell);
            ctx.deliver(cell);
        });
        assert!(matches!(
            network.finish(clock),
            Err(RunError::ReleasedTwice(1))
        ));
    }

    /// A small Clique of VC routers whose hosts speak IP over GNet, with `sections` (a JSON
    /// object) added to its scenario.
    fn clique_with(
        sections: serde_json::Value,
    ) -> super::Network<crate::blocks::routing::FabricRouter> {
        let base = serde_json::json!({"design": "cell_fabric",
            "run": {"seed": 6, "duration_ns": 12000, "warmup_ns": 1000},
            "topology": {"kind": "clique", "global_propagation_ns": 250,
                "clique": {"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 3}},
            "routing": {"mode": "aquila_fully_adaptive"},
            "switch": {"scheduler": "vc_islip", "pipeline_ns": 40},
            "vc": {"count": 6, "classes": 2, "assignment": "global_local_increment", "buffer_cells": 160},
            "link": {"rate_gbps": 50, "propagation_ns": 2, "flow_control": "credit"},
            "cell": {"size_bytes": 16, "payload_bytes": 8},
            "gnet": {"packet_bytes": 1500}});
        cell_fabric::build(&scenario_with(base, sections)).unwrap()
    }

    /// The GNet Clique at 60% load.
    fn gnet_clique() -> super::Network<crate::blocks::routing::FabricRouter> {
        clique_with(serde_json::json!({"traffic": {"load": 0.6}}))
    }

    /// The GNet Clique with every host also reading 4 KB from others at 30% load.
    fn rma_clique() -> super::Network<crate::blocks::routing::FabricRouter> {
        clique_with(serde_json::json!({"traffic": {"load": 0.3},
            "rma": {"load": 0.3, "read_bytes": 4096}}))
    }

    /// The GNet hosts of `network`.
    fn gnet_hosts(
        network: &mut super::Network<crate::blocks::routing::FabricRouter>,
    ) -> impl Iterator<Item = &mut crate::blocks::gnet::host::GnetHost> {
        network
            .fabric
            .nodes_mut()
            .iter_mut()
            .filter_map(|n| match n {
                super::CellNode::Gnet(g) => Some(g.as_mut()),
                _ => None,
            })
    }

    /// Asserts that the accounts of `network()` settle when the run is stopped every
    /// `step_ns` from 2 to 12 us (its end).
    fn settles_wherever_stopped(
        network: fn() -> super::Network<crate::blocks::routing::FabricRouter>,
        step_ns: usize,
    ) {
        for stop_ns in (2_000..12_000).step_by(step_ns) {
            let mut kernel = Kernel::new(network(), 12_000_000);
            kernel.advance(stop_ns * 1_000);
            let (network, clock, _) = kernel.into_parts();
            let finished = network.finish(clock);
            assert!(
                finished.is_ok(),
                "stopped at {stop_ns} ns: {:?}",
                finished.err()
            );
        }
    }

    /// Without a fault the GNet accounts settle; a host losing one control flit it received
    /// (an RTS, CTS or CTD gone without a trace) fails the control account.
    #[test]
    fn a_lost_control_flit_fails_the_gnet_account() {
        let (summary, _) = gnet_clique().run().expect("the accounts settle");
        let flits = summary.gnet.unwrap().flits;
        assert!(flits.control_flits_delivered > 100);
        let mut network = gnet_clique();
        gnet_hosts(&mut network).next().unwrap().lose_flit =
            Some((crate::blocks::gnet::endpoint::FlitLedger::Control, 3));
        assert_conservation_fails(network.run());
    }

    /// The share of non-minimal cells counts GNet cells, not their flits: each cell routed at
    /// its source TiN is one, whatever its flits (a data cell of 1 500-byte packets is up to
    /// ten), so the cells routed are about the data flits over ten (fewer by those still at
    /// their hosts when the run ends, more by the CTSs), never the flits.
    #[test]
    fn the_nonminimal_share_is_of_cells_not_flits() {
        let (summary, _) = gnet_clique().run().expect("the accounts settle");
        let nonminimal = summary.nonminimal.expect("Fully Adaptive counts misroutes");
        let flits = summary.gnet.unwrap().flits;
        let routed = nonminimal.cells_nonminimal as f64 / nonminimal.nonminimal_fraction;
        assert!(nonminimal.cells_nonminimal > 0 && nonminimal.nonminimal_fraction <= 1.0);
        let data_cells = flits.data_flits_injected as f64 / 10.0;
        assert!(
            routed > 0.9 * data_cells && routed < 2.0 * data_cells,
            "{routed} cells routed for {} data flits",
            flits.data_flits_injected
        );
    }

    /// Stopped at any moment (CTSs waiting to leave, on the wire, data half-sent), the GNet
    /// accounts settle.
    #[test]
    fn the_gnet_accounts_settle_wherever_a_run_stops() {
        settles_wherever_stopped(gnet_clique, 731);
    }

    /// Stopped at any moment (Reqs waiting or half-sent, reads waiting for their PCIe read,
    /// Resps on the wire), the read accounts settle.
    #[test]
    fn the_rma_accounts_settle_wherever_a_run_stops() {
        settles_wherever_stopped(rma_clique, 1_237);
    }

    /// A server that forgets a Req it received (its Resps never made) fails the read
    /// account; a client losing a Resp flit fails the Resp flit account.
    #[test]
    fn a_forgotten_req_or_a_lost_resp_fails_the_rma_account() {
        let (summary, _) = rma_clique().run().expect("the accounts settle");
        let rma = summary.gnet.unwrap().rma.unwrap();
        assert!(rma.rma_reads_completed > 10, "{rma:?}");
        let mut network = rma_clique();
        let host = gnet_hosts(&mut network).nth(5).unwrap();
        host.endpoint.rma.as_mut().unwrap().server.forget_next_req = true;
        assert_conservation_fails(network.run());
        let mut network = rma_clique();
        gnet_hosts(&mut network).nth(7).unwrap().lose_flit =
            Some((crate::blocks::gnet::endpoint::FlitLedger::Resp, 40));
        assert_conservation_fails(network.run());
    }

    /// A packet counted as generated that no place holds fails the packet account.
    #[test]
    fn a_packet_held_nowhere_fails_the_gnet_packet_account() {
        let (mut network, clock) = stopped_halfway(gnet_clique(), 12_000_000);
        gnet_hosts(&mut network)
            .next()
            .unwrap()
            .endpoint
            .packets
            .generated += 1;
        assert_conservation_fails(network.finish(clock));
    }

    /// Runs `network` to its end with `fault` injected into every switch.
    fn run_with_fault(
        network: super::Network<crate::blocks::routing::FabricRouter>,
        fault: Fault,
    ) -> Result<(super::Summary, super::Tables), RunError> {
        let mut network = network;
        for node in network.fabric.nodes_mut() {
            if let super::CellNode::Switch(s) = node {
                s.fault = fault;
            }
        }
        network.run()
    }

    /// A fat tree of input-queued (iSLIP) switches, loaded enough to keep cells moving.
    fn fabric() -> super::Network<crate::blocks::routing::FabricRouter> {
        fat_tree_with(serde_json::json!({
            "run": {"seed": 3, "duration_ns": 5120, "warmup_ns": 512},
            "switch": {"scheduler": "islip", "buffer_cells": 16},
            "traffic": {"load": 0.6}}))
    }

    /// One output-queued switch of 8 ports.
    fn one_switch() -> super::Network<crate::blocks::routing::FabricRouter> {
        let json = r#"{"design": "single_switch",
            "run": {"seed": 4, "duration_ns": 5120, "warmup_ns": 512},
            "topology": {"kind": "star"},
            "switch": {"ports": 8, "scheduler": "output_queued"},
            "traffic": {"load": 0.8}}"#;
        single_switch::build(&Scenario::from_json(json).unwrap()).unwrap()
    }

    /// Every 100th cell an output sends vanishes; only the end-of-run account can catch it.
    fn lose_one_in_100() -> Fault {
        Fault {
            lose_one_in: Some(100),
            skip_slot_check: true,
            ..Fault::default()
        }
    }

    /// Every 100th cell an output sends leaves twice.
    fn duplicate_one_in_100() -> Fault {
        Fault {
            duplicate_one_in: Some(100),
            ..Fault::default()
        }
    }

    /// With no fault, the runs the fault tests use settle.
    #[test]
    fn the_fault_scenarios_settle_without_a_fault() {
        assert!(run_with_fault(fabric(), Fault::default()).is_ok());
        assert!(run_with_fault(one_switch(), Fault::default()).is_ok());
    }

    /// Switches of a fabric that lose one cell in 100 from their queues (the handle vanishes,
    /// no counter changes) break the cell account at the end of the run: the cells held are
    /// the lengths of the switches' queues, short of the cells allocated.
    #[test]
    fn a_fabric_switch_losing_one_cell_in_100_fails_the_account() {
        assert_unaccounted(run_with_fault(fabric(), lose_one_in_100()), None);
    }

    /// The same for a single switch.
    #[test]
    fn a_single_switch_losing_one_cell_in_100_fails_the_account() {
        assert_unaccounted(run_with_fault(one_switch(), lose_one_in_100()), None);
    }

    /// With debug assertions, the switch checks its counter against its queues every slot:
    /// the first lost cell stops the run there.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "cells held by the counter != cells in the queues")]
    fn a_switch_losing_a_cell_fails_the_per_slot_check() {
        let fault = Fault {
            skip_slot_check: false,
            ..lose_one_in_100()
        };
        let _ = run_with_fault(fabric(), fault);
    }

    /// A switch that sends a copy of one cell in 100 (a cell no source injected) breaks the
    /// balance: more cells delivered, dropped and held than injected.
    #[test]
    fn a_single_switch_duplicating_one_cell_in_100_fails_the_balance() {
        assert_conservation_fails(run_with_fault(one_switch(), duplicate_one_in_100()));
    }

    /// The same for the switches of a fabric.
    #[test]
    fn a_fabric_switch_duplicating_one_cell_in_100_fails_the_balance() {
        assert_conservation_fails(run_with_fault(fabric(), duplicate_one_in_100()));
    }

    /// A RIFL switch whose hosts broadcast, stopped halfway with copies everywhere.
    fn broadcasting_halfway() -> (
        super::Network<crate::designs::rifl::router::RiflRouter>,
        crate::engine::kernel::Clock,
    ) {
        let json = r#"{"design": "rifl",
            "run": {"seed": 2, "duration_ns": 42240, "warmup_ns": 0},
            "switch": {"ports": 8, "scheduler": "islip", "buffer_cells": 24, "pipeline_ns": 42.24},
            "link": {"propagation_ns": 147.84, "flow_control": "onoff", "off_threshold_cells": 8, "on_threshold_cells": 4},
            "cell": {"size_bytes": 264, "payload_bytes": 256},
            "traffic": {"load": 0.5, "include_self": false, "broadcast_fraction": 0.3}}"#;
        let network = crate::designs::rifl::build(&Scenario::from_json(json).unwrap()).unwrap();
        stopped_halfway(network, 42_240_000)
    }

    /// The account counts a switch's copies of a broadcast as cells it made: it settles
    /// halfway through a broadcasting run, and fails once one copy goes uncounted.
    #[test]
    fn a_broadcast_copy_left_out_of_the_count_fails_the_balance() {
        let (network, clock) = broadcasting_halfway();
        let (summary, _, _) = network.finish(clock).expect("the account settles");
        assert!(summary.cells.cells_copied.unwrap() > 0 && summary.cells.cells_in_flight > 0);
        let (mut network, clock) = broadcasting_halfway();
        for node in network.fabric.nodes_mut() {
            if let super::CellNode::Switch(s) = node {
                s.stats.switch_counters.cells_copied -= 1;
            }
        }
        assert_conservation_fails(network.finish(clock));
    }

    /// A drop counted for a cell that is still held breaks the balance.
    #[test]
    fn a_miscounted_drop_fails_the_run() {
        let (mut network, clock) = halfway();
        network.fabric.accounts_mut().1.cells_dropped += 1;
        assert_conservation_fails(network.finish(clock));
    }
}
