//! Cost per access against the simulated memory size (run: `cargo bench -p
//! reclaimlab-core --bench size_sweep`; figures in BENCHMARKS.md).
//!
//! For each machine size (default 1, 16, 128 and 256 GiB; `SIZE_SWEEP_GIB=1,16` picks
//! some), classic@6.15 and mglru@6.15 replay the same generated trace at a fixed ~30 %
//! fault ratio: one anonymous region of 4/3 of the machine's frames, touched once in order
//! (the fill: untimed), then `SIZE_SWEEP_ACCESSES` (default 4 M) uniform accesses over it
//! (timed), SSD swap, base pages. `SIZE_SWEEP_PASSES=N` times at least N passes over the
//! region (N × its pages, a number that grows with the size; still at least
//! `SIZE_SWEEP_ACCESSES`): 4 M accesses are 12 passes at 1 GiB, where reclaim has reached
//! its steady state (refaults activated, the active list scanned), but a twentieth of one
//! at 256 GiB, still in the wake of the in-order fill; two passes or more compare the
//! sizes in the same state. Each policy runs in a child process of its own, so the
//! peak resident memory (`VmHWM`) it reports is that machine's alone, with the time to
//! build the machine. The plain-LRU peer of the same capacity replays the same trace in
//! this process before them; the ratio is engine / peer.

use reclaimlab_core::config::SimConfig;
use reclaimlab_core::sim;
use reclaimlab_trace::{generate, AccessKind, AccessSource, Pattern, Phase, Program, Region, Stream};
use std::process::Command;
use std::time::Instant;

mod common;

const FRAMES_PER_GIB: u64 = 1 << 18;

/// The trace for a machine of `gib` GiB: (program, fill length).
fn trace(gib: u64, accesses: u64) -> (Box<dyn AccessSource>, u64) {
    let pages = (gib * FRAMES_PER_GIB * 4 / 3) as u32;
    let program = Program {
        regions: vec![Region::new("anon", pages, AccessKind::AnonMapped)],
        phases: vec![
            Phase { name: "fill".into(), accesses: pages as u64, streams: vec![Stream { region: 0, pattern: Pattern::Sequential, weight: 1.0 }], reclaims: Vec::new() },
            Phase { name: "uniform".into(), accesses, streams: vec![Stream { region: 0, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() },
        ],
        repeat: 1,
    };
    (generate(program, 42).unwrap(), pages as u64)
}

/// Child: one policy on one size. Prints `rate faults peak_bytes build_s`.
fn child(gib: u64, policy: &str, accesses: u64) {
    let mut cfg = SimConfig::default();
    for (k, v) in [
        ("policy", policy.to_string()),
        ("machine.memory", format!("{gib}G")),
        ("swap.device", "ssd".to_string()),
        ("swap.size", format!("{}G", gib.div_ceil(2))),
        ("transparent_hugepage.enabled", "never".to_string()),
    ] {
        cfg.set(k, &v).unwrap();
    }
    let (mut src, fill) = trace(gib, accesses);
    let t = Instant::now();
    let mut e = sim::build(&cfg).unwrap();
    let build = t.elapsed().as_secs_f64();
    e.run(&mut *src, fill).unwrap();
    let t = Instant::now();
    while !e.run(&mut *src, u64::MAX).unwrap() {}
    let secs = t.elapsed().as_secs_f64();
    let timed = e.accesses() - fill;
    let r = e.finish();
    let pgfault = r.vmstat.iter().find(|(n, _)| *n == "pgfault").unwrap().1;
    // Every access of the fill is a first touch, hence a fault.
    let faults = (pgfault - fill) as f64 / timed as f64;
    println!("{} {} {} {}", timed as f64 / secs, faults, common::proc_status_bytes("VmHWM"), build);
}

fn main() {
    let env_u64 = |k: &str, d: u64| std::env::var(k).ok().map_or(d, |v| v.parse().unwrap());
    let fixed = env_u64("SIZE_SWEEP_ACCESSES", 4_000_000);
    let passes = env_u64("SIZE_SWEEP_PASSES", 0);
    // The timed accesses on a machine of `gib` GiB.
    let accesses = |gib: u64| fixed.max(passes * (gib * FRAMES_PER_GIB * 4 / 3));
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let gib = args[i + 1].parse().unwrap();
        child(gib, &args[i + 2], accesses(gib));
        return;
    }
    let sizes: Vec<u64> = std::env::var("SIZE_SWEEP_GIB").unwrap_or_else(|_| "1,16,128,256".into()).split(',').map(|s| s.trim().parse().unwrap()).collect();
    let exe = std::env::current_exe().unwrap();
    let timed = if passes > 0 { format!("at least {passes} passes and {fixed}") } else { format!("{fixed}") };
    println!("reclaimlab size sweep: uniform over 4/3 of the frames after an in-order fill, {timed} timed accesses, one core");
    println!("{:>8} {:<14} {:>12} {:>8} {:>12} {:>10} {:>10}", "machine", "policy", "accesses/s", "faults", "vs plain LRU", "peak", "build");
    for gib in sizes {
        let (mut src, fill) = trace(gib, accesses(gib));
        let (lru, miss) = common::lru_rate(&mut *src, (gib * FRAMES_PER_GIB) as u32, fill);
        drop(src);
        for policy in ["classic@6.15", "mglru@6.15"] {
            let out = Command::new(&exe).args(["--child", &gib.to_string(), policy]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let f: Vec<f64> = String::from_utf8_lossy(&out.stdout).split_whitespace().map(|x| x.parse().unwrap()).collect();
            println!(
                "{:>6} G {:<14} {:>10.2} M {:>7.1}% {:>11.2}x {:>6.2} GiB {:>7.1} ms",
                gib,
                policy,
                f[0] / 1e6,
                f[1] * 100.0,
                f[0] / lru,
                f[2] / (1u64 << 30) as f64,
                f[3] * 1e3
            );
        }
        println!("{:>6} G {:<14} {:>10.2} M {:>7.1}%", gib, "plain LRU peer", lru / 1e6, miss * 100.0);
    }
}
