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
    Phase { name: name.into(), accesses, streams: streams.iter().map(|(r, p, w)| Stream { region: *r, pattern: p.clone(), weight: *w }).collect(), reclaims: Vec::new() }
}

pub fn program(regions: Vec<Region>, phases: Vec<Phase>) -> Program {
    Program { regions, phases, repeat: 1 }
}

pub const MIB: u32 = 256;

/// A fixed list of accesses with a file table (the trace's layout).
pub struct VecSource {
    recs: Vec<reclaimlab_trace::Access>,
    pos: usize,
    meta: reclaimlab_trace::TraceMeta,
    nr_pages: u32,
}

impl VecSource {
    pub fn new(recs: Vec<reclaimlab_trace::Access>, files: Vec<reclaimlab_trace::FileRange>) -> Self {
        let nr_pages = recs.iter().map(|a| a.page + 1).max().unwrap_or(0);
        let meta = reclaimlab_trace::TraceMeta {
            format: "test".into(),
            nr_records: Some(recs.len() as u64),
            nr_pages: Some(nr_pages),
            cgroups: vec![String::new()],
            tick_ps: 0,
            files,
            ops: Vec::new(),
        };
        VecSource { recs, pos: 0, meta, nr_pages }
    }

    /// Page ids not known up front, as a text format's reader learns them.
    pub fn unknown_size(mut self) -> Self {
        self.meta.nr_pages = None;
        self
    }

    /// The trace's cgroup table after the root (records name them by index).
    pub fn with_cgroups(mut self, names: &[&str]) -> Self {
        self.meta.cgroups = std::iter::once(String::new()).chain(names.iter().map(|n| n.to_string())).collect();
        self
    }

    /// Ops (madvise, memory.reclaim) at their record positions.
    pub fn with_ops(mut self, ops: Vec<reclaimlab_trace::TraceOp>) -> Self {
        self.meta.ops = ops;
        self
    }

    /// A timed trace: each record's `gap` in ticks of `tick_ps`.
    pub fn timed(mut self, tick_ps: u64) -> Self {
        self.meta.tick_ps = tick_ps;
        self
    }
}

impl AccessSource for VecSource {
    fn meta(&self) -> &reclaimlab_trace::TraceMeta {
        &self.meta
    }
    fn read_batch(&mut self, buf: &mut Vec<reclaimlab_trace::Access>, max: usize) -> reclaimlab_trace::Result<usize> {
        buf.clear();
        let n = max.min(self.recs.len() - self.pos);
        buf.extend_from_slice(&self.recs[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
    fn nr_pages_seen(&self) -> u32 {
        self.nr_pages
    }
    fn position(&self) -> Option<u64> {
        Some(self.pos as u64)
    }
    fn progress(&self) -> Option<f64> {
        None
    }
}

/// Tasks with fixed streams (a [`reclaimlab_trace::TaskSource`]): task `t` runs
/// `streams[t]`, once task `after[t]` (if any) has finished its own.
pub struct TaskVecSource {
    streams: Vec<Vec<reclaimlab_trace::Access>>,
    pos: Vec<usize>,
    after: Vec<Option<usize>>,
    changes: u64,
    meta: reclaimlab_trace::TraceMeta,
}

impl TaskVecSource {
    /// Timed in 1 ns ticks (each record's gap is its task's CPU time before it).
    pub fn new(streams: Vec<Vec<reclaimlab_trace::Access>>, after: Vec<Option<usize>>, files: Vec<reclaimlab_trace::FileRange>) -> Self {
        let all = || streams.iter().flatten();
        let meta = reclaimlab_trace::TraceMeta {
            format: "test".into(),
            nr_records: Some(all().count() as u64),
            nr_pages: Some(all().map(|a| a.page + 1).max().unwrap_or(0)),
            cgroups: vec![String::new()],
            tick_ps: 1000,
            files,
            ops: Vec::new(),
        };
        let n = streams.len();
        TaskVecSource { streams, pos: vec![0; n], after, changes: 0, meta }
    }

    fn finished(&self, t: usize) -> bool {
        self.pos[t] == self.streams[t].len()
    }
}

impl reclaimlab_trace::TaskSource for TaskVecSource {
    fn nr_tasks(&self) -> usize {
        self.streams.len()
    }
    fn is_runnable(&self, t: usize) -> bool {
        !self.finished(t) && self.after[t].map_or(true, |a| self.finished(a))
    }
    fn changes(&self) -> u64 {
        self.changes
    }
    fn run_task(&mut self, t: usize, buf: &mut Vec<reclaimlab_trace::Access>, max: usize) -> reclaimlab_trace::Result<usize> {
        buf.clear();
        let n = max.min(self.streams[t].len() - self.pos[t]);
        buf.extend_from_slice(&self.streams[t][self.pos[t]..self.pos[t] + n]);
        self.pos[t] += n;
        if self.finished(t) {
            self.changes += 1;
        }
        Ok(n)
    }
}

impl AccessSource for TaskVecSource {
    fn meta(&self) -> &reclaimlab_trace::TraceMeta {
        &self.meta
    }
    /// The tasks one after another (what a replay on one clock would see).
    fn read_batch(&mut self, buf: &mut Vec<reclaimlab_trace::Access>, max: usize) -> reclaimlab_trace::Result<usize> {
        buf.clear();
        for t in 0..self.streams.len() {
            let n = (max - buf.len()).min(self.streams[t].len() - self.pos[t]);
            buf.extend_from_slice(&self.streams[t][self.pos[t]..self.pos[t] + n]);
            self.pos[t] += n;
        }
        Ok(buf.len())
    }
    fn nr_pages_seen(&self) -> u32 {
        self.meta.nr_pages.unwrap()
    }
    fn progress(&self) -> Option<f64> {
        None
    }
    fn tasks(&mut self) -> Option<&mut dyn reclaimlab_trace::TaskSource> {
        Some(self)
    }
}

/// The same tasks replayed as one stream (the engine never sees them as tasks).
pub struct Serial(pub TaskVecSource);

impl AccessSource for Serial {
    fn meta(&self) -> &reclaimlab_trace::TraceMeta {
        self.0.meta()
    }
    fn read_batch(&mut self, buf: &mut Vec<reclaimlab_trace::Access>, max: usize) -> reclaimlab_trace::Result<usize> {
        self.0.read_batch(buf, max)
    }
    fn nr_pages_seen(&self) -> u32 {
        self.0.nr_pages_seen()
    }
    fn progress(&self) -> Option<f64> {
        None
    }
}
