//! RIFL source routing in the network simulator (seed 004, §IV-A): a terminal writes the Layer 2
//! header its address table gives for the destination; every switch forwards by Eq. 1 on Dst
//! Port 1 relative to the input port, then shifts the fields.

use super::addressing::{AddressError, AddressTable};
use super::header::{Forward, Header};
use crate::blocks::cell::Cell;
use crate::blocks::network::Router;
use crate::blocks::topology::Topology;

/// Routes cells by the RIFL Layer 2 header they carry.
pub struct RiflRouter {
    terminals: usize,
    /// Encoded header per (source, destination), `src * terminals + dst`.
    headers: Vec<[u8; 6]>,
    /// Ports per switch.
    ports: Vec<usize>,
}

impl RiflRouter {
    /// Computes every pair's header from `topology`.
    pub fn new(topology: &Topology) -> Result<RiflRouter, AddressError> {
        let table = AddressTable::new(topology)?;
        let terminals = topology.endpoints();
        let headers = (0..terminals * terminals)
            .map(|i| {
                table
                    .header_at(i / terminals, i % terminals)
                    .map_or([0; 6], |h| h.encode())
            })
            .collect();
        let ports = (0..topology.switches())
            .map(|s| topology.switch_ports(s))
            .collect();
        Ok(RiflRouter {
            terminals,
            headers,
            ports,
        })
    }

    fn header(cell: &Cell) -> Header {
        Header::decode(cell.header).expect("terminals write valid headers")
    }
}

impl Router for RiflRouter {
    fn inject(&self, src: usize, cell: &mut Cell) {
        assert_ne!(
            src, cell.dst as usize,
            "RIFL does not loop a packet back to its source"
        );
        cell.header = self.headers[src * self.terminals + cell.dst as usize];
    }

    fn output(&self, switch: usize, input: usize, cell: &Cell) -> usize {
        match Self::header(cell).forward(input, self.ports[switch]) {
            Ok(Forward::Port(output)) => output,
            other => panic!("cell header cannot be forwarded at switch {switch}: {other:?}"),
        }
    }

    fn advance(&self, _switch: usize, input: usize, output: usize, cell: &mut Cell) {
        let header = Self::header(cell).leave(input, output);
        cell.header = header.expect("a forwardable header leaves").encode();
    }
}
