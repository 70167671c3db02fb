//! The table of named policy models: one row each (name, base, builder, description).
//! A new variant is a new row, not an edit of an existing model. A kernel row's base is
//! read off its policy type ([`Based`]: the base whose hook trait the variant
//! implements), and a row with a base says which path its patch changes
//! ([`PatchedPath`]): the generated differential test (tests/it/variants.rs) runs it and
//! its base on a trace that avoids that path and expects the same decisions. The
//! `cache:*` rows are not written here: each algorithm of crates/cache that can evict on
//! demand becomes one (`reclaimlab_cache::TABLE`), with the description's frame below
//! written once. It lives in `sim`, above the policies, because each row builds the
//! machine that runs its policy ([`build_ext`] does so for a cache_ext policy).

use std::sync::OnceLock;

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::policy::cache::CachePolicy;
use crate::policy::classic::{Classic, Mainline};
use crate::policy::{Based, ReclaimPolicy};
use crate::sim::engine::Machine;
use crate::sim::Engine;

/// One named policy model (`reclaimlab policies`).
#[derive(Clone, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    /// The model this one is a variant of ("" for a mainline model).
    pub base: &'static str,
    pub description: &'static str,
}

/// What a patch variant changes, so what a trace must avoid for the variant to make its
/// base's decisions: the precondition of the row's differential test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchedPath {
    /// Only what the refault test reads (the shadow an evicted folio leaves, the
    /// non-resident clock) and the test itself: a trace that evicts but never touches an
    /// evicted page again (no refault), so nothing the patch writes is ever read.
    Refault,
    /// Only reclaim's decisions (which folios go): a trace that fits in memory (nothing
    /// scanned, nothing evicted). A cache algorithm decides nothing until reclaim asks.
    Reclaim,
    /// Reclaim, and where a folio joins an inactive generation: a trace that fits in
    /// memory and faults every page in through a mapping, so each folio is added active
    /// (`lru_gen_in_fault`) with no fd access before it (no reference bits set).
    ReclaimAndInactiveAdd,
}

/// A row's machine builder for a trace run.
pub type BuildFn = Box<dyn Fn(&SimConfig) -> Box<dyn Engine> + Send + Sync>;

pub struct PolicyEntry {
    pub name: String,
    pub base: String,
    /// For a row with a base: what its patch changes (the differential test avoids it).
    pub patched: Option<PatchedPath>,
    pub description: String,
    pub build: BuildFn,
    /// The same policy, chosen at run time (a program's machine: sim/process.rs).
    pub boxed: Box<dyn Fn() -> Box<dyn ReclaimPolicy> + Send + Sync>,
}

/// The base a policy type overrides ([`Based`]).
fn base_of<P: Based>(_: &P) -> &'static str {
    P::BASE
}

/// One row: `build` monomorphises the engine for the policy (its hooks inline into the
/// hot loop), `boxed` makes the same policy for a program's machine; the base is the
/// policy type's. A kernel version has no patched path (`None`).
macro_rules! row {
    ($name:expr, $patched:expr, $description:expr, $policy:expr $(,)?) => {
        PolicyEntry {
            name: $name.into(),
            base: base_of(&$policy).into(),
            patched: $patched,
            description: $description.into(),
            build: Box::new(|cfg: &SimConfig| -> Box<dyn Engine> { Box::new(Machine::new(cfg, $policy)) }),
            boxed: Box::new(|| -> Box<dyn ReclaimPolicy> { Box::new($policy) }),
        }
    };
}

/// Every row: the kernel models, then the `cache:*` rows.
pub fn table() -> &'static [PolicyEntry] {
    static TABLE: OnceLock<Vec<PolicyEntry>> = OnceLock::new();
    TABLE.get_or_init(|| kernel_rows().into_iter().chain(cache_rows()).collect())
}

/// `cache:<algo>`: the algorithms that evict on demand, in their listed order; the
/// base is the algorithm this one is a variant of, if that is a row too.
fn cache_rows() -> impl Iterator<Item = PolicyEntry> {
    let mut algos: Vec<_> = reclaimlab_cache::TABLE.iter().filter_map(|a| Some((a, a.reclaim.as_ref()?))).collect();
    algos.sort_by_key(|(_, r)| r.listed);
    algos.into_iter().map(|(algo, r)| {
        let source = if r.source.is_empty() { String::new() } else { format!(", {}", r.source) };
        let base = algo.variant_of.filter(|v| reclaimlab_cache::parse(v).is_ok_and(|b| b.reclaim.is_some()));
        PolicyEntry {
            name: format!("cache:{}", algo.name),
            base: base.map(|v| format!("cache:{v}")).unwrap_or_default(),
            patched: base.map(|_| PatchedPath::Reclaim),
            description: format!(
                "reference cache algorithm as the reclaim policy (crates/cache{source}): {}; kernel reclaim drivers and shrink_folio_list unchanged",
                r.description
            ),
            build: Box::new(move |cfg: &SimConfig| -> Box<dyn Engine> { Box::new(Machine::new(cfg, CachePolicy::new(algo))) }),
            boxed: Box::new(move || -> Box<dyn ReclaimPolicy> { Box::new(CachePolicy::new(algo)) }),
        }
    })
}

fn kernel_rows() -> Vec<PolicyEntry> {
    vec![row!(
    "classic@6.15",
    None,
    "active/inactive LRU with workingset refault detection (mm/vmscan.c, mm/workingset.c, v6.15)",
    Classic::new(Mainline)
),
row!(
    "mglru@6.15",
    None,
    "multi-generational LRU: generations, tiers, PID-controlled eviction, page-table walk aging, generation-distance refault test (mm/vmscan.c, mm/workingset.c, v6.15)",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::Mainline)
),
row!(
    "mglru+refault-distance-rfc-v3",
    Some(PatchedPath::Refault),
    "Kairui Song's RFC v3 (Sep 2023, not merged) on MGLRU: shadows carry an eviction-only clock; a refault within the inactive size (the two oldest generations) is re-activated",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::refault_distance_rfc_v3::RefaultDistanceRfcV3)
),
row!(
    "mglru+refault-distance-2026",
    Some(PatchedPath::Refault),
    "Kairui Song's \"MGLRU-FG and refault distance support\" RFC (May 2026, patches 22, 27, 30; not merged): shadows carry refs above an eviction-only timestamp; a refault within the inactive size (the two oldest generations) is re-activated",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::refault_distance_2026::RefaultDistance2026)
),
row!(
    "mglru@6.6",
    None,
    "multi-generational LRU as in v6.6: refs = counter + PG_workingset, read() pages join the oldest generation, one-strike promotion of young PTEs, refault recent only from the current oldest generation (mm/vmscan.c, mm/workingset.c, v6.6)",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::v6_6::Mglru66::new())
),
row!(
    "mglru+fix-underprotected-page-cache",
    Some(PatchedPath::ReclaimAndInactiveAdd),
    "Yu Zhao's \"mm/mglru: fix underprotected page cache\" (Dec 2023, 081488051d28) on v6.6: unmapped folios join min_seq + 1, five-access folios are protected, refaults with refs >= 3 or in a fault get the workingset tier",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::v6_6::Mglru66Fix::new())
),
row!(
    "mglru@6.12",
    Some(PatchedPath::ReclaimAndInactiveAdd),
    "multi-generational LRU as in 6.12 stable (6.12.114+): v6.6's code path with the four Dec 2023 fixes (underprotected page cache, stop at high watermarks, min_ttl_ms with memcgs, offlined memcgs), v6.10's initial-priority clamp and the backported \"reset page lru tier bits when activating\"",
    crate::policy::mglru::Mglru::new(crate::policy::mglru::v6_12::Mglru612::new())
),
row!(
    "classic+refault-distance-rfc-v3",
    Some(PatchedPath::Refault),
    "Kairui Song's RFC v3 (Sep 2023, not merged): the workingset clock ages only on eviction; a refault is activated if its distance < inactive size (active >= inactive) or < active + the other type's inactive",
    Classic::new(crate::policy::classic::refault_distance_rfc_v3::RefaultDistanceRfcV3)
),
]
}

/// `lru_gen.enabled=y|n` on a model of the other family: the same kernel's (and
/// patch's) model of the requested family, e.g. `classic@6.15` with y → `mglru@6.15`.
pub fn resolve_lru_gen(name: &str, enabled: Option<bool>) -> Result<String> {
    let Some(enabled) = enabled else { return Ok(name.to_string()) };
    let (from, to) = if enabled { ("classic", "mglru") } else { ("mglru", "classic") };
    let Some(rest) = name.strip_prefix(from) else { return Ok(name.to_string()) };
    let other = format!("{to}{rest}");
    if table().iter().any(|p| p.name == other) {
        Ok(other)
    } else {
        Err(Error::config("lru_gen.enabled", format!("policy '{name}' has no {to} counterpart ('{other}' is not a known model)")))
    }
}

pub fn find(name: &str) -> Result<&'static PolicyEntry> {
    table().iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = table().iter().map(|p| p.name.as_str()).collect();
        Error::config("policy", format!("unknown policy '{name}'; known: {}", names.join(", ")))
    })
}

pub fn policies() -> Vec<PolicyInfo> {
    table().iter().map(|p| PolicyInfo { name: &p.name, base: &p.base, description: &p.description }).collect()
}

/// Build a trace machine whose reclaim policy is `factory`'s (one instance per lruvec),
/// reported under `name`: the entry point behind [`crate::Simulation::with_policy`].
pub fn build_ext(cfg: &SimConfig, name: &str, factory: crate::policy::ext::OpsFactory) -> Result<Box<dyn Engine>> {
    cfg.validate()?;
    let mut cfg = cfg.clone();
    cfg.policy = name.to_string();
    let mut m = Machine::new(&cfg, crate::policy::ext::ExtPolicy::new(name, factory));
    if let Some(e) = m.policy.take_error() {
        return Err(e);
    }
    Ok(Box::new(m))
}

#[cfg(test)]
mod tests {
    use super::table;

    /// Variants are one-level diffs: a row's base is a row of its family that has no
    /// base itself, and exactly the rows with a base say which path their patch changes.
    #[test]
    fn every_base_is_a_kernel_version_of_its_family() {
        let family = |n: &str| n.split(['@', '+', ':']).next().unwrap().to_string();
        for p in table() {
            assert_eq!(p.base.is_empty(), p.patched.is_none(), "{}: a base and a patched path go together", p.name);
            if p.base.is_empty() {
                continue;
            }
            let base = table().iter().find(|b| b.name == p.base).unwrap_or_else(|| panic!("{}: base {} is not a row", p.name, p.base));
            assert_eq!(base.base, "", "{}: its base {} is itself a variant (of {})", p.name, p.base, base.base);
            assert_eq!(family(&p.name), family(&p.base), "{}: base {} of another family", p.name, p.base);
        }
    }
}
