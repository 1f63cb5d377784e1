//! DCQCN's keys (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM '15,
//! §5), the `[host.dcqcn]` table: apart from the model so the `[host]` section can hold them.

use serde::{Deserialize, Serialize};

/// DCQCN's constants, the `[host.dcqcn]` table (the paper's §5 values, rates scaled to
/// 10 Gbit/s links).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnKeys {
    /// α's gain g (1/256 in the paper).
    pub g: f64,
    /// α decays after this long without a CNP, in nanoseconds (K = 55 µs).
    pub alpha_interval_ns: f64,
    /// The rate-increase timer's period, in nanoseconds (T = 55 µs).
    pub timer_ns: f64,
    /// The rate-increase byte counter's period (B = 10 MB).
    pub byte_counter_bytes: u64,
    /// Fast-recovery stages before additive increase (F = 5).
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI in Mbit/s (the paper's 40 at 40 Gbit/s, scaled to 10);
    /// also the lowest rate a cut reaches.
    pub rate_ai_mbps: f64,
    /// Hyper increase step R_HAI in Mbit/s (10 × R_AI).
    pub rate_hai_mbps: f64,
    /// A receiver sends a flow at most one CNP per this interval, in nanoseconds (N = 50 µs).
    pub cnp_interval_ns: f64,
}

impl Default for DcqcnKeys {
    fn default() -> Self {
        DcqcnKeys {
            g: 1.0 / 256.0,
            alpha_interval_ns: 55_000.0,
            timer_ns: 55_000.0,
            byte_counter_bytes: 10_000_000,
            fast_recovery_stages: 5,
            rate_ai_mbps: 10.0,
            rate_hai_mbps: 100.0,
            cnp_interval_ns: 50_000.0,
        }
    }
}
