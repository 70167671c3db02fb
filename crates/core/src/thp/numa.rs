//! NUMA allocation statistics (mm/vmstat.c `zone_statistics`, v4.20: once per allocation)
//! and the local/remote access cost of a page.

use super::Tc;
use crate::mm::Mm;

/// `zone_statistics(preferred_zone, z)` for an allocation placed on `node` that preferred
/// `preferred` by a task running on `local`: `numa_hit` when the page is on the preferred
/// node, else `numa_miss` (and `numa_foreign` for the preferred one); `numa_local` when on
/// the task's node, else `numa_other`.
pub fn zone_statistics(mm: &mut Mm, preferred: u16, node: u16, local: u16) {
    let s = &mut mm.thp.stat;
    if node == preferred {
        s.count(Tc::NumaHit, 1);
    } else {
        s.count(Tc::NumaMiss, 1);
        s.count(Tc::NumaForeign, 1);
    }
    s.count(if node == local { Tc::NumaLocal } else { Tc::NumaOther }, 1);
}

/// Extra cost of one access by a task on `local` to a page on `node`.
#[inline]
pub fn access_penalty_ns(mm: &Mm, local: u16, node: u16) -> u64 {
    if local == node {
        0
    } else {
        mm.cfg.thp.remote_access_ns
    }
}
