//! N terminals on one cell switch: the classic switch-theory setting (Karol et al. 1987 for FIFO
//! input queueing, McKeown 1999 for iSLIP, Anderson et al. 1993 for PIM, and the ideal
//! output-queued switch): a one-switch `Network` routed by destination.
//!
//! Terminal i is wired to switch port i in both directions. Terminals inject cells over their
//! links; the switch queues and schedules them once per cell time; sinks record latency from
//! generation to the arrival of the cell's last bit.

use crate::blocks::cell_network::Network;
use crate::blocks::routing::{mode, FabricRouter, RouteTable};
use crate::blocks::topology::Topology;
use crate::scenario::{Scenario, ScenarioError, TopologyName};

/// The single-switch simulation.
pub type SingleSwitch = Network<FabricRouter>;

/// Builds the system a validated scenario describes.
pub fn build(scenario: &Scenario) -> Result<SingleSwitch, ScenarioError> {
    if scenario.topology.kind != TopologyName::Star {
        return Err(ScenarioError {
            key: "topology.kind".into(),
            message: "single_switch is one switch (\"star\"); racks are built by design \"rifl\", fabrics by \"cell_fabric\"".into(),
        });
    }
    let topology = Topology::star(scenario.switch.ports as usize);
    let table = RouteTable::new(&topology).expect("a star connects every pair");
    let deterministic = mode("deterministic").expect("a registered mode");
    let router = FabricRouter::new(table, deterministic, scenario.run.seed, 1);
    Ok(Network::new(
        scenario.network_spec("single_switch", topology),
        router,
    ))
}
