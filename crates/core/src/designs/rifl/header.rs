//! The RIFL Layer 2 header and forwarding rule (Shen and Chow 2023, §IV-A, Fig. 2 and Eq. 1).
//!
//! A header holds Total Hops and Remain Hops (4 bits each) and five 8-bit Dst Port fields. At
//! each switch, Dst Port 1 is read relative to the input port i (Eq. 1: j if j < i, j + 1 if
//! i <= j, broadcast if 255; a packet never leaves by the port it came in), Remain Hops is
//! decremented and the fields are shifted one place left with the used field moved to the back.
//!
//! Two readings where the paper is loose (see `docs/validation/rifl.md`):
//! - Eq. 1 allows j + 1 for i <= j < N, which would name port N for j = N - 1; we accept only
//!   j <= N - 2 (there are N - 1 other ports) and reject the rest as out of range.
//! - The text moves fields 2–4 forward and field 1 to position 4, leaving field 5 in place, which
//!   would misroute a fifth hop; we rotate all five. And because the receiver must recover the
//!   source's relative address "by reversing the Dst Port fields", the switch writes the return
//!   address of the hop (the input port as seen from the output port) into the field it moves to
//!   the back; a plain rotation would not carry enough information to route back.

/// Most hops a header can describe.
pub const MAX_HOPS: usize = 5;
/// Dst Port value that asks for a broadcast.
pub const BROADCAST: u8 = 255;
/// Payload bytes of one Layer 2 packet (segment).
pub const SEGMENT_BYTES: u32 = 256;
/// Layer 1 and Layer 2 header bytes carried with every segment on the wire.
pub const HEADER_BYTES: u32 = 8;

/// Where Eq. 1 sends a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// Out of this port.
    Port(usize),
    /// Out of every port but the input.
    Broadcast,
}

/// A header that cannot be built or forwarded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// More hops than the header has fields.
    #[error("a route of {0} hops does not fit the header's {MAX_HOPS} Dst Port fields")]
    TooManyHops(usize),
    /// A route of no hops.
    #[error("a route needs at least one hop")]
    NoHops,
    /// Remain Hops is 0 at a switch, or exceeds Total Hops.
    #[error("Remain Hops {remain} with Total Hops {total} cannot be forwarded")]
    BadHopCount {
        /// Total Hops field.
        total: u8,
        /// Remain Hops field.
        remain: u8,
    },
    /// A Dst Port field names no port of this switch.
    #[error("Dst Port {field} at input {input} names no port of a {ports}-port switch")]
    PortOutOfRange {
        /// The field's value.
        field: u8,
        /// Input port.
        input: usize,
        /// Ports of the switch.
        ports: usize,
    },
    /// A route asks to leave by the input port.
    #[error("port {0} cannot send a packet back out of itself")]
    LoopBack(usize),
    /// The switch has more ports than 8-bit relative addresses can name.
    #[error("a {0}-port switch is too large for 8-bit Dst Port fields (at most 255 ports)")]
    TooManyPorts(usize),
}

/// The relative address of `output` seen from `input`: the inverse of Eq. 1.
pub fn relative_port(input: usize, output: usize) -> Result<u8, HeaderError> {
    let relative = match output.cmp(&input) {
        std::cmp::Ordering::Less => output,
        std::cmp::Ordering::Equal => return Err(HeaderError::LoopBack(input)),
        std::cmp::Ordering::Greater => output - 1,
    };
    u8::try_from(relative)
        .ok()
        .filter(|&r| r != BROADCAST)
        .ok_or(HeaderError::TooManyPorts(output + 1))
}

/// Eq. 1: the output of an `ports`-port switch that Dst Port value `field` names at `input`.
pub fn destination(input: usize, field: u8, ports: usize) -> Result<Forward, HeaderError> {
    if field == BROADCAST {
        return Ok(Forward::Broadcast);
    }
    let j = field as usize;
    if j < input {
        Ok(Forward::Port(j))
    } else if j + 1 < ports {
        Ok(Forward::Port(j + 1))
    } else {
        Err(HeaderError::PortOutOfRange {
            field,
            input,
            ports,
        })
    }
}

/// The Layer 2 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Hops from source to destination.
    pub total_hops: u8,
    /// Hops still to go.
    pub remain_hops: u8,
    /// Relative output port per hop, next hop first.
    pub dst_ports: [u8; MAX_HOPS],
}

impl Header {
    /// A header as the source endpoint writes it: Total Hops = Remain Hops = the number of fields.
    pub fn new(fields: &[u8]) -> Result<Header, HeaderError> {
        match fields.len() {
            0 => return Err(HeaderError::NoHops),
            n if n > MAX_HOPS => return Err(HeaderError::TooManyHops(n)),
            _ => {}
        }
        let mut dst_ports = [0; MAX_HOPS];
        dst_ports[..fields.len()].copy_from_slice(fields);
        Ok(Header {
            total_hops: fields.len() as u8,
            remain_hops: fields.len() as u8,
            dst_ports,
        })
    }

    /// Where the switch sends this packet arriving on `input` of a `ports`-port switch.
    pub fn forward(&self, input: usize, ports: usize) -> Result<Forward, HeaderError> {
        self.check_forwardable()?;
        destination(input, self.dst_ports[0], ports)
    }

    /// The header as it leaves the switch by `output` after arriving on `input`: one hop fewer,
    /// fields shifted left, the hop's return address written to the back.
    pub fn leave(&self, input: usize, output: usize) -> Result<Header, HeaderError> {
        self.check_forwardable()?;
        let mut dst_ports = [0; MAX_HOPS];
        dst_ports[..MAX_HOPS - 1].copy_from_slice(&self.dst_ports[1..]);
        dst_ports[MAX_HOPS - 1] = relative_port(output, input)?;
        Ok(Header {
            remain_hops: self.remain_hops - 1,
            dst_ports,
            ..*self
        })
    }

    /// At the destination (Remain Hops 0): the header that routes a reply back to the source,
    /// read by reversing the return addresses the switches wrote.
    pub fn return_route(&self) -> Result<Header, HeaderError> {
        if self.remain_hops != 0 || self.total_hops == 0 || self.total_hops as usize > MAX_HOPS {
            return Err(HeaderError::BadHopCount {
                total: self.total_hops,
                remain: self.remain_hops,
            });
        }
        let hops = self.total_hops as usize;
        let mut fields: Vec<u8> = self.dst_ports[MAX_HOPS - hops..].to_vec();
        fields.reverse();
        Header::new(&fields)
    }

    /// The six header bytes of Layer 2 (Total Hops in the high nibble, then the Dst Ports).
    pub fn encode(&self) -> [u8; 6] {
        let mut bytes = [0; 6];
        bytes[0] = (self.total_hops << 4) | (self.remain_hops & 0x0f);
        bytes[1..].copy_from_slice(&self.dst_ports);
        bytes
    }

    /// Reads a header from its six bytes, rejecting impossible hop counts.
    pub fn decode(bytes: [u8; 6]) -> Result<Header, HeaderError> {
        let (total, remain) = (bytes[0] >> 4, bytes[0] & 0x0f);
        if total == 0 || total as usize > MAX_HOPS || remain > total {
            return Err(HeaderError::BadHopCount { total, remain });
        }
        let mut dst_ports = [0; MAX_HOPS];
        dst_ports.copy_from_slice(&bytes[1..]);
        Ok(Header {
            total_hops: total,
            remain_hops: remain,
            dst_ports,
        })
    }

    fn check_forwardable(&self) -> Result<(), HeaderError> {
        let (total, remain) = (self.total_hops, self.remain_hops);
        if remain == 0 || remain > total || total as usize > MAX_HOPS {
            return Err(HeaderError::BadHopCount { total, remain });
        }
        Ok(())
    }
}

/// Segments an upper-layer packet of `packet_bytes` becomes (the last one padded) and the bytes
/// it occupies on the wire, headers and padding included.
pub fn segment(packet_bytes: u32) -> (u32, u64) {
    let segments = packet_bytes.div_ceil(SEGMENT_BYTES).max(1);
    (
        segments,
        segments as u64 * (SEGMENT_BYTES + HEADER_BYTES) as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equation_one_on_a_four_port_switch() {
        let at = |input, field| destination(input, field, 4);
        assert_eq!(at(2, 0), Ok(Forward::Port(0)));
        assert_eq!(at(2, 1), Ok(Forward::Port(1)));
        assert_eq!(at(2, 2), Ok(Forward::Port(3)), "j = i skips the input port");
        assert_eq!(at(0, 0), Ok(Forward::Port(1)));
        assert_eq!(at(3, 2), Ok(Forward::Port(2)));
        assert_eq!(at(2, 255), Ok(Forward::Broadcast));
        assert_eq!(
            at(2, 3),
            Err(HeaderError::PortOutOfRange {
                field: 3,
                input: 2,
                ports: 4
            })
        );
        assert_eq!(relative_port(1, 1), Err(HeaderError::LoopBack(1)));
        assert_eq!(relative_port(0, 300), Err(HeaderError::TooManyPorts(301)));
    }

    #[test]
    fn relative_port_inverts_equation_one_and_never_loops_back() {
        for ports in 2..=40 {
            for input in 0..ports {
                for output in (0..ports).filter(|&o| o != input) {
                    let field = relative_port(input, output).unwrap();
                    assert_eq!(destination(input, field, ports), Ok(Forward::Port(output)));
                }
            }
        }
    }

    #[test]
    fn malformed_headers_are_rejected_not_panicked_on() {
        assert_eq!(Header::new(&[1; 6]), Err(HeaderError::TooManyHops(6)));
        assert_eq!(Header::new(&[]), Err(HeaderError::NoHops));
        let done = Header {
            total_hops: 2,
            remain_hops: 0,
            dst_ports: [0; 5],
        };
        assert!(matches!(
            done.forward(0, 4),
            Err(HeaderError::BadHopCount { .. })
        ));
        assert!(matches!(
            done.leave(0, 1),
            Err(HeaderError::BadHopCount { .. })
        ));
        assert!(matches!(
            Header::decode([0x13, 0, 0, 0, 0, 0]),
            Err(HeaderError::BadHopCount { .. })
        ));
        assert!(matches!(
            Header::decode([0x66, 0, 0, 0, 0, 0]),
            Err(HeaderError::BadHopCount { .. })
        ));
        let fresh = Header::new(&[1, 2]).unwrap();
        assert_eq!(Header::decode(fresh.encode()), Ok(fresh));
        assert!(matches!(
            fresh.return_route(),
            Err(HeaderError::BadHopCount { .. })
        ));
    }

    #[test]
    fn segmentation_pads_the_last_segment_and_counts_headers() {
        assert_eq!(segment(256), (1, 264));
        assert_eq!(segment(257), (2, 528));
        assert_eq!(segment(64), (1, 264));
        assert_eq!(segment(2048), (8, 8 * 264));
    }

    proptest! {
        /// Along any route of up to five hops through switches of any size, every switch sends
        /// the packet where the route says, the header arrives with Remain Hops 0, and reversing
        /// its fields routes a reply back through the same ports in the opposite direction.
        #[test]
        fn routes_forward_and_reverse(hops in proptest::collection::vec((2usize..64, 0usize..64, 0usize..64), 1..=5)) {
            let hops: Vec<(usize, usize, usize)> = hops
                .into_iter()
                .map(|(ports, a, b)| (ports, a % ports, if b % ports == a % ports { (b + 1) % ports } else { b % ports }))
                .collect();
            let fields: Vec<u8> = hops.iter().map(|&(_, i, o)| relative_port(i, o).unwrap()).collect();
            let mut header = Header::new(&fields).unwrap();
            for &(ports, input, output) in &hops {
                prop_assert_eq!(header.forward(input, ports), Ok(Forward::Port(output)));
                header = header.leave(input, output).unwrap();
                prop_assert_eq!(Header::decode(header.encode()), Ok(header));
            }
            prop_assert_eq!(header.remain_hops, 0);
            let mut reply = header.return_route().unwrap();
            for &(ports, input, output) in hops.iter().rev() {
                prop_assert_eq!(reply.forward(output, ports), Ok(Forward::Port(input)));
                reply = reply.leave(output, input).unwrap();
            }
            prop_assert_eq!(reply.return_route().unwrap().dst_ports, Header::new(&fields).unwrap().dst_ports);
        }
    }
}
