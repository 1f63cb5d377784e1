//! Aquarius (Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow Control with Aquarius", HKUST;
//! the slides "Aquarius", "Contribution-aware Pausing" and "Opportunistic Re-assigning"): per-hop,
//! switch-driven, per-flow flow control with few physical queues per port, on PFC's lossless
//! ports ([`super::pfc`], whose XOFF stays as a last-resort backstop, `switch.per_flow.backstop`).
//! Every egress port:
//!
//! - ❶ maps flows onto its normal queues dynamically: a flow that becomes active takes the normal
//!   queue with the fewest active flows and keeps it while it has packets there;
//! - ❷ pauses by contribution: a flow's size in the flow table is the bytes it has buffered at
//!   the port; when a packet arrives and the port's backlog `Q` is above the low threshold `Q_l`,
//!   the flow is paused if its size exceeds the fair size `Q >> ceil(log2 N)` (N the flows with
//!   bytes here); above the high threshold `Q_h` every arriving flow is paused. A PAUSE frame
//!   naming the flow goes back on the port the packet came in on; a RESUME when the flow holds
//!   less than the fair size again, the backlog falls below `Q_l`, or the flow drained;
//! - ❸ re-assigns opportunistically: a flow its far end paused is isolated in the reserved
//!   queue (rsvQ, the port's last queue), where its new packets wait; its packets already in a
//!   normal queue go on, as do the normal queues' other flows. The rsvQ resumes only when every
//!   isolated flow has been resumed and the packets its flows left in the normal queues have
//!   drained, so no packet of a flow overtakes an earlier one.
//!
//! What the slides leave open is read as `docs/validation/aquarius.md` says: the size is the
//! bytes buffered at the port, `Q` and `N` are per port, the resume rule above, one rsvQ per port
//! served in round robin with the normal queues once resumed, host NICs stopping a paused flow
//! (the NIC as the first upstream port).

pub mod port;
#[cfg(test)]
mod tests;

use super::bfc::check_queues;
use super::{check_lossless, EthernetSwitchConfig, PortCheck, PortKind, PFC_THRESHOLD_KEYS};
use crate::keys::{invalid, ScenarioError};

/// Aquarius' ports.
pub const KIND: PortKind = PortKind {
    name: "aquarius",
    description: "Aquarius (Li, Zeng, Hu and Chen): PFC's lossless ports (one class) whose egress ports map flows to switch.per_flow.queues dynamically, pause by contribution between switch.per_flow.low_threshold_bytes and high_threshold_bytes with PAUSE/RESUME frames naming the flow, and isolate paused flows upstream in a reserved queue that resumes in order; PFC's XOFF the backstop; needs per-flow routing",
    keys: &[
        PFC_THRESHOLD_KEYS,
        &[
            "switch.per_flow.queues",
        "switch.per_flow.low_threshold_bytes",
        "switch.per_flow.high_threshold_bytes",
            "switch.per_flow.backstop",
        ],
    ],
    ..PortKind::per_flow_lossless(check)
};

/// Aquarius' settings of every egress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AquariusSpec {
    /// Physical data queues per egress port, the reserved isolation queue (the last) among
    /// them: at least 2.
    pub queues: u16,
    /// Q_l: above this many bytes buffered at a port, flows above the fair size are paused.
    pub low_bytes: u32,
    /// Q_h: above this many, every arriving flow is paused.
    pub high_bytes: u32,
}

impl AquariusSpec {
    /// Aquarius' settings of the ports `switch` gives, if its ports are Aquarius'.
    pub fn of(switch: &EthernetSwitchConfig) -> Option<AquariusSpec> {
        let keys = &switch.per_flow;
        (switch.kind().name == KIND.name).then_some(AquariusSpec {
            queues: keys.queues as u16,
            low_bytes: keys.low_threshold_bytes as u32,
            high_bytes: keys.high_threshold_bytes as u32,
        })
    }

    /// The reserved isolation queue (rsvQ): the last.
    pub fn isolation_queue(&self) -> u16 {
        self.queues - 1
    }
}

/// PFC's buffer with one class; 2 to 128 queues (a normal one and the rsvQ at least);
/// 0 < Q_l < Q_h, and Q_h below the backstop's XOFF (else the backstop pauses first).
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    check_lossless(c, 1)?;
    let s = c.switch;
    check_queues(s.per_flow.queues, 2)?;
    let (low, high) = (
        s.per_flow.low_threshold_bytes,
        s.per_flow.high_threshold_bytes,
    );
    if low == 0 {
        return Err(invalid(
            "switch.per_flow.low_threshold_bytes",
            "expected at least 1 byte",
        ));
    }
    if low >= high {
        return Err(invalid(
            "switch.per_flow.low_threshold_bytes",
            format!("expected fewer bytes than switch.per_flow.high_threshold_bytes ({high}), got {low}"),
        ));
    }
    if high > u32::MAX as u64 {
        return Err(invalid(
            "switch.per_flow.high_threshold_bytes",
            format!("expected at most {} bytes, got {high}", u32::MAX),
        ));
    }
    let xoff_bytes = s.pfc_xoff_packets as u64 * c.packet_bytes as u64;
    if s.per_flow.backstop && high >= xoff_bytes {
        return Err(invalid(
            "switch.per_flow.high_threshold_bytes",
            format!(
                "expected fewer bytes than the backstop's XOFF, switch.pfc_xoff_packets x host.packet_bytes ({xoff_bytes}): the flows are paused before the port is, got {high}"
            ),
        ));
    }
    Ok(())
}
