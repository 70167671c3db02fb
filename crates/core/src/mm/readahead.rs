//! Readahead decisions: `struct file_ra_state` and the window arithmetic of
//! mm/readahead.c, with the readahead entry points of mm/filemap.c (6.12.117, read from
//! Debian's linux-source-6.12; v6.15 has the same rules for files without large folios).
//!
//! This module only decides *which* pages to read and where to put the `PG_readahead`
//! marker ([`RaRequest`]); the engine (`sim/filemap.rs`) allocates, charges and adds the
//! pages, which is `page_cache_ra_unbounded`'s half. Page-cache lookups come in as a
//! `cached(index)` closure over the file's pages.
//!
//! Abstractions (docs/model.md §6): one `file_ra_state` per file (the kernel has one per
//! open `struct file`); files have no large folios (`page_cache_ra_order` falls back to
//! `do_page_cache_ra`, as for ext4 in 6.12); `bdi->io_pages` equals `ra_pages` (it only
//! matters for reads larger than the window); no `FMODE_RANDOM`, `VM_RAND_READ`,
//! `VM_SEQ_READ` or `VM_HUGEPAGE` (no fadvise/madvise in traces); every syscall access is
//! one 4 KiB read.

/// `MMAP_LOTSAMISS` (mm/filemap.c): read-around stops once this many more mapped faults
/// missed than fault-around found cached.
pub const MMAP_LOTSAMISS: u32 = 100;

/// `struct file_ra_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRaState {
    /// Where the last readahead window started.
    pub start: u64,
    /// Its size in pages.
    pub size: u64,
    /// Pages left when the next readahead starts (`PG_readahead` sits at `start + size -
    /// async_size`).
    pub async_size: u64,
    /// Maximum window (`read_ahead_kb` in pages, from the bdi at open).
    pub ra_pages: u64,
    /// Mapped faults that missed the cache, less the cached pages fault-around mapped.
    pub mmap_miss: u32,
    /// Byte position after the previous read(); `u64::MAX` is the kernel's `-1`
    /// (`file_ra_state_init`).
    pub prev_pos: u64,
    /// `FMODE_RANDOM` (`POSIX_FADV_RANDOM`): read() reads what it asks for, no more.
    pub random: bool,
}

impl FileRaState {
    /// `file_ra_state_init`.
    pub fn new(ra_pages: u64) -> Self {
        FileRaState { start: 0, size: 0, async_size: 0, ra_pages, mmap_miss: 0, prev_pos: u64::MAX, random: false }
    }

    /// The state of a file opened with `posix_fadvise` advice `advice` (mm/fadvise.c
    /// `generic_fadvise`): RANDOM sets `FMODE_RANDOM`, SEQUENTIAL doubles `ra_pages`.
    pub fn with_advice(ra_pages: u64, advice: u8) -> Self {
        let mut ra = FileRaState::new(ra_pages);
        match advice {
            reclaimlab_trace::FileRange::FADV_RANDOM => ra.random = true,
            reclaimlab_trace::FileRange::FADV_SEQUENTIAL => ra.ra_pages = 2 * ra_pages,
            _ => {}
        }
        ra
    }

    /// The window just decided: `do_page_cache_ra(ractl, ra->size, ra->async_size)` from
    /// `ra->start` (page_cache_ra_order's fallback).
    fn window(&self) -> RaRequest {
        RaRequest { index: self.start, nr_to_read: self.size, lookahead: self.async_size }
    }
}

/// `do_page_cache_ra(ractl at index, nr_to_read, lookahead_size)`: read the missing pages
/// of `index .. index + nr_to_read` (clamped at end of file), setting `PG_readahead` on
/// the new page at `index + nr_to_read - lookahead` (none when `lookahead` is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaRequest {
    pub index: u64,
    pub nr_to_read: u64,
    pub lookahead: u64,
}

impl RaRequest {
    /// The one page at `index`, no marker: a read without readahead.
    pub fn page(index: u64) -> Self {
        RaRequest { index, nr_to_read: 1, lookahead: 0 }
    }

    /// `do_page_cache_ra`'s end-of-file clamp, then `page_cache_ra_unbounded`'s mark
    /// (relative to `index`): `(pages to consider, mark)`, `mark >= pages` meaning none.
    pub fn clamp(&self, file_pages: u64) -> (u64, u64) {
        if self.index >= file_pages {
            return (0, u64::MAX);
        }
        let nr = self.nr_to_read.min(file_pages - self.index);
        // round_up(index + nr - lookahead, 1) - index, in unsigned long arithmetic.
        (nr, nr.wrapping_sub(self.lookahead))
    }
}

/// `get_init_ra_size`.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size`.
pub fn get_next_ra_size(ra: &FileRaState, max: u64) -> u64 {
    let cur = ra.size;
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// `page_cache_prev_miss(mapping, index, max_scan)`: the first index at or below `index`
/// that is not cached, looking at `max_scan` entries; the last one looked at if all are;
/// `u64::MAX` (`ULONG_MAX`) when the scan ran below page 0.
pub fn page_cache_prev_miss(index: u64, max_scan: u64, cached: &impl Fn(u64) -> bool) -> u64 {
    let mut i = index;
    for k in 0..max_scan {
        if k > 0 {
            if i == 0 {
                return u64::MAX;
            }
            i -= 1;
        }
        if !cached(i) {
            return i;
        }
    }
    i
}

/// `page_cache_next_miss(mapping, index, max_scan)`: the first index at or above `index`
/// that is not cached, or `index + max_scan` if all `max_scan` are.
pub fn page_cache_next_miss(index: u64, max_scan: u64, cached: &impl Fn(u64) -> bool) -> u64 {
    for i in index..index.saturating_add(max_scan) {
        if !cached(i) {
            return i;
        }
    }
    index + max_scan
}

/// `page_cache_sync_ra` for a read of `req_count` pages at `index` that found no page
/// in the cache (`filemap_get_pages`), or for `VM_SEQ_READ`. With `ra_pages == 0` the
/// read is forced readahead of the requested page alone (`force_page_cache_ra`).
pub fn page_cache_sync_ra(ra: &mut FileRaState, index: u64, req_count: u64, cached: &impl Fn(u64) -> bool) -> RaRequest {
    if ra.ra_pages == 0 {
        return RaRequest::page(index);
    }
    // "Be dumb": FMODE_RANDOM reads the request (force_page_cache_ra, up to
    // max(io_pages, ra_pages) pages; io_pages is taken to be ra_pages).
    if ra.random {
        return RaRequest { index, nr_to_read: req_count.min(ra.ra_pages), lookahead: 0 };
    }
    let max_pages = ra.ra_pages;
    let prev_index = ra.prev_pos >> reclaimlab_trace::PAGE_SHIFT;
    // A start of file, oversized read, or sequential cache miss.
    if index == 0 || req_count > max_pages || index.wrapping_sub(prev_index) <= 1 {
        ra.start = index;
        ra.size = get_init_ra_size(req_count, max_pages);
        ra.async_size = if ra.size > req_count { ra.size - req_count } else { ra.size >> 1 };
        return ra.window();
    }
    // Look for the cached history a sequential stream would leave behind.
    let miss = page_cache_prev_miss(index - 1, max_pages, cached);
    let mut contig_count = index.wrapping_sub(miss).wrapping_sub(1);
    // Standalone, small random read: read as is, keep the state.
    if contig_count <= req_count {
        return RaRequest { index, nr_to_read: req_count, lookahead: 0 };
    }
    // Cached from the beginning of the file: a long-run stream.
    if miss == u64::MAX {
        contig_count = contig_count.wrapping_mul(2);
    }
    ra.start = index;
    ra.size = contig_count.saturating_add(req_count).min(max_pages);
    ra.async_size = 1;
    ra.window()
}

/// `page_cache_async_ra` on a cached page at `index` that carried `PG_readahead` (the
/// caller has cleared it). None: nothing to read.
pub fn page_cache_async_ra(ra: &mut FileRaState, index: u64, req_count: u64, cached: &impl Fn(u64) -> bool) -> Option<RaRequest> {
    if ra.ra_pages == 0 {
        return None;
    }
    let max_pages = ra.ra_pages;
    // The expected callback index: sequential, push the window forward and ramp up.
    if index == ra.start + ra.size - ra.async_size {
        ra.start += ra.size;
        ra.size = ra.size.max(get_next_ra_size(ra, max_pages));
        ra.async_size = ra.size;
        return Some(ra.window());
    }
    // A marked page without valid state (interleaved reads): size the window from the
    // cached run ahead of it.
    let start = page_cache_next_miss(index + 1, max_pages, cached);
    if start == 0 || start - index > max_pages {
        return None;
    }
    ra.start = start;
    ra.size = start - index + req_count;
    ra.size = get_next_ra_size(ra, max_pages);
    ra.async_size = ra.size;
    Some(ra.window())
}

/// `do_sync_mmap_readahead` on a mapped fault at `index` that found no page: read-around
/// of `ra_pages` centred on the fault, unless `mmap_miss` says the mapping is random.
/// None: read only the faulting page.
pub fn do_sync_mmap_readahead(ra: &mut FileRaState, index: u64) -> Option<RaRequest> {
    if ra.ra_pages == 0 {
        return None;
    }
    if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
        ra.mmap_miss += 1;
    }
    // Do we miss much more than hit in this file? If so, stop bothering with read-around.
    if ra.mmap_miss > MMAP_LOTSAMISS {
        return None;
    }
    ra.start = index.saturating_sub(ra.ra_pages / 2);
    ra.size = ra.ra_pages;
    ra.async_size = ra.ra_pages / 4;
    Some(ra.window())
}

/// `do_async_mmap_readahead` on a mapped fault that found the page cached (first try
/// only): one hit for `mmap_miss`, and asynchronous readahead if the page carried
/// `PG_readahead` (`marked`; the caller clears it).
pub fn do_async_mmap_readahead(ra: &mut FileRaState, index: u64, marked: bool, cached: &impl Fn(u64) -> bool) -> Option<RaRequest> {
    if ra.ra_pages == 0 {
        return None;
    }
    ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
    if !marked {
        return None;
    }
    let req = ra.ra_pages;
    page_cache_async_ra(ra, index, req, cached)
}

/// `filemap_map_pages`' epilogue: the cached, non-workingset pages fault-around mapped
/// count as hits against `mmap_miss`.
pub fn fault_around_hits(ra: &mut FileRaState, hits: u32) {
    ra.mmap_miss = ra.mmap_miss.saturating_sub(hits);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page cache over `n` pages with `set` cached, applying requests as
    /// page_cache_ra_unbounded does and returning the marked index.
    struct Cache {
        cached: Vec<bool>,
        marked: Vec<bool>,
    }

    impl Cache {
        fn new(n: usize) -> Self {
            Cache { cached: vec![false; n], marked: vec![false; n] }
        }
        fn apply(&mut self, r: RaRequest) -> Vec<u64> {
            let (nr, mark) = r.clamp(self.cached.len() as u64);
            let mut read = Vec::new();
            for i in 0..nr {
                let idx = (r.index + i) as usize;
                if self.cached[idx] {
                    continue;
                }
                self.cached[idx] = true;
                self.marked[idx] = i == mark;
                read.push(idx as u64);
            }
            read
        }
        fn is_cached(&self) -> impl Fn(u64) -> bool + '_ {
            |i| self.cached.get(i as usize).copied().unwrap_or(false)
        }
    }

    #[test]
    fn init_and_next_sizes_follow_the_kernel_table() {
        // 128 KiB = 32 pages: a 1-page read starts at 4 (x4 while <= max/32), ramps x4
        // below max/16, then x2 up to max.
        assert_eq!(get_init_ra_size(1, 32), 4);
        assert_eq!(get_init_ra_size(3, 32), 8);
        assert_eq!(get_init_ra_size(8, 32), 16);
        assert_eq!(get_init_ra_size(16, 32), 32);
        let mut ra = FileRaState::new(32);
        for (cur, next) in [(1, 4), (2, 4), (4, 8), (8, 16), (16, 32), (32, 32)] {
            ra.size = cur;
            assert_eq!(get_next_ra_size(&ra, 32), next, "from {cur}");
        }
    }

    #[test]
    fn a_sequential_read_ramps_up_and_is_served_asynchronously() {
        // read() of pages 0, 1, 2, … with read_ahead_kb = 128: the first miss reads 0..4
        // marking 1; each marked page pushes the window (4..12 marked 4, 12..28 marked 12,
        // 28..60 marked 28, then 32-page windows), so no later read misses.
        let mut c = Cache::new(200);
        let mut ra = FileRaState::new(32);
        let mut misses = 0;
        let mut windows = Vec::new();
        for i in 0..150u64 {
            if !c.cached[i as usize] {
                misses += 1;
                let r = page_cache_sync_ra(&mut ra, i, 1, &c.is_cached());
                c.apply(r);
            }
            if c.marked[i as usize] {
                c.marked[i as usize] = false;
                let r = page_cache_async_ra(&mut ra, i, 1, &c.is_cached()).expect("sequential");
                windows.push((r.index, r.nr_to_read));
                c.apply(r);
            }
            ra.prev_pos = (i + 1) * 4096;
        }
        assert_eq!(misses, 1);
        assert_eq!(&windows[..4], &[(4, 8), (12, 16), (28, 32), (60, 32)]);
    }

    #[test]
    fn random_reads_read_one_page_and_keep_the_state() {
        let mut c = Cache::new(1000);
        let mut ra = FileRaState::new(32);
        ra.prev_pos = 500 * 4096;
        let before = ra;
        let r = page_cache_sync_ra(&mut ra, 100, 1, &c.is_cached());
        assert_eq!(r, RaRequest { index: 100, nr_to_read: 1, lookahead: 0 });
        assert_eq!(ra, before);
        // With 5 cached pages before it, the history says "stream": a window of 6, marker
        // on its last page.
        for i in 195..200 {
            c.cached[i] = true;
        }
        let r = page_cache_sync_ra(&mut ra, 200, 1, &c.is_cached());
        assert_eq!(r, RaRequest { index: 200, nr_to_read: 6, lookahead: 1 });
        assert_eq!(c.apply(r), vec![200, 201, 202, 203, 204, 205]);
        assert!(c.marked[205]);
    }

    #[test]
    fn prev_miss_scans_down_and_reports_the_start_of_file() {
        let cached = |i: u64| i < 10;
        assert_eq!(page_cache_prev_miss(20, 32, &cached), 20);
        assert_eq!(page_cache_prev_miss(9, 32, &cached), u64::MAX);
        assert_eq!(page_cache_prev_miss(9, 4, &cached), 6);
        let cached = |i: u64| (5..10).contains(&i);
        assert_eq!(page_cache_prev_miss(9, 32, &cached), 4);
        assert_eq!(page_cache_next_miss(5, 32, &cached), 10);
        assert_eq!(page_cache_next_miss(5, 3, &cached), 8);
    }

    #[test]
    fn read_around_is_centred_and_stops_after_lots_of_misses() {
        let mut ra = FileRaState::new(32);
        let r = do_sync_mmap_readahead(&mut ra, 100).unwrap();
        assert_eq!(r, RaRequest { index: 84, nr_to_read: 32, lookahead: 8 });
        // The marker lands on page 84 + 32 - 8 = 108.
        assert_eq!(r.clamp(1000), (32, 24));
        // Near the start of the file the window starts at 0; at the end it is clamped.
        assert_eq!(do_sync_mmap_readahead(&mut ra, 3).unwrap().index, 0);
        assert_eq!(RaRequest { index: 90, nr_to_read: 32, lookahead: 8 }.clamp(100), (10, 2));
        assert_eq!(RaRequest { index: 90, nr_to_read: 32, lookahead: 16 }.clamp(100).1, 10u64.wrapping_sub(16));
        // 101 net misses turn read-around off; hits from fault-around turn it back on.
        let mut ra = FileRaState::new(32);
        for _ in 0..100 {
            assert!(do_sync_mmap_readahead(&mut ra, 500).is_some());
        }
        assert!(do_sync_mmap_readahead(&mut ra, 500).is_none());
        fault_around_hits(&mut ra, 5);
        assert!(do_sync_mmap_readahead(&mut ra, 500).is_some());
        assert_eq!(FileRaState::new(0).ra_pages, 0);
        assert!(do_sync_mmap_readahead(&mut FileRaState::new(0), 5).is_none());
    }

    #[test]
    fn fadvise_random_reads_the_request_and_sequential_doubles_the_window() {
        let c = Cache::new(100);
        let mut ra = FileRaState::with_advice(32, reclaimlab_trace::FileRange::FADV_RANDOM);
        // Even a read at offset 0, which starts a window otherwise, reads only the request.
        assert_eq!(page_cache_sync_ra(&mut ra, 0, 6, &c.is_cached()), RaRequest { index: 0, nr_to_read: 6, lookahead: 0 });
        let mut ra = FileRaState::with_advice(32, reclaimlab_trace::FileRange::FADV_SEQUENTIAL);
        assert_eq!(ra.ra_pages, 64);
        assert_eq!(page_cache_sync_ra(&mut ra, 0, 32, &c.is_cached()).nr_to_read, 64);
    }

    #[test]
    fn no_readahead_reads_the_one_page() {
        let c = Cache::new(10);
        let mut ra = FileRaState::new(0);
        assert_eq!(page_cache_sync_ra(&mut ra, 0, 1, &c.is_cached()), RaRequest { index: 0, nr_to_read: 1, lookahead: 0 });
        assert!(page_cache_async_ra(&mut ra, 0, 1, &c.is_cached()).is_none());
    }

    #[test]
    fn an_unexpected_marker_sizes_the_window_from_the_cached_run() {
        // Interleaved streams: page 40 is marked but the state describes another stream;
        // pages 41..48 are cached, so the old async size was 8: the new window starts at 48
        // with get_next_ra_size(8 + 1).
        let mut c = Cache::new(200);
        for i in 40..48 {
            c.cached[i] = true;
        }
        let mut ra = FileRaState::new(32);
        ra.start = 100;
        ra.size = 16;
        ra.async_size = 16;
        let r = page_cache_async_ra(&mut ra, 40, 1, &c.is_cached()).unwrap();
        assert_eq!(r, RaRequest { index: 48, nr_to_read: 18, lookahead: 18 });
    }
}
