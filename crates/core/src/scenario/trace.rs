//! The `trace` section: cell tracing (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22, §3.5), the hops of a sampled fraction of the cells.

use serde::{Deserialize, Serialize};

/// Which cells carry the trace bit.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Fraction of the cells the hosts send that carry the trace bit, 0 to 1 (default 0: no
    /// tracing), drawn from the run's seeded random stream; every VC router a traced cell
    /// leaves records the hop in the `cell_trace` table.
    pub fraction: f64,
}
