//! A trace's madvise ops on the one fault path: `MADV_HUGEPAGE`/`MADV_NOHUGEPAGE` decide
//! which anonymous faults ask for a THP under each `transparent_hugepage.enabled` mode
//! (`vma_thp_enabled`, a PMD range wholly inside one VMA: `thp_vma_suitable_order`), and
//! `MADV_DONTNEED` unmaps (anonymous pages freed, file pages left cached).

use crate::common::*;
use reclaimlab_trace::{flags, Access, FileRange, TraceOp, MADV_DONTNEED, MADV_HUGEPAGE, MADV_NOHUGEPAGE};

/// Write every page of `0..pages` once, in order (anonymous).
fn writes(pages: u32) -> Vec<Access> {
    (0..pages).map(|page| Access { page, cgroup: 0, flags: flags::WRITE, gap: 0 }).collect()
}

fn thp_faults(enabled: &str, recs: Vec<Access>, ops: Vec<TraceOp>) -> reclaimlab_core::RunResult {
    let cfg = config(&[("machine.memory", "1G"), ("transparent_hugepage.enabled", enabled), ("swap.device", "none")]);
    let mut src = VecSource::new(recs, Vec::new()).with_ops(ops);
    run_checked(&cfg, &mut src, 1000)
}

#[test]
fn madvise_decides_which_ranges_get_thps() {
    // Pages 0..2048 are four PMD ranges, 2048..4096 four more.
    let ops = || vec![TraceOp::madvise(0, 0, 0, 2048, MADV_HUGEPAGE), TraceOp::madvise(0, 0, 2048, 2048, MADV_NOHUGEPAGE)];
    // madvise mode: only VM_HUGEPAGE ranges.
    assert_eq!(vm(&thp_faults("madvise", writes(4096), ops()), "thp_fault_alloc"), 4);
    assert_eq!(vm(&thp_faults("madvise", writes(4096), Vec::new()), "thp_fault_alloc"), 0);
    // always: every range but the VM_NOHUGEPAGE ones.
    assert_eq!(vm(&thp_faults("always", writes(4096), ops()), "thp_fault_alloc"), 4);
    assert_eq!(vm(&thp_faults("always", writes(4096), Vec::new()), "thp_fault_alloc"), 8);
    // never: none at all.
    assert_eq!(vm(&thp_faults("never", writes(4096), ops()), "thp_fault_alloc"), 0);
    // A madvise of 100..1600 splits the mapping at 100 and 1600: the ranges 512..1024 and
    // 1024..1536 lie wholly inside it and get THPs; 0..512 and 1536..2048 are held by
    // two VMAs each (thp_vma_suitable_order fails), so no THP, even under always.
    let part = vec![TraceOp::madvise(0, 0, 100, 1500, MADV_HUGEPAGE)];
    assert_eq!(vm(&thp_faults("madvise", writes(2048), part.clone()), "thp_fault_alloc"), 2);
    assert_eq!(vm(&thp_faults("always", writes(2048), part), "thp_fault_alloc"), 2);
    assert_eq!(vm(&thp_faults("always", writes(2048), Vec::new()), "thp_fault_alloc"), 4);
}

#[test]
fn madv_dontneed_frees_anon_and_keeps_file_pages_cached() {
    // 1024 anonymous pages (two THPs under always), then 64 file pages read through a
    // mapping; MADV_DONTNEED of all of it; then the anon pages are written again.
    let mut recs = writes(1024);
    recs.extend((1024..1088).map(|page| Access { page, cgroup: 0, flags: flags::FILE, gap: 0 }));
    let again = recs.len() as u64;
    recs.extend(writes(1024));
    let files = vec![FileRange { name: "f".into(), first: 1024, nr_pages: 64, advice: 0 }];
    let cfg = config(&[("machine.memory", "1G"), ("transparent_hugepage.enabled", "always"), ("swap.device", "none"), ("block.read_ahead_kb", "0")]);
    let mut src = VecSource::new(recs, files).with_ops(vec![TraceOp::madvise(again, 0, 0, 1088, MADV_DONTNEED)]);
    let r = run_checked(&cfg, &mut src, 500);
    // The two THPs were freed and faulted again as THPs (their PMDs were none again).
    assert_eq!(vm(&r, "thp_fault_alloc"), 4);
    // The file pages were read once and stay cached: no second read.
    assert_eq!(vm(&r, "pgmajfault"), 64);
}

#[test]
fn a_policy_that_cannot_isolate_refuses_madv_dontneed() {
    let cfg = config(&[("machine.memory", "64M"), ("policy", "cache:lru"), ("swap.device", "none")]);
    let mut src = VecSource::new(writes(8), Vec::new()).with_ops(vec![TraceOp::madvise(4, 0, 0, 8, MADV_DONTNEED)]);
    let mut e = reclaimlab_core::sim::build(&cfg).unwrap();
    let err = e.run(&mut src, u64::MAX).unwrap_err().to_string();
    assert!(err.contains("'cache:lru' cannot replay the trace's MADV_DONTNEED"), "{err}");
}
