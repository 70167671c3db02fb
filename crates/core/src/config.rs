//! Run configuration: every knob under the kernel's name, with its unit, default and
//! meaning declared once in [`KNOBS`] (the CLI's `--help`, `reclaimlab knobs` and the
//! TOML loader all read this table).
//!
//! Keys are dotted: `vm.swappiness`, `machine.memory`, `swap.device`,
//! `cgroup.<name>.memory.max`. TOML tables flatten to these keys. Values are validated
//! when set (validate, then commit: [`SimConfig::validate`] checks cross-key rules before
//! a machine is built); the hot loop never checks configuration.

use crate::error::{Error, Result};
use crate::mm::pcp;

/// Swap backends (`swap.device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapDevice {
    None,
    /// zram: compressed pages live in RAM (charged against it), per-page CPU cost.
    Zram,
    /// A block device (SSD) with read/write latency.
    Ssd,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CgroupConfig {
    pub name: String,
    /// `memory.max` in bytes (u64::MAX = "max").
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
}

impl CgroupConfig {
    pub fn new(name: &str) -> Self {
        CgroupConfig { name: name.to_string(), max: u64::MAX, high: u64::MAX, low: 0, min: 0 }
    }
}

/// Costs on the simulated clock (nanoseconds). See docs/model.md for sources.
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    pub access_ns: u64,
    pub minor_fault_ns: u64,
    pub major_fault_ns: u64,
    pub file_read_ns: u64,
    pub file_write_ns: u64,
    pub scan_ns: u64,
    pub rmap_ns: u64,
    pub unmap_ns: u64,
    pub free_ns: u64,
    pub walk_pte_ns: u64,
    pub damon_region_ns: u64,
    pub damon_pfn_ns: u64,
    pub kswapd_wakeup_ns: WakeupLatency,
    pub flusher_page_ns: u64,
}

/// `cost.kswapd_wakeup_ns`: from `wakeup_kswapd` to kswapd running, one latency or a
/// distribution given by its quantiles at 0, 1/(k-1), …, 1 (ascending). Each wake-up draws
/// from it (kswapd's own generator, [`WakeupLatency::draw`]); a single value is waited at
/// every wake-up and draws nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct WakeupLatency {
    quantiles: Vec<u64>,
}

impl WakeupLatency {
    /// Every wake-up waits `ns`.
    pub fn constant(ns: u64) -> Self {
        WakeupLatency { quantiles: vec![ns] }
    }

    /// `"NS"` or `"Q0,Q1,...,QK"` (non-decreasing): the distribution's quantiles at 0,
    /// 1/K, …, 1.
    pub fn parse(v: &str) -> std::result::Result<Self, String> {
        let quantiles = v.split(',').map(uint).collect::<std::result::Result<Vec<_>, _>>()?;
        if let Some(w) = quantiles.windows(2).find(|w| w[0] > w[1]) {
            return Err(format!("quantiles must not decrease: {} before {}", w[0], w[1]));
        }
        Ok(WakeupLatency { quantiles })
    }

    /// The quantiles (one value: the constant).
    pub fn quantiles(&self) -> &[u64] {
        &self.quantiles
    }

    /// One latency: the inverse of the piecewise-linear distribution function through the
    /// quantiles at a uniform draw from `rng` (none for a constant).
    #[inline]
    pub fn draw(&self, rng: &mut reclaimlab_trace::Rng) -> u64 {
        let q = &self.quantiles;
        if q.len() == 1 {
            return q[0];
        }
        let x = rng.next_f64() * (q.len() - 1) as f64;
        let i = x as usize;
        q[i] + ((q[i + 1] - q[i]) as f64 * (x - i as f64)) as u64
    }

    /// The distribution's mean (the trapezoids between the quantiles).
    pub fn mean(&self) -> f64 {
        let q = &self.quantiles;
        if q.len() == 1 {
            return q[0] as f64;
        }
        q.windows(2).map(|w| (w[0] + w[1]) as f64 / 2.0).sum::<f64>() / (q.len() - 1) as f64
    }
}

impl std::fmt::Display for WakeupLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, q) in self.quantiles.iter().enumerate() {
            write!(f, "{}{q}", if i > 0 { "," } else { "" })?;
        }
        Ok(())
    }
}

/// What `sim.damon_record` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DamonRecordMode {
    #[default]
    Off,
    Vaddr,
    Paddr,
    Reclaim,
}

impl DamonRecordMode {
    pub fn parse(v: &str) -> std::result::Result<Self, String> {
        match v.trim() {
            "off" | "none" | "" => Ok(Self::Off),
            "vaddr" => Ok(Self::Vaddr),
            "paddr" => Ok(Self::Paddr),
            "reclaim" => Ok(Self::Reclaim),
            o => Err(format!("expected off, vaddr, paddr or reclaim, got '{o}'")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Vaddr => "vaddr",
            Self::Paddr => "paddr",
            Self::Reclaim => "reclaim",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub policy: String,
    pub seed: u64,
    pub memory_bytes: u64,
    /// `machine.kernel_used`: memory held outside the workload from boot on (bytes).
    pub kernel_used_bytes: u64,
    /// `machine.kernel_shmem`: the part of `kernel_used_bytes` that is the root memcg's shmem.
    pub kernel_shmem_bytes: u64,
    /// `machine.kernel_mlocked`: the part of `kernel_used_bytes` that is the root memcg's
    /// mlocked (unevictable LRU) pages.
    pub kernel_mlocked_bytes: u64,
    /// `machine.zone_dma`: managed memory of node 0's ZONE_DMA (bytes; 0 = no such zone).
    pub zone_dma_bytes: u64,
    /// `machine.zone_dma_lowmem_reserve`: ZONE_DMA's `lowmem_reserve` for allocations that
    /// may use the zones above it (pages); None = computed from the managed pages above.
    pub zone_dma_lowmem_reserve: Option<u64>,
    /// `machine.start_layout`: every zone's pageblock types and free blocks at the start
    /// (mm/start_layout.rs); None = a fresh buddy allocator less `machine.kernel_used`.
    pub start_layout: Option<crate::mm::start_layout::StartLayout>,
    pub nr_nodes: u16,
    /// `machine.node_memory`: each node's memory (bytes), in node order; empty = `memory_bytes`
    /// split evenly ([`SimConfig::node_pages`]).
    pub node_memory_bytes: Vec<u64>,
    /// `machine.task_cpus`: where a trace's task runs from when, `(seconds on the kernel's
    /// clock from the workload's start, CPU)` in order; empty = `TASK_CPU` throughout.
    pub task_cpus: Vec<(f64, u32)>,
    /// `machine.cpus`: CPUs, split evenly over the nodes (sizes the per-CPU page lists).
    pub nr_cpus: u32,
    /// `vm.percpu_pagelist_high_fraction` (0: `pcp->high` tuned automatically).
    pub percpu_pagelist_high_fraction: u64,
    /// `machine.pcp_lists`: whose per-CPU page list rules (mm/pcp.rs), or none.
    pub pcp_rules: pcp::PcpRules,
    pub swappiness: u32,
    pub watermark_scale_factor: u32,
    /// `vm.watermark_boost_factor` (mm/page_alloc.c `boost_watermark`).
    pub watermark_boost_factor: u64,
    /// None = computed by `calculate_min_free_kbytes` as at boot.
    pub min_free_kbytes: Option<u64>,
    pub swap_device: SwapDevice,
    /// Swap size in bytes (zram `disksize`); None = same as machine memory.
    pub swap_bytes: Option<u64>,
    pub zram_compression_ratio: f64,
    pub zram_compress_ns: u64,
    pub zram_decompress_ns: u64,
    pub ssd_read_ns: u64,
    pub ssd_write_ns: u64,
    pub cgroups: Vec<CgroupConfig>,
    pub cost: CostModel,
    pub sample_interval_ns: u64,
    /// `sim.time_dilation`: how many times faster the kernel's wall clock runs than the
    /// simulated clock's work (1 on hardware the cost model describes).
    pub time_dilation: f64,
    /// `sim.kdamond_slowdown`: how many times longer kdamond's DAMOS actions take than the
    /// cost model says, as the time quota measures them (`total_charged_ns` only).
    pub kdamond_slowdown: f64,
    /// `sim.trace_pacing=schedule`: a timed trace's gaps say when each access is due,
    /// and time lost to stalls is made up by the next think time (false: gaps add up).
    pub trace_pacing_schedule: bool,
    /// `lru_gen.enabled`: None = as the policy name says; Some(y/n) switches the policy
    /// to the same kernel's MGLRU / classic model.
    pub lru_gen_enabled: Option<bool>,
    /// `lru_gen.min_ttl_ms` (0 = off).
    pub lru_gen_min_ttl_ms: u64,
    /// `vm.dirty_background_ratio` (percent).
    pub dirty_background_ratio: u64,
    /// `vm.dirty_background_bytes` (0 = use the ratio).
    pub dirty_background_bytes: u64,
    /// `vm.dirty_ratio` (percent).
    pub dirty_ratio: u64,
    /// `vm.dirty_bytes` (0 = use the ratio).
    pub dirty_bytes: u64,
    pub dirty_expire_ns: u64,
    pub dirty_writeback_ns: u64,
    /// `/sys/block/<dev>/queue/read_ahead_kb` of the device every file lives on (0 = no
    /// readahead; a syscall read then reads the one page it needs).
    pub read_ahead_kb: u64,
    /// `block.parallel_reads`: read requests the disk serves at once.
    pub parallel_reads: u32,
    /// `/sys/kernel/debug/fault_around_bytes` (4096 = no fault-around).
    pub fault_around_bytes: u64,
    /// `block.fs_block_size`: the block size of the ext4 file system every file lives on
    /// (`mke2fs -b`); a page written gets `PAGE_SIZE / fs_block_size` buffer heads (0 =
    /// a file system without them).
    pub fs_block_size: u64,
    /// DAMON_RECLAIM's module parameters (`damon_reclaim.*`).
    pub damon_reclaim: crate::damon::DamonReclaimParams,
    /// THP, compaction and NUMA (crate::thp).
    pub thp: crate::thp::knobs::ThpConfig,
    /// `sim.damon_record`: keep DAMON snapshots for damo (off | vaddr | paddr).
    pub damon_record: DamonRecordMode,
}

type Setter = fn(&mut SimConfig, &str) -> std::result::Result<(), String>;
type Getter = fn(&SimConfig) -> String;

/// One configuration knob.
pub struct Knob {
    pub key: &'static str,
    pub default: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
    /// The values an integer knob accepts (the sysctl's range), checked by
    /// [`SimConfig::set`] before the value is stored and by [`SimConfig::validate`].
    pub range: Option<(u64, u64)>,
    set: Setter,
    get: Getter,
}

impl Knob {
    pub fn get(&self, cfg: &SimConfig) -> String {
        (self.get)(cfg)
    }

    /// `value` within [`Knob::range`] (no range: anything the setter takes).
    fn check_range(&self, value: &str) -> std::result::Result<(), String> {
        let Some((lo, hi)) = self.range else { return Ok(()) };
        let x = uint(value)?;
        if (lo..=hi).contains(&x) {
            Ok(())
        } else {
            Err(format!("must be {lo}..{hi}, got {x}"))
        }
    }
}

fn uint(v: &str) -> std::result::Result<u64, String> {
    let v = v.trim().replace('_', "");
    v.parse::<u64>().map_err(|_| format!("expected a non-negative integer, got '{v}'"))
}

fn float(v: &str) -> std::result::Result<f64, String> {
    v.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| format!("expected a number, got '{v}'"))
}

/// `machine.node_memory`: 'even' or sizes separated by commas.
fn parse_node_memory(v: &str) -> std::result::Result<Vec<u64>, String> {
    if v.trim() == "even" {
        return Ok(Vec::new());
    }
    v.split(',').map(|x| parse_size(x.trim())).collect()
}

fn format_node_memory(v: &[u64]) -> String {
    if v.is_empty() {
        "even".to_string()
    } else {
        v.iter().map(|&b| format_size(b)).collect::<Vec<_>>().join(",")
    }
}

/// `machine.task_cpus`: 'none' or 'T:CPU,...' (seconds, in order).
fn parse_task_cpus(v: &str) -> std::result::Result<Vec<(f64, u32)>, String> {
    let v = v.trim();
    if v == "none" || v.is_empty() {
        return Ok(Vec::new());
    }
    let mut out: Vec<(f64, u32)> = Vec::new();
    for part in v.split(',') {
        let (t, c) = part.split_once(':').ok_or_else(|| format!("expected T:CPU, got '{part}'"))?;
        let (t, c) = (float(t)?, c.trim().parse::<u32>().map_err(|_| format!("expected a CPU number, got '{c}'"))?);
        if t < 0.0 || out.last().is_some_and(|&(p, _)| t < p) {
            return Err(format!("'{part}' is not a time at or after the previous one (T >= 0)"));
        }
        out.push((t, c));
    }
    Ok(out)
}

fn format_task_cpus(moves: &[(f64, u32)]) -> String {
    if moves.is_empty() {
        return "none".into();
    }
    moves.iter().map(|(t, c)| format!("{t}:{c}")).collect::<Vec<_>>().join(",")
}

/// `read_ahead_kb`: any page count the readahead code can index (mm/readahead.c keeps
/// `ra_pages` in an unsigned int).
fn read_ahead_kb(v: &str) -> std::result::Result<u64, String> {
    let kb = uint(v)?;
    if kb >> (reclaimlab_trace::PAGE_SHIFT - 10) > u32::MAX as u64 {
        return Err(format!("{kb} KiB is more pages than ra_pages can hold"));
    }
    Ok(kb)
}

/// `fault_around_bytes`: a power of two from one page to one page table (`PTRS_PER_PTE`
/// pages, 2 MiB on x86-64). The kernel's debugfs write rounds other values down
/// (`fault_around_bytes_set`, mm/memory.c 6.12); here they are an error, so that a
/// config says what it runs.
fn fault_around_bytes(v: &str) -> std::result::Result<u64, String> {
    const MAX: u64 = 512 * reclaimlab_trace::PAGE_SIZE;
    let b = uint(v)?;
    if !(reclaimlab_trace::PAGE_SIZE..=MAX).contains(&b) || !b.is_power_of_two() {
        let hint = if b > reclaimlab_trace::PAGE_SIZE && b < MAX { format!(" (the kernel would round it down to {})", 1u64 << b.ilog2()) } else { String::new() };
        return Err(format!("{b} is not a power of two from 4096 to {MAX} (one page table){hint}"));
    }
    Ok(b)
}

/// `block.fs_block_size`: 0 or a power of two from 1 KiB (ext4's smallest) to a page.
fn fs_block_size(v: &str) -> std::result::Result<u64, String> {
    let b = uint(v)?;
    if b != 0 && (!b.is_power_of_two() || !(1024..=reclaimlab_trace::PAGE_SIZE).contains(&b)) {
        return Err(format!("{b} is not 0 or a power of two from 1024 to 4096"));
    }
    Ok(b)
}

/// Sizes as the kernel's `memparse` reads them, and back (shared with the trace crate,
/// whose `--max-memory` limit reads the same way).
pub use reclaimlab_trace::mem::{format_size, parse_size};

macro_rules! knob {
    ($key:expr, $def:expr, $unit:expr, $doc:expr, range($lo:expr, $hi:expr), |$c:ident, $v:ident| $set:expr, |$g:ident| $get:expr) => {
        Knob { range: Some(($lo, $hi)), ..knob!($key, $def, $unit, $doc, |$c, $v| $set, |$g| $get) }
    };
    ($key:expr, $def:expr, $unit:expr, $doc:expr, |$c:ident, $v:ident| $set:expr, |$g:ident| $get:expr) => {
        Knob {
            key: $key,
            default: $def,
            unit: $unit,
            doc: $doc,
            range: None,
            set: |$c: &mut SimConfig, $v: &str| -> std::result::Result<(), String> {
                $set;
                Ok(())
            },
            get: |$g: &SimConfig| -> String { $get },
        }
    };
}

/// A kernel `bool` module parameter: Y/N/1/0 (also y/n/true/false).
fn boolparam(v: &str) -> std::result::Result<bool, String> {
    match v.trim() {
        "Y" | "y" | "1" | "true" => Ok(true),
        "N" | "n" | "0" | "false" => Ok(false),
        o => Err(format!("expected Y or N, got '{o}'")),
    }
}

macro_rules! damon_knob {
    ($param:expr, $def:expr, $unit:expr, $doc:expr, $field:ident) => {
        knob!(concat!("damon_reclaim.", $param), $def, $unit, concat!("DAMON_RECLAIM ", $param, ": ", $doc), |c, v| c.damon_reclaim.$field = uint(v)?, |c| c
            .damon_reclaim
            .$field
            .to_string())
    };
}

macro_rules! cost_knob {
    ($key:expr, $def:expr, $doc:expr, $field:ident) => {
        knob!($key, $def, "ns", $doc, |c, v| c.cost.$field = uint(v)?, |c| c.cost.$field.to_string())
    };
}

/// Every knob (the cgroup family is described by its pattern key).
pub static KNOBS: &[Knob] = &[
    knob!("policy", "classic@6.15", "", "reclaim policy model (see `reclaimlab policies`)",
        |c, v| c.policy = v.trim().to_string(), |c| c.policy.clone()),
    knob!("seed", "1", "", "seed of generated workloads (repetitions differ by seed); the engine itself is deterministic",
        |c, v| c.seed = uint(v)?, |c| c.seed.to_string()),
    knob!("machine.memory", "1G", "bytes", "physical memory of the machine (over the nodes as machine.node_memory says: evenly by default)",
        |c, v| c.memory_bytes = parse_size(v)?, |c| format_size(c.memory_bytes)),
    knob!("machine.nodes", "1", "", "NUMA nodes (one kswapd and one lruvec per memcg on each)", range(1, 64),
        |c, v| c.nr_nodes = u16::try_from(uint(v)?).map_err(|_| "too many nodes".to_string())?, |c| c.nr_nodes.to_string()),
    knob!("machine.node_memory", "even", "", "each node's memory, comma-separated in node order (a guest's \
        /sys/devices/system/node/nodeN/meminfo MemTotal: the kernel's reserved memory makes nodes unequal), summing to \
        machine.memory; 'even': machine.memory split evenly",
        |c, v| c.node_memory_bytes = parse_node_memory(v)?, |c| format_node_memory(&c.node_memory_bytes)),
    knob!("machine.cpus", "2", "", "CPUs, split evenly across nodes, node by node: a trace's task runs on CPU 0, a program's \
        tasks on their node's CPUs in turn, one at a time on a CPU; kswapd on its node's CPUs (cpumask_of_node): beside the \
        tasks when the node has two or more, taking turns of a scheduler tick with them when it has one; the other kernel \
        threads on CPU 1 (1: all on one); each keeps per-CPU page lists of every zone, whose high mark is split over the \
        node's CPUs", range(1, 8192),
        |c, v| c.nr_cpus = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.nr_cpus.to_string()),
    knob!("machine.task_cpus", "none", "", "where a trace's task runs, as a guest's scheduler placed it (validate \
        --cpu-placement measured): 'T:CPU,...', from T seconds after the workload's start on the kernel's clock \
        (sim.time_dilation applies) on CPU; kswapd and the other kernel threads run on the next CPU up (wrapping), as a \
        woken kswapd is placed on the idle CPU the task left; 'none': CPU 0 throughout",
        |c, v| c.task_cpus = parse_task_cpus(v)?, |c| format_task_cpus(&c.task_cpus)),
    knob!("machine.pcp_lists", "6.12", "", "the per-CPU page lists' rules: 6.12 (pcp->high tuned between the low watermark \
        and an eighth of the zone, allocation batches that grow, limits while kswapd runs) or 5.13 (every kernel up to \
        5.13: high fixed at six batches, one batch in and out); 'none' gives every frame straight to and from the free lists",
        |c, v| c.pcp_rules = pcp::PcpRules::parse(v.trim())?, |c| c.pcp_rules.name().into()),
    knob!("machine.kernel_used", "0", "bytes", "memory in use outside the workload when it starts (slab, page tables, \
        the initramfs, buffers: a real machine's MemTotal - MemFree before the workload); taken from the free lists at \
        boot (split evenly across nodes) and never freed or reclaimed; part of machine.memory, in no memcg",
        |c, v| c.kernel_used_bytes = parse_size(v)?, |c| format_size(c.kernel_used_bytes)),
    knob!("machine.kernel_shmem", "0", "bytes", "of machine.kernel_used, the shmem/tmpfs pages the root memcg owns before the \
        workload (an initramfs root on tmpfs: /proc/meminfo Shmem): dirty swap-backed folios on the root memcg's anon LRU, \
        never touched by the trace, which whole-machine reclaim may swap out (and with them goes the root's bound on the \
        swap cache's shadow nodes, count_shadow_nodes); a trace whose page ids are not known up front (text formats) keeps \
        them counted on the root's LRU, never reclaimed",
        |c, v| c.kernel_shmem_bytes = parse_size(v)?, |c| format_size(c.kernel_shmem_bytes)),
    knob!("machine.kernel_mlocked", "0", "bytes", "of machine.kernel_used, the mlocked pages the root memcg owns before the \
        workload (/proc/meminfo Mlocked: the validation guest's ops buffer): counted as the root memcg's own unevictable \
        LRU pages where the model reads them (count_shadow_nodes' limit for the swap cache's shadow nodes), never reclaimed",
        |c, v| c.kernel_mlocked_bytes = parse_size(v)?, |c| format_size(c.kernel_mlocked_bytes)),
    knob!("machine.zone_dma", "0", "bytes", "managed memory of ZONE_DMA, the lowest zone of node 0 (x86-64: the first \
        16 MiB, about 15M managed), part of machine.memory; allocations fall back to it last and leave it \
        lowmem_reserve (1/256 of the zones above it, vm.lowmem_reserve_ratio's default); it ends at a pageblock boundary, \
        so a size that is not a multiple of 2M leaves its first pageblock partly outside it (x86-64's reserved first MiB), \
        MIGRATE_UNMOVABLE and never claimed; 0 = none, one Normal zone per node",
        |c, v| c.zone_dma_bytes = parse_size(v)?, |c| format_size(c.zone_dma_bytes)),
    knob!("machine.zone_dma_lowmem_reserve", "auto", "pages", "ZONE_DMA's lowmem_reserve for allocations that may use the \
        zones above it (/proc/zoneinfo's protection); 'auto' computes it from the managed pages of the zones above as \
        setup_per_zone_lowmem_reserve does. A booted kernel computed it at init, before the init memory and initrd were \
        freed to the zones above, so its value is smaller than 'auto' gives from the managed pages it reports later",
        |c, v| c.zone_dma_lowmem_reserve = if v.trim() == "auto" { None } else { Some(uint(v)?) },
        |c| c.zone_dma_lowmem_reserve.map_or("auto".into(), |k| k.to_string())),
    knob!("machine.start_layout", "none", "", "where the free pages are when the workload starts, as /proc/pagetypeinfo \
        reports them: per zone 'NODE ZONE blocks=U,M,R unmovable=C0,..,C10 movable=.. reclaimable=..' (pageblocks per \
        migrate type; free blocks per type and order 0..10), zones separated by ';', every zone of the machine listed \
        (ZONE DMA, or DMA32/Normal for the node's zone above it). Unmovable pageblocks are placed from the zone's lowest \
        pfn, then the reclaimable ones, the rest movable (a guest's movable count includes reserved memory the model's \
        zone does not have: it is cut, but no further than its free pages and machine.kernel_shmem and \
        machine.kernel_mlocked, movable allocations, need); every frame not listed free is in use outside the \
        workload, so machine.kernel_used must equal the zones' frames less the free pages listed. 'none': a fresh buddy allocator less machine.kernel_used",
        |c, v| c.start_layout = crate::mm::start_layout::StartLayout::parse(v)?,
        |c| c.start_layout.as_ref().map_or("none".into(), |l| l.to_string())),
    knob!("vm.swappiness", "60", "", "vm.swappiness: relative IO cost of swapping vs. file refaults", range(0, 200),
        |c, v| c.swappiness = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.swappiness.to_string()),
    knob!("vm.watermark_scale_factor", "10", "1/10000 of zone", "vm.watermark_scale_factor: kswapd wake/sleep gap", range(1, 3000),
        |c, v| c.watermark_scale_factor = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.watermark_scale_factor.to_string()),
    knob!("vm.watermark_boost_factor", "15000", "1/10000 of high watermark", "vm.watermark_boost_factor: how far a fragmenting fallback boosts the watermarks (0 disables boosting)",
        |c, v| c.watermark_boost_factor = uint(v)?, |c| c.watermark_boost_factor.to_string()),
    knob!("vm.percpu_pagelist_high_fraction", "0", "", "vm.percpu_pagelist_high_fraction: 0 tunes each per-CPU page \
        list's high mark between the zone's low watermark and an eighth of the zone (split over the node's CPUs); N >= 8 \
        fixes it at 1/N of the zone, split likewise",
        |c, v| c.percpu_pagelist_high_fraction = uint(v)?, |c| c.percpu_pagelist_high_fraction.to_string()),
    knob!("vm.min_free_kbytes", "auto", "KiB", "vm.min_free_kbytes; 'auto' computes it as the kernel does at boot",
        |c, v| c.min_free_kbytes = if v.trim() == "auto" { None } else { Some(uint(v)?) },
        |c| c.min_free_kbytes.map_or("auto".into(), |k| k.to_string())),
    knob!("vm.dirty_background_ratio", "10", "%", "vm.dirty_background_ratio: the flusher writes back when dirty page cache exceeds this share of dirtyable memory", range(0, 100),
        |c, v| c.dirty_background_ratio = uint(v)?, |c| c.dirty_background_ratio.to_string()),
    knob!("vm.dirty_background_bytes", "0", "bytes", "vm.dirty_background_bytes: the background threshold in bytes; overrides vm.dirty_background_ratio when not 0",
        |c, v| c.dirty_background_bytes = parse_size(v)?, |c| format_size(c.dirty_background_bytes)),
    knob!("vm.dirty_ratio", "20", "%", "vm.dirty_ratio: balance_dirty_pages throttles writers as dirty + writeback page cache nears this share of dirtyable memory", range(0, 100),
        |c, v| c.dirty_ratio = uint(v)?, |c| c.dirty_ratio.to_string()),
    knob!("vm.dirty_bytes", "0", "bytes", "vm.dirty_bytes: the dirty limit in bytes; overrides vm.dirty_ratio when not 0",
        |c, v| c.dirty_bytes = parse_size(v)?, |c| format_size(c.dirty_bytes)),
    knob!("vm.dirty_expire_centisecs", "3000", "1/100 s", "vm.dirty_expire_centisecs: age at which the flusher writes a dirty page back",
        |c, v| c.dirty_expire_ns = uint(v)?.saturating_mul(10_000_000), |c| (c.dirty_expire_ns / 10_000_000).to_string()),
    knob!("vm.dirty_writeback_centisecs", "500", "1/100 s", "vm.dirty_writeback_centisecs: how often the flusher wakes (0 = never periodically)",
        |c, v| c.dirty_writeback_ns = uint(v)?.saturating_mul(10_000_000), |c| (c.dirty_writeback_ns / 10_000_000).to_string()),
    knob!("block.read_ahead_kb", "128", "KiB", "/sys/block/<dev>/queue/read_ahead_kb of the disk every file is on: the readahead window's maximum (0 = no readahead or read-around)",
        |c, v| c.read_ahead_kb = read_ahead_kb(v)?, |c| c.read_ahead_kb.to_string()),
    knob!("block.parallel_reads", "1", "", "read requests the disk every file is on serves at once, each taking cost.file_read_ns (a device's internal parallelism: an NVMe SSD serves tens; 1: one after another)",
        |c, v| c.parallel_reads = u32::try_from(uint(v)?).ok().filter(|&n| (1..=4096).contains(&n)).ok_or("expected 1..4096")?, |c| c.parallel_reads.to_string()),
    knob!("block.fs_block_size", "4096", "bytes", "block size of the ext4 file system every file is on (mke2fs -b: 1024, 2048 or 4096; mke2fs makes 1024 below 512 MiB): a written page gets 4096 / this many buffer heads, slab charged to its memcg until the page is freed; 0 = a file system without buffer heads (XFS, btrfs)",
        |c, v| c.fs_block_size = fs_block_size(v)?, |c| c.fs_block_size.to_string()),
    knob!("fault_around_bytes", "65536", "bytes", "/sys/kernel/debug/fault_around_bytes: a file fault maps the cached pages of this aligned window too (4096 = only the faulting page); a power of two, 4096..2097152",
        |c, v| c.fault_around_bytes = fault_around_bytes(v)?, |c| c.fault_around_bytes.to_string()),
    knob!("swap.device", "zram", "", "swap backend: zram, ssd or none",
        |c, v| c.swap_device = match v.trim() { "zram" => SwapDevice::Zram, "ssd" => SwapDevice::Ssd, "none" => SwapDevice::None,
            o => return Err(format!("expected zram, ssd or none, got '{o}'")) },
        |c| match c.swap_device { SwapDevice::Zram => "zram", SwapDevice::Ssd => "ssd", SwapDevice::None => "none" }.into()),
    knob!("swap.size", "auto", "bytes", "swap size (zram disksize); 'auto' = machine.memory",
        |c, v| c.swap_bytes = if v.trim() == "auto" { None } else { Some(parse_size(v)?) },
        |c| c.swap_bytes.map_or("auto".into(), format_size)),
    knob!("swap.zram.compression_ratio", "3.0", "", "zram: bytes stored per byte of pool RAM (mm_stat orig_data_size/mem_used_total); the pool takes 4096/ratio bytes per stored page",
        |c, v| c.zram_compression_ratio = float(v)?, |c| c.zram_compression_ratio.to_string()),
    knob!("swap.zram.compress_ns", "6000", "ns", "zram: CPU time to compress one page (charged to the reclaimer)",
        |c, v| c.zram_compress_ns = uint(v)?, |c| c.zram_compress_ns.to_string()),
    knob!("swap.zram.decompress_ns", "2000", "ns", "zram: CPU time to decompress one page (charged to the faulting task)",
        |c, v| c.zram_decompress_ns = uint(v)?, |c| c.zram_decompress_ns.to_string()),
    knob!("swap.ssd.read_ns", "80000", "ns", "SSD swap: latency of one 4 KiB read (swap-in)",
        |c, v| c.ssd_read_ns = uint(v)?, |c| c.ssd_read_ns.to_string()),
    knob!("swap.ssd.write_ns", "20000", "ns", "SSD swap: device time of one 4 KiB write (swap-out, asynchronous)",
        |c, v| c.ssd_write_ns = uint(v)?, |c| c.ssd_write_ns.to_string()),
    cost_knob!("cost.access_ns", "100", "CPU time charged per trace access when the trace carries no time", access_ns),
    cost_knob!("cost.minor_fault_ns", "1000", "minor fault: trap, zero-fill or map a cached page", minor_fault_ns),
    cost_knob!("cost.major_fault_ns", "1500", "major fault/page-cache miss overhead on top of the device time", major_fault_ns),
    cost_knob!("cost.file_read_ns", "80000", "storage latency of one 4 KiB page-cache read", file_read_ns),
    cost_knob!("cost.file_write_ns", "20000", "storage time of one 4 KiB dirty page writeback", file_write_ns),
    cost_knob!("cost.scan_ns", "100", "reclaim: isolate and examine one folio", scan_ns),
    cost_knob!("cost.rmap_ns", "400", "reclaim: rmap walk of a mapped folio (folio_referenced)", rmap_ns),
    cost_knob!("cost.unmap_ns", "500", "reclaim: unmap a mapped folio (try_to_unmap, TLB flush)", unmap_ns),
    cost_knob!("cost.free_ns", "100", "reclaim: free one folio back to the buddy allocator", free_ns),
    cost_knob!("cost.walk_pte_ns", "10", "MGLRU: examine one PTE in a page-table walk or look-around", walk_pte_ns),
    knob!("cost.kswapd_wakeup_ns", "0", "ns", "from wakeup_kswapd to kswapd running (wake_up_interruptible of a thread that \
        sleeps on another CPU: the scheduler's wake-up latency); 0: at once. One value, waited at every wake-up, or the \
        latency's quantiles at 0, 1/K, ..., 1 as Q0,Q1,...,QK (non-decreasing): each wake-up draws one from kswapd's \
        generator (seeded by seed), interpolating between neighbouring quantiles. validate --kswapd-wakeup measured \
        sets the guest's traced distribution",
        |c, v| c.cost.kswapd_wakeup_ns = WakeupLatency::parse(v)?, |c| c.cost.kswapd_wakeup_ns.to_string()),
    cost_knob!("cost.flusher_page_ns", "250", "the flusher's CPU time to put one dirty page under writeback (ext4_writepages: map, folio_start_writeback, add to the bio); it submits one page after another, the rest staying dirty meanwhile. 0: everything it is asked for at once", flusher_page_ns),
    knob!("lru_gen.enabled", "auto", "", "/sys/kernel/mm/lru_gen/enabled: y or n switches the policy to the same kernel's MGLRU or classic model; auto follows the policy name",
        |c, v| c.lru_gen_enabled = match v.trim() { "auto" => None, "y" | "Y" | "1" | "true" => Some(true), "n" | "N" | "0" | "false" => Some(false),
            o => return Err(format!("expected y, n or auto, got '{o}'")) },
        |c| c.lru_gen_enabled.map_or("auto".into(), |e| if e { "y" } else { "n" }.into())),
    knob!("lru_gen.min_ttl_ms", "0", "ms", "/sys/kernel/mm/lru_gen/min_ttl_ms: working-set protection; OOM when every generation is younger (0 = off)",
        |c, v| c.lru_gen_min_ttl_ms = uint(v)?, |c| c.lru_gen_min_ttl_ms.to_string()),
    cost_knob!("cost.damon_region_ns", "50", "DAMON: kdamond's work per region per aggregation (merge, split, scheme matching); sampling costs 2 × cost.rmap_ns per region", damon_region_ns),
    cost_knob!("cost.damon_pfn_ns", "20", "DAMOS paddr actions: look up one page frame (damon_get_folio), whether or not a folio is there", damon_pfn_ns),
    knob!("damon_reclaim.enabled", "N", "", "DAMON_RECLAIM: run the proactive reclamation module (kdamond with one paddr pageout scheme)",
        |c, v| c.damon_reclaim.enabled = boolparam(v)?, |c| if c.damon_reclaim.enabled { "Y" } else { "N" }.into()),
    damon_knob!("min_age", "120000000", "us", "time a region must stay unaccessed before it is paged out", min_age),
    damon_knob!("quota_ms", "10", "ms", "time quota: at most this much time paging out per quota_reset_interval_ms (0 = no time quota)", quota_ms),
    damon_knob!("quota_sz", "134217728", "bytes", "size quota: at most this many bytes tried per quota_reset_interval_ms (0 = no size quota)", quota_sz),
    damon_knob!("quota_reset_interval_ms", "1000", "ms", "the quotas' charge window", quota_reset_interval_ms),
    damon_knob!("quota_mem_pressure_us", "0", "us", "quota goal: memory PSI 'some' stall per reset interval to aim at (0 = off)", quota_mem_pressure_us),
    damon_knob!("quota_autotune_feedback", "0", "", "quota goal USER_INPUT: feedback value against a target of 10000 (0 = off)", quota_autotune_feedback),
    damon_knob!("wmarks_interval", "5000000", "us", "how often the watermarks are checked while inactive", wmarks_interval),
    damon_knob!("wmarks_high", "500", "per-mille", "free-memory rate above which the scheme deactivates", wmarks_high),
    damon_knob!("wmarks_mid", "400", "per-mille", "free-memory rate below which the scheme activates", wmarks_mid),
    damon_knob!("wmarks_low", "200", "per-mille", "free-memory rate below which the scheme deactivates (LRU reclaim takes over)", wmarks_low),
    damon_knob!("sample_interval", "5000", "us", "DAMON sampling interval", sample_interval),
    damon_knob!("aggr_interval", "100000", "us", "DAMON aggregation interval", aggr_interval),
    damon_knob!("min_nr_regions", "10", "", "minimum number of monitoring regions", min_nr_regions),
    damon_knob!("max_nr_regions", "1000", "", "maximum number of monitoring regions", max_nr_regions),
    damon_knob!("monitor_region_start", "0", "bytes", "physical start of the monitored region (0 with _end 0 = all System RAM)", monitor_region_start),
    damon_knob!("monitor_region_end", "0", "bytes", "physical end of the monitored region", monitor_region_end),
    knob!("damon_reclaim.skip_anon", "N", "", "leave anonymous pages alone (an {anon, reject} ops filter)",
        |c, v| c.damon_reclaim.skip_anon = boolparam(v)?, |c| if c.damon_reclaim.skip_anon { "Y" } else { "N" }.into()),
    knob!("damon_reclaim.quota_weight_sz", "0", "", "not a module parameter: the scheme's size weight for prioritization (the module hard-codes 0)",
        |c, v| c.damon_reclaim.quota_weight_sz = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.damon_reclaim.quota_weight_sz.to_string()),
    knob!("damon_reclaim.quota_weight_nr_accesses", "0", "", "not a module parameter: the scheme's access-frequency weight (the module hard-codes 0)",
        |c, v| c.damon_reclaim.quota_weight_nr_accesses = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.damon_reclaim.quota_weight_nr_accesses.to_string()),
    knob!("damon_reclaim.quota_weight_age", "1", "", "not a module parameter: the scheme's age weight (the module hard-codes 1; all weights 0 = no prioritization)",
        |c, v| c.damon_reclaim.quota_weight_age = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.damon_reclaim.quota_weight_age.to_string()),
    knob!("transparent_hugepage.enabled", "auto", "", "/sys/kernel/mm/transparent_hugepage/enabled: always, madvise or never; 'auto' is the boot default of Debian's kernels (always, but never below 512 MiB of totalram: hugepage_init)",
        |c, v| c.thp.enabled = if v.trim() == "auto" { None } else { Some(crate::thp::gfp::ThpEnabled::parse(v)?) },
        |c| c.thp.enabled.map_or("auto".into(), |e| e.name().into())),
    knob!("transparent_hugepage.defrag", "madvise", "", "/sys/kernel/mm/transparent_hugepage/defrag: always, defer, defer+madvise, madvise or never",
        |c, v| c.thp.defrag = crate::thp::gfp::ThpDefrag::parse(v)?, |c| c.thp.defrag.name().into()),
    knob!("transparent_hugepage.khugepaged.defrag", "1", "", "khugepaged/defrag: 1 = collapse allocations may reclaim and compact",
        |c, v| c.thp.khugepaged_defrag = uint(v)? != 0, |c| (c.thp.khugepaged_defrag as u8).to_string()),
    knob!("transparent_hugepage.khugepaged.max_ptes_none", "511", "", "khugepaged/max_ptes_none: unmapped PTEs a range may have and still be collapsed, 0..511",
        |c, v| c.thp.max_ptes_none = u32::try_from(uint(v)?).ok().filter(|&x| x <= 511).ok_or("expected 0..511")?, |c| c.thp.max_ptes_none.to_string()),
    knob!("transparent_hugepage.khugepaged.pages_to_scan", "4096", "pages", "khugepaged/pages_to_scan: PTEs scanned per wake-up",
        |c, v| c.thp.pages_to_scan = u32::try_from(uint(v)?).map_err(|_| "out of range".to_string())?, |c| c.thp.pages_to_scan.to_string()),
    knob!("transparent_hugepage.khugepaged.scan_sleep_millisecs", "10000", "ms", "khugepaged/scan_sleep_millisecs: sleep between scans",
        |c, v| c.thp.scan_sleep_ms = uint(v)?, |c| c.thp.scan_sleep_ms.to_string()),
    knob!("thp.policy", "thp@5.4", "", "THP allocation policy model (see `reclaimlab policies`): thp@4.20-rc4, thp+gfp-thisnode-v1, thp@5.4, thp@5.5, thp@6.12",
        |c, v| c.thp.policy = v.trim().to_string(), |c| c.thp.policy.clone()),
    knob!("vm.compaction_proactiveness", "20", "", "vm.compaction_proactiveness: proactive compaction target, 0..100 (kernels >= 5.9 only)",
        |c, v| c.thp.compaction_proactiveness = u32::try_from(uint(v)?).ok().filter(|&x| x <= 100).ok_or("expected 0..100")?, |c| c.thp.compaction_proactiveness.to_string()),
    knob!("vm.extfrag_threshold", "500", "", "vm.extfrag_threshold: fragmentation index at or below which compaction is not tried (lack of memory), 0..1000",
        |c, v| c.thp.extfrag_threshold = u32::try_from(uint(v)?).ok().filter(|&x| x <= 1000).ok_or("expected 0..1000")?, |c| c.thp.extfrag_threshold.to_string()),
    knob!("numa.remote_access_ns", "60", "ns", "extra cost of one page access on a remote node",
        |c, v| c.thp.remote_access_ns = uint(v)?, |c| c.thp.remote_access_ns.to_string()),
    knob!("cost.compact_scan_ns", "10", "ns", "compaction: examine one pfn (either scanner)",
        |c, v| c.thp.compact_scan_ns = uint(v)?, |c| c.thp.compact_scan_ns.to_string()),
    knob!("cost.migrate_page_ns", "2500", "ns", "migration of one 4 KiB page: unmap, copy, remap",
        |c, v| c.thp.migrate_page_ns = uint(v)?, |c| c.thp.migrate_page_ns.to_string()),
    knob!("cost.clear_page_ns", "250", "ns", "zeroing one 4 KiB page (a THP fault clears 512)",
        |c, v| c.thp.clear_page_ns = uint(v)?, |c| c.thp.clear_page_ns.to_string()),
    knob!("cost.tlb_miss_ns", "20", "ns", "extra cost of a page access mapped by a PTE rather than a PMD (TLB reach)",
        |c, v| c.thp.tlb_miss_ns = uint(v)?, |c| c.thp.tlb_miss_ns.to_string()),
    knob!("thp.lock_share", "0.3", "", "share of reclaim/compaction time spent holding the node's zone/LRU lock (contention between faulting tasks)",
        |c, v| c.thp.lock_share = float(v).and_then(|x| if (0.0..=1.0).contains(&x) { Ok(x) } else { Err("expected 0..1".into()) })?, |c| c.thp.lock_share.to_string()),
    knob!("sim.damon_record", "off", "", "keep DAMON snapshots for damo (off | vaddr: the trace's pages | paddr: all frames | reclaim: DAMON_RECLAIM's own regions); reclaimlab run --damo-record",
        |c, v| c.damon_record = DamonRecordMode::parse(v)?, |c| c.damon_record.name().into()),
    knob!("sim.sample_interval_ms", "100", "ms", "time-series sampling interval on the simulated clock",
        |c, v| c.sample_interval_ns = uint(v)?.saturating_mul(1_000_000), |c| (c.sample_interval_ns / 1_000_000).to_string()),
    knob!("sim.time_dilation", "1", "", "kernel timers (the memcg statistics flush, kswapd's HZ/10 nap, the flusher, kcompactd's proactive-compaction period, khugepaged's scan sleep, DAMON_RECLAIM's intervals, pageout age and time quota) run this many times faster than the simulated work: a slow guest under QEMU TCG has a wall clock that outruns its CPU; `validate` sets it from the guest's wall time",
        |c, v| c.time_dilation = float(v)?, |c| c.time_dilation.to_string()),
    knob!("sim.kdamond_slowdown", "1", "", "kdamond's DAMOS actions take this many times longer than their cost.* charges as the time quota measures them: only the scheme's total_charged_ns (damos_set_effective_quota's throughput) is scaled, not kdamond's CPU time or its loop; `validate --damon-cost measured` sets it from the guest's kdamond",
        |c, v| c.kdamond_slowdown = float(v)?, |c| c.kdamond_slowdown.to_string()),
    knob!("sim.trace_pacing", "gaps", "", "a timed trace's gaps: gaps (each access comes its gap after the previous one ends, stalls included) or schedule (each access is due at the sum of the gaps so far, as a program that sleeps until its next deadline: a stall delays the accesses only until their schedule catches up)",
        |c, v| c.trace_pacing_schedule = match v.trim() { "gaps" => false, "schedule" => true, o => return Err(format!("expected gaps or schedule, got '{o}'")) },
        |c| if c.trace_pacing_schedule { "schedule" } else { "gaps" }.into()),
];

/// The cgroup knob family, `cgroup.<name>.<file>`.
pub static CGROUP_KNOBS: &[(&str, &str, &str)] = &[
    ("memory.max", "max", "hard limit; above it the charging task reclaims, then OOMs"),
    ("memory.high", "max", "throttle limit; above it the task reclaims on return to user space"),
    ("memory.low", "0", "best-effort protection from reclaim"),
    ("memory.min", "0", "hard protection from reclaim"),
];

/// One command-line shortcut for knobs: `reclaimlab run --<flag> VALUE` sets `keys` (two
/// keys: a `A:B` value sets the first to A and the second to B, a plain value the first
/// only). Help, default and range come from the keys' [`KNOBS`] rows, so a shortcut never
/// restates them; a row with no flag is a common key `run --help` lists for `--set`.
pub struct KnobAlias {
    /// The long option without `--` ("" = none: listed in `run --help` only).
    pub flag: &'static str,
    pub metavar: &'static str,
    pub keys: &'static [&'static str],
}

/// `reclaimlab run`'s shortcut flags and the common keys its help lists, in help order.
/// `--policy` and `--scale` are not rows: `--policy` also takes a plugin
/// (`python:MODULE:CLASS`, `rust:PATH:NAME`), which no knob value is, and turns a
/// scenario's comparison into one run; `--scale` sizes a scenario (its table row says
/// which), not a knob.
pub static KNOB_ALIASES: &[KnobAlias] = &[
    KnobAlias { flag: "memory", metavar: "SIZE", keys: &["machine.memory"] },
    KnobAlias { flag: "swap", metavar: "DEV[:SIZE]", keys: &["swap.device", "swap.size"] },
    KnobAlias { flag: "swappiness", metavar: "N", keys: &["vm.swappiness"] },
    KnobAlias { flag: "seed", metavar: "N", keys: &["seed"] },
    KnobAlias { flag: "", metavar: "", keys: &["vm.watermark_scale_factor"] },
    KnobAlias { flag: "", metavar: "", keys: &["vm.min_free_kbytes"] },
];

impl Default for SimConfig {
    fn default() -> Self {
        let mut c = SimConfig {
            policy: String::new(),
            seed: 0,
            memory_bytes: 0,
            kernel_used_bytes: 0,
            kernel_shmem_bytes: 0,
            kernel_mlocked_bytes: 0,
            zone_dma_bytes: 0,
            zone_dma_lowmem_reserve: None,
            start_layout: None,
            task_cpus: Vec::new(),
            nr_nodes: 0,
            node_memory_bytes: Vec::new(),
            nr_cpus: 0,
            percpu_pagelist_high_fraction: 0,
            pcp_rules: pcp::PcpRules::V6_12,
            swappiness: 0,
            watermark_scale_factor: 0,
            watermark_boost_factor: 0,
            min_free_kbytes: None,
            swap_device: SwapDevice::None,
            swap_bytes: None,
            zram_compression_ratio: 0.0,
            zram_compress_ns: 0,
            zram_decompress_ns: 0,
            ssd_read_ns: 0,
            ssd_write_ns: 0,
            cgroups: Vec::new(),
            cost: CostModel {
                access_ns: 0,
                minor_fault_ns: 0,
                major_fault_ns: 0,
                file_read_ns: 0,
                file_write_ns: 0,
                scan_ns: 0,
                rmap_ns: 0,
                unmap_ns: 0,
                free_ns: 0,
                walk_pte_ns: 0,
                damon_region_ns: 0,
                damon_pfn_ns: 0,
                kswapd_wakeup_ns: WakeupLatency::constant(0),
                flusher_page_ns: 0,
            },
            sample_interval_ns: 0,
            time_dilation: 0.0,
            kdamond_slowdown: 0.0,
            trace_pacing_schedule: false,
            lru_gen_enabled: None,
            lru_gen_min_ttl_ms: 0,
            dirty_background_ratio: 0,
            dirty_background_bytes: 0,
            dirty_ratio: 0,
            dirty_bytes: 0,
            dirty_expire_ns: 0,
            dirty_writeback_ns: 0,
            read_ahead_kb: 0,
            parallel_reads: 0,
            fault_around_bytes: 0,
            fs_block_size: 0,
            damon_reclaim: crate::damon::DamonReclaimParams::default(),
            thp: crate::thp::knobs::ThpConfig::zeroed(),
            damon_record: Default::default(),
        };
        for k in KNOBS {
            (k.set)(&mut c, k.default).expect("knob defaults parse");
        }
        c
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(row[j + 1] + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

impl SimConfig {
    /// Pages of `machine.kernel_used` the kernel allocated movable (`GFP_HIGHUSER_MOVABLE`):
    /// `machine.kernel_shmem` and `machine.kernel_mlocked`, which a start layout's movable
    /// pageblocks hold (mm/start_layout.rs `plan`).
    pub fn kernel_movable_pages(&self) -> u64 {
        (self.kernel_shmem_bytes + self.kernel_mlocked_bytes) >> reclaimlab_trace::PAGE_SHIFT
    }

    /// Set one knob by its dotted key. Unknown keys are an error naming the key
    /// (with the closest known key as a hint).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if let Some(rest) = key.strip_prefix("cgroup.") {
            return self.set_cgroup(key, rest, value);
        }
        let knob = KNOBS.iter().find(|k| k.key == key).ok_or_else(|| {
            let best = KNOBS.iter().map(|k| (edit_distance(key, k.key), k.key)).min();
            let hint = match best {
                Some((d, k)) if d <= 3 => format!(" (did you mean '{k}'?)"),
                _ => String::new(),
            };
            Error::config(key, format!("unknown key{hint}; `reclaimlab knobs` lists them"))
        })?;
        knob.check_range(value).and_then(|()| (knob.set)(self, value)).map_err(|m| Error::config(key, m))
    }

    fn set_cgroup(&mut self, key: &str, rest: &str, value: &str) -> Result<()> {
        let (name, file) = rest.split_once('.').ok_or_else(|| Error::config(key, "expected cgroup.<name>.memory.{max,high,low,min}"))?;
        if name.is_empty() {
            return Err(Error::config(key, "empty cgroup name"));
        }
        if !CGROUP_KNOBS.iter().any(|(f, _, _)| *f == file) {
            return Err(Error::config(key, format!("unknown cgroup file '{file}'; expected memory.max, memory.high, memory.low or memory.min")));
        }
        let bytes = parse_size(value).map_err(|m| Error::config(key, m))?;
        let cg = match self.cgroups.iter().position(|c| c.name == name) {
            Some(i) => &mut self.cgroups[i],
            None => {
                self.cgroups.push(CgroupConfig::new(name));
                self.cgroups.last_mut().unwrap()
            }
        };
        match file {
            "memory.max" => cg.max = bytes,
            "memory.high" => cg.high = bytes,
            "memory.low" => cg.low = bytes,
            _ => cg.min = bytes,
        }
        Ok(())
    }

    /// Current value of a key as a string.
    pub fn get(&self, key: &str) -> Option<String> {
        KNOBS.iter().find(|k| k.key == key).map(|k| k.get(self))
    }

    /// Each node's frames: `machine.node_memory`, or `machine.memory` split evenly (the
    /// remainder of the division left out).
    pub fn node_pages(&self) -> Vec<u32> {
        let nodes = self.nr_nodes.max(1) as u64;
        if self.node_memory_bytes.is_empty() {
            let per = (self.memory_bytes >> reclaimlab_trace::PAGE_SHIFT) / nodes;
            vec![per as u32; nodes as usize]
        } else {
            self.node_memory_bytes.iter().map(|b| (b >> reclaimlab_trace::PAGE_SHIFT) as u32).collect()
        }
    }

    /// Swap size in pages (0 without swap).
    pub fn swap_pages(&self) -> u64 {
        match self.swap_device {
            SwapDevice::None => 0,
            _ => self.swap_bytes.unwrap_or(self.memory_bytes) >> reclaimlab_trace::PAGE_SHIFT,
        }
    }

    /// Cross-key checks that need the whole config (run before a machine is built).
    pub fn validate(&self) -> Result<()> {
        for k in KNOBS.iter().filter(|k| k.range.is_some()) {
            k.check_range(&k.get(self)).map_err(|m| Error::config(k.key, m))?;
        }
        crate::ensure!(
            self.percpu_pagelist_high_fraction == 0 || self.percpu_pagelist_high_fraction >= pcp::MIN_PERCPU_PAGELIST_HIGH_FRACTION,
            Error::config("vm.percpu_pagelist_high_fraction", "must be 0 or at least 8 (the sysctl's range)")
        );
        crate::thp::policy::find(&self.thp.policy)?;
        if let Some(&(_, c)) = self.task_cpus.iter().find(|&&(_, c)| c >= self.nr_cpus) {
            return Err(Error::config("machine.task_cpus", format!("CPU {c} is not one of the machine's {} (machine.cpus)", self.nr_cpus)));
        }
        let pages = self.memory_bytes >> reclaimlab_trace::PAGE_SHIFT;
        if !self.node_memory_bytes.is_empty() {
            let sizes: u64 = self.node_memory_bytes.iter().map(|b| b >> reclaimlab_trace::PAGE_SHIFT).sum();
            crate::ensure!(
                self.node_memory_bytes.len() == self.nr_nodes as usize && sizes == pages,
                Error::config("machine.node_memory", format!("give {} sizes (machine.nodes) summing to machine.memory ({})", self.nr_nodes, format_size(self.memory_bytes)))
            );
        }
        let smallest = self.node_pages().into_iter().min().unwrap_or(0) as u64;
        crate::ensure!(smallest >= 1024, Error::config("machine.memory", format!("{} is too small: at least 4M per node", format_size(self.memory_bytes))));
        // A PTE word holds a frame number below SWP_PTE, or a swap entry (mm/page.rs).
        crate::ensure!(pages <= crate::mm::page::SWP_PTE as u64 - (1 << 20), Error::config("machine.memory", "too large: at most 7T (frame numbers are 31-bit)"));
        crate::ensure!(self.swap_pages() <= crate::mm::page::MAX_SWAP_SLOTS, Error::config("swap.size", "too large: at most 7T (a swap PTE holds the slot in 31 bits)"));
        let dma = self.zone_dma_bytes >> reclaimlab_trace::PAGE_SHIFT;
        crate::ensure!(
            self.node_pages()[0] as u64 >= dma + 1024,
            Error::config("machine.zone_dma", format!("{} leaves less than 4M of node 0 above ZONE_DMA", format_size(self.zone_dma_bytes)))
        );
        let used = self.kernel_used_bytes >> reclaimlab_trace::PAGE_SHIFT;
        crate::ensure!(
            used < pages && smallest.saturating_sub(used.div_ceil(self.nr_nodes as u64)) >= 1024,
            Error::config("machine.kernel_used", format!("{} leaves less than 4M per node of the {} machine", format_size(self.kernel_used_bytes), format_size(self.memory_bytes)))
        );
        crate::ensure!(
            self.kernel_shmem_bytes <= self.kernel_used_bytes,
            Error::config(
                "machine.kernel_shmem",
                format!("{} is more than machine.kernel_used ({}), of which it is a part", format_size(self.kernel_shmem_bytes), format_size(self.kernel_used_bytes))
            )
        );
        crate::ensure!(
            self.kernel_shmem_bytes.saturating_add(self.kernel_mlocked_bytes) <= self.kernel_used_bytes,
            Error::config(
                "machine.kernel_mlocked",
                format!(
                    "{} and machine.kernel_shmem ({}) are more than machine.kernel_used ({}), of which they are parts",
                    format_size(self.kernel_mlocked_bytes),
                    format_size(self.kernel_shmem_bytes),
                    format_size(self.kernel_used_bytes)
                )
            )
        );
        if let Some(layout) = &self.start_layout {
            let (specs, ..) = crate::mm::machine_zone_specs(self);
            let plans = crate::mm::start_layout::plan(layout, &specs, self.kernel_movable_pages()).map_err(|m| Error::config("machine.start_layout", m))?;
            let used: u64 = plans.iter().map(|p| p.used).sum();
            crate::ensure!(
                used == self.kernel_used_bytes >> reclaimlab_trace::PAGE_SHIFT,
                Error::config(
                    "machine.start_layout",
                    format!(
                        "leaves {}K in use (the zones' frames less the free pages listed), but machine.kernel_used is {}K",
                        used << (reclaimlab_trace::PAGE_SHIFT - 10),
                        self.kernel_used_bytes >> 10
                    )
                )
            );
        }
        if let Some(k) = self.min_free_kbytes {
            let min_pages = k >> (reclaimlab_trace::PAGE_SHIFT - 10);
            crate::ensure!(
                min_pages * 4 < pages,
                Error::config(
                    "vm.min_free_kbytes",
                    format!("{k} KiB leaves no usable memory on a {} machine (the min watermark must be well below memory)", format_size(self.memory_bytes))
                )
            );
        }
        crate::ensure!(self.zram_compression_ratio >= 1.0, Error::config("swap.zram.compression_ratio", "must be >= 1.0"));
        crate::ensure!(self.sample_interval_ns > 0, Error::config("sim.sample_interval_ms", "must be > 0"));
        crate::ensure!(self.time_dilation > 0.0 && self.time_dilation <= 1e6, Error::config("sim.time_dilation", "must be > 0 (and at most 1e6)"));
        crate::ensure!(self.kdamond_slowdown > 0.0 && self.kdamond_slowdown <= 1e6, Error::config("sim.kdamond_slowdown", "must be > 0 (and at most 1e6)"));
        self.damon_reclaim.validate().map_err(|(k, m)| Error::config(k, m))?;
        crate::ensure!(
            self.damon_record != DamonRecordMode::Reclaim || self.damon_reclaim.enabled,
            Error::config("sim.damon_record", "reclaim records DAMON_RECLAIM's regions: set damon_reclaim.enabled=Y")
        );
        for cg in &self.cgroups {
            let key = |f: &str| format!("cgroup.{}.{f}", cg.name);
            crate::ensure!(cg.max >= 1 << 20, Error::config(key("memory.max"), "must be at least 1M"));
            crate::ensure!(cg.min <= cg.max, Error::config(key("memory.min"), "protection above memory.max"));
            crate::ensure!(cg.low <= cg.max, Error::config(key("memory.low"), "protection above memory.max"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_alias_names_knobs() {
        for a in KNOB_ALIASES {
            assert!(!a.keys.is_empty() && a.keys.len() <= 2, "{}", a.flag);
            assert_eq!(a.flag.is_empty(), a.metavar.is_empty(), "{}", a.flag);
            for k in a.keys {
                assert!(KNOBS.iter().any(|r| r.key == *k), "{} names unknown key {k}", a.flag);
            }
        }
    }

    use super::*;

    #[test]
    fn sizes_parse_like_memparse() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("max").unwrap(), u64::MAX);
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("lots").is_err());
        assert_eq!(format_size(3 << 29), "1536M");
    }

    #[test]
    fn defaults_come_from_the_knob_table() {
        let c = SimConfig::default();
        assert_eq!(c.swappiness, 60);
        assert_eq!(c.watermark_scale_factor, 10);
        assert_eq!(c.memory_bytes, 1 << 30);
        assert_eq!(c.policy, "classic@6.15");
        assert_eq!(c.get("vm.min_free_kbytes").unwrap(), "auto");
        c.validate().unwrap();
    }

    #[test]
    fn unknown_and_bad_keys_are_named() {
        let mut c = SimConfig::default();
        let e = c.set("vm.swapiness", "10").unwrap_err().to_string();
        assert!(e.contains("'vm.swapiness'") && e.contains("did you mean 'vm.swappiness'"), "{e}");
        let e = c.set("vm.swappiness", "-5").unwrap_err().to_string();
        assert!(e.contains("vm.swappiness") && e.contains("non-negative"), "{e}");
        let e = c.set("cgroup.db.memory.maxx", "1G").unwrap_err().to_string();
        assert!(e.contains("memory.maxx"), "{e}");
    }

    #[test]
    fn a_rows_range_is_checked_before_the_value_is_stored_and_again_by_validate() {
        let mut c = SimConfig::default();
        let e = c.set("vm.swappiness", "201").unwrap_err().to_string();
        assert!(e.contains("vm.swappiness") && e.contains("must be 0..200, got 201"), "{e}");
        assert_eq!(c.swappiness, 60, "an out-of-range value is not stored");
        c.set("vm.swappiness", "200").unwrap();
        assert!(c.set("machine.nodes", "0").unwrap_err().to_string().contains("must be 1..64"));
        assert!(c.set("vm.dirty_ratio", "101").is_err() && c.set("vm.watermark_scale_factor", "0").is_err());
        // A field written directly (not through `set`) meets the same row in validate().
        c.nr_cpus = 0;
        assert!(c.validate().unwrap_err().to_string().contains("machine.cpus"));
        for k in KNOBS.iter().filter(|k| k.range.is_some()) {
            assert!(k.check_range(k.default).is_ok(), "{}: default {} outside its range", k.key, k.default);
        }
    }

    #[test]
    fn cgroup_keys_create_cgroups() {
        let mut c = SimConfig::default();
        c.set("cgroup.db.memory.max", "256M").unwrap();
        c.set("cgroup.db.memory.low", "64M").unwrap();
        assert_eq!(c.cgroups, vec![CgroupConfig { name: "db".into(), max: 256 << 20, high: u64::MAX, low: 64 << 20, min: 0 }]);
    }

    #[test]
    fn impossible_sizes_are_rejected() {
        let mut c = SimConfig::default();
        c.set("machine.memory", "1M").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("too small"));
        let mut c = SimConfig::default();
        c.set("machine.kernel_used", "1021M").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("machine.kernel_used") && e.contains("less than 4M"), "{e}");
        c.set("machine.kernel_used", "1020M").unwrap();
        c.validate().unwrap();
        // The root memcg's shmem and mlocked pages are parts of it.
        c.set("machine.kernel_shmem", "20M").unwrap();
        c.set("machine.kernel_mlocked", "1001M").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("machine.kernel_mlocked") && e.contains("more than machine.kernel_used"), "{e}");
        c.set("machine.kernel_mlocked", "1000M").unwrap();
        c.validate().unwrap();
        c.set("machine.zone_dma", "1021M").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("machine.zone_dma") && e.contains("above ZONE_DMA"), "{e}");
        let mut c = SimConfig::default();
        c.set("vm.min_free_kbytes", "1048576").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("min_free_kbytes"));
    }

    /// `cost.kswapd_wakeup_ns` as a distribution: read back as written; the same generator
    /// draws the same latencies; every draw lies between the first and the last quantile;
    /// the mean of many draws is the distribution's (a skewed one, as the guests' are: median
    /// 2 ms, a tail to 20 ms); a single value is a constant and draws nothing.
    #[test]
    fn kswapd_wakeup_latency_draws_from_its_quantiles() {
        use reclaimlab_trace::Rng;
        let mut c = SimConfig::default();
        assert_eq!(c.cost.kswapd_wakeup_ns, WakeupLatency::constant(0));
        let q = "500000,1200000,2000000,3000000,7000000,20000000";
        c.set("cost.kswapd_wakeup_ns", q).unwrap();
        assert_eq!(c.get("cost.kswapd_wakeup_ns").unwrap(), q);
        let w = &c.cost.kswapd_wakeup_ns;
        assert_eq!(w.quantiles().len(), 6);
        assert!((w.mean() - 4_690_000.0).abs() < 1.0, "{}", w.mean());
        let draws = |seed| {
            let mut rng = Rng::new(seed);
            (0..100_000).map(|_| w.draw(&mut rng)).collect::<Vec<_>>()
        };
        let (a, b) = (draws(1), draws(1));
        assert_eq!(a, b, "same seed, same draws");
        assert_ne!(a, draws(2));
        assert!(a.iter().all(|&x| (500_000..=20_000_000).contains(&x)));
        let mean = a.iter().sum::<u64>() as f64 / a.len() as f64;
        assert!((mean / w.mean() - 1.0).abs() < 0.01, "mean of the draws {mean} against {}", w.mean());
        // A fifth of the draws between each pair of neighbouring quantiles.
        let below = a.iter().filter(|&&x| x < 2_000_000).count() as f64 / a.len() as f64;
        assert!((below - 0.4).abs() < 0.01, "{below} below the median");
        let mut rng = Rng::new(1);
        let before = rng.clone().next_u64();
        assert_eq!(WakeupLatency::constant(7).draw(&mut rng), 7);
        assert_eq!(rng.next_u64(), before, "a constant draws nothing");
        assert!(c.set("cost.kswapd_wakeup_ns", "2000,1000").unwrap_err().to_string().contains("must not decrease"));
        assert!(c.set("cost.kswapd_wakeup_ns", "1000,").is_err());
    }
}
