//! [`NativeWriter`]: streams records into a native trace file atomically (temp file in
//! the target directory, renamed into place by [`NativeWriter::finish`]; removed if the
//! writer is dropped unfinished, so no partial output is ever left behind). With
//! [`NativeWriter::set_compress`] it writes version 2: each block shuffled and deflated
//! (zlib) into reused buffers, or stored as is when that is not smaller.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::{Compress, Compression, FlushCompress, Status};

use super::{
    checksum, encode_files, encode_ops, encode_table, record_len, shuffle, Header, BLOCK_RECORDS, COMPRESS_LEVEL, FLAG_HAS_FILES, FLAG_HAS_OPS, FLAG_HAS_TIME, HEADER_LEN,
    RECORD_LEN_TIMED,
};
use crate::{flags, Access, Error, ErrorKind, FileRange, Result, TraceOp};

/// Writes a native trace. Records are buffered one block at a time; the header and the
/// cgroup table (a trailer) are written by [`finish`](Self::finish), so cgroups may be
/// registered at any point before it.
pub struct NativeWriter {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
    tick_ps: u64,
    rec_len: usize,
    block: Vec<u8>,
    block_records: usize,
    nr_records: u64,
    /// max page id + 1 seen in records.
    pages_seen: u64,
    declared_pages: u32,
    max_cgroup: u16,
    cgroups: Vec<String>,
    cgroup_ids: HashMap<String, u16>,
    files: Vec<FileRange>,
    ops: Vec<TraceOp>,
    /// Set by [`set_compress`](Self::set_compress): version 2, blocks deflated.
    z: Option<Deflate>,
    /// Bytes of blocks written so far (headers included).
    block_bytes: u64,
    finished: bool,
}

/// What compressing blocks reuses from block to block.
struct Deflate {
    deflater: Compress,
    shuffled: Vec<u8>,
    out: Vec<u8>,
}

impl NativeWriter {
    /// Start writing `path`. Records carry time iff `tick_ps > 0` (picoseconds per gap
    /// tick); with `tick_ps == 0` every record's gap must be 0.
    pub fn create(path: &Path, tick_ps: u64) -> Result<Self> {
        if tick_ps > super::MAX_TICK_PS {
            return Err(Error::new(
                Some(path.into()),
                ErrorKind::InvalidArgument(format!("tick_ps {tick_ps} is over the limit of {} ps (one second per tick)", super::MAX_TICK_PS)),
            ));
        }
        let tmp = crate::tmp::temp_for(path).ok_or_else(|| Error::new(Some(path.into()), ErrorKind::InvalidArgument("output path has no file name".into())))?;
        let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
        let file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // Placeholder header, patched at finish().
        out.write_all(&[0u8; HEADER_LEN]).map_err(io)?;
        let rec_len = record_len(tick_ps != 0);
        let mut cgroup_ids = HashMap::new();
        cgroup_ids.insert(String::new(), 0);
        Ok(NativeWriter {
            path: path.into(),
            tmp,
            out: Some(out),
            tick_ps,
            rec_len,
            block: Vec::with_capacity(BLOCK_RECORDS * rec_len),
            block_records: 0,
            nr_records: 0,
            pages_seen: 0,
            declared_pages: 0,
            max_cgroup: 0,
            cgroups: vec![String::new()],
            cgroup_ids,
            files: Vec::new(),
            ops: Vec::new(),
            z: None,
            block_bytes: 0,
            finished: false,
        })
    }

    /// Compress the blocks (the file becomes version 2; see FORMAT.md) or not (version 1,
    /// the default). Only before the first block is written, i.e. before 65536 records.
    pub fn set_compress(&mut self, compress: bool) -> Result<()> {
        if self.block_bytes != 0 {
            return Err(self.err(ErrorKind::InvalidArgument("set_compress: blocks have already been written".into())));
        }
        self.z = compress.then(|| Deflate { deflater: Compress::new(Compression::new(COMPRESS_LEVEL), true), shuffled: Vec::new(), out: Vec::new() });
        Ok(())
    }

    /// Bytes of blocks written so far, block headers included (the header and trailer
    /// excluded): with compression, what the records take on disk.
    pub fn block_bytes(&self) -> u64 {
        self.block_bytes
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error::new(Some(self.path.clone()), kind)
    }

    /// The id of cgroup `name`, registering it if new (root `""` is always id 0).
    pub fn cgroup(&mut self, name: &str) -> Result<u16> {
        if let Some(&id) = self.cgroup_ids.get(name) {
            return Ok(id);
        }
        if self.cgroups.len() > u16::MAX as usize {
            return Err(self.err(ErrorKind::InvalidArgument("more than 65535 cgroups".into())));
        }
        if name.len() > u16::MAX as usize {
            return Err(self.err(ErrorKind::InvalidArgument(format!("cgroup name longer than 65535 bytes: {:.40}…", name))));
        }
        let id = self.cgroups.len() as u16;
        self.cgroups.push(name.to_string());
        self.cgroup_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// Register a whole table at once, ids = positions. `names[0]` must be `""` and
    /// names must be unique; names already registered must keep their ids.
    pub fn set_cgroups(&mut self, names: &[String]) -> Result<()> {
        if names.first().map(String::as_str) != Some("") {
            return Err(self.err(ErrorKind::InvalidArgument("cgroup table must start with the root \"\"".into())));
        }
        for (i, n) in names.iter().enumerate() {
            let id = self.cgroup(n)?;
            if id as usize != i {
                return Err(self.err(ErrorKind::InvalidArgument(format!("cgroup {n:?} at position {i} is already registered as id {id}"))));
            }
        }
        Ok(())
    }

    /// Declare the trace's files (sorted, disjoint page-id ranges; see [`FileRange`]).
    pub fn set_files(&mut self, files: &[FileRange]) -> Result<()> {
        crate::check_files(files).map_err(|e| self.err(ErrorKind::InvalidArgument(e)))?;
        if files.iter().any(|f| f.name.len() > u16::MAX as usize) {
            return Err(self.err(ErrorKind::InvalidArgument("file name longer than 65535 bytes".into())));
        }
        self.files = files.to_vec();
        Ok(())
    }

    /// Add an op (a `memory.reclaim` write) before record `op.at`: ops come in order of
    /// position; one at the current record count goes before the next record written (or
    /// after the last, if none follows). Its cgroup must be registered by `finish()`.
    pub fn op(&mut self, op: TraceOp) -> Result<()> {
        let written = self.nr_records();
        let prev = self.ops.last().map_or(0, |o| o.at);
        if op.at < prev || op.at < written {
            return Err(self.err(ErrorKind::InvalidArgument(format!(
                "op at record {} comes after {} (ops are added in order, before the records they precede)",
                op.at,
                prev.max(written)
            ))));
        }
        crate::check_ops(std::slice::from_ref(&op), u64::MAX, usize::MAX).map_err(|e| self.err(ErrorKind::InvalidArgument(e)))?;
        self.ops.push(op);
        Ok(())
    }

    /// Declare the page-id space (header `nr_pages` becomes at least this).
    pub fn set_nr_pages(&mut self, nr_pages: u32) {
        self.declared_pages = self.declared_pages.max(nr_pages);
    }

    /// Records written so far (including those still buffered in the current block).
    pub fn nr_records(&self) -> u64 {
        self.nr_records + self.block_records as u64
    }

    pub fn write(&mut self, a: &Access) -> Result<()> {
        self.write_all(std::slice::from_ref(a))
    }

    pub fn write_all(&mut self, recs: &[Access]) -> Result<()> {
        let has_time = self.tick_ps != 0;
        let mut rest = recs;
        while !rest.is_empty() {
            let n = rest.len().min(BLOCK_RECORDS - self.block_records);
            let (chunk, tail) = rest.split_at(n);
            let before = self.block.len();
            let mut bad = 0u8;
            let mut max_page = 0u32;
            let mut max_cg = 0u16;
            let mut any_gap = 0u32;
            self.block.resize(before + n * self.rec_len, 0);
            let out = &mut self.block[before..];
            if has_time {
                encode::<12>(chunk, out, &mut bad, &mut max_page, &mut max_cg, &mut any_gap);
            } else {
                encode::<8>(chunk, out, &mut bad, &mut max_page, &mut max_cg, &mut any_gap);
            }
            if bad != 0 || (!has_time && any_gap != 0) || max_page == u32::MAX {
                let i = chunk.iter().position(|a| a.flags & !flags::VALID != 0 || (!has_time && a.gap != 0) || a.page == u32::MAX).unwrap_or(0);
                let a = chunk[i];
                self.block.truncate(before);
                let what = if a.flags & !flags::VALID != 0 {
                    format!("invalid flags {:#x}", a.flags)
                } else if a.page == u32::MAX {
                    "page id u32::MAX is reserved (nr_pages must fit in u32)".to_string()
                } else {
                    "record has a gap but the trace was created without time (tick_ps = 0)".to_string()
                };
                return Err(self.err(ErrorKind::InvalidArgument(format!("record {}: {what}", self.nr_records + self.block_records as u64 + i as u64))));
            }
            if !chunk.is_empty() {
                self.pages_seen = self.pages_seen.max(max_page as u64 + 1);
                self.max_cgroup = self.max_cgroup.max(max_cg);
            }
            self.block_records += n;
            if self.block_records == BLOCK_RECORDS {
                self.flush_block()?;
            }
            rest = tail;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.block_records == 0 {
            return Ok(());
        }
        debug_assert_eq!(self.block.len(), self.block_records * self.rec_len);
        let count = (self.block_records as u32).to_le_bytes();
        let out = self.out.as_mut().expect("writer is open");
        let res = match &mut self.z {
            None => {
                let sum = checksum(&self.block);
                self.block_bytes += (12 + self.block.len()) as u64;
                out.write_all(&count).and_then(|_| out.write_all(&sum.to_le_bytes())).and_then(|_| out.write_all(&self.block))
            }
            Some(z) => {
                let stored = z.compress(&self.block, self.rec_len);
                let stored = stored.unwrap_or(&self.block);
                self.block_bytes += (16 + stored.len()) as u64;
                out.write_all(&count)
                    .and_then(|_| out.write_all(&(stored.len() as u32).to_le_bytes()))
                    .and_then(|_| out.write_all(&checksum(stored).to_le_bytes()))
                    .and_then(|_| out.write_all(stored))
            }
        };
        res.map_err(|e| Error::new(Some(self.path.clone()), ErrorKind::Io(e)))?;
        self.nr_records += self.block_records as u64;
        self.block_records = 0;
        self.block.clear();
        Ok(())
    }

    /// Write the last block, the cgroup table and the header; atomically rename the
    /// file into place. Returns the number of records written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_block()?;
        if self.max_cgroup as usize >= self.cgroups.len() {
            return Err(self.err(ErrorKind::InvalidArgument(format!("records use cgroup id {} but only {} cgroups are registered", self.max_cgroup, self.cgroups.len()))));
        }
        let nr_pages = self.pages_seen.max(self.declared_pages as u64) as u32;
        crate::check_ops(&self.ops, self.nr_records, self.cgroups.len()).map_err(|e| self.err(ErrorKind::InvalidArgument(e)))?;
        let mut table = encode_table(&self.cgroups);
        if !self.files.is_empty() {
            table.extend_from_slice(&encode_files(&self.files));
        }
        if !self.ops.is_empty() {
            table.extend_from_slice(&encode_ops(&self.ops));
        }
        let table_len = u32::try_from(table.len()).map_err(|_| self.err(ErrorKind::InvalidArgument("cgroup table too large".into())))?;
        let header = Header {
            compressed: self.z.is_some(),
            flags: if self.tick_ps != 0 { FLAG_HAS_TIME } else { 0 } | if self.files.is_empty() { 0 } else { FLAG_HAS_FILES } | if self.ops.is_empty() { 0 } else { FLAG_HAS_OPS },
            nr_records: self.nr_records,
            nr_pages,
            nr_cgroups: self.cgroups.len() as u16,
            tick_ps: self.tick_ps,
            table_offset: HEADER_LEN as u64 + self.block_bytes,
            table_len,
            table_checksum: checksum(&table),
        };
        let mut out = self.out.take().expect("writer is open");
        let io = |e| Error::new(Some(self.path.clone()), ErrorKind::Io(e));
        out.write_all(&table).map_err(io)?;
        let mut file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&header.encode()).map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        fs::rename(&self.tmp, &self.path).map_err(io)?;
        self.finished = true;
        Ok(self.nr_records)
    }
}

impl Deflate {
    /// The block's stored form: its records shuffled and deflated, or None when that is
    /// not smaller than the records (they are then stored as they are).
    fn compress(&mut self, block: &[u8], rec_len: usize) -> Option<&[u8]> {
        self.shuffled.resize(block.len(), 0);
        if rec_len == RECORD_LEN_TIMED {
            shuffle::<RECORD_LEN_TIMED>(block, &mut self.shuffled);
        } else {
            shuffle::<{ super::RECORD_LEN }>(block, &mut self.shuffled);
        }
        self.out.clear();
        // Room for one byte less than the records: a stream that does not fit is useless.
        self.out.reserve_exact(block.len().saturating_sub(1));
        let room = block.len().saturating_sub(1);
        // compress_vec writes into the spare capacity, which may exceed what was asked.
        self.deflater.reset();
        let status = self.deflater.compress_vec(&self.shuffled, &mut self.out, FlushCompress::Finish);
        match status {
            Ok(Status::StreamEnd) if self.out.len() <= room => Some(&self.out),
            _ => None,
        }
    }
}

/// Encode `recs` into `out` (exactly `recs.len() * RL` bytes), folding the validation
/// facts into the accumulators.
#[inline(always)]
fn encode<const RL: usize>(recs: &[Access], out: &mut [u8], bad: &mut u8, max_page: &mut u32, max_cg: &mut u16, any_gap: &mut u32) {
    for (a, o) in recs.iter().zip(out.chunks_exact_mut(RL)) {
        *bad |= a.flags & !flags::VALID;
        *max_page = (*max_page).max(a.page);
        *max_cg = (*max_cg).max(a.cgroup);
        *any_gap |= a.gap;
        o[0..4].copy_from_slice(&a.page.to_le_bytes());
        o[4] = a.flags;
        o[5] = 0;
        o[6..8].copy_from_slice(&a.cgroup.to_le_bytes());
        if RL == 12 {
            o[8..12].copy_from_slice(&a.gap.to_le_bytes());
        }
    }
}

impl Drop for NativeWriter {
    fn drop(&mut self) {
        if !self.finished {
            drop(self.out.take());
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
