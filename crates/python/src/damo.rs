//! DAMON snapshots of a simulation (`sim.damon_record`), for damo's record format
//! (`python/reclaimlab/damo_record.py`).

use pyo3::prelude::*;

use crate::error::invalid;
use crate::Simulation;

/// One snapshot as Python sees it: `(target, start_ns, end_ns, [(start, end, nr_accesses, age)])`.
type SnapshotTuple = (u32, u64, u64, Vec<(u64, u64, u32, u32)>);

/// The snapshots kept so far, moved out: `[(target, start_ns, end_ns, [(start, end,
/// nr_accesses, age), ...]), ...]` (call before `finish()`).
#[pyfunction]
fn damon_snapshots(sim: &Simulation) -> PyResult<Vec<SnapshotTuple>> {
    let mut guard = sim.inner.lock().map_err(|_| invalid("simulation is poisoned"))?;
    let s = guard.as_mut().ok_or_else(|| invalid("simulation already finished"))?;
    Ok(s.take_damon_snapshots().into_iter().map(|d| (d.target, d.start_ns, d.end_ns, d.regions)).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(damon_snapshots, m)?)?;
    Ok(())
}
