//! An Ethernet switch on the fabric of nodes: event-driven, store-and-forward (a packet is
//! taken when its last bit arrives), each packet routed on arrival by the fabric's router
//! (per-flow ECMP, per-packet spraying, ... by `routing.mode`) into the output queue of its
//! port ([`OutputQueue`]: drop-tail, ECN marking at a threshold), which schedules its
//! transmission at once: one event per packet per hop. A switch may also lose
//! packets at random, independently, with a fixed probability (a lossy link: the setting of
//! Mathis et al.'s throughput formula).

use super::queue::{Enqueued, OutputQueue};
use crate::blocks::cell::CellId;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::routing::{LocalView, Router, NO_ROUTE};
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use rand::Rng as _;

/// What a switch counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwitchCounters {
    /// Packets sent on its links.
    pub packets_forwarded: u64,
    /// Packets dropped at a full output queue.
    pub packets_dropped: u64,
    /// Packets lost at random.
    pub packets_lost: u64,
    /// Packets marked CE.
    pub packets_marked: u64,
}

/// A switch.
pub struct EthernetSwitch {
    /// Index among the router's switches.
    switch: usize,
    ports: Vec<OutputQueue>,
    /// Random losses: the probability and the switch's own random stream.
    loss: Option<(f64, Rng)>,
    /// What it counted.
    pub counters: SwitchCounters,
}

/// What the router may read of a switch: its output queues.
/// What the router may read of a switch: its output queues' depths now.
struct Queues<'a>(&'a [OutputQueue], TimePs);

impl LocalView for Queues<'_> {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.0[output].waiting(self.1)
    }
}

impl EthernetSwitch {
    /// Switch `switch` of the router's tables with these output queues, one per port, losing
    /// each arriving packet with probability `loss.0` drawn from `loss.1` (`None`: no loss).
    pub fn new(switch: usize, ports: Vec<OutputQueue>, loss: Option<(f64, Rng)>) -> Self {
        EthernetSwitch {
            switch,
            ports,
            loss,
            counters: SwitchCounters::default(),
        }
    }

    /// Its output queues.
    pub fn queues(&self) -> &[OutputQueue] {
        &self.ports
    }

    /// Deepest output queue seen, in packets.
    pub fn peak_packets(&self) -> u32 {
        self.ports.iter().map(|q| q.peak_packets).max().unwrap_or(0)
    }
}

impl<R: Router> Node<R> for EthernetSwitch {
    fn is_slotted(&self) -> bool {
        false
    }

    fn is_sink(&self) -> bool {
        false
    }

    /// None: a queued packet is on its way to the far end as an event, due when its last
    /// bit arrives.
    fn cells_held(&self) -> u64 {
        0
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        if let Some((probability, rng)) = &mut self.loss {
            if rng.gen::<f64>() < *probability {
                self.counters.packets_lost += 1;
                ctx.drop_cell(cell);
                return;
            }
        }
        let view = Queues(&self.ports, ctx.now_ps);
        let output = ctx
            .router
            .route(self.switch, port, &mut ctx.cells[cell], &view);
        assert_ne!(output, NO_ROUTE, "an Ethernet fabric has every route");
        match self.ports[output].enqueue(ctx.cells, cell, ctx.now_ps) {
            Enqueued::Full => {
                self.counters.packets_dropped += 1;
                ctx.drop_cell(cell);
            }
            Enqueued::Queued { arrive_ps, marked } => {
                self.counters.packets_marked += marked as u64;
                self.counters.packets_forwarded += 1;
                ctx.send_cell(output, cell, arrive_ps);
            }
        }
    }

    fn signal_arrives(&mut self, _: &mut Context<'_, R>, _: usize, _: FlowSignal) {}

    fn tick(&mut self, _: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }

    fn timer(&mut self, _: &mut Context<'_, R>, _: u32) {}
}
