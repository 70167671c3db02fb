//! Seed 003's programs on the one machine: `thpscale` and `usemem-stress-numa-compact` runs and
//! the THP allocation policies (crate `reclaimlab_core::thp`).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use reclaimlab_core::scenario::thp as scenarios;
use reclaimlab_core::thp::policy::THP_POLICIES;

use crate::error::core_err;
use crate::Config;

/// The THP allocation policies: (name, description), baseline first.
#[pyfunction]
fn thp_policies() -> Vec<(&'static str, &'static str)> {
    THP_POLICIES.iter().map(|p| (p.name, p.description)).collect()
}

fn counters<'py>(py: Python<'py>, c: &[(String, u64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// One thpscale benchmark: the thread counts `threads` one after another on one machine.
/// A list of {threads, fault_base_us, fault_huge_us, huge_pct, elapsed_s, count_s, vmstat,
/// free_at_start} (vmstat: the counters' increments during that thread count; free_at_start:
/// per zone {node, zone, nr_free per order, pageblocks per migrate type} just after the
/// count's drop_caches), in order. `file_stays_mapped`: the work
/// file stays mapped from count to count, as the validation guest's does (mmtests: one process
/// per count).
#[pyfunction]
#[pyo3(signature = (config, threads, madvise=true, mapsize_pct=80, file_stays_mapped=false))]
fn thpscale<'py>(py: Python<'py>, config: &Config, threads: Vec<u32>, madvise: bool, mapsize_pct: u32, file_stays_mapped: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
    if threads.is_empty() || threads.contains(&0) {
        return Err(crate::error::invalid("threads: give thread counts of at least 1"));
    }
    if !(1..=100).contains(&mapsize_pct) {
        return Err(crate::error::invalid(format!("mapsize_pct {mapsize_pct}: give 1..100 (% of memory)")));
    }
    let p = scenarios::ThpscaleParams { threads, madvise, mapsize_pct, file_stays_mapped };
    let cfg = config.inner.clone();
    let runs = py.detach(|| scenarios::thpscale(&cfg, &p)).map_err(core_err)?;
    runs.iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("threads", r.threads)?;
            d.set_item("fault_base_us", r.fault_base_us.clone())?;
            d.set_item("fault_huge_us", r.fault_huge_us.clone())?;
            d.set_item("huge_pct", r.huge_pct())?;
            d.set_item("elapsed_s", r.elapsed_s)?;
            d.set_item("count_s", r.count_s)?;
            d.set_item("kswapd_cpu_s", r.kswapd_cpu_s)?;
            d.set_item("vmstat", counters(py, &r.counters)?)?;
            let zones = PyList::empty(py);
            for z in &r.free_at_start {
                let zd = PyDict::new(py);
                zd.set_item("node", z.node)?;
                zd.set_item("zone", z.zone)?;
                zd.set_item("nr_free", z.nr_free.to_vec())?;
                zd.set_item("pageblocks", z.pageblocks.to_vec())?;
                zones.append(zd)?;
            }
            d.set_item("free_at_start", zones)?;
            Ok(d)
        })
        .collect()
}

/// One usemem-stress-numa-compact run: {elapsed_s, huge_pct, pages_per_node,
/// cache_pages_per_node, vmstat} (cache_pages_per_node: the page cache per node once the
/// readers are done).
#[pyfunction]
#[pyo3(signature = (config, threads, cache_pct=50, usemem_pct=70, passes=10))]
fn usemem<'py>(py: Python<'py>, config: &Config, threads: u32, cache_pct: u32, usemem_pct: u32, passes: u32) -> PyResult<Bound<'py, PyDict>> {
    if threads == 0 {
        return Err(crate::error::invalid("threads must be at least 1"));
    }
    let p = scenarios::UsememParams { threads, cache_pct, usemem_pct, passes };
    let cfg = config.inner.clone();
    let r = py.detach(|| scenarios::usemem(&cfg, &p)).map_err(core_err)?;
    let d = PyDict::new(py);
    d.set_item("elapsed_s", r.elapsed_s)?;
    d.set_item("huge_pct", r.huge_pct)?;
    d.set_item("kswapd_cpu_s", r.kswapd_cpu_s)?;
    d.set_item("pages_per_node", r.pages_per_node.clone())?;
    d.set_item("cache_pages_per_node", r.cache_pages_per_node.clone())?;
    d.set_item("vmstat", counters(py, &r.counters)?)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // thpscale's thread counts, in the order mmtests runs them (`reclaimlab.thp.THREADS`).
    m.add("THPSCALE_THREADS", scenarios::THPSCALE_THREADS.to_vec())?;
    m.add_function(wrap_pyfunction!(thp_policies, m)?)?;
    m.add_function(wrap_pyfunction!(thpscale, m)?)?;
    m.add_function(wrap_pyfunction!(usemem, m)?)?;
    Ok(())
}
