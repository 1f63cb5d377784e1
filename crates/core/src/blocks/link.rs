//! A point-to-point link: serialization at a fixed rate, then propagation delay. A cable of a
//! fabric is one link each way, with its own rate, length and per-cell overhead. The packet
//! designs (Ethernet, Stardust) read their cables from one `[link]` section, [`LinkConfig`].

use serde::{Deserialize, Serialize};

use crate::engine::time::{ps_from_ns, serialization_ps, TimePs, PS_PER_S};
use crate::keys::{invalid, ScenarioError};

/// The transmit side of a unidirectional link. One frame serializes at a time; the next may start
/// when the previous has left the transmitter.
#[derive(Clone, Debug)]
pub struct Link {
    /// Line rate.
    pub rate_bps: u64,
    /// Propagation delay (cable and fixed pipeline latency).
    pub propagation_ps: TimePs,
    /// Bytes every frame carries on the wire beyond its own (FEC, framing).
    pub overhead_bytes: u32,
    busy_until_ps: TimePs,
    /// Picoseconds per byte on the wire where the rate divides a byte-second exactly (800 at
    /// 10 Gbit/s): a frame's time is then one multiplication, the same as the division gives;
    /// 0 for other rates.
    ps_per_byte: u64,
    /// Serialization time of the last frame size sent, to skip the division for fixed-size
    /// cells at other rates.
    last_frame: (u64, TimePs),
}

impl Link {
    /// An idle link.
    pub fn new(rate_bps: u64, propagation_ps: TimePs) -> Self {
        Link {
            rate_bps,
            propagation_ps,
            overhead_bytes: 0,
            busy_until_ps: 0,
            ps_per_byte: if rate_bps > 0 && (8 * PS_PER_S).is_multiple_of(rate_bps) {
                8 * PS_PER_S / rate_bps
            } else {
                0
            },
            last_frame: (0, 0),
        }
    }

    /// The same link with `overhead_bytes` more on the wire for every frame.
    pub fn with_overhead(self, overhead_bytes: u32) -> Self {
        Link {
            overhead_bytes,
            ..self
        }
    }

    /// Time the transmitter is busy with a frame of `size_bytes` (overhead included).
    #[inline]
    pub fn frame_ps(&self, size_bytes: u64) -> TimePs {
        let wire_bytes = size_bytes + self.overhead_bytes as u64;
        match wire_bytes.checked_mul(self.ps_per_byte) {
            Some(frame_ps) if self.ps_per_byte != 0 => frame_ps,
            _ => serialization_ps(wire_bytes, self.rate_bps),
        }
    }

    /// True if a new frame may start serializing at `now_ps`.
    pub fn is_idle(&self, now_ps: TimePs) -> bool {
        self.busy_until_ps <= now_ps
    }

    /// Keeps the transmitter from starting a frame before `at_ps` (a link protocol holding
    /// the port).
    pub fn hold_until(&mut self, at_ps: TimePs) {
        self.busy_until_ps = self.busy_until_ps.max(at_ps);
    }

    /// When the transmitter becomes free.
    pub fn busy_until_ps(&self) -> TimePs {
        self.busy_until_ps
    }

    /// Starts sending `size_bytes` at `now_ps` (the link must be idle) and returns when the last
    /// bit arrives at the far end.
    #[inline]
    pub fn transmit(&mut self, now_ps: TimePs, size_bytes: u64) -> TimePs {
        debug_assert!(self.is_idle(now_ps), "transmit on a busy link");
        let frame_ps = if self.ps_per_byte != 0 {
            self.frame_ps(size_bytes)
        } else {
            if self.last_frame.0 != size_bytes {
                self.last_frame = (size_bytes, self.frame_ps(size_bytes));
            }
            self.last_frame.1
        };
        self.busy_until_ps = now_ps + frame_ps;
        self.busy_until_ps + self.propagation_ps
    }
}

/// Every cable, both directions.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Line rate in Gbit/s.
    pub rate_gbps: f64,
    /// One-way propagation delay in nanoseconds.
    pub propagation_ns: f64,
    /// Line rate of the hosts' links in Gbit/s; absent: `rate_gbps` (a topology file's cable
    /// rate wins over both). Fig. 9 sizes an adapter's host side to a fraction of its fabric
    /// side this way.
    pub host_rate_gbps: Option<f64>,
}

/// The fastest link a scenario may ask for (100 Tbit/s: a 64-byte cell still takes 5 ps). Time
/// is counted in picoseconds, so much faster links serialize in a picosecond or none and a run
/// drowns in same-instant events (a fuzzed 10^12 Gbit/s ran out of memory).
pub const MAX_RATE_GBPS: f64 = 100_000.0;

impl LinkConfig {
    /// The fabric's line rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        (self.rate_gbps * 1e9).round() as u64
    }

    /// A host link's line rate in bit/s (`host_rate_gbps`, else the fabric's).
    pub fn host_rate_bps(&self) -> u64 {
        (self.host_rate_gbps.unwrap_or(self.rate_gbps) * 1e9).round() as u64
    }

    /// A cable's propagation delay.
    pub fn propagation_ps(&self) -> TimePs {
        ps_from_ns(self.propagation_ns)
    }

    /// Checks the rates and the propagation delay: the one check of every packet design's
    /// `[link]` section.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let rate_ok = |gbps: f64| gbps.is_finite() && (0.001..=MAX_RATE_GBPS).contains(&gbps);
        let expected = format!("expected 0.001 to {MAX_RATE_GBPS} Gbit/s");
        if !rate_ok(self.rate_gbps) {
            return Err(invalid("link.rate_gbps", expected));
        }
        if self.host_rate_gbps.is_some_and(|r| !rate_ok(r)) {
            return Err(invalid("link.host_rate_gbps", expected));
        }
        if !(self.propagation_ns.is_finite() && self.propagation_ns >= 0.0) {
            return Err(invalid(
                "link.propagation_ns",
                "expected 0 or more nanoseconds",
            ));
        }
        Ok(())
    }
}

impl Default for LinkConfig {
    /// The htsim setup of §6.3: 10 Gbit/s, 1 µs per link.
    fn default() -> Self {
        LinkConfig {
            rate_gbps: 10.0,
            propagation_ns: 1_000.0,
            host_rate_gbps: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_is_serialization_plus_propagation() {
        let mut link = Link::new(100_000_000_000, 5_000);
        assert!(link.is_idle(0));
        assert_eq!(link.transmit(1_000, 256), 1_000 + 20_480 + 5_000);
        assert!(!link.is_idle(21_479));
        assert!(link.is_idle(21_480));
        assert_eq!(link.busy_until_ps(), 21_480);
    }

    #[test]
    fn overhead_takes_the_wire_too() {
        let mut link = Link::new(100_000_000_000, 5_000).with_overhead(16);
        assert_eq!(link.frame_ps(256), 20_480 + 1_280);
        assert_eq!(link.transmit(0, 256), 21_760 + 5_000);
    }

    /// A frame's time is the rounded-up division whether the rate divides a byte-second (the
    /// multiplication path) or not (10.3125 Gbit/s, 7 bit/s), alternating sizes included.
    #[test]
    fn frame_time_is_the_division_at_every_rate() {
        for rate_bps in [10_000_000_000, 100_000_000_000, 10_312_500_000, 7, 1] {
            for overhead_bytes in [0, 5] {
                let mut link = Link::new(rate_bps, 3).with_overhead(overhead_bytes);
                let mut now_ps = 0;
                for size_bytes in [64, 9000, 64, 64, 1500, 9000, 0, 65_535] {
                    let expected = serialization_ps(size_bytes + overhead_bytes as u64, rate_bps);
                    assert_eq!(link.frame_ps(size_bytes), expected, "{rate_bps} bit/s");
                    assert_eq!(link.transmit(now_ps, size_bytes), now_ps + expected + 3);
                    now_ps = link.busy_until_ps();
                }
            }
        }
    }
}
