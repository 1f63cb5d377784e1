//! Traffic sources: on/off cell arrivals as in the iSLIP paper (McKeown 1999, §VI).
//!
//! A source alternates ON periods, during which it emits one cell per slot, and idle periods of
//! geometrically distributed length chosen so the long-run fraction of busy slots equals the
//! offered load. Under Bernoulli arrivals an ON period is one packet; under bursty arrivals it is
//! a geometrically distributed number of cells (iSLIP §VI; RIFL §V: "each bursty period contains
//! a geometrically distributed number of cells"), all to one destination, filled with packets
//! drawn from the size distribution ([`Burst`] says how a burst's length is drawn and whether its
//! last packet is cut to fit or kept whole). Packets are cut into cells; the last cell of a
//! packet is padded.

use std::sync::Arc;

use rand::Rng as _;
use rand_distr::{Distribution, Geometric};

use super::cell::{Cell, BROADCAST_DST};
use super::pair_budget::PairBudget;
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;

/// Marks a source that will never emit again.
pub const NEVER_PS: TimePs = TimePs::MAX;

/// How cells arrive at a source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// Independent packets separated by geometric idle gaps (i.i.d. Bernoulli cells when packets
    /// are one cell long).
    Bernoulli,
    /// Geometric bursts to one destination.
    Bursty(Burst),
}

/// How a burst's length is drawn and filled with packets. The iSLIP paper's bursts (McKeown
/// 1999, §VI) are a geometric number of cells; RIFL Layer 2 (Shen and Chow 2023, §V) keeps that
/// model with packets of 64 to 2048 bytes and does not say how a burst's packets fit its cells,
/// hence three readings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Burst {
    /// A geometric number of cells (mean `mean_cells`), filled with packets, the last cut to the
    /// cells left: bursts have exactly the mean, but cut packets change the packet-size mix.
    CutCells {
        /// Mean burst length in cells (at least 1).
        mean_cells: f64,
    },
    /// A geometric number of cells (mean `mean_cells`), filled with whole packets: the burst
    /// ends with the packet that reaches the drawn length, so every packet keeps its drawn size
    /// and bursts run longer than drawn.
    WholeCells {
        /// Mean drawn length in cells (at least 1).
        mean_cells: f64,
    },
    /// A geometric number of whole packets (mean `mean_packets`).
    WholePackets {
        /// Mean packets per burst (at least 1).
        mean_packets: f64,
    },
    /// Exactly `packets` whole packets: a message of fixed size (Aquila's Fig. 10 varies only
    /// the message size at a fixed mean rate, Gibson et al., NSDI '22, §5.1).
    FixedPackets {
        /// Packets per burst (at least 1).
        packets: u32,
    },
}

impl Burst {
    /// Expected cells of one burst with packet sizes `sizes` and `cell_payload_bytes` per cell.
    /// For [`Burst::WholeCells`] the packet count N is the first n whose cells reach the drawn
    /// length L; as L is geometric, P(N > n) = φⁿ with φ = E[(1 − 1/mean)^cells of a packet],
    /// so E[N] = 1 / (1 − φ), and by Wald's identity the burst holds E[N] packets' mean cells.
    pub fn mean_cells(self, sizes: PacketSizes, cell_payload_bytes: u32) -> f64 {
        let packet_cells = sizes.mean_cells(cell_payload_bytes);
        match self {
            Burst::CutCells { mean_cells } => mean_cells.max(1.0),
            Burst::WholeCells { mean_cells } => {
                let keep = 1.0 - 1.0 / mean_cells.max(1.0);
                let phi = sizes.mean_of(cell_payload_bytes, |cells| keep.powi(cells as i32));
                packet_cells / (1.0 - phi)
            }
            Burst::WholePackets { mean_packets } => mean_packets.max(1.0) * packet_cells,
            Burst::FixedPackets { packets } => packets.max(1) as f64 * packet_cells,
        }
    }

    /// How a burst's units beyond its first are counted: a geometric draw, or a fixed number.
    fn extra_units(self) -> ExtraUnits {
        let mean = match self {
            Burst::CutCells { mean_cells } | Burst::WholeCells { mean_cells } => mean_cells,
            Burst::WholePackets { mean_packets } => mean_packets,
            Burst::FixedPackets { packets } => return ExtraUnits::Fixed(packets.max(1) as u64 - 1),
        };
        let draw = Geometric::new(1.0 / mean.max(1.0)).expect("mean burst of at least one unit");
        ExtraUnits::Drawn(draw)
    }
}

/// A burst's units beyond its first.
#[derive(Clone, Copy, Debug)]
enum ExtraUnits {
    /// Drawn from a geometric distribution.
    Drawn(Geometric),
    /// Always this many.
    Fixed(u64),
}

impl ExtraUnits {
    fn sample(self, rng: &mut Rng) -> u64 {
        match self {
            ExtraUnits::Drawn(draw) => draw.sample(rng),
            ExtraUnits::Fixed(units) => units,
        }
    }
}

/// Where a source's packets go.
#[derive(Clone, Debug, PartialEq)]
pub enum Destinations {
    /// Uniform over all `ports` terminals, optionally excluding the source itself.
    Uniform {
        /// Number of terminals.
        ports: u16,
        /// Whether a source may address itself.
        include_self: bool,
    },
    /// Always the same terminal (one row of a permutation).
    Fixed(u16),
    /// Uniform over the terminals `first..first + count` (another group's hosts).
    Range {
        /// First terminal of the range.
        first: u16,
        /// Terminals in the range.
        count: u16,
    },
    /// `port` with probability `fraction`, otherwise uniform over all `ports` terminals.
    Hotspot {
        /// Number of terminals.
        ports: u16,
        /// The hot terminal.
        port: u16,
        /// Share of packets sent to the hot terminal.
        fraction: f64,
    },
    /// Uniform over the listed terminals (shared by every source of the set), optionally
    /// excluding the source itself: the hosts of `traffic.active_hosts`.
    Among {
        /// The terminals, in increasing order.
        hosts: Arc<[u16]>,
        /// The source's own place in `hosts`, never drawn; `None`: it may address itself.
        skip: Option<usize>,
    },
    /// Nowhere: the source sends nothing (a host no listed pair starts from).
    Silent,
}

/// Packet size distribution, in bytes of payload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PacketSizes {
    /// Every packet has this size.
    Fixed(u32),
    /// Uniform over `min..=max` bytes.
    Uniform {
        /// Smallest packet.
        min: u32,
        /// Largest packet.
        max: u32,
    },
}

impl PacketSizes {
    /// The largest packet, in bytes.
    pub fn max_bytes(self) -> u32 {
        match self {
            PacketSizes::Fixed(size) => size,
            PacketSizes::Uniform { max, .. } => max,
        }
    }

    /// Expected number of cells per packet when each cell carries `cell_payload_bytes`.
    pub fn mean_cells(self, cell_payload_bytes: u32) -> f64 {
        self.mean_of(cell_payload_bytes, |cells| cells as f64)
    }

    /// Expected `f(cells)` of a packet, `cells` its number of cells.
    fn mean_of(self, cell_payload_bytes: u32, f: impl Fn(u32) -> f64) -> f64 {
        let value = |size: u32| f(size.div_ceil(cell_payload_bytes));
        match self {
            PacketSizes::Fixed(size) => value(size),
            PacketSizes::Uniform { min, max } => {
                (min..=max).map(value).sum::<f64>() / (max - min + 1) as f64
            }
        }
    }

    fn draw(self, rng: &mut Rng) -> u32 {
        match self {
            PacketSizes::Fixed(size) => size,
            PacketSizes::Uniform { min, max } => rng.gen_range(min..=max),
        }
    }
}

/// Everything a source needs to know about the traffic it offers.
#[derive(Clone, Copy, Debug)]
pub struct TrafficSpec {
    /// Offered load: the long-run fraction of slots carrying a cell, in [0, 1].
    pub load: f64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Packet sizes.
    pub sizes: PacketSizes,
    /// Payload bytes one cell carries.
    pub cell_payload_bytes: u32,
    /// Length of one slot (one cell time on the source's link).
    pub slot_ps: TimePs,
    /// Sources emit nothing at or after this time.
    pub stop_ps: TimePs,
    /// A finite workload: payload bytes each source sends to each destination it may address
    /// (uniform destinations), then stops; `None`: sources send until `stop_ps`.
    pub bytes_per_pair: Option<u64>,
    /// Share of packets (whole bursts, under bursty arrivals) sent to every other host as one
    /// broadcast ([`BROADCAST_DST`]) instead of to one destination.
    pub broadcast_fraction: f64,
}

/// One terminal's traffic source.
pub struct Generator {
    terminal: u16,
    spec: TrafficSpec,
    destinations: Destinations,
    rng: Rng,
    idle_slots: Option<Geometric>,
    /// Bursty arrivals: how bursts are filled, and how a burst's units beyond its first are
    /// counted.
    burst: Option<(Burst, ExtraUnits)>,
    /// A finite workload's bytes left per destination.
    budget: Option<PairBudget>,
    next_ps: TimePs,
    dst: u16,
    packet_bytes_left: u32,
    /// Units (cells or packets, as [`Burst`] says) of the current burst not yet given to a
    /// packet.
    burst_units_left: u64,
    /// When the first cell of the packet being emitted was due, or `NEVER_PS` between packets.
    packet_start_ps: TimePs,
    /// How long the packet being emitted has been held back (closed loop).
    packet_held_ps: TimePs,
    /// How long the last packet emitted whole was held back.
    last_packet_held_ps: TimePs,
}

impl Generator {
    /// A source at `terminal`; its first ON period starts after an idle gap from slot 0.
    pub fn new(terminal: u16, spec: TrafficSpec, destinations: Destinations, rng: Rng) -> Self {
        let (mean_on_cells, burst) = match spec.arrival {
            Arrival::Bernoulli => (spec.sizes.mean_cells(spec.cell_payload_bytes), None),
            Arrival::Bursty(burst) => (
                burst.mean_cells(spec.sizes, spec.cell_payload_bytes),
                Some((burst, burst.extra_units())),
            ),
        };
        let sends = spec.load > 0.0 && destinations != Destinations::Silent;
        let idle_slots = sends.then(|| {
            let mean_idle = mean_on_cells * (1.0 - spec.load) / spec.load;
            Geometric::new(1.0 / (1.0 + mean_idle)).expect("load in (0, 1] gives a valid geometric")
        });
        let budget = match (spec.bytes_per_pair, &destinations) {
            (
                Some(bytes),
                Destinations::Uniform {
                    ports,
                    include_self,
                },
            ) => Some(PairBudget::new(bytes, *ports, terminal, *include_self)),
            _ => None,
        };
        let mut generator = Generator {
            budget,
            terminal,
            spec,
            destinations,
            rng,
            idle_slots,
            burst,
            next_ps: NEVER_PS,
            dst: 0,
            packet_bytes_left: 0,
            burst_units_left: 0,
            packet_start_ps: NEVER_PS,
            packet_held_ps: 0,
            last_packet_held_ps: 0,
        };
        generator.start_on_period(0);
        generator
    }

    /// When the next cell is due, or [`NEVER_PS`].
    pub fn next_cell_ps(&self) -> TimePs {
        self.next_ps
    }

    /// How long the last packet emitted whole was held back at the source, its cells' due
    /// times moved later because the host's queue was full (0 in open loop).
    pub fn last_packet_held_ps(&self) -> TimePs {
        self.last_packet_held_ps
    }

    /// A finite workload's payload bytes not yet generated, over all destinations; `None`
    /// without one.
    pub fn workload_bytes_left(&self) -> Option<u64> {
        self.budget.as_ref().map(PairBudget::total_left)
    }

    /// True if the source may broadcast.
    pub fn broadcasts(&self) -> bool {
        self.spec.broadcast_fraction > 0.0
    }

    /// The source emits nothing at or after this time.
    pub fn stop_ps(&self) -> TimePs {
        self.spec.stop_ps
    }

    /// Emits the cell due at [`next_cell_ps`](Self::next_cell_ps) and advances.
    #[inline]
    pub fn emit(&mut self) -> Cell {
        debug_assert!(self.next_ps != NEVER_PS);
        if self.packet_start_ps == NEVER_PS {
            self.packet_start_ps = self.next_ps;
        }
        let payload = self.packet_bytes_left.min(self.spec.cell_payload_bytes);
        self.packet_bytes_left -= payload;
        let last_of_packet = self.packet_bytes_left == 0;
        let cell = Cell::new(
            self.terminal,
            self.dst,
            payload as u16,
            last_of_packet,
            self.next_ps,
            self.packet_start_ps,
        );
        let next_slot_ps = self.next_ps + self.spec.slot_ps;
        if last_of_packet {
            self.packet_start_ps = NEVER_PS;
            self.last_packet_held_ps = std::mem::take(&mut self.packet_held_ps);
        }
        if !last_of_packet {
            self.next_ps = next_slot_ps;
        } else if self.burst_units_left > 0
            && self.budget.as_ref().is_none_or(|b| b.has_left(self.dst))
        {
            self.next_packet_of_burst();
            self.next_ps = next_slot_ps;
        } else {
            self.start_on_period(next_slot_ps);
        }
        if self.next_ps >= self.spec.stop_ps {
            self.next_ps = NEVER_PS;
        }
        cell
    }

    /// Holds back a source whose next cell was due before `now_ps` (its host could not take it):
    /// the cell and everything after it move later by the hold-up, as a closed-loop test
    /// generator stalls while its output is full.
    pub fn defer_to(&mut self, now_ps: TimePs) {
        if self.next_ps < now_ps {
            self.packet_held_ps += now_ps - self.next_ps;
            self.next_ps = now_ps;
            if self.next_ps >= self.spec.stop_ps {
                self.next_ps = NEVER_PS;
            }
        }
    }

    /// Draws an idle gap from `from_ps`, then the destination and size of the next ON period.
    fn start_on_period(&mut self, from_ps: TimePs) {
        let Some(idle) = self.idle_slots else {
            self.next_ps = NEVER_PS;
            return;
        };
        let gap = idle.sample(&mut self.rng);
        self.next_ps = from_ps.saturating_add(gap.saturating_mul(self.spec.slot_ps));
        let budget_destination = self.budget.as_ref().map(|b| b.draw(&mut self.rng));
        self.dst = match budget_destination {
            None if self.draws_broadcast() => BROADCAST_DST,
            None => self.draw_destination(),
            Some(Some(dst)) => dst,
            Some(None) => {
                self.next_ps = NEVER_PS;
                return;
            }
        };
        let size = self.spec.sizes.draw(&mut self.rng);
        match self.burst {
            None => self.packet_bytes_left = size,
            Some((burst, extra)) => {
                self.burst_units_left = 1 + extra.sample(&mut self.rng);
                self.take_burst_units(burst, size);
            }
        }
        self.spend_budget();
    }

    /// Draws the next packet of a burst.
    fn next_packet_of_burst(&mut self) {
        let size = self.spec.sizes.draw(&mut self.rng);
        let (burst, _) = self.burst.expect("only bursts have a next packet");
        self.take_burst_units(burst, size);
        self.spend_budget();
    }

    /// Takes the packet just started from a finite workload's budget, cut to the bytes left
    /// for its destination.
    fn spend_budget(&mut self) {
        if let Some(budget) = &mut self.budget {
            self.packet_bytes_left = budget.take(self.dst, self.packet_bytes_left);
        }
    }

    /// Starts a packet of `size_bytes` and takes its units from the burst: its cells (cut to
    /// those left, or whole) or one packet.
    fn take_burst_units(&mut self, burst: Burst, size_bytes: u32) {
        let payload = self.spec.cell_payload_bytes as u64;
        let left = self.burst_units_left;
        let (bytes, units) = match burst {
            Burst::CutCells { .. } => {
                let bytes = (size_bytes as u64).min(left * payload);
                (bytes, bytes.div_ceil(payload))
            }
            Burst::WholeCells { .. } => {
                let cells = (size_bytes as u64).div_ceil(payload);
                (size_bytes as u64, cells.min(left))
            }
            Burst::WholePackets { .. } | Burst::FixedPackets { .. } => (size_bytes as u64, 1),
        };
        self.packet_bytes_left = bytes as u32;
        self.burst_units_left = left - units;
    }

    /// True if the next ON period is a broadcast (no draw without broadcasts, so a source
    /// that never broadcasts draws as it always has).
    fn draws_broadcast(&mut self) -> bool {
        let fraction = self.spec.broadcast_fraction;
        fraction > 0.0 && self.rng.gen_bool(fraction)
    }

    fn draw_destination(&mut self) -> u16 {
        match &self.destinations {
            &Destinations::Fixed(dst) => dst,
            &Destinations::Range { first, count } => first + self.rng.gen_range(0..count),
            &Destinations::Uniform {
                ports,
                include_self: true,
            } => self.rng.gen_range(0..ports),
            &Destinations::Uniform {
                ports,
                include_self: false,
            } => {
                let other = self.rng.gen_range(0..ports - 1);
                if other >= self.terminal {
                    other + 1
                } else {
                    other
                }
            }
            &Destinations::Hotspot {
                ports,
                port,
                fraction,
            } => {
                if self.rng.gen_bool(fraction) {
                    port
                } else {
                    self.rng.gen_range(0..ports)
                }
            }
            Destinations::Among { hosts, skip: None } => hosts[self.rng.gen_range(0..hosts.len())],
            &Destinations::Among {
                ref hosts,
                skip: Some(at),
            } => {
                let other = self.rng.gen_range(0..hosts.len() - 1);
                hosts[if other >= at { other + 1 } else { other }]
            }
            Destinations::Silent => unreachable!("a silent source starts no burst"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    fn spec(load: f64, arrival: Arrival, sizes: PacketSizes) -> TrafficSpec {
        TrafficSpec {
            load,
            arrival,
            sizes,
            cell_payload_bytes: 64,
            slot_ps: 10,
            stop_ps: 10 * 400_000,
            bytes_per_pair: None,
            broadcast_fraction: 0.0,
        }
    }

    fn run(spec: TrafficSpec, destinations: Destinations) -> Vec<Cell> {
        let mut g = Generator::new(
            1,
            spec,
            destinations,
            stream(3, ComponentId { kind: 9, index: 1 }),
        );
        let mut cells = Vec::new();
        while g.next_cell_ps() != NEVER_PS {
            let due = g.next_cell_ps();
            let cell = g.emit();
            assert_eq!(cell.inject_ps, due);
            assert!(g.next_cell_ps() > due, "at most one cell per slot");
            cells.push(cell);
        }
        cells
    }

    #[test]
    fn offered_load_matches_for_every_arrival_process() {
        let uniform = Destinations::Uniform {
            ports: 8,
            include_self: true,
        };
        for arrival in [
            Arrival::Bernoulli,
            Arrival::Bursty(Burst::CutCells { mean_cells: 16.0 }),
            Arrival::Bursty(Burst::WholeCells { mean_cells: 16.0 }),
            Arrival::Bursty(Burst::WholePackets { mean_packets: 3.0 }),
            Arrival::Bursty(Burst::FixedPackets { packets: 3 }),
        ] {
            for sizes in [
                PacketSizes::Fixed(64),
                PacketSizes::Uniform { min: 1, max: 300 },
            ] {
                for load in [0.2, 0.7, 1.0] {
                    let cells = run(spec(load, arrival, sizes), uniform.clone());
                    let measured = cells.len() as f64 / 400_000.0;
                    assert!(
                        (measured - load).abs() < 0.02,
                        "{arrival:?} {sizes:?} load {load}: {measured}"
                    );
                }
            }
        }
        assert!(run(
            spec(0.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            uniform
        )
        .is_empty());
    }

    /// Bursts go to one destination, hold whole packets, and have the configured mean length
    /// in cells whatever the packet sizes, even when a mean packet is longer than a mean burst
    /// (RIFL's Fig. 5: 1024-byte bursts of 64-2048-byte packets).
    #[test]
    fn bursts_share_a_destination_end_with_a_packet_and_have_the_requested_mean_length() {
        for (mean_burst_cells, sizes) in [
            (16.0, PacketSizes::Fixed(64)),
            (16.0, PacketSizes::Uniform { min: 1, max: 300 }),
            (4.0, PacketSizes::Uniform { min: 1, max: 1000 }),
        ] {
            let cells = run(
                spec(
                    0.5,
                    Arrival::Bursty(Burst::CutCells {
                        mean_cells: mean_burst_cells,
                    }),
                    sizes,
                ),
                Destinations::Uniform {
                    ports: 64,
                    include_self: true,
                },
            );
            // Consecutive slots with the same destination form one burst (adjacent bursts to
            // the same destination are rare with 64 destinations and are merged, biasing
            // slightly up).
            let mut bursts = 1;
            let mut one_cell_bursts = 0;
            let mut length = 1;
            for pair in cells.windows(2) {
                if pair[1].inject_ps != pair[0].inject_ps + 10 || pair[1].dst != pair[0].dst {
                    assert!(pair[0].last_of_packet, "a burst ends with a whole packet");
                    bursts += 1;
                    one_cell_bursts += u32::from(length == 1);
                    length = 0;
                }
                length += 1;
            }
            let mean = cells.len() as f64 / bursts as f64;
            assert!(
                (mean - mean_burst_cells).abs() < mean_burst_cells / 16.0,
                "{sizes:?}: mean burst {mean}"
            );
            // Geometric lengths: a fraction 1/mean of bursts is one cell long.
            let single = one_cell_bursts as f64 / bursts as f64;
            assert!(
                (single - 1.0 / mean_burst_cells).abs() < 0.02,
                "{sizes:?}: {single} of bursts are one cell"
            );
        }
    }

    /// Splits cells into bursts (consecutive slots, one destination) and packets; returns
    /// (burst lengths in cells, packet sizes in bytes).
    /// A fixed burst is a message of exactly its packets: every burst (bursts to one host back
    /// to back count as one) is a whole number of messages, and nearly all are one.
    #[test]
    fn fixed_bursts_have_exactly_their_packets() {
        let mut spec = spec(
            0.3,
            Arrival::Bursty(Burst::FixedPackets { packets: 5 }),
            PacketSizes::Fixed(200),
        );
        spec.stop_ps = 10 * 200_000;
        let destinations = Destinations::Uniform {
            ports: 256,
            include_self: true,
        };
        let (bursts, packets) = bursts_and_packets(&run(spec, destinations));
        let message_cells = 5 * 200u64.div_ceil(64);
        assert!(
            bursts.iter().all(|cells| cells % message_cells == 0),
            "{bursts:?}"
        );
        let single = bursts
            .iter()
            .filter(|&&cells| cells == message_cells)
            .count();
        assert!(single as f64 > 0.95 * bursts.len() as f64 && bursts.len() > 100);
        assert!(packets.iter().all(|&bytes| bytes == 200));
    }

    /// A silent source (a host no pair starts from) sends nothing at any load.
    #[test]
    fn a_silent_source_sends_nothing() {
        assert!(run(
            spec(1.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            Destinations::Silent
        )
        .is_empty());
    }

    fn bursts_and_packets(cells: &[Cell]) -> (Vec<u64>, Vec<u32>) {
        let (mut bursts, mut packets) = (vec![0u64], vec![0u32]);
        for (i, cell) in cells.iter().enumerate() {
            let follows = i > 0
                && cell.inject_ps == cells[i - 1].inject_ps + 10
                && cell.dst == cells[i - 1].dst;
            if i > 0 && !follows {
                assert!(
                    cells[i - 1].last_of_packet,
                    "a burst ends with a packet's end"
                );
                bursts.push(0);
            }
            *bursts.last_mut().unwrap() += 1;
            *packets.last_mut().unwrap() += cell.payload_bytes as u32;
            if cell.last_of_packet {
                packets.push(0);
            }
        }
        packets.pop();
        (bursts, packets)
    }

    /// Whole-packet bursts keep the packet-size distribution (uniform 64-2048 bytes: mean
    /// 1056), unlike bursts that cut their last packet, and their mean length in cells is the
    /// one [`Burst::mean_cells`] computes (which sets the idle gaps, hence the load).
    #[test]
    fn whole_packet_bursts_keep_the_packet_sizes_and_have_the_computed_mean() {
        let sizes = PacketSizes::Uniform { min: 64, max: 2048 };
        let mut spec = spec(0.4, Arrival::Bernoulli, sizes);
        spec.cell_payload_bytes = 256;
        spec.stop_ps = 10 * 2_000_000;
        let destinations = Destinations::Uniform {
            ports: 256,
            include_self: true,
        };
        for burst in [
            Burst::CutCells { mean_cells: 4.0 },
            Burst::WholeCells { mean_cells: 4.0 },
            Burst::WholePackets { mean_packets: 4.0 },
        ] {
            spec.arrival = Arrival::Bursty(burst);
            let (bursts, packets) = bursts_and_packets(&run(spec, destinations.clone()));
            let mean_packet = packets.iter().map(|&b| b as f64).sum::<f64>() / packets.len() as f64;
            let mean_burst = bursts.iter().sum::<u64>() as f64 / bursts.len() as f64;
            let expected = burst.mean_cells(sizes, 256);
            assert!(
                (mean_burst - expected).abs() < 0.03 * expected,
                "{burst:?}: mean burst {mean_burst} cells, computed {expected}"
            );
            let keeps_sizes = (mean_packet - 1056.0).abs() < 15.0;
            assert_eq!(
                keeps_sizes,
                !matches!(burst, Burst::CutCells { .. }),
                "{burst:?}: mean packet {mean_packet} bytes"
            );
        }
    }

    /// A finite workload sends exactly its bytes to every other terminal and then stops, long
    /// before the run would end.
    #[test]
    fn a_finite_workload_sends_each_pair_its_bytes_and_stops() {
        for arrival in [
            Arrival::Bernoulli,
            Arrival::Bursty(Burst::WholeCells { mean_cells: 4.0 }),
        ] {
            let mut spec = spec(0.8, arrival, PacketSizes::Uniform { min: 1, max: 300 });
            spec.bytes_per_pair = Some(5_000);
            let cells = run(
                spec,
                Destinations::Uniform {
                    ports: 6,
                    include_self: false,
                },
            );
            let mut bytes = [0u64; 6];
            for cell in &cells {
                bytes[cell.dst as usize] += cell.payload_bytes as u64;
            }
            assert_eq!(bytes, [5_000, 0, 5_000, 5_000, 5_000, 5_000], "{arrival:?}");
            assert!(cells.last().unwrap().last_of_packet);
            assert!(cells.last().unwrap().inject_ps < spec.stop_ps / 2);
        }
    }

    #[test]
    fn packets_are_cut_into_cells_with_padding_of_the_last() {
        let cells = run(
            spec(0.3, Arrival::Bernoulli, PacketSizes::Fixed(150)),
            Destinations::Fixed(0),
        );
        let payloads: Vec<u16> = cells.iter().take(3).map(|c| c.payload_bytes).collect();
        assert_eq!(payloads, vec![64, 64, 22]);
        assert!(cells[2].last_of_packet && !cells[1].last_of_packet);
        assert!(cells.iter().all(|c| c.dst == 0));
        assert_eq!(
            PacketSizes::Uniform { min: 1, max: 128 }.mean_cells(64),
            1.5
        );
    }

    #[test]
    fn a_source_among_listed_hosts_sends_only_to_them() {
        let hosts: Arc<[u16]> = vec![1, 4, 5, 7].into();
        // Terminal 1 is at place 0.
        let among = |include_self: bool| Destinations::Among {
            hosts: hosts.clone(),
            skip: (!include_self).then_some(0),
        };
        // `run` makes terminal 1's cells.
        let cells = run(
            spec(1.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            among(false),
        );
        assert!(cells.len() > 100);
        assert!(cells.iter().all(|c| [4, 5, 7].contains(&c.dst)));
        for dst in [4, 5, 7] {
            assert!(cells.iter().any(|c| c.dst == dst), "never sent to {dst}");
        }
        let cells = run(
            spec(1.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            among(true),
        );
        assert!(cells.iter().any(|c| c.dst == 1));
        assert!(cells.iter().all(|c| hosts.contains(&c.dst)));
    }

    #[test]
    fn destinations_follow_the_pattern() {
        let cells = run(
            spec(1.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            Destinations::Uniform {
                ports: 4,
                include_self: false,
            },
        );
        assert!(cells.iter().all(|c| c.dst != 1 && c.dst < 4));
        let hot = run(
            spec(1.0, Arrival::Bernoulli, PacketSizes::Fixed(64)),
            Destinations::Hotspot {
                ports: 4,
                port: 2,
                fraction: 0.5,
            },
        );
        let share = hot.iter().filter(|c| c.dst == 2).count() as f64 / hot.len() as f64;
        let band = crate::engine::stats::binomial_band(0.625, hot.len() as f64);
        assert!((share - 0.625).abs() < band, "hot share {share} ± {band}");
    }
}
