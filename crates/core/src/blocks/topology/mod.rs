//! Topology: switches with numbered ports, endpoints, and the cables between them, with
//! shortest-path routes expressed as the output port taken at every switch on the way. The
//! named shapes (star, leaf-spine, fat-tree, Clos, Dragonfly, ...) are in `shapes.rs`, Aquila's
//! Clique in `clique.rs`.

use std::collections::VecDeque;

use crate::blocks::flow_control::FlowControlKind;
use crate::engine::time::TimePs;

mod clique;
mod file;
mod shapes;

pub use clique::{Clique, SpareLocalPorts};
pub use shapes::Clos;

/// What a switch port is cabled to, as routing and link settings tell ports apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortClass {
    /// A host.
    Terminal,
    /// A switch of the same group (a pod's local link).
    Local,
    /// A switch of another group (a global link between pods or Dragonfly groups).
    Global,
    /// Nothing.
    Unused,
}

/// One end of a cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attachment {
    /// Port `port` of switch `switch`.
    SwitchPort {
        /// Switch index.
        switch: usize,
        /// Port on that switch.
        port: usize,
    },
    /// An endpoint (host NIC), by index.
    Endpoint(usize),
}

impl std::fmt::Display for Attachment {
    /// As a user reads it: `port 3 of switch 1`, `host 7` (indices in the order of definition).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attachment::SwitchPort { switch, port } => write!(f, "port {port} of switch {switch}"),
            Attachment::Endpoint(host) => write!(f, "host {host}"),
        }
    }
}

/// A hop of a route: the switch, the port the packet enters by and the port it leaves by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Switch index.
    pub switch: usize,
    /// Input port.
    pub input: usize,
    /// Output port.
    pub output: usize,
}

/// Why a topology could not be built or routed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// A cable end names a port that does not exist.
    #[error("switch {switch} has {ports} ports; port {port} does not exist")]
    NoSuchPort {
        /// Switch index.
        switch: usize,
        /// Port named.
        port: usize,
        /// Ports the switch has.
        ports: usize,
    },
    /// Two cables use the same port or endpoint.
    #[error("{0} is cabled twice")]
    CabledTwice(Attachment),
    /// The named shape cannot be built with these parameters.
    #[error("{0}")]
    Shape(String),
    /// One parameter of the named shape is out of range.
    #[error("{message}")]
    Parameter {
        /// The parameter's name.
        name: &'static str,
        /// What was expected.
        message: String,
    },
    /// No path joins two endpoints.
    #[error("endpoint {dst} cannot be reached from endpoint {src}")]
    Unreachable {
        /// Source endpoint.
        src: usize,
        /// Destination endpoint.
        dst: usize,
    },
}

/// Switches, endpoints and cables.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    ports: Vec<usize>,
    endpoint_names: Vec<String>,
    /// Far end of each switch port, by switch then port.
    peer: Vec<Vec<Option<Attachment>>>,
    /// Switch port each endpoint is cabled to.
    endpoint_port: Vec<Option<(usize, usize)>>,
    /// Group of each switch (a Dragonfly group, a fat-tree pod); 0 where the shape has none.
    group: Vec<usize>,
    /// The cable on each switch port, where it differs from the scenario's links.
    cable: Vec<Vec<Cable>>,
}

/// What a cable is where it differs from the scenario's links; a field left `None` takes the
/// scenario's value. Both directions of a cable are alike.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cable {
    /// Propagation delay.
    pub propagation_ps: Option<TimePs>,
    /// Line rate.
    pub rate_bps: Option<u64>,
    /// Bytes every cell carries on the wire beyond its own (FEC, framing).
    pub overhead_bytes: Option<u32>,
    /// Link-level flow control into the receiving switch.
    pub flow_control: Option<FlowControlKind>,
    /// Bit error rate in both directions, independent errors: the cable runs RIFL Layer 1
    /// (Shen and Chow 2023, §II-A) when it is above 0, whatever the scenario's `link.ber`.
    pub ber: Option<f64>,
}

impl Cable {
    /// True if the cable has nothing of its own.
    pub fn is_default(&self) -> bool {
        *self == Cable::default()
    }
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a switch with `ports` ports and returns its index.
    pub fn add_switch(&mut self, ports: usize) -> usize {
        self.ports.push(ports);
        self.peer.push(vec![None; ports]);
        self.cable.push(vec![Cable::default(); ports]);
        self.group.push(0);
        self.ports.len() - 1
    }

    /// Gives the cable on port `port` of `switch` (both of its ends) its own properties.
    pub fn set_cable(&mut self, switch: usize, port: usize, cable: Cable) {
        self.cable[switch][port] = cable;
        if let Some(Attachment::SwitchPort { switch, port }) = self.peer[switch][port] {
            self.cable[switch][port] = cable;
        }
    }

    /// The cable on port `port` of `switch`: what it has of its own.
    pub fn cable(&self, switch: usize, port: usize) -> Cable {
        self.cable[switch][port]
    }

    /// The link each way over the cable on switch port (`switch`, `port`), a packet design's
    /// `[link]` section giving what the topology does not (a host's cable at its host rate).
    pub fn link_over(
        &self,
        switch: usize,
        port: usize,
        links: &crate::blocks::link::LinkConfig,
    ) -> crate::blocks::link::Link {
        let (rate_bps, host_rate_bps) = (links.rate_bps(), links.host_rate_bps());
        self.cable_link(
            switch,
            port,
            rate_bps,
            host_rate_bps,
            links.propagation_ps(),
        )
    }

    /// The link each way over the cable on port `port` of `switch`: its own rate and length
    /// where it has them, else `host_rate_bps` for a host's cable or `rate_bps`, and
    /// `propagation_ps`.
    pub fn cable_link(
        &self,
        switch: usize,
        port: usize,
        rate_bps: u64,
        host_rate_bps: u64,
        propagation_ps: TimePs,
    ) -> crate::blocks::link::Link {
        let cable = self.cable(switch, port);
        let default_bps = match self.peer(switch, port) {
            Some(Attachment::Endpoint(_)) => host_rate_bps,
            _ => rate_bps,
        };
        crate::blocks::link::Link::new(
            cable.rate_bps.unwrap_or(default_bps),
            cable.propagation_ps.unwrap_or(propagation_ps),
        )
    }

    /// The class of port `port` of `switch`: what its cable leads to.
    pub fn port_class(&self, switch: usize, port: usize) -> PortClass {
        match self.peer[switch][port] {
            None => PortClass::Unused,
            Some(Attachment::Endpoint(_)) => PortClass::Terminal,
            Some(Attachment::SwitchPort { switch: far, .. })
                if self.group[far] == self.group[switch] =>
            {
                PortClass::Local
            }
            Some(Attachment::SwitchPort { .. }) => PortClass::Global,
        }
    }

    /// Gives every cable whose ports are of class `class` the properties `cable` (Aquila's
    /// global links their FEC, say).
    pub fn set_class_cable(&mut self, class: PortClass, cable: Cable) {
        for (switch, port) in self.switch_port_list().collect::<Vec<_>>() {
            if self.port_class(switch, port) == class {
                self.cable[switch][port] = cable;
            }
        }
    }

    /// Every switch port, as (switch, port).
    pub fn switch_port_list(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.switches()).flat_map(move |s| (0..self.ports[s]).map(move |p| (s, p)))
    }

    /// Gives every cable between two groups the propagation delay `delay_ps` (a Dragonfly's
    /// global links, a fat-tree's core links).
    pub fn set_global_cable_delay(&mut self, delay_ps: TimePs) {
        for (switch, port) in self.switch_port_list().collect::<Vec<_>>() {
            if let Some(Attachment::SwitchPort { switch: other, .. }) = self.peer[switch][port] {
                if self.group[other] != self.group[switch] {
                    self.cable[switch][port].propagation_ps = Some(delay_ps);
                }
            }
        }
    }

    /// Puts `switch` in group `group` (non-minimal routing picks intermediate groups).
    pub fn set_group(&mut self, switch: usize, group: usize) {
        self.group[switch] = group;
    }

    /// Group of `switch`.
    pub fn group(&self, switch: usize) -> usize {
        self.group[switch]
    }

    /// Number of groups (one more than the highest group index).
    pub fn groups(&self) -> usize {
        self.group.iter().max().map_or(0, |g| g + 1)
    }

    /// Adds a named endpoint and returns its index.
    pub fn add_endpoint(&mut self, name: impl Into<String>) -> usize {
        self.endpoint_names.push(name.into());
        self.endpoint_port.push(None);
        self.endpoint_names.len() - 1
    }

    /// Index of the endpoint called `name`.
    pub fn endpoint(&self, name: &str) -> Option<usize> {
        self.endpoint_names.iter().position(|n| n == name)
    }

    /// Name of endpoint `index`.
    pub fn endpoint_name(&self, index: usize) -> &str {
        &self.endpoint_names[index]
    }

    /// Number of endpoints.
    pub fn endpoints(&self) -> usize {
        self.endpoint_names.len()
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.ports.len()
    }

    /// The switch and port endpoint `endpoint` is cabled to.
    pub fn endpoint_port(&self, endpoint: usize) -> Option<(usize, usize)> {
        self.endpoint_port[endpoint]
    }

    /// What port `port` of switch `switch` is cabled to.
    pub fn peer(&self, switch: usize, port: usize) -> Option<Attachment> {
        self.peer[switch][port]
    }

    /// The switch cabled to `switch`'s `port`, if a switch is.
    pub fn peer_switch(&self, switch: usize, port: usize) -> Option<usize> {
        match self.peer(switch, port) {
            Some(Attachment::SwitchPort { switch, .. }) => Some(switch),
            _ => None,
        }
    }

    /// The switches cabled to `switch`, one per cable, in port order.
    #[cfg(test)]
    pub(crate) fn switch_neighbours(&self, switch: usize) -> Vec<usize> {
        (0..self.switch_ports(switch))
            .filter_map(|port| self.peer_switch(switch, port))
            .collect()
    }

    /// Removes the cable between `switch`'s `port` and another switch (a link that failed),
    /// returning the far end; `None`, changing nothing, if no switch is cabled there.
    pub fn cut(&mut self, switch: usize, port: usize) -> Option<(usize, usize)> {
        let far = match self.peer[switch].get(port).copied().flatten()? {
            Attachment::SwitchPort { switch, port } => (switch, port),
            Attachment::Endpoint(_) => return None,
        };
        self.peer[switch][port] = None;
        self.peer[far.0][far.1] = None;
        Some(far)
    }

    /// Ports of switch `switch`.
    pub fn switch_ports(&self, switch: usize) -> usize {
        self.ports[switch]
    }

    /// Cables two attachments together (full duplex).
    pub fn connect(&mut self, a: Attachment, b: Attachment) -> Result<(), TopologyError> {
        for end in [a, b] {
            let taken = match end {
                Attachment::SwitchPort { switch, port } => {
                    let ports = self.ports[switch];
                    if port >= ports {
                        return Err(TopologyError::NoSuchPort {
                            switch,
                            port,
                            ports,
                        });
                    }
                    self.peer[switch][port].is_some()
                }
                Attachment::Endpoint(e) => self.endpoint_port[e].is_some(),
            };
            if taken || a == b {
                return Err(TopologyError::CabledTwice(end));
            }
        }
        for (end, other) in [(a, b), (b, a)] {
            match end {
                Attachment::SwitchPort { switch, port } => self.peer[switch][port] = Some(other),
                Attachment::Endpoint(e) => match other {
                    Attachment::SwitchPort { switch, port } => {
                        self.endpoint_port[e] = Some((switch, port))
                    }
                    Attachment::Endpoint(_) => return Err(TopologyError::CabledTwice(end)),
                },
            }
        }
        Ok(())
    }

    /// A shortest route (fewest switches) from endpoint `src` to endpoint `dst`; among equal
    /// routes, the one through the lowest-numbered ports.
    pub fn route(&self, src: usize, dst: usize) -> Result<Vec<Hop>, TopologyError> {
        self.route_spread(src, dst, 0)
    }

    /// A shortest route from `src` to `dst`, choosing among equal routes by `spread`: each
    /// switch considers its ports in an order shuffled by `spread`, so different values of
    /// `spread` (one per pair, say) spread pairs evenly over parallel links and spines.
    pub fn route_spread(
        &self,
        src: usize,
        dst: usize,
        spread: usize,
    ) -> Result<Vec<Hop>, TopologyError> {
        let unreachable = TopologyError::Unreachable { src, dst };
        let (first_switch, first_input) = self.endpoint_port[src].ok_or(unreachable.clone())?;
        // Breadth-first search over (switch, input port) states.
        let mut came_from: Vec<Vec<Option<Hop>>> =
            self.ports.iter().map(|&p| vec![None; p]).collect();
        let mut seen: Vec<Vec<bool>> = self.ports.iter().map(|&p| vec![false; p]).collect();
        let mut frontier = VecDeque::from([(first_switch, first_input)]);
        seen[first_switch][first_input] = true;
        while let Some((switch, input)) = frontier.pop_front() {
            let mut outputs: Vec<usize> = (0..self.ports[switch]).collect();
            if spread != 0 {
                outputs
                    .sort_by_key(|&o| crate::engine::rng::mix(((spread as u64) << 32) | o as u64));
            }
            for output in outputs.into_iter().filter(|&o| o != input) {
                match self.peer[switch][output] {
                    Some(Attachment::Endpoint(e)) if e == dst => {
                        let mut route = vec![Hop {
                            switch,
                            input,
                            output,
                        }];
                        let mut at = (switch, input);
                        while let Some(prev) = came_from[at.0][at.1] {
                            route.push(prev);
                            at = (prev.switch, prev.input);
                        }
                        route.reverse();
                        return Ok(route);
                    }
                    Some(Attachment::SwitchPort { switch: next, port }) if !seen[next][port] => {
                        seen[next][port] = true;
                        came_from[next][port] = Some(Hop {
                            switch,
                            input,
                            output,
                        });
                        frontier.push_back((next, port));
                    }
                    _ => {}
                }
            }
        }
        Err(unreachable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two 4-port switches joined by two cables; endpoints a, b on switch 0 and c, d on switch 1.
    fn two_switches() -> Topology {
        let mut t = Topology::new();
        let (s0, s1) = (t.add_switch(4), t.add_switch(4));
        for (name, switch, port) in [("a", s0, 0), ("b", s0, 1), ("c", s1, 0), ("d", s1, 1)] {
            let e = t.add_endpoint(name);
            t.connect(
                Attachment::Endpoint(e),
                Attachment::SwitchPort { switch, port },
            )
            .unwrap();
        }
        for port in [2, 3] {
            let end = |switch| Attachment::SwitchPort { switch, port };
            t.connect(end(s0), end(s1)).unwrap();
        }
        t
    }

    #[test]
    fn routes_are_shortest_and_use_the_lowest_ports() {
        let t = two_switches();
        let (a, b, d) = (
            t.endpoint("a").unwrap(),
            t.endpoint("b").unwrap(),
            t.endpoint("d").unwrap(),
        );
        assert_eq!(
            t.route(a, b).unwrap(),
            vec![Hop {
                switch: 0,
                input: 0,
                output: 1
            }]
        );
        assert_eq!(
            t.route(a, d).unwrap(),
            vec![
                Hop {
                    switch: 0,
                    input: 0,
                    output: 2
                },
                Hop {
                    switch: 1,
                    input: 2,
                    output: 1
                }
            ]
        );
    }

    #[test]
    fn bad_cabling_and_unreachable_endpoints_are_errors() {
        let mut t = two_switches();
        let lonely = t.add_endpoint("e");
        assert_eq!(
            t.route(0, lonely),
            Err(TopologyError::Unreachable {
                src: 0,
                dst: lonely
            })
        );
        let port9 = Attachment::SwitchPort { switch: 0, port: 9 };
        assert!(matches!(
            t.connect(Attachment::Endpoint(lonely), port9),
            Err(TopologyError::NoSuchPort { .. })
        ));
        let taken = Attachment::SwitchPort { switch: 0, port: 0 };
        assert_eq!(
            t.connect(Attachment::Endpoint(lonely), taken),
            Err(TopologyError::CabledTwice(taken))
        );
    }
}
