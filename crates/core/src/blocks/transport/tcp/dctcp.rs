//! DCTCP's sender (Alizadeh et al., SIGCOMM 2010, §3.1; RFC 8257 §3.3): the fraction F of
//! acknowledged bytes that carried ECN-Echo over the last window of data updates
//! α ← (1 − g)·α + g·F once per window, and on ECN-Echo the window is cut once per window of
//! data to cwnd·(1 − α/2). Losses are handled by NewReno underneath.

use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::{Marks, TransportKind};
use crate::keys::{invalid, ScenarioError};

/// The ECN state of one DCTCP sender.
#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    /// The estimate of the fraction of marked packets.
    pub alpha: f64,
    /// The estimation gain g (1/16 in the paper).
    g: f64,
    /// Packets acknowledged in the current observation window.
    acked_packets: u64,
    /// Of them, acknowledged by ACKs with ECN-Echo.
    marked_packets: u64,
    /// The window ends when this segment is acknowledged.
    window_end: u32,
    /// No further cut until this segment is acknowledged (one cut per window of data).
    cut_end: u32,
}

impl Dctcp {
    /// A sender with gain `g`, starting from α = 1 (RFC 8257 §3.3: cautious until measured).
    pub fn new(g: f64) -> Self {
        Dctcp {
            alpha: 1.0,
            g,
            acked_packets: 0,
            marked_packets: 0,
            window_end: 0,
            cut_end: 0,
        }
    }

    /// An acknowledgment for `ack` (the next segment expected) acknowledging `acked_packets`
    /// more (0 for a duplicate), with ECN-Echo `ece`; `snd_max` is one past the highest
    /// segment sent. Returns the factor to cut the window by, if it is cut now.
    pub fn on_ack(&mut self, ack: u32, acked_packets: u32, ece: bool, snd_max: u32) -> Option<f64> {
        self.acked_packets += acked_packets as u64;
        if ece {
            self.marked_packets += acked_packets as u64;
        }
        if ack > self.window_end {
            if self.acked_packets > 0 {
                let fraction = self.marked_packets as f64 / self.acked_packets as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            }
            self.acked_packets = 0;
            self.marked_packets = 0;
            self.window_end = snd_max;
        }
        if ece && ack >= self.cut_end {
            self.cut_end = snd_max;
            return Some(1.0 - self.alpha / 2.0);
        }
        None
    }

    /// After a timeout: no ECN cut for the data already sent.
    pub fn on_timeout(&mut self, snd_max: u32) {
        self.cut_end = snd_max;
    }
}

/// DCTCP as a transport: ECN-capable, marked at the switches' threshold K; otherwise NewReno.
pub const TRANSPORT: TransportKind = TransportKind {
    name: "dctcp",
    description: "DCTCP: ECN marks at a threshold K, alpha with g = 1/16, window cut by alpha/2 (Alizadeh et al. 2010)",
    marks: Marks::Threshold,
    own_keys: &["host.dctcp.g", "switch.ecn_threshold_packets"],
    check_keys,
    ..super::newreno::TRANSPORT
};

/// DCTCP's gain g: above 0, at most 1.
fn check_keys(h: &HostConfig) -> Result<(), ScenarioError> {
    if !(h.dctcp.g.is_finite() && h.dctcp.g > 0.0 && h.dctcp.g <= 1.0) {
        return Err(invalid("host.dctcp.g", "expected above 0, at most 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_tracks_the_marked_fraction_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0);
        // Windows of 10 segments with every other one marked: F = 0.5.
        let mut snd_max = 10;
        for window in 0..200u32 {
            for i in 1..=10u32 {
                let ack = window * 10 + i;
                d.on_ack(ack, 1, i % 2 == 0, snd_max);
            }
            snd_max += 10;
        }
        assert!((d.alpha - 0.5).abs() < 0.01, "{}", d.alpha);
    }

    /// α ← (1 − g)·α + g·F once per observation window (Alizadeh et al. 2010, §3.1)
    /// through a step of the marked fraction F from 0 to 1, then F = 1/2, with g = 1/16; every
    /// ECN cut is by the α of its moment, cwnd·(1 − α/2). The sender keeps W = 4 segments in
    /// flight: the ACK of `ack` finds `ack + 3` sent. A window closes at the first ACK beyond
    /// its end (RFC 8257 §3.3: SND.UNA > WindowEnd), which counts in the window it closes: after
    /// ACK 1 (α's first update, from one unmarked ACK) the windows are ACKs 2-5, 6-9, ...
    #[test]
    fn alpha_follows_a_step_in_the_marked_fraction_window_by_window() {
        const G: f64 = 1.0 / 16.0;
        const W: u32 = 4;
        let mut d = Dctcp::new(G);
        assert_eq!(d.on_ack(1, 1, false, W), None);
        assert_eq!(d.alpha, 0.9375, "(1 − 1/16)·1 + (1/16)·0");
        let mut ack = 1;
        let mut expected = 0.9375;
        let mut cuts = Vec::new();
        // (windows, ACKs marked of the window's 4, F)
        for (windows, marked, fraction) in [(10, 0, 0.0), (10, 4, 1.0), (6, 2, 0.5)] {
            for _ in 0..windows {
                for i in 0..W {
                    ack += 1;
                    let before = d.alpha;
                    let cut = d.on_ack(ack, 1, i < marked, ack + W - 1);
                    if i < W - 1 {
                        assert_eq!(d.alpha, before, "α holds within a window (ACK {ack})");
                    }
                    if let Some(factor) = cut {
                        assert_eq!(factor, 1.0 - d.alpha / 2.0, "cut at ACK {ack}");
                        cuts.push((ack, factor));
                    }
                }
                expected = (1.0 - G) * expected + G * fraction;
                assert!(
                    (d.alpha - expected).abs() < 1e-15,
                    "α = {} after the window closed by ACK {ack}, expected {expected}",
                    d.alpha
                );
            }
            if fraction == 0.0 {
                // Eleven unmarked windows: α = (15/16)^11.
                assert!((d.alpha - 0.491_681_695_358_181_5).abs() < 1e-15);
                assert!(cuts.is_empty(), "no cut without ECN-Echo");
            }
        }
        // The first marked ACK (42, first of its window) cuts by the α of eleven unmarked
        // windows: 1 − (15/16)^11 / 2; the window it opens then raises α to
        // (15/16)^12 + 1/16 = 0.5234515893982952.
        assert_eq!(cuts[0].0, 42);
        assert!((cuts[0].1 - 0.754_159_152_320_909_2).abs() < 1e-15);
        assert!(cuts.iter().all(|&(ack, _)| ack >= 42));
    }

    #[test]
    fn the_window_is_cut_by_alpha_over_two_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0);
        d.alpha = 0.25;
        d.window_end = 100; // α is not updated inside the window
        let cut = d.on_ack(1, 1, true, 20).unwrap();
        assert!((cut - 0.875).abs() < 1e-12);
        assert_eq!(d.on_ack(2, 1, true, 20), None, "same window");
        assert!(d.on_ack(20, 1, true, 30).is_some(), "next window of data");
    }
}
