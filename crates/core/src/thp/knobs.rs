//! THP, compaction and NUMA settings (`transparent_hugepage.*`, `vm.compaction_*`,
//! `thp.policy`, costs); the keys are declared in `config::KNOBS`.

use super::gfp::{ThpDefrag, ThpEnabled};

#[derive(Clone, Debug, PartialEq)]
pub struct ThpConfig {
    pub enabled: ThpEnabled,
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
    /// Placeholder values; `SimConfig::default` then applies the knob defaults.
    pub fn zeroed() -> Self {
        ThpConfig {
            enabled: ThpEnabled::Never,
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
