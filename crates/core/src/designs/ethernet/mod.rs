//! The Ethernet baseline ("push and drop", Stardust §6.3 and Fig. 10): hosts running TCP
//! NewReno, DCTCP or MPTCP over store-and-forward switches with drop-tail output queues and ECN
//! marking, or NDP over trimming queues (Handley et al. 2017), on any of the shared
//! topologies, routed per flow (ECMP) or per packet (spraying) by the shared router. Every
//! switch of the topology becomes an [`EthernetSwitch`] (nodes
//! `0..switches`), every host a [`Host`] (the nodes after them), all event-driven on the shared
//! [`Fabric`].

#[cfg(test)]
mod aquarius_tests;
#[cfg(test)]
mod bfc_tests;
mod config;
#[cfg(test)]
mod dcqcn_tests;
#[cfg(test)]
mod fct_tests;
#[cfg(test)]
mod line_rate_tests;
#[cfg(test)]
mod lossless_fabrics;
#[cfg(test)]
mod mptcp_tests;
#[cfg(test)]
mod ndp_tests;
#[cfg(test)]
mod pfc_tests;
mod report;
#[cfg(test)]
mod shared_buffer_tests;
mod traffic;

use crate::blocks::cell::{Cell, CellId};
use crate::blocks::ethernet::host::{FlowSeries, Host, HostParams, NdpPathSpec};
use crate::blocks::ethernet::opening::{open_flows, schedule_incasts};
use crate::blocks::ethernet::ports::bfc::BfcSpec;
use crate::blocks::ethernet::ports::drop_tail::{OutputQueue, QueueSpec, RandomDrop};
use crate::blocks::ethernet::ports::pfc::{PfcPorts, PfcSpec};
use crate::blocks::ethernet::ports::shared_buffer::{dynamic_threshold, SharedBuffer};
use crate::blocks::ethernet::ports::trimming::{TrimSpec, TrimmingPort};
use crate::blocks::ethernet::switch::{EthernetSwitch, Ports, TrimCounts};
use crate::blocks::fabric::partition::Partition;
use crate::blocks::fabric::{Context, Fabric, FabricModel, Node, Wiring};
use crate::blocks::link::Link;
use crate::blocks::port_set::MAX_PORTS;
use crate::blocks::routing::{FabricRouter, PathLabel, RouteTable, Router};
use crate::blocks::stream_kind;
use crate::blocks::topology::{Attachment, Topology};
use crate::blocks::transport::line_rate::{base_rtt_ps, InflightCap};
use crate::blocks::transport::{Marks, Transport, WindowRule};
use crate::engine::kernel::Clock;
use crate::engine::rng::{mix, stream, ComponentId};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs};
use crate::run::{Design, Report, RunError};
use crate::scenario::{invalid, ScenarioError};
pub use config::EthernetConfig;
pub use report::{EthernetSummary, EthernetTables};
pub use traffic::PATTERNS;

/// Mixed into the seed for NDP senders' path permutations (apart from the router's salts).
const NDP_PATH_SALT: u64 = 0x4e44_5050_6174_6873;

/// The node kinds of an Ethernet fabric.
pub enum EthernetNode {
    /// A switch.
    Switch(EthernetSwitch),
    /// A host.
    Host(Host),
}

impl<R: Router> Node<R> for EthernetNode {
    fn cells_held(&self) -> u64 {
        match self {
            EthernetNode::Switch(s) => Node::<R>::cells_held(s),
            EthernetNode::Host(h) => Node::<R>::cells_held(h),
        }
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs) {
        match self {
            EthernetNode::Switch(s) => s.cell_arrives(ctx, port, cell, at_ps),
            EthernetNode::Host(h) => h.cell_arrives(ctx, port, cell, at_ps),
        }
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        match self {
            EthernetNode::Switch(s) => s.timer(ctx, tag),
            EthernetNode::Host(h) => h.timer(ctx, tag),
        }
    }

    #[inline]
    fn warm(&self, cell: &Cell, _: usize) {
        match self {
            EthernetNode::Switch(s) => s.warm(cell),
            EthernetNode::Host(h) => h.warm(cell),
        }
    }
}

/// One flow (a TCP flow or an MPTCP connection): (sending host, receiving host).
#[derive(Clone, Copy, Debug)]
struct FlowEnds {
    src: u16,
    dst: u16,
    /// Its index among the sending host's flows (an MPTCP connection's first subflow's).
    at_src: u32,
    /// Its index among the receiving host's flows (an MPTCP connection's first subflow's,
    /// which counts the connection's bytes).
    at_dst: u32,
    /// Its subflows (1 for a TCP flow), consecutive from `at_src` and `at_dst`.
    subflows: u32,
}

/// An Ethernet run: switches are nodes `0..switches`, host `h` is node `switches + h`.
pub struct Ethernet {
    fabric: Fabric<EthernetNode, FabricRouter>,
    config: EthernetConfig,
    switches: usize,
    flows: Vec<FlowEnds>,
    host_rate_bps: Vec<u64>,
    /// How long nothing may move while packets are held before the run is stuck.
    stall_ps: TimePs,
    /// The switch each host is cabled to.
    edge_of_host: Vec<u32>,
    /// Switch hops between every two switches (`from * switches + to`).
    edge_hops: Vec<u8>,
    /// With `run.sample_ns`: each flow's goodput per interval.
    flow_series: FlowSeries,
}

/// The link each way over the cable on switch port (s, p) of a run: the cable's own rate and
/// length if the topology gives them, else the run's (a host's at the host rate).
struct Cables<'a> {
    topology: &'a Topology,
    config: &'a EthernetConfig,
}

impl Cables<'_> {
    /// Switch `s`'s neighbours, (node, port) per port (hosts are the nodes after the
    /// switches), and its cables' delays.
    fn switch_wiring(&self, s: usize) -> (Vec<(u32, u16)>, Vec<TimePs>) {
        let (topology, switches) = (self.topology, self.topology.switches());
        let ports = topology.switch_ports(s);
        let peers = (0..ports)
            .map(|p| match topology.peer(s, p) {
                Some(Attachment::SwitchPort { switch, port }) => (switch as u32, port as u16),
                Some(Attachment::Endpoint(h)) => ((switches + h) as u32, 0),
                None => (s as u32, p as u16), // an unused port: routing never picks it
            })
            .collect();
        let delays_ps = (0..ports).map(|p| self.link(s, p).propagation_ps).collect();
        (peers, delays_ps)
    }

    fn link(&self, s: usize, p: usize) -> Link {
        self.topology.link_over(s, p, &self.config.link)
    }
}

/// The (source, destination) of every flow the pattern makes at build among `hosts` hosts.
fn flow_pairs(
    config: &EthernetConfig,
    traffic: &crate::blocks::patterns::PatternKeys<'_>,
    hosts: usize,
) -> Result<Vec<(usize, usize)>, ScenarioError> {
    let pairs: Vec<(usize, usize)> = (traffic.flows(hosts, config.run.seed, true)?.iter())
        .map(|f| (f.src, f.dst))
        .collect();
    if config.traffic.single_path_flows as usize > pairs.len() {
        return Err(invalid(
            "traffic.single_path_flows",
            format!("expected at most the pattern's {} flows", pairs.len()),
        ));
    }
    Ok(pairs)
}

/// Builds the Ethernet run a scenario (JSON text) describes.
pub fn build(json: &str) -> Result<Ethernet, ScenarioError> {
    Ok(build_with(json, None)?.0)
}

/// Builds partition `me` of the run split into `parts` for as many threads, with the
/// partition (refused under `run.threads`, saying why, where the fabric cannot be split).
pub fn build_partition(
    json: &str,
    parts: usize,
    me: u16,
) -> Result<(Ethernet, Partition), ScenarioError> {
    let (ethernet, partition) = build_with(json, Some((parts, me)))?;
    Ok((ethernet, partition.expect("asked for")))
}

/// [`build`], or its partition `part.1` of `part.0` where `part` is given.
fn build_with(
    json: &str,
    part: Option<(usize, u16)>,
) -> Result<(Ethernet, Option<Partition>), ScenarioError> {
    let config = EthernetConfig::from_json(json)?;
    let topology = config.topology()?;
    let table = RouteTable::new(&topology).map_err(|e| invalid("topology", e.to_string()))?;
    let (switches, hosts) = (topology.switches(), topology.endpoints());
    let traffic = config.traffic.keys()?;
    let pairs = flow_pairs(&config, &traffic, hosts)?;
    let cables = Cables {
        topology: &topology,
        config: &config,
    };
    let mut peers = Vec::with_capacity(switches + hosts);
    let mut delays_ps = Vec::with_capacity(switches + hosts);
    let mut nodes = Vec::with_capacity(switches + hosts);
    for s in 0..switches {
        let (switch_peers, switch_delays_ps) = cables.switch_wiring(s);
        peers.push(switch_peers);
        delays_ps.push(switch_delays_ps);
        nodes.push(EthernetNode::Switch(switch_node(&cables, s)?));
    }
    let longest = longest_path(&topology, &table, &cables);
    let mut host_nodes = Vec::with_capacity(hosts);
    let mut host_rate_bps = Vec::with_capacity(hosts);
    for host in 0..hosts {
        let (s, p) = topology.endpoint_port(host).expect("hosts are cabled");
        let link = cables.link(s, p);
        peers.push(vec![(s as u32, p as u16)]);
        delays_ps.push(vec![link.propagation_ps]);
        host_rate_bps.push(link.rate_bps);
        let params = host_params(&config, &link, longest);
        host_nodes.push(Host::new(host as u16, link, params));
    }
    let flows = add_flows(&config, pairs, &mut host_nodes);
    if let Some(opening) = traffic.opening() {
        let sizes = traffic.sizes()?;
        let seed = config.run.seed;
        open_flows(&opening, sizes, seed, &host_rate_bps, &mut host_nodes)?;
        if let Some(mix) = config.traffic.incast_mix() {
            let until_ps = ps_from_ns(config.run.duration_ns);
            schedule_incasts(mix, seed, until_ps, &host_rate_bps, &mut host_nodes)?;
        }
    }
    nodes.extend(host_nodes.into_iter().map(EthernetNode::Host));
    let packet_ps = serialization_ps(config.host.packet_bytes as u64, config.link.rate_bps());
    let wiring = Wiring {
        slot_ps: packet_ps,
        ..event_driven_wiring(peers, delays_ps, switches, config.run.end_ps())
    };
    let edge_of_host = (0..hosts)
        .map(|h| topology.endpoint_port(h).expect("hosts are cabled").0 as u32)
        .collect();
    let edge_hops = (0..switches * switches)
        .map(|k| table.hops(k / switches, k % switches) as u8)
        .collect();
    let mut fabric = fabric(
        &config,
        table,
        nodes,
        wiring,
        packet_ps,
        longest.propagation_ps,
    );
    let partition = start(&mut fabric, &topology, part)?;
    let ethernet = Ethernet {
        stall_ps: 1_000 * packet_ps + 2 * ps_from_ns(config.host.max_rto_ns),
        fabric,
        config,
        switches,
        flows,
        host_rate_bps,
        edge_of_host,
        edge_hops,
        flow_series: FlowSeries::default(),
    };
    Ok((ethernet, partition))
}

/// Starts `fabric`'s hosts (the nodes after the switches), after making it partition `part.1`
/// of `part.0` where `part` is given (failing, naming `run.threads`, where it cannot be split).
/// Only frames cross between switches, each at least its cable's delay after the event that
/// sends it.
fn start(
    fabric: &mut Fabric<EthernetNode, FabricRouter>,
    topology: &Topology,
    part: Option<(usize, u16)>,
) -> Result<Option<Partition>, ScenarioError> {
    let partition = part
        .map(|part| fabric.split(topology, part, 0, false))
        .transpose()
        .map_err(|message| invalid("run.threads", message))?;
    for host in topology.switches()..fabric.nodes().len() {
        fabric.start(host, |node, ctx| {
            if let EthernetNode::Host(h) = node {
                h.start(ctx);
            }
        });
    }
    Ok(partition)
}

/// The wiring of an event-driven fabric of `switches` switches (routing) and the hosts after
/// them (`peers` and `delays_ps` per node), running to `end_ps`.
fn event_driven_wiring(
    peers: Vec<Vec<(u32, u16)>>,
    delays_ps: Vec<Vec<TimePs>>,
    switches: usize,
    end_ps: TimePs,
) -> Wiring {
    let nodes = peers.len();
    Wiring {
        peers,
        delays_ps,
        slotted: vec![false; nodes],
        sink: vec![false; nodes],
        end_ps,
        router_index: (0..nodes).map(|n| (n < switches).then_some(n)).collect(),
        slot_ps: 0,
        per_voq: false,
        layer1: Vec::new(),
    }
}

/// The fabric of `nodes` wired as `wiring`, its router over `table`, its calendar sized for
/// packets of `packet_ps` and cables of at most `longest_cable_ps`, not started.
fn fabric(
    config: &EthernetConfig,
    table: RouteTable,
    nodes: Vec<EthernetNode>,
    wiring: Wiring,
    packet_ps: TimePs,
    longest_cable_ps: TimePs,
) -> Fabric<EthernetNode, FabricRouter> {
    let router = FabricRouter::new(
        table,
        config.mode(),
        config.run.seed,
        config.routing.spray_rounds,
    )
    // A packet's path label (its MPTCP subflow's number) rides in `next_vc`: an Ethernet
    // fabric has no channels.
    .with_path_label(PathLabel::NextVc)
    // An Ethernet switch never refuses an output, so ECMP's per-flow paths are stamped on
    // each packet by its host (1.x faster on the DCTCP permutation).
    .with_stamped_paths();
    let mut fabric = Fabric::new(nodes, router, wiring, config.run.warmup_ps());
    // Output queues schedule a packet's arrival when it is queued, up to a full queue ahead;
    // the ring reaches 16 packet times (events further ahead wait in the calendar's heap) so
    // that its buckets' buffers stay in cache: a ring over a full 100-packet queue took 1.10x
    // the time on the DCTCP permutation (whose queues hover near K = 15) and 1.02x on TCP's
    // (whose queues fill).
    let horizon_ps = 16 * packet_ps + 4 * longest_cable_ps;
    // Buckets of about a quarter packet time: hundreds of events each on a busy fabric, few
    // enough buckets that pushing far ahead finds them warm (1.3x faster than ACK-time ones;
    // narrower ones run fewer instructions but more cache misses: 1/200 packet time took 10%
    // more wall time on the DCTCP permutation). Trimming and lossless ports book their
    // wake-ups a header's time ahead, mostly into the bucket being served, each insertion
    // shifting the rest of it: buckets of 1/32 packet time keep that short (1.3x faster on the
    // NDP permutation).
    let kind = config.ports();
    let buckets_per_packet = if kind.trims || kind.lossless { 32 } else { 4 };
    fabric.set_calendar(packet_ps / buckets_per_packet, horizon_ps);
    fabric
}

/// Switch `s` with its ports of the run's kind.
fn switch_node(cables: &Cables<'_>, s: usize) -> Result<EthernetSwitch, ScenarioError> {
    let config = cables.config;
    let ports = cables.topology.switch_ports(s);
    let warmup_ps = config.run.warmup_ps();
    let seed = config.run.seed;
    let component = |kind, index: usize| ComponentId {
        kind,
        index: index as u32,
    };
    let queues = if let Some(pfc) = PfcSpec::of(
        &config.switch,
        config.transport().marks,
        config.hop_bdp_packets(),
    ) {
        let links = (0..ports).map(|p| cables.link(s, p)).collect();
        let rng = stream(seed, component(stream_kind::ETHERNET_PFC, s));
        Ports::Pfc(PfcPorts::new(links, pfc, warmup_ps, rng))
    } else if config.ports().trims {
        // htsim's CompositeQueue: a data queue of `-q` packets, a header queue of as many
        // bytes.
        let trim = TrimSpec {
            data_packets: config.switch.queue_packets,
            header_capacity_bytes: config.switch.queue_packets as u64
                * config.host.packet_bytes as u64,
            header_bytes: config.host.ack_bytes as u16,
        };
        Ports::Trimming(
            (0..ports)
                .map(|p| TrimmingPort::new(cables.link(s, p), trim, warmup_ps))
                .collect(),
            stream(seed, component(stream_kind::ETHERNET_TRIM, s)),
            TrimCounts::default(),
        )
    } else {
        fifo_ports(cables, s)?
    };
    let probability = config.switch.loss_probability;
    let loss = (probability > 0.0).then(|| {
        (
            probability,
            stream(seed, component(stream_kind::ETHERNET_LOSS, s)),
        )
    });
    let switch = EthernetSwitch::new(s, queues, loss);
    let switch = match config.switch.cut_through() {
        true => switch.with_cut_through(),
        false => switch,
    };
    Ok(match config.switch.return_to_sender() {
        true => switch.with_return_to_sender(),
        false => switch,
    })
}

/// Switch `s`'s drop-tail FIFOs, each its own buffer or over a shared one.
fn fifo_ports(cables: &Cables<'_>, s: usize) -> Result<Ports, ScenarioError> {
    let config = cables.config;
    let ports = cables.topology.switch_ports(s);
    let marks = config.transport().marks;
    let spec = QueueSpec {
        capacity_packets: config.switch.queue_packets,
        capacity_bytes: config.switch.queue_bytes,
        ecn_threshold_packets: (marks == Marks::Threshold)
            .then_some(config.switch.ecn_threshold_packets),
    };
    // Over a shared buffer a queue holds what the dynamic threshold lets it, at most what one
    // queue alone may.
    let threshold = dynamic_threshold(&config.switch, ports, marks)?;
    let spec = match threshold {
        None => spec,
        Some(t) => QueueSpec {
            capacity_packets: t.longest_queue_packets(),
            ..spec
        },
    };
    let queues = (0..ports)
        .map(|p| {
            let queue = OutputQueue::new(cables.link(s, p), spec, config.run.warmup_ps());
            let queue = match cables.topology.peer(s, p) {
                Some(Attachment::SwitchPort { .. }) if config.switch.cut_through() => {
                    queue.into_cut_through()
                }
                _ => queue,
            };
            match config.switch.random_drop_packets {
                0 => queue,
                top_packets => queue.with_random_drop(RandomDrop {
                    top_packets,
                    probability: config.switch.random_drop_probability,
                    coin: stream(
                        config.run.seed,
                        ComponentId {
                            kind: stream_kind::ETHERNET_RANDOM_DROP,
                            index: (s * MAX_PORTS + p) as u32,
                        },
                    ),
                }),
            }
        })
        .collect();
    Ok(Ports::Fifo(queues, threshold.map(SharedBuffer::new)))
}

/// The fabric's longest host-to-host path: its links, each with the longest cable's
/// propagation (what the line-rate sender's default cap is derived from).
#[derive(Clone, Copy, Debug)]
struct LongestPath {
    links: u64,
    propagation_ps: TimePs,
}

/// The fabric's longest path between two hosts (the switch hops between their edge switches,
/// and each host's own cable), each link with the longest cable's propagation.
fn longest_path(topology: &Topology, table: &RouteTable, cables: &Cables) -> LongestPath {
    let propagation_ps = topology
        .switch_port_list()
        .map(|(s, p)| cables.link(s, p).propagation_ps)
        .max()
        .unwrap_or(0);
    let mut edges: Vec<usize> = (0..topology.endpoints())
        .map(|h| topology.endpoint_port(h).expect("hosts are cabled").0)
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let hops = edges
        .iter()
        .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
        .map(|(a, b)| table.hops(a, b))
        .max()
        .unwrap_or(0);
    LongestPath {
        links: hops as u64 + 2,
        propagation_ps,
    }
}

/// A host's settings on `link`: the `[host]` section's, with NDP's pacer at one pull per data
/// packet time on this host's link (NDP §3.2, scaled by htsim's pull rate modifier), its
/// senders' path labels, the line-rate sender's cap (one BDP of the fabric's `longest` path
/// at this host's rate, unless `host.inflight_cap_bytes` sets it), and what its switch's
/// ports need of its NIC.
fn host_params(config: &EthernetConfig, link: &Link, longest: LongestPath) -> HostParams {
    let h = &config.host;
    let mut params = h.params(config.run.warmup_ps());
    if h.transport == Transport::LineRate && h.inflight_cap_bytes.is_none() {
        let (mss, ack) = (h.packet_bytes as u64, h.ack_bytes as u64);
        let rtt_ps = base_rtt_ps(
            longest.links,
            link.rate_bps,
            longest.propagation_ps,
            mss,
            ack,
        );
        let cap = InflightCap::of_path(link.rate_bps, rtt_ps, mss);
        params.sender.window = WindowRule::Capped(cap);
    }
    HostParams {
        ndp_pull_interval_ps: h.ndp_pull_interval_ps(link.rate_bps),
        ndp_paths: (h.ndp.paths > 0).then(|| NdpPathSpec {
            paths: h.ndp.paths as u16,
            salt: mix(config.run.seed ^ NDP_PATH_SALT),
        }),
        into_cut_through: config.switch.cut_through(),
        pfc_classes: config.pfc_classes() as u8,
        bfc_queues: BfcSpec::queues_of(&config.switch),
        ..params
    }
}

/// Adds the pattern's flows `pairs` (sending host, receiving host) to `hosts`, each a TCP
/// flow or a connection of subflows, on its class.
fn add_flows(
    config: &EthernetConfig,
    pairs: Vec<(usize, usize)>,
    hosts: &mut [Host],
) -> Vec<FlowEnds> {
    let mut flows = Vec::with_capacity(pairs.len());
    for (k, (src, dst)) in pairs.into_iter().enumerate() {
        let size = config.traffic.flow_bytes;
        let at_dst = hosts[dst].inflows.len() as u32;
        let (at_src, subflows) = if config.transport().subflows {
            let single = k < config.traffic.single_path_flows as usize;
            let n = if single { 1 } else { config.host.subflows };
            let at_src = hosts[src].add_out_connection(dst as u16, at_dst, n, size);
            hosts[dst].add_in_connection(src as u16, at_src, n, size);
            (at_src, n)
        } else {
            let at_src = hosts[src].add_out(dst as u16, at_dst, size);
            hosts[dst].add_in(src as u16, at_src, size);
            (at_src, 1)
        };
        hosts[src].set_class(at_src, config.flow_class(k));
        flows.push(FlowEnds {
            src: src as u16,
            dst: dst as u16,
            at_src,
            at_dst,
            subflows,
        });
    }
    flows
}

impl Ethernet {
    fn hosts(&self) -> impl Iterator<Item = &Host> {
        self.fabric.nodes()[self.switches..]
            .iter()
            .filter_map(|n| match n {
                EthernetNode::Host(h) => Some(h),
                EthernetNode::Switch(_) => None,
            })
    }

    fn switch_nodes(&self) -> impl Iterator<Item = &EthernetSwitch> {
        self.fabric.nodes()[..self.switches]
            .iter()
            .filter_map(|n| match n {
                EthernetNode::Switch(s) => Some(s),
                EthernetNode::Host(_) => None,
            })
    }
}

impl FabricModel for Ethernet {
    type Node = EthernetNode;
    type Router = FabricRouter;

    fn fabric(&self) -> &Fabric<EthernetNode, FabricRouter> {
        &self.fabric
    }

    fn fabric_mut(&mut self) -> &mut Fabric<EthernetNode, FabricRouter> {
        &mut self.fabric
    }

    /// Packets (data and ACKs) that reached their host.
    fn items_delivered(&self) -> u64 {
        self.hosts().map(|h| h.counters.packets_received).sum()
    }

    /// Each flow's goodput over the interval ending at `at_ps`.
    fn sample_own(&mut self, at_ps: TimePs) {
        let Some(every_ns) = self.config.run.sample_ns else {
            return;
        };
        let hosts = &self.fabric.nodes()[self.switches..];
        let bytes = self.flows.iter().map(|f| match &hosts[f.dst as usize] {
            EthernetNode::Host(h) => h.inflows[f.at_dst as usize].bytes,
            EthernetNode::Switch(_) => unreachable!("hosts follow the switches"),
        });
        self.flow_series.record(at_ps, every_ns, bytes);
    }

    /// The nodes and counts of partition `other`, and its flows' goodput series.
    fn absorb_partition(&mut self, other: &mut Self) {
        self.fabric.absorb(&mut other.fabric);
        self.flow_series.absorb(&other.flow_series);
    }

    /// A thousand packet times plus two of the longest retransmission timeouts.
    fn stuck_after_ps(&self) -> TimePs {
        self.stall_ps
    }

    fn stuck_report(&self) -> String {
        format!("{} packets in flight, none moved", self.fabric.cells_live())
    }
}

impl Design for Ethernet {
    fn end_ps(&self) -> TimePs {
        self.config.run.end_ps()
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        let (summary, tables) = self.finish(&clock)?;
        let perf = clock.perf(Some(("packet-hops", summary.packet_hops)));
        Ok(Report::new(&summary, &tables, perf))
    }
}

/// The run a scenario describes, advanced to `until_ps` (its end: `None`) without a stall: the
/// tests' way to a run whose state they inspect.
#[cfg(test)]
pub(crate) fn run_until(json: &str, until_ps: Option<TimePs>) -> (Ethernet, Clock) {
    run_built(build(json).unwrap(), until_ps)
}

/// Breaks every trimming or PFC switch port of `json`'s run on purpose (one data packet in
/// `lose_one_in` vanishes as it is sent, no counter changes), runs to `until_ps`, and checks
/// that the fault struck and that the packet account then fails: packets held are counted in
/// the ports' queues.
#[cfg(test)]
pub(crate) fn assert_lost_packets_fail_the_account(json: &str, lose_one_in: u64, until_ps: TimePs) {
    let mut ethernet = build(json).unwrap();
    for node in ethernet.fabric.nodes_mut() {
        if let EthernetNode::Switch(s) = node {
            assert!(s.inject_fault(crate::blocks::switch::Fault {
                lose_one_in: Some(lose_one_in),
                skip_slot_check: true,
                ..Default::default()
            }));
        }
    }
    let end_ps = ethernet.end_ps();
    let mut kernel = crate::engine::kernel::Kernel::new(ethernet, end_ps);
    kernel.advance(until_ps);
    let (ethernet, clock, _) = kernel.into_parts();
    let taken: u64 = ethernet
        .fabric
        .nodes()
        .iter()
        .map(|n| match n {
            EthernetNode::Switch(s) => s.fault_taken(),
            _ => 0,
        })
        .sum();
    assert!(taken >= 10, "the fault struck");
    crate::run::assert_unaccounted(ethernet.finish(&clock), None);
}

/// [`run_until`] of a run already built (which a test may have altered, to break a mechanism
/// on purpose).
#[cfg(test)]
pub(crate) fn run_built(ethernet: Ethernet, until_ps: Option<TimePs>) -> (Ethernet, Clock) {
    let end_ps = ethernet.end_ps();
    crate::engine::kernel::Kernel::run_until(ethernet, end_ps, until_ps.unwrap_or(end_ps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::run::{assert_conservation_fails, assert_unaccounted};

    /// A DCTCP permutation on a k = 4 fat-tree stopped halfway, packets everywhere.
    fn halfway() -> (Ethernet, Clock) {
        let json = r#"{"design": "ethernet", "run": {"seed": 2, "duration_ns": 2000000, "warmup_ns": 200000},
            "host": {"transport": "dctcp"}}"#;
        run_until(json, Some(1_000_000_000))
    }

    fn first_switch(ethernet: &mut Ethernet) -> &mut EthernetSwitch {
        match &mut ethernet.fabric.nodes_mut()[0] {
            EthernetNode::Switch(s) => s,
            EthernetNode::Host(_) => unreachable!("switches come first"),
        }
    }

    #[test]
    fn the_account_settles_where_packets_are() {
        let (ethernet, clock) = halfway();
        let (summary, _) = ethernet.finish(&clock).expect("balanced");
        assert!(summary.packets.packets_in_flight > 0 && summary.packets.packets_delivered > 0);
    }

    /// A drop counted for a packet still held breaks the balance.
    #[test]
    fn a_miscounted_drop_fails_the_run() {
        let (mut ethernet, clock) = halfway();
        first_switch(&mut ethernet).counters.packets_dropped += 1;
        assert_conservation_fails(ethernet.finish(&clock));
    }

    /// Two NDP senders of 40 packets each (9000 B, 10 Gbit/s) into host 0 of a star with
    /// 8-packet trimming queues, run until `until_ps`.
    fn ndp_incast(seed: u64, until_ps: TimePs) -> (Ethernet, Clock) {
        let json = format!(
            r#"{{"design": "ethernet", "run": {{"seed": {seed}, "duration_ns": 5000000, "warmup_ns": 0}},
            "topology": {{"kind": "star"}}, "routing": {{"mode": "spray"}},
            "switch": {{"queue_packets": 8, "port_kind": "trimming"}},
            "host": {{"transport": "ndp", "initial_cwnd_packets": 23}},
            "traffic": {{"pattern": "incast", "incast_host": 0, "senders": 2, "flow_bytes": 360000}}}}"#
        );
        run_until(&json, Some(until_ps))
    }

    /// 2-to-1: the initial windows (46 packets into one 8-packet queue) are trimmed, the
    /// trimmed packets resent on pulls, and every byte arrives at about line rate.
    #[test]
    fn an_ndp_incast_delivers_every_byte_at_line_rate_through_trimming() {
        let (ethernet, clock) = ndp_incast(1, 5_000_000_000);
        let (summary, _) = ethernet.finish(&clock).expect("balanced");
        let ndp = summary.ndp.expect("an NDP run");
        assert_eq!(summary.flows_completed, 2);
        for flow in &ethernet.hosts().next().unwrap().inflows {
            assert_eq!(flow.bytes, 360_000);
        }
        assert!(ndp.packets_trimmed > 10, "{ndp:?}");
        assert_eq!(
            ndp.headers_received, ndp.packets_trimmed,
            "every header arrived"
        );
        assert_eq!(ndp.nacks_sent, ndp.headers_received);
        assert_eq!(
            summary.senders.retransmissions, ndp.nacks_sent,
            "each NACK resent once"
        );
        assert_eq!(
            (summary.packets.packets_dropped, summary.senders.timeouts),
            (0, 0)
        );
        assert_eq!(summary.packets.packets_in_flight, 0);
        // 80 packets of 7.2 µs on the receiver's link: 576 µs, plus a round trip or two.
        let ideal_us = 80.0 * 7.2;
        let last_us = summary.fct_us.as_ref().expect("a flow completed").last;
        assert!(
            ideal_us < last_us && last_us < ideal_us + 40.0,
            "{last_us} µs"
        );
        // The pacer: at most one PULL per data packet time, from the first arrival.
        let receiver = ethernet.hosts().next().unwrap();
        assert!(receiver.counters.pulls_sent as f64 <= last_us / 7.2 + 1.0);
        assert!(receiver.counters.pulls_sent > 0);
    }

    /// Mid-run, with packets trimmed, resent and queued in trimming ports, the account
    /// settles; a drop counted for a packet still held breaks it.
    #[test]
    fn the_account_settles_with_trimmed_and_resent_packets() {
        let (mut ethernet, clock) = ndp_incast(1, 300_000_000);
        let (summary, _) = ethernet.finish(&clock).expect("balanced");
        let ndp = summary.ndp.unwrap();
        assert!(ndp.packets_trimmed > 0 && summary.senders.retransmissions > 0);
        assert!(summary.packets.packets_in_flight > 0);
        assert!(Node::<FabricRouter>::cells_held(first_switch(&mut ethernet)) > 0);
        first_switch(&mut ethernet).counters.packets_dropped += 1;
        assert_conservation_fails(ethernet.finish(&clock));
    }

    #[test]
    fn an_ndp_run_is_determined_by_its_seed() {
        let summary = |seed| {
            let (ethernet, clock) = ndp_incast(seed, 5_000_000_000);
            serde_json::to_string(&ethernet.finish(&clock).unwrap().0).unwrap()
        };
        assert_eq!(summary(4), summary(4));
        assert_ne!(summary(4), summary(5), "the trimming coin follows the seed");
    }

    /// A packet allocated but held nowhere (a lost handle) breaks the account.
    #[test]
    fn a_packet_held_nowhere_fails_the_run() {
        let (mut ethernet, clock) = halfway();
        ethernet.fabric.start(0, |_, ctx| {
            ctx.cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
        });
        assert_unaccounted(ethernet.finish(&clock), Some(1));
    }
}
