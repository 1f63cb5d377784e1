//! The `[reachability]` section and the scripted `failures` of a Stardust scenario (Zilberman et
//! al., NSDI '19, §4.2, §5.9, App. E): the keys, their checks, and the keys static tables leave
//! unread.

use serde::{Deserialize, Serialize};

use crate::blocks::reachability::MAX_SLICE_ADAPTERS;
use crate::scenario::{invalid, ScenarioError, UnusedKeys};

/// Where reachability tables come from.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReachMode {
    /// Computed from the topology before the run; no messages (runs without failures).
    #[default]
    Static,
    /// Kept by reachability messages on every fabric link (§4.2), starting converged.
    Messages,
}

/// Which routes a device's table may list after a failure.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RouteChoice {
    /// The healthy fabric's minimal candidates only: a destination with none left is
    /// unreachable from that device (reading R10; App. E counts the minimal 2n hops).
    #[default]
    MinimalOnly,
    /// An element whose minimal candidates toward an adapter below it are all unusable goes up
    /// instead, and the cell comes down through another element (a longer up/down path: up
    /// links only while ascending, so no cycle of channels and no deadlock).
    NonMinimal,
}

/// Reachability tables.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReachabilityConfig {
    /// Static tables, or tables kept by messages (needed for failures).
    pub mode: ReachMode,
    /// Time between a device's reachability messages on a link (t' of App. E: 10 µs).
    pub interval_ns: f64,
    /// Adapters a message's bitmap covers (b of App. E, 1 to 128; a full table takes
    /// M = ceil(adapters / b) messages, App. E's 7 for 800 adapters at 128).
    pub slice_adapters: u32,
    /// Agreeing intervals before a link or a table entry changes state (th of App. E: 3).
    pub threshold: u32,
    /// Errored cells received on a link within one interval that make it mark itself faulty
    /// (§5.10: "if the error rate on a link crosses a threshold"; the paper gives no value, so
    /// th's 3 is taken).
    pub faulty_errors: u32,
    /// Good reachability cells in a row that declare a faulty link valid again (§5.10; the
    /// paper gives no value: 100, so that a link still corrupting 1% of its cells stays out
    /// most of the time, where th's 3 would let it flap back at once).
    pub valid_after_cells: u32,
    /// A VOQ that has waited this long for a credit asks again: with failures, a request (or
    /// every credit answering it) can be lost, and the paper does not say how a VOQ recovers
    /// (reading R1 names periodic reports). 1 ms is far above any credit wait of a healthy
    /// fabric. Messages mode only (static tables mean no failures, so nothing is lost).
    pub request_refresh_ns: f64,
    /// Which routes tables may list after a failure: `minimal_only` (the default: the paper
    /// describes none longer, and App. E's arithmetic counts minimal hops) or `non_minimal`.
    pub routes: RouteChoice,
}

impl Default for ReachabilityConfig {
    fn default() -> Self {
        ReachabilityConfig {
            mode: ReachMode::Static,
            interval_ns: 10_000.0,
            slice_adapters: 128,
            threshold: 3,
            faulty_errors: 3,
            valid_after_cells: 100,
            request_refresh_ns: 1_000_000.0,
            routes: RouteChoice::MinimalOnly,
        }
    }
}

/// A scripted failure: a cable cut (both directions lose their signal at once), a cable that
/// corrupts cells, or a fabric element failing, at a time, and optionally its repair.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    /// When it fails, in nanoseconds from the start.
    pub at_ns: f64,
    /// The switch of the topology (its number in the topology's numbering).
    pub switch: u32,
    /// The port of `switch` whose cable is cut; absent: the switch itself fails (it must be a
    /// fabric element).
    pub port: Option<u32>,
    /// The cable on `port` keeps its signal but corrupts each cell crossing it, either way,
    /// with this probability (the receiver's CRC discards it); absent: the cable is cut.
    pub cell_error_rate: Option<f64>,
    /// When it is repaired; absent: never.
    pub restore_ns: Option<f64>,
}

impl ReachabilityConfig {
    /// Reachability and failures, as far as they can be checked without the topology (the
    /// switches and ports failures name are checked when the fabric is built).
    pub fn validate(&self, failures: &[FailureConfig]) -> Result<(), ScenarioError> {
        let r = self;
        if !(r.interval_ns.is_finite() && r.interval_ns >= 1.0) {
            return Err(invalid(
                "reachability.interval_ns",
                "expected at least 1 nanosecond",
            ));
        }
        if !(1..=MAX_SLICE_ADAPTERS).contains(&r.slice_adapters) {
            return Err(invalid(
                "reachability.slice_adapters",
                format!("expected 1 to {MAX_SLICE_ADAPTERS}"),
            ));
        }
        if r.threshold == 0 {
            return Err(invalid("reachability.threshold", "expected at least 1"));
        }
        if r.faulty_errors == 0 {
            return Err(invalid("reachability.faulty_errors", "expected at least 1"));
        }
        if r.valid_after_cells == 0 {
            return Err(invalid(
                "reachability.valid_after_cells",
                "expected at least 1",
            ));
        }
        if !(r.request_refresh_ns.is_finite() && r.request_refresh_ns >= 1.0) {
            return Err(invalid(
                "reachability.request_refresh_ns",
                "expected at least 1 nanosecond",
            ));
        }
        if !failures.is_empty() && r.mode != ReachMode::Messages {
            return Err(invalid(
                "failures",
                "scripted failures need reachability.mode = \"messages\" (static tables cannot notice them)",
            ));
        }
        for (i, f) in failures.iter().enumerate() {
            if !(f.at_ns.is_finite() && f.at_ns >= 0.0) {
                return Err(invalid(
                    &format!("failures[{i}].at_ns"),
                    "expected 0 or more nanoseconds",
                ));
            }
            if let Some(rate) = f.cell_error_rate {
                if !(rate > 0.0 && rate <= 1.0) {
                    return Err(invalid(
                        &format!("failures[{i}].cell_error_rate"),
                        format!("expected a probability above 0 and at most 1, got {rate}"),
                    ));
                }
                if f.port.is_none() {
                    return Err(invalid(
                        &format!("failures[{i}].cell_error_rate"),
                        format!("errors are a cable's: expected failures[{i}].port with it"),
                    ));
                }
            }
            if let Some(restore_ns) = f.restore_ns {
                if !(restore_ns.is_finite() && restore_ns > f.at_ns) {
                    return Err(invalid(
                        &format!("failures[{i}].restore_ns"),
                        format!("expected a time after failures[{i}].at_ns ({} ns)", f.at_ns),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Adds the keys static tables do not read.
    pub fn unused(&self, unused: &mut UnusedKeys) {
        if self.mode == ReachMode::Static {
            unused.add(
                &[
                    "reachability.interval_ns",
                    "reachability.slice_adapters",
                    "reachability.threshold",
                    "reachability.faulty_errors",
                    "reachability.valid_after_cells",
                    "reachability.routes",
                ],
                "reachability.mode",
                "reachability.mode = \"static\" (no reachability messages)",
            );
        }
    }
}
