//! Reader of the simple CSV trace format (see FORMAT.md, "CSV"): a required header row
//! naming columns, then one access per row. Fields are split on `,` and trimmed; there is
//! no quoting (names and values cannot contain commas).
//!
//! Columns (any order): `page` (required, u64 key, dense-remapped in order of first
//! appearance), `op` (`r|w|read|write`, default `r`), `type` (`anon|file`), `access`
//! (`mapped|syscall`), `cgroup` (name, default root `""`), `gap` (u32). Defaults of
//! `type`/`access` come from the [`AccessKind`] given at open (default anon + mapped).
//! An empty optional cell takes the default. With a `gap` column the trace carries time
//! at [`DEFAULT_TICK_PS`] (1 ns) per tick unless overridden.

use std::collections::HashMap;
use std::path::Path;

use crate::lirs::truncate;
use crate::pagemap::PageMap;
use crate::text::LineReader;
use crate::{flags, Access, AccessKind, AccessSource, Error, ErrorKind, FileRange, Result, TraceMeta};

/// Default time per `gap` tick for CSV traces: 1 ns.
pub const DEFAULT_TICK_PS: u64 = 1000;

/// The known column names.
pub const COLUMNS: [&str; 6] = ["page", "op", "type", "access", "cgroup", "gap"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Col {
    Page,
    Op,
    Type,
    Access,
    Cgroup,
    Gap,
}

impl Col {
    fn name(self) -> &'static str {
        COLUMNS[self as usize]
    }
}

pub struct CsvReader {
    lines: LineReader,
    cols: Vec<Col>,
    pages: PageMap,
    cgroup_ids: HashMap<String, u16>,
    default_flags: u8,
    meta: TraceMeta,
}

impl CsvReader {
    /// Open and parse the header row. `tick_ps` applies only with a `gap` column.
    pub fn open(path: &Path, kind: Option<AccessKind>, tick_ps: Option<u64>) -> Result<Self> {
        let mut lines = LineReader::open(path)?;
        let header = loop {
            match lines.next_line()? {
                None => return Err(Error::new(Some(path.into()), ErrorKind::BadHeader("empty CSV file (a header row is required)".into()))),
                Some("") => continue,
                Some(l) => break l.to_string(),
            }
        };
        let mut cols = Vec::new();
        for name in header.split(',').map(str::trim) {
            let Some(i) = COLUMNS.iter().position(|c| *c == name) else {
                return Err(lines.parse_error(format!("unknown column {:?} (known columns: {})", truncate(name), COLUMNS.join(", "))));
            };
            let col = [Col::Page, Col::Op, Col::Type, Col::Access, Col::Cgroup, Col::Gap][i];
            if cols.contains(&col) {
                return Err(lines.parse_error(format!("column {name:?} appears twice")));
            }
            cols.push(col);
        }
        if !cols.contains(&Col::Page) {
            return Err(lines.parse_error("the header has no `page` column".into()));
        }
        let has_gap = cols.contains(&Col::Gap);
        let tick_ps = if has_gap { tick_ps.unwrap_or(DEFAULT_TICK_PS) } else { 0 };
        if has_gap && tick_ps == 0 {
            return Err(Error::new(Some(path.into()), ErrorKind::InvalidArgument("tick_ps must be > 0 for a CSV trace with a gap column".into())));
        }
        let mut cgroup_ids = HashMap::new();
        cgroup_ids.insert(String::new(), 0);
        let default_flags = kind.unwrap_or(AccessKind::AnonMapped).flags();
        Ok(CsvReader {
            lines,
            pages: PageMap::new(),
            cgroup_ids,
            default_flags,
            meta: TraceMeta {
                format: "csv".into(),
                nr_records: None,
                nr_pages: None,
                cgroups: vec![String::new()],
                tick_ps,
                // Without a `type` column every record has the kind given at open; file
                // pages then form one file (as a block trace). With one, no layout is known.
                files: if !cols.contains(&Col::Type) && default_flags & flags::FILE != 0 { FileRange::whole_id_space() } else { Vec::new() },
                ops: Vec::new(),
            },
            cols,
        })
    }

    fn bad(&self, col: Col, value: &str, expected: &str) -> Error {
        self.lines.parse_error(format!("column `{}`: bad value {:?} (expected {expected})", col.name(), truncate(value)))
    }
}

impl AccessSource for CsvReader {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        while buf.len() < max {
            if !self.lines.advance_record(&[])? {
                break;
            }
            let line = self.lines.line();
            let mut key = None;
            let mut fl = self.default_flags;
            let mut cgroup_name: Option<&str> = None;
            let mut gap = 0u32;
            let mut n = 0;
            for (i, v) in line.split(',').map(str::trim).enumerate() {
                n += 1;
                let Some(&col) = self.cols.get(i) else {
                    continue;
                };
                if v.is_empty() && col != Col::Page {
                    continue;
                }
                match col {
                    Col::Page => key = Some(v.parse::<u64>().map_err(|_| self.bad(col, v, "an unsigned integer"))?),
                    Col::Op => match v {
                        "r" | "read" => fl &= !flags::WRITE,
                        "w" | "write" => fl |= flags::WRITE,
                        _ => return Err(self.bad(col, v, "r, w, read or write")),
                    },
                    Col::Type => match v {
                        "anon" => fl &= !flags::FILE,
                        "file" => fl |= flags::FILE,
                        _ => return Err(self.bad(col, v, "anon or file")),
                    },
                    Col::Access => match v {
                        "mapped" => fl &= !flags::SYSCALL,
                        "syscall" => fl |= flags::SYSCALL,
                        _ => return Err(self.bad(col, v, "mapped or syscall")),
                    },
                    Col::Cgroup => cgroup_name = Some(v),
                    Col::Gap => gap = v.parse().map_err(|_| self.bad(col, v, "a u32"))?,
                }
            }
            if n != self.cols.len() {
                let what = format!("{n} fields, but the header has {} columns", self.cols.len());
                return Err(self.lines.parse_error(what));
            }
            let key = key.expect("page column present and parsed");
            let Some(page) = self.pages.id(key) else {
                return Err(self.lines.parse_error("more than 2^32-1 distinct pages".into()));
            };
            let cgroup = match cgroup_name {
                None => 0,
                Some(name) => match self.cgroup_ids.get(name) {
                    Some(&id) => id,
                    None => {
                        if self.meta.cgroups.len() > u16::MAX as usize {
                            return Err(self.lines.parse_error("more than 65535 cgroups".into()));
                        }
                        let id = self.meta.cgroups.len() as u16;
                        self.meta.cgroups.push(name.to_string());
                        self.cgroup_ids.insert(name.to_string(), id);
                        id
                    }
                },
            };
            buf.push(Access { page, cgroup, flags: fl, gap });
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.pages.len()
    }

    fn cgroups_seen(&self) -> &[String] {
        &self.meta.cgroups
    }

    fn progress(&self) -> Option<f64> {
        self.lines.progress()
    }
}
