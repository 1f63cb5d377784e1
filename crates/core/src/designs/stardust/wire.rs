//! Stardust's wire format (Zilberman et al., NSDI '19, §3.2, §4.1, §4.2): what a cell's flags
//! say (its kind, the FCI bit, a request's on/off, the first cell of a burst, the traffic
//! class), how many bytes a cell takes on a link, and the `[cell]` keys that size it.

use serde::{Deserialize, Serialize};

use crate::blocks::cell::Cell;
use crate::blocks::cell_element::CellWire;
use crate::keys::fewer_bytes_than;
use crate::scenario::{invalid, ScenarioError};

/// What a cell is, in the low bits of its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Packed packet bytes.
    Data = 0,
    /// A VOQ's request to a port scheduler (on or off).
    Request = 1,
    /// A port scheduler's credit to a VOQ.
    Credit = 2,
    /// A device's reachability message to its neighbour (one link, never routed).
    Reach = 3,
}

const KIND_MASK: u8 = 0b11;
// Flag bits: kind (0-1), FCI (2), request on (3), first of burst (4), traffic class (5-6),
// rerouted (7).
/// Flag: the cell left a fabric element queue above its FCI threshold (§4.2).
pub const FCI: u8 = 0b100;
/// Flag of a request: the VOQ has packets (clear: it has none left).
pub const REQUEST_ON: u8 = 0b1000;
/// Flag of a reachability cell: its sender marked the link faulty for its errors (§5.10).
pub const LINK_FAULTY: u8 = 0b1000;
/// Flag of a data cell: the first of its burst (in push mode, of its packet).
pub const FIRST: u8 = 0b1_0000;
/// The traffic class of a cell (data, request, credit) in the top flag bits.
const CLASS_SHIFT: u8 = 5;
/// The most traffic classes (§3.3; Fig. 12 has two).
pub const MAX_CLASSES: usize = 4;

/// A reachability cell's bitmap slice (App. E: b = 128 bits): its low word travels in
/// `route_tag`, its high word in `packet_inject_ps`, neither of which a reachability cell
/// (never routed, never part of a packet) uses otherwise.
pub fn reach_bits(cell: &Cell) -> u128 {
    (cell.packet_inject_ps as u128) << 64 | cell.route_tag as u128
}

/// Writes `bits` as `cell`'s reachability slice (see [`reach_bits`]).
pub fn set_reach_bits(cell: &mut Cell, bits: u128) {
    cell.route_tag = bits as u64;
    cell.packet_inject_ps = (bits >> 64) as u64;
}

/// Flag of a data cell: its source adapter's reachability tables had changed when it was sent
/// (after a failure: it went on the new routes), for measuring self-healing (§5.9).
pub const REROUTED: u8 = 0b1000_0000;

/// The traffic class a cell's flags carry.
pub fn class_of(flags: u8) -> usize {
    ((flags >> CLASS_SHIFT) as usize) & (MAX_CLASSES - 1)
}

/// Flags carrying traffic class `class`.
pub fn class_flags(class: usize) -> u8 {
    debug_assert!(class < MAX_CLASSES);
    (class as u8) << CLASS_SHIFT
}

impl Kind {
    /// The kind a cell's flags say.
    pub fn of(flags: u8) -> Kind {
        match flags & KIND_MASK {
            0 => Kind::Data,
            1 => Kind::Request,
            2 => Kind::Credit,
            _ => Kind::Reach,
        }
    }
}

/// Cell sizes on the wire.
#[derive(Clone, Copy, Debug)]
pub struct CellFormat {
    /// Header of a data cell.
    pub header_bytes: u32,
    /// Payload of a full data cell.
    pub payload_bytes: u32,
    /// A control cell.
    pub control_bytes: u32,
    /// Data cells are padded to a full cell on the wire (without packing, §3.4: a
    /// conventional cell switch's cells are all of one size).
    pub padded: bool,
}

impl CellFormat {
    /// True for requests, credits and reachability messages.
    pub fn is_control(cell: &Cell) -> bool {
        Kind::of(cell.flags) != Kind::Data
    }

    /// Bytes `cell` takes on a link: a data cell's header and actual payload (packed cells are
    /// not padded: only a burst's last is short, §5.3; reading R11), or a full cell when cells
    /// are padded; or a control cell.
    pub fn wire_bytes(&self, cell: &Cell) -> u64 {
        if Self::is_control(cell) {
            self.control_bytes as u64
        } else if self.padded {
            self.data_bytes(self.payload_bytes)
        } else {
            self.data_bytes(cell.payload_bytes as u32)
        }
    }

    /// Bytes a data cell with `payload_bytes` of payload takes on a link.
    pub fn data_bytes(&self, payload_bytes: u32) -> u64 {
        (self.header_bytes + payload_bytes) as u64
    }
}

/// How adapters and elements read a Stardust cell: traffic classes are the virtual channels,
/// a burst's first cell begins its packets, and a mark is the FCI bit (§4.2).
impl CellWire for CellFormat {
    fn is_control(&self, cell: &Cell) -> bool {
        CellFormat::is_control(cell)
    }

    fn channel(&self, cell: &Cell) -> usize {
        class_of(cell.flags)
    }

    fn begins_packet(&self, cell: &Cell) -> bool {
        cell.flags & FIRST != 0
    }

    fn wire_bytes(&self, cell: &Cell) -> u64 {
        CellFormat::wire_bytes(self, cell)
    }

    fn mark(&self, cell: &mut Cell) {
        cell.flags |= FCI;
    }
}

/// Cell format.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CellConfig {
    /// Largest cell on the wire, header included (C; 256 B in §4.1).
    pub size_bytes: u32,
    /// Header of a data cell (H; not given by the paper, reading R2).
    pub header_bytes: u32,
    /// A control cell (credit, request) on the wire (reading R3: the 24 B of Table 4).
    pub control_bytes: u32,
}

impl Default for CellConfig {
    fn default() -> Self {
        CellConfig {
            size_bytes: 256,
            header_bytes: 16,
            control_bytes: 24,
        }
    }
}

/// The largest cell: cells count their payload in 16 bits.
const MAX_CELL_BYTES: u32 = 16_384;

impl CellConfig {
    /// Checks the cell sizes.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.size_bytes > MAX_CELL_BYTES {
            return Err(invalid(
                "cell.size_bytes",
                format!("expected at most {MAX_CELL_BYTES} bytes"),
            ));
        }
        let (header_bytes, size_bytes) = (self.header_bytes, self.size_bytes);
        fewer_bytes_than(
            "cell.header_bytes",
            header_bytes,
            "cell.size_bytes",
            size_bytes,
        )?;
        if self.control_bytes == 0 || self.control_bytes > self.size_bytes {
            return Err(invalid(
                "cell.control_bytes",
                format!("expected 1 to cell.size_bytes ({}) bytes", self.size_bytes),
            ));
        }
        Ok(())
    }
}
