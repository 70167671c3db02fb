//! The workingset shadow-node shrinker (mm/workingset.c, mm/shrinker.c 6.12): xarray leaf
//! nodes holding only shadow entries go on the memcg's `shadow_nodes` list, and reclaim's
//! `shrink_slab` frees those above `max_nodes` (LRU + slab pages / 8) with their shadows,
//! so the refaults they would have detected go unseen.

use crate::common::*;
use reclaimlab_trace::{flags, Access, FileRange};

const READ: u8 = flags::FILE | flags::SYSCALL;

/// `nr` files of `pages` pages each, back to back from page id 0.
fn files(nr: u32, pages: u32) -> Vec<FileRange> {
    (0..nr).map(|i| FileRange { name: format!("f{i}"), first: i * pages, nr_pages: pages, advice: 0 }).collect()
}

/// Every page of `total` pages read in order `passes` times by cgroup 1 ("g").
fn reads(total: u32, passes: u32) -> Vec<Access> {
    (0..passes).flat_map(|_| 0..total).map(|page| Access { page, cgroup: 1, flags: READ, gap: 0 }).collect()
}

/// 16 MiB of files read twice in a cgroup limited to 8 MiB.
fn run_twice(policy: &str, files: Vec<FileRange>) -> reclaimlab_core::RunResult {
    let total: u32 = files.iter().map(|f| f.nr_pages).sum();
    let cfg = config(&[("policy", policy), ("machine.memory", "64M"), ("swap.device", "none"), ("cgroup.g.memory.max", "8M")]);
    run_checked(&cfg, &mut VecSource::new(reads(total, 2), files).with_cgroups(&["g"]), 1 << 12)
}

fn memcg_stat(r: &reclaimlab_core::RunResult, key: &str) -> f64 {
    metric(r, &format!("memcg.g.{key}"))
}

/// 2,048 files of two pages (one leaf node each): after the first pass about half the
/// files are shadows only, far more nodes than `max_nodes` ≈ (2048 LRU + 2048 × 584 B of
/// slab) / 8 allows, so limit reclaim's shrink_slab frees them and the second pass misses
/// most refaults. One 4,096-page file has 64 nodes, never above `max_nodes`: every
/// second-pass miss is a detected refault.
#[test]
fn many_small_files_lose_their_shadows_one_big_file_keeps_them() {
    for policy in ["classic@6.15", "mglru@6.15", "mglru@6.12"] {
        let small = run_twice(policy, files(2048, 2));
        let big = run_twice(policy, files(1, 4096));
        let (small_rf, big_rf) = (vm(&small, "workingset_refault_file"), vm(&big, "workingset_refault_file"));
        eprintln!(
            "{policy}: small files refault {small_rf} nodereclaim {} slabs_scanned {} nodes {}; big file refault {big_rf} nodereclaim {}",
            vm(&small, "workingset_nodereclaim"),
            vm(&small, "slabs_scanned"),
            vm(&small, "workingset_nodes"),
            vm(&big, "workingset_nodereclaim")
        );
        assert!(vm(&small, "workingset_nodereclaim") > 0, "{policy}");
        assert!(vm(&small, "slabs_scanned") >= vm(&small, "workingset_nodereclaim"), "{policy}");
        assert_eq!(memcg_stat(&small, "workingset_nodereclaim") as u64, vm(&small, "workingset_nodereclaim"), "{policy}: charged to g");
        assert_eq!(vm(&big, "workingset_nodereclaim"), 0, "{policy}");
        assert_eq!(vm(&big, "slabs_scanned"), 0, "{policy}");
        // The big file's second pass misses what the first left out (16 MiB - about 8 MiB)
        // and detects nearly all of it.
        assert!(big_rf > 1800, "{policy}: {big_rf}");
        assert!(small_rf * 2 < big_rf, "{policy}: small {small_rf} vs big {big_rf}");
    }
}

/// Random reads, writes and mapped faults over files of 1..200 pages (most of 1..5) by two cgroups that
/// share the files (a node is charged to whoever inserted its first entry), under both
/// limits and global pressure: the node counts, list membership and `workingset_nodes`
/// match the page slots at every check (`ShadowNodes::check` in the engine's invariants),
/// for every kind of policy (a `cache:` policy leaves no shadows: evicting empties slots).
#[test]
fn node_accounting_matches_the_page_slots() {
    let mut fs = Vec::new();
    let mut first = 0;
    for i in 0..1500u32 {
        let nr_pages = if i % 5 == 0 { 1 + (i * 37) % 200 } else { 1 + i % 5 };
        fs.push(FileRange { name: format!("f{i}"), first, nr_pages, advice: 0 });
        first += nr_pages;
    }
    let total = first;
    let mut x = 12345u64;
    let recs: Vec<Access> = (0..300_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            let page = r % total;
            let fl = match (r >> 20) % 10 {
                0 => flags::FILE | flags::SYSCALL | flags::WRITE,
                1 | 2 => flags::FILE,
                _ => READ,
            };
            Access { page, cgroup: (1 + (r >> 28) % 2) as u16, flags: fl, gap: 0 }
        })
        .collect();
    for policy in ["classic@6.15", "mglru@6.15", "mglru@6.12", "cache:lru"] {
        let cfg = config(&[("policy", policy), ("machine.memory", "24M"), ("swap.device", "none"), ("cgroup.a.memory.max", "6M"), ("cgroup.b.memory.max", "10M")]);
        let r = run_checked(&cfg, &mut VecSource::new(recs.clone(), fs.clone()).with_cgroups(&["a", "b"]), 1 << 13);
        eprintln!(
            "{policy}: nodes {} nodereclaim {} slabs_scanned {} refault_file {}",
            vm(&r, "workingset_nodes"),
            vm(&r, "workingset_nodereclaim"),
            vm(&r, "slabs_scanned"),
            vm(&r, "workingset_refault_file")
        );
        let per_memcg = metric(&r, "memcg.a.workingset_nodereclaim") + metric(&r, "memcg.b.workingset_nodereclaim");
        assert_eq!(per_memcg as u64, vm(&r, "workingset_nodereclaim"), "{policy}");
    }
}
