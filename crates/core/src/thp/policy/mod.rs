//! THP allocation policies as named variants: how a THP fault asks for its page.
//!
//! A variant supplies the three points that changed across the 2018–2019 argument over
//! `__GFP_THISNODE` (seed 003): the gfp mask of a fault (`alloc_hugepage_direct_gfpmask`,
//! mm/huge_memory.c), the sequence of allocation attempts (`alloc_pages_vma`'s hugepage
//! branch, mm/mempolicy.c), and the costly-order `__GFP_NORETRY` rule after the first
//! direct compaction in `__alloc_pages_slowpath` (mm/page_alloc.c); and what else of its
//! kernel differs in the shared machinery (the boost in `__isolate_free_page`'s
//! watermark, the pageblock skip-hint rules, proactive compaction). Everything else (watermarks, reclaim, compaction, kswapd/kcompactd) is
//! shared. One file per variant.

pub mod gfp_thisnode_v1;
pub mod v4_20_rc4;
pub mod v5_4;
pub mod v5_5;
pub mod v6_12;

use super::compaction::{CompactResult, SkipHints};
#[allow(unused_imports)]
use super::gfp::__GFP_NORETRY;
use super::gfp::{Gfp, ThpDefrag};
use crate::error::{Error, Result};
use crate::mm::page_alloc::{Pfn, Zone};

/// What a policy calls to allocate: `__alloc_pages_nodemask(gfp, order, preferred node)`
/// (only `node` with `__GFP_THISNODE`, else its zonelist).
pub trait PageAllocator {
    fn alloc_pages(&mut self, gfp: Gfp, order: u8, node: u16) -> Option<Pfn>;
}

pub trait ThpPolicy: Send + Sync {
    /// `alloc_hugepage_direct_gfpmask(vma)` for the `defrag` mode; `vma_madvised` =
    /// `VM_HUGEPAGE` (`MADV_HUGEPAGE`).
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp;
    /// `alloc_pages_vma(gfp, HPAGE_PMD_ORDER, vma, addr, node, hugepage=true)`.
    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn>;
    /// `__alloc_pages_slowpath`, costly order, after the initial async compaction returned
    /// `r`: give up (`goto nopage`) instead of going on to reclaim?
    fn costly_gives_up(&self, gfp: Gfp, order: u8, r: CompactResult) -> bool;
    /// The min watermark `__isolate_free_page` checks when compaction isolates a free
    /// page: `min_wmark_pages(zone)` (boost included) until Mel Gorman's v5.1 compaction
    /// series, `zone->_watermark[WMARK_MIN]` (boost ignored) since.
    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64;
    /// Which kernel's pageblock skip-hint rules compaction follows (when the scanners set
    /// `PB_migrate_skip`, when `__reset_isolation_suitable` clears it): v4.20's, or those
    /// of Mel Gorman's v5.1 compaction series ([`SkipHints`]).
    fn skip_hints(&self) -> SkipHints {
        SkipHints::V4_20
    }
    /// kcompactd compacts proactively on its timeout when the node's fragmentation score
    /// is above `vm.compaction_proactiveness`'s watermark (v5.9+).
    fn proactive_compaction(&self) -> bool {
        false
    }
    /// `__alloc_pages_direct_compact` counts a compaction whose zones were all deferred
    /// as a stall (and, with no page, a failure): 6.12 returns early only for
    /// `COMPACT_SKIPPED`; v4.20 for anything up to `COMPACT_DEFERRED` (`COMPACT_INACTIVE`).
    fn compact_stall_when_deferred(&self) -> bool {
        false
    }
}

pub struct ThpPolicyEntry {
    pub name: &'static str,
    pub description: &'static str,
    pub policy: &'static dyn ThpPolicy,
}

/// Every THP allocation policy, baseline first (the order `reclaimlab run thpscale` shows).
pub static THP_POLICIES: &[ThpPolicyEntry] = &[
    ThpPolicyEntry {
        name: "thp@4.20-rc4",
        description: "v4.20-rc4 (mmots-20181130, the baseline of Mel Gorman's Dec 2018 mmtests results): __GFP_THISNODE only for faults that may not direct-reclaim; madvised faults (and defrag=always) reclaim and compact along the whole zonelist, remote nodes included",
        policy: &v4_20_rc4::V4_20Rc4,
    },
    ThpPolicyEntry {
        name: "thp+gfp-thisnode-v1",
        description: "David Rientjes' Dec 2018 series (gfpthisnode-v1 in Mel Gorman's Dec 2018 mmtests results): every THP fault is __GFP_THISNODE (local node only), and a pageblock-order request whose first compaction was skipped or deferred fails without reclaim; then base pages",
        policy: &gfp_thisnode_v1::GfpThisnodeV1,
    },
    ThpPolicyEntry {
        name: "thp@5.4",
        description: "v5.4 (2019 design): try the local node with __GFP_THISNODE, then any node with __GFP_NORETRY if madvised or defrag=always; either attempt fails without reclaim when its first compaction is skipped or deferred; then base pages",
        policy: &v5_4::V5_4,
    },
    ThpPolicyEntry {
        name: "thp@5.5",
        description: "v5.5 (cc638f329ef6, the 2019 design tuned): try the local node with __GFP_THISNODE | __GFP_NORETRY (compaction, no reclaim when it is skipped or deferred), then, if madvised or defrag=always, any node with the fault's own mask, which may reclaim and compact; then base pages",
        policy: &v5_5::V5_5,
    },
    ThpPolicyEntry {
        name: "thp@6.12",
        description: "6.12 (Debian 6.12.117, the validation guest): v5.5's two attempts, but the local __GFP_THISNODE | __GFP_NORETRY attempt never reclaims, whatever its compaction returned (9c9828d3ead6, 6.12.75 stable); kcompactd compacts proactively (vm.compaction_proactiveness, v5.9)",
        policy: &v6_12::V6_12,
    },
];

pub fn find(name: &str) -> Result<&'static ThpPolicyEntry> {
    THP_POLICIES.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = THP_POLICIES.iter().map(|p| p.name).collect();
        Error::config("thp.policy", format!("unknown THP policy '{name}'; known: {}", names.join(", ")))
    })
}
