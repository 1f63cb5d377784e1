//! Packets, the unit hosts send and receive, kept apart from the cells that carry them: a
//! design that packs packets into cells (Stardust §3.2) stores each packet once, here, and its
//! cells refer to it by index ([`Cell::packet`](crate::blocks::cell::Cell::packet)).

use crate::blocks::cell::NO_PACKET;
use crate::engine::arena::{Arena, Id, Queue};
use crate::engine::time::TimePs;

/// One packet of a flow.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Host that sent it.
    pub src: u16,
    /// Host it is addressed to.
    pub dst: u16,
    /// Bytes.
    pub size_bytes: u32,
    /// When its host created it.
    pub created_ps: TimePs,
    /// Sequence number of the cell carrying its first byte, once it is packed.
    pub start_seq: u32,
    /// Sequence number of the cell carrying its last byte, once it is packed.
    pub end_seq: u32,
    /// The next packet whose last byte is in the same cell ([`NO_PACKET`] if none): a cell
    /// that ends several packets names the first, and the rest follow by this link.
    pub next_in_cell: u32,
    /// The finite flow it belongs to, numbered by its source ([`NO_FLOW`] if none).
    pub flow: u32,
    /// True for the last packet of its flow.
    pub last_of_flow: bool,
    /// The host's frame this packet carries across a fabric that cuts packets into cells (a
    /// transport's segment or ACK, kept whole in the cell arena and handed to the receiving
    /// host as it was sent), or [`NO_FRAME`] for a packet a built-in source made.
    pub frame: u32,
}

/// [`Packet::frame`] of a packet that carries no host frame.
pub const NO_FRAME: u32 = u32::MAX;

/// [`Packet::flow`] of a packet of no numbered flow.
pub const NO_FLOW: u32 = u32::MAX;

impl Packet {
    /// A packet of `size_bytes` from `src` to `dst`, created at `created_ps`.
    pub fn new(src: u16, dst: u16, size_bytes: u32, created_ps: TimePs) -> Packet {
        Packet {
            src,
            dst,
            size_bytes,
            created_ps,
            start_seq: 0,
            end_seq: 0,
            next_in_cell: NO_PACKET,
            flow: NO_FLOW,
            last_of_flow: false,
            frame: NO_FRAME,
        }
    }
}

/// Where every packet between its creation and its delivery or drop is stored.
pub type PacketArena = Arena<Packet>;
/// A handle to a stored packet.
pub type PacketId = Id<Packet>;
/// A FIFO of packets threaded through the arena (a VOQ, an egress port queue).
pub type PacketQueue = Queue<Packet>;
