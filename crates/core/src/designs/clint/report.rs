//! What a Clint run reports (Eberle and Gura 2002, §4): the summary, the per-node and latency
//! tables, and the packet account it settles at the end.

use serde::Serialize;

use super::Clint;
use crate::engine::kernel::Clock;
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::{TimePs, PS_PER_NS};
use crate::run::{Design, Ledger, Report, RunError};

/// Per-node columns of the `nodes` table.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NodeTable {
    /// Node index.
    pub node: Vec<u32>,
    /// Packets the node generated.
    pub injected: Vec<u64>,
    /// Packets its targets accepted.
    pub delivered: Vec<u64>,
    /// Bulk grants it received (B4).
    pub grants: Vec<u64>,
}

/// Latency distribution columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HistogramTable {
    /// Highest latency of the bucket, ns.
    pub latency_ns: Vec<f64>,
    /// Packets in the bucket.
    pub count: Vec<u64>,
}

/// Packets lost to the mechanisms beyond the paper's simulation: bit errors and enable vectors.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct FaultCounts {
    /// Requests whose target found a CRC error (no acknowledgment returned, §3.3).
    pub crc_requests: u64,
    /// Acknowledgments (quick and bulk) discarded by their initiator for a CRC error.
    pub crc_acks: u64,
    /// Configuration and grant packets lost to a CRC error (B4): a node unheard, or a grant
    /// unused, for one slot.
    pub crc_scheduling: u64,
    /// Quick requests the quick switch dropped because their target's enable vector excludes
    /// their initiator.
    pub disabled_drops: u64,
}

/// B4's speculative transfers.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SpeculativeCounts {
    /// Requests sent unscheduled.
    pub sent: u64,
    /// Of them, lost in the bulk switch to a transfer already on their output.
    pub lost: u64,
}

/// The tables of a Clint run.
#[derive(Clone, Debug, Serialize)]
pub struct ClintTables {
    /// Per node.
    pub nodes: NodeTable,
    /// Latency histogram.
    pub latency_histogram: HistogramTable,
}

/// The headline numbers of a Clint run.
#[derive(Clone, Debug, Serialize)]
pub struct ClintSummary {
    /// Always `clint`.
    pub design: &'static str,
    /// `B1` … `Q2`.
    pub architecture: &'static str,
    /// Seed of the run.
    pub seed: u64,
    /// Nodes.
    pub nodes: u32,
    /// Loads and throughput during measurement, per node, as fractions of link bandwidth.
    #[serde(flatten)]
    pub rates: ClintRates,
    /// Latencies of the packets generated during measurement and accepted by the end.
    #[serde(flatten)]
    pub latency: ClintLatencies,
    /// The packet account, each term counted where the packets are.
    #[serde(flatten)]
    pub packets: PacketCounts,
    /// What the channel did with the requests.
    #[serde(flatten)]
    pub channel: ChannelCounts,
    /// What the targets and the initiators' timers did.
    #[serde(flatten)]
    pub targets: TargetCounts,
    /// Losses to bit errors and enable vectors, during measurement.
    pub faults: FaultCounts,
    /// B4's speculative transfers, during measurement.
    pub speculative: SpeculativeCounts,
    /// The run's time scales and cost.
    #[serde(flatten)]
    pub run: ClintRunLength,
}

/// Loads and throughput during measurement, per node, as fractions of link bandwidth.
#[derive(Clone, Debug, Serialize)]
pub struct ClintRates {
    /// The configured offered load (`traffic.load`), a fraction of link bandwidth.
    pub offered_load: f64,
    /// Requests generated during measurement, per node, as a fraction of link bandwidth.
    pub injected_load: f64,
    /// Requests accepted by targets during measurement, per node, as a fraction of link
    /// bandwidth.
    pub throughput: f64,
}

/// Latencies of the packets generated during measurement and accepted by the end.
#[derive(Clone, Debug, Serialize)]
pub struct ClintLatencies {
    /// The paper's latency (§4.1): from generation to the start of the packet's transmission
    /// out of the send buffer (its first), packets generated during measurement and accepted
    /// by the end.
    pub latency_ns: Percentiles,
    /// From generation to the start of the transmission the target accepted: adds the
    /// timeouts and retransmissions of lost requests.
    pub latency_accepted_ns: Percentiles,
    /// From generation to the message in the target host's memory: the packet's way through
    /// the channel, its wait for order, and (with `nic.pci_gbps`) both PCI transfers.
    pub latency_end_to_end_ns: Percentiles,
    /// `latency_accepted_ns` with the packets generated during measurement and not yet accepted
    /// counted at their ages so far: a lower bound on every measured packet's latency, which
    /// the delivered packets' percentiles alone understate near saturation.
    pub latency_accepted_with_in_flight_ns: Percentiles,
}

/// The packet account, each term counted where the packets are.
#[derive(Clone, Debug, Serialize)]
pub struct PacketCounts {
    /// Packets whose latency was measured.
    pub packets_measured: u64,
    /// Packets generated during measurement and not yet accepted at the end.
    pub packets_in_flight_measured: u64,
    /// Packets generated over the run.
    pub packets_injected: u64,
    /// Packets accepted by their targets over the run.
    pub packets_delivered: u64,
    /// Packets lost for good: released by their initiator before their target accepted them,
    /// counted where the NIC releases them (0 when every dropped transmission is sent again).
    pub packets_dropped: u64,
    /// Packets not yet accepted at the end.
    pub packets_in_flight: u64,
}

/// What the channel did with the requests.
#[derive(Clone, Debug, Serialize)]
pub struct ChannelCounts {
    /// Request transmissions during measurement.
    pub transmissions: u64,
    /// Requests sent again after a NAK or a timeout, during measurement.
    pub retransmissions: u64,
    /// Requests dropped in a switch, per request transmission (Fig. 10; B1 and Q1/Q2).
    pub collision_rate: f64,
    /// Requests dropped because they met an acknowledgment, per request transmission (Fig. 10).
    pub ack_collision_rate: f64,
    /// Requests dropped in a switch by another request.
    pub collisions_with_request: u64,
    /// Requests dropped in a switch by an acknowledgment.
    pub collisions_with_ack: u64,
    /// B3: requests dropped at a full output buffer.
    pub overflow_drops: u64,
    /// B2: requests held back by back pressure.
    pub back_pressure_stalls: u64,
    /// Acknowledgments dropped in the quick switch.
    pub ack_drops: u64,
    /// Packets the globally scheduled channel let collide (must be 0).
    pub scheduled_collisions: u64,
}

/// What the targets and the initiators' timers did.
#[derive(Clone, Debug, Serialize)]
pub struct TargetCounts {
    /// Requests NAKed for want of a receive buffer.
    pub naks_no_buffer: u64,
    /// Requests NAKed because an earlier one of their pair was missing (go-back-N).
    pub naks_out_of_sequence: u64,
    /// Requests accepted ahead of a missing one of their pair and held for it (selective).
    pub held_for_order: u64,
    /// Loss timeouts.
    pub timeouts: u64,
    /// Requests received again after being accepted (acknowledged, discarded).
    pub duplicates: u64,
    /// Requests accepted out of generation order within their pair (must be 0).
    pub out_of_order: u64,
}

/// The run's time scales and cost.
#[derive(Clone, Debug, Serialize)]
pub struct ClintRunLength {
    /// Bulk slot, ns.
    pub slot_ns: f64,
    /// Request packet time on its link, ns.
    pub packet_ns: f64,
    /// Events processed.
    pub events: u64,
    /// Simulated time, ps.
    pub sim_time_ps: u64,
}

impl Clint {
    /// Ages at `now_ps` of the packets generated during measurement and not yet accepted,
    /// read where the packets are (host queues and send buffers).
    fn in_flight_ages(&self, now_ps: TimePs) -> LatencyHistogram {
        let mut ages = LatencyHistogram::new();
        for nic in &self.nics {
            for generated_ps in nic.undelivered_generated_ps(&self.packets) {
                if generated_ps >= self.warmup_ps {
                    ages.record(now_ps - generated_ps);
                }
            }
        }
        ages
    }

    pub(super) fn summary(&self, clock: &Clock) -> ClintSummary {
        let c = &self.counters;
        let n = self.nodes() as f64;
        let window_ps = clock.measured_ps(self.warmup_ps) as f64;
        let per_link = |packets: u64| packets as f64 * self.request_ps as f64 / (n * window_ps);
        let in_flight: u64 = self
            .nics
            .iter()
            .map(|nic| nic.undelivered(&self.packets))
            .sum();
        let in_flight_ages = self.in_flight_ages(clock.now_ps);
        ClintSummary {
            design: "clint",
            architecture: self.arch.name(),
            seed: self.seed,
            nodes: self.nodes() as u32,
            rates: ClintRates {
                offered_load: self.workload.offered_load,
                injected_load: per_link(c.generated_measured),
                throughput: per_link(c.delivered_measured),
            },
            latency: self.latencies(&in_flight_ages),
            packets: PacketCounts {
                packets_measured: self.latency.first.count(),
                packets_in_flight_measured: in_flight_ages.count(),
                packets_injected: c.injected,
                packets_delivered: c.delivered,
                packets_dropped: self.nics.iter().map(|nic| nic.released_undelivered).sum(),
                packets_in_flight: in_flight,
            },
            channel: self.channel_counts(),
            targets: TargetCounts {
                naks_no_buffer: c.naks_no_buffer,
                naks_out_of_sequence: c.naks_out_of_sequence,
                held_for_order: c.held_for_order,
                timeouts: c.timeouts,
                duplicates: c.duplicates,
                out_of_order: c.out_of_order,
            },
            faults: c.faults,
            speculative: c.speculative,
            run: ClintRunLength {
                slot_ns: self.t.slot_ps as f64 / PS_PER_NS as f64,
                packet_ns: self.request_ps as f64 / PS_PER_NS as f64,
                events: clock.events,
                sim_time_ps: clock.now_ps,
            },
        }
    }

    /// Latencies of the packets measured, and of those accepted with the ones still in
    /// flight at their ages (`in_flight_ages`), in nanoseconds.
    fn latencies(&self, in_flight_ages: &LatencyHistogram) -> ClintLatencies {
        let mut accepted_with_in_flight = LatencyHistogram::new();
        accepted_with_in_flight.add(&self.latency.accepted);
        accepted_with_in_flight.add(in_flight_ages);
        ClintLatencies {
            latency_ns: self.latency.first.percentiles().scaled(PS_PER_NS as f64),
            latency_accepted_ns: self.latency.accepted.percentiles().scaled(PS_PER_NS as f64),
            latency_end_to_end_ns: self
                .latency
                .end_to_end
                .percentiles()
                .scaled(PS_PER_NS as f64),
            latency_accepted_with_in_flight_ns: accepted_with_in_flight
                .percentiles()
                .scaled(PS_PER_NS as f64),
        }
    }

    /// What the channels carried and lost, the rates per transmission.
    fn channel_counts(&self) -> ChannelCounts {
        let c = &self.counters;
        let rate = |count: u64| {
            if c.transmissions == 0 {
                0.0
            } else {
                count as f64 / c.transmissions as f64
            }
        };
        ChannelCounts {
            transmissions: c.transmissions,
            retransmissions: c.timeouts + c.naks_received,
            collision_rate: rate(c.collisions_with_request + c.collisions_with_ack),
            ack_collision_rate: rate(c.collisions_with_ack),
            collisions_with_request: c.collisions_with_request,
            collisions_with_ack: c.collisions_with_ack,
            overflow_drops: c.overflow_drops,
            back_pressure_stalls: c.back_pressure_stalls,
            ack_drops: c.ack_drops,
            scheduled_collisions: c.scheduled_collisions,
        }
    }

    fn tables(&self) -> ClintTables {
        let (latency_ns, count) = self
            .latency
            .first
            .buckets()
            .map(|(ps, count)| (ps as f64 / PS_PER_NS as f64, count))
            .unzip();
        ClintTables {
            nodes: self.node_table.clone(),
            latency_histogram: HistogramTable { latency_ns, count },
        }
    }
}

impl Design for Clint {
    fn end_ps(&self) -> TimePs {
        self.end_ps
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        if self.packets.released_twice() > 0 {
            return Err(RunError::ReleasedTwice(self.packets.released_twice()));
        }
        let held: u64 = self.nics.iter().map(|nic| nic.held()).sum();
        if held != self.packets.live() as u64 {
            return Err(RunError::Unaccounted {
                held,
                allocated: self.packets.live() as u64,
            });
        }
        let summary = self.summary(&clock);
        // A NIC retransmits every request until its target accepts it: collisions and
        // overflows drop transmissions (copies), counted in the summary, not packets. A packet
        // leaves the system undelivered only if its NIC releases it before its target
        // accepted it, counted there as dropped.
        let ledger = Ledger {
            injected: summary.packets.packets_injected,
            delivered: summary.packets.packets_delivered,
            dropped: summary.packets.packets_dropped,
            in_flight: summary.packets.packets_in_flight,
        };
        ledger.check(false)?;
        if summary.channel.scheduled_collisions > 0 {
            return Err(RunError::LossInLosslessRun(
                summary.channel.scheduled_collisions,
            ));
        }
        let perf = clock.perf(Some((
            "request transmissions",
            summary.channel.transmissions,
        )));
        Ok(Report::new(&summary, &self.tables(), perf))
    }
}
