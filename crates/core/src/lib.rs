//! cellfabric core: a cell-accurate simulator of scheduled, low-latency fabrics.
//!
//! The crate is layered as the architecture brief describes:
//! - [`engine`] knows nothing of networks: integer picosecond time, the event queue,
//!   arenas, random streams and statistics;
//! - [`keys`] is what every floor needs to read a scenario's keys: the error naming a
//!   rejected key, the names a key takes;
//! - [`blocks`] are the shared network building blocks: cells, links, flow control,
//!   switch schedulers, traffic generators and terminals;
//! - [`designs`] wire building blocks into whole systems;
//! - [`scenario`] is the user contract: the validated description of one run;
//! - [`catalog`] and [`key_reference`] list, from the registries and the config structs,
//!   every name a scenario can choose and every key it can set.

// No function over 80 lines outside tests (the threshold is in clippy.toml; CI denies warnings).
#![warn(clippy::too_many_lines)]

pub mod blocks;
pub mod catalog;
pub mod designs;
pub mod engine;
pub mod key_reference;
pub mod keys;
pub mod run;
pub mod scenario;

pub use blocks::cell_network::{Summary, Tables};
pub use designs::single_switch::SingleSwitch;
pub use designs::{build, build_with_overrides, effective_scenario};
pub use run::{Report, RunError, Simulation};
pub use scenario::{Scenario, ScenarioError};
