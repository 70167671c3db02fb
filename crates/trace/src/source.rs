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
}
