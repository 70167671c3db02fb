//! The workingset shadow-node shrinker (mm/workingset.c, mm/shrinker.c 6.12): xarray leaf
//! nodes holding only shadow entries go on the memcg's `shadow_nodes` list, and reclaim's
//! `shrink_slab` frees those above `max_nodes` (LRU + slab pages / 8) with their shadows,
//! so the refaults they would have detected go unseen.

mod common;
use common::*;
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
