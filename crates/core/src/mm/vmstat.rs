//! vmstat counters under the kernel's names (`/proc/vmstat`, v6.15 order).
//!
//! Event counters (`enum vm_event_item`) and node/zone state items the model keeps.
//! Gauges (`nr_*`) are read from the machine at report time, not stored here.

macro_rules! vm_events {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// One vm event counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Ev { $($variant),* }
        /// Kernel names, indexed by [`Ev`].
        pub const EV_NAMES: &[&str] = &[$($name),*];
        pub const NR_EV: usize = EV_NAMES.len();
    };
}

vm_events! {
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    WorkingsetNodereclaim => "workingset_nodereclaim",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediate => "nr_vmscan_immediate_reclaim",
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    PgallocDma => "pgalloc_dma",
    PgallocNormal => "pgalloc_normal",
    AllocstallNormal => "allocstall_normal",
    PgskipDma => "pgskip_dma",
    PgskipDma32 => "pgskip_dma32",
    PgskipNormal => "pgskip_normal",
    PgskipMovable => "pgskip_movable",
    Pgfree => "pgfree",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgrefill => "pgrefill",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    SlabsScanned => "slabs_scanned",
    Pageoutrun => "pageoutrun",
    Pgrotated => "pgrotated",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    OomKill => "oom_kill",
    NrThrottledWritten => "nr_throttled_written",
    PgscanDirectThrottle => "pgscan_direct_throttle",
}

impl Ev {
    /// `PGSCAN_SKIP` of zone index `zone_idx` (`__count_zid_vm_events`).
    #[inline]
    pub fn pgskip(zone_idx: u8) -> Ev {
        EV_FROM[Ev::PgskipDma as usize + zone_idx as usize]
    }

    /// `base + file` indexing as the kernel's `WORKINGSET_REFAULT_BASE + file`.
    #[inline(always)]
    pub fn by_type(anon: Ev, file: bool) -> Ev {
        // SAFETY-free: the anon/file pairs are adjacent in the declaration.
        EV_FROM[anon as usize + file as usize]
    }
}

const EV_FROM: [Ev; NR_EV] = {
    use Ev::*;
    [
        WorkingsetRefaultAnon,
        WorkingsetRefaultFile,
        WorkingsetActivateAnon,
        WorkingsetActivateFile,
        WorkingsetRestoreAnon,
        WorkingsetRestoreFile,
        WorkingsetNodereclaim,
        NrDirtied,
        NrWritten,
        NrVmscanWrite,
        NrVmscanImmediate,
        Pgpgin,
        Pgpgout,
        Pswpin,
        Pswpout,
        PgallocDma,
        PgallocNormal,
        AllocstallNormal,
        PgskipDma,
        PgskipDma32,
        PgskipNormal,
        PgskipMovable,
        Pgfree,
        Pgactivate,
        Pgdeactivate,
        Pgfault,
        Pgmajfault,
        Pgrefill,
        PgstealKswapd,
        PgstealDirect,
        PgscanKswapd,
        PgscanDirect,
        PgscanAnon,
        PgscanFile,
        PgstealAnon,
        PgstealFile,
        SlabsScanned,
        Pageoutrun,
        Pgrotated,
        KswapdLowWmarkHitQuickly,
        KswapdHighWmarkHitQuickly,
        OomKill,
        NrThrottledWritten,
        PgscanDirectThrottle,
    ]
};

#[derive(Clone, Debug)]
pub struct VmStat {
    ev: [u64; NR_EV],
}

impl Default for VmStat {
    fn default() -> Self {
        VmStat { ev: [0; NR_EV] }
    }
}

impl VmStat {
    #[inline(always)]
    pub fn count(&mut self, e: Ev, n: u64) {
        self.ev[e as usize] += n;
    }
    #[inline(always)]
    pub fn get(&self, e: Ev) -> u64 {
        self.ev[e as usize]
    }
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        EV_NAMES.iter().copied().zip(self.ev.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn typed_counters_pair_up() {
        assert_eq!(Ev::by_type(Ev::WorkingsetRefaultAnon, true), Ev::WorkingsetRefaultFile);
        assert_eq!(Ev::by_type(Ev::PgscanAnon, true), Ev::PgscanFile);
        assert_eq!(Ev::by_type(Ev::PgstealAnon, false), Ev::PgstealAnon);
        for (i, e) in EV_FROM.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
    }
}
