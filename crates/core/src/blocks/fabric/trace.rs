//! Cell tracing (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
//! networks", NSDI '22, §3.5): a cell whose header has the trace bit set is sampled by every
//! switch on its path, so that its route can be stitched together afterwards. Here a host sets
//! the bit on a fraction of the cells it sends (`trace.fraction`, drawn from a random stream of
//! its own, so tracing changes no other draw), and every VC router the cell leaves records the
//! hop: when it arrived and left, the switch, its input and output port, the VC it leaves on
//! and the flits queued at that output. The hops form the `cell_trace` table.

use rand::Rng as _;
use serde::Serialize;

use std::collections::HashMap;

use crate::blocks::cell::{Cell, CellId};
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;

/// One hop of a traced cell, as the switch it leaves records it.
#[derive(Clone, Copy, Debug)]
pub struct TraceHop {
    /// The switch (its index among the fabric's switches).
    pub switch: usize,
    /// The input port the cell arrived on.
    pub in_port: u16,
    /// The output port it leaves by.
    pub out_port: u16,
    /// The VC it leaves on.
    pub vc: u16,
    /// Flits queued at the output port as it leaves, itself included.
    pub queue_cells: u32,
    /// When it reached the switch.
    pub arrive_ps: TimePs,
    /// When it left.
    pub depart_ps: TimePs,
}

/// The `cell_trace` table: one row per hop of a traced cell, in the order the hops were made.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceTable {
    /// The traced cell's number (from 1, in the order the hosts sent them).
    pub trace: Vec<u32>,
    /// Its source host.
    pub src: Vec<u16>,
    /// Its destination host.
    pub dst: Vec<u16>,
    /// The hop's position on the cell's path, from 0 at the first switch.
    pub hop: Vec<u32>,
    /// The switch.
    pub switch: Vec<u32>,
    /// Input port the cell arrived on.
    pub in_port: Vec<u16>,
    /// Output port it left by.
    pub out_port: Vec<u16>,
    /// VC it left on.
    pub vc: Vec<u16>,
    /// Flits queued at that output as it left, itself included.
    pub queue_cells: Vec<u32>,
    /// When it reached the switch, ns.
    pub arrive_ns: Vec<f64>,
    /// When it left, ns.
    pub depart_ns: Vec<f64>,
}

/// The sampler and the hops recorded; off (no draw, no row) unless a fraction is set.
pub struct CellTrace {
    /// Fraction of the cells hosts send that are traced; 0: tracing off.
    fraction: f64,
    rng: Option<Rng>,
    /// Cells traced so far.
    traced: u32,
    /// Per traced cell: hops recorded so far.
    hops_of: Vec<u32>,
    /// The trace number (from 1) of the cell last sent under each arena slot with its trace
    /// bit set (a slot reused by an untraced cell has the bit clear and is not looked up).
    number_of: HashMap<u32, u32>,
    table: TraceTable,
}

impl CellTrace {
    /// Tracing off.
    pub fn off() -> Self {
        CellTrace {
            fraction: 0.0,
            rng: None,
            traced: 0,
            hops_of: Vec::new(),
            number_of: HashMap::new(),
            table: TraceTable::default(),
        }
    }

    /// Traces `fraction` (0 to 1) of the cells hosts send, drawn from `rng`.
    pub fn sampling(fraction: f64, rng: Rng) -> Self {
        CellTrace {
            fraction,
            rng: Some(rng),
            ..Self::off()
        }
    }

    /// True if cells are being sampled.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.fraction > 0.0
    }

    /// Decides whether `cell`, which a host sends now, is traced (numbering it if so).
    pub fn sample(&mut self, cell: CellId) -> bool {
        let Some(rng) = self.rng.as_mut() else {
            return false;
        };
        if !rng.gen_bool(self.fraction) {
            return false;
        }
        self.traced += 1;
        self.hops_of.push(0);
        self.number_of.insert(cell.index(), self.traced);
        true
    }

    /// Records a hop of traced cell `id`, which is `cell`.
    pub fn record(&mut self, id: CellId, cell: &Cell, hop: TraceHop) {
        let number = self.number_of[&id.index()];
        let index = number as usize - 1;
        let t = &mut self.table;
        t.trace.push(number);
        t.src.push(cell.src);
        t.dst.push(cell.dst);
        t.hop.push(self.hops_of[index]);
        self.hops_of[index] += 1;
        t.switch.push(hop.switch as u32);
        t.in_port.push(hop.in_port);
        t.out_port.push(hop.out_port);
        t.vc.push(hop.vc);
        t.queue_cells.push(hop.queue_cells);
        t.arrive_ns.push(hop.arrive_ps as f64 / 1e3);
        t.depart_ns.push(hop.depart_ps as f64 / 1e3);
    }

    /// Cells traced.
    pub fn cells_traced(&self) -> u64 {
        self.traced as u64
    }

    /// Hops recorded.
    pub fn hops(&self) -> u64 {
        self.table.trace.len() as u64
    }

    /// The `cell_trace` table, if tracing was on.
    pub fn table(&self) -> Option<TraceTable> {
        self.is_on().then(|| self.table.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    fn rng() -> Rng {
        stream(5, ComponentId { kind: 0, index: 0 })
    }

    /// About the fraction asked for is traced, numbered from 1; off, nothing is.
    #[test]
    fn a_fraction_of_the_cells_is_traced_and_numbered() {
        let mut trace = CellTrace::sampling(0.25, rng());
        let traced: Vec<u32> = (0..10_000)
            .filter(|&i| trace.sample(CellId::from_index(i)))
            .collect();
        assert!((2_300..2_700).contains(&traced.len()), "{}", traced.len());
        let numbers: Vec<u32> = traced.iter().map(|i| trace.number_of[i]).collect();
        assert_eq!(numbers, (1..=traced.len() as u32).collect::<Vec<_>>());
        let mut off = CellTrace::off();
        assert!((0..1_000).all(|i| !off.sample(CellId::from_index(i))));
        assert!(off.table().is_none());
    }

    /// A traced cell's hops are numbered along its path.
    #[test]
    fn hops_are_numbered_per_cell() {
        let mut trace = CellTrace::sampling(1.0, rng());
        let cells = [
            Cell::new(0, 1, 8, true, 0, 0),
            Cell::new(1, 0, 8, true, 0, 0),
        ];
        let ids = [CellId::from_index(7), CellId::from_index(3)];
        assert!(ids.iter().all(|&id| trace.sample(id)));
        let hop = |switch, depart_ps| TraceHop {
            switch,
            in_port: 0,
            out_port: 1,
            vc: 0,
            queue_cells: 1,
            arrive_ps: 0,
            depart_ps,
        };
        trace.record(ids[0], &cells[0], hop(3, 1_000));
        trace.record(ids[1], &cells[1], hop(4, 1_000));
        trace.record(ids[0], &cells[0], hop(5, 2_000));
        let table = trace.table().expect("tracing is on");
        assert_eq!(table.trace, [1, 2, 1]);
        assert_eq!(table.hop, [0, 0, 1]);
        assert_eq!(table.switch, [3, 4, 5]);
        assert_eq!(table.depart_ns, [1.0, 1.0, 2.0]);
        assert_eq!((trace.cells_traced(), trace.hops()), (2, 3));
    }
}
