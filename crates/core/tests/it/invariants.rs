//! Property tests: on random small machines and random programs, the engine keeps
//! its structural invariants (frames conserved, every resident page on exactly one LRU
//! list of the right lruvec, memcg usage = charged pages, buddy fully merged) and the
//! counter relations the kernel guarantees; identical inputs give identical output.

use crate::common::*;
use proptest::prelude::*;
use reclaimlab_trace::gen::Reclaim;
use reclaimlab_trace::{generate, AccessKind, Pattern, Program, Region};

fn kind() -> impl Strategy<Value = AccessKind> {
    prop_oneof![Just(AccessKind::AnonMapped), Just(AccessKind::FileRead), Just(AccessKind::FileMapped)]
}

fn pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![(0.3f64..1.4).prop_map(|alpha| Pattern::Zipf { alpha }), Just(Pattern::Uniform), Just(Pattern::Sequential), Just(Pattern::Zigzag)]
}

prop_compose! {
    fn workload()(regions in prop::collection::vec((64u32..4000, kind(), 0.0f64..0.5, 0usize..3), 1..4),
                  phases in prop::collection::vec((500u64..8000, prop::collection::vec((0usize..4, pattern(), 0.1f64..1.0), 1..3)), 1..4))
                  -> Program {
        let cg = ["", "a", "b"];
        let regions: Vec<Region> = regions.into_iter().enumerate().map(|(i, (pages, kind, w, c))| {
            let mut r = Region::new(&format!("r{i}"), pages, kind);
            r.write_ratio = w;
            r.cgroup = cg[c].to_string();
            r
        }).collect();
        let n = regions.len();
        let phases = phases.into_iter().enumerate().map(|(i, (acc, streams))| {
            phase(&format!("p{i}"), acc, &streams.into_iter().map(|(r, p, w)| (r % n, p, w)).collect::<Vec<_>>())
        }).collect();
        program(regions, phases)
    }
}

prop_compose! {
    fn machine()(mem_mib in 4u32..12, swap in 0usize..3, swappiness in 0u32..=200, limit in prop::option::of(2u32..8), low in 0u32..3,
                 policy in 0usize..reclaimlab_core::policies().len(),
                 read_ahead_kb in prop_oneof![Just(0u32), Just(128), 0u32..512],
                 fault_around_bytes in prop_oneof![Just(4096u32), Just(65536), (12u32..22).prop_map(|s| 1 << s)],
                 thp in prop::bool::ANY)
                -> Vec<(String, String)> {
        let mut kv = vec![
            ("policy".to_string(), reclaimlab_core::policies()[policy].name.to_string()),
            ("machine.memory".to_string(), format!("{mem_mib}M")),
            ("swap.device".to_string(), ["none", "zram", "ssd"][swap].to_string()),
            ("vm.swappiness".to_string(), swappiness.to_string()),
            ("block.read_ahead_kb".to_string(), read_ahead_kb.to_string()),
            ("fault_around_bytes".to_string(), fault_around_bytes.to_string()),
        ];
        if let Some(l) = limit {
            kv.push(("cgroup.a.memory.max".to_string(), format!("{l}M")));
        }
        if low > 0 {
            kv.push(("cgroup.b.memory.low".to_string(), format!("{low}M")));
        }
        if thp {
            // Folios of order 9 beside order 0 (these machines boot with THP off).
            kv.push(("transparent_hugepage.enabled".to_string(), "always".to_string()));
        }
        kv
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn invariants_and_counter_relations_hold(prog in workload(), kv in machine(), seed in 0u64..1000) {
        let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let cfg = config(&kv);
        let mut e = reclaimlab_core::sim::build(&cfg).unwrap();
        let mut src = generate(prog.clone(), seed).unwrap();
        let mut oom = false;
        loop {
            match e.run(src.as_mut(), 1500) {
                Ok(done) => {
                    e.check_invariants().map_err(TestCaseError::fail)?;
                    if done { break; }
                }
                // A machine too small for the anon set without swap must OOM with a message.
                Err(err) => {
                    let msg = err.to_string();
                    prop_assert!(msg.contains("out of memory"), "{}", msg);
                    oom = true;
                    break;
                }
            }
        }
        if oom { return Ok(()); }
        let r = e.finish();
        for (scan, steal) in [("pgscan_kswapd", "pgsteal_kswapd"), ("pgscan_direct", "pgsteal_direct"), ("pgscan_anon", "pgsteal_anon"), ("pgscan_file", "pgsteal_file")] {
            prop_assert!(vm(&r, steal) <= vm(&r, scan), "{} {} > {} {}", steal, vm(&r, steal), scan, vm(&r, scan));
        }
        let refaults = vm(&r, "workingset_refault_anon") + vm(&r, "workingset_refault_file");
        // Every refault is a page read back (from storage, or swap: pgpgin is in KiB); with
        // readahead not every page read is a fault the task waits for.
        prop_assert!(refaults <= vm(&r, "pgpgin") / 4, "refaults {} > pages read {}", refaults, vm(&r, "pgpgin") / 4);
        if cfg.read_ahead_kb == 0 {
            prop_assert!(refaults as f64 <= metric(&r, "major_faults"), "refaults {} > major faults {}", refaults, metric(&r, "major_faults"));
        }
        prop_assert!(vm(&r, "workingset_activate_anon") <= vm(&r, "workingset_refault_anon"));
        // Classic: a restore is a kind of activation (spec B.3). MGLRU counts
        // WORKINGSET_RESTORE for any recent refault with PG_workingset in the shadow, but
        // WORKINGSET_ACTIVATE only in fault context (spec C.10), so a read() refault can
        // restore without activating there.
        if cfg.policy.starts_with("classic") {
            prop_assert!(vm(&r, "workingset_restore_file") <= vm(&r, "workingset_activate_file"));
        }
        prop_assert!(vm(&r, "pswpin") <= vm(&r, "pswpout"));
        prop_assert!(512 * vm(&r, "thp_swpout") <= vm(&r, "pswpout"));
        prop_assert!(vm(&r, "thp_swpout") + vm(&r, "thp_split_page") <= vm(&r, "thp_fault_alloc"));
        if cfg.swap_device == reclaimlab_core::config::SwapDevice::None {
            prop_assert_eq!(vm(&r, "pswpout"), 0);
        }
        prop_assert_eq!(metric(&r, "accesses") as u64, prog.nr_accesses().unwrap());

        // Determinism: the same inputs and seed give the same result.
        let mut e2 = reclaimlab_core::sim::build(&cfg).unwrap();
        let mut src2 = generate(prog, seed).unwrap();
        while !e2.run(src2.as_mut(), 777).unwrap() {}
        let r2 = e2.finish();
        prop_assert_eq!(&r.vmstat, &r2.vmstat);
        prop_assert_eq!(format!("{:?}", r.metrics), format!("{:?}", r2.metrics));
        prop_assert_eq!(format!("{:?}", r.timeseries.columns), format!("{:?}", r2.timeseries.columns));
    }
}

/// THP faults under every registered policy: on a machine large enough for THP (512 MiB
/// of `totalram`), anonymous memory larger than RAM is faulted as huge pages, reclaim
/// splits them, and every structural invariant holds throughout (frames conserved, each
/// folio on one list, memcg usage in pages, PG_compound only on whole huge pageblocks),
/// with and without a memcg limit.
#[test]
fn thp_invariants_under_every_policy() {
    // 1G of zram has free clusters: THPs go out whole (thp_swpout). 1M has none (256
    // slots < SWAPFILE_CLUSTER): a memory.reclaim that must take anon (more bytes than the
    // file cache holds) makes reclaim split each THP it would swap (thp_swpout_fallback).
    for p in reclaimlab_core::policies() {
        for (limit, swap) in [(None, "1G"), (Some("256M"), "1G"), (None, "1M")] {
            let mut kv = vec![
                ("policy", p.name),
                ("machine.memory", "600M"),
                ("swap.device", "zram"),
                ("swap.size", swap),
                ("transparent_hugepage.enabled", "always"),
                ("transparent_hugepage.defrag", "always"),
            ];
            if let Some(l) = limit {
                kv.push(("cgroup.a.memory.max", l));
            }
            let cfg = config(&kv);
            let heap_pages = if swap == "1G" { 200_000 } else { 100_000 };
            let mut heap = region("heap", heap_pages, AccessKind::AnonMapped);
            if limit.is_some() {
                heap.cgroup = "a".into();
            }
            let prog = if swap == "1G" {
                program(vec![heap], vec![phase("fill", 200_000, &[(0, Pattern::Sequential, 1.0)]), phase("use", 200_000, &[(0, Pattern::Uniform, 1.0)])])
            } else {
                let data = region("data", 20_000, AccessKind::FileRead);
                let mut squeeze = phase("squeeze", 50_000, &[(0, Pattern::Uniform, 0.5), (1, Pattern::Uniform, 0.5)]);
                squeeze.reclaims.push(Reclaim { cgroup: String::new(), bytes: 160 << 20, swappiness: Some(200) });
                let fill = [phase("fill", heap_pages as u64, &[(0, Pattern::Sequential, 1.0)]), phase("read", 20_000, &[(1, Pattern::Sequential, 1.0)])];
                program(vec![heap, data], vec![fill[0].clone(), fill[1].clone(), squeeze])
            };
            let mut src = generate(prog, 7).unwrap();
            let r = run_checked(&cfg, src.as_mut(), 50_000);
            let what = format!("{} limit {limit:?} swap {swap}", p.name);
            assert!(vm(&r, "thp_fault_alloc") > 0, "{what}: no THP faulted");
            assert!(vm(&r, "pswpout") > 0, "{what}: nothing swapped");
            if swap == "1G" {
                // (Swap-ins free scattered slots, which base pages reuse: clusters can
                // run out here too, as in the kernel.)
                assert!(vm(&r, "thp_swpout") > 0, "{what}: no THP swapped out whole");
            } else {
                assert_eq!(vm(&r, "thp_swpout"), 0, "{what}: a THP swapped out without a cluster");
                assert!(vm(&r, "thp_swpout_fallback") > 0 && vm(&r, "thp_split_page") >= vm(&r, "thp_swpout_fallback"), "{what}: reclaim split no THP");
            }
        }
    }
}
