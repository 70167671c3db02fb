//! The gfp bits a THP allocation uses (include/linux/gfp.h) and the
//! `/sys/kernel/mm/transparent_hugepage/{enabled,defrag}` modes (mm/huge_memory.c).

/// A gfp mask: only the bits that change what `__alloc_pages` does for a THP.
pub type Gfp = u32;

/// `__GFP_DIRECT_RECLAIM`: the caller may enter direct reclaim and direct compaction.
pub const __GFP_DIRECT_RECLAIM: Gfp = 1 << 0;
/// `__GFP_KSWAPD_RECLAIM`: wake kswapd (and, for high orders, kcompactd).
pub const __GFP_KSWAPD_RECLAIM: Gfp = 1 << 1;
/// `__GFP_NORETRY`: one light attempt at reclaim/compaction, no retry loop.
pub const __GFP_NORETRY: Gfp = 1 << 2;
/// `__GFP_THISNODE`: only the preferred node, no zonelist fallback.
pub const __GFP_THISNODE: Gfp = 1 << 3;
/// `__GFP_RETRY_MAYFAIL`: retry costly orders (never set for THP faults).
pub const __GFP_RETRY_MAYFAIL: Gfp = 1 << 4;
/// `__GFP_MOVABLE` (part of `GFP_HIGHUSER_MOVABLE`).
pub const __GFP_MOVABLE: Gfp = 1 << 5;

/// `__GFP_RECLAIM`.
pub const __GFP_RECLAIM: Gfp = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM;
/// `GFP_HIGHUSER_MOVABLE` (base-page anonymous faults).
pub const GFP_HIGHUSER_MOVABLE: Gfp = __GFP_RECLAIM | __GFP_MOVABLE;
/// `GFP_TRANSHUGE_LIGHT = (GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NOMEMALLOC |
/// __GFP_NOWARN) & ~__GFP_RECLAIM`.
pub const GFP_TRANSHUGE_LIGHT: Gfp = GFP_HIGHUSER_MOVABLE & !__GFP_RECLAIM;
/// `GFP_TRANSHUGE = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM`.
pub const GFP_TRANSHUGE: Gfp = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM;

/// `PAGE_ALLOC_COSTLY_ORDER`.
pub const PAGE_ALLOC_COSTLY_ORDER: u8 = 3;

/// `transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpEnabled {
    Always,
    Madvise,
    Never,
}

/// `transparent_hugepage/defrag` (the `TRANSPARENT_HUGEPAGE_DEFRAG_*_FLAG` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpDefrag {
    /// `always`: `DEFRAG_DIRECT_FLAG` — stall for direct reclaim/compaction.
    Always,
    /// `defer`: `DEFRAG_KSWAPD_FLAG` — wake kswapd/kcompactd, fail quickly.
    Defer,
    /// `defer+madvise`: `DEFRAG_KSWAPD_OR_MADV_FLAG`.
    DeferMadvise,
    /// `madvise`: `DEFRAG_REQ_MADV_FLAG` (the default).
    Madvise,
    /// `never`.
    Never,
}

impl ThpEnabled {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "always" => Ok(ThpEnabled::Always),
            "madvise" => Ok(ThpEnabled::Madvise),
            "never" => Ok(ThpEnabled::Never),
            o => Err(format!("expected always, madvise or never, got '{o}'")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ThpEnabled::Always => "always",
            ThpEnabled::Madvise => "madvise",
            ThpEnabled::Never => "never",
        }
    }
}

impl ThpDefrag {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "always" => Ok(ThpDefrag::Always),
            "defer" => Ok(ThpDefrag::Defer),
            "defer+madvise" => Ok(ThpDefrag::DeferMadvise),
            "madvise" => Ok(ThpDefrag::Madvise),
            "never" => Ok(ThpDefrag::Never),
            o => Err(format!("expected always, defer, defer+madvise, madvise or never, got '{o}'")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ThpDefrag::Always => "always",
            ThpDefrag::Defer => "defer",
            ThpDefrag::DeferMadvise => "defer+madvise",
            ThpDefrag::Madvise => "madvise",
            ThpDefrag::Never => "never",
        }
    }
}

/// The body of `alloc_hugepage_direct_gfpmask` without node bits (the consolidated form of
/// 89c83fb539f9, as v5.4 has it): `always` stalls (`__GFP_NORETRY` unless madvised),
/// `defer` only wakes kswapd/kcompactd, `defer+madvise` and `madvise` stall only when
/// madvised, `never` neither. Variants add their node policy on top.
pub fn thp_gfp_mask(defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
    match defrag {
        ThpDefrag::Always => GFP_TRANSHUGE | if vma_madvised { 0 } else { __GFP_NORETRY },
        ThpDefrag::Defer => GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM,
        ThpDefrag::DeferMadvise => GFP_TRANSHUGE_LIGHT | if vma_madvised { __GFP_DIRECT_RECLAIM } else { __GFP_KSWAPD_RECLAIM },
        ThpDefrag::Madvise => GFP_TRANSHUGE_LIGHT | if vma_madvised { __GFP_DIRECT_RECLAIM } else { 0 },
        ThpDefrag::Never => GFP_TRANSHUGE_LIGHT,
    }
}

/// `hugepage_vma_check` / `transparent_hugepage_enabled(vma)` for an anonymous VMA:
/// `always` unless `MADV_NOHUGEPAGE`; `madvise` only with `MADV_HUGEPAGE` (`VM_HUGEPAGE`).
pub fn vma_thp_enabled(enabled: ThpEnabled, vm_hugepage: bool, vm_nohugepage: bool) -> bool {
    match enabled {
        ThpEnabled::Always => !vm_nohugepage,
        ThpEnabled::Madvise => vm_hugepage,
        ThpEnabled::Never => false,
    }
}
