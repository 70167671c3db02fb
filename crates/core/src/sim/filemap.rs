//! The page cache's read side: a read() or mapped fault of a file page that is not
//! cached, with readahead (mm/filemap.c `filemap_get_pages`, `filemap_fault`; the window
//! arithmetic is mm/readahead.rs), a read() of a `PG_readahead` page, and fault-around
//! (mm/memory.c `do_fault_around`, mm/filemap.c `filemap_map_pages`). 6.12.117 as Debian
//! ships it; v6.15 has the same rules for files without large folios.
//!
//! The access loop calls in here only off its fast path. A page's file comes from the
//! trace's file table by binary search (faults only); per-file state is a flat vector.
//!
//! Abstractions (docs/model.md §6): every file is mapped whole by one mapping that starts
//! at a PMD-aligned address, so fault-around windows are aligned on file offsets; the
//! file's `prev_pos` is taken from the last read() of any file when a readahead decision
//! for it is made (exact while reads of different files do not interleave); I/O completes
//! at once (a read waits for its own window, asynchronous readahead costs the task
//! nothing, and no fault waits on a page still being read); a fault is not retried, so
//! `pgfault` counts one per fault where the kernel counts each attempt.

use super::engine::Machine;
use crate::error::Result;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::{is_resident, pg, pinfo, pte_info, PTRS_PER_PTE};
use crate::mm::page_alloc::Pfn;
use crate::mm::readahead::{self, FileRaState, RaRequest};
use crate::mm::vmstat::Ev;
use crate::policy::ReclaimPolicy;
use reclaimlab_trace::{flags, Access, FileRange, PAGE_SIZE};

/// Where a page sits in its file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loc {
    pub file: usize,
    /// Page id of the file's page 0.
    pub first: u32,
    /// The page's offset in pages.
    pub index: u64,
    /// The file's size in pages.
    pub nr_pages: u64,
}

impl Loc {
    fn page(&self, index: u64) -> usize {
        (self.first as u64 + index) as usize
    }

    /// The page-cache lookup readahead's decisions take: is page `index` of this file
    /// cached (`pte`: `Pages::pte`).
    fn cached<'a>(&self, pte: &'a [u32]) -> impl Fn(u64) -> bool + 'a {
        let l = *self;
        move |i| i < l.nr_pages && is_resident(pte[l.page(i)])
    }
}

/// An asynchronous readahead window in flight: pages `start..end` of a file, read by
/// `done` (workload clock, ns).
#[derive(Clone, Copy, Default)]
struct Window {
    start: u64,
    end: u64,
    done: u64,
}

/// Windows kept per file (asynchronous readahead pipelines one or two at a time).
const WINDOWS: usize = 4;

/// The trace's files and their readahead state.
pub(crate) struct Filemap {
    files: Vec<FileRange>,
    ra: Vec<FileRaState>,
    /// The last asynchronous windows of each file (a ring).
    windows: Vec<[Window; WINDOWS]>,
    /// Per read the disk serves at once (`block.parallel_reads`): when it has served
    /// every read it was given so far (ns).
    io_free: Vec<u64>,
    ra_pages: u64,
    fault_around_pages: u64,
    loaded: bool,
    /// The page of the last read(), `u32::MAX` before the first.
    pub last_read: u32,
    /// A marked page's fault: the window `do_async_mmap_readahead` decided (if any), read
    /// once the fault has mapped the page.
    pending: Option<(Loc, Option<RaRequest>)>,
}

impl Filemap {
    pub fn new(read_ahead_kb: u64, fault_around_bytes: u64, parallel_reads: u32) -> Self {
        Filemap {
            files: Vec::new(),
            ra: Vec::new(),
            windows: Vec::new(),
            io_free: vec![0; parallel_reads.max(1) as usize],
            ra_pages: read_ahead_kb >> (reclaimlab_trace::PAGE_SHIFT - 10),
            fault_around_pages: fault_around_bytes / PAGE_SIZE,
            loaded: false,
            last_read: u32::MAX,
            pending: None,
        }
    }

    /// Take the trace's file table (once, at the first batch). Returns one past the
    /// highest page id a bounded file declares.
    /// Whether any file of the trace has pages among page ids `first..end`.
    pub(super) fn overlaps(&self, first: u32, end: u32) -> bool {
        self.files.iter().any(|f| f.first < end && f.end() > first as u64)
    }

    pub fn load(&mut self, files: &[FileRange]) -> u64 {
        if !self.loaded {
            self.files = files.to_vec();
            self.ra = files.iter().map(|f| FileRaState::with_advice(self.ra_pages, f.advice)).collect();
            self.windows = vec![[Window::default(); WINDOWS]; files.len()];
            self.loaded = true;
        }
        self.files_end()
    }

    /// One past the highest page id a bounded file declares (0 without files).
    pub(super) fn files_end(&self) -> u64 {
        self.files.iter().filter(|f| f.nr_pages != u32::MAX).map(FileRange::end).max().unwrap_or(0)
    }

    /// Submit one read request to the disk at `now`: it takes `latency` on one of the
    /// disk's parallel reads, the one free at `now` that freed last (tasks on their own
    /// clocks, sim/tasks.rs, submit out of time order: the others stay free for a task
    /// behind), or else the first to free. Returns its completion time.
    fn submit_read(&mut self, now: u64, latency: u64) -> u64 {
        let idle = self.io_free.iter().enumerate().filter(|&(_, &f)| f <= now).max_by_key(|&(i, &f)| (f, std::cmp::Reverse(i))).map(|(i, _)| i);
        let i = idle.unwrap_or_else(|| self.io_free.iter().enumerate().min_by_key(|&(i, &f)| (f, i)).map_or(0, |(i, _)| i));
        self.io_free[i] = self.io_free[i].max(now) + latency;
        self.io_free[i]
    }

    /// Remember an asynchronous window of `file` completing at `done`.
    fn push_window(&mut self, file: usize, start: u64, end: u64, done: u64) {
        let ring = &mut self.windows[file];
        let oldest = (0..WINDOWS).min_by_key(|&i| ring[i].done).expect("WINDOWS > 0");
        ring[oldest] = Window { start, end, done };
    }

    /// When page `index` of `file`, read asynchronously, is read: its latest window's
    /// completion (0 once forgotten: long done).
    fn window_done(&self, file: usize, index: u64) -> u64 {
        self.windows[file].iter().filter(|w| w.start <= index && index < w.end).map(|w| w.done).max().unwrap_or(0)
    }

    /// The file and offset of `page`; None for a file page outside every declared file
    /// (a file of one page). `nr_ids` bounds a file that runs to the end of the id space.
    pub fn locate(&self, page: u32, nr_ids: usize) -> Option<Loc> {
        let file = self.files.partition_point(|f| f.first <= page).checked_sub(1)?;
        let f = &self.files[file];
        let end = if f.nr_pages == u32::MAX { nr_ids as u64 } else { f.end() };
        ((page as u64) < end).then(|| Loc { file, first: f.first, index: (page - f.first) as u64, nr_pages: end - f.first as u64 })
    }
}

impl<P: ReclaimPolicy> Machine<P> {
    /// A file page that is not cached. read(): `filemap_get_pages` → `page_cache_sync_ra`,
    /// then `folio_mark_accessed`. A mapped fault: `filemap_fault` → `do_sync_mmap_readahead`
    /// (one `pgmajfault`), after which the retried fault maps the page and, with
    /// fault-around, its cached neighbours.
    #[inline(never)]
    pub(super) fn file_fault(&mut self, a: Access, first: bool, rest: &[Access]) -> Result<()> {
        let memcg = self.cgroup_map[a.cgroup as usize];
        let syscall = a.flags & flags::SYSCALL != 0;
        if syscall && a.flags & flags::WRITE != 0 {
            return self.write_begin(a, memcg, first);
        }
        let loc = self.filemap.locate(a.page, self.mm.pages.len());
        let target = loc.map_or(0, |l| l.index);
        let req = match loc {
            None => RaRequest::page(0),
            Some(l) => {
                self.note_last_read();
                let cached = l.cached(&self.mm.pages.pte);
                let ra = &mut self.filemap.ra[l.file];
                if syscall {
                    let req_count = a.request_pages(rest).min(l.nr_pages - l.index);
                    readahead::page_cache_sync_ra(ra, l.index, req_count, &cached)
                } else {
                    readahead::do_sync_mmap_readahead(ra, l.index).unwrap_or(RaRequest::page(l.index))
                }
            }
        };
        if !syscall {
            self.count_fault(a, Ev::Pgfault);
            self.count_fault(a, Ev::Pgmajfault);
        }
        // The page itself as the fault installs it: referenced by this access (DAMON's
        // view), mapped young through a mapping.
        let target_flags = pg::DAMON_ACCESSED | if syscall { 0 } else { pg::MAPPED | pg::YOUNG };
        let one = Loc { file: usize::MAX, first: a.page, index: 0, nr_pages: 1 };
        self.mm.in_lru_fault = !syscall;
        let read = self.ra_read_pages(loc.unwrap_or(one), req, memcg, Some((target, target_flags, a.flags & flags::WRITE != 0)), false);
        let read = read.and_then(|r| {
            if is_resident(self.mm.pages.pte[a.page as usize]) {
                return Ok(r);
            }
            // The window could not be read (no memory without retrying): the page alone,
            // with the fault's own allocation (`filemap_create_folio`, FGP_CREAT).
            let (_, restored) = self.add_folio(a.page, memcg, target_flags, a.flags & flags::WRITE != 0, false)?.expect("a retrying add returns a folio or an error");
            self.mm.vmstat.count(Ev::Pgpgin, 4);
            Ok((r.0 || restored, r.1 + 1))
        });
        self.mm.in_lru_fault = false;
        let (restored, _) = read?;
        let pfn = self.mm.pages.pte[a.page as usize];
        if syscall {
            // filemap_read marks the folio it copies from accessed.
            self.policy.folio_mark_accessed(&mut self.mm, pfn);
            self.filemap.last_read = a.page;
            // A marked page in the window just read starts the next one (after the
            // access, as for a cached page).
            if let Some(l) = loc {
                if self.mm.frames.test_and_clear(pfn, pg::READAHEAD) {
                    self.async_ra(l, a.request_pages(rest), memcg);
                }
            }
        } else if let Some(l) = loc {
            if self.filemap.fault_around_pages > 1 {
                self.fault_around(l);
            }
        }
        // One synchronous read of the window, queued behind the disk's asynchronous reads;
        // read_pages' PSI stall if it restored workingset folios.
        let (now, read_ns, major_ns) = (self.now, self.mm.cfg.cost.file_read_ns, self.mm.cfg.cost.major_fault_ns);
        let done = self.filemap.submit_read(now, read_ns);
        self.rec.off_cpu_ns += done - now;
        self.fault_done(memcg, major_ns + (done - now), true, restored, first)
    }

    /// A write() of a page that is not cached: `generic_perform_write` → `write_begin`
    /// (`__filemap_get_folio(FGP_WRITEBEGIN)` creates the folio), the copy, `write_end`
    /// dirtying it. A record is a whole page, and `ext4_block_write_begin` reads only the
    /// blocks a write covers partly, so nothing is read: no readahead, no `pgpgin`, no
    /// major fault. FGP_WRITEBEGIN has no FGP_ACCESSED, so the folio is not marked
    /// accessed, and its gfp has `__GFP_WRITE`, for which `filemap_add_folio` skips
    /// `workingset_refault` ("folios getting rewritten"): the shadow is dropped unread
    /// (fs/ext4/inode.c, include/linux/pagemap.h, mm/filemap.c, 6.12). The cost is an
    /// allocation (`cost.minor_fault_ns`).
    fn write_begin(&mut self, a: Access, memcg: MemcgId, first: bool) -> Result<()> {
        self.add_folio_gfp(a.page, memcg, pg::DAMON_ACCESSED, true, false, true)?.expect("a retrying add returns a folio or an error");
        self.fault_done(memcg, self.mm.cfg.cost.minor_fault_ns, false, false, first)
    }

    /// An access to a page whose asynchronous readahead may still be in flight: the task
    /// waits for its window's read (`folio_lock` / `folio_wait_locked` in
    /// `filemap_get_pages` and `filemap_fault`), then the page is an ordinary cached page.
    fn wait_inflight(&mut self, page: u32, pfn: Pfn) {
        self.mm.frames.clear(pfn, pg::INFLIGHT);
        let Some(l) = self.filemap.locate(page, self.mm.pages.len()) else { return };
        let done = self.filemap.window_done(l.file, l.index);
        if done > self.now {
            self.rec.io_wait_ns += done - self.now;
            self.rec.off_cpu_ns += done - self.now;
            self.now = done;
        }
    }

    /// A mapped access to a cached file page that is not mapped (a minor fault):
    /// `do_read_fault` → fault-around; if that did not map the page (off, or the page
    /// carries `PG_readahead`), `filemap_fault` serves it from the cache and
    /// `do_async_mmap_readahead` counts a hit against `mmap_miss` — and for a marked page
    /// decides the next window, which [`Self::touch_readahead_page`] reads once the caller
    /// has mapped the page. `f` is the page's flags.
    #[inline(never)]
    pub(super) fn map_cached_file_page(&mut self, a: Access, f: u32) {
        self.count_fault(a, Ev::Pgfault);
        self.now += self.mm.cfg.cost.minor_fault_ns;
        let Some(l) = self.filemap.locate(a.page, self.mm.pages.len()) else { return };
        if self.filemap.fault_around_pages > 1 && self.fault_around(l) {
            return;
        }
        let cached = l.cached(&self.mm.pages.pte);
        let marked = f & pg::READAHEAD != 0;
        let req = readahead::do_async_mmap_readahead(&mut self.filemap.ra[l.file], l.index, marked, &cached);
        self.filemap.pending = marked.then_some((l, req));
    }

    /// An access to a page that is still being read (`INFLIGHT`) or carries
    /// `PG_readahead`: wait for its read (`folio_lock` in `filemap_get_pages` /
    /// `filemap_fault`), access it, then start the readahead the access calls for — after
    /// the access, since the kernel holds a reference on the page meanwhile, so the
    /// window's reclaim cannot take it: `filemap_readahead` → `page_cache_async_ra` for a
    /// read(), the window `do_async_mmap_readahead` decided for a mapped fault.
    #[inline(never)]
    pub(super) fn touch_readahead_page(&mut self, a: Access, pfn: Pfn, mut f: u32, rest: &[Access]) {
        if f & pg::INFLIGHT != 0 {
            self.wait_inflight(a.page, pfn);
            f &= !pg::INFLIGHT;
        }
        self.touch_resident(a, pfn, f);
        if f & pg::READAHEAD == 0 {
            return;
        }
        let memcg = self.cgroup_map[a.cgroup as usize];
        if a.flags & flags::SYSCALL != 0 {
            self.mm.frames.clear(pfn, pg::READAHEAD);
            if let Some(l) = self.filemap.locate(a.page, self.mm.pages.len()) {
                self.note_last_read();
                self.async_ra(l, a.request_pages(rest), memcg);
            }
        } else if let Some((l, req)) = self.filemap.pending.take() {
            // A mapped access that faulted (an access through an existing mapping does
            // not see the marker): page_cache_async_ra cleared the marker. Still in the
            // fault: the window's pages are added in fault.
            self.mm.frames.clear(pfn, pg::READAHEAD);
            if let Some(req) = req {
                self.mm.in_lru_fault = true;
                self.async_read(l, req, memcg);
                self.mm.in_lru_fault = false;
            }
        }
    }

    /// `page_cache_async_ra` from the marked page at `l.index`, reading the new window.
    fn async_ra(&mut self, l: Loc, req_count: u64, memcg: MemcgId) {
        let req = readahead::page_cache_async_ra(&mut self.filemap.ra[l.file], l.index, req_count, &l.cached(&self.mm.pages.pte));
        if let Some(req) = req {
            self.async_read(l, req, memcg);
        }
    }

    /// Read an asynchronous window: its pages are in the page cache at once but locked
    /// (`INFLIGHT`) until the disk serves the request; the task goes on. Readahead
    /// allocations never fail the read: an error only ends the window.
    fn async_read(&mut self, l: Loc, req: RaRequest, memcg: MemcgId) {
        if let Ok((_, nr)) = self.ra_read_pages(l, req, memcg, None, true) {
            if nr > 0 {
                let done = self.filemap.submit_read(self.now, self.mm.cfg.cost.file_read_ns);
                self.filemap.push_window(l.file, req.index, req.index + req.nr_to_read, done);
            }
        }
    }

    /// The file of the last read() gets its `prev_pos` (`ra->prev_pos = last_pos` at the
    /// end of `filemap_read`).
    fn note_last_read(&mut self) {
        let page = self.filemap.last_read;
        if page == u32::MAX {
            return;
        }
        if let Some(l) = self.filemap.locate(page, self.mm.pages.len()) {
            self.filemap.ra[l.file].prev_pos = (l.index + 1) * PAGE_SIZE;
        }
    }

    /// `page_cache_ra_unbounded` over `req` (clamped at the end of the file by
    /// `do_page_cache_ra`): add every page of the window that is not cached, the one at the
    /// marker with `PG_readahead`, each charged and allocated without retrying
    /// (`readahead_gfp_mask`); the first that cannot be ends the window (-ENOMEM).
    /// `target` is the faulting page's index, flags and write; `inflight` marks the pages
    /// `INFLIGHT` (an asynchronous window). Returns whether a page came back from the
    /// workingset, and the pages read.
    fn ra_read_pages(&mut self, l: Loc, req: RaRequest, memcg: MemcgId, target: Option<(u64, u32, bool)>, inflight: bool) -> Result<(bool, u64)> {
        let (nr, mark) = req.clamp(l.nr_pages);
        let (mut restored, mut read) = (false, 0);
        for i in 0..nr {
            let index = req.index + i;
            let page = l.page(index);
            if is_resident(self.mm.pages.pte[page]) {
                continue;
            }
            let (mut f, mut write) = (if i == mark { pg::READAHEAD } else { 0 } | if inflight { pg::INFLIGHT } else { 0 }, false);
            if let Some((t, tf, w)) = target {
                if t == index {
                    (f, write) = (f | tf, w);
                }
            }
            match self.add_folio(page as u32, memcg, f, write, true)? {
                Some((_, r)) => restored |= r,
                None => break,
            }
            self.mm.vmstat.count(Ev::Pgpgin, 4);
            read += 1;
        }
        Ok((restored, read))
    }

    /// `do_fault_around` → `filemap_map_pages`: map the cached pages of the
    /// `fault_around_bytes`-aligned window around the fault (within one page table and the
    /// file), except `PG_readahead` pages and pages already mapped. x86 makes every
    /// prefaulted PTE young: `mk_pte` takes `_PAGE_ACCESSED` from the vma's protection and
    /// `arch_wants_old_prefaulted_pte()` is false (mm/memory.c `set_pte_range`). Pages that
    /// are not workingset count as `mmap_miss` hits. Returns whether the faulting page was
    /// mapped.
    fn fault_around(&mut self, l: Loc) -> bool {
        let nr = self.filemap.fault_around_pages;
        let pte_off = l.index % PTRS_PER_PTE as u64;
        let from_pte = pte_off & !(nr - 1);
        let to_pte = (from_pte + nr).min(PTRS_PER_PTE as u64).min(pte_off + l.nr_pages - l.index) - 1;
        let (start, end) = (l.index - pte_off + from_pte, l.index - pte_off + to_pte);
        let (mut hits, mut mapped) = (0u32, false);
        for index in start..=end {
            let pfn = self.mm.pages.pte[l.page(index)];
            if !is_resident(pfn) {
                continue;
            }
            let f = self.mm.frames.flags(pfn);
            if f & (pg::READAHEAD | pg::SWAPBACKED) != 0 {
                continue;
            }
            // next_uptodate_folio skips a folio still being read (locked, not uptodate).
            if f & pg::INFLIGHT != 0 {
                if self.filemap.window_done(l.file, index) > self.now {
                    continue;
                }
                self.mm.frames.clear(pfn, pg::INFLIGHT);
            }
            if f & pg::WORKINGSET == 0 {
                hits += 1;
            }
            if f & pg::MAPPED == 0 {
                self.mm.frames.set(pfn, pg::MAPPED | pg::YOUNG | pg::DAMON_ACCESSED);
                mapped |= index == l.index;
            }
        }
        readahead::fault_around_hits(&mut self.filemap.ra[l.file], hits);
        mapped
    }

    /// Charge, allocate and install a folio for `page` with `flags` (a write dirties
    /// it), then `workingset_refault` from the shadow its slot holds and `folio_add_lru`.
    /// `noretry` is readahead's `__GFP_NORETRY`: where a fault would reclaim on or OOM
    /// (an error), it gives up (None). Returns the frame and whether the refault restored
    /// a workingset folio. On failure the machine is as it was.
    pub(super) fn add_folio(&mut self, page: u32, memcg: MemcgId, flags: u32, write: bool, noretry: bool) -> Result<Option<(Pfn, bool)>> {
        self.add_folio_gfp(page, memcg, flags, write, noretry, false)
    }

    /// [`Self::add_folio`]; `gfp_write` is `__GFP_WRITE`, with which `filemap_add_folio`
    /// replaces the shadow without `workingset_refault`.
    fn add_folio_gfp(&mut self, page: u32, memcg: MemcgId, flags: u32, write: bool, noretry: bool, gfp_write: bool) -> Result<Option<(Pfn, bool)>> {
        let p = page as usize;
        let touched = pte_info(self.mm.pages.pte[p]) & pinfo::TOUCHED != 0;
        let charged = if noretry { Ok(self.try_charge_noretry(memcg)) } else { self.try_charge(memcg).map(|_| true) };
        let pfn = match charged {
            Ok(true) => match self.alloc_page_gfp(memcg, noretry) {
                Ok(Some(pfn)) => Ok(Some(pfn)),
                other => {
                    self.mm.memcgs[memcg as usize].usage -= 1;
                    other
                }
            },
            Ok(false) => Ok(None),
            Err(e) => Err(e),
        };
        let pfn = match pfn {
            Ok(Some(pfn)) => pfn,
            other => return other.map(|_| None),
        };
        // The slot is read once the folio is allocated, as `__filemap_add_folio` reads it
        // under the xarray lock: the reclaim the allocation ran may have freed its shadow
        // node. Only a page evicted before can have left a shadow in its slot.
        let shadow = if touched { self.mm.pages.take_shadow(p) } else { 0 };
        self.mm.pages.pte[p] = pfn;
        self.mm.pages.pmd_populated[p / PTRS_PER_PTE] = true;
        if !touched {
            // Resident for the first time (the footprint with unlimited memory).
            self.rec.touched_pages += 1;
        }
        self.mm.frames.install(pfn, page, memcg, flags);
        if flags & pg::SWAPBACKED == 0 {
            // __filemap_add_folio's xas_store: the folio replaces the shadow or fills an
            // empty slot; a new node is charged to the task's memcg (workingset_update_node).
            let lv = self.mm.lruvec_id(memcg, self.mm.node_of(pfn));
            self.mm.page_cache_insert(page, shadow != 0, lv);
            self.procs.page_cache_inserted(page);
        }
        if write {
            self.mark_dirty(pfn);
        }
        let restored = shadow != 0 && !gfp_write && self.policy.workingset_refault(&mut self.mm, pfn, shadow);
        self.policy.folio_add_lru(&mut self.mm, pfn);
        Ok(Some((pfn, restored)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_the_file_and_offset() {
        let mut m = Filemap::new(128, 65536, 1);
        let end = m.load(&[FileRange { name: "a".into(), first: 10, nr_pages: 5, advice: 0 }, FileRange { name: "b".into(), first: 20, nr_pages: u32::MAX, advice: 0 }]);
        assert_eq!(end, 15);
        assert!(m.locate(9, 100).is_none());
        let l = m.locate(12, 100).unwrap();
        assert_eq!((l.file, l.index, l.nr_pages), (0, 2, 5));
        assert!(m.locate(15, 100).is_none());
        let l = m.locate(30, 100).unwrap();
        assert_eq!((l.file, l.index, l.nr_pages), (1, 10, 80));
        assert!(m.locate(100, 100).is_none());
        assert_eq!((m.ra_pages, m.fault_around_pages), (32, 16));
    }
}
