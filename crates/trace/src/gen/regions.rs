//! Region-level access patterns turned into page accesses: the workload a DAMON
//! monitoring record (a `damo record` file, read in `python/reclaimlab/damo_record.py`)
//! describes.
//!
//! Input: a sequence of [`Interval`]s (one per DAMON aggregation interval), each lasting
//! `duration_ns` and listing [`Span`]s of dense page ids with the number of accesses to
//! issue in it. Output, per interval: exactly `Σ accesses` records, each to a span chosen
//! with probability ∝ its accesses and a page of it chosen uniformly, spread evenly over
//! the interval's time (record time = interval start + ⌊(i+1)·duration/n⌋, carried in
//! microsecond ticks). An interval without accesses passes its time on to the next
//! record. With `populate`, every page `0..nr_pages` is first written once, in order,
//! at time 0 (the process allocating its memory), so regions DAMON saw but never saw
//! accessed still exist. Deterministic in the seed (xoshiro256**).

use crate::rng::Rng;
use crate::{flags, Access, AccessKind, AccessSource, Error, Result, TraceMeta};

/// Picoseconds per gap tick of the generated records (1 µs).
pub const TICK_PS: u64 = 1_000_000;
const TICK_NS: u64 = TICK_PS / 1000;

/// `pages` dense page ids from `first_page`, to be accessed `accesses` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub first_page: u32,
    pub pages: u32,
    pub accesses: u64,
}

/// One aggregation interval: its length and its spans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interval {
    pub duration_ns: u64,
    pub spans: Vec<Span>,
}

/// The records of a region-level access pattern, streamed.
pub struct RegionsSource {
    intervals: Vec<Interval>,
    /// Prefix sums of the current interval's span accesses.
    cum: Vec<u64>,
    flags: u8,
    rng: Rng,
    /// Next page to populate (== nr_pages when done or not populating).
    populate_next: u32,
    nr_pages: u32,
    /// Current interval, accesses emitted in it, and its total.
    idx: usize,
    done_in: u64,
    total_in: u64,
    /// Start of the current interval (ns) and time of the last record (µs ticks).
    start_ns: u128,
    last_tick: u128,
    emitted: u64,
    meta: TraceMeta,
}

impl RegionsSource {
    /// Check the spans (inside `0..nr_pages`, non-empty) and set up the stream.
    pub fn new(intervals: Vec<Interval>, nr_pages: u32, populate: bool, kind: AccessKind, seed: u64) -> Result<Self> {
        if nr_pages == 0 {
            return Err(Error::invalid("region pattern covers no pages"));
        }
        let mut total: u64 = if populate { nr_pages as u64 } else { 0 };
        for (i, iv) in intervals.iter().enumerate() {
            for (j, s) in iv.spans.iter().enumerate() {
                let end = s.first_page as u64 + s.pages as u64;
                if s.pages == 0 || end > nr_pages as u64 {
                    return Err(Error::invalid(format!("interval {i} span {j}: pages [{}, {end}) empty or outside 0..{nr_pages}", s.first_page)));
                }
                total = total.checked_add(s.accesses).ok_or_else(|| Error::invalid("more than 2^64 accesses"))?;
            }
        }
        let meta = TraceMeta {
            format: "gen:damon-regions".into(),
            nr_records: Some(total),
            nr_pages: Some(nr_pages),
            cgroups: vec![String::new()],
            tick_ps: TICK_PS,
            files: Vec::new(),
            ops: Vec::new(),
        };
        let mut s = RegionsSource {
            intervals,
            cum: Vec::new(),
            flags: kind.flags(),
            rng: Rng::new(seed),
            populate_next: if populate { 0 } else { nr_pages },
            nr_pages,
            idx: 0,
            done_in: 0,
            total_in: 0,
            start_ns: 0,
            last_tick: 0,
            emitted: 0,
            meta,
        };
        s.enter(0);
        Ok(s)
    }

    /// Make interval `idx` current (its prefix sums and total).
    fn enter(&mut self, idx: usize) {
        self.idx = idx;
        self.done_in = 0;
        self.cum.clear();
        let mut acc = 0u64;
        if let Some(iv) = self.intervals.get(idx) {
            for s in &iv.spans {
                acc += s.accesses;
                self.cum.push(acc);
            }
        }
        self.total_in = acc;
    }

    /// Advance to the next interval with accesses left; false at the end.
    fn next_nonempty(&mut self) -> bool {
        while self.done_in == self.total_in {
            if self.idx >= self.intervals.len() {
                return false;
            }
            self.start_ns += self.intervals[self.idx].duration_ns as u128;
            let next = self.idx + 1;
            self.enter(next);
            if next >= self.intervals.len() {
                return false;
            }
        }
        true
    }
}

impl AccessSource for RegionsSource {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        while buf.len() < max && self.populate_next < self.nr_pages {
            buf.push(Access { page: self.populate_next, cgroup: 0, flags: self.flags | flags::WRITE, gap: 0 });
            self.populate_next += 1;
        }
        while buf.len() < max {
            if self.done_in == self.total_in && !self.next_nonempty() {
                break;
            }
            let iv = &self.intervals[self.idx];
            let n = self.total_in;
            let i = self.done_in;
            // Record time: start + floor((i+1)·D/n), in µs ticks since time 0.
            let t_ns = self.start_ns + (i as u128 + 1) * iv.duration_ns as u128 / n as u128;
            let tick = t_ns / TICK_NS as u128;
            let gap = tick - self.last_tick;
            let gap = u32::try_from(gap).map_err(|_| Error::invalid(format!("interval {}: an idle gap of {gap} µs does not fit a record", self.idx)))?;
            self.last_tick = tick;
            let pick = self.rng.below(n);
            let k = self.cum.partition_point(|&c| c <= pick);
            let s = iv.spans[k];
            buf.push(Access { page: s.first_page + self.rng.below(s.pages as u64) as u32, cgroup: 0, flags: self.flags, gap });
            self.done_in += 1;
        }
        self.emitted += buf.len() as u64;
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.nr_pages
    }

    fn progress(&self) -> Option<f64> {
        let total = self.meta.nr_records.unwrap_or(0);
        Some(if total == 0 { 1.0 } else { self.emitted as f64 / total as f64 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(mut s: RegionsSource) -> Vec<Access> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while s.read_batch(&mut buf, 7).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    fn span(first_page: u32, pages: u32, accesses: u64) -> Span {
        Span { first_page, pages, accesses }
    }

    #[test]
    fn counts_pages_and_time_follow_the_intervals() {
        // Interval 0: 100 ms, 30 accesses to pages 0..10 and 10 to pages 20..30;
        // interval 1: 100 ms idle; interval 2: 50 ms, 4 accesses to page 40.
        let ivs = vec![
            Interval { duration_ns: 100_000_000, spans: vec![span(0, 10, 30), span(20, 10, 10)] },
            Interval { duration_ns: 100_000_000, spans: vec![] },
            Interval { duration_ns: 50_000_000, spans: vec![span(40, 1, 4)] },
        ];
        let src = RegionsSource::new(ivs, 41, false, AccessKind::AnonMapped, 7).unwrap();
        assert_eq!(src.meta().nr_records, Some(44));
        let recs = drain(src);
        assert_eq!(recs.len(), 44);
        assert!(recs[..40].iter().all(|a| a.page < 10 || (20..30).contains(&a.page)));
        assert!(recs[40..].iter().all(|a| a.page == 40));
        // Times: record i of interval 0 at (i+1)·2.5 ms, so the 40th ends it at 100 ms;
        // interval 2's first record at 200 ms + 12.5 ms (the idle interval carried).
        let t = |k: usize| recs[..=k].iter().map(|a| a.gap as u64).sum::<u64>();
        assert_eq!(t(0), 2_500);
        assert_eq!(t(39), 100_000);
        assert_eq!(t(40), 212_500);
        assert_eq!(t(43), 250_000);
        assert!(recs.iter().all(|a| a.flags == 0));
    }

    #[test]
    fn populate_writes_every_page_first_and_same_seed_same_records() {
        let ivs = vec![Interval { duration_ns: 1_000_000, spans: vec![span(2, 3, 5)] }];
        let a = drain(RegionsSource::new(ivs.clone(), 6, true, AccessKind::AnonMapped, 1).unwrap());
        assert_eq!(a.len(), 11);
        assert_eq!(a[..6].iter().map(|x| x.page).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5]);
        assert!(a[..6].iter().all(|x| x.flags == flags::WRITE && x.gap == 0));
        let b = drain(RegionsSource::new(ivs.clone(), 6, true, AccessKind::AnonMapped, 1).unwrap());
        assert_eq!(a, b);
        let c = drain(RegionsSource::new(ivs, 6, true, AccessKind::AnonMapped, 2).unwrap());
        assert_ne!(a, c);
    }

    #[test]
    fn span_share_matches_its_accesses() {
        // 90 000 vs 10 000 accesses: the first span's share is 0.9 within a few sigma.
        let ivs = vec![Interval { duration_ns: 1_000_000_000, spans: vec![span(0, 100, 90_000), span(100, 100, 10_000)] }];
        let recs = drain(RegionsSource::new(ivs, 200, false, AccessKind::AnonMapped, 3).unwrap());
        let first = recs.iter().filter(|a| a.page < 100).count() as f64 / recs.len() as f64;
        assert!((first - 0.9).abs() < 0.005, "{first}");
    }

    #[test]
    fn spans_outside_the_pages_are_rejected() {
        let ivs = vec![Interval { duration_ns: 1, spans: vec![span(5, 3, 1)] }];
        let e = RegionsSource::new(ivs, 7, false, AccessKind::AnonMapped, 1).err().unwrap();
        assert!(e.to_string().contains("interval 0 span 0"), "{e}");
    }
}
