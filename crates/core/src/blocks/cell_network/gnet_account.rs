//! The account and summary of a cell network whose hosts speak IP over GNet (Gibson et al.,
//! NSDI '22, §3.3): control flits (RTS, CTS, CTD) and data flits each settle injected =
//! delivered + dropped + in flight, counted where they are (sent and received by the hosts,
//! in flight as the live flits of each kind); packets settle generated = released + dropped by
//! cause + held, where a packet whose CTS is still on its way is held by both its ingress
//! buffer and its egress's reassembly and is counted once. CTD drops are the protocol's own
//! drops at the source, allowed in a lossless fabric and reported apart from losses. Where the
//! hosts make 1RMA reads (§3.4), Req and Resp flits settle the same way, each apart, and the
//! reads settle in [`rma_account`](super::rma_account).

use serde::Serialize;

use super::rma_account::{self, RmaSummary};
use crate::blocks::cell::Cell;
use crate::blocks::gnet::endpoint::FlitLedger;
use crate::blocks::gnet::host::GnetHost;
use crate::blocks::gnet::wire::CellKind;
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::PS_PER_NS;
use crate::run::{Ledger, RunError};

/// What the GNet hosts of a run measured and counted.
#[derive(Clone, Debug, Serialize)]
pub struct GnetSummary {
    /// Packet latency from the RTS's making (the packet complete in the ingress buffer) to
    /// its last data cell's arrival at the egress, in nanoseconds, of the packets released
    /// during measurement.
    pub gnet_packet_latency_ns: Percentiles,
    /// Mean wait of an RTS at its source before it left, in nanoseconds (source queueing,
    /// inside the packet latency).
    pub gnet_rts_wait_mean_ns: f64,
    /// Mean wait of a granted packet from its CTS's arrival to its first data flit leaving,
    /// in nanoseconds (source queueing, inside the packet latency).
    pub gnet_data_wait_mean_ns: f64,
    /// Payload bytes delivered in data cells during measurement per byte of the hosts' line
    /// capacity.
    pub gnet_goodput: f64,
    /// The packet account.
    #[serde(flatten)]
    pub packets: GnetPackets,
    /// The flit account, control apart from data.
    #[serde(flatten)]
    pub flits: GnetFlits,
    /// The 1RMA reads, where the hosts make them.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub rma: Option<RmaSummary>,
}

/// The packet account of the GNet hosts over the whole run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct GnetPackets {
    /// Packets the hosts generated.
    pub gnet_packets_generated: u64,
    /// Packets released to their destination hosts.
    pub gnet_packets_released: u64,
    /// Packets dropped at the source on a CTD (their RTS found the RTS queue at the CTD
    /// threshold): the protocol's drops, not losses.
    pub gnet_packets_dropped_ctd: u64,
    /// Packets dropped because the ingress buffer was full (no RTS sent).
    pub gnet_packets_dropped_ingress_full: u64,
    /// Packets held at the end: in ingress buffers or granted and not yet released.
    pub gnet_packets_held: u64,
    /// Packets released ECN-marked (their RTS queue over the marking threshold).
    pub gnet_packets_ecn_marked: u64,
    /// Packets released ahead of an earlier RTS of their flow (source, destination): 0 when
    /// the egress releases in RTS order.
    pub gnet_packets_out_of_rts_order: u64,
}

/// The flit account of the GNet hosts over the whole run, control and data apart (a control
/// cell is one flit).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct GnetFlits {
    /// RTS, CTS and CTD flits sent.
    pub control_flits_injected: u64,
    /// RTS, CTS and CTD flits received.
    pub control_flits_delivered: u64,
    /// RTS, CTS and CTD flits in the fabric at the end.
    pub control_flits_in_flight: u64,
    /// Data flits sent.
    pub data_flits_injected: u64,
    /// Data flits received.
    pub data_flits_delivered: u64,
    /// Data flits in the fabric at the end.
    pub data_flits_in_flight: u64,
}

/// What settling the GNet accounts gives: packets, IP's flits, and the 1RMA reads' flits.
pub type Settled = (GnetPackets, GnetFlits, Option<rma_account::RmaFlits>);

/// What the GNet hosts measured of each IP class of service, where there are several (the
/// `gnet_classes` table): class 0 is served first (§3.3).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClassTable {
    /// The class of service.
    pub class: Vec<u8>,
    /// Its share of the packets offered.
    pub share: Vec<f64>,
    /// Its packets released during measurement.
    pub packets_released: Vec<u64>,
    /// Its packets made during measurement whose RTS was answered CTD (dropped at the source
    /// once the CTD arrives).
    pub packets_dropped_ctd: Vec<u64>,
    /// Mean packet latency, RTS to last data cell, in nanoseconds (null, as the other
    /// latencies, for a class with no packet released).
    pub latency_mean_ns: Vec<f64>,
    /// Median packet latency, in nanoseconds.
    pub latency_p50_ns: Vec<f64>,
    /// 99th-percentile packet latency, in nanoseconds.
    pub latency_p99_ns: Vec<f64>,
    /// Mean time from an RTS's making to its CTS's issue at the egress, in nanoseconds: the
    /// wait in the RTS queue, plus the RTS's trip (the same for every class); null for a class
    /// with no CTS.
    pub rts_to_cts_mean_ns: Vec<f64>,
}

/// The `gnet_classes` table of `hosts`, where their packets have several classes of service.
pub fn class_table(hosts: &[&GnetHost]) -> Option<ClassTable> {
    let spec = *hosts.first()?.endpoint.spec();
    let classes = hosts[0].endpoint.by_class.len();
    if classes == 0 {
        return None;
    }
    let mut table = ClassTable::default();
    let ns = |ps: f64| ps / PS_PER_NS as f64;
    for class in 0..classes {
        let mut latency = LatencyHistogram::new();
        let (mut cts, mut waited_ps, mut ctd) = (0u64, 0u64, 0u64);
        for host in hosts {
            let measures = &host.endpoint.by_class[class];
            latency.add(&measures.latency);
            cts += measures.cts_measured;
            waited_ps += measures.rts_to_cts_ps_sum;
            ctd += measures.ctd_measured;
        }
        let percentiles = latency.percentiles();
        // NaN, written null, where nothing was measured.
        let measured = |value_ps: f64, samples: u64| match samples {
            0 => f64::NAN,
            _ => ns(value_ps),
        };
        let released = percentiles.samples;
        table.class.push(class as u8);
        table.share.push(spec.class_shares[class]);
        table.packets_released.push(released);
        table.packets_dropped_ctd.push(ctd);
        table
            .latency_mean_ns
            .push(measured(percentiles.mean, released));
        table
            .latency_p50_ns
            .push(measured(percentiles.p50, released));
        table
            .latency_p99_ns
            .push(measured(percentiles.p99, released));
        let waited_mean_ps = waited_ps as f64 / (cts as f64).max(1.0);
        table.rts_to_cts_mean_ns.push(measured(waited_mean_ps, cts));
    }
    Some(table)
}

/// Settles the GNet account of `hosts`, with `live` the flits alive in the fabric: each
/// kind's flits, then the packets and the reads. Fails naming what broke.
pub fn settle<'a>(
    hosts: &[&GnetHost],
    live: impl Iterator<Item = &'a Cell>,
) -> Result<Settled, RunError> {
    let mut in_flight = [0u64; 4];
    let mut cts_in_flight = 0u64;
    let mut tails_in_flight = (0u64, 0u64);
    let spec = hosts.first().map(|h| *h.endpoint.spec());
    for cell in live {
        let kind = CellKind::of(cell);
        // A live cell is one flit, or all of a GNet cell's flits where cells cross whole.
        let flits = spec.filter(|s| s.whole_cells).map_or(1, |s| s.flits(kind));
        in_flight[FlitLedger::of(kind) as usize] += flits as u64;
        cts_in_flight += (kind == CellKind::Cts) as u64;
        let tail = cell.last_of_packet as u64;
        tails_in_flight.0 += (kind == CellKind::Req) as u64 * tail;
        tails_in_flight.1 += (kind == CellKind::Resp) as u64 * tail;
    }
    let (mut injected, mut delivered) = ([0u64; 4], [0u64; 4]);
    for host in hosts {
        for ledger in 0..4 {
            injected[ledger] += host.flits.injected[ledger];
            delivered[ledger] += host.flits.delivered[ledger];
        }
    }
    for ledger in 0..4 {
        Ledger {
            injected: injected[ledger],
            delivered: delivered[ledger],
            dropped: 0,
            in_flight: in_flight[ledger],
        }
        .check(true)?;
    }
    let (control, data) = (FlitLedger::Control as usize, FlitLedger::Data as usize);
    let flits = GnetFlits {
        control_flits_injected: injected[control],
        control_flits_delivered: delivered[control],
        control_flits_in_flight: in_flight[control],
        data_flits_injected: injected[data],
        data_flits_delivered: delivered[data],
        data_flits_in_flight: in_flight[data],
    };
    let packets = settle_packets(hosts, cts_in_flight)?;
    let rma = match hosts.first().is_some_and(|h| h.endpoint.rma.is_some()) {
        true => Some(rma_account::settle(
            hosts,
            (injected, delivered, in_flight),
            tails_in_flight,
        )?),
        false => None,
    };
    Ok((packets, flits, rma))
}

/// The packet account: generated = released + dropped (CTD, full ingress) + held, held being
/// the ingress buffers' packets and the reassemblies' less those counted by both: a CTS on
/// its way (one flit each) or issued and still waiting to leave its egress.
fn settle_packets(hosts: &[&GnetHost], cts_in_flight: u64) -> Result<GnetPackets, RunError> {
    let mut p = GnetPackets::default();
    let mut cts_unanswered = cts_in_flight;
    let mut held_both_sides = 0u64;
    for host in hosts {
        let e = &host.endpoint;
        p.gnet_packets_generated += e.packets.generated;
        p.gnet_packets_released += e.packets.released;
        p.gnet_packets_ecn_marked += e.packets.ecn_marked;
        p.gnet_packets_out_of_rts_order += e.packets.released_out_of_rts_order;
        p.gnet_packets_dropped_ctd += e.ingress.counters.dropped_ctd;
        p.gnet_packets_dropped_ingress_full += e.ingress.counters.dropped_full;
        held_both_sides += e.ingress.held() as u64 + e.reassembly_held() as u64;
        cts_unanswered += e.cts_waiting() as u64;
    }
    p.gnet_packets_held = held_both_sides.saturating_sub(cts_unanswered);
    let dropped = p.gnet_packets_dropped_ctd + p.gnet_packets_dropped_ingress_full;
    let ledger = Ledger {
        injected: p.gnet_packets_generated,
        delivered: p.gnet_packets_released,
        dropped,
        in_flight: p.gnet_packets_held,
    };
    ledger.check(false)?;
    Ok(p)
}

/// The summary of the GNet hosts, their accounts settled, measured over `measured_ps` with
/// goodput per byte of `measured_hosts` hosts' capacity at `host_rate_bps`.
pub fn summary(
    hosts: &[&GnetHost],
    (packets, flits, rma_flits): Settled,
    measured_ps: u64,
    (measured_hosts, host_rate_bps): (usize, u64),
) -> GnetSummary {
    let mut latency = LatencyHistogram::new();
    let (mut rts, mut rts_ps, mut data, mut data_ps, mut bytes) = (0, 0, 0, 0, 0);
    for host in hosts {
        let e = &host.endpoint;
        latency.add(&e.latency);
        rts += e.packets.rts_sent_measured;
        rts_ps += e.packets.rts_wait_ps_sum;
        data += e.packets.data_started_measured;
        data_ps += e.packets.data_wait_ps_sum;
        bytes += host.counters.payload_bytes_delivered_measured;
    }
    let mean_ns = |sum: u64, n: u64| sum as f64 / PS_PER_NS as f64 / (n as f64).max(1.0);
    let capacity_bytes =
        measured_hosts as f64 * host_rate_bps as f64 / 8.0 * measured_ps as f64 / 1e12;
    GnetSummary {
        gnet_packet_latency_ns: latency.percentiles().scaled(PS_PER_NS as f64),
        gnet_rts_wait_mean_ns: mean_ns(rts_ps, rts),
        gnet_data_wait_mean_ns: mean_ns(data_ps, data),
        gnet_goodput: bytes as f64 / capacity_bytes.max(1.0),
        packets,
        flits,
        rma: rma_flits.map(|f| rma_account::summary(hosts, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::flow_control::TxGate;
    use crate::blocks::gnet::classes::ClassLayout;
    use crate::blocks::gnet::cts::CtsLimits;
    use crate::blocks::gnet::endpoint::{Endpoint, GnetSpec};
    use crate::blocks::link::Link;
    use crate::blocks::traffic::{Arrival, Destinations, Generator, PacketSizes, TrafficSpec};
    use crate::engine::rng::{stream, ComponentId};

    /// A host that sends nothing by itself, its endpoint of 16-byte flits.
    fn idle_host() -> GnetHost {
        let limits = CtsLimits {
            classes: 1,
            ports: 1,
            queue_rts: 4,
            ctd_threshold_rts: 4,
            reassembly_bytes: 8_000,
            fetch_window: 2,
            ecn_threshold_rts: 1,
        };
        let spec = GnetSpec {
            flit_bytes: 16,
            packet_bytes: 1_000,
            ingress_buffer_bytes: 8_000,
            limits,
            layout: ClassLayout::control_data(),
            vcs_per_class: 3,
            endpoint_ports: 1,
            rma: None,
            whole_cells: false,
            class_shares: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        };
        let traffic = TrafficSpec {
            load: 0.0,
            arrival: Arrival::Bernoulli,
            sizes: PacketSizes::Fixed(1_000),
            cell_payload_bytes: 152,
            slot_ps: 1_000,
            stop_ps: 0,
            bytes_per_pair: None,
            broadcast_fraction: 0.0,
        };
        let destinations = Destinations::Fixed(0);
        let rng = stream(1, ComponentId { kind: 0, index: 0 });
        let generator = Generator::new(0, traffic, destinations, rng);
        let endpoint = Endpoint::new(0, 1, spec);
        GnetHost::new(
            endpoint,
            (generator, None),
            Link::new(50_000_000_000, 0),
            TxGate::Open,
        )
    }

    /// A packet to its own host: its RTS heard, the CTS issued and not yet sent. The packet
    /// is in the ingress buffer and registered for reassembly, and counts once.
    #[test]
    fn a_cts_waiting_to_leave_counts_its_packet_once() {
        let mut host = idle_host();
        host.endpoint.admit(0, 1_000, 0, 10);
        let rts = host.endpoint.next_cell(20, 0).expect("the RTS");
        host.endpoint.on_cell(&rts.flit(0, 0, 1, 20), 30);
        assert_eq!(host.endpoint.cts_waiting(), 1);
        let (packets, _, _) = settle(&[&host], std::iter::empty()).expect("the account settles");
        assert_eq!(
            (packets.gnet_packets_generated, packets.gnet_packets_held),
            (1, 1)
        );
    }
}
