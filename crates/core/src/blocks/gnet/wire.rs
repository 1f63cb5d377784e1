//! GNet cells on the wire of a VC-router fabric (Gibson et al., NSDI '22, §3.1, §3.3): a GNet
//! cell is a packet of the VC router, cut into flits of the fabric's flit size, so a 160-byte
//! data cell is ten 16-byte flits, a 16-byte RTS, CTS or CTD one, a 48-byte 1RMA Req three
//! (§3.4). The cell's kind rides in the low three bits of [`Cell::flags`] and an RTS's class
//! of service in the next three; what a cell carries besides its payload (slots, lengths)
//! rides in the cell's spare fields.

use crate::blocks::cell::Cell;
use crate::engine::time::TimePs;

/// The largest GNet cell, the size of every data cell (§3.1: 160 bytes keeps a cell's
/// serialization at about 50 ns on 25 Gb/s links).
pub const DATA_CELL_BYTES: u32 = 160;
/// An RTS, CTS or CTD: an 8-byte header and 8 bytes of payload (§3.3).
pub const CONTROL_CELL_BYTES: u32 = 16;

/// What a GNet cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// A data-only cell of a granted packet.
    Data = 0,
    /// Request to send.
    Rts = 1,
    /// Clear to send.
    Cts = 2,
    /// Clear to drop.
    Ctd = 3,
    /// A 1RMA read request (§3.4).
    Req = 4,
    /// A 1RMA read response, one PCIe completion (§3.4).
    Resp = 5,
}

impl CellKind {
    /// The kind a flit's flags carry.
    pub fn of(cell: &Cell) -> CellKind {
        match cell.flags & 7 {
            1 => CellKind::Rts,
            2 => CellKind::Cts,
            3 => CellKind::Ctd,
            4 => CellKind::Req,
            5 => CellKind::Resp,
            _ => CellKind::Data,
        }
    }

    /// The class of service a flit's flags carry (an RTS's; 0 for the other kinds).
    pub fn class_of_service(cell: &Cell) -> u8 {
        (cell.flags >> CLASS_OF_SERVICE_SHIFT) & 7
    }

    /// True for RTS, CTS and CTD, IP over GNet's control cells.
    pub fn is_control(self) -> bool {
        matches!(self, CellKind::Rts | CellKind::Cts | CellKind::Ctd)
    }
}

/// Where an RTS's class of service sits in [`Cell::flags`], above the kind.
const CLASS_OF_SERVICE_SHIFT: u8 = 3;

/// The most classes of service IP over GNet has (§3.3: 8, each with an RTS queue per port).
pub const MAX_CLASSES_OF_SERVICE: usize = 8;

/// One GNet cell waiting to leave a host, sent flit by flit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Its kind.
    pub kind: CellKind,
    /// The host it goes to.
    pub dst: u16,
    /// The ingress-buffer slot (RTS, CTS, CTD), reassembly slot (data) or the client's read
    /// slot (Req, Resp) it names.
    pub slot: u32,
    /// The packet's length (RTS), the reassembly slot granted (CTS) or the read's length
    /// (Req); 0 otherwise.
    pub word: u32,
    /// When the message was made (an RTS's time is the packet's RTS time).
    pub made_ps: TimePs,
    /// Payload bytes it carries (data cells).
    pub payload_bytes: u16,
    /// The packet's class of service (an RTS's, which the egress queues it by; 0 otherwise).
    pub class_of_service: u8,
}

impl Outgoing {
    /// Flit `index` of `flits`, generated at `now_ps` by host `src`: the head carries its
    /// making time as both times (so a control cell's latency runs from its making), the body
    /// flits their own time and the head's.
    pub fn flit(&self, src: u16, index: u32, flits: u32, now_ps: TimePs) -> Cell {
        let head = index == 0;
        let (inject_ps, head_ps) = if head {
            (self.made_ps, self.made_ps)
        } else {
            (now_ps, self.made_ps)
        };
        let last = index + 1 == flits;
        let payload = if last { self.payload_bytes } else { 0 };
        let mut cell = Cell::new(src, self.dst, payload, last, inject_ps, head_ps);
        debug_assert!((self.class_of_service as usize) < MAX_CLASSES_OF_SERVICE);
        // A new cell: the trace bit is set as it is sent.
        cell.flags = self.kind as u8 | self.class_of_service << CLASS_OF_SERVICE_SHIFT;
        cell.seq = self.slot;
        cell.packet = self.word;
        cell
    }
}

/// Flits of a GNet cell of `cell_bytes` in flits of `flit_bytes`.
pub fn flits_of(cell_bytes: u32, flit_bytes: u32) -> u32 {
    cell_bytes.div_ceil(flit_bytes).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data cell is ten 16-byte flits, a control cell one; flits of the largest size carry
    /// either whole.
    #[test]
    fn cells_cut_into_flits_at_their_own_sizes() {
        assert_eq!(flits_of(DATA_CELL_BYTES, 16), 10);
        assert_eq!(flits_of(CONTROL_CELL_BYTES, 16), 1);
        assert_eq!(flits_of(DATA_CELL_BYTES, 160), 1);
        assert_eq!(flits_of(CONTROL_CELL_BYTES, 160), 1);
    }

    /// The head flit carries the message's time twice (a VC router knows a head by it), a
    /// body flit its own; the kind, slot and word survive; only the tail carries payload.
    #[test]
    fn flits_carry_the_kind_slot_and_word() {
        let out = Outgoing {
            kind: CellKind::Cts,
            dst: 7,
            slot: 3,
            word: 9,
            made_ps: 100,
            payload_bytes: 152,
            class_of_service: 0,
        };
        let head = out.flit(1, 0, 2, 150);
        assert_eq!((head.inject_ps, head.packet_inject_ps), (100, 100));
        assert_eq!(CellKind::of(&head), CellKind::Cts);
        assert_eq!((head.seq, head.packet, head.payload_bytes), (3, 9, 0));
        assert!(!head.last_of_packet);
        let tail = out.flit(1, 1, 2, 160);
        assert_eq!((tail.inject_ps, tail.packet_inject_ps), (160, 100));
        assert!(tail.last_of_packet && tail.payload_bytes == 152);
        assert!(CellKind::Rts.is_control() && !CellKind::Data.is_control());
        assert!(!CellKind::Req.is_control() && !CellKind::Resp.is_control());
        for kind in [CellKind::Req, CellKind::Resp] {
            let out = Outgoing { kind, ..out };
            assert_eq!(CellKind::of(&out.flit(1, 0, 3, 150)), kind);
        }
        let rts = Outgoing {
            kind: CellKind::Rts,
            class_of_service: 7,
            ..out
        };
        let mut flit = rts.flit(1, 0, 1, 150);
        assert_eq!(CellKind::of(&flit), CellKind::Rts);
        assert_eq!(CellKind::class_of_service(&flit), 7);
        // The fabric's trace bit, above the class, changes neither.
        flit.flags |= crate::blocks::cell::TRACED;
        assert_eq!(CellKind::of(&flit), CellKind::Rts);
        assert_eq!(CellKind::class_of_service(&flit), 7);
    }
}
