//! Host wall-clock time spent in MGLRU's aging (`try_to_inc_max_seq`: the page-table
//! walk and `inc_max_seq`) and eviction (`evict_folios`: scan, sort, isolate,
//! `shrink_folio_list` with look-around, putback), for the engine benchmark's split of
//! the simulator's own cost. Per thread, and host-side only: it is never part of a
//! run's results, which must be the same bytes on every run.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static AGING_NS: Cell<u64> = const { Cell::new(0) };
    static EVICTION_NS: Cell<u64> = const { Cell::new(0) };
}

/// Which path a timed section belongs to.
#[derive(Clone, Copy)]
pub(super) enum Path {
    Aging,
    Eviction,
}

/// Run `f`, adding its host time to `path`'s total on this thread.
#[inline]
pub(super) fn timed<R>(path: Path, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    let ns = t.elapsed().as_nanos() as u64;
    let cell = match path {
        Path::Aging => &AGING_NS,
        Path::Eviction => &EVICTION_NS,
    };
    cell.with(|c| c.set(c.get() + ns));
    r
}

/// This thread's (aging, eviction) host time since the last call; resets both.
pub fn take() -> (Duration, Duration) {
    let a = AGING_NS.with(|c| c.replace(0));
    let e = EVICTION_NS.with(|c| c.replace(0));
    (Duration::from_nanos(a), Duration::from_nanos(e))
}
