//! Behaviour of kdamond and DAMON_RECLAIM inside a machine (spec D, E, F).

use crate::config::SimConfig;
use crate::mm::page::is_resident;
use crate::policy::classic::{Classic, Mainline};
use crate::policy::mglru::{self, Mglru};
use crate::policy::ReclaimPolicy;
use crate::sim::engine::Machine;
use crate::sim::Engine;
use reclaimlab_trace::{generate, AccessKind, Pattern, Phase, Program, Region, Stream};

const MIB: u32 = 256;

fn cfg(memory: &str, kv: &[(&str, &str)]) -> SimConfig {
    let mut c = SimConfig::default();
    c.set("machine.memory", memory).unwrap();
    c.set("cost.access_ns", "10000").unwrap(); // 100k accesses per simulated second
    c.set("damon_reclaim.enabled", "Y").unwrap();
    for (k, v) in kv {
        c.set(k, v).unwrap();
    }
    c.validate().unwrap();
    c
}

/// A cold region touched once, then a hot region accessed for `hot_accesses`.
fn hot_in_cold(cold_mib: u32, hot_mib: u32, hot_accesses: u64) -> Program {
    Program {
        regions: vec![Region::new("cold", cold_mib * MIB, AccessKind::AnonMapped), Region::new("hot", hot_mib * MIB, AccessKind::AnonMapped)],
        phases: vec![
            Phase { name: "fill".into(), accesses: (cold_mib * MIB) as u64, streams: vec![Stream { region: 0, pattern: Pattern::Sequential, weight: 1.0 }], reclaims: Vec::new() },
            Phase { name: "hot".into(), accesses: hot_accesses, streams: vec![Stream { region: 1, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() },
        ],
        repeat: 1,
    }
}

fn run<P: ReclaimPolicy>(c: &SimConfig, policy: P, prog: Program) -> Machine<P> {
    let mut m = Machine::new(c, policy);
    let mut src = generate(prog, 1).unwrap();
    while !m.run(&mut *src, 1 << 20).unwrap() {}
    m.check_invariants().unwrap();
    m
}

fn metric(m: &Machine<impl ReclaimPolicy>, k: &str) -> f64 {
    crate::damon::monitor::damon_metrics(m.damon.as_ref().unwrap(), m.now).into_iter().find(|(n, _)| n == k).unwrap().1
}

/// Always active (no watermarks in effect), nothing old enough to page out.
const MONITOR_ONLY: &[(&str, &str)] =
    &[("damon_reclaim.wmarks_high", "1000"), ("damon_reclaim.wmarks_mid", "1000"), ("damon_reclaim.wmarks_low", "0"), ("damon_reclaim.min_age", "1000000000000")];

/// D.5/D.6: adaptive regions converge onto a small hot range in a large cold space —
/// the regions that saw accesses in the last window cover the hot frames and little else.
#[test]
fn regions_converge_on_hot_range() {
    let c = cfg("1G", MONITOR_ONLY);
    // 8 MiB hot inside ~1 GiB of RAM, 30 s of hot accesses.
    let m = run(&c, Classic::new(Mainline), hot_in_cold(256, 8, 3_000_000));
    let d = m.damon.as_ref().unwrap();
    let hot_first = 256 * MIB as usize;
    let hot_pfns: Vec<u64> = (hot_first..hot_first + 8 * MIB as usize).map(|p| m.mm.pages.pte[p]).filter(|&p| is_resident(p)).map(|p| p as u64 * 4096).collect();
    assert_eq!(hot_pfns.len(), 8 * MIB as usize);
    let regions = &d.targets[0].regions;
    let warm: Vec<_> = regions.iter().filter(|r| r.last_nr_accesses > 0).collect();
    let warm_bytes: u64 = warm.iter().map(|r| r.size()).sum();
    let covered = hot_pfns.iter().filter(|&&a| warm.iter().any(|r| r.start <= a && a < r.end)).count();
    assert!(covered * 10 >= hot_pfns.len() * 9, "only {covered} of {} hot pages in accessed regions", hot_pfns.len());
    assert!(warm_bytes <= 3 * (8 << 20), "accessed regions span {} MiB for an 8 MiB hot set", warm_bytes >> 20);
    assert!(regions.len() <= 1000 && regions.len() >= 10);
    // Nothing was old enough: no pageout tried.
    assert_eq!(metric(&m, "nr_reclaim_tried_regions"), 0.0);
}

/// E.3/E.6: with a size quota the bytes tried per charge window never exceed it, and a
/// large cold set keeps every window full.
#[test]
fn pageout_respects_size_quota() {
    let quota = 32u64 << 20;
    let c = cfg(
        "1G",
        &[
            ("damon_reclaim.wmarks_high", "1000"),
            ("damon_reclaim.wmarks_mid", "1000"),
            ("damon_reclaim.wmarks_low", "0"),
            ("damon_reclaim.min_age", "1000000"),
            ("damon_reclaim.quota_ms", "0"),
            ("damon_reclaim.quota_sz", &quota.to_string()),
            ("swap.size", "1G"),
        ],
    );
    // 400 MiB cold: one round-robin pass takes 12.5 windows; the first pass only makes
    // the freshly faulted folios old (the pageout young filter), the second reclaims.
    // Base pages: a THP's one accessed bit makes a cold region that shares a huge page
    // with a touched page look accessed, which is not what this test is about.
    let mut c = c;
    c.set("transparent_hugepage.enabled", "never").unwrap();
    let m = run(&c, Classic::new(Mainline), hot_in_cold(400, 4, 2_500_000));
    let secs = m.now / 1_000_000_000;
    let tried = metric(&m, "bytes_reclaim_tried_regions") as u64;
    let reclaimed = metric(&m, "bytes_reclaimed_regions") as u64;
    assert!(secs >= 20, "{secs}");
    // one window per second (plus the open one)
    assert!(tried <= quota * (secs + 1), "tried {tried} in {secs} s");
    assert!(tried >= quota * (secs - 6), "quota not binding: tried {} MiB in {secs} s", tried >> 20);
    assert!(reclaimed > 100 << 20 && reclaimed <= tried, "reclaimed {} MiB", reclaimed >> 20);
    assert!(metric(&m, "nr_quota_exceeds") >= (secs - 6) as f64);
    assert_eq!(m.mm.vmstat.get(crate::mm::vmstat::Ev::Pswpout) * 4096, reclaimed);
}

/// E.3: a time quota's size is the lifetime throughput × `quota_ms`; a run reports it
/// (`damon_quota_esz_bytes_avg`, `_last`, `damon_quota_bytes_per_ms`), and
/// `sim.kdamond_slowdown` divides the throughput the quota measures, and so the bytes it
/// tries, without changing kdamond's own CPU accounting or a size quota's run.
#[test]
fn time_quota_size_follows_the_measured_throughput() {
    let kv = |slow: &'static str, ms: &'static str, sz: &'static str| {
        let mut c = cfg(
            "1G",
            &[
                ("damon_reclaim.wmarks_high", "1000"),
                ("damon_reclaim.wmarks_mid", "1000"),
                ("damon_reclaim.wmarks_low", "0"),
                ("damon_reclaim.min_age", "1000000"),
                ("damon_reclaim.quota_ms", ms),
                ("damon_reclaim.quota_sz", sz),
                ("swap.size", "1G"),
                ("sim.kdamond_slowdown", slow),
            ],
        );
        c.set("transparent_hugepage.enabled", "never").unwrap();
        c
    };
    let prog = || hot_in_cold(400, 4, 2_500_000);
    let fast = run(&kv("1", "1", "0"), Classic::new(Mainline), prog());
    let slow = run(&kv("8", "1", "0"), Classic::new(Mainline), prog());
    let (bpm_fast, bpm_slow) = (metric(&fast, "damon_quota_bytes_per_ms"), metric(&slow, "damon_quota_bytes_per_ms"));
    assert!(bpm_slow > 0.0 && bpm_fast > 4.0 * bpm_slow, "{bpm_fast} vs {bpm_slow} bytes per charged ms");
    let last = metric(&slow, "damon_quota_esz_bytes_last");
    assert!((last - bpm_slow).abs() <= 0.2 * bpm_slow, "esz {last} for 1 ms at {bpm_slow} bytes/ms");
    assert!(metric(&slow, "damon_quota_esz_bytes_avg") > 0.0);
    let tried = |m: &Machine<Classic<Mainline>>| metric(m, "bytes_reclaim_tried_regions");
    assert!(tried(&fast) > 2.0 * tried(&slow), "tried {} vs {}", tried(&fast), tried(&slow));
    // A size quota's run is the same whatever the slowdown.
    let a = run(&kv("1", "0", "16777216"), Classic::new(Mainline), prog());
    let b = run(&kv("8", "0", "16777216"), Classic::new(Mainline), prog());
    for k in ["bytes_reclaim_tried_regions", "bytes_reclaimed_regions", "damon_cpu_ns", "damon_quota_esz_bytes_avg"] {
        assert_eq!(metric(&a, k), metric(&b, k), "{k}");
    }
    assert_eq!(metric(&a, "damon_quota_esz_bytes_last"), 16777216.0);
}

/// E.8: with free memory above the high watermark kdamond never samples; below mid it
/// runs.
#[test]
fn watermarks_idle_above_high() {
    let c = cfg("1G", &[("damon_reclaim.min_age", "1000000")]);
    let m = run(&c, Classic::new(Mainline), hot_in_cold(64, 8, 500_000));
    assert_eq!(metric(&m, "damon_nr_samples"), 0.0);
    assert_eq!(metric(&m, "damon_cpu_ns"), 0.0);
    assert_eq!(metric(&m, "nr_reclaim_tried_regions"), 0.0);
    // 700 MiB used of 1 GiB: free ~30 % < mid 40 % → active.
    let m = run(&c, Classic::new(Mainline), hot_in_cold(700, 8, 500_000));
    assert!(metric(&m, "damon_nr_samples") > 100.0);
    assert!(metric(&m, "nr_reclaim_tried_regions") > 0.0);
}

/// DAMOS pageout composes with MGLRU: pages leave through shrink_folio_list, lists stay
/// consistent (check_invariants in `run`).
#[test]
fn pageout_composes_with_mglru() {
    let c = cfg(
        "1G",
        &[
            ("damon_reclaim.wmarks_high", "1000"),
            ("damon_reclaim.wmarks_mid", "1000"),
            ("damon_reclaim.wmarks_low", "0"),
            ("damon_reclaim.min_age", "2000000"),
            ("damon_reclaim.quota_ms", "0"),
            ("damon_reclaim.quota_sz", "0"),
        ],
    );
    let m = run(&c, Mglru::new(mglru::Mainline), hot_in_cold(200, 4, 1_000_000));
    let reclaimed = metric(&m, "bytes_reclaimed_regions") as u64;
    assert!(reclaimed > 100 << 20, "{}", reclaimed >> 20);
    assert_eq!(m.mm.vmstat.get(crate::mm::vmstat::Ev::Pswpout) * 4096, reclaimed);
    // The hot set survives (it is accessed every window).
    let hot_first = 200 * MIB as usize;
    let resident = (hot_first..hot_first + 4 * MIB as usize).filter(|&p| is_resident(m.mm.pages.pte[p])).count();
    assert!(resident * 10 >= 4 * MIB as usize * 9, "{resident}");
}

/// D: kdamond's monitoring cost depends on the number of regions, not memory size: at a
/// fixed region count (min = max) it is the same on 1 GiB and 16 GiB, and with the
/// default bounds the larger machine costs no more.
#[test]
fn monitoring_cost_independent_of_memory_size() {
    let per_sample = |mem: &str, extra: &[(&str, &str)]| {
        let kv: Vec<_> = MONITOR_ONLY.iter().chain(extra).copied().collect();
        let m = run(&cfg(mem, &kv), Classic::new(Mainline), hot_in_cold(64, 8, 1_000_000));
        let d = m.damon.as_ref().unwrap();
        assert!(d.nr_regions() <= 1000);
        (d.sample_cpu_ns + d.aggr_cpu_ns) as f64 / d.nr_samples as f64
    };
    let fixed = [("damon_reclaim.min_nr_regions", "200"), ("damon_reclaim.max_nr_regions", "200")];
    let (small, big) = (per_sample("1G", &fixed), per_sample("16G", &fixed));
    // 200 regions × 2 rmap walks (800 ns) + 200 × 50 ns per aggregation / 20 samples.
    assert!((small - 200.0 * 800.0 - 500.0).abs() < 2000.0, "{small}");
    assert!(big / small < 1.2 && small / big < 1.2, "per-sample cost {small:.0} ns at 1G vs {big:.0} ns at 16G");
    let (small, big) = (per_sample("1G", &[]), per_sample("16G", &[]));
    assert!(small <= 1000.0 * 850.0 && big <= 1.2 * small, "per-sample cost {small:.0} ns at 1G vs {big:.0} ns at 16G");
}

/// E.1: lru_prio / lru_deprio / stat act through the policy's hooks on both families.
#[test]
fn lru_actions_compose_with_classic_and_mglru() {
    use crate::damon::damos::action::{damos_apply_folios, OpsKind};
    use crate::damon::damos::filter::{DamosFilter, DamosFilterType};
    use crate::damon::damos::quota::DamosQuota;
    use crate::damon::damos::scheme::{Damos, DamosAccessPattern, DamosAction};
    use crate::damon::damos::wmarks::DamosWatermarks;
    use crate::damon::ops_paddr::damon_pa_folios;
    use crate::mm::page::pg;
    use crate::mm::vmstat::Ev;
    use crate::policy::mglru::lrugen::{folio_lru_gen, gen_from_seq};

    let scheme = |a| Damos::new(DamosAccessPattern::default(), a, 0, DamosQuota::default(), DamosWatermarks::default());
    let mut c = cfg("256M", MONITOR_ONLY);
    c.set("damon_reclaim.enabled", "N").unwrap();
    let prog = || hot_in_cold(16, 1, 1000);
    let all = |m: &crate::mm::Mm| damon_pa_folios(m, 0, (m.nr_frames as u64) << 12).collect::<Vec<_>>();

    // classic: prio twice activates (folio_mark_accessed: referenced, then active), deprio
    // puts everything back on the inactive list.
    let mut m = run(&c, Classic::new(Mainline), prog());
    let pfns = all(&m.mm);
    // every resident page (the hot phase need not touch all of its MiB)
    assert_eq!(pfns.len(), m.mm.pages.pte.iter().filter(|&&p| is_resident(p)).count());
    assert!(pfns.len() > 16 * MIB as usize);
    let mut buf = Vec::new();
    for _ in 0..2 {
        let mut s = scheme(DamosAction::LruPrio);
        let (applied, _, _) = damos_apply_folios(&mut m.mm, &mut m.policy, OpsKind::Paddr, &mut s, pfns.iter().copied(), &mut buf, 0);
        assert_eq!(applied, pfns.len() as u64 * 4096);
    }
    assert!(pfns.iter().all(|&p| m.mm.frames.test(p, pg::ACTIVE)));
    let mut s = scheme(DamosAction::LruDeprio);
    damos_apply_folios(&mut m.mm, &mut m.policy, OpsKind::Paddr, &mut s, pfns.iter().copied(), &mut buf, 0);
    assert!(pfns.iter().all(|&p| !m.mm.frames.test(p, pg::ACTIVE | pg::REFERENCED)));
    assert_eq!(m.mm.vmstat.get(Ev::Pgdeactivate), pfns.len() as u64);
    m.check_invariants().unwrap();
    // stat with an anon allow filter: counts the anon bytes, applies nothing.
    let mut s = scheme(DamosAction::Stat);
    s.add_filter(DamosFilter::new(DamosFilterType::Anon, true, true));
    let (applied, passed, _) = damos_apply_folios(&mut m.mm, &mut m.policy, OpsKind::Paddr, &mut s, pfns.iter().copied(), &mut buf, 0);
    assert_eq!((applied, passed), (0, pfns.len() as u64 * 4096));

    // MGLRU: mapped file folios faulted in are added active, to the two youngest
    // generations; deprio re-adds them inactive (lru_gen_folio_seq: MAX_NR_GENS), to the
    // oldest. (Anon folios would stay where they are: inactive anon also gets
    // MIN_NR_GENS.)
    let mut file = prog();
    for r in file.regions.iter_mut() {
        r.kind = reclaimlab_trace::AccessKind::FileMapped;
    }
    let mut m = run(&c, Mglru::new(mglru::Mainline), file);
    let pfns = all(&m.mm);
    assert!(pfns.iter().all(|&p| m.mm.frames.is_file(p)));
    let lv = m.mm.folio_lruvec(pfns[0]) as usize;
    let max_seq = m.policy.lrugens[lv].max_seq;
    let young =
        |m: &Machine<Mglru<mglru::Mainline>>| pfns.iter().filter(|&&p| [gen_from_seq(max_seq), gen_from_seq(max_seq - 1)].map(Some).contains(&folio_lru_gen(&m.mm, p))).count();
    assert_eq!(young(&m), pfns.len());
    let mut s = scheme(DamosAction::LruDeprio);
    damos_apply_folios(&mut m.mm, &mut m.policy, OpsKind::Paddr, &mut s, pfns.iter().copied(), &mut buf, 0);
    assert_eq!(young(&m), 0);
    assert_eq!(m.mm.vmstat.get(Ev::Pgdeactivate), pfns.len() as u64);
    m.check_invariants().unwrap();
}

/// Determinism: the same config and trace give the same DAMON results; another seed
/// moves the random sampling addresses and split points.
#[test]
fn deterministic_by_seed() {
    let kv = [("damon_reclaim.wmarks_high", "1000"), ("damon_reclaim.wmarks_mid", "1000"), ("damon_reclaim.wmarks_low", "0"), ("damon_reclaim.min_age", "2000000")];
    let regions = |seed: &str| {
        let mut c = cfg("512M", &kv);
        c.set("seed", seed).unwrap();
        let m = run(&c, Classic::new(Mainline), hot_in_cold(100, 4, 400_000));
        let d = m.damon.as_ref().unwrap();
        (d.targets[0].regions.clone(), d.schemes[0].stat, d.cpu_ns)
    };
    assert_eq!(regions("3"), regions("3"));
    assert_ne!(regions("3").0, regions("4").0);
}

/// E.8: under pressure (a workload larger than the machine) free memory stays below
/// DAMON_RECLAIM's low mark: kdamond never samples and counts each check that kept the
/// scheme off as below low; an idle machine above the high mark counts above high.
#[test]
fn watermarks_off_all_run_are_counted_by_side() {
    let c = cfg("128M", &[("damon_reclaim.wmarks_interval", "100000"), ("swap.device", "zram")]);
    let m = run(&c, Classic::new(Mainline), hot_in_cold(144, 16, 2_000_000));
    assert_eq!(metric(&m, "damon_nr_samples"), 0.0);
    assert!(metric(&m, "damon_wmarks_below_low") > 10.0);
    assert_eq!(metric(&m, "nr_reclaim_tried_regions"), 0.0);
    let c = cfg("1G", &[("damon_reclaim.wmarks_interval", "100000")]);
    let m = run(&c, Classic::new(Mainline), hot_in_cold(8, 8, 2_000_000));
    assert_eq!(metric(&m, "damon_nr_samples"), 0.0);
    assert!(metric(&m, "damon_wmarks_above_high") > 10.0);
    assert_eq!(metric(&m, "damon_wmarks_below_low"), 0.0);
}

/// D.3: `kdamond_fn` (mm/damon/core.c v6.12) prepares the next sample after the
/// iteration's work (prepare → usleep → check → merge → apply → split): a page the
/// workload touches while kdamond pages out is made old by that prepare and not seen,
/// one touched in the usleep is.
#[test]
fn accesses_during_kdamond_work_are_not_sampled() {
    use crate::mm::page::{pg, NO_PAGE};
    let c = cfg(
        "1G",
        &[
            ("damon_reclaim.wmarks_high", "1000"),
            ("damon_reclaim.wmarks_mid", "1000"),
            ("damon_reclaim.wmarks_low", "0"),
            ("damon_reclaim.min_age", "200000"),
            ("damon_reclaim.quota_ms", "0"),
            ("damon_reclaim.quota_sz", "0"),
            ("transparent_hugepage.enabled", "never"),
            ("swap.size", "1G"),
        ],
    );
    let mut m = run(&c, Classic::new(Mainline), hot_in_cold(200, 4, 1000));
    let mut d = m.damon.take().unwrap();
    let sample_ns = d.attrs.sample_interval * 1000;
    // The workload touches every resident page.
    let touch_all = |mm: &mut crate::mm::Mm| {
        for pfn in 0..mm.nr_frames {
            if mm.frames.page(pfn) != NO_PAGE {
                mm.frames.set(pfn, pg::DAMON_ACCESSED);
            }
        }
    };
    let accessed = |d: &crate::damon::Kdamond| d.targets[0].regions.iter().map(|r| r.nr_accesses).sum::<u32>();
    // Step until an iteration works (applies the pageout scheme).
    let (mut t, mut busy) = (d.next_ns.max(m.now), 0);
    for _ in 0..10_000 {
        let before = d.action_cpu_ns;
        d.step(&mut m.mm, &mut m.policy, t, 0);
        busy = d.action_cpu_ns - before;
        if busy > 0 {
            break;
        }
        t = d.next_ns;
    }
    assert!(busy > 0, "kdamond never applied its scheme");
    touch_all(&mut m.mm);
    // Its next check: one sample interval after the work.
    while d.next_ns <= t + busy + sample_ns {
        let s = d.next_ns;
        d.step(&mut m.mm, &mut m.policy, s, 0);
    }
    assert_eq!(accessed(&d), 0, "accesses during kdamond's work were sampled");
    // Touched within the sampling window: seen.
    touch_all(&mut m.mm);
    let s = d.next_ns;
    d.step(&mut m.mm, &mut m.policy, s, 0);
    assert!(accessed(&d) > 0, "accesses within the sampling window were not seen");
}
