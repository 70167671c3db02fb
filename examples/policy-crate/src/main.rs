//! Run a built-in scenario under this crate's policy and print the result as JSON
//! (`{"policy", "vmstat", "metrics"}`, the fields of `reclaimlab run --json`):
//!
//! ```text
//! reclaimlab-policy-example SCENARIO [--seed N] [KEY=VALUE ...]
//! ```
//!
//! KEY=VALUE are engine knobs (`reclaimlab knobs`), applied over the scenario's machine.
//! Bad input: one line `reclaimlab-policy-example: error: ...`, exit 2.
use reclaimlab_core::{scenario, Simulation};

fn main() {
    if let Err(e) = run() {
        eprintln!("reclaimlab-policy-example: error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let name = args.next().ok_or("usage: reclaimlab-policy-example SCENARIO [--seed N] [KEY=VALUE ...]")?;
    let sc = scenario::get(&name).ok_or_else(|| format!("unknown scenario '{name}' (`reclaimlab scenarios`)"))?;
    let mut cfg = sc.config();
    let mut seed = cfg.seed;
    while let Some(a) = args.next() {
        if a == "--seed" {
            let v = args.next().ok_or("--seed needs a value")?;
            seed = v.parse().map_err(|_| format!("--seed: not a number: {v}"))?;
        } else {
            let (k, v) = a.split_once('=').ok_or_else(|| format!("expected KEY=VALUE, got '{a}'"))?;
            cfg.set(k, v).map_err(|e| e.to_string())?;
        }
    }
    cfg.seed = seed;
    let mut src = sc.source(seed).map_err(|e| e.to_string())?;
    let mut sim = Simulation::with_policy(&cfg, reclaimlab_policy_example::NAME, reclaimlab_policy_example::factory()).map_err(|e| e.to_string())?;
    while !sim.run(src.as_mut(), u64::MAX).map_err(|e| e.to_string())? {}
    let r = sim.finish();
    let num = |v: f64| if v.is_finite() { format!("{v}") } else { "null".into() };
    let vmstat: Vec<String> = r.vmstat.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
    let metrics: Vec<String> = r.metrics.iter().map(|(k, v)| format!("\"{k}\": {}", num(*v))).collect();
    println!("{{\"policy\": \"{}\", \"vmstat\": {{{}}}, \"metrics\": {{{}}}}}", r.policy, vmstat.join(", "), metrics.join(", "));
    Ok(())
}
