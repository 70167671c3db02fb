//! The public facade: what the Python bindings and the CLI use. Everything behind it
//! may change; these signatures are the contract.

use crate::config::SimConfig;
use crate::error::Result;
use reclaimlab_trace::AccessSource;

/// One named policy model (`reclaimlab policies`).
#[derive(Clone, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    /// The model this one is a variant of ("" for a mainline model).
    pub base: &'static str,
    pub description: &'static str,
}

/// Columnar time series sampled on the simulated clock: the fixed columns, then per
/// non-root cgroup `memcg.<name>.memory.current_bytes`.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    pub columns: Vec<(String, Vec<f64>)>,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub policy: String,
    /// vmstat counters under the kernel's names, in /proc/vmstat order.
    pub vmstat: Vec<(&'static str, u64)>,
    /// Derived metrics (runtime_s, slowdown, mem_used_avg_bytes, ...), then per cgroup
    /// `memcg.<name>.memory.{current,peak}_bytes` and `memcg.<name>.memory.events.*`.
    pub metrics: Vec<(String, f64)>,
    pub timeseries: TimeSeries,
}

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
        crate::policy::ext::build(cfg, name, factory).map(|inner| Simulation { inner })
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
