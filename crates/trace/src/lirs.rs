//! Reader of LIRS-style block traces: one decimal block number per line.
//!
//! Blank lines and lines holding only `*` are skipped (the `*` lines occur in the LIRS
//! distribution's `2_pools` and `cs` traces as markers; the Caffeine simulator's reader
//! skips them the same way). Surrounding whitespace (including `\r`) is ignored. Any other
//! line is a `Parse` error with its 1-based line number. Each distinct block number gets
//! a dense page id in order of first appearance; every record gets the flags of the
//! [`AccessKind`] given at open (default [`AccessKind::FileRead`]), gap 0, root cgroup.

use std::path::Path;

use crate::pagemap::PageMap;
use crate::text::LineReader;
use crate::{Access, AccessKind, AccessSource, FileRange, Result, TraceMeta};

pub struct LirsReader {
    lines: LineReader,
    pages: PageMap,
    flags: u8,
    meta: TraceMeta,
}

impl LirsReader {
    pub fn open(path: &Path, kind: Option<AccessKind>) -> Result<Self> {
        let flags = kind.unwrap_or(AccessKind::FileRead).flags();
        Ok(LirsReader {
            lines: LineReader::open(path)?,
            pages: PageMap::new(),
            flags,
            meta: TraceMeta {
                format: "lirs".into(),
                nr_records: None,
                nr_pages: None,
                cgroups: vec![String::new()],
                tick_ps: 0,
                // A block trace read as page cache is one device-sized file; its page
                // ids are the blocks in order of first appearance (docs/model.md §6).
                files: if flags & crate::flags::FILE != 0 { FileRange::whole_id_space() } else { Vec::new() },
                ops: Vec::new(),
            },
        })
    }
}

impl AccessSource for LirsReader {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        while buf.len() < max {
            if !self.lines.advance_record(&["*"])? {
                break;
            }
            let line = self.lines.line();
            let block: u64 = match line.parse() {
                Ok(b) => b,
                Err(_) => {
                    let what = format!("expected a decimal block number, found {:?}", truncate(line));
                    return Err(self.lines.parse_error(what));
                }
            };
            let Some(page) = self.pages.id(block) else {
                return Err(self.lines.parse_error("more than 2^32-1 distinct blocks".into()));
            };
            buf.push(Access { page, cgroup: 0, flags: self.flags, gap: 0 });
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.pages.len()
    }

    fn progress(&self) -> Option<f64> {
        self.lines.progress()
    }
}

/// At most 60 characters of a line, for error messages.
pub(crate) fn truncate(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
