//! Trace sources, readers, converters and generators (`reclaimlab-trace`).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use reclaimlab_trace::{Access, AccessKind, AccessSource};

use crate::error::{invalid, trace_err};

/// A stream of page accesses: a trace file being read, a generator or a scenario.
/// A source is consumed by replaying it.
#[pyclass(module = "reclaimlab._core")]
pub struct Source {
    inner: Mutex<Box<dyn AccessSource>>,
}

impl Source {
    pub fn new(src: Box<dyn AccessSource>) -> Self {
        Source { inner: Mutex::new(src) }
    }
    pub fn lock(&self) -> PyResult<MutexGuard<'_, Box<dyn AccessSource>>> {
        self.inner.lock().map_err(|_| invalid("trace source is poisoned"))
    }
}

#[pymethods]
impl Source {
    /// What is known up front: {format, records, pages, cgroups, tick_ps, files, ops,
    /// madvise} (files: `(name, first page id, pages)`, pages = 2**32 - 1 for "to the end";
    /// ops: `memory.reclaim` writes as `(before record, cgroup name, bytes, swappiness or
    /// None)`; madvise: `(before record, first page id, pages, advice)`, advice one of
    /// "hugepage", "nohugepage", "dontneed").
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let src = self.lock()?;
        let m = src.meta();
        let d = PyDict::new(py);
        d.set_item("format", &m.format)?;
        d.set_item("records", m.nr_records)?;
        d.set_item("pages", m.nr_pages)?;
        d.set_item("cgroups", m.cgroups.clone())?;
        d.set_item("tick_ps", m.tick_ps)?;
        d.set_item("files", m.files.iter().map(|f| (f.name.clone(), f.first, f.nr_pages)).collect::<Vec<_>>())?;
        d.set_item("ops", ops_tuples(&m.ops, &m.cgroups))?;
        d.set_item("madvise", madvise_tuples(&m.ops))?;
        Ok(d)
    }

    /// Fraction of the input consumed (None if unknown).
    fn progress(&self) -> PyResult<Option<f64>> {
        Ok(self.lock()?.progress())
    }

    /// Read up to `n` records as (page, cgroup, flags, gap) tuples; [] at the end.
    fn take<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.lock()?;
        let src: &mut dyn AccessSource = &mut **guard;
        let mut buf: Vec<Access> = Vec::with_capacity(n.min(1 << 20));
        py.detach(|| src.read_batch(&mut buf, n)).map_err(trace_err)?;
        PyList::new(py, buf.iter().map(|a| (a.page, a.cgroup, a.flags, a.gap)))
    }
}

/// `memory.reclaim` ops as `(before record, cgroup name, bytes, swappiness or None)`.
fn ops_tuples(ops: &[reclaimlab_trace::TraceOp], cgroups: &[String]) -> Vec<(u64, String, u64, Option<u8>)> {
    ops.iter()
        .filter_map(|op| match op.kind {
            reclaimlab_trace::OpKind::MemoryReclaim { bytes, swappiness } => Some((op.at, cgroups.get(op.cgroup as usize).cloned().unwrap_or_default(), bytes, swappiness)),
            reclaimlab_trace::OpKind::Madvise { .. } => None,
        })
        .collect()
}

/// madvise ops as `(before record, first page id, pages, advice name)`.
fn madvise_tuples(ops: &[reclaimlab_trace::TraceOp]) -> Vec<(u64, u32, u32, &'static str)> {
    ops.iter()
        .filter_map(|op| match op.kind {
            reclaimlab_trace::OpKind::Madvise { first, nr_pages, advice } => Some((op.at, first, nr_pages, reclaimlab_trace::madvise_name(advice).unwrap_or("?"))),
            reclaimlab_trace::OpKind::MemoryReclaim { .. } => None,
        })
        .collect()
}

/// Parse `(before record, cgroup name, bytes, swappiness or None)` tuples and
/// `(before record, first page id, pages, advice name)` madvise tuples into one op table
/// in position order (at one position, the madvise first), registering the cgroups with
/// the writer.
fn parse_ops(
    w: &mut reclaimlab_trace::NativeWriter,
    ops: &[(u64, String, u64, Option<u8>)],
    madvise: &[(u64, u32, u32, String)],
) -> reclaimlab_trace::Result<Vec<reclaimlab_trace::TraceOp>> {
    let mut all = Vec::with_capacity(ops.len() + madvise.len());
    for (at, first, n, advice) in madvise {
        let a = reclaimlab_trace::madvise_parse(advice)
            .ok_or_else(|| reclaimlab_trace::Error::invalid(format!("trace_write: madvise advice {advice:?} is not hugepage, nohugepage or dontneed")))?;
        all.push(reclaimlab_trace::TraceOp::madvise(*at, 0, *first, *n, a));
    }
    for (at, cg, bytes, sw) in ops {
        all.push(reclaimlab_trace::TraceOp::memory_reclaim(*at, w.cgroup(cg)?, *bytes, *sw));
    }
    // A stable sort keeps the madvise before the writes at the same record.
    all.sort_by_key(|op| op.at);
    Ok(all)
}

fn parse_kind(kind: Option<&str>) -> PyResult<Option<AccessKind>> {
    kind.map(|k| AccessKind::parse(k).ok_or_else(|| invalid(format!("unknown access kind '{k}'; expected file-read, file-mapped or anon")))).transpose()
}

/// Open a trace file. `format`: native, lirs, address or csv (None = detect);
/// `kind`: how records lacking it are classified (file-read, file-mapped, anon).
#[pyfunction]
#[pyo3(signature = (path, format = None, kind = None))]
fn open_trace(py: Python<'_>, path: PathBuf, format: Option<&str>, kind: Option<&str>) -> PyResult<Source> {
    let kind = parse_kind(kind)?;
    let src = py.detach(|| reclaimlab_trace::open(&path, format, kind)).map_err(trace_err)?;
    Ok(Source::new(src))
}

/// Read the whole source and summarise it (a dict of the trace's counts).
#[pyfunction]
fn trace_info<'py>(py: Python<'py>, source: &Source) -> PyResult<Bound<'py, PyDict>> {
    let mut guard = source.lock()?;
    let src: &mut dyn AccessSource = &mut **guard;
    let i = py.detach(|| reclaimlab_trace::info(src)).map_err(trace_err)?;
    let d = PyDict::new(py);
    d.set_item("format", i.format)?;
    d.set_item("records", i.records)?;
    d.set_item("pages", i.pages)?;
    d.set_item("ops", ops_tuples(&i.ops, &i.cgroups))?;
    d.set_item("madvise", madvise_tuples(&i.ops))?;
    d.set_item("cgroups", i.cgroups)?;
    d.set_item("reads", i.reads)?;
    d.set_item("writes", i.writes)?;
    d.set_item("file", i.file)?;
    d.set_item("anon", i.anon)?;
    d.set_item("syscall", i.syscall)?;
    d.set_item("mapped", i.mapped)?;
    d.set_item("has_time", i.has_time)?;
    d.set_item("total_gap_ticks", i.total_gap_ticks)?;
    d.set_item("tick_ps", i.tick_ps)?;
    Ok(d)
}

/// Write accesses given as little-endian arrays (`pages`: u32 per record, `flags`: u8 per
/// record) in cgroup `cgroup`, with a file table of `(name, first page id, pages)`, to the
/// native trace `out` (atomically). With `gaps` (u32 per record) and `tick_ps`, a timed
/// trace: each record's gap is the time since the previous one in ticks of `tick_ps`.
/// With `cgroup_ids` (u8 per record), each record's cgroup is `cgroup_names[id]` instead.
/// `ops`: `memory.reclaim` writes as `(before record, cgroup name, bytes, swappiness or
/// None)`; `madvise`: `(before record, first page id, pages, advice)` with advice
/// "hugepage", "nohugepage" or "dontneed". Returns the records written.
#[pyfunction]
#[pyo3(signature = (out, pages, flags, cgroup = "", files = Vec::new(), gaps = None, tick_ps = 0, cgroup_names = Vec::new(),
                    cgroup_ids = None, ops = Vec::new(), madvise = Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn trace_write(
    py: Python<'_>,
    out: PathBuf,
    pages: &[u8],
    flags: &[u8],
    cgroup: &str,
    files: Vec<(String, u32, u32)>,
    gaps: Option<&[u8]>,
    tick_ps: u64,
    cgroup_names: Vec<String>,
    cgroup_ids: Option<&[u8]>,
    ops: Vec<(u64, String, u64, Option<u8>)>,
    madvise: Vec<(u64, u32, u32, String)>,
) -> PyResult<u64> {
    if pages.len() != 4 * flags.len() {
        return Err(invalid(format!("trace_write: {} page bytes for {} flag bytes (4 per record)", pages.len(), flags.len())));
    }
    if gaps.is_some_and(|g| g.len() != pages.len()) || gaps.is_some() != (tick_ps != 0) {
        return Err(invalid("trace_write: gaps (u32 little-endian, one per record) come with a tick_ps > 0".to_string()));
    }
    if let Some(ids) = cgroup_ids {
        if ids.len() != flags.len() || ids.iter().any(|&i| i as usize >= cgroup_names.len()) {
            return Err(invalid("trace_write: cgroup_ids (u8 per record) index cgroup_names".to_string()));
        }
    }
    let files: Vec<reclaimlab_trace::FileRange> = files.into_iter().map(|(name, first, nr_pages)| reclaimlab_trace::FileRange { name, first, nr_pages, advice: 0 }).collect();
    py.detach(|| {
        let mut w = reclaimlab_trace::NativeWriter::create(&out, tick_ps)?;
        let cg = if cgroup_ids.is_some() { 0 } else { w.cgroup(cgroup)? };
        let named = cgroup_names.iter().map(|n| w.cgroup(n)).collect::<Result<Vec<_>, _>>()?;
        w.set_files(&files)?;
        for op in parse_ops(&mut w, &ops, &madvise)? {
            w.op(op)?;
        }
        let mut buf = Vec::with_capacity(1 << 16);
        let gap = |i: usize| gaps.map_or(0, |g| u32::from_le_bytes(g[4 * i..4 * i + 4].try_into().unwrap()));
        let cgroup_of = |i: usize| cgroup_ids.map_or(cg, |ids| named[ids[i] as usize]);
        for (i, (p, &f)) in pages.chunks_exact(4).zip(flags).enumerate() {
            buf.push(Access { page: u32::from_le_bytes(p.try_into().unwrap()), cgroup: cgroup_of(i), flags: f, gap: gap(i) });
            if buf.len() == buf.capacity() {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
        w.write_all(&buf)?;
        w.finish()
    })
    .map_err(trace_err)
}

/// Write the source to `out` in the native format, with compressed blocks (version 2) if
/// `compress`; returns the records written.
#[pyfunction]
#[pyo3(signature = (source, out, compress = false))]
fn trace_convert(py: Python<'_>, source: &Source, out: PathBuf, compress: bool) -> PyResult<u64> {
    let mut guard = source.lock()?;
    let src: &mut dyn AccessSource = &mut **guard;
    py.detach(|| reclaimlab_trace::convert_with(src, &out, compress)).map_err(trace_err)
}

/// How the native trace `path` stores its records: a dict with `compressed`,
/// `record_bytes` (the records' own bytes), `block_bytes` (what they take in the file,
/// block headers excluded) and `file_bytes`.
#[pyfunction]
fn native_storage<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let s = reclaimlab_trace::NativeReader::open(&path).map_err(trace_err)?.storage();
    let d = PyDict::new(py);
    d.set_item("compressed", s.compressed)?;
    d.set_item("record_bytes", s.record_bytes)?;
    d.set_item("block_bytes", s.block_bytes)?;
    d.set_item("file_bytes", s.file_bytes)?;
    Ok(d)
}

fn item<'py, T: for<'a> FromPyObject<'a, 'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) => v
            .extract::<T>()
            .map(Some)
            .map_err(|_| invalid(format!("{what}: '{key}' cannot be {} (wrong type or out of range)", v.repr().map(|r| r.to_string()).unwrap_or_default()))),
    }
}

fn req<'py, T: for<'a> FromPyObject<'a, 'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<T> {
    item(d, key, what)?.ok_or_else(|| invalid(format!("{what}: missing '{key}'")))
}

/// Parse a stream pattern: `zipf:ALPHA` (or `zipf`, alpha 1.0), `uniform`, `seq`, `loop`.
fn parse_pattern(s: &str) -> PyResult<reclaimlab_trace::gen::Pattern> {
    use reclaimlab_trace::gen::Pattern;
    let (name, arg) = s.split_once(':').map_or((s, None), |(n, a)| (n, Some(a)));
    Ok(match (name.trim(), arg) {
        ("zipf", a) => {
            let alpha = match a {
                None => 1.0,
                Some(a) => a.trim().parse::<f64>().map_err(|_| invalid(format!("pattern '{s}': expected zipf:ALPHA with a number")))?,
            };
            Pattern::Zipf { alpha }
        }
        ("uniform", None) => Pattern::Uniform,
        // "loop" is the cyclic scan, as cache papers and libCacheSim use the word.
        ("seq" | "sequential" | "loop", None) => Pattern::Sequential,
        ("zigzag", None) => Pattern::Zigzag,
        _ => return Err(invalid(format!("unknown pattern '{s}'; expected zipf:ALPHA, uniform, seq (or loop) or zigzag"))),
    })
}

/// Generate a synthetic trace from a program:
/// `{"regions": [{name, pages, kind, write_ratio, cgroup, madvise}],
///   "phases": [{name, accesses, streams: [{region, pattern, weight}],
///               reclaims: [{cgroup, bytes, swappiness}]}], "repeat": N}`.
/// A reclaim's `bytes` is a count or a size like "64M" (memparse suffixes); a region's `madvise`
/// ("hugepage" or "nohugepage") is applied to it before the first access.
/// Streams name their region; patterns are "zipf:1.0", "uniform", "seq" (= "loop"), "zigzag".
#[pyfunction]
fn generate(py: Python<'_>, program: &Bound<'_, PyDict>, seed: u64) -> PyResult<Source> {
    use reclaimlab_trace::gen;
    let mut regions = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, r) in req::<Vec<Bound<PyDict>>>(program, "regions", "program")?.iter().enumerate() {
        let what = format!("region {}", i + 1);
        let name: String = item(r, "name", &what)?.unwrap_or_else(|| format!("region{}", i + 1));
        let kind: String = item(r, "kind", &what)?.unwrap_or_else(|| "anon".to_string());
        let kind = parse_kind(Some(&kind))?.unwrap();
        regions.push(gen::Region {
            name: name.clone(),
            pages: req(r, "pages", &what)?,
            kind,
            write_ratio: item(r, "write_ratio", &what)?.unwrap_or(0.0),
            cgroup: item(r, "cgroup", &what)?.unwrap_or_default(),
            madvise: item::<String>(r, "madvise", &what)?
                .map(|a| match reclaimlab_trace::madvise_parse(&a) {
                    Some(m) if m != reclaimlab_trace::MADV_DONTNEED => Ok(m),
                    _ => Err(invalid(format!("{what}: madvise '{a}' is not hugepage or nohugepage"))),
                })
                .transpose()?,
        });
        names.push(name);
    }
    let mut phases = Vec::new();
    for (i, p) in req::<Vec<Bound<PyDict>>>(program, "phases", "program")?.iter().enumerate() {
        let what = format!("phase {}", i + 1);
        let mut streams = Vec::new();
        for s in req::<Vec<Bound<PyDict>>>(p, "streams", &what)?.iter() {
            let region: String = req(s, "region", &what)?;
            let idx = names.iter().position(|n| *n == region).ok_or_else(|| invalid(format!("{what}: stream names unknown region '{region}'")))?;
            let pattern: String = item(s, "pattern", &what)?.unwrap_or_else(|| "uniform".to_string());
            streams.push(gen::Stream { region: idx, pattern: parse_pattern(&pattern)?, weight: item(s, "weight", &what)?.unwrap_or(1.0) });
        }
        let mut reclaims = Vec::new();
        for r in item::<Vec<Bound<PyDict>>>(p, "reclaims", &what)?.unwrap_or_default().iter() {
            let rwhat = format!("{what} reclaim {}", reclaims.len() + 1);
            let bytes = match r.get_item("bytes")? {
                Some(v) if v.extract::<String>().is_ok() => {
                    let text: String = v.extract()?;
                    match reclaimlab_core::config::parse_size(&text) {
                        Ok(b) if b != u64::MAX => b,
                        _ => return Err(invalid(format!("{rwhat}: 'bytes' must be a size like 64M or a byte count, got '{text}'"))),
                    }
                }
                _ => req::<u64>(r, "bytes", &rwhat)?,
            };
            reclaims.push(gen::Reclaim { cgroup: item(r, "cgroup", &rwhat)?.unwrap_or_default(), bytes, swappiness: item(r, "swappiness", &rwhat)? });
        }
        phases.push(gen::Phase { name: item(p, "name", &what)?.unwrap_or_else(|| format!("phase{}", i + 1)), accesses: req(p, "accesses", &what)?, streams, reclaims });
    }
    let prog = gen::Program { regions, phases, repeat: item(program, "repeat", "program")?.unwrap_or(1) };
    let src = py.detach(|| gen::generate(prog, seed)).map_err(trace_err)?;
    Ok(Source::new(src))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(native_storage, m)?)?;
    m.add_function(wrap_pyfunction!(trace_write, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    Ok(())
}
