//! [`GenSource`]: runs a validated [`Program`] as an [`AccessSource`]. Streams are
//! compiled once (page base, sampler, flags, cgroup) so the per-access work is a stream
//! pick, a page pick and an optional write draw.

use super::{Pattern, Program, Zipf};
use crate::rng::Rng;
use crate::{flags, Access, AccessSource, FileRange, Result, TraceMeta, TraceOp};

#[derive(Clone, Debug)]
enum Picker {
    Zipf(Zipf),
    Uniform,
    /// Index into the per-region sequential cursors.
    Sequential,
    Zigzag,
}

#[derive(Clone, Debug)]
struct CStream {
    region: usize,
    base: u32,
    pages: u32,
    picker: Picker,
    flags: u8,
    write_ratio: f64,
    cgroup: u16,
}

#[derive(Clone, Debug)]
struct CPhase {
    accesses: u64,
    streams: Vec<CStream>,
    /// Cumulative normalised weights (last = 1.0).
    cum: Vec<f64>,
}

pub struct GenSource {
    phases: Vec<CPhase>,
    repeat: u32,
    rng: Rng,
    /// Sequential cursor per region.
    seq: Vec<u32>,
    /// Zigzag position and direction per region.
    zig: Vec<(u32, bool)>,
    /// Current repeat / phase / accesses left in it.
    round: u32,
    phase: usize,
    left: u64,
    emitted: u64,
    meta: TraceMeta,
}

impl GenSource {
    pub fn new(program: Program, seed: u64) -> Result<Self> {
        program.validate()?;
        let cgroups = program.cgroups();
        let mut bases = Vec::with_capacity(program.regions.len());
        let mut next = 0u32;
        for r in &program.regions {
            bases.push(next);
            next += r.pages;
        }
        let phases = program
            .phases
            .iter()
            .map(|ph| {
                let total: f64 = ph.streams.iter().map(|s| s.weight).sum();
                let mut acc = 0.0;
                let mut cum: Vec<f64> = ph
                    .streams
                    .iter()
                    .map(|s| {
                        acc += s.weight / total;
                        acc
                    })
                    .collect();
                *cum.last_mut().expect("validated: streams non-empty") = 1.0;
                let streams = ph
                    .streams
                    .iter()
                    .map(|s| {
                        let r = &program.regions[s.region];
                        let picker = match s.pattern {
                            Pattern::Zipf { alpha } => Picker::Zipf(Zipf::new(r.pages as u64, alpha).expect("validated")),
                            Pattern::Uniform => Picker::Uniform,
                            Pattern::Sequential => Picker::Sequential,
                            Pattern::Zigzag => Picker::Zigzag,
                        };
                        CStream {
                            region: s.region,
                            base: bases[s.region],
                            pages: r.pages,
                            picker,
                            flags: r.kind.flags(),
                            write_ratio: r.write_ratio,
                            cgroup: cgroups.iter().position(|c| *c == r.cgroup).expect("listed") as u16,
                        }
                    })
                    .collect();
                CPhase { accesses: ph.accesses, streams, cum }
            })
            .collect::<Vec<_>>();
        // Each file-backed region is a file of its own.
        let files = program
            .regions
            .iter()
            .zip(&bases)
            .filter(|(r, _)| r.kind.flags() & flags::FILE != 0 && r.pages > 0)
            .map(|(r, &first)| FileRange { name: r.name.clone(), first, nr_pages: r.pages, advice: 0 })
            .collect();
        // A region's madvise comes first, once (the program maps and advises at start).
        let mut ops: Vec<TraceOp> = program
            .regions
            .iter()
            .zip(&bases)
            .filter_map(|(r, &first)| {
                let cgroup = cgroups.iter().position(|c| *c == r.cgroup).expect("listed") as u16;
                r.madvise.filter(|_| r.pages > 0).map(|advice| TraceOp::madvise(0, cgroup, first, r.pages, advice))
            })
            .collect();
        // Each phase's memory.reclaim writes go before its first access, in every round.
        let mut at = 0u64;
        for _ in 0..program.repeat {
            for ph in &program.phases {
                for r in &ph.reclaims {
                    let cgroup = cgroups.iter().position(|c| *c == r.cgroup).expect("validated") as u16;
                    ops.push(TraceOp::memory_reclaim(at, cgroup, r.bytes, r.swappiness));
                }
                at += ph.accesses;
            }
        }
        let meta = TraceMeta { format: "gen:program".into(), nr_records: program.nr_accesses(), nr_pages: Some(next), cgroups, tick_ps: 0, files, ops };
        let left = phases[0].accesses;
        Ok(GenSource {
            phases,
            repeat: program.repeat,
            rng: Rng::new(seed),
            seq: vec![0; program.regions.len()],
            zig: vec![(0, true); program.regions.len()],
            round: 0,
            phase: 0,
            left,
            emitted: 0,
            meta,
        })
    }

    /// Move to the next non-exhausted phase; false when the program is done.
    fn next_phase(&mut self) -> bool {
        while self.left == 0 {
            self.phase += 1;
            if self.phase == self.phases.len() {
                self.phase = 0;
                self.round += 1;
                if self.round >= self.repeat {
                    return false;
                }
            }
            self.left = self.phases[self.phase].accesses;
        }
        true
    }
}

#[inline(always)]
fn access(s: &CStream, rng: &mut Rng, seq: &mut [u32], zig: &mut [(u32, bool)]) -> Access {
    let off = match &s.picker {
        Picker::Zipf(z) => (z.sample(rng) - 1) as u32,
        Picker::Uniform => rng.below(s.pages as u64) as u32,
        Picker::Sequential => {
            let c = &mut seq[s.region];
            let p = *c;
            *c = if p + 1 == s.pages { 0 } else { p + 1 };
            p
        }
        Picker::Zigzag => {
            let (pos, fwd) = &mut zig[s.region];
            let p = *pos;
            if *fwd {
                if p + 1 == s.pages {
                    *fwd = false;
                } else {
                    *pos += 1;
                }
            } else if p == 0 {
                *fwd = true;
            } else {
                *pos -= 1;
            }
            p
        }
    };
    let write = if s.write_ratio <= 0.0 {
        false
    } else if s.write_ratio >= 1.0 {
        true
    } else {
        rng.chance(s.write_ratio)
    };
    Access { page: s.base + off, cgroup: s.cgroup, flags: s.flags | if write { flags::WRITE } else { 0 }, gap: 0 }
}

impl AccessSource for GenSource {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        if self.round >= self.repeat {
            return Ok(0);
        }
        buf.reserve(max.min(1 << 20));
        while buf.len() < max {
            if self.left == 0 && !self.next_phase() {
                self.round = self.repeat;
                break;
            }
            let n = ((max - buf.len()) as u64).min(self.left) as usize;
            let ph = &self.phases[self.phase];
            let rng = &mut self.rng;
            let (seq, zig) = (&mut self.seq, &mut self.zig);
            if ph.streams.len() == 1 {
                let s = &ph.streams[0];
                buf.extend((0..n).map(|_| access(s, rng, seq, zig)));
            } else {
                buf.extend((0..n).map(|_| {
                    let u = rng.next_f64();
                    let i = ph.cum.iter().position(|&c| u < c).unwrap_or(ph.cum.len() - 1);
                    access(&ph.streams[i], rng, seq, zig)
                }));
            }
            self.left -= n as u64;
            self.emitted += n as u64;
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.meta.nr_pages.unwrap_or(0)
    }

    fn position(&self) -> Option<u64> {
        Some(self.emitted)
    }

    fn progress(&self) -> Option<f64> {
        let total = self.meta.nr_records.unwrap_or(0);
        Some(if total == 0 { 1.0 } else { self.emitted as f64 / total as f64 })
    }
}
