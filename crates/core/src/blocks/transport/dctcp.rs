//! DCTCP's sender (Alizadeh et al., SIGCOMM 2010, §3.1; RFC 8257 §3.3): the fraction F of
//! acknowledged bytes that carried ECN-Echo over the last window of data updates
//! α ← (1 − g)·α + g·F once per window, and on ECN-Echo the window is cut once per window of
//! data to cwnd·(1 − α/2). Losses are handled by NewReno underneath.

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
