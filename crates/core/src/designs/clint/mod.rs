//! Clint (H. Eberle and N. Gura, "Separated High-bandwidth and Low-latency Communication in the
//! Cluster Interconnect Clint", Sun Microsystems Laboratories TR-2002-115, 2002): a cluster
//! interconnect with two physically separate channels, each a 16-port switch with its own links.
//!
//! - The bulk channel (§3.2–3.3, [`bulk`]): a bufferless flow-through crossbar scheduled by a
//!   central Least Choice First arbiter (`blocks::lcf`) in a three-slot pipeline — configuration
//!   and grant packets on the quick channel, the 2086-byte request on the bulk switch, the
//!   acknowledgment back on the quick channel along the inverted schedule (B4). The unscheduled
//!   baselines of §4.2 drop colliding requests (B1), hold them back by back pressure (B2), or
//!   buffer 16 per output and drop on overflow (B3).
//! - The quick channel (§3.4, [`quick`]): a first-come-first-considered crossbar
//!   (`blocks::collision_switch`) that drops the later of colliding requests, lets
//!   acknowledgments win over requests (Q1) or interleaves them into requests (Q2), while
//!   scheduling and bulk acknowledgment packets keep their fixed windows.
//! - The NICs (§3.1, [`nic`]): send-buffer pools filled from unbounded host queues, receive
//!   buffers, NAKs, a fixed loss timeout, selective (or go-back-N) retransmission and in-order
//!   delivery per pair.
//! - The bulk arbiter (§3.3, [`arbiter`]): a component that hears configuration packets and
//!   answers with grant packets, as messages; it reads no NIC.
//! - The hosts ([`hosts`]): the workload of §4.1 (uniform destinations, uniformly distributed
//!   injection intervals or injection instants, optional bursts of 1 to 5 packets) and what a
//!   node does when a request reaches it, an acknowledgment returns or a timeout fires.
//! - Beyond the paper's simulation, each off by default: bit errors on both channels caught by
//!   the CRC ([`errors`]), the hosts' PCI transfers ([`host_bus`]), the quick channel's enable
//!   vectors, speculative bulk transfers ([`bulk`]) and bulk acknowledgments as packets on the
//!   quick channel ([`quick`]).
//! - What a run reports ([`report`]): summary, tables and the packet account; latency runs from
//!   generation to the start of the packet's transmission out of the send buffer (the first,
//!   and the accepted one), and end to end, to the message in the target host's memory.
//!
//! Each channel is a part with its own state behind an interface ([`bulk::BulkChannel`],
//! [`quick::QuickChannel`]): it decides what its uplinks and switch do with a packet, and this
//! module's loop carries those decisions between the parts as events, on the one kernel loop
//! every design runs on.

pub mod arbiter;
pub mod bulk;
pub mod config;
pub mod errors;
pub mod host_bus;
pub mod hosts;
pub mod nic;
pub mod quick;
pub mod report;
pub mod timing;

use crate::blocks::port_set::PortSet;
use crate::engine::arena::{Arena, Id};
use crate::engine::kernel::{run_events, Events, Model, Steps};
use crate::engine::queue::{CalendarQueue, EventQueue, Origin, Phase};
use crate::engine::rng::{stream, ComponentId, Rng};
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::TimePs;
use crate::scenario::ScenarioError;
use arbiter::BulkArbiter;
use bulk::{BulkChannel, BulkMove};
pub use config::ClintConfig;
use config::{Architecture, BulkPackets};
use errors::LinkErrors;
use host_bus::HostBuses;
use hosts::IntervalLaw;
use nic::{Ack, Nic, Packet, Transmission};
use quick::BulkAckSchedule;
use quick::{QuickChannel, QuickMove};
pub use report::{
    ClintSummary, ClintTables, FaultCounts, HistogramTable, NodeTable, SpeculativeCounts,
};
use std::time::Instant;
use timing::{bytes, Timing, CYCLE_PS};

/// The messages of a Clint run; small and `Copy`.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A node's packet generator fires.
    Generate(u16),
    /// A node's bulk uplink may start a request (unscheduled architectures).
    BulkWake(u16),
    /// A bulk request's head reaches its switch output.
    BulkHead(BulkMove),
    /// The bulk switch decides the heads of this instant.
    BulkResolve,
    /// A bulk switch output frees while requests wait for it (B2).
    BulkFree(u16),
    /// A request's last byte reaches its target.
    RequestArrive { at: u16, tx: Transmission },
    /// A node's quick uplink may start a packet.
    QuickWake(u16),
    /// A message fetched over its node's PCI bus is in its send buffer, ready to go.
    Fetched { node: u16, packet: Id<Packet> },
    /// Quick runs with bulk packets: the bulk acknowledgment stage of a slot begins.
    BulkAcks,
    /// A quick packet's head reaches its switch output.
    QuickHead(QuickMove),
    /// The quick switch decides the heads of this instant.
    QuickResolve,
    /// An acknowledgment reaches its initiator.
    AckArrive(Ack),
    /// A target's bulk acknowledgment is due in the acknowledgment stage (B4).
    AckDue { at: u16, ack: Ack },
    /// A request's loss timeout.
    Timeout(Transmission),
    /// A host returns a receive buffer.
    HostConsume(u16),
    /// Every node sends its configuration packet (B4).
    Configure,
    /// A node's configuration packet reaches the arbiter: the targets it has a ready request
    /// for (B4).
    Configuration { node: u16, requests: PortSet },
    /// The arbiter has every configuration packet (B4).
    Arbitrate,
    /// A grant packet reaches its node, naming its target or `UNMATCHED`: the transfer slot
    /// begins (B4).
    Grant { node: u16, target: u16 },
}

/// Counters of a run; protocol counters count during measurement only.
#[derive(Default)]
struct Counters {
    injected: u64,
    delivered: u64,
    generated_measured: u64,
    delivered_measured: u64,
    transmissions: u64,
    collisions_with_request: u64,
    collisions_with_ack: u64,
    overflow_drops: u64,
    back_pressure_stalls: u64,
    ack_drops: u64,
    scheduled_collisions: u64,
    naks_no_buffer: u64,
    naks_out_of_sequence: u64,
    held_for_order: u64,
    duplicates: u64,
    out_of_order: u64,
    timeouts: u64,
    naks_received: u64,
    faults: FaultCounts,
    speculative: SpeculativeCounts,
}

/// The latency distributions of a run.
struct Latencies {
    /// To the first transmission out of the send buffer (the paper's, §4.1).
    first: LatencyHistogram,
    /// To the transmission the target accepted.
    accepted: LatencyHistogram,
    /// To the message in the target host's memory.
    end_to_end: LatencyHistogram,
}

/// What each node's packet generator makes (§4.1).
struct Workload {
    intervals: IntervalLaw,
    /// Longest burst (1 without bursts).
    burst_max_packets: u32,
    /// The configured offered load, a fraction of link bandwidth.
    offered_load: f64,
}

/// A Clint run.
pub struct Clint {
    arch: Architecture,
    seed: u64,
    t: Timing,
    request_ps: TimePs,
    workload: Workload,
    buses: HostBuses,
    errors: LinkErrors,
    warmup_ps: TimePs,
    end_ps: TimePs,
    now_ps: TimePs,
    queue: CalendarQueue<Event>,
    packets: Arena<Packet>,
    nics: Vec<Nic>,
    sources: Vec<Rng>,
    bulk: BulkChannel,
    quick: QuickChannel,
    arbiter: BulkArbiter,
    latency: Latencies,
    counters: Counters,
    node_table: NodeTable,
}

/// Builds the Clint run a scenario (JSON text) describes.
pub fn build(json: &str) -> Result<Clint, ScenarioError> {
    let c = ClintConfig::from_json(json)?;
    let t = Timing::new(&c)?;
    let arch = c.channel.architecture;
    let n = c.nodes as usize;
    let request_ps = if arch.is_quick() {
        t.qreq_ps
    } else {
        t.breq_ps
    };
    let burst_max_packets = if c.traffic.bursty {
        c.traffic.burst_max_packets
    } else {
        1
    };
    let mean_burst = (1 + burst_max_packets) as f64 / 2.0;
    let mut sim = Clint {
        arch,
        seed: c.run.seed,
        t,
        request_ps,
        workload: Workload {
            intervals: IntervalLaw::new(
                c.traffic.intervals,
                request_ps as f64 * mean_burst / c.traffic.load,
            ),
            burst_max_packets,
            offered_load: c.traffic.load,
        },
        buses: host_buses(&c),
        errors: LinkErrors::new(c.run.seed, c.bulk.bit_error_rate, c.quick.bit_error_rate),
        warmup_ps: c.run.warmup_ps(),
        end_ps: c.run.end_ps(),
        now_ps: 0,
        queue: CalendarQueue::for_gap(CYCLE_PS * 16),
        packets: Arena::new(),
        nics: nics(&c),
        sources: (0..n as u32)
            .map(|index| {
                let id = ComponentId {
                    kind: crate::blocks::stream_kind::CLINT_SOURCE,
                    index,
                };
                stream(c.run.seed, id)
            })
            .collect(),
        bulk: BulkChannel::new(n, arch, c.bulk.output_buffers, c.bulk.speculative),
        quick: quick_channel(&c, &t),
        arbiter: BulkArbiter::new(n, nodes_of(&c.bulk.disabled_initiators)),
        latency: Latencies {
            first: LatencyHistogram::new(),
            accepted: LatencyHistogram::new(),
            end_to_end: LatencyHistogram::new(),
        },
        counters: Counters::default(),
        node_table: NodeTable {
            node: (0..n as u32).collect(),
            injected: vec![0; n],
            delivered: vec![0; n],
            grants: vec![0; n],
        },
    };
    for node in 0..n {
        let first_ps = sim.interval_ps(node);
        sim.schedule(first_ps, Event::Generate(node as u16));
    }
    if arch == Architecture::B4 {
        sim.schedule_clock(sim.t.cfg_offset_ps, Event::Configure);
    }
    if sim.quick.has_bulk_acks() {
        sim.schedule_clock(sim.t.back_offset_ps, Event::BulkAcks);
    }
    Ok(sim)
}

/// The nodes a list of node numbers names.
fn nodes_of(list: &[u32]) -> PortSet {
    list.iter().map(|&i| i as usize).collect()
}

/// Every node's NIC for the channel that carries the run's requests.
fn nics(c: &ClintConfig) -> Vec<Nic> {
    let n = c.nodes as usize;
    let nic = &c.nic;
    let (send_buffers, prefetch_cap, receive_buffers) = if c.channel.architecture.is_quick() {
        let buffers = nic.quick_send_buffers;
        (buffers, buffers, nic.quick_receive_buffers)
    } else {
        let receive = nic.bulk_receive_buffers;
        (nic.bulk_send_buffers, nic.bulk_prefetch_per_target, receive)
    };
    (0..n)
        .map(|_| {
            let retransmission = nic.retransmission;
            Nic::new(
                n,
                send_buffers,
                prefetch_cap,
                receive_buffers,
                retransmission,
            )
        })
        .collect()
}

/// Every node's PCI bus, carrying the run's request messages.
fn host_buses(c: &ClintConfig) -> HostBuses {
    let message_bytes = if c.channel.architecture.is_quick() {
        bytes::QREQ
    } else {
        bytes::BREQ
    };
    let nic = &c.nic;
    let (rate, overhead_ns) = (nic.pci_gbps, nic.pci_overhead_ns);
    let nodes = c.nodes as usize;
    HostBuses::new(nodes, rate, overhead_ns, message_bytes, nic.host_receive_ns)
}

/// The quick channel: its windows, enable vectors and (as packets) bulk acknowledgments.
fn quick_channel(c: &ClintConfig, t: &Timing) -> QuickChannel {
    let (n, arch) = (c.nodes as usize, c.channel.architecture);
    let as_packets = c.quick.bulk_packets == BulkPackets::Packets;
    let windows = arch.is_quick().then(|| t.reserved_windows(!as_packets));
    let bulk_acks = (arch.is_quick() && as_packets)
        .then(|| BulkAckSchedule::new(n, c.run.seed, c.quick.bulk_load));
    QuickChannel::new(n, arch, windows)
        .with_disabled(nodes_of(&c.quick.disabled_initiators))
        .with_bulk_acks(bulk_acks)
}

impl Clint {
    fn nodes(&self) -> usize {
        self.nics.len()
    }

    fn measuring(&self) -> bool {
        self.now_ps >= self.warmup_ps
    }

    fn schedule(&mut self, at_ps: TimePs, event: Event) {
        self.queue
            .push(at_ps, Phase::Message, self.origin(&event), event);
    }

    /// Schedules a slotted component's clock edge (after the messages of the same instant).
    fn schedule_clock(&mut self, at_ps: TimePs, event: Event) {
        self.queue
            .push(at_ps, Phase::Clock, self.origin(&event), event);
    }

    /// The component that sends `event`: nodes are 0..n, then the bulk switch, the quick
    /// switch and the arbiter.
    fn origin(&self, event: &Event) -> Origin {
        let n = self.nodes() as Origin;
        let (bulk_switch, quick_switch, arbiter) = (n, n + 1, n + 2);
        match *event {
            Event::Generate(node)
            | Event::BulkWake(node)
            | Event::QuickWake(node)
            | Event::HostConsume(node)
            | Event::Fetched { node, .. }
            | Event::AckDue { at: node, .. } => node as Origin,
            Event::BulkHead(m) => m.from as Origin,
            Event::QuickHead(m) => m.from as Origin,
            Event::Timeout(tx) => self.packets[tx.packet].src as Origin,
            Event::BulkResolve | Event::BulkFree(_) => bulk_switch,
            Event::RequestArrive { .. } if !self.arch.is_quick() => bulk_switch,
            Event::RequestArrive { .. }
            | Event::QuickResolve
            | Event::AckArrive(_)
            | Event::BulkAcks => quick_switch,
            Event::Configure | Event::Arbitrate | Event::Grant { .. } => arbiter,
            Event::Configuration { node, .. } => node as Origin,
        }
    }

    fn interval_ps(&mut self, node: usize) -> TimePs {
        self.workload.intervals.draw_ps(&mut self.sources[node])
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Generate(node) => self.generate(node),
            Event::BulkWake(node) => self.bulk_wake(node),
            Event::BulkHead(head) => self.bulk_head(head),
            Event::BulkResolve => self.bulk_resolve(),
            Event::BulkFree(output) => self.bulk_free(output),
            Event::RequestArrive { at, tx } => self.request_arrive(at, tx),
            Event::QuickWake(node) => self.quick_wake(node),
            Event::Fetched { node, packet } => self.fetched(node, packet),
            Event::BulkAcks => self.bulk_acks(),
            Event::QuickHead(head) => self.quick_head(head),
            Event::QuickResolve => self.quick_resolve(),
            Event::AckArrive(ack) => self.ack_arrive(ack),
            Event::AckDue { at, ack } => self.send_ack(at, ack),
            Event::Timeout(tx) => self.timeout(tx),
            Event::HostConsume(node) => self.nics[node as usize].receive_free += 1,
            Event::Configure => self.configure(),
            Event::Configuration { node, requests } => self.arbiter.hear(node, requests),
            Event::Arbitrate => self.arbitrate(),
            Event::Grant { node, target } => self.grant(node, target),
        }
    }
}

impl Events for Clint {
    type Event = Event;

    fn queue(&mut self) -> &mut CalendarQueue<Event> {
        &mut self.queue
    }

    fn handle(&mut self, now_ps: TimePs, event: Event) -> bool {
        self.now_ps = now_ps;
        self.dispatch(event);
        true
    }
}

impl Model for Clint {
    fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
        run_events(self, limit_ps, deadline)
    }

    fn is_idle(&mut self) -> bool {
        self.queue.is_empty()
    }

    fn progress(&self) -> u64 {
        self.counters.transmissions + self.counters.delivered
    }

    fn delivered(&self) -> u64 {
        self.counters.delivered
    }

    fn in_flight(&self) -> u64 {
        self.nics
            .iter()
            .map(|nic| nic.undelivered(&self.packets))
            .sum()
    }

    /// A thousand bulk slots.
    fn stall_ps(&self) -> TimePs {
        1_000 * self.t.slot_ps
    }

    fn stall_report(&self) -> String {
        format!("{} packets undelivered, none transmitted", self.in_flight())
    }
}

#[cfg(test)]
mod mechanism_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{assert_unaccounted, Design, RunError};

    /// A B4 run stopped halfway, with packets queued, buffered and awaiting acknowledgment.
    fn halfway() -> (Clint, crate::engine::kernel::Clock) {
        let json = r#"{"design": "clint", "nodes": 16, "run": {"seed": 1, "duration_ns": 400000},
            "channel": {"architecture": "B4"}, "traffic": {"load": 0.8}}"#;
        crate::engine::kernel::Kernel::run_until(build(json).unwrap(), 400_000_000, 200_000_000)
    }

    #[test]
    fn the_packet_account_settles_where_packets_are() {
        let (clint, clock) = halfway();
        assert!(clint.in_flight() > 0);
        assert!(Design::report(clint, clock).is_ok());
    }

    /// A packet stored but held by no NIC (a lost handle) breaks the account.
    #[test]
    fn a_packet_held_nowhere_fails_the_run() {
        let (mut clint, clock) = halfway();
        clint.packets.alloc(Packet::new(0, 1, 0, 0));
        assert_unaccounted(Design::report(clint, clock), Some(1));
    }

    /// A packet whose handle vanishes from its NIC's send buffer before its target accepted
    /// it (lost, uncounted) breaks the account: the packets held are counted in the NICs'
    /// queues and buffers.
    #[test]
    fn a_packet_lost_from_a_send_buffer_fails_the_run() {
        let (mut clint, clock) = halfway();
        let lost = clint
            .nics
            .iter_mut()
            .find_map(|nic| nic.lose_undelivered(&clint.packets));
        assert!(lost.is_some(), "a packet awaits acceptance halfway");
        assert_unaccounted(Design::report(clint, clock), Some(1));
    }

    /// A packet released before its target accepted it is counted as dropped where its NIC
    /// releases it, and the ledger balances with it.
    #[test]
    fn a_packet_released_undelivered_is_counted_as_dropped() {
        let (mut clint, clock) = halfway();
        let released = clint
            .nics
            .iter_mut()
            .find_map(|nic| nic.release_undelivered(&mut clint.packets));
        assert!(released.is_some(), "a packet awaits acceptance halfway");
        let summary = clint.summary(&clock);
        assert_eq!(summary.packets.packets_dropped, 1);
        assert!(Design::report(clint, clock).is_ok());
    }

    /// A packet acknowledged twice (freed twice) breaks the account.
    #[test]
    fn a_packet_freed_twice_fails_the_run() {
        let (mut clint, clock) = halfway();
        let id = clint.packets.alloc(Packet::new(0, 1, 0, 0));
        clint.packets.free(id);
        clint.packets.free(id);
        assert!(matches!(
            Design::report(clint, clock),
            Err(RunError::ReleasedTwice(1))
        ));
    }
}
