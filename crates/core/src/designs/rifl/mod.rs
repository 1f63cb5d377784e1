//! RIFL Layer 2 (seed `004_09aea0160bbfec7b`, §IV): fixed 256-byte segments, relative-address
//! source routing, and the address table that maps endpoint names to routes.
//!
//! Built so far: the Layer 2 header and its forwarding rule ([`header`]) and the address table
//! ([`addressing`]). Not built yet: the Layer 1 retransmitting link, the RIFL switch with per-VOQ
//! flow control and the Batcher-Banyan model, the NIC, and the Table I / Fig. 5 scenarios.

pub mod addressing;
pub mod header;
