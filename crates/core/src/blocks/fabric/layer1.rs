//! RIFL Layer 1 as a cable protocol of a fabric (Shen and Chow 2023, §II-A): every frame time both
//! ends of a cable send one frame, bit errors corrupt frames, and a corrupted frame is recovered
//! hop by hop by a retransmission request and a replay of the last round trip of data, during which
//! both ends pause new data ([`Layer1Link`] holds the protocol). Nothing is lost and order is kept;
//! what an error costs is time.
//!
//! The fabric steps every Layer 1 cable once per cell time, at the clock edge and before any
//! node acts at it. A node hands a cell to a cable's end (it waits there for the next frame);
//! the step sends it as new data when the protocol lets that end send, and delivers the cells
//! the far end's receiver accepts onto the receiving node's input, after the sender's fixed
//! pipeline delay. A node asks [`Context::port_ready`](super::Context::port_ready) before
//! handing a cell: a cable pausing for a replay, or still holding a cell, is not ready, so a
//! switch's scheduler leaves that output out.
//!
//! Timing: a cell handed at edge `s` is sent in frame time `s + 1` and acted upon at the far
//! end `latency + 1` frame times later; with `latency` one less than the cable's propagation
//! in frame times, an error-free Layer 1 cable delivers every cell when a plain cable would.

use crate::blocks::bit_errors::FrameErrors;
use crate::blocks::cell::{CellArena, CellId, CellQueue};
use crate::blocks::retransmission::{Layer1Link, SlotInput};
use crate::engine::time::TimePs;

/// Marks a port without a Layer 1 cable.
const NO_CABLE: u32 = u32::MAX;

/// One Layer 1 cable as a fabric is built with it.
pub struct Layer1Spec {
    /// Each end: (node, port).
    pub ends: [(u32, u16); 2],
    /// Whole frame times a frame spends between the end of its transmission and its CRC check
    /// at the far end (the cable's propagation less one frame time; see the module doc).
    pub latency_slots: u32,
    /// Frame errors of each direction (from end 0, from end 1).
    pub errors: [FrameErrors; 2],
    /// Delay each end's cells take after the far end accepts them (the sender's pipeline).
    pub after_ps: [TimePs; 2],
}

/// What the Layer 1 cables of a fabric counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Layer1Counters {
    /// Cables that run Layer 1 (those with bit errors).
    pub cables: u64,
    /// Corrupted frames detected by a receiver (each starts a recovery).
    pub errors_detected: u64,
    /// Data frames sent again in retransmission cycles.
    pub frames_replayed: u64,
    /// Frame times an end could not send new data because of a recovery.
    pub pause_slots: u64,
}

struct Cable {
    link: Layer1Link,
    ends: [(u32, u16); 2],
    /// Cells each end has handed over that wait for a new-data frame.
    waiting: [CellQueue; 2],
    /// Cells each end has sent as new data that the far end has not accepted, in order.
    in_flight: [CellQueue; 2],
    errors: [FrameErrors; 2],
    after_ps: [TimePs; 2],
}

/// The Layer 1 cables of a fabric and which node port is an end of which.
pub(super) struct Layer1 {
    cables: Vec<Cable>,
    /// Per fabric port: `cable · 2 + end`, or [`NO_CABLE`].
    port_end: Vec<u32>,
}

impl Layer1 {
    /// The cables `specs` describes, over fabric ports numbered by `port_index(node, port)`.
    pub(super) fn new(
        specs: Vec<Layer1Spec>,
        ports: usize,
        port_index: impl Fn(usize, usize) -> usize,
    ) -> Self {
        let mut port_end = vec![NO_CABLE; if specs.is_empty() { 0 } else { ports }];
        let cables = specs
            .into_iter()
            .enumerate()
            .map(|(c, spec)| {
                for (end, &(node, port)) in spec.ends.iter().enumerate() {
                    port_end[port_index(node as usize, port as usize)] = (2 * c + end) as u32;
                }
                Cable {
                    link: Layer1Link::new(spec.latency_slots),
                    ends: spec.ends,
                    waiting: Default::default(),
                    in_flight: Default::default(),
                    errors: spec.errors,
                    after_ps: spec.after_ps,
                }
            })
            .collect();
        Layer1 { cables, port_end }
    }

    /// True if the fabric has Layer 1 cables (and must step them).
    pub(super) fn is_used(&self) -> bool {
        !self.cables.is_empty()
    }

    /// The cable and end of fabric port `index`, if it is a Layer 1 cable's.
    fn end_of(&self, index: usize) -> Option<(usize, usize)> {
        let end = *self.port_end.get(index)?;
        (end != NO_CABLE).then_some((end as usize / 2, end as usize % 2))
    }

    /// True if fabric port `index` is an end of a Layer 1 cable.
    pub(super) fn has(&self, index: usize) -> bool {
        self.end_of(index).is_some()
    }

    /// True unless fabric port `index` is a Layer 1 end that is pausing for a recovery or
    /// still holds a cell.
    pub(super) fn is_ready(&self, index: usize) -> bool {
        self.end_of(index).is_none_or(|(c, end)| {
            let cable = &self.cables[c];
            !cable.link.is_paused(end) && cable.waiting[end].is_empty()
        })
    }

    /// Hands `cell` to the Layer 1 end at fabric port `index`; false if the port has none.
    pub(super) fn hand_over(&mut self, index: usize, cell: CellId, cells: &mut CellArena) -> bool {
        let Some((c, end)) = self.end_of(index) else {
            return false;
        };
        cells.push_back(&mut self.cables[c].waiting[end], cell);
        true
    }

    /// Runs one frame time of every cable; pushes each accepted cell to `arrivals` as
    /// (node, port, cell, arrival time), cables in order.
    pub(super) fn step(
        &mut self,
        now_ps: TimePs,
        cells: &mut CellArena,
        arrivals: &mut Vec<(u32, u16, CellId, TimePs)>,
    ) {
        for cable in &mut self.cables {
            let slot = cable.link.slot();
            let input = [0, 1].map(|end| SlotInput {
                has_data: !cable.waiting[end].is_empty(),
                corrupt: cable.errors[end].corrupts(slot),
                xoff: false,
            });
            let output = cable.link.step(input);
            for (end, out) in output.iter().enumerate() {
                if out.sent_new {
                    let cell = cells
                        .pop_front(&mut cable.waiting[end])
                        .expect("new data was waiting");
                    cells.push_back(&mut cable.in_flight[end], cell);
                }
            }
            for (end, out) in output.iter().enumerate() {
                if out.delivered.is_some() {
                    let from = 1 - end;
                    let cell = cells
                        .pop_front(&mut cable.in_flight[from])
                        .expect("an accepted frame was in flight");
                    let (node, port) = cable.ends[end];
                    arrivals.push((node, port, cell, now_ps + cable.after_ps[from]));
                }
            }
        }
    }

    /// Cells the cables hold: waiting for a frame or sent and not yet accepted.
    pub(super) fn cells_held(&self) -> u64 {
        self.cables
            .iter()
            .flat_map(|c| c.waiting.iter().chain(&c.in_flight))
            .map(|q| q.len() as u64)
            .sum()
    }

    /// What the cables counted, both ends of all.
    pub(super) fn counters(&self) -> Layer1Counters {
        let mut total = Layer1Counters {
            cables: self.cables.len() as u64,
            ..Layer1Counters::default()
        };
        for cable in &self.cables {
            for end in 0..2 {
                let c = cable.link.counters(end);
                total.errors_detected += c.errors_detected;
                total.frames_replayed += c.frames_replayed;
                total.pause_slots += c.pause_slots;
            }
        }
        total
    }
}
