//! Seed 003's workloads as programs on the one machine (sim/process.rs): tasks that map,
//! fault and unmap through the engine's fault path, under any reclaim policy.
//!
//! `thpscale` (mmtests `global-dhp__workload_thpscale[-madvhugepage]`, shellpack
//! `thpscale-bench` + `thpscale.c`): the thread counts run one after another on one
//! machine, `drop_caches` before each; each run's threads fill an anonymous region, unmap
//! the first half of every huge page, read a file's pages into the page cache, then fault
//! a second region (`MADV_HUGEPAGE` if asked) one huge-page stride at a time, each stride
//! timed (fault + 2 MiB write) and classified huge or base (mmtests'
//! `fault-huge`/`fault-base`, in µs). See [`thpscale`].
//!
//! `usemem-stress-numa-compact` (mmtests `global-dhp__workload_usemem-stress-numa-compact`):
//! page cache fills `cache_pct` of every node (one reader per node loads its contiguous
//! share of a file through a shared mapping, as guest/thp.c does), then `threads` usemem tasks on node 0 each
//! fault their share of an anonymous region larger than a node (`usemem_pct` of memory)
//! and write it `passes` times; each write of a page costs `cost.access_ns`, plus
//! `numa.remote_access_ns` on a remote node and `cost.tlb_miss_ns` when not under a THP.
//! Elapsed = the last task's clock (s). defrag=always.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::mm::page::{is_resident, pg};
use crate::mm::page_alloc::{ZoneType, MIGRATE_TYPES, NR_PAGE_ORDERS};
use crate::policy::ReclaimPolicy;
use crate::sim::engine::Machine;
use crate::sim::process::{program_machine, Fault};
use crate::sim::Engine;
use crate::thp::{numa, HPAGE_PMD_NR};

/// The one machine, its reclaim policy chosen by name (sim/process.rs).
type M = Machine<Box<dyn ReclaimPolicy>>;

/// Seed 003's thread counts, in the order mmtests runs them.
pub const THPSCALE_THREADS: &[u32] = &[1, 3, 5, 7, 12, 18, 24, 30, 32];

/// Parameters of one `thpscale` benchmark: every thread count, one after another, on one
/// machine (mmtests' `thpscale-bench` loops over the thread counts within one boot).
#[derive(Clone, Debug)]
pub struct ThpscaleParams {
    /// Thread counts, in the order they run.
    pub threads: Vec<u32>,
    /// `MADV_HUGEPAGE` on the second mapping (`THPSCALE_MADV_HUGEPAGE`).
    pub madvise: bool,
    /// `THPSCALE_MAPSIZE` in % of memory (`config-workload-thpscale`: `MEMTOTAL_BYTES*8/10`).
    pub mapsize_pct: u32,
    /// The work file stays mapped from one thread count to the next, as the validation
    /// guest's `guest/thp.c` keeps its `data_map`, so `drop_caches` leaves the pages the
    /// previous count mapped. `false` (mmtests): each count's `thpscale.c` process maps the
    /// file and exits, and `drop_caches` finds it unmapped.
    pub file_stays_mapped: bool,
}

impl Default for ThpscaleParams {
    fn default() -> Self {
        ThpscaleParams { threads: THPSCALE_THREADS.to_vec(), madvise: true, mapsize_pct: 80, file_stays_mapped: false }
    }
}

/// What one thread count of `thpscale` measured.
#[derive(Clone, Debug, Default)]
pub struct ThpscaleResult {
    pub threads: u32,
    /// Latencies (µs) of the strides whose first fault got a base page / a THP: the fault
    /// plus the write of the 2 MiB (thpscale.c's `fault` lines).
    pub fault_base_us: Vec<f64>,
    pub fault_huge_us: Vec<f64>,
    /// Counter increments during this thread count (mmtests' monitor pre/post hooks).
    pub counters: Vec<(String, u64)>,
    /// Simulated seconds of the measured phase.
    pub elapsed_s: f64,
    /// Simulated seconds of the whole count, `drop_caches` to exit (the guest's phase).
    pub count_s: f64,
    /// Each zone's free memory just after the count's `drop_caches`: what the counts
    /// before left it (guest/thp.c prints the same as `@@freelist countN`/`@@zoneblocks`).
    pub free_at_start: Vec<ZoneFree>,
    /// CPU seconds every kswapd ran during the count.
    pub kswapd_cpu_s: f64,
}

/// A zone's free blocks per order (`/proc/buddyinfo`, the per-CPU lists not included) and
/// its pageblocks per migrate type (`/proc/pagetypeinfo`'s "Number of blocks type").
#[derive(Clone, Debug, Default)]
pub struct ZoneFree {
    pub node: u16,
    /// `DMA`, `DMA32`, `Normal` or `Movable` (the model calls the guest's DMA32 Normal).
    pub zone: &'static str,
    pub nr_free: [u64; NR_PAGE_ORDERS],
    /// Unmovable, Movable, Reclaimable, HighAtomic.
    pub pageblocks: [u64; MIGRATE_TYPES],
}

/// Every zone's [`ZoneFree`] now, node by node, lowest zone first.
fn zones_free(m: &M) -> Vec<ZoneFree> {
    let mut out = Vec::new();
    for node in &m.mm.nodes {
        for &z in node.zones.iter().rev() {
            let b = &m.mm.buddy;
            let zone = match b.zones[z].zone_type {
                ZoneType::Dma => "DMA",
                ZoneType::Dma32 => "DMA32",
                ZoneType::Normal => "Normal",
                ZoneType::Movable => "Movable",
            };
            out.push(ZoneFree { node: node.id, zone, nr_free: b.nr_free_by_order(z), pageblocks: b.zones[z].nr_pageblocks });
        }
    }
    out
}

impl ThpscaleResult {
    pub fn huge_pct(&self) -> f64 {
        let n = self.fault_base_us.len() + self.fault_huge_us.len();
        if n == 0 {
            0.0
        } else {
            100.0 * self.fault_huge_us.len() as f64 / n as f64
        }
    }
}

/// One step of a task's program.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Access a page (`write`: a store).
    Touch { page: u32, write: bool },
    /// thpscale's measured step: store to the first byte of a huge-page stride (the fault,
    /// huge or base), then `memset` the whole 2 MiB; the latency covers both.
    Stride(u32),
    /// `munmap` of part of an anonymous mapping (`first..first + n`).
    Unmap { first: u32, n: u32 },
    /// `munmap` of a whole VMA.
    UnmapVma(usize),
}

/// The index into `tasks` of the task with the earliest clock among those with work
/// left (`pending(i)`); on a tie the first.
fn earliest(m: &M, tasks: &[usize], pending: impl Fn(usize) -> bool) -> Option<usize> {
    (0..tasks.len()).filter(|&i| pending(i)).min_by_key(|&i| m.procs.tasks[tasks[i]].clock)
}

/// Run the tasks' programs, always the task with the earliest clock next. Returns the
/// strides' (latency µs, huge) per task, in order.
fn run_programs(m: &mut M, tasks: &[usize], progs: &[Vec<Op>]) -> Result<Vec<Vec<(f64, bool)>>> {
    let mut pos = vec![0usize; tasks.len()];
    let mut strides = vec![Vec::new(); tasks.len()];
    loop {
        let Some(i) = earliest(m, tasks, |i| pos[i] < progs[i].len()) else { return Ok(strides) };
        let t = tasks[i];
        match progs[i][pos[i]] {
            Op::Touch { page, write } => {
                m.touch(t, page, write)?;
            }
            Op::Stride(first) => {
                let (f, mut lat) = m.touch(t, first, true)?;
                for p in first + 1..first + HPAGE_PMD_NR {
                    lat += m.touch(t, p, true)?.1;
                }
                strides[i].push((lat as f64 / 1000.0, f == Fault::Huge));
            }
            Op::Unmap { first, n } => {
                m.run_until(m.procs.tasks[t].clock)?;
                m.munmap_range(first, n);
            }
            Op::UnmapVma(v) => {
                m.run_until(m.procs.tasks[t].clock)?;
                m.munmap(v);
            }
        }
        pos[i] += 1;
    }
}

/// Run tasks `tasks` over their page lists, always the task with the earliest clock next:
/// a store to each page if `write`, else a load. `on_fault(task, fault, latency)` sees
/// every access.
fn interleave(m: &mut M, tasks: &[usize], work: &[Vec<u32>], write: bool, mut on_fault: impl FnMut(&mut M, usize, u32, Fault, u64)) -> Result<()> {
    let mut pos = vec![0usize; tasks.len()];
    loop {
        let Some(i) = earliest(m, tasks, |i| pos[i] < work[i].len()) else { return Ok(()) };
        let page = work[i][pos[i]];
        pos[i] += 1;
        let (f, lat) = m.touch(tasks[i], page, write)?;
        on_fault(m, i, page, f, lat);
    }
}

/// Align all task clocks to the latest (a barrier between phases).
fn barrier(m: &mut M) -> u64 {
    let t = m.procs.tasks.iter().map(|t| t.clock).max().unwrap_or(0);
    for task in &mut m.procs.tasks {
        task.clock = t;
    }
    t
}

/// Counter increments from `before` to `after` (same names, same order).
fn counter_delta(before: &[(String, u64)], after: Vec<(String, u64)>) -> Vec<(String, u64)> {
    after.into_iter().zip(before).map(|((k, a), (_, b))| (k, a - b)).collect()
}

/// mmtests `thpscale-bench` on one machine: the work file is created once
/// (`create_random_file` of `THPSCALE_MAPSIZE + 16 MiB`, here a file VMA whose pages
/// are read on demand), then for each thread count, in order: `echo 3 >
/// /proc/sys/vm/drop_caches`, and one `thpscale NR_THREADS THPSCALE_MAPSIZE workfile
/// MADV` process (thpscale.c) whose threads, spread over the nodes, each
///
/// 1. `mmap` an anonymous `thread_size = (total / nr_threads) & ~(2 MiB - 1)` and
///    `memset` it;
/// 2. `munmap` the first half of every aligned 2 MiB of it ("punch holes");
/// 3. `mmap` a second region of `thread_size / 2 + 2 MiB`, `MADV_HUGEPAGE` if asked;
/// 4. read `thread_size / 4` of the file at offset `thread_size * idx` through a
///    `MAP_SHARED` mapping;
/// 5. wait at a barrier, then fault `nr_hpages = total / nr_threads / 2 MiB / 2` strides
///    of the second region: store one byte, `mincore` (huge or base), `memset` the 2 MiB,
///    each timed;
/// 6. `munmap` everything (the process exits). With
///    [`ThpscaleParams::file_stays_mapped`] the file's mapping instead stays from one count
///    to the next, as guest/thp.c's `data_map` does, and the next `drop_caches` leaves the
///    page-cache pages it maps (6.12's `mapping_evict_folio`; [`Machine::drop_caches`]).
///
/// Nothing else is reset between thread counts: pageblock migrate types, compaction
/// deferral and cached scanner positions, skip bits, kswapd/kcompactd/khugepaged state
/// and the clocks carry over, as on the seed's machine.
pub fn thpscale(cfg: &SimConfig, p: &ThpscaleParams) -> Result<Vec<ThpscaleResult>> {
    let mut m = program_machine(cfg)?;
    let nodes = m.mm.nr_nodes() as u32;
    let total = (m.mm.nr_frames as u64 * p.mapsize_pct as u64 / 100) as u32;
    if let Some(&nr) = p.threads.iter().find(|&&nr| nr == 0 || total / nr < HPAGE_PMD_NR) {
        // thpscale.c would mmap 0 bytes ("First mapping: Invalid argument").
        return Err(Error::config(
            "machine.memory",
            format!("thpscale: {nr} threads share THPSCALE_MAPSIZE = {total} pages, less than one 2 MiB huge page each; use more memory or fewer threads"),
        ));
    }
    let file = m.mmap(total + 16 * 256, true, false)?;
    let fstart = m.procs.vmas[file].start;
    let mut out = Vec::with_capacity(p.threads.len());
    for &nr in &p.threads {
        let t_start = barrier(&mut m);
        m.run_until(t_start)?;
        m.drop_caches();
        let free_at_start = zones_free(&m);
        let before = m.counters();
        let kswapd_before = kswapd_cpu_ns(&m);
        let thread_size = (total / nr) & !(HPAGE_PMD_NR - 1);
        let nr_hpages = total / nr / HPAGE_PMD_NR / 2;
        let file_size = thread_size / 4;
        let tasks: Vec<usize> = (0..nr).map(|i| m.add_task((i % nodes) as u16)).collect();
        for &t in &tasks {
            m.procs.tasks[t].clock = t_start;
        }
        let mut init = Vec::with_capacity(nr as usize);
        let mut faults = Vec::with_capacity(nr as usize);
        for i in 0..nr {
            let first = m.mmap(thread_size, false, false)?;
            let fs = m.procs.vmas[first].start;
            let second = m.mmap(thread_size / 2 + HPAGE_PMD_NR, false, p.madvise)?;
            let ss = m.procs.vmas[second].start;
            let mut prog: Vec<Op> = (fs..fs + thread_size).map(|page| Op::Touch { page, write: true }).collect();
            prog.extend((fs..fs + thread_size).step_by(HPAGE_PMD_NR as usize).map(|c| Op::Unmap { first: c, n: HPAGE_PMD_NR / 2 }));
            let off = fstart + thread_size * i;
            prog.extend((off..off + file_size).map(|page| Op::Touch { page, write: false }));
            init.push(prog);
            let mut prog: Vec<Op> = (0..nr_hpages).map(|j| Op::Stride(ss + j * HPAGE_PMD_NR)).collect();
            prog.extend([Op::UnmapVma(first), Op::UnmapVma(second)]);
            faults.push(prog);
        }
        run_programs(&mut m, &tasks, &init)?;
        // pthread_barrier_wait: the measured phase starts together.
        let t0 = tasks.iter().map(|&t| m.procs.tasks[t].clock).max().unwrap_or(t_start);
        for &t in &tasks {
            m.procs.tasks[t].clock = t0;
        }
        let strides = run_programs(&mut m, &tasks, &faults)?;
        let mut r = ThpscaleResult { threads: nr, free_at_start, ..Default::default() };
        for (lat, huge) in strides.into_iter().flatten() {
            if huge {
                r.fault_huge_us.push(lat);
            } else {
                r.fault_base_us.push(lat);
            }
        }
        let end = tasks.iter().map(|&t| m.procs.tasks[t].clock).max().unwrap_or(t0);
        r.elapsed_s = (end - t0) as f64 / 1e9;
        r.count_s = (end - t_start) as f64 / 1e9;
        r.counters = counter_delta(&before, m.counters());
        r.kswapd_cpu_s = (kswapd_cpu_ns(&m) - kswapd_before) as f64 / 1e9;
        out.push(r);
        if !p.file_stays_mapped {
            // The process exits: nothing maps the file's pages any more (the program's one
            // file VMA stays, for the next count's process to map; its page tables too).
            m.madv_dontneed(fstart, m.procs.vmas[file].nr_pages);
        }
    }
    debug_assert_eq!(Engine::check_invariants(&m), Ok(()));
    Ok(out)
}

/// Parameters of one `usemem-stress-numa-compact` run.
#[derive(Clone, Debug)]
pub struct UsememParams {
    pub threads: u32,
    pub cache_pct: u32,
    pub usemem_pct: u32,
    pub passes: u32,
}

impl Default for UsememParams {
    fn default() -> Self {
        UsememParams { threads: 1, cache_pct: 50, usemem_pct: 70, passes: 10 }
    }
}

#[derive(Clone, Debug, Default)]
pub struct UsememResult {
    pub elapsed_s: f64,
    pub counters: Vec<(String, u64)>,
    /// Pages of the usemem region per node at the end.
    pub pages_per_node: Vec<u64>,
    /// Page-cache pages per node once the readers are done, before the usemem tasks start.
    pub cache_pages_per_node: Vec<u64>,
    pub huge_pct: f64,
    /// CPU seconds every kswapd ran, from boot (the page cache fill included).
    pub kswapd_cpu_s: f64,
}

/// Every kswapd's CPU time so far.
fn kswapd_cpu_ns(m: &M) -> u64 {
    m.kswapd.iter().map(|k| k.cpu_ns).sum()
}

pub fn usemem(cfg: &SimConfig, p: &UsememParams) -> Result<UsememResult> {
    let mut m = program_machine(cfg)?;
    let nodes = m.mm.nr_nodes() as u32;
    let total = m.mm.nr_frames;
    // Page cache on every node.
    let cache_pages = (total as u64 * p.cache_pct as u64 / 100) as u32;
    let file = m.mmap(cache_pages, true, false)?;
    let fstart = m.procs.vmas[file].start;
    // One reader per node loads its share of the file through the shared mapping, page
    // by page: reader n the n-th contiguous share, the last one the rest (guest/thp.c's
    // `reader`). Loads: the page cache stays clean.
    let readers: Vec<usize> = (0..nodes).map(|n| m.add_task(n as u16)).collect();
    let share = cache_pages / nodes;
    let work: Vec<Vec<u32>> = (0..nodes)
        .map(|n| {
            let end = if n == nodes - 1 { cache_pages } else { share * (n + 1) };
            (fstart + share * n..fstart + end).collect()
        })
        .collect();
    interleave(&mut m, &readers, &work, false, |_, _, _, _, _| {})?;
    let cache_pages_per_node = m.pages_per_node(fstart, cache_pages);
    let t0 = barrier(&mut m);
    let pages = ((total as u64 * p.usemem_pct as u64 / 100) as u32 / HPAGE_PMD_NR).max(p.threads) * HPAGE_PMD_NR;
    let region = m.mmap(pages, false, false)?;
    let rstart = m.procs.vmas[region].start;
    let per = (pages / HPAGE_PMD_NR).div_ceil(p.threads) * HPAGE_PMD_NR;
    let tasks: Vec<usize> = (0..p.threads).map(|_| m.add_task(0)).collect();
    for &t in &tasks {
        m.procs.tasks[t].clock = t0;
    }
    let ranges: Vec<(u32, u32)> = (0..p.threads).map(|i| (rstart + i * per, (rstart + (i + 1) * per).min(rstart + pages))).collect();
    let work: Vec<Vec<u32>> = ranges.iter().map(|&(a, b)| (a..b).collect()).collect();
    interleave(&mut m, &tasks, &work, true, |_, _, _, _, _| {})?;
    // The write passes: per page the access cost plus the remote and TLB penalties; a
    // page evicted meanwhile faults again.
    let access = m.mm.cfg.cost.access_ns;
    let tlb = m.mm.cfg.thp.tlb_miss_ns;
    for _ in 0..p.passes {
        interleave(&mut m, &tasks, &work, true, |m, i, page, _, _| {
            let t = tasks[i];
            let pte = m.mm.pages.pte[page as usize];
            if is_resident(pte) {
                let mut cost = access + numa::access_penalty_ns(&m.mm, m.procs.tasks[t].node, m.mm.node_of(pte));
                if !m.mm.frames.test(pte, pg::COMPOUND) {
                    cost += tlb;
                }
                m.run_task(t, cost);
            }
        })?;
    }
    let end = tasks.iter().map(|&t| m.procs.tasks[t].clock).max().unwrap_or(t0);
    debug_assert_eq!(Engine::check_invariants(&m), Ok(()));
    let resident: u64 = m.pages_per_node(rstart, pages).iter().sum();
    let huge = (rstart..rstart + pages)
        .filter(|&p| {
            let pte = m.mm.pages.pte[p as usize];
            is_resident(pte) && m.mm.frames.test(pte, pg::COMPOUND)
        })
        .count() as u64;
    Ok(UsememResult {
        elapsed_s: (end - t0) as f64 / 1e9,
        counters: m.counters(),
        pages_per_node: m.pages_per_node(rstart, pages),
        cache_pages_per_node,
        huge_pct: if resident == 0 { 0.0 } else { 100.0 * huge as f64 / resident as f64 },
        kswapd_cpu_s: kswapd_cpu_ns(&m) as f64 / 1e9,
    })
}
