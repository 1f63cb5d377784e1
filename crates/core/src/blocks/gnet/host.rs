//! A host whose IP packets cross the fabric by IP over GNet (Gibson et al., NSDI '22, §3.3)
//! and whose 1RMA reads are GNet cells of their own (§3.4): a node of a VC-router fabric in
//! place of a plain host. Its source generates packets into the [`Endpoint`]'s ingress
//! buffer, and a second source commands reads; it sends the endpoint's GNet cells flit by
//! flit on its link, each on its VC class ([`super::classes`]), the first class first (strict
//! priority, as the TiN's outputs serve them), each under its VC's credits; a cell of several
//! flits holds its VC until its tail is sent, and a higher class's flits may pass it on the
//! link. What reaches it is acted on by the endpoint as each cell's tail flit arrives, and
//! counted by kind. Where the routers switch whole cells (`vc.switching_unit = "cell"`), a
//! cell leaves as one unit holding the link for its flits, once its VC has credits for them,
//! and arrives as one (its flits counted in the ledgers and the measured rates).
//!
//! The TiN's IP engine reaches its cell switch by several of the switch's 18 intra-chip
//! endpoint ports, each input with its own FIFO per VC (§3.1). Our reading: the cells of the
//! IP data's class enter by `endpoint_ports` of them, modelled as that many input FIFOs on the
//! host's port (the class's first VCs), each cell on the next in turn that has a credit, so a
//! cell waiting at the head of one FIFO holds back only the cells behind it there; every
//! other class enters by its first VC.

use super::classes::Traffic;
use super::endpoint::{Endpoint, FlitCounts, FlitLedger};
use super::wire::{CellKind, Outgoing};
use crate::blocks::cell::CellId;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::{FlowSignal, TxGate};
use crate::blocks::link::Link;
use crate::blocks::routing::Router;
use crate::blocks::terminal::TerminalCounters;
use crate::blocks::traffic::{Generator, NEVER_PS};
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use rand::Rng as _;

/// A data cell part-sent: the cell, the index of its next flit and its VC.
#[derive(Clone, Copy, Debug)]
struct PartSent {
    cell: Outgoing,
    next_flit: u32,
    vc: u16,
}

/// A host speaking IP over GNet and 1RMA to its TiN.
pub struct GnetHost {
    /// The protocol's state.
    pub endpoint: Endpoint,
    generator: Generator,
    /// The source of 1RMA read commands, where the hosts make reads: each of its packets is
    /// one read, commanded as its first cell is due.
    reads: Option<Generator>,
    /// Payload bytes generated of the packet under way.
    packet_bytes_so_far: u32,
    /// The stream each packet's class of service is drawn from, where there are several.
    class_draws: Option<Rng>,
    link: Link,
    gate: TxGate,
    /// Per VC class: the cell part-sent on it.
    part_sent: Vec<Option<PartSent>>,
    /// The endpoint port (from 0) whose turn it is to take the next data cell.
    next_endpoint_port: u16,
    wake_at_ps: TimePs,
    /// Flits sent and received, as a plain host counts cells.
    pub counters: TerminalCounters,
    /// Flits sent and received by kind.
    pub flits: FlitCounts,
    /// Test-only fault: the flit of this ledger received with this count (from 0) is lost.
    #[cfg(test)]
    pub lose_flit: Option<(FlitLedger, u64)>,
}

impl GnetHost {
    /// Host `endpoint.host()` generating packets from `generator` (its cells are a packet's
    /// data cells, their payloads summed into the packet's length) and read commands from
    /// `reads` (one read per packet) over `link`, gated by `gate` (per-VC credits toward its
    /// TiN).
    pub fn new(
        endpoint: Endpoint,
        (generator, reads): (Generator, Option<Generator>),
        link: Link,
        gate: TxGate,
    ) -> Self {
        let classes = endpoint.spec().layout.classes() as usize;
        GnetHost {
            endpoint,
            generator,
            reads,
            packet_bytes_so_far: 0,
            class_draws: None,
            link,
            gate,
            part_sent: vec![None; classes],
            next_endpoint_port: 0,
            wake_at_ps: NEVER_PS,
            counters: TerminalCounters::default(),
            flits: FlitCounts::default(),
            #[cfg(test)]
            lose_flit: None,
        }
    }

    /// Cells of `kind` part-sent: some flits on the link, the tail not yet (0 or 1 per class).
    pub fn part_sent(&self, kind: CellKind) -> u64 {
        let parts = self.part_sent.iter().flatten();
        parts.filter(|part| part.cell.kind == kind).count() as u64
    }

    /// Draws each packet's class of service from `rng` by the spec's shares (only where there
    /// are several classes: one class draws nothing).
    pub fn draw_classes_from(&mut self, rng: Rng) {
        self.class_draws = (self.endpoint.spec().limits.classes > 1).then_some(rng);
    }

    /// The class of service of the next packet.
    fn next_class(&mut self) -> u8 {
        let Some(rng) = self.class_draws.as_mut() else {
            return 0;
        };
        let spec = self.endpoint.spec();
        let last = spec.limits.classes as usize - 1;
        let mut left = rng.gen::<f64>();
        for (class, share) in spec.class_shares[..last].iter().enumerate() {
            if left < *share {
                return class as u8;
            }
            left -= share;
        }
        last as u8
    }

    /// Statistics count what happens after `measure_from_ps`.
    pub fn set_measure_from(&mut self, measure_from_ps: TimePs) {
        self.endpoint.measure_from_ps = measure_from_ps;
    }

    /// Turns the cells the source generated up to `now_ps` into packets for the ingress, and
    /// the reads due into commands.
    fn generate(&mut self, now_ps: TimePs) {
        while self.generator.next_cell_ps() <= now_ps {
            let cell = self.generator.emit();
            self.packet_bytes_so_far += cell.payload_bytes as u32;
            if cell.last_of_packet {
                let size = std::mem::take(&mut self.packet_bytes_so_far);
                let class = self.next_class();
                self.endpoint.admit(cell.dst, size, class, cell.inject_ps);
            }
        }
        let Some(reads) = self.reads.as_mut() else {
            return;
        };
        while reads.next_cell_ps() <= now_ps {
            let mut cell = reads.emit();
            self.endpoint.command_read(cell.dst, cell.inject_ps);
            // The read's other cells only pace the arrivals: passed over at once.
            while !cell.last_of_packet && reads.next_cell_ps() != NEVER_PS {
                cell = reads.emit();
            }
        }
    }

    /// The VC a new cell of class `class` takes: the class's first VC, or for the IP data's
    /// class the first endpoint port, from the one whose turn it is, whose VC has a credit
    /// (where cells cross whole, credits for the class's largest cell).
    fn free_vc(&self, class: u8) -> Option<u16> {
        let spec = self.endpoint.spec();
        let unit_flits = spec.class_unit_flits(class);
        let first = class as u16 * spec.vcs_per_class;
        let ports = match spec.layout.class_of(Traffic::IpData) == class {
            true => spec.endpoint_ports,
            false => 1,
        };
        (0..ports)
            .map(|i| first + (self.next_endpoint_port + i) % ports)
            .find(|&vc| self.gate.may_send_flits(vc, unit_flits))
    }

    /// The GNet cell whose flit goes next, that flit's index and its VC: the first class
    /// that has one, its part-sent cell or else a new one, each only if its VC has a credit.
    fn next_flit(&mut self, now_ps: TimePs) -> Option<(Outgoing, u32, u16)> {
        for class in 0..self.endpoint.spec().layout.classes() {
            if let Some(part) = self.part_sent[class as usize] {
                if self.gate.may_send(part.vc) {
                    return Some((part.cell, part.next_flit, part.vc));
                }
                continue;
            }
            let Some(vc) = self.free_vc(class) else {
                continue;
            };
            let Some(cell) = self.endpoint.next_cell(now_ps, class) else {
                continue;
            };
            let spec = self.endpoint.spec();
            if spec.layout.class_of(Traffic::IpData) == class {
                let first = class as u16 * spec.vcs_per_class;
                self.next_endpoint_port = (vc - first + 1) % spec.endpoint_ports;
            }
            return Some((cell, 0, vc));
        }
        None
    }

    /// Sends one flit if the link is free and a VC with something to send has a credit, or,
    /// where cells cross whole, one whole cell under credits for all its flits.
    fn send<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let now_ps = ctx.now_ps;
        if !self.link.is_idle(now_ps) {
            return;
        }
        let Some((cell, index, vc)) = self.next_flit(now_ps) else {
            return;
        };
        let spec = self.endpoint.spec();
        let flits = spec.flits(cell.kind);
        let (unit, sent_flits) = match spec.whole_cells {
            true => (cell.flit(self.endpoint.host(), 0, 1, now_ps), flits),
            false => (cell.flit(self.endpoint.host(), index, flits, now_ps), 1),
        };
        // The VC's class: a class of service's data may ride a class of its own.
        let class = (vc / spec.vcs_per_class) as usize;
        self.part_sent[class] = (index + sent_flits < flits).then_some(PartSent {
            cell,
            next_flit: index + 1,
            vc,
        });
        let flit_bytes = spec.flit_bytes as u64;
        let mut unit = unit;
        let (cells, mut routes) = ctx.routes();
        routes.write(0, &mut unit);
        unit.vc = vc;
        let id = cells.alloc(unit);
        self.gate.on_send_flits(vc, sent_flits);
        self.counters.cells_injected += 1;
        let measured = now_ps > self.endpoint.measure_from_ps;
        self.counters.cells_injected_measured += measured as u64 * sent_flits as u64;
        self.flits.injected[FlitLedger::of(cell.kind) as usize] += sent_flits as u64;
        // A whole cell reaches the TiN as its head does (cut-through): the TiN may switch it
        // at once, and its output sends it no faster than its tail arrives here.
        let arrive_ps = self.link.transmit(now_ps, flit_bytes);
        if sent_flits > 1 {
            let frame_ps = self.link.frame_ps(flit_bytes);
            self.link
                .hold_until(now_ps + sent_flits as TimePs * frame_ps);
        }
        ctx.send_cell(0, id, arrive_ps);
    }

    /// When the host next has something to do on its own: generate, send once the link is
    /// free, or send a Resp once its PCIe read is done (a credit's arrival wakes it
    /// otherwise).
    fn next_step_ps(&self, now_ps: TimePs) -> TimePs {
        let sendable = (0..self.endpoint.spec().layout.classes()).any(|class| {
            match self.part_sent[class as usize] {
                Some(part) => self.gate.may_send(part.vc),
                None => self.endpoint.has_cell(now_ps, class) && self.free_vc(class).is_some(),
            }
        });
        let send_ps = match sendable {
            true => self.link.busy_until_ps(),
            false => NEVER_PS,
        };
        let resp_ps = self
            .endpoint
            .next_resp_ready_ps()
            .filter(|&ready_ps| ready_ps > now_ps)
            .unwrap_or(NEVER_PS);
        let reads_ps = self
            .reads
            .as_ref()
            .map_or(NEVER_PS, Generator::next_cell_ps);
        send_ps
            .min(self.generator.next_cell_ps())
            .min(resp_ps)
            .min(reads_ps)
    }

    /// Generates and sends what is due, then sets the timer for the next thing to do.
    fn step<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        self.generate(ctx.now_ps);
        self.send(ctx);
        let next_ps = self.next_step_ps(ctx.now_ps).max(ctx.now_ps);
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
        let ledger = FlitLedger::of(CellKind::of(&c)) as usize;
        #[cfg(test)]
        if let Some((lost, count)) = self.lose_flit {
            if lost as usize == ledger && count == self.flits.delivered[ledger] {
                self.lose_flit = None;
                return false;
            }
        }
        let spec = self.endpoint.spec();
        let flits = match spec.whole_cells {
            true => spec.flits(CellKind::of(&c)) as u64,
            false => 1,
        };
        self.flits.delivered[ledger] += flits;
        let now_ps = ctx.now_ps;
        self.counters.cells_delivered += 1;
        self.counters.last_delivery_ps = now_ps;
        if now_ps > self.endpoint.measure_from_ps {
            self.counters.cells_delivered_measured += flits;
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
