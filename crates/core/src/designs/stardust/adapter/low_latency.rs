//! Low-latency VOQs (Stardust §5.6: "a low latency VOQ starts transmitting immediately. We
//! assume a limited aggregate bandwidth of all low latency VOQs"): the adapter's bound on what
//! its packets sent without a credit may take, as a token bucket over all its VOQs (reading
//! R41). A packet the bucket does not hold waits for credits like any other.

use crate::engine::time::{serialization_ps, TimePs};

/// The aggregate bound of an adapter's low-latency sends: a token bucket of `depth_bytes`
/// filling at `rate_bps`, kept as the time it will next be full (a virtual clock).
#[derive(Clone, Debug)]
pub struct LowLatencyBucket {
    /// Packets at most this size qualify.
    pub max_packet_bytes: u32,
    /// The aggregate rate.
    rate_bps: u64,
    /// The time to fill the whole bucket at `rate_bps`.
    depth_ps: TimePs,
    /// When the bucket is full again (at or before now: it is full).
    full_at_ps: TimePs,
}

impl LowLatencyBucket {
    /// A full bucket for packets of at most `max_packet_bytes`, holding `depth_bytes` and
    /// filling at `rate_bps`.
    pub fn new(max_packet_bytes: u32, rate_bps: u64, depth_bytes: u64) -> Self {
        LowLatencyBucket {
            max_packet_bytes,
            rate_bps,
            depth_ps: serialization_ps(depth_bytes, rate_bps),
            full_at_ps: 0,
        }
    }

    /// A packet of `size_bytes` at `now_ps` may go at once: it qualifies and the bucket holds
    /// its bytes, which it then spends (true); else nothing changes (false).
    pub fn spend(&mut self, size_bytes: u32, now_ps: TimePs) -> bool {
        if size_bytes > self.max_packet_bytes {
            return false;
        }
        let full_at_ps =
            self.full_at_ps.max(now_ps) + serialization_ps(size_bytes as u64, self.rate_bps);
        if full_at_ps - now_ps > self.depth_ps {
            return false;
        }
        self.full_at_ps = full_at_ps;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 Gbit/s, 3 000 bytes deep: 24 µs to fill.
    fn bucket() -> LowLatencyBucket {
        LowLatencyBucket::new(1_500, 1_000_000_000, 3_000)
    }

    #[test]
    fn a_full_bucket_passes_its_depth_then_refills_at_its_rate() {
        let mut b = bucket();
        assert!(!b.spend(1_501, 0), "too large to qualify");
        assert!(b.spend(1_500, 0));
        assert!(b.spend(1_500, 0), "3 000 bytes deep");
        assert!(!b.spend(64, 0), "empty");
        // 1 500 bytes at 1 Gbit/s take 12 µs to come back.
        assert!(!b.spend(1_500, 11_999_999));
        assert!(b.spend(1_500, 12_000_000));
        // Full again at 36 µs; offered one 1 500-byte packet per 6 µs for 6 ms from then, it
        // passes its depth (two) and then its rate (one per 12 µs: 499 more).
        let passed = (0..1_000u64)
            .filter(|i| b.spend(1_500, 36_000_000 + i * 6_000_000))
            .count();
        assert_eq!(passed, 2 + 499);
    }
}
