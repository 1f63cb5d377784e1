//! IP over GNet (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
//! networks", NSDI '22, §3.3, Fig. 3): every IP packet is admitted end to end before any of its
//! data crosses the fabric. The ingress TiN stores the packet ([`ingress::IngressBuffer`]) and
//! sends an RTS to the egress TiN's CTS scheduler ([`cts::CtsScheduler`]), which queues it in
//! one of its RTS queues (class of service × egress port), or answers CTD (clear to drop) when
//! that queue is over its threshold; it answers CTS when reassembly space has been allocated
//! for the packet and the window of outstanding fetches allows. On a CTS the ingress sends the
//! packet as data cells, sprayed adaptively; the egress reassembles them and releases each
//! packet once all its cells are in and every earlier packet of its flow, in CTS-issue order,
//! has left ([`reorder::Reassembly`]), ECN-marked if its RTS queue is deeper than a threshold
//! as it leaves.
//!
//! 1RMA reads (§3.4) are GNet cells of their own beside these: a Req from the client's TiN,
//! Resps back from the server's ([`rma`]); every kind of cell rides the VC class a layout
//! places it in ([`classes`]).
//!
//! These are the protocol's state machines, each holding what a TiN holds and counting what
//! it admitted, answered and released; the messages between them are [`Rts`], [`Cts`] and
//! [`Ctd`]. [`endpoint::Endpoint`] joins them for one host port, [`host::GnetHost`] puts it on
//! a VC-router fabric, its cells cut into flits at their own sizes ([`wire`]).

pub mod classes;
pub mod cts;
pub mod endpoint;
pub mod host;
pub mod ingress;
pub mod reorder;
pub mod rma;
pub mod wire;

use crate::engine::time::TimePs;

/// An RTS (request to send), 16 bytes on GNet: the packet's length, class of service and
/// egress port, and where the packet sits in the ingress buffer (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rts {
    /// The ingress endpoint that holds the packet.
    pub source: u32,
    /// The packet's slot in the ingress buffer.
    pub ingress_slot: u32,
    /// The packet's length.
    pub size_bytes: u32,
    /// Its class of service.
    pub class: u8,
    /// The egress port it leaves the egress TiN by (one of the TiN's NIC ports).
    pub port: u8,
    /// When the ingress sent the RTS (packet latency runs from here to the last cell).
    pub sent_ps: TimePs,
}

impl Rts {
    /// The flow the packet belongs to at the egress, for release in order: its source, class
    /// and egress port.
    pub fn flow(&self, classes: u8, ports: u8) -> u32 {
        (self.source * classes as u32 + self.class as u32) * ports as u32 + self.port as u32
    }
}

/// A CTS (clear to send), 16 bytes: the ingress-buffer pointer copied from the RTS and the
/// reassembly slot allocated for the packet (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cts {
    /// The RTS it answers.
    pub rts: Rts,
    /// The reassembly slot the packet's data cells carry.
    pub reassembly_slot: u32,
}

/// A CTD (clear to drop), the CTS variant that makes the ingress discard the packet (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ctd {
    /// The RTS it answers.
    pub rts: Rts,
    /// Why the packet is dropped.
    pub cause: DropCause,
}

/// Why a packet was dropped at its source, so drops are counted by cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// Its RTS found its RTS queue at or over the CTD threshold (a CTD came back).
    RtsQueueOverThreshold,
    /// The ingress buffer had no room for it (no RTS was sent).
    IngressBufferFull,
}

/// Data payload of a GNet cell: a 160-byte cell less its 8-byte header (§3.1, §6).
pub const CELL_PAYLOAD_BYTES: u32 = 152;

/// Data cells of a packet of `size_bytes`.
pub fn cells_of(size_bytes: u32) -> u32 {
    size_bytes.div_ceil(CELL_PAYLOAD_BYTES).max(1)
}

#[cfg(test)]
mod tests;
