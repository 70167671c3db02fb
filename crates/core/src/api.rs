//! The public facade: what the Python bindings and the CLI use. Everything behind it
//! may change; these signatures are the contract.

use crate::config::SimConfig;
use crate::error::Result;
use reclaimlab_trace::AccessSource;

pub use crate::sim::registry::PolicyInfo;
pub use crate::sim::results::{RunResult, TimeSeries};

/// A configured simulated machine replaying one trace.
pub struct Simulation {
    pub(crate) inner: Box<dyn crate::sim::Engine>,
}

impl Simulation {
    /// Build the machine from a validated config (errors name the offending key).
    pub fn new(cfg: &SimConfig) -> Result<Simulation> {
        crate::sim::build(cfg).map(|inner| Simulation { inner })
    }

    /// Build the machine with an out-of-tree reclaim policy (cache_ext's hooks,
    /// [`crate::policy::ext::CacheExtOps`]): `factory` makes one instance per lruvec; the
    /// run reports the policy as `name`. `cfg.policy` is ignored.
    pub fn with_policy(cfg: &SimConfig, name: &str, factory: crate::policy::ext::OpsFactory) -> Result<Simulation> {
        crate::sim::registry::build_ext(cfg, name, factory).map(|inner| Simulation { inner })
    }

    /// Check every structural invariant of the machine and its policy (tests).
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.inner.check_invariants()
    }

    /// Replay up to `max_accesses` records from `src`. Returns `Ok(true)` once the
    /// source is exhausted. Call repeatedly (the CLI does, to draw a progress bar).
    pub fn run(&mut self, src: &mut dyn AccessSource, max_accesses: u64) -> Result<bool> {
        self.inner.run(src, max_accesses)
    }

    /// Accesses replayed so far.
    pub fn accesses(&self) -> u64 {
        self.inner.accesses()
    }

    /// The DAMON snapshots recorded so far (`sim.damon_record`), moved out: per
    /// aggregation interval and target, `(start, end, nr_accesses, age)` per region.
    pub fn take_damon_snapshots(&mut self) -> Vec<crate::sim::damon_snapshots::DamonSnapshot> {
        self.inner.take_damon_snapshots()
    }

    /// Close the run (final sample) and return its results.
    pub fn finish(self) -> RunResult {
        self.inner.finish()
    }
}
