//! Region-level access patterns (DAMON snapshots, e.g. from a damo record) as a trace
//! source: `reclaimlab_trace::gen::regions`.

use pyo3::prelude::*;
use reclaimlab_trace::gen::regions::{Interval, RegionsSource, Span};
use reclaimlab_trace::AccessKind;

use crate::error::{invalid, trace_err};
use crate::trace::Source;

/// One interval as Python passes it: `(duration_ns, [(first_page, pages, accesses), ...])`.
type IntervalTuple = (u64, Vec<(u32, u32, u64)>);

/// A source issuing, per interval `(duration_ns, [(first_page, pages, accesses), ...])`,
/// that many accesses to random pages of each span spread evenly over the interval
/// (µs time ticks); with `populate`, pages `0..nr_pages` are written once first.
#[pyfunction]
#[pyo3(signature = (intervals, nr_pages, populate = true, kind = "anon", seed = 1))]
fn regions_source(py: Python<'_>, intervals: Vec<IntervalTuple>, nr_pages: u32, populate: bool, kind: &str, seed: u64) -> PyResult<Source> {
    let kind = AccessKind::parse(kind).ok_or_else(|| invalid(format!("unknown access kind '{kind}'; expected file-read, file-mapped or anon")))?;
    let ivs = intervals
        .into_iter()
        .map(|(duration_ns, spans)| Interval { duration_ns, spans: spans.into_iter().map(|(first_page, pages, accesses)| Span { first_page, pages, accesses }).collect() })
        .collect();
    let src = py.detach(|| RegionsSource::new(ivs, nr_pages, populate, kind, seed)).map_err(trace_err)?;
    Ok(Source::new(Box::new(src)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(regions_source, m)?)?;
    Ok(())
}
