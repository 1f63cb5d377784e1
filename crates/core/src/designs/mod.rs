//! Whole systems wired from the building blocks: one module per design.

pub mod rifl;
pub mod single_switch;
