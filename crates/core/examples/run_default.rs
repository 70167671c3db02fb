//! Run the built-in default scenario and print its counters (a smoke check);
//! an optional argument names the policy.
fn main() {
    let s = reclaimlab_core::scenario::get("default").unwrap();
    let mut cfg = s.config();
    if let Some(policy) = std::env::args().nth(1) {
        cfg.set("policy", &policy).unwrap();
    }
    let mut src = s.source(cfg.seed).unwrap();
    let mut sim = reclaimlab_core::Simulation::new(&cfg).unwrap();
    let t = std::time::Instant::now();
    while !sim.run(src.as_mut(), u64::MAX).unwrap() {}
    let el = t.elapsed();
    let r = sim.finish();
    for (k, v) in &r.vmstat {
        println!("{k:32} {v}");
    }
    for (k, v) in &r.metrics {
        println!("{k:40} {v:.4}");
    }
    eprintln!("wall {:.2}s", el.as_secs_f64());
}
