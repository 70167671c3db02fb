//! DAMON snapshots of a run, for damo (`sim.damon_record`): a monitoring-only kdamond
//! (no schemes) watches the workload and keeps, per aggregation interval, each region's
//! `[start, end)`, `nr_accesses` and `age` — what the kernel's `damon_aggregated`
//! tracepoint reports and `damo record` stores (`python/reclaimlab/damo_record.py`
//! writes them in damo's format).
//!
//! - `vaddr`: one target, the trace's page-id space (address = page id × PAGE_SIZE, as
//!   [`crate::damon::ops_vaddr`]), monitored as `damo record --regions 0-END` would: one
//!   range from 0 to the highest page the trace declares, re-set (`damon_set_regions`)
//!   whenever it grows. (The three-region VMA layout of a real process does not apply
//!   to a trace whose pages are mostly contiguous.)
//! - `paddr`: one target, all of the machine's frames (`damo record paddr`).
//! - `reclaim`: no kdamond of its own: DAMON_RECLAIM's kdamond's regions after each of its
//!   aggregations, as the `damon_aggregated` tracepoint shows that context's (what
//!   `reclaimlab validate --damon-reclaim` compares with the guest's); it perturbs nothing.
//!
//! DAMON's default attributes (spec D.1: 5 ms sampling, 100 ms aggregation, 10..1000
//! regions). The snapshot is taken right after the aggregation step, from each region's
//! `last_nr_accesses` (the window just completed) and age; the step's split may already
//! have cut a region in two, and both pieces carry its values. The recorder's kdamond
//! runs on its own clock and its CPU time is not charged anywhere; it shares DAMON's
//! accessed bit with DAMON_RECLAIM's kdamond, so with both on each sees the other's
//! checks, as two DAMON contexts on the same memory do in the kernel.

use crate::config::DamonRecordMode;
use crate::damon::attrs::DamonAttrs;
use crate::damon::damos::action::OpsKind;
use crate::damon::region::{damon_apply_min_nr_regions, damon_set_regions, DamonRegion, DamonTarget};
use crate::damon::Kdamond;
use crate::policy::ReclaimPolicy;
use crate::sim::engine::Machine;
use reclaimlab_trace::{PAGE_SHIFT, PAGE_SIZE};

/// One aggregation interval of one target: `regions` are `(start, end, nr_accesses, age)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DamonSnapshot {
    pub target: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub regions: Vec<(u64, u64, u32, u32)>,
}

/// The recording kdamond and what it recorded.
pub struct DamonRecorder {
    /// The recording kdamond (None in `reclaim` mode: DAMON_RECLAIM's is recorded).
    pub kdamond: Option<Kdamond>,
    pub mode: DamonRecordMode,
    /// End of the monitored range (bytes) as last set.
    range_end: u64,
    seen_aggregations: u64,
    pub snapshots: Vec<DamonSnapshot>,
}

impl DamonRecorder {
    /// A recorder for `mode` (None when off), started at time 0.
    pub fn new(mode: DamonRecordMode, seed: u64) -> Option<Self> {
        let ops = match mode {
            DamonRecordMode::Off => return None,
            DamonRecordMode::Vaddr => Some(OpsKind::Vaddr),
            DamonRecordMode::Paddr => Some(OpsKind::Paddr),
            DamonRecordMode::Reclaim => None,
        };
        // No ops `update` callback: the range is re-set from the engine (below).
        let attrs = DamonAttrs { ops_update_interval: 0, ..DamonAttrs::default() };
        let kdamond = ops.map(|ops| Kdamond::new(attrs, ops, vec![DamonTarget::default()], Vec::new(), seed ^ 0xDA3D_0000_0000_0002, 0));
        Some(DamonRecorder { kdamond, mode, range_end: 0, seen_aggregations: 0, snapshots: Vec::new() })
    }

    /// Set the target's range to `[0, end)` if it grew (`damon_set_regions` keeps the
    /// regions inside and their counters).
    fn set_range(k: &mut Kdamond, range_end: &mut u64, end: u64) {
        if end > *range_end {
            *range_end = end;
            let t = &mut k.targets[0];
            if t.regions.is_empty() {
                t.regions.push(DamonRegion::new(0, end));
            } else {
                damon_set_regions(t, &[(0, end)], PAGE_SIZE);
            }
            k.sz_limit = damon_apply_min_nr_regions(&mut k.targets, k.attrs.min_nr_regions, PAGE_SIZE);
        }
    }

    /// Keep the snapshot of an aggregation of `k` that its last step completed.
    fn take_snapshot(&mut self, k: &Kdamond, end_ns: u64) {
        if k.nr_aggregations == self.seen_aggregations {
            return;
        }
        self.seen_aggregations = k.nr_aggregations;
        let aggr_ns = k.attrs.aggr_interval * 1000;
        for (i, t) in k.targets.iter().enumerate() {
            self.snapshots.push(DamonSnapshot {
                target: i as u32,
                start_ns: end_ns.saturating_sub(aggr_ns),
                end_ns,
                regions: t.regions.iter().map(|r| (r.start, r.end, r.last_nr_accesses, r.age)).collect(),
            });
        }
    }
}

impl<P: ReclaimPolicy> Machine<P> {
    /// Run the recording kdamond's due steps, keeping each aggregation's snapshot.
    pub(crate) fn damon_record_catch_up(&mut self) {
        let Some(r) = self.damon_rec.as_mut() else { return };
        let Some(mut k) = r.kdamond.take() else { return };
        if k.next_ns <= self.now {
            let end = match r.mode {
                DamonRecordMode::Paddr => (self.mm.pfn_end as u64) << PAGE_SHIFT,
                _ => (self.mm.pages.trace_len() as u64) << PAGE_SHIFT,
            };
            DamonRecorder::set_range(&mut k, &mut r.range_end, end);
            while k.next_ns <= self.now {
                let t = k.next_ns;
                self.mm.now = t;
                k.step(&mut self.mm, &mut self.policy, t, 0);
                r.take_snapshot(&k, t);
            }
            self.mm.now = self.now;
        }
        r.kdamond = Some(k);
    }

    /// In `reclaim` mode, keep DAMON_RECLAIM's kdamond's snapshot after its step at `t`.
    #[inline]
    pub(super) fn damon_record_reclaim(rec: &mut Option<DamonRecorder>, k: &Kdamond, t: u64) {
        if let Some(r) = rec.as_mut().filter(|r| r.mode == DamonRecordMode::Reclaim) {
            r.take_snapshot(k, t);
        }
    }

    /// The snapshots recorded so far (moved out).
    pub(crate) fn take_damon_snapshots(&mut self) -> Vec<DamonSnapshot> {
        self.damon_rec.as_mut().map(|r| std::mem::take(&mut r.snapshots)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;
    use reclaimlab_trace::gen::regions::{Interval, RegionsSource, Span};
    use reclaimlab_trace::AccessKind;

    /// 2 s of a 10 MiB workload (2560 pages, all written at time 0) whose pages
    /// 768..1280 get 24 000 random accesses per 100 ms, i.e. each page ~4.7 times per
    /// 5 ms sampling interval; the rest is never touched again.
    fn run(mode: &str) -> (Vec<DamonSnapshot>, u64) {
        run_with(mode, &[]).0
    }

    /// The snapshots, the frames, and the run's metrics.
    type Run = ((Vec<DamonSnapshot>, u64), Vec<(String, f64)>);

    fn run_with(mode: &str, extra: &[(&str, &str)]) -> Run {
        let mut cfg = SimConfig::default();
        for (k, v) in [("machine.memory", "64M"), ("policy", "classic@6.15"), ("sim.damon_record", mode)].iter().chain(extra) {
            cfg.set(k, v).unwrap();
        }
        let ivs = (0..20).map(|_| Interval { duration_ns: 100_000_000, spans: vec![Span { first_page: 768, pages: 512, accesses: 24_000 }] }).collect();
        let mut src = RegionsSource::new(ivs, 2560, true, AccessKind::AnonMapped, 5).unwrap();
        let mut e = crate::sim::build(&cfg).unwrap();
        while !e.run(&mut src, u64::MAX).unwrap() {}
        let snaps = e.take_damon_snapshots();
        let frames = cfg.memory_bytes / PAGE_SIZE;
        let metrics = e.finish().metrics;
        ((snaps, frames), metrics)
    }

    #[test]
    fn vaddr_snapshots_show_the_hot_range() {
        let (snaps, _) = run("vaddr");
        // One snapshot per 100 ms aggregation over the 2 s run (the last access is at 2 s).
        assert_eq!(snaps.len(), 20);
        for (i, s) in snaps.iter().enumerate() {
            assert_eq!((s.target, s.start_ns, s.end_ns), (0, i as u64 * 100_000_000, (i as u64 + 1) * 100_000_000));
            // The regions tile [0, 10 MiB).
            assert_eq!(s.regions.first().unwrap().0, 0);
            assert_eq!(s.regions.last().unwrap().1, 2560 * PAGE_SIZE);
            assert!(s.regions.windows(2).all(|w| w[0].1 == w[1].0));
        }
        let last = &snaps[19].regions;
        let (lo, hi) = (768 * PAGE_SIZE, 1280 * PAGE_SIZE);
        for &(s, e, nr, age) in last {
            if s >= lo && e <= hi {
                assert!(nr >= 15, "hot region [{s}, {e}) nr_accesses {nr}");
            } else if e <= lo || s >= hi {
                assert_eq!(nr, 0, "cold region [{s}, {e})");
                assert!(age >= 5, "cold region [{s}, {e}) age {age}");
            }
        }
        assert!(last.len() >= 10 && last.len() <= 1000);
    }

    #[test]
    fn paddr_covers_every_frame_and_off_keeps_nothing() {
        let (snaps, frames) = run("paddr");
        assert_eq!(snaps.len(), 20);
        assert_eq!(snaps[19].regions.last().unwrap().1, frames * PAGE_SIZE);
        // Some physical range is hot: the frames the hot pages landed in.
        assert!(snaps[19].regions.iter().any(|r| r.2 >= 15));
        assert!(run("off").0.is_empty());
    }

    /// `reclaim` records DAMON_RECLAIM's own regions, one snapshot per aggregation, and
    /// changes nothing the module does.
    #[test]
    fn reclaim_records_the_modules_own_regions_and_perturbs_nothing() {
        let dr = [
            ("damon_reclaim.enabled", "Y"),
            ("damon_reclaim.min_age", "500000"),
            ("damon_reclaim.wmarks_high", "1000"),
            ("damon_reclaim.wmarks_mid", "999"),
            ("damon_reclaim.wmarks_low", "0"),
            ("swap.device", "zram"),
            ("swap.size", "32M"),
        ];
        let ((snaps, frames), with) = run_with("reclaim", &dr);
        let ((none, _), without) = run_with("off", &dr);
        assert!(none.is_empty());
        assert_eq!(with, without, "recording changed the run");
        let tried = with.iter().find(|m| m.0 == "bytes_reclaim_tried_regions").unwrap().1;
        assert!(tried > 0.0);
        // One per aggregation: 100 ms each, more when the scheme's actions delay kdamond's
        // next sample (kdamond_fn's single loop).
        assert!((18..=20).contains(&snaps.len()), "{} snapshots in 2 s", snaps.len());
        assert!(snaps.windows(2).all(|w| w[1].end_ns - w[0].end_ns >= 100_000_000));
        for s in &snaps {
            assert_eq!(s.end_ns - s.start_ns, 100_000_000);
            assert_eq!(s.regions.last().unwrap().1, frames * PAGE_SIZE);
            assert!(s.regions.windows(2).all(|w| w[0].1 == w[1].0));
        }
        // The hot frames are found, and the scheme's pageouts reset ages (min_age: 5 aggregations).
        let last = &snaps.last().unwrap().regions;
        assert!(last.iter().any(|r| r.2 >= 15));
        assert!(last.iter().all(|r| r.2 > 0 || r.3 <= 12), "{last:?}");
        let mut c = SimConfig::default();
        c.set("sim.damon_record", "reclaim").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("damon_reclaim.enabled=Y"));
    }
}
