//! RIFL Layer 2 (Q. Shen and P. Chow, "A Lightweight Routing Layer Using a Reliable Link-Layer
//! Protocol", arXiv:2311.00911, 2023): hosts with RIFL NICs on RIFL switches.
//!
//! - Layer 2 (§IV-A): upper-layer packets cut into 256-byte segments, the last one padded, each
//!   carrying 8 bytes of Layer 1 + Layer 2 header on the wire ([`header`]); relative-address
//!   source routing from an address table computed from the topology ([`addressing`],
//!   [`router`]).
//! - The switch (§IV-C): VOQs per input, each a statically allocated queue; an iSLIP scheduler
//!   with k iterations deciding once per 256-byte packet time; a Batcher-Banyan network carrying
//!   each slot's matched cells (the shared blocks `blocks::switch` and
//!   `blocks::batcher_banyan`). The ideal SAFC switch of §V is the same switch with N²
//!   dedicated queues and no input constraint.
//! - Per-VOQ flow control (§IV-D): each VOQ is its own ON/OFF channel; a VOQ that fills to the
//!   OFF threshold pauses exactly that VOQ upstream, and resumes it at the ON threshold.
//! - Racks: one switch, two switches joined by parallel links, a leaf-spine, or a topology
//!   file, all routed by the same headers (at most five hops).
//! - Broadcasts (§IV-A, Eq. 1, Dst Port 255): `traffic.broadcast_fraction` of the packets go to
//!   every other host; the switch copies them into the VOQ of every output but the input, and
//!   the sender waits until every VOQ channel is on ([`broadcast`]).
//!
//! - Layer 1 (§II-A): every cable with bit errors (`link.ber` above zero, or a cable's own
//!   `ber=` in a topology file) runs the retransmitting link as its cable protocol (`blocks::fabric::layer1`): corrupted frames are replayed hop by
//!   hop, and a switch leaves out of its matching the outputs whose link pauses for a replay.
//!   The link alone, with its own frame format and receive buffers, is studied in [`link`].

pub mod addressing;
pub mod broadcast;
pub mod header;
pub mod link;
pub mod router;

#[cfg(test)]
mod broadcast_runs;

use crate::blocks::cell_network::{Network, NetworkSpec};
use crate::scenario::{
    FlowControlKind, Named, Scenario, ScenarioError, SchedulerName, TopologyName,
};
use header::{HEADER_BYTES, SEGMENT_BYTES};
use router::RiflRouter;

/// A RIFL network simulation.
pub type Rifl = Network<RiflRouter>;

fn invalid(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.into(),
        message: message.into(),
    }
}

/// Checks what RIFL fixes beyond a valid scenario: the segment format, a VOQ switch, per-VOQ
/// ON/OFF flow control with VOQs of at least 1.5 round trips (§IV-D), and no loopback.
pub fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    validate_rack(scenario)?;
    validate_flow_control(scenario)?;
    for (key, value, rule) in [
        (
            "switch.per_voq_buffers",
            scenario.switch.per_voq_buffers,
            "each VOQ is its own buffer and ON/OFF channel (§IV-C, §IV-D)",
        ),
        (
            "switch.batcher_banyan",
            scenario.switch.batcher_banyan,
            "a Batcher-Banyan network carries every slot's matching, except in the ideal SAFC switch (§IV-C, §V)",
        ),
    ] {
        if value.is_some() {
            return Err(invalid(
                key,
                format!("RIFL fixes this: {rule}; remove the key"),
            ));
        }
    }
    if scenario.traffic.include_self {
        return Err(invalid(
            "traffic.include_self",
            "RIFL never loops a packet back to its source: expected false",
        ));
    }
    Ok(())
}

/// A rack (at most five hops) of VOQ switches carrying RIFL's segments.
fn validate_rack(scenario: &Scenario) -> Result<(), ScenarioError> {
    let (cell, sw) = (&scenario.cell, &scenario.switch);
    if !matches!(
        scenario.topology.kind,
        TopologyName::Star | TopologyName::TwoSwitch | TopologyName::LeafSpine | TopologyName::File
    ) {
        return Err(invalid(
            "topology.kind",
            "RIFL racks are \"star\", \"two_switch\", \"leaf_spine\" or a \"file\" (at most five hops); multi-tier fabrics are design \"cell_fabric\"",
        ));
    }
    let wire_bytes = SEGMENT_BYTES + HEADER_BYTES;
    if cell.size_bytes != wire_bytes || cell.payload_bytes() != SEGMENT_BYTES {
        return Err(invalid(
            "cell.size_bytes",
            format!("RIFL carries {SEGMENT_BYTES}-byte segments with {HEADER_BYTES} bytes of header: set size_bytes = {wire_bytes} and payload_bytes = {SEGMENT_BYTES}"),
        ));
    }
    if !matches!(
        sw.scheduler,
        SchedulerName::Islip | SchedulerName::Pim | SchedulerName::Safc
    ) {
        return Err(invalid(
            "switch.scheduler",
            format!(
                "a RIFL switch keeps a queue per output at every input (§IV-C): expected islip, pim or safc, got {:?}",
                sw.scheduler.as_str()
            ),
        ));
    }
    if scenario.link.flow_control != FlowControlKind::Onoff {
        return Err(invalid(
            "link.flow_control",
            "RIFL flow-controls each VOQ with ON/OFF frames: expected \"onoff\"",
        ));
    }
    Ok(())
}

/// Per-VOQ ON/OFF flow control with VOQs of at least 1.5 round trips (§IV-D), lossless.
fn validate_flow_control(scenario: &Scenario) -> Result<(), ScenarioError> {
    let (sw, link) = (&scenario.switch, &scenario.link);
    let cell_ps = scenario.cell_time_ps();
    let rtt_ps = 2 * (link.propagation_ps() + cell_ps);
    let voq_cells = sw.buffer_cells.unwrap_or(0) as u64;
    if 2 * voq_cells * cell_ps < 3 * rtt_ps {
        return Err(invalid(
            "switch.buffer_cells",
            format!(
                "each VOQ must hold 1.5 round trips of data (§IV-D): at least {} cells",
                (3 * rtt_ps).div_ceil(2 * cell_ps)
            ),
        ));
    }
    if !scenario.is_lossless() {
        return Err(invalid(
            "link.off_threshold_cells",
            format!(
                "expected at most switch.buffer_cells - {} (a round trip of headroom, so ON/OFF never overflows a VOQ)",
                scenario.round_trip_cells()
            ),
        ));
    }
    Ok(())
}

/// Builds the RIFL network a validated scenario describes.
pub fn build(scenario: &Scenario) -> Result<Rifl, ScenarioError> {
    let (spec, router) = network_spec(scenario)?;
    Ok(Network::new(spec, router))
}

/// What a RIFL network is built from: the fabric's spec and the router with the hosts'
/// headers (their broadcast headers too, where the traffic broadcasts).
fn network_spec(scenario: &Scenario) -> Result<(NetworkSpec, RiflRouter), ScenarioError> {
    validate(scenario)?;
    let topology = scenario.topology()?;
    let mut router = RiflRouter::new(&topology).map_err(|e| invalid("topology", e.to_string()))?;
    if scenario.traffic.broadcast_fraction > 0.0 {
        let headers = broadcast::broadcast_headers(&topology)
            .map_err(|e| invalid("traffic.broadcast_fraction", e.to_string()))?;
        router = router.with_broadcasts(&headers);
    }
    let mut spec = scenario.network_spec("rifl", topology);
    spec.switch.per_voq_buffers = true;
    spec.switch.batcher_banyan = scenario.switch.scheduler != SchedulerName::Safc;
    Ok((spec, router))
}
