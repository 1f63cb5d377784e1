//! The `topology.clique` keys: Aquila's Clique (Gibson et al., "Aquila: A unified, low-latency
//! fabric for datacenter networks", NSDI '22, §2, §3.1–3.2, App. A) and the facts of its links:
//! 25 Gb/s effective (28 Gb/s lanes), FEC on global links only (+30 ns per hop, 6% of
//! bandwidth), and GNet cells of 16 to 160 bytes with an 8-byte header.

use serde::{Deserialize, Serialize};

use super::build::sizes;
use crate::blocks::topology::{Cable, Clique, PortClass, SpareLocalPorts, Topology};
use crate::engine::time::ps_from_ns;
use crate::keys::{invalid, Named, ScenarioError};

/// The smallest GNet cell, header included (§3.1).
pub const MIN_CELL_BYTES: u32 = 16;
/// The largest GNet cell, header included (§3.1).
pub const MAX_CELL_BYTES: u32 = 160;
/// GNet's common routing header on every cell (§3.1).
pub const HEADER_BYTES: u32 = 8;

/// What a TiN's spare local ports do, as written in scenarios.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SpareLocalName {
    /// Left uncabled.
    #[default]
    Unused,
    /// Extra links to the line-card partner.
    Partner,
}

impl Named for SpareLocalName {
    const ALL: &'static [SpareLocalName] = &[SpareLocalName::Unused, SpareLocalName::Partner];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            SpareLocalName::Unused => ("unused", "the local ports the mesh leaves stay uncabled"),
            SpareLocalName::Partner => (
                "partner",
                "they are extra links to the line-card partner (TiN 2i with 2i + 1)",
            ),
        }
    }
}

/// How the Clique's link rates are read from the paper, as written in scenarios.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LinkRatesName {
    /// Every local and global link at `effective_gbps`.
    #[default]
    Effective,
    /// Lanes at `lane_gbps` after 64b/66b coding; global links lose `fec_bandwidth` more.
    Line,
}

impl Named for LinkRatesName {
    const ALL: &'static [LinkRatesName] = &[LinkRatesName::Effective, LinkRatesName::Line];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            LinkRatesName::Effective => (
                "effective",
                "every local and global link at effective_gbps (the paper's own \"2 × 25 Gbps\" per pod pair)",
            ),
            LinkRatesName::Line => (
                "line",
                "local links at lane_gbps × 64/66, global links that × (1 − fec_bandwidth)",
            ),
        }
    }
}

/// Aquila's Clique: its shape and its links' facts (`topology.kind = "clique"`). Hosts' cables
/// take the `link` section; local and global links take the rates here, global links
/// `topology.global_propagation_ns` plus the FEC's latency.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CliqueConfig {
    /// Pods, fully meshed by global links (48 in Aquila, 24 at half scale).
    pub pods: u32,
    /// TiNs per pod, fully meshed by local links.
    pub tins_per_pod: u32,
    /// Hosts on each TiN.
    pub hosts_per_tin: u32,
    /// Local ports per TiN.
    pub local_ports: u32,
    /// Global ports per TiN.
    pub global_ports: u32,
    /// What the local ports beyond the mesh do.
    pub spare_local_ports: SpareLocalName,
    /// How the link rates are read.
    pub link_rates: LinkRatesName,
    /// `link_rates = "effective"`: the rate of every local and global link.
    pub effective_gbps: f64,
    /// `link_rates = "line"`: the lane rate of every local and global link.
    pub lane_gbps: f64,
    /// `link_rates = "line"`: the share of a global link's bandwidth its FEC takes.
    pub fec_bandwidth: f64,
    /// The latency FEC adds to every global hop, in nanoseconds.
    pub fec_ns: f64,
}

impl Default for CliqueConfig {
    fn default() -> Self {
        CliqueConfig {
            pods: 48,
            tins_per_pod: 12,
            hosts_per_tin: 2,
            local_ports: 24,
            global_ports: 8,
            spare_local_ports: SpareLocalName::Unused,
            link_rates: LinkRatesName::Effective,
            effective_gbps: 25.0,
            lane_gbps: 28.0,
            fec_bandwidth: 0.06,
            fec_ns: 30.0,
        }
    }
}

impl CliqueConfig {
    /// The Clique's shape.
    pub fn spec(&self) -> Clique {
        let c = self;
        let [pods, tins_per_pod, hosts_per_tin, local_ports, global_ports] = sizes([
            c.pods,
            c.tins_per_pod,
            c.hosts_per_tin,
            c.local_ports,
            c.global_ports,
        ]);
        Clique {
            pods,
            tins_per_pod,
            hosts_per_tin,
            local_ports,
            global_ports,
            spare_local: match self.spare_local_ports {
                SpareLocalName::Unused => SpareLocalPorts::Unused,
                SpareLocalName::Partner => SpareLocalPorts::Partner,
            },
        }
    }

    /// Hosts in the Clique (saturating).
    pub fn hosts(&self) -> u32 {
        self.pods
            .saturating_mul(self.tins_per_pod)
            .saturating_mul(self.hosts_per_tin)
    }

    /// Local and global link rates, bits per second.
    pub fn rates_bps(&self) -> (u64, u64) {
        let (local_gbps, global_gbps) = match self.link_rates {
            LinkRatesName::Effective => (self.effective_gbps, self.effective_gbps),
            LinkRatesName::Line => {
                let coded = self.lane_gbps * 64.0 / 66.0;
                (coded, coded * (1.0 - self.fec_bandwidth))
            }
        };
        (
            (local_gbps * 1e9).round() as u64,
            (global_gbps * 1e9).round() as u64,
        )
    }

    /// The keys the chosen `link_rates` does not read, and the choice as written.
    pub(super) fn unused_keys(&self) -> (&'static [&'static str], String) {
        let keys: &'static [&'static str] = match self.link_rates {
            LinkRatesName::Effective => {
                &["topology.clique.lane_gbps", "topology.clique.fec_bandwidth"]
            }
            LinkRatesName::Line => &["topology.clique.effective_gbps"],
        };
        let because = format!(
            "topology.clique.link_rates = {:?}",
            self.link_rates.as_str()
        );
        (keys, because)
    }

    /// Gives `topology`'s local and global cables their rates, and global cables their
    /// propagation `global_propagation_ns` plus the FEC's latency.
    pub fn set_link_facts(&self, topology: &mut Topology, global_propagation_ns: f64) {
        let (local_bps, global_bps) = self.rates_bps();
        let local = Cable {
            rate_bps: Some(local_bps),
            ..Cable::default()
        };
        let global = Cable {
            rate_bps: Some(global_bps),
            propagation_ps: Some(ps_from_ns(global_propagation_ns + self.fec_ns)),
            ..Cable::default()
        };
        topology.set_class_cable(PortClass::Local, local);
        topology.set_class_cable(PortClass::Global, global);
    }
}

impl CliqueConfig {
    /// The Clique's own values: its rates (at most `slot_gbps`, the hosts' rate) and FEC, and
    /// GNet cells of 16 to 160 bytes (`cell_bytes`) whose payload (`payload_bytes`) leaves room
    /// for the 8-byte header.
    pub(super) fn validate(
        &self,
        slot_gbps: f64,
        cell_bytes: u32,
        payload_bytes: Option<u32>,
    ) -> Result<(), ScenarioError> {
        let c = self;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let (key, gbps) = match c.link_rates {
            LinkRatesName::Effective => ("topology.clique.effective_gbps", c.effective_gbps),
            LinkRatesName::Line => ("topology.clique.lane_gbps", c.lane_gbps * 64.0 / 66.0),
        };
        if !positive(gbps) || gbps > slot_gbps {
            return Err(invalid(
                key,
                format!("expected a link rate above 0 and at most link.rate_gbps ({slot_gbps}), the hosts' rate, at which a switch's cell time is counted"),
            ));
        }
        if !(0.0..1.0).contains(&c.fec_bandwidth) {
            return Err(invalid(
                "topology.clique.fec_bandwidth",
                "expected a share from 0 up to (not including) 1",
            ));
        }
        if !(c.fec_ns.is_finite() && c.fec_ns >= 0.0) {
            return Err(invalid(
                "topology.clique.fec_ns",
                "expected zero or more nanoseconds",
            ));
        }
        let size = cell_bytes;
        if !(MIN_CELL_BYTES..=MAX_CELL_BYTES).contains(&size) {
            return Err(invalid(
                "cell.size_bytes",
                format!("a GNet cell is {MIN_CELL_BYTES} to {MAX_CELL_BYTES} bytes, header included (Aquila §3.1), got {size}"),
            ));
        }
        match payload_bytes {
            Some(payload) if payload + HEADER_BYTES <= size => Ok(()),
            _ => Err(invalid(
                "cell.payload_bytes",
                format!("every GNet cell carries an {HEADER_BYTES}-byte header: expected a payload of at most cell.size_bytes − {HEADER_BYTES} = {} bytes", size.saturating_sub(HEADER_BYTES)),
            )),
        }
    }
}
