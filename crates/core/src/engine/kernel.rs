//! The one kernel loop every design runs on: run the model's events up to the next check, then
//! check it (a stall, the work it holds, a sample). A model owns its events and state (one event
//! queue, or several run side by side: [`crate::blocks::fabric::parallel`]); the kernel owns
//! time, the event count, the wall clock and deadlock detection.
//!
//! Checks fall at fixed instants (every [`Model::stall_ps`], every backlog and series interval)
//! and see the model after every event before the instant: so what a check sees never depends
//! on how the model runs its events between checks.
//!
//! A stall is a model holding work (cells, packets in flight) that makes no progress for
//! [`Model::stall_ps`] of simulated time, or holding work with no event left to run. Either stops
//! the run with the model's own description of what is stuck.
//!
//! The kernel also watches the work held against [`Supervision::max_in_flight`] (an overloaded
//! run stops early, with its partial results, rather than growing until memory runs out) and
//! samples it through the measured window, so a run whose backlog keeps growing is reported as
//! not [`Clock::stable`].

use std::time::{Duration, Instant};

use super::queue::{CalendarQueue, EventQueue};
use super::time::TimePs;

/// A model of a system: how it runs its events, and how to tell it is stuck.
pub trait Model {
    /// Runs every event due at or before `limit_ps`, in order, unless `deadline` passes first
    /// (looked at every thousand events or so).
    fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps;
    /// True when no event is pending.
    fn is_idle(&mut self) -> bool;
    /// A count that grows whenever work moves (an item delivered, forwarded or dropped).
    fn progress(&self) -> u64;
    /// Work items the model holds (0: an idle model is not stuck).
    fn in_flight(&self) -> u64;
    /// Work items delivered so far (cells, packets or frames), for the time series.
    fn delivered(&self) -> u64;
    /// Simulated time without progress, while holding work, after which the model is stuck.
    fn stall_ps(&self) -> TimePs;
    /// What is stuck, for the deadlock report.
    fn stall_report(&self) -> String;
    /// Samples what the model keeps a series of itself (per-flow goodput, say) at `at_ps`, the
    /// end of a time-series interval (`run.sample_ns`); by default nothing.
    fn sample(&mut self, _at_ps: TimePs) {}
}

/// A model's one event queue and what it does with an event: the events of a model that
/// runs them one at a time ([`run_events`]).
pub trait Events {
    /// The messages its components exchange; small and `Copy`.
    type Event: Copy;
    /// Its pending events.
    fn queue(&mut self) -> &mut CalendarQueue<Self::Event>;
    /// Handles one event due at `now_ps`; false if it was superseded and did nothing (a
    /// clock edge an earlier one replaced), which is not counted as an event.
    fn handle(&mut self, now_ps: TimePs, event: Self::Event) -> bool;
}

/// What one [`Model::run_until`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Steps {
    /// Events run.
    pub events: u64,
    /// When the last of them was due, if any ran.
    pub last_ps: Option<TimePs>,
    /// It stopped because its deadline passed, before its limit.
    pub out_of_time: bool,
    /// It stopped because it can no longer run correctly (its report says why).
    pub broken: bool,
}

/// [`Model::run_until`] for a model with one event queue: pops and handles its events in order.
pub fn run_events<M: Events>(model: &mut M, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
    let mut steps = Steps::default();
    let mut until_wall_check = WALL_CHECK_EVENTS;
    while let Some((time_ps, event)) = model.queue().pop_until(limit_ps) {
        if model.handle(time_ps, event) {
            steps.events += 1;
            steps.last_ps = Some(time_ps);
        }
        until_wall_check -= 1;
        if until_wall_check == 0 {
            until_wall_check = WALL_CHECK_EVENTS;
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                steps.out_of_time = true;
                break;
            }
        }
    }
    steps
}

/// How far a run has got.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// Simulated time reached.
    pub now_ps: TimePs,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds spent in the loop.
    pub wall_s: f64,
}

/// What the kernel watches besides stalls (when measurement starts, the most work the run may
/// hold) and what the scenario's validation warned of, for the report.
#[derive(Clone, Debug)]
pub struct Supervision {
    /// Start of the measured window (the end of warm-up).
    pub warmup_ps: TimePs,
    /// Work items (cells, packets) held at once beyond which the run stops early.
    pub max_in_flight: u64,
    /// Warnings about the scenario, reported in the summary.
    pub warnings: Vec<String>,
    /// Sample the work held and delivered every this long, for the time series; `None`: no
    /// time series.
    pub series_every_ps: Option<TimePs>,
}

impl Default for Supervision {
    /// No warm-up, no limit, no warning.
    fn default() -> Self {
        Supervision {
            warmup_ps: 0,
            max_in_flight: u64::MAX,
            warnings: Vec::new(),
            series_every_ps: None,
        }
    }
}

/// The work held and delivered, sampled through a run at a fixed interval (the time series a
/// run asks for with `run.sample_ns`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TimeSeries {
    /// End of each interval, nanoseconds.
    pub time_ns: Vec<f64>,
    /// Items held at that time (cells, packets or frames in the system: the backlog).
    pub in_flight: Vec<u64>,
    /// Items delivered during the interval.
    pub delivered: Vec<u64>,
}

/// Samples of the work held taken evenly through the measured window.
pub const BACKLOG_SAMPLES: u64 = 64;
/// Events between two looks at the wall clock in a step bounded by wall time: a look costs tens
/// of nanoseconds, a thousand events about a hundred microseconds.
const WALL_CHECK_EVENTS: u32 = 1024;
/// Fewer samples than this (a run stopped early, or a model whose events are sparse) say
/// nothing about stability.
const MIN_BACKLOG_SAMPLES: usize = 8;

/// Whether the backlog sampled through the measured window stayed level: `None` when there are
/// too few samples to tell. A backlog that rises from each quarter of the window to the next
/// and ends above 1.25× its first quarter's plus one item is growing: the run is saturated, and
/// its latencies describe the run's length, not a steady state (BookSim's `latency_thres`
/// serves the same purpose). A steady backlog rises through four quarters by chance 1 time in
/// 24, and by a quarter as well far more rarely.
pub fn backlog_is_stable(samples: &[u64]) -> Option<bool> {
    if samples.len() < MIN_BACKLOG_SAMPLES {
        return None;
    }
    let quarter = samples.len() / 4;
    let means: Vec<f64> = samples
        .chunks(quarter)
        .take(4)
        .map(|q| q.iter().sum::<u64>() as f64 / q.len() as f64)
        .collect();
    let rising = means.windows(2).all(|pair| pair[1] > pair[0]);
    Some(!(rising && means[3] > 1.25 * means[0] + 1.0))
}

/// Runs a model from time 0 to `end_ps`.
pub struct Kernel<M: Model> {
    model: M,
    now_ps: TimePs,
    end_ps: TimePs,
    events: u64,
    wall: Duration,
    /// Progress count at the last check, and when the next check is due.
    progress_seen: u64,
    check_at_ps: TimePs,
    deadlock: Option<String>,
    supervision: Supervision,
    /// Work held, sampled every `sample_every_ps` through the measured window.
    backlog: Vec<u64>,
    sample_at_ps: TimePs,
    sample_every_ps: TimePs,
    /// Why the run stopped before its end, when it did (not a failure).
    stopped: Option<String>,
    series: TimeSeries,
    series_at_ps: TimePs,
    delivered_seen: u64,
    /// The earliest of the next stall check, backlog sample and series sample.
    next_check_ps: TimePs,
}

impl<M: Model> Kernel<M> {
    /// A run of `model` ending at `end_ps`.
    pub fn new(model: M, end_ps: TimePs) -> Self {
        let check_at_ps = model.stall_ps();
        let mut kernel = Kernel {
            model,
            now_ps: 0,
            end_ps,
            events: 0,
            wall: Duration::ZERO,
            progress_seen: 0,
            check_at_ps,
            deadlock: None,
            supervision: Supervision::default(),
            backlog: Vec::new(),
            sample_at_ps: 0,
            sample_every_ps: 0,
            stopped: None,
            series: TimeSeries::default(),
            series_at_ps: TimePs::MAX,
            delivered_seen: 0,
            next_check_ps: 0,
        };
        kernel.supervise(Supervision::default());
        kernel
    }

    /// Sets what the kernel watches besides stalls (before the run starts).
    pub fn supervise(&mut self, supervision: Supervision) {
        let measured_ps = self.end_ps.saturating_sub(supervision.warmup_ps);
        self.sample_every_ps = (measured_ps / BACKLOG_SAMPLES).max(1);
        self.sample_at_ps = supervision.warmup_ps + self.sample_every_ps;
        self.series_at_ps = supervision.series_every_ps.unwrap_or(TimePs::MAX);
        self.supervision = supervision;
        self.next_check_ps = self
            .check_at_ps
            .min(self.sample_at_ps)
            .min(self.series_at_ps);
    }

    /// Current simulated time.
    pub fn now_ps(&self) -> TimePs {
        self.now_ps
    }

    /// When the run ends.
    pub fn end_ps(&self) -> TimePs {
        self.end_ps
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The measured window simulated so far: from the end of warm-up to the time reached.
    pub fn measured_window_ps(&self) -> (TimePs, TimePs) {
        let from_ps = self.supervision.warmup_ps.min(self.end_ps);
        (from_ps, self.now_ps.max(from_ps))
    }

    /// Runs every event due at or before `until_ps` (capped at the end of the run); returns true
    /// once the run is complete or stuck.
    pub fn advance(&mut self, until_ps: TimePs) -> bool {
        self.advance_within(until_ps, None)
    }

    /// Runs events as [`Kernel::advance`] does, but returns (false) once `wall_budget` of wall
    /// time has passed, even in the middle of an instant: a step that lasts a bounded time however
    /// dense the events are, so a front end can stop a run of any length promptly. The run goes
    /// on from the next event with the same results as an uncut one.
    pub fn advance_within(&mut self, until_ps: TimePs, wall_budget: Option<Duration>) -> bool {
        if self.deadlock.is_some() || self.stopped.is_some() {
            return true;
        }
        let limit_ps = until_ps.min(self.end_ps);
        let started = Instant::now();
        let deadline = wall_budget.map(|budget| started + budget);
        loop {
            // The events before the next check (or up to the limit), then the check.
            let check_ps = self.next_check_ps;
            let run_to_ps = match check_ps <= limit_ps {
                true => check_ps.checked_sub(1),
                false => Some(limit_ps),
            };
            if let Some(run_to_ps) = run_to_ps {
                let steps = self.model.run_until(run_to_ps, deadline);
                self.events += steps.events;
                self.now_ps = steps.last_ps.unwrap_or(self.now_ps);
                if steps.broken {
                    self.stopped = Some("the model broke; its report says why".into());
                    break;
                }
                if steps.out_of_time {
                    self.wall += started.elapsed();
                    return false;
                }
            }
            // An idle model has nothing to check until something wakes it (and nothing will).
            if check_ps > limit_ps || self.model.is_idle() || self.must_stop(check_ps) {
                break;
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                self.wall += started.elapsed();
                return false;
            }
        }
        if self.deadlock.is_none() && self.stopped.is_none() {
            self.record_series(limit_ps);
            if limit_ps == self.end_ps {
                self.close_series();
            }
            if self.model.is_idle() && self.model.in_flight() > 0 {
                self.deadlock = Some(format!(
                    "no event pending at {} ps: {}",
                    self.now_ps,
                    self.model.stall_report()
                ));
            } else {
                self.now_ps = limit_ps;
            }
        }
        self.wall += started.elapsed();
        limit_ps == self.end_ps || self.deadlock.is_some() || self.stopped.is_some()
    }

    /// The checks due at or before `time_ps`: a stall, the limit on work held, a backlog
    /// sample. Returns true when the run must stop (stuck, or holding too much).
    fn must_stop(&mut self, time_ps: TimePs) -> bool {
        if time_ps >= self.check_at_ps && self.stalled(time_ps) {
            return true;
        }
        let held = self.model.in_flight();
        if held > self.supervision.max_in_flight {
            self.stopped = Some(format!(
                "stopped at {} ns holding {held} cells (packets, for Clint; with the work GNet hosts hold not yet sent, in cells), more than run.max_cells_in_flight = {}: the network is not carrying what is offered (lower the load, bound the buffers, or raise the limit)",
                time_ps / 1_000,
                self.supervision.max_in_flight
            ));
            return true;
        }
        while time_ps >= self.sample_at_ps {
            self.backlog.push(held);
            self.sample_at_ps += self.sample_every_ps;
        }
        self.record_series(time_ps);
        self.next_check_ps = self
            .check_at_ps
            .min(self.sample_at_ps)
            .min(self.series_at_ps);
        false
    }

    /// Adds a time-series row for every interval that ended at or before `time_ps` (the state
    /// then is the state now: no event came between).
    fn record_series(&mut self, time_ps: TimePs) {
        let Some(every_ps) = self.supervision.series_every_ps else {
            return;
        };
        while time_ps >= self.series_at_ps {
            let delivered = self.model.delivered();
            self.series.time_ns.push(self.series_at_ps as f64 / 1e3);
            self.series.in_flight.push(self.model.in_flight());
            self.series.delivered.push(delivered - self.delivered_seen);
            self.delivered_seen = delivered;
            self.model.sample(self.series_at_ps);
            self.series_at_ps += every_ps;
        }
    }

    /// Checks for progress since the last check (due at or before `time_ps`); records a
    /// deadlock and returns true if there was none while work was held.
    fn stalled(&mut self, time_ps: TimePs) -> bool {
        let progress = self.model.progress();
        if progress == self.progress_seen && self.model.in_flight() > 0 {
            self.deadlock = Some(format!(
                "nothing moved from {} ps to {} ps: {}",
                self.check_at_ps - self.model.stall_ps(),
                time_ps,
                self.model.stall_report()
            ));
            return true;
        }
        self.progress_seen = progress;
        self.check_at_ps = time_ps + self.model.stall_ps();
        false
    }

    /// The model, how far the run got, and the deadlock that stopped it, if any.
    pub fn into_parts(self) -> (M, Clock, Option<String>) {
        let clock = Clock {
            now_ps: self.now_ps,
            events: self.events,
            wall_s: self.wall.as_secs_f64(),
        };
        (self.model, clock, self.deadlock)
    }

    /// Runs `model` on a kernel that ends at `end_ps`, stops it at `until_ps` and gives it back
    /// with its clock; a deadlock fails the test.
    #[cfg(test)]
    pub(crate) fn run_until(model: M, end_ps: TimePs, until_ps: TimePs) -> (M, Clock) {
        let mut kernel = Kernel::new(model, end_ps);
        kernel.advance(until_ps);
        let (model, clock, deadlock) = kernel.into_parts();
        assert!(deadlock.is_none(), "{deadlock:?}");
        (model, clock)
    }

    /// Whether the backlog stayed level through the measured window (see
    /// [`backlog_is_stable`]); `Some(false)` for a run stopped for holding too much.
    pub fn stable(&self) -> Option<bool> {
        if self.stopped.is_some() {
            return Some(false);
        }
        backlog_is_stable(&self.backlog)
    }

    /// Why the run stopped before its end, if it did without failing.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// The scenario's warnings.
    pub fn warnings(&self) -> &[String] {
        &self.supervision.warnings
    }

    /// Ends the time series at the end of the run: a last, shorter interval if the run's length
    /// is not a whole number of intervals, and what the events at the last instant delivered,
    /// so the series adds up to the run's deliveries.
    fn close_series(&mut self) {
        if self.supervision.series_every_ps.is_none() {
            return;
        }
        let end_ns = self.end_ps as f64 / 1e3;
        if self.series.time_ns.last().is_none_or(|&t| t < end_ns) {
            self.series.time_ns.push(end_ns);
            self.series.in_flight.push(0);
            self.series.delivered.push(0);
        }
        let delivered = self.model.delivered();
        *self.series.in_flight.last_mut().expect("a row") = self.model.in_flight();
        *self.series.delivered.last_mut().expect("a row") += delivered - self.delivered_seen;
        self.delivered_seen = delivered;
    }

    /// The time series, if the run asked for one.
    pub fn series(&self) -> Option<&TimeSeries> {
        self.supervision.series_every_ps.map(|_| &self.series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queue::Phase;

    /// Passes a token around a ring of `nodes` every `hop_ps`; from `jam_ps` on, it stops
    /// forwarding but keeps ticking (a livelock that keeps the queue busy).
    struct Ring {
        queue: CalendarQueue<u32>,
        hops: u64,
        jam_ps: TimePs,
    }

    impl Events for Ring {
        type Event = u32;
        fn queue(&mut self) -> &mut CalendarQueue<u32> {
            &mut self.queue
        }
        fn handle(&mut self, now_ps: TimePs, node: u32) -> bool {
            if now_ps < self.jam_ps {
                self.hops += 1;
            }
            self.queue
                .push(now_ps + 10, Phase::Message, node, (node + 1) % 4);
            true
        }
    }

    impl Model for Ring {
        fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
            run_events(self, limit_ps, deadline)
        }
        fn is_idle(&mut self) -> bool {
            self.queue.is_empty()
        }
        fn progress(&self) -> u64 {
            self.hops
        }
        fn delivered(&self) -> u64 {
            self.hops
        }
        fn in_flight(&self) -> u64 {
            1
        }
        fn stall_ps(&self) -> TimePs {
            1_000
        }
        fn stall_report(&self) -> String {
            "the token is stuck".into()
        }
    }

    fn ring(jam_ps: TimePs) -> Kernel<Ring> {
        let mut queue = CalendarQueue::for_gap(10);
        queue.push(0, Phase::Message, 0, 0);
        Kernel::new(
            Ring {
                queue,
                hops: 0,
                jam_ps,
            },
            100_000,
        )
    }

    #[test]
    fn a_moving_run_completes_and_a_stuck_one_stops_with_a_report() {
        let mut moving = ring(TimePs::MAX);
        assert!(moving.advance(TimePs::MAX));
        let (model, clock, deadlock) = moving.into_parts();
        assert_eq!(deadlock, None);
        assert_eq!(clock.now_ps, 100_000);
        assert_eq!(model.hops, 10_001);

        let mut stuck = ring(20_000);
        assert!(stuck.advance(50_000), "a stuck run is over");
        let (_, clock, deadlock) = stuck.into_parts();
        let report = deadlock.expect("the stall is reported");
        assert!(report.contains("the token is stuck"), "{report}");
        assert!(
            clock.now_ps < 22_000,
            "stopped within a stall window or two"
        );
    }

    #[test]
    fn steps_bounded_by_wall_time_stop_early_and_change_nothing() {
        let mut whole = ring(TimePs::MAX);
        assert!(whole.advance(TimePs::MAX));
        let (whole, whole_clock, _) = whole.into_parts();

        // A zero budget ends a step at the first look at the wall clock: at the first check,
        // or after WALL_CHECK_EVENTS events, part of the way to the end.
        let mut cut = ring(TimePs::MAX);
        assert!(!cut.advance_within(TimePs::MAX, Some(Duration::ZERO)));
        assert!((1..=WALL_CHECK_EVENTS as u64).contains(&cut.events()));
        assert_eq!(cut.now_ps(), 10 * (cut.events() - 1));
        assert_eq!(cut.measured_window_ps(), (0, cut.now_ps()));
        let mut steps = 1;
        while !cut.advance_within(TimePs::MAX, Some(Duration::ZERO)) {
            steps += 1;
        }
        let (cut, cut_clock, deadlock) = cut.into_parts();
        assert!(steps >= 9, "{steps} steps");
        assert_eq!(deadlock, None);
        assert_eq!(
            (cut.hops, cut_clock.now_ps),
            (whole.hops, whole_clock.now_ps)
        );
        assert_eq!(cut_clock.events, whole_clock.events);
    }

    /// Gains one item every 10 ps and never lets one go: an overloaded queue.
    struct Pile {
        queue: CalendarQueue<u32>,
        held: u64,
    }

    impl Events for Pile {
        type Event = u32;
        fn queue(&mut self) -> &mut CalendarQueue<u32> {
            &mut self.queue
        }
        fn handle(&mut self, now_ps: TimePs, _: u32) -> bool {
            self.held += 1;
            self.queue.push(now_ps + 10, Phase::Message, 0, 0);
            true
        }
    }

    impl Model for Pile {
        fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
            run_events(self, limit_ps, deadline)
        }
        fn is_idle(&mut self) -> bool {
            self.queue.is_empty()
        }
        fn progress(&self) -> u64 {
            self.held
        }
        fn delivered(&self) -> u64 {
            0
        }
        fn in_flight(&self) -> u64 {
            self.held
        }
        fn stall_ps(&self) -> TimePs {
            1_000
        }
        fn stall_report(&self) -> String {
            String::new()
        }
    }

    fn supervised<M: Model>(model: M, max_in_flight: u64) -> Kernel<M> {
        let mut kernel = Kernel::new(model, 100_000);
        kernel.supervise(Supervision {
            warmup_ps: 10_000,
            max_in_flight,
            warnings: vec!["a warning".into()],
            series_every_ps: None,
        });
        kernel
    }

    fn pile() -> Pile {
        let mut queue = CalendarQueue::for_gap(10);
        queue.push(0, Phase::Message, 0, 0);
        Pile { queue, held: 0 }
    }

    #[test]
    fn a_growing_backlog_is_unstable_and_a_level_one_stable() {
        let mut growing = supervised(pile(), u64::MAX);
        assert!(growing.advance(TimePs::MAX));
        assert_eq!(growing.stable(), Some(false));
        assert_eq!(growing.stopped(), None);
        assert_eq!(growing.warnings(), ["a warning"]);

        let mut level = supervised(ring(TimePs::MAX).model, u64::MAX);
        assert!(level.advance(TimePs::MAX));
        assert_eq!(level.stable(), Some(true));

        let short = Kernel::new(pile(), 50);
        assert_eq!(short.stable(), None, "too few samples to tell");
    }

    #[test]
    fn stability_needs_a_rise_through_every_quarter_and_by_a_quarter() {
        let ramp: Vec<u64> = (0..64).collect();
        assert_eq!(backlog_is_stable(&ramp), Some(false));
        let level = [50, 52, 49, 51, 50, 53, 48, 50].repeat(8);
        assert_eq!(backlog_is_stable(&level), Some(true));
        // Rising through every quarter, but by less than a quarter: noise about a level.
        let creep: Vec<u64> = (0..64).map(|i| 1_000 + i).collect();
        assert_eq!(backlog_is_stable(&creep), Some(true));
        assert_eq!(backlog_is_stable(&ramp[..7]), None);
    }

    #[test]
    fn a_run_holding_more_than_its_limit_stops_early_and_says_which_key() {
        let mut kernel = supervised(pile(), 2_000);
        assert!(kernel.advance(TimePs::MAX), "a stopped run is over");
        let why = kernel.stopped().expect("the limit stopped it").to_string();
        assert!(why.contains("run.max_cells_in_flight = 2000"), "{why}");
        assert_eq!(kernel.stable(), Some(false));
        let (model, clock, deadlock) = kernel.into_parts();
        assert_eq!(deadlock, None, "stopping at a limit is not a deadlock");
        assert!(clock.now_ps < 100_000);
        assert!(
            model.held > 2_000 && model.held < 2_200,
            "checked within a stall window"
        );
    }

    #[test]
    fn the_time_series_counts_each_interval_and_ignores_how_the_run_is_stepped() {
        let series = |steps: &[TimePs]| {
            let mut kernel = ring(TimePs::MAX);
            kernel.supervise(Supervision {
                series_every_ps: Some(1_000),
                ..Supervision::default()
            });
            for &until_ps in steps {
                kernel.advance(until_ps);
            }
            assert!(kernel.advance(TimePs::MAX));
            kernel.series().expect("asked for").clone()
        };
        let whole = series(&[]);
        assert_eq!(whole.time_ns.len(), 100, "one row per microsecond of 100");
        let hops: u64 = whole.delivered.iter().sum();
        assert_eq!(
            hops, 10_001,
            "every hop, the last at the run's last instant"
        );
        assert_eq!(whole.time_ns[0], 1.0);
        // A hop every 10 ps: 100 in every interval.
        assert_eq!(whole.delivered[0], 100);
        assert!(whole.delivered[1..99].iter().all(|&d| d == 100));
        assert!(whole.in_flight.iter().all(|&held| held == 1));
        assert_eq!(series(&[999, 1_000, 1_001, 4_567, 50_000]), whole);
        assert_eq!(
            series(&(1..100).map(|i| i * 997).collect::<Vec<_>>()),
            whole
        );
    }

    #[test]
    fn work_left_with_no_event_pending_is_a_deadlock() {
        let mut idle = Kernel::new(
            Ring {
                queue: CalendarQueue::for_gap(10),
                hops: 0,
                jam_ps: 0,
            },
            1_000,
        );
        assert!(idle.advance(TimePs::MAX));
        assert!(idle.into_parts().2.unwrap().contains("no event pending"));
    }
}
