//! A page-access mimic of Hadoop TeraSort in local mode — the workload of seed 002 (the
//! MGLRU Hadoop benchmark: 12 concurrent `hadoop jar … terasort` jobs, each with
//! `mapreduce.local.{map,reduce}.tasks.maximum` = 2, 4 or 8, i.e. ½, 1 or 2 tasks per CPU
//! on 48 CPUs, `io.sort.mb=1000`, 100 partitions, swap off/on).
//!
//! The page-level model (all sizes in 4 KiB pages; see docs/scenarios.md):
//! - **input**: the TeraGen data, `input_pages`, one file shared by every job (all jobs
//!   sort the same `/mnt/data/raw`), read with read() through the page cache;
//! - **jobs**: `jobs` independent jobs, each running `slots` tasks at a time, where
//!   `slots = max(1, round(cpus × tasks_per_cpu / jobs))` (the seed: 48 × {½,1,2} / 12 =
//!   2, 4, 8). Like LocalJobRunner, a job runs all its map tasks (at most `slots` at once),
//!   then, once every map finished, its reduce tasks (at most `slots` at once);
//! - **map task** (one per input split of `split_pages`): allocate the sort buffer
//!   (`new byte[io.sort.mb]`: Java zeroes it, so every one of its `sort_buffer_pages` anon
//!   pages is written), then per spill chunk (at most `spill_percent` of the buffer): read
//!   the chunk's input pages, each followed by a write of the record into the buffer
//!   (anon); sort it (`sort_touches` random reads per chunk page: quicksort over the kv
//!   metadata comparing keys in the buffer); spill it (each buffer page read, then a page
//!   written to the spill file: a dirty page-cache write). A map whose split needs more
//!   than one spill merges its spills into the map output file (read + write per page);
//!   with one spill, the spill *is* the map output. TeraSort's map is the identity, so a
//!   map's output is as large as its split;
//! - **reduce task** (`reduces` per job: `mapreduce.job.reduces`, Hadoop's default 1, which
//!   the benchmark keeps — `mapreduce.terasort.num.partitions` is only the number of input
//!   splits TeraSort samples, "Making 1 from … sampled records" in every measured run,
//!   docs/terasort-jvm.md): the shuffle fetches partition `r` of every map's output file
//!   (map `m`'s output pages `[S·r/R, S·(r+1)/R)`, S its size) into a `byte[]` of its own
//!   (anon writes), as MergeManagerImpl (Hadoop 3.3.1) keeps it: once the bytes committed
//!   reach `mergeThreshold` (0.70 × 0.66 of the heap) the held segments are merged into a
//!   file on disk (read + dirty page-cache write per page) and dropped; the final merge
//!   (`reduce.input.buffer.percent=1.0` keeps every held segment in memory) reads that file
//!   and the held segments and writes the sorted output (dirty page-cache writes). With
//!   the benchmark's sizes the 22G heap holds all 298 map outputs to the end, the 20G heap
//!   merges 285 of them to disk, as the real program did (`Shuffle`). The job's output
//!   is as large as its input.
//!
//! **JVM heap** (`heap_pages` > 0, the scenario's default): in local mode a job is one
//! JVM — `hadoop jar` runs LocalJobRunner, whose map and reduce tasks are threads of that
//! JVM, so `mapreduce.{map,reduce}.memory.mb` and `mapreduce.*.java.opts` (the per-task
//! containers of YARN) do not apply; its heap is `-Xmx` = `HADOOP_HEAPSIZE_MAX` (the
//! seed: 20G swap off, 22G swap on; hadoop-env.sh: "the maximum amount of heap to use
//! (Java -Xmx)") and starts at OpenJDK's default `InitialHeapSize`, 1/64 of physical
//! memory (no `-Xms` is given; JDK 8 GC tuning guide, "Parallel Collector Default Heap
//! Size"; `InitialRAMPercentage` = 1.5625 in later JDKs). Every map's sort buffer
//! (`new byte[io.sort.mb]`) and every reduce's shuffle segment is allocated in the job's
//! heap by [`JvmHeap`](super::jvmheap), which places and sizes it as JDK 11's default
//! collector, G1, does (see that module for the sources): a 1000 MB sort buffer or a
//! 35 MB map output is a humongous object, put in the lowest run of free regions; a dead
//! buffer's regions are reclaimed at the next young pause, which G1 starts when the old
//! generation would pass 45 % of the committed heap — but not while the concurrent cycle
//! the previous such pause started is still running, so the dead sort buffers of the
//! tasks that finished meanwhile pile up and the heap expands for the next ones. How long
//! a cycle runs is `conc_cycle_maps` map tasks of one thread on the JVM's clock (its work
//! over its running tasks, so a JVM with more tasks allocates more buffers per cycle):
//! the scenario's 2 was set from the real program's heap at 2 tasks per job (committed
//! 0.27 of `-Xmx` in the map phase, the model 0.25), and at 4 and 8 tasks the model gives
//! 0.53 and 0.97 where the program committed 0.58 and 0.99 (docs/terasort-jvm.md,
//! "without the GC-time rule"). The heap never expands by G1's GC-time goal here (the
//! model has no pause times; measured, that rule adds ≤ 0.07 of `-Xmx` to the mean RSS).
//! Shuffle segments below G1's humongous size (many reduces) are placed together as one
//! run of regions. What else lives in the heap (the 8 MB stream buffers, record objects,
//! the partition trie, eden) and the JVM's native memory (GC structures, 7.5 % of the
//! heap, and ~0.4 GiB more, measured) are not modelled.
//!
//! **Memory without the heap model** (`heap_pages` = 0): a task slot's buffers are one region of anonymous memory,
//! `max(sort_buffer_pages, largest reduce input)` pages, reused by every task that runs
//! in the slot (the JVM heap reuses the memory of dead buffers; a reused page that was
//! swapped out is swapped back in when the next task writes it). So the anonymous
//! footprint is `jobs × slots × slot_pages` and grows with concurrency; the files are
//! written once each (the input shared, every job's map output and sorted output its own).
//! Deleted files are not modelled (their pages stay as clean, cold page cache).
//!
//! **cgroup**: every task of every job runs in the single cgroup `hadoop` (cgroup id 1):
//! the seed ran the jobs as plain processes with no memory cgroups, the jobs share the
//! input's page cache, and one cgroup keeps reclaim's memcg iteration as on that machine.
//!
//! **Tasks and time**: the engine runs the source as tasks ([`TaskSource`]): one slot per
//! thread of each job (`job × slots + slot`), each on its own clock on the machine's CPUs
//! (crates/core/src/sim/tasks.rs), so a task that stalls delays itself only. Every record
//! carries the JVM's CPU time before it (`gap`: the real program's measured CPU time per
//! 100-byte record in the map and in the reduce phase,
//! [`TeraSortParams::map_cpu_ns_per_record`], spread over that phase's accesses that handle
//! records). Read as one stream (`read_batch`: a trace file), a scheduler picks a running
//! task uniformly at random and runs `quantum` accesses of it (or the rest of the task).
//! Concurrency changes the interleaving and the number of buffers alive at once, never
//! the work: the file accesses are the same multiset and the total number of accesses is
//! [`TeraSortParams::nr_accesses`] whatever `tasks_per_cpu`. The run ends when the last
//! job does, so the simulated runtime is the metric, as the benchmark's wall time.
//!
//! Everything is drawn from one xoshiro256** stream seeded by the seed.

use super::chunk::Chunk;
use super::jvmheap::{self, JvmHeap};
use crate::rng::Rng;
use crate::{flags, Access, AccessSource, Error, FileRange, Result, TaskSource, TraceMeta};

const FILE_READ: u8 = flags::FILE | flags::SYSCALL;
const FILE_WRITE: u8 = flags::FILE | flags::SYSCALL | flags::WRITE;
const ANON_READ: u8 = 0;
const ANON_WRITE: u8 = flags::WRITE;

/// `mapreduce.reduce.shuffle.input.buffer.percent` (default 0.70): the shuffle's
/// `memoryLimit` as a share of the heap (MergeManagerImpl, Hadoop 3.3.1).
const SHUFFLE_INPUT_BUFFER_PERCENT: f64 = 0.70;
/// `mapreduce.reduce.shuffle.merge.percent` (default 0.66): `mergeThreshold` as a share of
/// `memoryLimit`.
const SHUFFLE_MERGE_PERCENT: f64 = 0.66;
/// A TeraSort record is 100 bytes (10-byte key, 90-byte value); in a map output (an IFile)
/// it is 104: `Text`'s own length byte on key and value, then IFile's key- and
/// value-length vints (the measured 1,300,000,596 bytes of map output for 12.5 M records,
/// docs/terasort-jvm.md). The reduce's memory accounting counts these bytes; the model's
/// map-output pages are the split's (an abstraction: 4 % fewer pages than the kernel sees).
const IFILE_RECORD_BYTES: u64 = 104;
const RECORD_BYTES: u64 = 100;

/// The parameters of the TeraSort mimic (sizes in 4 KiB pages).
#[derive(Clone, Debug, PartialEq)]
pub struct TeraSortParams {
    /// CPUs of the machine (the seed: 48).
    pub cpus: u32,
    /// Concurrency: average tasks per CPU over all jobs (the seed: ½, 1, 2).
    pub tasks_per_cpu: f64,
    /// Concurrent jobs (the seed: 12), each sorting the whole input.
    pub jobs: u32,
    /// TeraGen input (data size), shared by the jobs.
    pub input_pages: u32,
    /// Input split per map task.
    pub split_pages: u32,
    /// Map-side sort buffer per task (`mapreduce.task.io.sort.mb`).
    pub sort_buffer_pages: u32,
    /// `mapreduce.map.sort.spill.percent`: the buffer fill that triggers a spill.
    pub spill_percent: f64,
    /// Reduce tasks per job (`mapreduce.job.reduces`; Hadoop's default, 1, which the
    /// benchmark keeps: `mapreduce.terasort.num.partitions` is the sample's split count).
    pub reduces: u32,
    /// Random sort-buffer reads per buffered page while sorting a spill.
    pub sort_touches: u32,
    /// Accesses a task runs before the scheduler picks again.
    pub quantum: u32,
    /// The JVM's `MaxHeapSize` (`-Xmx`, `HADOOP_HEAPSIZE_MAX`) per job; 0: no heap model,
    /// fixed per-slot buffers (see the module comment).
    pub heap_pages: u32,
    /// The JVM's `InitialHeapSize` per job (OpenJDK's default without `-Xms`: 1/64 of
    /// physical memory); at most `heap_pages`.
    pub heap_init_pages: u32,
    /// How long G1's concurrent cycle runs after the pause that starts it, in map tasks
    /// of one thread (see the module comment); 0: it ends before the next allocation.
    pub conc_cycle_maps: f64,
    /// The JVM's CPU time in the map phase per 100-byte record of the input, in ns: each
    /// map access that handles records carries its share as its `gap` (a timed trace, 1 ns
    /// ticks; the zeroing of a new sort buffer carries none, its time is in the share).
    /// 0 with `reduce_cpu_ns_per_record` 0: untimed (the engine's `cost.access_ns`).
    pub map_cpu_ns_per_record: f64,
    /// The same in the reduce phase, spread over the reduce's accesses without in-memory
    /// merges (fetch and final merge); a merge to disk costs its accesses at that rate.
    pub reduce_cpu_ns_per_record: f64,
}

impl Default for TeraSortParams {
    /// The seed at 1/8 scale, medium concurrency (see docs/scenarios.md): 48 CPUs, 12
    /// jobs, 1 task per CPU (4 per job), a 1.16 GiB input (10^10 bytes / 8) in 299 splits
    /// of 4 MiB (the local file system's 32 MiB blocks / 8), `io.sort.mb` 1000 MB / 8 =
    /// 119 MiB, one reduce per job.
    fn default() -> Self {
        TeraSortParams {
            cpus: 48,
            tasks_per_cpu: 1.0,
            jobs: 12,
            input_pages: 305_176,
            split_pages: 1_024,
            sort_buffer_pages: 30_518,
            spill_percent: 0.8,
            reduces: 1,
            sort_touches: 2,
            quantum: 256,
            heap_pages: 0,
            heap_init_pages: 0,
            conc_cycle_maps: 0.0,
            map_cpu_ns_per_record: 0.0,
            reduce_cpu_ns_per_record: 0.0,
        }
    }
}

impl TeraSortParams {
    /// Tasks a job runs at once: `max(1, round(cpus × tasks_per_cpu / jobs))`.
    pub fn slots(&self) -> u32 {
        ((self.cpus as f64 * self.tasks_per_cpu / self.jobs as f64).round() as u32).max(1)
    }

    /// Map tasks per job (input splits).
    pub fn maps(&self) -> u32 {
        self.input_pages.div_ceil(self.split_pages)
    }

    /// Input pages of map `m`.
    pub fn split(&self, m: u32) -> std::ops::Range<u32> {
        let lo = (m as u64 * self.split_pages as u64).min(self.input_pages as u64);
        lo as u32..(lo + self.split_pages as u64).min(self.input_pages as u64) as u32
    }

    /// Pages the sort buffer holds before it spills (≥ 1).
    pub fn spill_pages(&self) -> u32 {
        ((self.sort_buffer_pages as f64 * self.spill_percent).floor() as u32).max(1)
    }

    /// Spills of a map whose split has `s` pages.
    fn spills(&self, s: u32) -> u32 {
        s.div_ceil(self.spill_pages())
    }

    /// Whether some map spills more than once (then spill files exist besides the map
    /// outputs).
    fn multi_spill(&self) -> bool {
        self.split_pages > self.spill_pages()
    }

    /// Map `m`'s output pages of partition `r`, as offsets into its output.
    fn partition(&self, m: u32, r: u32) -> std::ops::Range<u32> {
        let s = self.split(m).len() as u64;
        let (r, n) = (r as u64, self.reduces as u64);
        (s * r / n) as u32..(s * (r + 1) / n) as u32
    }

    /// Input pages of reduce `r` (the same in every job).
    pub fn reduce_input(&self, r: u32) -> u32 {
        (0..self.maps()).map(|m| self.partition(m, r).len() as u32).sum()
    }

    /// Anonymous pages of one task slot: the larger of a sort buffer and a reduce buffer.
    pub fn slot_pages(&self) -> u32 {
        let rmax = (0..self.reduces).map(|r| self.reduce_input(r)).max().unwrap_or(0);
        self.sort_buffer_pages.max(rmax)
    }

    /// The files: the input split by split (HDFS blocks), then per job each map's output,
    /// each map's spill area (with multi-spill maps) and each reduce's part of the sorted
    /// output, one file each (in page-id order).
    pub fn files(&self) -> Vec<FileRange> {
        let l = Layout::new(self);
        let splits = |base: u32, what: &str, v: &mut Vec<FileRange>| {
            for m in 0..self.maps() {
                let s = self.split(m);
                v.push(FileRange { name: format!("{what}{m}"), first: base + s.start, nr_pages: s.len() as u32, advice: 0 });
            }
        };
        let mut v = Vec::new();
        splits(0, "input/part-", &mut v);
        for j in 0..self.jobs {
            splits(l.map_out_base(self, j), &format!("job{j}/map_out-"), &mut v);
            for r in 0..self.reduces {
                let nr_pages = self.reduce_input(r);
                v.push(FileRange { name: format!("job{j}/part-r-{r}"), first: l.output_base(self, j) + l.roff[r as usize], nr_pages, advice: 0 });
            }
            if self.multi_spill() {
                splits(l.spill_base(self, j), &format!("job{j}/spill-"), &mut v);
            }
            for r in 0..self.reduces {
                let nr_pages = self.reduce_merged(r);
                v.push(FileRange { name: format!("job{j}/reduce-{r}.merged"), first: l.merge_base(self, j) + l.roff[r as usize], nr_pages, advice: 0 });
            }
        }
        v.retain(|f| f.nr_pages > 0);
        v
    }

    /// File pages of one job: map outputs, the sorted output, spill files if any, and
    /// with the heap model the reduces' in-memory merge outputs (room for all of it).
    fn job_file_pages(&self) -> u64 {
        self.input_pages as u64 * (2 + self.multi_spill() as u64 + (self.heap_pages > 0) as u64)
    }

    /// First page of job `j`'s map-output file area (map `m` at offset `m × split_pages`).
    pub fn map_out_base(&self, j: u32) -> u32 {
        Layout::new(self).map_out_base(self, j)
    }
    /// First page of job `j`'s sorted output (reduce `r` after reduces `0..r`).
    pub fn output_base(&self, j: u32) -> u32 {
        Layout::new(self).output_base(self, j)
    }
    /// First page of slot `k`'s buffers in job `j` (anonymous).
    pub fn slot_base(&self, j: u32, k: u32) -> u32 {
        Layout::new(self).slot_base(j, k)
    }

    /// Accesses of map `m`.
    pub fn map_accesses(&self, m: u32) -> u64 {
        let s = self.split(m).len() as u64;
        let merge = if self.spills(s as u32) > 1 { 2 * s } else { 0 };
        self.sort_buffer_pages as u64 + (4 + self.sort_touches as u64) * s + merge
    }

    /// Accesses of reduce `r`: shuffle (read + segment write) and final merge (segment or
    /// merged-file read + output write) per input page, and an in-memory merge (segment
    /// read + merged-file write) per page the shuffle's memory limit sends to disk.
    pub fn reduce_accesses(&self, r: u32) -> u64 {
        4 * self.reduce_input(r) as u64 + 2 * self.reduce_merged(r) as u64
    }

    /// The shuffle's `mergeThreshold` in bytes (MergeManagerImpl, Hadoop 3.3.1:
    /// `memoryLimit = maxMemory × shuffle.input.buffer.percent`, `mergeThreshold =
    /// memoryLimit × shuffle.merge.percent`; `Runtime.maxMemory()` is G1's `-Xmx`); none
    /// without the heap model.
    pub fn merge_threshold(&self) -> Option<u64> {
        (self.heap_pages > 0).then(|| {
            let memory_limit = (self.heap_pages as f64 * 4096.0 * SHUFFLE_INPUT_BUFFER_PERCENT) as u64;
            (memory_limit as f64 * SHUFFLE_MERGE_PERCENT) as u64
        })
    }

    /// Bytes a map output segment of `pages` holds in the reduce's accounting: TeraSort's
    /// 100-byte records with their IFile framing (see [`IFILE_RECORD_BYTES`]).
    fn segment_bytes(pages: u32) -> u64 {
        pages as u64 * 4096 * IFILE_RECORD_BYTES / RECORD_BYTES
    }

    /// Whether the in-memory merge runs after fetch `m` of reduce `r`, given the bytes
    /// committed before it: `closeInMemoryFile` adds the segment and starts the
    /// `InMemoryMerger` once `commitMemory >= mergeThreshold` (then resets it).
    fn merges_after(&self, committed: u64, m: u32, r: u32) -> (bool, u64) {
        let c = committed + Self::segment_bytes(self.partition(m, r).len() as u32);
        match self.merge_threshold() {
            Some(t) if c >= t => (true, 0),
            _ => (false, c),
        }
    }

    /// Pages of reduce `r`'s map outputs that in-memory merges write to disk.
    pub fn reduce_merged(&self, r: u32) -> u32 {
        self.shuffle_plan(r).0
    }

    /// Reduce `r`'s shuffle replayed by its rules alone ([`Shuffle`] runs the same ones):
    /// the pages its in-memory merges write to disk, and the most regions its humongous
    /// segments hold at once (until a merge drops them, or to the end).
    fn shuffle_plan(&self, r: u32) -> (u32, u64) {
        let region = self.region();
        let (mut committed, mut held, mut held_regions, mut merged, mut most) = (0, 0, 0u64, 0, 0u64);
        for m in 0..self.maps() {
            let n = self.partition(m, r).len() as u32;
            held += n;
            if self.humongous(n) {
                held_regions += n.div_ceil(region) as u64;
            }
            most = most.max(held_regions);
            let (merge, c) = self.merges_after(committed, m, r);
            committed = c;
            if merge {
                merged += std::mem::take(&mut held);
                held_regions = 0;
            }
        }
        (merged, most)
    }

    /// Accesses of one job.
    pub fn job_accesses(&self) -> u64 {
        (0..self.maps()).map(|m| self.map_accesses(m)).sum::<u64>() + (0..self.reduces).map(|r| self.reduce_accesses(r)).sum::<u64>()
    }

    /// Total accesses of the trace (independent of the concurrency).
    pub fn nr_accesses(&self) -> u64 {
        self.jobs as u64 * self.job_accesses()
    }

    /// File pages: the input, then every job's map outputs, spills and sorted output.
    pub fn file_pages(&self) -> u64 {
        self.input_pages as u64 + self.jobs as u64 * self.job_file_pages()
    }

    /// Anonymous pages of one job: its JVM heap (at most `heap_pages` touched), or
    /// without the heap model its slot buffers.
    pub fn job_anon_pages(&self) -> u64 {
        if self.heap_pages > 0 {
            self.heap_pages as u64
        } else {
            self.slots() as u64 * self.slot_pages() as u64
        }
    }

    /// Anonymous pages: every job's heap (or slot buffers).
    pub fn anon_pages(&self) -> u64 {
        self.jobs as u64 * self.job_anon_pages()
    }

    /// All pages.
    pub fn nr_pages(&self) -> u64 {
        self.input_pages as u64 + self.jobs as u64 * (self.job_file_pages() + self.job_anon_pages())
    }

    /// G1's region size for this heap, in pages.
    fn region(&self) -> u32 {
        jvmheap::region_pages(self.heap_init_pages, self.heap_pages.max(1))
    }

    /// Whether a map output segment of `pages` is a humongous `byte[]` in G1 (more than
    /// half a region: `G1CollectedHeap::is_humongous`).
    fn humongous(&self, pages: u32) -> bool {
        2 * pages > self.region()
    }

    /// Pages of reduce `r`'s segments below G1's humongous size (eden objects in the JVM),
    /// which the model places together in one run of regions.
    fn reduce_small(&self, r: u32) -> u32 {
        (0..self.maps()).map(|m| self.partition(m, r).len() as u32).filter(|&n| !self.humongous(n)).sum()
    }

    /// The most regions reduce `r` holds at once: its humongous segments held in memory
    /// until an in-memory merge (or the end), and the run of its small ones.
    fn reduce_regions(&self, r: u32) -> u64 {
        self.shuffle_plan(r).1 + self.reduce_small(r).div_ceil(self.region()) as u64
    }

    /// The heap the buffers need so that one always fits after a collection, in whole G1
    /// regions: in the map phase `(2·slots − 1)` sort buffers (`slots − 1` live buffers
    /// leave `slots` gaps, one of them at least a buffer long, since humongous objects are
    /// never moved); in the reduce phase what the running reduces hold at most.
    pub fn heap_needed(&self) -> u64 {
        let r = self.region() as u64;
        let maps = (2 * self.slots() as u64 - 1) * (self.sort_buffer_pages as u64).div_ceil(r);
        let running = self.slots().min(self.reduces) as u64;
        let reduces = running * (0..self.reduces).map(|x| self.reduce_regions(x)).max().unwrap_or(0);
        maps.max(reduces) * r
    }

    /// First page of job `j`'s JVM heap (with the heap model).
    pub fn heap_base(&self, j: u32) -> u32 {
        Layout::new(self).heap_base(j)
    }

    /// Page-cache writes of the trace (spills, merges, sorted output), all dirtying pages.
    pub fn file_writes(&self) -> u64 {
        let merged: u64 = (0..self.maps()).map(|m| self.split(m).len() as u64).filter(|&s| self.spills(s as u32) > 1).sum();
        let shuffle: u64 = (0..self.reduces).map(|r| self.reduce_merged(r) as u64).sum();
        self.jobs as u64 * (2 * self.input_pages as u64 + merged + shuffle)
    }

    /// The CPU time (ns) before each map access that handles records, and before each
    /// reduce access: a job's records' CPU time in that phase over those accesses.
    pub fn access_cpu_ns(&self) -> (u32, u32) {
        let records = self.input_pages as f64 * crate::PAGE_SIZE as f64 / RECORD_BYTES as f64;
        let map = (0..self.maps()).map(|m| self.map_accesses(m) - self.sort_buffer_pages as u64).sum::<u64>();
        let reduce = 4 * self.input_pages as u64;
        let per = |ns: f64, n: u64| (ns * records / n.max(1) as f64).round() as u32;
        (per(self.map_cpu_ns_per_record, map), per(self.reduce_cpu_ns_per_record, reduce))
    }

    /// Whether records carry CPU time.
    fn timed(&self) -> bool {
        self.map_cpu_ns_per_record > 0.0 || self.reduce_cpu_ns_per_record > 0.0
    }

    /// cgroup names: root, then `hadoop` (every task).
    pub fn cgroups(&self) -> Vec<String> {
        vec![String::new(), "hadoop".into()]
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<()> {
        let pos = [
            ("cpus", self.cpus),
            ("jobs", self.jobs),
            ("input_pages", self.input_pages),
            ("split_pages", self.split_pages),
            ("sort_buffer_pages", self.sort_buffer_pages),
            ("reduces", self.reduces),
            ("quantum", self.quantum),
        ];
        for (k, v) in pos {
            if v == 0 {
                return Err(Error::invalid(format!("terasort: {k} must be at least 1")));
            }
        }
        if !self.tasks_per_cpu.is_finite() || self.tasks_per_cpu <= 0.0 || self.tasks_per_cpu > 1024.0 {
            return Err(Error::invalid(format!("terasort: tasks_per_cpu {} must be in (0, 1024]", self.tasks_per_cpu)));
        }
        for (k, v) in [("map_cpu_ns_per_record", self.map_cpu_ns_per_record), ("reduce_cpu_ns_per_record", self.reduce_cpu_ns_per_record)] {
            if !(v.is_finite() && (0.0..=1e6).contains(&v)) {
                return Err(Error::invalid(format!("terasort: {k} {v} must be in [0, 1e6]")));
            }
        }
        if !self.conc_cycle_maps.is_finite() || self.conc_cycle_maps < 0.0 {
            return Err(Error::invalid(format!("terasort: conc_cycle_maps {} must be a number ≥ 0", self.conc_cycle_maps)));
        }
        if !(self.spill_percent > 0.0 && self.spill_percent <= 1.0) {
            return Err(Error::invalid(format!("terasort: spill_percent {} must be in (0, 1]", self.spill_percent)));
        }
        if self.cpus as f64 * self.tasks_per_cpu / self.jobs as f64 > 65_536.0 {
            return Err(Error::invalid("terasort: more than 65536 tasks per job at once"));
        }
        // An upper bound (a reduce's input is at most input/reduces + 1 per map), so
        // huge parameters fail fast.
        let rmax = self.input_pages as u64 / self.reduces as u64 + self.maps() as u64;
        let slot = rmax.max(self.sort_buffer_pages as u64);
        let anon = if self.heap_pages > 0 { self.heap_pages as u64 } else { self.slots() as u64 * slot };
        let bound = self.input_pages as u64 * (1 + 4 * self.jobs as u64) + self.jobs as u64 * anon;
        if bound >= u32::MAX as u64 {
            return Err(Error::invalid("terasort: the workload has more than 2^32-2 pages; use a smaller scale"));
        }
        let usable = |h: u32| h as u64 / self.region() as u64 * self.region() as u64;
        if self.heap_pages > 0 && usable(self.heap_pages) < self.heap_needed() {
            return Err(Error::invalid(format!(
                "terasort: heap_pages {} cannot hold {} tasks' buffers (java.lang.OutOfMemoryError: Java heap space); give at least {}",
                self.heap_pages,
                self.slots(),
                self.heap_needed()
            )));
        }
        Ok(())
    }
}

/// The page layout, computed once: the input, then per job its map outputs, sorted
/// output and spill files (if any), then per job its slot buffers (anonymous) — so file
/// page ids do not depend on the concurrency.
struct Layout {
    input: u64,
    maps: u32,
    slot_pages: u32,
    job_file_pages: u64,
    slots: u32,
    /// Anonymous pages per job (heap or slot buffers).
    job_anon: u64,
    /// First anonymous page: after the input and every job's files.
    anon_base: u64,
    /// Offset of reduce `r`'s part of the sorted output (len reduces + 1).
    roff: Vec<u32>,
}

impl Layout {
    fn new(p: &TeraSortParams) -> Layout {
        let mut roff = vec![0u32; p.reduces as usize + 1];
        for r in 0..p.reduces {
            roff[r as usize + 1] = roff[r as usize] + p.reduce_input(r);
        }
        let slot_pages = p.slot_pages();
        let job_file_pages = p.job_file_pages();
        Layout {
            input: p.input_pages as u64,
            maps: p.maps(),
            slot_pages,
            job_file_pages,
            slots: p.slots(),
            job_anon: p.job_anon_pages(),
            anon_base: p.input_pages as u64 + p.jobs as u64 * job_file_pages,
            roff,
        }
    }
    fn job_base(&self, _p: &TeraSortParams, j: u32) -> u32 {
        (self.input + j as u64 * self.job_file_pages) as u32
    }
    fn map_out_base(&self, p: &TeraSortParams, j: u32) -> u32 {
        self.job_base(p, j)
    }
    fn output_base(&self, p: &TeraSortParams, j: u32) -> u32 {
        self.job_base(p, j) + p.input_pages
    }
    fn spill_base(&self, p: &TeraSortParams, j: u32) -> u32 {
        self.job_base(p, j) + 2 * p.input_pages
    }
    /// Reduce `r`'s in-memory merge outputs start at `merge_base + roff[r]`.
    fn merge_base(&self, p: &TeraSortParams, j: u32) -> u32 {
        self.job_base(p, j) + (2 + p.multi_spill() as u32) * p.input_pages
    }
    /// A task's slot id for the engine: `job × slots + slot`.
    fn task_slot(&self, task: &Task) -> usize {
        (task.job * self.slots + task.slot) as usize
    }
    fn slot_base(&self, j: u32, k: u32) -> u32 {
        (self.anon_base + (j as u64 * self.slots as u64 + k as u64) * self.slot_pages as u64) as u32
    }
    fn heap_base(&self, j: u32) -> u32 {
        (self.anon_base + j as u64 * self.job_anon) as u32
    }
}

/// One run of accesses.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// `base..base+len`, each with `f`: the JVM zeroing a new array, no CPU time of its
    /// own (`gap` 0).
    Seq { base: u32, len: u32, f: u8 },
    /// `a+i` (flags `af`) then `b+i` (flags `bf`) for i in 0..len: a copy.
    Pair { a: u32, af: u8, b: u32, bf: u8, len: u32 },
    /// `count` pages drawn uniformly from `base..base+len`, each with `f`.
    Rand { base: u32, len: u32, count: u64, f: u8 },
}

impl Op {
    fn len(&self) -> u64 {
        match *self {
            Op::Seq { len, .. } => len as u64,
            Op::Pair { len, .. } => 2 * len as u64,
            Op::Rand { count, .. } => count,
        }
    }
}

/// A running task: its ops and the position in them.
struct Task {
    job: u32,
    map: bool,
    slot: u32,
    /// The CPU time before each of its accesses that handles records (ns).
    gap: u32,
    /// The map's sort buffer's offset in its JVM heap (with the heap model).
    heap_buf: Option<u32>,
    /// A reduce's shuffle, whose ops are made a fetch at a time.
    shuffle: Option<Box<Shuffle>>,
    ops: Vec<Op>,
    op: usize,
    i: u64,
}

/// A reduce's way through the shuffle (MergeManagerImpl, Hadoop 3.3.1, as LocalJobRunner
/// runs it): each map output's partition is fetched into a `byte[]` of its own
/// (`InMemoryMapOutput`) — a humongous object, in regions of its own, when it is more than
/// half a G1 region, so where it lands is decided at the fetch; once the bytes committed
/// reach `mergeThreshold` the `InMemoryMerger` writes the held segments to one file on
/// disk and drops them; the final merge (`reduce.input.buffer.percent` 1.0 keeps every
/// held segment in memory) reads that file and the held segments and writes the output.
/// The merges run in the reduce's own thread of ops here (Hadoop's merger is a thread of
/// its own beside the fetcher), and each segment or file is read whole in turn where the
/// k-way merge interleaves them.
struct Shuffle {
    r: u32,
    next_map: u32,
    /// Segments held in memory: first page, pages, heap offset if humongous.
    held: Vec<(u32, u32, Option<u32>)>,
    /// `commitMemory` in bytes.
    committed: u64,
    /// First page of the run holding the small segments (all of them without the heap
    /// model), its heap offset, and how much of it is used.
    run: u32,
    run_off: Option<u32>,
    run_pos: u32,
    /// Pages the in-memory merges wrote to disk.
    merged: u32,
    /// Heap offsets of segments dropped by the last step, freed before the next.
    dead: Vec<u32>,
    done: bool,
}

impl Task {
    fn new(job: u32, map: bool, slot: u32, gap: u32, heap_buf: Option<u32>, ops: Vec<Op>) -> Task {
        let mut t = Task { job, map, slot, gap, heap_buf, shuffle: None, ops: Vec::new(), op: 0, i: 0 };
        t.load(ops);
        t
    }

    /// Run `ops` next (those with no accesses dropped), from their start.
    fn load(&mut self, ops: Vec<Op>) {
        self.ops = ops.into_iter().filter(|o| o.len() > 0).collect();
        (self.op, self.i) = (0, 0);
    }

    /// Append up to `n` accesses; returns true when the task is done.
    fn run(&mut self, n: u64, cg: u16, rng: &mut Rng, out: &mut Vec<Access>) -> bool {
        let mut left = n;
        while left > 0 && self.op < self.ops.len() {
            let op = self.ops[self.op];
            let take = left.min(op.len() - self.i);
            for k in self.i..self.i + take {
                let (page, f, gap) = match op {
                    Op::Seq { base, f, .. } => (base + k as u32, f, 0),
                    Op::Pair { a, af, b, bf, .. } => {
                        if k % 2 == 0 {
                            (a + (k / 2) as u32, af, self.gap)
                        } else {
                            (b + (k / 2) as u32, bf, self.gap)
                        }
                    }
                    Op::Rand { base, len, f, .. } => (base + rng.below(len as u64) as u32, f, self.gap),
                };
                out.push(Access { page, cgroup: cg, flags: f, gap });
            }
            self.i += take;
            left -= take;
            if self.i == op.len() {
                self.op += 1;
                self.i = 0;
            }
        }
        self.op == self.ops.len()
    }
}

/// Per-job scheduling state.
struct Job {
    next_map: u32,
    maps_done: u32,
    next_reduce: u32,
    free_slots: Vec<u32>,
    /// The job's JVM heap (with the heap model).
    heap: Option<JvmHeap>,
}

/// The TeraSort trace as an [`AccessSource`].
pub struct TeraSortSource {
    p: TeraSortParams,
    l: Layout,
    rng: Rng,
    jobs: Vec<Job>,
    running: Vec<Task>,
    /// Per task slot (`job × slots + slot`): its index in `running`, or [`IDLE`].
    by_slot: Vec<u32>,
    /// Tasks started or ended so far ([`TaskSource::changes`]).
    changes: u64,
    /// The map and reduce tasks' `gap`: [`TeraSortParams::access_cpu_ns`].
    gap: (u32, u32),
    /// The quantum being emitted.
    chunk: Chunk,
    meta: TraceMeta,
}

/// [`TeraSortSource::by_slot`] of a slot with no running task.
const IDLE: u32 = u32::MAX;

const CG: u16 = 1;

impl TeraSortSource {
    pub fn new(p: TeraSortParams, seed: u64) -> Result<TeraSortSource> {
        p.validate()?;
        let meta = TraceMeta {
            format: "gen:terasort".into(),
            nr_records: Some(p.nr_accesses()),
            nr_pages: Some(p.nr_pages() as u32),
            cgroups: p.cgroups(),
            tick_ps: if p.timed() { 1000 } else { 0 },
            files: p.files(),
            ops: Vec::new(),
        };
        let slots = p.slots();
        let mut s = TeraSortSource {
            l: Layout::new(&p),
            rng: Rng::new(seed),
            jobs: (0..p.jobs)
                .map(|_| Job {
                    next_map: 0,
                    maps_done: 0,
                    next_reduce: 0,
                    free_slots: (0..slots).rev().collect(),
                    heap: (p.heap_pages > 0).then(|| {
                        let mut h = JvmHeap::new(p.heap_init_pages, p.heap_pages);
                        h.set_conc_cycle(p.conc_cycle_maps * p.map_accesses(0) as f64);
                        h
                    }),
                })
                .collect(),
            running: Vec::new(),
            by_slot: vec![IDLE; (p.jobs * slots) as usize],
            changes: 0,
            gap: p.access_cpu_ns(),
            chunk: Chunk::default(),
            meta,
            p,
        };
        for j in 0..s.p.jobs {
            s.start_tasks(j);
        }
        Ok(s)
    }

    pub fn params(&self) -> &TeraSortParams {
        &self.p
    }

    /// Ops of map `m` of job `j` with its sort buffer at page `buf`.
    fn map_ops(&self, j: u32, buf: u32, m: u32) -> Vec<Op> {
        let (p, l) = (&self.p, &self.l);
        let split = p.split(m);
        let s = split.len() as u32;
        let out = l.map_out_base(p, j) + m * p.split_pages;
        let multi = p.spills(s) > 1;
        let spill = if multi { l.spill_base(p, j) + m * p.split_pages } else { out };
        let mut ops = vec![Op::Seq { base: buf, len: p.sort_buffer_pages, f: ANON_WRITE }];
        let mut o = 0;
        while o < s {
            let c = (s - o).min(p.spill_pages());
            ops.push(Op::Pair { a: split.start + o, af: FILE_READ, b: buf, bf: ANON_WRITE, len: c });
            ops.push(Op::Rand { base: buf, len: c, count: p.sort_touches as u64 * c as u64, f: ANON_READ });
            ops.push(Op::Pair { a: buf, af: ANON_READ, b: spill + o, bf: FILE_WRITE, len: c });
            o += c;
        }
        if multi {
            ops.push(Op::Pair { a: spill, af: FILE_READ, b: out, bf: FILE_WRITE, len: s });
        }
        ops
    }

    /// The next ops of running task `t`'s shuffle: a fetch (and the in-memory merge it
    /// starts), then the final merge; false once the reduce is done (its heap freed).
    fn shuffle_step(&mut self, t: usize) -> bool {
        let (p, l) = (&self.p, &self.l);
        let task = &mut self.running[t];
        let Some(sh) = task.shuffle.as_mut() else { return false };
        let j = task.job;
        let mut heap = self.jobs[j as usize].heap.as_mut();
        for off in sh.dead.drain(..) {
            heap.as_mut().expect("only heap segments die").free(off);
        }
        if sh.done {
            if let (Some(h), Some(off)) = (heap, sh.run_off.take()) {
                h.free(off);
            }
            return false;
        }
        let r = sh.r as usize;
        let merge_at = l.merge_base(p, j) + l.roff[r];
        let mut ops = Vec::new();
        if sh.next_map < l.maps {
            let m = sh.next_map;
            sh.next_map += 1;
            let part = p.partition(m, sh.r);
            let n = part.len() as u32;
            let (page, off) = match heap.as_mut().filter(|_| p.humongous(n)) {
                Some(h) => {
                    let off = h.alloc(n).expect("terasort: validate() sizes the heap for the shuffle's segments");
                    (l.heap_base(j) + off, Some(off))
                }
                None => {
                    sh.run_pos += n;
                    (sh.run + sh.run_pos - n, None)
                }
            };
            ops.push(Op::Pair { a: l.map_out_base(p, j) + m * p.split_pages + part.start, af: FILE_READ, b: page, bf: ANON_WRITE, len: n });
            sh.held.push((page, n, off));
            let (merge, c) = p.merges_after(sh.committed, m, sh.r);
            sh.committed = c;
            if merge {
                for (page, n, off) in sh.held.drain(..) {
                    ops.push(Op::Pair { a: page, af: ANON_READ, b: merge_at + sh.merged, bf: FILE_WRITE, len: n });
                    sh.merged += n;
                    sh.dead.extend(off);
                }
            }
        } else {
            let out = l.output_base(p, j) + l.roff[r];
            ops.push(Op::Pair { a: merge_at, af: FILE_READ, b: out, bf: FILE_WRITE, len: sh.merged });
            let mut pos = sh.merged;
            for (page, n, off) in sh.held.drain(..) {
                ops.push(Op::Pair { a: page, af: ANON_READ, b: out + pos, bf: FILE_WRITE, len: n });
                pos += n;
                sh.dead.extend(off);
            }
            sh.done = true;
        }
        task.load(ops);
        true
    }

    /// Fill job `j`'s free slots: maps first, then (once every map finished) reduces.
    fn start_tasks(&mut self, j: u32) {
        loop {
            let job = &self.jobs[j as usize];
            let Some(&k) = job.free_slots.last() else { return };
            let map = if job.next_map < self.l.maps {
                true
            } else if job.maps_done == self.l.maps && job.next_reduce < self.p.reduces {
                false
            } else {
                return;
            };
            let job = &mut self.jobs[j as usize];
            job.free_slots.pop();
            if map {
                // The sort buffer: in the job's JVM heap (`new byte[io.sort.mb]`), or the slot's region.
                let heap_buf = job.heap.as_mut().map(|h| h.alloc(self.p.sort_buffer_pages).expect("terasort: validate() sizes the heap for every slot's sort buffer"));
                let buf = heap_buf.map_or(self.l.slot_base(j, k), |off| self.l.heap_base(j) + off);
                let m = job.next_map;
                job.next_map += 1;
                let ops = self.map_ops(j, buf, m);
                self.push_task(Task::new(j, true, k, self.gap.0, heap_buf, ops));
            } else {
                let r = job.next_reduce;
                job.next_reduce += 1;
                let small = self.p.reduce_small(r);
                let run_off = job.heap.as_mut().filter(|_| small > 0).map(|h| h.alloc(small).expect("terasort: validate() sizes the heap for the shuffle's segments"));
                let run = run_off.map_or(self.l.slot_base(j, k), |off| self.l.heap_base(j) + off);
                let mut task = Task::new(j, false, k, self.gap.1, None, Vec::new());
                task.shuffle = Some(Box::new(Shuffle { r, next_map: 0, held: Vec::new(), committed: 0, run, run_off, run_pos: 0, merged: 0, dead: Vec::new(), done: false }));
                let t = self.push_task(task);
                self.shuffle_step(t);
            }
        }
    }

    /// Add a started task to `running`; its index.
    fn push_task(&mut self, task: Task) -> usize {
        self.by_slot[self.l.task_slot(&task)] = self.running.len() as u32;
        self.running.push(task);
        self.changes += 1;
        self.running.len() - 1
    }

    /// Run up to `n` accesses of running task `t` into `out`; a task that finished ends
    /// (its slot freed, its buffer dropped) and its job starts what it can.
    fn advance(&mut self, t: usize, n: u64, out: &mut Vec<Access>) {
        let before = out.len();
        let done = self.running[t].run(n, CG, &mut self.rng, out);
        // The JVM's mutator work, G1's clock for its GC-time goal.
        let ran = (out.len() - before) as u64;
        let job = &mut self.jobs[self.running[t].job as usize];
        let threads = self.l.slots - job.free_slots.len() as u32;
        if let Some(h) = job.heap.as_mut() {
            h.tick(ran, threads);
        }
        if done && !self.shuffle_step(t) {
            let task = self.running.swap_remove(t);
            self.by_slot[self.l.task_slot(&task)] = IDLE;
            self.changes += 1;
            if let Some(moved) = self.running.get(t) {
                self.by_slot[self.l.task_slot(moved)] = t as u32;
            }
            let job = &mut self.jobs[task.job as usize];
            job.free_slots.push(task.slot);
            if let (Some(h), Some(off)) = (job.heap.as_mut(), task.heap_buf) {
                h.free(off);
            }
            if task.map {
                job.maps_done += 1;
            }
            self.start_tasks(task.job);
        }
    }

    /// Run one scheduling quantum into the chunk (a running task drawn at random); false
    /// when every task finished.
    fn step(&mut self) -> bool {
        self.chunk.restart();
        let mut out = std::mem::take(&mut self.chunk.pending);
        while out.is_empty() && !self.running.is_empty() {
            let t = self.rng.below(self.running.len() as u64) as usize;
            self.advance(t, self.p.quantum as u64, &mut out);
        }
        self.chunk.pending = out;
        !self.chunk.pending.is_empty()
    }
}

/// The engine's view: a task slot per job thread (`mapreduce.local.*.tasks.maximum`), each
/// running its job's maps, then its reduce, on its own clock.
impl TaskSource for TeraSortSource {
    fn nr_tasks(&self) -> usize {
        self.by_slot.len()
    }

    fn is_runnable(&self, t: usize) -> bool {
        self.by_slot[t] != IDLE
    }

    fn changes(&self) -> u64 {
        self.changes
    }

    fn run_task(&mut self, t: usize, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        let i = self.by_slot[t];
        if i == IDLE {
            return Err(Error::invalid(format!("terasort: task slot {t} has no running task")));
        }
        self.advance(i as usize, max as u64, buf);
        self.chunk.emitted += buf.len() as u64;
        Ok(buf.len())
    }
}

impl AccessSource for TeraSortSource {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        buf.reserve(max.min(1 << 20));
        while buf.len() < max {
            if self.chunk.is_spent() && !self.step() {
                break;
            }
            self.chunk.drain_into(buf, max);
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.meta.nr_pages.unwrap_or(0)
    }

    fn progress(&self) -> Option<f64> {
        self.chunk.progress(self.meta.nr_records)
    }

    fn tasks(&mut self) -> Option<&mut dyn TaskSource> {
        Some(self)
    }
}

/// The TeraSort trace for `params` and `seed` (validated first).
pub fn terasort(params: TeraSortParams, seed: u64) -> Result<Box<dyn AccessSource>> {
    Ok(Box::new(TeraSortSource::new(params, seed)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// 2 jobs on 4 CPUs, 12 splits of 16 pages (the last partial), a 40-page sort
    /// buffer (one spill per map), 5 reduces.
    fn small() -> TeraSortParams {
        TeraSortParams {
            cpus: 4,
            tasks_per_cpu: 1.0,
            jobs: 2,
            input_pages: 185,
            split_pages: 16,
            sort_buffer_pages: 40,
            spill_percent: 0.8,
            reduces: 5,
            sort_touches: 2,
            quantum: 7,
            heap_pages: 0,
            heap_init_pages: 0,
            conc_cycle_maps: 0.0,
            map_cpu_ns_per_record: 0.0,
            reduce_cpu_ns_per_record: 0.0,
        }
    }

    fn all(p: TeraSortParams, seed: u64) -> Vec<Access> {
        let mut s = TeraSortSource::new(p, seed).unwrap();
        let (mut out, mut buf) = (Vec::new(), Vec::new());
        // An odd batch size so quanta straddle batches.
        while s.read_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    fn file_multiset(v: &[Access]) -> BTreeMap<(u32, u8), u64> {
        let mut m = BTreeMap::new();
        for a in v.iter().filter(|a| a.is_file()) {
            *m.entry((a.page, a.flags)).or_insert(0) += 1;
        }
        m
    }

    #[test]
    fn deterministic_in_the_seed() {
        assert_eq!(all(small(), 5), all(small(), 5));
        assert_ne!(all(small(), 5), all(small(), 6));
    }

    #[test]
    fn exact_work_volume() {
        for p in [small(), TeraSortParams { sort_buffer_pages: 12, ..small() }] {
            let v = all(p.clone(), 1);
            assert_eq!(v.len() as u64, p.nr_accesses());
            let merged: u64 = (0..p.maps()).map(|m| p.split(m).len() as u64).filter(|&s| s > p.spill_pages() as u64).sum();
            let per_job = p.maps() as u64 * p.sort_buffer_pages as u64 + (4 + p.sort_touches as u64) * p.input_pages as u64 + 2 * merged + 4 * p.input_pages as u64;
            assert_eq!(p.nr_accesses(), p.jobs as u64 * per_job);
            // Each job reads the whole input once; reduces read each map output page once.
            let reads = v.iter().filter(|a| a.is_file() && !a.is_write() && a.page < p.input_pages).count() as u64;
            assert_eq!(reads, p.jobs as u64 * p.input_pages as u64);
            assert!(v.iter().all(|a| (a.page as u64) < p.nr_pages() && a.cgroup == 1));
        }
    }

    /// The task view run to the end, `chunk` accesses at a time of the next runnable slot
    /// in turn: every access, and each slot's.
    fn by_tasks(p: TeraSortParams, seed: u64, chunk: usize) -> (Vec<Access>, Vec<Vec<Access>>) {
        let mut s = TeraSortSource::new(p, seed).unwrap();
        let ts = s.tasks().unwrap();
        let (mut all, mut per, mut buf) = (Vec::new(), vec![Vec::new(); ts.nr_tasks()], Vec::new());
        let mut turn = 0;
        while let Some(t) = (0..ts.nr_tasks()).map(|k| (turn + k) % ts.nr_tasks()).find(|&t| ts.is_runnable(t)) {
            ts.run_task(t, &mut buf, chunk).unwrap();
            all.extend_from_slice(&buf);
            per[t].extend_from_slice(&buf);
            turn = t + 1;
        }
        (all, per)
    }

    #[test]
    fn the_task_view_runs_the_same_work_a_slot_per_job_thread() {
        let p = TeraSortParams { map_cpu_ns_per_record: 4010.0, reduce_cpu_ns_per_record: 1720.0, ..small() };
        let (v, per) = by_tasks(p.clone(), 3, 5);
        let stream = all(p.clone(), 3);
        assert_eq!(v.len(), stream.len());
        assert_eq!(file_multiset(&v), file_multiset(&stream));
        // jobs × slots task slots; a slot's accesses are its own job's (its files and heap).
        assert_eq!(per.len() as u32, p.jobs * p.slots());
        let l = Layout::new(&p);
        for (t, acc) in per.iter().enumerate() {
            let j = t as u32 / p.slots();
            let job_files = l.job_base(&p, j) as u64..l.job_base(&p, j) as u64 + l.job_file_pages;
            assert!(acc.iter().filter(|a| a.is_file() && a.page >= p.input_pages).all(|a| job_files.contains(&(a.page as u64))), "slot {t}");
            assert!(!acc.is_empty(), "slot {t} never ran");
        }
        // Every record carries its phase's CPU time before it, a job's records' worth in
        // each phase; the zeroing of new sort buffers none.
        let (map_gap, reduce_gap) = p.access_cpu_ns();
        assert!(map_gap > reduce_gap && reduce_gap > 0);
        let records = p.input_pages as f64 * 4096.0 / 100.0;
        let phase_ns = |gap: u32| v.iter().filter(|a| a.gap == gap).count() as f64 * gap as f64 / p.jobs as f64;
        for (gap, ns) in [(map_gap, 4010.0), (reduce_gap, 1720.0)] {
            assert!((phase_ns(gap) / (records * ns) - 1.0).abs() < 0.01, "{} ns a job for {records} records at {ns}", phase_ns(gap));
        }
        let zeroing = v.iter().filter(|a| a.gap == 0).count() as u64;
        assert_eq!(zeroing, (p.jobs * p.maps() * p.sort_buffer_pages) as u64);
        assert_eq!(TeraSortSource::new(p, 3).unwrap().meta().tick_ps, 1000);
        assert_eq!(TeraSortSource::new(small(), 3).unwrap().meta().tick_ps, 0);
    }

    #[test]
    fn concurrency_changes_interleaving_not_work() {
        let lo = TeraSortParams { tasks_per_cpu: 0.5, ..small() };
        let hi = TeraSortParams { tasks_per_cpu: 2.0, ..small() };
        assert_eq!((lo.slots(), small().slots(), hi.slots()), (1, 2, 4));
        assert_eq!(lo.nr_accesses(), hi.nr_accesses());
        let (a, b) = (all(lo.clone(), 3), all(hi.clone(), 3));
        assert_eq!(a.len(), b.len());
        // The page cache sees exactly the same reads and writes ...
        let fa: Vec<_> = a.iter().filter(|x| x.is_file()).map(|x| (x.page, x.flags)).collect();
        let fb: Vec<_> = b.iter().filter(|x| x.is_file()).map(|x| (x.page, x.flags)).collect();
        assert_eq!(file_multiset(&a), file_multiset(&b));
        // ... in another order,
        assert_ne!(fa, fb);
        // and as many anonymous accesses, over more buffers.
        assert_eq!(a.iter().filter(|x| !x.is_file()).count(), b.iter().filter(|x| !x.is_file()).count());
        assert_eq!(hi.anon_pages(), 4 * lo.anon_pages());
        let distinct = |v: &[Access]| v.iter().filter(|x| !x.is_file()).map(|x| x.page).collect::<std::collections::BTreeSet<_>>().len() as u64;
        assert_eq!(distinct(&a), lo.anon_pages());
        // (4 slots per job but only 5 reduces: the spare slots hold just a sort buffer.)
        assert!(distinct(&b) <= hi.anon_pages() && distinct(&b) > 3 * distinct(&a));
    }

    #[test]
    fn more_concurrency_interleaves_more_tasks() {
        // Count the distinct slots whose buffers are touched within a window of accesses.
        let busy = |p: TeraSortParams| {
            let v = all(p.clone(), 9);
            let slot =
                |pg: u32| (0..p.jobs).flat_map(|j| (0..p.slots()).map(move |k| (j, k))).find(|&(j, k)| (p.slot_base(j, k)..p.slot_base(j, k) + p.slot_pages()).contains(&pg));
            let w = &v[..2000];
            w.iter().filter(|a| !a.is_file()).filter_map(|a| slot(a.page)).collect::<std::collections::BTreeSet<_>>().len()
        };
        assert!(busy(TeraSortParams { tasks_per_cpu: 2.0, ..small() }) > busy(TeraSortParams { tasks_per_cpu: 0.5, ..small() }));
    }

    #[test]
    fn anon_buffers_sized_as_configured() {
        for b in [40u32, 64, 100] {
            let p = TeraSortParams { sort_buffer_pages: b, jobs: 1, cpus: 1, ..small() };
            assert_eq!(p.slots(), 1);
            let v = all(p.clone(), 2);
            let base = p.slot_base(0, 0);
            // Each map zeroes its whole sort buffer: exactly `b` anon pages, written.
            let anon: std::collections::BTreeSet<u32> = v.iter().filter(|a| !a.is_file()).map(|a| a.page).collect();
            assert_eq!(anon.len() as u32, p.slot_pages());
            let rmax = (0..p.reduces).map(|r| p.reduce_input(r)).max().unwrap();
            assert_eq!(p.slot_pages(), b.max(rmax));
            assert_eq!(*anon.iter().next().unwrap(), base);
            assert_eq!(*anon.iter().last().unwrap(), base + p.slot_pages() - 1);
            // The first map's first `b` accesses are the zeroing writes.
            assert!(v[..b as usize].iter().enumerate().all(|(i, a)| a.page == base + i as u32 && a.flags == flags::WRITE));
            assert_eq!(p.anon_pages(), p.slot_pages() as u64);
        }
    }

    #[test]
    fn dirty_file_writes_present() {
        for p in [small(), TeraSortParams { sort_buffer_pages: 12, ..small() }] {
            let v = all(p.clone(), 4);
            let writes: Vec<_> = v.iter().filter(|a| a.is_file() && a.is_write()).collect();
            assert!(writes.iter().all(|a| a.is_syscall()), "write() through the page cache");
            assert_eq!(writes.len() as u64, p.file_writes());
            // Spills / map outputs and the sorted output: every job page written exactly once.
            let m = file_multiset(&v);
            for j in 0..p.jobs {
                for pg in p.map_out_base(j)..p.map_out_base(j) + 2 * p.input_pages {
                    assert_eq!(m.get(&(pg, FILE_WRITE)), Some(&1), "page {pg}");
                }
            }
            // Reduces read every map output page once (the shuffle).
            for pg in p.map_out_base(0)..p.map_out_base(0) + p.input_pages {
                assert_eq!(m.get(&(pg, FILE_READ)), Some(&1), "page {pg}");
            }
            // The input is never written.
            assert!(v.iter().all(|a| !(a.is_write() && a.is_file() && a.page < p.input_pages)));
        }
    }

    #[test]
    fn reduces_start_after_the_jobs_maps() {
        let p = TeraSortParams { jobs: 1, ..small() };
        let v = all(p.clone(), 7);
        let out = p.output_base(0);
        let first_output = v.iter().position(|a| a.is_write() && a.page >= out && a.page < out + p.input_pages).unwrap();
        let last_input = v.iter().rposition(|a| a.page < p.input_pages).unwrap();
        assert!(last_input < first_output);
        // The output is written in partition order within each reduce, all pages once.
        let written: std::collections::BTreeSet<u32> = v.iter().filter(|a| a.is_write() && a.page >= out && a.page < out + p.input_pages).map(|a| a.page).collect();
        assert_eq!(written.len() as u32, p.input_pages);
    }

    #[test]
    fn jvm_heap_places_buffers_as_g1_and_grows_only_as_needed() {
        // One job, 2 slots; a heap of at most 64 G1 regions (1 MiB, 256 pages), 4 of them
        // committed at start. A 40-page sort buffer takes one region.
        let slot = TeraSortParams { jobs: 1, cpus: 2, ..small() };
        let heap = TeraSortParams { heap_pages: 64 * 256, heap_init_pages: 4 * 256, ..slot.clone() };
        heap.validate().unwrap();
        assert_eq!((heap.anon_pages(), heap.nr_accesses()), (64 * 256, slot.nr_accesses()));
        let (a, b) = (all(slot.clone(), 5), all(heap.clone(), 5));
        // The same work on the page cache, and as many anonymous accesses ...
        assert_eq!(file_multiset(&a), file_multiset(&b));
        assert_eq!(a.iter().filter(|x| !x.is_file()).count(), b.iter().filter(|x| !x.is_file()).count());
        // ... all inside the heap, in the regions of the initial heap: two live buffers and
        // the dead ones reclaimed at each pause fit in 4 regions, so the 12 maps' and 5
        // reduces' buffers reuse them and the heap never grows towards its maximum.
        let base = heap.heap_base(0);
        let regions = |v: &[Access], base: u32| v.iter().filter(|x| !x.is_file()).map(|x| (x.page - base) / 256).collect::<std::collections::BTreeSet<_>>();
        assert!(b.iter().filter(|x| !x.is_file()).all(|x| x.page >= base && x.page < base + 64 * 256));
        let touched = regions(&b, base);
        assert!(touched.len() <= 4 && touched.iter().all(|&r| r < 4), "{touched:?}");
        // 4 slots need 4 live buffers (plus the dead one a pause reclaims): the heap grows
        // beyond its single initial region, only that far.
        let four = TeraSortParams { cpus: 4, heap_init_pages: 256, ..heap.clone() };
        let c = all(four.clone(), 5);
        let touched = regions(&c, four.heap_base(0));
        assert!(touched.len() > 1 && touched.len() <= 2 * four.slots() as usize, "{touched:?}");
        assert_eq!(c, all(four, 5), "same seed, same trace");
        // A heap of (2·slots − 1) buffers' regions is enough; one region less is not.
        let need = heap.heap_needed() as u32;
        assert_eq!(need, 3 * 256);
        let tight = TeraSortParams { heap_pages: need, heap_init_pages: 256, ..slot.clone() };
        let d = all(tight.clone(), 5);
        assert!(d.iter().filter(|x| !x.is_file()).all(|x| x.page >= tight.heap_base(0) && x.page < tight.heap_base(0) + need));
        let e = TeraSortParams { heap_pages: need - 1, heap_init_pages: 256, ..slot }.validate().unwrap_err();
        assert!(e.to_string().contains("OutOfMemoryError"), "{e}");
    }

    /// One job on 2 CPUs, 12 splits of 200 pages (each map output a humongous segment of
    /// one 256-page G1 region), a 300-page sort buffer, one reduce, a heap of `regions`.
    fn one_reduce(regions: u32) -> TeraSortParams {
        TeraSortParams { cpus: 2, jobs: 1, input_pages: 2400, split_pages: 200, sort_buffer_pages: 300, reduces: 1, heap_pages: regions * 256, heap_init_pages: 4 * 256, ..small() }
    }

    /// Anonymous pages written after the job's last input read: its reduce's segments.
    fn reduce_anon_written(p: &TeraSortParams, v: &[Access]) -> std::collections::BTreeSet<u32> {
        let last_map_read = v.iter().rposition(|a| a.is_file() && a.page < p.input_pages).unwrap();
        v[last_map_read + 1..].iter().filter(|a| !a.is_file() && a.is_write()).map(|a| a.page).collect()
    }

    #[test]
    fn one_reduce_holds_every_map_output_in_the_heap() {
        // 64 regions: mergeThreshold = 0.70 × 0.66 of the heap ≈ 7,569 pages' bytes, above
        // the 2,496 the 12 segments commit (104-byte IFile records): all stay in memory.
        let p = one_reduce(64);
        p.validate().unwrap();
        assert_eq!(p.reduce_merged(0), 0);
        let v = all(p.clone(), 3);
        assert_eq!(v.len() as u64, p.nr_accesses());
        // Every map output page is copied to a page of its own: nothing is reused while
        // the reduce holds them all, and the final merge reads each once.
        let held = reduce_anon_written(&p, &v);
        assert_eq!(held.len() as u32, p.input_pages);
        // Each is a humongous `byte[]` in a region of its own (200 of its 256 pages).
        let base = p.heap_base(0);
        let regions = held.iter().map(|pg| (pg - base) / 256).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(regions.len() as u32, p.maps());
        let reads = v.iter().filter(|a| !a.is_file() && !a.is_write() && held.contains(&a.page)).count() as u32;
        assert!(reads >= p.input_pages);
    }

    #[test]
    fn the_shuffle_merges_to_disk_past_its_threshold() {
        // 16 regions: mergeThreshold ≈ 1,892 pages' bytes; segments commit 208 each, so the
        // tenth starts the in-memory merge (2,080 ≥ 1,892): 10 outputs go to disk, 2 stay.
        let p = one_reduce(16);
        p.validate().unwrap();
        assert_eq!(p.reduce_merged(0), 2000);
        let v = all(p.clone(), 3);
        assert_eq!(v.len() as u64, p.nr_accesses());
        assert_eq!(v.iter().filter(|a| a.is_file() && a.is_write()).count() as u64, p.file_writes());
        let merged = p.files().into_iter().find(|f| f.name == "job0/reduce-0.merged").unwrap();
        assert_eq!(merged.nr_pages, 2000);
        let m = file_multiset(&v);
        for pg in merged.first..merged.first + merged.nr_pages {
            assert_eq!((m.get(&(pg, FILE_WRITE)), m.get(&(pg, FILE_READ))), (Some(&1), Some(&1)), "page {pg}");
        }
        // The merged segments die, and later segments reuse their regions.
        assert!((reduce_anon_written(&p, &v).len() as u32) < p.input_pages);
    }

    #[test]
    fn the_benchmarks_heaps_merge_as_the_real_program() {
        // The scenario's sizes at --scale 1 (the benchmark ÷ 8): the measured program merged
        // 285 of its map outputs to disk with the 20G heap and none with the 22G heap
        // (docs/terasort-jvm.md).
        let d = TeraSortParams { heap_init_pages: 4096 * 32, ..TeraSortParams::default() };
        let p20 = TeraSortParams { heap_pages: 20480 * 32, ..d.clone() };
        let p22 = TeraSortParams { heap_pages: 22528 * 32, ..d };
        assert_eq!(p20.reduce_merged(0), 285 * p20.split_pages);
        assert_eq!(p22.reduce_merged(0), 0);
    }

    #[test]
    fn longer_concurrent_cycles_leave_more_dead_buffers_in_the_heap() {
        let distinct = |c: f64| {
            let p = TeraSortParams { sort_buffer_pages: 256, conc_cycle_maps: c, ..one_reduce(64) };
            all(p, 4).iter().filter(|a| !a.is_file()).map(|a| a.page).collect::<std::collections::BTreeSet<_>>().len()
        };
        let (none, two) = (distinct(0.0), distinct(2.0));
        assert!(two > none, "{two} vs {none}");
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let e = TeraSortParams { tasks_per_cpu: 0.0, ..small() }.validate().unwrap_err();
        assert!(e.to_string().contains("tasks_per_cpu"), "{e}");
        let e = TeraSortParams { sort_buffer_pages: 0, ..small() }.validate().unwrap_err();
        assert!(e.to_string().contains("sort_buffer_pages"), "{e}");
        let e = TeraSortParams { input_pages: u32::MAX - 1, ..small() }.validate().unwrap_err();
        assert!(e.to_string().contains("2^32"), "{e}");
        TeraSortParams::default().validate().unwrap();
    }
}
