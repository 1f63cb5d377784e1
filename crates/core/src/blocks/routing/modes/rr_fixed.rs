//! Per-cell round robin over the equal-cost next hops in one fixed order: the spraying of
//! Stardust's htsim model, which lacked the re-drawn order that keeps sources from falling
//! into step (Stardust App. G; the `rr_fixed` ablation of reading R9 in
//! `docs/validation/stardust.md`).

use super::super::{Decision, Mode};
use super::spray::round_robin;

/// The mode.
pub const MODE: Mode = Mode {
    name: "rr_fixed",
    description: "per cell, round robin over the equal-cost next hops in a fixed order",
    ..Mode::choosing(choose)
};

fn choose(d: &mut Decision<'_>) -> usize {
    round_robin(d, false)
}
