//! NDP's trimming switch port (Handley et al., SIGCOMM 2017, §3.1 "Switch Service Model"; the
//! details from htsim's `CompositeQueue`): a data queue of a few packets and a header queue
//! on one link. A data packet that finds the data queue full is not dropped: a packet loses
//! its payload and its header (on the wire as `header_bytes`) joins the header queue with the
//! receivers' ACKs, NACKs and PULLs. Which packet is trimmed is a coin toss between the
//! arrival and the data queue's tail (htsim keeps the arrival with probability 1/2, to break
//! the phase effects a fixed choice causes). Only a header queue that overflows refuses a
//! packet, which its switch drops or returns to the sender (§3.1 return-to-sender). The
//! link serves headers and data 10:1 when both wait (§3.1: headers first, weighted so data is
//! not starved). Transmission order is decided when the link frees, so the port is
//! event-driven: it is a [`PriorityPort`] (header queue = control, data = class 0), and its
//! switch wakes it with one timer per busy port.

use super::drop_tail::ArrivalDepths;
use super::{no_random_loss, PortCheck, PortKind};
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::ethernet::{CONTROL, TRIMMED};
use crate::blocks::link::Link;
use crate::blocks::priority_port::{Departure, PriorityPort};
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;
use crate::keys::ScenarioError;
use rand::Rng as _;

/// NDP's trimming ports.
pub const KIND: PortKind = PortKind {
    name: "trimming",
    description: "NDP's trimming ports (Handley et al. 2017 §3.1): a full data queue of switch.queue_packets trims a packet to its header, served 10:1 over data; optionally return-to-sender (switch.return_to_sender)",
    trims: true,
    lossless: false,
    classes: false,
    per_flow_routing: false,
    keys: &[&["switch.return_to_sender"]],
    check,
};

/// No random loss.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    no_random_loss(c, "NDP's model has no random loss")
}

/// Headers' turns per data turn when both queues wait (htsim: `_ratio_high = 10`,
/// `_ratio_low = 1`).
pub const HEADER_TURNS_PER_DATA_TURN: u32 = 10;

/// What a trimming port holds.
#[derive(Clone, Copy, Debug)]
pub struct TrimSpec {
    /// Data packets the data queue holds, the one on the wire included (htsim's `-q`: 8 for
    /// NDP).
    pub data_packets: u32,
    /// Bytes the header queue holds (htsim gives it the data queue's size in bytes).
    pub header_capacity_bytes: u64,
    /// Bytes of a trimmed packet on the wire.
    pub header_bytes: u16,
}

/// What became of a packet offered to the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued (the arrival, or the header of whichever packet was trimmed).
    Queued,
    /// The header queue was full: the caller drops or returns this packet (a header or a
    /// control packet, possibly the trimmed former tail rather than the arrival).
    Full(CellId),
}

/// One switch port with NDP's trimming queues.
pub struct TrimmingPort {
    port: PriorityPort,
    spec: TrimSpec,
    /// Bytes in the header queue.
    header_queued_bytes: u64,
    /// A data packet is on the wire until then; it still counts in the data queue (htsim
    /// frees its space when its last bit has left).
    data_on_wire_until_ps: TimePs,
    /// Data packets trimmed here.
    pub trimmed: u64,
    /// Deepest the data queue has been, in packets.
    pub peak_packets: u32,
    /// Arrivals from this time on are measured.
    measure_from_ps: TimePs,
    /// What data arrivals found in the measurement window.
    pub measured: ArrivalDepths,
}

impl TrimmingPort {
    /// Injects `fault` into the port's queues (test only).
    #[cfg(test)]
    pub(crate) fn inject_fault(&mut self, fault: crate::blocks::switch::Fault) {
        self.port.fault = fault;
    }

    /// Data packets the port took from its queue under a fault (test only).
    #[cfg(test)]
    pub(crate) fn fault_taken(&self) -> u64 {
        self.port.fault.taken
    }

    /// An idle port on `link`, measuring what data arrivals find from `measure_from_ps` on.
    pub fn new(link: Link, spec: TrimSpec, measure_from_ps: TimePs) -> Self {
        let mut port = PriorityPort::new(link, 1);
        port.set_control_share(HEADER_TURNS_PER_DATA_TURN, 1);
        TrimmingPort {
            port,
            spec,
            header_queued_bytes: 0,
            data_on_wire_until_ps: 0,
            trimmed: 0,
            peak_packets: 0,
            measure_from_ps,
            measured: ArrivalDepths::default(),
        }
    }

    /// Data packets in the data queue at `now_ps`, the one on the wire included.
    pub fn data_packets(&self, now_ps: TimePs) -> u32 {
        self.port.data_cells() + (now_ps < self.data_on_wire_until_ps) as u32
    }

    /// Packets queued (not on the wire): headers, control and data, counted in the queues.
    pub fn packets_queued(&self) -> u32 {
        self.port.queued_cells()
    }

    /// Offers `cell` at `now_ps`; `rng` tosses the coin when the data queue is full. The
    /// caller then calls [`TrimmingPort::send_next`].
    pub fn offer(
        &mut self,
        cells: &mut CellArena,
        cell: CellId,
        now_ps: TimePs,
        rng: &mut Rng,
    ) -> Offer {
        if cells[cell].flags & (CONTROL | TRIMMED) == 0 {
            let depth = self.data_packets(now_ps);
            if now_ps >= self.measure_from_ps {
                let size_bytes = cells[cell].payload_bytes as u64;
                self.measured.record(size_bytes, depth);
            }
            if depth < self.spec.data_packets {
                self.port.push_data(cells, cell, 0);
                self.peak_packets = self.peak_packets.max(depth + 1);
                return Offer::Queued;
            }
            // Full: trim the queue's tail instead of the arrival, half the time. The arrival
            // takes the tail's place (their contents swap) and the old tail is trimmed.
            if let Some(tail) = self.port.data_back(0) {
                if rng.gen::<bool>() {
                    let arrival = cells[cell];
                    cells[cell] = cells[tail];
                    cells[tail] = arrival;
                }
            }
            let c = &mut cells[cell];
            c.payload_bytes = self.spec.header_bytes;
            c.flags |= TRIMMED;
            self.trimmed += 1;
        }
        let size_bytes = cells[cell].payload_bytes as u64;
        if self.header_queued_bytes + size_bytes > self.spec.header_capacity_bytes {
            return Offer::Full(cell);
        }
        self.header_queued_bytes += size_bytes;
        self.port.push_control(cells, cell);
        Offer::Queued
    }

    /// If the link is free at `now_ps`, puts the next packet on it and returns it; otherwise
    /// returns `None` and, when packets wait and no wake-up is set for when the link frees,
    /// that time in `wake`.
    pub fn send_next(
        &mut self,
        now_ps: TimePs,
        cells: &mut CellArena,
        wake: &mut Option<TimePs>,
    ) -> Option<Departure> {
        let size = |c: CellId, cells: &CellArena| cells[c].payload_bytes as u64;
        let departure = self.port.send_next(now_ps, cells, size, wake)?;
        if departure.data_depth == 0 {
            self.header_queued_bytes -= cells[departure.cell].payload_bytes as u64;
        } else {
            self.data_on_wire_until_ps = self.port.link.busy_until_ps();
        }
        Some(departure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::blocks::ethernet::ACK;
    use crate::engine::rng::{stream, ComponentId};

    fn rng() -> Rng {
        stream(
            7,
            ComponentId {
                kind: crate::blocks::stream_kind::ETHERNET_TRIM,
                index: 0,
            },
        )
    }

    /// Data packets of 1000 B (1 µs at 8 Gbit/s), headers and ACKs of 64 B (64 ns).
    fn data(cells: &mut CellArena, seq: u32) -> CellId {
        super::super::test_packet(cells, |c| c.seq = seq)
    }

    fn spec(data_packets: u32, header_capacity_bytes: u64) -> TrimSpec {
        TrimSpec {
            data_packets,
            header_capacity_bytes,
            header_bytes: 64,
        }
    }

    /// Drives a port as its switch does: offers packets at `now_ps`, serves the link at once
    /// and at every wake-up, and records departures as (seq, trimmed, leaves at ns).
    struct Driver {
        port: TrimmingPort,
        wake_ps: Option<TimePs>,
        sent: Vec<(u32, bool, u64)>,
    }

    impl Driver {
        fn new(port: TrimmingPort) -> Self {
            Driver {
                port,
                wake_ps: None,
                sent: Vec::new(),
            }
        }

        fn serve(&mut self, cells: &mut CellArena, now_ps: TimePs) {
            let mut wake = None;
            while let Some(d) = self.port.send_next(now_ps, cells, &mut wake) {
                let c = cells[d.cell];
                self.sent
                    .push((c.seq, c.flags & TRIMMED != 0, now_ps / 1000));
            }
            if wake.is_some() {
                self.wake_ps = wake;
            }
        }

        fn offer(&mut self, cells: &mut CellArena, cell: CellId, rng: &mut Rng) -> Offer {
            let offer = self.port.offer(cells, cell, 0, rng);
            self.serve(cells, 0);
            offer
        }

        fn run(&mut self, cells: &mut CellArena) {
            while let Some(at_ps) = self.wake_ps.take() {
                self.serve(cells, at_ps);
            }
        }
    }

    #[test]
    fn a_full_data_queue_trims_and_headers_overtake_data() {
        let mut cells = CellArena::new();
        let port = TrimmingPort::new(Link::new(8_000_000_000, 0), spec(3, 10_000), 0);
        let mut d = Driver::new(port);
        let mut rng = rng();
        // Six data packets at once into a queue of three (the one on the wire counted): data
        // 0 goes on the wire, 1 and 2 wait, and three are trimmed (each the arrival or the
        // queue's tail, by the coin); an ACK arrives last.
        for seq in 0..6 {
            let p = data(&mut cells, seq);
            assert_eq!(d.offer(&mut cells, p, &mut rng), Offer::Queued);
        }
        let mut ack = Cell::new(1, 0, 64, true, 0, 0);
        ack.flags = ACK;
        ack.seq = 100;
        let ack = cells.alloc(ack);
        assert_eq!(d.offer(&mut cells, ack, &mut rng), Offer::Queued);
        assert_eq!((d.port.trimmed, d.port.peak_packets), (3, 3));
        d.run(&mut cells);
        let sent = &d.sent;
        // On the wire: data 0 (1 µs), then the three headers and the ACK (64 ns each, the
        // header queue winning the weighted round robin), then two data packets back to back.
        let times: Vec<u64> = sent.iter().map(|s| s.2).collect();
        assert_eq!(times, vec![0, 1000, 1064, 1128, 1192, 1256, 2256]);
        assert_eq!(sent[0], (0, false, 0));
        assert!(sent[1..4].iter().all(|s| s.1), "{sent:?}");
        assert_eq!(sent[4], (100, false, 1192));
        assert!(sent[5..].iter().all(|s| !s.1));
        let mut seqs: Vec<u32> = sent.iter().map(|s| s.0).filter(|&s| s < 100).collect();
        seqs.sort_unstable();
        assert_eq!(
            seqs,
            vec![0, 1, 2, 3, 4, 5],
            "every packet leaves, whole or trimmed"
        );
        assert_eq!(d.port.packets_queued(), 0);
    }

    #[test]
    fn the_coin_sometimes_trims_the_tail_and_keeps_the_arrival() {
        let mut cells = CellArena::new();
        let mut rng = rng();
        let mut kept_arrival = 0;
        for _ in 0..200 {
            let port = TrimmingPort::new(Link::new(8_000_000_000, 0), spec(2, 10_000), 0);
            let mut d = Driver::new(port);
            for seq in 0..3 {
                let p = data(&mut cells, seq);
                d.offer(&mut cells, p, &mut rng);
            }
            d.run(&mut cells);
            // 0 on the wire, 1 waiting, 2 arrives to a full queue.
            let full: Vec<u32> = d.sent.iter().filter(|s| !s.1).map(|s| s.0).collect();
            assert!(full == vec![0, 1] || full == vec![0, 2], "{full:?}");
            kept_arrival += (full == vec![0, 2]) as u32;
        }
        assert!((70..=130).contains(&kept_arrival), "{kept_arrival} of 200");
    }

    #[test]
    fn a_full_header_queue_refuses() {
        let mut cells = CellArena::new();
        let mut rng = rng();
        // One data packet (on the wire) and room for two 64-byte headers.
        let port = TrimmingPort::new(Link::new(8_000_000_000, 0), spec(1, 128), 0);
        let mut d = Driver::new(port);
        let offers: Vec<Offer> = (0..5)
            .map(|seq| {
                let p = data(&mut cells, seq);
                d.offer(&mut cells, p, &mut rng)
            })
            .collect();
        assert_eq!(offers[..3], [Offer::Queued; 3]);
        assert!(matches!(offers[3], Offer::Full(_)));
        assert!(matches!(offers[4], Offer::Full(_)));
        assert_eq!(d.port.trimmed, 4);
    }
}
