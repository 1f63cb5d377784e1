//! The one kernel loop every design runs on: pop the next event, hand it to the model, watch for
//! a stall. A model owns its event queue and state; the kernel owns time, the event count, the
//! wall clock and deadlock detection.
//!
//! A stall is a model holding work (cells, packets in flight) that makes no progress for
//! [`Model::stall_ps`] of simulated time, or holding work with no event left to run. Either stops
//! the run with the model's own description of what is stuck.

use std::time::{Duration, Instant};

use super::queue::{CalendarQueue, EventQueue};
use super::time::TimePs;

/// A model of a system: its events, what it does with them, and how to tell it is stuck.
pub trait Model {
    /// The messages its components exchange; small and `Copy`.
    type Event: Copy;
    /// Its pending events.
    fn queue(&mut self) -> &mut CalendarQueue<Self::Event>;
    /// Handles one event due at `now_ps`.
    fn handle(&mut self, now_ps: TimePs, event: Self::Event);
    /// A count that grows whenever work moves (an item delivered, forwarded or dropped).
    fn progress(&self) -> u64;
    /// Work items the model holds (0: an idle model is not stuck).
    fn in_flight(&self) -> u64;
    /// Simulated time without progress, while holding work, after which the model is stuck.
    fn stall_ps(&self) -> TimePs;
    /// What is stuck, for the deadlock report.
    fn stall_report(&self) -> String;
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
}

impl<M: Model> Kernel<M> {
    /// A run of `model` ending at `end_ps`.
    pub fn new(model: M, end_ps: TimePs) -> Self {
        let check_at_ps = model.stall_ps();
        Kernel {
            model,
            now_ps: 0,
            end_ps,
            events: 0,
            wall: Duration::ZERO,
            progress_seen: 0,
            check_at_ps,
            deadlock: None,
        }
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

    /// Runs every event due at or before `until_ps` (capped at the end of the run); returns true
    /// once the run is complete or stuck.
    pub fn advance(&mut self, until_ps: TimePs) -> bool {
        if self.deadlock.is_some() {
            return true;
        }
        let limit_ps = until_ps.min(self.end_ps);
        let started = Instant::now();
        while let Some((time_ps, event)) = self.model.queue().pop_until(limit_ps) {
            if time_ps >= self.check_at_ps && self.stalled(time_ps) {
                break;
            }
            self.now_ps = time_ps;
            self.events += 1;
            self.model.handle(time_ps, event);
        }
        if self.deadlock.is_none() {
            if self.model.queue().is_empty() && self.model.in_flight() > 0 {
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
        limit_ps == self.end_ps || self.deadlock.is_some()
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

    impl Model for Ring {
        type Event = u32;
        fn queue(&mut self) -> &mut CalendarQueue<u32> {
            &mut self.queue
        }
        fn handle(&mut self, now_ps: TimePs, node: u32) {
            if now_ps < self.jam_ps {
                self.hops += 1;
            }
            self.queue
                .push(now_ps + 10, Phase::Message, node, (node + 1) % 4);
        }
        fn progress(&self) -> u64 {
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
