//! [`NativeReader`]: streams a native trace, validating the header, the file length, every
//! block checksum and every record field. Decoding is a single pass of `from_le_bytes`
//! over each block with branch-free validation (no per-record allocation). A compressed
//! (version 2) block is inflated and unshuffled into the same reused block buffer first,
//! so the only extra cost is per block.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::{Decompress, FlushDecompress, Status};

use super::{checksum, complete_records, decode_trailer, unshuffle, Header, BLOCK_HEADER_LEN, BLOCK_HEADER_LEN_V2, BLOCK_RECORDS, HEADER_LEN, MAGIC, RECORD_LEN, RECORD_LEN_TIMED};
use crate::{flags, Access, AccessSource, Error, ErrorKind, Result, TraceMeta};

/// Streaming reader of a native trace file.
pub struct NativeReader {
    path: PathBuf,
    file: File,
    header: Header,
    meta: TraceMeta,
    rec_len: usize,
    /// Current block: in version 1 the 12-byte block header followed by the payload; in
    /// version 2 the records alone (inflated and unshuffled, or read as stored).
    raw: Vec<u8>,
    /// Offset of the first record in `raw` (the block header's length in v1, 0 in v2).
    rec_base: usize,
    /// Version 2 only: the reused buffers and inflater of compressed blocks.
    z: Option<Inflate>,
    /// Version 2: file offset of the next block's header.
    offset: u64,
    /// Record index of the first record of the current block.
    block_start: u64,
    /// Records in the current block.
    block_len: usize,
    /// Next record to decode within the current block.
    pos: usize,
    /// Gap ticks of the records decoded so far, and the most the trace may have
    /// (`MAX_DURATION_PS / tick_ps`; u64::MAX without time).
    ticks: u64,
    max_ticks: u64,
}

/// How a native trace stores its records ([`NativeReader::storage`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Storage {
    /// Version 2: blocks may be compressed.
    pub compressed: bool,
    /// The records' own bytes (8 or 12 per record).
    pub record_bytes: u64,
    /// What the blocks' payloads take in the file (block headers excluded); equal to
    /// `record_bytes` without compression.
    pub block_bytes: u64,
    /// The whole file.
    pub file_bytes: u64,
}

/// What reading compressed blocks reuses from block to block.
struct Inflate {
    inflater: Decompress,
    /// The block's stored (compressed) bytes.
    stored: Vec<u8>,
    /// The inflated, still shuffled records.
    shuffled: Vec<u8>,
}

/// Read as many bytes as possible into `buf`; returns how many were read.
fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl NativeReader {
    /// Open and validate `path` (header, exact file length, cgroup table). Records are
    /// checked as they are read.
    pub fn open(path: &Path) -> Result<Self> {
        let err = |kind| Error::new(Some(path.into()), kind);
        let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
        let mut file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let mut h = [0u8; HEADER_LEN];
        let got = read_full(&mut file, &mut h).map_err(io)?;
        if got < HEADER_LEN {
            let k = got.min(MAGIC.len());
            return Err(if got > 0 && h[..k] == MAGIC[..k] {
                err(ErrorKind::Truncated { record: 0 })
            } else {
                err(ErrorKind::BadHeader(format!("{got} bytes, too short for a native trace header")))
            });
        }
        let header = Header::decode(&h).map_err(|s| err(ErrorKind::BadHeader(s)))?;
        let rec_len = header.record_len();
        let table_end = header.table_offset + header.table_len as u64;
        if file_len < header.table_offset {
            let record = if header.compressed { complete_blocks(&mut file, file_len, &header).map_err(io)? } else { complete_records(file_len, header.nr_records, rec_len) };
            return Err(err(ErrorKind::Truncated { record }));
        }
        if file_len < table_end {
            return Err(err(ErrorKind::Truncated { record: header.nr_records }));
        }
        if file_len > table_end {
            return Err(err(ErrorKind::Corrupt { record: header.nr_records, what: format!("{} bytes of trailing garbage after the cgroup table", file_len - table_end) }));
        }
        file.seek(SeekFrom::Start(header.table_offset)).map_err(io)?;
        let mut table = vec![0u8; header.table_len as usize];
        if read_full(&mut file, &mut table).map_err(io)? < table.len() {
            return Err(err(ErrorKind::Truncated { record: header.nr_records }));
        }
        let corrupt_table = |what: String| err(ErrorKind::Corrupt { record: header.nr_records, what });
        if checksum(&table) != header.table_checksum {
            return Err(corrupt_table("cgroup table checksum mismatch".into()));
        }
        let trailer = decode_trailer(&table, &header).map_err(corrupt_table)?;
        file.seek(SeekFrom::Start(HEADER_LEN as u64)).map_err(io)?;
        let meta = TraceMeta {
            format: "native".into(),
            nr_records: Some(header.nr_records),
            nr_pages: Some(header.nr_pages),
            cgroups: trailer.cgroups,
            tick_ps: header.tick_ps,
            files: trailer.files,
            ops: trailer.ops,
        };
        let z = header.compressed.then(|| Inflate { inflater: Decompress::new(true), stored: Vec::new(), shuffled: Vec::new() });
        let max_ticks = super::MAX_DURATION_PS.checked_div(header.tick_ps).unwrap_or(u64::MAX);
        Ok(NativeReader {
            path: path.into(),
            file,
            rec_base: if header.compressed { 0 } else { BLOCK_HEADER_LEN },
            header,
            meta,
            rec_len,
            raw: Vec::new(),
            z,
            offset: HEADER_LEN as u64,
            block_start: 0,
            block_len: 0,
            pos: 0,
            ticks: 0,
            max_ticks,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// How the records are stored: compressed or not, and their bytes on disk.
    pub fn storage(&self) -> Storage {
        let h = &self.header;
        let headers = super::nr_blocks(h.nr_records) * if h.compressed { BLOCK_HEADER_LEN_V2 } else { BLOCK_HEADER_LEN } as u64;
        Storage {
            compressed: h.compressed,
            record_bytes: h.nr_records * self.rec_len as u64,
            block_bytes: h.table_offset - HEADER_LEN as u64 - headers,
            file_bytes: h.table_offset + h.table_len as u64,
        }
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error::new(Some(self.path.clone()), kind)
    }

    /// Load the block following the current one and verify it.
    fn load_block(&mut self) -> Result<()> {
        let start = self.block_start + self.block_len as u64;
        let expect = (self.header.nr_records - start).min(BLOCK_RECORDS as u64) as usize;
        if self.z.is_some() {
            self.load_block_v2(start, expect)?;
        } else {
            self.load_block_v1(start, expect)?;
        }
        self.block_start = start;
        self.block_len = expect;
        self.pos = 0;
        Ok(())
    }

    fn load_block_v1(&mut self, start: u64, expect: usize) -> Result<()> {
        let want = BLOCK_HEADER_LEN + expect * self.rec_len;
        self.raw.resize(want, 0);
        let got = read_full(&mut self.file, &mut self.raw).map_err(|e| Error::new(Some(self.path.clone()), ErrorKind::Io(e)))?;
        if got < want {
            let record = start + (got.saturating_sub(BLOCK_HEADER_LEN) / self.rec_len) as u64;
            return Err(self.err(ErrorKind::Truncated { record }));
        }
        let count = u32::from_le_bytes(self.raw[0..4].try_into().unwrap()) as usize;
        if count != expect {
            return Err(self.err(ErrorKind::Corrupt { record: start, what: format!("block header says {count} records, the layout requires {expect}") }));
        }
        let sum = u64::from_le_bytes(self.raw[4..12].try_into().unwrap());
        if checksum(&self.raw[BLOCK_HEADER_LEN..]) != sum {
            return Err(damaged(&self.path, start, expect, "block checksum mismatch"));
        }
        Ok(())
    }

    /// Version 2: read the block header and the stored bytes at `self.offset`, check the
    /// checksum of the stored bytes, and leave the block's records in `raw`.
    fn load_block_v2(&mut self, start: u64, expect: usize) -> Result<()> {
        let io = |e| Error::new(Some(self.path.clone()), ErrorKind::Io(e));
        let raw_len = expect * self.rec_len;
        let mut bh = [0u8; BLOCK_HEADER_LEN_V2];
        let truncated = |p: &Path| Error::new(Some(p.into()), ErrorKind::Truncated { record: start });
        if read_full(&mut self.file, &mut bh).map_err(io)? < bh.len() {
            return Err(truncated(&self.path));
        }
        let count = u32::from_le_bytes(bh[0..4].try_into().unwrap()) as usize;
        let stored_len = u32::from_le_bytes(bh[4..8].try_into().unwrap()) as usize;
        let sum = u64::from_le_bytes(bh[8..16].try_into().unwrap());
        if count != expect {
            return Err(Error::new(
                Some(self.path.clone()),
                ErrorKind::Corrupt { record: start, what: format!("block header says {count} records, the layout requires {expect}") },
            ));
        }
        let end = self.offset + (BLOCK_HEADER_LEN_V2 + stored_len) as u64;
        let last = start + expect as u64 == self.header.nr_records;
        if stored_len > raw_len {
            let why = format!("block stores {stored_len} bytes, more than its {raw_len} bytes of records");
            return Err(damaged(&self.path, start, expect, &why));
        }
        if end > self.header.table_offset || (last && end != self.header.table_offset) {
            let why = format!("block ends at byte {end}, but the blocks end at byte {}", self.header.table_offset);
            return Err(damaged(&self.path, start, expect, &why));
        }
        let z = self.z.as_mut().expect("version 2");
        // A block stored at full length holds its records as they are.
        let stored = if stored_len == raw_len { &mut self.raw } else { &mut z.stored };
        stored.resize(stored_len, 0);
        if read_full(&mut self.file, stored).map_err(io)? < stored_len {
            return Err(truncated(&self.path));
        }
        if checksum(stored) != sum {
            return Err(damaged(&self.path, start, expect, "block checksum mismatch"));
        }
        self.offset = end;
        if stored_len == raw_len {
            return Ok(());
        }
        z.shuffled.resize(raw_len, 0);
        z.inflater.reset(true);
        let status = z.inflater.decompress(&z.stored, &mut z.shuffled, FlushDecompress::Finish);
        let (used, made) = (z.inflater.total_in(), z.inflater.total_out());
        let why = match status {
            Err(e) => Some(format!("compressed block does not inflate ({e})")),
            Ok(Status::StreamEnd) if made != raw_len as u64 => Some(format!("compressed block inflates to {made} bytes, not {raw_len}")),
            Ok(Status::StreamEnd) if used != stored_len as u64 => Some(format!("{} stray bytes after the compressed block", stored_len as u64 - used)),
            Ok(Status::StreamEnd) => None,
            Ok(_) => Some(format!("compressed block inflates to more than {raw_len} bytes, or ends early")),
        };
        if let Some(why) = why {
            return Err(damaged(&self.path, start, expect, &why));
        }
        self.raw.resize(raw_len, 0);
        if self.rec_len == RECORD_LEN_TIMED {
            unshuffle::<RECORD_LEN_TIMED>(&z.shuffled, &mut self.raw);
        } else {
            unshuffle::<RECORD_LEN>(&z.shuffled, &mut self.raw);
        }
        Ok(())
    }

    /// Decode records `pos..pos+n` of the current block into `buf`.
    fn decode(&mut self, buf: &mut Vec<Access>, n: usize) -> Result<()> {
        let base = buf.len();
        let from = self.rec_base + self.pos * self.rec_len;
        let bytes = &self.raw[from..from + n * self.rec_len];
        let ok = if self.rec_len == RECORD_LEN_TIMED {
            decode_into::<RECORD_LEN_TIMED>(bytes, buf, self.header.nr_pages, self.header.nr_cgroups)
        } else {
            decode_into::<RECORD_LEN>(bytes, buf, self.header.nr_pages, self.header.nr_cgroups)
        };
        if ok && self.rec_len == RECORD_LEN_TIMED {
            // The trace's clock: the batch's gaps (under 2^48 for 65536 of them) added to
            // the ticks so far, within MAX_DURATION_PS.
            let sum: u64 = buf[base..].iter().map(|a| a.gap as u64).sum();
            if self.ticks + sum > self.max_ticks {
                return Err(self.too_long(buf, base));
            }
            self.ticks += sum;
        }
        if !ok {
            let (i, what) = buf[base..]
                .iter()
                .zip(bytes.chunks_exact(self.rec_len))
                .enumerate()
                .find_map(|(i, (a, c))| self.field_error(a, c[5]).map(|w| (i, w)))
                .expect("a bad record exists");
            buf.truncate(base);
            let record = self.block_start + (self.pos + i) as u64;
            return Err(self.err(ErrorKind::Corrupt { record, what }));
        }
        self.pos += n;
        Ok(())
    }

    /// The record of `buf[base..]` whose gap takes the clock past MAX_DURATION_PS.
    #[cold]
    fn too_long(&self, buf: &mut Vec<Access>, base: usize) -> Error {
        let mut t = self.ticks;
        let i = buf[base..]
            .iter()
            .position(|a| {
                t += a.gap as u64;
                t > self.max_ticks
            })
            .expect("the batch passes the limit");
        buf.truncate(base);
        let record = self.block_start + (self.pos + i) as u64;
        self.err(ErrorKind::Corrupt {
            record,
            what: format!("the trace's clock passes {} ps (2^62, about 53 days) here: {t} ticks of {} ps", super::MAX_DURATION_PS, self.header.tick_ps),
        })
    }

    fn field_error(&self, a: &Access, reserved: u8) -> Option<String> {
        if a.page >= self.header.nr_pages {
            Some(format!("page {} >= nr_pages {}", a.page, self.header.nr_pages))
        } else if a.cgroup >= self.header.nr_cgroups {
            Some(format!("cgroup {} >= nr_cgroups {}", a.cgroup, self.header.nr_cgroups))
        } else if a.flags & !flags::VALID != 0 {
            Some(format!("invalid flags {:#x}", a.flags))
        } else if reserved != 0 {
            Some(format!("reserved byte is {reserved:#x}, must be 0"))
        } else {
            None
        }
    }
}

/// A damaged block: records `start..start + expect` named, `why` first.
#[cold]
fn damaged(path: &Path, start: u64, expect: usize, why: &str) -> Error {
    Error::new(Some(path.into()), ErrorKind::Corrupt { record: start, what: format!("{why}: records {}..{} are damaged", start, start + expect as u64) })
}

/// Version 2: how many records lie in blocks wholly inside the first `file_len` bytes,
/// found by walking the block headers (a truncated file's stored lengths are all there is).
fn complete_blocks(file: &mut File, file_len: u64, header: &Header) -> std::io::Result<u64> {
    let (mut off, mut records) = (HEADER_LEN as u64, 0u64);
    let mut bh = [0u8; BLOCK_HEADER_LEN_V2];
    while records < header.nr_records && off + BLOCK_HEADER_LEN_V2 as u64 <= file_len {
        file.seek(SeekFrom::Start(off))?;
        if read_full(file, &mut bh)? < bh.len() {
            break;
        }
        let stored = u32::from_le_bytes(bh[4..8].try_into().unwrap()) as u64;
        off += BLOCK_HEADER_LEN_V2 as u64 + stored;
        if off > file_len {
            break;
        }
        records += (header.nr_records - records).min(BLOCK_RECORDS as u64);
    }
    Ok(records)
}

/// Append the records in `bytes` (a multiple of `RL`) to `buf`; false if any record has
/// an invalid field (the records are appended anyway; the caller truncates).
#[inline(always)]
fn decode_into<const RL: usize>(bytes: &[u8], buf: &mut Vec<Access>, nr_pages: u32, nr_cgroups: u16) -> bool {
    let mut bad = 0u32;
    buf.extend(bytes.chunks_exact(RL).map(|c| {
        let page = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let fl = c[4];
        let reserved = c[5];
        let cgroup = u16::from_le_bytes([c[6], c[7]]);
        let gap = if RL == RECORD_LEN_TIMED { u32::from_le_bytes([c[8], c[9], c[10], c[11]]) } else { 0 };
        bad |= (page >= nr_pages) as u32 | (cgroup >= nr_cgroups) as u32 | (fl & !flags::VALID) as u32 | reserved as u32;
        Access { page, cgroup, flags: fl, gap }
    }));
    bad == 0
}

/// [`decode_into`] for [`NativeReader::all_keys`]: write the page ids of the records in
/// `bytes` to `out` (one slot per record), with the same validation; also returns the
/// records' gap ticks (0 without time). False if any record has an invalid field.
#[inline(always)]
fn pages_into<const RL: usize>(bytes: &[u8], out: &mut [std::mem::MaybeUninit<u32>], nr_pages: u32, nr_cgroups: u16) -> (bool, u64) {
    let mut bad = 0u32;
    let mut ticks = 0u64;
    for (c, slot) in bytes.chunks_exact(RL).zip(out.iter_mut()) {
        let page = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let cgroup = u16::from_le_bytes([c[6], c[7]]);
        if RL == RECORD_LEN_TIMED {
            ticks += u32::from_le_bytes([c[8], c[9], c[10], c[11]]) as u64;
        }
        bad |= (page >= nr_pages) as u32 | (cgroup >= nr_cgroups) as u32 | (c[4] & !flags::VALID) as u32 | c[5] as u32;
        slot.write(page);
    }
    (bad == 0, ticks)
}

impl NativeReader {
    /// [`AccessSource::read_all_keys`] of a reader that has read nothing yet: every block
    /// loaded and checked as [`AccessSource::read_batch`] does, its page ids written
    /// straight into the result (no [`Access`] records in between). A bad record or a
    /// clock past the limit is the error `read_batch` gives.
    fn all_keys(&mut self) -> Result<(Vec<u32>, u32)> {
        let total = self.header.nr_records;
        let n = usize::try_from(total).unwrap_or(usize::MAX).min(u32::MAX as usize * 4);
        let mut keys: Vec<u32> = Vec::new();
        crate::mem::reserve(&mut keys, n, &|| format!("the trace's {n} requests' page ids")).map_err(|e| self.err(ErrorKind::InvalidArgument(e)))?;
        crate::mem::huge_pages(&mut keys);
        let (nr_pages, nr_cgroups) = (self.header.nr_pages, self.header.nr_cgroups);
        while self.block_start + (self.block_len as u64) < total {
            self.load_block()?;
            let len = self.block_len;
            if keys.capacity() - keys.len() < len {
                return Err(self.err(ErrorKind::InvalidArgument(format!("the trace's {total} requests' page ids: more than {n} fit"))));
            }
            let bytes = &self.raw[self.rec_base..self.rec_base + len * self.rec_len];
            let out = &mut keys.spare_capacity_mut()[..len];
            let (ok, ticks) = if self.rec_len == RECORD_LEN_TIMED {
                pages_into::<RECORD_LEN_TIMED>(bytes, out, nr_pages, nr_cgroups)
            } else {
                pages_into::<RECORD_LEN>(bytes, out, nr_pages, nr_cgroups)
            };
            if !ok || self.ticks + ticks > self.max_ticks {
                // The error read_batch gives for this block.
                let mut buf = Vec::with_capacity(len);
                return Err(self.decode(&mut buf, len).expect_err("the block has a bad record"));
            }
            // SAFETY: pages_into wrote the `len` slots after the current length.
            unsafe { keys.set_len(keys.len() + len) };
            self.ticks += ticks;
            self.pos = len;
        }
        Ok((keys, nr_pages))
    }
}

impl AccessSource for NativeReader {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_all_keys(&mut self) -> Option<Result<(Vec<u32>, u32)>> {
        if self.block_start != 0 || self.block_len != 0 || self.pos != 0 {
            return None;
        }
        Some(self.all_keys())
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        while buf.len() < max {
            if self.pos == self.block_len {
                if self.block_start + self.block_len as u64 >= self.header.nr_records {
                    break;
                }
                self.load_block()?;
            }
            let n = (max - buf.len()).min(self.block_len - self.pos);
            buf.reserve(n);
            self.decode(buf, n)?;
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.header.nr_pages
    }

    fn position(&self) -> Option<u64> {
        Some(self.block_start + self.pos as u64)
    }

    fn progress(&self) -> Option<f64> {
        let done = self.block_start + self.pos as u64;
        Some(if self.header.nr_records == 0 { 1.0 } else { done as f64 / self.header.nr_records as f64 })
    }
}
