//! An input-queued virtual-channel router (Dally and Towles, "Principles and Practices of
//! Interconnection Networks", ch. 14 and 16–19), a switch kind of every cell fabric beside the
//! slotted cell switch: per-VC input FIFOs, each with its own credit loop to the upstream
//! router or host; a packet of flits (cells) holds an output VC from its head's VC allocation
//! until its tail crosses the crossbar (wormhole, or virtual cut-through: the head waits for
//! room for the whole packet); switch allocation over the crossbar `speedup` times per cycle
//! into per-VC output queues; output arbitration between VCs by weighted round robin or strict
//! priority. The VC a packet takes on each channel is given by a rule of its routing phase
//! ([`assignment`]); [`dependency`] checks at build time that the rule leaves no cycle in the
//! channel dependency graph. Aquila's TiN switch is one such router (Gibson et al., "Aquila:
//! A unified, low-latency fabric for datacenter networks", NSDI '22, §3.1): per-VC input FIFOs
//! under credits, an iSLIP crossbar, output QoS between VCs.
//!
//! One flit is one cell of the fabric; one cycle is one cell time on the links. Where a
//! design's cells are several flits long (Aquila's GNet cells of 16–160 bytes), the router
//! switches either flit by flit, each flit its own crossbar decision, credit and wire hop, or
//! whole cells ([`SwitchingUnit::Cell`]): one allocation per cell, its input and output busy
//! for its flit count ([`busy`], the paper's iSLIP variant), credits counted in flits and
//! returned once per cell, one wire event per cell.

pub mod allocation;
pub mod assignment;
pub mod busy;
pub mod deadlock;
pub mod dependency;
pub mod failure;
mod node;
pub mod occupancy;
pub mod output;

use crate::blocks::cell::CellQueue;
use crate::blocks::flow_control::TxGate;
use crate::blocks::link::Link;
use crate::blocks::port_set::PortSet;
use crate::blocks::routing::LocalView;
use crate::blocks::switch::{PortCounters, SwitchStats};
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use allocation::{Eligibility, SwitchAllocator, SwitchAllocatorKind, VcAllocator};
use assignment::{PortClass, VcRule};
use busy::Busy;
use occupancy::Occupancy;
use output::{OutputArbiter, OutputArbitration};

/// How a packet holds buffers as it advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switching {
    /// The head takes an output VC as soon as it is free; flits advance one credit at a time,
    /// so a blocked packet may span several routers.
    Wormhole,
    /// The head takes an output VC only when the VC's downstream buffer has room for the
    /// whole packet (`packet_cells`, the longest packet), so a blocked packet sits in one
    /// router.
    VirtualCutThrough {
        /// Flits of the longest packet.
        packet_cells: u32,
    },
}

/// What the crossbar switches as one unit (`vc.switching_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchingUnit {
    /// Every flit: a cell of several flits is a packet of the router, each flit its own
    /// crossbar decision, credit and wire hop.
    Flit,
    /// The whole cell, as Aquila's TiN switches it (Gibson et al., NSDI '22, §3.1): one
    /// allocation, its input and output ports busy for its flit count, its flits' credits
    /// spent at once and returned at once, one wire event, at its head's arrival toward a
    /// router (cut-through, as the flits would stream) and its tail's toward a host (which
    /// acts on a whole cell).
    Cell {
        /// Flits per cell by the kind a cell's design writes in the low three bits of its
        /// flags (GNet's cell kind); every kind 1 where cells are one flit.
        flits_by_kind: [u32; 8],
    },
}

impl SwitchingUnit {
    /// The flits of `cell` as this unit counts them.
    #[inline]
    pub fn flits(&self, cell: &crate::blocks::cell::Cell) -> u32 {
        match self {
            SwitchingUnit::Flit => 1,
            SwitchingUnit::Cell { flits_by_kind } => flits_by_kind[(cell.flags & 7) as usize],
        }
    }
}

/// What every VC router of a fabric is made of.
#[derive(Clone, Debug)]
pub struct VcSpec {
    /// VCs per channel.
    pub vcs: u16,
    /// Flits each input VC's FIFO holds (the credits of its loop).
    pub buffer_cells: u32,
    /// The switch allocator.
    pub allocator: SwitchAllocatorKind,
    /// Crossbar cycles per link cycle (at least 1; a fraction spreads the extra cycles).
    pub speedup: f64,
    /// Output arbitration between VCs.
    pub output_arbitration: OutputArbitration,
    /// Cycles a credit waits before it crosses the channel back upstream.
    pub credit_delay_slots: u32,
    /// The VC assignment rule.
    pub rule: VcRule,
    /// Wormhole or virtual cut-through.
    pub switching: Switching,
    /// Flits or whole cells through the crossbar.
    pub unit: SwitchingUnit,
    /// Check at build time that the channel dependency graph is acyclic.
    pub check_dependencies: bool,
    /// The routing may send packets non-minimally (the rule's phases depend on it).
    pub nonminimal_routing: bool,
    /// Traffic classes the VCs are split into, `vcs / classes` routing VCs each: class `c`
    /// runs on VCs `c · per_class ..`, the rule applied within the class (a class offset),
    /// and an output chooses a class by `class_arbitration`, then a VC within it by
    /// `output_arbitration`. Aquila's RTS, CTS and CTD on their own high-priority VCs
    /// (Gibson et al., NSDI '22, §3.1, §3.3). 1: no classes.
    pub classes: u16,
    /// Output arbitration between the classes: strict priority (class 0 first) or weighted
    /// round robin, one weight per class.
    pub class_arbitration: OutputArbitration,
}

impl VcSpec {
    /// Routing VCs per class.
    pub fn vcs_per_class(&self) -> u16 {
        self.vcs / self.classes.max(1)
    }

    /// The VC a packet takes on its outgoing channel: the rule's, within the class of the VC
    /// it arrived on (a packet from a host keeps the class of the VC the host sent it on).
    pub fn out_vc(&self, hop: assignment::Hop) -> u16 {
        let per_class = self.vcs_per_class();
        let class_base = hop.in_vc / per_class * per_class;
        let within = assignment::Hop {
            in_vc: hop.in_vc - class_base,
            ..hop
        };
        class_base + self.rule.out_vc(within)
    }
}

/// No output VC held.
const NO_VC: u16 = u16::MAX;
/// The `next_vc` of a head leaving by an ejection channel: any free VC of the host's link.
const ANY_VC: u16 = u16::MAX - 1;
/// An output VC no packet holds.
const FREE: u32 = u32::MAX;

/// The input side: per input VC (index `port · vcs + vc`), its FIFO and the output VC its
/// packet holds.
struct InputVcs {
    fifos: Vec<CellQueue>,
    /// The output VC (its number on the output port) the front packet holds, or [`NO_VC`].
    out_vc: Vec<u16>,
    /// The output port of the front packet, once it holds an output VC.
    out_port: Vec<u16>,
    /// The (output, VC) of the last head that arrived, which its body flits follow.
    arriving: Vec<(u16, u16)>,
    /// Which VCs have a flit at the front, by what it waits for.
    occupancy: Occupancy,
    /// The (output, VC) the head at the front of each input VC asks for while it holds no
    /// output VC, noted as it reaches the front so that VC allocation reads no cell.
    front_wants: Vec<(u16, u16)>,
    /// The flits of the cell at the front of each input VC (1 when switching flits), the
    /// credits it needs downstream to cross.
    front_flits: Vec<u32>,
}

/// The output side: per output VC (index `port · vcs + vc`), its holder and queue; per port,
/// the link, its downstream credits and its arbiter.
struct OutputVcs {
    /// The input VC holding each output VC, or [`FREE`].
    owner: Vec<u32>,
    queues: Vec<CellQueue>,
    /// Flits queued per port.
    queued: Vec<u32>,
    /// The ports with a flit queued.
    ports_queued: PortSet,
    gates: Vec<TxGate>,
    links: Vec<Link>,
    class: Vec<PortClass>,
    /// Per (port, VC class): the arbiter between the class's VCs.
    arbiters: Vec<OutputArbiter>,
    /// Per port: the arbiter between the VC classes.
    class_arbiters: Vec<OutputArbiter>,
}

/// Buffers a cycle reuses, allocated once.
struct Scratch {
    /// This crossbar cycle's (input port, input VC, output port) transfers.
    transfers: Vec<(usize, usize, usize)>,
    /// Credits to return this cycle: (input port, VC, flits).
    credits: Vec<(u16, u16, u32)>,
}

/// An input-queued virtual-channel router.
pub struct VcRouter {
    ports: usize,
    vcs: usize,
    cell_bytes: u64,
    slot_ps: TimePs,
    pipeline_ps: TimePs,
    spec: VcSpec,
    inputs: InputVcs,
    outputs: OutputVcs,
    switch_allocator: SwitchAllocator,
    vc_allocator: VcAllocator,
    /// The ports transferring a multi-flit cell across the crossbar.
    busy: Busy,
    /// Something switch allocation reads changed since the last allocation that did nothing
    /// (a new front, a credit, a grant or a move).
    allocation_due: bool,
    /// Something VC allocation reads changed since it last granted nothing (a new head at
    /// a front, an output VC freed, a credit under cut-through).
    vc_allocation_due: bool,
    /// Crossbar cycles owed (the fraction of a fractional speed-up carried over).
    crossbar_cycles_owed: f64,
    rng: Rng,
    scratch: Scratch,
    held_cells: u64,
    /// The clock edge of the last tick, if it left flits held, and the flits it left: the
    /// router sleeps through the edges at which it would do nothing ([`node`]), and the next
    /// tick samples its occupancy at each of them as it was.
    slept_from: Option<(TimePs, u64)>,
    /// Its dead links and the cells they cost it.
    failures: failure::Failures,
    /// What the router measured and counted (ports, occupancy, delay).
    pub stats: SwitchStats,
}

impl VcRouter {
    /// A router of `ports` ports moving `cell_bytes` flits, every output on `out_link` with an
    /// open gate until [`set_port`](Self::set_port) says otherwise.
    pub fn new(
        ports: usize,
        cell_bytes: u64,
        out_link: Link,
        pipeline_ps: TimePs,
        spec: &VcSpec,
        rng: Rng,
    ) -> Self {
        let vcs = spec.vcs as usize;
        let queues = || (0..ports * vcs).map(|_| CellQueue::default()).collect();
        VcRouter {
            ports,
            vcs,
            cell_bytes,
            slot_ps: out_link.frame_ps(cell_bytes),
            pipeline_ps,
            spec: spec.clone(),
            inputs: InputVcs {
                fifos: queues(),
                out_vc: vec![NO_VC; ports * vcs],
                out_port: vec![0; ports * vcs],
                arriving: vec![(0, 0); ports * vcs],
                occupancy: Occupancy::new(ports),
                front_wants: vec![(0, 0); ports * vcs],
                front_flits: vec![1; ports * vcs],
            },
            outputs: OutputVcs {
                owner: vec![FREE; ports * vcs],
                queues: queues(),
                queued: vec![0; ports],
                ports_queued: PortSet::EMPTY,
                gates: vec![TxGate::Open; ports],
                links: vec![out_link; ports],
                class: vec![PortClass::Terminal; ports],
                arbiters: vec![OutputArbiter::default(); ports * spec.classes.max(1) as usize],
                class_arbiters: vec![OutputArbiter::default(); ports],
            },
            switch_allocator: SwitchAllocator::new(spec.allocator, ports, vcs),
            vc_allocator: VcAllocator::new(ports * vcs),
            busy: Busy::default(),
            allocation_due: false,
            vc_allocation_due: false,
            crossbar_cycles_owed: 0.0,
            rng,
            scratch: Scratch {
                transfers: Vec::with_capacity(ports),
                credits: Vec::with_capacity(ports * spec.speedup.ceil() as usize),
            },
            held_cells: 0,
            slept_from: None,
            failures: failure::Failures::new(ports),
            stats: SwitchStats {
                counters: vec![PortCounters::default(); ports],
                ..SwitchStats::default()
            },
        }
    }

    /// Cables `port` to a peer of `class` over `link`, its flits gated by `gate` (credits per
    /// VC toward a router; open toward a host, which takes every flit).
    pub fn set_port(&mut self, port: usize, class: PortClass, link: Link, gate: TxGate) {
        self.outputs.class[port] = class;
        self.outputs.links[port] = link;
        self.outputs.gates[port] = gate;
    }

    /// The cells its dead links cost it, by cause.
    pub fn failure_losses(&self) -> failure::FailureLosses {
        self.failures.losses
    }

    /// Flits held, by the counter kept as they come and go.
    pub fn held_cells(&self) -> u64 {
        self.held_cells
    }

    /// Flits held, counted where they are (every input and output VC queue).
    pub fn queued_cells(&self) -> u64 {
        let fifos = self.inputs.fifos.iter().chain(&self.outputs.queues);
        fifos.map(|q| q.len() as u64).sum()
    }

    /// The input VCs whose front flit waits for a VC downstream: (input port, input VC,
    /// output port, output VC). A head not yet holding an output VC waits for the one its
    /// rule names (held by another packet, or short of room under cut-through); a flit of a
    /// packet that holds one waits for its credits. `front_route` gives a front flit's
    /// (output, wanted VC).
    pub fn waiting_vcs<'a>(
        &'a self,
        front_route: impl Fn(crate::blocks::cell::CellId) -> (u16, u16) + 'a,
    ) -> impl Iterator<Item = (usize, usize, usize, u16)> + 'a {
        (0..self.ports * self.vcs).filter_map(move |iv| {
            let front = self.inputs.fifos[iv].front()?;
            let (input, vc) = (iv / self.vcs, iv % self.vcs);
            match self.inputs.out_vc[iv] {
                NO_VC => {
                    let (output, wanted) = front_route(front);
                    (wanted < ANY_VC).then_some((input, vc, output as usize, wanted))
                }
                held => {
                    let output = self.inputs.out_port[iv] as usize;
                    let flits = self.inputs.front_flits[iv];
                    let stuck = !self.outputs.gates[output].may_send_flits(held, flits);
                    stuck.then_some((input, vc, output, held))
                }
            }
        })
    }

    /// Credits used on `output` summed over its VCs: flits sent across the crossbar toward
    /// the downstream buffers and not yet credited back (flits queued, for a host's port).
    fn used_credits(&self, output: usize) -> u32 {
        let capacity = self.spec.buffer_cells;
        let gate = &self.outputs.gates[output];
        match gate.credits(0) {
            Some(_) => (0..self.vcs as u16)
                .map(|vc| capacity - gate.credits(vc).unwrap_or(capacity))
                .sum(),
            None => self.outputs.queued[output],
        }
    }
}

/// What the switch allocator reads of a router: its input VCs, its outputs' credits and
/// the ports busy with a cell.
struct Ready<'a> {
    inputs: &'a InputVcs,
    outputs: &'a OutputVcs,
    busy: &'a Busy,
}

impl Eligibility for Ready<'_> {
    fn ready_output(&self, input_vc: usize) -> Option<usize> {
        if self.inputs.fifos[input_vc].is_empty() {
            return None;
        }
        let vc = self.inputs.out_vc[input_vc];
        let output = self.inputs.out_port[input_vc] as usize;
        let flits = self.inputs.front_flits[input_vc];
        let ready = vc != NO_VC
            && !self.busy.outputs.contains(output)
            && self.outputs.gates[output].may_send_flits(vc, flits);
        ready.then_some(output)
    }

    fn candidate_inputs(&self) -> PortSet {
        let holders = self.inputs.occupancy.ports_with_holders();
        holders.without(self.busy.inputs)
    }

    fn candidate_vcs(&self, input: usize) -> u64 {
        self.inputs.occupancy.holders(input)
    }
}

/// UGAL-L and the other queue-reading modes read an output's used credits, as Kim et al.'s
/// simulator does (the downstream buffers' occupancy seen from here).
impl LocalView for VcRouter {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.used_credits(output)
    }
}

/// The router as the routing of one head sees it: an output's backlog summed over its VCs,
/// and per VC for the VC the head's rule gives it on that output (Aquila's comparison of
/// per-VC queues, Gibson et al., NSDI '22, §3.2).
struct HeadView<'a> {
    router: &'a VcRouter,
    /// The channel the head arrived on and its VC, as the VC rule reads them.
    arrived: (PortClass, u16),
    /// The head heads for an intermediate group as it is routed.
    toward_intermediate: bool,
}

impl LocalView for HeadView<'_> {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.router.used_credits(output)
    }

    /// The credits used on the VC the head would take on `output`: its flits in this
    /// router's output queue, on the link and in the downstream FIFO, which back up as the
    /// downstream router's buffers fill (flits queued for a host's port).
    fn vc_backlog_cells(&self, output: usize) -> u32 {
        let router = self.router;
        let out_class = router.outputs.class[output];
        let gate = &router.outputs.gates[output];
        if out_class == PortClass::Terminal || gate.credits(0).is_none() {
            return router.outputs.queued[output];
        }
        let vc = router.spec.out_vc(assignment::Hop {
            in_class: self.arrived.0,
            in_vc: self.arrived.1,
            out_class,
            toward_intermediate: self.toward_intermediate,
            nonminimal_routing: router.spec.nonminimal_routing,
        });
        let capacity = router.spec.buffer_cells;
        capacity - gate.credits(vc).unwrap_or(capacity)
    }
}
