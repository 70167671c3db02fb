//! Run seed 003's thpscale for every THP policy: `cargo run --release --example thpscale [memory] [threads,...] [madvise 0|1]`.
//! The thread counts run in the given order on one machine per policy, as mmtests runs them.
use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams, THPSCALE_THREADS};
use reclaimlab_core::thp::policy::THP_POLICIES;
use reclaimlab_core::SimConfig;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mem = args.get(1).cloned().unwrap_or("1G".into());
    let threads: Vec<u32> = args.get(2).map_or(THPSCALE_THREADS.to_vec(), |s| s.split(',').map(|x| x.parse().unwrap()).collect());
    let madvise = args.get(3).map_or(true, |s| s != "0");
    for p in THP_POLICIES {
        let mut cfg = SimConfig::default();
        cfg.set("machine.memory", &mem).unwrap();
        cfg.set("machine.nodes", "2").unwrap();
        cfg.set("thp.policy", p.name).unwrap();
        let t0 = std::time::Instant::now();
        let runs = thpscale(&cfg, &ThpscaleParams { threads: threads.clone(), madvise, ..Default::default() }).unwrap();
        for r in &runs {
            let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
            let c = |k: &str| r.counters.iter().find(|(n, _)| n == k).map_or(0, |x| x.1);
            println!(
                "{:22} t={:2} base={:9.1} huge={:9.1} pct={:6.2} stall={} cstall={} csucc={} mig={} pgscan_d={} pgsteal_k={} swpout={} numa_miss={} split={} kcd={}",
                p.name,
                r.threads,
                mean(&r.fault_base_us),
                mean(&r.fault_huge_us),
                r.huge_pct(),
                c("allocstall_normal"),
                c("compact_stall"),
                c("compact_success"),
                c("pgmigrate_success"),
                c("pgscan_direct"),
                c("pgsteal_kswapd"),
                c("pswpout"),
                c("numa_miss"),
                c("thp_split_page"),
                c("compact_daemon_wake")
            );
        }
        println!("{:22} took {:.2?}", p.name, t0.elapsed());
    }
}
