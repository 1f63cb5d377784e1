//! The transmit side of an event-driven device's port: a link, a control queue served with
//! strict priority over data queues (Stardust §4.2: control cells have a crossbar of their
//! own; reading A3: strict priority on the link), and the data queues, one per traffic class,
//! by strict priority among themselves (class 0 first), one cell on the wire at a time. The device
//! sends through [`PriorityPort::send_next`] when the link is free and wakes itself with a
//! timer when it is not.

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

/// One port's transmit side.
pub struct PriorityPort {
    /// The link the port drives.
    pub link: Link,
    control: CellQueue,
    /// Per traffic class, class 0 first.
    data: Vec<CellQueue>,
    data_len: u32,
    /// When the port's wake-up timer is set for, or `NEVER_PS`.
    wake_at_ps: TimePs,
    /// The far end paused data (link-level ON/OFF); control cells still go.
    data_paused: bool,
}

impl PriorityPort {
    /// An idle port on `link` with one data queue per class of `classes`.
    pub fn new(link: Link, classes: usize) -> Self {
        PriorityPort {
            link,
            control: CellQueue::default(),
            data: (0..classes.max(1)).map(|_| CellQueue::default()).collect(),
            data_len: 0,
            wake_at_ps: NEVER_PS,
            data_paused: false,
        }
    }

    /// Pauses (the far end sent OFF) or resumes (ON) data cells.
    pub fn pause_data(&mut self, paused: bool) {
        self.data_paused = paused;
    }

    /// Cells that may go now: control cells, and data cells unless paused.
    fn sendable(&self) -> u32 {
        self.control.len() + if self.data_paused { 0 } else { self.data_len }
    }

    /// Queues a control cell.
    pub fn push_control(&mut self, cells: &mut CellArena, cell: CellId) {
        cells.push_back(&mut self.control, cell);
    }

    /// Queues a data cell of traffic class `class`.
    pub fn push_data(&mut self, cells: &mut CellArena, cell: CellId, class: usize) {
        cells.push_back(&mut self.data[class], cell);
        self.data_len += 1;
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
        let (cell, data_depth) = match cells.pop_front(&mut self.control) {
            Some(cell) => (cell, 0),
            None if self.data_paused => return None,
            None => {
                let depth = self.data_len;
                let queue = self.data.iter_mut().find(|q| !q.is_empty())?;
                self.data_len -= 1;
                (cells.pop_front(queue).expect("a non-empty queue"), depth)
            }
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

    #[test]
    fn control_overtakes_data_and_the_link_paces_both() {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 100), 1); // 1 byte per ns
        let data = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        let control = cells.alloc(Cell::new(0, 1, 4, true, 0, 0));
        port.push_data(&mut cells, data, 0);
        port.push_control(&mut cells, control);
        let size = |c: CellId, cells: &CellArena| cells[c].payload_bytes as u64;
        let mut wake = None;
        let first = port.send_next(0, &mut cells, size, &mut wake).unwrap();
        assert_eq!(
            (first.cell, first.arrive_ps, first.data_depth),
            (control, 4_100, 0)
        );
        assert_eq!(wake, Some(4_000), "a cell waits: wake when the link frees");
        let mut again = None;
        assert!(port
            .send_next(2_000, &mut cells, size, &mut again)
            .is_none());
        assert_eq!(again, None, "the wake-up is already set");
        let second = port.send_next(4_000, &mut cells, size, &mut again).unwrap();
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
        let size = |c: CellId, cells: &CellArena| cells[c].payload_bytes as u64;
        let mut wake = None;
        assert!(port.send_next(0, &mut cells, size, &mut wake).is_none());
        port.push_control(&mut cells, control);
        let sent = port.send_next(0, &mut cells, size, &mut wake).unwrap();
        assert_eq!(sent.cell, control);
        assert_eq!(wake, None, "nothing it may send waits");
        port.pause_data(false);
        let sent = port.send_next(4_000, &mut cells, size, &mut wake).unwrap();
        assert_eq!(sent.cell, data);
    }

    #[test]
    fn class_zero_goes_first() {
        let mut cells = CellArena::new();
        let mut port = PriorityPort::new(Link::new(8_000_000_000, 0), 2);
        let low = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        let high = cells.alloc(Cell::new(0, 1, 10, true, 0, 0));
        port.push_data(&mut cells, low, 1);
        port.push_data(&mut cells, high, 0);
        let size = |c: CellId, cells: &CellArena| cells[c].payload_bytes as u64;
        let mut wake = None;
        let first = port.send_next(0, &mut cells, size, &mut wake).unwrap();
        assert_eq!((first.cell, first.data_depth), (high, 2));
        let second = port.send_next(10_000, &mut cells, size, &mut wake).unwrap();
        assert_eq!((second.cell, second.data_depth), (low, 1));
    }
}
