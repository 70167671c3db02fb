//! Reclaim policy models.
pub mod registry;
