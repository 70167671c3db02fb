//! reclaimlab-core: a simulated Linux machine replaying page-access traces under
//! versioned models of the kernel's reclaim policies.
//!
//! # Tour
//! - [`mm`]: the machine — frames in zones handed out by a buddy allocator
//!   ([`mm::page_alloc`]), watermarks ([`mm::watermarks`]), per-page and per-frame
//!   state ([`mm::page`]), memory cgroups ([`mm::memcontrol`]), swap devices
//!   ([`mm::swap`]), workingset shadow entries ([`mm::workingset`]), vmstat counters
//!   ([`mm::vmstat`]), lruvecs ([`mm::lruvec`]).
//! - [`vmscan`]: the reclaim machinery shared by policies — `scan_control`, kswapd,
//!   direct and memcg reclaim drivers, `shrink_folio_list` (eviction).
//! - [`policy`]: named policy models behind one trait; `classic@6.15` in
//!   [`policy::classic`].
//! - [`thp`], [`damon`]: huge pages, compaction and NUMA; DAMON, DAMOS and DAMON_RECLAIM.
//! - [`sim`]: the access loop (fault path, clock, kswapd as a concurrent thread,
//!   sampling), results, and the table of named models ([`sim::registry`]).
//! - [`config`]: every knob under its kernel name; [`scenario`]: built-in workloads
//!   (seed 003's THP programs in [`scenario::thp`], seed 004's profiles in
//!   [`scenario::parsec`]).
//!
//! Each layer names only those beneath it (docs/ARCHITECTURE.md, "Layering rules";
//! checked by tests/it/layers.rs).
//! - [`api`]: the facade the Python bindings use.
//!
//! # Determinism
//! All state lives in one owned `Simulation`, and the engine draws no random numbers:
//! the same config and trace give the same bytes of output. Generated workloads are a
//! pure function of their seed, so repetitions differ by seed.
// `x % n == 0` stays: `is_multiple_of` is Rust 1.87, the workspace's rust-version 1.75.
#![allow(clippy::manual_is_multiple_of)]

pub mod api;
pub mod config;
pub mod damon;
pub mod error;
pub mod mm;
pub mod policy;
pub mod scenario;
pub mod sim;
pub mod thp;
pub mod vmscan;

pub use api::{PolicyInfo, RunResult, Simulation, TimeSeries};
pub use config::{SimConfig, KNOBS};
pub use error::{Error, ErrorKind, Result};
pub use sim::registry::policies;
