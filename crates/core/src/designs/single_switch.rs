//! N terminals on one cell switch: the classic switch-theory setting (Karol et al. 1987 for FIFO
//! input queueing, McKeown 1999 for iSLIP, Anderson et al. 1993 for PIM, and the ideal
//! output-queued switch), and the single-switch experiments of the RIFL paper (§V).
//!
//! Terminal i is wired to switch port i in both directions. Terminals inject cells over their
//! links; the switch queues and schedules them once per cell time; sinks record latency from
//! generation to the arrival of the cell's last bit.

use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use serde::Serialize;

use super::{Report, RunError, Simulation};
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::flow_control::{FlowSignal, RxFlowControl, TxGate};
use crate::blocks::link::Link;
use crate::blocks::switch::{Admission, CellSwitch, SwitchSpec};
use crate::blocks::terminal::Terminal;
use crate::blocks::traffic::{Destinations, Generator, TrafficSpec, NEVER_PS};
use crate::engine::queue::{CalendarQueue, EventQueue, Phase};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::{next_boundary_ps, TimePs, PS_PER_NS};
use crate::scenario::{DestinationName, FlowControlName, Scenario};

const KIND_TERMINAL: u32 = 1;
const KIND_SWITCH: u32 = 2;
const KIND_PATTERN: u32 = 3;

/// The messages components exchange; small and `Copy`.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A terminal has a cell due or its link has become free.
    Wake(u16),
    /// A cell's last bit reaches a switch input.
    SwitchArrive { port: u16, cell: CellId },
    /// The switch's slot clock edge.
    SwitchTick,
    /// A cell's last bit reaches a terminal.
    Deliver { terminal: u16, cell: CellId },
    /// A flow-control signal reaches a terminal.
    Signal { terminal: u16, signal: FlowSignal },
}

/// Sends a flow-control signal from switch input `port` back to the terminal cabled to it.
fn signal_upstream(queue: &mut CalendarQueue<Event>, at_ps: TimePs, port: u16, signal: FlowSignal) {
    queue.push(
        at_ps,
        Phase::Message,
        Event::Signal {
            terminal: port,
            signal,
        },
    );
}

/// The headline numbers of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Design that ran.
    pub design: &'static str,
    /// Scheduler name as in the scenario.
    pub scheduler: String,
    /// Switch ports.
    pub ports: u32,
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
    /// Time-average number of cells held in the switch.
    pub queue_occupancy_mean_cells: f64,
    /// Mean time a cell spends in the switch, in cell times (from arrival to its slot).
    pub switch_delay_mean_cells: f64,
    /// Length of one cell time.
    pub cell_time_ps: u64,
    /// Simulated time.
    pub sim_time_ps: u64,
    /// Leading simulated time excluded from statistics.
    pub warmup_ps: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock time spent simulating.
    pub wall_s: f64,
    /// Events per wall-clock second.
    pub events_per_s: f64,
    /// Cells switched (one cell crossing one switch) per wall-clock second.
    pub cell_hops_per_s: f64,
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

/// Per-port counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PortTable {
    /// Port (and terminal) index.
    pub port: Vec<u32>,
    /// Cells the terminal generated (whole run).
    pub cells_injected: Vec<u64>,
    /// Cells the terminal received (whole run).
    pub cells_delivered: Vec<u64>,
    /// Cells dropped at this port's switch buffer (whole run).
    pub cells_dropped: Vec<u64>,
    /// Cells received per cell time during measurement.
    pub throughput: Vec<f64>,
}

/// Distribution of the switch occupancy sampled once per measured cell time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OccupancyTable {
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
    /// Per-port counters.
    pub ports: PortTable,
    /// Switch occupancy distribution.
    pub queue_occupancy: OccupancyTable,
}

/// A single-switch simulation, advanced in steps so front ends can report progress.
pub struct SingleSwitch {
    scenario: Scenario,
    queue: CalendarQueue<Event>,
    cells: CellArena,
    terminals: Vec<Terminal>,
    switch: CellSwitch,
    signal_delay_ps: TimePs,
    warmup_ps: TimePs,
    end_ps: TimePs,
    now_ps: TimePs,
    events: u64,
    cells_dropped: u64,
    latency: LatencyHistogram,
    deadlock: Option<String>,
    wall: Duration,
}

impl Simulation for SingleSwitch {
    fn advance(&mut self, until_ps: TimePs) -> bool {
        SingleSwitch::advance(self, until_ps)
    }

    fn now_ps(&self) -> TimePs {
        self.now_ps
    }

    fn end_ps(&self) -> TimePs {
        self.end_ps
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn finish(self: Box<Self>) -> Result<Report, RunError> {
        let (summary, tables) = SingleSwitch::finish(*self)?;
        Ok(Report::new(&summary, &tables))
    }
}

impl SingleSwitch {
    /// Builds the system a validated scenario describes.
    pub fn new(scenario: &Scenario) -> Self {
        let seed = scenario.run.seed;
        let ports = scenario.switch.ports as usize;
        let slot_ps = scenario.cell_time_ps();
        let cell_bytes = scenario.cell.size_bytes as u64;
        let (warmup_ps, end_ps) = (
            scenario.run.warmup_cells * slot_ps,
            scenario.run.duration_cells * slot_ps,
        );
        let link = Link::new(scenario.link.rate_bps(), scenario.link.propagation_delay_ps);
        let spec = TrafficSpec {
            load: scenario.traffic.load,
            arrival: scenario.arrival(),
            sizes: scenario.packet_sizes(),
            cell_payload_bytes: scenario.cell.payload_bytes(),
            slot_ps,
            stop_ps: end_ps,
        };
        let mut permutation: Vec<u16> = (0..ports as u16).collect();
        permutation.shuffle(&mut stream(
            seed,
            ComponentId {
                kind: KIND_PATTERN,
                index: 0,
            },
        ));
        let buffer = scenario.switch.buffer_cells;
        let (tx_gate, rx_flow_control) = match scenario.link.flow_control {
            FlowControlName::None => (TxGate::Open, RxFlowControl::None),
            FlowControlName::Credit => (
                TxGate::credit(1, buffer.unwrap_or(0)),
                RxFlowControl::Credit,
            ),
            FlowControlName::Onoff => (
                TxGate::on_off(1),
                RxFlowControl::on_off(
                    1,
                    scenario.link.off_threshold_cells.unwrap_or(0),
                    scenario.link.on_threshold_cells.unwrap_or(0),
                ),
            ),
        };
        let terminals = (0..ports)
            .map(|i| {
                let t = &scenario.traffic;
                let destinations = match t.destinations {
                    DestinationName::Uniform => Destinations::Uniform {
                        ports: ports as u16,
                        include_self: t.include_self,
                    },
                    DestinationName::Permutation => Destinations::Fixed(permutation[i]),
                    DestinationName::Hotspot => Destinations::Hotspot {
                        ports: ports as u16,
                        port: t.hotspot_port as u16,
                        fraction: t.hotspot_fraction,
                    },
                };
                let rng = stream(
                    seed,
                    ComponentId {
                        kind: KIND_TERMINAL,
                        index: i as u32,
                    },
                );
                let generator = Generator::new(i as u16, spec, destinations, rng);
                let mut terminal =
                    Terminal::new(generator, link.clone(), tx_gate.clone(), cell_bytes);
                terminal.measure_from_ps = warmup_ps;
                terminal
            })
            .collect();
        let spec = SwitchSpec {
            ports,
            cell_bytes,
            scheduler: scenario.scheduler(),
            buffer_cells: buffer,
            rx_flow_control,
            out_link: link,
            pipeline_ps: scenario.switch.pipeline_delay_ps,
        };
        let rng = stream(
            seed,
            ComponentId {
                kind: KIND_SWITCH,
                index: 0,
            },
        );
        let mut switch = CellSwitch::new(spec, rng);
        switch.measure_from_ps = warmup_ps;
        let mut sim = SingleSwitch {
            scenario: scenario.clone(),
            queue: CalendarQueue::for_gap(slot_ps),
            cells: CellArena::new(),
            terminals,
            switch,
            signal_delay_ps: scenario.link.propagation_delay_ps,
            warmup_ps,
            end_ps,
            now_ps: 0,
            events: 0,
            cells_dropped: 0,
            latency: LatencyHistogram::new(),
            deadlock: None,
            wall: Duration::ZERO,
        };
        for terminal in 0..ports as u16 {
            sim.schedule_wake(terminal);
        }
        sim
    }

    /// Runs every event due at or before `until_ps` (capped at the end of the run); returns true
    /// once the run is complete.
    pub fn advance(&mut self, until_ps: TimePs) -> bool {
        let limit_ps = until_ps.min(self.end_ps);
        let started = Instant::now();
        while let Some((time_ps, event)) = self.queue.pop_until(limit_ps) {
            self.now_ps = time_ps;
            self.events += 1;
            self.handle(time_ps, event);
        }
        if self.queue.is_empty() && self.cells.live() > 0 && self.deadlock.is_none() {
            self.deadlock = Some(self.deadlock_report());
        }
        self.now_ps = limit_ps;
        self.wall += started.elapsed();
        limit_ps == self.end_ps
    }

    /// Runs to the end and reports.
    pub fn run(mut self) -> Result<(Summary, Tables), RunError> {
        self.advance(TimePs::MAX);
        self.finish()
    }

    fn handle(&mut self, now_ps: TimePs, event: Event) {
        match event {
            Event::Wake(terminal) => {
                let t = &mut self.terminals[terminal as usize];
                if t.wake_at_ps == now_ps {
                    t.wake_at_ps = NEVER_PS;
                }
                self.step_terminal(terminal, now_ps);
            }
            Event::Signal { terminal, signal } => {
                self.terminals[terminal as usize].on_signal(signal);
                self.step_terminal(terminal, now_ps);
            }
            Event::SwitchArrive { port, cell } => {
                match self.switch.accept(now_ps, port, cell, &mut self.cells) {
                    Admission::Queued(signal) => {
                        if let Some(signal) = signal {
                            let at_ps = now_ps + self.signal_delay_ps;
                            signal_upstream(&mut self.queue, at_ps, port, signal);
                        }
                        if !self.switch.tick_pending {
                            self.switch.tick_pending = true;
                            let at_ps = next_boundary_ps(now_ps, self.switch.slot_ps());
                            self.queue.push(at_ps, Phase::Clock, Event::SwitchTick);
                        }
                    }
                    Admission::Dropped => {
                        self.cells.free(cell);
                        self.cells_dropped += 1;
                    }
                }
            }
            Event::SwitchTick => {
                let (departures, signals) = self.switch.tick(now_ps, &mut self.cells);
                for d in departures {
                    self.queue.push(
                        d.arrive_ps,
                        Phase::Message,
                        Event::Deliver {
                            terminal: d.output,
                            cell: d.cell,
                        },
                    );
                }
                for &(port, signal) in signals {
                    signal_upstream(&mut self.queue, now_ps + self.signal_delay_ps, port, signal);
                }
                if self.switch.held_cells() > 0 {
                    self.queue.push(
                        now_ps + self.switch.slot_ps(),
                        Phase::Clock,
                        Event::SwitchTick,
                    );
                } else {
                    self.switch.tick_pending = false;
                }
            }
            Event::Deliver { terminal, cell } => {
                let inject_ps = self.cells[cell].inject_ps;
                if inject_ps >= self.warmup_ps {
                    self.latency.record(now_ps - inject_ps);
                }
                self.terminals[terminal as usize].receive(now_ps, cell, &mut self.cells);
            }
        }
    }

    fn step_terminal(&mut self, terminal: u16, now_ps: TimePs) {
        let t = &mut self.terminals[terminal as usize];
        if let Some((cell, arrive_ps)) = t.step(now_ps, &mut self.cells) {
            self.queue.push(
                arrive_ps,
                Phase::Message,
                Event::SwitchArrive {
                    port: terminal,
                    cell,
                },
            );
        }
        self.schedule_wake(terminal);
    }

    fn schedule_wake(&mut self, terminal: u16) {
        let t = &mut self.terminals[terminal as usize];
        let next_ps = t.next_step_ps(&self.cells);
        if next_ps < t.wake_at_ps {
            t.wake_at_ps = next_ps;
            self.queue
                .push(next_ps, Phase::Message, Event::Wake(terminal));
        }
    }

    fn deadlock_report(&self) -> String {
        let waiting: Vec<String> = self
            .terminals
            .iter()
            .enumerate()
            .filter(|(_, t)| t.queued_cells() > 0)
            .map(|(i, t)| {
                format!(
                    "terminal {i} holds {} cells it may not send",
                    t.queued_cells()
                )
            })
            .collect();
        format!(
            "no event pending at {} ps with {} cells in flight ({} in the switch); {}",
            self.now_ps,
            self.cells.live(),
            self.switch.held_cells(),
            waiting.join("; ")
        )
    }

    /// Checks the run's invariants and reports its summary and tables.
    pub fn finish(mut self) -> Result<(Summary, Tables), RunError> {
        if let Some(report) = self.deadlock.take() {
            return Err(RunError::Deadlock(report));
        }
        let injected: u64 = self
            .terminals
            .iter()
            .map(|t| t.counters.cells_injected)
            .sum();
        let delivered: u64 = self
            .terminals
            .iter()
            .map(|t| t.counters.cells_delivered)
            .sum();
        let in_flight = self.cells.live() as u64;
        if injected != delivered + self.cells_dropped + in_flight {
            return Err(RunError::Conservation {
                injected,
                delivered,
                dropped: self.cells_dropped,
                in_flight,
            });
        }
        if self.scenario.is_lossless() && self.cells_dropped > 0 {
            return Err(RunError::LossInLosslessRun(self.cells_dropped));
        }
        let slot_ps = self.switch.slot_ps();
        let measured_slots = (self.end_ps - self.warmup_ps) / slot_ps;
        let ports = self.terminals.len() as u64;
        let capacity_cells = (ports * measured_slots) as f64;
        let sum = |f: fn(&Terminal) -> u64| self.terminals.iter().map(f).sum::<u64>() as f64;
        let payload_capacity = capacity_cells * self.scenario.cell.size_bytes as f64;
        let sampled_slots: u64 = self.switch.occupancy_samples.counts().iter().sum();
        let boundaries = self.end_ps / slot_ps - self.warmup_ps.div_ceil(slot_ps) + 1;
        self.switch
            .occupancy_samples
            .record_n(0, boundaries.saturating_sub(sampled_slots));
        let latency = self.latency.percentiles();
        let wall_s = self.wall.as_secs_f64().max(1e-9);
        let switched: u64 = self.switch.counters.iter().map(|c| c.cells_out).sum();
        let summary = Summary {
            design: "single_switch",
            scheduler: self.scenario.switch.scheduler.as_str().to_string(),
            ports: ports as u32,
            seed: self.scenario.run.seed,
            offered_load: sum(|t| t.counters.cells_injected_measured) / capacity_cells,
            throughput: sum(|t| t.counters.cells_delivered_measured) / capacity_cells,
            goodput: sum(|t| t.counters.payload_bytes_delivered_measured) / payload_capacity,
            latency_ns: latency.scaled(PS_PER_NS as f64),
            latency_cells: latency.scaled(slot_ps as f64),
            cells_injected: injected,
            cells_delivered: delivered,
            cells_dropped: self.cells_dropped,
            cells_in_flight: in_flight,
            cells_measured: self.latency.count(),
            queue_occupancy_mean_cells: self.switch.occupancy_samples.mean(),
            switch_delay_mean_cells: self.switch.delay_slots_sum as f64
                / self.switch.delay_samples.max(1) as f64,
            cell_time_ps: slot_ps,
            sim_time_ps: self.now_ps,
            warmup_ps: self.warmup_ps,
            events: self.events,
            wall_s,
            events_per_s: self.events as f64 / wall_s,
            cell_hops_per_s: switched as f64 / wall_s,
        };
        let tables = self.tables(measured_slots);
        Ok((summary, tables))
    }

    fn tables(&self, measured_slots: u64) -> Tables {
        let slot_ps = self.switch.slot_ps() as f64;
        let mut latency = LatencyTable::default();
        for (value_ps, count) in self.latency.buckets() {
            latency.latency_ps.push(value_ps);
            latency.latency_cells.push(value_ps as f64 / slot_ps);
            latency.count.push(count);
        }
        let mut ports = PortTable::default();
        for (i, (t, c)) in self.terminals.iter().zip(&self.switch.counters).enumerate() {
            ports.port.push(i as u32);
            ports.cells_injected.push(t.counters.cells_injected);
            ports.cells_delivered.push(t.counters.cells_delivered);
            ports.cells_dropped.push(c.cells_dropped);
            ports
                .throughput
                .push(t.counters.cells_delivered_measured as f64 / measured_slots as f64);
        }
        let mut occupancy = OccupancyTable::default();
        for (cells, &slots) in self.switch.occupancy_samples.counts().iter().enumerate() {
            if slots > 0 {
                occupancy.occupancy_cells.push(cells as u64);
                occupancy.slots.push(slots);
            }
        }
        Tables {
            latency_histogram: latency,
            ports,
            queue_occupancy: occupancy,
        }
    }
}
