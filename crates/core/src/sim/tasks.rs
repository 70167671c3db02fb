//! A workload of concurrent tasks ([`TaskSource`]: TeraSort's job threads) on the
//! machine's CPUs: each task has its own clock, and a task that stalls (a swap-in, a file
//! read, direct reclaim, `balance_dirty_pages`) delays itself, not the others — where a
//! trace replays one interleaving on one clock and every stall stops the whole workload.
//!
//! The engine runs the runnable task with the earliest clock through the ordinary access
//! path, on the CPU that frees first (`machine.cpus`, one pool: a work-conserving
//! scheduler, as CFS's load balancing is over time), starting when both are ready, until
//! its clock is [`TASK_QUANTUM_NS`] past the next task's (or a task starts or ends). The
//! task's clock then stands at the end of its slice, stalls included; the CPU is busy only
//! for the slice's CPU work — the records' gaps (the task's own computation) and its direct
//! reclaim — so a task waiting for I/O or throttled leaves its CPU to another. Work that a
//! task's progress starts in another slot (a job's reduce after its last map) starts no
//! earlier than that task's clock. The machine's clock is the running task's, so it steps
//! back by up to a quantum (and one access's stall) between tasks, as a program's does
//! (sim/process.rs); daemons run on their own clocks. The run ends at the latest task's
//! clock (the last job's end).
//!
//! The baseline (`baseline_runtime_s`, the run with unlimited memory: the CPU work and the
//! first touches) schedules the same slices, in the same order, each on the CPU that frees
//! first in that schedule.
//!
//! Abstractions: the per-CPU page lists are the trace's one task's (`TASK_CPU`) whatever
//! CPU a task runs on; a kswapd never waits for the tasks' CPUs unless the machine has one
//! CPU per node (sim/daemons.rs, as for a trace); a slice is never preempted. Each task
//! has its own `balance_dirty_pages` pause state (`current->dirty_paused_when`), and the
//! wb's rate limit is estimated from all of them (mm/writeback.rs).

use super::engine::Machine;
use crate::error::{Error, Result};
use crate::policy::ReclaimPolicy;
use reclaimlab_trace::{AccessSource, TaskSource};

/// How far a task's clock runs past the next task's before the engine switches (ns).
pub const TASK_QUANTUM_NS: u64 = 1_000_000;
/// Accesses asked of the source at a time.
const TASK_CHUNK: usize = 32;

/// The tasks' and CPUs' clocks (empty until a task source runs).
#[derive(Default)]
pub struct TaskClocks {
    /// Per task: when it can run next (ns).
    clock: Vec<u64>,
    /// Per task: its clock in the stall-free schedule (the baseline).
    base: Vec<u64>,
    /// Per task: runnable at the last look.
    runnable: Vec<bool>,
    /// Per CPU: when it is free, in the run and in the baseline.
    cpu_free: Vec<u64>,
    base_cpu_free: Vec<u64>,
    /// The source's [`TaskSource::changes`] at the last look.
    changes: u64,
    /// The latest task clock, and the baseline's.
    end: u64,
    base_end: u64,
}

impl TaskClocks {
    /// Size for `tasks` on `cpus` (once).
    fn init(&mut self, tasks: usize, cpus: usize) {
        if self.clock.len() != tasks {
            self.clock = vec![0; tasks];
            self.base = vec![0; tasks];
            self.runnable = vec![false; tasks];
            self.cpu_free = vec![0; cpus.max(1)];
            self.base_cpu_free = vec![0; cpus.max(1)];
            self.changes = u64::MAX;
        }
    }

    /// Look at which tasks are runnable after task `waker` ran (if any started or ended
    /// since the last look): a task newly runnable starts no earlier than `waker`.
    fn look(&mut self, ts: &dyn TaskSource, waker: Option<usize>) {
        if ts.changes() == self.changes {
            return;
        }
        self.changes = ts.changes();
        let (wc, wb) = waker.map_or((0, 0), |w| (self.clock[w], self.base[w]));
        for t in 0..self.clock.len() {
            let r = ts.is_runnable(t);
            if r && !self.runnable[t] {
                self.clock[t] = self.clock[t].max(wc);
                self.base[t] = self.base[t].max(wb);
            }
            self.runnable[t] = r;
        }
    }

    /// The earliest clock of the runnable tasks other than `t`.
    fn others_clock(&self, t: usize) -> Option<u64> {
        (0..self.clock.len()).filter(|&u| u != t && self.runnable[u]).map(|u| self.clock[u]).min()
    }

    /// The runnable task with the earliest clock (the lowest id on ties).
    fn next(&self) -> Option<usize> {
        (0..self.clock.len()).filter(|&t| self.runnable[t]).min_by_key(|&t| (self.clock[t], t))
    }

    /// The CPU that frees first in `free` (the lowest on ties).
    fn first_free(free: &[u64]) -> usize {
        (0..free.len()).min_by_key(|&c| (free[c], c)).unwrap_or(0)
    }
}

impl<P: ReclaimPolicy> Machine<P> {
    /// [`crate::sim::Engine::run`] for a source of tasks: up to about `max_accesses`
    /// accesses (whole slices); true when every task finished.
    pub(super) fn run_tasks(&mut self, src: &mut dyn AccessSource, max_accesses: u64) -> Result<bool> {
        if !src.meta().ops.is_empty() {
            return Err(Error::invalid("a workload of tasks carries no trace ops (memory.reclaim writes, madvise)"));
        }
        self.take_layout(src)?;
        let ts = src.tasks().expect("run_tasks is called for a source of tasks");
        let mut c = std::mem::take(&mut self.tasks);
        c.init(ts.nr_tasks(), self.mm.pcp.nr_cpus() as usize);
        let mut buf = std::mem::take(&mut self.buf);
        let result = self.run_slices(ts, &mut c, &mut buf, max_accesses);
        self.buf = buf;
        self.now = self.now.max(c.end);
        self.rec.baseline_ns = c.base_end;
        self.tasks = c;
        result
    }

    fn run_slices(&mut self, ts: &mut dyn TaskSource, c: &mut TaskClocks, buf: &mut Vec<reclaimlab_trace::Access>, max_accesses: u64) -> Result<bool> {
        c.look(ts, None);
        let mut done = 0u64;
        while done < max_accesses {
            let Some(t) = c.next() else { return self.policy.take_error().map_or(Ok(true), Err) };
            let cpu = TaskClocks::first_free(&c.cpu_free);
            let start = c.clock[t].max(c.cpu_free[cpu]);
            let horizon = c.others_clock(t).map_or(u64::MAX, |o| o.max(start) + TASK_QUANTUM_NS);
            self.now = start;
            self.current_task = t;
            let (reclaim0, base0) = (self.rec.direct_reclaim_ns, self.rec.baseline_ns);
            let mut work = 0;
            loop {
                let n = ts.run_task(t, buf, TASK_CHUNK)?;
                for i in 0..n {
                    crate::mm::prefetch::prefetch_access(&self.mm, &buf[..n], i);
                    work += self.access_dt(buf[i]);
                    self.access(buf[i], &buf[i + 1..n])?;
                }
                done += n as u64;
                if n == 0 || self.now >= horizon || done >= max_accesses || ts.changes() != c.changes {
                    break;
                }
            }
            // The slice's own computation (the records' gaps) and its direct reclaim hold
            // the CPU; the rest was waiting. In the baseline the slice takes its work and
            // its first touches (`access` adds both to the baseline), its CPU the work.
            let first = self.rec.baseline_ns - base0;
            self.rec.baseline_ns = base0;
            c.clock[t] = self.now;
            c.cpu_free[cpu] = start + work + (self.rec.direct_reclaim_ns - reclaim0);
            c.end = c.end.max(self.now);
            let bcpu = TaskClocks::first_free(&c.base_cpu_free);
            let bstart = c.base[t].max(c.base_cpu_free[bcpu]);
            c.base[t] = bstart + first;
            c.base_cpu_free[bcpu] = bstart + work;
            c.base_end = c.base_end.max(c.base[t]);
            c.look(ts, Some(t));
            if let Some(e) = self.policy.take_error() {
                return Err(e);
            }
        }
        Ok(false)
    }
}
