//! The scenario: the validated description of one run, read from JSON (the front ends turn TOML
//! files and `--set` overrides into JSON). Unknown keys, wrong types, impossible values and keys
//! renamed (by the unit convention, or into a transport's table) are rejected with one message naming the key and what was
//! expected.
//!
//! - this module: the parser every design uses, the `run` section every design shares, and
//!   the renamed keys; it re-exports the error and the mechanism names' trait, which live
//!   below every floor in [`crate::keys`];
//! - [`sections`]: the cell networks' scenario and its sections, and every mechanism name a
//!   section takes (with its description, for `cellfabric list`);
//! - `build`: what a validated scenario builds (topology, network spec, traffic);
//! - `validate`: the checks, one function per concern.

mod build;
pub mod clique;
pub mod failures;
pub mod gnet;
mod gnet_build;
pub mod rma;
pub mod sections;
mod strict;
pub mod trace;
mod validate;
pub mod vc;
mod vc_build;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::engine::time::{duration_expected, duration_fits, ps_from_ns, TimePs};
pub(crate) use crate::keys::invalid;
pub use crate::keys::{is_load, Named, ScenarioError, MIN_LOAD};
pub use sections::*;
pub use strict::{check_unused, Unused, UnusedKeys};

/// The most ports an output-queued switch may have.
pub const MAX_PORTS_OUTPUT_QUEUED: u32 = 4096;
/// The most hosts a network may have (cells address hosts with 16 bits).
pub const MAX_HOSTS: usize = u16::MAX as usize;

/// Run length, warm-up and seed; every design's `run` section. Like every duration and delay
/// in a scenario, in nanoseconds.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seed of every random stream in the run (one stream per component).
    pub seed: u64,
    /// Simulated time, including warm-up, in nanoseconds: at most 10¹⁶ ns (about 116
    /// simulated days; the clock counts picoseconds in 64 bits), a longer run is refused. The
    /// default is 10⁵ cell times of 64 bytes at 100 Gbit/s.
    pub duration_ns: f64,
    /// Leading time excluded from statistics, in nanoseconds.
    pub warmup_ns: f64,
    /// The most cells (packets, for Clint; with the work GNet hosts hold not yet sent, in
    /// cells) the run may hold at once: an overloaded run stops there, with its partial
    /// results and exit status 4, instead of growing until memory runs out. The default,
    /// 2·10⁷, is a few GB.
    pub max_cells_in_flight: u64,
    /// Keys the chosen mechanisms do not use are errors (true) or warnings (false).
    pub strict: bool,
    /// Record a time series (items held and delivered) every this many nanoseconds, at most
    /// 10⁶ samples; absent: none. The Ethernet design and Stardust's transport hosts add each
    /// flow's goodput per interval (the `flow_series` table).
    pub sample_ns: Option<f64>,
    /// Threads the run uses: a count, or `"auto"` for the machine's cores (at most one per
    /// switch; one where the fabric cannot be split). A run on several threads splits the
    /// fabric into as many partitions, run side by side, with results identical to one
    /// thread's (`cell_fabric`, `ethernet` and `stardust`; the others refuse a count above 1).
    pub threads: Threads,
}

/// How many threads one run uses (`run.threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
#[schemars(with = "serde_json::Value")]
pub enum Threads {
    /// This many (at least 1).
    Count(u32),
    /// As many as the machine has cores.
    Auto,
}

impl Threads {
    /// The count, with `"auto"` read as the machine's cores.
    pub fn count(self) -> usize {
        match self {
            Threads::Count(n) => n as usize,
            Threads::Auto => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl Serialize for Threads {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Count(n) => serializer.serialize_u32(*n),
            Threads::Auto => serializer.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected = "expected a count of threads, at least 1, or \"auto\"";
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) if s == "auto" => Ok(Threads::Auto),
            serde_json::Value::Number(n) => match n.as_u64() {
                Some(count @ 1..=4096) => Ok(Threads::Count(count as u32)),
                _ => Err(serde::de::Error::custom(format!("{expected}, not {n}"))),
            },
            other => Err(serde::de::Error::custom(format!("{expected}, not {other}"))),
        }
    }
}

/// The most rows a time series may have.
pub const MAX_SERIES_SAMPLES: f64 = 1e6;

/// The default of `run.max_cells_in_flight`: a few GB at most, at under 128 bytes a cell.
pub const DEFAULT_MAX_CELLS_IN_FLIGHT: u64 = 20_000_000;

impl Default for RunConfig {
    /// 10⁵ cell times of 64 bytes at 100 Gbit/s, a tenth of them warm-up.
    fn default() -> Self {
        RunConfig {
            seed: 1,
            duration_ns: 512_000.0,
            warmup_ns: 51_200.0,
            max_cells_in_flight: DEFAULT_MAX_CELLS_IN_FLIGHT,
            strict: true,
            sample_ns: None,
            threads: Threads::Count(1),
        }
    }
}

impl RunConfig {
    /// When the run ends.
    pub fn end_ps(&self) -> TimePs {
        ps_from_ns(self.duration_ns)
    }

    /// When statistics start.
    pub fn warmup_ps(&self) -> TimePs {
        ps_from_ns(self.warmup_ns)
    }

    /// A positive duration, a warm-up shorter than it, and room for at least one cell.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if let Some(sample_ns) = self.sample_ns {
            if !(sample_ns.is_finite() && ps_from_ns(sample_ns) > 0)
                || self.duration_ns / sample_ns > MAX_SERIES_SAMPLES
            {
                return Err(invalid(
                    "run.sample_ns",
                    format!(
                        "expected a positive interval giving at most {MAX_SERIES_SAMPLES} samples of run.duration_ns ({} ns)",
                        self.duration_ns
                    ),
                ));
            }
        }
        if self.max_cells_in_flight == 0 {
            return Err(invalid(
                "run.max_cells_in_flight",
                format!("expected at least 1 (default {DEFAULT_MAX_CELLS_IN_FLIGHT})"),
            ));
        }
        if !duration_fits(self.duration_ns) {
            return Err(invalid("run.duration_ns", duration_expected()));
        }
        if !(self.warmup_ns.is_finite() && self.warmup_ns >= 0.0)
            || self.warmup_ps() >= self.end_ps()
        {
            return Err(invalid(
                "run.warmup_ns",
                format!(
                    "expected 0 to less than run.duration_ns ({} ns) nanoseconds",
                    self.duration_ns
                ),
            ));
        }
        Ok(())
    }
}

/// Why keys were renamed: every design took one unit convention.
const UNITS: &str = "in every design, durations and delays are in nanoseconds and rates in Gbit/s";
/// Why keys were renamed: a transport's constants moved into its own table.
const TRANSPORT_TABLES: &str = "a transport's own constants are in its table under [host]";

/// Keys renamed, their new names and why; a scenario using one gets a message naming its new
/// key.
const RENAMED: &[(&str, &str, &str)] = &[
    ("run.duration_cells", "run.duration_ns", UNITS),
    ("run.warmup_cells", "run.warmup_ns", UNITS),
    ("run.duration_us", "run.duration_ns", UNITS),
    ("run.warmup_us", "run.warmup_ns", UNITS),
    ("link.propagation_delay_ps", "link.propagation_ns", UNITS),
    ("switch.pipeline_delay_ps", "switch.pipeline_ns", UNITS),
    ("bulk.rate_mbps", "bulk.rate_gbps", UNITS),
    ("bulk.switch_delay_ps", "bulk.switch_delay_ns", UNITS),
    ("quick.rate_mbps", "quick.rate_gbps", UNITS),
    ("host.dctcp_g", "host.dctcp.g", TRANSPORT_TABLES),
    ("host.ndp_pull_rate", "host.ndp.pull_rate", TRANSPORT_TABLES),
    ("host.ndp_paths", "host.ndp.paths", TRANSPORT_TABLES),
    ("host.dcqcn_g", "host.dcqcn.g", TRANSPORT_TABLES),
    (
        "host.dcqcn_alpha_interval_ns",
        "host.dcqcn.alpha_interval_ns",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_timer_ns",
        "host.dcqcn.timer_ns",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_byte_counter_bytes",
        "host.dcqcn.byte_counter_bytes",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_fast_recovery_stages",
        "host.dcqcn.fast_recovery_stages",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_rate_ai_mbps",
        "host.dcqcn.rate_ai_mbps",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_rate_hai_mbps",
        "host.dcqcn.rate_hai_mbps",
        TRANSPORT_TABLES,
    ),
    (
        "host.dcqcn_cnp_interval_ns",
        "host.dcqcn.cnp_interval_ns",
        TRANSPORT_TABLES,
    ),
];

/// Reads any design's scenario type from JSON text; a wrong type or an unknown key is reported
/// by its dotted path.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| invalid("scenario", format!("not valid JSON: {e}")))?;
    for &(old, new, why) in RENAMED {
        let (section, key) = old.split_once('.').expect("dotted key");
        if value.get(section).and_then(|s| s.get(key)).is_some() {
            return Err(invalid(old, format!("renamed to {new} ({why})")));
        }
    }
    serde_path_to_error::deserialize(value).map_err(|error| {
        let key = error.path().to_string();
        let key = if key == "." { "scenario" } else { &key };
        invalid(key, plain_words(&error.into_inner().to_string()))
    })
}

/// What a scenario writes for each type a parser expects.
const TYPE_WORDS: &[(&str, &str)] = &[
    ("f64", "a number"),
    ("u64", "a whole number from 0 to 18446744073709551615"),
    ("u32", "a whole number from 0 to 4294967295"),
    ("u16", "a whole number from 0 to 65535"),
    ("u8", "a whole number from 0 to 255"),
    ("a boolean", "true or false"),
    ("a string", "a string"),
    ("a sequence", "a list"),
];

/// A parser's message in the words of a scenario: `invalid type: string "abc", expected f64`
/// becomes `invalid type: expected a number, got "abc"`; Rust type names do not leak.
fn plain_words(message: &str) -> String {
    let Some((kind, rest)) = message.split_once(": ") else {
        return message.to_string();
    };
    let Some((got, expected)) = rest.split_once(", expected ") else {
        return message.to_string();
    };
    if !matches!(kind, "invalid type" | "invalid value") {
        return message.to_string();
    }
    let expected = if expected.starts_with("struct ") || expected == "a map" {
        "a table"
    } else {
        TYPE_WORDS
            .iter()
            .find(|(rust, _)| *rust == expected)
            .map_or(expected, |(_, words)| words)
    };
    let got = match got.split_once(' ') {
        Some(("string" | "integer" | "floating" | "boolean", value)) => value
            .trim_start_matches("point ")
            .trim_matches('`')
            .to_string(),
        _ if got == "map" => "a table".into(),
        _ if got == "sequence" => "a list".into(),
        _ => got.to_string(),
    };
    format!("{kind}: expected {expected}, got {got}")
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn parser_messages_speak_of_numbers_and_tables_not_rust_types() {
        for (message, words) in [
            (
                "invalid type: string \"abc\", expected f64",
                "invalid type: expected a number, got \"abc\"",
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "invalid value: expected a whole number from 0 to 4294967295, got -1",
            ),
            (
                "invalid type: floating point `1.5`, expected u16",
                "invalid type: expected a whole number from 0 to 65535, got 1.5",
            ),
            (
                "invalid type: integer `3`, expected struct TrafficConfig",
                "invalid type: expected a table, got 3",
            ),
            (
                "invalid type: map, expected a boolean",
                "invalid type: expected true or false, got a table",
            ),
            ("unknown field `lod`", "unknown field `lod`"),
        ] {
            assert_eq!(plain_words(message), words);
        }
    }
}
