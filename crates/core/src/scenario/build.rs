//! What a validated scenario builds: its topology, its network, its traffic.

use std::sync::Arc;

use rand::seq::SliceRandom;

use super::*;
use crate::blocks::cell_network::{Layer1Plan, NetworkSpec};
use crate::blocks::flow_control::{FlowControlPlan, RxFlowControl};
use crate::blocks::link::Link;
use crate::blocks::port_set::MAX_PORTS;
use crate::blocks::switch::{SchedulerKind, SwitchSpec};
use crate::blocks::topology::{Clos, Topology, TopologyError};
use crate::blocks::traffic::{Arrival, Burst, Destinations, PacketSizes, TrafficSpec};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::time::serialization_ps;

impl Scenario {
    /// Parses and validates a scenario from JSON text.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = parse(text)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Length of one cell time on the links.
    pub fn cell_time_ps(&self) -> TimePs {
        let wire_bytes = self.cell.size_bytes as u64 + self.link.overhead_bytes as u64;
        serialization_ps(wire_bytes, self.link.rate_bps())
    }

    /// The switch scheduler as a building-block choice.
    pub fn scheduler(&self) -> SchedulerKind {
        let iterations = self.switch.iterations;
        match self.switch.scheduler {
            SchedulerName::OutputQueued => SchedulerKind::OutputQueued,
            SchedulerName::Fifo => SchedulerKind::Fifo,
            SchedulerName::Islip => SchedulerKind::Islip { iterations },
            SchedulerName::Pim => SchedulerKind::Pim { iterations },
            SchedulerName::Safc => SchedulerKind::Safc,
            SchedulerName::VcSeparable | SchedulerName::VcIslip => SchedulerKind::VirtualChannel,
        }
    }

    /// The packet size distribution.
    pub fn packet_sizes(&self) -> PacketSizes {
        let t = &self.traffic;
        match (t.packet_bytes_min, t.packet_bytes_max) {
            (Some(min), Some(max)) => PacketSizes::Uniform { min, max },
            _ => PacketSizes::Fixed(t.packet_bytes.unwrap_or(self.cell.payload_bytes())),
        }
    }

    /// The arrival process.
    pub fn arrival(&self) -> Arrival {
        let t = &self.traffic;
        match t.arrival {
            ArrivalName::Bernoulli => Arrival::Bernoulli,
            ArrivalName::Bursty => {
                let from_bytes = t
                    .burst_mean_bytes
                    .map(|b| b / self.cell.payload_bytes() as f64);
                let cells = t.burst_mean_cells.or(from_bytes);
                Arrival::Bursty(match (t.burst_packets, t.burst_mean_packets) {
                    (BurstPacketsName::Whole, Some(mean_packets)) => {
                        Burst::WholePackets { mean_packets }
                    }
                    (BurstPacketsName::Fixed, packets) => Burst::FixedPackets {
                        packets: packets.expect("validated: a fixed burst has a count") as u32,
                    },
                    (BurstPacketsName::Whole, None) => Burst::WholeCells {
                        mean_cells: cells.expect("validated: bursty arrivals have a length"),
                    },
                    (BurstPacketsName::Cut, _) => Burst::CutCells {
                        mean_cells: cells.expect("validated: bursty arrivals have a length"),
                    },
                })
            }
        }
    }

    /// Whether the configuration promises to drop nothing: unbounded buffers, credits, or
    /// ON/OFF with at least a round trip of headroom above the OFF threshold.
    /// Every cable's flow control counts: the default's and those a topology file names.
    pub fn is_lossless(&self) -> bool {
        let link = &self.link;
        let kinds = self
            .flow_control_kinds()
            .unwrap_or_else(|_| vec![link.flow_control]);
        kinds
            .into_iter()
            .all(|kind| match (self.switch.buffer_cells, kind) {
                (None, _) | (_, FlowControlKind::Credit) => true,
                (Some(buffer), FlowControlKind::Onoff) => {
                    let off = link.off_threshold_cells.unwrap_or(buffer);
                    buffer.saturating_sub(off) as u64 >= self.round_trip_cells()
                }
                (Some(_), FlowControlKind::None) => false,
            })
    }

    /// The flow-control protocols the network's links use: those cables of a topology file
    /// name for themselves, and `link.flow_control` for every other cable.
    pub fn flow_control_kinds(&self) -> Result<Vec<FlowControlKind>, ScenarioError> {
        let default = self.link.flow_control;
        if self.topology.kind != TopologyName::File {
            return Ok(vec![default]);
        }
        let topology = self.topology()?;
        let mut kinds = Vec::new();
        for (s, p) in topology.switch_port_list() {
            let kind = topology.cable(s, p).flow_control.unwrap_or(default);
            if topology.peer(s, p).is_some() && !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        Ok(kinds)
    }

    /// Cells a transmitter can still put on a link after the receiver decides to stop it: the
    /// signal's and the last cells' propagation both ways, one cell being serialized at each
    /// end, rounded up.
    pub fn round_trip_cells(&self) -> u64 {
        let cell_ps = self.cell_time_ps();
        let scenario_links = (2 * self.longest_cable_ps()).div_ceil(cell_ps) + 2;
        // A cable of a topology file with a rate of its own: its sender fills the buffer at
        // that rate while its OFF signal travels back.
        let own_cables = self
            .cable_cell_times_ps()
            .into_iter()
            .map(|(propagation_ps, cell_ps)| (2 * propagation_ps).div_ceil(cell_ps) + 2);
        own_cables.fold(scenario_links, u64::max)
    }

    /// Every cable of a topology file or a Clique as (propagation, cell time on it), where it has a rate,
    /// overhead or length of its own.
    pub(super) fn cable_cell_times_ps(&self) -> Vec<(TimePs, TimePs)> {
        if !matches!(
            self.topology.kind,
            TopologyName::File | TopologyName::Clique
        ) {
            return Vec::new();
        }
        let Ok(topology) = self.topology() else {
            return Vec::new();
        };
        let link = &self.link;
        topology
            .switch_port_list()
            .map(|(s, p)| topology.cable(s, p))
            .filter(|cable| !cable.is_default())
            .map(|cable| {
                let rate_bps = cable.rate_bps.unwrap_or(link.rate_bps());
                let overhead = cable.overhead_bytes.unwrap_or(link.overhead_bytes) as u64;
                let wire_bytes = self.cell.size_bytes as u64 + overhead;
                (
                    cable.propagation_ps.unwrap_or(link.propagation_ps()),
                    serialization_ps(wire_bytes, rate_bps.max(1)),
                )
            })
            .collect()
    }

    /// The cabling the topology section describes.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let mut topology = self.shape()?;
        let global_ns = self.topology.global_propagation_ns;
        if self.topology.kind == TopologyName::Clique {
            let clique = &self.topology.clique;
            clique.set_link_facts(&mut topology, global_ns.unwrap_or(self.link.propagation_ns));
        } else if let Some(ns) = global_ns {
            topology.set_global_cable_delay(ps_from_ns(ns));
        }
        if let Some(ns) = self.topology.host_propagation_ns {
            for host in 0..topology.endpoints() {
                let (switch, port) = topology.endpoint_port(host).expect("hosts are cabled");
                let mut cable = topology.cable(switch, port);
                cable.propagation_ps = Some(ps_from_ns(ns));
                topology.set_cable(switch, port, cable);
            }
        }
        self.check_layer1_cables(&topology)?;
        Ok(topology)
    }

    /// Cables with bit errors (their own `ber`, or the links') run RIFL Layer 1, which works in
    /// the rack's whole cell times: refused outside design `rifl`, on a cable of its own rate or
    /// overhead, or over a cable whose propagation is not a whole number of cell times.
    fn check_layer1_cables(&self, topology: &Topology) -> Result<(), ScenarioError> {
        let link_errors = !self.link.bit_errors()?.is_error_free();
        let cell_ps = self.cell_time_ps();
        for (switch, port) in topology.switch_port_list() {
            let cable = topology.cable(switch, port);
            if !cable.ber.map_or(link_errors, |ber| ber > 0.0) {
                continue;
            }
            let key = if cable.ber.is_some() {
                "topology.file"
            } else {
                "link.ber"
            };
            let at = |what: String| {
                invalid(
                    key,
                    format!("the cable at switch {switch} port {port}: {what}"),
                )
            };
            if self.design.as_deref() != Some("rifl") {
                return Err(at("bit errors are corrected by RIFL Layer 1 retransmission: expected design = \"rifl\" (or ber=0)".into()));
            }
            if cable.rate_bps.is_some() || cable.overhead_bytes.is_some() {
                return Err(at("RIFL Layer 1 works in the rack's cell times: a cable with bit errors takes the link's rate_gbps and overhead_bytes".into()));
            }
            let propagation_ps = cable.propagation_ps.unwrap_or(self.link.propagation_ps());
            if propagation_ps < cell_ps || !propagation_ps.is_multiple_of(cell_ps) {
                return Err(at(format!(
                    "RIFL Layer 1 acts on whole frames: expected a propagation of a whole number (at least one) of {} ns cell times, got {} ns",
                    cell_ps as f64 / 1e3,
                    propagation_ps as f64 / 1e3
                )));
            }
        }
        Ok(())
    }

    /// The longest cable's propagation delay (what a flow-control round trip takes).
    pub fn longest_cable_ps(&self) -> TimePs {
        let cables = self.topology().map_or(0, |t| {
            t.switch_port_list()
                .filter_map(|(s, p)| t.cable(s, p).propagation_ps)
                .max()
                .unwrap_or(0)
        });
        cables.max(self.link.propagation_ps())
    }

    /// The named shape, before cables between groups get their own delay.
    fn shape(&self) -> Result<Topology, ScenarioError> {
        let t = &self.topology;
        let ports = self.switch.ports as usize;
        let shape = |key: &str, e: TopologyError| invalid(key, e.to_string());
        Ok(match t.kind {
            TopologyName::Star => Topology::star(ports),
            TopologyName::TwoSwitch => Topology::two_switch(ports, t.links as usize),
            TopologyName::LeafSpine => Topology::leaf_spine(
                t.leaves as usize,
                t.spines as usize,
                t.hosts_per_leaf as usize,
            ),
            TopologyName::FatTree => {
                Topology::fat_tree(t.k as usize).map_err(|e| shape("topology.k", e))?
            }
            TopologyName::Clos => Topology::clos(self.clos()).map_err(|e| match e {
                TopologyError::Parameter { name, message } => {
                    invalid(&format!("topology.{name}"), message)
                }
                e => shape("topology.radix", e),
            })?,
            TopologyName::Dragonfly => Topology::dragonfly(
                t.hosts_per_router as usize,
                t.routers_per_group as usize,
                t.global_links_per_router as usize,
                t.groups as usize,
            )
            .map_err(|e| shape("topology.groups", e))?,
            TopologyName::Clique => Topology::clique(t.clique.spec()).map_err(|e| match e {
                TopologyError::Parameter { name, message } => {
                    invalid(&format!("topology.clique.{name}"), message)
                }
                e => shape("topology.clique", e),
            })?,
            TopologyName::File => {
                let path = t.file.as_deref().ok_or_else(|| {
                    invalid(
                        "topology.file",
                        "required by kind = \"file\": the path of a topology file",
                    )
                })?;
                let text = std::fs::read_to_string(path)
                    .map_err(|e| invalid("topology.file", format!("cannot read {path}: {e}")))?;
                Topology::from_file_text(&text)
                    .map_err(|e| invalid("topology.file", format!("{path}: {e}")))?
            }
        })
    }

    /// The Clos the topology section describes.
    fn clos(&self) -> Clos {
        let t = &self.topology;
        let [tiers, radix, hosts_per_edge, uplinks_per_edge, bundle] = sizes([
            t.tiers,
            t.radix,
            t.hosts_per_edge,
            t.uplinks_per_edge,
            t.bundle,
        ]);
        Clos {
            tiers,
            radix,
            hosts_per_edge,
            uplinks_per_edge,
            bundle,
            edges: t.edges.map(|e| e as usize),
        }
    }

    /// Hosts in the topology.
    pub fn terminals(&self) -> u32 {
        let t = &self.topology;
        match t.kind {
            TopologyName::Star => self.switch.ports,
            TopologyName::TwoSwitch => 2 * (self.switch.ports.saturating_sub(t.links)),
            TopologyName::LeafSpine => t.leaves * t.hosts_per_leaf,
            TopologyName::FatTree => t.k.saturating_pow(3) / 4,
            TopologyName::Clos => self.clos().edge_count().map_or(0, |edges| {
                (edges as u64 * t.hosts_per_edge as u64).min(u32::MAX as u64) as u32
            }),
            TopologyName::Dragonfly => t
                .hosts_per_router
                .saturating_mul(t.routers_per_group)
                .saturating_mul(t.groups),
            TopologyName::Clique => t.clique.hosts(),
            TopologyName::File => self.topology().map_or(0, |t| t.endpoints() as u32),
        }
    }

    /// Link-level flow control as a building-block choice, cable by cable.
    pub fn flow_control(&self) -> FlowControlPlan {
        let link = &self.link;
        FlowControlPlan {
            default: link.flow_control,
            off_at_cells: link.off_threshold_cells.unwrap_or(0),
            on_at_cells: link.on_threshold_cells.unwrap_or(0),
        }
    }

    /// The network a scenario's switch, link, cell, NIC and traffic sections describe, over
    /// `topology`; shared by every design built on a `Network`.
    pub fn network_spec(&self, design: &'static str, topology: Topology) -> NetworkSpec {
        let link = Link::new(self.link.rate_bps(), self.link.propagation_ps())
            .with_overhead(self.link.overhead_bytes);
        let sw = &self.switch;
        NetworkSpec {
            design,
            scheduler: sw.scheduler.as_str().to_string(),
            routing: None,
            seed: self.run.seed,
            destinations: self.destinations(&topology),
            topology,
            switch: SwitchSpec {
                ports: sw.ports as usize,
                cell_bytes: self.cell.size_bytes as u64,
                scheduler: self.scheduler(),
                buffer_cells: sw.buffer_cells,
                per_voq_buffers: sw.per_voq_buffers.unwrap_or(false),
                batcher_banyan: sw.batcher_banyan.unwrap_or(false),
                rx_flow_control: RxFlowControl::None,
                out_link: link.clone(),
                pipeline_ps: ps_from_ns(sw.pipeline_ns),
            },
            link,
            flow_control: self.flow_control(),
            traffic: self.traffic_spec(),
            nic_queue_cells: self.nic.queue_cells,
            warmup_ps: self.warmup_ps(),
            end_ps: self.end_ps(),
            lossless: self.is_lossless(),
            layer1: Layer1Plan {
                bit_errors: self.link.bit_errors().expect("validated"),
                in_band_flow_control: self.link.in_band_flow_control,
                frame_bytes: self.link.frame_bytes,
            },
            vc: self.vc_spec(),
            gnet: self.gnet_spec(),
            trace_fraction: self.trace_fraction(),
            failures: self.scheduled_failures(),
        }
    }

    /// When statistics start.
    pub fn warmup_ps(&self) -> TimePs {
        self.run.warmup_ps()
    }

    /// When the run ends.
    pub fn end_ps(&self) -> TimePs {
        self.run.end_ps()
    }

    /// What every terminal's source offers (a GNet host's, under `[gnet]`).
    pub fn traffic_spec(&self) -> TrafficSpec {
        match &self.gnet {
            Some(gnet) => self.gnet_traffic_spec(gnet),
            None => self.plain_traffic_spec(),
        }
    }

    /// The time the hosts' links take to send `bytes` (and the links' per-frame overhead).
    pub(super) fn link_frame_ps(&self, bytes: u32) -> TimePs {
        let wire_bytes = bytes as u64 + self.link.overhead_bytes as u64;
        serialization_ps(wire_bytes, self.link.rate_bps())
    }

    /// What a plain host's source offers: the traffic section in the fabric's cells.
    pub(super) fn plain_traffic_spec(&self) -> TrafficSpec {
        TrafficSpec {
            load: self.traffic.load,
            arrival: self.arrival(),
            sizes: self.packet_sizes(),
            cell_payload_bytes: self.cell.payload_bytes(),
            slot_ps: self.cell_time_ps(),
            stop_ps: self.end_ps(),
            bytes_per_pair: self.traffic.bytes_per_pair,
            broadcast_fraction: self.traffic.broadcast_fraction,
        }
    }

    /// Where each host of `topology` sends; the permutation is drawn from the run's seed.
    pub fn destinations(&self, topology: &Topology) -> Vec<Destinations> {
        let t = &self.traffic;
        let terminals = topology.endpoints();
        let mut permutation: Vec<u16> = (0..terminals as u16).collect();
        let id = ComponentId {
            kind: crate::blocks::stream_kind::PATTERN,
            index: 0,
        };
        permutation.shuffle(&mut stream(self.run.seed, id));
        let host_groups = host_groups(topology);
        let active = self.active_hosts(topology);
        (0..terminals)
            .map(|i| match (t.destinations, &active) {
                (DestinationName::Uniform, None) => Destinations::Uniform {
                    ports: terminals as u16,
                    include_self: t.include_self,
                },
                (DestinationName::Uniform, Some(hosts)) => match hosts.binary_search(&(i as u16)) {
                    Ok(at) => Destinations::Among {
                        hosts: hosts.clone(),
                        skip: (!t.include_self).then_some(at),
                    },
                    Err(_) => Destinations::Silent,
                },
                (DestinationName::Permutation, _) => Destinations::Fixed(permutation[i]),
                (DestinationName::Hotspot, _) => Destinations::Hotspot {
                    ports: terminals as u16,
                    port: t.hotspot_port as u16,
                    fraction: t.hotspot_fraction,
                },
                (DestinationName::GroupShift, _) => {
                    let at = host_groups.iter().position(|g| g.contains(&(i as u16)));
                    let next = &host_groups
                        [(at.expect("every host is in a group") + 1) % host_groups.len()];
                    Destinations::Range {
                        first: next.start,
                        count: next.end - next.start,
                    }
                }
                (DestinationName::Pairs, _) => t
                    .pairs
                    .iter()
                    .find(|[source, _]| *source as usize == i)
                    .map_or(Destinations::Silent, |[_, dst]| {
                        Destinations::Fixed(*dst as u16)
                    }),
            })
            .collect()
    }

    /// The hosts of `traffic.active_hosts` (uniform traffic), in increasing order: whole
    /// switches' hosts, from switches spread evenly over those with hosts (the last switch's
    /// in part where the count ends inside it); `None` where every host is active.
    pub fn active_hosts(&self, topology: &Topology) -> Option<Arc<[u16]>> {
        let t = &self.traffic;
        let active = t.active_hosts? as usize;
        if t.destinations != DestinationName::Uniform || active >= topology.endpoints() {
            return None;
        }
        let mut by_switch: Vec<Vec<u16>> = vec![Vec::new(); topology.switches()];
        for host in 0..topology.endpoints() {
            if let Some((switch, _)) = topology.endpoint_port(host) {
                by_switch[switch].push(host as u16);
            }
        }
        by_switch.retain(|hosts| !hosts.is_empty());
        let edges = by_switch.len();
        let chosen = (active * edges)
            .div_ceil(topology.endpoints())
            .clamp(1, edges);
        // Spread evenly, then the others in order (where switches hold unequal numbers of
        // hosts and the spread ones hold too few).
        let mut spread = vec![false; edges];
        (0..chosen).for_each(|j| spread[j * edges / chosen] = true);
        let order = (0..edges)
            .filter(|&e| spread[e])
            .chain((0..edges).filter(|&e| !spread[e]));
        let mut hosts: Vec<u16> = order
            .flat_map(|e| by_switch[e].iter().copied())
            .take(active)
            .collect();
        hosts.sort_unstable();
        Some(hosts.into())
    }

    /// The most ports a switch may have: bitmap schedulers match over 64-bit port sets; the
    /// output-queued switch keeps one queue per output and needs none.
    pub fn max_ports(&self) -> u32 {
        match self.switch.scheduler {
            SchedulerName::OutputQueued => MAX_PORTS_OUTPUT_QUEUED,
            _ => MAX_PORTS as u32,
        }
    }

    /// The port limit, said with its reason, for error messages.
    pub(super) fn port_limit(&self) -> String {
        format!(
            "{} ports for scheduler {:?}",
            self.max_ports(),
            self.switch.scheduler.as_str()
        )
    }
}

/// A topology section's counts, as written (`u32`), as the sizes a topology is built from.
pub(super) fn sizes<const N: usize>(counts: [u32; N]) -> [usize; N] {
    counts.map(|count| count as usize)
}

/// The hosts of each group of switches, as ranges of host indices in group order (the shapes
/// number hosts group by group); groups without hosts are left out.
fn host_groups(topology: &Topology) -> Vec<std::ops::Range<u16>> {
    let mut ranges: Vec<std::ops::Range<u16>> = Vec::new();
    let mut last_group = usize::MAX;
    for host in 0..topology.endpoints() {
        let (switch, _) = topology.endpoint_port(host).expect("hosts are cabled");
        let group = topology.group(switch);
        match ranges.last_mut() {
            Some(range) if group == last_group => range.end = host as u16 + 1,
            _ => ranges.push(host as u16..host as u16 + 1),
        }
        last_group = group;
    }
    ranges
}
