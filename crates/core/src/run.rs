//! The run contract every design keeps: a [`Simulation`] advanced in steps by the front ends,
//! a [`Report`] (summary and tables, which depend only on the scenario and seed, and a separate
//! [`Perf`] section of wall-clock figures), the [`RunError`] a run fails with, and the
//! [`Ledger`] every design settles its account in.

use std::time::Duration;

use serde::Serialize;

use crate::engine::kernel::{Clock, Kernel, Model, Supervision};
use crate::engine::time::TimePs;

/// A run's failure to keep its own invariants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// Work items (cells, packets, frames) were created or lost outside the account.
    #[error("conservation violated: injected {injected} != delivered {delivered} + dropped {dropped} + in flight {in_flight}")]
    Conservation {
        /// Items created.
        injected: u64,
        /// Items delivered.
        delivered: u64,
        /// Items dropped.
        dropped: u64,
        /// Items still in the system at the end.
        in_flight: u64,
    },
    /// The cells counted where they are held differ from the cells allocated: a cell lost from
    /// every queue, or held in two.
    #[error("cell account broken: {held} cells held in queues, wires and events, but {allocated} allocated")]
    Unaccounted {
        /// Cells counted where they are held.
        held: u64,
        /// Cells alive in the cell arena.
        allocated: u64,
    },
    /// Items released twice: a cell or packet delivered or dropped twice.
    #[error("account broken: {0} cells or packets were delivered or dropped twice")]
    ReleasedTwice(u64),
    /// A configuration that promises no loss dropped items.
    #[error("lossless configuration dropped {0} cells")]
    LossInLosslessRun(u64),
    /// Nothing moved any more while items were in flight.
    #[error("deadlock: {0}")]
    Deadlock(String),
    /// In a run on several threads, a cell or signal crossed between partitions sooner than
    /// the lookahead allows: the run's results may differ from one thread's.
    #[error("partitions out of step: {0}")]
    Lookahead(String),
}

/// The account a run settles at its end: each term counted where the items are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Items created by sources.
    pub injected: u64,
    /// Items that reached their destination.
    pub delivered: u64,
    /// Items discarded on the way.
    pub dropped: u64,
    /// Items still held somewhere at the end.
    pub in_flight: u64,
}

impl Ledger {
    /// Checks injected = delivered + dropped + in flight, and that a lossless configuration
    /// dropped nothing.
    pub fn check(&self, lossless: bool) -> Result<(), RunError> {
        self.check_excusing(lossless, 0)
    }

    /// As [`check`](Self::check), a lossless configuration excused the `excused` drops that
    /// no configuration prevents (cells lost with a link that failed).
    pub fn check_excusing(&self, lossless: bool, excused: u64) -> Result<(), RunError> {
        let Ledger {
            injected,
            delivered,
            dropped,
            in_flight,
        } = *self;
        if injected != delivered + dropped + in_flight {
            return Err(RunError::Conservation {
                injected,
                delivered,
                dropped,
                in_flight,
            });
        }
        if lossless && dropped > excused {
            return Err(RunError::LossInLosslessRun(dropped - excused));
        }
        Ok(())
    }
}

/// How fast a run went: everything in a report that depends on the machine.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Perf {
    /// Wall-clock seconds spent simulating.
    pub wall_s: f64,
    /// Events per wall-clock second.
    pub events_per_s: f64,
    /// Simulated seconds per wall-clock second.
    pub sim_s_per_s: f64,
    /// The design's unit of work per wall-clock second (cell-hops for cell fabrics: one cell
    /// crossing one switch), where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_per_s: Option<f64>,
    /// What `work_per_s` counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<&'static str>,
    /// How a run on several threads spent its wall time (absent on one thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadPerf>,
}

/// How the partitions of a run on several threads spent their wall time: the figures a
/// speed-up model for more cores starts from (`docs/performance.md`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThreadPerf {
    /// Partitions, one thread each.
    pub partitions: usize,
    /// Windows of simulated time the partitions ran in lock-step, meeting after each.
    pub windows: u64,
    /// A window's length, the lookahead.
    pub lookahead_ns: f64,
    /// Wall seconds a partition spent running its own events and sending what crossed, on
    /// average; the rest of the run's wall time it waited for the others at the barriers (and
    /// took in what they sent).
    pub busy_s_mean: f64,
    /// The same for the busiest partition.
    pub busy_s_max: f64,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct Report {
    /// Headline numbers: a function of the scenario and seed only.
    pub summary: serde_json::Value,
    /// Named tables, each an object of equally long columns.
    pub tables: serde_json::Value,
    /// Wall-clock figures.
    pub perf: Perf,
}

impl Report {
    /// A report from a design's own summary and tables types.
    pub fn new(summary: &impl Serialize, tables: &impl Serialize, perf: Perf) -> Report {
        Report {
            summary: serde_json::to_value(summary).expect("summaries serialize"),
            tables: serde_json::to_value(tables).expect("tables serialize"),
            perf,
        }
    }
}

impl Clock {
    /// The length of the measured window actually simulated, from the end of warm-up
    /// (`warmup_ps`) to where the run got: its end, or where a partial run (Ctrl-C,
    /// `run.max_cells_in_flight`) stopped. Every rate divides by this, never by the configured
    /// window, so a partial run's rates are those of a full run within noise.
    pub fn measured_ps(&self, warmup_ps: TimePs) -> TimePs {
        self.now_ps.saturating_sub(warmup_ps)
    }

    /// The perf section for a run that did `work` units of `what` (or none).
    pub fn perf(&self, work: Option<(&'static str, u64)>) -> Perf {
        let wall_s = self.wall_s.max(1e-9);
        Perf {
            wall_s: self.wall_s,
            events_per_s: self.events as f64 / wall_s,
            sim_s_per_s: self.now_ps as f64 * 1e-12 / wall_s,
            work_per_s: work.map(|(_, units)| units as f64 / wall_s),
            work: work.map(|(what, _)| what),
            threads: None,
        }
    }
}

/// A design the kernel runs: a [`Model`] that knows when it ends and reports.
pub trait Design: Model {
    /// When the run ends.
    fn end_ps(&self) -> TimePs;
    /// Checks the run's invariants and reports.
    fn report(self, clock: Clock) -> Result<Report, RunError>;
}

/// One run of any design, advanced in steps of simulated time so front ends can show progress.
pub trait Simulation: Send + Sync {
    /// Runs every event due at or before `until_ps` (capped at the end of the run); returns true
    /// once the run is complete (or has stopped on a deadlock).
    fn advance(&mut self, until_ps: TimePs) -> bool;
    /// As [`Simulation::advance`], but returns false once `wall_budget` of wall time has passed:
    /// a step of bounded wall time, so a front end can stop a run of any length promptly.
    fn advance_within(&mut self, until_ps: TimePs, wall_budget: Duration) -> bool;
    /// Current simulated time.
    fn now_ps(&self) -> TimePs;
    /// Simulated time at which the run ends.
    fn end_ps(&self) -> TimePs;
    /// Events processed so far.
    fn events(&self) -> u64;
    /// Sets what the kernel watches besides stalls, before the run starts.
    fn supervise(&mut self, supervision: Supervision);
    /// Checks the run's invariants (conservation, no loss where lossless, no deadlock) and
    /// reports, with the run's stability, its early stop, the measured window it simulated
    /// (`measured_from_ns` to `measured_to_ns`, `partial` when short of the configured end: every
    /// rate describes that window) and the scenario's warnings in the summary.
    fn finish(self: Box<Self>) -> Result<Report, RunError>;
}

impl<D: Design + Send + Sync> Simulation for Kernel<D> {
    fn advance(&mut self, until_ps: TimePs) -> bool {
        Kernel::advance(self, until_ps)
    }

    fn advance_within(&mut self, until_ps: TimePs, wall_budget: Duration) -> bool {
        Kernel::advance_within(self, until_ps, Some(wall_budget))
    }

    fn now_ps(&self) -> TimePs {
        Kernel::now_ps(self)
    }

    fn end_ps(&self) -> TimePs {
        Kernel::end_ps(self)
    }

    fn events(&self) -> u64 {
        Kernel::events(self)
    }

    fn supervise(&mut self, supervision: Supervision) {
        Kernel::supervise(self, supervision)
    }

    fn finish(self: Box<Self>) -> Result<Report, RunError> {
        let stable = self.stable();
        let stopped = self.stopped().map(str::to_owned);
        let warnings = self.warnings().to_vec();
        let (from_ps, to_ps) = self.measured_window_ps();
        let partial = to_ps < self.end_ps();
        let series = self.series().cloned();
        let (model, clock, deadlock) = self.into_parts();
        if let Some(report) = deadlock {
            return Err(RunError::Deadlock(report));
        }
        let mut report = model.report(clock)?;
        if let serde_json::Value::Object(summary) = &mut report.summary {
            summary.insert("stable".into(), stable.into());
            summary.insert("partial".into(), partial.into());
            summary.insert("measured_from_ns".into(), (from_ps as f64 / 1e3).into());
            summary.insert("measured_to_ns".into(), (to_ps as f64 / 1e3).into());
            summary.insert("stopped_early".into(), stopped.into());
            summary.insert("warnings".into(), warnings.into());
        }
        if let (Some(series), serde_json::Value::Object(tables)) = (series, &mut report.tables) {
            let series = serde_json::to_value(series).expect("series serialize");
            tables.insert("time_series".into(), series);
        }
        Ok(report)
    }
}

/// Asserts that `result` failed a balance (the counts of some account do not add up).
#[cfg(test)]
pub(crate) fn assert_conservation_fails<T>(result: Result<T, RunError>) {
    let error = result.err();
    assert!(
        matches!(error, Some(RunError::Conservation { .. })),
        "{error:?}"
    );
}

/// Asserts that `result` failed the account with fewer items held than allocated: `missing`
/// fewer, or any number when `None`.
#[cfg(test)]
pub(crate) fn assert_unaccounted<T>(result: Result<T, RunError>, missing: Option<u64>) {
    match result {
        Err(RunError::Unaccounted { held, allocated }) if allocated > held => {
            assert!(
                missing.is_none_or(|m| allocated - held == m),
                "{held} held, {allocated} allocated"
            );
        }
        other => panic!(
            "expected the account to fail with items held nowhere, got {:?}",
            other.map(|_| ())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_catches_a_lost_or_invented_item_and_loss_where_lossless() {
        let balanced = Ledger {
            injected: 10,
            delivered: 6,
            dropped: 1,
            in_flight: 3,
        };
        assert_eq!(balanced.check(false), Ok(()));
        assert_eq!(balanced.check(true), Err(RunError::LossInLosslessRun(1)));
        let lost = Ledger {
            in_flight: 2,
            ..balanced
        };
        let invented = Ledger {
            delivered: 7,
            ..balanced
        };
        for unbalanced in [lost, invented] {
            let checked = unbalanced.check(false);
            assert!(matches!(checked, Err(RunError::Conservation { .. })));
        }
        // Drops a dead link explains are excused, one more is not.
        assert_eq!(balanced.check_excusing(true, 1), Ok(()));
        let two = Ledger {
            dropped: 2,
            in_flight: 2,
            ..balanced
        };
        assert_eq!(
            two.check_excusing(true, 1),
            Err(RunError::LossInLosslessRun(1))
        );
    }
}
