"""``reclaimlab run damon-reclaim-parsec``: the DAMON_RECLAIM RFC v3 cover letter's table.

Every PARSEC3/SPLASH-2X profile runs without DAMON_RECLAIM and under the DAMON_RECLAIM RFC v3 cover letter's seven
configurations (no quota; 10, 50, 200 ms/s time quotas, each without and with
prioritization), in worker processes. The table gives memory saving, runtime slowdown
and DAMON_RECLAIM's CPU share over the suite, computed as the DAMON_RECLAIM RFC v3 cover letter's tooling
(damon-tests) does: memory saving = −(Σ memused_cfg/Σ memused_orig − 1)·100 with
memused the time-averaged memory in use, slowdown = (Σ runtime_cfg/Σ runtime_orig − 1)·100,
both summed over the workloads, and the mean CPU share; ``--detail`` adds one table per
workload (its own ratios).
"""

from __future__ import annotations

import json
import os
import sys

from .._pool import process_pool
from . import vocab
from ._table import table

#: The DAMON_RECLAIM RFC v3 cover letter's own numbers (SeongJae Park, 2021), for the side-by-side column.
SEED = {
    ("N", False): (47.16, 5.4, 11.62),
    ("10ms/s", False): (4.55, 2.51, 1.78),
    ("50ms/s", False): (40.84, 4.53, 5.7),
    ("200ms/s", False): (48.42, 4.69, 10.92),
    ("10ms/s", True): (0.77, 1.84, 1.37),
    ("50ms/s", True): (40.34, 3.38, 5.16),
    ("200ms/s", True): (47.99, 5.1, 10.41),
}


def _one(job):
    from reclaimlab import _core

    name, scale, seed, settings = job
    return name, _core.damon.parsec_workload_table(name, scale, seed, settings)


def run_table(scale: float = 1.0, seed: int = 1, settings: dict | None = None, jobs: int | None = None, workloads=None, on_done=None):
    """{workload: [cell dicts]} for every profile (or ``workloads``)."""
    from reclaimlab import _core

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


def averages(per_workload: dict) -> list[dict]:
    """The DAMON_RECLAIM RFC v3 cover letter's rows, formed as damon-tests' ``perf/_summary_results.sh`` forms the
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


def _rows(cells, seed_cols: bool):
    out = []
    for c in cells:
        row = [c["quota"], "Y" if c["prioritization"] else "N", f"{c['memory_saving_pct']:.2f}%", f"{c['slowdown_pct']:.2f}%", f"{c['cpu_pct']:.2f}%"]
        if seed_cols:
            s = SEED[(c["quota"], c["prioritization"])]
            row += [f"{s[0]}%", f"{s[1]}%", f"{s[2]}%"]
        out.append(row)
    return out


def main(args, settings: dict) -> int:
    import time

    scale = 1.0 if args.scale is None else float(args.scale)
    seed = 1 if args.seed is None else int(args.seed)
    if args.memory is not None:
        settings = {**settings, "machine.memory": str(args.memory)}
    vocab.check_jobs(args.jobs)
    start = time.monotonic()
    chatty = not args.quiet and sys.stderr.isatty()
    n = [0]

    def done(name):
        n[0] += 1
        if chatty:
            print(f"  [{n[0]}/24] {name} ({time.monotonic() - start:.1f} s)", file=sys.stderr)

    per = run_table(scale, seed, settings, args.jobs, on_done=done)
    avg = averages(per)
    if args.json:
        print(json.dumps({"scenario": "damon-reclaim-parsec", "scale": scale, "average": avg, "workloads": per}))
        return 0
    head = ["time quota", "prioritization", "memory_saving", "slowdown", "cpu_util", "RFC: saving", "RFC: slowdown", "RFC: cpu"]
    print(f"damon-reclaim-parsec (after the DAMON_RECLAIM RFC v3, LKML Jul 2021): DAMON_RECLAIM over {len(per)} workloads (sums, as damon-tests), scale {scale:g}")
    print(table(_rows(avg, True), head, right=range(2, 8)))
    if args.detail:
        for name, cells in per.items():
            print(f"\n{name}")
            print(table(_rows(cells, False), head[:5], right=range(2, 5)))
    print(f"\n({time.monotonic() - start:.1f} s)", file=sys.stderr)
    return 0
