//! Early page-cache reuse in the `tpcc-stock-level` trace, without any reclaim: of the first
//! memory-worth of distinct file pages the trace reads (138,000 pages × scale, about the
//! primary's page cache beside the three WiredTiger caches), the share read again within
//! that many file reads of their first read, by decile of first read. It is what decides,
//! in the first seconds of a run, whether MGLRU's PID controller protects re-read tiers and
//! so whether the RFC makes the primary age (docs/scenarios.md, "Across scales").
//!
//! `cargo run --release --example tpcc_reuse -- SCALE SEED [lockstep]`; the environment
//! variables `CLIENTS` and `QUANTUM` override the generator's clients (30) and scheduling
//! quantum (256 accesses). The whole-trace totals go to stderr.
use reclaimlab_trace::record::flags;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let scale: f64 = a.get(1).map_or(1.0, |s| s.parse().expect("SCALE"));
    let seed: u64 = a.get(2).map_or(1, |s| s.parse().expect("SEED"));
    let s = reclaimlab_core::scenario::get("tpcc-stock-level").unwrap();
    let mut tp = s.tpcc_params(scale).unwrap();
    if a.get(3).map(String::as_str) == Some("lockstep") {
        tp.client_start = reclaimlab_trace::gen::ClientStart::Lockstep;
    }
    if let Ok(v) = std::env::var("CLIENTS") {
        tp.clients = v.parse().expect("CLIENTS");
    }
    if let Ok(v) = std::env::var("QUANTUM") {
        tp.quantum = v.parse().expect("QUANTUM");
    }
    let transactions = tp.transactions;
    let window = (138_000.0 * scale) as u64;
    let mut src = reclaimlab_trace::gen::tpcc_stock_level(tp, seed).unwrap();
    let (mut first, mut reread, mut order) = (Vec::<u64>::new(), Vec::<bool>::new(), Vec::<u32>::new());
    let (mut nfile, mut buf) = (0u64, Vec::new());
    while src.read_batch(&mut buf, 65536).unwrap() > 0 {
        for acc in buf.iter().filter(|acc| acc.flags & flags::FILE != 0) {
            let p = acc.page as usize;
            if first.len() <= p {
                first.resize(p + 1, u64::MAX);
                reread.resize(p + 1, false);
            }
            if first[p] == u64::MAX {
                first[p] = nfile;
                order.push(p as u32);
            } else if nfile - first[p] < window {
                reread[p] = true;
            }
            nfile += 1;
        }
    }
    eprintln!(
        "scale {scale} seed {seed}: {nfile} file reads ({:.0} a transaction), {} distinct pages, {:.1} reads a page",
        nfile as f64 / transactions as f64,
        order.len(),
        nfile as f64 / order.len() as f64
    );
    let n = order.len().min(window as usize);
    let shares: Vec<String> = (0..10)
        .map(|dec| {
            let (lo, hi) = (n * dec / 10, n * (dec + 1) / 10);
            let k = order[lo..hi].iter().filter(|&&p| reread[p as usize]).count();
            format!("{:.2}", k as f64 / (hi - lo).max(1) as f64)
        })
        .collect();
    println!("scale {scale} seed {seed}: re-read within {window} file reads, by decile of first read: {}", shares.join(" "));
}
