//! The example policy crate builds against reclaimlab-core and runs: in a machine
//! (MRU keeps part of a loop larger than memory, where cache:lru keeps none of it), and
//! as the runner binary a user would call.
use reclaimlab_core::config::SimConfig;
use reclaimlab_core::{sim, Simulation};
use reclaimlab_trace::{generate, AccessKind, Pattern, Phase, Program, Region, Stream};

fn lookup(v: &[(impl AsRef<str>, f64)], name: &str) -> f64 {
    v.iter().find(|(k, _)| k.as_ref() == name).unwrap().1
}

/// A 16 MiB file read sequentially three times through an 8 MiB machine.
fn loop_program() -> Program {
    Program {
        regions: vec![Region::new("f", 4096, AccessKind::FileRead)],
        phases: vec![Phase { name: "loop".into(), accesses: 3 * 4096, streams: vec![Stream { region: 0, pattern: Pattern::Sequential, weight: 1.0 }], reclaims: Vec::new() }],
        repeat: 1,
    }
}

#[test]
fn mru_keeps_part_of_a_loop_where_lru_keeps_none() {
    let mut cfg = SimConfig::default();
    for (k, v) in [("machine.memory", "8M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("fault_around_bytes", "4096")] {
        cfg.set(k, v).unwrap();
    }
    let mut sim = Simulation::with_policy(&cfg, reclaimlab_policy_example::NAME, reclaimlab_policy_example::factory()).unwrap();
    let mut src = generate(loop_program(), 1).unwrap();
    while !sim.run(src.as_mut(), 4096).unwrap() {
        sim.check_invariants().unwrap();
    }
    let mru = sim.finish();
    cfg.set("policy", "cache:lru").unwrap();
    let mut e = sim::build(&cfg).unwrap();
    let mut src = generate(loop_program(), 1).unwrap();
    while !e.run(src.as_mut(), u64::MAX).unwrap() {}
    let lru = e.finish();
    let faults = |r: &reclaimlab_core::RunResult| lookup(&r.metrics, "major_faults");
    assert_eq!(faults(&lru), 3.0 * 4096.0);
    assert!(faults(&mru) < 0.75 * faults(&lru), "mru {} lru {}", faults(&mru), faults(&lru));
    assert_eq!(mru.policy, reclaimlab_policy_example::NAME);
    assert!(lookup(&mru.metrics, "ext.policy_reclaimed_pages") > 0.0);
}

#[test]
fn the_runner_prints_one_json_object_and_reports_bad_input_in_one_line() {
    let exe = env!("CARGO_BIN_EXE_reclaimlab-policy-example");
    let out = std::process::Command::new(exe).args(["file-search", "machine.memory=64M"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("{\"policy\": \"rust:reclaimlab-policy-example:MRU\", \"vmstat\": {\"nr_free_pages\": "), "{text}");
    assert_eq!(text.trim_end().lines().count(), 1);
    let bad = std::process::Command::new(exe).args(["file-search", "vm.swapiness=1"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(err.starts_with("reclaimlab-policy-example: error: ") && err.trim_end().lines().count() == 1, "{err}");
}
