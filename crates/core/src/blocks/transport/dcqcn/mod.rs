//! DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, §3.3 and its Fig. 6 state machine): a rate-based sender
//! (RoCE's NIC rate limiter, not a window) at current rate Rc and target rate Rt, starting at
//! line rate with α = 1.
//!
//! - On a CNP: Rt ← Rc, Rc ← Rc·(1 − α/2), α ← (1 − g)·α + g; the rate-increase timer,
//!   byte counter and their stage counts restart.
//! - α decays, α ← (1 − g)·α, every K (55 µs) in which no CNP arrived.
//! - Rate increase events come from a timer (every T, 55 µs) and a byte counter (every B
//!   bytes sent); each counts a stage of its own kind, then: **fast recovery**
//!   Rc ← (Rt + Rc)/2 while both counts are at most F (5); **hyper increase**
//!   Rt ← Rt + i·R_HAI (i = min count − F), Rc ← (Rt + Rc)/2 once both exceed F; otherwise
//!   **additive increase** Rt ← Rt + R_AI, Rc ← (Rt + Rc)/2. Rates stay within
//!   [R_AI, line rate].
//! - The sender paces its packets at Rc: after a packet of s bytes, the next may start
//!   s·8/Rc later (the rate at its departure sets the gap).
//!
//! The timers are evaluated when the sender next acts (a send or a CNP), every expiry due by
//! then in time order, which gives the same rates at every send as kernel timers would,
//! without an event per timer per flow. RoCE over a lossless fabric needs no retransmission:
//! the sender sends each segment once; a segment lost anyway (a PFC switch that overran its
//! headroom) shows in the run's ledger as a drop, and its flow never completes.
//!
//! Acknowledgments: RoCEv2 runs InfiniBand's reliable connection, whose responder must
//! acknowledge a packet that asks for it (the AckReq bit, which a requester sets on a
//! message's last packet) and may coalesce the rest (InfiniBand Architecture Specification,
//! vol. 1, ch. 9, reliable service; Zhu et al. 2015 run DCQCN on RoCEv2 NICs). A flow opened
//! during the run is one message: its receiver acknowledges the last byte, cumulatively, and
//! the sender learns it completed ([`DcqcnSender::on_ack`]). Flows made at build are unending
//! or never need to learn it, and their receivers send no ACKs (only CNPs), as before.

pub mod keys;
pub mod notification;

use super::host_config::{HostConfig, RECOVERY_KEYS};
use super::{no_check, Marks, SenderCounters, TransportKind, TIMER_OFF};
use crate::engine::time::{ps_from_ns, TimePs};
use crate::keys::{invalid, ScenarioError};

/// DCQCN as a transport: rate-based, over a lossless fabric, marked RED-like.
pub const TRANSPORT: TransportKind = TransportKind {
    name: "dcqcn",
    description: "DCQCN: rate-based RoCE senders, CNPs from the receiver at most once per 50 us, alpha and rate recovery by timer and byte counter (Zhu et al. 2015); needs a lossless switch port kind",
    marks: Marks::Red,
    needs_trimming: false,
    needs_lossless: true,
    delayed_acks: false,
    subflows: false,
    no_opening: None,
    own_keys: OWN_KEYS,
    ignored_keys: &[&["host.dctcp.g"], RECOVERY_KEYS],
    ignored_because: "host.transport = \"dcqcn\" (rate-based: no window, no retransmission, one ACK per message; RED marks)",
    check_keys,
    check_routing: no_check,
};

/// Every key only DCQCN reads: its hosts' first, then its congestion points' (RED marking).
const OWN_KEYS: &[&str] = &[
    "host.dcqcn.g",
    "host.dcqcn.alpha_interval_ns",
    "host.dcqcn.timer_ns",
    "host.dcqcn.byte_counter_bytes",
    "host.dcqcn.fast_recovery_stages",
    "host.dcqcn.rate_ai_mbps",
    "host.dcqcn.rate_hai_mbps",
    "host.dcqcn.cnp_interval_ns",
    "switch.red_kmin_bytes",
    "switch.red_kmax_bytes",
    "switch.red_pmax",
];

/// The `[host]` keys only DCQCN reads: the first of its own.
pub const HOST_KEYS: &[&str] = OWN_KEYS.split_at(8).0;

/// The reaction and notification points' constants.
fn check_keys(h: &HostConfig) -> Result<(), ScenarioError> {
    if !(h.dcqcn.g.is_finite() && h.dcqcn.g > 0.0 && h.dcqcn.g <= 1.0) {
        return Err(invalid("host.dcqcn.g", "expected above 0, at most 1"));
    }
    for (key, ns) in [
        ("host.dcqcn.alpha_interval_ns", h.dcqcn.alpha_interval_ns),
        ("host.dcqcn.timer_ns", h.dcqcn.timer_ns),
        ("host.dcqcn.cnp_interval_ns", h.dcqcn.cnp_interval_ns),
    ] {
        if !(ns.is_finite() && ps_from_ns(ns) > 0) {
            return Err(invalid(key, "expected a positive number of nanoseconds"));
        }
    }
    if h.dcqcn.byte_counter_bytes == 0 {
        return Err(invalid(
            "host.dcqcn.byte_counter_bytes",
            "expected at least 1 byte",
        ));
    }
    if h.dcqcn.fast_recovery_stages == 0 {
        return Err(invalid(
            "host.dcqcn.fast_recovery_stages",
            "expected at least 1",
        ));
    }
    for (key, mbps) in [
        ("host.dcqcn.rate_ai_mbps", h.dcqcn.rate_ai_mbps),
        ("host.dcqcn.rate_hai_mbps", h.dcqcn.rate_hai_mbps),
    ] {
        if !(mbps.is_finite() && mbps > 0.0 && mbps <= 1e6) {
            return Err(invalid(key, "expected above 0, at most 1e6 Mbit/s"));
        }
    }
    Ok(())
}

/// DCQCN's reaction-point settings (the paper's §5 values, rates scaled to the link).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// α's gain g (1/256 in the paper).
    pub g: f64,
    /// α decays after this long without a CNP (K = 55 µs).
    pub alpha_interval_ps: TimePs,
    /// The rate-increase timer's period (T = 55 µs).
    pub timer_ps: TimePs,
    /// The byte counter's period (B = 10 MB).
    pub byte_counter_bytes: u64,
    /// Fast-recovery stages (F = 5).
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI, bit/s.
    pub rate_ai_bps: f64,
    /// Hyper increase step R_HAI, bit/s.
    pub rate_hai_bps: f64,
    /// The notification point (receiver) sends a flow at most one CNP per this interval
    /// (N = 50 µs), when marked packets arrive.
    pub cnp_interval_ps: TimePs,
}

impl DcqcnParams {
    /// The settings `host` gives.
    pub fn of(host: &HostConfig) -> Self {
        DcqcnParams {
            g: host.dcqcn.g,
            alpha_interval_ps: ps_from_ns(host.dcqcn.alpha_interval_ns),
            timer_ps: ps_from_ns(host.dcqcn.timer_ns),
            byte_counter_bytes: host.dcqcn.byte_counter_bytes,
            fast_recovery_stages: host.dcqcn.fast_recovery_stages,
            rate_ai_bps: host.dcqcn.rate_ai_mbps * 1e6,
            rate_hai_bps: host.dcqcn.rate_hai_mbps * 1e6,
            cnp_interval_ps: ps_from_ns(host.dcqcn.cnp_interval_ns),
        }
    }
}

/// One DCQCN flow's send side.
#[derive(Clone, Debug)]
pub struct DcqcnSender {
    /// Next segment to send.
    pub snd_nxt: u32,
    /// Segments the receiver acknowledged (a flow opened during the run: all of them once
    /// its last byte arrived, else none).
    pub acked: u32,
    /// Segments of the flow (`u32::MAX`: unending).
    packets: u32,
    mss_bytes: u64,
    line_bps: f64,
    /// Current rate Rc, bit/s.
    pub rate_bps: f64,
    /// Target rate Rt, bit/s.
    pub target_bps: f64,
    /// The congestion estimate α.
    pub alpha: f64,
    /// When α next decays.
    alpha_due_ps: TimePs,
    /// When the rate-increase timer next expires.
    timer_due_ps: TimePs,
    /// Timer expiries since the last CNP.
    timer_stages: u32,
    /// Byte-counter expiries since the last CNP.
    byte_stages: u32,
    /// Bytes sent toward the byte counter's next expiry.
    counted_bytes: u64,
    /// The earliest the next segment may start (pacing at Rc).
    next_send_ps: TimePs,
    params: DcqcnParams,
    /// CNPs it reacted to.
    pub cnps: u64,
    /// What it counted (`ecn_cuts`: rate cuts, one per CNP).
    pub counters: SenderCounters,
}

impl DcqcnSender {
    /// A sender of `packets` segments of `mss_bytes` (`u32::MAX`: unending) on a NIC of
    /// `line_bps`, at line rate from time 0.
    pub fn new(params: DcqcnParams, mss_bytes: u64, packets: u32, line_bps: u64) -> Self {
        DcqcnSender {
            snd_nxt: 0,
            acked: 0,
            packets,
            mss_bytes,
            line_bps: line_bps as f64,
            rate_bps: line_bps as f64,
            target_bps: line_bps as f64,
            alpha: 1.0,
            alpha_due_ps: params.alpha_interval_ps,
            timer_due_ps: params.timer_ps,
            timer_stages: 0,
            byte_stages: 0,
            counted_bytes: 0,
            next_send_ps: 0,
            params,
            cnps: 0,
            counters: SenderCounters::default(),
        }
    }

    /// Makes this a fresh sender of `packets` segments (a new queue pair on the same NIC),
    /// back at line rate with α = 1.
    pub fn restart(&mut self, packets: u32) {
        *self = DcqcnSender::new(self.params, self.mss_bytes, packets, self.line_bps as u64);
    }

    /// A cumulative acknowledgment of the segments below `ack` arrived.
    pub fn on_ack(&mut self, ack: u32) {
        debug_assert!(ack <= self.snd_nxt, "an acknowledgment of data never sent");
        self.acked = self.acked.max(ack);
    }

    /// True once the receiver acknowledged every segment.
    pub fn done(&self) -> bool {
        self.acked >= self.packets
    }

    /// True while segments remain to send.
    pub fn has_data(&self) -> bool {
        self.snd_nxt < self.packets
    }

    /// True if a segment may start at `now_ps` (data remains and pacing allows it).
    pub fn ready(&self, now_ps: TimePs) -> bool {
        self.has_data() && self.next_send_ps <= now_ps
    }

    /// When the next segment may start, if any remains.
    pub fn next_send_ps(&self) -> Option<TimePs> {
        self.has_data().then_some(self.next_send_ps)
    }

    /// One rate-increase event (a timer or byte-counter expiry, its stage already counted).
    fn increase(&mut self) {
        let p = &self.params;
        let (most, least) = (
            self.timer_stages.max(self.byte_stages),
            self.timer_stages.min(self.byte_stages),
        );
        if most <= p.fast_recovery_stages {
            // Fast recovery: toward the rate before the cut.
        } else if least > p.fast_recovery_stages {
            let i = (least - p.fast_recovery_stages) as f64;
            self.target_bps += i * p.rate_hai_bps;
        } else {
            self.target_bps += p.rate_ai_bps;
        }
        self.target_bps = self.target_bps.min(self.line_bps);
        self.rate_bps = ((self.target_bps + self.rate_bps) / 2.0).min(self.line_bps);
    }

    /// Runs the α and rate-increase timers' expiries due by `now_ps`, in time order.
    fn advance(&mut self, now_ps: TimePs) {
        let p = self.params;
        loop {
            let due_ps = self.alpha_due_ps.min(self.timer_due_ps);
            if due_ps > now_ps {
                return;
            }
            if self.alpha_due_ps == due_ps {
                self.alpha *= 1.0 - p.g;
                self.alpha_due_ps += p.alpha_interval_ps;
            }
            if self.timer_due_ps == due_ps {
                self.timer_due_ps += p.timer_ps;
                // At line rate with nothing to recover, an expiry changes nothing.
                if self.rate_bps < self.line_bps {
                    self.timer_stages += 1;
                    self.increase();
                }
            }
        }
    }

    /// Takes the next segment to start at `now_ps`, if pacing allows one.
    pub fn next_segment(&mut self, now_ps: TimePs) -> Option<u32> {
        if !self.ready(now_ps) {
            return None;
        }
        self.advance(now_ps);
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        self.counters.segments_sent += 1;
        let bits = (self.mss_bytes * 8) as f64;
        self.next_send_ps = now_ps + (bits / self.rate_bps * 1e12).round() as TimePs;
        self.counted_bytes += self.mss_bytes;
        if self.counted_bytes >= self.params.byte_counter_bytes {
            self.counted_bytes -= self.params.byte_counter_bytes;
            if self.rate_bps < self.line_bps {
                self.byte_stages += 1;
                self.increase();
            }
        }
        Some(seq)
    }

    /// A CNP reached the sender at `now_ps`: cut the rate by α/2 and restart the increase.
    pub fn on_cnp(&mut self, now_ps: TimePs) {
        self.advance(now_ps);
        let p = self.params;
        self.cnps += 1;
        self.counters.ecn_cuts += 1;
        self.target_bps = self.rate_bps;
        // The lowest rate a cut reaches: one additive step.
        self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2.0)).max(p.rate_ai_bps);
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.alpha_due_ps = now_ps + p.alpha_interval_ps;
        self.timer_due_ps = now_ps + p.timer_ps;
        self.timer_stages = 0;
        self.byte_stages = 0;
        self.counted_bytes = 0;
    }

    /// No retransmission timer: [`TIMER_OFF`].
    pub fn rto_deadline_ps(&self) -> TimePs {
        TIMER_OFF
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's values at 10 Gbit/s (R_AI, R_HAI scaled from 40 Gbit/s).
    fn params() -> DcqcnParams {
        DcqcnParams {
            g: 1.0 / 256.0,
            alpha_interval_ps: 55_000_000,
            timer_ps: 55_000_000,
            byte_counter_bytes: 10_000_000,
            fast_recovery_stages: 5,
            rate_ai_bps: 10e6,
            rate_hai_bps: 100e6,
            cnp_interval_ps: 50_000_000,
        }
    }

    /// A send goes at `t_ps` and leaves the rates (Rc, Rt) at `rates`, after `step`.
    fn assert_a_send_leaves(s: &mut DcqcnSender, t_ps: TimePs, rates: (f64, f64), step: &str) {
        assert!(s.next_segment(t_ps).is_some());
        assert_eq!((s.rate_bps, s.target_bps), rates, "(Rc, Rt) after {step}");
    }

    #[test]
    fn the_host_keys_are_exactly_the_own_keys_of_host() {
        let host: Vec<_> = OWN_KEYS.iter().filter(|k| k.starts_with("host.")).collect();
        assert_eq!(host, HOST_KEYS.iter().collect::<Vec<_>>());
    }

    #[test]
    fn paces_at_line_rate_then_at_the_cut_rate() {
        let mut s = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        assert_eq!(s.next_segment(0), Some(0));
        assert!(!s.ready(7_199_999), "9000 B take 7.2 µs at 10 Gbit/s");
        assert_eq!(s.next_segment(7_200_000), Some(1));
        s.on_cnp(8_000_000);
        // α = 1: Rc halves; α ← (1 − g) + g = 1.
        assert_eq!((s.rate_bps, s.target_bps), (5e9, 10e9));
        assert_eq!(s.alpha, 1.0);
        s.next_segment(14_400_000);
        assert_eq!(s.next_send_ps(), Some(14_400_000 + 14_400_000));
    }

    /// After a cut the timer's first F expiries halve the gap to Rt (fast recovery), then
    /// Rt grows by R_AI per expiry (the byte counter of 10 MB lags far behind).
    #[test]
    fn fast_recovery_then_additive_increase_by_timer() {
        let mut s = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        s.on_cnp(0);
        assert_eq!(s.rate_bps, 5e9);
        // Five expiries (55 µs apart) by 275 µs, evaluated at the next send.
        s.next_segment(275_000_000);
        assert!(
            (s.rate_bps - (10e9 - 5e9 / 32.0)).abs() < 1.0,
            "{}",
            s.rate_bps
        );
        assert_eq!(s.target_bps, 10e9);
        // With Rt at line rate the additive step is capped; the rate keeps closing in.
        s.on_cnp(300_000_000);
        let cut = s.rate_bps;
        let target = s.target_bps;
        s.next_segment(300_000_000 + 6 * 55_000_000);
        assert!((s.target_bps - (target + 10e6)).abs() < 1.0, "one AI step");
        assert!(s.rate_bps > cut);
    }

    /// DCQCN's reaction point by hand (Zhu et al. 2015, §3.3, Fig. 6), timer only (the 10 MB
    /// byte counter never expires here): two CNPs 50 µs apart at α = 1 halve Rc twice
    /// (Rt ← Rc, Rc ← Rc·(1 − α/2), α ← (1 − g)·α + g stays 1), leaving Rt = 5, Rc = 2.5
    /// Gbit/s. Then, every T = 55 µs: F = 5 fast-recovery stages Rc ← (Rt + Rc)/2 with Rt
    /// fixed, then additive increase Rt += R_AI (10 Mbit/s), Rc ← (Rt + Rc)/2. A third CNP
    /// cuts by the α that decayed ×(1 − g) per 55 µs without a CNP, and restarts the stages:
    /// the next expiry is fast recovery again.
    #[test]
    fn timer_stages_fast_recovery_then_additive_increase_and_a_cut_restarts_them() {
        const T: TimePs = 55_000_000;
        let mut s = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        s.on_cnp(0);
        assert_eq!((s.rate_bps, s.target_bps, s.alpha), (5e9, 10e9, 1.0));
        let cut_ps = 50_000_000;
        s.on_cnp(cut_ps);
        assert_eq!((s.rate_bps, s.target_bps, s.alpha), (2.5e9, 5e9, 1.0));
        // (Rc, Rt) after each timer expiry, evaluated by a send at its instant.
        let stages = [
            (3.75e9, 5e9), // fast recovery: (5 + 2.5)/2
            (4.375e9, 5e9),
            (4.6875e9, 5e9),
            (4.843_75e9, 5e9),
            (4.921_875e9, 5e9),      // the fifth and last
            (4.965_937_5e9, 5.01e9), // additive: Rt = 5 + 0.01, Rc = (5.01 + 4.921875)/2
            (4.992_968_75e9, 5.02e9),
            (5.011_484_375e9, 5.03e9),
        ];
        for (k, &rates) in stages.iter().enumerate() {
            let t = cut_ps + (k as TimePs + 1) * T;
            assert_a_send_leaves(&mut s, t, rates, &format!("timer expiry {}", k + 1));
        }
        // α decayed at each of the 8 expiries (α's own 55 µs timer, also restarted by the cut).
        let g = 1.0 / 256.0;
        let alpha = (1.0f64 - g).powi(8);
        assert!((s.alpha - alpha).abs() < 1e-15, "α {}", s.alpha);
        let rc = 5.011_484_375e9;
        s.on_cnp(cut_ps + 8 * T + 10_000_000);
        assert_eq!(s.target_bps, rc, "Rt ← Rc");
        assert!(
            (s.rate_bps - rc * (1.0 - alpha / 2.0)).abs() < 1e-3,
            "{}",
            s.rate_bps
        );
        assert!((s.alpha - ((1.0 - g) * alpha + g)).abs() < 1e-15);
        let cut = s.rate_bps;
        assert!(s.next_segment(cut_ps + 9 * T + 10_000_000).is_some());
        assert_eq!(s.target_bps, rc, "fast recovery again: Rt stays");
        assert_eq!(s.rate_bps, (rc + cut) / 2.0, "Rc ← (Rt + Rc)/2");
    }

    /// The byte counter's stages and hyper increase (Zhu et al. 2015, §3.3, Fig. 6): with a
    /// byte counter of one 9000-byte packet and a 1 ms timer, after two cuts to Rt = 5,
    /// Rc = 2.5 Gbit/s the first five sends are fast recovery, the next additive increase;
    /// once both the timer's and the byte counter's stages exceed F = 5, each event is hyper
    /// increase Rt += i·R_HAI (R_HAI = 100 Mbit/s) with i = min(stages) − F.
    #[test]
    fn byte_counter_stages_then_hyper_increase_once_both_counts_pass_f() {
        const MS: TimePs = 1_000_000_000;
        let mut s = DcqcnSender::new(
            DcqcnParams {
                byte_counter_bytes: 9000,
                timer_ps: MS,
                alpha_interval_ps: MS,
                ..params()
            },
            9000,
            u32::MAX,
            10_000_000_000,
        );
        s.on_cnp(0);
        let cut_ps = 50_000_000;
        s.on_cnp(cut_ps);
        assert_eq!((s.rate_bps, s.target_bps), (2.5e9, 5e9));
        // Sends paced at Rc, each a byte-counter stage, all before the timer's first expiry.
        let mut t = cut_ps;
        let by_bytes = [
            (3.75e9, 5e9), // fast recovery, stages 1-5
            (4.375e9, 5e9),
            (4.6875e9, 5e9),
            (4.843_75e9, 5e9),
            (4.921_875e9, 5e9),
            (4.965_937_5e9, 5.01e9), // additive: byte stages 6, 7 > F, timer stages 0
            (4.992_968_75e9, 5.02e9),
        ];
        for (k, &rates) in by_bytes.iter().enumerate() {
            assert_a_send_leaves(&mut s, t, rates, &format!("byte stage {}", k + 1));
            t = s.next_send_ps().unwrap();
        }
        assert!(t < cut_ps + MS);
        // A send 6 ms after the cut: timer stages 1-5 are additive (Rt 5.03 ... 5.07), stage 6
        // is hyper with i = min(6, 7) − 5 = 1 (Rt 5.17), then the send's byte stage 8 too
        // (i = min(6, 8) − 5 = 1, Rt 5.27). At 7 ms: timer stage 7 and byte stage 9, i = 2
        // (Rt 5.47, 5.67); at 8 ms: i = 3 (Rt 5.97, 6.27). Rc halves its gap to Rt each time
        // (exact binary fractions of a bit/s).
        let by_both = [
            (6, 332_311_484_375.0 / 64.0, 5.27e9),
            (7, 1_408_151_484_375.0 / 256.0, 5.67e9),
            (8, 6_146_711_484_375.0 / 1024.0, 6.27e9),
        ];
        for (ms, rate, target) in by_both {
            assert!(s.next_segment(cut_ps + ms * MS).is_some());
            assert_eq!(
                (s.rate_bps, s.target_bps),
                (rate, target),
                "(Rc, Rt) {ms} ms after the cut"
            );
        }
        // A cut restarts both counts: the next send's byte stage is fast recovery.
        s.on_cnp(cut_ps + 8 * MS + 1_000_000);
        let (rc, rt) = (s.rate_bps, s.target_bps);
        assert_eq!(rt, 6_146_711_484_375.0 / 1024.0, "Rt ← Rc");
        assert!(s.next_segment(s.next_send_ps().unwrap()).is_some());
        assert_eq!(
            (s.rate_bps, s.target_bps),
            ((rt + rc) / 2.0, rt),
            "fast recovery after the cut: Rc ← (Rt + Rc)/2, Rt stays"
        );
    }

    /// α: +g per CNP from its value, ×(1 − g) per 55 µs without one.
    #[test]
    fn alpha_decays_without_cnps_and_rises_with_them() {
        let mut s = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        s.next_segment(10 * 55_000_000);
        let decayed = (1.0f64 - 1.0 / 256.0).powi(10);
        assert!((s.alpha - decayed).abs() < 1e-12);
        s.on_cnp(10 * 55_000_000);
        let after = (1.0 - 1.0 / 256.0) * decayed + 1.0 / 256.0;
        assert!((s.alpha - after).abs() < 1e-12);
        // The cut used the α before the update.
        assert!((s.rate_bps - 10e9 * (1.0 - decayed / 2.0)).abs() < 1.0);
    }

    /// Two flows cut by the same CNPs, one per timer period (55 µs, before recovery
    /// completes), converge: a cut scales their gap by (1 − α/2) and the one fast-recovery
    /// step between cuts averages it with the gap of their targets (the rates before the
    /// cut), so it shrinks by about (1 − α/4) per period; α stays near 1 (+g per CNP, ×(1 − g)
    /// per period): after 20 periods the gap is below 0.78^20 < 1% of where it started.
    #[test]
    fn two_rates_converge_under_shared_cnps() {
        let mut a = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        let mut b = DcqcnSender::new(params(), 9000, u32::MAX, 10_000_000_000);
        b.on_cnp(0);
        b.on_cnp(0);
        b.on_cnp(0); // b starts at 1/8 of a
        a.on_cnp(0);
        let gap0 = a.rate_bps - b.rate_bps;
        for k in 1..=20u64 {
            let t = k * 55_000_000;
            for s in [&mut a, &mut b] {
                s.advance(t);
                s.on_cnp(t);
            }
        }
        let gap = (a.rate_bps - b.rate_bps).abs();
        assert!(gap < 0.01 * gap0, "{gap} of {gap0}");
    }

    /// A flow of 3 segments is done when the receiver's cumulative ACK covers all 3 (the
    /// one ACK of a message's last packet), not before; a restart is a fresh sender at line
    /// rate with α = 1, whatever the old one's rate was.
    #[test]
    fn a_finite_flow_is_done_at_the_ack_of_its_last_segment_and_restarts_fresh() {
        let mut s = DcqcnSender::new(params(), 9000, 3, 10_000_000_000);
        for k in 0..3 {
            s.next_segment(k * 7_200_000);
        }
        assert!(!s.has_data() && !s.done(), "sent, not acknowledged");
        s.on_ack(2);
        assert!(!s.done(), "two of three");
        s.on_ack(3);
        assert!(s.done());
        s.on_cnp(30_000_000);
        assert!(s.rate_bps < 10e9);
        s.restart(2);
        assert!(!s.done() && s.has_data());
        assert_eq!((s.rate_bps, s.alpha, s.snd_nxt, s.acked), (10e9, 1.0, 0, 0));
        assert_eq!(s.next_send_ps(), Some(0));
    }

    #[test]
    fn a_finite_flow_sends_each_segment_once() {
        let mut s = DcqcnSender::new(params(), 9000, 3, 10_000_000_000);
        let sent: Vec<u32> = (0..10)
            .filter_map(|k| s.next_segment(k * 7_200_000))
            .collect();
        assert_eq!(sent, vec![0, 1, 2]);
        assert!(!s.has_data() && s.next_send_ps().is_none());
    }
}
