//! `TraceWriter`: a native trace streamed from Python in pieces, with page ids translated
//! through per-stream tables (`reclaimlab record` writes its spool this way).

use std::path::PathBuf;

use pyo3::prelude::*;
use reclaimlab_trace::{Access, FileRange, NativeWriter, TraceOp};

use crate::error::{invalid, trace_err};

/// A native trace being written (atomically: nothing appears at `out` before `finish()`;
/// a writer dropped unfinished leaves nothing). Records arrive in the native 12-byte
/// layout (`u32 page, u8 flags, u8 0, u16 cgroup, u32 gap`) whose page is an index into a
/// table set with `set_map`; the cgroup field is ignored and the writer's cgroup used.
#[pyclass(module = "reclaimlab._core")]
pub struct TraceWriter {
    inner: Option<NativeWriter>,
    cgroup: u16,
    maps: Vec<Vec<u32>>,
    buf: Vec<Access>,
}

#[pymethods]
impl TraceWriter {
    /// Start writing `out` with `tick_ps` picoseconds per gap tick, every record in
    /// cgroup `cgroup`, the file table `files` (`(name, first page id, pages, advice)`,
    /// sorted and disjoint) and at least `nr_pages` page ids; with `compress`, the blocks
    /// are compressed (native version 2).
    #[new]
    #[pyo3(signature = (out, tick_ps, cgroup = "", files = Vec::new(), nr_pages = 0, compress = false))]
    fn new(out: PathBuf, tick_ps: u64, cgroup: &str, files: Vec<(String, u32, u32, u8)>, nr_pages: u32, compress: bool) -> PyResult<Self> {
        if tick_ps == 0 {
            return Err(invalid("TraceWriter: tick_ps must be > 0"));
        }
        let files: Vec<FileRange> = files.into_iter().map(|(name, first, nr_pages, advice)| FileRange { name, first, nr_pages, advice }).collect();
        let mut w = NativeWriter::create(&out, tick_ps).map_err(trace_err)?;
        w.set_compress(compress).map_err(trace_err)?;
        let cgroup = w.cgroup(cgroup).map_err(trace_err)?;
        w.set_files(&files).map_err(trace_err)?;
        w.set_nr_pages(nr_pages);
        Ok(TraceWriter { inner: Some(w), cgroup, maps: Vec::new(), buf: Vec::with_capacity(1 << 12) })
    }

    /// Set table `slot`: entry i (u32 little-endian) is the page id of local page i.
    fn set_map(&mut self, slot: usize, map: &[u8]) {
        if self.maps.len() <= slot {
            self.maps.resize_with(slot + 1, Vec::new);
        }
        self.maps[slot] = map.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
    }

    /// Append `records` (a multiple of 12 bytes) whose pages index table `slot`.
    fn write(&mut self, py: Python<'_>, slot: usize, records: &[u8]) -> PyResult<()> {
        if records.len() % 12 != 0 {
            return Err(invalid(format!("TraceWriter.write: {} bytes is not a whole number of 12-byte records", records.len())));
        }
        let map = self.maps.get(slot).ok_or_else(|| invalid(format!("TraceWriter.write: no table {slot}")))?;
        let w = self.inner.as_mut().ok_or_else(|| invalid("TraceWriter: already finished"))?;
        self.buf.clear();
        for r in records.chunks_exact(12) {
            let local = u32::from_le_bytes(r[0..4].try_into().unwrap());
            let page = *map.get(local as usize).ok_or_else(|| invalid(format!("TraceWriter.write: local page {local} is not in table {slot}")))?;
            self.buf.push(Access { page, cgroup: self.cgroup, flags: r[4], gap: u32::from_le_bytes(r[8..12].try_into().unwrap()) });
        }
        let buf = &self.buf;
        py.detach(|| w.write_all(buf)).map_err(trace_err)
    }

    /// A `memory.reclaim` write of `bytes` (with `swappiness=` if given) to cgroup
    /// `cgroup`'s file before the next record written (or after the last).
    #[pyo3(signature = (cgroup, bytes, swappiness = None))]
    fn memory_reclaim(&mut self, cgroup: &str, bytes: u64, swappiness: Option<u8>) -> PyResult<()> {
        let w = self.inner.as_mut().ok_or_else(|| invalid("TraceWriter: already finished"))?;
        let cg = w.cgroup(cgroup).map_err(trace_err)?;
        let at = w.nr_records();
        w.op(TraceOp::memory_reclaim(at, cg, bytes, swappiness)).map_err(trace_err)
    }

    /// A `madvise(advice)` of pages `first .. first + nr_pages` ("hugepage", "nohugepage"
    /// or "dontneed") before the next record written (or after the last).
    fn madvise(&mut self, first: u32, nr_pages: u32, advice: &str) -> PyResult<()> {
        let w = self.inner.as_mut().ok_or_else(|| invalid("TraceWriter: already finished"))?;
        let a = reclaimlab_trace::madvise_parse(advice).ok_or_else(|| invalid(format!("TraceWriter.madvise: advice {advice:?} is not hugepage, nohugepage or dontneed")))?;
        let at = w.nr_records();
        w.op(TraceOp::madvise(at, 0, first, nr_pages, a)).map_err(trace_err)
    }

    /// Write the trailer and header and rename the file into place; returns the records written.
    fn finish(&mut self, py: Python<'_>) -> PyResult<u64> {
        let w = self.inner.take().ok_or_else(|| invalid("TraceWriter: already finished"))?;
        py.detach(|| w.finish()).map_err(trace_err)
    }

    /// Remove the temporary file without writing anything at the destination.
    fn abort(&mut self) {
        self.inner = None;
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceWriter>()
}
