//! The retransmission timer's value (RFC 6298 §2): a smoothed round-trip time and its mean
//! deviation from each sample, RTO = SRTT + 4·RTTVAR, at least a minimum, doubled on every
//! expiry (§5.5) up to a maximum, and recomputed from the next sample.

use crate::engine::time::TimePs;

/// One flow's round-trip estimate and retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct RtoEstimator {
    /// Smoothed round-trip time (0 before the first sample).
    srtt_ps: TimePs,
    /// Round-trip time variation.
    rttvar_ps: TimePs,
    /// The timeout in force (backed off after expiries).
    rto_ps: TimePs,
    /// The smallest timeout (RFC 6298 §2.4 says 1 s; datacenters run far lower).
    min_rto_ps: TimePs,
    /// The largest timeout (§2.5: at least 60 s; a backed-off RTO stops doubling here).
    max_rto_ps: TimePs,
}

impl RtoEstimator {
    /// No sample yet: the timeout starts at `min_rto_ps` (RFC 6298 §2.1's 1 s would idle a
    /// datacenter run for its whole length after one early loss).
    pub fn new(min_rto_ps: TimePs, max_rto_ps: TimePs) -> Self {
        RtoEstimator {
            srtt_ps: 0,
            rttvar_ps: 0,
            rto_ps: min_rto_ps,
            min_rto_ps,
            max_rto_ps: max_rto_ps.max(min_rto_ps),
        }
    }

    /// Takes a round-trip sample (§2.2, §2.3, with α = 1/8 and β = 1/4).
    pub fn sample(&mut self, rtt_ps: TimePs) {
        if self.srtt_ps == 0 {
            self.srtt_ps = rtt_ps.max(1);
            self.rttvar_ps = rtt_ps / 2;
        } else {
            let error_ps = self.srtt_ps.abs_diff(rtt_ps);
            self.rttvar_ps = (3 * self.rttvar_ps + error_ps) / 4;
            self.srtt_ps = (7 * self.srtt_ps + rtt_ps) / 8;
        }
        self.rto_ps = (self.srtt_ps + 4 * self.rttvar_ps).clamp(self.min_rto_ps, self.max_rto_ps);
    }

    /// The timer expired: back off (§5.5).
    pub fn back_off(&mut self) {
        self.rto_ps = (2 * self.rto_ps).min(self.max_rto_ps);
    }

    /// The timeout in force.
    pub fn rto_ps(&self) -> TimePs {
        self.rto_ps
    }

    /// The smoothed round-trip time (0 before the first sample).
    pub fn srtt_ps(&self) -> TimePs {
        self.srtt_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_6298_estimator_converges_floors_and_backs_off() {
        let mut rto = RtoEstimator::new(1_000, 1_000_000);
        assert_eq!(rto.rto_ps(), 1_000);
        rto.sample(400);
        // SRTT = 400, RTTVAR = 200: 400 + 800 = 1 200.
        assert_eq!((rto.srtt_ps(), rto.rto_ps()), (400, 1_200));
        for _ in 0..200 {
            rto.sample(400);
        }
        assert_eq!(rto.srtt_ps(), 400);
        assert_eq!(rto.rto_ps(), 1_000, "floored at the minimum");
        rto.back_off();
        rto.back_off();
        assert_eq!(rto.rto_ps(), 4_000);
        for _ in 0..20 {
            rto.back_off();
        }
        assert_eq!(rto.rto_ps(), 1_000_000, "capped");
        rto.sample(400);
        assert_eq!(rto.rto_ps(), 1_000, "a new sample recomputes it");
    }
}
