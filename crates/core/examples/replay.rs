//! Replay a trace file with `key=value` config overrides and print the wall rate
//! (for profiling: `cargo run --release --example replay -- FILE machine.memory=4G`),
//! then the run's counters on stdout (to check that an optimisation changes no result).
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: replay FILE [key=value...]");
    let mut cfg = reclaimlab_core::SimConfig::default();
    for kv in args {
        let (k, v) = kv.split_once('=').expect("key=value");
        cfg.set(k, v).unwrap();
    }
    let mut src = reclaimlab_trace::open(std::path::Path::new(&path), None, None).unwrap();
    let mut sim = reclaimlab_core::Simulation::new(&cfg).unwrap();
    let t = std::time::Instant::now();
    while !sim.run(src.as_mut(), u64::MAX).unwrap() {}
    let n = sim.accesses();
    eprintln!("{} accesses in {:.3}s: {:.1} M/s", n, t.elapsed().as_secs_f64(), n as f64 / t.elapsed().as_secs_f64() / 1e6);
    let r = sim.finish();
    for (k, v) in &r.vmstat {
        println!("{k:32} {v}");
    }
    for (k, v) in &r.metrics {
        println!("{k:40} {v:.6}");
    }
}
