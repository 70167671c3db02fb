//! Reader of CPU memory-address traces (the SPEC CPU2000 cache-lab traces): one
//! reference per line, `OP ADDRESS GAP` separated by whitespace, where OP is `l` (load)
//! or `s` (store), ADDRESS a hexadecimal byte address with `0x` prefix, and GAP the
//! number of instructions executed since the previous reference.
//!
//! page = ADDRESS >> 12, dense-remapped in order of first appearance; `s` sets
//! [`flags::WRITE`]; the kind defaults to [`AccessKind::AnonMapped`]; gap = GAP with
//! [`DEFAULT_TICK_PS`] picoseconds per tick unless overridden. Blank lines are skipped.

use std::path::Path;

use crate::lirs::truncate;
use crate::pagemap::PageMap;
use crate::text::LineReader;
use crate::{flags, Access, AccessKind, AccessSource, Result, TraceMeta, PAGE_SHIFT};

/// Assumed time per GAP tick: one instruction at ~3 GHz with IPC 1 (333 ps). This is an
/// assumption about the traced machine, not information carried by the trace.
pub const DEFAULT_TICK_PS: u64 = 333;

pub struct AddressReader {
    lines: LineReader,
    pages: PageMap,
    flags: u8,
    meta: TraceMeta,
}

impl AddressReader {
    /// `tick_ps` = picoseconds per GAP tick (None → [`DEFAULT_TICK_PS`]; must be > 0).
    pub fn open(path: &Path, kind: Option<AccessKind>, tick_ps: Option<u64>) -> Result<Self> {
        let tick_ps = tick_ps.unwrap_or(DEFAULT_TICK_PS);
        if tick_ps == 0 {
            return Err(crate::Error::new(Some(path.into()), crate::ErrorKind::InvalidArgument("tick_ps must be > 0 for address traces".into())));
        }
        Ok(AddressReader {
            lines: LineReader::open(path)?,
            pages: PageMap::new(),
            flags: kind.unwrap_or(AccessKind::AnonMapped).flags(),
            meta: TraceMeta { format: "address".into(), nr_records: None, nr_pages: None, cgroups: vec![String::new()], tick_ps, files: Vec::new(), ops: Vec::new() },
        })
    }
}

/// Parse one non-blank line into (is_store, address, gap).
fn parse_line(line: &str) -> std::result::Result<(bool, u64, u32), String> {
    let mut it = line.split_ascii_whitespace();
    let (Some(op), Some(addr), Some(gap), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return Err(format!("expected `l|s 0xADDRESS GAP`, found {:?}", truncate(line)));
    };
    let store = match op {
        "l" => false,
        "s" => true,
        _ => return Err(format!("operation must be `l` or `s`, found {:?}", truncate(op))),
    };
    let hex = addr.strip_prefix("0x").or_else(|| addr.strip_prefix("0X")).ok_or_else(|| format!("address must start with 0x, found {:?}", truncate(addr)))?;
    let addr = u64::from_str_radix(hex, 16).map_err(|_| format!("bad hexadecimal address {:?}", truncate(addr)))?;
    let gap: u32 = gap.parse().map_err(|_| format!("bad gap {:?} (expected a u32)", truncate(gap)))?;
    Ok((store, addr, gap))
}

impl AccessSource for AddressReader {
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
            let (store, addr, gap) = match parse_line(line) {
                Ok(v) => v,
                Err(what) => return Err(self.lines.parse_error(what)),
            };
            let Some(page) = self.pages.id(addr >> PAGE_SHIFT) else {
                return Err(self.lines.parse_error("more than 2^32-1 distinct pages".into()));
            };
            let fl = self.flags | if store { flags::WRITE } else { 0 };
            buf.push(Access { page, cgroup: 0, flags: fl, gap });
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
