//! libCacheSim's `oracleGeneral` binary trace format: read and write.
//!
//! Each record is 24 bytes, little-endian, no header (libCacheSim
//! `libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h`):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | u32 | `clock_time` (seconds; we write the record index) |
//! | 4 | u64 | `obj_id` |
//! | 12 | u32 | `obj_size` (bytes; we write 1: page-granular, cache sizes count pages) |
//! | 16 | i64 | `next_access_vtime`: index of the next request to the same object, -1 if none |
//!
//! Reading maps `obj_id`s to dense page ids in order of first appearance (like the text
//! readers). Files ending in `.zst` are the zstd-compressed variant, read and written
//! only when the crate is built with the `zstd` cargo feature (off by default).
//! [`read_keys`] on an uncompressed file that nothing has read yet maps it into memory
//! (`memmap2`) and remaps the ids in one tight loop, with no intermediate records.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::pagemap::U64Hasher;
use crate::{Access, AccessKind, AccessSource, Error, ErrorKind, FileRange, Result, TraceMeta};

/// Bytes per oracleGeneral record.
pub const RECORD_BYTES: usize = 24;

/// True if the name says zstd-compressed (`*.zst`).
pub fn is_zst(path: &Path) -> bool {
    path.extension().map(|e| e.eq_ignore_ascii_case("zst")).unwrap_or(false)
}

fn open_read(path: &Path) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
    let f = File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if is_zst(path) {
        #[cfg(feature = "zstd")]
        {
            let d = zstd::stream::read::Decoder::new(f).map_err(io)?;
            return Ok((Box::new(d), None));
        }
        #[cfg(not(feature = "zstd"))]
        return Err(Error::new(
            Some(path.into()),
            ErrorKind::BadHeader("a zstd-compressed oracleGeneral trace; rebuild reclaimlab-trace with the `zstd` feature or decompress it (zstd -d)".into()),
        ));
    }
    if len % RECORD_BYTES as u64 != 0 {
        return Err(Error::new(Some(path.into()), ErrorKind::Truncated { record: len / RECORD_BYTES as u64 }));
    }
    Ok((Box::new(BufReader::with_capacity(1 << 20, f)), Some(len / RECORD_BYTES as u64)))
}

/// obj_id → dense id in order of first appearance: a flat table for small ids (traces
/// written from dense ids), a hash map for the rest.
#[derive(Default)]
struct IdMap {
    /// Dense id + 1 by object id; 0 for an object not seen yet. Zero as "none" lets the
    /// table be allocated zeroed (fresh pages from the kernel, no fill pass), so a trace
    /// whose ids are sparse in a large range touches only the table's pages it uses.
    direct: Vec<u32>,
    map: HashMap<u64, u32, BuildHasherDefault<U64Hasher>>,
    n: u32,
}

/// Object ids below this are remapped through a flat table (at most 4 × 2^25 bytes).
const DIRECT_LIMIT: u64 = 1 << 25;

/// How many records ahead [`OracleReader::read_all_keys`] prefetches the flat table's slot.
const PREFETCH_AHEAD: usize = 32;

impl IdMap {
    #[inline(always)]
    fn id(&mut self, key: u64) -> Option<u32> {
        if let Some(&slot) = self.direct.get(key as usize) {
            if slot != 0 {
                return Some(slot - 1);
            }
        }
        self.id_slow(key)
    }

    /// A first appearance, an id beyond the flat table, or one for the hash map.
    #[inline(never)]
    fn id_slow(&mut self, key: u64) -> Option<u32> {
        if key < DIRECT_LIMIT {
            let k = key as usize;
            if k >= self.direct.len() {
                let len = (k + 1).next_power_of_two().max(1 << 16);
                let mut grown = vec![0u32; len];
                crate::mem::huge_pages(&mut grown);
                grown[..self.direct.len()].copy_from_slice(&self.direct);
                self.direct = grown;
            }
            let slot = &mut self.direct[k];
            if *slot == 0 {
                if self.n == u32::MAX {
                    return None;
                }
                self.n += 1;
                *slot = self.n;
            }
            return Some(*slot - 1);
        }
        let n = self.n;
        let id = *self.map.entry(key).or_insert(n);
        if id == n {
            if n == u32::MAX {
                return None;
            }
            self.n += 1;
        }
        Some(id)
    }
}

/// One decoded oracleGeneral record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleRecord {
    pub clock_time: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    pub next_access_vtime: i64,
}

impl OracleRecord {
    #[inline]
    pub fn decode(b: &[u8]) -> Self {
        OracleRecord {
            clock_time: u32::from_le_bytes(b[0..4].try_into().unwrap()),
            obj_id: u64::from_le_bytes(b[4..12].try_into().unwrap()),
            obj_size: u32::from_le_bytes(b[12..16].try_into().unwrap()),
            next_access_vtime: i64::from_le_bytes(b[16..24].try_into().unwrap()),
        }
    }
    #[inline]
    pub fn encode(&self, b: &mut [u8]) {
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
    }
}

/// Streaming reader of an oracleGeneral trace (an [`AccessSource`]).
pub struct OracleReader {
    path: PathBuf,
    input: Box<dyn Read + Send>,
    pages: IdMap,
    flags: u8,
    meta: TraceMeta,
    records: u64,
    raw: Vec<u8>,
    /// Bytes of a partial record carried to the next read.
    carry: usize,
    eof: bool,
}

impl OracleReader {
    pub fn open(path: &Path, kind: Option<AccessKind>) -> Result<Self> {
        let (input, n) = open_read(path)?;
        let flags = kind.unwrap_or(AccessKind::FileRead).flags();
        Ok(OracleReader {
            path: path.into(),
            input,
            pages: IdMap::default(),
            flags,
            meta: TraceMeta {
                format: "oracle".into(),
                nr_records: n,
                nr_pages: None,
                cgroups: vec![String::new()],
                tick_ps: 0,
                // As a LIRS block trace: read as page cache it is one device-sized file
                // whose page ids are the objects in order of first request.
                files: if flags & crate::flags::FILE != 0 { FileRange::whole_id_space() } else { Vec::new() },
                ops: Vec::new(),
            },
            records: 0,
            raw: Vec::new(),
            carry: 0,
            eof: false,
        })
    }

    /// Read until `raw` holds `max` whole records (fewer at the end of the input);
    /// returns the number of whole records at the start of `raw`.
    fn fill(&mut self, max: usize) -> Result<usize> {
        let want = max * RECORD_BYTES;
        if self.raw.len() < want {
            self.raw.resize(want, 0);
        }
        let mut got = self.carry;
        while got < want && !self.eof {
            match self.input.read(&mut self.raw[got..want]) {
                Ok(0) => self.eof = true,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::new(Some(self.path.clone()), ErrorKind::Io(e))),
            }
        }
        let whole = got / RECORD_BYTES;
        if self.eof && got % RECORD_BYTES != 0 {
            return Err(Error::new(Some(self.path.clone()), ErrorKind::Truncated { record: self.records + whole as u64 }));
        }
        self.carry = got;
        self.records += whole as u64;
        Ok(whole)
    }

    /// Drop the first `n` whole records of `raw` (keep a partial record's bytes).
    fn consume(&mut self, n: usize) {
        let used = n * RECORD_BYTES;
        let rest = self.carry - used;
        if rest > 0 {
            self.raw.copy_within(used..self.carry, 0);
        }
        self.carry = rest;
    }

    /// Read up to `max` raw records (ids not remapped) into `out`; 0 at the end.
    pub fn read_raw(&mut self, out: &mut Vec<OracleRecord>, max: usize) -> Result<usize> {
        out.clear();
        let n = self.fill(max)?;
        for r in 0..n {
            out.push(OracleRecord::decode(&self.raw[r * RECORD_BYTES..(r + 1) * RECORD_BYTES]));
        }
        self.consume(n);
        Ok(n)
    }
}

impl OracleReader {
    /// [`AccessSource::read_all_keys`]: map the file and remap every `obj_id` in one pass.
    fn mmap_keys(&mut self) -> Result<(Vec<u32>, u32)> {
        let io = |e| Error::new(Some(self.path.clone()), ErrorKind::Io(e));
        let f = File::open(&self.path).map_err(io)?;
        // SAFETY: the file is only read; as with any reader, a concurrent writer could
        // change what we see, but not memory safety of the copied-out integers.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&f) }.map_err(io)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let n = map.len() / RECORD_BYTES;
        if map.len() % RECORD_BYTES != 0 {
            return Err(Error::new(Some(self.path.clone()), ErrorKind::Truncated { record: n as u64 }));
        }
        let mut keys = Vec::new();
        crate::mem::reserve(&mut keys, n, &|| format!("the trace's {n} requests' page ids")).map_err(|e| Error::new(Some(self.path.clone()), ErrorKind::InvalidArgument(e)))?;
        crate::mem::huge_pages(&mut keys);
        let recs = &map[..n * RECORD_BYTES];
        let obj_id = |i: usize| u64::from_le_bytes(recs[i * RECORD_BYTES + 4..i * RECORD_BYTES + 12].try_into().unwrap());
        let out = &mut keys.spare_capacity_mut()[..n];
        for (i, slot) in out.iter_mut().enumerate() {
            // The flat table's slot of a request PREFETCH_AHEAD on: its lookups are random
            // (a 4 MiB table for 1 M objects), the records a sequential stream.
            if i + PREFETCH_AHEAD < n {
                crate::prefetch::prefetch(&self.pages.direct, obj_id(i + PREFETCH_AHEAD) as usize);
            }
            match self.pages.id(obj_id(i)) {
                Some(p) => {
                    slot.write(p);
                }
                None => return Err(Error::new(Some(self.path.clone()), ErrorKind::Corrupt { record: i as u64, what: "more than 2^32-1 distinct objects".into() })),
            }
        }
        // SAFETY: the loop wrote every one of the first n slots (it returns otherwise).
        unsafe { keys.set_len(n) };
        self.records = n as u64;
        self.eof = true;
        Ok((keys, self.pages.n))
    }
}

impl AccessSource for OracleReader {
    fn read_all_keys(&mut self) -> Option<Result<(Vec<u32>, u32)>> {
        if is_zst(&self.path) || self.records > 0 || self.carry > 0 || self.eof {
            return None;
        }
        Some(self.mmap_keys())
    }

    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        let n = self.fill(max)?;
        let base = self.records - n as u64;
        buf.reserve(n);
        for i in 0..n {
            let b = &self.raw[i * RECORD_BYTES..(i + 1) * RECORD_BYTES];
            let obj = u64::from_le_bytes(b[4..12].try_into().unwrap());
            let page = match self.pages.id(obj) {
                Some(p) => p,
                None => return Err(Error::new(Some(self.path.clone()), ErrorKind::Corrupt { record: base + i as u64, what: "more than 2^32-1 distinct objects".into() })),
            };
            buf.push(Access { page, cgroup: 0, flags: self.flags, gap: 0 });
        }
        self.consume(n);
        Ok(n)
    }

    fn nr_pages_seen(&self) -> u32 {
        self.pages.n
    }

    fn progress(&self) -> Option<f64> {
        self.meta.nr_records.map(|n| if n == 0 { 1.0 } else { self.records as f64 / n as f64 })
    }
}

/// Next-access times of a key sequence in one backward pass: `next[i]` is the index of
/// the next request to `keys[i]`, or -1. `nr_keys` bounds the keys (max + 1).
pub fn next_access(keys: &[u32], nr_keys: u32) -> Vec<i64> {
    let mut last = vec![-1i64; nr_keys as usize];
    let mut next = vec![-1i64; keys.len()];
    for i in (0..keys.len()).rev() {
        let k = keys[i] as usize;
        next[i] = last[k];
        last[k] = i as i64;
    }
    next
}

/// Write `keys` (dense ids, object size 1, `clock_time` = request index) as an
/// oracleGeneral file with next-access times. Atomic: written to a temporary name and
/// renamed. `*.zst` needs the `zstd` feature. Returns the number of records.
pub fn write_oracle(path: &Path, keys: &[u32]) -> Result<u64> {
    let nr = keys.iter().copied().max().map(|m| m as u64 + 1).unwrap_or(0) as u32;
    let next = next_access(keys, nr);
    let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
    let tmp = crate::tmp::temp_for(path).ok_or_else(|| Error::invalid(format!("{}: output path has no file name", path.display())))?;
    let res = (|| -> std::io::Result<()> {
        let f = File::create(&tmp)?;
        let mut w: Box<dyn Write> = if is_zst(path) {
            #[cfg(feature = "zstd")]
            {
                Box::new(zstd::stream::write::Encoder::new(f, 3)?.auto_finish())
            }
            #[cfg(not(feature = "zstd"))]
            {
                drop(f);
                return Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "writing *.zst needs reclaimlab-trace built with the `zstd` feature"));
            }
        } else {
            Box::new(BufWriter::with_capacity(1 << 20, f))
        };
        let mut b = [0u8; RECORD_BYTES];
        for (i, (&k, &nx)) in keys.iter().zip(next.iter()).enumerate() {
            OracleRecord { clock_time: i as u32, obj_id: k as u64, obj_size: 1, next_access_vtime: nx }.encode(&mut b);
            w.write_all(&b)?;
        }
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(keys.len() as u64)
}

/// Read a whole source into a vector of dense page ids (for offline algorithms and
/// writers that need next-access times). Returns (keys, nr_pages).
pub fn read_keys(src: &mut dyn AccessSource) -> Result<(Vec<u32>, u32)> {
    if let Some(r) = src.read_all_keys() {
        return r;
    }
    // The page ids are the one input-sized allocation here: reserved fallibly and within
    // the memory limit (a header's record count is only believed as far as the limit).
    let mem_err = |e: String| Error::invalid(e);
    let mut keys: Vec<u32> = Vec::new();
    if let Some(n) = src.meta().nr_records {
        let n = n.min(u32::MAX as u64 * 4) as usize;
        crate::mem::reserve(&mut keys, n, &|| format!("the trace's {n} requests' page ids")).map_err(mem_err)?;
    }
    let mut buf = Vec::with_capacity(1 << 16);
    while src.read_batch(&mut buf, 1 << 16)? > 0 {
        if keys.capacity() - keys.len() < buf.len() {
            // Grow by doubling, fallibly (a text trace's length is known only at its end).
            let more = keys.len().max(buf.len());
            let n = keys.len() + more;
            crate::mem::reserve(&mut keys, more, &|| format!("the trace's {n} requests' page ids")).map_err(mem_err)?;
        }
        keys.extend(buf.iter().map(|a| a.page));
    }
    let nr = src.meta().nr_pages.unwrap_or(0).max(src.nr_pages_seen());
    let nr = nr.max(keys.iter().copied().max().map(|m| m + 1).unwrap_or(0));
    Ok((keys, nr))
}
