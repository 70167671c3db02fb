//! Per-memcg memory.stat (mm/memcontrol.c 6.12 `memcg_stat_format`): each event is
//! counted against the memcg the kernel charges it to, so over the cgroups the counts
//! add up to the global vmstat counters where the kernel's do — and where they do not
//! (memcg reclaim counts `pgscan_direct`/`pgsteal_direct`/`pgrefill` per memcg only).

use crate::common::*;
use reclaimlab_core::RunResult;
use reclaimlab_trace::{generate, AccessKind, Pattern};

/// Two cgroups on a 32 MiB machine with zram: `wl` (anon heap + file data, limited to
/// 12 MiB: memcg reclaim) and `bg` (a file set it rewrites, and anon), together larger
/// than memory (kswapd and direct reclaim).
fn two_cgroups(policy: &str) -> RunResult {
    let cfg = config(&[("policy", policy), ("machine.memory", "32M"), ("swap.device", "zram"), ("cgroup.wl.memory.max", "12M"), ("sim.time_dilation", "100")]);
    let mut heap = region("heap", 6 * MIB, AccessKind::AnonMapped);
    heap.cgroup = "wl".into();
    let mut data = region("data", 16 * MIB, AccessKind::FileMapped);
    data.cgroup = "wl".into();
    let mut log = region("log", 24 * MIB, AccessKind::FileRead);
    log.cgroup = "bg".into();
    log.write_ratio = 0.3;
    let mut anon = region("anon", 8 * MIB, AccessKind::AnonMapped);
    anon.cgroup = "bg".into();
    let p = program(
        vec![heap, data, log, anon],
        vec![phase(
            "run",
            1_500_000,
            &[(0, Pattern::Zipf { alpha: 0.9 }, 1.0), (1, Pattern::Zipf { alpha: 0.7 }, 1.0), (2, Pattern::Zipf { alpha: 0.6 }, 1.0), (3, Pattern::Uniform, 0.5)],
        )],
    );
    run_checked(&cfg, generate(p, 11).unwrap().as_mut(), 100_000)
}

fn cg(r: &RunResult, name: &str, key: &str) -> u64 {
    metric(r, &format!("memcg.{name}.{key}")) as u64
}

fn sum(r: &RunResult, key: &str) -> u64 {
    cg(r, "wl", key) + cg(r, "bg", key)
}

#[test]
fn memory_stat_sums_to_vmstat() {
    for policy in ["classic@6.15", "mglru@6.12", "mglru@6.15"] {
        let r = two_cgroups(policy);
        // The trace charges nothing to the root: the two cgroups hold every page.
        for key in [
            "workingset_refault_anon",
            "workingset_refault_file",
            "workingset_activate_anon",
            "workingset_activate_file",
            "workingset_restore_anon",
            "workingset_restore_file",
            "pgfault",
            "pgmajfault",
            "pgactivate",
            "pgdeactivate",
            "pgscan_kswapd",
            "pgsteal_kswapd",
        ] {
            assert_eq!(sum(&r, key), vm(&r, key), "{policy}: {key} over the cgroups");
        }
        // pgscan/pgsteal are per-memcg sums over reclaimers, memcg reclaim included, as
        // the global pgscan_anon + pgscan_file are.
        assert_eq!(sum(&r, "pgscan"), vm(&r, "pgscan_anon") + vm(&r, "pgscan_file"), "{policy}: pgscan");
        assert_eq!(sum(&r, "pgsteal"), vm(&r, "pgsteal_anon") + vm(&r, "pgsteal_file"), "{policy}: pgsteal");
        for who in ["wl", "bg"] {
            assert_eq!(cg(&r, who, "pgscan"), cg(&r, who, "pgscan_kswapd") + cg(&r, who, "pgscan_direct"));
            assert_eq!(cg(&r, who, "pgsteal"), cg(&r, who, "pgsteal_kswapd") + cg(&r, who, "pgsteal_direct"));
        }
        // wl's limit reclaim is a task's reclaim: pgscan_direct in its memory.stat, not
        // in /proc/vmstat.
        assert!(sum(&r, "pgscan_direct") > vm(&r, "pgscan_direct"), "{policy}: memcg reclaim counts per memcg only");
        assert!(sum(&r, "pgsteal_direct") > vm(&r, "pgsteal_direct"));
        assert!(sum(&r, "pgrefill") >= vm(&r, "pgrefill"));
        // Both cgroups were reclaimed from, and both refaulted.
        for who in ["wl", "bg"] {
            for key in ["pgscan", "pgsteal", "pgfault", "workingset_refault_file"] {
                assert!(cg(&r, who, key) > 0, "{policy}: {who} {key}");
            }
        }
        assert!(cg(&r, "wl", "pgmajfault") > 0, "{policy}: wl's mapped file faults are major");
        // Page states, in bytes: the LRU lists add up to the node's, anon + file and the
        // slab charged (the files' xarray nodes, rounded up to pages with at most a page of
        // stock) to memory.current (no swap cache in the model).
        for (key, global) in [
            ("inactive_anon", "nr_inactive_anon"),
            ("active_anon", "nr_active_anon"),
            ("inactive_file", "nr_inactive_file"),
            ("active_file", "nr_active_file"),
            ("file_dirty", "nr_dirty"),
        ] {
            assert_eq!(sum(&r, key), vm(&r, global) * 4096, "{policy}: {key}");
        }
        for who in ["wl", "bg"] {
            let kmem = cg(&r, who, "memory.current_bytes") - cg(&r, who, "anon") - cg(&r, who, "file");
            let slab = cg(&r, who, "slab_reclaimable");
            assert!((slab..=slab + 4096).contains(&kmem), "{policy}: {who} {kmem} bytes beside the LRU, slab {slab}");
            assert!(cg(&r, who, "file_mapped") <= cg(&r, who, "file"));
        }
        assert_eq!(cg(&r, "wl", "file_dirty"), 0, "wl never writes");
        assert!(cg(&r, "wl", "file_mapped") > 0);
        eprintln!(
            "{policy}: wl pgscan {} refault_file {} / bg pgscan {} refault_file {}",
            cg(&r, "wl", "pgscan"),
            cg(&r, "wl", "workingset_refault_file"),
            cg(&r, "bg", "pgscan"),
            cg(&r, "bg", "workingset_refault_file")
        );
    }
}
