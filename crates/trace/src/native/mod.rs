//! The native binary trace format (`RCLTRACE` v1, and v2 with compressed blocks): layout
//! constants, the header, the block checksum and the byte shuffle of compressed blocks.
//! Reading and writing live in [`reader`] and [`writer`]; the byte-level specification is
//! `crates/trace/FORMAT.md`.
//!
//! Layout in one line: a 64-byte header, then `ceil(nr_records / 65536)` blocks of
//! records (every block full except the last), then a trailer holding the cgroup name
//! table. Everything is little-endian. In version 1 (uncompressed) the layout is fully
//! determined by the header, so a reader can tell a truncated file (and the record at
//! which it ends) from its length before reading any record. In version 2 each block
//! header also gives the block's stored length, and a block is stored either as its
//! records or as a zlib stream of its records with their bytes shuffled ([`shuffle`]).

pub mod reader;
pub mod writer;

pub use reader::{NativeReader, Storage};
pub use writer::NativeWriter;

/// File magic, the first 8 bytes.
pub const MAGIC: [u8; 8] = *b"RCLTRACE";
/// Version of files whose blocks are stored uncompressed (the fixed v1 layout).
pub const VERSION: u16 = 1;
/// Version of files written with compression: every block header carries the block's
/// stored length, and a block may hold a zlib stream instead of its records.
pub const VERSION_COMPRESSED: u16 = 2;
/// Size of the fixed header in bytes.
pub const HEADER_LEN: usize = 64;
/// Header flag: records carry a `gap` (12-byte records instead of 8).
pub const FLAG_HAS_TIME: u32 = 1 << 0;
/// Header flag: the trailer continues after the cgroup entries with a file table
/// ([`crate::FileRange`]s: which page ids are which file's pages, in offset order).
pub const FLAG_HAS_FILES: u32 = 1 << 1;
/// Header flag: the trailer continues (after the file table, if any) with an op table
/// ([`crate::TraceOp`]s: cgroup interface writes between records, e.g. `memory.reclaim`).
pub const FLAG_HAS_OPS: u32 = 1 << 2;
/// Every header flag this build knows.
pub const KNOWN_FLAGS: u32 = FLAG_HAS_TIME | FLAG_HAS_FILES | FLAG_HAS_OPS;
/// Bytes per op table entry: `u64 at`, `u16 cgroup`, `u8 kind`, `u8 arg`, 8 bytes of
/// operands (`memory.reclaim`: `arg` swappiness, `u64 bytes`; `madvise`: `arg` advice,
/// `u32 first`, `u32 nr_pages`).
pub const OP_LEN: usize = 20;
/// Op table `kind` byte of a `memory.reclaim` write.
pub const OP_MEMORY_RECLAIM: u8 = 1;
/// Op table `kind` byte of a `madvise()`.
pub const OP_MADVISE: u8 = 2;
/// Op table `swappiness` byte of a `memory.reclaim` write without `swappiness=`.
pub const OP_NO_SWAPPINESS: u8 = 0xFF;
/// Records per block; every block holds exactly this many except the last.
pub const BLOCK_RECORDS: usize = 65536;
/// Bytes before each block's payload: `u32 nr_records_in_block` + `u64 checksum`.
pub const BLOCK_HEADER_LEN: usize = 12;
/// Bytes before each block's payload in version 2: `u32 nr_records_in_block`,
/// `u32 stored_len`, `u64 checksum` (of the stored bytes).
pub const BLOCK_HEADER_LEN_V2: usize = 16;
/// zlib level of compressed blocks. With the zlib-rs backend, on `reclaimlab record`s of
/// sort: level 1 1.5 bytes a record, level 2 1.0–1.2 at two thirds of level 1's write
/// speed and the same inflate speed, level 6 1.0 at a third of level 2's write speed.
pub const COMPRESS_LEVEL: u32 = 2;
/// Record size without / with time.
pub const RECORD_LEN: usize = 8;
pub const RECORD_LEN_TIMED: usize = 12;
/// The largest `tick_ps` a reader accepts: one second per tick (the coarsest clock any
/// trace family has; record's is 1 ns, address's 333 ps). With it, a gap's picoseconds
/// (`gap · tick_ps`, gap < 2^32) always fit in 64 bits.
pub const MAX_TICK_PS: u64 = 1_000_000_000_000;
/// The longest trace a reader accepts: 2^62 ps (about 53 days of simulated time), so
/// that the replay's clock in nanoseconds, and its picoseconds, never overflow.
pub const MAX_DURATION_PS: u64 = 1 << 62;

/// The decoded fixed header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Version 2 ([`VERSION_COMPRESSED`]): blocks carry their stored length and may be
    /// compressed; the block area's length is `table_offset - 64`, known only from the header.
    pub compressed: bool,
    pub flags: u32,
    pub nr_records: u64,
    pub nr_pages: u32,
    pub nr_cgroups: u16,
    pub tick_ps: u64,
    /// Byte offset of the cgroup table (= end of the last block).
    pub table_offset: u64,
    /// Byte length of the cgroup table.
    pub table_len: u32,
    /// [`checksum`] of the cgroup table bytes.
    pub table_checksum: u64,
}

impl Header {
    pub fn has_time(&self) -> bool {
        self.flags & FLAG_HAS_TIME != 0
    }

    pub fn record_len(&self) -> usize {
        record_len(self.has_time())
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        let version = if self.compressed { VERSION_COMPRESSED } else { VERSION };
        h[8..10].copy_from_slice(&version.to_le_bytes());
        h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        h[12..16].copy_from_slice(&self.flags.to_le_bytes());
        h[16..24].copy_from_slice(&self.nr_records.to_le_bytes());
        h[24..28].copy_from_slice(&self.nr_pages.to_le_bytes());
        h[28..30].copy_from_slice(&self.nr_cgroups.to_le_bytes());
        // 30..32 reserved (0)
        h[32..40].copy_from_slice(&self.tick_ps.to_le_bytes());
        h[40..48].copy_from_slice(&self.table_offset.to_le_bytes());
        h[48..52].copy_from_slice(&self.table_len.to_le_bytes());
        // 52..56 reserved (0)
        h[56..64].copy_from_slice(&self.table_checksum.to_le_bytes());
        h
    }

    /// Decode and check everything that can be checked without the file length.
    /// Errors are human-readable `BadHeader` reasons.
    pub fn decode(h: &[u8; HEADER_LEN]) -> Result<Header, String> {
        if h[0..8] != MAGIC {
            return Err("bad magic (not an RCLTRACE file)".into());
        }
        let u16_at = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().unwrap());
        let version = u16_at(8);
        if version != VERSION && version != VERSION_COMPRESSED {
            return Err(format!("unsupported version {version} (this build reads versions {VERSION} and {VERSION_COMPRESSED})"));
        }
        let header_len = u16_at(10);
        if header_len as usize != HEADER_LEN {
            return Err(format!("header_len is {header_len}, expected {HEADER_LEN}"));
        }
        let hdr = Header {
            compressed: version == VERSION_COMPRESSED,
            flags: u32_at(12),
            nr_records: u64_at(16),
            nr_pages: u32_at(24),
            nr_cgroups: u16_at(28),
            tick_ps: u64_at(32),
            table_offset: u64_at(40),
            table_len: u32_at(48),
            table_checksum: u64_at(56),
        };
        if hdr.flags & !KNOWN_FLAGS != 0 {
            return Err(format!("unknown header flags {:#x}", hdr.flags));
        }
        if u16_at(30) != 0 || u32_at(52) != 0 {
            return Err("reserved header bytes are not zero".into());
        }
        if hdr.has_time() != (hdr.tick_ps != 0) {
            return Err(format!("HAS_TIME flag is {} but tick_ps is {}", hdr.has_time(), hdr.tick_ps));
        }
        if hdr.tick_ps > MAX_TICK_PS {
            return Err(format!("tick_ps is {}, over the limit of {MAX_TICK_PS} ps (one second per tick)", hdr.tick_ps));
        }
        if hdr.nr_cgroups == 0 {
            return Err("nr_cgroups is 0 (the root cgroup must be present)".into());
        }
        if hdr.compressed {
            // Each block stores between 0 bytes and its records' bytes after its header.
            let lo = nr_blocks(hdr.nr_records).checked_mul(BLOCK_HEADER_LEN_V2 as u64).and_then(|b| b.checked_add(HEADER_LEN as u64));
            let hi = lo.and_then(|lo| lo.checked_add(hdr.nr_records.checked_mul(hdr.record_len() as u64)?));
            match (lo, hi) {
                (Some(lo), Some(hi)) if (lo..=hi).contains(&hdr.table_offset) => {}
                (Some(lo), Some(hi)) => {
                    return Err(format!("cgroup table offset is {}, but {} records' compressed blocks end between bytes {lo} and {hi}", hdr.table_offset, hdr.nr_records))
                }
                _ => return Err(format!("nr_records {} is impossibly large", hdr.nr_records)),
            }
            return Ok(hdr);
        }
        match data_end(hdr.nr_records, hdr.record_len()) {
            Some(end) if end == hdr.table_offset => {}
            Some(end) => return Err(format!("cgroup table offset is {}, but {} records end at byte {end}", hdr.table_offset, hdr.nr_records)),
            None => return Err(format!("nr_records {} is impossibly large", hdr.nr_records)),
        }
        Ok(hdr)
    }
}

pub fn record_len(has_time: bool) -> usize {
    if has_time {
        RECORD_LEN_TIMED
    } else {
        RECORD_LEN
    }
}

/// Number of blocks holding `nr_records` records.
pub fn nr_blocks(nr_records: u64) -> u64 {
    nr_records.div_ceil(BLOCK_RECORDS as u64)
}

/// Byte offset where the block area ends (header + all blocks), or None on overflow.
pub fn data_end(nr_records: u64, record_len: usize) -> Option<u64> {
    let payload = nr_records.checked_mul(record_len as u64)?;
    let headers = nr_blocks(nr_records).checked_mul(BLOCK_HEADER_LEN as u64)?;
    payload.checked_add(headers)?.checked_add(HEADER_LEN as u64)
}

/// How many records lie completely inside the first `file_len` bytes of a version-1 file with
/// this layout (used to name the record at which a truncated file ends).
pub fn complete_records(file_len: u64, nr_records: u64, record_len: usize) -> u64 {
    let Some(avail) = file_len.checked_sub(HEADER_LEN as u64) else {
        return 0;
    };
    let block_bytes = (BLOCK_HEADER_LEN + BLOCK_RECORDS * record_len) as u64;
    let full = avail / block_bytes;
    let rem = avail % block_bytes;
    let n = full * BLOCK_RECORDS as u64 + rem.saturating_sub(BLOCK_HEADER_LEN as u64) / record_len as u64;
    n.min(nr_records)
}

/// Byte-shuffle `src`, records of `RL` bytes, into `dst` (same length): byte `j` of
/// record `i` goes to `dst[j·n + i]`, `n` records. Each byte column of a real trace (high
/// page bytes, flags, cgroup, gap bytes) is far more regular than the interleaved
/// records, so zlib compresses the shuffled block about 1.5 times smaller.
pub fn shuffle<const RL: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / RL;
    debug_assert_eq!(dst.len(), n * RL);
    for (j, col) in dst.chunks_exact_mut(n.max(1)).enumerate().take(RL) {
        for (d, r) in col.iter_mut().zip(src.chunks_exact(RL)) {
            *d = r[j];
        }
    }
}

/// The inverse of [`shuffle`]: rebuild the records in `dst` from the columns in `src`.
pub fn unshuffle<const RL: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / RL;
    debug_assert_eq!(dst.len(), n * RL);
    let cols: [&[u8]; RL] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    for (i, r) in dst.chunks_exact_mut(RL).enumerate() {
        for j in 0..RL {
            r[j] = cols[j][i];
        }
    }
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(K).rotate_left(31)
}

/// The block/table checksum (see FORMAT.md, "Checksum").
///
/// The bytes are read as little-endian u64 words, the last one zero-padded. Word `i` goes
/// to lane `i % 4`; each lane `j` starts at `SEED + j` (`SEED` = the magic as a LE u64)
/// and absorbs words with `h = rotl((h ^ w) * K, 31)`, `K = 0x9E3779B97F4A7C15`. The
/// result is `mix(mix(mix(mix(mix(SEED, l0), l1), l2), l3), byte_len)`. Four independent
/// lanes keep the multiply latency off the critical path (≈ 1 cycle per 8 bytes).
pub fn checksum(bytes: &[u8]) -> u64 {
    let seed = u64::from_le_bytes(MAGIC);
    let mut l = [seed, seed.wrapping_add(1), seed.wrapping_add(2), seed.wrapping_add(3)];
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (j, lane) in l.iter_mut().enumerate() {
            let w = u64::from_le_bytes(c[j * 8..j * 8 + 8].try_into().unwrap());
            *lane = mix(*lane, w);
        }
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut tail = [0u8; 32];
        tail[..rem.len()].copy_from_slice(rem);
        let words = rem.len().div_ceil(8);
        for (j, lane) in l.iter_mut().enumerate().take(words) {
            let w = u64::from_le_bytes(tail[j * 8..j * 8 + 8].try_into().unwrap());
            *lane = mix(*lane, w);
        }
    }
    let mut h = seed;
    for lane in l {
        h = mix(h, lane);
    }
    mix(h, bytes.len() as u64)
}

/// Encode the cgroup name table: per cgroup `u16 len` + UTF-8 bytes.
pub fn encode_table(names: &[String]) -> Vec<u8> {
    let mut t = Vec::new();
    for n in names {
        t.extend_from_slice(&(n.len() as u16).to_le_bytes());
        t.extend_from_slice(n.as_bytes());
    }
    t
}

/// Encode the file table: `u32 nr_files`, then per file `u32 first`, `u32 nr_pages`,
/// `u8 advice`, `u16 len` + UTF-8 name.
pub fn encode_files(files: &[crate::FileRange]) -> Vec<u8> {
    let mut t = (files.len() as u32).to_le_bytes().to_vec();
    for f in files {
        t.extend_from_slice(&f.first.to_le_bytes());
        t.extend_from_slice(&f.nr_pages.to_le_bytes());
        t.push(f.advice);
        t.extend_from_slice(&(f.name.len() as u16).to_le_bytes());
        t.extend_from_slice(f.name.as_bytes());
    }
    t
}

/// Encode the op table: `u32 nr_ops`, then per op `u64 at`, `u16 cgroup`, `u8 kind`,
/// `u8 swappiness` (0xFF: none), `u64 bytes`.
pub fn encode_ops(ops: &[crate::TraceOp]) -> Vec<u8> {
    let mut t = (ops.len() as u32).to_le_bytes().to_vec();
    for op in ops {
        t.extend_from_slice(&op.at.to_le_bytes());
        t.extend_from_slice(&op.cgroup.to_le_bytes());
        match op.kind {
            crate::OpKind::MemoryReclaim { bytes, swappiness } => {
                t.push(OP_MEMORY_RECLAIM);
                t.push(swappiness.unwrap_or(OP_NO_SWAPPINESS));
                t.extend_from_slice(&bytes.to_le_bytes());
            }
            crate::OpKind::Madvise { first, nr_pages, advice } => {
                t.push(OP_MADVISE);
                t.push(advice);
                t.extend_from_slice(&first.to_le_bytes());
                t.extend_from_slice(&nr_pages.to_le_bytes());
            }
        }
    }
    t
}

/// The trailer's parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trailer {
    pub cgroups: Vec<String>,
    pub files: Vec<crate::FileRange>,
    pub ops: Vec<crate::TraceOp>,
}

/// Decode the trailer of a trace of `nr_records` records: the header's `nr_cgroups`
/// cgroup entries, then the file table (`FLAG_HAS_FILES`), then the op table
/// (`FLAG_HAS_OPS`), together spanning all of `t`.
pub fn decode_trailer(t: &[u8], hdr: &Header) -> Result<Trailer, String> {
    let (cgroups, mut end) = decode_cgroup_entries(t, hdr.nr_cgroups)?;
    let files = if hdr.flags & FLAG_HAS_FILES != 0 {
        let (files, len) = decode_files(&t[end..])?;
        end += len;
        files
    } else {
        Vec::new()
    };
    let ops = if hdr.flags & FLAG_HAS_OPS != 0 {
        let (ops, len) = decode_ops(&t[end..], hdr.nr_records, cgroups.len())?;
        end += len;
        ops
    } else {
        Vec::new()
    };
    if end != t.len() {
        return Err(format!("{} stray bytes after the trailer's tables", t.len() - end));
    }
    Ok(Trailer { cgroups, files, ops })
}

/// Decode an op table from the start of `t`; returns it and the bytes it spans.
fn decode_ops(t: &[u8], nr_records: u64, nr_cgroups: usize) -> Result<(Vec<crate::TraceOp>, usize), String> {
    let nr = t.get(0..4).ok_or("op table ends inside its count")?;
    let nr = u32::from_le_bytes(nr.try_into().unwrap()) as usize;
    let len = nr.checked_mul(OP_LEN).and_then(|n| n.checked_add(4)).ok_or("op count is impossibly large")?;
    let body = t.get(4..len).ok_or_else(|| format!("op table ends inside its {nr} entries"))?;
    let mut ops = Vec::with_capacity(nr);
    for (i, e) in body.chunks_exact(OP_LEN).enumerate() {
        let at = u64::from_le_bytes(e[0..8].try_into().unwrap());
        let cgroup = u16::from_le_bytes([e[8], e[9]]);
        let (kind, arg) = (e[10], e[11]);
        match kind {
            OP_MEMORY_RECLAIM => {
                let bytes = u64::from_le_bytes(e[12..20].try_into().unwrap());
                let swappiness = (arg != OP_NO_SWAPPINESS).then_some(arg);
                ops.push(crate::TraceOp::memory_reclaim(at, cgroup, bytes, swappiness));
            }
            OP_MADVISE => {
                let first = u32::from_le_bytes(e[12..16].try_into().unwrap());
                let nr_pages = u32::from_le_bytes(e[16..20].try_into().unwrap());
                ops.push(crate::TraceOp::madvise(at, cgroup, first, nr_pages, arg));
            }
            _ => return Err(format!("op {i} has unknown kind {kind}")),
        }
    }
    crate::check_ops(&ops, nr_records, nr_cgroups).map_err(|e| format!("op table: {e}"))?;
    Ok((ops, len))
}

/// Decode a file table from the start of `f`; returns it and the bytes it spans.
fn decode_files(f: &[u8]) -> Result<(Vec<crate::FileRange>, usize), String> {
    let take = |p: usize, n: usize, what: &str| -> Result<&[u8], String> { f.get(p..p + n).ok_or_else(|| format!("file table ends inside {what}")) };
    let nr = u32::from_le_bytes(take(0, 4, "its count")?.try_into().unwrap()) as usize;
    let mut files = Vec::with_capacity(nr.min(1 << 16));
    let mut p = 4;
    for i in 0..nr {
        let fixed = take(p, 11, &format!("entry {i}"))?;
        let first = u32::from_le_bytes(fixed[0..4].try_into().unwrap());
        let nr_pages = u32::from_le_bytes(fixed[4..8].try_into().unwrap());
        let advice = fixed[8];
        let len = u16::from_le_bytes(fixed[9..11].try_into().unwrap()) as usize;
        let name = std::str::from_utf8(take(p + 11, len, &format!("name {i}"))?).map_err(|_| format!("file name {i} is not UTF-8"))?;
        files.push(crate::FileRange { name: name.into(), first, nr_pages, advice });
        p += 11 + len;
    }
    crate::check_files(&files).map_err(|e| format!("file table: {e}"))?;
    Ok((files, p))
}

/// Decode a cgroup table of exactly `count` entries spanning all of `t`.
pub fn decode_table(t: &[u8], count: u16) -> Result<Vec<String>, String> {
    let (names, end) = decode_cgroup_entries(t, count)?;
    check_table_end(t, end)?;
    Ok(names)
}

/// The cgroup entries must span the whole table.
fn check_table_end(t: &[u8], end: usize) -> Result<(), String> {
    if end != t.len() {
        return Err(format!("{} stray bytes after the cgroup table entries", t.len() - end));
    }
    Ok(())
}

/// Decode `count` cgroup entries from the start of `t`; returns them and the bytes they span.
fn decode_cgroup_entries(t: &[u8], count: u16) -> Result<(Vec<String>, usize), String> {
    let mut names = Vec::with_capacity(count as usize);
    let mut p = 0usize;
    for i in 0..count {
        if p + 2 > t.len() {
            return Err(format!("cgroup table ends inside entry {i}"));
        }
        let len = u16::from_le_bytes([t[p], t[p + 1]]) as usize;
        p += 2;
        if p + len > t.len() {
            return Err(format!("cgroup table ends inside name {i}"));
        }
        let name = std::str::from_utf8(&t[p..p + len]).map_err(|_| format!("cgroup name {i} is not UTF-8"))?;
        p += len;
        if i == 0 && !name.is_empty() {
            return Err(format!("cgroup 0 must be the root \"\", found {name:?}"));
        }
        if names.iter().any(|n: &String| n == name) {
            return Err(format!("cgroup name {name:?} appears twice"));
        }
        names.push(name.to_string());
    }
    Ok((names, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_depends_on_every_byte_and_length() {
        let a = vec![0u8; 100];
        let base = checksum(&a);
        for i in 0..100 {
            let mut b = a.clone();
            b[i] ^= 1;
            assert_ne!(checksum(&b), base, "byte {i}");
        }
        assert_ne!(checksum(&a[..99]), base);
        assert_ne!(checksum(&[]), checksum(&[0u8]));
    }

    #[test]
    fn shuffle_round_trips_and_groups_columns() {
        let recs: Vec<u8> = (0..12 * 5).map(|i| i as u8).collect();
        let mut sh = vec![0u8; recs.len()];
        shuffle::<12>(&recs, &mut sh);
        // Column 1 holds byte 1 of records 0..5.
        assert_eq!(&sh[5..10], &[1, 13, 25, 37, 49]);
        let mut back = vec![0u8; recs.len()];
        unshuffle::<12>(&sh, &mut back);
        assert_eq!(back, recs);
        let mut e: [u8; 0] = [];
        shuffle::<8>(&[], &mut e);
        unshuffle::<8>(&[], &mut e);
    }

    #[test]
    fn version_2_header_checks_the_block_area_bounds() {
        let mut h =
            Header { compressed: true, flags: 0, nr_records: 70_000, nr_pages: 1, nr_cgroups: 1, tick_ps: 0, table_offset: 64 + 2 * 16 + 100, table_len: 2, table_checksum: 0 };
        assert_eq!(Header::decode(&h.encode()).unwrap(), h);
        h.table_offset = 64 + 2 * 16 - 1;
        assert!(Header::decode(&h.encode()).unwrap_err().contains("compressed blocks end between"));
        h.table_offset = 64 + 2 * 16 + 70_000 * 8 + 1;
        assert!(Header::decode(&h.encode()).is_err());
        h.table_offset = 64 + 2 * 16 + 70_000 * 8;
        assert!(Header::decode(&h.encode()).is_ok());
        let mut b = h.encode();
        b[8] = 3;
        assert!(Header::decode(&b).unwrap_err().contains("unsupported version 3"));
    }

    #[test]
    fn complete_records_math() {
        let rl = 8;
        let end = data_end(70_000, rl).unwrap();
        assert_eq!(complete_records(end, 70_000, rl), 70_000);
        assert_eq!(complete_records(end - 1, 70_000, rl), 69_999);
        assert_eq!(complete_records(64 + 12, 70_000, rl), 0);
        assert_eq!(complete_records(64 + 12 + 8 * 65536, 70_000, rl), 65536);
        assert_eq!(complete_records(10, 70_000, rl), 0);
    }
}
