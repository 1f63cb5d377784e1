//! One run on several threads, with the results of one: the fabric split by node into
//! partitions ([`Partition`]), each a copy of the model that runs only its own nodes
//! ([`Fabric::make_partition`]), all run side by side in windows of simulated time
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

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::{origin, Event, Fabric, FabricModel, Node, Plumbing};
use crate::blocks::cell::{Cell, CellArena, CellId};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::routing::Router;
use crate::engine::kernel::{Clock, Model, Steps};
use crate::engine::queue::{EventKey, EventQueue, Origin, Phase};
use crate::engine::time::TimePs;
use crate::run::{Design, Report, RunError};

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
}

impl Crossing {
    /// The node it is for.
    fn node(&self) -> usize {
        match *self {
            Crossing::Cell { node, .. } | Crossing::Signal { node, .. } => node as usize,
        }
    }

    /// When it arrives.
    fn due_ps(&self) -> TimePs {
        match *self {
            Crossing::Cell { arrive_ps, .. } => arrive_ps,
            Crossing::Signal { key, .. } => key.time_ps(),
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
}

impl Border {
    /// The border of a fabric of `nodes` nodes run whole: none.
    pub(super) fn none(nodes: usize) -> Self {
        Border {
            remote: vec![false; nodes],
            outbox: Vec::new(),
        }
    }
}

/// Which partition runs each node, and how far the partitions may run apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Per node: its partition.
    pub owner: Vec<u16>,
    /// How many partitions.
    pub parts: usize,
    /// The shortest propagation delay of a cable between two partitions.
    pub lookahead_ps: TimePs,
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
    /// Splits the fabric into `parts` partitions: the switches in `parts` runs of consecutive
    /// numbers (a topology numbers a pod's or group's switches together), as even in count as
    /// can be, each node that is not a switch (a host) with the switches it is cabled to.
    /// Anything sent between switches arrives at least its cable's delay plus
    /// `message_floor_ps` after the event that sends it (a cell time where only cells cross;
    /// minus one where a flow-control signal may leave when the cell it answers arrived, up to
    /// a cell time before the clock edge that latched it). Fails, saying why, when a partition
    /// would have no switch, a host is cabled to two partitions, or something could cross
    /// between partitions in no time (nothing could run ahead).
    pub fn partition(&self, parts: usize, message_floor_ps: i64) -> Result<Partition, String> {
        let plumbing = &self.plumbing;
        let mut switches: Vec<(u32, usize)> = (0..self.nodes.len())
            .filter(|&n| plumbing.router_index[n] != u32::MAX)
            .map(|n| (plumbing.router_index[n], n))
            .collect();
        switches.sort_unstable();
        if switches.len() < parts {
            return Err(format!(
                "expected at most one thread per switch ({} switches)",
                switches.len()
            ));
        }
        let mut owner = vec![u16::MAX; self.nodes.len()];
        for (i, &(_, node)) in switches.iter().enumerate() {
            owner[node] = (i * parts / switches.len()) as u16;
        }
        for node in 0..self.nodes.len() {
            if owner[node] == u16::MAX {
                owner[node] = self.host_partition(node, &owner)?;
            }
        }
        let lookahead_ps = (0..self.nodes.len())
            .flat_map(|node| {
                self.cabled(node)
                    .map(move |(port, peer)| (node, port, peer))
            })
            .filter(|&(node, _, peer)| owner[peer] != owner[node])
            .map(|(node, port, _)| plumbing.delay_ps(node, port) as i64 + message_floor_ps)
            .min()
            .unwrap_or(i64::MAX);
        if lookahead_ps <= 0 {
            return Err(format!(
                "a cable between partitions is too short for its flow-control signals: they may arrive {} ps after the event that sends them, so no partition could run ahead of another; expected 1 thread (or cables of at least a cell time)",
                lookahead_ps.max(0)
            ));
        }
        let lookahead_ps = lookahead_ps as TimePs;
        Ok(Partition {
            owner,
            parts,
            lookahead_ps,
        })
    }

    /// The ports of `node` with a cable, each with the node at its far end.
    fn cabled(&self, node: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.ports(node)).filter_map(move |port| {
            let (peer, _) = self.plumbing.peer[self.plumbing.port(node, port)];
            (peer != u32::MAX).then_some((port, peer as usize))
        })
    }

    /// The partition of `node`, not a switch: that of every switch it is cabled to.
    fn host_partition(&self, node: usize, owner: &[u16]) -> Result<u16, String> {
        let mut partitions = self.cabled(node).map(|(_, peer)| owner[peer]);
        let first = partitions.next().filter(|&p| p != u16::MAX);
        match first {
            Some(part) if partitions.all(|p| p == part) => Ok(part),
            _ => Err(format!(
                "node {node} is not cabled to the switches of one partition; expected 1 thread"
            )),
        }
    }

    /// Makes this fabric partition `me` of `partition`: it runs only its own nodes (call before
    /// the run starts; [`Fabric::start`] then starts only those). What its nodes send to
    /// another partition's goes out by [`Fabric::take_outbox`].
    pub fn make_partition(&mut self, partition: &Partition, me: u16) {
        assert_eq!(
            self.plumbing.queue.len(),
            0,
            "partitioned before the run starts"
        );
        for (remote, &owner) in self.plumbing.border.remote.iter_mut().zip(&partition.owner) {
            *remote = owner != me;
        }
    }

    /// The cells and signals sent to other partitions since the last call.
    fn take_outbox(&mut self, into: &mut Vec<Crossing>) {
        into.append(&mut self.plumbing.border.outbox);
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
    /// Mailboxes: what partition `from` sent to partition `to` at `from * parts + to`.
    mail: Vec<Mutex<Vec<Crossing>>>,
    /// A cell or signal that crossed sooner than the lookahead, if one did.
    early: Option<String>,
}

/// A barrier at which the threads also agree whether to stop, and that a failing thread can
/// break: a thread that panics breaks it on its way out (`Breaker`), so the others stop
/// waiting instead of waiting for ever.
struct Gate {
    parties: usize,
    state: Mutex<GateState>,
    all_arrived: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Threads arrived at this crossing.
    arrived: usize,
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
        Gate {
            parties,
            state: Mutex::new(GateState::default()),
            all_arrived: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for every thread to arrive; true if any of them asked to stop.
    fn wait(&self, stop: bool) -> Result<bool, Broken> {
        let mut state = self.lock();
        let crossing = state.crossings;
        state.arrived += 1;
        state.stop_asked |= stop;
        if state.arrived == self.parties {
            state.arrived = 0;
            state.crossings += 1;
            state.stop = std::mem::take(&mut state.stop_asked);
            self.all_arrived.notify_all();
        }
        while state.crossings == crossing && !state.broken {
            state = self
                .all_arrived
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        match state.broken {
            true => Err(Broken),
            false => Ok(state.stop),
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
            mail: (0..parts * parts).map(|_| Mutex::new(Vec::new())).collect(),
            early: None,
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
        };
        let mut outbox = Vec::new();
        loop {
            let end_ps = start_ps
                .saturating_add(self.partition.lookahead_ps)
                .min(self.limit_ps + 1);
            let steps = shard.run_until(end_ps - 1, None);
            result.steps.events += steps.events;
            result.steps.last_ps = steps.last_ps.or(result.steps.last_ps);
            shard.fabric_mut().take_outbox(&mut outbox);
            for crossing in outbox.drain(..) {
                if crossing.due_ps() < end_ps {
                    result.early.get_or_insert_with(|| format!(
                        "partition {me} sent node {} a message due at {} ps, before its window's end at {end_ps} ps",
                        crossing.node(),
                        crossing.due_ps()
                    ));
                    continue;
                }
                let to = self.partition.owner[crossing.node()] as usize;
                lock(&self.mail[me * parts + to]).push(crossing);
            }
            let out_of_time = me == 0
                && self
                    .deadline
                    .is_some_and(|deadline| Instant::now() >= deadline);
            let Ok(stop) = self.gate.wait(out_of_time || result.early.is_some()) else {
                break;
            };
            for from in (0..parts).filter(|&from| from != me) {
                for crossing in lock(&self.mail[from * parts + me]).drain(..) {
                    shard.fabric_mut().receive(crossing);
                }
            }
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
        self.shards.iter().map(|s| s.fabric().cells_live()).sum()
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
        let mut shards = self.shards.drain(..);
        let mut first = shards.next().expect("a partition");
        for mut other in shards {
            first.fabric_mut().absorb(other.fabric_mut());
        }
        first.report(clock)
    }
}
