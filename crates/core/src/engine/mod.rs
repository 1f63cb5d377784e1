//! The simulation kernel: time, events, arenas, random streams and statistics.
//! Nothing here knows about networks.

pub mod arena;
pub mod cache;
pub mod graph;
pub mod kernel;
pub mod queue;
pub mod rng;
pub mod stats;
pub mod time;
