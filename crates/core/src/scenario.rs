//! The built-in scenarios, one table ([`list`]): each row is a name, a description, the
//! machine (config overrides, sizes that scale), the workload (a generator or program),
//! the policy axis a comparison runs over and the report that prints it. `reclaimlab
//! scenarios`, `reclaimlab run`'s dispatch and docs/scenarios.md's list read it; adding a
//! scenario is one row plus its generator (a masim-style program here or in a
//! submodule, or an access-stream generator in `reclaimlab_trace::gen`).
//! docs/scenarios.md describes each one.
//!
//! `default` — a 512 MiB machine with zram swap running a database-like process: a hot
//! anonymous heap (160 MiB, Zipf 0.8, 30% writes), a 640 MiB data file read through the
//! page cache (Zipf 0.9), and in the middle a one-time 256 MiB sequential read of a log
//! file (a backup scan). The file working set exceeds memory, so kswapd and direct
//! reclaim run, file pages refault, and the scan tests whether the hot set survives.
//!
//! `tpcc-stock-level` — seed 001 (the MGLRU refault-distance RFC): a 3-member MongoDB
//! replica set in cgroups `replica1..3`, each with a WiredTiger cache (anonymous); 30
//! py-tpcc clients run STOCK_LEVEL against the primary (`replica1`), whose data files are
//! read through the page cache and exceed memory ([`reclaimlab_trace::gen::tpcc`]). Scale 1
//! is the seed at 1/32 (a 1 GiB machine, 160 MiB caches, 500 warehouses with 1/32 of their
//! customers and items); scale 32 is the seed's 32 GiB VM.
//!
//! `hadoop-terasort` — seed 002 (the MGLRU Hadoop TeraSort benchmark): 12 concurrent
//! TeraSort jobs in local mode sharing one TeraGen input, map tasks with `io.sort.mb`
//! sort buffers (anonymous), spills, shuffle and sorted output through the page cache
//! ([`reclaimlab_trace::gen::terasort`](mod@reclaimlab_trace::gen::terasort)). Scale 1 is the seed at 1/8 (a 32 GiB machine,
//! 48 CPUs); scale 8 is the seed's machine. Its workload takes parameters (`tasks_per_cpu` = ½, 1, 2 — the seed's
//! concurrency — and `cpus`, `jobs`, `sort_mb`) through [`Scenario::source_with`].
//!
//! `damon-reclaim-parsec` — seed 004: DAMON_RECLAIM on 24 PARSEC3/SPLASH-2X profiles
//! ([`parsec`]); its report is the RFC's quota × prioritization matrix, which the Python
//! experiment harness runs (`reclaimlab.experiment.damon_quota`).
//!
//! `leveldb-getscan`, `ycsb-b`, `kernel-build`, `fio-zipf`, `file-search` — the workloads of
//! the 2026 MGLRU refault-distance RFC's cover letter and of cache_ext
//! ([`cover_letter`]; shapes and sizes in docs/scenarios.md), as masim-style programs.
//!
//! `thpscale`, `usemem-stress-numa-compact` — seed 003: tasks that map and fault on the one
//! machine ([`thp`]), run under every THP allocation policy.
//!
//! A scenario also declares the policies a comparison run of it compares (callers skip the
//! names not registered) and, for a transactional workload, its transaction count and
//! clients, from which callers derive transactions/s. The engine knows nothing of
//! scenarios.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use reclaimlab_trace::gen::tpcc::{ClientStart, StockPlan, TPCC_ITEMS};
use reclaimlab_trace::{generate, terasort, tpcc_stock_level, AccessKind, AccessSource, Pattern, Phase, Program, Region, Stream, TeraSortParams, TpccParams};

/// What a scenario replays.
pub enum Workload {
    /// A masim-style program (fixed size: the scenario does not scale).
    Program(fn() -> Program),
    /// py-tpcc STOCK_LEVEL with the parameters for a scale factor.
    Tpcc(fn(f64) -> TpccParams),
    /// Hadoop TeraSort with the parameters for a scale factor and workload parameters.
    TeraSort(TeraSortFn),
    /// Seed 004's PARSEC3/SPLASH-2X profile named by the `workload` parameter.
    Parsec,
    /// Seed 003's tasks on the one machine ([`thp::thpscale`], [`thp::usemem`]): no
    /// access stream; the report runs them.
    Tasks,
}

/// What `reclaimlab run SCENARIO` (no single policy) runs and prints; the Python CLI
/// dispatches on [`Report::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// One run per policy of [`Scenario::policies`], one table of metrics and vmstat.
    Policies,
    /// DAMON_RECLAIM off and under each of [`parsec::PARSEC_CONFIGS`], per workload
    /// profile, under the scenario's one policy: the RFC's quota × prioritization table.
    DamonQuota,
    /// Every THP allocation policy (`thp.policy`) under the one reclaim policy, in the
    /// mmtests layout.
    ThpPolicies,
}

impl Report {
    pub fn name(self) -> &'static str {
        match self {
            Report::Policies => "policies",
            Report::DamonQuota => "damon-quota",
            Report::ThpPolicies => "thp-policies",
        }
    }
}

/// The `cache:*` rows a comparison of a scenario that names no policies runs beside every
/// kernel model (five of them: all would double the run; `--policy cache:NAME` runs any
/// other).
pub const DEFAULT_CACHE_POLICIES: &[&str] = &["cache:lru", "cache:clock", "cache:arc", "cache:s3fifo", "cache:lirs"];

/// TeraSort parameters from a scale factor and workload parameters (name, value).
pub type TeraSortFn = fn(f64, &[(&str, &str)]) -> Result<TeraSortParams>;

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    /// Policies a comparison run compares, in table order; empty = every registered
    /// kernel model and [`DEFAULT_CACHE_POLICIES`] ([`Scenario::compared`]). Names not
    /// registered in this build are skipped. For a
    /// [`Report::DamonQuota`] or [`Report::ThpPolicies`] report, the one reclaim policy
    /// the report's own axis runs under.
    pub policies: &'static [&'static str],
    /// The policy ratios are taken against, when it ran ("" = the first that ran).
    pub baseline: &'static str,
    /// Config overrides at scale 1.
    overrides: &'static [(&'static str, &'static str)],
    /// Sizes that scale: (key, MiB at scale 1).
    scaled_sizes: &'static [(&'static str, f64)],
    /// Workload parameters [`Scenario::source_with`] accepts: (name, default, meaning).
    pub params: &'static [(&'static str, &'static str, &'static str)],
    workload: Workload,
    /// What a comparison run of it runs and prints.
    pub report: Report,
}

impl Scenario {
    /// The machine this scenario runs on (defaults plus its overrides), at scale 1.
    pub fn config(&self) -> SimConfig {
        self.config_at(1.0).expect("scale 1 is valid")
    }

    /// The machine at `scale` (sizes grow linearly; only scalable scenarios accept ≠ 1).
    pub fn config_at(&self, scale: f64) -> Result<SimConfig> {
        self.check_scale(scale)?;
        let mut c = SimConfig::default();
        for (k, v) in self.overrides {
            c.set(k, v).expect("scenario overrides are valid keys");
        }
        for (k, mib) in self.scaled_sizes {
            let kib = (mib * scale * 1024.0).round().max(4.0) as u64;
            c.set(k, &format!("{kib}K"))?;
        }
        Ok(c)
    }

    /// The policies a comparison run of it runs, in order: those of [`Self::policies`]
    /// registered in this build, or, if it names none, every registered kernel model and
    /// the registered [`DEFAULT_CACHE_POLICIES`], in registry order.
    pub fn compared(&self) -> Vec<&'static str> {
        let registered = crate::sim::registry::table();
        if self.policies.is_empty() {
            registered.iter().map(|p| p.name.as_str()).filter(|n| !n.starts_with("cache:") || DEFAULT_CACHE_POLICIES.contains(n)).collect()
        } else {
            self.policies.iter().copied().filter(|n| registered.iter().any(|p| p.name == *n)).collect()
        }
    }

    /// Whether `--scale` applies to this scenario.
    pub fn scalable(&self) -> bool {
        matches!(self.workload, Workload::Tpcc(_) | Workload::TeraSort(_) | Workload::Parsec)
    }

    fn check_scale(&self, scale: f64) -> Result<()> {
        if !scale.is_finite() || scale <= 0.0 || scale > 1024.0 {
            return Err(Error::invalid(format!("scenario {}: scale {scale} must be in (0, 1024]", self.name)));
        }
        if scale != 1.0 && !self.scalable() {
            return Err(Error::invalid(format!("scenario {} has a fixed size (no --scale)", self.name)));
        }
        Ok(())
    }

    /// The workload program of a program scenario (None for a generator scenario).
    pub fn program(&self) -> Option<Program> {
        match self.workload {
            Workload::Program(f) => Some(f()),
            Workload::Tpcc(_) | Workload::TeraSort(_) | Workload::Parsec | Workload::Tasks => None,
        }
    }

    /// The TPC-C parameters of a STOCK_LEVEL scenario at `scale`.
    pub fn tpcc_params(&self, scale: f64) -> Option<TpccParams> {
        match self.workload {
            Workload::Tpcc(f) => Some(f(scale)),
            Workload::Program(_) | Workload::TeraSort(_) | Workload::Parsec | Workload::Tasks => None,
        }
    }

    /// The TeraSort parameters of a TeraSort scenario at `scale` with workload `params`.
    pub fn terasort_params(&self, scale: f64, params: &[(&str, &str)]) -> Result<Option<TeraSortParams>> {
        self.check_params(params)?;
        match self.workload {
            Workload::TeraSort(f) => f(scale, params).map(Some),
            _ => Ok(None),
        }
    }

    /// Check workload parameters against the ones this scenario declares.
    fn check_params(&self, params: &[(&str, &str)]) -> Result<()> {
        for (k, _) in params {
            if !self.params.iter().any(|(n, _, _)| n == k) {
                let known: Vec<&str> = self.params.iter().map(|p| p.0).collect();
                return Err(Error::invalid(format!(
                    "scenario {}: unknown workload parameter '{k}' (accepted: {})",
                    self.name,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )));
            }
        }
        Ok(())
    }

    /// For a transactional workload: (transactions the trace completes, concurrent
    /// clients). The trace ends with its last transaction at every scale, so callers take
    /// py-tpcc's rate as transactions / (clients × runtime): each client runs
    /// transactions back to back, so their summed latency is clients × runtime.
    pub fn transactions(&self) -> Option<(u64, u32)> {
        self.tpcc_params(1.0).map(|p| (p.transactions, p.clients))
    }

    /// Its access stream at scale 1, generated from `seed`.
    pub fn source(&self, seed: u64) -> Result<Box<dyn AccessSource>> {
        self.source_at(seed, 1.0)
    }

    /// Its access stream at `scale`, generated from `seed`.
    pub fn source_at(&self, seed: u64, scale: f64) -> Result<Box<dyn AccessSource>> {
        self.source_with(seed, scale, &[])
    }

    /// Its access stream at `scale` with workload parameters `params` (name, value) —
    /// only the ones in [`Scenario::params`]; the others keep their defaults.
    pub fn source_with(&self, seed: u64, scale: f64, params: &[(&str, &str)]) -> Result<Box<dyn AccessSource>> {
        self.check_scale(scale)?;
        self.check_params(params)?;
        Ok(match self.workload {
            Workload::Program(f) => generate(f(), seed)?,
            Workload::Tpcc(f) => tpcc_stock_level(tpcc_with(f(scale), params)?, seed)?,
            Workload::TeraSort(f) => terasort(f(scale, params)?, seed)?,
            Workload::Parsec => {
                let name = params.iter().find(|(k, _)| *k == "workload").map_or("freqmine", |(_, v)| v);
                let p = crate::scenario::parsec::parsec_program(name, scale)
                    .ok_or_else(|| Error::invalid(format!("scenario {}: unknown workload '{name}' (one of the 24 in `reclaimlab scenarios`)", self.name)))?;
                generate(p, seed)?
            }
            Workload::Tasks => return Err(Error::invalid(format!("scenario {} runs tasks on the one machine, not an access stream: `reclaimlab run {}`", self.name, self.name))),
        })
    }
}

const MIB: u32 = 256; // pages per MiB

/// The policies the 2026 cover letter's workloads compare: classic, mainline MGLRU, the
/// 2023 reconstruction and the 2026 re-post.
const REFAULT_DISTANCE_POLICIES: &[&str] = &["classic@6.15", "mglru@6.15", "mglru+refault-distance-rfc-v3", "mglru+refault-distance-2026"];

fn default_program() -> Program {
    let mut heap = Region::new("heap", 160 * MIB, AccessKind::AnonMapped);
    heap.write_ratio = 0.3;
    let data = Region::new("data", 640 * MIB, AccessKind::FileRead);
    let log = Region::new("log", 256 * MIB, AccessKind::FileRead);
    let steady = |name: &str, accesses| Phase {
        name: name.into(),
        accesses,
        streams: vec![Stream { region: 0, pattern: Pattern::Zipf { alpha: 0.8 }, weight: 0.5 }, Stream { region: 1, pattern: Pattern::Zipf { alpha: 0.9 }, weight: 0.5 }],
        reclaims: Vec::new(),
    };
    let mut scan = steady("scan", 2_000_000);
    scan.streams.push(Stream { region: 2, pattern: Pattern::Sequential, weight: 0.4 });
    Program { regions: vec![heap, data, log], phases: vec![steady("warm", 4_000_000), scan, steady("steady", 4_000_000)], repeat: 1 }
}

/// Seed 001 at `scale` (32 = the seed: 500 warehouses of 3,000 customers per district and
/// 100,000 items, 5 GiB WiredTiger caches on a 32 GiB VM; docs/scenarios.md). Scaling keeps
/// the 500 warehouses and scales customers, items and caches, so each transaction reads the
/// same share of the data at every scale; the transaction count stays.
fn tpcc_params(scale: f64) -> TpccParams {
    let f = scale / 32.0;
    let n = |x: f64| (x * f).round().max(1.0) as u32;
    TpccParams { customers: n(3_000.0), items: n(TPCC_ITEMS as f64), wt_cache_pages: n(5.0 * 1024.0 * MIB as f64), ..TpccParams::default() }
}

/// `p` with the workload parameters `stock_plan` (`s_i_id` | `s_w_id`), `read_replicas`,
/// `stock_disk_bytes` and `customer_disk_bytes`.
fn tpcc_with(mut p: TpccParams, params: &[(&str, &str)]) -> Result<TpccParams> {
    for &(k, v) in params {
        match (k, v.trim()) {
            ("stock_plan", "s_i_id") => p.stock_plan = StockPlan::ItemIndex,
            ("stock_plan", "s_w_id") => p.stock_plan = StockPlan::WarehouseIndex,
            ("client_start", "staggered") => p.client_start = ClientStart::Staggered,
            ("client_start", "lockstep") => p.client_start = ClientStart::Lockstep,
            ("read_replicas" | "stock_disk_bytes" | "customer_disk_bytes", v) => {
                let x: u32 = v.parse().ok().filter(|&x| x > 0).ok_or_else(|| Error::invalid(format!("scenario tpcc-stock-level: {k}={v:?} must be a positive whole number")))?;
                match k {
                    "read_replicas" => p.read_replicas = x,
                    "stock_disk_bytes" => p.stock_disk_bytes = x,
                    _ => p.customer_disk_bytes = x,
                }
            }
            _ => return Err(Error::invalid(format!("scenario tpcc-stock-level: {k}={v:?} is not valid (stock_plan: s_i_id or s_w_id; client_start: staggered or lockstep)"))),
        }
    }
    p.validate()?;
    Ok(p)
}

/// Seed 002 at `scale` (1 = 1/8 of the seed's 256 GB machine; docs/scenarios.md) with
/// workload parameters `tasks_per_cpu`, `cpus`, `jobs`, `sort_mb`, `heap_mb`, `heap_init_mb`,
/// `reduces`, `conc_cycle_maps`, `map_cpu_ns_per_record`, `reduce_cpu_ns_per_record`.
fn terasort_params(scale: f64, params: &[(&str, &str)]) -> Result<TeraSortParams> {
    let n = |x: f64| (x * scale).round().max(1.0);
    let d = TeraSortParams::default();
    let mut p = TeraSortParams { input_pages: n(d.input_pages as f64) as u32, split_pages: n(d.split_pages as f64) as u32, ..d };
    // io.sort.mb in the seed's MB (10^6 bytes), scaled like memory: 1000 MB / 8 = 30,518 pages.
    let mut sort_mb = 1000.0;
    // HADOOP_HEAPSIZE_MAX in MiB (the seed's run_terasort.sh: 20G with swap off, 22G with
    // swap on; the scenario's default swap is on), scaled like memory; 0: no heap model.
    let mut heap_mb = 22528.0;
    // InitialHeapSize (-Xms) in the same MiB: the benchmark gives none, so OpenJDK's
    // default, 1/64 of physical memory (256 GiB / 64 = 4096).
    let mut heap_init_mb = 4096.0;
    // G1's concurrent cycle, in map tasks of one thread (crates/trace/src/gen/terasort.rs).
    p.conc_cycle_maps = 2.0;
    // The JVM's CPU time per record in each phase, measured (docs/terasort-jvm.md, "CPU
    // time": 50.1 and 21.5 s for 12.5 M records, 22G heap, 4 tasks).
    p.map_cpu_ns_per_record = 4010.0;
    p.reduce_cpu_ns_per_record = 1720.0;
    for &(k, v) in params {
        let num = |v: &str| -> Result<f64> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| Error::invalid(format!("scenario hadoop-terasort: {k}={v:?} must be a positive number")))
        };
        let int = |v: &str| -> Result<u32> {
            let x = num(v)?;
            if x.fract() != 0.0 || x > u16::MAX as f64 {
                return Err(Error::invalid(format!("scenario hadoop-terasort: {k}={v:?} must be a whole number ≤ 65535")));
            }
            Ok(x as u32)
        };
        match k {
            "tasks_per_cpu" => p.tasks_per_cpu = num(v)?,
            "cpus" => p.cpus = int(v)?,
            "jobs" => p.jobs = int(v)?,
            "sort_mb" => sort_mb = num(v)?,
            "heap_mb" if v.trim() == "0" => heap_mb = 0.0,
            "heap_mb" => heap_mb = num(v)?,
            "heap_init_mb" => heap_init_mb = num(v)?,
            "reduces" => p.reduces = int(v)?,
            "conc_cycle_maps" if v.trim() == "0" => p.conc_cycle_maps = 0.0,
            "conc_cycle_maps" => p.conc_cycle_maps = num(v)?,
            "map_cpu_ns_per_record" | "reduce_cpu_ns_per_record" => {
                let x = if v.trim() == "0" { 0.0 } else { num(v)? };
                *(if k == "map_cpu_ns_per_record" { &mut p.map_cpu_ns_per_record } else { &mut p.reduce_cpu_ns_per_record }) = x;
            }
            _ => unreachable!("checked by Scenario::check_params"),
        }
    }
    p.sort_buffer_pages = ((sort_mb * 1e6 / 4096.0 / 8.0 * scale).round() as u32).max(1);
    // A MiB is 256 pages; 1/8 at scale 1.
    let heap = (heap_mb * 256.0 / 8.0 * scale).round();
    if heap > u32::MAX as f64 / 2.0 {
        return Err(Error::invalid(format!("scenario hadoop-terasort: heap_mb={heap_mb} is too large")));
    }
    p.heap_pages = heap as u32;
    p.heap_init_pages = ((heap_init_mb * 256.0 / 8.0 * scale).round().min(u32::MAX as f64) as u32).clamp(1, p.heap_pages.max(1));
    p.validate()?;
    Ok(p)
}

mod cover_letter;
pub mod parsec;
pub mod thp;
use cover_letter::{file_search, fio_zipf, kernel_build, leveldb_getscan, ycsb_b};

/// The THP scenarios' machine: two nodes, as in the mmtests report's two-socket runs; THP
/// written `always` as the benchmark's setup does, so a smaller `--memory` keeps it (the
/// boot default would turn it off below 512 MiB); the per-CPU page lists of the report's
/// kernels (4.20-rc4 mmots and the 5.x policies: every kernel up to 5.13 kept six batches
/// a CPU); 32 CPUs, 16 a node: mmtests runs thpscale's thread ladder up to the machine's
/// CPU count (`THPSCALE_MAX_THREADS=$NUMCPUS`), and the report's ends at 32. So a thread
/// has a CPU of its own and kswapd one beside them (sim/daemons.rs).
macro_rules! thp_machine {
    ($($extra:expr),*) => {
        &[("machine.memory", "1G"), ("machine.nodes", "2"), ("machine.cpus", "32"), ("transparent_hugepage.enabled", "always"), ("machine.pcp_lists", "5.13"), $($extra),*]
    };
}

/// The table: one row per scenario, in `reclaimlab scenarios` order.
static SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "default",
        description: "512M machine, zram: hot anon heap + page-cache data set larger than memory + a one-time streaming scan",
        policies: &[],
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "512M"), ("swap.device", "zram"), ("swap.size", "512M")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(default_program),
        report: Report::Policies,
    },
    Scenario {
        name: "tpcc-stock-level",
        description: "MongoDB STOCK_LEVEL, after Kairui Song's refault-distance RFC v3 (LKML, Sep 2023): 30 py-tpcc \
                      clients run STOCK_LEVEL on the primary of a 3-member MongoDB replica set \
                      (cgroups replica1..3, WiredTiger caches; the primary's data files > memory), zram; 1G machine \
                      at --scale 1; workload parameters stock_plan, read_replicas, stock_disk_bytes, customer_disk_bytes",
        policies: &[
            "classic@6.15",
            "classic+refault-distance-rfc-v3",
            "mglru@6.6",
            "mglru@6.15",
            "mglru+refault-distance-rfc-v3",
            "mglru+fix-underprotected-page-cache",
            "mglru@6.12",
        ],
        baseline: "mglru@6.15",
        overrides: &[("swap.device", "zram")],
        scaled_sizes: &[("machine.memory", 1024.0)],
        params: &[
            ("stock_plan", "s_i_id", "index MongoDB's planner picks for the STOCK count: s_i_id or s_w_id"),
            ("read_replicas", "1", "replica-set members serving reads (1 = the primary, py-tpcc's connection; 3 = all)"),
            ("stock_disk_bytes", "375", "on-disk (snappy) bytes of a STOCK document (estimate, docs/scenarios.md)"),
            ("customer_disk_bytes", "1180", "on-disk (snappy) bytes of a CUSTOMER document with its embedded order"),
            (
                "client_start",
                "staggered",
                "where the clients are when the trace starts: staggered (a drawn step of their first transaction) or lockstep (all at a fresh transaction)",
            ),
        ],
        workload: Workload::Tpcc(tpcc_params),
        report: Report::Policies,
    },
    Scenario {
        name: "hadoop-terasort",
        description: "MGLRU's Apache Hadoop TeraSort benchmark on 5.15 (LKML 2022): 12 concurrent Hadoop TeraSort jobs (local mode, shared TeraGen input, io.sort.mb \
                      sort buffers, spills/shuffle/output through the page cache), zram; 32G machine at --scale 1; \
                      workload parameter tasks_per_cpu = 0.5, 1, 2",
        policies: &["classic@6.15", "mglru@6.15"],
        baseline: "classic@6.15",
        // The benchmark's host: 48 CPUs and a 2 TB NVMe SSD for the data and swap (its make
        // unnamed; docs/scenarios.md takes an Intel P4500 2.0 TB's rated figures).
        overrides: &[
            ("swap.device", "zram"),
            ("vm.swappiness", "1"),
            ("machine.cpus", "48"),
            ("cost.file_read_ns", "85000"),
            ("block.parallel_reads", "42"),
            ("cost.file_write_ns", "3900"),
            ("swap.ssd.read_ns", "85000"),
            ("swap.ssd.write_ns", "3900"),
        ],
        scaled_sizes: &[("machine.memory", 32768.0), ("swap.size", 8192.0)],
        params: &[
            ("tasks_per_cpu", "1", "concurrency: average tasks per CPU (the seed: 0.5, 1, 2)"),
            ("cpus", "48", "CPUs the jobs' task slots are sized for (`reclaimlab run`/`experiment`: the run's machine.cpus, on which the engine runs the tasks, unless given)"),
            ("jobs", "12", "concurrent TeraSort jobs, each running round(cpus × tasks_per_cpu / jobs) tasks at once"),
            ("sort_mb", "1000", "mapreduce.task.io.sort.mb in the seed's MB (scaled like memory: 1/8 at scale 1)"),
            ("heap_mb", "22528", "HADOOP_HEAPSIZE_MAX (-Xmx) of each job's G1 heap in MiB, scaled like memory (the benchmark: 20480 swap off, 22528 swap on; 0: no heap model)"),
            (
                "heap_init_mb",
                "4096",
                "InitialHeapSize (-Xms) of each job's G1 heap in MiB, scaled like memory (the benchmark gives none: OpenJDK's default, 1/64 of its 256 GiB; at most heap_mb)",
            ),
            ("reduces", "1", "mapreduce.job.reduces: reduce tasks per job (Hadoop's default, which the benchmark keeps)"),
            (
                "conc_cycle_maps",
                "2",
                "how long G1's concurrent cycle runs, in map tasks of one thread (set from the real TeraSort heap at 2 tasks; docs/terasort-jvm.md); 0: before the next allocation",
            ),
            (
                "map_cpu_ns_per_record",
                "4010",
                "the JVM's CPU time per 100-byte record in the map phase, ns (measured: docs/terasort-jvm.md), spread over the maps' accesses; 0 with reduce_cpu_ns_per_record 0: untimed, cost.access_ns per access",
            ),
            (
                "reduce_cpu_ns_per_record",
                "1720",
                "the same in the reduce phase (fetch, merges, output), spread over the reduce's accesses; a merge to disk costs its accesses at that rate",
            ),
        ],
        workload: Workload::TeraSort(terasort_params),
        report: Report::Policies,
    },
    Scenario {
        name: "damon-reclaim-parsec",
        description: "DAMON_RECLAIM on 24 PARSEC3/SPLASH-2X profiles (workload parameter), after SeongJae Park's \
                      DAMON-based proactive reclamation RFC v3 (LKML, Jul 2021), zram; 16.25G machine (the RFC's \
                      130G / 8) at --scale 1; `reclaimlab run` prints the RFC's quota × prioritization table",
        policies: &["classic@6.15"],
        baseline: "classic@6.15",
        overrides: &[
            ("swap.device", "zram"),
            ("cost.access_ns", "20000"),
            // The evaluation's VM had far more memory than the workloads used: watermarks
            // that keep the scheme active (as damon-tests' pdarc schemes, high 1000 ‰, low 0), and
            // its pageout age (5 s) on the scenario's time scale (/8).
            ("damon_reclaim.wmarks_high", "1000"),
            ("damon_reclaim.wmarks_mid", "1000"),
            ("damon_reclaim.wmarks_low", "0"),
            ("damon_reclaim.min_age", "625000"),
            ("damon_reclaim.quota_sz", "0"),
            // The RFC measured on v5.13: its per-CPU lists held six batches each, where
            // 6.12's grow towards an eighth of the zone and hold what kdamond frees.
            ("machine.pcp_lists", "5.13"),
        ],
        scaled_sizes: &[("machine.memory", 16640.0), ("swap.size", 512.0)],
        params: &[("workload", "freqmine", "one of the 24 profiles (blackscholes, ..., splash2x/raytrace, ...)")],
        workload: Workload::Parsec,
        report: Report::DamonQuota,
    },
    Scenario {
        name: "leveldb-getscan",
        description: "2026 refault-distance RFC / cache_ext: LevelDB GET/SCAN, Zipf point gets on a hot set and long \
                      range scans over an LSM store 3x memory; 256M machine, zram",
        policies: REFAULT_DISTANCE_POLICIES,
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "256M"), ("swap.device", "zram"), ("swap.size", "256M")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(leveldb_getscan),
        report: Report::Policies,
    },
    Scenario {
        name: "ycsb-b",
        description: "2026 refault-distance RFC: MongoDB YCSB workload B, 95% reads / 5% updates, Zipfian, on a \
                      WiredTiger cache (anon) and data files 3x memory; 512M machine, zram",
        policies: REFAULT_DISTANCE_POLICIES,
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "512M"), ("swap.device", "zram"), ("swap.size", "512M")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(ycsb_b),
        report: Report::Policies,
    },
    Scenario {
        name: "kernel-build",
        description: "2026 refault-distance RFC: a kernel build, compiler heaps (anon, most of memory) reading hot \
                      headers and each source once, writing objects; 512M machine, zram",
        policies: REFAULT_DISTANCE_POLICIES,
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "512M"), ("swap.device", "zram"), ("swap.size", "1G")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(kernel_build),
        report: Report::Policies,
    },
    Scenario {
        name: "fio-zipf",
        description: "2026 refault-distance RFC: fio buffered random reads, Zipf over a file 2x memory; 256M machine",
        policies: REFAULT_DISTANCE_POLICIES,
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "256M"), ("swap.device", "zram"), ("swap.size", "256M")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(fio_zipf),
        report: Report::Policies,
    },
    Scenario {
        name: "file-search",
        description: "cache_ext: grep -r over a source tree 1.5x memory, four passes (a cyclic scan: MRU's case); \
                      256M machine",
        policies: REFAULT_DISTANCE_POLICIES,
        baseline: "mglru@6.15",
        overrides: &[("machine.memory", "256M"), ("swap.device", "zram"), ("swap.size", "256M")],
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Program(file_search),
        report: Report::Policies,
    },
    Scenario {
        name: "thpscale",
        description: "mmtests thpscale, after Mel Gorman's __GFP_THISNODE results (LKML, Dec 2018): per thread count \
                      (1..32, one after another on one machine), fill, punch holes, read a file into them, then fault \
                      a region one huge page at a time, with and without MADV_HUGEPAGE; fault latency and % huge per \
                      THP policy",
        policies: &["classic@6.15"],
        baseline: "classic@6.15",
        overrides: thp_machine!(),
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Tasks,
        report: Report::ThpPolicies,
    },
    Scenario {
        name: "usemem-stress-numa-compact",
        description: "mmtests usemem stress, after Mel Gorman's __GFP_THISNODE results (LKML, Dec 2018): page cache \
                      on both nodes, then usemem (defrag=always) faulting more than a node; elapsed time and \
                      reclaim/compaction/NUMA counters per THP policy",
        policies: &["classic@6.15"],
        baseline: "classic@6.15",
        overrides: thp_machine!(("transparent_hugepage.defrag", "always")),
        scaled_sizes: &[],
        params: &[],
        workload: Workload::Tasks,
        report: Report::ThpPolicies,
    },
];

pub fn list() -> &'static [Scenario] {
    SCENARIOS
}

pub fn get(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reclaimlab_trace::PAGE_SIZE;

    /// Every row builds its machine, names registered policies, and pairs its report with
    /// a workload that report can run.
    #[test]
    fn every_row_is_runnable_by_its_report() {
        for s in list() {
            s.config();
            for p in s.policies {
                assert!(crate::sim::registry::find(p).is_ok(), "{}: {p}", s.name);
            }
            match (&s.workload, s.report) {
                (Workload::Tasks, Report::ThpPolicies) | (Workload::Parsec, Report::DamonQuota) => {
                    assert_eq!(s.policies.len(), 1, "{}: the one reclaim policy of its report", s.name)
                }
                (Workload::Program(_) | Workload::Tpcc(_) | Workload::TeraSort(_), Report::Policies) => {}
                _ => panic!("{}: report {} cannot run its workload", s.name, s.report.name()),
            }
            if matches!(s.workload, Workload::Tasks) {
                assert!(s.source(1).is_err(), "{}: tasks have no access stream", s.name);
            }
        }
    }

    #[test]
    fn default_is_unchanged_and_fixed_size() {
        let s = get("default").unwrap();
        let c = s.config();
        assert_eq!(c.memory_bytes, 512 << 20);
        assert!(s.policies.is_empty());
        assert!(s.transactions().is_none());
        assert_eq!(s.program().unwrap().nr_accesses(), Some(10_000_000));
        assert!(s.config_at(2.0).is_err());
        assert!(s.source_at(1, 2.0).is_err());
    }

    #[test]
    fn tpcc_has_three_replica_cgroups() {
        let s = get("tpcc-stock-level").unwrap();
        let src = s.source(1).unwrap();
        assert_eq!(src.meta().cgroups, vec!["", "replica1", "replica2", "replica3"]);
    }

    #[test]
    fn tpcc_primary_data_exceeds_memory_beside_the_caches() {
        let s = get("tpcc-stock-level").unwrap();
        let p = s.tpcc_params(1.0).unwrap();
        let mem = s.config().memory_bytes;
        assert_eq!(mem, 1 << 30);
        // The primary's files (STOCK, CUSTOMER, indexes) exceed memory ...
        assert!(p.file_pages() * PAGE_SIZE > mem, "file {} vs memory {mem}", p.file_pages() * PAGE_SIZE);
        // ... the three WiredTiger caches take 15/32 of it, as 3 × 5 GB of 32 GB in the seed ...
        assert_eq!(p.anon_pages() * PAGE_SIZE * 32, 15 * mem);
        // ... and STOCK alone, which every transaction reads a tenth of, exceeds what is
        // left beside the caches (so it fits only if the idle secondaries are swapped).
        let t = p.trees(0);
        let stock = (t.stock.leaves * t.stock.block_pages) as u64 * PAGE_SIZE;
        assert!(stock > mem - p.anon_pages() * PAGE_SIZE && stock < mem - p.wt_cache_pages as u64 * PAGE_SIZE);
    }

    #[test]
    fn tpcc_scale_keeps_warehouses_and_scales_the_rest() {
        let s = get("tpcc-stock-level").unwrap();
        let (p1, p4) = (s.tpcc_params(1.0).unwrap(), s.tpcc_params(4.0).unwrap());
        assert_eq!(p1, TpccParams::default());
        assert_eq!(p4.warehouses, p1.warehouses);
        assert_eq!(p4.wt_cache_pages, 4 * p1.wt_cache_pages);
        assert_eq!(p4.items, 4 * p1.items);
        assert_eq!(p4.transactions, p1.transactions);
        assert_eq!(s.config_at(4.0).unwrap().memory_bytes, 4 << 30);
        // Scale 32 is the seed: 32 GiB, 5 GiB WiredTiger caches, TPC-C's full 500 warehouses.
        let p32 = s.tpcc_params(32.0).unwrap();
        assert_eq!(s.config_at(32.0).unwrap().memory_bytes, 32 << 30);
        assert_eq!(p32.wt_cache_pages as u64 * PAGE_SIZE, 5 << 30);
        assert_eq!((p32.warehouses, p32.customers, p32.items), (500, 3_000, 100_000));
        p32.validate().unwrap();
        assert!(s.config_at(0.0).is_err() && s.config_at(f64::NAN).is_err());
        // The transaction count and clients do not depend on the scale.
        assert_eq!(s.transactions(), Some((p1.transactions, 30)));
    }

    #[test]
    fn tpcc_workload_parameters() {
        let s = get("tpcc-stock-level").unwrap();
        for (k, v) in [("stock_plan", "s_w_id"), ("read_replicas", "3"), ("stock_disk_bytes", "450")] {
            assert!(s.source_with(1, 0.1, &[(k, v)]).is_ok(), "{k}={v}");
        }
        for (k, v) in [("stock_plan", "collscan"), ("read_replicas", "4"), ("read_replicas", "x"), ("stock_disk_bytes", "0")] {
            let e = s.source_with(1, 0.1, &[(k, v)]).err().unwrap().to_string();
            assert!(e.contains(k), "{k}={v}: {e}");
        }
    }

    #[test]
    fn tpcc_runs_the_declared_transactions() {
        let s = get("tpcc-stock-level").unwrap();
        let p = s.tpcc_params(0.05).unwrap();
        let mut src = s.source_at(3, 0.05).unwrap();
        let (mut n, mut buf) = (0u64, Vec::new());
        while src.read_batch(&mut buf, 1 << 16).unwrap() > 0 {
            n += buf.len() as u64;
        }
        assert!(n > p.anon_pages());
        assert_eq!(src.progress(), Some(1.0));
    }

    /// The cover letter's and cache_ext's workloads keep their shapes: the data read
    /// through the page cache exceeds memory by the ratio each cites, and each compares
    /// classic, mainline MGLRU, the 2023 reconstruction and the 2026 re-post.
    #[test]
    fn cover_letter_workloads_keep_their_shapes() {
        let pages = |name: &str, region: &str| {
            let p = get(name).unwrap().program().unwrap();
            p.regions.iter().find(|r| r.name == region).unwrap().pages as u64 * PAGE_SIZE
        };
        let mem = |name: &str| get(name).unwrap().config().memory_bytes;
        assert_eq!(pages("leveldb-getscan", "sstables"), 3 * mem("leveldb-getscan"));
        assert_eq!(pages("ycsb-b", "collection"), 3 * mem("ycsb-b"));
        assert_eq!(pages("fio-zipf", "fio-file"), 2 * mem("fio-zipf"));
        assert_eq!(2 * pages("file-search", "tree"), 3 * mem("file-search"));
        assert!(pages("kernel-build", "cc1-heaps") > mem("kernel-build"), "anon-heavy: the heaps exceed memory");
        // file-search reads the tree exactly four times.
        let fs = get("file-search").unwrap().program().unwrap();
        assert_eq!(fs.nr_accesses(), Some(4 * fs.nr_pages()));
        for name in ["leveldb-getscan", "ycsb-b", "kernel-build", "fio-zipf", "file-search"] {
            let s = get(name).unwrap();
            assert_eq!(s.policies, REFAULT_DISTANCE_POLICIES, "{name}");
            assert_eq!(s.baseline, "mglru@6.15");
            assert!(s.program().unwrap().validate().is_ok());
            for p in s.policies {
                crate::sim::registry::find(p).unwrap();
            }
        }
    }

    #[test]
    fn tpcc_declares_the_seed_policies() {
        let s = get("tpcc-stock-level").unwrap();
        for p in ["classic@6.15", "mglru@6.15", "mglru+refault-distance-rfc-v3"] {
            assert!(s.policies.contains(&p), "{p}");
        }
        assert_eq!(s.baseline, "mglru@6.15");
    }
}
