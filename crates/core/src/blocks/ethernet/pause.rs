//! PAUSE frames and the pauses they hold, shared by every mechanism that pauses its upstream:
//! PFC's per-class pauses ([`super::ports::pfc`], 802.1Qbb), BFC's per-queue pauses ([`super::ports::bfc`],
//! Goyal et al. 2022 §3.2), the per-flow pauses of Aquarius and of ideal per-flow queues
//! ([`super::ports::aquarius`]: Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow Control with
//! Aquarius", the PAUSE/RESUME frames that carry the flow id), and the hosts' NICs they pause. A
//! frame ([`pause_frame`]) names a [`PauseTarget`] (a class, an upstream queue or a flow) and
//! pauses or resumes it; the paused side keeps a [`ClassPauses`] of one [`PauseClock`] per
//! class or queue, and per-flow pauses in its flow table.

use super::PAUSE;
use crate::blocks::cell::Cell;
use crate::blocks::priority_port::{ClassMask, MAX_CLASSES};
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;

/// Bytes of a PAUSE frame on the wire (a minimum Ethernet frame, 802.1Qbb).
pub const PAUSE_FRAME_BYTES: u16 = 64;

/// What a PAUSE frame names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseTarget {
    /// One priority (traffic class) of the link, as 802.1Qbb.
    Class(u8),
    /// One physical queue of the upstream port (BFC's pause, Goyal et al. 2022 §3.2: the
    /// downstream names the upstream queue the congesting flow occupies).
    Queue(u16),
    /// One flow, by its key ([`flow_key`](super::ports::bfc::flow_key): source, destination
    /// and the receiver's index), as Aquarius' PAUSE/RESUME frames carry the flow id.
    Flow(u64),
}

/// The bit of a frame's `seq` that marks a queue target (a class is below PFC's
/// [`MAX_CLASSES`](super::ports::pfc::MAX_CLASSES)).
const QUEUE_TARGET: u32 = 1 << 31;

/// The bit of a frame's `seq` that marks a flow target (the flow's key rides in the frame's
/// `route_tag`, which a frame that crosses one link never needs for routing).
const FLOW_TARGET: u32 = 1 << 30;

impl PauseTarget {
    /// The target as a frame carries it: its `seq`, and its `route_tag` (a flow's key; 0
    /// otherwise).
    pub fn encode(self) -> (u32, u64) {
        match self {
            PauseTarget::Class(class) => (class as u32, 0),
            PauseTarget::Queue(queue) => (QUEUE_TARGET | queue as u32, 0),
            PauseTarget::Flow(key) => (FLOW_TARGET, key),
        }
    }

    /// The target a frame's `seq` and `route_tag` name.
    pub fn decode(seq: u32, route_tag: u64) -> PauseTarget {
        if seq & QUEUE_TARGET != 0 {
            PauseTarget::Queue(seq as u16)
        } else if seq & FLOW_TARGET != 0 {
            PauseTarget::Flow(route_tag)
        } else {
            PauseTarget::Class(seq as u8)
        }
    }
}

/// A PAUSE (`pause`) or resume frame for `target`, made at `now_ps`.
pub fn pause_frame(target: PauseTarget, pause: bool, now_ps: TimePs) -> Cell {
    let mut c = Cell::new(0, 0, PAUSE_FRAME_BYTES, true, now_ps, now_ps);
    c.flags = PAUSE;
    (c.seq, c.route_tag) = target.encode();
    c.packet = pause as u32;
    c
}

/// What a PAUSE frame says: its target and whether it pauses (else it resumes).
pub fn read_pause_frame(cell: &Cell) -> (PauseTarget, bool) {
    (
        PauseTarget::decode(cell.seq, cell.route_tag),
        cell.packet != 0,
    )
}

/// How long one paused thing (a switch port's class, a host's NIC class) was paused.
#[derive(Clone, Copy, Debug)]
pub struct PauseClock {
    /// Since when it is paused, or `NEVER_PS` if it is not.
    since_ps: TimePs,
    /// Time paused in finished pauses.
    paused_ps: TimePs,
    /// The longest finished pause.
    longest_ps: TimePs,
    /// PAUSE (XOFF) frames received.
    pub pauses: u32,
    /// Resume (XON) frames received.
    pub resumes: u32,
}

impl Default for PauseClock {
    fn default() -> Self {
        PauseClock {
            since_ps: NEVER_PS,
            paused_ps: 0,
            longest_ps: 0,
            pauses: 0,
            resumes: 0,
        }
    }
}

impl PauseClock {
    /// A PAUSE (`pause`) or resume frame arrived at `now_ps`.
    pub fn apply(&mut self, pause: bool, now_ps: TimePs) {
        if pause {
            self.pauses += 1;
            self.since_ps = self.since_ps.min(now_ps);
        } else {
            self.resumes += 1;
            if self.is_paused() {
                let length_ps = now_ps - self.since_ps;
                self.since_ps = NEVER_PS;
                self.paused_ps += length_ps;
                self.longest_ps = self.longest_ps.max(length_ps);
            }
        }
    }

    /// True while paused.
    pub fn is_paused(&self) -> bool {
        self.since_ps != NEVER_PS
    }

    /// Time paused up to `now_ps` and the longest pause so far (an unfinished one counted to
    /// `now_ps`): a pause storm shows as a longest pause of the run's length.
    pub fn totals_ps(&self, now_ps: TimePs) -> (TimePs, TimePs) {
        let open_ps = if self.is_paused() {
            now_ps.saturating_sub(self.since_ps)
        } else {
            0
        };
        (self.paused_ps + open_ps, self.longest_ps.max(open_ps))
    }
}

/// The most targets (classes or queues) one port pauses apart ([`PriorityPort`](crate::blocks::priority_port::PriorityPort)'s limit).
pub const MAX_PAUSE_TARGETS: usize = MAX_CLASSES;

/// The pauses of an upstream port's classes (802.1Qbb: a PAUSE frame names one priority and
/// stops only it) or queues (BFC, Goyal et al. 2022 §3.2), one clock and one pause counter
/// each: a target stays paused while more PAUSE frames than resumes named it (BFC's counter,
/// as several downstream ports may pause one upstream queue; a PFC ingress alternates XOFF
/// and XON, so its class counts 0 or 1). A PFC switch port's, a BFC port's, or a host NIC's.
#[derive(Clone, Debug)]
pub struct ClassPauses {
    clocks: Box<[PauseClock]>,
    /// Per target: PAUSE frames less resume frames received.
    counts: Box<[u32]>,
    /// One bit per paused target.
    paused: ClassMask,
}

impl ClassPauses {
    /// Clocks for `targets` classes or queues (1 to [`MAX_PAUSE_TARGETS`]), none paused.
    pub fn new(targets: usize) -> Self {
        assert!(
            (1..=MAX_PAUSE_TARGETS).contains(&targets),
            "1 to 128 targets"
        );
        ClassPauses {
            clocks: vec![PauseClock::default(); targets].into_boxed_slice(),
            counts: vec![0; targets].into_boxed_slice(),
            paused: 0,
        }
    }

    /// A PAUSE (`pause`) or resume frame for class or queue `target` arrived at `now_ps`.
    pub fn apply(&mut self, target: u16, pause: bool, now_ps: TimePs) {
        let (i, bit) = (target as usize, (1 as ClassMask) << target);
        let count = &mut self.counts[i];
        *count = if pause {
            *count + 1
        } else {
            count.saturating_sub(1)
        };
        let clock = &mut self.clocks[i];
        if pause || *count == 0 {
            clock.apply(pause, now_ps);
        } else {
            clock.resumes += 1;
        }
        self.paused = if *count > 0 {
            self.paused | bit
        } else {
            self.paused & !bit
        };
    }

    /// True while class or queue `target` is paused.
    pub fn is_paused(&self, target: u16) -> bool {
        self.paused & (1 << target) != 0
    }

    /// True while any class or queue is paused.
    pub fn any_paused(&self) -> bool {
        self.paused != 0
    }

    /// One bit per paused class or queue.
    pub fn paused_mask(&self) -> ClassMask {
        self.paused
    }

    /// Class or queue `target`'s clock.
    pub fn class(&self, target: usize) -> &PauseClock {
        &self.clocks[target]
    }

    /// Classes or queues.
    pub fn classes(&self) -> usize {
        self.clocks.len()
    }

    /// PAUSE (XOFF) frames received, every class or queue.
    pub fn pauses(&self) -> u32 {
        self.clocks.iter().map(|c| c.pauses).sum()
    }

    /// Time paused up to `now_ps` summed over classes or queues, and the longest pause of any.
    pub fn totals_ps(&self, now_ps: TimePs) -> (TimePs, TimePs) {
        self.clocks.iter().fold((0, 0), |(sum, longest), c| {
            let (paused, long) = c.totals_ps(now_ps);
            (sum + paused, longest.max(long))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A class travels as its number, as before queues were named; a queue and a flow (its whole
    /// key) are told apart.
    #[test]
    fn a_frame_names_a_class_or_a_queue() {
        assert_eq!(PauseTarget::Class(3).encode(), (3, 0));
        for target in [
            PauseTarget::Class(7),
            PauseTarget::Queue(0),
            PauseTarget::Queue(63),
            PauseTarget::Flow(0),
            PauseTarget::Flow(u64::MAX),
        ] {
            let frame = pause_frame(target, true, 0);
            assert_eq!(read_pause_frame(&frame), (target, true));
        }
    }

    #[test]
    fn a_pause_clock_counts_open_and_finished_pauses() {
        let mut clock = PauseClock::default();
        clock.apply(true, 100);
        clock.apply(true, 150); // a refresh: the pause goes on
        clock.apply(false, 300);
        clock.apply(true, 1_000);
        assert!(clock.is_paused());
        assert_eq!(clock.totals_ps(1_500), (700, 500));
        assert_eq!((clock.pauses, clock.resumes), (3, 1));
    }
}
