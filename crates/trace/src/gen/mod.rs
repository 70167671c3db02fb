//! Synthetic access generators modeled on masim: a [`Program`] declares memory
//! [`Region`]s and a sequence of [`Phase`]s; each phase issues a fixed number of accesses,
//! each drawn from one of its [`Stream`]s (chosen with probability ∝ weight), and each
//! stream picks pages of one region with a [`Pattern`]. Output is deterministic in the
//! seed. This module holds the program description and its validation; [`source`] runs
//! it and [`zipf`] is the Zipf sampler.

pub mod chunk;
pub mod jvmheap;
pub mod regions;
pub mod source;
pub mod terasort;
pub mod tpcc;
pub mod wiredtiger;
pub mod zipf;

pub use source::GenSource;
pub use terasort::{terasort, TeraSortParams, TeraSortSource};
pub use tpcc::{tpcc_stock_level, ClientStart, TpccParams, TpccSource};
pub use zipf::Zipf;

use crate::{AccessKind, AccessSource, Error, Result};

/// A memory region: `pages` contiguous dense page ids (regions are laid out in
/// declaration order, the first starting at page 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: String,
    pub pages: u32,
    pub kind: AccessKind,
    /// Probability that an access to this region is a write, in [0, 1].
    pub write_ratio: f64,
    /// cgroup name (`""` = root).
    pub cgroup: String,
    /// `madvise()` of the whole region before the first access (an anonymous region's
    /// `MADV_HUGEPAGE` or `MADV_NOHUGEPAGE`: [`crate::MADV_HUGEPAGE`]), if any.
    pub madvise: Option<u8>,
}

impl Region {
    /// A read-only region in the root cgroup.
    pub fn new(name: &str, pages: u32, kind: AccessKind) -> Region {
        Region { name: name.into(), pages, kind, write_ratio: 0.0, cgroup: String::new(), madvise: None }
    }
}

/// How a stream picks pages within its region.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Rank r (1-based) ↦ region page r-1 with probability ∝ r^-alpha: hot pages first.
    Zipf { alpha: f64 },
    /// Every page equally likely.
    Uniform,
    /// One cursor advancing through the region and wrapping to page 0:
    /// 0,1,…,n-1,0,1,… — the LRU-hostile cyclic scan (reuse distance = n); what cache
    /// papers and libCacheSim call a "loop".
    Sequential,
    /// A cursor that sweeps forward then backward (zigzag): 0,1,…,n-1,n-1,…,1,0,0,1,… —
    /// the most recently used pages are reused first after each turn (LRU-friendly at the
    /// ends). Each sweep visits every page once.
    Zigzag,
}

/// One source of accesses within a phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    /// Index into [`Program::regions`].
    pub region: usize,
    pub pattern: Pattern,
    /// Relative probability of this stream (> 0).
    pub weight: f64,
}

/// A phase: exactly `accesses` accesses drawn from `streams`, after its `reclaims`.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    pub accesses: u64,
    pub streams: Vec<Stream>,
    /// `memory.reclaim` writes at the start of the phase (before its first access), in
    /// order, in every repeat.
    pub reclaims: Vec<Reclaim>,
}

/// A `memory.reclaim` write: `bytes` (with `swappiness=` if set) to `cgroup`'s file.
#[derive(Clone, Debug, PartialEq)]
pub struct Reclaim {
    /// cgroup name (`""` = root); a region's cgroup or the root.
    pub cgroup: String,
    pub bytes: u64,
    pub swappiness: Option<u8>,
}

/// A whole synthetic workload: the phases run in order, `repeat` times.
///
/// Sequential/Loop cursors belong to the region (one per region and pattern) and persist
/// across phases and repeats, so a scan resumes where it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub regions: Vec<Region>,
    pub phases: Vec<Phase>,
    pub repeat: u32,
}

impl Program {
    fn single(pages: u32, accesses: u64, kind: AccessKind, pattern: Pattern) -> Program {
        Program {
            regions: vec![Region::new("main", pages, kind)],
            phases: vec![Phase { name: "main".into(), accesses, streams: vec![Stream { region: 0, pattern, weight: 1.0 }], reclaims: Vec::new() }],
            repeat: 1,
        }
    }

    /// One region, Zipf(alpha) over it.
    pub fn zipf(pages: u32, accesses: u64, alpha: f64, kind: AccessKind) -> Program {
        Self::single(pages, accesses, kind, Pattern::Zipf { alpha })
    }

    /// One region, uniform over it.
    pub fn uniform(pages: u32, accesses: u64, kind: AccessKind) -> Program {
        Self::single(pages, accesses, kind, Pattern::Uniform)
    }

    /// One region, cyclic forward scan.
    pub fn sequential(pages: u32, accesses: u64, kind: AccessKind) -> Program {
        Self::single(pages, accesses, kind, Pattern::Sequential)
    }

    /// One region, zigzag sweep (see [`Pattern::Zigzag`]).
    pub fn zigzag(pages: u32, accesses: u64, kind: AccessKind) -> Program {
        Self::single(pages, accesses, kind, Pattern::Zigzag)
    }

    /// Total pages over all regions.
    pub fn nr_pages(&self) -> u64 {
        self.regions.iter().map(|r| r.pages as u64).sum()
    }

    /// Total accesses (all phases × repeat), None on overflow.
    pub fn nr_accesses(&self) -> Option<u64> {
        let mut per = 0u64;
        for p in &self.phases {
            per = per.checked_add(p.accesses)?;
        }
        per.checked_mul(self.repeat as u64)
    }

    /// cgroup names: root `""` first, then region cgroups in order of first appearance.
    pub fn cgroups(&self) -> Vec<String> {
        let mut v = vec![String::new()];
        for r in &self.regions {
            if !v.contains(&r.cgroup) {
                v.push(r.cgroup.clone());
            }
        }
        v
    }

    /// Check the program; errors name the offending region/phase/stream.
    pub fn validate(&self) -> Result<()> {
        if self.regions.is_empty() {
            return Err(Error::invalid("program has no regions"));
        }
        for (i, r) in self.regions.iter().enumerate() {
            if r.pages == 0 {
                return Err(Error::invalid(format!("region {i} ({:?}) has zero pages", r.name)));
            }
            if !(0.0..=1.0).contains(&r.write_ratio) {
                return Err(Error::invalid(format!("region {i} ({:?}): write_ratio {} is outside [0, 1]", r.name, r.write_ratio)));
            }
            if let Some(a) = r.madvise.filter(|&a| a != crate::MADV_HUGEPAGE && a != crate::MADV_NOHUGEPAGE) {
                return Err(Error::invalid(format!("region {i} ({:?}): madvise {a} is not MADV_HUGEPAGE (14) or MADV_NOHUGEPAGE (15)", r.name)));
            }
        }
        if self.nr_pages() > u32::MAX as u64 {
            return Err(Error::invalid(format!("regions total {} pages, more than 2^32-1", self.nr_pages())));
        }
        if self.cgroups().len() > u16::MAX as usize + 1 {
            return Err(Error::invalid("more than 65536 distinct cgroups"));
        }
        if self.phases.is_empty() {
            return Err(Error::invalid("program has no phases"));
        }
        if self.repeat == 0 {
            return Err(Error::invalid("repeat must be at least 1"));
        }
        for (p, ph) in self.phases.iter().enumerate() {
            let at = || format!("phase {p} ({:?})", ph.name);
            if ph.streams.is_empty() {
                return Err(Error::invalid(format!("{} has no streams", at())));
            }
            for (k, r) in ph.reclaims.iter().enumerate() {
                let at = || format!("phase {p} ({:?}) reclaim {k}", ph.name);
                if !r.cgroup.is_empty() && !self.regions.iter().any(|reg| reg.cgroup == r.cgroup) {
                    return Err(Error::invalid(format!("{}: memory.reclaim for unknown cgroup {:?} (no region is in it)", at(), r.cgroup)));
                }
                if r.bytes == 0 {
                    return Err(Error::invalid(format!("{}: memory.reclaim of 0 bytes", at())));
                }
                if let Some(sw) = r.swappiness.filter(|&sw| sw > crate::source::MAX_SWAPPINESS) {
                    return Err(Error::invalid(format!("{}: swappiness {sw} is outside 0..={}", at(), crate::source::MAX_SWAPPINESS)));
                }
            }
            for (s, st) in ph.streams.iter().enumerate() {
                if !st.weight.is_finite() || st.weight <= 0.0 {
                    return Err(Error::invalid(format!("{} stream {s}: weight {} must be > 0", at(), st.weight)));
                }
                if st.region >= self.regions.len() {
                    return Err(Error::invalid(format!("{} stream {s}: unknown region index {} (program has {} regions)", at(), st.region, self.regions.len())));
                }
                if let Pattern::Zipf { alpha } = st.pattern {
                    if !alpha.is_finite() || alpha <= 0.0 {
                        return Err(Error::invalid(format!("{} stream {s}: zipf alpha {alpha} must be > 0", at())));
                    }
                }
            }
        }
        if self.nr_accesses().is_none() {
            return Err(Error::invalid("total number of accesses overflows u64"));
        }
        Ok(())
    }
}

/// Run `program` with `seed` as a stream of accesses (validated first). Same program and
/// seed ⇒ same records. Records have gap 0 (tick_ps 0: no time).
pub fn generate(program: Program, seed: u64) -> Result<Box<dyn AccessSource>> {
    Ok(Box::new(GenSource::new(program, seed)?))
}
