//! Helpers shared by the integration tests: build a machine from key/value pairs, run
//! a generated program or a trace, read counters.
#![allow(dead_code)]

use reclaimlab_core::config::SimConfig;
use reclaimlab_core::sim;
use reclaimlab_core::RunResult;
use reclaimlab_trace::{AccessKind, AccessSource, Pattern, Phase, Program, Region, Stream};

pub fn config(kv: &[(&str, &str)]) -> SimConfig {
    let mut c = SimConfig::default();
    for (k, v) in kv {
        c.set(k, v).unwrap();
    }
    c
}

/// Run `src` to the end, checking invariants every `check_every` accesses.
pub fn run_checked(cfg: &SimConfig, src: &mut dyn AccessSource, check_every: u64) -> RunResult {
    let mut e = sim::build(cfg).unwrap();
    loop {
        let done = e.run(src, check_every).unwrap();
        e.check_invariants().unwrap();
        if done {
            break;
        }
    }
    e.finish()
}

pub fn run(cfg: &SimConfig, src: &mut dyn AccessSource) -> RunResult {
    let mut e = sim::build(cfg).unwrap();
    while !e.run(src, u64::MAX).unwrap() {}
    e.check_invariants().unwrap();
    e.finish()
}

pub fn vm(r: &RunResult, name: &str) -> u64 {
    r.vmstat.iter().find(|(k, _)| *k == name).unwrap_or_else(|| panic!("no vmstat {name}")).1
}

pub fn metric(r: &RunResult, name: &str) -> f64 {
    r.metrics.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no metric {name}")).1
}

pub fn region(name: &str, pages: u32, kind: AccessKind) -> Region {
    Region::new(name, pages, kind)
}

pub fn phase(name: &str, accesses: u64, streams: &[(usize, Pattern, f64)]) -> Phase {
    Phase {
        name: name.into(),
        accesses,
        streams: streams.iter().map(|(r, p, w)| Stream { region: *r, pattern: p.clone(), weight: *w }).collect(),
    }
}

pub fn program(regions: Vec<Region>, phases: Vec<Phase>) -> Program {
    Program { regions, phases, repeat: 1 }
}

pub const MIB: u32 = 256;
