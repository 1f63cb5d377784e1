//! An adapter's reassembly (Stardust §3.2, §4.1): cells from the fabric are put back in sequence
//! per stream (source adapter, host port, traffic class) by the [`Reassembly`] block; a gap still
//! open after the reassembly timeout is given up and the packets it broke are discarded. Each
//! stream has at most one timer pending. Debug builds check a stream's window after every
//! change ([`Reassembly::debug_check`]).

use crate::blocks::cell::CellId;
use crate::blocks::sar::Reassembly;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;

/// Every stream an adapter receives.
pub struct Streams {
    streams: Vec<Reassembly>,
    /// Per stream: when its reassembly timer is set for, or `NEVER_PS`.
    gap_timer_ps: Vec<TimePs>,
    ports: usize,
    classes: usize,
    timeout_ps: TimePs,
    /// Cells released in sequence, not yet handed on (kept to reuse its allocation).
    released: Vec<CellId>,
    /// Most cells held for reordering in one stream.
    pub reorder_peak_cells: u32,
}

impl Streams {
    /// Streams from `adapters` adapters to `ports` host ports in `classes` classes, giving up
    /// gaps after `timeout_ps`.
    pub fn new(adapters: usize, ports: usize, classes: usize, timeout_ps: TimePs) -> Self {
        let n = adapters * ports * classes;
        Streams {
            streams: vec![Reassembly::default(); n],
            gap_timer_ps: vec![NEVER_PS; n],
            ports,
            classes,
            timeout_ps,
            released: Vec::new(),
            reorder_peak_cells: 0,
        }
    }

    /// The stream from adapter `src` to host port `port` in class `class`.
    pub fn stream(&self, src: u16, port: usize, class: usize) -> usize {
        (src as usize * self.ports + port) * self.classes + class
    }

    /// The traffic class of stream `stream`.
    pub fn class_of(&self, stream: usize) -> usize {
        stream % self.classes
    }

    /// The host port of stream `stream`.
    pub fn port_of(&self, stream: usize) -> usize {
        stream / self.classes % self.ports
    }

    /// Takes cell `cell` numbered `seq` of stream `stream` at `now_ps`; returns the cells now in
    /// sequence (hand them back with [`Self::recycle`]).
    pub fn accept(&mut self, stream: usize, seq: u32, cell: CellId, now_ps: TimePs) -> Vec<CellId> {
        let mut released = std::mem::take(&mut self.released);
        let reassembly = &mut self.streams[stream];
        let held = reassembly.accept(seq, cell, now_ps, self.timeout_ps, |id| released.push(id));
        reassembly.debug_check();
        self.reorder_peak_cells = self.reorder_peak_cells.max(held as u32);
        released
    }

    /// Stream `stream`'s timer fired: gives up what is overdue and returns the cells then in
    /// sequence.
    pub fn gap_timer(&mut self, stream: usize, now_ps: TimePs) -> Vec<CellId> {
        self.gap_timer_ps[stream] = NEVER_PS;
        let mut released = std::mem::take(&mut self.released);
        let reassembly = &mut self.streams[stream];
        reassembly.give_up_overdue(now_ps, self.timeout_ps, &mut |id| released.push(id));
        reassembly.debug_check();
        released
    }

    /// Gives back the (emptied) list of released cells.
    pub fn recycle(&mut self, released: Vec<CellId>) {
        debug_assert!(released.is_empty());
        self.released = released;
    }

    /// When to set stream `stream`'s timer, if it holds cells and has none set (§4.1's
    /// reassembly timer). A timer set for an earlier gap fires no later than this one is
    /// due, and sets the next: at most one timer per stream is pending.
    pub fn watch(&mut self, stream: usize) -> Option<TimePs> {
        if self.gap_timer_ps[stream] != NEVER_PS {
            return None;
        }
        let at_ps = self.streams[stream].overdue_at(self.timeout_ps)?;
        self.gap_timer_ps[stream] = at_ps;
        Some(at_ps)
    }

    /// True if a packet of stream `stream` whose first byte was in cell `start_seq` lost none
    /// of its cells.
    pub fn is_complete(&self, stream: usize, start_seq: u32) -> bool {
        self.streams[stream].is_complete(start_seq)
    }

    /// Every cell held for reordering, handed out (the adapter failed and loses them); the
    /// streams go on from their next cells.
    pub fn drain(&mut self) -> Vec<CellId> {
        let mut cells = Vec::new();
        for stream in &mut self.streams {
            stream.give_up_overdue(TimePs::MAX, 0, &mut |id| cells.push(id));
        }
        cells
    }

    /// Cells held for reordering, in all streams.
    pub fn held(&self) -> u64 {
        self.streams.iter().map(|s| s.held() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_leave_in_sequence_and_a_gap_is_given_up_by_its_timer() {
        let mut s = Streams::new(3, 2, 2, 1_000);
        let stream = s.stream(2, 1, 1);
        assert_eq!(s.port_of(stream), 1);
        let cell = CellId::from_index;
        let released = s.accept(stream, 1, cell(11), 0);
        assert!(released.is_empty());
        s.recycle(released);
        assert_eq!(s.held(), 1);
        assert_eq!(s.watch(stream), Some(1_000));
        assert_eq!(s.watch(stream), None, "one timer per stream");
        let released = s.gap_timer(stream, 1_000);
        assert_eq!(released, [cell(11)]);
        assert!(
            !s.is_complete(stream, 0),
            "a packet begun in the lost cell is broken"
        );
        assert!(s.is_complete(stream, 1));
        assert_eq!(s.reorder_peak_cells, 1);
    }
}
