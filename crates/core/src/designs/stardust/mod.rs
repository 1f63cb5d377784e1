//! Stardust (Zilberman, Bracha and Schzukin, NSDI '19): a Clos of Fabric Adapters at the edge and
//! Fabric Elements inside, moving packed cells that egress ports solicit with credits.
//!
//! The edge switches of the scenario's topology become [`Adapter`]s (their host ports are the
//! adapter's; hosts are sources and sinks inside it, or, with `host.transport`, the Ethernet
//! design's [`Host`] nodes cabled to the host ports, §6.3), every other switch an [`Element`].
//! All run on the shared [`Fabric`] as event-driven nodes. Cells address hosts: a data cell or a
//! request carries its source adapter in `src` and its destination host in `dst`; a credit
//! carries the granting host in `src` and the first host of the credited adapter in `dst`, so
//! every cell is routed toward its `dst` host's adapter by the fabric's [`FabricRouter`]. With
//! per-flow VOQs (`adapter.voqs = "per_flow"`) a request names its flow's source host in `src`
//! and a credit is addressed to that host.
//!
//! Built: packing with surplus accounting, reassembly in sequence with its timeout, ON/OFF
//! requests, credit schedulers with egress stop/resume and class weights, control cells with
//! strict priority and their bandwidth, spraying by routing mode, FCI marking and reaction,
//! ON/OFF pause of elements over a shared pool, push mode, traffic classes, reachability
//! messages with scripted failures (`reach`), and hosts from permutations to flow-size
//! distributions, and transport hosts on the host ports (TCP NewReno, DCTCP, MPTCP; DCQCN and
//! NDP over adapters that pause their hosts with PFC, `host_pause`, which is not the
//! paper's), on the `fct` pattern opening their flows during the run as the Ethernet
//! design's hosts do ([`crate::blocks::ethernet::opening`]); low-latency VOQs, a shared ingress
//! memory and per-flow VOQs as options. Not yet built (see the README): error-rate marking of
//! links.

mod adapter;
mod addressing;
mod build;
mod config;
mod element;
#[cfg(test)]
mod fct_tests;
#[cfg(test)]
mod flow_voq_tests;
mod host_keys;
mod host_pause;
mod reach;
mod report;
mod wire;

use std::sync::Arc;

use crate::blocks::cell::{CellArena, CellId, NO_PACKET};
use crate::blocks::ethernet::host::{FlowSeries, Host};
use crate::blocks::fabric::{Context, Fabric, FabricModel, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::packet::{PacketId, NO_FRAME};
use crate::blocks::routing::{FabricRouter, Router};
use crate::blocks::topology::Topology;
use crate::blocks::workload::mean_gap_ps;
use crate::engine::kernel::Clock;
use crate::engine::time::{serialization_ps, TimePs};
use crate::run::{Design, Report, RunError};
use crate::scenario::{invalid, ScenarioError};
use adapter::{Adapter, Flow, Foreground};
pub use addressing::Addressing;
use addressing::{addressing, edges};
pub use build::{build, build_partition};
use config::Arrival;
pub use config::{StardustConfig, PATTERNS};
use element::Element;
pub use report::{StardustSummary, StardustTables};
pub use wire::{class_flags, class_of, CellFormat, Kind, FCI, FIRST, MAX_CLASSES, REQUEST_ON};

/// Releases host frame `frame` (a [`Packet::frame`](crate::blocks::packet::Packet::frame))
/// with the packet that carried it, if there is one.
fn release_frame<R: Router>(ctx: &mut Context<'_, R>, frame: u32) {
    if frame != NO_FRAME {
        ctx.cells.free(CellId::from_index(frame));
    }
}

/// Releases packet `id` that will not be delivered, and the host frame it carries.
fn release_packet<R: Router>(ctx: &mut Context<'_, R>, id: PacketId) {
    let frame = ctx.packets[id].frame;
    ctx.packets.free(id);
    release_frame(ctx, frame);
}

/// Drops `cell` with the packets whose last byte it carries; returns how many packets.
fn drop_with_packets<R: Router>(ctx: &mut Context<'_, R>, cell: CellId) -> u64 {
    let mut packets = 0;
    let mut packet = ctx.cells[cell].packet;
    while packet != NO_PACKET {
        let id = PacketId::from_index(packet);
        packet = ctx.packets[id].next_in_cell;
        release_packet(ctx, id);
        packets += 1;
    }
    ctx.drop_cell(cell);
    packets
}

/// The node kinds of a Stardust fabric.
#[allow(clippy::large_enum_variant)]
pub enum StardustNode {
    /// A fabric adapter.
    Adapter(Adapter),
    /// A fabric element.
    Element(Element),
    /// A host running a transport, cabled to an adapter's host port (§6.3).
    Host(Host),
}

impl<R: Router> Node<R> for StardustNode {
    fn cells_held(&self) -> u64 {
        match self {
            StardustNode::Adapter(a) => Node::<R>::cells_held(a),
            StardustNode::Element(e) => Node::<R>::cells_held(e),
            StardustNode::Host(h) => Node::<R>::cells_held(h),
        }
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs) {
        match self {
            StardustNode::Adapter(a) => a.cell_arrives(ctx, port, cell, at_ps),
            StardustNode::Element(e) => e.cell_arrives(ctx, port, cell, at_ps),
            StardustNode::Host(h) => h.cell_arrives(ctx, port, cell, at_ps),
        }
    }

    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        match self {
            StardustNode::Adapter(a) => a.signal_arrives(ctx, port, signal),
            StardustNode::Element(e) => e.signal_arrives(ctx, port, signal),
            StardustNode::Host(h) => h.signal_arrives(ctx, port, signal),
        }
    }

    #[inline]
    fn warm_timer(&self, cells: &CellArena, tag: u32) {
        match self {
            StardustNode::Adapter(a) => a.warm_timer(cells, tag),
            StardustNode::Element(e) => e.warm_timer(cells, tag),
            StardustNode::Host(_) => {}
        }
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        match self {
            StardustNode::Adapter(a) => a.timer(ctx, tag),
            StardustNode::Element(e) => e.timer(ctx, tag),
            StardustNode::Host(h) => h.timer(ctx, tag),
        }
    }
}

/// One flow between transport hosts: its ends and its index at each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostFlow {
    src: u16,
    dst: u16,
    /// Its index among the receiving host's flows.
    at_dst: u32,
}

/// A Stardust run: adapters are nodes `0..adapters`, elements follow, and transport hosts,
/// where there are any, follow the switches (host `h` is node `switches + h`).
pub struct Stardust {
    fabric: Fabric<StardustNode, FabricRouter>,
    config: StardustConfig,
    addressing: Arc<Addressing>,
    /// Hosts that receive a flow (goodput is averaged over them).
    receivers: Vec<bool>,
    /// Every flow: (sending host, receiving host).
    flows: Vec<(u16, u16)>,
    /// With transport hosts: every flow with its indices at its hosts.
    host_flows: Vec<HostFlow>,
    host_rate_bps: Vec<u64>,
    longest_cable_ps: TimePs,
    cell_ps: TimePs,
    /// Nothing moving for this long (beyond the fabric's own bound) is not yet a stall: two
    /// of the longest retransmission timeouts with transport hosts, else 0.
    transport_stall_ps: TimePs,
    /// With transport hosts and `run.sample_ns`: each flow's goodput per interval.
    flow_series: FlowSeries,
    /// Switch hops between every two adapters' switches (`from * adapters + to`): a timed
    /// flow's path length for its ideal.
    adapter_hops: Vec<u8>,
}

/// The timed host of the `fct` pattern, its flow sizes read from `traffic.flow_sizes`.
fn foreground(
    config: &StardustConfig,
    topology: &Topology,
) -> Result<Option<Foreground>, ScenarioError> {
    if config.opening().is_some() {
        return Ok(None); // transport hosts open the timed flows
    }
    let Some(timed) = config.traffic_keys()?.timed() else {
        return Ok(None);
    };
    let sizes = timed.sizes()?;
    let (s, p) = topology
        .endpoint_port(timed.src as usize)
        .ok_or_else(|| invalid("traffic.fct_src", "expected a host"))?;
    let rate_bps = topology
        .cable(s, p)
        .rate_bps
        .unwrap_or(config.link.host_rate_bps());
    let mean_gap_ps = mean_gap_ps(&sizes, timed.load, rate_bps);
    Ok(Some(Foreground {
        src: timed.src as u16,
        dst: timed.dst as u16,
        sizes: Arc::new(sizes),
        mean_gap_ps,
        packet_bytes: config.traffic.packet_bytes,
        gap_bytes: config.adapter.host_gap_bytes,
        rate_bps,
    }))
}

/// The flows the traffic section describes, as the built-in sources pace them (transport
/// hosts read their ends only).
fn flows(config: &StardustConfig, topology: &Topology) -> Result<Vec<Flow>, ScenarioError> {
    let t = &config.traffic;
    let host_rate = |h: usize| {
        let (s, p) = topology.endpoint_port(h).expect("hosts are cabled");
        topology
            .cable(s, p)
            .rate_bps
            .unwrap_or(config.link.host_rate_bps())
    };
    let transport_hosts = config.host.transport().is_some();
    // A packet and its gap (`adapter.host_gap_bytes`) on the host link.
    let on_host_link = t.packet_bytes as u64 + config.adapter.host_gap_bytes as u64;
    let flows =
        config
            .traffic_keys()?
            .flows(topology.endpoints(), config.run.seed, transport_hosts)?;
    Ok(flows
        .into_iter()
        .map(|f| Flow {
            src: f.src as u16,
            dst: f.dst as u16,
            class: f.class as u8,
            packet_bytes: t.packet_bytes,
            gap_ps: (serialization_ps(on_host_link, host_rate(f.src)) as f64 / f.load).round()
                as TimePs,
            poisson: t.arrival == Arrival::Poisson,
            size_bytes: t.flow_bytes,
        })
        .collect())
}

impl Stardust {
    fn adapters(&self) -> impl Iterator<Item = &Adapter> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            StardustNode::Adapter(a) => Some(a),
            _ => None,
        })
    }

    fn elements(&self) -> impl Iterator<Item = &Element> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            StardustNode::Element(e) => Some(e),
            _ => None,
        })
    }

    /// The first node `pick` takes (tests reach into one node of a kind).
    #[cfg(test)]
    pub(crate) fn first_node_mut<T>(
        &mut self,
        pick: impl FnMut(&mut StardustNode) -> Option<&mut T>,
    ) -> &mut T {
        let mut nodes = self.fabric.nodes_mut().iter_mut();
        nodes.find_map(pick).expect("a node of that kind")
    }

    /// The transport hosts, in host order (none with built-in sources).
    fn hosts(&self) -> impl Iterator<Item = &Host> {
        self.fabric.nodes().iter().filter_map(|n| match n {
            StardustNode::Host(h) => Some(h),
            _ => None,
        })
    }
}

impl FabricModel for Stardust {
    type Node = StardustNode;
    type Router = FabricRouter;

    fn fabric(&self) -> &Fabric<StardustNode, FabricRouter> {
        &self.fabric
    }

    fn fabric_mut(&mut self) -> &mut Fabric<StardustNode, FabricRouter> {
        &mut self.fabric
    }

    /// The nodes and counts of partition `other`, and its flows' goodput series.
    fn absorb_partition(&mut self, other: &mut Self) {
        self.fabric.absorb(&mut other.fabric);
        self.flow_series.absorb(&other.flow_series);
    }

    /// A thousand cell times plus ten round trips over the longest cable (and, with
    /// transport hosts, two of their longest retransmission timeouts).
    fn stuck_after_ps(&self) -> TimePs {
        1_000 * self.cell_ps + 20 * self.longest_cable_ps + self.transport_stall_ps
    }

    fn stuck_report(&self) -> String {
        format!("{} cells in flight, none moved", self.fabric.cells_live())
    }

    /// With transport hosts, each flow's goodput over the interval ending at `at_ps`.
    fn sample_own(&mut self, at_ps: TimePs) {
        let Some(every_ns) = self.config.run.sample_ns else {
            return;
        };
        let nodes = self.fabric.nodes();
        let hosts = &nodes[nodes.len() - self.host_rate_bps.len()..];
        let bytes = self
            .host_flows
            .iter()
            .map(|f| match &hosts[f.dst as usize] {
                StardustNode::Host(h) => h.inflows[f.at_dst as usize].bytes,
                _ => unreachable!("transport hosts follow the switches"),
            });
        self.flow_series.record(at_ps, every_ns, bytes);
    }
}

impl Design for Stardust {
    fn end_ps(&self) -> TimePs {
        self.config.run.end_ps()
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        let (summary, tables) = self.finish(&clock)?;
        let perf = clock.perf(Some(("cell-hops", summary.effort.cell_hops)));
        Ok(Report::new(&summary, &tables, perf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::blocks::packet::Packet;
    use crate::engine::kernel::Kernel;

    /// A k = 4 fat-tree stopped halfway, with cells and packets in every place they can be.
    fn halfway() -> (Stardust, Clock) {
        halfway_with("")
    }

    /// The same with `extra` JSON members (another section, say).
    fn halfway_with(extra: &str) -> (Stardust, Clock) {
        let json = format!(
            r#"{{"design": "stardust", "run": {{"seed": 2, "duration_ns": 200000, "warmup_ns": 20000}},
            "topology": {{"kind": "fat_tree", "k": 4}} {extra}}}"#
        );
        let mut kernel = Kernel::new(build(&json).unwrap(), 200_000_000);
        kernel.advance(100_000_000);
        let (stardust, clock, deadlock) = kernel.into_parts();
        assert!(deadlock.is_none());
        (stardust, clock)
    }

    /// The run's first element.
    fn first_element(stardust: &mut Stardust) -> &mut Element {
        stardust.first_node_mut(|n| match n {
            StardustNode::Element(e) => Some(e),
            _ => None,
        })
    }

    #[test]
    fn the_accounts_settle_where_cells_and_packets_are() {
        let (stardust, clock) = halfway();
        let (summary, _) = stardust.finish(&clock).expect("balanced");
        assert!(summary.accounts.cells_in_flight > 0 && summary.accounts.packets_in_flight > 0);
    }

    /// Elements whose output ports lose one data cell in 100 from their queues (the handle
    /// vanishes, no counter changes) break the cell account: cells held are counted in the
    /// ports' queues.
    #[test]
    fn an_element_losing_one_cell_in_100_fails_the_account() {
        let json = r#"{"design": "stardust", "run": {"seed": 2, "duration_ns": 200000, "warmup_ns": 20000},
            "topology": {"kind": "fat_tree", "k": 4}}"#;
        let mut stardust = build(json).unwrap();
        for node in stardust.fabric.nodes_mut() {
            if let StardustNode::Element(e) = node {
                e.inject_fault(crate::blocks::switch::Fault {
                    lose_one_in: Some(100),
                    skip_slot_check: true,
                    ..Default::default()
                });
            }
        }
        let mut kernel = Kernel::new(stardust, 200_000_000);
        kernel.advance(100_000_000);
        let (mut stardust, clock, _) = kernel.into_parts();
        let taken: u64 = stardust
            .fabric
            .nodes_mut()
            .iter_mut()
            .filter_map(|n| match n {
                StardustNode::Element(e) => Some(e.fault_taken()),
                _ => None,
            })
            .sum();
        assert!(taken >= 100, "the fault struck");
        match stardust.finish(&clock) {
            Err(RunError::Unaccounted { held, allocated }) => assert!(allocated > held),
            other => panic!(
                "expected the cell account to fail, got {:?}",
                other.map(|_| ())
            ),
        }
    }

    /// A cell allocated but held nowhere (a lost handle) breaks the cell account.
    #[test]
    fn a_cell_held_nowhere_fails_the_run() {
        let (mut stardust, clock) = halfway();
        stardust.fabric.start(0, |_, ctx| {
            ctx.cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
        });
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Unaccounted { held, allocated }) if allocated == held + 1
        ));
    }

    /// A packet freed twice (delivered to its host twice, say) breaks the account.
    #[test]
    fn a_packet_released_twice_fails_the_run() {
        let (mut stardust, clock) = halfway();
        stardust.fabric.start(0, |_, ctx| {
            let packet = ctx.packets.alloc(Packet::new(0, 1, 100, 0));
            ctx.packets.free(packet);
            ctx.packets.free(packet);
        });
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::ReleasedTwice(1))
        ));
    }

    /// A packet stored but held nowhere breaks the packet account.
    #[test]
    fn a_packet_held_nowhere_fails_the_run() {
        let (mut stardust, clock) = halfway();
        stardust.fabric.start(0, |_, ctx| {
            ctx.packets.alloc(Packet::new(0, 1, 100, 0));
        });
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Unaccounted { held, allocated }) if allocated == held + 1
        ));
    }

    /// A cell counted as lost to a failure that is still held breaks the balance.
    #[test]
    fn a_miscounted_failure_loss_fails_the_run() {
        let (mut stardust, clock) = halfway_with(r#", "reachability": {"mode": "messages"}"#);
        assert!(stardust.finish(&clock).is_ok());
        first_element(&mut stardust)
            .reach
            .as_mut()
            .unwrap()
            .counters
            .lost_no_route += 1;
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Conservation { .. })
        ));
    }

    /// TCP NewReno hosts on a k = 4 fat-tree's host ports, run to `end_ns` (of a run of
    /// `duration_ns`), with `extra` JSON members.
    fn tcp_run(end_ns: u64, duration_ns: u64, extra: &str) -> (Stardust, Clock) {
        transport_run(r#""transport": "tcp""#, end_ns, duration_ns, extra)
    }

    /// Hosts with the `[host]` members `host` on a k = 4 fat-tree's host ports, as
    /// [`tcp_run`].
    fn transport_run(host: &str, end_ns: u64, duration_ns: u64, extra: &str) -> (Stardust, Clock) {
        let json = format!(
            r#"{{"design": "stardust", "run": {{"seed": 3, "duration_ns": {duration_ns}, "warmup_ns": 100000}},
            "topology": {{"kind": "fat_tree", "k": 4}}, "host": {{{host}}} {extra}}}"#
        );
        let mut kernel = Kernel::new(build(&json).unwrap(), duration_ns * 1_000);
        kernel.advance(end_ns * 1_000);
        let (stardust, clock, deadlock) = kernel.into_parts();
        assert!(deadlock.is_none());
        (stardust, clock)
    }

    /// The run's first transport host.
    fn first_host(stardust: &mut Stardust) -> &mut Host {
        stardust.first_node_mut(|n| match n {
            StardustNode::Host(h) => Some(h),
            _ => None,
        })
    }

    #[test]
    fn tcp_hosts_settle_every_account_halfway() {
        let (stardust, clock) = tcp_run(500_000, 1_000_000, "");
        let (summary, _) = stardust.finish(&clock).expect("balanced");
        let transport = summary.transport.expect("transport hosts");
        assert!(summary.accounts.packets_in_flight > 0 && summary.accounts.cells_in_flight > 0);
        assert!(transport.host_packets_received > 0 && transport.acks_sent > 0);
        assert_eq!(transport.transport, "tcp");
    }

    /// Unending TCP flows over the pull fabric: every flow gets the same share, no cell is
    /// lost, and the same seed gives the same summary. (The share is about 78% of line rate,
    /// not more: each ACK takes a whole credit of its own VOQ, docs/validation/stardust.md.)
    #[test]
    fn unending_tcp_flows_share_fairly_and_deterministically() {
        let run = || {
            let (stardust, clock) = tcp_run(2_000_000, 2_000_000, "");
            let (summary, _) = stardust.finish(&clock).expect("balanced");
            serde_json::to_value(&summary).unwrap()
        };
        let summary = run();
        assert_eq!(summary["cells_dropped"], 0);
        assert_eq!(summary["packets_dropped_ingress"], 0);
        assert!(
            summary["goodput"].as_f64().unwrap() > 0.7,
            "{}",
            summary["goodput"]
        );
        assert!(summary["flow_fairness"].as_f64().unwrap() > 0.99);
        assert_eq!(summary, run());
    }

    /// Finite TCP flows deliver every byte, and the pull fabric drops no cell.
    #[test]
    fn finite_tcp_flows_deliver_every_byte() {
        let bytes = 1_000_000u64;
        let extra = format!(r#", "traffic": {{"flow_bytes": {bytes}}}"#);
        let (stardust, clock) = tcp_run(3_000_000, 3_000_000, &extra);
        let (summary, tables) = stardust.finish(&clock).expect("balanced");
        assert_eq!(summary.delivery.flows_completed, 16);
        assert_eq!(summary.accounts.cells_dropped, 0);
        for h in stardust.hosts() {
            for f in &h.inflows {
                assert_eq!(f.bytes, bytes);
            }
        }
        assert!(tables.flows.fct_us.iter().all(Option::is_some));
    }

    /// DCTCP hosts run over the fabric exactly as NewReno's do: no element marks ECN, so no
    /// window is ever cut by a mark (the summaries differ in the transport's name only).
    #[test]
    fn dctcp_over_the_fabric_sees_no_mark() {
        let summary = |host: &str| {
            let (stardust, clock) = transport_run(host, 1_000_000, 1_000_000, "");
            let (summary, _) = stardust.finish(&clock).expect("balanced");
            serde_json::to_value(&summary).unwrap()
        };
        let mut dctcp = summary(r#""transport": "dctcp""#);
        assert_eq!(dctcp["transport"], "dctcp");
        dctcp["transport"] = "tcp".into();
        assert_eq!(dctcp, summary(r#""transport": "tcp""#));
    }

    /// Finite MPTCP connections of 4 subflows deliver every byte once over the fabric, with
    /// no cell dropped, and each connection's subflows all carry some of it.
    #[test]
    fn finite_mptcp_connections_deliver_every_byte() {
        let bytes = 1_000_000u64;
        let extra = format!(r#", "traffic": {{"flow_bytes": {bytes}}}"#);
        let host = r#""transport": "mptcp", "subflows": 4"#;
        let (stardust, clock) = transport_run(host, 3_000_000, 3_000_000, &extra);
        let (summary, _) = stardust.finish(&clock).expect("balanced");
        assert_eq!(summary.delivery.flows_completed, 16);
        assert_eq!(summary.accounts.cells_dropped, 0);
        assert_eq!(summary.transport.expect("hosts").transport, "mptcp");
        let mut connections = 0;
        for h in stardust.hosts() {
            assert_eq!(h.inflows.len(), 4, "one connection of 4 subflows");
            assert_eq!(
                h.inflows[0].bytes, bytes,
                "counted once, on its first subflow"
            );
            assert!(h.inflows[1..].iter().all(|f| f.bytes == 0));
            connections += 1;
        }
        assert_eq!(connections, 16);
        let sent_by_subflow = stardust
            .hosts()
            .flat_map(|h| h.out.iter().map(|f| f.sender.counters().segments_sent))
            .collect::<Vec<_>>();
        assert!(
            sent_by_subflow.iter().all(|&n| n > 0),
            "{sent_by_subflow:?}"
        );
    }

    /// An incast of 15 senders × 450 KB to host 0 of a k = 4 fat-tree whose adapters pause
    /// their hosts (with the `[adapter]` members `adapter`), the hosts running `transport`,
    /// run for 10 ms: its summary, and the run.
    fn paused_incast(transport: &str, adapter: &str) -> (serde_json::Value, Stardust, Clock) {
        let extra = format!(
            r#", "adapter": {{"pause_hosts": true {adapter}}},
            "traffic": {{"pattern": "incast", "incast_host": 0, "flow_bytes": 450000}}"#
        );
        let host = format!(r#""transport": "{transport}""#);
        let (stardust, clock) = transport_run(&host, 10_000_000, 10_000_000, &extra);
        let (summary, _) = stardust.finish(&clock).expect("balanced");
        (serde_json::to_value(&summary).unwrap(), stardust, clock)
    }

    /// The checks every lossless incast passes: nothing dropped anywhere, the senders paused
    /// and resumed as often, every flow complete within 10% of 15 × 450 KB at line rate,
    /// nothing retransmitted; and the same seed gives the same summary.
    fn assert_lossless_incast(transport: &str) -> serde_json::Value {
        let (summary, _, _) = paused_incast(transport, "");
        let pfc = &summary["pfc"];
        assert_eq!(summary["packets_dropped_ingress"], 0, "{summary}");
        assert_eq!(summary["packets_dropped_egress"], 0);
        assert_eq!(summary["packets_dropped_fabric"], 0);
        assert_eq!(summary["cells_dropped"], 0);
        assert_eq!(pfc["lossless_drops"], 0, "{pfc}");
        assert!(pfc["pause_frames_sent"].as_u64().unwrap() > 0, "{pfc}");
        assert_eq!(pfc["resume_frames_sent"], pfc["pause_frames_sent"]);
        assert!(pfc["headroom_peak_packets"].as_u64().unwrap() <= 4, "{pfc}");
        assert!(pfc["host_paused_us"].as_f64().unwrap() > 0.0);
        assert_eq!(summary["flows_completed"], 15);
        let ideal_us = 15.0 * 450_000.0 * 8.0 / 10e9 * 1e6;
        let last_us = summary["fct_us"]["last"].as_f64().unwrap();
        assert!(last_us < 1.1 * ideal_us, "{last_us} µs");
        assert_eq!(
            (&summary["retransmissions"], &summary["timeouts"]),
            (&0.into(), &0.into())
        );
        assert_eq!(summary, paused_incast(transport, "").0, "deterministic");
        summary
    }

    /// DCQCN over adapters that pause their hosts: lossless, and no CNP is ever sent (nothing
    /// on a Stardust fabric marks ECN), so every sender stays at line rate and only PFC holds
    /// it back.
    #[test]
    fn dcqcn_over_paused_hosts_is_lossless_and_never_notified() {
        let summary = assert_lossless_incast("dcqcn");
        let dcqcn = &summary["dcqcn"];
        assert_eq!(
            (&dcqcn["cnps_sent"], &dcqcn["rate_cuts"]),
            (&0.into(), &0.into())
        );
        assert_eq!(dcqcn["rate_gbps"]["min"], 10.0, "{dcqcn}");
    }

    /// NDP over adapters that pause their hosts: nothing is trimmed or NACKed, the receiver's
    /// pulls clock the senders after their initial windows, and no retransmission timer fires.
    #[test]
    fn ndp_over_paused_hosts_is_lossless_and_pull_clocked() {
        let summary = assert_lossless_incast("ndp");
        let ndp = &summary["ndp"];
        assert_eq!(ndp["packets_trimmed"], 0);
        assert_eq!(
            (&ndp["headers_received"], &ndp["nacks_sent"]),
            (&0.into(), &0.into())
        );
        // One pull per data packet received but the last of each flow (50 packets each).
        let pulls = ndp["pulls_sent"].as_u64().unwrap();
        assert!(pulls > 15 * 40, "{ndp}");
    }

    /// No headroom: the frames a host still sends after its adapter's XOFF find no room and
    /// are dropped; every account still balances, the drops counted in the ledger (and a
    /// PAUSE frame counted but never sent breaks the frames' account).
    #[test]
    fn paused_hosts_without_headroom_drop_and_the_ledger_counts_it() {
        let (summary, mut stardust, clock) =
            paused_incast("dcqcn", r#", "pause_headroom_packets": 0"#);
        let drops = summary["pfc"]["lossless_drops"].as_u64().unwrap();
        assert!(drops > 0, "{}", summary["pfc"]);
        assert!(summary["packets_dropped_ingress"].as_u64().unwrap() >= drops);
        assert!(
            summary["flows_completed"].as_u64().unwrap() < 15,
            "DCQCN never resends"
        );
        let adapter = stardust.first_node_mut(|n| match n {
            StardustNode::Adapter(a) => Some(a),
            _ => None,
        });
        adapter.egress_counters_mut().pfc.pause_frames_sent += 1;
        // The frame would be on a host cable: the cells held (none, the run is over) do not
        // have it.
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Unaccounted {
                held: 0,
                allocated: 1
            })
        ));
    }

    /// A frame counted as sent to a host that never left breaks the frames' account.
    #[test]
    fn a_miscounted_frame_fails_the_run() {
        let (mut stardust, clock) = tcp_run(500_000, 1_000_000, "");
        first_host(&mut stardust).counters.packets_received += 1;
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Conservation { .. })
        ));
    }

    /// A host frame allocated but held nowhere breaks the cell account.
    #[test]
    fn a_frame_held_nowhere_fails_the_run() {
        let (mut stardust, clock) = tcp_run(500_000, 1_000_000, "");
        let host = stardust.fabric.nodes().len() - 1;
        stardust.fabric.start(host, |_, ctx| {
            ctx.cells.alloc(Cell::new(0, 1, 9000, true, 0, 0));
        });
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Unaccounted { held, allocated }) if allocated == held + 1
        ));
    }

    /// A drop counted for a cell still held breaks the balance, and in pull mode is a loss.
    #[test]
    fn a_miscounted_drop_fails_the_run() {
        let (mut stardust, clock) = halfway();
        first_element(&mut stardust).counters_mut().cells_dropped += 1;
        assert!(matches!(
            stardust.finish(&clock),
            Err(RunError::Conservation { .. })
        ));
    }
}
