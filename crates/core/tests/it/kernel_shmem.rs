//! The root memcg's tmpfs pages at the start (`machine.kernel_shmem`, sim/kernel_shmem.rs):
//! swap-backed folios whole-machine reclaim swaps out, and with them goes the root's own
//! LRU size that bounds the swap cache's shadow nodes (`count_shadow_nodes`, mm/workingset.c
//! 6.12). Mlocked pages of the same size (`machine.kernel_mlocked`) stay and keep the bound.

use crate::common::*;
use reclaimlab_trace::{flags, Access};

/// 192 MiB of anon written, then read three more times in order, by cgroup 1 ("g", no
/// limit) on a 64 MiB machine with 24 MiB in use outside it, 16 MiB of that `kernel` (a
/// `machine.kernel_shmem` or `machine.kernel_mlocked` size): whole-machine reclaim swaps
/// to an SSD (zram's pool would take the memory).
fn run_with(policy: &str, kernel: &str, sized: bool) -> reclaimlab_core::RunResult {
    let pages = 49_152u32;
    let recs: Vec<Access> = (0..4).flat_map(|pass| (0..pages).map(move |page| Access { page, cgroup: 1, flags: if pass == 0 { flags::WRITE } else { 0 }, gap: 0 })).collect();
    let cfg = config(&[("policy", policy), ("machine.memory", "64M"), ("machine.kernel_used", "24M"), (kernel, "16M"), ("swap.device", "ssd"), ("swap.size", "256M")]);
    let src = VecSource::new(recs, Vec::new()).with_cgroups(&["g"]);
    run_checked(&cfg, &mut if sized { src } else { src.unknown_size() }, 1 << 13)
}

/// Anon pages the root memcg lost to reclaim: every steal but g's.
fn root_steals(r: &reclaimlab_core::RunResult) -> u64 {
    vm(r, "pgsteal_anon") - metric(r, "memcg.g.pgsteal") as u64
}

#[test]
fn the_roots_shmem_is_swapped_out_and_its_shadow_bound_with_it() {
    for policy in ["classic@6.15", "mglru@6.12"] {
        let shmem = run_with(policy, "machine.kernel_shmem", true);
        let mlocked = run_with(policy, "machine.kernel_mlocked", true);
        let unknown = run_with(policy, "machine.kernel_shmem", false);
        eprintln!(
            "{policy}: root steals {} / {} / {}, nodereclaim {} / {} / {}, refault_anon {} / {} / {}",
            root_steals(&shmem),
            root_steals(&mlocked),
            root_steals(&unknown),
            vm(&shmem, "workingset_nodereclaim"),
            vm(&mlocked, "workingset_nodereclaim"),
            vm(&unknown, "workingset_nodereclaim"),
            vm(&shmem, "workingset_refault_anon"),
            vm(&mlocked, "workingset_refault_anon"),
            vm(&unknown, "workingset_refault_anon"),
        );
        // The 4,096 shmem pages are never touched: reclaim swaps nearly all of them out.
        assert!(root_steals(&shmem) >= 3_700, "{policy}: {}", root_steals(&shmem));
        assert_eq!(root_steals(&mlocked), 0, "{policy}");
        // `nr_shmem` is what is left in memory: the 4,096 less those swapped out (nothing
        // swaps them in), all 4,096 where they were never reclaimable.
        assert_eq!(vm(&shmem, "nr_shmem"), 4_096 - root_steals(&shmem), "{policy}");
        assert_eq!((vm(&mlocked, "nr_shmem"), vm(&unknown, "nr_shmem")), (0, 4_096), "{policy}");
        // With them gone the root may keep almost no shadow node (its own LRU pages bound
        // them); with 4,096 mlocked pages it keeps 512, so fewer swap-ins are refaults.
        assert!(vm(&shmem, "workingset_nodereclaim") > vm(&mlocked, "workingset_nodereclaim"), "{policy}");
        assert!(vm(&shmem, "workingset_refault_anon") * 2 < vm(&mlocked, "workingset_refault_anon"), "{policy}");
        // Page ids not known up front: the shmem stays counted on the root's LRU and is
        // never reclaimed, exactly as the mlocked pages of the same size.
        assert_eq!(root_steals(&unknown), 0, "{policy}");
        for counter in ["workingset_nodereclaim", "workingset_refault_anon", "pswpout"] {
            assert_eq!(vm(&unknown, counter), vm(&mlocked, counter), "{policy}: {counter}");
        }
    }
}
