//! Shared network building blocks. Designs are wired from these; a mechanism that more than one
//! design needs lives here, not in a design.

pub mod batcher_banyan;
pub mod bit_errors;
pub mod cell;
pub mod cell_element;
pub mod cell_network;
pub mod collision_switch;
pub mod ethernet;
pub mod fabric;
pub mod flow_control;
pub mod gnet;
pub mod lcf;
pub mod link;
pub mod matching;
pub mod packet;
pub mod pair_budget;
pub mod patterns;
pub mod port_set;
pub mod priority_port;
pub mod reachability;
pub mod retransmission;
pub mod routing;
pub mod sar;
pub mod solicitation;
pub mod switch;
pub mod terminal;
pub mod topology;
pub mod traffic;
pub mod transport;
pub mod vc_router;
pub mod workload;

/// The kind of every random stream (`engine::rng::stream(seed, ComponentId { kind, index })`),
/// in one list so that no two kinds of component draw from the same stream.
pub mod stream_kind {
    /// A host's traffic source.
    pub const TERMINAL: u32 = 1;
    /// A switch (random grants, random head-of-line choices).
    pub const SWITCH: u32 = 2;
    /// The destination pattern of a scenario (a permutation's shuffle).
    pub const PATTERN: u32 = 3;
    /// A router's choices at one switch.
    pub const ROUTER: u32 = 4;
    /// The frame errors of one direction of a fabric's Layer 1 cable.
    pub const LAYER1_ERRORS: u32 = 5;
    /// A GNet host's source of 1RMA read commands.
    pub const RMA_SOURCE: u32 = 6;
    /// The hosts' draws of which cells carry the trace bit (Aquila's cell tracing).
    pub const CELL_TRACE: u32 = 7;
    /// A GNet host's draws of its packets' IP classes of service.
    pub const IP_CLASS: u32 = 8;
    /// The frame errors of one direction of the Layer 1 link study.
    pub const LINK_STUDY_ERRORS: u32 = 10;
    /// The data source of one end of the Layer 1 link study.
    pub const LINK_STUDY_SOURCE: u32 = 11;
    /// The receive-buffer drain of one end of the Layer 1 link study.
    pub const LINK_STUDY_DRAIN: u32 = 12;
    /// A Clint node's packet generator.
    pub const CLINT_SOURCE: u32 = 20;
    /// A Clint channel's bit errors.
    pub const CLINT_ERRORS: u32 = 21;
    /// The bulk schedule Clint's quick runs draw for bulk acknowledgment packets.
    pub const CLINT_BULK_ACKS: u32 = 22;
    /// A Stardust fabric adapter (its hosts' start times).
    pub const STARDUST_ADAPTER: u32 = 30;
    /// The phase of a Stardust device's reachability messages.
    pub const STARDUST_REACH: u32 = 31;
    /// The cell errors a Stardust device sees on its links with scripted errors.
    pub const STARDUST_LINK_ERRORS: u32 = 32;
    /// An Ethernet switch's random losses.
    pub const ETHERNET_LOSS: u32 = 40;
    /// A trimming switch port's choice between trimming the arrival and the queue's tail.
    pub const ETHERNET_TRIM: u32 = 41;
    /// A PFC switch's RED marking coin.
    pub const ETHERNET_PFC: u32 = 42;
    /// A random-drop output queue's coin (htsim's `RandomQueue`), per switch port.
    pub const ETHERNET_RANDOM_DROP: u32 = 43;
    /// Ethernet hosts' sources of flows opened during the run (sizes, gaps, destinations).
    pub const ETHERNET_FLOWS: u32 = 45;
}
