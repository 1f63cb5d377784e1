//! The checks a cell network's scenario passes before it runs, one function per concern.

use super::*;

/// The shortest cell time a run may have: cell times are whole picoseconds, so shorter ones
/// would round by more than 1%.
const MIN_CELL_TIME_PS: TimePs = 100;
use crate::blocks::routing::{mode, MODES};

impl Scenario {
    /// Every check, section by section.
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        self.run.validate()?;
        self.validate_delays()?;
        self.validate_switch()?;
        self.validate_cell_and_link()?;
        if self.nic.queue_cells == Some(0) {
            return Err(invalid(
                "nic.queue_cells",
                "expected at least one cell (omit it for an unbounded, open-loop NIC)",
            ));
        }
        self.validate_topology()?;
        self.validate_routing()?;
        self.validate_flow_control()?;
        self.validate_bit_errors()?;
        self.validate_vc()?;
        self.validate_gnet()?;
        self.validate_rma()?;
        self.validate_trace()?;
        self.validate_failures()?;
        self.validate_traffic(&self.traffic)
    }

    /// Every delay is zero or more nanoseconds.
    fn validate_delays(&self) -> Result<(), ScenarioError> {
        for (key, value) in [
            ("link.propagation_ns", self.link.propagation_ns),
            ("switch.pipeline_ns", self.switch.pipeline_ns),
            (
                "topology.global_propagation_ns",
                self.topology.global_propagation_ns.unwrap_or(0.0),
            ),
            (
                "topology.host_propagation_ns",
                self.topology.host_propagation_ns.unwrap_or(0.0),
            ),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(key, "expected a delay of zero or more nanoseconds"));
            }
        }
        Ok(())
    }

    /// The switch: its size, and the options its scheduler supports.
    fn validate_switch(&self) -> Result<(), ScenarioError> {
        let sw = &self.switch;
        if sw.ports == 0 || sw.ports > self.max_ports() {
            return Err(invalid(
                "switch.ports",
                format!("expected 1 to {}, got {}", self.port_limit(), sw.ports),
            ));
        }
        let voq = matches!(
            sw.scheduler,
            SchedulerName::Islip | SchedulerName::Pim | SchedulerName::Safc
        );
        if sw.per_voq_buffers == Some(true) && !voq {
            return Err(invalid(
                "switch.per_voq_buffers",
                format!(
                    "per-VOQ buffers need virtual output queues: expected scheduler islip, pim or safc, got {:?}",
                    sw.scheduler.as_str()
                ),
            ));
        }
        if sw.batcher_banyan == Some(true) && sw.scheduler == SchedulerName::OutputQueued {
            return Err(invalid(
                "switch.batcher_banyan",
                "the output-queued switch has no input-to-output network to model: expected an input-queued scheduler",
            ));
        }
        if sw.iterations == 0 || sw.iterations > 64 {
            return Err(invalid("switch.iterations", "expected 1 to 64 iterations"));
        }
        if sw.buffer_cells == Some(0) {
            return Err(invalid(
                "switch.buffer_cells",
                "expected at least one cell (omit it for unbounded buffers)",
            ));
        }
        Ok(())
    }

    /// The cell's size and payload, and a link rate at which a cell time is a whole number of
    /// picoseconds to within 1%.
    fn validate_cell_and_link(&self) -> Result<(), ScenarioError> {
        let (cell, link) = (&self.cell, &self.link);
        // Before the rate checks: a cell time is only defined for a cell of some size.
        if cell.size_bytes == 0 || cell.size_bytes > u16::MAX as u32 {
            return Err(invalid("cell.size_bytes", "expected 1 to 65535 bytes"));
        }
        if !(link.rate_gbps.is_finite() && link.rate_gbps >= 0.001) {
            return Err(invalid(
                "link.rate_gbps",
                "expected a rate of at least 0.001 Gbit/s",
            ));
        }
        if self.cell_time_ps() < MIN_CELL_TIME_PS {
            return Err(invalid(
                "link.rate_gbps",
                format!(
                    "a cell would take {} ps on the wire; time is counted in picoseconds, so expected a rate at which a cell takes at least {MIN_CELL_TIME_PS} ps",
                    self.cell_time_ps()
                ),
            ));
        }
        if cell
            .payload_bytes
            .is_some_and(|p| p == 0 || p > cell.size_bytes)
        {
            return Err(invalid(
                "cell.payload_bytes",
                "expected 1 to cell.size_bytes bytes",
            ));
        }
        Ok(())
    }

    /// At most [`MAX_HOSTS`] hosts, the error naming the key that sizes the shape.
    fn validate_host_count(&self) -> Result<(), ScenarioError> {
        let t = &self.topology;
        let hosts = self.terminals();
        if hosts as usize <= MAX_HOSTS {
            return Ok(());
        }
        let key = match t.kind {
            TopologyName::Star | TopologyName::TwoSwitch => "switch.ports",
            TopologyName::LeafSpine => "topology.leaves",
            TopologyName::FatTree => "topology.k",
            TopologyName::Clos => "topology.edges",
            TopologyName::Dragonfly => "topology.groups",
            TopologyName::Clique => "topology.clique.pods",
            TopologyName::File => "topology.file",
        };
        Err(invalid(
            key,
            format!(
                "this {} would have {hosts} hosts; at most {MAX_HOSTS} are supported",
                t.kind.as_str()
            ),
        ))
    }

    /// The shape's own keys fit switches of at most the largest port count.
    fn validate_topology(&self) -> Result<(), ScenarioError> {
        let t = &self.topology;
        let max = self.max_ports();
        self.validate_host_count()?;
        match t.kind {
            TopologyName::Star => Ok(()),
            TopologyName::TwoSwitch if t.links == 0 || t.links >= self.switch.ports => {
                Err(invalid(
                    "topology.links",
                    "expected 1 to switch.ports - 1 cables between the two switches",
                ))
            }
            TopologyName::TwoSwitch => Ok(()),
            TopologyName::LeafSpine => {
                if !(2..=max).contains(&t.leaves) {
                    return Err(invalid(
                        "topology.leaves",
                        format!("expected 2 to {max} leaves"),
                    ));
                }
                if t.spines == 0 || t.hosts_per_leaf == 0 || t.spines + t.hosts_per_leaf > max {
                    return Err(invalid(
                        "topology.hosts_per_leaf",
                        format!("expected hosts_per_leaf >= 1, spines >= 1 and hosts_per_leaf + spines <= {} (leaf ports)", self.port_limit()),
                    ));
                }
                Ok(())
            }
            TopologyName::FatTree if t.k > max => Err(invalid(
                "topology.k",
                format!("expected an even radix from 2 to {}", self.port_limit()),
            )),
            TopologyName::Dragonfly
                if t.hosts_per_router + t.routers_per_group + t.global_links_per_router
                    > max + 1 =>
            {
                Err(invalid(
                    "topology.routers_per_group",
                    format!("a router has hosts_per_router + routers_per_group - 1 + global_links_per_router ports: expected at most {}", self.port_limit()),
                ))
            }
            TopologyName::Clos
                if t.radix > max
                    || t.hosts_per_edge as u64 + t.uplinks_per_edge as u64 * t.bundle as u64
                        > max as u64 =>
            {
                Err(invalid(
                    "topology.radix",
                    format!("a fabric switch has radix ports and an edge hosts_per_edge + uplinks_per_edge · bundle: expected at most {}", self.port_limit()),
                ))
            }
            TopologyName::FatTree | TopologyName::Clos | TopologyName::Dragonfly => {
                self.topology().map(|_| ())
            }
            TopologyName::Clique if t.clique.spec().ports_per_tin() > max as usize => Err(invalid(
                "topology.clique.local_ports",
                format!("a TiN has hosts_per_tin + local_ports + global_ports ports: expected at most {}", self.port_limit()),
            )),
            TopologyName::Clique => {
                self.topology()?;
                let cell = &self.cell;
                t.clique
                    .validate(self.link.rate_gbps, cell.size_bytes, cell.payload_bytes)
            }
            TopologyName::File => self.validate_topology_file(),
        }
    }

    /// A topology file: no switch larger than a switch may be, and no cable so fast that its
    /// cell time would round by more than 1%.
    fn validate_topology_file(&self) -> Result<(), ScenarioError> {
        let topology = self.topology()?;
        let max = self.max_ports();
        if let Some(s) = (0..topology.switches()).find(|&s| topology.switch_ports(s) as u32 > max) {
            return Err(invalid(
                "topology.file",
                format!(
                    "switch {s} has {} ports; expected at most {}",
                    topology.switch_ports(s),
                    self.port_limit()
                ),
            ));
        }
        match self
            .cable_cell_times_ps()
            .into_iter()
            .find(|&(_, cell_ps)| cell_ps < MIN_CELL_TIME_PS)
        {
            Some((_, cell_ps)) => Err(invalid(
                "topology.file",
                format!("a cable's rate_gbps gives a cell time of {cell_ps} ps; expected at least {MIN_CELL_TIME_PS} ps (time is counted in picoseconds)"),
            )),
            None => Ok(()),
        }
    }

    fn validate_routing(&self) -> Result<(), ScenarioError> {
        let fabric = self.design.as_deref() == Some("cell_fabric");
        let Some(routing) = &self.routing else {
            return Ok(());
        };
        if !fabric {
            return Err(invalid(
                "routing",
                "only design \"cell_fabric\" routes by mode (single_switch has one path, rifl routes by source)",
            ));
        }
        let names = || MODES.iter().map(|m| m.name).collect::<Vec<_>>().join(", ");
        let Some(mode) = mode(&routing.mode) else {
            return Err(invalid(
                "routing.mode",
                format!("expected one of {}, got {:?}", names(), routing.mode),
            ));
        };
        let grouped = matches!(
            self.topology.kind,
            TopologyName::Dragonfly | TopologyName::Clique
        );
        if mode.needs_groups && !grouped {
            return Err(invalid(
                "routing.mode",
                format!(
                    "{} routes through an intermediate Dragonfly group: expected topology.kind = \"dragonfly\" or \"clique\" (got {:?})",
                    mode.name,
                    self.topology.kind.as_str()
                ),
            ));
        }
        if self.switch.per_voq_buffers == Some(true) && mode.plan.is_none() {
            return Err(invalid(
                "switch.per_voq_buffers",
                "per-VOQ flow control books the next switch's VOQ in advance: it needs routing.mode = \"deterministic\"",
            ));
        }
        if routing.spray_rounds == 0 {
            return Err(invalid(
                "routing.spray_rounds",
                "expected at least one pass per random order",
            ));
        }
        for (key, value) in [
            ("routing.minimal_weight", routing.minimal_weight),
            ("routing.nonminimal_weight", routing.nonminimal_weight),
            (
                "routing.nonminimal_bias_cells",
                routing.nonminimal_bias_cells,
            ),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(key, format!("expected zero or more, got {value}")));
            }
        }
        Ok(())
    }

    /// Bit errors run RIFL Layer 1 on every cable, which works in whole frame times.
    fn validate_bit_errors(&self) -> Result<(), ScenarioError> {
        let link = &self.link;
        if link.bit_errors()?.is_error_free() {
            return Ok(());
        }
        if self.design.as_deref() != Some("rifl") {
            let key = if link.ber > 0.0 {
                "link.ber"
            } else {
                "link.error_burst_ber"
            };
            return Err(invalid(
                key,
                "bit errors are corrected by RIFL Layer 1 retransmission: expected design = \"rifl\" (or no bit errors)",
            ));
        }
        if let Some(bytes) = link.frame_bytes {
            if !(bytes.is_power_of_two() && (8..=256).contains(&bytes)) {
                return Err(invalid(
                    "link.frame_bytes",
                    format!(
                        "RIFL Layer 1 frames are a power of two from 8 to 256 bytes, got {bytes}"
                    ),
                ));
            }
        }
        let cell_ps = self.cell_time_ps();
        let propagation_ps = link.propagation_ps();
        if propagation_ps < cell_ps || !propagation_ps.is_multiple_of(cell_ps) {
            return Err(invalid(
                "link.propagation_ns",
                format!(
                    "RIFL Layer 1 acts on whole frames: expected a whole number (at least one) of {} ns cell times, got {} ns",
                    cell_ps as f64 / 1e3,
                    link.propagation_ns
                ),
            ));
        }
        Ok(())
    }

    fn validate_flow_control(&self) -> Result<(), ScenarioError> {
        let link = &self.link;
        let kinds = self.flow_control_kinds()?;
        let Some(&kind) = kinds.iter().find(|&&k| k != FlowControlKind::None) else {
            return Ok(());
        };
        if self.uses_vcs() {
            // VC routers buffer per VC (`vc.buffer_cells`); `validate_vc` checks them.
            return Ok(());
        }
        let asked = if link.flow_control == kind {
            String::new()
        } else {
            format!(" (a cable of topology.file asks for {:?})", kind.as_str())
        };
        if !self.scheduler().is_input_buffered() {
            return Err(invalid(
                "link.flow_control",
                format!("flow control protects input buffers; the output_queued switch has none (use \"none\"){asked}"),
            ));
        }
        let Some(buffer) = self.switch.buffer_cells else {
            return Err(invalid(
                "switch.buffer_cells",
                format!("flow control needs a finite input buffer{asked}"),
            ));
        };
        if kinds.contains(&FlowControlKind::Onoff) {
            let off = link
                .off_threshold_cells
                .ok_or_else(|| invalid("link.off_threshold_cells", "required by onoff"))?;
            let on = link
                .on_threshold_cells
                .ok_or_else(|| invalid("link.on_threshold_cells", "required by onoff"))?;
            if off == 0 || off > buffer {
                return Err(invalid(
                    "link.off_threshold_cells",
                    "expected 1 to switch.buffer_cells",
                ));
            }
            if on >= off {
                return Err(invalid(
                    "link.on_threshold_cells",
                    "expected fewer cells than link.off_threshold_cells",
                ));
            }
        }
        Ok(())
    }

    /// A bursty source's length: exactly one of cells, bytes or packets, positive, and a count
    /// of packets only for whole packets.
    fn validate_bursts(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        let lengths = [
            ("traffic.burst_mean_cells", t.burst_mean_cells),
            ("traffic.burst_mean_bytes", t.burst_mean_bytes),
            ("traffic.burst_mean_packets", t.burst_mean_packets),
        ];
        for (key, value) in lengths {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(invalid(key, "expected a positive mean burst length"));
            }
        }
        let given: Vec<&str> = lengths
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| *k)
            .collect();
        if t.arrival == ArrivalName::Bursty && given.is_empty() {
            return Err(invalid(
                "traffic.arrival",
                "bursty arrivals need a mean burst length: set traffic.burst_mean_cells, traffic.burst_mean_bytes or traffic.burst_mean_packets",
            ));
        }
        if given.len() > 1 {
            return Err(invalid(
                given[1],
                format!(
                    "give one mean burst length, not both {} and {}",
                    given[0], given[1]
                ),
            ));
        }
        if t.burst_mean_packets.is_some() && t.burst_packets == BurstPacketsName::Cut {
            return Err(invalid(
                "traffic.burst_mean_packets",
                "a burst counted in packets keeps them whole: set traffic.burst_packets = \"whole\"",
            ));
        }
        let whole_count = t
            .burst_mean_packets
            .is_some_and(|n| n.fract() == 0.0 && n <= 1e9);
        if t.burst_packets == BurstPacketsName::Fixed && !whole_count {
            return Err(invalid(
                "traffic.burst_packets",
                "a fixed burst has exactly traffic.burst_mean_packets packets: expected that key, a whole number",
            ));
        }
        Ok(())
    }

    /// Pairs: at least one, hosts that exist, a source to another host, each source once.
    fn validate_pairs(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        let key = "traffic.pairs";
        if t.destinations != DestinationName::Pairs {
            return Ok(());
        }
        if t.pairs.is_empty() {
            return Err(invalid(
                key,
                "traffic.destinations = \"pairs\" needs at least one [source, destination] pair",
            ));
        }
        let hosts = self.terminals();
        let mut sources = std::collections::BTreeSet::new();
        for &[source, destination] in &t.pairs {
            if source >= hosts || destination >= hosts {
                return Err(invalid(
                    key,
                    format!("expected host indices below {hosts}, got [{source}, {destination}]"),
                ));
            }
            if source == destination {
                return Err(invalid(
                    key,
                    format!("expected a source and another host as its destination, got [{source}, {destination}]"),
                ));
            }
            if !sources.insert(source) {
                return Err(invalid(
                    key,
                    format!(
                        "host {source} is the source of two pairs: a source has one destination"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Active hosts: uniform traffic, at least two (one that may address itself), at most
    /// every host, no finite workload or broadcasts (they reach every host).
    fn validate_active_hosts(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        let (Some(active), DestinationName::Uniform) = (t.active_hosts, t.destinations) else {
            return Ok(());
        };
        let (hosts, least) = (self.terminals(), if t.include_self { 1 } else { 2 });
        if active < least || active > hosts {
            return Err(invalid(
                "traffic.active_hosts",
                format!("expected {least} to {hosts} hosts (the topology's), got {active}"),
            ));
        }
        if t.bytes_per_pair.is_some() || t.broadcast_fraction > 0.0 {
            return Err(invalid(
                "traffic.active_hosts",
                "a finite workload (traffic.bytes_per_pair) and broadcasts (traffic.broadcast_fraction) reach every host: expected neither with active_hosts",
            ));
        }
        Ok(())
    }

    fn validate_traffic(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        // Hosts making 1RMA reads have traffic without IP packets.
        let reads_only = self.rma.is_some() && t.load == 0.0;
        if !super::is_load(t.load) && !reads_only {
            return Err(invalid(
                "traffic.load",
                format!(
                    "expected a fraction of line rate from {} to 1 (a run without traffic measures nothing), got {}",
                    super::MIN_LOAD,
                    t.load
                ),
            ));
        }
        self.validate_bursts(t)?;
        self.validate_pairs(t)?;
        self.validate_active_hosts(t)?;
        if let Some(bytes) = t.bytes_per_pair {
            if bytes == 0 {
                return Err(invalid(
                    "traffic.bytes_per_pair",
                    "expected a positive number of bytes per source-destination pair",
                ));
            }
            if t.destinations != DestinationName::Uniform {
                return Err(invalid(
                    "traffic.bytes_per_pair",
                    "a finite workload sends to every host: expected traffic.destinations = \"uniform\"",
                ));
            }
        }
        let grouped = has_groups(self.topology.kind);
        if t.destinations == DestinationName::GroupShift && !grouped {
            return Err(invalid(
                "traffic.destinations",
                "group_shift sends each group's hosts to the next group: expected topology.kind = \"fat_tree\" or \"clos\" (pods), \"dragonfly\" or \"clique\"",
            ));
        }
        if t.hotspot_port >= self.terminals() {
            return Err(invalid(
                "traffic.hotspot_port",
                "expected a terminal index below the number of hosts",
            ));
        }
        if !(0.0..=1.0).contains(&t.hotspot_fraction) {
            return Err(invalid(
                "traffic.hotspot_fraction",
                "expected a fraction from 0 to 1",
            ));
        }
        self.validate_broadcast(t)?;
        if !t.include_self && self.terminals() < 2 {
            return Err(invalid(
                "traffic.include_self",
                "a one-port switch can only send to itself",
            ));
        }
        validate_packet_sizes(t)
    }
}

/// A fixed packet size of at least a byte, or a range of sizes, not both.
fn validate_packet_sizes(t: &TrafficConfig) -> Result<(), ScenarioError> {
    if t.packet_bytes == Some(0) {
        return Err(invalid(
            "traffic.packet_bytes",
            "expected at least one byte",
        ));
    }
    match (t.packet_bytes_min, t.packet_bytes_max) {
        (None, None) => Ok(()),
        (Some(min), Some(max)) if min >= 1 && min <= max && t.packet_bytes.is_none() => Ok(()),
        (Some(_), Some(_)) if t.packet_bytes.is_some() => Err(invalid(
            "traffic.packet_bytes",
            "give packet_bytes or packet_bytes_min/max, not both",
        )),
        (Some(_), Some(_)) => Err(invalid(
            "traffic.packet_bytes_min",
            "expected 1 <= packet_bytes_min <= packet_bytes_max",
        )),
        (Some(_), None) => Err(invalid(
            "traffic.packet_bytes_max",
            "required with packet_bytes_min",
        )),
        (None, Some(_)) => Err(invalid(
            "traffic.packet_bytes_min",
            "required with packet_bytes_max",
        )),
    }
}

impl Scenario {
    /// Broadcasts: a fraction, only where switches forward Dst Port 255 (RIFL), and not with a
    /// budget per pair.
    fn validate_broadcast(&self, t: &TrafficConfig) -> Result<(), ScenarioError> {
        let key = "traffic.broadcast_fraction";
        if !(0.0..=1.0).contains(&t.broadcast_fraction) {
            return Err(invalid(key, "expected a fraction of packets from 0 to 1"));
        }
        if t.broadcast_fraction == 0.0 {
            return Ok(());
        }
        if self.design.as_deref() != Some("rifl") {
            return Err(invalid(
                key,
                "only RIFL switches forward broadcasts (Dst Port 255): expected design = \"rifl\", or leave the key out",
            ));
        }
        if t.bytes_per_pair.is_some() {
            return Err(invalid(
                key,
                "a finite workload sends bytes to one host at a time: expected no traffic.bytes_per_pair with broadcasts",
            ));
        }
        Ok(())
    }
}

/// True for the shapes whose switches form groups that `group_shift` shifts by: a fat-tree's or
/// a Clos's pods, a Dragonfly's groups, a Clique's pods.
fn has_groups(kind: TopologyName) -> bool {
    matches!(
        kind,
        TopologyName::FatTree | TopologyName::Clos | TopologyName::Dragonfly | TopologyName::Clique
    )
}

/// The `trace` section's checks (kept here, beside the other sections', so `trace.rs` needs
/// nothing of the scenario).
impl Scenario {
    /// The fraction of cells traced (0 without a `trace` section).
    pub fn trace_fraction(&self) -> f64 {
        self.trace.as_ref().map_or(0.0, |t| t.fraction)
    }

    /// A fraction from 0 to 1, and VC routers to record the hops.
    pub(super) fn validate_trace(&self) -> Result<(), ScenarioError> {
        let fraction = self.trace_fraction();
        if !(0.0..=1.0).contains(&fraction) {
            return Err(invalid(
                "trace.fraction",
                format!("expected a fraction of the cells from 0 to 1, got {fraction}"),
            ));
        }
        if fraction > 0.0 && !self.uses_vcs() {
            return Err(invalid(
                "trace.fraction",
                "cells are traced through VC routers: expected switch.scheduler = \"vc_separable\" or \"vc_islip\"",
            ));
        }
        Ok(())
    }
}

/// The `failures` list's checks (kept here, as the `trace` section's, so `failures.rs` needs
/// nothing of the scenario).
impl Scenario {
    /// The links and switches that fail, in the order written.
    pub fn scheduled_failures(&self) -> Vec<super::failures::Failure> {
        self.failures
            .iter()
            .map(|f| super::failures::Failure {
                at_ps: ps_from_ns(f.at_ns),
                tables_ps: ps_from_ns(f.at_ns + f.tables_after_ns),
                switch: f.switch as usize,
                port: f.port.map(|p| p as usize),
            })
            .collect()
    }

    /// Times of zero or more nanoseconds, on a fabric of VC routers with plain hosts sending
    /// one-cell packets; the switch and port are checked against the topology when the fabric
    /// is built.
    pub(super) fn validate_failures(&self) -> Result<(), ScenarioError> {
        for (i, f) in self.failures.iter().enumerate() {
            for (key, ns) in [("at_ns", f.at_ns), ("tables_after_ns", f.tables_after_ns)] {
                if !(ns.is_finite() && ns >= 0.0) {
                    return Err(invalid(
                        &format!("failures[{i}].{key}"),
                        format!("expected zero or more nanoseconds, got {ns}"),
                    ));
                }
            }
            if self.design.as_deref() != Some("cell_fabric") || !self.uses_vcs() {
                return Err(invalid(
                    "failures",
                    "links and switches fail on a fabric of VC routers: expected design = \"cell_fabric\" and switch.scheduler = \"vc_separable\" or \"vc_islip\"",
                ));
            }
            if self.gnet.is_some() {
                return Err(invalid(
                    "failures",
                    "failures run with plain hosts: the IP over GNet hosts' accounts do not count cells lost to a failure yet (expected no [gnet] section)",
                ));
            }
            // A packet of several cells holds an output VC from its head to its tail: a lost
            // head or tail would leave its VC held, or its body cells following a dead route.
            let (packet, cell) = (self.packet_sizes().max_bytes(), self.cell.payload_bytes());
            if packet > cell {
                return Err(invalid(
                    "failures",
                    format!("a cell lost to a failure must be a whole packet: expected packets of one cell (traffic packets of at most cell.payload_bytes = {cell} bytes), got packets of up to {packet} bytes"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::switch::SchedulerKind;
    use crate::blocks::traffic::{Arrival, Burst, Destinations};

    fn error(json: &str) -> ScenarioError {
        Scenario::from_json(json).expect_err("scenario should be rejected")
    }

    #[test]
    fn defaults_are_valid() {
        let s = Scenario::from_json("{}").unwrap();
        assert_eq!(s.cell_time_ps(), 5_120);
        assert_eq!(s.scheduler(), SchedulerKind::Islip { iterations: 1 });
    }

    #[test]
    fn bad_input_names_the_key() {
        assert_eq!(error(r#"{"traffic": {"lod": 0.5}}"#).key, "traffic.lod");
        assert_eq!(error(r#"{"bogus": 1}"#).key, "bogus");
        let wrong_type = error(r#"{"traffic": {"load": "high"}}"#);
        assert_eq!(wrong_type.key, "traffic.load");
        assert!(
            wrong_type.message.contains("expected a number"),
            "{wrong_type}"
        );
        assert_eq!(error(r#"{"traffic": {"load": 1.5}}"#).key, "traffic.load");
        assert_eq!(error(r#"{"traffic": {"load": -0.1}}"#).key, "traffic.load");
        assert_eq!(error(r#"{"switch": {"ports": 0}}"#).key, "switch.ports");
        assert_eq!(
            error(r#"{"link": {"propagation_ns": -5}}"#).key,
            "link.propagation_ns"
        );
        let renamed = error(r#"{"link": {"propagation_delay_ps": 5}}"#);
        assert_eq!(renamed.key, "link.propagation_delay_ps");
        assert!(renamed.message.contains("link.propagation_ns"), "{renamed}");
        let scheduler = error(r#"{"switch": {"scheduler": "magic"}}"#);
        assert_eq!(scheduler.key, "switch.scheduler");
        assert!(scheduler.message.contains("islip"), "{scheduler}");
        assert_eq!(
            error(r#"{"link": {"flow_control": "credit"}}"#).key,
            "switch.buffer_cells"
        );
        assert_eq!(
            error(r#"{"switch": {"scheduler": "output_queued", "buffer_cells": 8}, "link": {"flow_control": "credit"}}"#).key,
            "link.flow_control"
        );
        assert_eq!(
            error(r#"{"traffic": {"packet_bytes_min": 64}}"#).key,
            "traffic.packet_bytes_max"
        );
        assert_eq!(
            error(r#"{"run": {"warmup_ns": 2000000}}"#).key,
            "run.warmup_ns"
        );
        assert_eq!(
            error(r#"{"run": {"duration_ns": 0}}"#).key,
            "run.duration_ns"
        );
    }

    #[test]
    fn burst_length_in_bytes_converts_to_cells() {
        let s = Scenario::from_json(r#"{"cell": {"size_bytes": 256}, "traffic": {"arrival": "bursty", "burst_mean_bytes": 1024, "burst_packets": "cut"}}"#)
            .unwrap();
        assert_eq!(
            s.arrival(),
            Arrival::Bursty(Burst::CutCells { mean_cells: 4.0 })
        );
    }

    #[test]
    fn a_finite_workload_needs_positive_bytes_and_uniform_destinations() {
        let key = |traffic: &str| {
            Scenario::from_json(&format!(r#"{{"traffic": {{{traffic}}}}}"#))
                .err()
                .map(|e| e.key)
        };
        assert_eq!(key(r#""bytes_per_pair": 1000"#), None);
        assert_eq!(
            key(r#""bytes_per_pair": 0"#).as_deref(),
            Some("traffic.bytes_per_pair")
        );
        assert_eq!(
            key(r#""bytes_per_pair": 10, "destinations": "permutation""#).as_deref(),
            Some("traffic.bytes_per_pair")
        );
    }

    /// The arrival process of a bursty scenario with `traffic`'s keys, or the key refused.
    fn arrival(traffic: &str) -> Result<Arrival, String> {
        Scenario::from_json(&format!(
            r#"{{"cell": {{"size_bytes": 256}}, "traffic": {{"arrival": "bursty", {traffic}}}}}"#
        ))
        .map(|s| s.arrival())
        .map_err(|e| e.key)
    }

    #[test]
    fn burst_readings_come_from_their_keys_and_a_packet_count_needs_whole_packets() {
        assert_eq!(
            arrival(r#""burst_packets": "whole", "burst_mean_bytes": 1024"#),
            Ok(Arrival::Bursty(Burst::WholeCells { mean_cells: 4.0 }))
        );
        assert_eq!(
            arrival(r#""burst_packets": "whole", "burst_mean_packets": 4"#),
            Ok(Arrival::Bursty(Burst::WholePackets { mean_packets: 4.0 }))
        );
        assert_eq!(
            arrival(r#""burst_mean_packets": 4, "burst_packets": "cut""#),
            Err("traffic.burst_mean_packets".into())
        );
        assert_eq!(
            arrival(r#""burst_mean_cells": 4, "burst_mean_packets": 4, "burst_packets": "whole""#),
            Err("traffic.burst_mean_packets".into())
        );
        assert_eq!(
            arrival(r#""burst_packets": "whole""#),
            Err("traffic.arrival".into())
        );
    }

    #[test]
    fn a_fixed_burst_needs_a_whole_count_of_packets() {
        assert_eq!(
            arrival(r#""burst_packets": "fixed", "burst_mean_packets": 4"#),
            Ok(Arrival::Bursty(Burst::FixedPackets { packets: 4 }))
        );
        for bad in [
            r#""burst_packets": "fixed", "burst_mean_packets": 4.5"#,
            r#""burst_packets": "fixed", "burst_mean_cells": 4"#,
        ] {
            assert_eq!(arrival(bad), Err("traffic.burst_packets".into()), "{bad}");
        }
    }

    #[test]
    fn pairs_name_existing_hosts_each_source_once() {
        let error = |pairs: &str| {
            let json = format!(
                r#"{{"switch": {{"ports": 8}}, "traffic": {{"destinations": "pairs", "pairs": {pairs}}}}}"#
            );
            Scenario::from_json(&json).err().map(|e| (e.key, e.message))
        };
        assert_eq!(error("[[0, 5], [5, 0]]"), None);
        for (pairs, says) in [
            ("[]", "at least one"),
            ("[[0, 8]]", "below 8"),
            ("[[3, 3]]", "another host"),
            ("[[1, 2], [1, 3]]", "host 1 is the source of two pairs"),
        ] {
            let (key, message) = error(pairs).expect(pairs);
            assert_eq!(key, "traffic.pairs");
            assert!(message.contains(says), "{pairs}: {message}");
        }
    }

    #[test]
    fn active_hosts_are_whole_tins_spread_over_every_pod() {
        let json = r#"{"design": "cell_fabric", "topology": {"kind": "clique"},
            "cell": {"size_bytes": 160, "payload_bytes": 152}, "traffic": {"active_hosts": 500}}"#;
        let s = Scenario::from_json(json).unwrap();
        let topology = s.topology().unwrap();
        let hosts = s.active_hosts(&topology).expect("500 of 1 152");
        assert_eq!(hosts.len(), 500);
        let tins: std::collections::BTreeSet<usize> = hosts
            .iter()
            .map(|&h| topology.endpoint_port(h as usize).unwrap().0)
            .collect();
        assert_eq!(tins.len(), 250, "both hosts of each TiN");
        let pods: std::collections::BTreeSet<usize> =
            tins.iter().map(|&tin| topology.group(tin)).collect();
        assert_eq!(pods.len(), 48);
        let destinations = s.destinations(&topology);
        let silent = destinations
            .iter()
            .filter(|d| **d == Destinations::Silent)
            .count();
        assert_eq!(silent, 1152 - 500);
    }

    #[test]
    fn active_hosts_outside_the_topology_are_refused() {
        for (traffic, says) in [
            (r#""active_hosts": 0"#, "expected 1 to 8 hosts"),
            (r#""active_hosts": 9"#, "expected 1 to 8 hosts"),
            (
                r#""active_hosts": 1, "include_self": false"#,
                "expected 2 to 8",
            ),
            (
                r#""active_hosts": 4, "bytes_per_pair": 100"#,
                "a finite workload",
            ),
            (
                r#""active_hosts": 4, "broadcast_fraction": 0.1"#,
                "broadcasts",
            ),
        ] {
            let json = format!(r#"{{"switch": {{"ports": 8}}, "traffic": {{{traffic}}}}}"#);
            let error = Scenario::from_json(&json).expect_err(traffic);
            assert_eq!(error.key, "traffic.active_hosts", "{traffic}");
            assert!(error.message.contains(says), "{traffic}: {}", error.message);
        }
    }

    #[test]
    fn only_the_sources_of_pairs_send() {
        let json =
            r#"{"switch": {"ports": 8}, "traffic": {"destinations": "pairs", "pairs": [[2, 6]]}}"#;
        let s = Scenario::from_json(json).unwrap();
        let topology = s.topology().unwrap();
        let destinations = s.destinations(&topology);
        assert_eq!(destinations[2], Destinations::Fixed(6));
        assert!(destinations
            .iter()
            .enumerate()
            .all(|(i, d)| i == 2 || *d == Destinations::Silent));
    }
}
