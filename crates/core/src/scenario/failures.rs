//! The `failures` list: links between VC routers, or whole VC routers, failing mid-run (Gibson
//! et al., "Aquila: A unified, low-latency fabric for datacenter networks", NSDI '22, §3.2):
//! adaptive routing steers around a dead link by its queue depth at once, and the SDN Routing
//! Engine removes the link from every switch's tables later.

use serde::{Deserialize, Serialize};

pub use crate::blocks::vc_router::failure::Failure;

/// The delay before the tables drop a dead link when a failure names none: 10 ms, our reading
/// (the paper says only that the Routing Engine removes the entries, §3.2).
pub const DEFAULT_TABLES_AFTER_NS: f64 = 10_000_000.0;

/// One link cut (both directions at once) or one switch failed, for the rest of the run.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    /// When it fails, in nanoseconds from the start.
    pub at_ns: f64,
    /// The switch that fails, or one end of the link that does, by its number in the
    /// topology.
    pub switch: u32,
    /// The switch's port the failing link is cabled to (a link to another switch, not to a
    /// host); absent: the whole switch fails (its hosts with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// How long after `at_ns` every switch's tables drop the link or switch, in nanoseconds;
    /// default 10 ms.
    #[serde(default = "default_tables_after_ns")]
    pub tables_after_ns: f64,
}

/// The default of `tables_after_ns`.
fn default_tables_after_ns() -> f64 {
    DEFAULT_TABLES_AFTER_NS
}
