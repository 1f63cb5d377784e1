//! NDP's keys (Handley et al., "Re-architecting datacenter networks and stacks for low latency
//! and high performance", SIGCOMM '17), the `[host.ndp]` table: apart from the model so the
//! `[host]` section can hold them.

use serde::{Deserialize, Serialize};

/// NDP's constants, the `[host.ndp]` table.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NdpKeys {
    /// The pull pacer's rate as a fraction of the host's line rate in data packets (htsim's
    /// `pull_rate_modifier`; 1: one PULL per data packet time, as its mains run).
    pub pull_rate: f64,
    /// Path labels per flow (§3.3, htsim's `PULL_BASED` path choice): each sender puts every
    /// packet on the next label of a permutation of `0..paths`, which ECMP hashes to a path
    /// (`routing.mode = "ecmp"`), and skips labels whose NACKs and returned headers run above
    /// the others'; 0 (the default): no labels, the switches spray.
    pub paths: u32,
}

impl Default for NdpKeys {
    fn default() -> Self {
        NdpKeys {
            pull_rate: 1.0,
            paths: 0,
        }
    }
}
