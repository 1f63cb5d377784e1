//! The transmit side of an event-driven device's port: a link, a control queue served with
//! priority over data queues (Stardust §4.2: control cells have a crossbar of their own;
//! reading R3 of `docs/validation/stardust.md`: strict priority on the link), and the data queues,
//! one per traffic class, by strict priority among themselves (class 0 first) or, as an option, in
//! round robin ([`PriorityPort::serve_classes_round_robin`]: ETS with equal weights,
//! IEEE 802.1Qaz), one cell on the wire at a time. The control queue's priority is strict unless
//! the port is given a weighted share ([`PriorityPort::set_control_share`]: NDP's trimming queue
//! serves headers and data 10:1, Handley et al. 2017 §3.1, htsim's `CompositeQueue`). Each data
//! class can be paused and resumed on its own (a per-priority pause such as PFC's), or all at once
//! (Stardust's link-level ON/OFF). The device sends through [`PriorityPort::send_next`] when the
//! link is free and wakes itself with a timer when it is not.

use crate::blocks::cell::{CellArena, CellId, CellQueue};
use crate::blocks::link::Link;
use crate::blocks::traffic::NEVER_PS;
use crate::engine::time::TimePs;

/// A cell taken for the wire: the cell, when its last bit reaches the far end, and the data
/// queue's depth before it left (0 for a control cell).
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    /// The cell.
    pub cell: CellId,
    /// When its last bit reaches the far end.
    pub arrive_ps: TimePs,
    /// Data cells queued when it left, itself included (0 for a control cell).
    pub data_depth: u32,
}

/// One bit per data class or queue of a port: a port pauses at most 128 apart, the most
/// queues per port of the evaluation of Goyal et al., "Backpressure Flow Control", NSDI 2022.
pub type ClassMask = u128;

/// The most data classes or queues one port keeps and pauses apart.
pub const MAX_CLASSES: usize = ClassMask::BITS as usize;

/// One port's transmit side.
pub struct PriorityPort {
    /// The link the port drives.
    pub link: Link,
    control: CellQueue,
    /// Per traffic class, class 0 first.
    data: Vec<CellQueue>,
    data_len: u32,
    /// A fault injected by a test.
    #[cfg(test)]
    pub(crate) fault: crate::blocks::switch::Fault,
    /// When the port's wake-up timer is set for, or `NEVER_PS`.
    wake_at_ps: TimePs,
    /// Data classes the far end paused, one bit per class; control cells still go.
    paused: ClassMask,
    /// Control's and data's turns in a weighted round robin when both wait (`None`: control
    /// strictly first).
    control_share: Option<(u32, u32)>,
    /// Position in the weighted round robin's cycle of `control + data` turns.
    turn: u32,
    /// Data classes served in round robin instead of by strict priority.
    round_robin: bool,
    /// With `round_robin`: the class whose turn is next.
    next_class: u8,
}

impl PriorityPort {
    /// An idle port on `link` with one data queue per class of `classes` (at most
    /// [`MAX_CLASSES`]).
    pub fn new(link: Link, classes: usize) -> Self {
        assert!(classes <= MAX_CLASSES, "a port pauses at most 128 classes");
        PriorityPort {
            link,
            control: CellQueue::default(),
            data: (0..classes.max(1)).map(|_| CellQueue::default()).collect(),
            data_len: 0,
            #[cfg(test)]
            fault: Default::default(),
            wake_at_ps: NEVER_PS,
            paused: 0,
            control_share: None,
            turn: 0,
            round_robin: false,
            next_class: 0,
        }
    }

    /// Serves control and data in a weighted round robin, `control` turns to `data` turns,
    /// whenever both wait (htsim's `CompositeQueue` cycles a counter the same way).
    pub fn set_control_share(&mut self, control: u32, data: u32) {
        assert!(control > 0 && data > 0, "both get turns");
        self.control_share = Some((control, data));
    }

    /// Serves the data classes in round robin, one cell per class that may send in turn (ETS
    /// with equal weights, IEEE 802.1Qaz §37), instead of by strict priority.
    pub fn serve_classes_round_robin(&mut self) {
        self.round_robin = true;
    }

    /// Pauses (the far end sent OFF) or resumes (ON) every data class.
    pub fn pause_data(&mut self, paused: bool) {
        self.paused = if paused { ClassMask::MAX } else { 0 };
    }

    /// Pauses exactly the data classes whose bits `mask` sets, resuming the others (PFC's
    /// per-priority pause; BFC's queues under PFC's backstop).
    pub fn set_paused(&mut self, mask: ClassMask) {
        self.paused = mask;
    }

    /// Data cells that may go now (in classes not paused).
    fn data_sendable(&self) -> u32 {
        match self.paused {
            0 => self.data_len,
            mask => self
                .data
                .iter()
                .enumerate()
                .filter(|(class, _)| mask & (1 << class) == 0)
                .map(|(_, q)| q.len())
                .sum(),
        }
    }

    /// Cells that may go now: control cells, and data cells of classes not paused.
    fn sendable(&self) -> u32 {
        self.control.len() + self.data_sendable()
    }

    /// Control cells queued.
    pub fn control_cells(&self) -> u32 {
        self.control.len()
    }

    /// The data cell of class `class` queued last, if any.
    pub fn data_back(&self, class: usize) -> Option<CellId> {
        self.data[class].back()
    }

    /// Prefetches the cells at the heads of the queues the port serves next (control and the
    /// first data class), a hint for a wake-up about to run ([`crate::engine::cache`]).
    #[inline]
    pub fn warm(&self, cells: &CellArena) {
        if let Some(head) = self.control.front() {
            cells.prefetch(head);
        }
        if let Some(head) = self.data.first().and_then(CellQueue::front) {
            cells.prefetch(head);
        }
    }

    /// Queues a control cell.
    pub fn push_control(&mut self, cells: &mut CellArena, cell: CellId) {
        cells.push_back(&mut self.control, cell);
    }

    /// Queues a data cell of traffic class `class`.
    pub fn push_data(&mut self, cells: &mut CellArena, cell: CellId, class: usize) {
        cells.push_back(&mut self.data[class], cell);
        self.data_len += 1;
        self.debug_check_len();
    }

    /// Cells queued, counted where they are: the lengths of the queues. It equals
    /// [`cells`](Self::cells) unless a cell was lost from a queue outside the counter.
    pub fn queued_cells(&self) -> u32 {
        self.control.len() + self.data.iter().map(|q| q.len()).sum::<u32>()
    }

    /// In builds with debug assertions, checks the count of data cells against the lengths of
    /// the data queues.
    #[inline]
    fn debug_check_len(&self) {
        #[cfg(test)]
        if self.fault.skip_slot_check {
            return;
        }
        debug_assert_eq!(
            self.data_len,
            self.data.iter().map(|q| q.len()).sum::<u32>(),
            "port: data cells by the counter != data cells in the queues"
        );
    }

    /// Data cells queued.
    pub fn data_cells(&self) -> u32 {
        self.data_len
    }

    /// Data cells queued in traffic class `class`.
    pub fn class_cells(&self, class: usize) -> u32 {
        self.data[class].len()
    }

    /// Cells queued, control and data.
    pub fn cells(&self) -> u32 {
        self.control.len() + self.data_len
    }

    /// Empties the queues (the link is gone), handing each cell to `each` with true for data
    /// cells; the port stays paused or not as it was.
    pub fn drain(
        &mut self,
        cells: &mut CellArena,
        mut each: impl FnMut(&mut CellArena, CellId, bool),
    ) {
        while let Some(cell) = cells.pop_front(&mut self.control) {
            each(cells, cell, false);
        }
        for queue in &mut self.data {
            while let Some(cell) = cells.pop_front(queue) {
                each(cells, cell, true);
            }
        }
        self.data_len = 0;
    }

    /// If the link is free at `now_ps`, takes the next cell (control first), puts it on the
    /// link as `wire_bytes(cell)` bytes and returns it. Otherwise returns `None` and, if cells
    /// wait and no wake-up is set for when the link frees, returns that time in `wake`.
    pub fn send_next(
        &mut self,
        now_ps: TimePs,
        cells: &mut CellArena,
        wire_bytes: impl Fn(CellId, &CellArena) -> u64,
        wake: &mut Option<TimePs>,
    ) -> Option<Departure> {
        if self.wake_at_ps <= now_ps {
            self.wake_at_ps = NEVER_PS;
        }
        if !self.link.is_idle(now_ps) {
            let free_ps = self.link.busy_until_ps();
            if self.sendable() > 0 && self.wake_at_ps != free_ps {
                self.wake_at_ps = free_ps;
                *wake = Some(free_ps);
            }
            return None;
        }
        let control_first = match self.control_share {
            Some((control, data)) if !self.control.is_empty() && self.data_sendable() > 0 => {
                self.turn = (self.turn + 1) % (control + data);
                self.turn < control
            }
            _ => !self.control.is_empty(),
        };
        let (cell, data_depth) = if control_first {
            (
                cells.pop_front(&mut self.control).expect("a control cell"),
                0,
            )
        } else {
            let depth = self.data_len;
            let paused = self.paused;
            let classes = self.data.len();
            let first = if self.round_robin {
                self.next_class as usize
            } else {
                0
            };
            let class = (first..first + classes)
                .map(|k| k % classes)
                .find(|&class| paused & (1 << class) == 0 && !self.data[class].is_empty())?;
            if self.round_robin {
                self.next_class = ((class + 1) % classes) as u8;
            }
            let queue = &mut self.data[class];
            self.data_len -= 1;
            let cell = cells.pop_front(queue).expect("a non-empty queue");
            #[cfg(test)]
            {
                // The fault: the cell vanishes, sent nowhere, no counter changed.
                self.fault.taken += 1;
                if crate::blocks::switch::Fault::strikes(self.fault.taken, self.fault.lose_one_in) {
                    self.data_len += 1;
                    return None;
                }
            }
            self.debug_check_len();
            (cell, depth)
        };
        let arrive_ps = self.link.transmit(now_ps, wire_bytes(cell, cells));
        if self.sendable() > 0 {
            let free_ps = self.link.busy_until_ps();
            self.wake_at_ps = free_ps;
            *wake = Some(free_ps);
        }
        Some(Departure {
            cell,
            arrive_ps,
            data_depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;

    /// A cell's payload bytes as its size on the wire.
    fn payload_size(c: CellId, cells: &CellArena) -> u64 {
        cells[c].payload_bytes as u64
    }

    /// A port of `classes` data queues on an idle 8 Gb/s link (a byte per ns) holding a 10-byte
    /// data cell in each class of `queued`, in that order, each cell with its class as its VC.
    fn port_holding(classes: usize, queued: &[usize]) -> (CellArena, PriorityPort, Vec<CellId>) {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 0), classes);
        let ids = queued
            .iter()
            .map(|&class| {
                let cell = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
                cells[cell].vc = class as u16;
                port.push_data(&mut cells, cell, class);
                cell
            })
            .collect();
        (cells, port, ids)
    }

    #[test]
    fn control_overtakes_data_and_the_link_paces_both() {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 100), 1); // 1 byte per ns
        let data = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        let control = cells.alloc(Cell::new(0, 1, 4, true, 0, 0));
        port.push_data(&mut cells, data, 0);
        port.push_control(&mut cells, control);
        let mut wake = None;
        let first = port
            .send_next(0, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(
            (first.cell, first.arrive_ps, first.data_depth),
            (control, 4_100, 0)
        );
        assert_eq!(wake, Some(4_000), "a cell waits: wake when the link frees");
        let mut again = None;
        assert!(port
            .send_next(2_000, &mut cells, payload_size, &mut again)
            .is_none());
        assert_eq!(again, None, "the wake-up is already set");
        let second = port
            .send_next(4_000, &mut cells, payload_size, &mut again)
            .unwrap();
        assert_eq!(
            (second.cell, second.arrive_ps, second.data_depth),
            (data, 14_100, 1)
        );
        assert_eq!(port.cells(), 0);
    }

    #[test]
    fn a_paused_port_sends_control_cells_only() {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 0), 1);
        let data = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        let control = cells.alloc(Cell::new(0, 1, 4, true, 0, 0));
        port.push_data(&mut cells, data, 0);
        port.pause_data(true);
        let mut wake = None;
        assert!(port
            .send_next(0, &mut cells, payload_size, &mut wake)
            .is_none());
        port.push_control(&mut cells, control);
        let sent = port
            .send_next(0, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(sent.cell, control);
        assert_eq!(wake, None, "nothing it may send waits");
        port.pause_data(false);
        let sent = port
            .send_next(4_000, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(sent.cell, data);
    }

    #[test]
    fn a_weighted_share_serves_ten_control_cells_per_data_cell_when_both_wait() {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 0), 1);
        port.set_control_share(10, 1);
        for _ in 0..3 {
            let data = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
            port.push_data(&mut cells, data, 0);
        }
        for _ in 0..12 {
            let control = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
            port.push_control(&mut cells, control);
        }
        let mut wake = None;
        // 'c' for a control cell, 'd' for data, one per 10 ns of link.
        let order: String = (0..15)
            .map(|i| {
                let sent = port.send_next(i * 10_000, &mut cells, payload_size, &mut wake);
                if sent.unwrap().data_depth == 0 {
                    'c'
                } else {
                    'd'
                }
            })
            .collect();
        // The counter starts at 0: turns 1..9 control, 10 data, 0..9 control, then data alone.
        assert_eq!(order, "cccccccccdcccdd");
    }

    #[test]
    fn a_paused_class_waits_while_another_goes() {
        let (mut cells, mut port, ids) = port_holding(2, &[0, 1]);
        let (high, low) = (ids[0], ids[1]);
        port.set_paused(1);
        let mut wake = None;
        assert_eq!(
            port.send_next(0, &mut cells, payload_size, &mut wake)
                .unwrap()
                .cell,
            low
        );
        assert_eq!(wake, None, "only a paused cell waits");
        assert!(port
            .send_next(10_000, &mut cells, payload_size, &mut wake)
            .is_none());
        port.set_paused(0);
        assert_eq!(
            port.send_next(10_000, &mut cells, payload_size, &mut wake)
                .unwrap()
                .cell,
            high
        );
    }

    #[test]
    fn round_robin_serves_the_classes_in_turn_skipping_a_paused_one() {
        let (mut cells, mut port, _) = port_holding(3, &[0, 0, 0, 1, 1, 2, 2]);
        port.serve_classes_round_robin();
        port.set_paused(1 << 2);
        let mut wake = None;
        let mut order = Vec::new();
        for i in 0..5 {
            let sent = port.send_next(i * 10_000, &mut cells, payload_size, &mut wake);
            order.push(cells[sent.unwrap().cell].vc);
        }
        assert_eq!(order, vec![0, 1, 0, 1, 0], "class 2 paused");
        port.set_paused(0);
        let sent = port
            .send_next(50_000, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(cells[sent.cell].vc, 2);
    }

    /// A port of [`MAX_CLASSES`] queues pauses its queues above 63 apart (the mask is wide
    /// enough for BFC's 128 queues): with queues 64 and 127 paused, only queue 100 sends.
    #[test]
    fn a_port_of_128_queues_pauses_its_high_queues_apart() {
        let (mut cells, mut port, _) = port_holding(MAX_CLASSES, &[64, 100, 127]);
        port.serve_classes_round_robin();
        port.set_paused(1 << 64 | 1 << 127);
        let mut wake = None;
        let sent = port
            .send_next(0, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(cells[sent.cell].vc, 100);
        assert!(port
            .send_next(10_000, &mut cells, payload_size, &mut wake)
            .is_none());
        port.set_paused(1 << 64);
        let sent = port
            .send_next(20_000, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!(cells[sent.cell].vc, 127);
    }

    #[test]
    fn class_zero_goes_first() {
        let (mut cells, mut port, ids) = port_holding(2, &[1, 0]);
        let (low, high) = (ids[0], ids[1]);
        let mut wake = None;
        let first = port
            .send_next(0, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!((first.cell, first.data_depth), (high, 2));
        let second = port
            .send_next(10_000, &mut cells, payload_size, &mut wake)
            .unwrap();
        assert_eq!((second.cell, second.data_depth), (low, 1));
    }
}
