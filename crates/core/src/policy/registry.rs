//! The table of named policy models: one row each (name, base, builder, description).
//! A new variant is a new row, not an edit of an existing model.

use super::classic::{Classic, Mainline};
use crate::api::PolicyInfo;
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::sim::engine::Machine;
use crate::sim::Engine;

pub struct PolicyEntry {
    pub name: &'static str,
    pub base: &'static str,
    pub description: &'static str,
    pub build: fn(&SimConfig) -> Box<dyn Engine>,
}

pub static POLICIES: &[PolicyEntry] = &[PolicyEntry {
    name: "classic@6.15",
    base: "",
    description: "active/inactive LRU with workingset refault detection (mm/vmscan.c, mm/workingset.c, v6.15)",
    build: |cfg| Box::new(Machine::new(cfg, Classic::new(Mainline))),
},
PolicyEntry {
    name: "mglru@6.15",
    base: "",
    description: "multi-generational LRU: generations, tiers, PID-controlled eviction, page-table walk aging, generation-distance refault test (mm/vmscan.c, mm/workingset.c, v6.15)",
    build: |cfg| Box::new(Machine::new(cfg, super::mglru::Mglru::new(super::mglru::Mainline))),
},
PolicyEntry {
    name: "mglru+refault-distance-rfc-v3",
    base: "mglru@6.15",
    description: "Kairui Song's RFC v3 (Sep 2023, not merged) on MGLRU: shadows carry an eviction-only clock; a refault within the inactive size (the two oldest generations) is re-activated",
    build: |cfg| Box::new(Machine::new(cfg, super::mglru::Mglru::new(super::mglru::refault_distance_rfc_v3::RefaultDistanceRfcV3))),
},
PolicyEntry {
    name: "mglru@6.6",
    base: "",
    description: "multi-generational LRU as in v6.6: refs = counter + PG_workingset, read() pages join the oldest generation, one-strike promotion of young PTEs, refault recent only from the current oldest generation (mm/vmscan.c, mm/workingset.c, v6.6)",
    build: |cfg| Box::new(Machine::new(cfg, super::mglru::Mglru::new(super::mglru::v6_6::Mglru66::new()))),
},
PolicyEntry {
    name: "mglru+fix-underprotected-page-cache",
    base: "mglru@6.6",
    description: "Yu Zhao's \"mm/mglru: fix underprotected page cache\" (Dec 2023, 081488051d28) on v6.6: unmapped folios join min_seq + 1, five-access folios are protected, refaults with refs >= 3 or in a fault get the workingset tier",
    build: |cfg| Box::new(Machine::new(cfg, super::mglru::Mglru::new(super::mglru::v6_6::Mglru66Fix::new()))),
},
PolicyEntry {
    name: "mglru@6.12",
    base: "mglru@6.6",
    description: "multi-generational LRU as in 6.12 stable (6.12.114+): v6.6's code path with the four Dec 2023 fixes (underprotected page cache, stop at high watermarks, min_ttl_ms with memcgs, offlined memcgs), v6.10's initial-priority clamp and the backported \"reset page lru tier bits when activating\"",
    build: |cfg| Box::new(Machine::new(cfg, super::mglru::Mglru::new(super::mglru::v6_12::Mglru612::new()))),
},
PolicyEntry {
    name: "classic+refault-distance-rfc-v3",
    base: "classic@6.15",
    description: "Kairui Song's RFC v3 (Sep 2023, not merged): the workingset clock ages only on eviction; a refault is activated if its distance < inactive size (active >= inactive) or < active + the other type's inactive",
    build: |cfg| Box::new(Machine::new(cfg, Classic::new(super::classic::refault_distance_rfc_v3::RefaultDistanceRfcV3))),
},
PolicyEntry {
    name: "cache:lru",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): LRU: the least recently used folio goes; a reference seen at scan time moves it to the MRU end; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lru))),
},
PolicyEntry {
    name: "cache:fifo",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): FIFO: the oldest folio goes, references ignored; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Fifo))),
},
PolicyEntry {
    name: "cache:clock",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): CLOCK: second chance on the folio's reference bit (the accessed bit or a read()/write()); kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Clock))),
},
PolicyEntry {
    name: "cache:arc",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): ARC (Megiddo & Modha, FAST'03): adaptive recency/frequency lists T1/T2 with ghost lists B1/B2; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Arc))),
},
PolicyEntry {
    name: "cache:s3fifo",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): S3-FIFO (Yang et al., SOSP'23): small and main FIFO queues and a ghost queue; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::S3Fifo))),
},
PolicyEntry {
    name: "cache:sieve",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache): SIEVE (Zhang et al., NSDI'24): a FIFO whose hand skips (and clears) visited folios, new folios at the head; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Sieve))),
},
PolicyEntry {
    name: "cache:car",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache): CAR (Bansal & Modha, FAST'04): ARC's adaptation over two clocks with reference bits; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Car))),
},
PolicyEntry {
    name: "cache:lfu",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache): LFU, the least frequently used folio goes (ties: first to reach that frequency), frequencies forgotten on eviction; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lfu))),
},
PolicyEntry {
    name: "cache:lirs",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): LIRS (Jiang & Zhang, SIGMETRICS'02): LIR blocks (99% of the folios resident at each eviction) by inter-reference recency, resident HIR blocks in Q are evicted; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Lirs))),
},
PolicyEntry {
    name: "cache:2q",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): 2Q (Johnson & Shasha, VLDB'94): FIFO A1in (25% of the folios resident at each eviction), ghost A1out, LRU Am for folios refaulting from A1out; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::TwoQ))),
},
PolicyEntry {
    name: "cache:slru",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's definition): SLRU, four LRU segments (each a quarter of the folios resident at each eviction), a hit promotes one segment; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::Slru))),
},
PolicyEntry {
    name: "cache:clockpro",
    base: "",
    description: "reference cache algorithm as the reclaim policy (crates/cache, the authors' simulator): CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC'05): hot and cold pages on one clock, non-resident cold pages in their test period, 5% cold allocation of the folios resident at each eviction; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::ClockPro))),
},
PolicyEntry {
    name: "cache:s3fifo-paper",
    base: "cache:s3fifo",
    description: "reference cache algorithm as the reclaim policy (crates/cache, libCacheSim's S3FIFOv0): S3-FIFO as in the paper, every new folio into the small queue; kernel reclaim drivers and shrink_folio_list unchanged",
    build: |cfg| Box::new(Machine::new(cfg, super::cache::CachePolicy::new(reclaimlab_cache::Algo::S3FifoPaper))),
},
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
