//! One run on several threads, with the results of one: the fabric split by node into
//! partitions ([`Partition`]), each a copy of the model that runs only its own nodes
//! ([`Fabric::split`]), all run side by side in windows of simulated time
//! ([`Sharded`]).
//!
//! The window is the lookahead: the shortest cable between two partitions. A cell or signal a
//! node sends at `t` to another partition arrives no earlier than `t` plus its cable's delay,
//! so within a window no partition can receive anything from another that it would have to run
//! in that window. At each window's end the partitions exchange what crossed (cells by value,
//! with the place in the event order their senders gave them: [`EventKey`]), meet at a
//! barrier, and go on. The order events run in at each node is the order one queue would have
//! run them in (time, phase, sender, the sender's own count), so results are bit-identical
//! for any number of threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::partition::Partition;
use super::{origin, Event, Fabric, FabricModel, Node, Plumbing};
use crate::blocks::cell::{Cell, CellArena, CellId, NO_PACKET};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::packet::{Packet, PacketId, NO_FRAME};
use crate::blocks::routing::Router;
use crate::engine::kernel::{Clock, Model, Steps};
use crate::engine::queue::{EventKey, EventQueue, Origin, Phase};
use crate::engine::time::TimePs;
use crate::run::{Design, Report, RunError, ThreadPerf};

/// A cell or flow-control signal on its way from a node of one partition to a node of another.
#[derive(Clone, Copy, Debug)]
pub enum Crossing {
    /// `cell` reaches input `port` of `node` at `arrive_ps`; `key` places its arrival event
    /// where the node takes cells as they arrive (a slotted node finds it on its wire).
    Cell {
        /// Receiving node.
        node: u32,
        /// Its input port.
        port: u16,
        /// The cell, by value.
        cell: Cell,
        /// When it arrives.
        arrive_ps: TimePs,
        /// Its arrival event's place in the order, for a node that is not slotted.
        key: Option<EventKey>,
    },
    /// `signal` reaches output `port` of `node`.
    Signal {
        /// Receiving node.
        node: u32,
        /// Its output port.
        port: u16,
        /// The signal.
        signal: FlowSignal,
        /// Its event's place in the order.
        key: EventKey,
    },
    /// A packet whose last byte the next [`Crossing::Cell`] for `node` carries (a design that
    /// packs packets into cells): packets go just before their cell, in the cell's order.
    Packet {
        /// Receiving node.
        node: u32,
        /// The packet, by value.
        packet: Packet,
    },
    /// The host frame the packet just before it carries, by value.
    Frame {
        /// Receiving node.
        node: u32,
        /// The frame.
        frame: Cell,
    },
}

impl Crossing {
    /// The node it is for.
    fn node(&self) -> usize {
        match *self {
            Crossing::Cell { node, .. }
            | Crossing::Signal { node, .. }
            | Crossing::Packet { node, .. }
            | Crossing::Frame { node, .. } => node as usize,
        }
    }

    /// When it arrives (a packet or frame, with the cell after it).
    fn due_ps(&self) -> Option<TimePs> {
        match *self {
            Crossing::Cell { arrive_ps, .. } => Some(arrive_ps),
            Crossing::Signal { key, .. } => Some(key.time_ps()),
            Crossing::Packet { .. } | Crossing::Frame { .. } => None,
        }
    }
}

/// A partition's border: which nodes another partition runs, and what was sent to them.
pub(super) struct Border {
    /// Per node: run by another partition (a cell or signal for it leaves by `outbox`); all
    /// false in a run on one thread.
    pub(super) remote: Vec<bool>,
    /// Cells and signals for other partitions, sent since the last exchange.
    pub(super) outbox: Vec<Crossing>,
    /// A cell crosses with the packets whose last bytes it carries (see
    /// [`Fabric::split`]).
    pub(super) cells_carry_packets: bool,
    /// The first and last packets received for the cell still to come ([`NO_PACKET`] if none).
    arriving: (u32, u32),
}

impl Border {
    /// The border of a fabric of `nodes` nodes run whole: none.
    pub(super) fn none(nodes: usize) -> Self {
        Border {
            remote: vec![false; nodes],
            outbox: Vec::new(),
            cells_carry_packets: false,
            arriving: (NO_PACKET, NO_PACKET),
        }
    }
}

impl Plumbing {
    /// Sends `cell` to `peer`, run by another partition: out of this partition's arena, into
    /// the outbox, with its arrival event's key where `peer` takes cells as they arrive.
    pub(super) fn cross_cell(
        &mut self,
        sender: Origin,
        peer: usize,
        peer_port: usize,
        cell: CellId,
        arrive_ps: TimePs,
        cells: &mut CellArena,
    ) {
        let value = cells[cell];
        cells.free(cell);
        let key =
            (!self.slotted[peer]).then(|| self.queue.key_for(arrive_ps, Phase::Message, sender));
        self.border.outbox.push(Crossing::Cell {
            node: peer as u32,
            port: peer_port as u16,
            cell: value,
            arrive_ps,
            key,
        });
    }
}

impl<N: Node<R>, R: Router> Fabric<N, R> {
    /// The cells and signals sent to other partitions since the last call, each cell after
    /// the packets whose last bytes it carries (taken out of this partition's stores with
    /// their frames).
    fn take_outbox(&mut self, into: &mut Vec<Crossing>) {
        let border = &mut self.plumbing.border;
        for mut crossing in border.outbox.drain(..) {
            if let (Crossing::Cell { node, cell, .. }, true) =
                (&mut crossing, border.cells_carry_packets)
            {
                let node = *node;
                let mut id = std::mem::replace(&mut cell.packet, NO_PACKET);
                while id != NO_PACKET {
                    let packet = self.packets[PacketId::from_index(id)];
                    self.packets.free(PacketId::from_index(id));
                    into.push(Crossing::Packet { node, packet });
                    if packet.frame != NO_FRAME {
                        let frame = CellId::from_index(packet.frame);
                        into.push(Crossing::Frame {
                            node,
                            frame: self.cells[frame],
                        });
                        self.cells.free(frame);
                    }
                    id = packet.next_in_cell;
                }
            }
            into.push(crossing);
        }
    }

    /// Stores `packet`, from another partition, for the cell that carries its last byte.
    fn receive_packet(&mut self, mut packet: Packet) {
        packet.next_in_cell = NO_PACKET;
        let id = self.packets.alloc(packet).index();
        let arriving = &mut self.plumbing.border.arriving;
        match arriving.1 {
            NO_PACKET => arriving.0 = id,
            last => self.packets[PacketId::from_index(last)].next_in_cell = id,
        }
        arriving.1 = id;
    }

    /// A cell or signal from another partition for one of this one's nodes.
    fn receive(&mut self, crossing: Crossing) {
        let plumbing = &mut self.plumbing;
        match crossing {
            Crossing::Cell {
                node,
                port,
                cell,
                arrive_ps,
                key,
            } => {
                let mut cell = cell;
                if plumbing.border.cells_carry_packets {
                    let arriving = &mut plumbing.border.arriving;
                    cell.packet = std::mem::replace(arriving, (NO_PACKET, NO_PACKET)).0;
                }
                let id = self.cells.alloc(cell);
                match key {
                    Some(key) => {
                        let event = Event::Cell {
                            node,
                            port,
                            cell: id,
                        };
                        plumbing.queue.push_keyed(key, event);
                        plumbing.cells_in_events += 1;
                    }
                    None => plumbing.arrive(
                        origin(node as usize),
                        node as usize,
                        port as usize,
                        id,
                        arrive_ps,
                        &mut self.cells,
                    ),
                }
            }
            Crossing::Signal {
                node,
                port,
                signal,
                key,
            } => {
                let event = Event::Signal { node, port, signal };
                plumbing.queue.push_keyed(key, event);
            }
            Crossing::Packet { packet, .. } => self.receive_packet(packet),
            Crossing::Frame { frame, .. } => {
                let id = self.cells.alloc(frame).index();
                let last = PacketId::from_index(plumbing.border.arriving.1);
                self.packets[last].frame = id;
            }
        }
    }

    /// Takes into this fabric, after a run on several threads, what another partition ran:
    /// its nodes, counts, cells and packets, and its router's counts; the report then reads
    /// one fabric.
    pub fn absorb(&mut self, other: &mut Self) {
        for node in 0..self.nodes.len() {
            if !other.plumbing.border.remote[node] {
                std::mem::swap(&mut self.nodes[node], &mut other.nodes[node]);
                self.plumbing.wire_cells[node] = other.plumbing.wire_cells[node];
                self.plumbing.border.remote[node] = false;
            }
        }
        self.plumbing.cells_in_events += other.plumbing.cells_in_events;
        self.plumbing.metrics.add(&other.plumbing.metrics);
        self.router.absorb_counts(&other.router);
        self.absorbed.push((
            std::mem::take(&mut other.cells),
            std::mem::take(&mut other.packets),
        ));
        self.absorbed.append(&mut other.absorbed);
    }
}

/// A model run as partitions side by side, one thread each, window by window.
pub struct Sharded<D> {
    shards: Vec<D>,
    partition: Partition,
    /// Every event before this time has run, in every partition, and everything sent by them
    /// has been delivered.
    done_ps: TimePs,
    /// Mailboxes: what partition `from` sent to partition `to` in a window of parity `p` (the
    /// windows alternate between two sets, so what a fast partition sends in its next window
    /// waits apart until the others have taken this one's) at `(p * parts + from) * parts + to`.
    mail: Vec<Mutex<Vec<Crossing>>>,
    /// A cell or signal that crossed sooner than the lookahead, if one did.
    early: Option<String>,
    /// Windows run so far.
    windows: u64,
    /// Per partition: wall time running its own events and sending what crossed (the rest of
    /// the run's wall time it waited for the others, or took in what they sent).
    busy: Vec<Duration>,
}

/// A barrier at which the threads also agree whether to stop, and that a failing thread can
/// break: a thread that panics breaks it on its way out (`Breaker`), so the others stop
/// waiting instead of waiting for ever. A thread that arrives early spins a while before it
/// sleeps (where every thread has a core of its own): windows are short, and waking a
/// sleeping thread costs more than most windows' work.
struct Gate {
    parties: usize,
    /// How long an early thread spins before it sleeps (none where threads share cores).
    spin: Duration,
    state: Mutex<GateState>,
    /// Crossings completed, as spinning threads read it.
    passed: AtomicU64,
    all_arrived: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Threads arrived at this crossing.
    arrived: usize,
    /// Threads asleep, waiting for the others.
    sleeping: usize,
    /// Crossings completed.
    crossings: u64,
    /// A thread failed.
    broken: bool,
    /// Some thread arrived at this crossing wanting to stop.
    stop_asked: bool,
    /// The last crossing's answer: some thread wanted to stop (every thread reads it before it
    /// arrives at the next crossing, which cannot complete without it).
    stop: bool,
}

/// The gate was broken: a partition's thread failed.
struct Broken;

impl Gate {
    fn new(parties: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Gate {
            parties,
            spin: match parties <= cores {
                true => Duration::from_micros(50),
                false => Duration::ZERO,
            },
            state: Mutex::new(GateState::default()),
            passed: AtomicU64::new(0),
            all_arrived: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for every thread to arrive; true if any of them asked to stop.
    fn wait(&self, stop: bool) -> Result<bool, Broken> {
        let crossing = {
            let mut state = self.lock();
            let crossing = state.crossings;
            state.arrived += 1;
            state.stop_asked |= stop;
            if state.arrived == self.parties {
                state.arrived = 0;
                state.crossings += 1;
                state.stop = std::mem::take(&mut state.stop_asked);
                self.passed.store(state.crossings, Ordering::Release);
                if state.sleeping > 0 {
                    self.all_arrived.notify_all();
                }
                return Ok(state.stop);
            }
            crossing
        };
        self.spin_past(crossing);
        let mut state = self.lock();
        while state.crossings == crossing && !state.broken {
            state.sleeping += 1;
            state = self
                .all_arrived
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.sleeping -= 1;
        }
        match state.broken {
            true => Err(Broken),
            false => Ok(state.stop),
        }
    }

    /// Spins until crossing `crossing` completes or the spin time is up.
    fn spin_past(&self, crossing: u64) {
        if self.spin.is_zero() {
            return;
        }
        let started = Instant::now();
        while self.passed.load(Ordering::Acquire) == crossing {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            if started.elapsed() >= self.spin {
                return;
            }
        }
    }

    fn break_it(&self) {
        self.lock().broken = true;
        self.all_arrived.notify_all();
    }
}

/// Breaks the gate if its thread unwinds (panics) before it is forgotten.
struct Breaker<'a>(&'a Gate);

impl Drop for Breaker<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.break_it();
        }
    }
}

/// What the partitions' threads share in one [`Model::run_until`]: the plan of windows, the
/// mailboxes, the barrier and the stop.
struct Exchange<'a> {
    partition: &'a Partition,
    mail: &'a [Mutex<Vec<Crossing>>],
    gate: Gate,
    deadline: Option<Instant>,
    start_ps: TimePs,
    limit_ps: TimePs,
}

/// What one partition's thread did in one [`Model::run_until`].
struct ShardSteps {
    steps: Steps,
    done_ps: TimePs,
    early: Option<String>,
    /// Windows run.
    windows: u64,
    /// Wall time running its own events and sending what crossed.
    busy: Duration,
}

impl<D: FabricModel + Send> Sharded<D> {
    /// `shards[i]`, made partition `i` of `partition` before it started, run side by side.
    pub fn new(shards: Vec<D>, partition: Partition) -> Self {
        assert_eq!(shards.len(), partition.parts);
        let parts = partition.parts;
        Sharded {
            shards,
            partition,
            done_ps: 0,
            mail: (0..2 * parts * parts)
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
            early: None,
            windows: 0,
            busy: vec![Duration::ZERO; parts],
        }
    }
}

impl Exchange<'_> {
    /// Runs partition `me` window by window up to the limit, exchanging at each window's end;
    /// every thread computes the same windows and meets the others at the barrier after each.
    fn run_shard<D: FabricModel>(&self, me: usize, shard: &mut D) -> ShardSteps {
        let _breaker = Breaker(&self.gate);
        let parts = self.partition.parts;
        let mut start_ps = self.start_ps;
        let mut result = ShardSteps {
            steps: Steps::default(),
            done_ps: start_ps,
            early: None,
            windows: 0,
            busy: Duration::ZERO,
        };
        let mut outbox = Vec::new();
        let mut parity = 0;
        loop {
            let mailbox = |from: usize, to: usize| &self.mail[(parity * parts + from) * parts + to];
            let end_ps = start_ps
                .saturating_add(self.partition.lookahead_ps)
                .min(self.limit_ps + 1);
            let window_started = Instant::now();
            let steps = shard.run_until(end_ps - 1, None);
            result.steps.events += steps.events;
            result.steps.last_ps = steps.last_ps.or(result.steps.last_ps);
            shard.fabric_mut().take_outbox(&mut outbox);
            let early = outbox.iter().find_map(|crossing| {
                let due_ps = crossing.due_ps().filter(|&due_ps| due_ps < end_ps)?;
                Some(format!(
                    "partition {me} sent node {} a message due at {due_ps} ps, before its window's end at {end_ps} ps",
                    crossing.node(),
                ))
            });
            if early.is_some() {
                // The run stops at this window's barrier; nothing of it is sent.
                result.early = result.early.take().or(early);
                outbox.clear();
            }
            // The mailbox being filled, held while crossings go to the same partition.
            let mut sending: Option<(usize, MutexGuard<'_, Vec<Crossing>>)> = None;
            for crossing in outbox.drain(..) {
                let to = self.partition.owner[crossing.node()] as usize;
                if sending.as_ref().is_none_or(|(held, _)| *held != to) {
                    sending = Some((to, lock(mailbox(me, to))));
                }
                if let Some((_, mailbox)) = &mut sending {
                    mailbox.push(crossing);
                }
            }
            drop(sending);
            result.busy += window_started.elapsed();
            result.windows += 1;
            let out_of_time = me == 0
                && self
                    .deadline
                    .is_some_and(|deadline| Instant::now() >= deadline);
            let Ok(stop) = self.gate.wait(out_of_time || result.early.is_some()) else {
                break;
            };
            for from in (0..parts).filter(|&from| from != me) {
                for crossing in lock(mailbox(from, me)).drain(..) {
                    shard.fabric_mut().receive(crossing);
                }
            }
            parity ^= 1;
            start_ps = end_ps;
            if end_ps > self.limit_ps || stop {
                break;
            }
        }
        result.done_ps = start_ps;
        result
    }
}

/// `work` done on each of `items`, each on its own thread, the results in order (a thread's
/// panic is raised again here).
pub fn on_threads<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    work: impl Fn(usize, T) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|scope| {
        let work = &work;
        let threads: Vec<_> = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| scope.spawn(move || work(i, item)))
            .collect();
        threads
            .into_iter()
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect()
    })
}

/// A mailbox, whatever befell another thread that held it (a panic there is reported by
/// its own thread).
fn lock(mailbox: &Mutex<Vec<Crossing>>) -> MutexGuard<'_, Vec<Crossing>> {
    mailbox.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<D: FabricModel + Send> Model for Sharded<D> {
    fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
        if self.done_ps > limit_ps || self.early.is_some() {
            return Steps::default();
        }
        let exchange = Exchange {
            partition: &self.partition,
            mail: &self.mail,
            gate: Gate::new(self.partition.parts),
            deadline,
            start_ps: self.done_ps,
            limit_ps,
        };
        let results = on_threads(self.shards.iter_mut(), |me, shard| {
            exchange.run_shard(me, shard)
        });
        let mut steps = Steps::default();
        self.windows += results[0].windows;
        for (busy, result) in self.busy.iter_mut().zip(&results) {
            *busy += result.busy;
        }
        for result in results {
            steps.events += result.steps.events;
            steps.last_ps = steps.last_ps.max(result.steps.last_ps);
            self.done_ps = result.done_ps;
            self.early = self.early.take().or(result.early);
        }
        steps.broken = self.early.is_some();
        steps.out_of_time = !steps.broken && self.done_ps <= limit_ps;
        steps
    }

    fn is_idle(&mut self) -> bool {
        self.shards
            .iter_mut()
            .all(|shard| shard.fabric_mut().queue().is_empty())
    }

    fn progress(&self) -> u64 {
        self.shards.iter().map(|s| s.fabric().metrics().moves).sum()
    }

    fn in_flight(&self) -> u64 {
        let held = |s: &D| s.fabric().cells_live() + s.held_outside_cells();
        self.shards.iter().map(held).sum()
    }

    fn delivered(&self) -> u64 {
        self.shards.iter().map(|s| s.items_delivered()).sum()
    }

    fn stall_ps(&self) -> TimePs {
        self.shards[0].stuck_after_ps()
    }

    fn stall_report(&self) -> String {
        let reports: Vec<String> = self
            .shards
            .iter()
            .enumerate()
            .map(|(i, shard)| format!("partition {i}: {}", shard.stuck_report()))
            .collect();
        reports.join("; ")
    }

    fn sample(&mut self, at_ps: TimePs) {
        for shard in &mut self.shards {
            shard.sample_own(at_ps);
        }
    }
}

impl<D: FabricModel + Design + Send> Design for Sharded<D> {
    fn end_ps(&self) -> TimePs {
        self.shards[0].end_ps()
    }

    /// Takes every partition's nodes and counts into the first, which then reports as a run on
    /// one thread would.
    fn report(mut self, clock: Clock) -> Result<Report, RunError> {
        if let Some(early) = self.early {
            return Err(RunError::Lookahead(early));
        }
        let busy_s: Vec<f64> = self.busy.iter().map(Duration::as_secs_f64).collect();
        let threads = ThreadPerf {
            partitions: self.partition.parts,
            windows: self.windows,
            lookahead_ns: self.partition.lookahead_ps as f64 / 1e3,
            busy_s_mean: busy_s.iter().sum::<f64>() / busy_s.len() as f64,
            busy_s_max: busy_s.iter().copied().fold(0.0, f64::max),
        };
        let mut shards = self.shards.drain(..);
        let mut first = shards.next().expect("a partition");
        for mut other in shards {
            first.absorb_partition(&mut other);
        }
        let mut report = first.report(clock)?;
        report.perf.threads = Some(threads);
        Ok(report)
    }
}
