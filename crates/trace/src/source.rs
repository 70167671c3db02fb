//! The streaming interface every trace reader and generator implements.

use crate::{Access, Result};

/// What is known about a trace besides its records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceMeta {
    /// Format name (`native`, `lirs`, `address`, `csv`, `gen:<name>`).
    pub format: String,
    /// Number of records if known up front (native files, generators).
    pub nr_records: Option<u64>,
    /// Upper bound of dense page ids (max id + 1) if known up front. Readers of text
    /// formats learn it while reading; see [`AccessSource::nr_pages_seen`].
    pub nr_pages: Option<u32>,
    /// cgroup names by trace-local id; index 0 is always the root cgroup `""`.
    pub cgroups: Vec<String>,
    /// Picoseconds per `gap` tick; 0 when records carry no time.
    pub tick_ps: u64,
    /// The files the trace's file pages belong to, each a run of consecutive page ids in
    /// page-offset order (page id `first + i` is page `i` of the file), sorted by `first`
    /// and disjoint. Readahead and fault-around find a page's neighbours here. Empty: the
    /// trace declares no layout, and each file page is a file of its own.
    pub files: Vec<FileRange>,
    /// Cgroup interface writes the trace asks for between its records (proactive
    /// `memory.reclaim`), sorted by [`TraceOp::at`]. Readers that only want the access
    /// stream (cache simulators, miss-ratio curves) ignore them.
    pub ops: Vec<TraceOp>,
}

/// A write to a cgroup's interface file, or a `madvise()` of the workload, at a point of
/// the access stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOp {
    /// The op happens before record `at` (`at` = the number of records: after the last).
    pub at: u64,
    /// The cgroup whose file is written (index into [`TraceMeta::cgroups`]).
    pub cgroup: u16,
    pub kind: OpKind,
}

/// What a [`TraceOp`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// `BYTES` (or `BYTES swappiness=N`) written to `memory.reclaim` (cgroup v2;
    /// `swappiness=` is accepted from v6.9 on, mm/memcontrol.c v6.12 `memory_reclaim()`).
    MemoryReclaim { bytes: u64, swappiness: Option<u8> },
    /// `madvise(addr, len, advice)` over page ids `first .. first + nr_pages` (the trace's
    /// ids are one address space): [`MADV_HUGEPAGE`], [`MADV_NOHUGEPAGE`] or
    /// [`MADV_DONTNEED`], by their Linux numbers.
    Madvise { first: u32, nr_pages: u32, advice: u8 },
}

/// `MADV_DONTNEED` (include/uapi/asm-generic/mman-common.h): the pages are unmapped;
/// anonymous ones are freed.
pub const MADV_DONTNEED: u8 = 4;
/// `MADV_HUGEPAGE`: the range may be mapped by THPs in `madvise` mode (`VM_HUGEPAGE`).
pub const MADV_HUGEPAGE: u8 = 14;
/// `MADV_NOHUGEPAGE`: never THPs in the range (`VM_NOHUGEPAGE`).
pub const MADV_NOHUGEPAGE: u8 = 15;

/// The name of a madvise advice the traces carry (`hugepage`, `nohugepage`, `dontneed`).
pub fn madvise_name(advice: u8) -> Option<&'static str> {
    match advice {
        MADV_DONTNEED => Some("dontneed"),
        MADV_HUGEPAGE => Some("hugepage"),
        MADV_NOHUGEPAGE => Some("nohugepage"),
        _ => None,
    }
}

/// The advice named `name` (see [`madvise_name`]).
pub fn madvise_parse(name: &str) -> Option<u8> {
    [MADV_DONTNEED, MADV_HUGEPAGE, MADV_NOHUGEPAGE].into_iter().find(|&a| madvise_name(a) == Some(name))
}

impl TraceOp {
    /// A `memory.reclaim` write of `bytes` before record `at`.
    pub fn memory_reclaim(at: u64, cgroup: u16, bytes: u64, swappiness: Option<u8>) -> TraceOp {
        TraceOp { at, cgroup, kind: OpKind::MemoryReclaim { bytes, swappiness } }
    }

    /// A `madvise(advice)` of pages `first .. first + nr_pages` before record `at`, by a
    /// task of `cgroup`.
    pub fn madvise(at: u64, cgroup: u16, first: u32, nr_pages: u32, advice: u8) -> TraceOp {
        TraceOp { at, cgroup, kind: OpKind::Madvise { first, nr_pages, advice } }
    }
}

/// `MAX_SWAPPINESS` (include/linux/swap.h v6.12): the largest `swappiness=` a
/// `memory.reclaim` write takes.
pub const MAX_SWAPPINESS: u8 = 200;

/// Check an op table against a trace of `nr_records` records in `nr_cgroups` cgroups:
/// sorted by position, positions within the trace, known cgroups, a size of at least one
/// byte and a swappiness in 0..=200; a madvise of at least one page, inside the 32-bit id
/// space, with an advice the traces carry.
pub fn check_ops(ops: &[TraceOp], nr_records: u64, nr_cgroups: usize) -> std::result::Result<(), String> {
    let mut prev = 0u64;
    for (i, op) in ops.iter().enumerate() {
        if op.at < prev {
            return Err(format!("op {i} at record {} comes before the previous op's record {prev}", op.at));
        }
        if op.at > nr_records {
            return Err(format!("op {i} at record {} is past the trace's end ({nr_records} records)", op.at));
        }
        if op.cgroup as usize >= nr_cgroups {
            return Err(format!("op {i} names cgroup {} but the trace has {nr_cgroups}", op.cgroup));
        }
        match op.kind {
            OpKind::MemoryReclaim { bytes, swappiness } => {
                if bytes == 0 {
                    return Err(format!("op {i}: memory.reclaim of 0 bytes"));
                }
                if swappiness.is_some_and(|s| s > MAX_SWAPPINESS) {
                    return Err(format!("op {i}: memory.reclaim swappiness={} is outside 0..={MAX_SWAPPINESS}", swappiness.unwrap()));
                }
            }
            OpKind::Madvise { first, nr_pages, advice } => {
                if madvise_name(advice).is_none() {
                    return Err(format!("op {i}: madvise advice {advice} is not MADV_DONTNEED (4), MADV_HUGEPAGE (14) or MADV_NOHUGEPAGE (15)"));
                }
                if nr_pages == 0 || first.checked_add(nr_pages - 1).is_none() {
                    return Err(format!("op {i}: madvise of pages {first} + {nr_pages} is empty or past the 32-bit id space"));
                }
            }
        }
        prev = op.at;
    }
    Ok(())
}

/// One file of a trace: page ids `first .. first + nr_pages` are its pages 0, 1, … in
/// offset order. `nr_pages == u32::MAX` means "to the end of the id space" (a block trace
/// read as one device-sized file: its pages are the ids the reader hands out).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileRange {
    pub name: String,
    pub first: u32,
    pub nr_pages: u32,
    /// `posix_fadvise` advice the file was opened with, as Linux numbers it:
    /// [`FileRange::FADV_NORMAL`], [`FileRange::FADV_RANDOM`] (no readahead for read()),
    /// [`FileRange::FADV_SEQUENTIAL`] (twice the readahead window).
    pub advice: u8,
}

impl FileRange {
    pub const FADV_NORMAL: u8 = 0;
    pub const FADV_RANDOM: u8 = 1;
    pub const FADV_SEQUENTIAL: u8 = 2;

    /// One file covering every page id (block traces of a single device).
    pub fn whole_id_space() -> Vec<FileRange> {
        vec![FileRange { name: String::new(), first: 0, nr_pages: u32::MAX, advice: 0 }]
    }

    /// One past the file's last page id.
    pub fn end(&self) -> u64 {
        self.first as u64 + self.nr_pages as u64
    }
}

/// Check a file table: ranges sorted by `first`, disjoint, non-empty, within u32 ids.
pub fn check_files(files: &[FileRange]) -> std::result::Result<(), String> {
    let mut prev_end = 0u64;
    for (i, f) in files.iter().enumerate() {
        if f.nr_pages == 0 {
            return Err(format!("file {i} ({:?}) has no pages", f.name));
        }
        if i > 0 && (f.first as u64) < prev_end {
            return Err(format!("file {i} ({:?}) starts at page {} inside the previous file (ending at {prev_end})", f.name, f.first));
        }
        if f.advice > FileRange::FADV_SEQUENTIAL {
            return Err(format!("file {i} ({:?}) has advice {}: expected 0 (normal), 1 (random) or 2 (sequential)", f.name, f.advice));
        }
        if f.nr_pages != u32::MAX && f.end() > u32::MAX as u64 {
            return Err(format!("file {i} ({:?}) ends past the largest page id", f.name));
        }
        prev_end = f.end();
    }
    Ok(())
}

/// A stream of accesses. Implementations read in batches and never hold the whole
/// trace in memory.
pub trait AccessSource: Send {
    fn meta(&self) -> &TraceMeta;
    /// Clear `buf` and append up to `max` records. Returns the number appended;
    /// 0 means the stream ended cleanly. A truncated or corrupt input is an error
    /// naming the file and the record index / line.
    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize>;
    /// Dense page ids handed out so far (max id + 1).
    fn nr_pages_seen(&self) -> u32;
    /// cgroup names seen so far by id (grows for text formats).
    fn cgroups_seen(&self) -> &[String] {
        &self.meta().cgroups
    }
    /// Fraction of the input consumed, in 0..=1, for progress bars (None if unknown).
    fn progress(&self) -> Option<f64>;
    /// The whole remaining stream as dense page ids and the number of pages, if this
    /// source has a faster way than `read_batch` (see [`crate::read_keys`]); `None`
    /// otherwise (the default).
    fn read_all_keys(&mut self) -> Option<Result<(Vec<u32>, u32)>> {
        None
    }
    /// Records delivered so far (the index of the next one), for a source whose
    /// `meta().ops` is not empty: the replay performs each op before record `op.at`.
    /// `None` (the default) for sources that carry no ops.
    fn position(&self) -> Option<u64> {
        None
    }
    /// The stream as tasks the replaying engine schedules by their own clocks
    /// ([`TaskSource`]), if this source is one; `None` (the default): one stream on one
    /// clock, read with `read_batch`.
    fn tasks(&mut self) -> Option<&mut dyn TaskSource> {
        None
    }
}

/// A workload of concurrent tasks (threads of a program), each with its own stream of
/// accesses, which the engine runs in the order of their clocks on the machine's CPUs
/// (crates/core/src/sim/tasks.rs) instead of replaying one interleaving on one clock: a
/// task that stalls on I/O or reclaim delays itself, not the others. Task ids are dense
/// slots (`0..nr_tasks()`): when a task ends, the next one started in its slot (a thread
/// pool's next job) continues under the same id.
pub trait TaskSource {
    /// Task slots (dense ids).
    fn nr_tasks(&self) -> usize;
    /// Whether slot `t` has work now.
    fn is_runnable(&self, t: usize) -> bool;
    /// Incremented whenever a slot's work starts or ends (the engine then looks at which
    /// slots are runnable: a slot's new work starts no earlier than the task whose
    /// progress started it, e.g. a reduce once its job's last map ended).
    fn changes(&self) -> u64;
    /// Clear `buf` and append up to `max` accesses of slot `t` (runnable), in its order.
    /// A record's `gap` is the task's own time before the access (its CPU work).
    fn run_task(&mut self, t: usize, buf: &mut Vec<Access>, max: usize) -> Result<usize>;
}
