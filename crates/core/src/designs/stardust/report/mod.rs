//! What a Stardust run reports, and the accounts it settles first: every cell (data and
//! control) and every packet, each term counted where the items are.

use serde::Serialize;

mod settle;

use settle::Parts;

use super::adapter::egress::Egress;
use super::adapter::{Adapter, AdapterCounters};
use super::element::Element;
use super::reach::{ChangeTable, EventTable, ReachSummary};
use super::wire::CellFormat;
use super::Stardust;
use crate::blocks::ethernet::host::{FlowSeries, Host, SenderTotals};
use crate::blocks::ethernet::opening::{self, OpenedDetail, OpenedSummary};
use crate::blocks::ethernet::summary::{DcqcnSummary, FlowGoodput, NdpSummary, PfcSummary};
use crate::blocks::ethernet::switch::TrimCounts;
use crate::blocks::transport::Transport;
use crate::blocks::workload::TimedCounts;
use crate::engine::kernel::Clock;
use crate::engine::stats::{Completion, LatencyHistogram, OccupancyHistogram, Percentiles, Spread};
use crate::engine::time::{TimePs, PS_PER_NS};
use crate::run::RunError;
use crate::scenario::Named;

/// Headline numbers of a Stardust run, in groups (flattened: the report's keys are the groups'
/// fields, in order).
#[derive(Clone, Debug, Serialize)]
pub struct StardustSummary {
    /// The run: its design, mode, seed and sizes.
    #[serde(flatten)]
    pub run: SummaryRun,
    /// What hosts received: goodput, completions and latencies.
    #[serde(flatten)]
    pub delivery: SummaryDelivery,
    /// The settled accounts: packets and cells, created, delivered, dropped and in flight.
    #[serde(flatten)]
    pub accounts: SummaryAccounts,
    /// The cells adapters made: data, requests and credits.
    #[serde(flatten)]
    pub cells: SummaryCells,
    /// Queues, marks and pauses inside the fabric and at the adapters.
    #[serde(flatten)]
    pub queues: SummaryQueues,
    /// What the run took.
    #[serde(flatten)]
    pub effort: SummaryEffort,
    /// With transport hosts (`host.transport`): what their transport did; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportSummary>,
    /// With scripted failures: what adapters did about them; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureSummary>,
    /// With low-latency VOQs (`adapter.low_latency_bytes`): what they sent; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub low_latency: Option<LowLatencySummary>,
    /// With a shared ingress memory (`adapter.ingress_buffer_bytes`): its occupancy and
    /// drops; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub ingress_memory: Option<MemorySummary>,
}

/// What low-latency VOQs sent (§5.6).
#[derive(Clone, Debug, Serialize)]
pub struct LowLatencySummary {
    /// Packets sent at once, with no credit.
    pub low_latency_packets: u64,
    /// Packets small enough that found their VOQ empty but their adapter's low-latency bound
    /// short, and waited for credits.
    pub low_latency_refused_packets: u64,
}

/// The adapters' shared ingress memories (§3.2).
#[derive(Clone, Debug, Serialize)]
pub struct MemorySummary {
    /// Packets dropped because their adapter's memory was full (part of
    /// `packets_dropped_ingress`, whose other part found their VOQ full).
    pub packets_dropped_ingress_memory: u64,
    /// Most bytes one adapter's memory held, over the run.
    pub ingress_memory_peak_bytes: u64,
    /// Bytes an adapter's memory held on average over the measurement window, time-weighted,
    /// the mean over adapters.
    pub ingress_memory_mean_bytes: f64,
}

/// What adapters did about scripted failures (§5.9, §5.10).
#[derive(Clone, Debug, Serialize)]
pub struct FailureSummary {
    /// Packets dropped at sources because their destination adapter became unreachable (it
    /// failed): emptied from their VOQs, or refused on arrival from a host.
    pub packets_dropped_unreachable: u64,
    /// Packets lost at a failed adapter: in its VOQs or at its host ports when it failed, or
    /// created by its hosts after.
    pub packets_lost_adapter_failed: u64,
    /// Credits egress schedulers owed to adapters that became unreachable, never issued.
    pub credits_cancelled: u64,
    /// From the first scripted failure to the last change of any device's table before the
    /// next scripted event (the last element's table update); absent if no table changed.
    pub tables_settled_us: Option<f64>,
    /// From the first scripted failure until every source adapter whose tables changed had a
    /// data cell sent after the change (on the new routes) delivered: the latest, over those
    /// sources, of the first such delivery anywhere; absent if no table changed.
    pub rerouted_delivery_us: Option<f64>,
}

/// From `from_ps`, the latest, over source adapters whose tables changed in
/// `from_ps..until_ps`, of the first arrival anywhere of a data cell they sent after their last
/// change in that window.
fn rerouted_delivery_us(
    adapters: &[&super::adapter::Adapter],
    from_ps: TimePs,
    until_ps: TimePs,
) -> Option<f64> {
    let sources = adapters.first()?.healing.rerouted_from.len();
    let window = |s: usize| {
        adapters.iter().flat_map(move |a| {
            a.healing.rerouted_from[s]
                .iter()
                .filter(move |e| (from_ps..until_ps).contains(&e.0))
        })
    };
    (0..sources)
        .filter_map(|s| {
            let latest = window(s).map(|e| e.0).max()?;
            window(s).filter(|e| e.0 == latest).map(|e| e.1).min()
        })
        .max()
        .map(|at| (at - from_ps) as f64 / 1e6)
}

/// Fills the failures table's `rerouted_delivery_us`, one per scripted event.
fn measure_rerouting(adapters: &[&super::adapter::Adapter], events: &mut EventTable) {
    let at_ps: Vec<TimePs> = events
        .at_us
        .iter()
        .map(|&us| (us * 1e6).round() as TimePs)
        .collect();
    events.rerouted_delivery_us = (0..at_ps.len())
        .map(|i| {
            let until_ps = at_ps.get(i + 1).copied().unwrap_or(TimePs::MAX);
            rerouted_delivery_us(adapters, at_ps[i], until_ps)
        })
        .collect();
}

/// The run: its design, mode, seed and sizes.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryRun {
    pub design: &'static str,
    /// `pull` (credits) or `push`.
    pub mode: &'static str,
    /// Spraying mode.
    pub routing: String,
    /// Seed of the run.
    pub seed: u64,
    /// Fabric adapters.
    pub adapters: u32,
    /// Fabric elements.
    pub elements: u32,
    /// Hosts.
    pub hosts: u32,
    /// Largest cell, header included.
    pub cell_bytes: u32,
    /// Data cell header.
    pub header_bytes: u32,
    /// Bytes per credit.
    pub credit_bytes: u32,
}

/// What hosts received: goodput, completions and latencies.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryDelivery {
    /// Mean goodput of the receiving hosts over the measurement window, as a fraction of
    /// their line rate.
    pub goodput: f64,
    /// Goodput per flow over the window.
    pub flow_goodput_gbps: Option<Spread>,
    /// Pattern `fct`: timed flows started and completed, and their completion times (all, and
    /// of 500 KB or more: the paper's 1 MB flows finish in under 1 ms, Fig. 10b).
    #[serde(flatten)]
    pub timed: TimedCounts,
    /// Pattern `fct` with transport hosts: completion times by size, slowdowns and slot reuse,
    /// as the Ethernet design reports them; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub opened: Option<OpenedDetail>,
    /// Finite flows that delivered all their bytes.
    pub flows_completed: u64,
    /// Their completion times: the first, the mean and the last.
    pub fct_us: Option<Completion>,
    /// Fraction of flows whose goodput is at least 94.4% of the receiving host's line rate
    /// (the paper's 9.44 Gbit/s of 10, Fig. 10a).
    pub flows_at_least_94_4_percent: f64,
    /// Packet latency, creation at the host to its last bit at the receiving host.
    pub packet_latency_us: Percentiles,
    /// Data cell latency through the fabric, cut at the source adapter to arrival at the
    /// destination adapter.
    pub fabric_latency_ns: Percentiles,
    /// Packet latency over every packet created during measurement, those still on their way
    /// (in a VOQ, in cells, at a host port) at their ages at the end of the run: a lower
    /// bound, which a run that strands packets cannot flatter by leaving them out.
    pub packet_latency_with_in_flight_us: Percentiles,
    /// Fabric latency the same way, over every data cell cut during measurement. Built-in
    /// sources only: transport hosts' frames share the cell arena and carry their own flags,
    /// so a data cell cannot be told from a frame there; absent with transport hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_latency_with_in_flight_ns: Option<Percentiles>,
    /// Pattern `fct` with the built-in sources: completion times of every timed flow, the
    /// unfinished ones at their ages at the end of the run (a lower bound). With transport
    /// hosts the opened flows' report carries the same key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_fct_with_unfinished_us: Option<Percentiles>,
}

/// The settled accounts: packets and cells, created, delivered, dropped and in flight.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryAccounts {
    /// Packets hosts created.
    pub packets_created: u64,
    /// Packets delivered to hosts.
    pub packets_delivered: u64,
    /// Packets dropped at a full ingress VOQ.
    pub packets_dropped_ingress: u64,
    /// Packets lost in the fabric: a cell of theirs was dropped.
    pub packets_dropped_fabric: u64,
    /// Packets dropped at a full host port queue of the egress adapter.
    pub packets_dropped_egress: u64,
    /// Packets in VOQs, in cells and at host ports at the end.
    pub packets_in_flight: u64,
    /// Cells created: data, requests and credits.
    pub cells_injected: u64,
    /// Cells that reached their adapter.
    pub cells_delivered: u64,
    /// Cells dropped, every cause.
    pub cells_dropped: u64,
    /// Cells dropped at a full element queue (congestion: a pull fabric must drop none).
    pub cells_dropped_congestion: u64,
    /// Cells lost to failures, by cause, and reachability messages.
    #[serde(flatten)]
    pub reachability: ReachSummary,
    /// Cells on links and in queues at the end.
    pub cells_in_flight: u64,
}

/// The cells adapters made: data, requests and credits.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryCells {
    /// Data cells.
    pub data_cells: u64,
    /// Data cells shorter than a full cell (a burst's last; without packing, a packet's last).
    pub short_cells: u64,
    /// Payload a data cell carried on average, as a fraction of a full cell's (1: every cell
    /// full; what packing buys, §3.4, Fig. 3).
    pub data_cell_fill: f64,
    /// Request cells.
    pub requests: u64,
    /// Requests sent again by VOQs that waited too long for a credit (reachability kept by
    /// messages).
    pub requests_refreshed: u64,
    /// Credits owed that refreshing VOQs asking by count (`credit.requests = "backlog"`) gave
    /// up for lost before asking anew.
    pub credits_written_off: u64,
    /// Credit cells.
    pub credits: u64,
    /// Credit bytes forfeited by VOQs that had nothing left to send.
    pub credit_bytes_forfeited: u64,
    /// Control bytes as a fraction of all bytes adapters put on their uplinks.
    pub control_overhead: f64,
}

/// Queues, marks and pauses inside the fabric and at the adapters.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryQueues {
    /// Deepest element output queue, in cells.
    pub element_queue_peak_cells: u32,
    /// Mean depth of the last-stage element queue a data cell found on arrival.
    pub last_stage_queue_mean_cells: f64,
    /// Data cells that carried the FCI bit out of an element.
    pub fci_marked_cells: u64,
    /// Cuts of an adapter's credit rate on FCI.
    pub fci_cuts: u64,
    /// OFF signals elements sent upstream (the last resort against loss).
    pub pauses: u64,
    /// Most cells one stream held for reordering.
    pub reorder_peak_cells: u32,
    /// Deepest host port queue at an egress adapter, in bytes.
    pub egress_peak_bytes: u64,
    /// Most credits one adapter had waiting to be served.
    pub credit_backlog_peak: u32,
    /// Fraction of the adapters' uplink time (over the whole run) spent idle while their
    /// adapter held credited data (credits waiting, or cut cells waiting for an uplink).
    pub uplink_idle_with_credits: f64,
}

/// What the run took.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryEffort {
    /// Simulated time.
    pub sim_time_ps: TimePs,
    /// Warm-up excluded from statistics.
    pub warmup_ps: TimePs,
    /// Events processed.
    pub events: u64,
    /// Cells sent on fabric links.
    pub cell_hops: u64,
}

/// What transport hosts did, named as the Ethernet design's summary names it.
#[derive(Clone, Debug, Serialize)]
pub struct TransportSummary {
    /// The hosts' transport (`tcp`, `dctcp`, `mptcp`, `ndp` or `dcqcn`).
    pub transport: &'static str,
    /// Jain's fairness index over the flows' goodputs (1: all equal).
    pub flow_fairness: Option<f64>,
    /// Mean over receiving hosts of the bytes their host links carried in the measurement
    /// window (segments, retransmissions and ACKs, as they left the egress adapter), as a
    /// fraction of line rate. Unlike `goodput` it cannot exceed 1: a receiver that recovers a
    /// loss in the window delivers in order bytes that crossed the fabric before it.
    pub host_link_utilization: f64,
    /// Frames hosts created: data segments and ACKs (each crosses the fabric as a packet).
    pub host_packets_created: u64,
    /// Frames that reached their host (with `adapter.pause_hosts`, PAUSE frames too).
    pub host_packets_received: u64,
    /// ACKs among the frames created.
    pub acks_sent: u64,
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Entries into fast recovery.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Mean round-trip time senders sampled in the measurement window (timestamps echoed by
    /// ACKs), in µs.
    pub rtt_mean_us: Option<f64>,
    /// NDP's counts, named as the Ethernet design's (nothing trims on a Stardust fabric);
    /// absent for other transports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ndp: Option<NdpSummary>,
    /// DCQCN's counts (no CNP: nothing marks ECN on a Stardust fabric); absent for other
    /// transports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<DcqcnSummary>,
    /// With `adapter.pause_hosts`: the adapters' pauses of their hosts, named as the
    /// Ethernet design's PFC counts (`switch_paused_us` is 0: hosts never pause adapters;
    /// `paused_fraction` is over the hosts); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
}

/// Tables of a Stardust run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StardustTables {
    /// Goodput of every receiving host.
    pub hosts: HostTable,
    /// Goodput of every flow.
    pub flows: FlowGoodput,
    /// Depth of the last-stage element queues (toward adapters) each data cell found on
    /// arrival, during measurement.
    pub last_stage_queue: QueueTable,
    /// Pattern `fct`: every timed flow.
    pub timed_flows: TimedFlows,
    /// Reachability kept by messages: every change of a device's table.
    pub table_changes: ChangeTable,
    /// Every scripted failure and repair, and when the tables settled after it.
    pub failures: EventTable,
    /// Transport hosts with `run.sample_ns`: every flow's goodput per interval, flows as in
    /// `flows` (absent otherwise).
    #[serde(skip_serializing_if = "FlowSeries::is_empty")]
    pub flow_series: FlowSeries,
}

/// The timed flows of the `fct` pattern: the built-in sources', or, with transport hosts, the
/// Ethernet design's table (ends, ideals and slowdowns).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum TimedFlows {
    /// Built-in sources.
    BuiltIn(TimedTable),
    /// Transport hosts.
    Opened(opening::TimedTable),
}

impl Default for TimedFlows {
    fn default() -> Self {
        TimedFlows::BuiltIn(TimedTable::default())
    }
}

/// The timed flows of the `fct` pattern's built-in sources.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimedTable {
    /// Flow number.
    pub flow: Vec<u32>,
    /// Bytes.
    pub size_bytes: Vec<u64>,
    /// When it arrived at its source.
    pub start_us: Vec<f64>,
    /// From its arrival to its last byte at the receiving host; absent while unfinished.
    pub fct_us: Vec<Option<f64>>,
}

/// A distribution of queue depths seen by arriving cells.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueTable {
    /// Depth in data cells (the cell on the wire not counted).
    pub depth_cells: Vec<u32>,
    /// Arrivals that found it.
    pub arrivals: Vec<u64>,
}

/// Goodput per receiving host.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HostTable {
    /// Host.
    pub host: Vec<u32>,
    /// Goodput over the measurement window.
    pub goodput_gbps: Vec<f64>,
}

/// What the hosts received: the summary's delivery numbers and their tables.
struct Received {
    delivery: SummaryDelivery,
    hosts: HostTable,
    flows: FlowGoodput,
    timed_flows: TimedFlows,
    transport: Option<TransportSummary>,
}

impl Stardust {
    /// Settles the cell and packet accounts and reports.
    pub(super) fn finish(
        &self,
        clock: &Clock,
    ) -> Result<(StardustSummary, StardustTables), RunError> {
        self.fabric.check_released_once()?;
        let adapters: Vec<_> = self.adapters().collect();
        let parts = Parts {
            counters: adapters.iter().map(|a| a.counters()).collect(),
            adapters,
            elements: self.elements().collect(),
            hosts: self.hosts().collect(),
        };
        let mut settled = self.settle(&parts, clock)?;
        measure_rerouting(&parts.adapters, &mut settled.failures);
        let received = self.received(&parts, clock);
        let (last_stage_queue, last_stage_mean) = last_stage_queue(&parts.elements);
        let summary = StardustSummary {
            run: self.summary_run(&parts),
            delivery: received.delivery,
            accounts: SummaryAccounts {
                packets_created: settled.packets.injected,
                packets_delivered: settled.packets.delivered,
                packets_dropped_ingress: parts.sum(|c| c.ingress.packets_dropped),
                packets_dropped_fabric: settled.packets_dropped_fabric,
                packets_dropped_egress: parts.sum(|c| c.egress.packets_dropped_egress),
                packets_in_flight: settled.packets.in_flight,
                cells_injected: settled.cells.injected,
                cells_delivered: settled.cells.delivered,
                cells_dropped: settled.cells.dropped,
                cells_dropped_congestion: settled.congestion,
                reachability: settled.reachability,
                cells_in_flight: settled.cells.in_flight,
            },
            cells: self.summary_cells(&parts),
            queues: summary_queues(&parts, last_stage_mean, clock.now_ps),
            effort: SummaryEffort {
                sim_time_ps: clock.now_ps,
                warmup_ps: self.config.run.warmup_ps(),
                events: clock.events,
                cell_hops: parts.adapters.iter().map(|a| a.cells_sent()).sum::<u64>()
                    + parts
                        .elements
                        .iter()
                        .map(|e| e.counters().cells_sent)
                        .sum::<u64>(),
            },
            transport: received.transport,
            failures: self.summary_failures(&parts, &settled.failures),
            low_latency: self
                .config
                .adapter
                .low_latency_bytes
                .map(|_| LowLatencySummary {
                    low_latency_packets: parts.sum(|c| c.ingress.packets_low_latency),
                    low_latency_refused_packets: parts
                        .sum(|c| c.ingress.packets_low_latency_refused),
                }),
            ingress_memory: memory_summary(&parts, clock.now_ps),
        };
        let tables = StardustTables {
            hosts: received.hosts,
            flows: received.flows,
            last_stage_queue,
            timed_flows: received.timed_flows,
            table_changes: settled.table_changes,
            failures: settled.failures,
            flow_series: self.flow_series.clone(),
        };
        Ok((summary, tables))
    }

    /// With failures scripted, what they cost: packets dropped or lost, credits cancelled, and
    /// the times the tables settled and rerouted traffic arrived (`events`).
    fn summary_failures(&self, parts: &Parts<'_>, events: &EventTable) -> Option<FailureSummary> {
        (!self.config.failures.is_empty()).then(|| FailureSummary {
            packets_dropped_unreachable: parts.sum(|c| c.ingress.packets_dropped_unreachable),
            packets_lost_adapter_failed: parts
                .sum(|c| c.ingress.packets_lost_failed + c.egress.packets_lost_failed),
            credits_cancelled: parts.sum(|c| c.egress.credits_cancelled),
            tables_settled_us: events.all_settled_us.first().copied().flatten(),
            rerouted_delivery_us: events.rerouted_delivery_us.first().copied().flatten(),
        })
    }

    /// The run's mode, seed and sizes.
    fn summary_run(&self, parts: &Parts<'_>) -> SummaryRun {
        let format = &self.config.cell;
        SummaryRun {
            design: "stardust",
            mode: if self.config.stardust.credits {
                "pull"
            } else {
                "push"
            },
            routing: self.config.routing.mode.clone(),
            seed: self.config.run.seed,
            adapters: parts.adapters.len() as u32,
            elements: parts.elements.len() as u32,
            hosts: self.addressing.hosts() as u32,
            cell_bytes: format.size_bytes,
            header_bytes: format.header_bytes,
            credit_bytes: self.config.credit.size_bytes,
        }
    }

    /// The cells adapters made, and the share of control bytes on their uplinks.
    fn summary_cells(&self, parts: &Parts<'_>) -> SummaryCells {
        let format = &self.config.cell;
        let data_cells = parts.sum(|c| c.ingress.data_cells);
        let requests = parts.sum(|c| c.ingress.requests_sent);
        let credits = parts.sum(|c| c.egress.credits_sent);
        let control_bytes = (requests + credits) as f64 * format.control_bytes as f64;
        let payload_bytes = parts.sum(|c| c.ingress.payload_bytes_cut) as f64;
        let full_payload = self.config.payload_bytes() as f64;
        // All bytes on the uplinks: control, then headers and payload (and the padding of
        // unpacked cells).
        let uplink_bytes = if self.config.stardust.packing {
            control_bytes + payload_bytes + data_cells as f64 * format.header_bytes as f64
        } else {
            control_bytes + data_cells as f64 * format.size_bytes as f64
        };
        SummaryCells {
            data_cells,
            short_cells: parts.sum(|c| c.ingress.short_cells),
            data_cell_fill: payload_bytes / (data_cells as f64 * full_payload).max(1.0),
            requests,
            requests_refreshed: parts.sum(|c| c.ingress.requests_refreshed),
            credits_written_off: parts.sum(|c| c.ingress.credits_written_off),
            credits,
            credit_bytes_forfeited: parts.sum(|c| c.ingress.credit_bytes_forfeited),
            control_overhead: control_bytes / uplink_bytes.max(1.0),
        }
    }

    /// What the hosts received: from the built-in sources' deliveries, or as transport hosts
    /// saw it; with transport hosts on the `fct` pattern, the opened flows' report.
    fn received(&self, parts: &Parts<'_>, clock: &Clock) -> Received {
        let window_s = clock.measured_ps(self.config.run.warmup_ps()) as f64 * 1e-12;
        let (mut timed_counts, timed, mut timed_with_unfinished) =
            built_in_timed(&parts.adapters, clock.now_ps);
        let mut timed_flows = TimedFlows::BuiltIn(timed);
        let (hosts, flows, mut goodput, at_least, fcts, transport) = if parts.hosts.is_empty() {
            self.built_in_report(&parts.adapters, window_s)
        } else {
            self.transport_report(&parts.hosts, &parts.adapters, window_s, clock.now_ps)
        };
        let mut opened = None;
        if let Some((summary, table, hosts_goodput)) =
            self.opened_report(&parts.hosts, clock, window_s)
        {
            timed_counts = summary.counts;
            timed_with_unfinished = None;
            opened = Some(summary.detail);
            timed_flows = TimedFlows::Opened(table);
            goodput = hosts_goodput;
        }
        let delivery = SummaryDelivery {
            goodput,
            flow_goodput_gbps: Spread::of(flows.goodput_gbps.clone()),
            timed: timed_counts,
            opened,
            flows_completed: fcts.len() as u64,
            fct_us: Completion::of(&fcts),
            flows_at_least_94_4_percent: at_least,
            packet_latency_us: merged(parts, |e| &e.packet_latency)
                .percentiles()
                .scaled(1e6),
            fabric_latency_ns: merged(parts, |e| &e.fabric_latency)
                .percentiles()
                .scaled(PS_PER_NS as f64),
            packet_latency_with_in_flight_us: self
                .packet_latency_with_in_flight(parts, clock.now_ps)
                .percentiles()
                .scaled(1e6),
            fabric_latency_with_in_flight_ns: parts.hosts.is_empty().then(|| {
                self.fabric_latency_with_in_flight(parts, clock.now_ps)
                    .percentiles()
                    .scaled(PS_PER_NS as f64)
            }),
            timed_fct_with_unfinished_us: timed_with_unfinished,
        };
        Received {
            delivery,
            hosts,
            flows,
            timed_flows,
            transport,
        }
    }

    /// The measured packets' latencies, delivered or still held at their ages at `now_ps`
    /// (every live packet is in the packet account: in a VOQ, in cells or at a host port).
    fn packet_latency_with_in_flight(&self, parts: &Parts<'_>, now_ps: TimePs) -> LatencyHistogram {
        let mut all = merged(parts, |e| &e.packet_latency);
        let live = self.fabric.live_packets().map(|p| p.created_ps);
        self.record_ages(&mut all, live, now_ps);
        all
    }

    /// The measured data cells' fabric latencies, delivered or still in the fabric at their
    /// ages at `now_ps` (built-in sources: every live cell is then the design's own).
    fn fabric_latency_with_in_flight(&self, parts: &Parts<'_>, now_ps: TimePs) -> LatencyHistogram {
        let mut all = merged(parts, |e| &e.fabric_latency);
        let live = self
            .fabric
            .live_cells()
            .filter(|c| !CellFormat::is_control(c));
        self.record_ages(&mut all, live.map(|c| c.inject_ps), now_ps);
        all
    }

    /// Records in `all` the ages at `now_ps` of the items still on their way that were made
    /// during measurement (`made_ps`: when each was made).
    fn record_ages(
        &self,
        all: &mut LatencyHistogram,
        made_ps: impl Iterator<Item = TimePs>,
        now_ps: TimePs,
    ) {
        let from_ps = self.config.run.warmup_ps();
        for made_ps in made_ps.filter(|&ps| ps >= from_ps) {
            all.record(now_ps - made_ps);
        }
    }

    /// Goodput of the built-in sources' receiving hosts and flows over the window of
    /// `window_s` seconds, and the completion times of finite flows.
    fn built_in_report(&self, adapters: &[&Adapter], window_s: f64) -> TransportReport {
        let gbps = |bytes: u64| bytes as f64 * 8.0 / window_s / 1e9;
        let mut host_table = HostTable::default();
        let mut flows = FlowGoodput::default();
        let mut fractions = Vec::new();
        let mut flow_fractions = Vec::new();
        for a in adapters {
            for d in a.delivered() {
                if !self.receivers[d.host as usize] {
                    continue;
                }
                let line_gbps = self.host_rate_bps[d.host as usize] as f64 / 1e9;
                host_table.host.push(d.host as u32);
                host_table.goodput_gbps.push(gbps(d.bytes_measured));
                fractions.push(gbps(d.bytes_measured) / line_gbps);
            }
        }
        let mut fcts = Vec::new();
        let size_bytes = self.config.traffic.flow_bytes;
        for &(src, dst) in &self.flows {
            let from = adapters[self.addressing.adapter_of(dst) as usize].delivered()
                [self.addressing.port_of(dst)]
            .from
            .iter()
            .find(|f| f.src == src)
            .copied()
            .unwrap_or_default();
            let done = size_bytes.is_some_and(|size| from.bytes == size);
            let fct_us = done.then(|| from.last_ps as f64 / 1e6);
            flows.push(
                src as usize,
                dst as usize,
                gbps(from.bytes_measured),
                fct_us,
            );
            flow_fractions
                .push(gbps(from.bytes_measured) / (self.host_rate_bps[dst as usize] as f64 / 1e9));
            fcts.extend(fct_us);
        }
        let goodput = fractions.iter().sum::<f64>() / fractions.len().max(1) as f64;
        let at_least = flow_fractions.iter().filter(|&&f| f >= 0.944).count() as f64
            / flow_fractions.len().max(1) as f64;
        (host_table, flows, goodput, at_least, fcts, None)
    }
}

/// The built-in timed host's flows (pattern `fct`): their counts and table, and (if there are
/// any) the completion times of all of them, the unfinished at their ages at `now_ps`.
fn built_in_timed(
    adapters: &[&Adapter],
    now_ps: TimePs,
) -> (TimedCounts, TimedTable, Option<Percentiles>) {
    let mut timed = TimedTable::default();
    let mut timed_fct = LatencyHistogram::new();
    let mut with_unfinished = LatencyHistogram::new();
    let mut large = Vec::new();
    let done: std::collections::HashMap<u32, TimePs> = adapters
        .iter()
        .flat_map(|a| a.egress().timed_done.iter().copied())
        .collect();
    for f in adapters.iter().flat_map(|a| a.timed_flows().iter()) {
        let fct_ps = done.get(&f.id).map(|&at| at - f.start_ps);
        timed.flow.push(f.id);
        timed.size_bytes.push(f.size_bytes);
        timed.start_us.push(f.start_ps as f64 / 1e6);
        timed.fct_us.push(fct_ps.map(|ps| ps as f64 / 1e6));
        with_unfinished.record(fct_ps.unwrap_or(now_ps.saturating_sub(f.start_ps)));
        if let Some(ps) = fct_ps {
            timed_fct.record(ps);
            if f.size_bytes >= 500_000 {
                large.push(ps as f64 / 1e6);
            }
        }
    }
    let counts = TimedCounts {
        timed_flows_started: timed.flow.len() as u64,
        timed_flows_completed: timed_fct.count(),
        timed_fct_us: timed_fct.percentiles().scaled(1e6),
        timed_fct_us_500kb_up: Completion::of(&large),
    };
    let with_unfinished =
        (with_unfinished.count() > 0).then(|| with_unfinished.percentiles().scaled(1e6));
    (counts, timed, with_unfinished)
}

/// Every adapter's egress histogram that `pick` names, merged.
fn merged(parts: &Parts<'_>, pick: fn(&Egress) -> &LatencyHistogram) -> LatencyHistogram {
    let mut all = LatencyHistogram::new();
    for a in &parts.adapters {
        all.add(pick(a.egress()));
    }
    all
}

/// The depths of the last-stage element queues data cells found on arrival, and their mean.
fn last_stage_queue(elements: &[&Element]) -> (QueueTable, f64) {
    let mut depths = OccupancyHistogram::default();
    for e in elements {
        for (depth, &n) in e.last_stage_depth.counts().iter().enumerate() {
            depths.record_n(depth, n);
        }
    }
    let mut table = QueueTable::default();
    for (depth, &n) in depths.counts().iter().enumerate() {
        if n > 0 {
            table.depth_cells.push(depth as u32);
            table.arrivals.push(n);
        }
    }
    (table, depths.mean())
}

/// The adapters' shared ingress memories, if they have them.
fn memory_summary(parts: &Parts<'_>, now_ps: TimePs) -> Option<MemorySummary> {
    let memories: Vec<_> = parts
        .adapters
        .iter()
        .filter_map(|a| a.ingress().memory())
        .collect();
    if memories.is_empty() {
        return None;
    }
    Some(MemorySummary {
        packets_dropped_ingress_memory: parts.sum(|c| c.ingress.packets_dropped_memory),
        ingress_memory_peak_bytes: memories.iter().map(|m| m.peak_bytes).max().unwrap_or(0),
        ingress_memory_mean_bytes: memories.iter().map(|m| m.mean_bytes(now_ps)).sum::<f64>()
            / memories.len() as f64,
    })
}

/// Queues, marks and pauses in the elements and adapters.
fn summary_queues(parts: &Parts<'_>, last_stage_mean: f64, now_ps: TimePs) -> SummaryQueues {
    let elements = &parts.elements;
    let adapters = &parts.adapters;
    let uplink_ps = adapters
        .iter()
        .map(|a| a.uplink_count() as f64)
        .sum::<f64>()
        * now_ps as f64;
    let idle_ps = adapters
        .iter()
        .map(|a| a.uplink_idle_ps() as f64)
        .sum::<f64>();
    let peak = |pick: fn(&AdapterCounters) -> u64| parts.counters.iter().map(pick).max();
    SummaryQueues {
        element_queue_peak_cells: elements
            .iter()
            .map(|e| e.counters().queue_peak_cells)
            .max()
            .unwrap_or(0),
        last_stage_queue_mean_cells: last_stage_mean,
        fci_marked_cells: elements.iter().map(|e| e.counters().cells_marked).sum(),
        fci_cuts: parts.sum(|c| c.egress.fci_cuts),
        pauses: elements.iter().map(|e| e.counters().pauses).sum(),
        reorder_peak_cells: parts
            .adapters
            .iter()
            .map(|a| a.reorder_peak_cells())
            .max()
            .unwrap_or(0),
        egress_peak_bytes: peak(|c| c.egress.egress_peak_bytes).unwrap_or(0),
        credit_backlog_peak: peak(|c| c.ingress.credit_backlog_peak as u64).unwrap_or(0) as u32,
        uplink_idle_with_credits: if uplink_ps > 0.0 {
            idle_ps / uplink_ps
        } else {
            0.0
        },
    }
}

/// What [`Stardust::transport_report`] gives: the host and flow tables, the mean per-flow
/// goodput as a fraction of line rate, the fraction of flows at 94.4% or more, the completion
/// times of finite flows, and the transport's counters.
type TransportReport = (
    HostTable,
    FlowGoodput,
    f64,
    f64,
    Vec<f64>,
    Option<TransportSummary>,
);

impl Stardust {
    /// With transport hosts on the `fct` pattern: the timed flows' summary and table, and the
    /// goodput over receiving hosts (the Ethernet design's reading); `None` otherwise. A
    /// flow's ideal is the Ethernet design's on the same topology (its bytes at the host's
    /// line rate, every link's propagation, its largest segment's store-and-forward at every
    /// device between the hosts), so one flow has one ideal in both reports and slowdowns
    /// compare pull with push directly.
    fn opened_report(
        &self,
        hosts: &[&Host],
        clock: &Clock,
        window_s: f64,
    ) -> Option<(OpenedSummary, opening::TimedTable, f64)> {
        let opening = self.config.opening()?;
        let adapter = |host: usize| self.addressing.adapter_of(host as u16) as usize;
        let adapters = self.addressing.adapters();
        let links = |src, dst| self.adapter_hops[adapter(src) * adapters + adapter(dst)] as u64 + 2;
        Some(opening::report(
            &opening,
            hosts,
            &self.host_rate_bps,
            clock.now_ps,
            window_s,
            opening::IdealPath::of(&self.config.host.config, &self.config.link),
            links,
        ))
    }

    /// Goodput as transport hosts saw it (bytes their receivers delivered in order, per flow:
    /// the Ethernet design's reading), and their transport's counters.
    fn transport_report(
        &self,
        hosts: &[&Host],
        adapters: &[&Adapter],
        window_s: f64,
        now_ps: TimePs,
    ) -> TransportReport {
        let gbps = |bytes: u64| bytes as f64 * 8.0 / window_s / 1e9;
        let mut flows = FlowGoodput::default();
        let mut fractions = Vec::with_capacity(self.host_flows.len());
        let mut fcts = Vec::new();
        let mut received = vec![0u64; hosts.len()];
        for f in &self.host_flows {
            let receiver = hosts[f.dst as usize];
            received[f.dst as usize] += receiver.inflows[f.at_dst as usize].bytes_measured;
            let (flow_gbps, fct_us) = receiver.received(f.at_dst, window_s);
            fractions.push(flow_gbps * 1e9 / self.host_rate_bps[f.dst as usize] as f64);
            fcts.extend(fct_us);
            flows.push(f.src as usize, f.dst as usize, flow_gbps, fct_us);
        }
        if self.config.opening().is_some() {
            // No flow made at build: what each host received of the flows opened to it.
            for (h, host) in hosts.iter().enumerate() {
                received[h] = host.bytes_received_measured();
            }
        }
        let mut host_table = HostTable::default();
        let mut link_fractions = Vec::new();
        for (h, &bytes) in received.iter().enumerate() {
            // Flows opened during the run: every host that received one.
            if self.receivers[h] || !hosts[h].inflows.is_empty() {
                host_table.host.push(h as u32);
                host_table.goodput_gbps.push(gbps(bytes));
                let adapter = adapters[self.addressing.adapter_of(h as u16) as usize];
                let carried = adapter.delivered()[self.addressing.port_of(h as u16)].bytes_measured;
                link_fractions.push(gbps(carried) * 1e9 / self.host_rate_bps[h] as f64);
            }
        }
        let n = fractions.len().max(1) as f64;
        let goodput = fractions.iter().sum::<f64>() / n;
        let at_least = fractions.iter().filter(|&&f| f >= 0.944).count() as f64 / n;
        let sent = SenderTotals::of(hosts);
        let host_sum = |pick: fn(&crate::blocks::ethernet::host::HostCounters) -> u64| -> u64 {
            hosts.iter().map(|h| pick(&h.counters)).sum()
        };
        let transport = self.config.host.config.transport;
        let transport = TransportSummary {
            transport: transport.as_str(),
            flow_fairness: crate::engine::stats::jain_index(&flows.goodput_gbps),
            host_link_utilization: link_fractions.iter().sum::<f64>()
                / link_fractions.len().max(1) as f64,
            host_packets_created: host_sum(|c| c.packets_created),
            host_packets_received: host_sum(|c| c.packets_received),
            acks_sent: host_sum(|c| c.acks_sent),
            segments_sent: sent.segments_sent,
            retransmissions: sent.retransmissions,
            fast_retransmits: sent.fast_retransmits,
            timeouts: sent.timeouts,
            rtt_mean_us: sent.rtt_mean_us,
            ndp: (transport == Transport::Ndp)
                .then(|| NdpSummary::of(hosts, TrimCounts::default(), false, false)),
            dcqcn: (transport == Transport::Dcqcn).then(|| DcqcnSummary::of(hosts)),
            pfc: self.config.adapter.pause_hosts.then(|| {
                let counters: Vec<_> = adapters.iter().map(|a| a.counters().egress.pfc).collect();
                PfcSummary::of(&counters, (0, 0), 0, hosts, now_ps)
            }),
        };
        (host_table, flows, goodput, at_least, fcts, Some(transport))
    }
}
