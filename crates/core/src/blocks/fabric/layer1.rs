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
//!
//! Flow control travels in band, as RIFL Layer 2's per-VOQ flow-control frames (Shen and Chow
//! 2023, §IV-D, Fig. 4): a node's ON/OFF signal on a Layer 1 port waits at the cable's end for
//! a frame time of its own, in which the end sends a flow-control frame instead of data (the
//! data waits), carrying at most one channel turned ON and one turned OFF. The frame is
//! checked by the CRC like any other: one that is corrupted, or a frame time taken by a
//! retransmission, leaves the signals waiting for the next free frame time, so none is
//! missed. It acts at the far end one propagation delay after its frame time.
//!
//! Frame size (§II-A: "frame sizes ranging from 8 bytes to 256 bytes, ... a power of two",
//! each frame with a two-byte header): by default a cable's frame is one cell. With a
//! [`Framing`] the cable sends frames of its own size, as many as fit before each clock edge,
//! and carries cells as a byte stream in them: each frame holds its size less the two-byte
//! header of a cell's bytes, a cell may end in the middle of a frame and the next begin there,
//! and a frame sent with no cell waiting behind is sent part empty (its valid-byte count says
//! so). A cell reaches the far end with the frame that carries its last byte. Bit errors,
//! replays and flow-control frames all work in these frames.

use std::collections::VecDeque;

use crate::blocks::bit_errors::FrameErrors;
use crate::blocks::cell::{CellArena, CellId, CellQueue};
use crate::blocks::flow_control::FlowSignal;
use crate::blocks::retransmission::{Layer1Link, SlotInput};
use crate::engine::time::TimePs;

/// Marks a port without a Layer 1 cable.
const NO_CABLE: u32 = u32::MAX;

/// Bytes of a Layer 1 frame's own header (sync word, meta and verification codes, §II-A).
pub const LAYER1_HEADER_BYTES: u32 = 2;

/// Layer 1 frames of their own size, carrying cells as a byte stream (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framing {
    /// Wire time of one frame.
    pub frame_ps: TimePs,
    /// Bytes of cells one frame carries: the frame less its header.
    pub payload_bytes: u32,
    /// Bytes one cell takes in the stream: the cell on the wire less the frame header its
    /// 8 bytes of header already count.
    pub cell_bytes: u32,
}

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
    /// ON/OFF travels in flow-control frames (RIFL §IV-D), else out of band.
    pub in_band_flow_control: bool,
    /// Frames of their own size (`latency_slots` then counts them); `None`: a frame is a cell.
    pub framing: Option<Framing>,
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
    /// Flow-control frames that reached the far end intact (each took a frame time from data).
    pub flow_control_frames: u64,
    /// Frame times a flow-control signal waited at its end for a free frame (one per signal
    /// waiting, per frame time).
    pub flow_control_wait_slots: u64,
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
    /// The cable's propagation delay: latency + 1 frame times.
    propagation_ps: TimePs,
    /// ON/OFF travels in flow-control frames, else out of band (not through the cable).
    in_band_flow_control: bool,
    /// Flow-control signals each end's node has sent that wait for a flow-control frame.
    signals: [VecDeque<FlowSignal>; 2],
    /// Flow-control frames each end sent intact.
    flow_control_frames: [u64; 2],
    /// Frame times, summed over signals, that signals waited at each end.
    flow_control_wait_slots: [u64; 2],
    /// Frames of the cable's own size, or `None` (a frame is a cell).
    framing: Option<Framing>,
    /// Wire time of one frame.
    frame_ps: TimePs,
    /// With framing: bytes of each end's first waiting cell already sent.
    head_sent_bytes: [u32; 2],
    /// With framing: per cell in flight, the count of new-data frames its end had sent when
    /// its last byte went (it arrives once the far end has that many).
    completes_at: [VecDeque<u64>; 2],
}

impl Cable {
    /// Runs one frame time: sends what each end may, carries flow-control frames, and hands
    /// over the cells the far ends accept.
    fn step_frame(
        &mut self,
        cells: &mut CellArena,
        arrivals: &mut Vec<(u32, u16, CellId, TimePs)>,
        signals: &mut Vec<(u32, u16, FlowSignal, TimePs)>,
    ) {
        let slot = self.link.slot();
        let at_ps = slot * self.frame_ps;
        let input = [0, 1].map(|end| SlotInput {
            has_data: !self.waiting[end].is_empty() && self.signals[end].is_empty(),
            corrupt: self.errors[end].corrupts(slot),
            xoff: false,
        });
        let output = self.link.step(input);
        for (end, out) in output.iter().enumerate() {
            let waiting = self.signals[end].len() as u64;
            if waiting == 0 {
                continue;
            }
            self.flow_control_wait_slots[end] += waiting;
            if out.sent_free_control {
                self.flow_control_frames[end] += 1;
                let (node, port) = self.ends[1 - end];
                let arrive_ps = at_ps + self.propagation_ps;
                for signal in next_frame(&mut self.signals[end]).into_iter().flatten() {
                    signals.push((node, port, signal, arrive_ps));
                }
            }
        }
        for (end, out) in output.iter().enumerate() {
            if out.sent_new {
                self.send_new(end, cells);
            }
        }
        for (end, out) in output.iter().enumerate() {
            if out.delivered.is_some() {
                self.accept(end, at_ps, cells, arrivals);
            }
        }
    }

    /// End `end` sent a new data frame: the cell it carried whole, or, with framing, the
    /// waiting cells' next bytes, as many as the frame holds.
    fn send_new(&mut self, end: usize, cells: &mut CellArena) {
        let Some(framing) = self.framing else {
            let cell = cells
                .pop_front(&mut self.waiting[end])
                .expect("new data was waiting");
            cells.push_back(&mut self.in_flight[end], cell);
            return;
        };
        let frame = self.link.counters(end).frames_new;
        let mut room = framing.payload_bytes;
        while !self.waiting[end].is_empty() {
            let left = framing.cell_bytes - self.head_sent_bytes[end];
            if left > room {
                self.head_sent_bytes[end] += room;
                return;
            }
            room -= left;
            self.head_sent_bytes[end] = 0;
            let cell = cells.pop_front(&mut self.waiting[end]).expect("waiting");
            cells.push_back(&mut self.in_flight[end], cell);
            self.completes_at[end].push_back(frame);
        }
    }

    /// End `end` accepted a data frame in frame time `at_ps`: the cells it completes go on to
    /// the receiving node after the sender's pipeline delay.
    fn accept(
        &mut self,
        end: usize,
        at_ps: TimePs,
        cells: &mut CellArena,
        arrivals: &mut Vec<(u32, u16, CellId, TimePs)>,
    ) {
        let from = 1 - end;
        let (node, port) = self.ends[end];
        let arrive_ps = at_ps + self.after_ps[from];
        let mut arrive = |queue: &mut CellQueue| {
            let cell = cells
                .pop_front(queue)
                .expect("an accepted frame was in flight");
            arrivals.push((node, port, cell, arrive_ps));
        };
        if self.framing.is_none() {
            arrive(&mut self.in_flight[from]);
            return;
        }
        let delivered = self.link.counters(end).frames_delivered;
        while self.completes_at[from]
            .front()
            .is_some_and(|&frame| frame <= delivered)
        {
            self.completes_at[from].pop_front();
            arrive(&mut self.in_flight[from]);
        }
    }
}

/// A signal the next flow-control frame carries: the first waiting, and the first waiting
/// signal of the other kind (ON beside OFF, §IV-D, Fig. 4) if there is one; applied in the
/// order they were sent. A credit travels alone.
fn next_frame(waiting: &mut VecDeque<FlowSignal>) -> [Option<FlowSignal>; 2] {
    let Some(first) = waiting.pop_front() else {
        return [None, None];
    };
    let partner = match first {
        FlowSignal::On { .. } => waiting
            .iter()
            .position(|s| matches!(s, FlowSignal::Off { .. })),
        FlowSignal::Off { .. } => waiting
            .iter()
            .position(|s| matches!(s, FlowSignal::On { .. })),
        FlowSignal::Credit { .. } => None,
    };
    [Some(first), partner.and_then(|at| waiting.remove(at))]
}

/// The Layer 1 cables of a fabric and which node port is an end of which.
pub(super) struct Layer1 {
    cables: Vec<Cable>,
    /// Per fabric port: `cable · 2 + end`, or [`NO_CABLE`].
    port_end: Vec<u32>,
    /// The fabric's cell time: each step runs the frames that start before the next edge.
    slot_ps: TimePs,
}

impl Layer1 {
    /// The cables `specs` describes, over fabric ports numbered by `port_index(node, port)`.
    pub(super) fn new(
        specs: Vec<Layer1Spec>,
        ports: usize,
        slot_ps: TimePs,
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
                let frame_ps = spec.framing.map_or(slot_ps, |f| f.frame_ps);
                Cable {
                    link: Layer1Link::new(spec.latency_slots),
                    ends: spec.ends,
                    waiting: Default::default(),
                    in_flight: Default::default(),
                    errors: spec.errors,
                    after_ps: spec.after_ps,
                    propagation_ps: (spec.latency_slots as TimePs + 1) * frame_ps,
                    in_band_flow_control: spec.in_band_flow_control,
                    signals: Default::default(),
                    flow_control_frames: [0; 2],
                    flow_control_wait_slots: [0; 2],
                    framing: spec.framing,
                    frame_ps,
                    head_sent_bytes: [0; 2],
                    completes_at: Default::default(),
                }
            })
            .collect();
        Layer1 {
            cables,
            port_end,
            slot_ps,
        }
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
    /// still holds a cell it has not begun to send.
    pub(super) fn is_ready(&self, index: usize) -> bool {
        self.end_of(index).is_none_or(|(c, end)| {
            let cable = &self.cables[c];
            let started = (cable.head_sent_bytes[end] > 0) as u32;
            !cable.link.is_paused(end) && cable.waiting[end].len() <= started
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

    /// Queues flow-control `signal`, sent by the node at fabric port `index`, for the next
    /// flow-control frame of that cable end; false if the port has no Layer 1 cable or its
    /// cable sends flow control out of band.
    pub(super) fn queue_signal(&mut self, index: usize, signal: FlowSignal) -> bool {
        let Some((c, end)) = self.end_of(index) else {
            return false;
        };
        let cable = &mut self.cables[c];
        if cable.in_band_flow_control {
            cable.signals[end].push_back(signal);
        }
        cable.in_band_flow_control
    }

    /// Runs every cable's frame times that start before the next clock edge (one, where a
    /// frame is a cell); pushes each accepted cell to `arrivals` as (node, port, cell, arrival
    /// time), and each flow-control signal a frame carried to `signals` as (node, port, signal,
    /// arrival time), cables in order.
    pub(super) fn step(
        &mut self,
        now_ps: TimePs,
        cells: &mut CellArena,
        arrivals: &mut Vec<(u32, u16, CellId, TimePs)>,
        signals: &mut Vec<(u32, u16, FlowSignal, TimePs)>,
    ) {
        let until_ps = now_ps + self.slot_ps;
        for cable in &mut self.cables {
            while cable.link.slot() * cable.frame_ps < until_ps {
                cable.step_frame(cells, arrivals, signals);
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
                total.flow_control_frames += cable.flow_control_frames[end];
                total.flow_control_wait_slots += cable.flow_control_wait_slots[end];
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::bit_errors::BitErrors;
    use crate::blocks::cell::Cell;
    use crate::engine::rng::{stream, ComponentId};

    const SLOT_PS: TimePs = 1_000;

    /// One cable between node 0 port 0 and node 1 port 0, two frame times of propagation,
    /// bit errors at `ber` from end 0 (none the other way).
    fn cable(ber: f64) -> Layer1 {
        let errors = |ber| {
            let rng = stream(5, ComponentId { kind: 0, index: 0 });
            FrameErrors::new(BitErrors::Independent { ber }, 256, rng)
        };
        let spec = Layer1Spec {
            ends: [(0, 0), (1, 0)],
            latency_slots: 1,
            errors: [errors(ber), errors(0.0)],
            after_ps: [0, 0],
            in_band_flow_control: true,
            framing: None,
        };
        Layer1::new(vec![spec], 2, SLOT_PS, |node, _| node)
    }

    type Signals = Vec<(u32, u16, FlowSignal, TimePs)>;

    /// Steps `layer1` once at frame time `slot`; the signals its frames carried.
    fn step(layer1: &mut Layer1, slot: TimePs, cells: &mut CellArena) -> Signals {
        let (mut arrivals, mut signals) = (Vec::new(), Vec::new());
        layer1.step(slot * SLOT_PS, cells, &mut arrivals, &mut signals);
        signals
    }

    /// §IV-D, Fig. 4: a flow-control frame carries one channel ON and one OFF; it takes the
    /// frame time from the data waiting at its end and acts a propagation delay later at the
    /// far end. Three signals take two frames, in the order sent, before the cell goes.
    #[test]
    fn flow_control_frames_take_frame_times_from_data_and_carry_one_on_and_one_off() {
        let mut layer1 = cable(0.0);
        let mut cells = CellArena::new();
        let cell = cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
        assert!(layer1.hand_over(0, cell, &mut cells));
        let (on, off) = (
            |c| FlowSignal::On { channel: c },
            |c| FlowSignal::Off { channel: c },
        );
        for signal in [on(3), on(7), off(5)] {
            assert!(layer1.queue_signal(0, signal));
        }
        assert_eq!(
            step(&mut layer1, 0, &mut cells),
            vec![(1, 0, on(3), 2 * SLOT_PS), (1, 0, off(5), 2 * SLOT_PS)]
        );
        assert_eq!(layer1.cables[0].waiting[0].len(), 1, "the cell waits");
        assert_eq!(
            step(&mut layer1, 1, &mut cells),
            vec![(1, 0, on(7), 3 * SLOT_PS)]
        );
        assert_eq!(layer1.cables[0].waiting[0].len(), 1, "the cell waits");
        assert!(step(&mut layer1, 2, &mut cells).is_empty());
        assert!(layer1.cables[0].waiting[0].is_empty(), "the cell is sent");
        let counters = layer1.counters();
        assert_eq!(counters.flow_control_frames, 2);
        assert_eq!(counters.flow_control_wait_slots, 3 + 1);
    }

    /// Where each of two cells handed together reaches the far end, on a cable of `framing`
    /// (one frame per step), one frame time of latency and no errors.
    fn arrivals_of_two_cells(framing: Option<Framing>) -> Vec<TimePs> {
        let mut layer1 = cable(0.0);
        layer1.cables[0].framing = framing;
        let mut cells = CellArena::new();
        for _ in 0..2 {
            let cell = cells.alloc(Cell::new(0, 1, 64, true, 0, 0));
            assert!(layer1.hand_over(0, cell, &mut cells));
        }
        let mut arrivals = Vec::new();
        for slot in 0..40 {
            layer1.step(slot * SLOT_PS, &mut cells, &mut arrivals, &mut Vec::new());
        }
        arrivals.iter().map(|&(_, _, _, at)| at).collect()
    }

    /// §II-A: frames of 64 bytes carry 62 bytes each of the cells' byte stream. A 262-byte
    /// cell ends in the fifth frame, where the next one begins; that one ends in the ninth
    /// (524 bytes). Each cell arrives with the frame carrying its last byte: 4 and 8 frame
    /// times after the first cell of a cable whose frame is a cell.
    #[test]
    fn small_frames_carry_cells_as_a_byte_stream() {
        let whole = arrivals_of_two_cells(None);
        assert_eq!(whole[1] - whole[0], SLOT_PS, "one frame a cell");
        let framing = Framing {
            frame_ps: SLOT_PS,
            payload_bytes: 62,
            cell_bytes: 262,
        };
        let framed = arrivals_of_two_cells(Some(framing));
        assert_eq!(framed, vec![whole[0] + 4 * SLOT_PS, whole[0] + 8 * SLOT_PS]);
    }

    /// A flow-control frame is checked by the CRC like any other: on a cable that corrupts
    /// every frame, the signal is never acted on and waits; on a clean one it goes at once.
    #[test]
    fn a_corrupted_flow_control_frame_leaves_its_signal_waiting() {
        let mut layer1 = cable(0.5);
        let mut cells = CellArena::new();
        assert!(layer1.queue_signal(0, FlowSignal::Off { channel: 1 }));
        for slot in 0..50 {
            assert!(step(&mut layer1, slot, &mut cells).is_empty());
        }
        assert_eq!(layer1.counters().flow_control_wait_slots, 50);
        assert_eq!(layer1.counters().flow_control_frames, 0);
        assert!(
            !layer1.queue_signal(5, FlowSignal::Off { channel: 1 }),
            "no cable at 5"
        );
    }
}
