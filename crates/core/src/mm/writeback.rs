//! Dirty page cache and its writeback (mm/page-writeback.c, fs/fs-writeback.c, mm/filemap.c
//! 6.12): the flusher, the disk's write queue, `PG_writeback` and its completion, and
//! `balance_dirty_pages`' throttling of writers.
//!
//! - **Flusher.** Every `vm.dirty_writeback_centisecs` (5 s) it writes back the file pages
//!   dirtied more than `vm.dirty_expire_centisecs` (30 s) ago (`wb_check_old_data_flush`);
//!   whenever NR_FILE_DIRTY exceeds the background threshold (`wb_over_bg_thresh`) it
//!   writes back the oldest until below (`wb_check_background_flush`); reclaim that finds
//!   only unqueued dirty file folios wakes it to write back everything
//!   (`wakeup_flusher_threads(WB_REASON_VMSCAN)`, [`Mm::wakeup_flusher_threads`]). It is a
//!   kernel thread of its own: it puts one page under writeback per `cost.flusher_page_ns`
//!   of its CPU (`ext4_writepages`: map the blocks, `folio_start_writeback`, add to the
//!   bio), oldest first, from when it is given the work; the pages behind stay dirty until
//!   their turn, so a reclaimer that woke it goes on meeting them dirty
//!   ([`Mm::flusher_submit_due`]). The block layer holds none back: the guest's virtio disk
//!   has 256 tags per hardware queue and takes requests of up to 1,280 KiB, and wbt's limit
//!   (16 requests, scaled to 192) is never reached (docs/validation.md, "The writer's
//!   flusher"), so the flusher's own pace is the only one modelled.
//! - **Writeback.** Writing a folio back clears `PG_dirty` and sets `PG_writeback`
//!   (NR_WRITEBACK; `pgpgout` at submission) and queues it on the disk, which writes one
//!   page per `cost.file_write_ns`, in order. At completion (`folio_end_writeback`)
//!   `PG_writeback` is cleared, NR_WRITTEN counted, and a folio reclaim marked
//!   `PG_reclaim` is rotated to the tail of the inactive list / oldest generation
//!   (`folio_rotate_reclaimable` → `lru_move_tail`, PGROTATED) unless dirty again — the
//!   engine applies completions through the policy ([`Mm::folio_end_writeback_due`]).
//! - **Throttling** ([`Mm::balance_dirty_pages`]): with dirty + writeback pages above the
//!   freerun ceiling `(thresh + bg_thresh) / 2`, a writer pauses per page it dirties
//!   `1 / task_ratelimit`, `task_ratelimit = dirty_ratelimit × pos_ratio` with the global
//!   control line's `pos_ratio_polynom` (1 at the setpoint halfway between freerun and the
//!   limit, 0 at the limit) and `dirty_ratelimit` the wb's rate limit, less the time the
//!   writer ran since its own last pause (`current->dirty_paused_when`: each task of a
//!   source of tasks has its own, sim/tasks.rs), each pause capped at `wb_max_pause` (from the writer's
//!   own wb's dirty + writeback pages); at or above the global limit it sleeps until
//!   enough writes complete; held at its memcg domain's limit it sleeps `wb_max_pause` and
//!   goes round again until its wb has at most `wb_stat_error()` such pages. Pauses and
//!   the flusher's intervals are jiffies of the kernel's clock (`sim.time_dilation`).
//! - **Rate limit** (`wb_update_dirty_ratelimit`): every `BANDWIDTH_INTERVAL` (200 ms) a
//!   throttled writer measures the wb's dirty rate since the last stamp; the balanced rate
//!   `task_ratelimit × write_bw / dirty_rate` is `write_bw / N` with N writers each at
//!   their limit, and `dirty_ratelimit` follows it in the kernel's filtered steps. It
//!   starts at the disk's bandwidth (one dirtier's balanced rate; the kernel starts at
//!   `INIT_BW`, 100 MB/s, and estimates the bandwidth), so a single writer is paced as
//!   before; stamps move on in free run as the writeback paths' `wb_update_bandwidth` do.
//!
//! Thresholds (`domain_dirty_limits`): `vm.dirty_bytes` / `vm.dirty_background_bytes` if
//! set, else `vm.dirty_ratio` / `vm.dirty_background_ratio` of `global_dirtyable_memory`
//! (free + file LRU pages + 1; no `totalreserve_pages`); `bg_thresh` is halved to below
//! `thresh` when not.
//!
//! Abstractions: the file system is ext4, which in 6.12 has no `->writepage`, so reclaim
//! never writes file folios itself (`pageout` returns PAGE_ACTIVATE): only the flusher
//! does. Dirty pages are queued in dirtying order (one queue, not per inode); a page
//! dirtied again while under writeback is requeued when that writeback completes. The
//! disk's write queue is separate from its read queue (sim/filemap.rs) and from swap. A
//! non-root memcg's writer is also throttled against its own domain (`mdtc`, cgroup
//! writeback), but its wb writes the oldest dirty pages of any memcg (one queue). No
//! per-wb share of the thresholds (`wb_position_ratio`'s wb part), no write bandwidth
//! estimation (`avg_write_bandwidth` is the disk's), `hard_dirty_limit` is the threshold
//! (no slowly following `dom->dirty_limit`), `balance_dirty_pages` runs on every page
//! dirtied rather than every `nr_dirtied_pause` pages (the same pauses in total), and a
//! task's first page dirtied above the freerun ceiling counts its think time from 0 (the
//! kernel, with no `dirty_paused_when` yet, pauses it one period).

use super::page::{is_resident, pg};
use super::page_alloc::Pfn;
use super::vmstat::Ev;
use super::Mm;
use std::collections::VecDeque;

/// Debian's `CONFIG_HZ`.
const HZ: u64 = 250;
/// `MAX_PAUSE` in jiffies (mm/page-writeback.c: `max(HZ/5, 1)`).
const MAX_PAUSE: u64 = HZ / 5;
/// One jiffy on the kernel's clock (ns).
const JIFFY_NS: u64 = 1_000_000_000 / HZ;
/// `wb_stat_error()` (include/linux/backing-dev.h 6.12): `nr_cpu_ids * WB_STAT_BATCH`,
/// `WB_STAT_BATCH = 8 * (1 + ilog2(nr_cpu_ids))`, for the validation guest's 2 CPUs.
const WB_STAT_ERROR: u64 = 2 * 8 * (1 + 1);
/// `RATELIMIT_CALC_SHIFT`.
const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `BANDWIDTH_INTERVAL` in jiffies (`max(HZ/5, 1)`): how often the rate limit is updated.
const BANDWIDTH_INTERVAL: u64 = HZ / 5;

#[derive(Default)]
pub struct Writeback {
    /// (page, time dirtied) in dirtying order; stale entries are skipped when popped.
    queue: VecDeque<(u32, u64)>,
    /// `NR_FILE_DIRTY`: resident dirty file pages.
    pub nr_dirty: u64,
    /// `NR_WRITEBACK`: folios under writeback.
    pub nr_writeback: u64,
    /// Folios under writeback and when their write completes, in completion order.
    inflight: VecDeque<(Pfn, u64)>,
    /// When the disk has written everything queued so far (ns).
    busy_until: u64,
    /// When the periodic flusher runs next (ns).
    pub next_run: u64,
    /// `current->dirty_paused_when` of each writing task (indexed by the task: a trace's
    /// one task is 0): its last pause ended then (ns). Grown when a task first dirties.
    dirty_paused_when: Vec<u64>,
    /// `wb->dirty_ratelimit`, `wb->balanced_dirty_ratelimit` (pages per second of the
    /// kernel's clock; 0 until the first throttled call sets both to the disk's bandwidth)
    /// and the bandwidth estimate's stamps: `bw_time_stamp` (ns) and `dirtied_stamp`
    /// against `dirtied`, the wb's `WB_DIRTIED` ([`Mm::wb_update_dirty_ratelimit`]).
    dirty_ratelimit: u64,
    balanced_dirty_ratelimit: u64,
    bw_time_stamp: u64,
    dirtied_stamp: u64,
    dirtied: u64,
    /// With `cost.flusher_page_ns`: what the flusher was asked to write and has not yet
    /// written ([`Mm::flusher_submit_due`]).
    work: FlushWork,
    /// With `cost.flusher_page_ns`: when the flusher puts its next page under writeback
    /// (u64::MAX: idle).
    next_submit: u64,
}

/// The flusher's work in progress when it takes `cost.flusher_page_ns` a page: a
/// `WB_start_all` work's pages left (`wb_check_start_all`: `nr_pages` the dirty pages when
/// woken, fs/fs-writeback.c 6.12) and whether background (or periodic) writeback runs, with
/// the memcg domain whose background threshold it also writes for.
#[derive(Default, Clone, Copy)]
struct FlushWork {
    start_all: u64,
    background: bool,
    memcg_bg: Option<(super::memcontrol::MemcgId, u64)>,
}

impl Writeback {
    pub fn new(first_run: u64) -> Self {
        Writeback { next_run: first_run, next_submit: u64::MAX, ..Default::default() }
    }

    /// When the next queued write completes or the flusher submits its next page
    /// (u64::MAX: neither).
    #[inline]
    pub fn next_done(&self) -> u64 {
        self.inflight.front().map_or(u64::MAX, |&(_, t)| t).min(self.next_submit)
    }

    /// Pages under writeback whose write has not completed (what the disk holds).
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// The folios whose writes complete by `end`, in completion order.
    pub fn done_by(&self, end: u64) -> impl Iterator<Item = Pfn> + '_ {
        self.inflight.iter().take_while(move |&&(_, t)| t <= end).map(|&(pfn, _)| pfn)
    }

    /// When the `n`-th write from now (1-based) completes, if that many are in flight.
    pub fn nth_done(&self, n: usize) -> Option<u64> {
        n.checked_sub(1).and_then(|i| self.inflight.get(i)).map(|&(_, t)| t)
    }
}

impl Mm {
    /// A clean resident file page was dirtied (`folio_account_dirtied`); the writer then
    /// goes through [`Mm::balance_dirty_pages`].
    #[inline]
    pub fn account_dirtied(&mut self, pfn: u32, now: u64) {
        self.frames.set(pfn, pg::DIRTY);
        self.wb.nr_dirty += 1;
        self.memcgs[self.frames.memcg(pfn) as usize].nr_dirty += 1;
        let node = self.node_of(pfn);
        self.nodes[node as usize].nr_write_pending += 1;
        self.vmstat.count(Ev::NrDirtied, 1);
        self.wb.dirtied += 1;
        self.wb.queue.push_back((self.frames.page(pfn), now));
    }

    /// The flusher writes a dirty file folio back at `now` (`folio_clear_dirty_for_io`,
    /// `folio_start_writeback`, `submit_bio` counting PGPGOUT): it is clean and under
    /// writeback until the disk has written it.
    pub fn folio_start_writeback(&mut self, pfn: Pfn, now: u64) {
        debug_assert!(self.frames.test(pfn, pg::DIRTY) && self.frames.is_file(pfn) && !self.frames.test(pfn, pg::WRITEBACK));
        self.frames.clear(pfn, pg::DIRTY);
        self.frames.set(pfn, pg::WRITEBACK);
        self.wb.nr_dirty -= 1;
        self.wb.nr_writeback += 1;
        let m = &mut self.memcgs[self.frames.memcg(pfn) as usize];
        m.nr_dirty -= 1;
        m.nr_writeback += 1;
        self.vmstat.count(Ev::Pgpgout, 4);
        let cost = self.cfg.cost.file_write_ns;
        self.io_write_ns += cost;
        self.wb.busy_until = self.wb.busy_until.max(now) + cost;
        self.wb.inflight.push_back((pfn, self.wb.busy_until));
    }

    /// The next write completed by `now`, if any (`folio_end_writeback`): `PG_writeback`
    /// cleared, NR_WRITTEN counted; a folio dirtied again meanwhile is queued for the
    /// flusher again. Returns the folio and whether it had `PG_reclaim` and is still a
    /// candidate for `folio_rotate_reclaimable` (on an LRU list, clean, evictable) — the
    /// caller moves it to the tail (the policy's `folio_rotate_reclaimable`).
    #[inline]
    pub fn folio_end_writeback_due(&mut self, now: u64) -> Option<(Pfn, bool)> {
        if self.wb.next_submit <= now {
            self.flusher_submit_due(now);
        }
        let &(pfn, done) = self.wb.inflight.front()?;
        if done > now {
            return None;
        }
        self.wb.inflight.pop_front();
        debug_assert!(self.frames.test(pfn, pg::WRITEBACK));
        let f = self.frames.flags(pfn);
        let rotate = f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::UNEVICTABLE) == 0 && f & pg::LRU != 0;
        self.frames.clear(pfn, pg::RECLAIM | pg::WRITEBACK);
        self.wb.nr_writeback -= 1;
        self.memcgs[self.frames.memcg(pfn) as usize].nr_writeback -= 1;
        let node = self.node_of(pfn);
        self.nodes[node as usize].nr_write_pending -= 1;
        self.vmstat.count(Ev::NrWritten, 1);
        if f & pg::DIRTY != 0 {
            self.wb.queue.push_back((self.frames.page(pfn), done));
        }
        Some((pfn, rotate))
    }

    /// `global_dirtyable_memory`: free pages and file LRU pages.
    fn global_dirtyable(&self) -> u64 {
        let file: u64 =
            (0..self.nr_nodes() as u16).map(|n| self.node_lru_pages(n, super::lruvec::LruList::InactiveFile) + self.node_lru_pages(n, super::lruvec::LruList::ActiveFile)).sum();
        self.total_free_pages() + file + 1
    }

    /// `domain_dirty_limits` of the global domain: (bg_thresh, thresh) in pages.
    pub fn dirty_limits(&self) -> (u64, u64) {
        let avail = self.global_dirtyable();
        self.domain_dirty_limits(avail, avail)
    }

    /// `domain_dirty_limits` of a domain with `avail` dirtyable pages: (bg_thresh,
    /// thresh). `vm.dirty_bytes` / `vm.dirty_background_bytes` if set, as their share of
    /// global dirtyable memory `g_avail` applied to `avail` (all of them for the global
    /// domain), else the ratios of `avail`; `bg_thresh` halved to below `thresh` when not.
    fn domain_dirty_limits(&self, avail: u64, g_avail: u64) -> (u64, u64) {
        const PAGE: u64 = reclaimlab_trace::PAGE_SIZE;
        let of = |bytes: u64, ratio: u64| {
            if bytes != 0 {
                (bytes.div_ceil(PAGE) as u128 * avail as u128 / g_avail as u128) as u64
            } else {
                ratio * PAGE / 100 * avail / PAGE
            }
        };
        let c = &self.cfg;
        let thresh = of(c.dirty_bytes, c.dirty_ratio);
        let bg = of(c.dirty_background_bytes, c.dirty_background_ratio);
        (if bg >= thresh { thresh / 2 } else { bg }, thresh)
    }

    /// The global domain: dirty + writeback pages and its limits.
    fn global_dirty_domain(&self) -> DirtyDomain {
        let (bg_thresh, thresh) = self.dirty_limits();
        DirtyDomain { dirty: self.wb.nr_dirty + self.wb.nr_writeback, bg_thresh, thresh, memcg: false }
    }

    /// The writeback domain of `memcg` (cgroup writeback: a non-root memcg's inodes are
    /// written through its own `bdi_writeback`, whose `mem_cgroup_wb_domain` throttles
    /// against the memcg's own dirtyable memory; mm/page-writeback.c 6.12).
    /// `mem_cgroup_wb_stats` gives its file LRU pages, dirty and writeback pages — the
    /// memcg's statistics as of the last flush (`memcg_page_state` after
    /// `mem_cgroup_flush_stats_ratelimited`, mm/memcontrol.c 6.12: up to `FLUSH_TIME` old)
    /// — and its headroom under memory.max/high (`page_counter_read`: exact);
    /// `mdtc_calc_avail` adds to its file pages the headroom up to the clean pages outside
    /// it. None for the root memcg (no cgroup domain).
    fn memcg_dirty_domain(&self, memcg: super::memcontrol::MemcgId) -> Option<DirtyDomain> {
        let m = &self.memcgs[memcg as usize];
        m.parent?;
        let filepages: u64 = (0..self.nr_nodes() as u16)
            .map(|n| {
                let l = &self.lruvecs[self.lruvec_id(memcg, n) as usize];
                l.stat.size[super::lruvec::LruList::InactiveFile as usize] + l.stat.size[super::lruvec::LruList::ActiveFile as usize]
            })
            .sum();
        let ceiling = m.max.min(m.high);
        let headroom = ceiling - ceiling.min(m.usage);
        let dirty = m.stat_nr_dirty + m.stat_nr_writeback;
        let g_avail = self.global_dirtyable();
        let g_dirty = self.wb.nr_dirty + self.wb.nr_writeback;
        let clean = filepages - filepages.min(dirty);
        let global_clean = g_avail - g_avail.min(g_dirty);
        let other_clean = global_clean - global_clean.min(clean);
        let (bg_thresh, thresh) = self.domain_dirty_limits(filepages + headroom.min(other_clean), g_avail);
        Some(DirtyDomain { dirty, bg_thresh, thresh, memcg: true })
    }

    /// Run the flusher at `now`: write back expired dirty pages, then the oldest until
    /// below the background threshold — and, for a memcg's wb (`memcg_bg`: the memcg and
    /// its domain's background threshold), until its own dirty pages are below that too
    /// (`wb_over_bg_thresh`). `periodic` advances the next periodic run. Abstraction: one
    /// queue in dirtying order, so a memcg's wb writes the oldest dirty pages of any memcg.
    /// With `cost.flusher_page_ns` the flusher starts that work now and does it a page at a
    /// time ([`Mm::flusher_submit_due`]).
    pub fn wb_writeback(&mut self, now: u64, periodic: bool, memcg_bg: Option<(super::memcontrol::MemcgId, u64)>) {
        if self.cfg.cost.flusher_page_ns != 0 {
            let w = &mut self.wb.work;
            w.background = true;
            w.memcg_bg = memcg_bg.or(w.memcg_bg);
            self.flusher_start(now);
        } else {
            let limits = self.wb_limits();
            while let Some(&(page, dirtied)) = self.wb.queue.front() {
                if !self.wb_writes_on(dirtied, now, memcg_bg, limits) {
                    break;
                }
                self.wb.queue.pop_front();
                self.write_queued(page, now);
            }
        }
        if periodic {
            self.wb.next_run = if self.cfg.dirty_writeback_ns == 0 { u64::MAX } else { now + self.timer_ns(self.cfg.dirty_writeback_ns).max(1) };
        }
    }

    /// Whether background or periodic writeback goes on at `now` with the oldest dirty page
    /// dirtied at `dirtied`: it has expired, the global dirty pages are above the background
    /// threshold, or (`memcg_bg`) the memcg domain is above its own (`wb_over_bg_thresh`).
    /// `limits`: [`Mm::wb_limits`], which writing pages back does not change.
    fn wb_writes_on(&self, dirtied: u64, now: u64, memcg_bg: Option<(super::memcontrol::MemcgId, u64)>, (expire, bg_thresh): (u64, u64)) -> bool {
        let expired = dirtied + expire <= now;
        // domain_over_bg_thresh of the memcg domain: its dirty pages as last flushed
        // (mem_cgroup_wb_stats), or the wb's own reclaimable pages (WB_RECLAIMABLE, exact;
        // the memcg's one wb takes the whole background threshold), above it.
        let memcg_over = memcg_bg.is_some_and(|(m, bg)| {
            let m = &self.memcgs[m as usize];
            m.stat_nr_dirty > bg || m.nr_dirty > bg
        });
        expired || self.wb.nr_dirty > bg_thresh || memcg_over
    }

    /// The dirty expiry interval and the global background threshold: dirty_expire_interval
    /// and dirty_writeback_interval are jiffies of the kernel's clock (`sim.time_dilation`).
    fn wb_limits(&self) -> (u64, u64) {
        (self.timer_ns(self.cfg.dirty_expire_ns), self.dirty_limits().0)
    }

    /// `wakeup_flusher_threads(WB_REASON_VMSCAN)` (mm/vmscan.c 6.12): `wb_start_writeback`
    /// with `WB_start_all` writes back every dirty page — at once, or with
    /// `cost.flusher_page_ns` a page at a time from `now`, as many as were dirty when woken.
    pub fn wakeup_flusher_threads(&mut self, now: u64) {
        if self.cfg.cost.flusher_page_ns != 0 {
            self.wb.work.start_all = self.wb.work.start_all.max(self.wb.nr_dirty);
            self.flusher_start(now);
            return;
        }
        while let Some((page, _)) = self.wb.queue.pop_front() {
            self.write_queued(page, now);
        }
    }

    /// The flusher, given work, starts at `now` unless already busy (then it goes on at its
    /// own pace), and submits what is due.
    fn flusher_start(&mut self, now: u64) {
        if self.wb.next_submit == u64::MAX {
            self.wb.next_submit = now;
        }
        self.flusher_submit_due(now);
    }

    /// The flusher's submissions due by `now` with `cost.flusher_page_ns` (0: none are
    /// pending): one dirty page after another, oldest first, each `cost.flusher_page_ns`
    /// after the last one it put under writeback, while a `WB_start_all` work has pages left
    /// or background writeback goes on ([`Mm::wb_writeback`]'s test at that instant); the
    /// pages behind stay dirty until their turn. Idle once its work is done. The kernel's
    /// flusher (`wb_writeback` → `writeback_sb_inodes` → `ext4_writepages`, fs/fs-writeback.c
    /// 6.12) marks each folio `PG_writeback` as it adds it to a bio; the block queue held none
    /// of them back in the guest (docs/validation.md, "The writer's flusher").
    #[cold]
    #[inline(never)]
    pub fn flusher_submit_due(&mut self, now: u64) {
        let cost = self.cfg.cost.flusher_page_ns.max(1);
        while self.wb.next_submit <= now {
            let t = self.wb.next_submit;
            let w = self.wb.work;
            let go = match self.wb.queue.front() {
                Some(&(_, dirtied)) => w.start_all > 0 || (w.background && self.wb_writes_on(dirtied, t, w.memcg_bg, self.wb_limits())),
                None => false,
            };
            if !go {
                self.wb.work = FlushWork::default();
                self.wb.next_submit = u64::MAX;
                break;
            }
            let (page, _) = self.wb.queue.pop_front().expect("a dirty page queued");
            if self.write_queued(page, t) {
                self.wb.work.start_all = w.start_all.saturating_sub(1);
                self.wb.next_submit = t + cost;
            }
        }
    }

    /// Write a page popped from the dirty queue if it is still a dirty resident file page;
    /// one already under writeback is skipped (WB_SYNC_NONE) and requeued at completion.
    /// Returns whether it was written.
    fn write_queued(&mut self, page: u32, now: u64) -> bool {
        let pfn = self.pages.pte[page as usize];
        let write = is_resident(pfn) && self.frames.is_file(pfn) && self.frames.flags(pfn) & (pg::DIRTY | pg::WRITEBACK) == pg::DIRTY;
        if write {
            self.folio_start_writeback(pfn, now);
        }
        write
    }

    /// `balance_dirty_pages` after the workload dirtied one page of `memcg` at `now`: how
    /// long the writer sleeps (`io_schedule_timeout`; not a memory stall) and whether it
    /// goes round the loop again after that sleep. Starts background writeback above
    /// either domain's background threshold. The writer is throttled by the stricter of
    /// the global domain and its memcg's (`mdtc`): free running while both are below their
    /// freerun point, held while either is at its limit, else paced by the smaller
    /// `pos_ratio`.
    ///
    /// The pauses are jiffies of the kernel's clock, so they shrink with
    /// `sim.time_dilation` like every kernel timer ([`Mm::timer_ns`]); `wb_max_pause` takes
    /// the writer's own wb's dirty + writeback pages (`dtc->wb_dirty`, the same wb for both
    /// domains: mm/page-writeback.c 6.12 `wb_dirty_limits`), and a writer held at a limit
    /// (`task_ratelimit` 0) sleeps `max_pause` and goes round again until its wb has no
    /// more than `wb_stat_error()` such pages (`again`).
    pub fn balance_dirty_pages(&mut self, memcg: super::memcontrol::MemcgId, task: usize, now: u64) -> DirtyPause {
        let global = self.global_dirty_domain();
        let mdtc = self.memcg_dirty_domain(memcg);
        let domains = [Some(global), mdtc];
        let all_freerun = domains.iter().flatten().all(|d| d.dirty <= d.freerun());
        // Background writeback of the writer's wb: started above the global background
        // threshold, or (even in laptop mode) when a domain is past its freerun point; it
        // writes while `wb_over_bg_thresh` (global or memcg domain above background).
        // Starting writes moves pages from dirty to writeback: no domain's dirty +
        // writeback, and so no limit below, changes until the disk completes them.
        if self.wb.nr_dirty > global.bg_thresh || !all_freerun {
            self.wb_writeback(now, false, mdtc.map(|d| (memcg, d.bg_thresh)));
        }
        if self.wb.dirty_paused_when.len() <= task {
            self.wb.dirty_paused_when.resize(task + 1, 0);
        }
        // wb's write bandwidth in pages per second of the kernel's clock (the disk's,
        // `sim.time_dilation` times slower than on the simulated clock).
        let write_ns = self.cfg.cost.file_write_ns.max(1);
        let bw = ((1e9 / (write_ns as f64 * self.cfg.time_dilation)) as u64).max(1);
        let interval = self.timer_ns(BANDWIDTH_INTERVAL * JIFFY_NS).max(1);
        if all_freerun {
            self.wb.dirty_paused_when[task] = now;
            // The writeback paths' `wb_update_bandwidth` (no rate limit update) keep the
            // stamps within an interval of now.
            if now >= self.wb.bw_time_stamp + interval {
                self.wb.bw_time_stamp = now;
                self.wb.dirtied_stamp = self.wb.dirtied;
            }
            return DirtyPause::NONE;
        }
        if self.wb.dirty_ratelimit == 0 {
            self.wb.dirty_ratelimit = bw;
            self.wb.balanced_dirty_ratelimit = bw;
        }
        if now >= self.wb.bw_time_stamp + interval {
            // __wb_update_bandwidth(gdtc, mdtc, true): the global domain, then the memcg's.
            let elapsed = now - self.wb.bw_time_stamp;
            for d in domains.iter().flatten() {
                self.wb_update_dirty_ratelimit(d, bw, elapsed);
            }
            self.wb.bw_time_stamp = now;
            self.wb.dirtied_stamp = self.wb.dirtied;
        }
        // wb_max_pause (6.12): wb_dirty / (1 + bw / roundup_pow_of_two(1 + HZ/8)) + 1
        // jiffies, at most MAX_PAUSE; bw is the wb's write bandwidth in pages per second of
        // the kernel's clock and wb_dirty the writer's wb's WB_RECLAIMABLE + WB_WRITEBACK:
        // the pages of the memcg whose inodes it writes (cgroup writeback), exact.
        let hz8 = (1 + HZ / 8).next_power_of_two();
        let m = &self.memcgs[memcg as usize];
        let wb_dirty = m.nr_dirty + m.nr_writeback;
        let max_pause = self.timer_ns((wb_dirty / (1 + bw / hz8) + 1).min(MAX_PAUSE) * JIFFY_NS).max(1);
        // Over a limit: pos_ratio 0 (task_ratelimit 0): sleep max_pause and go round again
        // unless wb_dirty is within wb_stat_error(). A memcg domain reads flushed
        // statistics, which completions do not change before the next flush.
        if domains.iter().flatten().any(|d| d.memcg && d.dirty >= d.limit()) {
            self.wb.dirty_paused_when[task] = now + max_pause;
            return DirtyPause { ns: max_pause, again: wb_dirty > WB_STAT_ERROR };
        }
        // The global domain's counts are exact: sleep until writeback has brought it below
        // the limit (completions are FIFO on the disk), as the max_pause loop would.
        let need = domains.iter().flatten().filter(|d| d.dirty >= d.limit()).map(|d| (d.dirty - d.limit() + 1) as usize).max();
        if let Some(need) = need {
            let pause = match self.wb.nth_done(need) {
                Some(t) => t.saturating_sub(now).max(1),
                None => max_pause,
            };
            self.wb.dirty_paused_when[task] = now + pause;
            return DirtyPause { ns: pause, again: false };
        }
        let pos = domains.iter().flatten().map(DirtyDomain::pos_ratio).min().expect("the global domain");
        // period = HZ * pages_dirtied / task_ratelimit, task_ratelimit = dirty_ratelimit *
        // pos_ratio: one page's worth at the wb's rate limit, on the simulated clock (the
        // disk's write time per page when the rate limit is its bandwidth), less the time
        // the writer spent since its own last pause; a writer slower than that is not
        // paused, its virtual pause time moves on (or is reset after 1 s behind).
        let period = if pos == 0 {
            max_pause
        } else {
            (((write_ns as u128) << RATELIMIT_CALC_SHIFT) * bw as u128 / (self.wb.dirty_ratelimit as u128 * pos as u128)).min(u64::MAX as u128) as u64
        };
        let paused_when = self.wb.dirty_paused_when[task];
        let think = now.saturating_sub(paused_when);
        if period <= think {
            self.wb.dirty_paused_when[task] = if think - period > self.timer_ns(1_000_000_000) { now } else { paused_when + period };
            return DirtyPause::NONE;
        }
        let pause = (period - think).min(max_pause);
        self.wb.dirty_paused_when[task] = now + pause;
        DirtyPause { ns: pause, again: false }
    }

    /// `wb_update_dirty_ratelimit` (mm/page-writeback.c 6.12) for domain `d`, `elapsed` ns
    /// of the simulated clock after the last stamp ([`update_dirty_ratelimit`]). `bw`: the
    /// disk's bandwidth in pages per second of the kernel's clock.
    fn wb_update_dirty_ratelimit(&mut self, d: &DirtyDomain, bw: u64, elapsed: u64) {
        // dirty_rate = dirtied * HZ / elapsed jiffies, on the kernel's clock.
        let kernel_ns = (elapsed as f64 * self.cfg.time_dilation).max(1.0);
        let dirty_rate = ((self.wb.dirtied - self.wb.dirtied_stamp) as f64 * 1e9 / kernel_ns) as u64;
        let (rate, balanced) = update_dirty_ratelimit(self.wb.dirty_ratelimit, self.wb.balanced_dirty_ratelimit, d, bw, dirty_rate);
        self.wb.dirty_ratelimit = rate;
        self.wb.balanced_dirty_ratelimit = balanced;
    }
}

/// `wb_update_dirty_ratelimit`'s arithmetic (mm/page-writeback.c 6.12): from the wb's
/// `dirty_ratelimit` and last `balanced_dirty_ratelimit`, domain `d`'s position, the write
/// bandwidth `write_bw` and the dirty rate measured since the last update (pages per
/// second), the next (`dirty_ratelimit`, `balanced_dirty_ratelimit`). The balanced rate is
/// `task_ratelimit × write_bw / dirty_rate` (`task_ratelimit = dirty_ratelimit × pos_ratio`):
/// with N tasks each throttled at it the wb dirties N × task_ratelimit, so it is
/// `write_bw / N`; `dirty_ratelimit` follows it in filtered steps, only while the dirty
/// pages are on the side of the setpoint that the step also corrects.
fn update_dirty_ratelimit(dirty_ratelimit: u64, last_balanced: u64, d: &DirtyDomain, write_bw: u64, dirty_rate: u64) -> (u64, u64) {
    let setpoint = (d.freerun() + d.limit()) / 2;
    let task_ratelimit = ((dirty_ratelimit as u128 * d.pos_ratio() as u128) >> RATELIMIT_CALC_SHIFT) as u64 + 1;
    let balanced = ((task_ratelimit as u128 * write_bw as u128 / (dirty_rate | 1) as u128) as u64).min(write_bw);
    let mut step = 0;
    if d.dirty < setpoint {
        let x = last_balanced.min(balanced).min(task_ratelimit);
        if dirty_ratelimit < x {
            step = x - dirty_ratelimit;
        }
    } else {
        let x = last_balanced.max(balanced).max(task_ratelimit);
        if dirty_ratelimit > x {
            step = dirty_ratelimit - x;
        }
    }
    // Slow down near the target: step >> (dirty_ratelimit / (2 step + 1)), / 8.
    let shift = dirty_ratelimit / (2 * step + 1);
    step = if shift < 64 { (step >> shift).div_ceil(8) } else { 0 };
    let next = if dirty_ratelimit < balanced { dirty_ratelimit + step } else { dirty_ratelimit - step.min(dirty_ratelimit) };
    (next.max(1), balanced)
}

/// What `balance_dirty_pages` asks of the writer: sleep `ns`, then, if `again`, go
/// through it once more (the kernel's `for (;;)` after a `task_ratelimit` 0 pause).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyPause {
    pub ns: u64,
    pub again: bool,
}

impl DirtyPause {
    pub const NONE: DirtyPause = DirtyPause { ns: 0, again: false };
}

/// A writeback domain (`struct dirty_throttle_control`): its dirty + writeback pages and
/// its limits, in pages.
#[derive(Clone, Copy)]
struct DirtyDomain {
    dirty: u64,
    bg_thresh: u64,
    thresh: u64,
    /// A memcg's domain (its figures are the memcg statistics as last flushed).
    memcg: bool,
}

impl DirtyDomain {
    /// `dirty_freerun_ceiling`: below it the domain does not throttle.
    fn freerun(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }

    /// The limit, at least one page above the freerun ceiling.
    fn limit(&self) -> u64 {
        self.thresh.max(self.freerun() + 1)
    }

    /// `pos_ratio_polynom` between the freerun ceiling and the limit: 1 + ((setpoint −
    /// dirty) / (limit − setpoint))³, in 2^-RATELIMIT_CALC_SHIFT units, clamped to [0, 2].
    /// Below the freerun ceiling: 2 (the domain does not throttle).
    fn pos_ratio(&self) -> i64 {
        if self.dirty <= self.freerun() {
            return 2 << RATELIMIT_CALC_SHIFT;
        }
        let (limit, dirty) = (self.limit(), self.dirty);
        let setpoint = (self.freerun() + limit) / 2;
        let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT) / ((limit - setpoint) as i64 | 1);
        let mut pos = x;
        pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
        pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
        (pos + (1 << RATELIMIT_CALC_SHIFT)).clamp(0, 2 << RATELIMIT_CALC_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N writers that each dirty as fast as `balance_dirty_pages` lets them (dd), in 1 ms
    /// steps: the wb's dirty pages grow by what they dirtied less what the disk wrote, and
    /// `wb_update_dirty_ratelimit` runs every 200 ms (`BANDWIDTH_INTERVAL`) on the rate
    /// they dirtied at meanwhile. From the
    /// disk's bandwidth (one writer's rate) the rate limit settles at `write_bw / N`
    /// ("around (write_bw / N) when there are N dd tasks", mm/page-writeback.c 6.12), and
    /// the dirty pages between the freerun ceiling and the limit, so that N writers
    /// together dirty what the disk writes.
    #[test]
    fn the_rate_limit_settles_at_the_bandwidth_shared_by_the_dirtiers() {
        let write_bw = 25_600u64; // 100 MB/s in pages
        for n in [1u64, 4, 16, 96] {
            let mut d = DirtyDomain { dirty: 16_000, bg_thresh: 10_000, thresh: 20_000, memcg: false };
            let (mut rate, mut balanced) = (write_bw, write_bw);
            let mut dirty = d.dirty as f64;
            let mut last_rate = 0.0;
            for _ in 0..1500 {
                // 200 steps of 1 ms: the writers dirty at their current task_ratelimit.
                let mut dirtied = 0.0;
                for _ in 0..200 {
                    let task_ratelimit = (rate * d.pos_ratio() as u64) >> RATELIMIT_CALC_SHIFT;
                    dirtied += (n * task_ratelimit) as f64 * 0.001;
                    dirty = (dirty + ((n * task_ratelimit) as f64 - write_bw as f64) * 0.001).max(0.0);
                    d.dirty = dirty as u64;
                }
                last_rate = dirtied / 0.2;
                (rate, balanced) = update_dirty_ratelimit(rate, balanced, &d, write_bw, last_rate as u64);
            }
            let share = write_bw / n;
            // Not exactly: the kernel stops stepping near the balanced rate ("Don't pursue
            // 100% rate matching") and pos_ratio makes up the rest.
            assert!(rate.abs_diff(share) * 100 <= share * 15, "{n} writers: rate limit {rate}, write_bw / N {share}");
            assert!((last_rate - write_bw as f64).abs() <= write_bw as f64 * 0.03, "{n} writers dirty {last_rate} pages/s");
            assert!(d.dirty > d.freerun() && d.dirty < d.limit(), "{n} writers: {} dirty", d.dirty);
        }
    }
}
