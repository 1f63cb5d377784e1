//! The unit that fabrics move: a fixed-size cell carrying part of a packet.

use crate::engine::arena::{Arena, Id, Queue};
use crate::engine::time::TimePs;

/// One cell in flight. Kept small and `Copy`; cells live in a [`CellArena`].
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Terminal that injected the cell.
    pub src: u16,
    /// Terminal the cell is addressed to.
    pub dst: u16,
    /// Output port the cell takes at the switch it is currently in (set by routing).
    pub out_port: u16,
    /// Flow-control channel on the link the cell crosses next: a virtual channel, or the
    /// downstream VOQ it will join where flow control is per VOQ.
    pub vc: u16,
    /// The channel the cell will use on the link after the current switch (set by routing;
    /// becomes `vc` when the cell leaves).
    pub next_vc: u16,
    /// What the router keeps in the cell (RIFL: its Layer 2 header; Valiant and UGAL: the
    /// intermediate group); only the router that wrote it reads it.
    pub route_tag: u64,
    /// True for the last cell of its packet.
    pub last_of_packet: bool,
    /// Payload bytes carried (the rest of the cell is header and padding).
    pub payload_bytes: u16,
    /// When the traffic source generated the cell.
    pub inject_ps: TimePs,
    /// When the traffic source generated the first cell of the cell's packet.
    pub packet_inject_ps: TimePs,
    /// Input port of the switch the cell is currently in.
    pub in_port: u16,
    /// When the cell reached the switch it is currently in.
    pub switch_arrive_ps: TimePs,
    /// Position of the cell in its stream, for reassembly where cells may arrive out of order
    /// (a design that packs packets into cells numbers them per stream).
    pub seq: u32,
    /// The packet (an index into the fabric's [`PacketArena`](crate::blocks::packet::PacketArena))
    /// whose last byte the cell carries, the first of them if several; [`NO_PACKET`] if none.
    pub packet: u32,
    /// What the design keeps in the cell beside routing (its kind, congestion marks); only the
    /// design that wrote it reads it, except the fabric's [`TRACED`] bit.
    pub flags: u8,
}

/// The bit of [`Cell::flags`] the fabric sets on a traced cell (Aquila's Trace Enable bit,
/// Gibson et al., NSDI '22, §3.1, §3.5); the designs' own bits are the lower six.
pub const TRACED: u8 = 1 << 6;

/// [`Cell::packet`] of a cell that ends no packet.
pub const NO_PACKET: u32 = u32::MAX;

/// [`Cell::dst`] of a broadcast cell, addressed to every host but its source (RIFL's Dst Port
/// 255); its copies keep it.
pub const BROADCAST_DST: u16 = u16::MAX;

impl Cell {
    /// A fresh cell from `src` to `dst` carrying `payload_bytes`, generated at `inject_ps` as part
    /// of a packet whose first cell was generated at `packet_inject_ps`; routing and switching
    /// fields start empty.
    pub fn new(
        src: u16,
        dst: u16,
        payload_bytes: u16,
        last_of_packet: bool,
        inject_ps: TimePs,
        packet_inject_ps: TimePs,
    ) -> Cell {
        Cell {
            src,
            dst,
            out_port: 0,
            vc: 0,
            next_vc: 0,
            route_tag: 0,
            last_of_packet,
            payload_bytes,
            inject_ps,
            packet_inject_ps,
            in_port: 0,
            switch_arrive_ps: 0,
            seq: 0,
            packet: NO_PACKET,
            flags: 0,
        }
    }
}

/// Where every live cell is stored.
pub type CellArena = Arena<Cell>;
/// A handle to a live cell.
pub type CellId = Id<Cell>;
/// A FIFO of cells threaded through the arena.
pub type CellQueue = Queue<Cell>;

#[cfg(test)]
mod tests {
    /// A cell in flight costs its arena slot and nothing else (queues are threaded through the
    /// slots): keep it within one 64-byte cache line.
    #[test]
    fn a_cell_in_flight_fits_a_cache_line() {
        assert!(std::mem::size_of::<super::Cell>() <= 56);
        assert!(std::mem::size_of::<super::Cell>() + 4 <= 64);
        let slot = std::mem::size_of::<super::Cell>() + std::mem::size_of::<u32>();
        assert!(slot <= 64, "{slot} bytes");
    }
}
