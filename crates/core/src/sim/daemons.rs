//! The machine's kernel threads and timed jobs behind one interface: each [`Daemon`] says
//! when it next has work ([`Machine::daemon_next_event`]) and does the work due by the
//! workload's clock ([`Machine::daemon_run_due`]). The run loop calls
//! [`Machine::run_events`] once the clock reaches the earliest next event; it runs every
//! daemon in [`DAEMONS`] order (reclaim first, so the others see the memory it freed) and
//! sets the next wake-up. A daemon that sleeps until woken (kswapd, kcompactd) reports
//! `u64::MAX`; the allocator's wake-ups lower `Machine::next_event` directly.

use super::engine::Machine;
use crate::error::Result;
use crate::policy::ReclaimPolicy;
use crate::thp::kcompactd::kswapd_step;

/// One kernel thread or timed job of the simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Daemon {
    /// kswapd and kcompactd of every node (mm/vmscan.c `kswapd`, mm/compaction.c
    /// `kcompactd`, proactive compaction), after the writes the disk completed.
    Kswapd,
    /// khugepaged's scans (mm/khugepaged.c), dormant until an anonymous mapping exists.
    Khugepaged,
    /// DAMON_RECLAIM's kdamond (mm/damon/reclaim.c).
    Kdamond,
    /// The recording kdamond of `sim.damon_record` (snapshots, not reclaim).
    DamonRecord,
    /// The flusher's periodic `wb_writeback` (`dirty_writeback_centisecs`).
    Flusher,
    /// `folio_end_writeback` of the writes the disk has completed.
    WritebackDone,
    /// `flush_memcg_stats_dwork`: the memcg statistics reclaim reads.
    StatsFlush,
    /// `vmstat_update`: the per-CPU page lists' decay (mm/pcp.rs).
    VmstatUpdate,
    /// The time-series sampler (the harness's, not the kernel's).
    Sampler,
}

/// The order [`Machine::run_events`] runs them in.
pub const DAEMONS: [Daemon; 9] =
    [Daemon::Kswapd, Daemon::Khugepaged, Daemon::Kdamond, Daemon::DamonRecord, Daemon::Flusher, Daemon::WritebackDone, Daemon::StatsFlush, Daemon::VmstatUpdate, Daemon::Sampler];

impl<P: ReclaimPolicy> Machine<P> {
    /// Run every daemon's work that is due, then set the next wake-up.
    pub(super) fn run_events(&mut self) -> Result<()> {
        for d in DAEMONS {
            self.daemon_run_due(d)?;
        }
        self.next_event = DAEMONS.iter().map(|&d| self.daemon_next_event(d)).min().unwrap_or(u64::MAX);
        Ok(())
    }

    /// When `d` next has work (`u64::MAX`: asleep until woken).
    pub fn daemon_next_event(&self, d: Daemon) -> u64 {
        match d {
            Daemon::Kswapd => {
                let kswapd = self.kswapd.iter().filter(|k| k.active).map(|k| k.clock_ns);
                let kcompactd = self.kcompactd.iter().flat_map(|k| [k.active.then_some(k.clock), self.proactive.then_some(k.next_proactive)]).flatten();
                kswapd.chain(kcompactd).min().unwrap_or(u64::MAX)
            }
            Daemon::Khugepaged => self.khugepaged.next_scan,
            Daemon::Kdamond => self.damon.as_ref().map_or(u64::MAX, |d| d.next_ns),
            Daemon::DamonRecord => self.damon_rec.as_ref().and_then(|r| r.kdamond.as_ref()).map_or(u64::MAX, |k| k.next_ns),
            Daemon::Flusher => self.mm.wb.next_run,
            Daemon::WritebackDone => self.mm.wb.next_done(),
            Daemon::StatsFlush => self.mm.next_stats_flush,
            Daemon::VmstatUpdate => self.mm.pcp.next_update,
            Daemon::Sampler => self.rec.next_sample,
        }
    }

    /// Do `d`'s work due by the workload's clock. kswapd's ends the run if a reclaimer
    /// invoked the OOM killer.
    pub fn daemon_run_due(&mut self, d: Daemon) -> Result<()> {
        match d {
            Daemon::Kswapd => {
                self.kswapd_catch_up();
                self.check_oom()?;
            }
            Daemon::Khugepaged => {
                let cpu = self.mm.pcp.enter_daemon();
                while self.khugepaged.next_scan <= self.now {
                    crate::sim::khugepaged::khugepaged_scan(self)?;
                }
                self.mm.pcp.cpu = cpu;
            }
            Daemon::Kdamond => self.kdamond_catch_up(),
            Daemon::DamonRecord => self.damon_record_catch_up(),
            Daemon::Flusher => {
                if self.now >= self.mm.wb.next_run {
                    self.mm.wb_writeback(self.now, true, None);
                }
            }
            Daemon::WritebackDone => self.end_writeback_due(self.now),
            Daemon::StatsFlush => self.mm.flush_memcg_stats_due(self.now),
            Daemon::VmstatUpdate => self.mm.vmstat_update_due(self.now),
            Daemon::Sampler => self.rec.sample_due(&self.mm, &self.kswapd, self.now, self.accesses),
        }
        Ok(())
    }

    /// Let every active kswapd run until its clock passes the workload's (writes the
    /// disk completed by then are applied first), and kcompactd's due work beside it.
    pub(super) fn kswapd_catch_up(&mut self) {
        self.end_writeback_due(self.now);
        let cpu = self.mm.pcp.enter_daemon();
        for i in 0..self.kswapd.len() {
            while self.kswapd[i].active && self.kswapd[i].clock_ns <= self.now {
                kswapd_step(&mut self.mm, &mut self.policy, &mut self.kswapd[i], &mut self.kcompactd[i], self.now);
            }
            if self.kcompactd[i].active || self.proactive {
                let kswapd_active = self.kswapd[i].active;
                self.kcompactd[i].run_due(&mut self.mm, self.now, kswapd_active, self.proactive);
            }
        }
        self.mm.pcp.cpu = cpu;
        self.mm.now = self.now;
    }

    /// Run kdamond's steps that are due. Memory in use is integrated up to now first:
    /// what DAMOS pages out counts from this access on.
    fn kdamond_catch_up(&mut self) {
        let Some(d) = self.damon.as_mut() else { return };
        if d.next_ns > self.now {
            return;
        }
        self.rec.account_mem(&self.mm, self.now);
        let psi_us = self.rec.memstall_ns / 1000;
        let cpu = self.mm.pcp.enter_daemon();
        while d.next_ns <= self.now {
            let t = d.next_ns;
            self.mm.now = t;
            d.step(&mut self.mm, &mut self.policy, t, psi_us);
            Self::damon_record_reclaim(&mut self.damon_rec, d, t);
        }
        self.mm.pcp.cpu = cpu;
        self.mm.now = self.now;
    }
}
