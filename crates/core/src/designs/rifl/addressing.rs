//! The RIFL address table: endpoint names to relative source routes, computed from the topology
//! (Shen and Chow 2023, §IV-A: "a centralized address mapping server ... sends the mapping
//! information to each endpoint"). Users address hosts by name; the table turns a name into a
//! Layer 2 header. Among equally short routes, each pair's route is drawn by a hash of the pair, so
//! pairs spread over parallel links and spines.

use std::collections::HashMap;

use super::header::{relative_port, Header, HeaderError, MAX_HOPS};
use crate::blocks::topology::{Topology, TopologyError};

/// Why an address could not be resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// No endpoint has this name.
    #[error("no endpoint is named {0:?}")]
    UnknownEndpoint(String),
    /// A route could not be found.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The route does not fit a header.
    #[error("route from {src:?} to {dst:?}: {error}")]
    Header {
        /// Source endpoint name.
        src: String,
        /// Destination endpoint name.
        dst: String,
        /// What does not fit.
        error: HeaderError,
    },
}

/// Routes between every ordered pair of distinct endpoints.
#[derive(Clone, Debug)]
pub struct AddressTable {
    index: HashMap<String, usize>,
    headers: Vec<Vec<Option<Header>>>,
}

impl AddressTable {
    /// Computes the shortest route between every pair of endpoints of `topology`.
    pub fn new(topology: &Topology) -> Result<AddressTable, AddressError> {
        let n = topology.endpoints();
        let mut headers = vec![vec![None; n]; n];
        for (src, row) in headers.iter_mut().enumerate() {
            for dst in (0..n).filter(|&d| d != src) {
                let route = topology.route_spread(src, dst, 1 + src * n + dst)?;
                let names = || {
                    (
                        topology.endpoint_name(src).to_string(),
                        topology.endpoint_name(dst).to_string(),
                    )
                };
                let header_error = |error| {
                    let (src, dst) = names();
                    AddressError::Header { src, dst, error }
                };
                if route.len() > MAX_HOPS {
                    return Err(header_error(HeaderError::TooManyHops(route.len())));
                }
                let fields = route
                    .iter()
                    .map(|hop| {
                        if topology.switch_ports(hop.switch) > 255 {
                            return Err(HeaderError::TooManyPorts(
                                topology.switch_ports(hop.switch),
                            ));
                        }
                        relative_port(hop.input, hop.output)
                    })
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(header_error)?;
                row[dst] = Some(Header::new(&fields).map_err(header_error)?);
            }
        }
        let index = (0..n)
            .map(|e| (topology.endpoint_name(e).to_string(), e))
            .collect();
        Ok(AddressTable { index, headers })
    }

    /// The header a packet from endpoint `src` to endpoint `dst` (indices) starts with; `None`
    /// for `src == dst` (no loopback).
    pub fn header_at(&self, src: usize, dst: usize) -> Option<Header> {
        self.headers[src][dst]
    }

    /// The header a packet from `src` to `dst` (endpoint names) starts with.
    pub fn header(&self, src: &str, dst: &str) -> Result<Header, AddressError> {
        let find = |name: &str| {
            self.index
                .get(name)
                .copied()
                .ok_or_else(|| AddressError::UnknownEndpoint(name.into()))
        };
        let (s, d) = (find(src)?, find(dst)?);
        self.headers[s][d].ok_or_else(|| AddressError::Header {
            src: src.into(),
            dst: dst.into(),
            error: HeaderError::LoopBack(s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::header::Forward;
    use super::*;
    use crate::blocks::topology::Attachment;

    /// A chain of `switches` 3-port switches: host "h0" on the first, "h1" on the last.
    fn chain(switches: usize) -> Topology {
        let mut t = Topology::new();
        let ids: Vec<usize> = (0..switches).map(|_| t.add_switch(3)).collect();
        for pair in ids.windows(2) {
            t.connect(
                Attachment::SwitchPort {
                    switch: pair[0],
                    port: 2,
                },
                Attachment::SwitchPort {
                    switch: pair[1],
                    port: 1,
                },
            )
            .unwrap();
        }
        let (h0, h1) = (t.add_endpoint("h0"), t.add_endpoint("h1"));
        t.connect(
            Attachment::Endpoint(h0),
            Attachment::SwitchPort {
                switch: ids[0],
                port: 0,
            },
        )
        .unwrap();
        t.connect(
            Attachment::Endpoint(h1),
            Attachment::SwitchPort {
                switch: ids[switches - 1],
                port: 0,
            },
        )
        .unwrap();
        t
    }

    #[test]
    fn names_resolve_to_headers_that_walk_the_route() {
        let t = chain(3);
        let table = AddressTable::new(&t).unwrap();
        let mut header = table.header("h0", "h1").unwrap();
        assert_eq!(header.total_hops, 3);
        for hop in t.route(0, 1).unwrap() {
            assert_eq!(
                header.forward(hop.input, t.switch_ports(hop.switch)),
                Ok(Forward::Port(hop.output))
            );
            header = header.leave(hop.input, hop.output).unwrap();
        }
        assert_eq!(
            header.return_route().unwrap(),
            table.header("h1", "h0").unwrap()
        );
        assert_eq!(
            table.header("h0", "nobody"),
            Err(AddressError::UnknownEndpoint("nobody".into()))
        );
    }

    #[test]
    fn routes_longer_than_five_hops_are_rejected() {
        assert!(AddressTable::new(&chain(5)).is_ok());
        let error = AddressTable::new(&chain(6)).unwrap_err();
        assert!(
            matches!(
                error,
                AddressError::Header {
                    error: HeaderError::TooManyHops(6),
                    ..
                }
            ),
            "{error}"
        );
    }
}
