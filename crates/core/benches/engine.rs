//! Engine throughput and memory (run: `cargo bench -p reclaimlab-core --bench engine`).
//!
//! Prints, for classic@6.15 and mglru@6.15 on one core:
//! (a) a hit-dominated trace — Zipf α=1.0 over 1 M pages, 20 M accesses, on a machine
//!     that holds them all (only first touches fault);
//! (b) the same access pattern under reclaim — 4 M pages (16 GiB) on a 1 GiB machine
//!     swapping to SSD, about 30% of accesses faulting (major faults and refaults);
//! each replayed from a native trace file, with two peers measured in the same run on
//! the same file: the bare decode rate of the trace reader (the ceiling), and a plain
//! LRU cache simulation (array-based doubly-linked list, no Linux policy) — what a
//! generic cache simulator costs per access. For MGLRU, the host time of aging and of
//! eviction as shares of the run (the simulator's own cost split, besides the simulated
//! CPU share of aging). Also the host bytes per simulated frame,
//! from the data layout and from the resident memory of a 256 GiB machine.

use reclaimlab_core::config::SimConfig;
use reclaimlab_core::policy::mglru::host_time;
use reclaimlab_core::sim;
use reclaimlab_trace::{generate, AccessKind, AccessSource, NativeReader, Program};

use std::path::{Path, PathBuf};
use std::time::Instant;

mod common;
use common::BATCH;

fn make_trace(path: &Path, pages: u32, accesses: u64) {
    if path.exists() {
        return;
    }
    let mut src = generate(Program::zipf(pages, accesses, 1.0, AccessKind::AnonMapped), 42).unwrap();
    reclaimlab_trace::convert(src.as_mut(), path).unwrap();
}

fn best_of<F: FnMut() -> f64>(n: usize, mut f: F) -> f64 {
    (0..n).map(|_| f()).fold(0.0, f64::max)
}

/// Bare decode rate of the native reader (accesses/s).
fn decode_rate(path: &Path) -> f64 {
    let mut buf = Vec::with_capacity(BATCH);
    let mut r = NativeReader::open(path).unwrap();
    let t = Instant::now();
    let mut n = 0u64;
    let mut x = 0u64;
    loop {
        let k = r.read_batch(&mut buf, BATCH).unwrap();
        if k == 0 {
            break;
        }
        x = x.wrapping_add(buf[k - 1].page as u64);
        n += k as u64;
    }
    std::hint::black_box(x);
    n as f64 / t.elapsed().as_secs_f64()
}

/// The plain-LRU peer on the file.
fn lru_rate(path: &Path, frames: u32) -> (f64, f64) {
    common::lru_rate(&mut NativeReader::open(path).unwrap(), frames, 0)
}

/// One policy's replay of a file.
struct EngineRun {
    /// Accesses per host second.
    rate: f64,
    faults: f64,
    /// MGLRU: aging's share of the simulated reclaim CPU.
    aging_sim: Option<f64>,
    /// MGLRU: host time in aging and in eviction as shares of the run's host time.
    host_split: Option<(f64, f64)>,
}

/// A policy replaying the file.
fn engine_rate(path: &Path, policy: &str, kv: &[(&str, &str)]) -> EngineRun {
    let mut cfg = SimConfig::default();
    cfg.set("policy", policy).unwrap();
    for (k, v) in kv {
        cfg.set(k, v).unwrap();
    }
    let mut src = NativeReader::open(path).unwrap();
    let mut e = sim::build(&cfg).unwrap();
    let _ = host_time::take();
    let t = Instant::now();
    while !e.run(&mut src, u64::MAX).unwrap() {}
    let secs = t.elapsed().as_secs_f64();
    let (aging_host, evict_host) = host_time::take();
    let r = e.finish();
    let get = |k: &str| r.vmstat.iter().find(|(n, _)| *n == k).unwrap().1 as f64;
    let metric = |k: &str| r.metrics.iter().find(|(n, _)| n == k).map(|m| m.1);
    let acc = metric("accesses").unwrap();
    let reclaim = metric("kswapd_cpu_s").unwrap() + metric("direct_reclaim_s").unwrap() + metric("memcg_reclaim_s").unwrap();
    let aging_sim = metric("lru_gen.aging_cpu_s").map(|a| if reclaim > 0.0 { a / reclaim } else { 0.0 });
    let host_split = aging_sim.map(|_| (aging_host.as_secs_f64() / secs, evict_host.as_secs_f64() / secs));
    EngineRun { rate: acc / secs, faults: get("pgfault") / acc, aging_sim, host_split }
}

fn main() {
    let dir = PathBuf::from(std::env::var("BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().join("reclaimlab-bench").display().to_string()));
    std::fs::create_dir_all(&dir).unwrap();
    let hit = dir.join("zipf-1M-20M.trace");
    let reclaim = dir.join("zipf-4M-20M.trace");
    eprintln!("generating traces in {} (once)...", dir.display());
    make_trace(&hit, 1 << 20, 20_000_000);
    make_trace(&reclaim, 4 << 20, 20_000_000);

    println!("reclaimlab engine benchmark (one core, best of 3)");
    println!(
        "{:<44} {:<12} {:>12} {:>8} {:>10} {:>12} {:>8} {:>10} {:>10}",
        "case", "policy", "accesses/s", "faults", "vs decode", "vs plain LRU", "aging", "aging host", "evict host"
    );
    for (name, path, kv, frames) in [
        // Base pages (THP off), like the page-granular peers they are compared with.
        ("(a) hit-dominated: zipf 1M pages, 8G", &hit, vec![("machine.memory", "8G"), ("transparent_hugepage.enabled", "never")], 2u32 << 20),
        (
            "(b) under reclaim: zipf 4M pages, 1G, ssd swap",
            &reclaim,
            vec![("machine.memory", "1G"), ("swap.device", "ssd"), ("swap.size", "16G"), ("transparent_hugepage.enabled", "never")],
            1 << 18,
        ),
    ] {
        let dec = best_of(3, || decode_rate(path));
        let mut lru_miss = 0.0;
        let lru = best_of(3, || {
            let (r, m) = lru_rate(path, frames);
            lru_miss = m;
            r
        });
        for policy in ["classic@6.15", "mglru@6.15"] {
            // the best of 3 runs, with its own fault share and splits
            let best = (0..3).map(|_| engine_rate(path, policy, &kv)).max_by(|a, b| a.rate.total_cmp(&b.rate)).unwrap();
            let pct = |x: Option<f64>| x.map_or("-".to_string(), |a| format!("{:.1}%", a * 100.0));
            println!(
                "{:<44} {:<12} {:>10.1} M {:>7.1}% {:>9.2}x {:>11.2}x {:>8} {:>10} {:>10}",
                name,
                policy,
                best.rate / 1e6,
                best.faults * 100.0,
                best.rate / dec,
                best.rate / lru,
                pct(best.aging_sim),
                pct(best.host_split.map(|h| h.0)),
                pct(best.host_split.map(|h| h.1))
            );
        }
        println!("{:<44} {:<12} {:>10.1} M {:>7.1}%", "   peer: plain LRU (misses)", "", lru / 1e6, lru_miss * 100.0);
        println!("{:<44} {:<12} {:>10.1} M", "   peer: native trace decode (ceiling)", "", dec / 1e6);
    }
    println!("(aging = MGLRU page-table-walk CPU as a share of all simulated reclaim CPU;");
    println!(" aging host / evict host = the simulator's own time in MGLRU aging (try_to_inc_max_seq)");
    println!(" and eviction (evict_folios, with look-around) as shares of the run's wall time)");

    // Bytes per simulated frame: layout, and measured for a 256 GiB machine.
    use reclaimlab_core::mm::{lists::ListArena, page::Frames, page_alloc};
    let layout = (ListArena::BYTES_PER_FRAME + Frames::BYTES_PER_FRAME) as f64 + page_alloc::BITS_PER_FRAME as f64 / 8.0;
    let before = common::proc_status_bytes("VmRSS");
    let mut cfg = SimConfig::default();
    cfg.set("machine.memory", "256G").unwrap();
    let t = Instant::now();
    let e = sim::build(&cfg).unwrap();
    let built = t.elapsed().as_secs_f64();
    let after = common::proc_status_bytes("VmRSS");
    let frames = 256u64 << 18;
    println!();
    println!(
        "host memory per simulated frame: {layout} bytes by layout (links 8, flags 4, owner 4, memcg 2 with other memcgs than the root, buddy order 1/2, pageblock type 1/512)"
    );
    println!(
        "256 GiB machine ({frames} frames): {:.2} GiB resident = {:.1} bytes/frame, built in {built:.1} s",
        (after - before) as f64 / (1u64 << 30) as f64,
        (after - before) as f64 / frames as f64
    );
    drop(e);
}
