//! A VC router as a slotted node of a fabric: at each clock edge it takes the flits latched at
//! its inputs (routing each head and naming the VC its rule gives), then allocates VCs, runs
//! the crossbar `speedup` times, returns a credit upstream for every flit that left an input
//! FIFO, and sends one flit per free output link.

use super::assignment::{Hop, PortClass};
use super::occupancy::Bits;
use super::{HeadView, Ready, Switching, SwitchingUnit, VcRouter, ANY_VC, FREE, NO_VC};
use crate::blocks::cell::{CellArena, CellId, TRACED};
use crate::blocks::fabric::trace::TraceHop;
use crate::blocks::fabric::{Context, Node};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::routing::{Router, NO_ROUTE};
use crate::engine::time::TimePs;

impl VcRouter {
    /// The route of a flit entering input `port` on its VC: a head is routed and given the
    /// VC its rule names on the chosen output (any VC toward a host); a body flit follows the
    /// last head of its input VC (wormhole keeps a packet's flits together on a VC). False if
    /// a head has no route (its destination's switch failed).
    fn route_flit<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        cell: CellId,
    ) -> bool {
        let in_vc = ctx.cells[cell].vc;
        let input_vc = port * self.vcs + in_vc as usize;
        let c = &ctx.cells[cell];
        // The generator stamps every flit of a packet with its head's creation time.
        let is_head = c.inject_ps == c.packet_inject_ps;
        if is_head {
            let index = ctx.router_index().expect("a router is routed");
            let view = HeadView {
                router: self,
                arrived: (self.outputs.class[port], in_vc),
                toward_intermediate: ctx.router.toward_intermediate(&ctx.cells[cell]),
            };
            let output = ctx.router.route(index, port, &mut ctx.cells[cell], &view);
            if output == NO_ROUTE {
                return false;
            }
            let out_class = self.outputs.class[output];
            let next_vc = match out_class {
                PortClass::Terminal => ANY_VC,
                _ => self.spec.out_vc(Hop {
                    in_class: self.outputs.class[port],
                    in_vc,
                    out_class,
                    toward_intermediate: ctx.router.toward_intermediate(&ctx.cells[cell]),
                    nonminimal_routing: self.spec.nonminimal_routing,
                }),
            };
            self.inputs.arriving[input_vc] = (output as u16, next_vc);
        }
        let (output, next_vc) = self.inputs.arriving[input_vc];
        let c = &mut ctx.cells[cell];
        c.out_port = output;
        c.next_vc = next_vc;
        true
    }

    /// Flits held in input VC `input_vc`'s FIFO (its cells' flits, when switching cells).
    fn fifo_flits(&self, cells: &CellArena, input_vc: usize) -> u32 {
        let fifo = &self.inputs.fifos[input_vc];
        match self.spec.unit {
            SwitchingUnit::Flit => fifo.len(),
            unit => cells.queued(fifo).map(|c| unit.flits(c)).sum(),
        }
    }

    /// Puts routed flit (or cell) `cell`, arrived on input `port` at `arrive_ps`, into its
    /// VC's FIFO, which the upstream credits keep from overflowing (checked in debug builds).
    fn buffer_flit(&mut self, cells: &mut CellArena, port: usize, cell: CellId, arrive_ps: TimePs) {
        let c = &mut cells[cell];
        c.in_port = port as u16;
        c.switch_arrive_ps = arrive_ps;
        let flits = self.spec.unit.flits(c);
        let (vc, input_vc) = (c.vc as usize, port * self.vcs + c.vc as usize);
        debug_assert!(
            self.fifo_flits(cells, input_vc) + flits <= self.spec.buffer_cells,
            "a flit arrived at a full VC buffer: the credit loop failed"
        );
        let c = &cells[cell];
        let fifo = &mut self.inputs.fifos[input_vc];
        if fifo.is_empty() {
            self.allocation_due = true;
            self.vc_allocation_due = true;
            self.inputs.front_flits[input_vc] = flits;
            // A head at the front holds no output VC yet (the packet before it released its
            // own); a body flit's packet holds one (its head crossed already).
            match self.inputs.out_vc[input_vc] {
                NO_VC => {
                    self.inputs.front_wants[input_vc] = (c.out_port, c.next_vc);
                    self.inputs.occupancy.set_head(port, vc);
                }
                _ => self.inputs.occupancy.set_holder(port, vc),
            }
        }
        cells.push_back(fifo, cell);
        self.held_cells += flits as u64;
        self.stats.counters[port].cells_in += flits as u64;
    }

    /// Gives output VCs to the heads at the front of input VCs that hold none (only those:
    /// the occupancy's heads, in input-VC order).
    /// True if it granted any.
    fn allocate_vcs(&mut self) -> bool {
        let vcs = self.vcs;
        let mut granted = false;
        for port in self.inputs.occupancy.ports_with_heads().iter() {
            for vc in Bits(self.inputs.occupancy.heads(port)) {
                let input_vc = port * vcs + vc;
                let (output, wanted) = self.inputs.front_wants[input_vc];
                self.request_vc(input_vc, output as usize, wanted);
            }
        }
        let (inputs, owner) = (&mut self.inputs, &mut self.outputs.owner);
        self.vc_allocator.grant(|input_vc, output_vc| {
            owner[output_vc] = input_vc as u32;
            inputs.out_vc[input_vc] = (output_vc % vcs) as u16;
            inputs.out_port[input_vc] = (output_vc / vcs) as u16;
            inputs
                .occupancy
                .head_to_holder(input_vc / vcs, input_vc % vcs);
            granted = true;
        });
        granted
    }

    /// Input VC `input_vc`, whose front head holds no output VC, asks for VC `wanted` of
    /// `output` (any free one toward a host, [`ANY_VC`]) if it is free and, under
    /// cut-through, has room downstream for the whole packet.
    fn request_vc(&mut self, input_vc: usize, output: usize, wanted: u16) {
        let vcs = self.vcs;
        let free = |vc: usize| self.outputs.owner[output * vcs + vc] == FREE;
        let vc = match wanted {
            ANY_VC => (0..vcs).find(|&vc| free(vc)),
            vc => Some(vc as usize).filter(|&vc| free(vc)),
        };
        let Some(vc) = vc else { return };
        if let Switching::VirtualCutThrough { packet_cells } = self.spec.switching {
            let room = self.outputs.gates[output].credits(vc as u16);
            if room.is_some_and(|room| room < packet_cells) {
                return;
            }
        }
        self.vc_allocator.request(input_vc, output * vcs + vc);
    }

    /// The crossbar cycles of this link cycle under the speed-up.
    fn crossbar_cycles(&mut self) -> u32 {
        self.crossbar_cycles_owed += self.spec.speedup;
        let cycles = self.crossbar_cycles_owed.floor();
        self.crossbar_cycles_owed -= cycles;
        cycles as u32
    }

    /// Moves the front flit (or cell) of input VC (`input`, `vc`) across the crossbar into the
    /// queue of its output VC in the crossbar cycle starting at `cycle_ps`, spending its
    /// downstream credits and owing as many upstream; a cell of several flits holds both
    /// ports busy for its flits' cycles; a tail frees the output VC.
    fn traverse(
        &mut self,
        (input, vc, output): (usize, usize, usize),
        cycle_ps: TimePs,
        cells: &mut CellArena,
    ) {
        let input_vc = input * self.vcs + vc;
        let cell = cells
            .pop_front(&mut self.inputs.fifos[input_vc])
            .expect("the allocator chose a non-empty VC");
        let flits = self.inputs.front_flits[input_vc];
        let out_vc = self.inputs.out_vc[input_vc];
        let output_vc = output * self.vcs + out_vc as usize;
        self.outputs.gates[output].on_send_flits(out_vc, flits);
        cells[cell].vc = out_vc;
        let tail = cells[cell].last_of_packet;
        cells.push_back(&mut self.outputs.queues[output_vc], cell);
        self.outputs.queued[output] += flits;
        self.outputs.ports_queued.insert(output);
        self.scratch.credits.push((input as u16, vc as u16, flits));
        if flits > 1 {
            self.busy
                .hold(input, output, cycle_ps + self.crossbar_ps(flits));
        }
        let drained = self.inputs.fifos[input_vc].is_empty();
        if let (false, SwitchingUnit::Cell { .. }) = (drained, self.spec.unit) {
            let next = self.inputs.fifos[input_vc].front().expect("not drained");
            self.inputs.front_flits[input_vc] = self.spec.unit.flits(&cells[next]);
        }
        let occupancy = &mut self.inputs.occupancy;
        if tail {
            self.outputs.owner[output_vc] = FREE;
            self.inputs.out_vc[input_vc] = NO_VC;
            occupancy.clear_holder(input, vc);
            if let Some(head) = self.inputs.fifos[input_vc].front() {
                // The next packet's head.
                self.inputs.front_wants[input_vc] = (cells[head].out_port, cells[head].next_vc);
                occupancy.set_head(input, vc);
            }
        } else if drained {
            occupancy.clear_holder(input, vc);
        }
    }

    /// The time `flits` crossbar cycles take.
    fn crossbar_ps(&self, flits: u32) -> TimePs {
        (flits as f64 * self.slot_ps as f64 / self.spec.speedup) as TimePs
    }

    /// Runs the crossbar for the link cycle starting at `now_ps`; true if anything crossed.
    fn switch_flits(&mut self, cells: &mut CellArena, now_ps: TimePs) -> bool {
        let mut moved = false;
        for cycle in 0..self.crossbar_cycles() {
            let cycle_ps = now_ps + self.crossbar_ps(cycle);
            self.busy.release(cycle_ps);
            let mut transfers = std::mem::take(&mut self.scratch.transfers);
            let ready = Ready {
                inputs: &self.inputs,
                outputs: &self.outputs,
                busy: &self.busy,
            };
            self.switch_allocator
                .allocate(&ready, &mut self.rng, &mut transfers);
            for &transfer in &transfers {
                self.traverse(transfer, cycle_ps, cells);
            }
            let done = transfers.is_empty();
            self.scratch.transfers = transfers;
            if done {
                break;
            }
            moved = true;
        }
        moved
    }

    /// Allocates VCs and runs the crossbar if anything they read may have changed since the
    /// last allocation that did nothing: a new front flit (or cell), a credit, a port's busy
    /// signal ending in this cycle, or what the last allocation itself granted and moved (VC
    /// allocation alone: a new head, an output VC freed, a credit under cut-through).
    /// Otherwise they would find what they found then, nothing, and move no pointer and draw
    /// no random number, so skipping them changes no result.
    fn allocate(&mut self, cells: &mut CellArena, now_ps: TimePs) {
        let busy_ends = self.busy.ends_before(now_ps + self.slot_ps);
        if !(self.allocation_due || busy_ends) {
            self.crossbar_cycles(); // the fractional speed-up's carry moves as it would
            return;
        }
        let granted = self.vc_allocation_due && self.allocate_vcs();
        self.vc_allocation_due = granted;
        let moved = self.switch_flits(cells, now_ps);
        // A move frees output VCs and brings new heads to fronts.
        self.vc_allocation_due |= moved;
        self.allocation_due = granted || moved;
    }

    /// Sends one flit on every free output link that has one queued, the VC chosen by the
    /// output arbitration.
    fn send_flits<R: Router>(&mut self, ctx: &mut Context<'_, R>, measuring: bool) {
        let now_ps = ctx.now_ps;
        for output in self.outputs.ports_queued.iter() {
            if !self.outputs.links[output].is_idle(now_ps) {
                continue;
            }
            let queues = &mut self.outputs.queues[output * self.vcs..(output + 1) * self.vcs];
            let per_class = self.spec.vcs_per_class() as usize;
            let classes = self.vcs / per_class;
            let class = match classes {
                1 => 0,
                _ => {
                    let queued = |c: usize| {
                        queues[c * per_class..(c + 1) * per_class]
                            .iter()
                            .any(|q| !q.is_empty())
                    };
                    self.outputs.class_arbiters[output]
                        .pick(&self.spec.class_arbitration, classes, 0, queued)
                        .expect("a port with flits queued has a class to serve")
                }
            };
            let first_vc = class * per_class;
            let arbiter = &mut self.outputs.arbiters[output * classes + class];
            let class_queues = &queues[first_vc..first_vc + per_class];
            let vc = first_vc
                + arbiter
                    .pick_vc(&self.spec.output_arbitration, class_queues, first_vc)
                    .expect("a port with flits queued has a VC to serve");
            let cell = ctx
                .cells
                .pop_front(&mut queues[vc])
                .expect("the arbiter picked a non-empty VC");
            if ctx.cells[cell].flags & TRACED != 0 {
                self.trace_hop(ctx, cell, output);
            }
            let flits = self.spec.unit.flits(&ctx.cells[cell]);
            self.outputs.queued[output] -= flits;
            if self.outputs.queued[output] == 0 {
                self.outputs.ports_queued.remove(output);
            }
            self.held_cells -= flits as u64;
            let arrive_ps = self.transmit(output, now_ps, flits);
            self.stats.counters[output].cells_out += flits as u64;
            if measuring {
                let waited_ps = now_ps - ctx.cells[cell].switch_arrive_ps;
                self.stats.delay_slots_sum += waited_ps / self.slot_ps;
                self.stats.delay_samples += 1;
            }
            ctx.send_cell(output, cell, arrive_ps);
        }
    }
}

/// Edges a router holding flits with nothing to do sleeps through at most: it still ticks
/// now and then, so its fabric has an event pending while it holds flits (a stall is found
/// by the kernel's progress check, as when it ticked at every edge).
const MAX_SLEEP_EDGES: u64 = 256;

impl VcRouter {
    /// The first edge after the tick at `now_ps` at which the router has something to do on
    /// its own: allocation due (something changed), a busy port freed within the edge's link
    /// cycle, an output link with a flit queued going idle. At every edge before it the tick
    /// would allocate nothing, send nothing and draw no random number; a flit latched or a
    /// credit arriving wakes it earlier.
    fn next_edge_ps(&self, now_ps: TimePs) -> TimePs {
        let slot_ps = self.slot_ps;
        if self.allocation_due {
            return now_ps + slot_ps;
        }
        // An edge's tick allocates if a busy port frees before the edge's cycle ends.
        let busy_edges = self.busy.first_free_ps().saturating_sub(now_ps) / slot_ps;
        // It sends on a link idle at the edge.
        let idle_edges = self.outputs.ports_queued.iter().map(|output| {
            let busy_until_ps = self.outputs.links[output].busy_until_ps();
            busy_until_ps.saturating_sub(now_ps).div_ceil(slot_ps)
        });
        let edges = idle_edges.fold(busy_edges.min(MAX_SLEEP_EDGES), u64::min);
        now_ps + edges.max(1) * slot_ps
    }

    /// Accounts for the edges slept through since the last tick, before `before_ps`: each
    /// samples the occupancy the last tick left (nothing came or went since) once measuring,
    /// and turns the fractional speed-up's carry as a tick does.
    pub(super) fn catch_up(&mut self, before_ps: TimePs) {
        let Some((from_ps, held)) = self.slept_from.take() else {
            return;
        };
        let slot_ps = self.slot_ps;
        let slept = before_ps.saturating_sub(from_ps + 1) / slot_ps;
        if self.spec.speedup.fract() != 0.0 {
            for _ in 0..slept {
                self.crossbar_cycles();
            }
        }
        // The edges from_ps + k · slot_ps, 1 <= k <= slept, at or after measure_from_ps.
        let first_measured = self
            .stats
            .measure_from_ps
            .saturating_sub(from_ps)
            .div_ceil(slot_ps)
            .max(1);
        let measured = (slept + 1).saturating_sub(first_measured);
        self.stats
            .occupancy_samples
            .record_n(held as usize, measured);
    }

    /// At the end of a run reached at `reached_ps`: samples the edges slept through up to
    /// it, as the ticks there would have.
    pub fn settle_sleep(&mut self, reached_ps: TimePs) {
        self.catch_up(reached_ps + 1);
    }

    /// Sends `flits` flits (one, or a whole cell's) on `output`'s link at `now_ps`, holding it
    /// for all of them, and returns when the unit arrives: a whole cell toward a router as
    /// its head does (cut-through: the next router may switch it at once, and sends it on no
    /// faster than its tail comes in), toward a host as its tail does (the host acts on the
    /// whole cell).
    fn transmit(&mut self, output: usize, now_ps: TimePs, flits: u32) -> TimePs {
        let link = &mut self.outputs.links[output];
        let head_ps = link.transmit(now_ps, self.cell_bytes) + self.pipeline_ps;
        if flits == 1 {
            return head_ps;
        }
        let frame_ps = link.frame_ps(self.cell_bytes);
        link.hold_until(now_ps + flits as TimePs * frame_ps);
        match self.outputs.class[output] {
            PortClass::Terminal => head_ps + (flits - 1) as TimePs * frame_ps,
            _ => head_ps,
        }
    }

    /// Asleep holding flits: allocation reruns at the next edge.
    pub(super) fn wake_at_next_edge<R: Router>(&self, ctx: &mut Context<'_, R>) {
        if let Some((from_ps, _)) = self.slept_from {
            let edges = (ctx.now_ps - from_ps).div_ceil(self.slot_ps).max(1);
            ctx.wake_at(from_ps + edges * self.slot_ps);
        }
    }

    /// Records the hop of traced `cell` as it leaves by `output` now (Gibson et al., NSDI '22,
    /// §3.5: every TiN on a traced cell's path samples it).
    fn trace_hop<R: Router>(&self, ctx: &mut Context<'_, R>, cell: CellId, output: usize) {
        let c = &ctx.cells[cell];
        let hop = TraceHop {
            switch: ctx.router_index().expect("a router is a switch"),
            in_port: c.in_port,
            out_port: output as u16,
            vc: c.vc,
            queue_cells: self.outputs.queued[output],
            arrive_ps: c.switch_arrive_ps,
            depart_ps: ctx.now_ps,
        };
        ctx.trace_hop(cell, hop);
    }
}

/// A VC router is a slotted node.
impl<R: Router> Node<R> for VcRouter {
    fn is_slotted(&self) -> bool {
        true
    }

    /// The lengths of the queues, not the counter: a flit lost from a queue shows in the
    /// account.
    fn cells_held(&self) -> u64 {
        self.queued_cells()
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs) {
        if self.failures.down_at(port, at_ps) {
            return self.lose_on_wire(ctx, cell);
        }
        if !self.route_flit(ctx, port, cell) {
            return self.lose_unroutable(ctx, port, cell);
        }
        self.buffer_flit(ctx.cells, port, cell, at_ps);
    }

    /// A credit opens its output (a credit on a dead link is lost with it).
    fn signal_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        if self.failures.down_at(port, ctx.now_ps) {
            return;
        }
        self.outputs.gates[port].on_signal(signal);
        self.allocation_due = true;
        if let Switching::VirtualCutThrough { .. } = self.spec.switching {
            self.vc_allocation_due = true; // a head waits for room downstream
        }
        self.wake_at_next_edge(ctx);
    }

    /// A link of the router fails, or the tables drop a dead one ([`super::failure`]).
    fn timer(&mut self, ctx: &mut Context<'_, R>, tag: u32) {
        self.failure_step(ctx, tag);
    }

    /// Latches nothing itself (the fabric hands it the flits arrived), then allocates,
    /// returns credits and sends; while it holds flits it asks for the next edge at which it
    /// has something to do ([`VcRouter::next_edge_ps`]), sleeping through the others.
    fn tick(&mut self, ctx: &mut Context<'_, R>) -> Option<TimePs> {
        let now_ps = ctx.now_ps;
        self.catch_up(now_ps);
        let measuring = now_ps >= self.stats.measure_from_ps;
        self.allocate(ctx.cells, now_ps);
        // A credit waits the credit delay, then crosses the channel as a flit does (a cell
        // time and the propagation); a whole cell's credits go together as its tail flit
        // leaves the FIFO, its other flits' crossbar cycles later.
        let leave_ps = now_ps + (self.spec.credit_delay_slots as TimePs + 1) * self.slot_ps;
        for i in 0..self.scratch.credits.len() {
            let (port, vc, flits) = self.scratch.credits[i];
            let credit = FlowSignal::Credit {
                channel: vc,
                count: flits as u16,
            };
            let tail_ps = match flits {
                1 => 0,
                _ => self.crossbar_ps(flits - 1),
            };
            ctx.send_signal(port as usize, credit, leave_ps + tail_ps);
        }
        self.scratch.credits.clear();
        self.send_flits(ctx, measuring);
        if measuring {
            self.stats
                .occupancy_samples
                .record_n(self.held_cells as usize, 1);
        }
        if self.held_cells == 0 {
            return None;
        }
        self.slept_from = Some((now_ps, self.held_cells));
        Some(self.next_edge_ps(now_ps))
    }
}

#[cfg(test)]
mod tests {
    use super::super::allocation::SwitchAllocatorKind;
    use super::super::assignment::VcRule;
    use super::super::output::OutputArbitration;
    use super::super::{Switching, SwitchingUnit, VcSpec};
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::blocks::flow_control::TxGate;
    use crate::blocks::link::Link;
    use crate::blocks::routing::LocalView;
    use crate::engine::rng::{stream, ComponentId};

    /// A 2-port router of 2 VCs with 2-flit FIFOs.
    fn router() -> VcRouter {
        let spec = VcSpec {
            vcs: 2,
            buffer_cells: 2,
            allocator: SwitchAllocatorKind::SeparableInputFirst { iterations: 1 },
            speedup: 1.0,
            output_arbitration: OutputArbitration::StrictPriority,
            credit_delay_slots: 0,
            rule: VcRule::Single,
            switching: Switching::Wormhole,
            unit: SwitchingUnit::Flit,
            check_dependencies: true,
            nonminimal_routing: false,
            classes: 1,
            class_arbitration: OutputArbitration::StrictPriority,
        };
        let rng = stream(1, ComponentId { kind: 0, index: 0 });
        VcRouter::new(2, 64, Link::new(512_000_000_000, 0), 0, &spec, rng)
    }

    /// Aquila's comparison reads the VC the head would take: a head arrived on a global
    /// channel takes the next VC on a local one (the rule's increment), so it sees the credits
    /// used on VC 1 there, and a head from a host those of VC 0.
    #[test]
    fn a_head_sees_the_used_credits_of_the_vc_its_rule_gives() {
        let mut r = router();
        r.spec.rule = VcRule::GlobalLocalIncrement;
        let mut gate = crate::blocks::flow_control::TxGate::credit(2, 2);
        gate.on_send(1);
        gate.on_send(1);
        let link = Link::new(512_000_000_000, 0);
        r.set_port(0, PortClass::Global, link.clone(), TxGate::credit(2, 2));
        r.set_port(1, PortClass::Local, link, gate);
        let from_global = HeadView {
            router: &r,
            arrived: (PortClass::Global, 0),
            toward_intermediate: false,
        };
        assert_eq!(from_global.vc_backlog_cells(1), 2);
        assert_eq!(from_global.backlog_cells(1), 2);
        let from_host = HeadView {
            router: &r,
            arrived: (PortClass::Terminal, 0),
            toward_intermediate: false,
        };
        assert_eq!(from_host.vc_backlog_cells(1), 0);
    }

    /// A 3-port TiN-like router switching whole cells by iSLIP: a data cell (kind 0) is 10
    /// flits, every other kind 1; 20-flit FIFOs and downstream buffers.
    fn cell_router() -> VcRouter {
        let mut flits_by_kind = [1; 8];
        flits_by_kind[0] = 10;
        let spec = VcSpec {
            vcs: 2,
            buffer_cells: 20,
            allocator: SwitchAllocatorKind::Islip { iterations: 1 },
            unit: SwitchingUnit::Cell { flits_by_kind },
            ..router().spec
        };
        let rng = stream(1, ComponentId { kind: 0, index: 0 });
        let link = Link::new(512_000_000_000, 0);
        let mut r = VcRouter::new(3, 64, link.clone(), 0, &spec, rng);
        r.set_port(2, PortClass::Local, link, TxGate::credit(2, 20));
        r
    }

    /// A 10-flit data cell routed to VC `next_vc` of output 2, on VC 0 of its input.
    fn data_cell(cells: &mut CellArena, next_vc: u16) -> CellId {
        let mut cell = Cell::new(0, 1, 152, true, 0, 0);
        (cell.out_port, cell.next_vc) = (2, next_vc);
        cells.alloc(cell)
    }

    /// A [`cell_router`] holding two 10-flit data cells for output 2: one on input 0 for the
    /// output's VC 0, one on input 1 for its VC 1.
    fn two_cells_for_one_output() -> (VcRouter, CellArena) {
        let mut r = cell_router();
        let mut cells = CellArena::new();
        let first = data_cell(&mut cells, 0);
        let second = data_cell(&mut cells, 1);
        r.buffer_flit(&mut cells, 0, first, 0);
        r.buffer_flit(&mut cells, 1, second, 0);
        (r, cells)
    }

    /// Aquila's busy signal (Gibson et al., NSDI '22, §3.1): a 10-flit cell crosses in one
    /// allocation, spends its 10 credits at once, and holds its output port for 10 crossbar
    /// cycles, so a cell for another VC of the same output waits until they are over (the
    /// busy signal is the port's, not the VC's); its 10 credits go upstream in one signal.
    #[test]
    fn a_ten_flit_cell_holds_its_output_port_for_ten_cycles() {
        let (mut r, mut cells) = two_cells_for_one_output();
        assert_eq!(r.held_cells(), 20, "flits held");
        let crossed = |r: &VcRouter| r.outputs.queues[4..6].iter().map(|q| q.len()).sum::<u32>();
        let mut crossed_at = Vec::new();
        for cycle in 0..12u64 {
            let before = crossed(&r);
            r.allocate_vcs();
            r.switch_flits(&mut cells, cycle * r.slot_ps);
            if crossed(&r) > before {
                crossed_at.push(cycle);
                assert_eq!(r.scratch.credits, [(crossed_at.len() as u16 - 1, 0, 10)]);
            }
            r.scratch.credits.clear();
        }
        assert_eq!(crossed_at, [0, 10], "one allocation each, 10 cycles apart");
        assert_eq!(r.outputs.queued[2], 20);
        let gate = &r.outputs.gates[2];
        assert_eq!((gate.credits(0), gate.credits(1)), (Some(10), Some(10)));
    }

    /// A router with nothing to do until its busy output port frees sleeps to the edge whose
    /// link cycle the port frees in, and the allocation there moves the cell that waited
    /// (the tick at every edge before it would have found nothing to do).
    #[test]
    fn a_router_sleeps_until_its_busy_port_frees() {
        let (mut r, mut cells) = two_cells_for_one_output();
        let slot_ps = r.slot_ps;
        r.outputs.links[2].hold_until(100 * slot_ps); // no send wakes it meanwhile
        r.allocate(&mut cells, 0);
        assert_eq!(
            r.next_edge_ps(0),
            slot_ps,
            "the move is news at the next edge"
        );
        r.allocate(&mut cells, slot_ps);
        assert!(
            !r.allocation_due,
            "the second cell waits for the busy output"
        );
        assert_eq!(r.next_edge_ps(slot_ps), 10 * slot_ps);
        assert_eq!(r.outputs.queued[2], 10);
        r.allocate(&mut cells, 10 * slot_ps);
        assert_eq!(
            r.outputs.queued[2], 20,
            "the waiting cell crosses at the wake-up"
        );
    }

    /// A router holding flits with nothing to do sleeps at most `MAX_SLEEP_EDGES` edges, and
    /// one whose output link goes idle wakes at the first edge it is idle at.
    #[test]
    fn a_router_with_a_flit_queued_wakes_when_its_link_goes_idle() {
        let mut r = cell_router();
        let slot_ps = r.slot_ps;
        assert_eq!(r.next_edge_ps(0), MAX_SLEEP_EDGES * slot_ps);
        r.outputs.ports_queued.insert(2);
        r.outputs.links[2].hold_until(5 * slot_ps + 1);
        assert_eq!(r.next_edge_ps(slot_ps), 6 * slot_ps);
        r.allocation_due = true;
        assert_eq!(r.next_edge_ps(slot_ps), 2 * slot_ps);
    }

    /// The edges a router sleeps through sample the occupancy the last tick left, from the
    /// start of the measurement, up to the next tick or the end of the run.
    #[test]
    fn the_edges_slept_through_are_sampled_as_the_last_tick_left_them() {
        let mut r = router();
        let slot_ps = r.slot_ps;
        r.stats.measure_from_ps = 3 * slot_ps;
        r.slept_from = Some((slot_ps, 7));
        r.catch_up(6 * slot_ps); // edges 2 to 5 slept, 3 to 5 measured
        assert_eq!(r.stats.occupancy_samples.counts().get(7), Some(&3));
        assert_eq!(r.slept_from, None);
        r.slept_from = Some((6 * slot_ps, 2));
        r.settle_sleep(9 * slot_ps); // edges 7 to 9
        assert_eq!(r.stats.occupancy_samples.counts().get(2), Some(&3));
    }

    /// A flit beyond the credits its upstream was given (a broken credit loop) trips the
    /// check; as many as the FIFO holds do not.
    #[test]
    #[should_panic(expected = "the credit loop failed")]
    fn a_flit_beyond_the_credits_trips_the_buffer_check() {
        let mut r = router();
        let mut cells = CellArena::new();
        for _ in 0..3 {
            let mut flit = Cell::new(0, 1, 64, true, 0, 0);
            flit.vc = 1;
            let id = cells.alloc(flit);
            r.buffer_flit(&mut cells, 0, id, 0);
            assert!(r.queued_cells() <= 2);
        }
    }
}
