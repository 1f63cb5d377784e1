//! An N-port cell switch in slotted time, with its queue organization and scheduler chosen by
//! name: output-queued (ideal), FIFO input-queued, VOQ + iSLIP, VOQ + PIM, and SAFC.
//!
//! Each slot (one cell time) the switch moves at most one cell to each output; input-queued
//! organizations but SAFC also move at most one cell out of each input. Cells that arrive at the instant
//! of a slot's clock edge take part in that slot's decision (see [`Phase`](crate::engine::queue::Phase)).

use super::batcher_banyan::BatcherBanyan;
use super::cell::{CellArena, CellId, CellQueue};
use super::fabric::{Context, Node};
use super::flow_control::{FlowSignal, RxFlowControl, TxGate};
use super::link::Link;
use super::matching::{Matcher, UNMATCHED};
use super::port_set::{after, PortSet};
use super::routing::{LocalView, Router};
use crate::engine::rng::Rng;
use crate::engine::stats::OccupancyHistogram;
use crate::engine::time::TimePs;

/// The scheduler (and with it the queue organization) of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// One FIFO per output, N cells per slot may enter it: the ideal output-queued switch.
    OutputQueued,
    /// One FIFO per input; outputs pick a random head-of-line contender (Karol et al. 1987).
    Fifo,
    /// Virtual output queues matched by iSLIP with the given iterations (McKeown 1999).
    Islip {
        /// Request-grant-accept iterations per slot.
        iterations: u32,
    },
    /// Virtual output queues matched by PIM with the given iterations (Anderson et al. 1993).
    Pim {
        /// Request-grant-accept iterations per slot.
        iterations: u32,
    },
    /// Statically allocated, fully connected: N² dedicated queues; each output serves its N
    /// queues round robin with no input constraint (the ideal of the RIFL paper, §V).
    Safc,
    /// Per-VC input FIFOs under credits with VC and switch allocation: built as a
    /// [`VcRouter`](super::vc_router::VcRouter), never as a cell switch.
    VirtualChannel,
}

impl SchedulerKind {
    /// True when the buffer sits at the inputs (and can be flow-controlled from upstream).
    pub fn is_input_buffered(self) -> bool {
        self != SchedulerKind::OutputQueued
    }
}

/// The outcome of offering a cell to the switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued; the flow-control signal to send upstream, if any.
    Queued(Option<FlowSignal>),
    /// The port's buffer was full; the cell is the caller's to account as dropped.
    Dropped,
}

/// A cell leaving the switch in the current slot.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    /// Output port.
    pub output: u16,
    /// The cell.
    pub cell: CellId,
    /// When its last bit reaches the far end of the output link.
    pub arrive_ps: TimePs,
}

/// Per-port counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortCounters {
    /// Cells accepted into the buffer at this input.
    pub cells_in: u64,
    /// Cells dropped at this port's buffer.
    pub cells_dropped: u64,
    /// Cells sent out of this output.
    pub cells_out: u64,
}

/// Switch-wide counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwitchCounters {
    /// Slots in which an output had a cell waiting for it but its downstream channel was off.
    pub output_slots_held: u64,
    /// Cells blocked inside the Batcher-Banyan network (zero under a matching scheduler).
    pub internal_blocking: u64,
    /// Cells made by copying a broadcast, beyond the cell that arrived (which is one of its
    /// copies): the account adds them to the cells injected.
    pub cells_copied: u64,
}

enum Queues {
    /// Per output.
    Output(Vec<CellQueue>),
    /// Per input.
    InputFifo(Vec<CellQueue>),
    /// Per (input, output), index `input * ports + output`, with the set of non-empty inputs per
    /// output.
    Voq {
        queues: Vec<CellQueue>,
        inputs_for_output: Vec<PortSet>,
    },
}

impl Queues {
    /// Brings the head cells of this slot's `transfers` into cache together.
    fn prefetch_heads(&self, transfers: &[(usize, usize)], ports: usize, cells: &CellArena) {
        for &(input, output) in transfers {
            let queue = match self {
                Queues::Output(queues) => &queues[output],
                Queues::InputFifo(queues) => &queues[input],
                Queues::Voq { queues, .. } => &queues[input * ports + output],
            };
            if let Some(head) = queue.front() {
                cells.prefetch(head);
            }
        }
    }

    /// Removes the cell that moves from `input` to `output` this slot.
    fn pop(&mut self, input: usize, output: usize, ports: usize, cells: &mut CellArena) -> CellId {
        let cell = match self {
            Queues::Output(queues) => cells.pop_front(&mut queues[output]),
            Queues::InputFifo(queues) => cells.pop_front(&mut queues[input]),
            Queues::Voq {
                queues,
                inputs_for_output,
            } => {
                let queue = &mut queues[input * ports + output];
                let cell = cells.pop_front(queue);
                if queue.is_empty() {
                    inputs_for_output[output].remove(input);
                }
                cell
            }
        };
        cell.expect("the scheduler chose a non-empty queue")
    }
}

/// What a switch is made of; every port alike.
#[derive(Clone, Debug)]
pub struct SwitchSpec {
    /// Number of ports.
    pub ports: usize,
    /// Bytes per cell on the wire; one slot is one cell time on the output links.
    pub cell_bytes: u64,
    /// Scheduler and queue organization.
    pub scheduler: SchedulerKind,
    /// Buffer per buffer port (input, or output when output-queued), or per VOQ when
    /// `per_voq_buffers`; `None`: unbounded.
    pub buffer_cells: Option<u32>,
    /// Each VOQ has its own statically allocated buffer and its own flow-control channel (the
    /// channel id is the VOQ's output), as RIFL's per-VOQ flow control (Shen and Chow 2023, §IV-C,
    /// §IV-D).
    pub per_voq_buffers: bool,
    /// Carry each slot's matched cells through a [`BatcherBanyan`] network and count internal
    /// blocking, instead of an ideal crossbar.
    pub batcher_banyan: bool,
    /// Receive-side flow control of each input.
    pub rx_flow_control: RxFlowControl,
    /// Each output link.
    pub out_link: Link,
    /// Fixed latency added to every cell crossing the switch.
    pub pipeline_ps: TimePs,
}

/// A fault a test injects into a switch while the model runs, to show that the accounts catch
/// it: cells that vanish from a queue or leave twice, with no counter changed.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fault {
    /// Every n-th cell an output sends vanishes: popped from its queue, sent nowhere, released
    /// nowhere, and no counter changed (a lost handle).
    pub lose_one_in: Option<u64>,
    /// Every n-th cell an output sends leaves twice, a slot apart: a copy appears that no
    /// source injected, and no counter changes.
    pub duplicate_one_in: Option<u64>,
    /// Skips the per-slot check of the counter against the queues, so that the run's end-of-run
    /// account is what catches the fault.
    pub skip_slot_check: bool,
    /// Cells the outputs took from the queues so far.
    pub taken: u64,
}

#[cfg(test)]
impl Fault {
    /// True if the `taken`-th cell taken from a queue is an `every`-th one.
    pub(crate) fn strikes(taken: u64, every: Option<u64>) -> bool {
        every.is_some_and(|n| taken.is_multiple_of(n))
    }
}

/// What a switch measures after warm-up, and counts over the whole run.
#[derive(Default)]
pub struct SwitchStats {
    /// Statistics start at this time.
    pub measure_from_ps: TimePs,
    /// Counters per port.
    pub counters: Vec<PortCounters>,
    /// Switch-wide counters.
    pub switch_counters: SwitchCounters,
    /// Cells held, sampled after each measured slot's departures.
    pub occupancy_samples: OccupancyHistogram,
    /// Sum over measured departures of slots spent in the switch.
    pub delay_slots_sum: u64,
    /// Measured departures.
    pub delay_samples: u64,
}

/// Where a switch's cells are held and how much room they have.
struct Buffers {
    /// Cells held per buffer port (inputs, or outputs when output-queued).
    occupancy: Vec<u32>,
    /// Room per buffer unit (port, or VOQ when `per_voq`); `None`: unbounded.
    capacity_cells: Option<u32>,
    /// Each VOQ is a buffer unit of its own.
    per_voq: bool,
    /// Cells held, by the counter kept as cells come and go.
    held_cells: u64,
    /// Cells held per output they are headed for.
    backlog_cells: Vec<u32>,
}

/// Buffers a slot's decision reuses, allocated once.
struct SlotScratch {
    /// The output matched to each input (or [`UNMATCHED`]).
    output_of_input: Vec<u16>,
    /// Per output: inputs whose head cell for it may go (requests after downstream flow control).
    requests: Vec<PortSet>,
    /// This slot's (input, output) transfers.
    transfers: Vec<(usize, usize)>,
    /// The outputs of the transfers, for the Batcher-Banyan network.
    fabric_outputs: Vec<u16>,
    /// The cells leaving this slot.
    departures: Vec<Departure>,
    /// Flow-control signals for upstream, per input port.
    signals: Vec<(u16, FlowSignal)>,
}

impl SlotScratch {
    fn new(ports: usize) -> Self {
        SlotScratch {
            output_of_input: vec![UNMATCHED; ports],
            requests: vec![PortSet::EMPTY; ports],
            transfers: Vec::with_capacity(ports * ports),
            fabric_outputs: Vec::with_capacity(ports),
            departures: Vec::with_capacity(ports),
            signals: Vec::with_capacity(ports),
        }
    }
}

/// A slotted N-port cell switch.
pub struct CellSwitch {
    ports: usize,
    cell_bytes: u64,
    slot_ps: TimePs,
    scheduler: SchedulerKind,
    queues: Queues,
    matcher: Option<Matcher>,
    /// SAFC round-robin pointer per output.
    serve_ptr: Vec<usize>,
    buffers: Buffers,
    rx_flow_control: Vec<RxFlowControl>,
    /// Per output: may the cell at a queue head go to the downstream channel it needs?
    out_gates: Vec<TxGate>,
    out_links: Vec<Link>,
    fabric: Option<BatcherBanyan>,
    pipeline_ps: TimePs,
    rng: Rng,
    scratch: SlotScratch,
    /// What the switch measured and counted.
    pub stats: SwitchStats,
    /// A fault injected by a test.
    #[cfg(test)]
    pub(crate) fault: Fault,
}

impl CellSwitch {
    /// Builds the switch `spec` describes, drawing its random choices from `rng`. Every output
    /// starts with an open gate (see [`set_output_gate`](Self::set_output_gate)).
    pub fn new(spec: SwitchSpec, rng: Rng) -> Self {
        let SwitchSpec {
            ports,
            cell_bytes,
            scheduler,
            buffer_cells,
            per_voq_buffers,
            batcher_banyan,
            rx_flow_control,
            out_link,
            pipeline_ps,
        } = spec;
        assert!(
            !per_voq_buffers
                || matches!(
                    scheduler,
                    SchedulerKind::Islip { .. } | SchedulerKind::Pim { .. } | SchedulerKind::Safc
                ),
            "per-VOQ buffers need a VOQ switch"
        );
        let fifos = || (0..ports).map(|_| CellQueue::default()).collect();
        let voqs = || Queues::Voq {
            queues: (0..ports * ports).map(|_| CellQueue::default()).collect(),
            inputs_for_output: vec![PortSet::EMPTY; ports],
        };
        let (queues, matcher) = match scheduler {
            SchedulerKind::OutputQueued => (Queues::Output(fifos()), None),
            SchedulerKind::Fifo => (Queues::InputFifo(fifos()), None),
            SchedulerKind::Islip { iterations } => {
                (voqs(), Some(Matcher::islip(ports, iterations)))
            }
            SchedulerKind::Pim { iterations } => (voqs(), Some(Matcher::pim(ports, iterations))),
            SchedulerKind::Safc => (voqs(), None),
            SchedulerKind::VirtualChannel => {
                panic!("a virtual-channel scheduler builds a VcRouter, not a cell switch")
            }
        };
        CellSwitch {
            ports,
            cell_bytes,
            slot_ps: out_link.frame_ps(cell_bytes),
            scheduler,
            queues,
            matcher,
            serve_ptr: vec![0; ports],
            buffers: Buffers {
                occupancy: vec![0; ports],
                capacity_cells: buffer_cells,
                per_voq: per_voq_buffers,
                held_cells: 0,
                backlog_cells: vec![0; ports],
            },
            rx_flow_control: vec![rx_flow_control; ports],
            out_gates: vec![TxGate::Open; ports],
            out_links: vec![out_link; ports],
            fabric: batcher_banyan.then(|| BatcherBanyan::new(ports)),
            pipeline_ps,
            rng,
            scratch: SlotScratch::new(ports),
            stats: SwitchStats {
                counters: vec![PortCounters::default(); ports],
                ..SwitchStats::default()
            },
            #[cfg(test)]
            fault: Fault::default(),
        }
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// Length of one slot.
    pub fn slot_ps(&self) -> TimePs {
        self.slot_ps
    }

    /// Cells currently held, by the switch's counter (kept as cells come and go).
    pub fn held_cells(&self) -> u64 {
        self.buffers.held_cells
    }

    /// Cells currently held, counted where they are: the lengths of the switch's queues. It
    /// equals [`held_cells`](Self::held_cells) unless a cell was lost from a queue or queued
    /// twice outside the counter. Walks every queue (N² of them with VOQs).
    pub fn queued_cells(&self) -> u64 {
        let queues = match &self.queues {
            Queues::Output(queues) | Queues::InputFifo(queues) => queues,
            Queues::Voq { queues, .. } => queues,
        };
        queues.iter().map(|q| q.len() as u64).sum()
    }

    /// In builds with debug assertions, checks the counter of cells held against the lengths
    /// of the queues (a walk over every queue, so not in release builds).
    #[inline]
    fn debug_check_held(&self) {
        #[cfg(test)]
        if self.fault.skip_slot_check {
            return;
        }
        debug_assert_eq!(
            self.buffers.held_cells,
            self.queued_cells(),
            "cell switch: cells held by the counter != cells in the queues"
        );
    }

    /// Outputs with cells waiting whose downstream flow control lets nothing through.
    pub fn shut_outputs(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.ports)
            .filter(|&o| self.buffers.backlog_cells[o] > 0 && self.out_gates[o].is_shut())
    }

    /// Sends `output`'s cells over `link` (a cable of its own length).
    pub fn set_output_link(&mut self, output: usize, link: Link) {
        self.out_links[output] = link;
    }

    /// Puts `input` under the receiving side of its cable's flow control.
    pub fn set_input_flow_control(&mut self, input: usize, flow_control: RxFlowControl) {
        self.rx_flow_control[input] = flow_control;
    }

    /// Puts `output` under flow control from the switch downstream of it.
    pub fn set_output_gate(&mut self, output: usize, gate: TxGate) {
        self.out_gates[output] = gate;
    }

    /// Applies a flow-control signal that reached `output` from downstream.
    pub fn on_output_signal(&mut self, output: usize, signal: FlowSignal) {
        self.out_gates[output].on_signal(signal);
    }

    fn is_input_buffered(&self) -> bool {
        self.scheduler.is_input_buffered()
    }

    /// Cells held in the buffer unit `cell` occupies: its VOQ when per-VOQ, else its port.
    fn unit_occupancy(&self, input: usize, output: usize) -> u32 {
        match (&self.queues, self.buffers.per_voq) {
            (Queues::Voq { queues, .. }, true) => queues[input * self.ports + output].len(),
            _ if self.is_input_buffered() => self.buffers.occupancy[input],
            _ => self.buffers.occupancy[output],
        }
    }

    /// What `buffer_port`'s flow control is told the buffer unit holds: the unit's occupancy
    /// where it switches on thresholds, 0 where it reads none (no flow control, credits).
    #[inline]
    fn occupancy_for_flow_control(&self, buffer_port: usize, input: usize, output: usize) -> u32 {
        if self.rx_flow_control[buffer_port].reads_occupancy() {
            self.unit_occupancy(input, output)
        } else {
            0
        }
    }

    /// Offers `cell`, arriving at `now_ps` on `input`, to the switch; the cell's `out_port`
    /// says where it goes.
    pub fn accept(
        &mut self,
        now_ps: TimePs,
        input: u16,
        cell: CellId,
        cells: &mut CellArena,
    ) -> Admission {
        let c = &mut cells[cell];
        let (output, vc) = (c.out_port as usize, c.vc);
        debug_assert!(output < self.ports, "cell routed beyond the switch");
        debug_assert!(
            !self.buffers.per_voq || vc as usize == output,
            "per-VOQ flow control: the channel is the VOQ"
        );
        let buffer_port = if self.is_input_buffered() {
            input as usize
        } else {
            output
        };
        if self
            .buffers
            .capacity_cells
            .is_some_and(|cap| self.unit_occupancy(input as usize, output) >= cap)
        {
            self.stats.counters[buffer_port].cells_dropped += 1;
            return Admission::Dropped;
        }
        c.switch_arrive_ps = now_ps;
        c.in_port = input;
        self.stats.counters[input as usize].cells_in += 1;
        self.buffers.occupancy[buffer_port] += 1;
        self.buffers.held_cells += 1;
        self.buffers.backlog_cells[output] += 1;
        match &mut self.queues {
            Queues::Output(queues) => cells.push_back(&mut queues[output], cell),
            Queues::InputFifo(queues) => cells.push_back(&mut queues[input as usize], cell),
            Queues::Voq {
                queues,
                inputs_for_output,
            } => {
                cells.push_back(&mut queues[input as usize * self.ports + output], cell);
                inputs_for_output[output].insert(input as usize);
            }
        }
        let occupancy = self.occupancy_for_flow_control(buffer_port, input as usize, output);
        let signal = self.rx_flow_control[buffer_port].after_enqueue(vc, occupancy);
        Admission::Queued(signal)
    }

    /// Runs one slot's clock edge at `now_ps`: schedules, moves cells onto output links and
    /// returns the departures and the flow-control signals for upstream (per input port).
    pub fn run_slot(
        &mut self,
        now_ps: TimePs,
        cells: &mut CellArena,
    ) -> (&[Departure], &[(u16, FlowSignal)]) {
        self.scratch.departures.clear();
        self.scratch.signals.clear();
        self.choose_transfers(now_ps, cells);
        self.count_internal_blocking();
        self.queues
            .prefetch_heads(&self.scratch.transfers, self.ports, cells);
        let measuring = now_ps >= self.stats.measure_from_ps;
        // Taken out for the loop (a move, no allocation), so `send` may borrow the switch.
        let transfers = std::mem::take(&mut self.scratch.transfers);
        for &(input, output) in &transfers {
            self.send(now_ps, input, output, measuring, cells);
        }
        self.scratch.transfers = transfers;
        self.buffers.held_cells -= self.scratch.departures.len() as u64;
        self.debug_check_held();
        if measuring {
            self.stats
                .occupancy_samples
                .record_n(self.buffers.held_cells as usize, 1);
        }
        (&self.scratch.departures, &self.scratch.signals)
    }

    /// Carries this slot's transfers through the Batcher-Banyan network, where there is one,
    /// and counts the cells it blocks.
    fn count_internal_blocking(&mut self) {
        if let Some(fabric) = &mut self.fabric {
            let outputs = &mut self.scratch.fabric_outputs;
            outputs.clear();
            outputs.extend(self.scratch.transfers.iter().map(|&(_, o)| o as u16));
            let blocked = fabric.route(outputs);
            debug_assert_eq!(
                blocked, 0,
                "a matching never blocks a Batcher-Banyan network"
            );
            self.stats.switch_counters.internal_blocking += blocked as u64;
        }
    }

    /// Moves the head cell of the queue from `input` to `output` onto the output link at
    /// `now_ps`: a departure, the buffer's room given back (a signal upstream if its flow
    /// control says so), and its delay measured when `measuring`.
    #[inline]
    fn send(
        &mut self,
        now_ps: TimePs,
        input: usize,
        output: usize,
        measuring: bool,
        cells: &mut CellArena,
    ) {
        let cell = self.queues.pop(input, output, self.ports, cells);
        #[cfg(test)]
        {
            self.fault.taken += 1;
            if Fault::strikes(self.fault.taken, self.fault.lose_one_in) {
                return;
            }
        }
        self.buffers.backlog_cells[output] -= 1;
        let arrive_ps = self.out_links[output].transmit(now_ps, self.cell_bytes) + self.pipeline_ps;
        self.scratch.departures.push(Departure {
            output: output as u16,
            cell,
            arrive_ps,
        });
        let c = &mut cells[cell];
        let (in_vc, in_port) = (c.vc, c.in_port as usize);
        c.vc = c.next_vc;
        self.out_gates[output].on_send(c.vc);
        let measured_delay_slots = (now_ps - c.switch_arrive_ps) / self.slot_ps;
        let buffer_port = if self.is_input_buffered() {
            in_port
        } else {
            output
        };
        self.buffers.occupancy[buffer_port] -= 1;
        self.stats.counters[output].cells_out += 1;
        let occupancy = self.occupancy_for_flow_control(buffer_port, in_port, output);
        if let Some(signal) = self.rx_flow_control[buffer_port].after_dequeue(in_vc, occupancy) {
            self.scratch.signals.push((buffer_port as u16, signal));
        }
        if measuring {
            self.stats.delay_slots_sum += measured_delay_slots;
            self.stats.delay_samples += 1;
        }
        #[cfg(test)]
        if Fault::strikes(self.fault.taken, self.fault.duplicate_one_in) {
            // The copy leaves a slot later, outside every counter but the one that keeps the
            // per-slot check quiet.
            self.buffers.held_cells += 1;
            let copy = cells.alloc(cells[cell]);
            self.scratch.departures.push(Departure {
                output: output as u16,
                cell: copy,
                arrive_ps: arrive_ps + self.slot_ps,
            });
        }
    }

    /// True if the head cell `head` may leave by `output` under downstream flow control.
    fn may_leave(&self, output: usize, head: CellId, cells: &CellArena) -> bool {
        self.out_gates[output].may_send(cells[head].next_vc)
    }

    /// Decides this slot's (input, output) transfers; the input is unused when output-queued.
    /// An output whose link is still sending (a cable slower than the cell time) takes no cell.
    fn choose_transfers(&mut self, now_ps: TimePs, cells: &CellArena) {
        self.scratch.transfers.clear();
        let ports = self.ports;
        let out_links = &self.out_links;
        let link_free = |output: usize| out_links[output].is_idle(now_ps);
        match &self.queues {
            Queues::Output(queues) => {
                for (output, queue) in queues.iter().enumerate() {
                    // Most queues are empty: test the queue before the link's state.
                    let Some(head) = queue.front() else { continue };
                    if !link_free(output) {
                        continue;
                    }
                    if self.may_leave(output, head, cells) {
                        self.scratch.transfers.push((0, output));
                    } else {
                        self.stats.switch_counters.output_slots_held += 1;
                    }
                }
            }
            Queues::InputFifo(queues) => {
                let contenders = &mut self.scratch.requests;
                contenders.fill(PortSet::EMPTY);
                for (input, queue) in queues.iter().enumerate() {
                    if let Some(head) = queue.front() {
                        let output = cells[head].out_port as usize;
                        if !link_free(output) {
                            continue;
                        }
                        if self.out_gates[output].may_send(cells[head].next_vc) {
                            contenders[output].insert(input);
                        } else {
                            self.stats.switch_counters.output_slots_held += 1;
                        }
                    }
                }
                for (output, set) in contenders.iter().enumerate() {
                    if let Some(input) = set.random_member(&mut self.rng) {
                        self.scratch.transfers.push((input, output));
                    }
                }
            }
            Queues::Voq {
                queues,
                inputs_for_output,
            } => {
                for (output, &inputs) in inputs_for_output.iter().enumerate() {
                    self.scratch.requests[output] = match self.out_gates[output] {
                        _ if !link_free(output) => PortSet::EMPTY,
                        TxGate::Open => inputs,
                        _ => {
                            let eligible: PortSet = inputs
                                .iter()
                                .filter(|&input| {
                                    let head = queues[input * ports + output].front();
                                    self.may_leave(output, head.expect("non-empty VOQ"), cells)
                                })
                                .collect();
                            self.stats.switch_counters.output_slots_held +=
                                (eligible != inputs) as u64;
                            eligible
                        }
                    };
                }
                self.match_requests();
            }
        }
    }

    /// Matches this slot's VOQ requests: by the matcher, or SAFC's round robin per output.
    fn match_requests(&mut self) {
        let ports = self.ports;
        match &mut self.matcher {
            Some(matcher) => {
                matcher.schedule(
                    &self.scratch.requests,
                    &mut self.scratch.output_of_input,
                    &mut self.rng,
                );
                let matched = self
                    .scratch
                    .output_of_input
                    .iter()
                    .enumerate()
                    .filter(|(_, &o)| o != UNMATCHED);
                self.scratch
                    .transfers
                    .extend(matched.map(|(input, &output)| (input, output as usize)));
            }
            None => {
                // SAFC: every output serves its own queues round robin; inputs are
                // unconstrained.
                for (output, inputs) in self.scratch.requests.iter().enumerate() {
                    if let Some(input) = inputs.first_at_or_after(self.serve_ptr[output]) {
                        self.serve_ptr[output] = after(input, ports);
                        self.scratch.transfers.push((input, output));
                    }
                }
            }
        }
    }
}

impl LocalView for CellSwitch {
    fn backlog_cells(&self, output: usize) -> u32 {
        self.buffers.backlog_cells[output]
    }
}

impl CellSwitch {
    /// Queues `cell`, arriving on `input` at `at_ps` and routed to `output`, with the channel it
    /// takes on the next link; signals upstream if its flow control says so, or drops it.
    fn admit<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        input: usize,
        output: usize,
        cell: CellId,
        at_ps: TimePs,
    ) {
        let next_vc = ctx.next_channel(output, &ctx.cells[cell]);
        let c = &mut ctx.cells[cell];
        c.out_port = output as u16;
        c.next_vc = next_vc;
        match self.accept(at_ps, input as u16, cell, ctx.cells) {
            // The signal leaves as the cell arrives (or at this edge, for a wire shorter than the
            // rest of a cell time).
            Admission::Queued(Some(signal)) => ctx.send_signal(input, signal, at_ps),
            Admission::Queued(None) => {}
            Admission::Dropped => ctx.drop_cell(cell),
        }
    }

    /// A broadcast arriving on `input` (RIFL §IV-A, Eq. 1: Dst Port 255; a packet never leaves
    /// by the port it came in on): one copy joins the queue (the VOQ) of every other output,
    /// in port order, each carrying its route out of that output. The cell itself is the last
    /// copy; the others are new cells, counted in `cells_copied`.
    fn copy_to_every_output<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        switch: usize,
        input: usize,
        cell: CellId,
        at_ps: TimePs,
    ) {
        let last = if input + 1 == self.ports {
            input - 1
        } else {
            self.ports - 1
        };
        for output in (0..self.ports).filter(|&o| o != input) {
            let copy = if output == last {
                cell
            } else {
                let value = ctx.cells[cell];
                self.stats.switch_counters.cells_copied += 1;
                ctx.cells.alloc(value)
            };
            ctx.router
                .route_copy(switch, input, output, &mut ctx.cells[copy]);
            if self.buffers.per_voq {
                // The copy's channel into this switch is now its own VOQ.
                ctx.cells[copy].vc = output as u16;
            }
            self.admit(ctx, input, output, copy, at_ps);
        }
    }
}

/// A cell switch is a slotted node: at each clock edge it routes and admits the cells latched
/// at its inputs (signalling upstream as its flow control says), schedules, and sends.
impl<R: Router> Node<R> for CellSwitch {
    fn is_slotted(&self) -> bool {
        true
    }

    /// The lengths of the queues, not the counter: a cell lost from a queue shows in the
    /// account.
    fn cells_held(&self) -> u64 {
        self.queued_cells()
    }

    #[inline(never)]
    fn cell_arrives(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId, at_ps: TimePs) {
        let index = ctx.router_index().expect("a switch is routed");
        if ctx.router.is_broadcast(index, port, &ctx.cells[cell]) {
            self.copy_to_every_output(ctx, index, port, cell, at_ps);
            return;
        }
        let output = ctx.router.route(index, port, &mut ctx.cells[cell], &*self);
        self.admit(ctx, port, output, cell, at_ps);
    }

    fn signal_arrives(&mut self, _ctx: &mut Context<'_, R>, port: usize, signal: FlowSignal) {
        self.on_output_signal(port, signal);
    }

    fn tick(&mut self, ctx: &mut Context<'_, R>) -> Option<TimePs> {
        let now_ps = ctx.now_ps;
        if ctx.fabric_has_link_protocols() {
            for (port, link) in self.out_links.iter_mut().enumerate() {
                if !ctx.port_ready(port) {
                    link.hold_until(now_ps + self.slot_ps);
                }
            }
        }
        let (departures, signals) = self.run_slot(now_ps, ctx.cells);
        for &(port, signal) in signals {
            ctx.send_signal(port as usize, signal, now_ps);
        }
        for d in departures {
            ctx.send_cell(d.output as usize, d.cell, d.arrive_ps);
        }
        (self.buffers.held_cells > 0).then_some(now_ps + self.slot_ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::engine::rng::{stream, ComponentId};

    /// A 4-port SAFC switch of 64-byte cells on 100 Gbit/s outputs.
    fn safc() -> CellSwitch {
        let spec = SwitchSpec {
            ports: 4,
            cell_bytes: 64,
            scheduler: SchedulerKind::Safc,
            buffer_cells: None,
            per_voq_buffers: false,
            batcher_banyan: false,
            rx_flow_control: RxFlowControl::None,
            out_link: Link::new(100_000_000_000, 0),
            pipeline_ps: 0,
        };
        CellSwitch::new(spec, stream(1, ComponentId { kind: 0, index: 0 }))
    }

    /// SAFC (Shen and Chow 2023, §V), the statically allocated fully connected switch: each
    /// output serves its own N queues round robin, one cell per slot, and no input constraint
    /// applies, so one input may send to every output in the same slot. With two cells in
    /// every VOQ but input 2's for output 3, slot k serves input k mod 4 at every output, and
    /// output 3 skips input 2.
    #[test]
    fn safc_outputs_serve_their_queues_round_robin_without_an_input_constraint() {
        let mut switch = safc();
        let mut cells = CellArena::new();
        for _ in 0..2 {
            for input in 0..4u16 {
                for output in 0..4u16 {
                    if (input, output) == (2, 3) {
                        continue;
                    }
                    let mut cell = Cell::new(input, output, 64, true, 0, 0);
                    cell.out_port = output;
                    let id = cells.alloc(cell);
                    assert_eq!(
                        switch.accept(0, input, id, &mut cells),
                        Admission::Queued(None)
                    );
                }
            }
        }
        // Per slot, per output 0..4: the input served (None: nothing left).
        let expected: [[Option<u16>; 4]; 8] = [
            [Some(0), Some(0), Some(0), Some(0)],
            [Some(1), Some(1), Some(1), Some(1)],
            [Some(2), Some(2), Some(2), Some(3)],
            [Some(3), Some(3), Some(3), Some(0)],
            [Some(0), Some(0), Some(0), Some(1)],
            [Some(1), Some(1), Some(1), Some(3)],
            [Some(2), Some(2), Some(2), None],
            [Some(3), Some(3), Some(3), None],
        ];
        let slot_ps = switch.slot_ps();
        for (slot, served) in expected.iter().enumerate() {
            let (departures, _) = switch.run_slot(slot as TimePs * slot_ps, &mut cells);
            let mut got = [None; 4];
            for d in departures {
                assert!(got[d.output as usize].is_none(), "one cell per output");
                got[d.output as usize] = Some(cells[d.cell].in_port);
            }
            assert_eq!(&got, served, "inputs served by outputs 0-3 in slot {slot}");
        }
        assert_eq!(switch.held_cells(), 0);
    }
}
