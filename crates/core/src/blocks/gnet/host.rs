//! A host whose IP packets cross the fabric by IP over GNet (Gibson et al., NSDI '22, §3.3):
//! a node of a VC-router fabric in place of a plain host. Its source generates packets into
//! the [`Endpoint`]'s ingress buffer; it sends the endpoint's GNet cells flit by flit on its
//! link, RTS, CTS and CTD on VC 0 (the high-priority class) ahead of data cells, each under
//! its VC's credits; what reaches it is acted on by the endpoint as each cell's tail flit
//! arrives, and counted by kind.
//!
//! The TiN's IP engine reaches its cell switch by several of the switch's 18 intra-chip
//! endpoint ports, each input with its own FIFO per VC (§3.1). Our reading: a host's data
//! cells enter by `endpoint_ports` of them, modelled as that many input FIFOs on the host's
//! port (the data class's first VCs), each data cell on the next in turn that has a credit,
//! so a cell waiting at the head of one FIFO holds back only the cells behind it there.

use super::endpoint::{Endpoint, FlitCounts};
use super::wire::{CellKind, Outgoing};
use crate::blocks::cell::CellId;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::{FlowSignal, TxGate};
use crate::blocks::link::Link;
use crate::blocks::routing::Router;
use crate::blocks::terminal::TerminalCounters;
use crate::blocks::traffic::{Generator, NEVER_PS};
use crate::engine::time::TimePs;

/// A data cell part-sent: the cell, the index of its next flit and its VC.
#[derive(Clone, Copy, Debug)]
struct PartSent {
    cell: Outgoing,
    next_flit: u32,
    vc: u16,
}

/// A host speaking IP over GNet to its TiN.
pub struct GnetHost {
    /// The protocol's state.
    pub endpoint: Endpoint,
    generator: Generator,
    /// Payload bytes generated of the packet under way.
    packet_bytes_so_far: u32,
    link: Link,
    gate: TxGate,
    data: Option<PartSent>,
    /// The endpoint port (from 0) whose turn it is to take the next data cell.
    next_endpoint_port: u16,
    wake_at_ps: TimePs,
    /// Flits sent and received, as a plain host counts cells.
    pub counters: TerminalCounters,
    /// Flits sent and received by kind.
    pub flits: FlitCounts,
    /// Test-only fault: the control flit received with this count (from 0) is lost.
    #[cfg(test)]
    pub lose_control_flit: Option<u64>,
}

impl GnetHost {
    /// Host `endpoint.host()` generating packets from `generator` (its cells are a packet's
    /// data cells, their payloads summed into the packet's length) over `link`, gated by
    /// `gate` (per-VC credits toward its TiN).
    pub fn new(endpoint: Endpoint, generator: Generator, link: Link, gate: TxGate) -> Self {
        GnetHost {
            endpoint,
            generator,
            packet_bytes_so_far: 0,
            link,
            gate,
            data: None,
            next_endpoint_port: 0,
            wake_at_ps: NEVER_PS,
            counters: TerminalCounters::default(),
            flits: FlitCounts::default(),
            #[cfg(test)]
            lose_control_flit: None,
        }
    }

    /// Statistics count what happens after `measure_from_ps`.
    pub fn set_measure_from(&mut self, measure_from_ps: TimePs) {
        self.endpoint.measure_from_ps = measure_from_ps;
    }

    /// Turns the cells the source generated up to `now_ps` into packets for the ingress.
    fn generate(&mut self, now_ps: TimePs) {
        while self.generator.next_cell_ps() <= now_ps {
            let cell = self.generator.emit();
            self.packet_bytes_so_far += cell.payload_bytes as u32;
            if cell.last_of_packet {
                let size = std::mem::take(&mut self.packet_bytes_so_far);
                self.endpoint.admit(cell.dst, size, cell.inject_ps);
            }
        }
    }

    /// The VC a new data cell takes: the first endpoint port, from the one whose turn it is,
    /// whose VC has a credit.
    fn free_data_vc(&self) -> Option<u16> {
        let spec = self.endpoint.spec();
        let ports = spec.endpoint_ports;
        (0..ports)
            .map(|i| spec.data_vc + (self.next_endpoint_port + i) % ports)
            .find(|&vc| self.gate.may_send(vc))
    }

    /// The GNet cell whose flit goes next, that flit's index and its VC: a control cell
    /// first, then the part-sent data cell, then a new one, each only if its VC has a credit.
    fn next_flit(&mut self, now_ps: TimePs) -> Option<(Outgoing, u32, u16)> {
        let control_open = self.gate.may_send(0);
        if let Some(part) = self.data {
            if control_open && self.endpoint.has_control() {
                return self
                    .endpoint
                    .next_cell(now_ps, true, false)
                    .map(|c| (c, 0, 0));
            }
            let open = self.gate.may_send(part.vc);
            return open.then_some((part.cell, part.next_flit, part.vc));
        }
        let data_vc = self.free_data_vc();
        let cell = self
            .endpoint
            .next_cell(now_ps, control_open, data_vc.is_some())?;
        if cell.kind.is_control() {
            return Some((cell, 0, 0));
        }
        let vc = data_vc.expect("a data cell is given only with a data VC open");
        let spec = self.endpoint.spec();
        self.next_endpoint_port = (vc - spec.data_vc + 1) % spec.endpoint_ports;
        Some((cell, 0, vc))
    }

    /// Sends one flit if the link is free and a VC with something to send has a credit.
    fn send<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let now_ps = ctx.now_ps;
        if !self.link.is_idle(now_ps) {
            return;
        }
        let Some((cell, index, vc)) = self.next_flit(now_ps) else {
            return;
        };
        let spec = self.endpoint.spec();
        let control = cell.kind.is_control();
        let flits = if control {
            spec.control_flits()
        } else {
            spec.data_flits()
        };
        self.data = match (control, index + 1 < flits) {
            (false, true) => Some(PartSent {
                cell,
                next_flit: index + 1,
                vc,
            }),
            (false, false) => None,
            (true, _) => self.data,
        };
        let mut flit = cell.flit(self.endpoint.host(), index, flits, now_ps);
        let (cells, mut routes) = ctx.routes();
        routes.write(0, &mut flit);
        flit.vc = vc;
        let id = cells.alloc(flit);
        self.gate.on_send(vc);
        self.counters.cells_injected += 1;
        self.counters.cells_injected_measured += (now_ps > self.endpoint.measure_from_ps) as u64;
        match control {
            true => self.flits.control_injected += 1,
            false => self.flits.data_injected += 1,
        }
        let arrive_ps = self.link.transmit(now_ps, spec.flit_bytes as u64);
        ctx.send_cell(0, id, arrive_ps);
    }

    /// When the host next has something to do on its own: generate, or send once the link is
    /// free (a credit's arrival wakes it otherwise).
    fn next_step_ps(&self) -> TimePs {
        let control = self.endpoint.has_control() && self.gate.may_send(0);
        let data = match self.data {
            Some(part) => self.gate.may_send(part.vc),
            None => self.endpoint.has_data() && self.free_data_vc().is_some(),
        };
        let send_ps = match control || data {
            true => self.link.busy_until_ps(),
            false => NEVER_PS,
        };
        send_ps.min(self.generator.next_cell_ps())
    }

    /// Generates and sends what is due, then sets the timer for the next thing to do.
    fn step<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        self.generate(ctx.now_ps);
        self.send(ctx);
        let next_ps = self.next_step_ps().max(ctx.now_ps);
        if next_ps < self.wake_at_ps {
            self.wake_at_ps = next_ps;
            ctx.set_timer(next_ps, 0);
        }
    }

    /// Sets the timer for the first thing to do, at the start of a run.
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        self.step(ctx);
    }

    /// Counts flit `cell` by kind and hands a cell's tail to the endpoint; false if a
    /// test-only fault loses it instead.
    fn receive<R: Router>(&mut self, ctx: &mut Context<'_, R>, cell: CellId) -> bool {
        let c = ctx.cells[cell];
        let kind = CellKind::of(&c);
        #[cfg(test)]
        if kind.is_control() && self.lose_control_flit == Some(self.flits.control_delivered) {
            self.lose_control_flit = None;
            return false;
        }
        match kind.is_control() {
            true => self.flits.control_delivered += 1,
            false => self.flits.data_delivered += 1,
        }
        let now_ps = ctx.now_ps;
        self.counters.cells_delivered += 1;
        self.counters.last_delivery_ps = now_ps;
        if now_ps > self.endpoint.measure_from_ps {
            self.counters.cells_delivered_measured += 1;
            self.counters.payload_bytes_delivered_measured += c.payload_bytes as u64;
        }
        if c.last_of_packet {
            self.endpoint.on_cell(&c, now_ps);
        }
        true
    }
}

/// A GNet host takes each flit as it arrives (an answer makes it send).
impl<R: Router> Node<R> for GnetHost {
    fn is_slotted(&self) -> bool {
        false
    }

    fn is_sink(&self) -> bool {
        false
    }

    /// Flits are made as they leave: the host holds none.
    fn cells_held(&self) -> u64 {
        0
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, _port: usize, cell: CellId, _at: TimePs) {
        if self.receive(ctx, cell) {
            ctx.deliver(cell);
        } else {
            ctx.consume(cell);
        }
        self.step(ctx);
    }

    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, _port: usize, signal: FlowSignal) {
        self.gate.on_signal(signal);
        self.step(ctx);
    }

    fn tick(&mut self, _ctx: &mut Context<'_, R>) -> Option<TimePs> {
        None
    }

    fn timer(&mut self, ctx: &mut Context<'_, R>, _tag: u32) {
        if self.wake_at_ps == ctx.now_ps {
            self.wake_at_ps = NEVER_PS;
        }
        self.step(ctx);
    }
}
