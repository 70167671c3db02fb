//! Built-in scenarios: a machine (config overrides) plus a synthetic workload
//! (a masim-style program), runnable with no input files.
//!
//! `default` — a 512 MiB machine with zram swap running a database-like process: a hot
//! anonymous heap (160 MiB, Zipf 0.8, 30% writes), a 640 MiB data file read through the
//! page cache (Zipf 0.9), and in the middle a one-time 256 MiB sequential read of a log
//! file (a backup scan). The file working set exceeds memory, so kswapd and direct
//! reclaim run, file pages refault, and the scan tests whether the hot set survives.

use crate::config::SimConfig;
use crate::error::Result;
use reclaimlab_trace::{generate, AccessKind, AccessSource, Pattern, Phase, Program, Region, Stream};

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    overrides: &'static [(&'static str, &'static str)],
    program: fn() -> Program,
}

impl Scenario {
    /// The machine this scenario runs on (defaults plus its overrides).
    pub fn config(&self) -> SimConfig {
        let mut c = SimConfig::default();
        for (k, v) in self.overrides {
            c.set(k, v).expect("scenario overrides are valid keys");
        }
        c
    }

    /// The workload program.
    pub fn program(&self) -> Program {
        (self.program)()
    }

    /// Its access stream, generated from `seed`.
    pub fn source(&self, seed: u64) -> Result<Box<dyn AccessSource>> {
        Ok(generate(self.program(), seed)?)
    }
}

const MIB: u32 = 256; // pages per MiB

fn default_program() -> Program {
    let mut heap = Region::new("heap", 160 * MIB, AccessKind::AnonMapped);
    heap.write_ratio = 0.3;
    let data = Region::new("data", 640 * MIB, AccessKind::FileRead);
    let log = Region::new("log", 256 * MIB, AccessKind::FileRead);
    let steady = |name: &str, accesses| Phase {
        name: name.into(),
        accesses,
        streams: vec![
            Stream { region: 0, pattern: Pattern::Zipf { alpha: 0.8 }, weight: 0.5 },
            Stream { region: 1, pattern: Pattern::Zipf { alpha: 0.9 }, weight: 0.5 },
        ],
    };
    let mut scan = steady("scan", 2_000_000);
    scan.streams.push(Stream { region: 2, pattern: Pattern::Sequential, weight: 0.4 });
    Program { regions: vec![heap, data, log], phases: vec![steady("warm", 4_000_000), scan, steady("steady", 4_000_000)], repeat: 1 }
}

static SCENARIOS: &[Scenario] = &[Scenario {
    name: "default",
    description: "512M machine, zram: hot anon heap + page-cache data set larger than memory + a one-time streaming scan",
    overrides: &[("machine.memory", "512M"), ("swap.device", "zram"), ("swap.size", "512M")],
    program: default_program,
}];

pub fn list() -> &'static [Scenario] {
    SCENARIOS
}

pub fn get(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}
