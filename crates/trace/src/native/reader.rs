//! [`NativeReader`]: streams a native trace, validating the header, the file length, every
//! block checksum and every record field. Decoding is a single pass of `from_le_bytes`
//! over each block with branch-free validation (no per-record allocation).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{
    checksum, complete_records, decode_trailer, Header, BLOCK_HEADER_LEN, BLOCK_RECORDS, HEADER_LEN,
    MAGIC, RECORD_LEN, RECORD_LEN_TIMED,
};
use crate::{flags, Access, AccessSource, Error, ErrorKind, Result, TraceMeta};

/// Streaming reader of a native trace file.
pub struct NativeReader {
    path: PathBuf,
    file: File,
    header: Header,
    meta: TraceMeta,
    rec_len: usize,
    /// Current block: 12-byte block header followed by the payload.
    raw: Vec<u8>,
    /// Record index of the first record of the current block.
    block_start: u64,
    /// Records in the current block.
    block_len: usize,
    /// Next record to decode within the current block.
    pos: usize,
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
                err(ErrorKind::BadHeader(format!(
                    "{got} bytes, too short for a native trace header"
                )))
            });
        }
        let header = Header::decode(&h).map_err(|s| err(ErrorKind::BadHeader(s)))?;
        let rec_len = header.record_len();
        let table_end = header.table_offset + header.table_len as u64;
        if file_len < header.table_offset {
            let record = complete_records(file_len, header.nr_records, rec_len);
            return Err(err(ErrorKind::Truncated { record }));
        }
        if file_len < table_end {
            return Err(err(ErrorKind::Truncated {
                record: header.nr_records,
            }));
        }
        if file_len > table_end {
            return Err(err(ErrorKind::Corrupt {
                record: header.nr_records,
                what: format!(
                    "{} bytes of trailing garbage after the cgroup table",
                    file_len - table_end
                ),
            }));
        }
        file.seek(SeekFrom::Start(header.table_offset))
            .map_err(io)?;
        let mut table = vec![0u8; header.table_len as usize];
        if read_full(&mut file, &mut table).map_err(io)? < table.len() {
            return Err(err(ErrorKind::Truncated {
                record: header.nr_records,
            }));
        }
        let corrupt_table = |what: String| {
            err(ErrorKind::Corrupt {
                record: header.nr_records,
                what,
            })
        };
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
        Ok(NativeReader {
            path: path.into(),
            file,
            header,
            meta,
            rec_len,
            raw: Vec::new(),
            block_start: 0,
            block_len: 0,
            pos: 0,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error::new(Some(self.path.clone()), kind)
    }

    /// Load the block following the current one and verify it.
    fn load_block(&mut self) -> Result<()> {
        let start = self.block_start + self.block_len as u64;
        let expect = (self.header.nr_records - start).min(BLOCK_RECORDS as u64) as usize;
        let want = BLOCK_HEADER_LEN + expect * self.rec_len;
        self.raw.resize(want, 0);
        let got = read_full(&mut self.file, &mut self.raw)
            .map_err(|e| Error::new(Some(self.path.clone()), ErrorKind::Io(e)))?;
        if got < want {
            let record = start + (got.saturating_sub(BLOCK_HEADER_LEN) / self.rec_len) as u64;
            return Err(self.err(ErrorKind::Truncated { record }));
        }
        let count = u32::from_le_bytes(self.raw[0..4].try_into().unwrap()) as usize;
        if count != expect {
            return Err(self.err(ErrorKind::Corrupt {
                record: start,
                what: format!("block header says {count} records, the layout requires {expect}"),
            }));
        }
        let sum = u64::from_le_bytes(self.raw[4..12].try_into().unwrap());
        if checksum(&self.raw[BLOCK_HEADER_LEN..]) != sum {
            return Err(self.err(ErrorKind::Corrupt {
                record: start,
                what: format!(
                    "block checksum mismatch: records {}..{} are damaged",
                    start,
                    start + expect as u64
                ),
            }));
        }
        self.block_start = start;
        self.block_len = expect;
        self.pos = 0;
        Ok(())
    }

    /// Decode records `pos..pos+n` of the current block into `buf`.
    fn decode(&mut self, buf: &mut Vec<Access>, n: usize) -> Result<()> {
        let base = buf.len();
        let from = BLOCK_HEADER_LEN + self.pos * self.rec_len;
        let bytes = &self.raw[from..from + n * self.rec_len];
        let ok = if self.rec_len == RECORD_LEN_TIMED {
            decode_into::<RECORD_LEN_TIMED>(
                bytes,
                buf,
                self.header.nr_pages,
                self.header.nr_cgroups,
            )
        } else {
            decode_into::<RECORD_LEN>(bytes, buf, self.header.nr_pages, self.header.nr_cgroups)
        };
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

    fn field_error(&self, a: &Access, reserved: u8) -> Option<String> {
        if a.page >= self.header.nr_pages {
            Some(format!(
                "page {} >= nr_pages {}",
                a.page, self.header.nr_pages
            ))
        } else if a.cgroup >= self.header.nr_cgroups {
            Some(format!(
                "cgroup {} >= nr_cgroups {}",
                a.cgroup, self.header.nr_cgroups
            ))
        } else if a.flags & !flags::VALID != 0 {
            Some(format!("invalid flags {:#x}", a.flags))
        } else if reserved != 0 {
            Some(format!("reserved byte is {reserved:#x}, must be 0"))
        } else {
            None
        }
    }
}

/// Append the records in `bytes` (a multiple of `RL`) to `buf`; false if any record has
/// an invalid field (the records are appended anyway; the caller truncates).
#[inline(always)]
fn decode_into<const RL: usize>(
    bytes: &[u8],
    buf: &mut Vec<Access>,
    nr_pages: u32,
    nr_cgroups: u16,
) -> bool {
    let mut bad = 0u32;
    buf.extend(bytes.chunks_exact(RL).map(|c| {
        let page = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let fl = c[4];
        let reserved = c[5];
        let cgroup = u16::from_le_bytes([c[6], c[7]]);
        let gap = if RL == RECORD_LEN_TIMED {
            u32::from_le_bytes([c[8], c[9], c[10], c[11]])
        } else {
            0
        };
        bad |= (page >= nr_pages) as u32
            | (cgroup >= nr_cgroups) as u32
            | (fl & !flags::VALID) as u32
            | reserved as u32;
        Access {
            page,
            cgroup,
            flags: fl,
            gap,
        }
    }));
    bad == 0
}

impl AccessSource for NativeReader {
    fn meta(&self) -> &TraceMeta {
        &self.meta
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
        Some(if self.header.nr_records == 0 {
            1.0
        } else {
            done as f64 / self.header.nr_records as f64
        })
    }
}
