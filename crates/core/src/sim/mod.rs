//! The simulation loop (stub while the engine lands).
use crate::api::RunResult;
use crate::config::SimConfig;
use crate::error::Result;
use reclaimlab_trace::AccessSource;

/// A running machine, type-erased over its policy.
pub trait Engine: Send {
    fn run(&mut self, src: &mut dyn AccessSource, max_accesses: u64) -> Result<bool>;
    fn accesses(&self) -> u64;
    fn finish(self: Box<Self>) -> RunResult;
}

pub fn build(cfg: &SimConfig) -> Result<Box<dyn Engine>> {
    cfg.validate()?;
    Err(crate::error::Error::invalid("engine not built yet"))
}
