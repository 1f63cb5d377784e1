//! The `vc` section: the virtual channels of the VC routers (`switch.scheduler =
//! "vc_separable"` or `"vc_islip"`), and the names its keys take.

use serde::{Deserialize, Serialize};

use crate::keys::Named;

/// The most VCs a channel may have (Aquila's 32 per link, §3.1, and room beyond).
pub const MAX_VCS: u16 = 64;

/// The virtual channels of the VC routers.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VcConfig {
    /// VCs per channel (1 to 64).
    pub count: u16,
    /// Flits (cells) each input VC's FIFO holds: the credits of its loop (at least 1).
    pub buffer_cells: u32,
    /// The VC assignment rule: `single`, `dragonfly_dateline` or `global_local_increment`
    /// (Aquila's misrouting modes, which name no intermediate group, need the last).
    pub assignment: String,
    /// Crossbar cycles per link cycle (internal speed-up, at least 1).
    pub speedup: f64,
    /// How an output chooses among its VCs.
    pub output_arbitration: OutputArbitrationName,
    /// `round_robin`: flits per turn, one per VC (at least 1 each); absent: 1 each.
    pub weights: Option<Vec<u32>>,
    /// Cycles (cell times) a credit waits before it crosses the channel back upstream.
    pub credit_delay_cycles: u32,
    /// Wormhole or virtual cut-through.
    pub switching: SwitchingName,
    /// What the crossbar switches as one unit: `flit` (each flit its own allocation, credit
    /// and wire hop) or `cell` (a GNet cell whole, its ports busy for its flits, as Aquila's
    /// TiN); absent: `cell` on the Clique, `flit` elsewhere.
    pub switching_unit: Option<SwitchingUnitName>,
    /// Refuse a VC rule whose channel dependency graph has a cycle (false lets a run show
    /// the deadlock it leads to).
    pub check_dependencies: bool,
    /// Traffic classes the VCs are split into (`count / classes` routing VCs each, class 0
    /// first by strict priority at every output): 2 under `[gnet]`, RTS, CTS and CTD on the
    /// high-priority class and data cells on the other (Aquila §3.3).
    pub classes: u16,
    /// Weighted round robin between the classes at every output: units (flits, or cells
    /// switched whole) per turn, one per class (at least 1 each); absent: strict priority,
    /// class 0 first.
    pub class_weights: Option<Vec<u32>>,
}

impl Default for VcConfig {
    fn default() -> Self {
        VcConfig {
            count: 2,
            buffer_cells: 16,
            assignment: "dragonfly_dateline".into(),
            speedup: 1.0,
            output_arbitration: OutputArbitrationName::RoundRobin,
            weights: None,
            credit_delay_cycles: 0,
            switching: SwitchingName::Wormhole,
            switching_unit: None,
            check_dependencies: true,
            classes: 1,
            class_weights: None,
        }
    }
}

/// Output arbitration names as written in scenarios.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputArbitrationName {
    /// Weighted round robin.
    RoundRobin,
    /// Strict priority, VC 0 first.
    StrictPriority,
}

impl Named for OutputArbitrationName {
    const ALL: &'static [Self] = &[Self::RoundRobin, Self::StrictPriority];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Self::RoundRobin => (
                "round_robin",
                "weighted round robin between VCs (`vc.weights`)",
            ),
            Self::StrictPriority => (
                "strict_priority",
                "the lowest-numbered VC with a flit first",
            ),
        }
    }
}

/// Switching names as written in scenarios.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchingName {
    /// Wormhole.
    Wormhole,
    /// Virtual cut-through.
    VirtualCutThrough,
}

impl Named for SwitchingName {
    const ALL: &'static [Self] = &[Self::Wormhole, Self::VirtualCutThrough];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Self::Wormhole => (
                "wormhole",
                "a head takes a free VC; a blocked packet spans routers",
            ),
            Self::VirtualCutThrough => (
                "virtual_cut_through",
                "a head takes a VC only with room for the whole packet downstream",
            ),
        }
    }
}

/// Switching units as written in scenarios.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchingUnitName {
    /// Flit by flit.
    Flit,
    /// Whole cells.
    Cell,
}

impl Named for SwitchingUnitName {
    const ALL: &'static [Self] = &[Self::Flit, Self::Cell];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Self::Flit => (
                "flit",
                "each flit its own crossbar decision, credit and wire hop (BookSim's unit)",
            ),
            Self::Cell => (
                "cell",
                "a multi-flit cell crosses whole: one allocation, its ports busy for its flits, credits returned once (Aquila's TiN, NSDI '22, §3.1)",
            ),
        }
    }
}
