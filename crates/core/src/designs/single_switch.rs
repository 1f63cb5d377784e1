//! N terminals on one cell switch: the classic switch-theory setting (Karol et al. 1987 for FIFO
//! input queueing, McKeown 1999 for iSLIP, Anderson et al. 1993 for PIM, and the ideal
//! output-queued switch), and the single-switch experiments of the RIFL paper (§V).
//!
//! Terminal i is wired to switch port i in both directions. Terminals inject cells over their
//! links; the switch queues and schedules them once per cell time; sinks record latency from
//! generation to the arrival of the cell's last bit.

use crate::blocks::link::Link;
use crate::blocks::network::{Network, NetworkSpec, TableRouter};
use crate::blocks::switch::SwitchSpec;
use crate::blocks::topology::Topology;
use crate::scenario::Scenario;

/// The single-switch simulation.
pub type SingleSwitch = Network<TableRouter>;

/// Builds the system a validated scenario describes.
pub fn build(scenario: &Scenario) -> SingleSwitch {
    let topology = Topology::star(scenario.switch.ports as usize);
    let router = TableRouter::new(&topology).expect("a star connects every pair");
    Network::new(network_spec(scenario, "single_switch", topology), router)
}

/// The network a scenario's switch, link, cell, NIC and traffic sections describe, over
/// `topology`; shared by every design built on [`Network`].
pub fn network_spec(scenario: &Scenario, design: &'static str, topology: Topology) -> NetworkSpec {
    let link = Link::new(scenario.link.rate_bps(), scenario.link.propagation_delay_ps);
    let sw = &scenario.switch;
    NetworkSpec {
        design,
        scheduler: sw.scheduler.as_str().to_string(),
        seed: scenario.run.seed,
        destinations: scenario.destinations(topology.endpoints()),
        topology,
        switch: SwitchSpec {
            ports: sw.ports as usize,
            cell_bytes: scenario.cell.size_bytes as u64,
            scheduler: scenario.scheduler(),
            buffer_cells: sw.buffer_cells,
            per_voq_buffers: sw.per_voq_buffers,
            batcher_banyan: sw.batcher_banyan,
            rx_flow_control: crate::blocks::flow_control::RxFlowControl::None,
            out_link: link.clone(),
            pipeline_ps: sw.pipeline_delay_ps,
        },
        link,
        flow_control: scenario.flow_control(),
        traffic: scenario.traffic_spec(),
        nic_queue_cells: scenario.nic.queue_cells,
        warmup_ps: scenario.warmup_ps(),
        end_ps: scenario.end_ps(),
        lossless: scenario.is_lossless(),
    }
}
