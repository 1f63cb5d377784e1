//! An Ethernet switch on the fabric of nodes: event-driven, store-and-forward (a packet is
//! taken when its last bit arrives), each packet routed on arrival by the fabric's router
//! (per-flow ECMP, per-packet spraying, ... by `routing.mode`) into the output queue of its
//! port ([`OutputQueue`]: drop-tail, ECN marking at a threshold), which schedules its
//! transmission at once: one event per packet per hop. The FIFOs hold their own buffers or
//! share one under a dynamic threshold ([`SharedBuffer`], Choudhury & Hahne 1998 §III).
//! With NDP's trimming ports ([`TrimmingPort`]) transmission order is decided when a link
//! frees, so each busy port wakes its switch with a timer (tagged with the port); so do PFC
//! ports ([`PfcPorts`]: a shared buffer charged per ingress, PAUSE frames to the upstream
//! neighbour, RED marking for DCQCN), which also take the PAUSE frames their neighbours
//! send. A switch may also lose packets at random, independently, with a fixed probability
//! (a lossy link: the setting of Mathis et al.'s throughput formula). With NDP's
//! return-to-sender (§3.1) a trimmed header that finds its header queue full is not dropped:
//! its source and destination swap and it goes back toward its sender as a header.

use super::ports::drop_tail::{ArrivalDepths, Enqueued, OutputQueue};
use super::ports::pfc::{Admitted, PfcPorts};
use super::ports::shared_buffer::SharedBuffer;
use super::ports::trimming::{Offer, TrimmingPort};
use super::CUT_THROUGH_HEADER_BYTES;
use super::{BOUNCED, CONTROL, PAUSE, TRIMMED};
use crate::blocks::cell::{Cell, CellId};
use crate::blocks::fabric::{Context, Node};
use crate::blocks::routing::{stamp, LocalView, Router, NO_ROUTE};
use crate::engine::rng::Rng;
use crate::engine::stats::{only_counts, Tally};
use crate::engine::time::{serialization_ps, TimePs};
use rand::Rng as _;

/// What a switch counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwitchCounters {
    /// Packets sent on its links.
    pub packets_forwarded: u64,
    /// Packets dropped at a full output queue (over a shared buffer: at its dynamic
    /// threshold or a full buffer, which [`SharedBuffer`] counts apart).
    pub packets_dropped: u64,
    /// Packets lost at random.
    pub packets_lost: u64,
    /// Packets marked CE.
    pub packets_marked: u64,
}

/// What a switch's trimming ports did with headers (NDP §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimCounts {
    /// Data packets trimmed to their headers.
    pub trimmed: u64,
    /// Headers and control packets dropped at a full header queue (returned headers that
    /// found one full on their way back included).
    pub headers_dropped: u64,
    /// Trimmed headers returned toward their sender from a full header queue.
    pub headers_returned: u64,
    /// Of them, dropped on their way back (at a full header queue again).
    pub returns_dropped: u64,
}

impl Tally for TrimCounts {
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.trimmed,
            &mut self.headers_dropped,
            &mut self.headers_returned,
            &mut self.returns_dropped,
        ]
    }
}

const _: () = assert!(only_counts::<TrimCounts>(4));

/// A switch's output ports: drop-tail FIFOs that schedule each packet at enqueue (the fast
/// path), or NDP's event-driven trimming ports with the switch's coin for their choices.
pub enum Ports {
    /// Drop-tail (ECN-marking) FIFOs, each with its own buffer (`None`) or over one shared
    /// buffer with a dynamic threshold (Choudhury & Hahne 1998).
    Fifo(Vec<OutputQueue>, Option<SharedBuffer>),
    /// Trimming ports, with what they did with headers.
    Trimming(Vec<TrimmingPort>, Rng, TrimCounts),
    /// PFC ports over a shared buffer.
    Pfc(PfcPorts),
}

/// A switch.
pub struct EthernetSwitch {
    /// Index among the router's switches.
    switch: usize,
    ports: Ports,
    /// Random losses: the probability and the switch's own random stream.
    loss: Option<(f64, Rng)>,
    /// Forwards a frame once its header is in (its links to other switches say so, and
    /// frames reach it at their header), not at its last bit.
    cut_through: bool,
    /// Trimming ports return a trimmed header that finds its header queue full to its sender
    /// (NDP §3.1) instead of dropping it.
    return_to_sender: bool,
    /// What it counted.
    pub counters: SwitchCounters,
}

/// What the router may read of a switch: its output queues' depths now.
struct Queues<'a>(&'a Ports, TimePs);

impl LocalView for Queues<'_> {
    fn backlog_cells(&self, output: usize) -> u32 {
        match self.0 {
            Ports::Fifo(queues, _) => queues[output].waiting(self.1),
            Ports::Trimming(ports, ..) => ports[output].data_packets(self.1),
            Ports::Pfc(pfc) => pfc.data_packets(output),
        }
    }
}

#[cfg(test)]
impl EthernetSwitch {
    /// Injects `fault` into every trimming or PFC port (test only); false if it has none.
    pub(crate) fn inject_fault(&mut self, fault: crate::blocks::switch::Fault) -> bool {
        match &mut self.ports {
            Ports::Trimming(ports, ..) => {
                ports.iter_mut().for_each(|p| p.inject_fault(fault));
                true
            }
            Ports::Pfc(pfc) => {
                pfc.inject_fault(fault);
                true
            }
            Ports::Fifo(..) => false,
        }
    }

    /// Data packets its trimming or PFC ports took from their queues under a fault (test only).
    pub(crate) fn fault_taken(&self) -> u64 {
        match &self.ports {
            Ports::Trimming(ports, ..) => ports.iter().map(|p| p.fault_taken()).sum(),
            Ports::Pfc(pfc) => pfc.fault_taken(),
            Ports::Fifo(..) => 0,
        }
    }
}

impl EthernetSwitch {
    /// Switch `switch` of the router's tables with these output ports, one per port, losing
    /// each arriving packet with probability `loss.0` drawn from `loss.1` (`None`: no loss).
    pub fn new(switch: usize, ports: Ports, loss: Option<(f64, Rng)>) -> Self {
        EthernetSwitch {
            switch,
            ports,
            loss,
            cut_through: false,
            return_to_sender: false,
            counters: SwitchCounters::default(),
        }
    }

    /// The same switch cutting frames through: it takes a frame when its first
    /// [`CUT_THROUGH_HEADER_BYTES`] are in and may send it on at once. Drop-tail FIFO ports
    /// only (the scenario checks); frames from a slower input wait until sending them on
    /// cannot outrun their arrival.
    pub fn with_cut_through(self) -> Self {
        EthernetSwitch {
            cut_through: true,
            ..self
        }
    }

    /// The same switch returning trimmed headers that find a full header queue to their
    /// senders (NDP §3.1 return-to-sender); trimming ports only.
    pub fn with_return_to_sender(self) -> Self {
        EthernetSwitch {
            return_to_sender: true,
            ..self
        }
    }

    /// Prefetches the output queue `cell` will join here, if its path is stamped (see
    /// [`Node::warm`]).
    #[inline]
    pub fn warm(&self, cell: &Cell) {
        if let (Ports::Fifo(queues, _), Some(output)) = (&self.ports, stamp::peek(cell)) {
            if let Some(queue) = queues.get(output) {
                queue.prefetch();
            }
        }
    }

    /// What arrivals found at each output port in the measurement window.
    pub fn measured(&self) -> Vec<ArrivalDepths> {
        match &self.ports {
            Ports::Fifo(queues, _) => queues.iter().map(|q| q.measured).collect(),
            Ports::Trimming(ports, ..) => ports.iter().map(|p| p.measured).collect(),
            Ports::Pfc(pfc) => pfc.measured(),
        }
    }

    /// Deepest output queue seen, in (data) packets.
    pub fn peak_packets(&self) -> u32 {
        let peaks: Vec<u32> = match &self.ports {
            Ports::Fifo(queues, _) => queues.iter().map(|q| q.peak_packets).collect(),
            Ports::Trimming(ports, ..) => ports.iter().map(|p| p.peak_packets).collect(),
            Ports::Pfc(pfc) => vec![pfc.peak_packets()],
        };
        peaks.into_iter().max().unwrap_or(0)
    }

    /// What its trimming ports did with headers (nothing for FIFOs and PFC ports).
    pub fn trims(&self) -> TrimCounts {
        match &self.ports {
            Ports::Fifo(..) | Ports::Pfc(_) => TrimCounts::default(),
            Ports::Trimming(ports, _, counts) => TrimCounts {
                trimmed: ports.iter().map(|p| p.trimmed).sum(),
                ..*counts
            },
        }
    }

    /// Its ports.
    pub fn port_count(&self) -> usize {
        match &self.ports {
            Ports::Fifo(queues, _) => queues.len(),
            Ports::Trimming(ports, ..) => ports.len(),
            Ports::Pfc(pfc) => pfc.port_count(),
        }
    }

    /// The shared buffer, if its FIFOs share one.
    pub fn shared_buffer(&self) -> Option<&SharedBuffer> {
        match &self.ports {
            Ports::Fifo(_, shared) => shared.as_ref(),
            _ => None,
        }
    }

    /// The PFC ports, if the switch has them.
    pub fn pfc(&self) -> Option<&PfcPorts> {
        match &self.ports {
            Ports::Pfc(pfc) => Some(pfc),
            _ => None,
        }
    }

    /// Its PFC ports, mutable (tests break them on purpose).
    #[cfg(test)]
    pub fn pfc_mut(&mut self) -> Option<&mut PfcPorts> {
        match &mut self.ports {
            Ports::Pfc(pfc) => Some(pfc),
            _ => None,
        }
    }

    /// Serves event-driven port `output` if its link is free, and books its wake-up
    /// otherwise.
    fn serve<R: Router>(&mut self, ctx: &mut Context<'_, R>, output: usize) {
        if let Ports::Pfc(pfc) = &mut self.ports {
            let mut wake = None;
            let mut resume = None;
            while let Some((d, xon)) = pfc.send_next(output, ctx.now_ps, ctx.cells, &mut wake) {
                self.counters.packets_forwarded += (ctx.cells[d.cell].flags & PAUSE == 0) as u64;
                ctx.send_cell(output, d.cell, d.arrive_ps);
                resume = resume.or(xon);
            }
            if let Some(at_ps) = wake {
                ctx.set_timer(at_ps, output as u32);
            }
            // An XON was queued on its ingress port: send it (one per departure, and a port
            // sends one packet at a time, so this chain ends).
            if let Some(port) = resume {
                self.serve(ctx, port);
            }
            return;
        }
        let Ports::Trimming(ports, ..) = &mut self.ports else {
            return;
        };
        let mut wake = None;
        while let Some(d) = ports[output].send_next(ctx.now_ps, ctx.cells, &mut wake) {
            self.counters.packets_forwarded += 1;
            ctx.send_cell(output, d.cell, d.arrive_ps);
        }
        if let Some(at_ps) = wake {
            ctx.set_timer(at_ps, output as u32);
        }
    }
}

impl<R: Router> Node<R> for EthernetSwitch {
    /// FIFOs none: a queued packet is on its way to the far end as an event, due when its
    /// last bit arrives. Trimming ports hold the packets they have not yet sent.
    fn cells_held(&self) -> u64 {
        match &self.ports {
            Ports::Fifo(..) => 0,
            Ports::Trimming(ports, ..) => ports.iter().map(|p| p.packets_queued() as u64).sum(),
            Ports::Pfc(pfc) => pfc.packets_queued(),
        }
    }

    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, _: TimePs) {
        if let Some((probability, rng)) = &mut self.loss {
            if rng.gen::<f64>() < *probability {
                self.counters.packets_lost += 1;
                ctx.drop_cell(cell);
                return;
            }
        }
        if let Ports::Pfc(pfc) = &mut self.ports {
            if ctx.cells[cell].flags & PAUSE != 0 {
                pfc.frame_arrives(ctx.cells, cell, port, ctx.now_ps);
                ctx.consume(cell);
                self.serve(ctx, port);
                return;
            }
        }
        let view = Queues(&self.ports, ctx.now_ps);
        let output = ctx
            .router
            .route(self.switch, port, &mut ctx.cells[cell], &view);
        assert_ne!(output, NO_ROUTE, "an Ethernet fabric has every route");
        match &mut self.ports {
            Ports::Fifo(queues, shared) => {
                let ready_ps = match self.cut_through {
                    false => ctx.now_ps,
                    true => cut_through_ready_ps(queues, port, output, ctx, cell),
                };
                let got = match shared {
                    None => queues[output].enqueue(ctx.cells, cell, ctx.now_ps, ready_ps),
                    Some(buffer) => {
                        buffer.offer(queues, output, ctx.cells, cell, ctx.now_ps, ready_ps)
                    }
                };
                match got {
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
            Ports::Trimming(ports, rng, _) => {
                let offer = ports[output].offer(ctx.cells, cell, ctx.now_ps, rng);
                if let Offer::Full(refused) = offer {
                    self.refused(ctx, port, refused);
                }
                self.serve(ctx, output);
            }
            Ports::Pfc(pfc) => {
                let control = ctx.cells[cell].flags & CONTROL != 0;
                match pfc.offer(ctx.cells, cell, port, output, ctx.now_ps, control) {
                    Admitted::Dropped => {
                        self.counters.packets_dropped += 1;
                        ctx.drop_cell(cell);
                    }
                    Admitted::Queued { marked, pause_port } => {
                        self.counters.packets_marked += marked as u64;
                        if let Some(p) = pause_port {
                            self.serve(ctx, p);
                        }
                        self.serve(ctx, output);
                    }
                }
            }
        }
    }

    /// A trimming or PFC port's link freed: serve it.
    fn timer(&mut self, ctx: &mut Context<'_, R>, output: u32) {
        self.serve(ctx, output as usize);
    }
}

impl EthernetSwitch {
    /// A trimming port's full header queue refused `cell`, which came in on `input`: a trimmed
    /// header on its first trip goes back toward its sender if this switch returns them (NDP
    /// §3.1: source and destination swapped, marked [`BOUNCED`], queued as a header on the
    /// port toward the sender); anything else is dropped, as is a returned header that finds
    /// that port's header queue full too.
    fn refused<R: Router>(&mut self, ctx: &mut Context<'_, R>, input: usize, cell: CellId) {
        let Ports::Trimming(_, _, counts) = &mut self.ports else {
            unreachable!("only trimming ports refuse headers");
        };
        let c = &mut ctx.cells[cell];
        let returnable = self.return_to_sender && c.flags & (CONTROL | BOUNCED) == 0;
        if !returnable {
            counts.headers_dropped += 1;
            counts.returns_dropped += (c.flags & BOUNCED != 0) as u64;
            self.counters.packets_dropped += 1;
            ctx.drop_cell(cell);
            return;
        }
        debug_assert!(
            c.flags & TRIMMED != 0,
            "a data packet is trimmed before it is refused"
        );
        (c.src, c.dst) = (c.dst, c.src);
        c.flags |= BOUNCED;
        counts.headers_returned += 1;
        ctx.router.turn_around(c);
        let view = Queues(&self.ports, ctx.now_ps);
        let back = ctx
            .router
            .route(self.switch, input, &mut ctx.cells[cell], &view);
        assert_ne!(back, NO_ROUTE, "an Ethernet fabric has every route");
        let Ports::Trimming(ports, rng, counts) = &mut self.ports else {
            unreachable!("checked above");
        };
        if let Offer::Full(refused) = ports[back].offer(ctx.cells, cell, ctx.now_ps, rng) {
            counts.headers_dropped += 1;
            counts.returns_dropped += 1;
            self.counters.packets_dropped += 1;
            ctx.drop_cell(refused);
            return;
        }
        self.serve(ctx, back);
    }
}

/// When a frame whose header reached `input` now may start on `output` of a cut-through
/// switch: now, unless the output is faster than the input, when sending it now would outrun
/// its arrival: then no earlier than its last bit arrives less its time on the output. (A
/// cable's two directions have one rate, so the input's rate is its port's output link's.)
fn cut_through_ready_ps<R: Router>(
    queues: &[OutputQueue],
    input: usize,
    output: usize,
    ctx: &Context<'_, R>,
    cell: CellId,
) -> TimePs {
    let (rate_in, out) = (queues[input].link().rate_bps, queues[output].link());
    if out.rate_bps <= rate_in {
        return ctx.now_ps;
    }
    let size_bytes = ctx.cells[cell].payload_bytes as u64;
    let rest_in_ps = serialization_ps(size_bytes.saturating_sub(CUT_THROUGH_HEADER_BYTES), rate_in);
    (ctx.now_ps + rest_in_ps)
        .saturating_sub(out.frame_ps(size_bytes))
        .max(ctx.now_ps)
}
