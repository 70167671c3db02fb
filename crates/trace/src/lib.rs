//! reclaimlab-trace: page-access traces — the record, the native binary format, readers of
//! real trace families, and deterministic synthetic generators.
//!
//! Module tour:
//! - [`record`]: the 12-byte [`Access`] record the engine replays (dense page ids).
//! - [`source`]: the streaming [`AccessSource`] interface (batches, never the whole trace).
//! - [`error`]: errors naming the file and the record/line.
//! - [`native`]: the native binary format `RCLTRACE` v1, v2 with compressed blocks ([`NativeWriter`],
//!   [`NativeReader`]); byte layout in `crates/trace/FORMAT.md`.
//! - [`lirs`], [`address`], [`csv`]: streaming readers of text traces (gzip transparent),
//!   sharing [`text`] (lines, gunzip, progress) and [`pagemap`] (dense remapping).
//! - [`open()`]: open any trace by format name or auto-detection.
//! - [`gen`]: masim-style synthetic programs (regions, phases, Zipf/uniform/scan streams);
//!   [`gen::tpcc`]: the py-tpcc STOCK_LEVEL mimic of seed 001; [`gen::terasort`](mod@gen::terasort): the
//!   Hadoop TeraSort mimic of seed 002;
//!   [`rng`]: the seeded xoshiro256** generator they (and the engine) use.
//! - [`convert()`]: any source → native file; [`info()`]: whole-trace statistics.
//!
//! Text formats remap foreign keys (block numbers, page frame numbers) to dense ids in
//! order of first appearance, so page id 0 is the first page the trace touches.

pub mod address;
pub mod convert;
pub mod csv;
pub mod error;
pub mod gen;
pub mod info;
pub mod lirs;
pub mod mem;
pub mod native;
pub mod open;
pub mod oracle;
pub mod pagemap;
pub mod prefetch;
pub mod record;
pub mod rng;
pub mod source;
pub mod text;
pub mod tmp;

pub use address::AddressReader;
pub use convert::{convert, convert_with};
pub use csv::CsvReader;
pub use error::{Error, ErrorKind, Result};
pub use gen::{generate, terasort, tpcc_stock_level, Pattern, Phase, Program, Reclaim, Region, Stream, TeraSortParams, TpccParams};
pub use info::{info, TraceInfo};
pub use lirs::LirsReader;
pub use native::{NativeReader, NativeWriter};
pub use open::{detect, open, FORMATS};
pub use oracle::{read_keys, write_oracle, OracleReader};
pub use record::{flags, Access, AccessKind, PAGE_SHIFT, PAGE_SIZE};
pub use rng::Rng;
pub use source::{
    check_files, check_ops, madvise_name, madvise_parse, AccessSource, FileRange, OpKind, TaskSource, TraceMeta, TraceOp, MADV_DONTNEED, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
};
