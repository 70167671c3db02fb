//! Proactive reclaim from the trace: a write to a cgroup's `memory.reclaim` (mm/memcontrol.c
//! v6.12 `memory_reclaim()`) reclaims from that cgroup only, at least what was asked (each
//! round reclaims at least SWAP_CLUSTER_MAX), counts as memcg reclaim (memory.stat's
//! pgscan/pgsteal, no global pgscan_direct/pgsteal_direct), honours `swappiness=`, and
//! fails with -EAGAIN when nothing is reclaimable.

use crate::common::*;
use reclaimlab_core::RunResult;
use reclaimlab_trace::{generate, AccessKind, Pattern, Reclaim};

const POLICIES: [&str; 3] = ["classic@6.15", "mglru@6.12", "mglru@6.15"];

/// `a`: 4 MiB anon + 8 MiB file; `b`: 8 MiB file; all touched once on a 64 MiB machine
/// (nothing reclaimed), then the `reclaims` after the last access (a phase of no accesses:
/// ops at the trace's end).
fn run_with(policy: &str, swap: &str, reclaims: Vec<Reclaim>) -> RunResult {
    let cfg = config(&[("policy", policy), ("machine.memory", "64M"), ("swap.device", swap)]);
    let mut anon = region("anon", 4 * MIB, AccessKind::AnonMapped);
    anon.cgroup = "a".into();
    anon.write_ratio = 1.0;
    let mut fa = region("fa", 8 * MIB, AccessKind::FileMapped);
    fa.cgroup = "a".into();
    let mut fb = region("fb", 8 * MIB, AccessKind::FileMapped);
    fb.cgroup = "b".into();
    let mut last = phase("after", 0, &[(2, Pattern::Sequential, 1.0)]);
    last.reclaims = reclaims;
    let p = program(
        vec![anon, fa, fb],
        vec![
            phase("anon", (4 * MIB) as u64, &[(0, Pattern::Sequential, 1.0)]),
            phase("fa", (8 * MIB) as u64, &[(1, Pattern::Sequential, 1.0)]),
            phase("fb", (8 * MIB) as u64, &[(2, Pattern::Sequential, 1.0)]),
            last,
        ],
    );
    run_checked(&cfg, generate(p, 3).unwrap().as_mut(), 10_000)
}

fn cg(r: &RunResult, name: &str, key: &str) -> u64 {
    r.metrics.iter().find(|(k, _)| *k == format!("memcg.{name}.{key}")).map_or(0, |m| m.1 as u64)
}

fn reclaim(cgroup: &str, bytes: u64, swappiness: Option<u8>) -> Reclaim {
    Reclaim { cgroup: cgroup.into(), bytes, swappiness }
}

const PAGE: u64 = 4096;

/// A cgroup's LRU pages in bytes (memory.stat's `anon` + `file`): memory.current less the
/// pages behind its slab (the xarray nodes of its files).
fn lru(r: &RunResult, name: &str) -> u64 {
    cg(r, name, "anon") + cg(r, name, "file")
}

#[test]
fn reclaims_at_least_the_request_from_that_cgroup_only() {
    for policy in POLICIES {
        let base = run_with(policy, "zram", vec![]);
        // Everything fits: 3072 pages of a, 2048 of b, nothing reclaimed.
        assert_eq!(lru(&base, "a"), 3072 * PAGE, "{policy}");
        assert_eq!(cg(&base, "a", "pgsteal"), 0, "{policy}");
        // memory.current adds the xarray nodes charged to the cgroup (b: 2048 pages of fb,
        // 32 leaf nodes of 584 bytes) rounded up to pages, with at most a page of stock.
        assert_eq!(cg(&base, "b", "slab_reclaimable"), 32 * 584, "{policy}");
        for who in ["a", "b"] {
            let kmem = cg(&base, who, "memory.current_bytes") - lru(&base, who);
            assert!((cg(&base, who, "slab_reclaimable")..=cg(&base, who, "slab_reclaimable") + PAGE).contains(&kmem), "{policy}: {who} {kmem}");
        }
        let r = run_with(policy, "zram", vec![reclaim("a", 4 << 20, None)]);
        let freed = (lru(&base, "a") - lru(&r, "a")) / PAGE;
        // 1024 pages asked: batches of a quarter of what is left (256, 192, 144, ...), each
        // raised to SWAP_CLUSTER_MAX and overshooting by at most one round's reclaim.
        assert!((1024..=1024 + 64).contains(&freed), "{policy}: freed {freed} pages");
        assert_eq!(cg(&r, "a", "pgsteal"), freed, "{policy}");
        assert_eq!(cg(&r, "a", "pgsteal_direct"), freed, "{policy}: memcg reclaim counts as a task's");
        assert!(cg(&r, "a", "pgscan") >= freed, "{policy}");
        // b is untouched.
        assert_eq!(lru(&r, "b"), 2048 * PAGE, "{policy}");
        assert_eq!((cg(&r, "b", "pgscan"), cg(&r, "b", "pgsteal")), (0, 0), "{policy}");
        // cgroup_reclaim(sc): no global pgscan_direct/pgsteal_direct, but pgsteal_anon+file.
        assert_eq!((vm(&r, "pgscan_direct"), vm(&r, "pgsteal_direct"), vm(&r, "allocstall_normal")), (0, 0, 0), "{policy}");
        assert_eq!(vm(&r, "pgsteal_anon") + vm(&r, "pgsteal_file"), freed, "{policy}");
        // The write's own record.
        assert_eq!(cg(&r, "a", "memory.reclaim.writes"), 1);
        assert_eq!(cg(&r, "a", "memory.reclaim.eagain"), 0);
        assert_eq!(cg(&r, "a", "memory.reclaim.requested_bytes"), 4 << 20);
        assert_eq!(cg(&r, "a", "memory.reclaim.reclaimed_bytes"), freed * PAGE, "{policy}");
        assert_eq!(cg(&r, "b", "memory.reclaim.writes"), 0);
        assert!(metric(&r, "proactive_reclaim_s") > 0.0, "{policy}");
        // No events: memory.reclaim is not a limit.
        assert_eq!(cg(&r, "a", "memory.events.max") + cg(&r, "a", "memory.events.high"), 0);
    }
}

#[test]
fn swappiness_zero_reclaims_file_only_and_200_anon_first() {
    for policy in POLICIES {
        let r = run_with(policy, "zram", vec![reclaim("a", 2 << 20, Some(0))]);
        assert!(cg(&r, "a", "pgsteal") >= 512, "{policy}");
        assert_eq!(vm(&r, "pgsteal_anon"), 0, "{policy}: swappiness=0 swaps nothing");
        assert_eq!(vm(&r, "pswpout"), 0, "{policy}");
        // Without swappiness= the model follows vm.swappiness (60) and, with cold anon and
        // cold file, takes some of each kind; 200 makes anon the cheaper kind.
        let hi = run_with(policy, "zram", vec![reclaim("a", 2 << 20, Some(200))]);
        assert!(vm(&hi, "pgsteal_anon") > vm(&hi, "pgsteal_file"), "{policy}: swappiness=200 anon {} file {}", vm(&hi, "pgsteal_anon"), vm(&hi, "pgsteal_file"));
        assert_eq!(vm(&hi, "pswpout"), vm(&hi, "pgsteal_anon"), "{policy}");
    }
}

#[test]
fn nothing_reclaimable_returns_eagain() {
    for policy in POLICIES {
        // Without swap a's anon pages cannot go; asking for more than its file pages
        // reclaims all 2048 of them, then 17 fruitless rounds return -EAGAIN.
        let r = run_with(policy, "none", vec![reclaim("a", 64 << 20, None)]);
        assert_eq!(cg(&r, "a", "memory.reclaim.eagain"), 1, "{policy}");
        assert_eq!(cg(&r, "a", "memory.reclaim.reclaimed_bytes"), 2048 * PAGE, "{policy}");
        assert_eq!(lru(&r, "a"), 1024 * PAGE, "{policy}: the anon pages stay");
        // A second write to the now file-less cgroup reclaims nothing: -EAGAIN again.
        let r = run_with(policy, "none", vec![reclaim("a", 64 << 20, None), reclaim("a", 4096 * 8, None)]);
        assert_eq!((cg(&r, "a", "memory.reclaim.writes"), cg(&r, "a", "memory.reclaim.eagain")), (2, 2), "{policy}");
        assert_eq!(cg(&r, "a", "memory.reclaim.reclaimed_bytes"), 2048 * PAGE, "{policy}");
    }
}

#[test]
fn root_write_reclaims_from_every_cgroup() {
    for policy in POLICIES {
        let r = run_with(policy, "zram", vec![reclaim("", 16 << 20, None)]);
        let root_freed = cg(&r, "", "memory.reclaim.reclaimed_bytes") / PAGE;
        assert!(root_freed >= 4096, "{policy}: {root_freed}");
        let a = 3072 - lru(&r, "a") / PAGE;
        let b = 2048 - lru(&r, "b") / PAGE;
        assert_eq!(a + b, root_freed, "{policy}");
        assert!(a > 0 && b > 0, "{policy}: a {a} b {b}");
    }
}

#[test]
fn an_op_mid_trace_runs_before_its_record_whatever_the_steps() {
    let cfg = config(&[("policy", "mglru@6.12"), ("machine.memory", "64M"), ("swap.device", "zram")]);
    let mut fa = region("fa", 8 * MIB, AccessKind::FileMapped);
    fa.cgroup = "a".into();
    let mut fb = region("fb", 8 * MIB, AccessKind::FileMapped);
    fb.cgroup = "b".into();
    let mut second = phase("fb", (8 * MIB) as u64, &[(1, Pattern::Sequential, 1.0)]);
    second.reclaims = vec![reclaim("a", 1 << 20, None)];
    let p = program(vec![fa, fb], vec![phase("fa", (8 * MIB) as u64, &[(0, Pattern::Sequential, 1.0)]), second]);
    // In steps of 777 accesses (the op falls inside a step) and all at once.
    let stepped = run_checked(&cfg, generate(p.clone(), 1).unwrap().as_mut(), 777);
    let whole = run(&cfg, generate(p, 1).unwrap().as_mut());
    for r in [&stepped, &whole] {
        assert_eq!(cg(r, "a", "memory.reclaim.writes"), 1);
        assert_eq!(lru(r, "a"), 2048 * PAGE - cg(r, "a", "memory.reclaim.reclaimed_bytes"));
        assert_eq!(lru(r, "b"), 2048 * PAGE);
    }
    assert_eq!(stepped.vmstat, whole.vmstat);
}

#[test]
fn ops_after_the_last_record_run_once_however_often_run_is_called() {
    use reclaimlab_core::sim;
    let cfg = config(&[("policy", "classic@6.15"), ("machine.memory", "64M")]);
    let mut fa = region("fa", MIB, AccessKind::FileMapped);
    fa.cgroup = "a".into();
    let mut end = phase("end", 0, &[(0, Pattern::Sequential, 1.0)]);
    end.reclaims = vec![reclaim("a", 64 << 10, None)];
    let p = program(vec![fa], vec![phase("fill", MIB as u64, &[(0, Pattern::Sequential, 1.0)]), end]);
    let mut src = generate(p, 1).unwrap();
    let mut e = sim::build(&cfg).unwrap();
    while !e.run(src.as_mut(), 100).unwrap() {}
    assert!(e.run(src.as_mut(), 100).unwrap());
    let r = e.finish();
    assert_eq!(cg(&r, "a", "memory.reclaim.writes"), 1);
    // 16 pages asked: one round, its batch (4) raised to SWAP_CLUSTER_MAX.
    let freed = cg(&r, "a", "memory.reclaim.reclaimed_bytes") / PAGE;
    assert!((32..=64).contains(&freed), "{freed}");
    assert_eq!(lru(&r, "a"), (MIB as u64 - freed) * PAGE);
}
