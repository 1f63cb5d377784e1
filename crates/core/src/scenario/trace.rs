//! The `trace` section: cell tracing (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22, §3.5), the hops of a sampled fraction of the cells.

use serde::{Deserialize, Serialize};

use super::{invalid, Scenario, ScenarioError};

/// Which cells carry the trace bit.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Fraction of the cells the hosts send that carry the trace bit, 0 to 1 (default 0: no
    /// tracing), drawn from the run's seeded random stream; every VC router a traced cell
    /// leaves records the hop in the `cell_trace` table.
    pub fraction: f64,
}

impl Scenario {
    /// The fraction of cells traced (0 without a `trace` section).
    pub fn trace_fraction(&self) -> f64 {
        self.trace.as_ref().map_or(0.0, |t| t.fraction)
    }

    /// A fraction from 0 to 1, and VC routers to record the hops.
    pub(super) fn validate_trace(&self) -> Result<(), ScenarioError> {
        let fraction = self.trace_fraction();
        if !(0.0..=1.0).contains(&fraction) {
            return Err(invalid(
                "trace.fraction",
                format!("expected a fraction of the cells from 0 to 1, got {fraction}"),
            ));
        }
        if fraction > 0.0 && !self.uses_vcs() {
            return Err(invalid(
                "trace.fraction",
                "cells are traced through VC routers: expected switch.scheduler = \"vc_separable\" or \"vc_islip\"",
            ));
        }
        Ok(())
    }
}
