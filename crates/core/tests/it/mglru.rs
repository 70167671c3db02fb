//! MGLRU behaviour (issue 3): the refault-distance RFC's pathology and fix, min_ttl,
//! and the lru_gen.enabled knob (the differential rule for variants: variants.rs).

use crate::common::*;
use reclaimlab_trace::{generate, AccessKind, Pattern, Program};

/// Seed 001's setting in miniature: a hot anonymous cache plus a file set read with
/// read() that exceeds memory.
fn db_like() -> Program {
    let mut heap = region("cache", 16 * MIB, AccessKind::AnonMapped);
    heap.write_ratio = 0.2;
    program(
        vec![heap, region("data", 96 * MIB, AccessKind::FileRead)],
        vec![phase("run", 1_500_000, &[(0, Pattern::Zipf { alpha: 0.8 }, 0.4), (1, Pattern::Zipf { alpha: 0.9 }, 0.6)])],
    )
}

fn run_policy(policy: &str, kv: &[(&str, &str)], prog: Program) -> reclaimlab_core::RunResult {
    let mut all = vec![("policy", policy), ("machine.memory", "48M"), ("swap.device", "zram"), ("swap.size", "256M")];
    all.extend_from_slice(kv);
    run_checked(&config(&all), generate(prog, 11).unwrap().as_mut(), 200_000)
}

/// Mainline MGLRU: file pages read with read() join the oldest generation and leave
/// from it — it never empties, aging never runs, nothing is activated (the RFC cover
/// letter: "All file pages are stuck on the oldest generation ... few get activated").
/// The RFC re-activates refaults within the inactive size, keeps part of the file set,
/// refaults less and finishes sooner.
#[test]
fn rfc_fixes_file_pages_stuck_in_the_oldest_generation() {
    let mainline = run_policy("mglru@6.15", &[], db_like());
    let rfc = run_policy("mglru+refault-distance-rfc-v3", &[], db_like());
    assert_eq!(vm(&mainline, "workingset_activate_file"), 0);
    assert_eq!(metric(&mainline, "lru_gen.aging_runs"), 0.0);
    assert_eq!(vm(&mainline, "nr_active_file"), 0, "no file page ever leaves the old generations");
    assert!(vm(&rfc, "workingset_activate_file") > 10_000, "RFC activations: {}", vm(&rfc, "workingset_activate_file"));
    assert!(vm(&rfc, "nr_active_file") > 0);
    assert!(
        (vm(&rfc, "workingset_refault_file") as f64) < 0.95 * vm(&mainline, "workingset_refault_file") as f64,
        "refaults: rfc {} vs mainline {}",
        vm(&rfc, "workingset_refault_file"),
        vm(&mainline, "workingset_refault_file")
    );
    assert!(metric(&rfc, "runtime_s") < metric(&mainline, "runtime_s"));
}

/// C.9: with lru_gen.min_ttl_ms longer than the run, every generation is younger than
/// min_ttl once memory is short, and kswapd's lru_gen_age_node invokes the OOM killer;
/// with 0 (off) the same run completes.
#[test]
fn min_ttl_protects_the_working_set_by_oom() {
    let thrash = program(vec![region("heap", 96 * MIB, AccessKind::AnonMapped)], vec![phase("loop", 400_000, &[(0, Pattern::Sequential, 1.0)])]);
    let cfg = config(&[("policy", "mglru@6.15"), ("machine.memory", "48M"), ("swap.device", "zram"), ("swap.size", "256M"), ("lru_gen.min_ttl_ms", "1000000")]);
    let mut e = reclaimlab_core::sim::build(&cfg).unwrap();
    let err = loop {
        match e.run(generate(thrash.clone(), 1).unwrap().as_mut(), u64::MAX) {
            Ok(true) => panic!("expected the min_ttl OOM"),
            Ok(false) => continue,
            Err(err) => break err.to_string(),
        }
    };
    assert!(err.contains("out of memory") && err.contains("min_ttl"), "{err}");
    let r = run_policy("mglru@6.15", &[("lru_gen.min_ttl_ms", "0")], thrash);
    assert!(vm(&r, "pswpout") > 0);
    assert_eq!(vm(&r, "oom_kill"), 0);
}

/// lru_gen.enabled switches a kernel's model: classic@6.15 with y runs mglru@6.15.
#[test]
fn lru_gen_enabled_switches_the_model() {
    let a = run_policy("classic@6.15", &[("lru_gen.enabled", "y")], db_like());
    let b = run_policy("mglru@6.15", &[], db_like());
    assert_eq!(a.policy, "mglru@6.15");
    assert_eq!(a.vmstat, b.vmstat);
    let c = run_policy("mglru+refault-distance-rfc-v3", &[("lru_gen.enabled", "n")], db_like());
    assert_eq!(c.policy, "classic+refault-distance-rfc-v3");
}

/// "fix underprotected page cache" (spec C.4 [version], docs/model.md §1.12): a stream of
/// anon faults (PG_active → max_seq) keeps the youngest generation over half the pages,
/// so v6.6's should_run_aging ages whenever three generations are left and generations
/// are short-lived. Data pages read with read() then join the oldest generation under
/// v6.6 and are evicted within one of them; a re-read at a distance beyond the oldest
/// generation refaults. The fix adds them at min_seq + 1 while four generations exist:
/// one more generation of residency, so fewer of them refault.
#[test]
fn fix_keeps_read_pages_beyond_the_oldest_generation() {
    let prog = program(
        vec![region("stream", 64 * MIB, AccessKind::AnonMapped), region("data", 24 * MIB, AccessKind::FileRead)],
        vec![phase("run", 600_000, &[(0, Pattern::Sequential, 0.1), (1, Pattern::Zipf { alpha: 0.6 }, 1.0)])],
    );
    let v66 = run_policy("mglru@6.6", &[], prog.clone());
    let fix = run_policy("mglru+fix-underprotected-page-cache", &[], prog);
    for r in [&v66, &fix] {
        assert!(metric(r, "lru_gen.aging_runs") >= 10.0, "short-lived generations: {} agings", metric(r, "lru_gen.aging_runs"));
    }
    let (a, b) = (vm(&v66, "workingset_refault_file"), vm(&fix, "workingset_refault_file"));
    assert!((b as f64) < 0.8 * a as f64, "workingset_refault_file: fix {b} vs v6.6 {a}");
    assert!(metric(&fix, "runtime_s") < metric(&v66, "runtime_s"));
}

/// Seed 001's pathology under v6.6 (db_like): read() pages join the oldest generation,
/// which therefore never empties — aging never runs and min_seq never moves, so every
/// refault is "recent" (token == min_seq) and counted as an activation. Without aging
/// the fix's placement rule has no fourth generation to use after the start, but its
/// refs rules still act on the Zipf-hot data pages: five reads protect a page in
/// sort_folio, and a refault with refs >= 3 comes back with the counter saturated.
#[test]
fn v6_6_stuck_in_the_oldest_generation() {
    let v66 = run_policy("mglru@6.6", &[], db_like());
    let fix = run_policy("mglru+fix-underprotected-page-cache", &[], db_like());
    for r in [&v66, &fix] {
        assert_eq!(metric(r, "lru_gen.aging_runs"), 0.0);
        assert_eq!(vm(r, "workingset_activate_file"), vm(r, "workingset_refault_file"));
    }
    assert!(vm(&v66, "workingset_refault_file") > 100_000);
    let (a, b) = (vm(&v66, "workingset_refault_file"), vm(&fix, "workingset_refault_file"));
    assert!(b < a, "workingset_refault_file: fix {b} vs v6.6 {a}");
}

/// Seed 001's memcg shape in miniature: `idle` fills an anonymous cache and then never
/// touches it again (a secondary); `busy` is [`db_like`] (the primary: a hot anonymous
/// cache and a file set larger than memory read with read()).
fn idle_beside_busy() -> Program {
    let mut idle = region("idle cache", 16 * MIB, AccessKind::AnonMapped);
    idle.write_ratio = 1.0;
    idle.cgroup = "idle".into();
    let mut busy = db_like();
    for r in busy.regions.iter_mut() {
        r.cgroup = "busy".into();
    }
    let mut phases = vec![phase("fill", 16 * MIB as u64, &[(0, Pattern::Sequential, 1.0)])];
    for mut p in busy.phases {
        p.streams.iter_mut().for_each(|s| s.region += 1);
        phases.push(p);
    }
    busy.regions.insert(0, idle);
    program(busy.regions, phases)
}

/// The memcg LRU (spec C.7, `memcg_lru.rs`): root reclaim visits only the old generation
/// of memcgs, and a memcg moves to the young one only by aging. Mainline's `busy` never
/// ages (its read() pages keep refilling the oldest generation), so it never leaves the
/// old generation, and `idle` — young since its first aging, the run's only one — is
/// never reclaimed: its cache stays and nothing is swapped (v6.6 and v6.15 alike). The
/// RFC's activations make `busy` age, the memcg LRU turns over and `idle`'s cache goes to
/// zram; classic, which scans every memcg in proportion, swaps it too.
#[test]
fn a_memcg_that_never_ages_keeps_the_others_out_of_root_reclaim() {
    let cache_bytes = 16.0 * 1024.0 * 1024.0;
    for policy in ["mglru@6.15", "mglru@6.6"] {
        let r = run_policy(policy, &[], idle_beside_busy());
        assert_eq!(vm(&r, "pswpout"), 0, "{policy}");
        assert_eq!(metric(&r, "memcg.idle.memory.current_bytes"), cache_bytes, "{policy}");
        assert_eq!(metric(&r, "lru_gen.aging_runs"), 1.0, "{policy}: only idle's first aging");
        assert_eq!(metric(&r, "lru_gen.memcg_lru_seq"), 0.0, "{policy}: the old generation never empties");
    }
    for policy in ["mglru+refault-distance-rfc-v3", "classic@6.15"] {
        let r = run_policy(policy, &[], idle_beside_busy());
        assert!(vm(&r, "pswpout") > 2048, "{policy}: pswpout {}", vm(&r, "pswpout"));
        assert!(metric(&r, "memcg.idle.memory.current_bytes") < 0.75 * cache_bytes, "{policy}");
    }
    let rfc = run_policy("mglru+refault-distance-rfc-v3", &[], idle_beside_busy());
    assert!(metric(&rfc, "lru_gen.memcg_lru_seq") >= 2.0, "the memcg LRU turns over: {}", metric(&rfc, "lru_gen.memcg_lru_seq"));
    // The per-cgroup time series shows it: `idle` fills to its 16 MiB and, under the RFC,
    // is emptied later; `busy` charges nothing before its phase.
    let col = |name: &str| &rfc.timeseries.columns.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no column {name}")).1;
    let (idle, busy) = (col("memcg.idle.memory.current_bytes"), col("memcg.busy.memory.current_bytes"));
    assert_eq!(idle.len(), col("time_s").len());
    assert_eq!(idle.iter().cloned().fold(0.0, f64::max), cache_bytes);
    assert_eq!(*idle.last().unwrap(), metric(&rfc, "memcg.idle.memory.current_bytes"));
    assert_eq!(busy[0], 0.0);
    assert_eq!(*busy.last().unwrap(), metric(&rfc, "memcg.busy.memory.current_bytes"));
}

/// The 2026 re-post against the 2023 reconstruction (docs/model.md §1.11a): on seed 001's
/// setting in miniature the readable 2026 text gives the same decisions — the same
/// activations, refaults and runtime — though the shadows differ (refs above the
/// timestamp rather than below). And it fixes what mainline gets wrong.
#[test]
fn refault_distance_2026_matches_the_2023_reconstruction() {
    let rfc = run_policy("mglru+refault-distance-rfc-v3", &[], db_like());
    let new = run_policy("mglru+refault-distance-2026", &[], db_like());
    let mainline = run_policy("mglru@6.15", &[], db_like());
    assert!(vm(&new, "workingset_activate_file") > 10_000);
    assert!(vm(&new, "workingset_refault_file") < vm(&mainline, "workingset_refault_file"));
    assert_eq!(rfc.vmstat, new.vmstat);
    assert_eq!(format!("{:?}", rfc.metrics), format!("{:?}", new.metrics));
}

/// kswapd runs beside the workload: 6.12's kswapd evicts in batches with `cond_resched()`
/// between them (MGLRU's `try_to_shrink_lruvec`, classic's `shrink_lruvec` rounds) while
/// the task allocates on another CPU. A step whose clock has passed the task's stops at a
/// batch boundary without ending the priority-loop iteration; the task runs; the same
/// iteration goes on. MGLRU stops once every zone is above high + MIN_LRU_BATCH
/// (`should_abort_scan`), so its watermark stop counts what the task took meanwhile;
/// classic's `shrink_lruvec` has no such test and reclaims its `nr_to_reclaim` either way.
#[test]
fn kswapd_iteration_lets_the_task_run_between_batches() {
    use reclaimlab_core::mm::page::pg;
    use reclaimlab_core::mm::page_alloc::{MigrateType, WMARK_HIGH, ZONE_MOVABLE};
    use reclaimlab_core::mm::vmstat::Ev;
    use reclaimlab_core::policy::mglru::lrugen::MIN_LRU_BATCH;
    use reclaimlab_core::sim::process::program_machine;
    type M = reclaimlab_core::sim::engine::Machine<Box<dyn reclaimlab_core::policy::ReclaimPolicy>>;
    // Clean, unreferenced page cache of twice the memory; then the task allocates to 100
    // pages short of high + MIN_LRU_BATCH (a few batches of reclaim, fewer than the
    // iteration's `nr_to_reclaim`, the high watermark, and its scan budget) and wakes
    // kswapd. Returns the machine and the sum of the zones' high watermarks.
    let setup = |policy: &str| -> (M, u64) {
        let cfg = config(&[("policy", policy), ("machine.memory", "64M"), ("swap.device", "none"), ("transparent_hugepage.enabled", "never"), ("vm.watermark_boost_factor", "0")]);
        let mut m = program_machine(&cfg).unwrap();
        let t = m.add_task(0);
        let f = m.mmap(32_768, true, false).unwrap();
        for p in m.procs.vmas[f].start..m.procs.vmas[f].start + 32_768 {
            m.touch(t, p, false).unwrap();
            let pfn = m.mm.pages.pte[p as usize];
            m.mm.frames.clear(pfn, pg::YOUNG | pg::MAPPED | pg::REFERENCED);
        }
        let now = m.procs.tasks[t].clock + 10_000_000_000;
        m.run_until(now).unwrap();
        assert!(!m.kswapd[0].active);
        m.mm.drain_all_pages(None);
        let high: u64 = m.mm.nodes[0].zones.iter().map(|&z| m.mm.buddy.zones[z].high_wmark_pages()).sum();
        let free = m.mm.total_free_pages();
        take(&mut m, free - (high + MIN_LRU_BATCH - 100));
        m.kswapd[0].wakeup(&mut m.mm, now, 0, ZONE_MOVABLE, false);
        assert!(m.kswapd[0].active);
        (m, high)
    };
    // The task's allocations, from the zones' free lists.
    fn take(m: &mut M, n: u64) {
        let zones = m.mm.nodes[0].zones.clone();
        for _ in 0..n {
            let z = *zones.iter().rev().find(|&&z| m.mm.buddy.zones[z].free_pages > 0).unwrap();
            m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable).unwrap();
        }
    }
    let above = |m: &M| m.mm.nodes[0].zones.iter().all(|&z| m.mm.buddy.zone_watermark_ok(z, 0, m.mm.buddy.zones[z].watermark[WMARK_HIGH] + MIN_LRU_BATCH));
    let counts = |m: &M| [Ev::PgstealKswapd, Ev::PgscanKswapd, Ev::Pageoutrun].map(|e| m.mm.vmstat.get(e));
    let policy = "mglru@6.12";
    let (mut m, _) = setup(policy);
    let before = counts(&m);
    // The task is at kswapd's clock: the step may not run past it.
    let clock = m.kswapd[0].clock_ns;
    m.kswapd[0].step(&mut m.mm, &mut m.policy, clock);
    let first = counts(&m)[0] - before[0];
    assert!(first > 0 && m.kswapd[0].clock_ns > clock, "{policy}: the step reclaimed and took time");
    assert!(m.kswapd[0].step_end().is_none() && !above(&m), "{policy}: the iteration stopped at a batch boundary ({first} pages reclaimed)");
    // The task takes 60 pages while kswapd is off the CPU; the iteration goes on.
    take(&mut m, 60);
    m.kswapd[0].step(&mut m.mm, &mut m.policy, u64::MAX);
    assert!(m.kswapd[0].step_end().is_some(), "the rest of the iteration in one step");
    let after = counts(&m);
    assert_eq!(after[2], before[2] + 1, "one pass, counted when kswapd first ran (its first step read the wake-up)");
    let total = after[0] - before[0];
    assert!(above(&m), "{policy}: every zone above high + MIN_LRU_BATCH after the task's allocations ({total} pages reclaimed)");
    assert!(total >= 100 + 60, "{policy}: the iteration made up what the task took ({total} pages)");

    // Classic: with no watermark test inside an iteration, a pass whose every step
    // stops at the first batch boundary (the task always at kswapd's clock, allocating
    // nothing) scans and reclaims what a pass of whole iterations does.
    let policy = "classic@6.15";
    let pass = |until_clock: bool| {
        let (mut m, _) = setup(policy);
        let before = counts(&m);
        let (mut steps, mut stopped) = (0, 0);
        while m.kswapd[0].next_step().is_some() {
            let until = if until_clock { m.kswapd[0].clock_ns } else { u64::MAX };
            m.kswapd[0].step(&mut m.mm, &mut m.policy, until);
            steps += 1;
            stopped += m.kswapd[0].step_end().is_none() as u32;
        }
        let after = counts(&m);
        ([0, 1, 2].map(|i| after[i] - before[i]), steps, stopped)
    };
    let (batched, steps, stopped) = pass(true);
    let (whole, whole_steps, whole_stopped) = pass(false);
    assert_eq!(batched, whole, "{policy}: pgsteal, pgscan, pageoutrun of the pass");
    assert!(batched[0] > 0 && batched[2] == 1, "{policy}: the one pass (counted when kswapd first ran) reclaimed {batched:?}");
    assert_eq!(whole_stopped, 0);
    assert!(stopped > 0 && steps > whole_steps, "{policy}: {stopped} of {steps} steps stopped inside an iteration ({whole_steps} whole)");
}
