//! Simulated time is an integer number of picoseconds.

/// A point in simulated time or a duration, in picoseconds.
pub type TimePs = u64;

/// Picoseconds in one nanosecond.
pub const PS_PER_NS: u64 = 1_000;

/// Picoseconds in one second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Time to serialize `size_bytes` onto a link of `rate_bps`, rounded up to a whole picosecond.
pub fn serialization_ps(size_bytes: u64, rate_bps: u64) -> TimePs {
    assert!(rate_bps > 0, "link rate must be positive");
    match size_bytes.checked_mul(8 * PS_PER_S) {
        Some(bits_times_ps) => bits_times_ps.div_ceil(rate_bps),
        None => (size_bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128) as TimePs,
    }
}

/// The longest run the clock holds, in nanoseconds: about 116 simulated days. Time counts
/// picoseconds in 64 bits (up to about 213 days); the rest is headroom for events a run
/// schedules beyond its end.
pub const MAX_DURATION_NS: f64 = 1e16;

/// The message for a run length the clock cannot hold, or that is not a positive length.
pub fn duration_expected() -> String {
    format!("expected a positive number of nanoseconds, at most {MAX_DURATION_NS:e} (about 116 days: the clock counts picoseconds in 64 bits)")
}

/// Whether `duration_ns` is a run length the clock holds.
pub fn duration_fits(duration_ns: f64) -> bool {
    duration_ns.is_finite() && duration_ns <= MAX_DURATION_NS && ps_from_ns(duration_ns) > 0
}

/// A duration given in nanoseconds (as scenarios give them), to the nearest picosecond.
pub fn ps_from_ns(ns: f64) -> TimePs {
    (ns * PS_PER_NS as f64).round() as TimePs
}

/// Rounds `time_ps` up to the next multiple of `period_ps` (a slot boundary).
pub fn next_boundary_ps(time_ps: TimePs, period_ps: TimePs) -> TimePs {
    time_ps.div_ceil(period_ps) * period_ps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_of_a_256_byte_cell_at_100_gbps_is_20_48_ns() {
        assert_eq!(serialization_ps(256, 100_000_000_000), 20_480);
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bps = 8/3 s.
        assert_eq!(serialization_ps(1, 3), 2_666_666_666_667);
    }

    #[test]
    fn boundaries() {
        assert_eq!(next_boundary_ps(0, 10), 0);
        assert_eq!(next_boundary_ps(1, 10), 10);
        assert_eq!(next_boundary_ps(10, 10), 10);
    }
}
