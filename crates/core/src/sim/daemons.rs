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

/// The scheduler tick, `TICK_NSEC` at `CONFIG_HZ=250` (Debian's kernels).
const SCHED_TICK_NS: u64 = 4_000_000;

/// One kernel thread or timed job of the simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Daemon {
    /// A trace's task moving to another CPU (`machine.task_cpus`), before the others run.
    TaskCpu,
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
pub const DAEMONS: [Daemon; 10] = [
    Daemon::TaskCpu,
    Daemon::Kswapd,
    Daemon::Khugepaged,
    Daemon::Kdamond,
    Daemon::DamonRecord,
    Daemon::Flusher,
    Daemon::WritebackDone,
    Daemon::StatsFlush,
    Daemon::VmstatUpdate,
    Daemon::Sampler,
];

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
            Daemon::TaskCpu => self.next_task_cpu().map_or(u64::MAX, |(t, _)| t),
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
            Daemon::TaskCpu => {
                while let Some((_, cpu)) = self.next_task_cpu().filter(|&(t, _)| t <= self.now) {
                    self.task_cpu_moves += 1;
                    self.mm.pcp.move_task(cpu);
                }
            }
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
    /// disk completed by then are applied first), and kcompactd's due work beside it. A
    /// kswapd that shares a task's CPU ([`Self::kswapd_shared_cpu`]) takes turns with it
    /// instead ([`Self::kswapd_take_turns`]).
    pub(super) fn kswapd_catch_up(&mut self) {
        self.end_writeback_due(self.now);
        let cpu = self.mm.pcp.enter_daemon();
        for i in 0..self.kswapd.len() {
            if let Some(c) = self.kswapd_shared_cpu(i) {
                self.kswapd_take_turns(i, c);
            }
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

    /// The CPU node `node`'s kswapd shares with a task, if it does. 6.12 binds kswapd to
    /// its node's CPUs (mm/vmscan.c `kswapd()`: `set_cpus_allowed_ptr(tsk,
    /// cpumask_of_node(pgdat->node_id))`); `machine.cpus` are split evenly over the nodes
    /// (mm/pcp.rs `cpus_of_node`) and a program's tasks run on their node's CPUs in turn
    /// (sim/process.rs `add_task`), a trace's one task on CPU 0. A node with two CPUs or
    /// more leaves kswapd one the task does not use; a node with one shares it with the task
    /// running there, or with one that ran there within a tick (still runnable); a node
    /// without CPUs leaves kswapd unbound. (A two-CPU guest's scheduler keeps kswapd off a
    /// busy workload's CPU too: the workload waited for kswapd at most three times a run on
    /// the traced boots, docs/validation.md.)
    fn kswapd_shared_cpu(&self, node: usize) -> Option<u32> {
        if self.mm.pcp.nr_cpus() as usize >= 2 * self.mm.nr_nodes() {
            return None;
        }
        let cpus = self.mm.cpus_of_node(node as u16);
        if cpus.len() != 1 {
            return None;
        }
        let tick = self.sched_tick();
        let busy = |c: u32| self.procs.cpu_free_at.get(c as usize).is_some_and(|&t| t + tick >= self.now);
        (self.running_cpu() == Some(cpus.start) || busy(cpus.start)).then_some(cpus.start)
    }

    /// The next of `machine.task_cpus` (a trace's task only): when on the workload's
    /// clock, and the CPU.
    fn next_task_cpu(&self) -> Option<(u64, u32)> {
        if !self.procs.tasks.is_empty() {
            return None;
        }
        let &(t, cpu) = self.mm.cfg.task_cpus.get(self.task_cpu_moves)?;
        Some(((t * 1e9 / self.mm.cfg.time_dilation) as u64, cpu))
    }

    /// The scheduler tick on the simulated clock.
    fn sched_tick(&self) -> u64 {
        (SCHED_TICK_NS as f64 / self.mm.cfg.time_dilation) as u64
    }

    /// The CPU of the running task (a trace's: `Pcp::task_cpu`); None for a kernel thread's
    /// work (khugepaged's) or between tasks.
    fn running_cpu(&self) -> Option<u32> {
        if self.procs.tasks.is_empty() {
            return Some(self.mm.pcp.task_cpu);
        }
        self.procs.tasks.get(self.procs.cur).map(|t| t.cpu).filter(|&c| c != crate::sim::process::NO_CPU)
    }

    /// kswapd `i` and the tasks of CPU `cpu` (the kernel's CFS/EEVDF, kernel/sched/fair.c
    /// 6.12): both runnable, they take turns of one scheduler tick each (`CONFIG_HZ` 250,
    /// Debian's: a slice, `sysctl_sched_base_slice` of 0.75–3 ms, ends at the tick after it
    /// runs out), kswapd first — a woken kswapd preempts the task
    /// (`check_preempt_wakeup_fair`). The tick runs on the guest's clock
    /// (`sim.time_dilation`), like kswapd's nap. A turn ends at a batch boundary
    /// (`cond_resched()`, as kswapd beside the task does at the workload's clock) or when
    /// kswapd naps or sleeps; its next turn comes a tick later. The running task, if it is
    /// on `cpu`, waits for kswapd's CPU time; the CPU's other tasks wait for the CPU
    /// (`cpu_free_at`); kswapd's frees go to `cpu`'s per-CPU lists. Each turn starts when
    /// it is due, a tick of the task's after the last, so a task event many ticks long (a
    /// THP's clearing, which `cond_resched()`s between subpages; a long direct reclaim)
    /// holds as many of kswapd's turns as fit in it, run once the event is charged.
    /// Abstracted: the wake-up preempts at once (no wait for the task's tick).
    fn kswapd_take_turns(&mut self, i: usize, cpu: u32) {
        let tick = self.sched_tick();
        let mine = self.running_cpu() == Some(cpu);
        let list_cpu = cpu.min(self.mm.pcp.nr_cpus() - 1);
        let saved = std::mem::replace(&mut self.mm.pcp.cpu, list_cpu);
        while self.kswapd[i].active && self.kswapd[i].clock_ns <= self.now {
            let k = &mut self.kswapd[i];
            if k.next_step().is_none() {
                // The nap ends (on the guest's clock, without the CPU).
                kswapd_step(&mut self.mm, &mut self.policy, k, &mut self.kcompactd[i], self.now);
                continue;
            }
            // The turn starts when it is due: the task has run the tick before it.
            let start = k.clock_ns;
            let (end, cpu0) = (start + tick, k.cpu_ns);
            while k.next_step().is_some() && k.clock_ns < end {
                kswapd_step(&mut self.mm, &mut self.policy, k, &mut self.kcompactd[i], end);
            }
            let ran = k.cpu_ns - cpu0;
            if mine {
                self.now += ran;
                self.rec.off_cpu_ns += ran;
            } else if let Some(free) = self.procs.cpu_free_at.get_mut(cpu as usize) {
                *free = (*free).max(self.now) + ran;
            }
            if k.next_step().is_some() {
                // Then the task's tick.
                k.clock_ns = k.clock_ns.max(start + ran + tick);
            }
        }
        self.mm.pcp.cpu = saved;
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
