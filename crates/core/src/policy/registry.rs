//! The table of named policy models: one row each (name, base, builder, description).
//! A new variant is a new row, not an edit of an existing model.

use super::classic::{Classic, Mainline};
use crate::api::PolicyInfo;
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::sim::engine::Machine;
use crate::policy::ReclaimPolicy;
use crate::sim::Engine;

pub struct PolicyEntry {
    pub name: &'static str,
    pub base: &'static str,
    pub description: &'static str,
    pub build: fn(&SimConfig) -> Box<dyn Engine>,
    /// The same policy, chosen at run time (a program's machine: sim/process.rs).
    pub boxed: fn() -> Box<dyn ReclaimPolicy>,
}

/// One row: `build` monomorphises the engine for the policy (its hooks inline into the
/// hot loop), `boxed` makes the same policy for a program's machine.
macro_rules! row {
    ($name:expr, $base:expr, $description:expr, $policy:expr $(,)?) => {
        PolicyEntry { name: $name, base: $base, description: $description, build: |cfg| Box::new(Machine::new(cfg, $policy)), boxed: || Box::new($policy) }
    };
}

pub static POLICIES: &[PolicyEntry] = &[row!(
    "classic@6.15",
    "",
    "active/inactive LRU with workingset refault detection (mm/vmscan.c, mm/workingset.c, v6.15)",
    Classic::new(Mainline)
),
row!(
    "mglru@6.15",
    "",
    "multi-generational LRU: generations, tiers, PID-controlled eviction, page-table walk aging, generation-distance refault test (mm/vmscan.c, mm/workingset.c, v6.15)",
    super::mglru::Mglru::new(super::mglru::Mainline)
),
row!(
    "mglru+refault-distance-rfc-v3",
    "mglru@6.15",
    "Kairui Song's RFC v3 (Sep 2023, not merged) on MGLRU: shadows carry an eviction-only clock; a refault within the inactive size (the two oldest generations) is re-activated",
    super::mglru::Mglru::new(super::mglru::refault_distance_rfc_v3::RefaultDistanceRfcV3)
),
row!(
    "mglru+refault-distance-2026",
    "mglru@6.15",
    "Kairui Song's \"MGLRU-FG and refault distance support\" RFC (May 2026, patches 22, 27, 30; not merged): shadows carry refs above an eviction-only timestamp; a refault within the inactive size (the two oldest generations) is re-activated",
    super::mglru::Mglru::new(super::mglru::refault_distance_2026::RefaultDistance2026)
),
row!(
    "mglru@6.6",
    "",
    "multi-generational LRU as in v6.6: refs = counter + PG_workingset, read() pages join the oldest generation, one-strike promotion of young PTEs, refault recent only from the current oldest generation (mm/vmscan.c, mm/workingset.c, v6.6)",
    super::mglru::Mglru::new(super::mglru::v6_6::Mglru66::new())
),
row!(
    "mglru+fix-underprotected-page-cache",
    "mglru@6.6",
    "Yu Zhao's \"mm/mglru: fix underprotected page cache\" (Dec 2023, 081488051d28) on v6.6: unmapped folios join min_seq + 1, five-access folios are protected, refaults with refs >= 3 or in a fault get the workingset tier",
    super::mglru::Mglru::new(super::mglru::v6_6::Mglru66Fix::new())
),
row!(
    "mglru@6.12",
    "mglru@6.6",
    "multi-generational LRU as in 6.12 stable (6.12.114+): v6.6's code path with the four Dec 2023 fixes (underprotected page cache, stop at high watermarks, min_ttl_ms with memcgs, offlined memcgs), v6.10's initial-priority clamp and the backported \"reset page lru tier bits when activating\"",
    super::mglru::Mglru::new(super::mglru::v6_12::Mglru612::new())
),
row!(
    "classic+refault-distance-rfc-v3",
    "classic@6.15",
    "Kairui Song's RFC v3 (Sep 2023, not merged): the workingset clock ages only on eviction; a refault is activated if its distance < inactive size (active >= inactive) or < active + the other type's inactive",
    Classic::new(super::classic::refault_distance_rfc_v3::RefaultDistanceRfcV3)
),
row!(
    "cache:lru",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): LRU: the least recently used folio goes; a reference seen at scan time moves it to the MRU end; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lru)
),
row!(
    "cache:fifo",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): FIFO: the oldest folio goes, references ignored; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Fifo)
),
row!(
    "cache:clock",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): CLOCK: second chance on the folio's reference bit (the accessed bit or a read()/write()); kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Clock)
),
row!(
    "cache:arc",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): ARC (Megiddo & Modha, FAST'03): adaptive recency/frequency lists T1/T2 with ghost lists B1/B2; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Arc)
),
row!(
    "cache:s3fifo",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): S3-FIFO (Yang et al., SOSP'23): small and main FIFO queues and a ghost queue; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::S3Fifo)
),
row!(
    "cache:sieve",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache): SIEVE (Zhang et al., NSDI'24): a FIFO whose hand skips (and clears) visited folios, new folios at the head; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Sieve)
),
row!(
    "cache:car",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache): CAR (Bansal & Modha, FAST'04): ARC's adaptation over two clocks with reference bits; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Car)
),
row!(
    "cache:lfu",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache): LFU, the least frequently used folio goes (ties: first to reach that frequency), frequencies forgotten on eviction; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lfu)
),
row!(
    "cache:lirs",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): LIRS (Jiang & Zhang, SIGMETRICS'02): LIR blocks (99% of the folios resident at each eviction) by inter-reference recency, resident HIR blocks in Q are evicted; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lirs)
),
row!(
    "cache:2q",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): 2Q (Johnson & Shasha, VLDB'94): FIFO A1in (25% of the folios resident at each eviction), ghost A1out, LRU Am for folios refaulting from A1out; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::TwoQ)
),
row!(
    "cache:slru",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): SLRU, four LRU segments (each a quarter of the folios resident at each eviction), a hit promotes one segment; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::Slru)
),
row!(
    "cache:clockpro",
    "",
    "reference cache algorithm as the reclaim policy (crates/cache, the authors' simulator): CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC'05): hot and cold pages on one clock, non-resident cold pages in their test period, 5% cold allocation of the folios resident at each eviction; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::ClockPro)
),
row!(
    "cache:s3fifo-paper",
    "cache:s3fifo",
    "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's S3FIFOv0): S3-FIFO as in the paper, every new folio into the small queue; kernel reclaim drivers and shrink_folio_list unchanged",
    super::cache::CachePolicy::new(reclaimlab_cache::Algo::S3FifoPaper)
),
];

/// `lru_gen.enabled=y|n` on a model of the other family: the same kernel's (and
/// patch's) model of the requested family, e.g. `classic@6.15` with y → `mglru@6.15`.
pub fn resolve_lru_gen(name: &str, enabled: Option<bool>) -> Result<String> {
    let Some(enabled) = enabled else { return Ok(name.to_string()) };
    let (from, to) = if enabled { ("classic", "mglru") } else { ("mglru", "classic") };
    let Some(rest) = name.strip_prefix(from) else { return Ok(name.to_string()) };
    let other = format!("{to}{rest}");
    if POLICIES.iter().any(|p| p.name == other) {
        Ok(other)
    } else {
        Err(Error::config("lru_gen.enabled", format!("policy '{name}' has no {to} counterpart ('{other}' is not a known model)")))
    }
}

pub fn find(name: &str) -> Result<&'static PolicyEntry> {
    POLICIES.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        Error::config("policy", format!("unknown policy '{name}'; known: {}", names.join(", ")))
    })
}

pub fn policies() -> Vec<PolicyInfo> {
    POLICIES.iter().map(|p| PolicyInfo { name: p.name, base: p.base, description: p.description }).collect()
}
