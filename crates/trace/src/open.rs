//! [`open`]: one entry point that opens any supported trace, by explicit format name or by
//! auto-detection (magic bytes, file name, then the first meaningful line).

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::address::AddressReader;
use crate::csv::CsvReader;
use crate::lirs::LirsReader;
use crate::native::{NativeReader, MAGIC};
use crate::{AccessKind, AccessSource, Error, ErrorKind, Result};

/// Format names accepted by [`open`].
pub const FORMATS: [&str; 5] = ["native", "lirs", "address", "csv", "oracle"];

const FORMAT_HELP: &str = "known formats: native (binary, starts with RCLTRACE), \
lirs (one decimal block number per line), address (`l|s 0xADDR GAP` per line), \
csv (header row with a `page` column; *.csv or *.csv.gz), \
oracle (libCacheSim oracleGeneral binary; *.oracleGeneral[.bin|.zst])";

/// Open a trace. `format` is one of [`FORMATS`] or None to auto-detect:
/// `RCLTRACE` magic → native; name ending in `.csv`/`.csv.gz` → csv; name containing
/// `oracleGeneral` (any case) or ending in `.oracle` → oracle; otherwise the first
/// non-blank line (after gunzipping `*.gz`) decides: a single integer → lirs, `l 0x…`/
/// `s 0x…` → address, a comma-separated header with a `page` column → csv.
/// `kind` classifies records of formats that do not say (lirs, address, csv defaults);
/// it is ignored for native traces.
pub fn open(path: &Path, format: Option<&str>, kind: Option<AccessKind>) -> Result<Box<dyn AccessSource>> {
    let format = match format {
        Some(f) => {
            if !FORMATS.contains(&f) {
                return Err(Error::new(Some(path.into()), ErrorKind::InvalidArgument(format!("unknown trace format {f:?}; {FORMAT_HELP}"))));
            }
            f
        }
        None => detect(path)?,
    };
    Ok(match format {
        "native" => Box::new(NativeReader::open(path)?),
        "lirs" => Box::new(LirsReader::open(path, kind)?),
        "address" => Box::new(AddressReader::open(path, kind, None)?),
        "oracle" => Box::new(crate::oracle::OracleReader::open(path, kind)?),
        _ => Box::new(CsvReader::open(path, kind, None)?),
    })
}

/// Detect the format of `path` (see [`open`]); returns one of [`FORMATS`].
pub fn detect(path: &Path) -> Result<&'static str> {
    let io = |e| Error::new(Some(path.into()), ErrorKind::Io(e));
    let mut magic = [0u8; 8];
    let mut f = File::open(path).map_err(io)?;
    let mut got = 0;
    while got < magic.len() {
        match f.read(&mut magic[got..]).map_err(io)? {
            0 => break,
            n => got += n,
        }
    }
    if got == magic.len() && magic == MAGIC {
        return Ok("native");
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if name.ends_with(".csv") || name.ends_with(".csv.gz") {
        return Ok("csv");
    }
    if name.contains("oraclegeneral") || name.ends_with(".oracle") {
        return Ok("oracle");
    }
    // Look at the first meaningful line (bounded read).
    let (stream, _, _) = crate::text::open_stream(path)?;
    let mut limited = stream.take(1 << 20);
    let mut line = Vec::new();
    loop {
        line.clear();
        if limited.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        if line.starts_with(&MAGIC) {
            return Err(Error::new(Some(path.into()), ErrorKind::BadHeader("a compressed native trace; native traces are read uncompressed (gunzip it first)".into())));
        }
        let text = String::from_utf8_lossy(&line);
        let t = text.trim();
        if t.is_empty() || t == "*" {
            continue;
        }
        if t.parse::<u64>().is_ok() {
            return Ok("lirs");
        }
        if t.starts_with("l 0x") || t.starts_with("s 0x") {
            return Ok("address");
        }
        if t.contains(',') && t.split(',').any(|c| c.trim() == "page") {
            return Ok("csv");
        }
        break;
    }
    Err(Error::new(Some(path.into()), ErrorKind::BadHeader(format!("unrecognised trace format; {FORMAT_HELP}"))))
}
