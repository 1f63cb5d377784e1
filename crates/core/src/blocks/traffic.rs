//! Traffic sources: on/off cell arrivals as in the iSLIP paper (McKeown 1999, §VI).
//!
//! A source alternates ON periods, during which it emits one cell per slot, and idle periods of
//! geometrically distributed length chosen so the long-run fraction of busy slots equals the
//! offered load. Under Bernoulli arrivals an ON period is one packet; under bursty arrivals it is
//! a geometrically distributed number of cells (iSLIP §VI; RIFL §V: "each bursty period contains
//! a geometrically distributed number of cells"), all to one destination, filled with whole
//! packets drawn from the size distribution, the last cut to the cells left, so bursts have the
//! configured mean whatever the packet sizes. Packets are cut into cells; the last cell of a
//! packet is padded.

use rand::Rng as _;
use rand_distr::{Distribution, Geometric};

use super::cell::Cell;
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
    /// Geometric bursts of cells to one destination, filled with whole packets.
    Bursty {
        /// Mean burst length in cells (at least 1).
        mean_burst_cells: f64,
    },
}

/// Where a source's packets go.
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// Expected number of cells per packet when each cell carries `cell_payload_bytes`.
    pub fn mean_cells(self, cell_payload_bytes: u32) -> f64 {
        let cells = |size: u32| size.div_ceil(cell_payload_bytes) as f64;
        match self {
            PacketSizes::Fixed(size) => cells(size),
            PacketSizes::Uniform { min, max } => {
                (min..=max).map(cells).sum::<f64>() / (max - min + 1) as f64
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
}

/// One terminal's traffic source.
pub struct Generator {
    terminal: u16,
    spec: TrafficSpec,
    destinations: Destinations,
    rng: Rng,
    idle_slots: Option<Geometric>,
    /// Bursty arrivals: cells of a burst beyond its first.
    extra_burst_cells: Option<Geometric>,
    next_ps: TimePs,
    dst: u16,
    packet_bytes_left: u32,
    /// Cells of the current burst not yet given to a packet.
    burst_cells_left: u64,
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
        let (mean_on_cells, extra_burst_cells) = match spec.arrival {
            Arrival::Bernoulli => (spec.sizes.mean_cells(spec.cell_payload_bytes), None),
            Arrival::Bursty { mean_burst_cells } => {
                let mean = mean_burst_cells.max(1.0);
                let extra = Geometric::new(1.0 / mean).expect("mean burst of at least one cell");
                (mean, Some(extra))
            }
        };
        let idle_slots = (spec.load > 0.0).then(|| {
            let mean_idle = mean_on_cells * (1.0 - spec.load) / spec.load;
            Geometric::new(1.0 / (1.0 + mean_idle)).expect("load in (0, 1] gives a valid geometric")
        });
        let mut generator = Generator {
            terminal,
            spec,
            destinations,
            rng,
            idle_slots,
            extra_burst_cells,
            next_ps: NEVER_PS,
            dst: 0,
            packet_bytes_left: 0,
            burst_cells_left: 0,
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

    /// The source emits nothing at or after this time.
    pub fn stop_ps(&self) -> TimePs {
        self.spec.stop_ps
    }

    /// Emits the cell due at [`next_cell_ps`](Self::next_cell_ps) and advances.
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
        } else if self.burst_cells_left > 0 {
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
        self.dst = self.draw_destination();
        let size = self.spec.sizes.draw(&mut self.rng);
        match self.extra_burst_cells {
            None => self.packet_bytes_left = size,
            Some(extra) => {
                self.burst_cells_left = 1 + extra.sample(&mut self.rng);
                self.take_burst_cells(size);
            }
        }
    }

    /// Draws the next packet of a burst.
    fn next_packet_of_burst(&mut self) {
        let size = self.spec.sizes.draw(&mut self.rng);
        self.take_burst_cells(size);
    }

    /// Starts a packet of `size_bytes`, cut to the burst's cells left.
    fn take_burst_cells(&mut self, size_bytes: u32) {
        let payload = self.spec.cell_payload_bytes as u64;
        let bytes = (size_bytes as u64).min(self.burst_cells_left * payload);
        self.packet_bytes_left = bytes as u32;
        self.burst_cells_left -= bytes.div_ceil(payload);
    }

    fn draw_destination(&mut self) -> u16 {
        match self.destinations {
            Destinations::Fixed(dst) => dst,
            Destinations::Range { first, count } => first + self.rng.gen_range(0..count),
            Destinations::Uniform {
                ports,
                include_self: true,
            } => self.rng.gen_range(0..ports),
            Destinations::Uniform {
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
            Destinations::Hotspot {
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
            Arrival::Bursty {
                mean_burst_cells: 16.0,
            },
        ] {
            for sizes in [
                PacketSizes::Fixed(64),
                PacketSizes::Uniform { min: 1, max: 300 },
            ] {
                for load in [0.2, 0.7, 1.0] {
                    let cells = run(spec(load, arrival, sizes), uniform);
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
                spec(0.5, Arrival::Bursty { mean_burst_cells }, sizes),
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
        assert!((share - 0.625).abs() < 0.01, "hot share {share}");
    }
}
