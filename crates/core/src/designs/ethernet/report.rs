//! What an Ethernet run reports, and the account it settles first: every packet (data and
//! ACK) the hosts sent was delivered to a host, dropped at a full queue or is still held,
//! each term counted where the packets are. PFC's PAUSE frames are packets too: switches
//! create them, and they are delivered to the neighbour that takes them.

use serde::Serialize;

use super::Ethernet;
use crate::blocks::ethernet::host::{FlowSeries, Host, SenderTotals};
use crate::blocks::ethernet::opening::{self, OpenedSummary, TimedTable};
use crate::blocks::ethernet::ports::aquarius::AquariusSpec;
use crate::blocks::ethernet::ports::bfc::BfcSpec;
use crate::blocks::ethernet::ports::ideal::IdealSpec;
use crate::blocks::ethernet::summary::{
    AquariusSummary, BfcSummary, DcqcnSummary, FlowGoodput, IdealSummary, NdpSummary,
    PfcClassSummary, PfcSummary,
};
use crate::blocks::ethernet::switch::{EthernetSwitch, TrimCounts};
use crate::blocks::transport::{SenderCounters, Transport};
use crate::engine::kernel::Clock;
use crate::engine::stats::{Completion, Spread, Tally};
use crate::engine::time::TimePs;
use crate::run::{Ledger, RunError};
use crate::scenario::Named;

/// Headline numbers of an Ethernet run (the groups' fields are written inline, in order).
#[derive(Clone, Debug, Serialize)]
pub struct EthernetSummary {
    /// What ran.
    #[serde(flatten)]
    pub setup: RunSetup,
    /// Mean per-flow goodput over the measurement window (warm-up to end) as a fraction of
    /// the receiving host's line rate (the same field as Stardust's); for the patterns that
    /// open flows during the run, the mean over receiving hosts.
    pub goodput: f64,
    /// Goodput per flow over the window, in Gbit/s.
    pub flow_goodput_gbps: Option<Spread>,
    /// Jain's fairness index over the flows' goodputs (1: all equal).
    pub flow_fairness: Option<f64>,
    /// Finite flows whose last byte arrived.
    pub flows_completed: u64,
    /// Their completion times from the start of the run, in µs.
    pub fct_us: Option<Completion>,
    /// The packet account.
    #[serde(flatten)]
    pub packets: PacketAccount,
    /// What the senders did, and the marks they reacted to.
    #[serde(flatten)]
    pub senders: SenderSummary,
    /// The queue depth packets found on arrival at the output queue that took the most bytes
    /// in the measurement window (a single bottleneck's, in an incast).
    pub bottleneck_queue_packets: Option<QueueDepths>,
    /// Deepest switch output queue seen, in packets.
    pub queue_peak_packets: u32,
    /// Simulated time.
    pub sim_time_ps: TimePs,
    /// Warm-up excluded from goodput.
    pub warmup_ps: TimePs,
    /// Events processed.
    pub events: u64,
    /// Packets switches queued for their links (each a switch hop; its transmission is
    /// scheduled when it is queued).
    pub packet_hops: u64,
    /// NDP's counts (absent for window transports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ndp: Option<NdpSummary>,
    /// The shared buffers' counts (absent with per-port buffers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_buffer: Option<SharedBufferSummary>,
    /// PFC's counts (absent unless the ports are lossless).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
    /// DCQCN's counts (absent for other transports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<DcqcnSummary>,
    /// Patterns that open flows during the run (`fct`, `poisson`, `closed_loop`): their
    /// completion times and slot reuse; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub opened: Option<OpenedSummary>,
}

/// What an Ethernet run was.
#[derive(Clone, Debug, Serialize)]
pub struct RunSetup {
    /// Always `ethernet`.
    pub design: &'static str,
    /// The transport's name.
    pub transport: &'static str,
    /// Routing mode.
    pub routing: String,
    /// Seed of the run.
    pub seed: u64,
    /// Hosts.
    pub hosts: u32,
    /// Switches.
    pub switches: u32,
    /// Flows made at build (MPTCP: connections); 0 for the patterns that open flows during
    /// the run (see `flows_opened`), whose per-flow goodput figures are then empty too.
    pub flows: u32,
}

/// Every packet of an Ethernet run: created = delivered + dropped + in flight.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PacketAccount {
    /// Packets created: hosts' data segments and ACKs (NACKs, PULLs, CNPs), and PFC
    /// switches' PAUSE frames.
    pub packets_created: u64,
    /// Packets that reached their host (a PAUSE frame: the neighbour it paused).
    pub packets_delivered: u64,
    /// Packets dropped at full switch queues or lost at random.
    pub packets_dropped: u64,
    /// Of them, lost at random (`switch.loss_probability`).
    pub packets_lost: u64,
    /// Packets in queues, on wires and at NICs at the end.
    pub packets_in_flight: u64,
}

/// What the senders did over the run, and the marks switches gave them.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SenderSummary {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Entries into fast recovery.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Packets switches marked CE.
    pub packets_marked: u64,
    /// DCTCP window cuts on ECN-Echo.
    pub ecn_cuts: u64,
    /// DCTCP window cuts in the measurement window.
    pub ecn_cuts_measured: u64,
    /// Mean round-trip time senders sampled in the measurement window (timestamps echoed by
    /// ACKs: queueing included), in µs; `null` when none was sampled (DCQCN's senders take
    /// none).
    pub rtt_mean_us: Option<f64>,
}

/// What the switches' shared buffers did (Choudhury & Hahne's dynamic threshold): drops by
/// cause, both part of `packets_dropped`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SharedBufferSummary {
    /// Arrivals refused at a queue's dynamic threshold while its buffer had room.
    pub threshold_drops: u64,
    /// Arrivals refused at a full buffer (the threshold keeps a share free, so rare).
    pub full_drops: u64,
    /// The most packets any switch's buffer held.
    pub occupied_peak_packets: u32,
}

/// Depths found on arrival at one output queue, in packets.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct QueueDepths {
    /// Mean.
    pub mean: f64,
    /// Shallowest.
    pub min: u32,
    /// Deepest.
    pub max: u32,
}

/// Tables of an Ethernet run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EthernetTables {
    /// Every flow.
    pub flows: FlowTable,
    /// Patterns that open flows during the run: every timed flow (absent otherwise).
    #[serde(skip_serializing_if = "TimedTable::is_empty")]
    pub timed_flows: TimedTable,
    /// With `run.sample_ns`: every flow's goodput per interval, flows as in `flows` (absent
    /// otherwise).
    #[serde(skip_serializing_if = "FlowSeries::is_empty")]
    pub flow_series: FlowSeries,
}

/// Every flow (an MPTCP connection, its subflows' counts summed): its ends, goodput over the
/// window, completion, and its sender's counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowTable {
    /// Ends, goodput and completion.
    #[serde(flatten)]
    pub goodput: FlowGoodput,
    /// Retransmitted segments.
    pub retransmissions: Vec<u64>,
    /// Retransmission timeouts.
    pub timeouts: Vec<u64>,
}

impl Ethernet {
    /// Settles the packet account and computes the summary and tables.
    pub(crate) fn finish(
        &self,
        clock: &Clock,
    ) -> Result<(EthernetSummary, EthernetTables), RunError> {
        self.fabric.check_released_once()?;
        let hosts: Vec<_> = self.hosts().collect();
        let switches: Vec<_> = self.switch_nodes().collect();
        let packets = self.settle(&hosts, &switches)?;
        let window_s = clock.measured_ps(self.config.run.warmup_ps()) as f64 * 1e-12;
        let (table, goodput, fcts) = self.flow_table(&hosts, window_s);
        let mut summary = EthernetSummary {
            setup: RunSetup {
                design: "ethernet",
                transport: self.config.host.transport.as_str(),
                routing: self.config.routing.mode.clone(),
                seed: self.config.run.seed,
                hosts: hosts.len() as u32,
                switches: switches.len() as u32,
                flows: self.flows.len() as u32,
            },
            goodput,
            flow_goodput_gbps: Spread::of(table.goodput.goodput_gbps.clone()),
            flow_fairness: crate::engine::stats::jain_index(&table.goodput.goodput_gbps),
            flows_completed: fcts.len() as u64,
            fct_us: Completion::of(&fcts),
            packets: PacketAccount {
                packets_created: packets.injected,
                packets_delivered: packets.delivered,
                packets_dropped: packets.dropped,
                packets_lost: switches.iter().map(|s| s.counters.packets_lost).sum(),
                packets_in_flight: packets.in_flight,
            },
            senders: sender_summary(&hosts, &switches),
            bottleneck_queue_packets: switches
                .iter()
                .flat_map(|s| s.measured())
                .filter(|m| m.arrivals > 0)
                .max_by_key(|m| m.bytes)
                .map(|m| QueueDepths {
                    mean: m.mean_packets(),
                    min: m.min_packets,
                    max: m.max_packets,
                }),
            queue_peak_packets: switches.iter().map(|s| s.peak_packets()).max().unwrap_or(0),
            sim_time_ps: clock.now_ps,
            warmup_ps: self.config.run.warmup_ps(),
            events: clock.events,
            packet_hops: switches.iter().map(|s| s.counters.packets_forwarded).sum(),
            ndp: self.ndp_summary(&hosts, &switches),
            shared_buffer: shared_buffer_summary(&switches),
            pfc: self.pfc_summary(&hosts, &switches, clock.now_ps),
            dcqcn: (self.config.host.transport == Transport::Dcqcn)
                .then(|| DcqcnSummary::of(&hosts)),
            opened: None,
        };
        let (opened, timed_flows, host_goodput) = self.opened_report(&hosts, clock, window_s);
        summary.opened = opened;
        if let Some(goodput) = host_goodput {
            summary.goodput = goodput;
        }
        let tables = EthernetTables {
            flows: table,
            timed_flows,
            flow_series: self.flow_series.clone(),
        };
        Ok((summary, tables))
    }

    /// The packet account, settled: every packet the hosts and PFC switches made was delivered,
    /// dropped or is held where the fabric says it is.
    fn settle(&self, hosts: &[&Host], switches: &[&EthernetSwitch]) -> Result<Ledger, RunError> {
        let pfc: Vec<_> = switches.iter().filter_map(|s| s.pfc()).collect();
        let frames_sent: u64 = pfc.iter().map(|p| p.frames_sent()).sum();
        let frames_taken: u64 = pfc.iter().map(|p| p.counters.frames_received).sum();
        let packets = Ledger {
            injected: hosts
                .iter()
                .map(|h| h.counters.packets_created)
                .sum::<u64>()
                + frames_sent,
            delivered: hosts
                .iter()
                .map(|h| h.counters.packets_received)
                .sum::<u64>()
                + frames_taken,
            dropped: switches
                .iter()
                .map(|s| s.counters.packets_dropped + s.counters.packets_lost)
                .sum(),
            in_flight: self.fabric.cells_held(),
        };
        if packets.in_flight != self.fabric.cells_live() {
            return Err(RunError::Unaccounted {
                held: packets.in_flight,
                allocated: self.fabric.cells_live(),
            });
        }
        packets.check(false)?;
        Ok(packets)
    }

    /// Every flow's row over a window of `window_s`, the mean goodput as a fraction of the
    /// receivers' line rates, and the completed flows' completion times.
    fn flow_table(&self, hosts: &[&Host], window_s: f64) -> (FlowTable, f64, Vec<f64>) {
        let mut table = FlowTable::default();
        let mut fractions = Vec::with_capacity(self.flows.len());
        let mut fcts = Vec::new();
        for f in &self.flows {
            let (gbps, fct_us) = hosts[f.dst as usize].received(f.at_dst, window_s);
            let senders = &hosts[f.src as usize].out[f.at_src as usize..][..f.subflows as usize];
            let sent = |pick: fn(&SenderCounters) -> u64| -> u64 {
                senders.iter().map(|o| pick(o.sender.counters())).sum()
            };
            fractions.push(gbps * 1e9 / self.host_rate_bps[f.dst as usize] as f64);
            fcts.extend(fct_us);
            let (src, dst) = (f.src as usize, f.dst as usize);
            table.goodput.push(src, dst, gbps, fct_us);
            table.retransmissions.push(sent(|c| c.retransmissions));
            table.timeouts.push(sent(|c| c.timeouts));
        }
        let goodput = fractions.iter().sum::<f64>() / fractions.len().max(1) as f64;
        (table, goodput, fcts)
    }

    /// NDP's section, for an NDP run: its end points' counts and the trimming ports'.
    fn ndp_summary(&self, hosts: &[&Host], switches: &[&EthernetSwitch]) -> Option<NdpSummary> {
        (self.config.host.transport == Transport::Ndp).then(|| {
            let trims = switches.iter().map(|s| s.trims());
            let trims = trims.fold(TrimCounts::default(), |sum, t| sum.plus(&t));
            let returns = self.config.switch.return_to_sender();
            NdpSummary::of(hosts, trims, returns, self.config.host.ndp.paths > 0)
        })
    }

    /// PFC's section, over lossless ports: pauses, per class with several, BFC's with BFC.
    fn pfc_summary(
        &self,
        hosts: &[&Host],
        switches: &[&EthernetSwitch],
        now_ps: TimePs,
    ) -> Option<PfcSummary> {
        let pfc: Vec<_> = switches.iter().filter_map(|s| s.pfc()).collect();
        self.config.ports().lossless.then(|| {
            let switch_paused_ps = pfc
                .iter()
                .map(|p| p.paused_ps(now_ps))
                .fold((0, 0), |(a, b), (c, d)| (a + c, b.max(d)));
            let ports: usize = switches.iter().map(|s| s.port_count()).sum();
            let counters: Vec<_> = pfc.iter().map(|p| p.counters).collect();
            let mut summary = PfcSummary::of(&counters, switch_paused_ps, ports, hosts, now_ps);
            let classes = self.config.pfc_classes() as usize;
            if classes > 1 {
                summary.paused_fraction /= classes as f64;
                let of = |c| PfcClassSummary::of(c, &pfc, hosts, now_ps);
                summary.classes = Some((0..classes).map(of).collect());
            }
            summary.bfc = BfcSpec::of(&self.config.switch, self.config.hop_bdp_packets())
                .map(|b| BfcSummary::of(&b, &pfc, hosts, now_ps));
            summary.aquarius = AquariusSpec::of(&self.config.switch)
                .map(|a| AquariusSummary::of(a.queues, &pfc, hosts, now_ps));
            summary.ideal =
                IdealSpec::of(&self.config.switch, 0).map(|_| IdealSummary::of(&pfc, hosts));
            summary
        })
    }
}

/// What the senders of `hosts` counted, and the marks `switches` gave.
fn sender_summary(hosts: &[&Host], switches: &[&EthernetSwitch]) -> SenderSummary {
    let sent = SenderTotals::of(hosts);
    SenderSummary {
        segments_sent: sent.segments_sent,
        retransmissions: sent.retransmissions,
        fast_retransmits: sent.fast_retransmits,
        timeouts: sent.timeouts,
        packets_marked: switches.iter().map(|s| s.counters.packets_marked).sum(),
        ecn_cuts: sent.ecn_cuts,
        ecn_cuts_measured: hosts.iter().map(|h| h.counters.ecn_cuts_measured).sum(),
        rtt_mean_us: sent.rtt_mean_us,
    }
}

/// The shared buffers' section, if the switches' ports share one.
fn shared_buffer_summary(switches: &[&EthernetSwitch]) -> Option<SharedBufferSummary> {
    let buffers: Vec<_> = switches.iter().filter_map(|s| s.shared_buffer()).collect();
    (!buffers.is_empty()).then(|| {
        let counters = buffers.iter().map(|b| b.counters);
        SharedBufferSummary {
            threshold_drops: counters.clone().map(|c| c.threshold_drops).sum(),
            full_drops: counters.clone().map(|c| c.full_drops).sum(),
            occupied_peak_packets: counters.map(|c| c.peak_occupied_packets).max().unwrap_or(0),
        }
    })
}

impl Ethernet {
    /// The completion-time summary and table of a run whose flows are opened during it, and
    /// its goodput over receiving hosts (there is no fixed set of flows to average over);
    /// `None`s for other runs. A flow's ideal: its bytes on the first link; every later link
    /// adds the largest segment's store-and-forward (the last segment waits behind it at
    /// each switch), and every link its propagation.
    fn opened_report(
        &self,
        hosts: &[&Host],
        clock: &Clock,
        window_s: f64,
    ) -> (Option<OpenedSummary>, TimedTable, Option<f64>) {
        let Some(opening) = self.config.traffic.opening() else {
            return (None, TimedTable::default(), None);
        };
        let edge = |host: usize| self.edge_of_host[host] as usize;
        let links = |src, dst| self.edge_hops[edge(src) * self.switches + edge(dst)] as u64 + 2;
        let (summary, table, goodput) = opening::report(
            &opening,
            hosts,
            &self.host_rate_bps,
            clock.now_ps,
            window_s,
            opening::IdealPath::of(&self.config.host, &self.config.link),
            links,
        );
        (Some(summary), table, Some(goodput))
    }
}
