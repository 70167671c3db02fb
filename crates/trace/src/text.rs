//! Shared plumbing of the text readers: open a file (gunzipping `*.gz` transparently with
//! a multi-member decoder), hand out trimmed lines one at a time from a reused buffer with
//! 1-based line numbers, and report progress as compressed bytes consumed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;

use crate::{Error, ErrorKind, Result};

const BUF: usize = 256 << 10;

/// Counts bytes read from the underlying file (shared with the line reader).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// True if the path names a gzip file by extension.
pub fn is_gz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Open `path` as a byte stream, decompressing if it ends in `.gz`. Returns the reader
/// and a counter of file bytes consumed.
pub fn open_stream(path: &Path) -> Result<(Box<dyn BufRead + Send>, Arc<AtomicU64>, u64)> {
    let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let count = Arc::new(AtomicU64::new(0));
    let counted = Counting { inner: file, count: count.clone() };
    let r: Box<dyn BufRead + Send> = if is_gz(path) {
        let gz = MultiGzDecoder::new(BufReader::with_capacity(BUF, counted));
        Box::new(BufReader::with_capacity(BUF, gz))
    } else {
        Box::new(BufReader::with_capacity(BUF, counted))
    };
    Ok((r, count, len))
}

/// Line-at-a-time reader over a (possibly gzipped) text file.
pub struct LineReader {
    path: PathBuf,
    inner: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    range: (usize, usize),
    line: u64,
    consumed: Arc<AtomicU64>,
    len: u64,
}

impl LineReader {
    pub fn open(path: &Path) -> Result<Self> {
        let (inner, consumed, len) = open_stream(path)?;
        Ok(LineReader { path: path.into(), inner, buf: Vec::with_capacity(256), range: (0, 0), line: 0, consumed, len })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 1-based number of the line last returned.
    pub fn line_no(&self) -> u64 {
        self.line
    }

    /// Advance to the next line; false at the end of the input. The line is then
    /// available from [`line`](Self::line) (an immutable borrow, so error constructors
    /// can be called while it is in use).
    pub fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf).map_err(|e| Error::new(Some(self.path.clone()), ErrorKind::Io(e)))?;
        if n == 0 {
            self.range = (0, 0);
            return Ok(false);
        }
        self.line += 1;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => {
                let t = s.trim_start();
                let start = s.len() - t.len();
                self.range = (start, start + t.trim_end().len());
                Ok(true)
            }
            Err(_) => Err(self.parse_error("line is not valid UTF-8".into())),
        }
    }

    /// The current line with surrounding whitespace (including `\r`) trimmed.
    pub fn line(&self) -> &str {
        // Checked as UTF-8 in advance(); the range lies on char boundaries.
        std::str::from_utf8(&self.buf[self.range.0..self.range.1]).unwrap_or("")
    }

    /// Advance to the next line that is not blank and not one of `skip` (e.g. LIRS's
    /// `*` markers); false at the end of the input. Read it with [`Self::line`].
    pub fn advance_record(&mut self, skip: &[&str]) -> Result<bool> {
        while self.advance()? {
            let l = self.line();
            if !l.is_empty() && !skip.contains(&l) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Convenience: advance and return the line.
    pub fn next_line(&mut self) -> Result<Option<&str>> {
        Ok(if self.advance()? { Some(self.line()) } else { None })
    }

    #[cold]
    pub fn parse_error(&self, what: String) -> Error {
        Error::new(Some(self.path.clone()), ErrorKind::Parse { line: self.line, what })
    }

    pub fn progress(&self) -> Option<f64> {
        if self.len == 0 {
            return Some(1.0);
        }
        Some((self.consumed.load(Ordering::Relaxed) as f64 / self.len as f64).min(1.0))
    }
}
