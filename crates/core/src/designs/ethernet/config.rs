//! The Ethernet baseline's scenario: the validated description of one run. Unknown keys,
//! wrong types and impossible values are rejected with one [`ScenarioError`] naming the key;
//! keys the chosen transport, port kind, pattern or topology ignore are listed by
//! [`EthernetConfig::unused_keys`] for the strict review. Each mechanism checks its own keys
//! (the transports in `blocks/transport/`, the port kinds in `blocks/ethernet/ports/`); this
//! file checks how they fit together, by asking their descriptors. Defaults are the Stardust
//! paper's baselines (Stardust §6.3 and App. G, completed from the htsim examples they reuse;
//! see `docs/validation/transports.md`): 10 Gbit/s, 1 µs per link, 9000-byte packets,
//! 100-packet output queues, ECN at K = 15 packets for DCTCP.

use serde::{Deserialize, Serialize};

use super::traffic::{TrafficConfig, PATTERNS};
use crate::blocks::ethernet::ports::{self, EthernetSwitchConfig, PortKind};
use crate::blocks::link::LinkConfig;
use crate::blocks::patterns::TransportHosts;
use crate::blocks::routing::{self, mode, Mode};
use crate::blocks::topology::Topology;
use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::{self as transport, TransportKind, TRANSPORTS};
use crate::scenario::{
    invalid, RoutingConfig, RunConfig, ScenarioError, TopologyConfig, Unused, UnusedKeys,
};

/// A whole Ethernet scenario.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EthernetConfig {
    /// The design: `"ethernet"` (every other design has keys of its own: `cellfabric keys`).
    pub design: String,
    /// Run length, warm-up (goodput is measured after it) and seed.
    #[serde(default)]
    pub run: RunConfig,
    /// The switches and how hosts are cabled to them.
    #[serde(default = "TopologyConfig::fat_tree_4")]
    pub topology: TopologyConfig,
    /// Every cable (a topology file may give a cable its own rate and length).
    #[serde(default)]
    pub link: LinkConfig,
    /// How switches pick among equal-cost next hops (a mode of the routing registry).
    #[serde(default = "default_routing")]
    pub routing: RoutingConfig,
    /// The switches' ports.
    #[serde(default)]
    pub switch: EthernetSwitchConfig,
    /// The hosts' transport.
    #[serde(default)]
    pub host: HostConfig,
    /// Who sends to whom.
    #[serde(default)]
    pub traffic: TrafficConfig,
}

/// A transport that `needs` what the ports `offer` (in words, `what`) runs only over port kinds
/// that offer it: the error names the transport and the kinds that would do.
fn needs_of_ports(
    t: &TransportKind,
    p: &PortKind,
    needs: bool,
    offer: fn(&PortKind) -> bool,
    what: &str,
) -> Result<(), ScenarioError> {
    if needs && !offer(p) {
        return Err(invalid(
            "host.transport",
            format!(
                "{:?} needs {what}: set switch.port_kind to {}",
                t.name,
                ports::names_where(offer)
            ),
        ));
    }
    Ok(())
}

/// ECMP, the paper's baselines' routing.
fn default_routing() -> RoutingConfig {
    RoutingConfig::of_mode("ecmp")
}

impl EthernetConfig {
    /// Reads and validates a scenario.
    pub fn from_json(json: &str) -> Result<EthernetConfig, ScenarioError> {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(json) {
            if let Some(error) = ports::replaced_key(&value) {
                return Err(error);
            }
        }
        let config: EthernetConfig = crate::scenario::parse(json)?;
        config.validate()?;
        Ok(config)
    }

    /// The cabling.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let topology = self.topology.standalone()?;
        if topology.endpoints() < 2 {
            return Err(invalid("topology", "expected at least 2 hosts"));
        }
        Ok(topology)
    }

    /// One hop's bandwidth-delay product in data packets (BFC's default pause threshold).
    pub fn hop_bdp_packets(&self) -> u32 {
        ports::hop_bdp_packets(
            self.link.rate_bps(),
            self.link.propagation_ps(),
            self.host.packet_bytes,
        )
    }

    /// The routing mode (validated).
    pub fn mode(&self) -> &'static Mode {
        mode(&self.routing.mode).expect("routing.mode validated")
    }

    /// The transport's descriptor.
    pub fn transport(&self) -> &'static TransportKind {
        self.host.transport.kind()
    }

    /// The ports' descriptor (validated).
    pub fn ports(&self) -> &'static PortKind {
        self.switch.kind()
    }

    /// PFC's lossless classes (`switch.pfc_classes`, default 1; 1 unless the ports keep
    /// classes).
    pub fn pfc_classes(&self) -> u32 {
        self.switch.pfc_classes()
    }

    /// The traffic class of the pattern's `k`-th flow (`traffic.flow_classes`, cycled; absent:
    /// `k` modulo the classes).
    pub fn flow_class(&self, k: usize) -> u8 {
        let class = match &self.traffic.flow_classes {
            Some(classes) => classes[k % classes.len()],
            None => k as u32 % self.pfc_classes(),
        };
        class as u8
    }

    /// The keys the chosen transport, port kind, pattern, routing and topology leave unused.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let mut unused = UnusedKeys::default();
        unused.add_other_shapes(&self.topology);
        self.add_unused_switch_keys(&mut unused);
        self.add_unused_host_keys(&mut unused);
        self.add_unused_traffic_keys(&mut unused);
        self.routing.add_unused(&mut unused);
        unused.into_vec()
    }

    /// The `[switch]` keys the port kind does not read, or that another key makes moot.
    fn add_unused_switch_keys(&self, unused: &mut UnusedKeys) {
        let s = &self.switch;
        let kind = format!("switch.port_kind = {:?}", s.port_kind);
        unused.add(&s.unused_keys(), "switch.port_kind", kind);
        if s.reads("switch.shared_buffer_packets") && s.shared_buffer_packets.is_some() {
            unused.add(
                &["switch.queue_packets"],
                "switch.shared_buffer_packets",
                "switch.shared_buffer_packets set (it gives the shared buffer's size)",
            );
        }
        if s.reads("switch.random_drop_packets") && s.random_drop_packets == 0 {
            unused.add(
                &["switch.random_drop_probability"],
                "switch.random_drop_packets",
                "switch.random_drop_packets = 0 (drop-tail only)",
            );
        }
    }

    /// The keys of other transports, and those the window transports read that this one
    /// does not.
    fn add_unused_host_keys(&self, unused: &mut UnusedKeys) {
        let t = self.transport();
        let named = format!("host.transport = {:?}", t.name);
        let mut others: Vec<&str> = Vec::new();
        for key in TRANSPORTS.iter().flat_map(|k| k.own_keys.iter().copied()) {
            if !t.own_keys.contains(&key) && !others.contains(&key) {
                others.push(key);
            }
        }
        let (ignored, because) = self.host.unused_by_transport();
        let ignored: Vec<&str> = ignored
            .iter()
            .copied()
            .filter(|k| !others.contains(k))
            .collect();
        unused.add(&others, "host.transport", &named);
        unused.add(&ignored, "host.transport", because);
        if !self.host.delayed_ack && t.delayed_acks {
            unused.add(
                &["host.delayed_ack_ns"],
                "host.delayed_ack",
                "host.delayed_ack = false (an ACK per segment)",
            );
        }
    }

    /// The keys of the patterns other than the chosen one.
    fn add_unused_traffic_keys(&self, unused: &mut UnusedKeys) {
        if let Ok(keys) = self.traffic.keys() {
            for (key, because) in keys.unused(PATTERNS) {
                unused.add(&[key], "traffic.pattern", because);
            }
        }
        let mix = ["traffic.incast_fan_in", "traffic.incast_flow_bytes"];
        if self.traffic.pattern != "poisson" {
            let because = format!("traffic.pattern = {:?}", self.traffic.pattern);
            unused.add(&["traffic.incast_load"], "traffic.pattern", because);
        }
        if self.traffic.incast_mix().is_none() {
            unused.add(&mix, "traffic.incast_load", "traffic.incast_load = 0");
        }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        self.run.validate()?;
        self.link.validate()?;
        let mode = self.validate_routing()?;
        let t = self.transport();
        self.validate_fit(t, self.switch.validate_kind()?, mode)?;
        self.switch
            .validate(t.marks, self.host.packet_bytes, self.hop_bdp_packets())?;
        self.host.validate()?;
        (t.check_routing)(&self.host, mode)?;
        self.validate_classes()?;
        self.traffic.validate_incast_mix()?;
        self.validate_traffic()
    }

    /// `routing.mode`, once: a mode of the registry that needs no groups (an Ethernet
    /// topology has none).
    fn validate_routing(&self) -> Result<&'static Mode, ScenarioError> {
        let Some(mode) = mode(&self.routing.mode).filter(|m| !m.needs_groups) else {
            let names = routing::names_where(|m| !m.needs_groups);
            return Err(invalid(
                "routing.mode",
                format!("expected {names}, got {:?}", self.routing.mode),
            ));
        };
        if self.routing.spray_rounds == 0 {
            return Err(invalid("routing.spray_rounds", "expected at least 1"));
        }
        Ok(mode)
    }

    /// The transport, the port kind and the routing fit each other, by their descriptors: a
    /// transport that recovers trimmed packets over ports that trim and only it over them, a
    /// transport that never retransmits over lossless ports, ports whose pauses name one
    /// upstream queue under per-flow routing.
    fn validate_fit(
        &self,
        t: &TransportKind,
        p: &PortKind,
        mode: &Mode,
    ) -> Result<(), ScenarioError> {
        needs_of_ports(t, p, t.needs_trimming, |k| k.trims, "ports that trim")?;
        if p.trims && !t.needs_trimming {
            return Err(invalid(
                "switch.port_kind",
                format!(
                    "{:?} trims packets, which only {} recovers, got host.transport = {:?}",
                    p.name,
                    transport::names_where(|k| k.needs_trimming),
                    t.name
                ),
            ));
        }
        let lossless = "a lossless fabric (it never retransmits)";
        needs_of_ports(t, p, t.needs_lossless, |k| k.lossless, lossless)?;
        if p.per_flow_routing && !mode.per_flow {
            let per_flow = routing::names_where(|m| m.per_flow && !m.needs_groups);
            return Err(invalid(
                "routing.mode",
                format!(
                    "expected a per-flow mode ({}) with switch.port_kind = {:?} (a flow's pause names one upstream queue), got {:?}",
                    per_flow,
                    p.name,
                    mode.name
                ),
            ));
        }
        Ok(())
    }

    /// `traffic.flow_classes`: only over ports that keep classes, each below their number.
    fn validate_classes(&self) -> Result<(), ScenarioError> {
        let Some(list) = &self.traffic.flow_classes else {
            return Ok(());
        };
        if !self.ports().classes {
            return Err(invalid(
                "traffic.flow_classes",
                format!(
                    "expected only with switch.port_kind = {} (classes are PFC's priorities)",
                    ports::names_where(|k| k.classes)
                ),
            ));
        }
        if list.is_empty() {
            return Err(invalid(
                "traffic.flow_classes",
                "expected at least one class",
            ));
        }
        let classes = self.pfc_classes();
        if let Some(bad) = list.iter().find(|&&c| c >= classes) {
            return Err(invalid(
                "traffic.flow_classes",
                format!("expected classes below switch.pfc_classes ({classes}), got {bad}"),
            ));
        }
        Ok(())
    }

    /// The traffic section's keys, as the patterns check them on these transport hosts.
    fn validate_traffic(&self) -> Result<(), ScenarioError> {
        let hosts = TransportHosts {
            transport: self.host.transport,
            packet_bytes: self.host.packet_bytes,
        };
        self.traffic.keys()?.validate(PATTERNS, Some(hosts))
    }
}
