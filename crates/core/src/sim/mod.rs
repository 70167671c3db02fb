//! The simulation: the one machine's access loop and fault path ([`engine`]),
//! `__alloc_pages` and its slow path ([`alloc`]), anonymous THP faults ([`huge_memory`]),
//! a program's tasks and mappings ([`process`]), a workload of tasks on the machine's CPUs
//! ([`tasks`]), memcg charging with limit and high
//! reclaim ([`charge`]), the kernel threads and timed jobs the run loop drives
//! ([`daemons`]), and what a run reports ([`results`]).

pub(crate) mod alloc;
pub mod charge;
pub mod daemons;
pub mod damon_snapshots;
pub mod engine;
pub mod filemap;
pub(crate) mod huge_memory;
mod kernel_shmem;
pub mod khugepaged;
pub mod process;
pub mod registry;
pub mod results;
pub mod tasks;

use crate::config::SimConfig;
use crate::error::Result;
use crate::sim::results::RunResult;
use reclaimlab_trace::AccessSource;

/// A running machine, type-erased over its policy (the hot loop inside is generic, so
/// each policy's hooks inline into it).
pub trait Engine: Send {
    fn run(&mut self, src: &mut dyn AccessSource, max_accesses: u64) -> Result<bool>;
    fn accesses(&self) -> u64;
    fn finish(self: Box<Self>) -> RunResult;
    /// The DAMON snapshots `sim.damon_record` kept so far (moved out).
    fn take_damon_snapshots(&mut self) -> Vec<damon_snapshots::DamonSnapshot> {
        Vec::new()
    }
    /// Check every structural invariant (tests).
    fn check_invariants(&self) -> std::result::Result<(), String>;
}

/// Validate the config and build the machine with the named policy (after
/// `lru_gen.enabled`, which switches between a kernel's classic and MGLRU models).
pub fn build(cfg: &SimConfig) -> Result<Box<dyn Engine>> {
    cfg.validate()?;
    let name = crate::sim::registry::resolve_lru_gen(&cfg.policy, cfg.lru_gen_enabled)?;
    let entry = crate::sim::registry::find(&name)?;
    let mut cfg = cfg.clone();
    cfg.policy = name;
    Ok((entry.build)(&cfg))
}
