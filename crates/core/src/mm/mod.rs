//! The simulated machine's memory.
pub mod lists;
