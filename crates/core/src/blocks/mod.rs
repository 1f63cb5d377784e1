//! Shared network building blocks. Designs are wired from these; a mechanism that more than one
//! design needs lives here, not in a design.

pub mod batcher_banyan;
pub mod cell;
pub mod collision_switch;
pub mod fabric;
pub mod flow_control;
pub mod lcf;
pub mod link;
pub mod matching;
pub mod port_set;
pub mod retransmission;
pub mod routing;
pub mod switch;
pub mod terminal;
pub mod topology;
pub mod traffic;
