//! THP, compaction and NUMA settings (`transparent_hugepage.*`, `vm.compaction_*`,
//! `thp.policy`, costs); the keys are declared in `config::KNOBS`.

use super::gfp::{ThpDefrag, ThpEnabled};

#[derive(Clone, Debug, PartialEq)]
pub struct ThpConfig {
    /// `transparent_hugepage/enabled` as written after boot; None = the boot default
    /// (`hugepage_init`: always, never on a machine under 512 MiB; [`ThpConfig::enabled_on`]).
    pub enabled: Option<ThpEnabled>,
    pub defrag: ThpDefrag,
    /// `thp.policy`: a THP allocation policy name (`thp::policy::THP_POLICIES`).
    pub policy: String,
    /// `khugepaged/defrag`.
    pub khugepaged_defrag: bool,
    pub max_ptes_none: u32,
    pub pages_to_scan: u32,
    pub scan_sleep_ms: u64,
    /// `vm.compaction_proactiveness` (used by kernels with proactive compaction, v5.9+).
    pub compaction_proactiveness: u32,
    pub extfrag_threshold: u32,
    pub compact_scan_ns: u64,
    pub migrate_page_ns: u64,
    pub clear_page_ns: u64,
    pub tlb_miss_ns: u64,
    pub remote_access_ns: u64,
    /// Share of reclaim/compaction CPU time spent holding a node's zone or LRU lock.
    pub lock_share: f64,
}

impl ThpConfig {
    /// `transparent_hugepage/enabled` on a machine of `memory_bytes`: as written, or the
    /// boot default. `hugepage_init` (mm/huge_memory.c 6.12) "disable\[s\] transparent
    /// hugepages on smaller systems", below 512 MiB of `totalram_pages()`; the model counts
    /// `machine.memory` less its memory map (64 bytes of `struct page` per 4 KiB page, never
    /// part of totalram), so a 512 MiB machine boots with THP off, as Debian's kernel does.
    /// A write to sysfs after boot overrides that (the knob set explicitly).
    pub fn enabled_on(&self, memory_bytes: u64) -> ThpEnabled {
        const THP_MIN_RAM_PAGES: u64 = 512 << (20 - reclaimlab_trace::PAGE_SHIFT);
        const STRUCT_PAGE_BYTES: u64 = 64;
        self.enabled.unwrap_or_else(|| {
            let pages = memory_bytes >> reclaimlab_trace::PAGE_SHIFT;
            let totalram = pages - pages * STRUCT_PAGE_BYTES / reclaimlab_trace::PAGE_SIZE;
            if totalram >= THP_MIN_RAM_PAGES {
                ThpEnabled::Always
            } else {
                ThpEnabled::Never
            }
        })
    }

    /// Placeholder values; `SimConfig::default` then applies the knob defaults.
    pub fn zeroed() -> Self {
        ThpConfig {
            enabled: None,
            defrag: ThpDefrag::Never,
            policy: String::new(),
            khugepaged_defrag: false,
            max_ptes_none: 0,
            pages_to_scan: 0,
            scan_sleep_ms: 0,
            compaction_proactiveness: 0,
            extfrag_threshold: 0,
            compact_scan_ns: 0,
            migrate_page_ns: 0,
            clear_page_ns: 0,
            tlb_miss_ns: 0,
            remote_access_ns: 0,
            lock_share: 0.0,
        }
    }
}
