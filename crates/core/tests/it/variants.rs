//! The differential rule for variants, generated from the registry: every row that names
//! a base runs beside that base on a trace that avoids the path its patch changes (the
//! row's `PatchedPath`), the precondition is asserted from the counters, and the two must
//! make the same decisions — vmstat, metrics and time series alike.

use crate::common::*;
use reclaimlab_core::sim::registry::{table, PatchedPath};
use reclaimlab_core::RunResult;
use reclaimlab_trace::{generate, AccessKind, Pattern, Program};

/// The trace that avoids `path` (two regions, one phase) and the memory of its machine.
fn avoiding(path: PatchedPath) -> (Program, &'static str) {
    let (regions, accesses, streams, memory) = match path {
        // One pass over a file three times memory beside a small anon set: the file's
        // pages are evicted and never read again.
        PatchedPath::Refault => ([("cache", 8, AccessKind::AnonMapped), ("data", 160, AccessKind::FileRead)], 160 * MIB as u64 * 2, [Pattern::Uniform, Pattern::Sequential], "48M"),
        // 24 MiB of anon and mapped file pages, re-touched, on a 128 MiB machine.
        PatchedPath::Reclaim | PatchedPath::ReclaimAndInactiveAdd => {
            ([("heap", 16, AccessKind::AnonMapped), ("lib", 8, AccessKind::FileMapped)], 400_000, [Pattern::Zipf { alpha: 0.8 }, Pattern::Uniform], "128M")
        }
    };
    let [a, b] = streams;
    let prog = program(regions.iter().map(|&(name, mib, kind)| region(name, mib * MIB, kind)).collect(), vec![phase("run", accesses, &[(0, a, 1.0), (1, b, 1.0)])]);
    (prog, memory)
}

fn run_on(policy: &str, prog: &Program, memory: &str) -> RunResult {
    let kv = [("policy", policy), ("machine.memory", memory), ("swap.device", "zram"), ("swap.size", "256M")];
    run_checked(&config(&kv), generate(prog.clone(), 5).unwrap().as_mut(), 100_000)
}

fn sum(r: &RunResult, keys: &[&str]) -> u64 {
    keys.iter().map(|k| vm(r, k)).sum()
}

/// The precondition: `path` never ran (and, for `Refault`, the eviction beside it did).
fn assert_avoided(path: PatchedPath, prog: &Program, r: &RunResult) {
    let refaults = sum(r, &["workingset_refault_anon", "workingset_refault_file"]);
    // Scanned or evicted by any reclaimer (shrink_folio_list counts pgsteal under every
    // policy, the kernel families pgscan).
    let scanned = sum(r, &["pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file"]);
    match path {
        PatchedPath::Refault => {
            assert!(sum(r, &["pgsteal_anon", "pgsteal_file"]) > 10_000, "{}: the trace must evict", r.policy);
            assert_eq!(refaults, 0, "{}: a shadow was read back", r.policy);
        }
        PatchedPath::Reclaim => assert_eq!(scanned, 0, "{}: reclaim ran", r.policy),
        PatchedPath::ReclaimAndInactiveAdd => {
            assert_eq!(scanned, 0, "{}: reclaim ran", r.policy);
            // Without reclaim nothing ages, moves or frees a folio, so an empty inactive
            // side (the two oldest generations) at the end means no folio was ever added
            // to it.
            assert_eq!(sum(r, &["nr_inactive_anon", "nr_inactive_file"]), 0, "{}: a folio was added inactive", r.policy);
            assert!(sum(r, &["nr_active_anon", "nr_active_file"]) > 0);
            assert!(prog.regions.iter().all(|g| g.kind != AccessKind::FileRead), "an fd access would set reference bits");
        }
    }
}

#[test]
fn every_variant_decides_as_its_base_where_its_patch_never_runs() {
    let variants: Vec<_> = table().iter().filter(|p| !p.base.is_empty()).collect();
    assert!(variants.len() >= 6, "the registry's variants: {}", variants.len());
    for v in variants {
        let path = v.patched.unwrap_or_else(|| panic!("{} names base {} but not what its patch changes", v.name, v.base));
        let (prog, memory) = avoiding(path);
        let base = run_on(&v.base, &prog, memory);
        let var = run_on(&v.name, &prog, memory);
        assert_avoided(path, &prog, &base);
        assert_avoided(path, &prog, &var);
        // vmstat, metrics and time series, each as its Debug text.
        let text = |r: &RunResult| [format!("{:?}", r.vmstat), format!("{:?}", r.metrics), format!("{:?}", r.timeseries)];
        for (what, (b, x)) in ["vmstat", "metrics", "timeseries"].iter().zip(text(&base).into_iter().zip(text(&var))) {
            assert_eq!(b, x, "{} vs {}: the {what} differ", v.name, v.base);
        }
    }
}
