//! A whole cell network: terminals and slotted cell switches wired by a [`Topology`], moving
//! cells by timestamped events. Designs configure it (switch organization, flow control,
//! routing); the single switch of switch theory is the one-switch case.
//!
//! Events: a terminal wakes to generate and send; a switch's slot clock edge latches the cells
//! that have reached its inputs (the [`Router`] picks each one's output, and the flow-control
//! channel it will need on the next link), schedules and sends; a cell reaches a terminal; a
//! flow-control signal reaches a terminal or a switch output. Flow-control signals travel back
//! over the link they control with its propagation delay.
//!
//! A cell on its way to a switch costs no event: it waits on the input's wire, a FIFO in arrival
//! order, until the switch's first clock edge at or after its arrival latches it, inputs in port
//! order (as a register latches its inputs). So what a switch does never depends on the order in
//! which its neighbours' events ran, and a slotted switch costs one event per cell time however
//! many cells it moves.

use serde::Serialize;

use super::cell::{Cell, CellArena, CellId, CellQueue};
use super::flow_control::{FlowSignal, LinkFlowControl};
use super::link::Link;
use super::routing::Router;
use super::switch::{Admission, CellSwitch, Departure, SwitchSpec};
use super::terminal::Terminal;
use super::topology::{Attachment, Topology};
use super::traffic::{Destinations, Generator, TrafficSpec, NEVER_PS};
use crate::engine::kernel::{Clock, Kernel, Model};
use crate::engine::queue::{CalendarQueue, EventQueue, Origin, Phase};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::{next_boundary_ps, TimePs, PS_PER_NS};
use crate::run::{Design, Ledger, Perf, Report, RunError};

const KIND_TERMINAL: u32 = 1;
const KIND_SWITCH: u32 = 2;

/// Everything a [`Network`] is built from.
pub struct NetworkSpec {
    /// Design name reported in the summary.
    pub design: &'static str,
    /// Scheduler name reported in the summary.
    pub scheduler: String,
    /// Routing mode reported in the summary, where the design routes by mode.
    pub routing: Option<String>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Switches, terminals (the topology's endpoints, in order) and cables.
    pub topology: Topology,
    /// Every switch alike but for its port count, which the topology gives.
    pub switch: SwitchSpec,
    /// Every link, both directions.
    pub link: Link,
    /// Link-level flow control into every switch input.
    pub flow_control: LinkFlowControl,
    /// What every terminal offers.
    pub traffic: TrafficSpec,
    /// Where each terminal's packets go.
    pub destinations: Vec<Destinations>,
    /// Cells a terminal may hold waiting to send; a full terminal holds its source back.
    /// `None`: unbounded (an open-loop source).
    pub nic_queue_cells: Option<u32>,
    /// Statistics start here.
    pub warmup_ps: TimePs,
    /// The run ends here.
    pub end_ps: TimePs,
    /// The configuration promises to drop nothing; a drop fails the run.
    pub lossless: bool,
}

/// The messages components exchange; small and `Copy`.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A terminal has a cell due or its link has become free.
    Wake(u16),
    /// A switch's slot clock edge.
    SwitchTick(u16),
    /// A cell's last bit reaches a terminal.
    Deliver { terminal: u16, cell: CellId },
    /// A flow-control signal reaches a terminal.
    TerminalSignal { terminal: u16, signal: FlowSignal },
    /// A flow-control signal reaches a switch output from downstream.
    SwitchSignal {
        switch: u16,
        port: u16,
        signal: FlowSignal,
    },
}

/// The headline numbers of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Design that ran.
    pub design: &'static str,
    /// Scheduler name as in the scenario.
    pub scheduler: String,
    /// Routing mode as in the scenario, where the design routes by mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<String>,
    /// Ports of the largest switch.
    pub ports: u32,
    /// Switches in the network.
    pub switches: u32,
    /// Terminals (hosts) in the network.
    pub terminals: u32,
    /// Seed of the run.
    pub seed: u64,
    /// Cells generated during measurement per terminal per cell time.
    pub offered_load: f64,
    /// Cells delivered during measurement per terminal per cell time.
    pub throughput: f64,
    /// Payload bytes delivered during measurement per byte of line capacity.
    pub goodput: f64,
    /// Cell latency from generation to delivery, in nanoseconds.
    pub latency_ns: Percentiles,
    /// Cell latency from generation to delivery, in cell times.
    pub latency_cells: Percentiles,
    /// Packet latency from the generation of its first cell to the delivery of its last, in
    /// cell times (packets reassembled at the destination terminal).
    pub packet_latency_cells: Percentiles,
    /// Cells generated over the whole run.
    pub cells_injected: u64,
    /// Cells delivered over the whole run.
    pub cells_delivered: u64,
    /// Cells dropped over the whole run.
    pub cells_dropped: u64,
    /// Cells still in the system at the end.
    pub cells_in_flight: u64,
    /// Cells whose latency was measured.
    pub cells_measured: u64,
    /// Packets whose last cell was delivered over the whole run.
    pub packets_delivered: u64,
    /// Cells that reached their terminal ahead of an earlier cell of the same source.
    pub cells_out_of_order: u64,
    /// Time-average number of cells held in the switches.
    pub queue_occupancy_mean_cells: f64,
    /// Mean time a cell spends in a switch, in cell times (from arrival to its slot).
    pub switch_delay_mean_cells: f64,
    /// Flow-control signals sent upstream by the switches.
    pub flow_control_signals: u64,
    /// Cells blocked inside Batcher-Banyan networks.
    pub internal_blocking: u64,
    /// Length of one cell time.
    pub cell_time_ps: u64,
    /// Simulated time.
    pub sim_time_ps: u64,
    /// Leading simulated time excluded from statistics.
    pub warmup_ps: u64,
    /// Events processed.
    pub events: u64,
    /// Cells switched (one cell crossing one switch) over the whole run.
    pub cell_hops: u64,
}

/// Latency histogram rows: bucket upper bound and count.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyTable {
    /// Upper bound of the bucket, picoseconds.
    pub latency_ps: Vec<u64>,
    /// Upper bound of the bucket, cell times.
    pub latency_cells: Vec<f64>,
    /// Cells in the bucket.
    pub count: Vec<u64>,
}

/// Per-terminal counters, with the switch port the terminal is cabled to.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PortTable {
    /// Terminal index.
    pub port: Vec<u32>,
    /// Cells the terminal generated (whole run).
    pub cells_injected: Vec<u64>,
    /// Cells the terminal received (whole run).
    pub cells_delivered: Vec<u64>,
    /// Cells dropped at the switch input the terminal feeds (whole run).
    pub cells_dropped: Vec<u64>,
    /// Cells received per cell time during measurement.
    pub throughput: Vec<f64>,
}

/// Distribution of each switch's occupancy, sampled once per measured cell time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OccupancyTable {
    /// Switch index.
    pub switch: Vec<u32>,
    /// Cells held in the switch.
    pub occupancy_cells: Vec<u64>,
    /// Cell times with that occupancy.
    pub slots: Vec<u64>,
}

/// The tables a run produces beside its summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tables {
    /// Latency histogram.
    pub latency_histogram: LatencyTable,
    /// Per-terminal counters.
    pub ports: PortTable,
    /// Switch occupancy distributions.
    pub queue_occupancy: OccupancyTable,
}

/// A network simulation, advanced in steps so front ends can report progress.
pub struct Network<R: Router> {
    design: &'static str,
    scheduler: String,
    routing: Option<String>,
    seed: u64,
    router: R,
    topology: Topology,
    queue: CalendarQueue<Event>,
    cells: CellArena,
    terminals: Vec<Terminal>,
    /// Switch and port each terminal is cabled to.
    terminal_port: Vec<(u16, u16)>,
    switches: Vec<CellSwitch>,
    /// Cells on their way to each switch input, in arrival order: `wires[wire_base[s] + port]`.
    wires: Vec<CellQueue>,
    wire_base: Vec<u32>,
    /// Cells on the wires into each switch.
    wire_cells: Vec<u32>,
    /// Each switch's next clock edge, or `NEVER_PS` while it has nothing to do.
    tick_at_ps: Vec<TimePs>,
    /// Scratch for a tick's departures.
    departures: Vec<Departure>,
    /// Whether flow control is per VOQ (the channel is the VOQ's output).
    per_voq: bool,
    signal_delay_ps: TimePs,
    slot_ps: TimePs,
    warmup_ps: TimePs,
    end_ps: TimePs,
    cells_dropped: u64,
    /// Cells moved (sent on by a switch, delivered or dropped): the kernel's progress count.
    moves: u64,
    flow_control_signals: u64,
    lossless: bool,
    cell_payload_bytes: u32,
    latency: LatencyHistogram,
    packet_latency: LatencyHistogram,
}

impl<R: Router> Network<R> {
    /// Builds the network `spec` describes, routed by `router`.
    pub fn new(spec: NetworkSpec, router: R) -> Self {
        let NetworkSpec {
            design,
            scheduler,
            routing,
            seed,
            topology,
            switch,
            link,
            flow_control,
            traffic,
            destinations,
            nic_queue_cells,
            warmup_ps,
            end_ps,
            lossless,
        } = spec;
        let per_voq = switch.per_voq_buffers;
        let channels = |ports: usize| if per_voq { ports } else { 1 };
        let terminal_port: Vec<(u16, u16)> = (0..topology.endpoints())
            .map(|t| {
                let (s, p) = topology
                    .endpoint_port(t)
                    .expect("every terminal is cabled to a switch");
                (s as u16, p as u16)
            })
            .collect();
        let terminals = destinations
            .iter()
            .enumerate()
            .map(|(i, &dst)| {
                let id = ComponentId {
                    kind: KIND_TERMINAL,
                    index: i as u32,
                };
                let generator = Generator::new(i as u16, traffic, dst, stream(seed, id));
                let ports = topology.switch_ports(terminal_port[i].0 as usize);
                let gate = flow_control.transmitter(channels(ports), switch.buffer_cells);
                let mut terminal = Terminal::new(
                    generator,
                    link.clone(),
                    gate,
                    channels(ports),
                    switch.cell_bytes,
                );
                terminal.measure_from_ps = warmup_ps;
                terminal.queue_limit_cells = nic_queue_cells;
                terminal.set_peers(destinations.len());
                terminal
            })
            .collect();
        let switches: Vec<CellSwitch> = (0..topology.switches())
            .map(|s| {
                let ports = topology.switch_ports(s);
                let spec = SwitchSpec {
                    ports,
                    rx_flow_control: flow_control.receiver(channels(ports)),
                    ..switch.clone()
                };
                let id = ComponentId {
                    kind: KIND_SWITCH,
                    index: s as u32,
                };
                let mut cell_switch = CellSwitch::new(spec, stream(seed, id));
                cell_switch.measure_from_ps = warmup_ps;
                for port in 0..ports {
                    if let Some(Attachment::SwitchPort { switch: next, .. }) =
                        topology.peer(s, port)
                    {
                        let gate = flow_control.transmitter(
                            channels(topology.switch_ports(next)),
                            switch.buffer_cells,
                        );
                        cell_switch.set_output_gate(port, gate);
                    }
                }
                cell_switch
            })
            .collect();
        let slot_ps = crate::engine::time::serialization_ps(switch.cell_bytes, link.rate_bps);
        let wire_base: Vec<u32> = (0..topology.switches())
            .scan(0u32, |base, s| {
                let at = *base;
                *base += topology.switch_ports(s) as u32;
                Some(at)
            })
            .collect();
        let inputs: usize = (0..topology.switches())
            .map(|s| topology.switch_ports(s))
            .sum();
        let mut network = Network {
            design,
            scheduler,
            routing,
            seed,
            router,
            topology,
            queue: CalendarQueue::for_gap(slot_ps),
            cells: CellArena::new(),
            terminals,
            terminal_port,
            wires: (0..inputs).map(|_| CellQueue::default()).collect(),
            wire_base,
            wire_cells: vec![0; switches.len()],
            tick_at_ps: vec![NEVER_PS; switches.len()],
            departures: Vec::new(),
            switches,
            per_voq,
            signal_delay_ps: link.propagation_ps,
            slot_ps,
            warmup_ps,
            end_ps,
            cells_dropped: 0,
            moves: 0,
            flow_control_signals: 0,
            lossless,
            cell_payload_bytes: traffic.cell_payload_bytes,
            latency: LatencyHistogram::new(),
            packet_latency: LatencyHistogram::new(),
        };
        for terminal in 0..network.terminals.len() as u16 {
            network.schedule_wake(terminal);
        }
        network
    }

    /// Runs to the end on the kernel and reports.
    pub fn run(self) -> Result<(Summary, Tables), RunError> {
        let end_ps = self.end_ps;
        let mut kernel = Kernel::new(self, end_ps);
        kernel.advance(TimePs::MAX);
        let (network, clock, deadlock) = kernel.into_parts();
        if let Some(report) = deadlock {
            return Err(RunError::Deadlock(report));
        }
        network
            .finish(clock)
            .map(|(summary, tables, _)| (summary, tables))
    }

    /// The event origin of terminal `terminal`.
    fn terminal_origin(terminal: u16) -> Origin {
        terminal as Origin
    }

    /// The event origin of switch `switch` (switches are numbered after the terminals).
    fn switch_origin(&self, switch: usize) -> Origin {
        (self.terminals.len() + switch) as Origin
    }

    fn dispatch(&mut self, now_ps: TimePs, event: Event) {
        match event {
            Event::Wake(terminal) => {
                let t = &mut self.terminals[terminal as usize];
                if t.wake_at_ps == now_ps {
                    t.wake_at_ps = NEVER_PS;
                }
                self.step_terminal(terminal, now_ps);
            }
            Event::TerminalSignal { terminal, signal } => {
                self.terminals[terminal as usize].on_signal(signal);
                self.step_terminal(terminal, now_ps);
            }
            Event::SwitchSignal {
                switch,
                port,
                signal,
            } => {
                self.switches[switch as usize].on_output_signal(port as usize, signal);
            }
            Event::SwitchTick(switch) if self.tick_at_ps[switch as usize] == now_ps => {
                self.tick(now_ps, switch as usize)
            }
            Event::SwitchTick(_) => {} // superseded by an earlier clock edge
            Event::Deliver { terminal, cell } => {
                self.moves += 1;
                let c = &self.cells[cell];
                if c.inject_ps >= self.warmup_ps {
                    self.latency.record(now_ps - c.inject_ps);
                }
                if c.last_of_packet && c.packet_inject_ps >= self.warmup_ps {
                    self.packet_latency.record(now_ps - c.packet_inject_ps);
                }
                self.terminals[terminal as usize].receive(now_ps, cell, &mut self.cells);
            }
        }
    }

    /// Puts `cell`, whose last bit reaches input `port` of `switch` at `arrive_ps`, on that
    /// input's wire, and makes sure the switch has a clock edge at or after then.
    fn send_to_switch(&mut self, switch: usize, port: usize, cell: CellId, arrive_ps: TimePs) {
        self.cells[cell].switch_arrive_ps = arrive_ps;
        let wire = self.wire_base[switch] as usize + port;
        self.cells.push_back(&mut self.wires[wire], cell);
        self.wire_cells[switch] += 1;
        let edge_ps = next_boundary_ps(arrive_ps, self.slot_ps);
        if edge_ps < self.tick_at_ps[switch] {
            self.tick_at_ps[switch] = edge_ps;
            let origin = self.switch_origin(switch);
            self.queue.push(
                edge_ps,
                Phase::Clock,
                origin,
                Event::SwitchTick(switch as u16),
            );
        }
    }

    /// Latches every cell that has reached an input of `switch` by `now_ps`, inputs in port
    /// order.
    fn latch(&mut self, now_ps: TimePs, switch: usize) {
        if self.wire_cells[switch] == 0 {
            return;
        }
        let base = self.wire_base[switch] as usize;
        for port in 0..self.switches[switch].ports() {
            while let Some(cell) = self.wires[base + port].front() {
                let arrive_ps = self.cells[cell].switch_arrive_ps;
                if arrive_ps > now_ps {
                    break;
                }
                self.cells.pop_front(&mut self.wires[base + port]);
                self.wire_cells[switch] -= 1;
                self.arrive(now_ps, arrive_ps, switch, port, cell);
            }
        }
    }

    /// Routes and admits `cell`, which reached input `port` of `switch` at `arrive_ps`, at the
    /// clock edge `now_ps`.
    fn arrive(&mut self, now_ps: TimePs, arrive_ps: TimePs, s: usize, p: usize, cell: CellId) {
        let output = self
            .router
            .route(s, p, &mut self.cells[cell], &self.switches[s]);
        let next_vc = match self.topology.peer(s, output) {
            Some(Attachment::SwitchPort {
                switch: next,
                port: next_port,
            }) => channel_at(
                &self.router,
                self.per_voq,
                next,
                next_port,
                &self.cells[cell],
            ),
            _ => 0,
        };
        let c = &mut self.cells[cell];
        c.out_port = output as u16;
        c.next_vc = next_vc;
        match self.switches[s].accept(arrive_ps, p as u16, cell, &mut self.cells) {
            Admission::Queued(Some(signal)) => {
                // The signal leaves as the cell arrives (or at this edge, for a wire shorter
                // than the rest of a cell time).
                let at_ps = (arrive_ps + self.signal_delay_ps).max(now_ps);
                self.signal_upstream(at_ps, s, p as u16, signal);
            }
            Admission::Queued(None) => {}
            Admission::Dropped => {
                self.cells.free(cell);
                self.cells_dropped += 1;
                self.moves += 1;
            }
        }
    }

    fn tick(&mut self, now_ps: TimePs, s: usize) {
        self.latch(now_ps, s);
        let mut departures = std::mem::take(&mut self.departures);
        let origin = self.switch_origin(s);
        let (sent, signals) = self.switches[s].tick(now_ps, &mut self.cells);
        departures.clear();
        departures.extend_from_slice(sent);
        for &(port, signal) in signals {
            let at_ps = now_ps + self.signal_delay_ps;
            self.flow_control_signals += 1;
            let event = upstream_signal(&self.topology, s, port, signal);
            self.queue.push(at_ps, Phase::Message, origin, event);
        }
        self.moves += departures.len() as u64;
        for d in &departures {
            match self.topology.peer(s, d.output as usize) {
                Some(Attachment::Endpoint(terminal)) => {
                    let event = Event::Deliver {
                        terminal: terminal as u16,
                        cell: d.cell,
                    };
                    self.queue.push(d.arrive_ps, Phase::Message, origin, event);
                }
                Some(Attachment::SwitchPort { switch, port }) => {
                    self.send_to_switch(switch, port, d.cell, d.arrive_ps)
                }
                None => unreachable!("routing sent a cell out of an uncabled port"),
            }
        }
        self.departures = departures;
        self.tick_at_ps[s] = if self.switches[s].held_cells() > 0 {
            now_ps + self.slot_ps
        } else if self.wire_cells[s] > 0 {
            let base = self.wire_base[s] as usize;
            let first_ps = (0..self.switches[s].ports())
                .filter_map(|port| self.wires[base + port].front())
                .map(|cell| self.cells[cell].switch_arrive_ps)
                .min()
                .expect("a wire holds a cell");
            next_boundary_ps(first_ps, self.slot_ps)
        } else {
            NEVER_PS
        };
        if self.tick_at_ps[s] != NEVER_PS {
            let event = Event::SwitchTick(s as u16);
            self.queue
                .push(self.tick_at_ps[s], Phase::Clock, origin, event);
        }
    }

    fn signal_upstream(&mut self, at_ps: TimePs, switch: usize, port: u16, signal: FlowSignal) {
        self.flow_control_signals += 1;
        let event = upstream_signal(&self.topology, switch, port, signal);
        let origin = self.switch_origin(switch);
        self.queue.push(at_ps, Phase::Message, origin, event);
    }

    fn step_terminal(&mut self, terminal: u16, now_ps: TimePs) {
        let (s, p) = self.terminal_port[terminal as usize];
        let (router, per_voq) = (&mut self.router, self.per_voq);
        let prepare = |cell: &mut Cell| {
            router.inject(terminal as usize, cell);
            cell.vc = channel_at(&*router, per_voq, s as usize, p as usize, cell);
        };
        let t = &mut self.terminals[terminal as usize];
        if let Some((cell, arrive_ps)) = t.step(now_ps, &mut self.cells, prepare) {
            self.send_to_switch(s as usize, p as usize, cell, arrive_ps);
        }
        self.schedule_wake(terminal);
    }

    fn schedule_wake(&mut self, terminal: u16) {
        let t = &mut self.terminals[terminal as usize];
        let next_ps = t.next_step_ps();
        if next_ps < t.wake_at_ps {
            t.wake_at_ps = next_ps;
            let origin = Self::terminal_origin(terminal);
            self.queue
                .push(next_ps, Phase::Message, origin, Event::Wake(terminal));
        }
    }

    /// What is stuck: the cells held back, and a cycle of switches each waiting for the next
    /// one's buffer (an output with cells for it that flow control keeps shut), if there is one.
    fn deadlock_report(&self) -> String {
        let waiting = self
            .terminals
            .iter()
            .filter(|t| t.queued_cells() > 0)
            .count();
        let held: u64 = self.switches.iter().map(|s| s.held_cells()).sum();
        let mut report = format!(
            "{} cells in flight, {held} of them in switches; {waiting} hosts hold cells they may not send",
            self.cells.live()
        );
        if let Some(cycle) = self.wait_cycle() {
            let names: Vec<String> = cycle.iter().map(|s| format!("switch {s}")).collect();
            report += &format!(
                "; cycle of full buffers: {} -> {}",
                names.join(" -> "),
                names[0]
            );
        }
        report
    }

    /// A cycle in the graph where switch `a` waits for switch `b` when `a` holds cells for an
    /// output cabled to `b` that flow control keeps shut.
    fn wait_cycle(&self) -> Option<Vec<usize>> {
        let waits_for = |s: usize| -> Vec<usize> {
            self.switches[s]
                .shut_outputs()
                .filter_map(|port| match self.topology.peer(s, port) {
                    Some(Attachment::SwitchPort { switch, .. }) => Some(switch),
                    _ => None,
                })
                .collect()
        };
        // Iterative depth-first search with colours: 0 unseen, 1 on the path, 2 done.
        let mut colour = vec![0u8; self.switches.len()];
        for start in 0..self.switches.len() {
            if colour[start] != 0 {
                continue;
            }
            let mut path: Vec<(usize, Vec<usize>)> = vec![(start, waits_for(start))];
            colour[start] = 1;
            while let Some((node, next)) = path.last_mut() {
                match next.pop() {
                    Some(n) if colour[n] == 1 => {
                        let at = path.iter().position(|(s, _)| *s == n).expect("on the path");
                        return Some(path[at..].iter().map(|(s, _)| *s).collect());
                    }
                    Some(n) if colour[n] == 0 => {
                        colour[n] = 1;
                        path.push((n, waits_for(n)));
                    }
                    Some(_) => {}
                    None => {
                        colour[*node] = 2;
                        path.pop();
                    }
                }
            }
        }
        None
    }

    /// Checks the run's invariants and reports its summary, tables and perf section.
    pub fn finish(mut self, clock: Clock) -> Result<(Summary, Tables, Perf), RunError> {
        let sum = |f: fn(&Terminal) -> u64| self.terminals.iter().map(f).sum::<u64>();
        let injected = sum(|t| t.counters.cells_injected);
        let delivered = sum(|t| t.counters.cells_delivered);
        let in_flight = self.cells.live() as u64;
        let ledger = Ledger {
            injected,
            delivered,
            dropped: self.cells_dropped,
            in_flight,
        };
        ledger.check(self.lossless)?;
        let slot_ps = self.slot_ps;
        let measured_slots = (self.end_ps - self.warmup_ps) / slot_ps;
        let capacity_cells = (self.terminals.len() as u64 * measured_slots) as f64;
        let payload_capacity = capacity_cells * self.cell_payload_bytes as f64;
        let boundaries = self.end_ps / slot_ps - self.warmup_ps.div_ceil(slot_ps) + 1;
        for sw in &mut self.switches {
            let sampled_slots: u64 = sw.occupancy_samples.counts().iter().sum();
            sw.occupancy_samples
                .record_n(0, boundaries.saturating_sub(sampled_slots));
        }
        let latency = self.latency.percentiles();
        let switched: u64 = self
            .switches
            .iter()
            .flat_map(|s| s.counters.iter())
            .map(|c| c.cells_out)
            .sum();
        let (delay_sum, delay_samples) = self.switches.iter().fold((0, 0), |(a, b), s| {
            (a + s.delay_slots_sum, b + s.delay_samples)
        });
        let summary = Summary {
            design: self.design,
            scheduler: self.scheduler.clone(),
            routing: self.routing.clone(),
            ports: (0..self.topology.switches())
                .map(|s| self.topology.switch_ports(s) as u32)
                .max()
                .unwrap_or(0),
            switches: self.switches.len() as u32,
            terminals: self.terminals.len() as u32,
            seed: self.seed,
            offered_load: sum(|t| t.counters.cells_injected_measured) as f64 / capacity_cells,
            throughput: sum(|t| t.counters.cells_delivered_measured) as f64 / capacity_cells,
            goodput: sum(|t| t.counters.payload_bytes_delivered_measured) as f64 / payload_capacity,
            latency_ns: latency.scaled(PS_PER_NS as f64),
            latency_cells: latency.scaled(slot_ps as f64),
            packet_latency_cells: self.packet_latency.percentiles().scaled(slot_ps as f64),
            cells_injected: injected,
            cells_delivered: delivered,
            cells_dropped: self.cells_dropped,
            cells_in_flight: in_flight,
            cells_measured: self.latency.count(),
            packets_delivered: sum(|t| t.counters.packets_delivered),
            cells_out_of_order: sum(|t| t.counters.cells_out_of_order),
            queue_occupancy_mean_cells: self
                .switches
                .iter()
                .map(|s| s.occupancy_samples.mean())
                .sum(),
            switch_delay_mean_cells: delay_sum as f64 / (delay_samples as f64).max(1.0),
            flow_control_signals: self.flow_control_signals,
            internal_blocking: self
                .switches
                .iter()
                .map(|s| s.switch_counters.internal_blocking)
                .sum(),
            cell_time_ps: slot_ps,
            sim_time_ps: clock.now_ps,
            warmup_ps: self.warmup_ps,
            events: clock.events,
            cell_hops: switched,
        };
        let tables = self.tables(measured_slots);
        Ok((summary, tables, clock.perf(Some(("cell-hops", switched)))))
    }

    fn tables(&self, measured_slots: u64) -> Tables {
        let slot_ps = self.slot_ps as f64;
        let mut latency = LatencyTable::default();
        for (value_ps, count) in self.latency.buckets() {
            latency.latency_ps.push(value_ps);
            latency.latency_cells.push(value_ps as f64 / slot_ps);
            latency.count.push(count);
        }
        let mut ports = PortTable::default();
        for (i, t) in self.terminals.iter().enumerate() {
            let (s, p) = self.terminal_port[i];
            ports.port.push(i as u32);
            ports.cells_injected.push(t.counters.cells_injected);
            ports.cells_delivered.push(t.counters.cells_delivered);
            ports
                .cells_dropped
                .push(self.switches[s as usize].counters[p as usize].cells_dropped);
            ports
                .throughput
                .push(t.counters.cells_delivered_measured as f64 / measured_slots as f64);
        }
        let mut occupancy = OccupancyTable::default();
        for (s, sw) in self.switches.iter().enumerate() {
            for (cells, &slots) in sw.occupancy_samples.counts().iter().enumerate() {
                if slots > 0 {
                    occupancy.switch.push(s as u32);
                    occupancy.occupancy_cells.push(cells as u64);
                    occupancy.slots.push(slots);
                }
            }
        }
        Tables {
            latency_histogram: latency,
            ports,
            queue_occupancy: occupancy,
        }
    }
}

impl<R: Router> Model for Network<R> {
    type Event = Event;

    fn queue(&mut self) -> &mut CalendarQueue<Event> {
        &mut self.queue
    }

    fn handle(&mut self, now_ps: TimePs, event: Event) {
        self.dispatch(now_ps, event);
    }

    fn progress(&self) -> u64 {
        self.moves
    }

    fn in_flight(&self) -> u64 {
        self.cells.live() as u64
    }

    /// A thousand cell times, plus ten flow-control round trips.
    fn stall_ps(&self) -> TimePs {
        1_000 * self.slot_ps + 20 * self.signal_delay_ps
    }

    fn stall_report(&self) -> String {
        self.deadlock_report()
    }
}

impl<R: Router> Design for Network<R> {
    fn end_ps(&self) -> TimePs {
        self.end_ps
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        let (summary, tables, perf) = self.finish(clock)?;
        Ok(Report::new(&summary, &tables, perf))
    }
}

/// The flow-control channel `cell` will occupy at input `port` of `switch`: its VOQ there when
/// flow control is per VOQ, else the one channel of the link.
fn channel_at(router: &impl Router, per_voq: bool, switch: usize, port: usize, cell: &Cell) -> u16 {
    if per_voq {
        let output = router.planned_output(switch, port, cell);
        output.expect("per-VOQ flow control needs a router that plans its outputs") as u16
    } else {
        0
    }
}

/// The event that carries a flow-control signal from input `port` of `switch` to whatever feeds
/// that port.
fn upstream_signal(topology: &Topology, switch: usize, port: u16, signal: FlowSignal) -> Event {
    match topology.peer(switch, port as usize) {
        Some(Attachment::Endpoint(terminal)) => Event::TerminalSignal {
            terminal: terminal as u16,
            signal,
        },
        Some(Attachment::SwitchPort { switch, port }) => Event::SwitchSignal {
            switch: switch as u16,
            port: port as u16,
            signal,
        },
        None => unreachable!("a cell arrived on an uncabled port"),
    }
}
