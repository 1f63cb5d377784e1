//! RIFL source routing in the network simulator (Shen and Chow 2023, §IV-A): a terminal writes the
//! Layer 2 header its address table gives for the destination; every switch forwards by Eq. 1 on
//! Dst Port 1 relative to the input port, then shifts the fields. A broadcast (Dst Port 255) is
//! copied by the switch to every output but the input ([`super::broadcast`]).

use super::addressing::{AddressError, AddressTable};
use super::header::{Forward, Header, BROADCAST};
use crate::blocks::cell::{Cell, BROADCAST_DST};
use crate::blocks::routing::{LocalView, Router};
use crate::blocks::topology::Topology;

/// Routes cells by the RIFL Layer 2 header they carry.
pub struct RiflRouter {
    terminals: usize,
    /// Encoded header per (source, destination), `src * terminals + dst`.
    headers: Vec<[u8; 6]>,
    /// Encoded broadcast header per source; empty where the traffic broadcasts nothing.
    broadcast_headers: Vec<[u8; 6]>,
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
            broadcast_headers: Vec::new(),
            ports,
        })
    }

    /// Lets the hosts broadcast, each starting with its header of `headers` (by host).
    pub fn with_broadcasts(mut self, headers: &[Header]) -> Self {
        self.broadcast_headers = headers.iter().map(Header::encode).collect();
        self
    }

    /// The Layer 2 header `cell` carries.
    pub fn header(cell: &Cell) -> Header {
        let bytes = cell.route_tag.to_le_bytes();
        let wire: [u8; 6] = bytes[..6].try_into().expect("six header bytes");
        Header::decode(wire).expect("terminals write valid headers")
    }

    /// Writes an encoded Layer 2 header into `cell`.
    pub fn set_header(cell: &mut Cell, wire: [u8; 6]) {
        let mut bytes = [0; 8];
        bytes[..6].copy_from_slice(&wire);
        cell.route_tag = u64::from_le_bytes(bytes);
    }

    fn output(&self, switch: usize, input: usize, cell: &Cell) -> usize {
        match Self::header(cell).forward(input, self.ports[switch]) {
            Ok(Forward::Port(output)) => output,
            other => panic!("cell header cannot be forwarded at switch {switch}: {other:?}"),
        }
    }
}

impl Router for RiflRouter {
    /// Source routing counts nothing.
    fn absorb_counts(&mut self, _other: &Self) {}

    fn inject(&mut self, src: usize, cell: &mut Cell) {
        if cell.dst == BROADCAST_DST {
            Self::set_header(cell, self.broadcast_headers[src]);
            return;
        }
        assert_ne!(
            src, cell.dst as usize,
            "RIFL does not loop a packet back to its source"
        );
        Self::set_header(cell, self.headers[src * self.terminals + cell.dst as usize]);
    }

    /// A broadcast's copies keep [`BROADCAST_DST`]; at a switch, Dst Port 1 of 255 floods.
    fn is_broadcast(&self, _switch: usize, _input: usize, cell: &Cell) -> bool {
        cell.dst == BROADCAST_DST && Self::header(cell).dst_ports[0] == BROADCAST
    }

    fn route_copy(&mut self, _switch: usize, input: usize, output: usize, cell: &mut Cell) {
        let header = Self::header(cell).leave(input, output);
        Self::set_header(cell, header.expect("a broadcast header leaves").encode());
    }

    fn route(
        &mut self,
        switch: usize,
        input: usize,
        cell: &mut Cell,
        _view: &dyn LocalView,
    ) -> usize {
        let output = self.output(switch, input, cell);
        let header = Self::header(cell).leave(input, output);
        Self::set_header(cell, header.expect("a forwardable header leaves").encode());
        output
    }

    fn planned_output(&self, switch: usize, input: usize, cell: &Cell) -> Option<usize> {
        Some(self.output(switch, input, cell))
    }
}
