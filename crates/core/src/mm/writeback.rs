//! Background writeback of dirty page cache (mm/page-writeback.c, fs/fs-writeback.c):
//! the flusher that cleans dirty file pages before reclaim has to meet them.
//!
//! Every `vm.dirty_writeback_centisecs` (5 s) of simulated time the flusher writes back
//! the file pages dirtied more than `vm.dirty_expire_centisecs` (30 s) ago; and whenever
//! the dirty file pages exceed `vm.dirty_background_ratio` (10%) of dirtyable memory
//! (free + file LRU pages, `global_dirtyable_memory`), it writes back the oldest until
//! below. A write is device time (`cost.file_write_ns`), `nr_written` and `pgpgout`.
//! Abstractions: dirty pages are tracked in the order they were dirtied (one queue, not
//! per inode); a page cleaned and dirtied again may be written at its first dirtying's
//! expiry; no `balance_dirty_pages` throttling of writers at `vm.dirty_ratio`.

use super::page::{is_resident, pg};
use super::vmstat::Ev;
use super::Mm;
use std::collections::VecDeque;

#[derive(Default)]
pub struct Writeback {
    /// (page, time dirtied) in dirtying order; stale entries are skipped when popped.
    queue: VecDeque<(u32, u64)>,
    /// `NR_FILE_DIRTY`: resident dirty file pages.
    pub nr_dirty: u64,
    /// When the periodic flusher runs next (ns).
    pub next_run: u64,
}

impl Writeback {
    pub fn new(first_run: u64) -> Self {
        Writeback { next_run: first_run, ..Default::default() }
    }
}

impl Mm {
    /// A clean resident file page was dirtied (`folio_account_dirtied`). Returns true when
    /// dirty pages now exceed the background threshold (wake the flusher).
    #[inline]
    pub fn account_dirtied(&mut self, pfn: u32, now: u64) -> bool {
        self.frames.set(pfn, pg::DIRTY);
        self.wb.nr_dirty += 1;
        self.vmstat.count(Ev::NrDirtied, 1);
        self.wb.queue.push_back((self.frames.page(pfn), now));
        self.wb.nr_dirty > self.dirty_background_thresh()
    }

    /// A dirty file folio is written back (by the flusher, or for reclaim): it is clean.
    pub fn folio_writeback(&mut self, pfn: u32) {
        debug_assert!(self.frames.test(pfn, pg::DIRTY) && self.frames.is_file(pfn));
        self.frames.clear(pfn, pg::DIRTY);
        self.wb.nr_dirty -= 1;
        self.vmstat.count(Ev::NrWritten, 1);
        self.vmstat.count(Ev::Pgpgout, 4);
        self.io_write_ns += self.cfg.cost.file_write_ns;
    }

    /// `dirty_background_ratio` of `global_dirtyable_memory` (free + file LRU pages).
    fn dirty_background_thresh(&self) -> u64 {
        let file: u64 = (0..self.nr_nodes() as u16)
            .map(|n| self.node_lru_pages(n, super::lruvec::LruList::InactiveFile) + self.node_lru_pages(n, super::lruvec::LruList::ActiveFile))
            .sum();
        (self.total_free_pages() + file) * self.cfg.dirty_background_ratio / 100
    }

    /// Run the flusher at `now`: write back expired dirty pages, then the oldest until
    /// below the background threshold. `periodic` advances the next periodic run.
    pub fn wb_writeback(&mut self, now: u64, periodic: bool) {
        let expire = self.cfg.dirty_expire_ns;
        let thresh = self.dirty_background_thresh();
        while let Some(&(page, dirtied)) = self.wb.queue.front() {
            let expired = dirtied + expire <= now;
            if !expired && self.wb.nr_dirty <= thresh {
                break;
            }
            self.wb.queue.pop_front();
            let pfn = self.pages.pte[page as usize];
            if is_resident(pfn) && self.frames.test(pfn, pg::DIRTY) && self.frames.is_file(pfn) {
                self.folio_writeback(pfn);
            }
        }
        if periodic {
            self.wb.next_run = if self.cfg.dirty_writeback_ns == 0 { u64::MAX } else { now + self.cfg.dirty_writeback_ns };
        }
    }
}
