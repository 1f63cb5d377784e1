//! Transmission errors on Clint's links (Eberle and Gura 2002, §3.1, §3.3). Every packet carries a
//! CRC added by the link layer. A target that finds a CRC error in a request returns no
//! acknowledgment ("to avoid the possibility of returning the acknowledgment to the wrong
//! initiator"), so the initiator's fixed timeout finds the loss; a corrupted acknowledgment is
//! discarded the same way, and a corrupted configuration or grant packet is not acted on.
//!
//! Bit errors are independent, at a bit error rate per line bit of each channel; a byte is 10
//! line bits under 8B/10B (§2). The paper's simulations assume no errors (§4.2), so both rates
//! default to zero, and a channel without errors draws no random number.

use rand::Rng as _;

use crate::engine::rng::{stream, ComponentId, Rng};

/// Line bits per byte (8B/10B, §2).
const LINE_BITS_PER_BYTE: f64 = 10.0;

/// Which channel a packet crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// The bulk channel (bulk requests).
    Bulk,
    /// The quick channel (everything else).
    Quick,
}

/// The bit errors of both channels, drawn from one stream per run.
pub struct LinkErrors {
    bulk_ber: f64,
    quick_ber: f64,
    rng: Rng,
}

impl LinkErrors {
    /// Errors at `bulk_ber` and `quick_ber` per line bit, drawn from the run's stream `seed`.
    pub fn new(seed: u64, bulk_ber: f64, quick_ber: f64) -> Self {
        let id = ComponentId {
            kind: crate::blocks::stream_kind::CLINT_ERRORS,
            index: 0,
        };
        LinkErrors {
            bulk_ber,
            quick_ber,
            rng: stream(seed, id),
        }
    }

    /// The chance that a packet of `size_bytes` crossing `links` links of `channel` has at
    /// least one bit error.
    pub fn packet_error_probability(&self, channel: Channel, size_bytes: u64, links: u32) -> f64 {
        let ber = match channel {
            Channel::Bulk => self.bulk_ber,
            Channel::Quick => self.quick_ber,
        };
        let bits = size_bytes as f64 * LINE_BITS_PER_BYTE * f64::from(links);
        -(bits * (-ber).ln_1p()).exp_m1()
    }

    /// True if a packet of `size_bytes` crossing `links` links of `channel` fails its CRC.
    pub fn corrupted(&mut self, channel: Channel, size_bytes: u64, links: u32) -> bool {
        let probability = self.packet_error_probability(channel, size_bytes, links);
        probability > 0.0 && self.rng.gen::<f64>() < probability
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_free_channels_never_corrupt_and_draw_nothing() {
        let mut errors = LinkErrors::new(1, 0.0, 0.0);
        let before = errors.rng.clone();
        assert!(!(0..1000).any(|_| errors.corrupted(Channel::Bulk, 2086, 2)));
        assert_eq!(errors.rng, before, "no draw without errors");
    }

    #[test]
    fn packet_errors_follow_the_bit_error_rate() {
        let errors = LinkErrors::new(1, 1e-6, 1e-4);
        // 2086 bytes over two links: 41 720 line bits at 1e-6.
        let p = errors.packet_error_probability(Channel::Bulk, 2086, 2);
        assert!(
            (p - (1.0 - (1.0 - 1e-6f64).powf(41_720.0))).abs() < 1e-9,
            "{p}"
        );
        let mut errors = LinkErrors::new(1, 0.0, 1e-4);
        let p = errors.packet_error_probability(Channel::Quick, 36, 2);
        let hits = (0..100_000)
            .filter(|_| errors.corrupted(Channel::Quick, 36, 2))
            .count() as f64;
        assert!(
            (hits / 100_000.0 / p - 1.0).abs() < 0.05,
            "{hits} against {p}"
        );
    }
}
