//! Building a Stardust run from its scenario, in three steps: the cables (each switch port's
//! link and the fabric's node numbering), the devices (an adapter for every edge switch, an
//! element for every other), and the flows (built-in sources inside the adapters, or transport
//! hosts cabled to their host ports).

use std::sync::Arc;

use super::adapter::ingress::IngressSpec;
use super::adapter::keys::{CreditScheduler, RequestMode, UnusedCredit, VoqKeying};
use super::adapter::low_latency::LowLatencyBucket;
use super::adapter::memory::SharedMemory;
use super::adapter::{Adapter, AdapterSpec, EgressSpec, FciReaction, Flow, Foreground};
use super::element::{Congestion, Element, ElementSpec};
use super::reach::{self, Planned, ReachMode};
use super::{
    addressing, edges, flows, foreground, Addressing, CellFormat, HostFlow, Stardust,
    StardustConfig, StardustNode,
};
use crate::blocks::ethernet::host::{FlowSeries, Host, HostParams};
use crate::blocks::ethernet::opening::open_flows;
use crate::blocks::fabric::partition::Partition;
use crate::blocks::fabric::{Fabric, Wiring};
use crate::blocks::link::Link;
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::routing::{mode, FabricRouter, RouteTable};
use crate::blocks::stream_kind;
use crate::blocks::topology::{Attachment, Topology};
use crate::blocks::transport::Transport;
use crate::engine::rng::{stream, ComponentId};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs};
use crate::scenario::{invalid, ScenarioError};

/// The cables of a fabric and how its switches became nodes: adapters are nodes
/// `0..adapters` (adapter `i` is switch `edges[i]`), elements follow.
struct Cables<'a> {
    config: &'a StardustConfig,
    topology: &'a Topology,
    edges: Vec<usize>,
    /// Each switch's node.
    node_of: Vec<usize>,
    /// Each node's switch.
    switch_of_node: Vec<usize>,
    /// Per switch and port: an adapter's uplink number (`u16::MAX` for its host ports), or
    /// an element's port.
    uplink_of_port: Vec<Vec<u16>>,
}

impl Cables<'_> {
    /// True if switch `s` is an adapter.
    fn is_adapter(&self, s: usize) -> bool {
        self.node_of[s] < self.edges.len()
    }

    /// The link each way over the cable on switch port (s, p): a host's at the host rate.
    fn link(&self, s: usize, p: usize) -> Link {
        self.topology.link_over(s, p, &self.config.link)
    }

    /// The longest propagation delay of any cable.
    fn longest_ps(&self) -> TimePs {
        let ports = self.topology.switch_port_list();
        ports
            .map(|(s, p)| self.link(s, p).propagation_ps)
            .max()
            .unwrap_or(0)
    }

    /// Adapter `s`'s uplinks.
    fn uplinks(&self, s: usize) -> usize {
        self.uplink_of_port[s]
            .iter()
            .filter(|&&u| u != u16::MAX)
            .count()
    }
}

/// Numbers the nodes and the adapters' uplinks; every adapter needs a link to an element.
fn cables<'a>(
    config: &'a StardustConfig,
    topology: &'a Topology,
) -> Result<Cables<'a>, ScenarioError> {
    let edge_of = edges(topology);
    let a = edge_of.len();
    let mut node_of = vec![0usize; topology.switches()];
    let mut switch_of_node = edge_of.clone();
    for (s, node) in node_of.iter_mut().enumerate() {
        match edge_of.iter().position(|&e| e == s) {
            Some(adapter) => *node = adapter,
            None => {
                *node = switch_of_node.len();
                switch_of_node.push(s);
            }
        }
    }
    let is_adapter = |s: usize| node_of[s] < a;
    let uplink_of_port: Vec<Vec<u16>> = (0..topology.switches())
        .map(|s| {
            let mut next = 0u16;
            (0..topology.switch_ports(s))
                .map(|p| match topology.peer(s, p) {
                    Some(Attachment::SwitchPort { .. }) if is_adapter(s) => {
                        next += 1;
                        next - 1
                    }
                    _ if is_adapter(s) => u16::MAX,
                    _ => p as u16,
                })
                .collect()
        })
        .collect();
    for (adapter, &s) in edge_of.iter().enumerate() {
        if uplink_of_port[s].iter().all(|&u| u == u16::MAX) {
            return Err(invalid(
                "topology",
                format!("adapter {adapter} (switch {s}) has no link to a fabric element"),
            ));
        }
    }
    Ok(Cables {
        config,
        topology,
        edges: edge_of,
        node_of,
        switch_of_node,
        uplink_of_port,
    })
}

/// What every device is built from beyond its cables.
struct Common<'a> {
    addressing: &'a Arc<Addressing>,
    format: CellFormat,
    round_trip_ps: TimePs,
    flows: &'a [Flow],
    transport: Option<Transport>,
}

/// The devices with their peers and cable delays, the nodes' reachability start times, and
/// each host's line rate.
struct Devices {
    nodes: Vec<StardustNode>,
    peers: Vec<Vec<(u32, u16)>>,
    delays_ps: Vec<Vec<TimePs>>,
    reach_timers: Vec<(usize, TimePs, Vec<TimePs>)>,
    host_rate_bps: Vec<u64>,
}

/// An adapter for every edge switch, an element for every other.
fn devices(
    cables: &Cables<'_>,
    common: &Common<'_>,
    mut planned: Vec<Option<Planned>>,
    mut foreground: Option<Foreground>,
) -> Devices {
    let topology = cables.topology;
    let switches = topology.switches();
    let mut d = Devices {
        nodes: Vec::with_capacity(switches),
        peers: vec![Vec::new(); switches],
        delays_ps: vec![Vec::new(); switches],
        reach_timers: Vec::new(),
        host_rate_bps: vec![0; common.addressing.hosts()],
    };
    let mut nodes: Vec<Option<StardustNode>> = (0..switches).map(|_| None).collect();
    for (s, planned) in planned.iter_mut().enumerate() {
        let node = cables.node_of[s];
        let reach = planned.take().map(|p| {
            d.reach_timers.push((node, p.phase_ps, p.script_ps));
            p.reach
        });
        let mut ports = Vec::new();
        for p in 0..topology.switch_ports(s) {
            if cables.is_adapter(s) && cables.uplink_of_port[s][p] == u16::MAX {
                continue;
            }
            let peer = match topology.peer(s, p) {
                Some(Attachment::SwitchPort { switch, port }) => (
                    cables.node_of[switch] as u32,
                    cables.uplink_of_port[switch][port],
                ),
                _ => (node as u32, p as u16), // an unused port: routing never picks it
            };
            d.peers[node].push(peer);
            let mut link = cables.link(s, p);
            if !cables.is_adapter(s) {
                // The element's pipeline, at its outputs.
                link.propagation_ps += ps_from_ns(cables.config.element.latency_ns);
            }
            d.delays_ps[node].push(link.propagation_ps);
            ports.push(PriorityPort::new(link, cables.config.classes()));
        }
        nodes[node] = Some(if cables.is_adapter(s) {
            if common.transport.is_some() {
                // Host ports follow the uplinks; host `h` is node `switches + h`.
                for p in 0..topology.switch_ports(s) {
                    if let Some(Attachment::Endpoint(h)) = topology.peer(s, p) {
                        d.peers[node].push(((switches + h) as u32, 0));
                        d.delays_ps[node].push(cables.link(s, p).propagation_ps);
                    }
                }
            }
            let adapter = adapter(cables, common, s, ports, reach, &mut d.host_rate_bps);
            let index = node as u16;
            let fg = foreground.take_if(|f| common.addressing.adapter_of(f.src) == index);
            StardustNode::Adapter(Adapter::new(AdapterSpec {
                foreground: fg,
                ..adapter
            }))
        } else {
            StardustNode::Element(element(cables, common.format, s, ports, reach))
        });
    }
    d.nodes = nodes
        .into_iter()
        .map(|n| n.expect("every switch is a node"))
        .collect();
    d
}

/// Adapter switch `s` with its uplinks `ports` (its timed host, if any, is the caller's);
/// records its hosts' line rates.
fn adapter(
    cables: &Cables<'_>,
    common: &Common<'_>,
    s: usize,
    ports: Vec<PriorityPort>,
    reach: Option<reach::DeviceReach>,
    host_rate_bps: &mut [u64],
) -> AdapterSpec {
    let config = cables.config;
    let index = cables.node_of[s] as u16;
    let id = ComponentId {
        kind: stream_kind::STARDUST_ADAPTER,
        index: index as u32,
    };
    let flow_voqs = config.adapter.voqs == VoqKeying::PerFlow;
    let egress = egress_spec(cables, common, s, host_rate_bps, flow_voqs);
    // Per VOQ slot, the requester its requests name (reading R43).
    let requesters = if flow_voqs {
        egress.host_links.iter().map(|l| l.0).collect()
    } else {
        vec![index]
    };
    AdapterSpec {
        index,
        switch: s,
        addressing: common.addressing.clone(),
        uplinks: ports,
        uplink_of_port: cables.uplink_of_port[s].clone(),
        uplink_cells: config.adapter.uplink_cells,
        format: common.format,
        ingress: ingress_spec(config, common, requesters),
        flow_voqs,
        egress,
        reassembly_timeout_ps: ps_from_ns(config.adapter.reassembly_timeout_ns),
        flows: common
            .flows
            .iter()
            .filter(|f| common.transport.is_none() && common.addressing.adapter_of(f.src) == index)
            .copied()
            .collect(),
        foreground: None,
        rng: stream(config.run.seed, id),
        reach,
    }
}

/// Adapter switch `s`'s egress: its host links, credit scheduling, buffering and FCI reaction
/// (§3.3, §4.1, §4.2), its schedulers asked by hosts (per-flow VOQs) or adapters; records its
/// hosts' line rates.
fn egress_spec(
    cables: &Cables<'_>,
    common: &Common<'_>,
    s: usize,
    host_rate_bps: &mut [u64],
    flow_voqs: bool,
) -> EgressSpec {
    let (config, topology) = (cables.config, cables.topology);
    let host_links: Vec<(u16, u64, TimePs)> = (0..topology.switch_ports(s))
        .filter_map(|p| match topology.peer(s, p) {
            Some(Attachment::Endpoint(h)) => {
                let link = cables.link(s, p);
                host_rate_bps[h] = link.rate_bps;
                Some((h as u16, link.rate_bps, link.propagation_ps))
            }
            _ => None,
        })
        .collect();
    let port_rate = host_links.iter().map(|l| l.1).max().unwrap_or(0);
    let fabric_credit_period_ps = fabric_credit_period_ps(cables, s, &host_links, common.format);
    let stop_bytes = config.adapter.egress_stop_bytes.unwrap_or(
        2 * (config.credit.size_bytes as u64 + config.packet_bytes() as u64)
            + (3 * common.round_trip_ps as u128 * port_rate as u128 / 8_000_000_000_000) as u64,
    );
    let adapter = &config.adapter;
    EgressSpec {
        host_links,
        host_gap_bytes: adapter.host_gap_bytes,
        requesters: if flow_voqs {
            common.addressing.hosts()
        } else {
            common.addressing.adapters()
        },
        classes: config.classes(),
        class_weights: config.stardust.class_weights.clone(),
        credit_bytes: config.credit.size_bytes,
        credit_speedup: config.credit.speedup,
        fabric_credit_period_ps,
        counts_requests: config.credit.requests == RequestMode::Backlog,
        deficit_turns: config.credit.scheduler == CreditScheduler::Deficit,
        stop_bytes,
        buffer_bytes: adapter.egress_buffer_bytes.unwrap_or(2 * stop_bytes),
        fci: FciReaction {
            decrease: adapter.fci_decrease,
            increase: adapter.fci_increase,
            window_ps: adapter
                .fci_window_ns
                .map_or(common.round_trip_ps, ps_from_ns),
        },
        measure_from_ps: config.run.warmup_ps(),
        pause_hosts: config.pause_thresholds(),
    }
}

/// An adapter's ingress: its VOQs, credits and options (§3.3, §4.1, §5.6), its VOQ slots
/// naming `requesters`.
fn ingress_spec(config: &StardustConfig, common: &Common<'_>, requesters: Vec<u16>) -> IngressSpec {
    IngressSpec {
        requesters,
        hosts: common.addressing.hosts(),
        classes: config.classes(),
        voq_packets: config.adapter.voq_packets,
        credits: config.stardust.credits,
        weighted: config.stardust.class_weights.is_some(),
        credit_bytes: config.credit.size_bytes,
        keeps_unused: config.credit.unused == UnusedCredit::Kept,
        counts_requests: config.credit.requests == RequestMode::Backlog,
        payload_bytes: common.format.payload_bytes,
        packing: config.stardust.cell_packing(),
        request_refresh_ps: (config.reachability.mode == ReachMode::Messages)
            .then(|| ps_from_ns(config.reachability.request_refresh_ns)),
        low_latency: low_latency_bucket(config),
        memory: config
            .adapter
            .ingress_buffer_bytes
            .map(|bytes| SharedMemory::new(bytes, config.run.warmup_ps())),
    }
}

/// An adapter's low-latency bound (§5.6), if it has low-latency VOQs (pull mode only): one
/// credit or one low-latency packet deep, whichever is larger (reading R41).
fn low_latency_bucket(config: &StardustConfig) -> Option<LowLatencyBucket> {
    let max_packet_bytes = config.adapter.low_latency_bytes?;
    let depth_bytes = max_packet_bytes.max(config.credit.size_bytes) as u64;
    let rate_bps = config.adapter.low_latency_rate_bps();
    config
        .stardust
        .credits
        .then(|| LowLatencyBucket::new(max_packet_bytes, rate_bps, depth_bytes))
}

/// Adapter `s`'s smallest time between two credits of all its ports together, if it has one
/// (§4.1: credits run "slightly above the egress port bandwidth ... and slightly below the
/// fabric speed-up, to avoid congestion"; reading R5): a credit's bytes at the fabric's payload
/// capacity into the adapter (its uplinks, net of cell headers) divided by 1 + `credit.speedup`.
/// Each port still issues at most its rate plus the speed-up; the bound binds only where all
/// ports together would ask more of the fabric than it carries (fs = 1 with cell headers).
/// `None` with `credit.below_fabric = false`.
fn fabric_credit_period_ps(
    cables: &Cables<'_>,
    s: usize,
    host_links: &[(u16, u64, TimePs)],
    format: CellFormat,
) -> Option<TimePs> {
    let config = cables.config;
    if !config.credit.below_fabric || host_links.is_empty() {
        return None;
    }
    let payload = format.payload_bytes as f64 / (format.payload_bytes + format.header_bytes) as f64;
    let uplink_bps: u64 = (0..cables.uplink_of_port[s].len())
        .filter(|&p| cables.uplink_of_port[s][p] != u16::MAX)
        .map(|p| cables.link(s, p).rate_bps)
        .sum();
    let fabric_payload_bps = uplink_bps as f64 * payload;
    let credit_bps = fabric_payload_bps / (1.0 + config.credit.speedup);
    Some((config.credit.size_bytes as f64 * 8e12 / credit_bps).round() as TimePs)
}

/// Element switch `s` with its ports `ports`.
fn element(
    cables: &Cables<'_>,
    format: CellFormat,
    s: usize,
    ports: Vec<PriorityPort>,
    reach: Option<reach::DeviceReach>,
) -> Element {
    let (config, topology) = (cables.config, cables.topology);
    let last_stage = (0..topology.switch_ports(s))
        .map(|p| match topology.peer(s, p) {
            Some(Attachment::SwitchPort { switch, .. }) => cables.is_adapter(switch),
            _ => false,
        })
        .collect();
    let element = &config.element;
    Element::new(ElementSpec {
        switch: s,
        ports,
        last_stage,
        format,
        queue_cells: element.queue_cells,
        fci_threshold_cells: element.fci_threshold_cells,
        cell_slot_ps: ps_from_ns(element.cell_slot_ns),
        congestion: if config.stardust.credits {
            Congestion::Pause {
                off_cells: element.pause_cells(),
                on_cells: element.pause_cells() / 2,
                pool_cells: element.queue_cells * topology.switch_ports(s) as u32,
            }
        } else {
            Congestion::Discard {
                early_cells: element.early_discard_cells(),
            }
        },
        measure_from_ps: config.run.warmup_ps(),
        reach,
    })
}

/// Builds the Stardust run a scenario (JSON text) describes.
pub fn build(json: &str) -> Result<Stardust, ScenarioError> {
    Ok(build_with(json, None)?.0)
}

/// Builds partition `me` of the run split into `parts` for as many threads, with the
/// partition (refused under `run.threads`, saying why, where the fabric cannot be split).
pub fn build_partition(
    json: &str,
    parts: usize,
    me: u16,
) -> Result<(Stardust, Partition), ScenarioError> {
    let (stardust, partition) = build_with(json, Some((parts, me)))?;
    Ok((stardust, partition.expect("asked for")))
}

/// [`build`], or its partition `part.1` of `part.0` where `part` is given.
fn build_with(
    json: &str,
    part: Option<(usize, u16)>,
) -> Result<(Stardust, Option<Partition>), ScenarioError> {
    let config = StardustConfig::from_json(json)?;
    let topology = config.topology()?;
    let table = RouteTable::new(&topology).map_err(|e| invalid("topology", e.to_string()))?;
    let addressing = Arc::new(addressing(&topology)?);
    let cables = cables(&config, &topology)?;
    let planned = reach::plan(
        &config.reachability,
        &config.failures,
        config.run.seed,
        &reach::Devices {
            topology: &topology,
            table: &table,
            edges: &cables.edges,
            uplink_of_port: &cables.uplink_of_port,
        },
        &addressing,
    )?;
    let format = CellFormat {
        header_bytes: config.cell.header_bytes,
        payload_bytes: config.payload_bytes(),
        control_bytes: config.cell.control_bytes,
        padded: !config.stardust.packing,
    };
    let cell_ps = serialization_ps(config.cell.size_bytes as u64, config.link.rate_bps());
    let longest_cable_ps = cables.longest_ps();
    let flows = flows(&config, &topology)?;
    check_pause_room(&config, &addressing)?;
    let common = Common {
        addressing: &addressing,
        format,
        round_trip_ps: round_trip_ps(&table, &cables.edges, cell_ps, longest_cable_ps),
        flows: &flows,
        transport: config.host.transport(),
    };
    let mut devices = devices(&cables, &common, planned, foreground(&config, &topology)?);
    let mut host_flows = Vec::new();
    if common.transport.is_some() {
        add_hosts(&cables, &addressing, &flows, &mut devices, &mut host_flows)?;
    }
    let mut receivers = vec![false; addressing.hosts()];
    for f in &flows {
        receivers[f.dst as usize] = true;
    }
    let a = addressing.adapters();
    let adapter_hops = (0..a * a)
        .map(|k| table.hops(cables.edges[k / a], cables.edges[k % a]) as u8)
        .collect();
    let host_rate_bps = std::mem::take(&mut devices.host_rate_bps);
    let (fabric, partition) = fabric(&cables, devices, table, cell_ps, part)?;
    let stardust = Stardust {
        fabric,
        transport_stall_ps: match common.transport {
            Some(_) => 2 * ps_from_ns(config.host.config.max_rto_ns),
            None => 0,
        },
        addressing,
        receivers,
        flows: flows.iter().map(|f| (f.src, f.dst)).collect(),
        host_flows,
        host_rate_bps,
        longest_cable_ps,
        cell_ps,
        flow_series: FlowSeries::default(),
        adapter_hops,
        config,
    };
    Ok((stardust, partition))
}

/// The transport hosts, cabled to their adapters' host ports, with their flows (and, on the
/// `fct` pattern, the flows they open during the run).
fn add_hosts(
    cables: &Cables<'_>,
    addressing: &Addressing,
    flows: &[Flow],
    devices: &mut Devices,
    host_flows: &mut Vec<HostFlow>,
) -> Result<(), ScenarioError> {
    let (config, topology) = (cables.config, cables.topology);
    let switches = topology.switches();
    let pairs: Vec<(usize, usize)> = flows
        .iter()
        .map(|f| (f.src as usize, f.dst as usize))
        .collect();
    let (mut hosts, wires) = transport_hosts(config, topology, &pairs, host_flows);
    if let Some(opening) = config.opening() {
        let sizes = config.traffic_keys()?.sizes()?;
        open_flows(
            &opening,
            sizes,
            config.run.seed,
            &devices.host_rate_bps,
            &mut hosts,
        )?;
    }
    for (host, (s, p, propagation_ps)) in wires.into_iter().enumerate() {
        let adapter = cables.node_of[s];
        let port = cables.uplinks(s) + addressing.port_of(host as u16);
        debug_assert_eq!(devices.peers[adapter][port].0 as usize, switches + host);
        debug_assert_eq!(topology.peer(s, p), Some(Attachment::Endpoint(host)));
        devices.peers.push(vec![(adapter as u32, port as u16)]);
        devices.delays_ps.push(vec![propagation_ps]);
    }
    devices
        .nodes
        .extend(hosts.into_iter().map(StardustNode::Host));
    Ok(())
}

/// The fabric of the devices, made partition `part.1` of `part.0` where `part` is given (and
/// the partition; refused, naming `run.threads`, where it cannot be split), then started:
/// adapters' sources first, then reachability timers, then transport hosts. Only cells cross
/// between devices, each at least its cable's delay after the event that sends it, and
/// signals (an element's pause), each its cable's delay after.
fn fabric(
    cables: &Cables<'_>,
    devices: Devices,
    table: RouteTable,
    cell_ps: TimePs,
    part: Option<(usize, u16)>,
) -> Result<(Fabric<StardustNode, FabricRouter>, Option<Partition>), ScenarioError> {
    let longest_cable_ps = cables.longest_ps();
    let config = cables.config;
    let node_count = devices.nodes.len();
    let wiring = Wiring {
        peers: devices.peers,
        delays_ps: devices.delays_ps,
        slotted: vec![false; node_count],
        sink: vec![false; node_count],
        end_ps: config.run.end_ps(),
        router_index: (0..node_count)
            .map(|n| cables.switch_of_node.get(n).copied())
            .collect(),
        slot_ps: cell_ps,
        per_voq: false,
        layer1: Vec::new(),
    };
    let mode = mode(&config.routing.mode).expect("validated");
    let router = FabricRouter::new(table, mode, config.run.seed, config.routing.spray_rounds);
    let mut fabric = Fabric::new(devices.nodes, router, wiring, config.run.warmup_ps());
    // Buckets of 1/32 cell time: with hundreds of devices, a quarter cell time held some 500
    // events, whose sort was a third of the run; 1/32 took 5% less wall time on the 432-host
    // permutation (finer ones run fewer instructions but miss the cache more).
    fabric.set_calendar(cell_ps / 32, 4 * (cell_ps + longest_cable_ps));
    let partition = part
        .map(|part| fabric.split(cables.topology, part, 0, true))
        .transpose()
        .map_err(|message| invalid("run.threads", message))?;
    for n in 0..cables.edges.len() {
        fabric.start(n, |node, ctx| {
            if let StardustNode::Adapter(adapter) = node {
                adapter.start(ctx);
            }
        });
    }
    for (node, phase_ps, script_ps) in devices.reach_timers {
        fabric.start(node, |_, ctx| reach::start(ctx, phase_ps, &script_ps));
    }
    for n in cables.topology.switches()..node_count {
        fabric.start(n, |node, ctx| {
            if let StardustNode::Host(host) = node {
                host.start(ctx);
            }
        });
    }
    Ok((fabric, partition))
}

/// The transport hosts, one per host of the topology, each with its cable's switch, port and
/// propagation delay, and their flows (the ends of `pairs`, appended to `host_flows`): the Ethernet
/// design's [`Host`] node, unchanged, on an adapter's host port.
fn transport_hosts(
    config: &StardustConfig,
    topology: &Topology,
    pairs: &[(usize, usize)],
    host_flows: &mut Vec<HostFlow>,
) -> (Vec<Host>, Vec<(usize, usize, TimePs)>) {
    let params = config.host.config.params(config.run.warmup_ps());
    let mut hosts = Vec::with_capacity(topology.endpoints());
    let mut wires = Vec::with_capacity(topology.endpoints());
    for h in 0..topology.endpoints() {
        let (s, p) = topology.endpoint_port(h).expect("hosts are cabled");
        let cable = topology.cable(s, p);
        let link = Link::new(
            cable.rate_bps.unwrap_or(config.link.host_rate_bps()),
            cable.propagation_ps.unwrap_or(config.link.propagation_ps()),
        );
        wires.push((s, p, link.propagation_ps));
        let params = HostParams {
            ndp_pull_interval_ps: config.host.config.ndp_pull_interval_ps(link.rate_bps),
            ..params
        };
        hosts.push(Host::new(h as u16, link, params));
    }
    let size = config.traffic.flow_bytes;
    for &(src, dst) in pairs {
        let at_dst = hosts[dst].inflows.len() as u32;
        if config.host.config.transport == Transport::Mptcp {
            let n = config.host.config.subflows;
            let at_src = hosts[src].add_out_connection(dst as u16, at_dst, n, size);
            hosts[dst].add_in_connection(src as u16, at_src, n, size);
        } else {
            let at_src = hosts[src].add_out(dst as u16, at_dst, size);
            hosts[dst].add_in(src as u16, at_src, size);
        }
        host_flows.push(HostFlow {
            src: src as u16,
            dst: dst as u16,
            at_dst,
        });
    }
    (hosts, wires)
}

/// With `adapter.pause_hosts`, an adapter's hosts share its VOQs: each may hold XOFF plus
/// its headroom in one VOQ (an incast's senders on one adapter share their destination's),
/// and all of them must fit, or a full VOQ drops what PFC let through.
fn check_pause_room(config: &StardustConfig, addressing: &Addressing) -> Result<(), ScenarioError> {
    let Some(t) = config.pause_thresholds() else {
        return Ok(());
    };
    let mut per_adapter = vec![0u32; addressing.adapters()];
    for h in 0..addressing.hosts() {
        per_adapter[addressing.adapter_of(h as u16) as usize] += 1;
    }
    let hosts = per_adapter.into_iter().max().unwrap_or(0);
    let needed = hosts * (t.xoff_packets + t.headroom_packets);
    if needed > config.adapter.voq_packets {
        return Err(invalid(
            "adapter.voq_packets",
            format!(
                "expected at least {needed} with adapter.pause_hosts = true: {hosts} hosts on an adapter share its VOQs, each holding up to adapter.pause_xoff_packets + adapter.pause_headroom_packets ({} + {})",
                t.xoff_packets, t.headroom_packets
            ),
        ));
    }
    Ok(())
}

/// A fabric round trip between the farthest adapters: every link twice, each a cell time plus
/// its propagation.
fn round_trip_ps(
    table: &RouteTable,
    edges: &[usize],
    cell_ps: TimePs,
    longest_cable_ps: TimePs,
) -> TimePs {
    let hops = edges
        .iter()
        .flat_map(|&from| edges.iter().map(move |&to| table.hops(from, to)))
        .max()
        .unwrap_or(0)
        .max(2) as TimePs;
    2 * hops * (cell_ps + longest_cable_ps)
}
