//! Bit errors on a cable, as the frames they corrupt: independent errors at a fixed bit error
//! rate, or correlated ones in bursts by the Gilbert–Elliott model (Gilbert 1960, Elliott 1963:
//! a good and a bad state, each with its own bit error rate, held for geometric stretches). RIFL
//! Layer 1 (Shen and Chow 2023, §II-A) recovers whatever corrupts a frame; how the errors fall in
//! time decides how many recoveries they cost, since errors that land in one retransmission cycle
//! share it.
//!
//! The model works in frame times: the state changes between frames, and a frame in a state is
//! corrupted with the probability that any of its bits fails at that state's rate.

use rand_distr::{Distribution, Geometric};

use crate::engine::rng::Rng;
use crate::keys::{invalid, ScenarioError};

/// The highest bit error rate a scenario may ask for, in either state.
pub const MAX_BER: f64 = 1e-3;

/// How bit errors fall on each direction of a cable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BitErrors {
    /// Every bit fails independently at `ber`.
    Independent {
        /// Errors per bit.
        ber: f64,
    },
    /// Gilbert–Elliott: bits fail at `ber` in the good state and at `burst_ber` in the bad one;
    /// a bad stretch lasts `burst_frames` frames on average and good stretches `gap_frames`
    /// (both geometric).
    GilbertElliott {
        /// Errors per bit in the good state.
        ber: f64,
        /// Errors per bit in a burst.
        burst_ber: f64,
        /// Mean frames a burst lasts.
        burst_frames: f64,
        /// Mean frames between bursts.
        gap_frames: f64,
    },
}

impl BitErrors {
    /// The model the `link` keys describe (`ber`, and `error_burst_ber`, `error_burst_frames`,
    /// `error_burst_gap_frames`; bursts only with a burst rate above 0), checked, naming the key
    /// at fault.
    pub fn from_keys(
        ber: f64,
        burst_ber: f64,
        burst_frames: f64,
        gap_frames: f64,
    ) -> Result<Self, ScenarioError> {
        for (key, rate) in [("link.ber", ber), ("link.error_burst_ber", burst_ber)] {
            if !(rate.is_finite() && (0.0..=MAX_BER).contains(&rate)) {
                return Err(invalid(
                    key,
                    format!("expected a bit error rate from 0 to {MAX_BER:e}, got {rate}"),
                ));
            }
        }
        if burst_ber == 0.0 {
            return Ok(BitErrors::Independent { ber });
        }
        for (key, frames) in [
            ("link.error_burst_frames", burst_frames),
            ("link.error_burst_gap_frames", gap_frames),
        ] {
            if !(frames.is_finite() && frames >= 1.0) {
                return Err(invalid(
                    key,
                    format!("expected a mean of at least 1 frame with link.error_burst_ber above 0, got {frames}"),
                ));
            }
        }
        Ok(BitErrors::GilbertElliott {
            ber,
            burst_ber,
            burst_frames,
            gap_frames,
        })
    }

    /// No bit ever fails.
    pub fn is_error_free(self) -> bool {
        match self {
            BitErrors::Independent { ber } => ber == 0.0,
            BitErrors::GilbertElliott { ber, burst_ber, .. } => ber == 0.0 && burst_ber == 0.0,
        }
    }

    /// The long-run bit error rate: the states' rates weighted by the share of time in each.
    pub fn long_run_ber(self) -> f64 {
        match self {
            BitErrors::Independent { ber } => ber,
            BitErrors::GilbertElliott {
                ber,
                burst_ber,
                burst_frames,
                gap_frames,
            } => (ber * gap_frames + burst_ber * burst_frames) / (gap_frames + burst_frames),
        }
    }

    /// The model's name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            BitErrors::Independent { .. } => "independent",
            BitErrors::GilbertElliott { .. } => "gilbert_elliott",
        }
    }
}

/// Probability that a frame of `frame_bytes` has at least one of its bits in error, bits
/// failing independently at `ber`.
pub fn frame_error_probability(ber: f64, frame_bytes: u64) -> f64 {
    let bits = 8.0 * frame_bytes as f64;
    -(bits * (-ber).ln_1p()).exp_m1()
}

/// Gaps between corrupted frames at one frame error probability: geometric, or never when the
/// probability is below the resolution of a double (`1 − p == 1`: one error in more than 2⁵³
/// frames).
fn error_gaps(probability: f64) -> Option<Geometric> {
    (probability > 0.0 && 1.0 - probability < 1.0)
        .then(|| Geometric::new(probability).expect("0 < p <= 1"))
}

/// The bursts of a Gilbert–Elliott model: gaps between errors inside a burst, and the lengths of
/// the good and bad stretches.
struct Bursts {
    burst_gaps: Option<Geometric>,
    /// Extra frames a burst lasts beyond its first.
    burst_extra_frames: Geometric,
    /// Extra frames a good stretch lasts beyond its first.
    good_extra_frames: Geometric,
    in_burst: bool,
    /// The first frame of the next stretch.
    stretch_end: u64,
}

impl Bursts {
    /// Enters the other state at the end of the current stretch.
    fn next_stretch(&mut self, rng: &mut Rng) {
        self.in_burst = !self.in_burst;
        let extra = if self.in_burst {
            &self.burst_extra_frames
        } else {
            &self.good_extra_frames
        };
        self.stretch_end += 1 + extra.sample(rng);
    }
}

/// The corrupted frames of one direction.
pub struct FrameErrors {
    /// Gaps between errors in the good state (the only state of independent errors).
    gaps: Option<Geometric>,
    bursts: Option<Bursts>,
    rng: Rng,
    next_slot: u64,
}

impl FrameErrors {
    /// The frames of `frame_bytes` that `errors` corrupts, drawn from `rng`.
    pub fn new(errors: BitErrors, frame_bytes: u64, rng: Rng) -> Self {
        let (ber, bursts) = match errors {
            BitErrors::Independent { ber } => (ber, None),
            BitErrors::GilbertElliott {
                ber,
                burst_ber,
                burst_frames,
                gap_frames,
            } => {
                let extra = |mean: f64| Geometric::new(1.0 / mean).expect("a mean of at least 1");
                let bursts = Bursts {
                    burst_gaps: error_gaps(frame_error_probability(burst_ber, frame_bytes)),
                    burst_extra_frames: extra(burst_frames),
                    good_extra_frames: extra(gap_frames),
                    in_burst: false,
                    stretch_end: 0,
                };
                (ber, Some(bursts))
            }
        };
        let mut errors = FrameErrors {
            gaps: error_gaps(frame_error_probability(ber, frame_bytes)),
            bursts,
            rng,
            next_slot: 0,
        };
        if let Some(b) = &mut errors.bursts {
            b.stretch_end = 1 + b.good_extra_frames.sample(&mut errors.rng);
        }
        errors.next_slot = errors.next_error_from(0);
        errors
    }

    /// The first corrupted frame at or after `slot`. Within a stretch the gaps are geometric,
    /// and memoryless, so a gap that runs past the stretch's end is drawn again from there in
    /// the next state.
    fn next_error_from(&mut self, mut slot: u64) -> u64 {
        loop {
            let Some(b) = &mut self.bursts else {
                return draw_gap(&self.gaps, &mut self.rng).map_or(u64::MAX, |g| slot + g);
            };
            if self.gaps.is_none() && b.burst_gaps.is_none() {
                return u64::MAX; // no state ever corrupts a frame
            }
            while b.stretch_end <= slot {
                b.next_stretch(&mut self.rng);
            }
            let gaps = if b.in_burst {
                &b.burst_gaps
            } else {
                &self.gaps
            };
            if let Some(at) = draw_gap(gaps, &mut self.rng).map(|g| slot + g) {
                if at < b.stretch_end {
                    return at;
                }
            }
            slot = b.stretch_end;
        }
    }

    /// The slot of the next corrupted frame.
    pub fn next_slot(&self) -> u64 {
        self.next_slot
    }

    /// Whether the frame sent in `slot` is corrupted (slots must be asked in increasing order).
    pub fn corrupts(&mut self, slot: u64) -> bool {
        if slot < self.next_slot {
            return false;
        }
        self.next_slot = self.next_error_from(slot.saturating_add(1));
        true
    }
}

/// A geometric gap (frames before the next error), or `None` for never.
fn draw_gap(gaps: &Option<Geometric>, rng: &mut Rng) -> Option<u64> {
    gaps.as_ref().map(|g| g.sample(rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    fn rng() -> Rng {
        stream(3, ComponentId { kind: 0, index: 0 })
    }

    fn independent(ber: f64) -> BitErrors {
        BitErrors::Independent { ber }
    }

    /// Frame errors at a frame error probability of 1% (the bit rate that gives it on 256-byte
    /// frames) land within three standard errors of 1 000 in 100 000 frames; one in more than
    /// 2⁵³ frames never lands.
    #[test]
    fn frame_errors_come_at_the_drawn_rate_and_not_below_a_doubles_resolution() {
        let mut never = FrameErrors::new(independent(1e-30), 256, rng());
        assert!((0..1000).all(|slot| !never.corrupts(slot)));
        let ber = 1.0 - 0.99f64.powf(1.0 / 2048.0);
        assert!((frame_error_probability(ber, 256) - 0.01).abs() < 1e-12);
        let mut often = FrameErrors::new(independent(ber), 256, rng());
        let errors = (0..100_000).filter(|&slot| often.corrupts(slot)).count();
        let sigma = (100_000.0f64 * 0.01 * 0.99).sqrt();
        assert!(
            (errors as f64 - 1000.0).abs() < 3.0 * sigma,
            "{errors} errors in 100 000 frames at 1%"
        );
    }

    /// Gilbert–Elliott errors come at the long-run rate, in clusters: over 2·10⁶ frames with
    /// bursts of 20 frames every 2 000, the count lands within four standard errors of the
    /// rate's mean (the standard error of a renewal-reward count), and windows of 1 000 frames
    /// hold counts far more dispersed than Poisson (index of dispersion above 5, where
    /// independent errors at the same rate give about 1).
    #[test]
    fn gilbert_elliott_errors_come_at_the_long_run_rate_in_clusters() {
        let frames = 2_000_000u64;
        let burst_ber = 1e-4;
        let bursty = BitErrors::from_keys(0.0, burst_ber, 20.0, 2_000.0).unwrap();
        let burst_p = frame_error_probability(burst_ber, 256);
        let expected = frames as f64 * 20.0 / 2_020.0 * burst_p;
        let long_run = bursty.long_run_ber();
        assert!((long_run - burst_ber * 20.0 / 2_020.0).abs() < 1e-18);
        let dispersion = |errors: BitErrors| {
            let mut e = FrameErrors::new(errors, 256, rng());
            let counts: Vec<f64> = (0..frames / 1_000)
                .map(|w| {
                    (w * 1_000..(w + 1) * 1_000)
                        .filter(|&s| e.corrupts(s))
                        .count() as f64
                })
                .collect();
            let mean = counts.iter().sum::<f64>() / counts.len() as f64;
            let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / counts.len() as f64;
            (mean * counts.len() as f64, var / mean)
        };
        let (total, bursty_index) = dispersion(bursty);
        // A burst holds burst_p·20 errors on average; bursts come once per 2 020 frames, so the
        // count's variance is about (bursts)·(E[errors per burst]²·(1 + cv²) + E[errors]).
        let bursts = frames as f64 / 2_020.0;
        let per_burst = burst_p * 20.0;
        let sigma = (bursts * (2.0 * per_burst * per_burst + per_burst)).sqrt();
        assert!(
            (total - expected).abs() < 4.0 * sigma,
            "{total} errors, expected {expected:.0} ± {sigma:.0}"
        );
        assert!(bursty_index > 5.0, "index of dispersion {bursty_index}");
        let (_, plain_index) = dispersion(independent(long_run));
        assert!(
            (0.8..1.2).contains(&plain_index),
            "independent: {plain_index}"
        );
    }

    /// With no errors in the good state and none in bursts the model corrupts nothing; a burst
    /// rate of 0 is the independent model, draw for draw.
    #[test]
    fn the_burst_model_reduces_to_the_independent_one() {
        assert_eq!(
            BitErrors::from_keys(1e-6, 0.0, 0.0, 0.0).unwrap(),
            independent(1e-6)
        );
        let mut silent = FrameErrors::new(
            BitErrors::GilbertElliott {
                ber: 0.0,
                burst_ber: 0.0,
                burst_frames: 3.0,
                gap_frames: 5.0,
            },
            256,
            rng(),
        );
        assert!((0..100_000).all(|s| !silent.corrupts(s)));
    }

    #[test]
    fn bad_burst_keys_are_refused_by_name() {
        let refused = |r: Result<BitErrors, ScenarioError>| r.unwrap_err().to_string();
        assert!(refused(BitErrors::from_keys(2e-3, 0.0, 0.0, 0.0)).contains("link.ber"));
        assert!(refused(BitErrors::from_keys(0.0, -1.0, 5.0, 5.0)).contains("link.error_burst_ber"));
        assert!(
            refused(BitErrors::from_keys(0.0, 1e-5, 0.5, 5.0)).contains("link.error_burst_frames")
        );
        assert!(refused(BitErrors::from_keys(0.0, 1e-5, 5.0, f64::NAN))
            .contains("link.error_burst_gap_frames"));
    }
}
