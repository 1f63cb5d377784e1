//! The `rma` section: GNet hosts making 1RMA reads of each other (Gibson et al., "Aquila: A
//! unified, low-latency fabric for datacenter networks", NSDI '22, §3.4), beside or instead of
//! their IP packets, and its own checks.

use serde::{Deserialize, Serialize};

use super::{invalid, ScenarioError};
use crate::blocks::gnet::rma::{MAX_COMPLETION_BYTES, RESP_OVERHEAD_BYTES};
use crate::keys::{one_to, Named};

/// The largest read a host makes.
pub const MAX_READ_BYTES: u32 = 1 << 20;

/// 1RMA reads at every GNet host (needs `[gnet]`): each host commands reads of
/// `read_bytes` from hosts drawn by `traffic.destinations`, a Req out and a Resp cell back per
/// PCIe completion.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RmaConfig {
    /// Offered reads: the share of a client's line rate its reads' Resp cells take (above 0,
    /// at most 1), reads arriving as Bernoulli trials at the Resp cells' pace.
    pub load: f64,
    /// Bytes of every read (1 to 1 MiB): Fig. 8's 4 KB lookups.
    pub read_bytes: u32,
    /// Bytes of one PCIe read completion, one Resp cell's payload (4 to 144, whole 4-byte
    /// words): the paper sizes Resp cells to the root complexes' most common completions and
    /// gives no number; 64 bytes, the read completion boundary a root complex splits reads
    /// at by cache line, is our reading.
    pub completion_bytes: u32,
    /// The server's PCIe read, from a Req's arrival at its TiN to its completions, in
    /// nanoseconds: the Resps leave no earlier.
    pub remote_read_ns: f64,
    /// The client's PCIe and software time (command submission, completion delivery), in
    /// nanoseconds, added to every read's latency.
    pub host_latency_ns: f64,
    /// `high`: the reads' Resp cells ride the `resp_high` class of `gnet.vc_classes`; `low`:
    /// the `resp_low` class.
    pub priority: RmaPriorityName,
}

impl Default for RmaConfig {
    /// 4 KB reads of 64-byte completions at 10% load, high priority. The paper's 4 µs median
    /// read spends 2.5-3 µs in Aquila and the rest, 1-1.5 µs, in PCIe (§3.4), without a split:
    /// half of the midpoint (1.25 µs) for the server's read and half for the client's command
    /// and completion is our reading.
    fn default() -> Self {
        RmaConfig {
            load: 0.1,
            read_bytes: 4_096,
            completion_bytes: 64,
            remote_read_ns: 625.0,
            host_latency_ns: 625.0,
            priority: RmaPriorityName::High,
        }
    }
}

/// Read priorities as written in scenarios.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RmaPriorityName {
    /// High priority.
    High,
    /// Low priority.
    Low,
}

impl Named for RmaPriorityName {
    const ALL: &'static [Self] = &[Self::High, Self::Low];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Self::High => ("high", "Resp cells on the `resp_high` VC class"),
            Self::Low => ("low", "Resp cells on the `resp_low` VC class"),
        }
    }
}

impl RmaConfig {
    /// Refuses a load, size or delay out of range, naming the key.
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.load.is_finite() && self.load > 0.0 && self.load <= 1.0) {
            return Err(invalid(
                "rma.load",
                format!(
                    "expected a share of the line rate above 0 and at most 1, got {}",
                    self.load
                ),
            ));
        }
        one_to("rma.read_bytes", self.read_bytes, MAX_READ_BYTES, "bytes")?;
        let c = self.completion_bytes;
        if !(4..=MAX_COMPLETION_BYTES).contains(&c) || !c.is_multiple_of(4) {
            return Err(invalid(
                "rma.completion_bytes",
                format!("expected 4 to {MAX_COMPLETION_BYTES} bytes in whole 4-byte words (a 160-byte cell less {RESP_OVERHEAD_BYTES} bytes of header and read tag), got {c}"),
            ));
        }
        for (key, ns) in [
            ("rma.remote_read_ns", self.remote_read_ns),
            ("rma.host_latency_ns", self.host_latency_ns),
        ] {
            if !(ns.is_finite() && ns >= 0.0) {
                return Err(invalid(key, "expected a delay of zero or more nanoseconds"));
            }
        }
        Ok(())
    }
}
