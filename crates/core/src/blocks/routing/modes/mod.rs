//! The routing mechanisms, one file each; [`super::MODES`] lists them by name.

pub mod deterministic;
pub mod ecmp;
pub mod least_loaded;
pub mod random;
pub mod rr_fixed;
pub mod sampled_adaptive;
pub mod spray;
pub mod ugal;
pub mod ugal_credit;
pub mod valiant;
