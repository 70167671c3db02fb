"""The guest's relative CPU speeds for the simulator: ``validate --cpu-cost measured``.

Under QEMU's TCG the guest's CPU is emulated, and not every kind of work is slowed alike:
a page fault of the workload costs about 2.5 times, kswapd's reclaim of a page 0.6-0.75
times, what the one time dilation gives them (docs/validation.md, "What the idle host
leaves"). Which reclaimer frees a page (kswapd or the task, directly) is a race between the
two, so the split follows their ratio. This module measures both in the guest's boots and
scales the model's reclaim CPU costs so that kswapd's cost per page scanned, relative to
the task's own work, is the guest's:

- the task: the workload's CPU time (``@@wcpu``: its workers' user and system time) less
  the time tasks spent in direct reclaim (``@@dreclaim``), against the model's
  ``task_cpu_s`` less its direct reclaim CPU (``direct_reclaim_s`` − ``reclaim_throttle_s``):
  the same trace's work outside reclaim, so their ratio is the task's own dilation;
- kswapd: its CPU ticks over the workload (``@@kthread``, USER_HZ) per page it scanned
  (``pgscan_kswapd``), against the model's ``kswapd_cpu_s`` per page scanned.

The reclaim costs (:data:`RECLAIM_COSTS`, charged to kswapd and to direct reclaim alike:
it is the same code) are multiplied by (guest kswapd / model kswapd) / (guest task / model
task), each run's figures giving the next run's factor until it changes by less than 5 %
(the model's pages per pass shift with the costs). The task's costs and the time dilation
stay the model's: the dilation's fixed point (:func:`validate.at_guest_dilation`) then maps
the task's work onto the guest's wall clock, and kswapd's with it at the guest's ratio.
Counts are still the comparison; the guest gives speeds, as ``--disk-read measured`` does
for the disk and ``--damon-cost measured`` for kdamond.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from .console import Console
from . import KernelError

#: The model's reclaim CPU costs, scaled together (kswapd's and direct reclaim's work).
RECLAIM_COSTS = ("cost.scan_ns", "cost.rmap_ns", "cost.unmap_ns", "cost.free_ns", "cost.walk_pte_ns",
                 "swap.zram.compress_ns")
#: Runs at most spent finding the factor, and the relative change that ends it.
CPU_COST_RUNS, CPU_COST_TOLERANCE = 4, 0.05
#: Clock ticks of /proc/PID/stat (USER_HZ) in ns.
TICK_NS = 10_000_000


def guest_speeds(consoles: list[Console]) -> dict[str, float]:
    """The boots' mean task CPU outside direct reclaim (s) and kswapd CPU per page scanned
    (ns), both on the guest's wall clock; a :class:`KernelError` if a boot lacks them."""
    if any(c.workload_cpu_ns is None or c.direct_reclaim is None for c in consoles):
        raise KernelError("--cpu-cost measured: a boot did not record the workload's CPU time or its direct "
                          "reclaim (@@wcpu, @@dreclaim: a /wl workload booted since 28 Nov 2026, 21:00 UTC)")
    ticks = [c.kswapd_ticks() for c in consoles]
    if any(t is None for t in ticks):
        raise KernelError("--cpu-cost measured: a boot did not record kswapd's CPU time (@@kthread)")
    mean = statistics.fmean
    task = mean((c.workload_cpu_ns - c.direct_reclaim[1] * 1000) / 1e9 for c in consoles)
    scanned = mean(c.vmstat().get("pgscan_kswapd", 0) for c in consoles)
    out = {"task_cpu_s": task, "kswapd_ticks": mean(ticks), "pgscan_kswapd": scanned,
           "direct_reclaim_s": mean(c.direct_reclaim[1] / 1e6 for c in consoles)}
    per_scan = guest_kswapd_wall_ns_per_scan(out["kswapd_ticks"], scanned)
    return out | ({"kswapd_ns_per_scan": per_scan} if per_scan else {})


def guest_kswapd_wall_ns_per_scan(kswapd_ticks: float | None, scanned: float) -> float | None:
    """The guest kswapd's CPU per page it scanned (wall ns): its ticks (USER_HZ) over
    ``pgscan_kswapd``; None without either."""
    return kswapd_ticks * TICK_NS / scanned if kswapd_ticks is not None and scanned else None


def model_kswapd_wall_ns_per_scan(sim: dict[str, Any]) -> float | None:
    """The model kswapd's CPU per page it scanned on the guest's wall clock (its CPU
    times the run's time dilation); None if it scanned nothing."""
    scanned = sim["vmstat"].get("pgscan_kswapd", 0)
    dilation = float(sim["config"].get("sim.time_dilation", 1))
    return sim["metrics"].get("kswapd_cpu_s", 0.0) * 1e9 * dilation / scanned if scanned else None


def model_speeds(sim: dict[str, Any]) -> dict[str, float]:
    """The same figures of one simulated run, on its own clock."""
    m = sim["metrics"]
    direct_cpu = m.get("direct_reclaim_s", 0.0) - m.get("reclaim_throttle_s", 0.0)
    out = {"task_cpu_s": m.get("task_cpu_s", 0.0) - direct_cpu, "kswapd_cpu_s": m.get("kswapd_cpu_s", 0.0),
           "pgscan_kswapd": sim["vmstat"].get("pgscan_kswapd", 0)}
    if out["pgscan_kswapd"]:
        out["kswapd_ns_per_scan"] = out["kswapd_cpu_s"] * 1e9 / out["pgscan_kswapd"]
    return out


def factor(guest: dict[str, float], model: dict[str, float]) -> float | None:
    """How much the model's reclaim costs must grow so that kswapd's cost per page, in
    units of the task's own work, is the guest's; None if either side's kswapd scanned
    nothing or its task did no work."""
    if not (guest.get("kswapd_ns_per_scan") and model.get("kswapd_ns_per_scan")):
        return None
    if guest["task_cpu_s"] <= 0 or model["task_cpu_s"] <= 0:
        return None
    task = guest["task_cpu_s"] / model["task_cpu_s"]
    return guest["kswapd_ns_per_scan"] / (model["kswapd_ns_per_scan"] * task)


def scaled(config: dict[str, str], k: float) -> dict[str, str]:
    """:data:`RECLAIM_COSTS` of a run's ``config`` times ``k`` (each at least 1 ns)."""
    return {key: str(max(1, round(float(config[key]) * k))) for key in RECLAIM_COSTS if key in config}


def measured(consoles: list[Console], settings: dict[str, str], sim: dict[str, Any],
             simulate: Callable[[dict[str, str]], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str], dict]:
    """The run at the guest's relative speeds, from ``sim`` (the run at the model's costs,
    with ``settings``): ``(the last run, its settings, the figures)``. ``simulate(settings)``
    runs the model at the guest's time dilation. Without a kswapd scan on either side the
    model's run is returned as it is (``factor`` None in the figures)."""
    guest = guest_speeds(consoles)
    base = {key: sim["config"][key] for key in RECLAIM_COSTS if key in sim["config"]}
    runs = [{**model_speeds(sim), "factor": 1.0}]
    k = factor(guest, runs[0])
    if k is None:
        return sim, settings, {"guest": guest, "runs": runs, "factor": None}
    total = 1.0
    for _ in range(CPU_COST_RUNS - 1):
        if abs(k - 1) <= CPU_COST_TOLERANCE:
            break
        total *= k
        settings = {**settings, **scaled(base, total)}
        sim = simulate(settings)
        runs.append({**model_speeds(sim), "factor": total})
        k = factor(guest, runs[-1]) or 1.0
    return sim, settings, {"guest": guest, "runs": runs, "factor": total, "residual": k}
