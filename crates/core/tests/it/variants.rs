//! The differential rule for variants, generated from the registry: every row that names
//! a base runs beside that base on a trace that avoids the path its patch changes (the
//! row's `PatchedPath`), the precondition is asserted from the counters, and the two must
//! make the same decisions — vmstat, metrics and time series alike.

use crate::common::*;
use reclaimlab_core::policy::registry::{table, PatchedPath};
use reclaimlab_core::RunResult;
use reclaimlab_trace::{generate, AccessKind, Pattern, Program};

/// The trace and machine that avoid `path`.
fn avoiding(path: PatchedPath) -> (Program, &'static [(&'static str, &'static str)]) {
    match path {
        // One pass over a file three times memory beside a small anon set: the file's
        // pages are evicted and never read again.
        PatchedPath::Refault => (
            program(
                vec![
                    region("cache", 8 * MIB, AccessKind::AnonMapped),
                    region("data", 160 * MIB, AccessKind::FileRead),
                ],
                vec![phase(
                    "run",
                    160 * MIB as u64 * 2,
                    &[(0, Pattern::Uniform, 1.0), (1, Pattern::Sequential, 1.0)],
                )],
            ),
            &[
                ("machine.memory", "48M"),
                ("swap.device", "zram"),
                ("swap.size", "256M"),
            ],
        ),
        // 24 MiB of anon and mapped file pages, re-touched, on a 128 MiB machine.
        PatchedPath::Reclaim | PatchedPath::ReclaimAndInactiveAdd => (
            program(
                vec![
                    region("heap", 16 * MIB, AccessKind::AnonMapped),
                    region("lib", 8 * MIB, AccessKind::FileMapped),
                ],
                vec![phase(
                    "run",
                    400_000,
                    &[
                        (0, Pattern::Zipf { alpha: 0.8 }, 2.0),
                        (1, Pattern::Uniform, 1.0),
                    ],
                )],
            ),
            &[
                ("machine.memory", "128M"),
                ("swap.device", "zram"),
                ("swap.size", "256M"),
            ],
        ),
    }
}

fn run_on(policy: &str, prog: &Program, kv: &[(&str, &str)]) -> RunResult {
    let mut all = vec![("policy", policy)];
    all.extend_from_slice(kv);
    run_checked(
        &config(&all),
        generate(prog.clone(), 5).unwrap().as_mut(),
        100_000,
    )
}

fn sum(r: &RunResult, keys: &[&str]) -> u64 {
    keys.iter().map(|k| vm(r, k)).sum()
}

/// The precondition: `path` never ran (and, for `Refault`, the eviction beside it did).
fn assert_avoided(path: PatchedPath, prog: &Program, r: &RunResult) {
    let refaults = sum(r, &["workingset_refault_anon", "workingset_refault_file"]);
    // Scanned or evicted by any reclaimer (shrink_folio_list counts pgsteal under every
    // policy, the kernel families pgscan).
    let scanned = sum(
        r,
        &["pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file"],
    );
    match path {
        PatchedPath::Refault => {
            assert!(
                sum(r, &["pgsteal_anon", "pgsteal_file"]) > 10_000,
                "{}: the trace must evict",
                r.policy
            );
            assert_eq!(refaults, 0, "{}: a shadow was read back", r.policy);
        }
        PatchedPath::Reclaim => assert_eq!(scanned, 0, "{}: reclaim ran", r.policy),
        PatchedPath::ReclaimAndInactiveAdd => {
            assert_eq!(scanned, 0, "{}: reclaim ran", r.policy);
            // Without reclaim nothing ages, moves or frees a folio, so an empty inactive
            // side (the two oldest generations) at the end means no folio was ever added
            // to it.
            assert_eq!(
                sum(r, &["nr_inactive_anon", "nr_inactive_file"]),
                0,
                "{}: a folio was added inactive",
                r.policy
            );
            assert!(sum(r, &["nr_active_anon", "nr_active_file"]) > 0);
            assert!(
                prog.regions.iter().all(|g| g.kind != AccessKind::FileRead),
                "an fd access would set reference bits"
            );
        }
    }
}

#[test]
fn every_variant_decides_as_its_base_where_its_patch_never_runs() {
    let variants: Vec<_> = table().iter().filter(|p| !p.base.is_empty()).collect();
    assert!(
        variants.len() >= 6,
        "the registry's variants: {}",
        variants.len()
    );
    for v in variants {
        let path = v.patched.unwrap_or_else(|| {
            panic!(
                "{} names base {} but not what its patch changes",
                v.name, v.base
            )
        });
        let (prog, kv) = avoiding(path);
        let base = run_on(&v.base, &prog, kv);
        let var = run_on(&v.name, &prog, kv);
        assert_avoided(path, &prog, &base);
        assert_avoided(path, &prog, &var);
        assert_eq!(base.vmstat, var.vmstat, "{} vs {}", v.name, v.base);
        assert_eq!(
            format!("{:?}", base.metrics),
            format!("{:?}", var.metrics),
            "{} vs {}",
            v.name,
            v.base
        );
        assert_eq!(
            format!("{:?}", base.timeseries),
            format!("{:?}", var.timeseries),
            "{} vs {}",
            v.name,
            v.base
        );
    }
}
