//! A packet-switched Ethernet fabric, the "push and drop" baseline every scheduled fabric is
//! compared with (Stardust §6.3, Fig. 10): store-and-forward (or cut-through) switches
//! ([`switch`]) whose ports are of one kind ([`ports`]: drop-tail output queues that mark ECN
//! at a threshold, per port or over a shared buffer with a dynamic threshold, trimming, PFC or
//! BFC), and hosts that run a transport ([`crate::blocks::transport`]) over a NIC ([`host`]). A packet travels as one [`Cell`](crate::blocks::cell::Cell) of its
//! own size on the shared fabric of nodes: `src` and `dst` are hosts, `seq` the segment (data)
//! or the cumulative acknowledgment (ACK), `packet` the flow's index at the receiving host,
//! `payload_bytes` the frame's bytes on the wire, and an ACK's `packet_inject_ps` echoes the
//! send time of the segment that caused it. NDP (Handley et al. 2017) adds NACKs and PULLs
//! (control packets like ACKs, `seq` the NACKed segment or the flow's cumulative pull number)
//! and trimmed data: a segment whose payload a [`ports::trimming`] port cut, its header going on. DCQCN
//! (Zhu et al. 2015) adds CNPs and a lossless fabric of [`ports::pfc`] switches, whose PAUSE frames
//! take the wire between neighbours; [`ports::bfc`] (Goyal et al. 2022) gives their egress ports
//! per-flow queues and pauses that name an upstream queue.

use crate::blocks::link::Link;
use crate::engine::time::TimePs;

pub mod host;
pub mod opening;
pub mod pause;
pub mod ports;
pub mod summary;
pub mod switch;

/// Bytes of a frame a cut-through switch has before it forwards it (a minimum frame: every
/// header it routes on).
pub const CUT_THROUGH_HEADER_BYTES: u64 = 64;

/// When the far end of `link` has a frame of `size_bytes` whose last bit reaches it at
/// `last_bit_ps`: then, or, for a cut-through switch (`cuts_through`), when its first
/// [`CUT_THROUGH_HEADER_BYTES`] have (all of a shorter frame).
pub fn reached_ps(link: &Link, last_bit_ps: TimePs, size_bytes: u64, cuts_through: bool) -> TimePs {
    if !cuts_through {
        return last_bit_ps;
    }
    let header_bytes = size_bytes.min(CUT_THROUGH_HEADER_BYTES);
    last_bit_ps - link.frame_ps(size_bytes) + link.frame_ps(header_bytes)
}

/// Flag: an acknowledgment (clear: a data segment).
pub const ACK: u8 = 0b1;
/// Flag: ECN-capable transport (RFC 3168 ECT): a switch may mark instead of queueing on.
pub const ECT: u8 = 0b10;
/// Flag: congestion experienced (RFC 3168 CE), set by a switch over its threshold.
pub const CE: u8 = 0b100;
/// Flag of an ACK: ECN-Echo, the CE state of the data it acknowledges (DCTCP's per-packet
/// echo, Alizadeh et al. 2010 §3.1).
pub const ECE: u8 = 0b1000;
/// Flag: an NDP NACK: the segment `seq` reached the receiver trimmed (NDP §3.2).
pub const NACK: u8 = 0b1_0000;
/// Flag: an NDP PULL: the receiver's `seq`-th pull of the flow (cumulative, NDP §3.2).
pub const PULL: u8 = 0b10_0000;
/// Flag of a data segment: trimmed to its header by a full queue (NDP §3.1).
pub const TRIMMED: u8 = 0b100_0000;
/// Flag of a trimmed header: a full header queue returned it toward its sender (NDP §3.1
/// return-to-sender). It shares ECE's bit: ECE rides on ACKs only, this on trimmed data only.
pub const BOUNCED: u8 = ECE;
/// Flags of the packets a receiver sends back (ACK, NACK, PULL): a trimming port queues them
/// with the headers.
pub const CONTROL: u8 = ACK | NACK | PULL;
/// Flag: a PFC PAUSE frame (802.1Qbb), consumed by the link's far end ([`ports::pfc`]).
pub const PAUSE: u8 = 0b1000_0000;
/// Flags of a DCQCN congestion notification packet (Zhu et al. 2015 §3.2); a DCQCN sender's
/// other control packet, the ACK of a flow opened during the run, is [`ACK`] alone.
pub const CNP: u8 = ACK | ECE;

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut-through switch has a frame when its header has (a frame shorter than the header:
    /// when all of it has); a store-and-forward one at its last bit.
    #[test]
    fn a_cut_through_switch_has_a_frame_at_its_header() {
        let mut link = Link::new(10_000_000_000, 1_000);
        let last_bit_ps = link.transmit(0, 9000);
        assert_eq!(last_bit_ps, 7_200_000 + 1_000);
        assert_eq!(reached_ps(&link, last_bit_ps, 9000, false), last_bit_ps);
        assert_eq!(reached_ps(&link, last_bit_ps, 9000, true), 51_200 + 1_000);
        let ack_ps = link.transmit(7_200_000, 40);
        assert_eq!(reached_ps(&link, ack_ps, 40, true), ack_ps);
    }
}
