//! Seed 003's workloads on the THP machine.
//!
//! `thpscale` (mmtests `global-dhp__workload_thpscale[-madvhugepage]`): one task per node
//! fills an anonymous region (`fill_pct` of memory) and `MADV_DONTNEED`s the second half
//! of every huge page (every other half huge page), readers on every node fill those
//! holes with page cache (`read()` of a file), then `threads` tasks, spread over the
//! nodes, fault a second region one huge-page stride at a time, interleaved by their
//! clocks. Each fault of the second region is timed and classified huge or base
//! (mmtests' `fault-huge`/`fault-base`, in µs). With `madvise` both regions are
//! `MADV_HUGEPAGE`.
//!
//! `usemem-stress-numa-compact` (mmtests `global-dhp__workload_usemem-stress-numa-compact`):
//! page cache fills `cache_pct` of every node, then `threads` usemem tasks on node 0 each
//! fault their share of an anonymous region larger than a node (`usemem_pct` of memory)
//! and write it `passes` times; each write of a page costs `cost.access_ns`, plus
//! `numa.remote_access_ns` on a remote node and `cost.tlb_miss_ns` when not under a THP.
//! Elapsed = the last task's clock (s). defrag=always.

use super::machine::{Fault, ThpMachine};
use super::{numa, HPAGE_PMD_NR};
use crate::config::SimConfig;
use crate::error::Result;
use crate::mm::page::{is_resident, pg};

/// Parameters of one `thpscale` run.
#[derive(Clone, Debug)]
pub struct ThpscaleParams {
    pub threads: u32,
    pub madvise: bool,
    /// Anonymous fill, % of memory.
    pub fill_pct: u32,
    /// Second region, % of memory.
    pub fault_pct: u32,
}

impl Default for ThpscaleParams {
    fn default() -> Self {
        ThpscaleParams { threads: 1, madvise: true, fill_pct: 80, fault_pct: 60 }
    }
}

/// What one `thpscale` run measured.
#[derive(Clone, Debug, Default)]
pub struct ThpscaleResult {
    /// Latencies (µs) of faults that got a base page / a THP.
    pub fault_base_us: Vec<f64>,
    pub fault_huge_us: Vec<f64>,
    pub counters: Vec<(String, u64)>,
    /// Simulated seconds of the measured phase.
    pub elapsed_s: f64,
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

/// Run tasks `tasks` over their page lists, always the task with the earliest clock next.
/// `on_fault(task, fault, latency)` sees every access.
fn interleave(m: &mut ThpMachine, tasks: &[usize], work: &[Vec<u32>], mut on_fault: impl FnMut(&mut ThpMachine, usize, u32, Fault, u64)) -> Result<()> {
    let mut pos = vec![0usize; tasks.len()];
    loop {
        let mut best: Option<usize> = None;
        for i in 0..tasks.len() {
            if pos[i] < work[i].len() && best.is_none_or(|b| m.tasks[tasks[i]].clock < m.tasks[tasks[b]].clock) {
                best = Some(i);
            }
        }
        let Some(i) = best else { return Ok(()) };
        let page = work[i][pos[i]];
        pos[i] += 1;
        let (f, lat) = m.touch(tasks[i], page, true)?;
        on_fault(m, i, page, f, lat);
    }
}

/// Align all task clocks to the latest (a barrier between phases).
fn barrier(m: &mut ThpMachine) -> u64 {
    let t = m.tasks.iter().map(|t| t.clock).max().unwrap_or(0);
    for task in &mut m.tasks {
        task.clock = t;
    }
    t
}

pub fn thpscale(cfg: &SimConfig, p: &ThpscaleParams) -> Result<ThpscaleResult> {
    let mut m = ThpMachine::new(cfg)?;
    let nodes = m.mm.nr_nodes() as u32;
    let total = m.mm.nr_frames;
    let huge_chunks = |pct: u32| ((total as u64 * pct as u64 / 100) as u32 / HPAGE_PMD_NR).max(1);
    // Phase 1: fill, one task per node, each a contiguous part.
    let fill = m.mmap(huge_chunks(p.fill_pct) * HPAGE_PMD_NR, false, p.madvise);
    let fill_start = m.vmas[fill].start;
    let nchunks = m.vmas[fill].nr_pages / HPAGE_PMD_NR;
    let fillers: Vec<usize> = (0..nodes).map(|n| m.add_task(n as u16)).collect();
    let work: Vec<Vec<u32>> = (0..nodes)
        .map(|n| {
            (0..nchunks).filter(|c| c % nodes == n).flat_map(|c| (0..HPAGE_PMD_NR).map(move |i| fill_start + c * HPAGE_PMD_NR + i)).collect()
        })
        .collect();
    interleave(&mut m, &fillers, &work, |_, _, _, _, _| {})?;
    // Punch holes: the second half of every huge page.
    for c in 0..nchunks {
        m.madv_dontneed(fill_start + c * HPAGE_PMD_NR + HPAGE_PMD_NR / 2, HPAGE_PMD_NR / 2);
    }
    // Phase 2: refill the holes with page cache.
    let file = m.mmap(nchunks * HPAGE_PMD_NR / 2, true, false);
    let fstart = m.vmas[file].start;
    let fpages = m.vmas[file].nr_pages;
    let work: Vec<Vec<u32>> = (0..nodes).map(|n| (0..fpages).filter(|i| i % nodes == n).map(|i| fstart + i).collect()).collect();
    interleave(&mut m, &fillers, &work, |_, _, _, _, _| {})?;
    let t0 = barrier(&mut m);
    // Phase 3: fault the second region one huge-page stride at a time.
    let region = m.mmap(huge_chunks(p.fault_pct) * HPAGE_PMD_NR, false, p.madvise);
    let rstart = m.vmas[region].start;
    let rchunks = m.vmas[region].nr_pages / HPAGE_PMD_NR;
    let threads: Vec<usize> = (0..p.threads).map(|i| m.add_task((i % nodes) as u16)).collect();
    for &t in &threads {
        m.tasks[t].clock = t0;
    }
    let per = rchunks.div_ceil(p.threads);
    let work: Vec<Vec<u32>> = (0..p.threads).map(|i| (i * per..((i + 1) * per).min(rchunks)).map(|c| rstart + c * HPAGE_PMD_NR).collect()).collect();
    let mut r = ThpscaleResult::default();
    interleave(&mut m, &threads, &work, |_, _, _, f, lat| match f {
        Fault::Huge => r.fault_huge_us.push(lat as f64 / 1000.0),
        Fault::Base => r.fault_base_us.push(lat as f64 / 1000.0),
        Fault::Hit => {}
    })?;
    let end = threads.iter().map(|&t| m.tasks[t].clock).max().unwrap_or(t0);
    r.elapsed_s = (end - t0) as f64 / 1e9;
    r.counters = m.counters();
    debug_assert_eq!(m.check_invariants(), Ok(()));
    Ok(r)
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
    pub huge_pct: f64,
}

pub fn usemem(cfg: &SimConfig, p: &UsememParams) -> Result<UsememResult> {
    let mut m = ThpMachine::new(cfg)?;
    let nodes = m.mm.nr_nodes() as u32;
    let total = m.mm.nr_frames;
    // Page cache on every node.
    let cache_pages = (total as u64 * p.cache_pct as u64 / 100) as u32;
    let file = m.mmap(cache_pages, true, false);
    let fstart = m.vmas[file].start;
    let readers: Vec<usize> = (0..nodes).map(|n| m.add_task(n as u16)).collect();
    let work: Vec<Vec<u32>> = (0..nodes).map(|n| (0..cache_pages).filter(|i| i % nodes == n).map(|i| fstart + i).collect()).collect();
    interleave(&mut m, &readers, &work, |_, _, _, _, _| {})?;
    let t0 = barrier(&mut m);
    let pages = ((total as u64 * p.usemem_pct as u64 / 100) as u32 / HPAGE_PMD_NR).max(p.threads) * HPAGE_PMD_NR;
    let region = m.mmap(pages, false, false);
    let rstart = m.vmas[region].start;
    let per = (pages / HPAGE_PMD_NR).div_ceil(p.threads) * HPAGE_PMD_NR;
    let tasks: Vec<usize> = (0..p.threads).map(|_| m.add_task(0)).collect();
    for &t in &tasks {
        m.tasks[t].clock = t0;
    }
    let ranges: Vec<(u32, u32)> = (0..p.threads).map(|i| (rstart + i * per, (rstart + (i + 1) * per).min(rstart + pages))).collect();
    let work: Vec<Vec<u32>> = ranges.iter().map(|&(a, b)| (a..b).collect()).collect();
    interleave(&mut m, &tasks, &work, |_, _, _, _, _| {})?;
    // The write passes: per page the access cost plus the remote and TLB penalties; a
    // page evicted meanwhile faults again.
    let access = m.mm.cfg.cost.access_ns;
    let tlb = m.mm.cfg.thp.tlb_miss_ns;
    for _ in 0..p.passes {
        interleave(&mut m, &tasks, &work, |m, i, page, _, _| {
            let t = tasks[i];
            let pte = m.mm.pages.pte[page as usize];
            if is_resident(pte) {
                let mut cost = access + numa::access_penalty_ns(&m.mm, m.tasks[t].node, m.mm.node_of(pte));
                if !m.mm.frames.test(pte, pg::COMPOUND) {
                    cost += tlb;
                }
                m.tasks[t].clock += cost;
            }
        })?;
    }
    let end = tasks.iter().map(|&t| m.tasks[t].clock).max().unwrap_or(t0);
    debug_assert_eq!(m.check_invariants(), Ok(()));
    let resident: u64 = m.pages_per_node(rstart, pages).iter().sum();
    let huge = (rstart..rstart + pages).filter(|&p| {
        let pte = m.mm.pages.pte[p as usize];
        is_resident(pte) && m.mm.frames.test(pte, pg::COMPOUND)
    }).count() as u64;
    Ok(UsememResult {
        elapsed_s: (end - t0) as f64 / 1e9,
        counters: m.counters(),
        pages_per_node: m.pages_per_node(rstart, pages),
        huge_pct: if resident == 0 { 0.0 } else { 100.0 * huge as f64 / resident as f64 },
    })
}
