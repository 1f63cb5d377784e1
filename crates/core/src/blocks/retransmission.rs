//! RIFL Layer 1 (Shen and Chow 2023, §II-A, Fig. 1): a full-duplex point-to-point link of
//! fixed-size frames that corrects bit errors hop by hop with retransmission requests (NAKs) and
//! replay, and carries checksum-protected ON/OFF flow control. No acknowledgement is sent while
//! there are no errors.
//!
//! The model is cycle-accurate in frame times. Both ends send one frame per frame time; a frame
//! sent in slot `s` has its CRC checked at the far end, and is acted upon there, in slot
//! `s + latency_slots + 1`. One round trip (`RTT`) is therefore `2 × (latency_slots + 1)` slots:
//! the time from sending a frame to acting on the far end's reaction to it.
//!
//! A frame `A` sends that `B` receives corrupted is corrected as the paper's steps 1–5 describe:
//! 1. `t1`: A sends the frame. `t2 = t1 + RTT/2`: B's CRC check fails. B stops sending new data
//!    and sets the retransmission-request flag on every frame it sends; it discards data frames
//!    until the missing one arrives.
//! 2. `t3 = t2 + RTT/2`: A sees the request, stops new data and runs a retransmission cycle of
//!    2.5 RTT: one RTT replaying, in order, the data frames it sent in the last RTT (the corrupted
//!    one first), then 1.5 RTT of control frames, long enough for B's answer to the last replayed
//!    frame to be back at A.
//! 3. `t4 = t3 + RTT/2`: the replayed frame reaches B, which accepts it and stops requesting. B
//!    resumes new data 2.5 RTT after it stopped (the paper: "both nodes will pause the
//!    transmission of normal data for approximately 2.5 RTT").
//! 4. `t5 = t3 + 2.5 RTT`: if the frame A receives still requests, A runs another cycle;
//!    otherwise it resumes new data. Error to correction is `t5 − t1 = 3.5 RTT`.
//!
//! Errors in both directions at once need nothing more: the request flag rides on every frame
//! (data, replay or control), a requesting end that is asked to replay does both, and any
//! corrupted frame stops its receiver's new data, so a sender never runs more than one RTT of new
//! data past a frame its peer is missing — exactly what the replay buffer holds.
//!
//! ON/OFF flow control is level-coded: every frame carries its sender's receive-buffer state, and
//! a frame whose CRC fails is ignored as a whole, so a command is never misread, and a lost one
//! is repeated by the next frame. Replayed frames are exempt (they were admitted when first sent).
//!
//! Data frames are numbered in the model, and control frames carry their sender's count of data
//! frames. The receiver uses the numbers as the hardware uses its frame count: to skip the
//! replayed frames it already holds, and to stop asking when a control frame shows that it holds
//! every frame sent (a corrupted control frame, or a corrupted replay of a frame it already had,
//! leaves nothing to retransmit).

use std::collections::VecDeque;

use crate::run::Ledger;

/// What occupies one frame slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum FrameKind {
    /// An idle or control frame: no data.
    #[default]
    Control,
    /// A data frame sent for the first time.
    New,
    /// A data frame sent again by a retransmission cycle.
    Replay,
}

/// One frame on the wire.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    kind: FrameKind,
    /// Sequence number of a data frame; the sender's count of data frames in a control frame.
    seq: u64,
    /// The sender asks its peer to retransmit.
    request: bool,
    /// The sender's receive buffer is full: the peer must not send new data.
    xoff: bool,
    /// The frame's CRC will fail at the far end.
    corrupt: bool,
}

impl Frame {
    /// True for a frame that tells the far end nothing but "next data frame, all is well".
    fn is_plain(&self) -> bool {
        self.kind == FrameKind::New && !(self.request || self.xoff || self.corrupt)
    }

    /// True for a frame that is part of correcting an error.
    fn is_recovery(&self) -> bool {
        self.corrupt || self.request || self.kind == FrameKind::Replay
    }
}

/// Counters of one end of the link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndCounters {
    /// Data frames sent for the first time.
    pub frames_new: u64,
    /// Data frames sent again by retransmission cycles.
    pub frames_replayed: u64,
    /// Retransmission cycles run (one per request seen, plus restarts).
    pub cycles: u64,
    /// Corrupted frames received (CRC failures).
    pub errors_detected: u64,
    /// Slots this end could not send new data because of the retransmission process
    /// (requesting or running a cycle).
    pub pause_slots: u64,
    /// Data frames delivered in order to the layer above.
    pub frames_delivered: u64,
    /// Replayed frames discarded because they had been delivered already.
    pub duplicates_discarded: u64,
    /// Data frames discarded while waiting for a missing one (they come again in the replay).
    pub out_of_order_discarded: u64,
    /// Data frames that arrived past a gap the receiver did not know of: a protocol failure
    /// (always zero).
    pub frames_lost: u64,
}

/// What one end is asked to do in one slot.
#[derive(Clone, Copy, Debug, Default)]
pub struct SlotInput {
    /// The layer above has a new data frame ready to send.
    pub has_data: bool,
    /// The frame this end sends this slot is corrupted on the wire.
    pub corrupt: bool,
    /// This end's receive buffer asks the peer to stop new data.
    pub xoff: bool,
}

/// What happened at one end in one slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotOutput {
    /// The sequence number of the data frame delivered to the layer above, if any.
    pub delivered: Option<u64>,
    /// This end took a new data frame from the layer above and sent it.
    pub sent_new: bool,
    /// This end sent a control frame that is no part of correcting an error and reaches the
    /// far end intact: a slot a flow-control frame can take.
    pub sent_free_control: bool,
}

/// One end: a transmitter with its replay window and a receiver.
#[derive(Clone, Debug, Default)]
struct End {
    /// Sequence number of the next new data frame.
    next_seq: u64,
    /// Position in the current retransmission cycle.
    cycle_slot: Option<u32>,
    /// The receiver is missing a frame and asks for a replay.
    requesting: bool,
    /// Slot at which the current pause of new data began.
    pause_start: Option<u64>,
    /// Sequence number the receiver delivers next.
    expected_seq: u64,
    /// The peer's last known receive-buffer state.
    peer_xoff: bool,
    /// The frame received this slot asked for a replay.
    request_seen: bool,
    counters: EndCounters,
}

/// A full-duplex RIFL Layer 1 link between end 0 and end 1.
#[derive(Clone, Debug)]
pub struct Layer1Link {
    latency_slots: u32,
    rtt_slots: u32,
    cycle_slots: u32,
    /// Minimum pause of new data after an error, at either end.
    pause_min_slots: u32,
    ends: [End; 2],
    /// Frames in flight from end `i` to the other end, oldest first.
    lines: [VecDeque<Frame>; 2],
    /// Frames in flight in each line that are not plain new data.
    unplain: [u32; 2],
    /// Frames in flight in each line that are part of correcting an error.
    recovery_in_flight: [u32; 2],
    slot: u64,
}

impl Layer1Link {
    /// A link whose frames spend `latency_slots` whole frame times between the end of their
    /// transmission and their CRC check at the far end (propagation and fixed pipeline latency).
    pub fn new(latency_slots: u32) -> Self {
        let rtt_slots = 2 * (latency_slots + 1);
        let control_slots = (3 * rtt_slots).div_ceil(2);
        let line = |_| {
            let mut line = VecDeque::with_capacity(latency_slots as usize + 2);
            line.extend((0..=latency_slots).map(|_| Frame::default()));
            line
        };
        Layer1Link {
            latency_slots,
            rtt_slots,
            cycle_slots: rtt_slots + control_slots,
            pause_min_slots: (5 * rtt_slots).div_ceil(2),
            ends: Default::default(),
            lines: [line(0), line(1)],
            unplain: [latency_slots + 1; 2],
            recovery_in_flight: [0; 2],
            slot: 0,
        }
    }

    /// One round trip in frame times.
    pub fn rtt_slots(&self) -> u32 {
        self.rtt_slots
    }

    /// One-way latency in frame times, beyond the frame's own transmission.
    pub fn latency_slots(&self) -> u32 {
        self.latency_slots
    }

    /// Length of one retransmission cycle (2.5 RTT) in frame times.
    pub fn cycle_slots(&self) -> u32 {
        self.cycle_slots
    }

    /// Slots simulated so far.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// Counters of end `end` (0 or 1).
    pub fn counters(&self, end: usize) -> &EndCounters {
        &self.ends[end].counters
    }

    /// Data frames end `end` has sent that its peer has not delivered yet, counted where they
    /// are: in `end`'s replay buffer, which holds its last RTT of data frames (the frames a
    /// retransmission cycle replays). A frame that left the buffer undelivered can never
    /// arrive and is in no count, so [`Layer1Link::ledger`] no longer balances.
    pub fn frames_held(&self, end: usize) -> u64 {
        let sender = &self.ends[end];
        let oldest_replayable = sender.next_seq.saturating_sub(self.rtt_slots as u64);
        sender.next_seq - self.ends[1 - end].expected_seq.max(oldest_replayable)
    }

    /// The account of the data frames end `end` sent: sent = delivered by its peer + held in
    /// its replay buffer. Layer 1 drops nothing.
    pub fn ledger(&self, end: usize) -> Ledger {
        Ledger {
            injected: self.ends[end].counters.frames_new,
            delivered: self.ends[1 - end].counters.frames_delivered,
            dropped: 0,
            in_flight: self.frames_held(end),
        }
    }

    /// True while end `end` may not send new data because of the retransmission process.
    pub fn is_paused(&self, end: usize) -> bool {
        self.ends[end].pause_start.is_some()
    }

    /// True while an error is being corrected: an end is paused, or a corrupted, requesting or
    /// replayed frame is in flight.
    pub fn is_recovering(&self) -> bool {
        self.recovery_in_flight != [0, 0] || self.is_paused(0) || self.is_paused(1)
    }

    /// True when nothing but plain new data is in flight and neither end is recovering from
    /// an error: the state [`Layer1Link::skip_saturated`] can fast-forward.
    pub fn is_quiet(&self) -> bool {
        self.unplain == [0, 0]
            && self
                .ends
                .iter()
                .all(|e| e.pause_start.is_none() && !e.peer_xoff && !e.request_seen)
    }

    /// Advances `slots` error-free slots in which both ends always have data and neither
    /// receiver asks to stop. The link must be quiet.
    pub fn skip_saturated(&mut self, slots: u64) {
        debug_assert!(
            self.is_quiet(),
            "skip_saturated on a link that is not quiet"
        );
        for (end, line) in self.ends.iter_mut().zip(&mut self.lines) {
            for frame in line.iter_mut() {
                frame.seq += slots;
            }
            end.next_seq += slots;
            end.counters.frames_new += slots;
        }
        for end in &mut self.ends {
            end.expected_seq += slots;
            end.counters.frames_delivered += slots;
        }
        self.slot += slots;
    }

    /// Runs one slot: both ends receive the frame due, then both send one.
    pub fn step(&mut self, input: [SlotInput; 2]) -> [SlotOutput; 2] {
        let mut output = [SlotOutput::default(); 2];
        for (end, out) in output.iter_mut().enumerate() {
            let frame = self.lines[1 - end]
                .pop_front()
                .expect("a line is never empty");
            if !frame.is_plain() {
                self.unplain[1 - end] -= 1;
            }
            if frame.is_recovery() {
                self.recovery_in_flight[1 - end] -= 1;
            }
            out.delivered = self.ends[end].receive(frame);
        }
        for (end, out) in output.iter_mut().enumerate() {
            let frame = self.transmit(end, input[end]);
            out.sent_new = frame.kind == FrameKind::New;
            out.sent_free_control = frame.kind == FrameKind::Control && !frame.is_recovery();
            if !frame.is_plain() {
                self.unplain[end] += 1;
            }
            if frame.is_recovery() {
                self.recovery_in_flight[end] += 1;
            }
            self.lines[end].push_back(frame);
        }
        self.slot += 1;
        output
    }

    fn transmit(&mut self, end: usize, input: SlotInput) -> Frame {
        let (rtt, cycle_len, pause_min, now) = (
            self.rtt_slots,
            self.cycle_slots,
            self.pause_min_slots as u64,
            self.slot,
        );
        let e = &mut self.ends[end];
        let cycle_due = match e.cycle_slot {
            None => e.request_seen,
            Some(position) => position == cycle_len && e.request_seen,
        };
        if cycle_due {
            e.cycle_slot = Some(0);
            e.counters.cycles += 1;
        } else if e.cycle_slot == Some(cycle_len) {
            e.cycle_slot = None;
        }
        let recovering = e.requesting || e.cycle_slot.is_some();
        match e.pause_start {
            None if recovering => e.pause_start = Some(now),
            Some(start) if !recovering && now - start >= pause_min => e.pause_start = None,
            _ => {}
        }
        let mut frame = Frame {
            seq: e.next_seq,
            request: e.requesting,
            xoff: input.xoff,
            corrupt: input.corrupt,
            ..Frame::default()
        };
        if let Some(position) = e.cycle_slot {
            let seq = e.next_seq.saturating_sub(rtt as u64) + position as u64;
            if position < rtt && seq < e.next_seq {
                frame.kind = FrameKind::Replay;
                frame.seq = seq;
                e.counters.frames_replayed += 1;
            }
            e.cycle_slot = Some(position + 1);
        } else if e.pause_start.is_none() && input.has_data && !e.peer_xoff {
            frame.kind = FrameKind::New;
            frame.seq = e.next_seq;
            e.next_seq += 1;
            e.counters.frames_new += 1;
        }
        if e.pause_start.is_some() {
            e.counters.pause_slots += 1;
        }
        frame
    }
}

impl End {
    fn receive(&mut self, frame: Frame) -> Option<u64> {
        if frame.corrupt {
            if !self.requesting {
                self.requesting = true;
                self.counters.errors_detected += 1;
            }
            self.request_seen = false;
            return None;
        }
        self.peer_xoff = frame.xoff;
        self.request_seen = frame.request;
        if frame.kind == FrameKind::Control {
            // A control frame carries its sender's frame count: a receiver that holds every
            // frame counted has nothing left to ask for (it may have requested on a corrupted
            // control frame, or on a replayed frame it already had).
            if frame.seq == self.expected_seq {
                self.requesting = false;
            } else if !self.requesting {
                self.counters.frames_lost += 1;
            }
            return None;
        }
        if frame.seq == self.expected_seq {
            self.expected_seq += 1;
            self.requesting = false;
            self.counters.frames_delivered += 1;
            Some(frame.seq)
        } else if frame.seq < self.expected_seq {
            self.counters.duplicates_discarded += 1;
            None
        } else {
            if self.requesting {
                self.counters.out_of_order_discarded += 1;
            } else {
                self.counters.frames_lost += 1;
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saturated(corrupt: [bool; 2]) -> [SlotInput; 2] {
        corrupt.map(|corrupt| SlotInput {
            has_data: true,
            corrupt,
            xoff: false,
        })
    }

    /// Runs `slots` saturated slots, corrupting the frame end `e` sends at each slot listed for
    /// it; returns the slots at which each end resumed new data after a pause.
    fn run(link: &mut Layer1Link, slots: u64, errors: &[(usize, u64)]) -> [Vec<u64>; 2] {
        let mut resumed = [Vec::new(), Vec::new()];
        let mut was_paused = [false; 2];
        for _ in 0..slots {
            let now = link.slot();
            let corrupt = [0, 1].map(|e| errors.contains(&(e, now)));
            link.step(saturated(corrupt));
            for (e, resumes) in resumed.iter_mut().enumerate() {
                if was_paused[e] && !link.is_paused(e) {
                    resumes.push(now);
                }
                was_paused[e] = link.is_paused(e);
            }
        }
        resumed
    }

    #[test]
    fn no_errors_means_no_requests_and_full_goodput() {
        let mut link = Layer1Link::new(5);
        run(&mut link, 10_000, &[]);
        for e in 0..2 {
            let c = link.counters(e);
            assert_eq!(c.cycles, 0);
            assert_eq!(c.frames_replayed, 0);
            assert_eq!(c.pause_slots, 0);
            assert_eq!(c.frames_new, 10_000);
            assert_eq!(c.frames_delivered, 10_000 - 6);
        }
    }

    #[test]
    fn one_error_pauses_both_ends_two_and_a_half_round_trips() {
        let mut link = Layer1Link::new(9);
        let rtt = link.rtt_slots() as u64;
        assert_eq!(rtt, 20);
        let t1 = 1_000;
        let resumed = run(&mut link, 3_000, &[(0, t1)]);
        let (t2, t3) = (t1 + rtt / 2, t1 + rtt);
        // The replaying end pauses from t3 for a 2.5 RTT cycle: error to correction 3.5 RTT.
        assert_eq!(resumed[0], vec![t3 + 5 * rtt / 2]);
        assert_eq!(resumed[0][0] - t1, 7 * rtt / 2);
        // The requesting end pauses from t2 for 2.5 RTT.
        assert_eq!(resumed[1], vec![t2 + 5 * rtt / 2]);
        assert_eq!(link.counters(0).cycles, 1);
        assert_eq!(link.counters(0).frames_replayed, rtt);
        assert_eq!(link.counters(0).pause_slots, 5 * rtt / 2);
        assert_eq!(link.counters(1).pause_slots, 5 * rtt / 2);
        assert_eq!(link.counters(1).errors_detected, 1);
        // The replay brings the lost frame and the RTT − 1 frames sent after it: nothing is a
        // duplicate, nothing is lost.
        assert_eq!(link.counters(1).duplicates_discarded, 0);
        assert_eq!(link.counters(1).out_of_order_discarded, rtt - 1);
        assert_eq!(link.counters(1).frames_lost, 0);
    }

    /// Breaks the protocol on purpose: a data frame vanishes from the wire without a CRC error,
    /// so its receiver never asks for it and it leaves its sender's replay buffer undelivered.
    /// The account, which counts frames where they are, must stop balancing.
    #[test]
    fn a_frame_lost_outside_the_protocol_breaks_the_account() {
        let mut link = Layer1Link::new(2);
        let busy = [SlotInput {
            has_data: true,
            ..SlotInput::default()
        }; 2];
        for _ in 0..20 {
            link.step(busy);
        }
        assert_eq!(link.ledger(0).check(true), Ok(()));
        let vanished = link.lines[0]
            .iter_mut()
            .find(|f| f.kind == FrameKind::New)
            .expect("data on the wire");
        vanished.kind = FrameKind::Control;
        vanished.seq = u64::MAX; // never a frame count the receiver agrees with
        link.unplain[0] += 1; // the line's own count of frames that are not plain data
        for _ in 0..3 * link.rtt_slots() {
            link.step(busy);
        }
        crate::run::assert_conservation_fails(link.ledger(0).check(true));
        assert_eq!(
            link.ledger(1).check(true),
            Ok(()),
            "the other direction is whole"
        );
    }

    #[test]
    fn a_corrupted_replay_runs_another_cycle() {
        let mut link = Layer1Link::new(4);
        let rtt = link.rtt_slots() as u64;
        let t1 = 500;
        // The first replayed frame (sent at t3 = t1 + RTT) is corrupted too.
        run(&mut link, 2_000, &[(0, t1), (0, t1 + rtt)]);
        assert_eq!(link.counters(0).cycles, 2);
        assert_eq!(link.counters(1).frames_lost, 0);
        assert_eq!(link.frames_held(0), link.latency_slots() as u64 + 1);
    }

    #[test]
    fn skipping_a_quiet_link_matches_stepping_it() {
        let mut stepped = Layer1Link::new(7);
        let mut skipped = stepped.clone();
        run(&mut stepped, 300, &[(1, 40)]);
        run(&mut skipped, 200, &[(1, 40)]);
        assert!(skipped.is_quiet());
        skipped.skip_saturated(100);
        assert_eq!(stepped.counters(0), skipped.counters(0));
        assert_eq!(stepped.counters(1), skipped.counters(1));
        let a = run(&mut stepped, 100, &[(0, 320)]);
        let b = run(&mut skipped, 100, &[(0, 320)]);
        assert_eq!(a, b);
        assert_eq!(stepped.counters(1), skipped.counters(1));
    }

    #[test]
    fn flow_control_stops_new_data_within_a_round_trip() {
        let mut link = Layer1Link::new(3);
        let rtt = link.rtt_slots() as u64;
        let input = |xoff| SlotInput {
            has_data: true,
            corrupt: false,
            xoff,
        };
        for _ in 0..50 {
            link.step([input(false), input(true)]);
        }
        let sent = link.counters(0).frames_new;
        assert!(sent <= rtt, "sent {sent} frames after XOFF, RTT is {rtt}");
        for _ in 0..50 {
            link.step([input(false), input(false)]);
        }
        assert!(link.counters(0).frames_new > sent + 40);
    }
}
