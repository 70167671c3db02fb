//! [`convert`]: copy any [`AccessSource`] into a native trace file (atomically; on error
//! no output file is left behind).

use std::path::Path;

use crate::native::NativeWriter;
use crate::{AccessSource, Result};

/// Records per batch when streaming a source.
pub const BATCH: usize = 1 << 16;

/// Write all records of `src` to the native trace `out`, with the source's cgroup
/// table, tick_ps, page-id space, file table and ops. Returns the number of records written.
pub fn convert(src: &mut dyn AccessSource, out: &Path) -> Result<u64> {
    convert_with(src, out, false)
}

/// [`convert`], with the blocks compressed (native version 2) if `compress`.
pub fn convert_with(src: &mut dyn AccessSource, out: &Path, compress: bool) -> Result<u64> {
    let mut w = NativeWriter::create(out, src.meta().tick_ps)?;
    w.set_compress(compress)?;
    // A source's ops are known up front (native files, programs); the writer keeps them
    // for the trailer.
    for op in &src.meta().ops {
        w.op(op.clone())?;
    }
    let mut buf = Vec::with_capacity(BATCH);
    while src.read_batch(&mut buf, BATCH)? > 0 {
        w.write_all(&buf)?;
    }
    // Text sources learn cgroups and pages while reading: take them at the end.
    w.set_cgroups(src.cgroups_seen())?;
    w.set_nr_pages(src.meta().nr_pages.unwrap_or(0).max(src.nr_pages_seen()));
    w.set_files(&src.meta().files)?;
    w.finish()
}
