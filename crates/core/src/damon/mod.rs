//! DAMON, the data access monitor (`mm/damon/`, spec D, E, F).
//!
//! - [`region`]: regions, targets, and the region primitives (split, merge, set,
//!   min_nr_regions, access-rate accounting) under the kernel's names.
//! - [`attrs`]: monitoring attributes, their validation and conversion, interval tuning.
//! - [`monitor`]: kdamond — the sampling/aggregation loop on the simulated clock.
//! - [`ops_paddr`], [`ops_vaddr`]: the physical and virtual address operations sets.
//! - [`damos`]: operation schemes — quotas, goals, prioritization, watermarks,
//!   filters, stats and actions.
//! - [`reclaim`]: DAMON_RECLAIM, the proactive reclamation module.
//!
//! Tests: `kunit.rs` (the kernel's kunit vectors), `tests.rs` (kdamond and DAMON_RECLAIM
//! in a machine), and each module's own.

pub mod attrs;
pub mod damos;
pub mod monitor;
pub mod ops_paddr;
pub mod ops_vaddr;
pub mod reclaim;
pub mod region;

pub use monitor::Kdamond;
pub use reclaim::DamonReclaimParams;
#[cfg(test)]
mod kunit;
#[cfg(test)]
mod tests;
