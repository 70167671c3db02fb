//! DAMON's cost (run: `cargo bench -p reclaimlab-core --bench damon`; figures in
//! BENCHMARKS.md).
//!
//! (a) Simulated monitoring cost (kdamond's CPU per sample, sampling + aggregation) on a
//!     1 GiB and a 64 GiB machine running the same workload (8 MiB hot inside 256 MiB
//!     touched once), DAMON_RECLAIM monitoring only — at a fixed region count (min = max
//!     = 500 regions) and with the default bounds (10..1000) — plus the host time of
//!     the whole run (build included), the median of `DAMON_BENCH_REPEAT` (default 5)
//!     runs of each size taken in turn, and its 64 GiB / 1 GiB ratio.
//! (b) Seed 004's table: 24 workloads × (baseline + 7 configurations) of
//!     `damon-reclaim-parsec` at scale 1 on two threads, wall time: the simulations
//!     `reclaimlab run damon-reclaim-parsec` runs (its Python harness,
//!     `reclaimlab.experiment.damon_quota`, forms the table from them), from the same
//!     rows (`scenario::parsec::PARSEC_CONFIGS`), without Python in the measurement.

use reclaimlab_core::config::SimConfig;
use reclaimlab_core::scenario;
use reclaimlab_core::scenario::parsec::{parsec_config_settings, PARSEC_CONFIGS, PARSEC_PROFILES};
use reclaimlab_core::sim;
use reclaimlab_trace::{generate, AccessKind, Pattern, Phase, Program, Region, Stream};
use std::time::Instant;

const MIB: u32 = 256;

fn workload() -> Program {
    Program {
        regions: vec![Region::new("cold", 256 * MIB, AccessKind::AnonMapped), Region::new("hot", 8 * MIB, AccessKind::AnonMapped)],
        phases: vec![
            Phase { name: "fill".into(), accesses: (256 * MIB) as u64, streams: vec![Stream { region: 0, pattern: Pattern::Sequential, weight: 1.0 }], reclaims: Vec::new() },
            Phase { name: "hot".into(), accesses: 6_000_000, streams: vec![Stream { region: 1, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() },
        ],
        repeat: 1,
    }
}

/// (simulated monitoring ns per sample, average regions, host seconds)
fn monitor(memory: &str, bounds: Option<u32>) -> (f64, f64, f64) {
    let mut c = SimConfig::default();
    for (k, v) in [
        ("machine.memory", memory),
        ("cost.access_ns", "10000"),
        ("damon_reclaim.enabled", "Y"),
        ("damon_reclaim.wmarks_high", "1000"),
        ("damon_reclaim.wmarks_mid", "1000"),
        ("damon_reclaim.wmarks_low", "0"),
        ("damon_reclaim.min_age", "1000000000000"),
    ] {
        c.set(k, v).unwrap();
    }
    if let Some(n) = bounds {
        c.set("damon_reclaim.min_nr_regions", &n.to_string()).unwrap();
        c.set("damon_reclaim.max_nr_regions", &n.to_string()).unwrap();
    }
    let t = Instant::now();
    let mut e = sim::build(&c).unwrap();
    let mut src = generate(workload(), 1).unwrap();
    while !e.run(&mut *src, 1 << 22).unwrap() {}
    let r = e.finish();
    let host = t.elapsed().as_secs_f64();
    let m = |k: &str| r.metrics.iter().find(|(n, _)| n == k).unwrap().1;
    let runtime_ns = m("runtime_s") * 1e9;
    (m("damon_monitor_cpu_pct") / 100.0 * runtime_ns / m("damon_nr_samples"), m("damon_nr_regions_avg"), host)
}

/// One profile without DAMON_RECLAIM and under every configuration: the runs one cell row
/// of the table takes. Returns the number of runs.
fn parsec_runs(name: &str) -> usize {
    let s = scenario::get("damon-reclaim-parsec").unwrap();
    let base = s.config();
    let mut cfgs = vec![base.clone()];
    for &(_, quota_ms, prio) in PARSEC_CONFIGS {
        let mut c = base.clone();
        for (k, v) in parsec_config_settings(quota_ms, prio) {
            c.set(k, &v).unwrap();
        }
        cfgs.push(c);
    }
    for c in &cfgs {
        let mut src = s.source_with(c.seed, 1.0, &[("workload", name)]).unwrap();
        let mut e = sim::build(c).unwrap();
        while !e.run(&mut *src, 1 << 22).unwrap() {}
        e.finish();
    }
    cfgs.len()
}

fn main() {
    let repeat: usize = std::env::var("DAMON_BENCH_REPEAT").map_or(5, |v| v.parse().unwrap());
    println!("(a) DAMON monitoring cost, same workload (60 simulated s), 1 GiB vs 64 GiB; host: median of {repeat} runs each");
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (label, bounds) in [("min = max = 500 regions", Some(500)), ("default bounds 10..1000", None)] {
        let (mut runs1, mut runs64) = (Vec::new(), Vec::new());
        for _ in 0..repeat.max(1) {
            runs1.push(monitor("1G", bounds));
            runs64.push(monitor("64G", bounds));
        }
        let ((s1, r1, _), (s64, r64, _)) = (runs1[0], runs64[0]);
        let h1 = median(runs1.iter().map(|r| r.2).collect());
        let h64 = median(runs64.iter().map(|r| r.2).collect());
        println!(
            "  {label:24} 1G: {s1:>9.0} ns/sample ({r1:.0} regions, host {h1:.3} s)   64G: {s64:>9.0} ns/sample ({r64:.0} regions, host {h64:.3} s)   64G/1G = {:.3} simulated, {:.2} host",
            s64 / s1,
            h64 / h1
        );
    }
    println!("(b) damon-reclaim-parsec: 24 workloads x (baseline + 7 configurations), scale 1, 2 threads");
    let names: Vec<&str> = PARSEC_PROFILES.iter().map(|p| p.0).collect();
    let t = Instant::now();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|k| {
                let names = &names;
                s.spawn(move || names.iter().skip(k).step_by(2).map(|n| parsec_runs(n)).sum::<usize>())
            })
            .collect();
        let runs: usize = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(runs, 24 * 8);
    });
    println!("  {:.1} s wall", t.elapsed().as_secs_f64());
}
