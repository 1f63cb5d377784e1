//! The kernel's view of a design built on one `Fabric`: every hook that only forwards to the
//! fabric (its queue, its events, its moves and its cells in flight) is written once here, so a
//! design states only what is its own (what counts as delivered, when it is stuck, what it samples).

use std::time::Instant;

use super::{Event, Fabric, Node};
use crate::blocks::routing::Router;
use crate::engine::kernel::{run_events, Events, Model, Steps};
use crate::engine::queue::{CalendarQueue, EventQueue};
use crate::engine::time::TimePs;

/// A design whose components all live in one `Fabric`; the kernel runs it through the blanket
/// `Model` implementation below.
pub trait FabricModel {
    /// The design's node (its devices, one enum).
    type Node: Node<Self::Router>;
    /// The design's router.
    type Router: Router;
    /// The fabric the design runs on.
    fn fabric(&self) -> &Fabric<Self::Node, Self::Router>;
    /// The fabric, to step.
    fn fabric_mut(&mut self) -> &mut Fabric<Self::Node, Self::Router>;
    /// Work items delivered so far; by default the cells the fabric delivered.
    fn items_delivered(&self) -> u64 {
        self.fabric().metrics().cells_delivered
    }
    /// Work the design holds that is not yet a cell in the fabric (packets waiting at hosts
    /// before they are cut into cells), counted with the cells in the backlog that decides
    /// whether a run is stable and in the limit on work held; by default none.
    fn held_outside_cells(&self) -> u64 {
        0
    }
    /// Simulated time without progress, while holding work, after which the design is stuck.
    fn stuck_after_ps(&self) -> TimePs;
    /// What is stuck, for the deadlock report.
    fn stuck_report(&self) -> String;
    /// Samples the design's own series at `at_ps` (see `Model::sample`); by default nothing.
    fn sample_own(&mut self, _at_ps: TimePs) {}
    /// Takes into this partition of a run on several threads what partition `other` ran (see
    /// [`Fabric::absorb`]), and the design's own records of it; by default only the fabric's.
    fn absorb_partition(&mut self, other: &mut Self)
    where
        Self: Sized,
    {
        self.fabric_mut().absorb(other.fabric_mut());
    }
}

impl<N: Node<R>, R: Router> Events for Fabric<N, R> {
    type Event = Event;

    fn queue(&mut self) -> &mut CalendarQueue<Event> {
        Fabric::queue(self)
    }

    fn handle(&mut self, now_ps: TimePs, event: Event) -> bool {
        self.dispatch(now_ps, event)
    }
}

impl<T: FabricModel> Model for T {
    fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
        run_events(self.fabric_mut(), limit_ps, deadline)
    }

    fn is_idle(&mut self) -> bool {
        self.fabric_mut().queue().is_empty()
    }

    fn progress(&self) -> u64 {
        self.fabric().metrics().moves
    }

    fn in_flight(&self) -> u64 {
        self.fabric().cells_live() + self.held_outside_cells()
    }

    fn delivered(&self) -> u64 {
        self.items_delivered()
    }

    fn stall_ps(&self) -> TimePs {
        self.stuck_after_ps()
    }

    fn stall_report(&self) -> String {
        self.stuck_report()
    }

    fn sample(&mut self, at_ps: TimePs) {
        self.sample_own(at_ps);
    }
}
