//! What the `gnet` and `rma` sections check of the others and build: the GNet endpoints'
//! spec, their hosts' traffic and their 1RMA engines (Gibson et al., NSDI '22, §3.3-3.4).

use super::gnet::GnetConfig;
use super::rma::RmaPriorityName;
use super::{invalid, Scenario, ScenarioError, TopologyName};
use crate::blocks::gnet::endpoint::GnetSpec;
use crate::blocks::gnet::rma::{RmaSpec, RESP_OVERHEAD_BYTES};
use crate::blocks::gnet::wire::flits_of;
use crate::blocks::gnet::wire::DATA_CELL_BYTES;
use crate::blocks::gnet::CELL_PAYLOAD_BYTES;
use crate::blocks::traffic::{PacketSizes, TrafficSpec};
use crate::engine::time::ps_from_ns;

impl Scenario {
    /// The `gnet` section's checks and what it needs of the others: a Clique of VC routers
    /// with as many VC classes as its layout, and packet sizes of its own.
    pub(super) fn validate_gnet(&self) -> Result<(), ScenarioError> {
        let Some(gnet) = &self.gnet else {
            return Ok(());
        };
        gnet.validate()?;
        if let Some(stop_ns) = gnet.stop_ns {
            // A stop after the run's end (a run cut short) stops nothing.
            if !(stop_ns.is_finite() && stop_ns >= 0.0) {
                return Err(invalid(
                    "gnet.stop_ns",
                    format!("expected a time of 0 or more, got {stop_ns}"),
                ));
            }
        }
        if self.topology.kind != TopologyName::Clique || !self.uses_vcs() {
            // Checked before the layout: without VC routers there are no classes.
            return Err(invalid(
                "gnet",
                "IP over GNet runs on Aquila's Clique of VC routers: expected topology.kind = \"clique\" and switch.scheduler = \"vc_islip\" or \"vc_separable\"",
            ));
        }
        let vc = self.vc_config();
        let layout = gnet.layout()?;
        if vc.classes != layout.classes() as u16 {
            return Err(invalid(
                "vc.classes",
                format!(
                    "gnet.vc_classes lays out {} VC classes: expected vc.classes = {}, got {}",
                    layout.classes(),
                    layout.classes(),
                    vc.classes
                ),
            ));
        }
        let class_vcs = vc.count / vc.classes;
        if !(1..=class_vcs).contains(&gnet.endpoint_ports) {
            return Err(invalid(
                "gnet.endpoint_ports",
                format!(
                    "each endpoint port is one of the IP data class's {class_vcs} VCs (vc.count / vc.classes) on the host's port: expected 1 to {class_vcs}, got {}",
                    gnet.endpoint_ports
                ),
            ));
        }
        let t = &self.traffic;
        let sized = t.packet_bytes.is_some()
            || t.packet_bytes_min.is_some()
            || t.packet_bytes_max.is_some();
        if sized || t.bytes_per_pair.is_some() {
            return Err(invalid(
                "traffic",
                "with [gnet] every packet is gnet.packet_bytes long and hosts send until the run ends: expected no traffic.packet_bytes, packet_bytes_min, packet_bytes_max or bytes_per_pair",
            ));
        }
        Ok(())
    }

    /// The endpoints' spec, when the hosts speak IP over GNet.
    pub fn gnet_spec(&self) -> Option<GnetSpec> {
        let gnet = self.gnet.as_ref()?;
        let vc = self.vc_config();
        Some(GnetSpec {
            flit_bytes: self.cell.size_bytes,
            packet_bytes: gnet.packet_bytes,
            ingress_buffer_bytes: gnet.ingress_buffer_bytes,
            limits: gnet.limits(),
            layout: gnet.layout().expect("a validated layout"),
            vcs_per_class: vc.count / vc.classes.max(1),
            endpoint_ports: gnet.endpoint_ports,
            rma: self.rma_spec(self.cell.size_bytes),
            class_shares: gnet.class_shares(),
            whole_cells: self.switches_whole_cells(),
        })
    }

    /// What every GNet host's source offers: `gnet.packet_bytes` packets in data cells of
    /// 152 bytes of payload, `traffic.load` of the hosts' rate in 160-byte cells, until
    /// `gnet.stop_ns`.
    pub(super) fn gnet_traffic_spec(&self, gnet: &GnetConfig) -> TrafficSpec {
        let stop_ps = gnet.stop_ns.map_or(self.end_ps(), |stop_ns| {
            ps_from_ns(stop_ns).min(self.end_ps())
        });
        TrafficSpec {
            sizes: PacketSizes::Fixed(gnet.packet_bytes),
            stop_ps,
            cell_payload_bytes: CELL_PAYLOAD_BYTES,
            slot_ps: self.link_frame_ps(DATA_CELL_BYTES),
            bytes_per_pair: None,
            broadcast_fraction: 0.0,
            ..self.plain_traffic_spec()
        }
    }
}

impl Scenario {
    /// The `rma` section's checks and what it needs of the others: GNet hosts.
    pub(super) fn validate_rma(&self) -> Result<(), ScenarioError> {
        let Some(rma) = &self.rma else {
            return Ok(());
        };
        rma.validate()?;
        if self.gnet.is_none() {
            return Err(invalid(
                "rma",
                "1RMA reads are GNet cells: expected a [gnet] section too",
            ));
        }
        Ok(())
    }

    /// The 1RMA engines' spec, when the hosts make reads (`flit_bytes` the routers' flit).
    pub(super) fn rma_spec(&self, flit_bytes: u32) -> Option<RmaSpec> {
        let rma = self.rma.as_ref()?;
        let resp_bytes = rma.completion_bytes + RESP_OVERHEAD_BYTES;
        let resp_wire_bytes = flits_of(resp_bytes, flit_bytes) * flit_bytes;
        Some(RmaSpec {
            load: rma.load,
            read_bytes: rma.read_bytes,
            completion_bytes: rma.completion_bytes,
            resp_slot_ps: self.link_frame_ps(resp_wire_bytes),
            remote_read_ps: ps_from_ns(rma.remote_read_ns),
            host_latency_ps: ps_from_ns(rma.host_latency_ns),
            high_priority: rma.priority == RmaPriorityName::High,
        })
    }
}
