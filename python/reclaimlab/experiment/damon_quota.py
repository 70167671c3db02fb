"""The DAMON_RECLAIM RFC v3's quota × prioritization matrix (``damon-reclaim-parsec``'s
report): every PARSEC3/SPLASH-2X profile without DAMON_RECLAIM and under each of the
RFC's seven configurations (no quota; 10, 50, 200 ms/s time quotas, each without and
with prioritization), one worker process per profile.

The profiles and the configurations' knob settings are the scenario's rows
(crates/core/src/scenario/parsec.rs, through ``_core``); this module runs the
simulations and forms the cells as the RFC's tooling (damon-tests) does: memory saving =
−(memused_cfg/memused_orig − 1)·100 with memused the time-averaged memory in use,
slowdown = (runtime_cfg/runtime_orig − 1)·100, CPU = kdamond's share of one CPU; the
suite's row (:func:`averages`) from sums over the workloads.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Mapping, Sequence

from .._pool import process_pool

__all__ = ["SCENARIO", "workload_table", "run_table", "averages"]

SCENARIO = "damon-reclaim-parsec"


def _run(cfg, name: str, scale: float, seed: int) -> dict[str, float]:
    """One simulation of profile ``name``: its metrics."""
    from .. import _core

    src = _core.scenario_source(SCENARIO, seed, scale, params={"workload": name})
    sim = _core.Simulation(cfg)
    while not sim.run(src, 1 << 22):
        pass
    return sim.finish()["metrics"]


def workload_table(name: str, scale: float = 1.0, seed: int = 1,
                   settings: Iterable[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """Profile ``name`` without DAMON_RECLAIM and under every configuration (``settings``,
    key=value pairs, apply to all runs): one cell dict per configuration (quota,
    prioritization, memory_saving_pct, slowdown_pct, cpu_pct, and the absolute
    mem_used_avg_bytes, mem_used_avg_orig_bytes, runtime_s, runtime_orig_s)."""
    from .. import _core

    base = _core.scenario_config(SCENARIO, scale)
    base.set("seed", str(seed))
    for k, v in settings:
        base.set(k, v)
    orig = _run(base, name, scale, seed)
    mem0, rt0 = orig.get("mem_used_avg_bytes", 0.0), orig.get("runtime_s", 0.0)
    out = []
    for quota, prio, kv in _core.damon.parsec_configs():
        cfg = base.copy()
        for k, v in kv:
            cfg.set(k, v)
        m = _run(cfg, name, scale, seed)
        mem, rt = m.get("mem_used_avg_bytes", 0.0), m.get("runtime_s", 0.0)
        out.append({
            "quota": quota,
            "prioritization": prio,
            "memory_saving_pct": -(mem / mem0 - 1.0) * 100.0,
            "slowdown_pct": (rt / rt0 - 1.0) * 100.0,
            "cpu_pct": m.get("damon_cpu_pct", 0.0),
            "mem_used_avg_bytes": mem,
            "mem_used_avg_orig_bytes": mem0,
            "runtime_s": rt,
            "runtime_orig_s": rt0,
        })
    return out


def _one(job):
    name, scale, seed, settings = job
    return name, workload_table(name, scale, seed, settings)


def run_table(scale: float = 1.0, seed: int = 1, settings: Mapping[str, str] | None = None, jobs: int | None = None,
              workloads: Sequence[str] | None = None,
              on_done: Callable[[str], None] | None = None) -> dict[str, list[dict[str, Any]]]:
    """{workload: [cell dicts]} for every profile (or ``workloads``)."""
    from .. import _core

    names = list(workloads or _core.damon.parsec_workloads())
    items = sorted((settings or {}).items())
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    out = {}
    todo = [(n, scale, seed, items) for n in names]
    if jobs == 1:
        results = map(_one, todo)
    else:
        pool = process_pool(jobs)
        results = pool.map(_one, todo)
    for name, cells in results:
        out[name] = cells
        if on_done:
            on_done(name)
    if jobs != 1:
        pool.shutdown()
    return {n: out[n] for n in names}


def averages(per_workload: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The RFC's rows, formed as damon-tests' ``perf/_summary_results.sh`` forms the
    "total"/"average" rows the DAMON evaluations quote: memory saving and slowdown from
    the sums over the workloads (−(Σ memused_cfg / Σ memused_orig − 1)·100 and
    (Σ runtime_cfg / Σ runtime_orig − 1)·100, so large and long workloads weigh more),
    kdamond's CPU share as the plain mean."""
    rows = []
    first = next(iter(per_workload.values()))
    for i, cell in enumerate(first):
        vals = [cells[i] for cells in per_workload.values()]
        total = lambda k: sum(v[k] for v in vals)  # noqa: E731
        rows.append(
            {
                "quota": cell["quota"],
                "prioritization": cell["prioritization"],
                "memory_saving_pct": -(total("mem_used_avg_bytes") / total("mem_used_avg_orig_bytes") - 1) * 100,
                "slowdown_pct": (total("runtime_s") / total("runtime_orig_s") - 1) * 100,
                "cpu_pct": total("cpu_pct") / len(vals),
            }
        )
    return rows
