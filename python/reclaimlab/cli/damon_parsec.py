"""``reclaimlab run`` of a scenario whose report is ``damon-quota``
(``damon-reclaim-parsec``): the DAMON_RECLAIM RFC v3 cover letter's table.

The experiment harness runs the matrix (:mod:`reclaimlab.experiment.damon_quota`: every
profile without DAMON_RECLAIM and under the RFC's seven configurations, in worker
processes); this prints the suite's row beside the RFC's own numbers, and with
``--detail`` one table per workload (its own ratios).
"""

from __future__ import annotations

import json
import sys

from ..experiment.damon_quota import SCENARIO, averages, run_table
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
        print(json.dumps({"scenario": SCENARIO, "scale": scale, "average": avg, "workloads": per}))
        return 0
    head = ["time quota", "prioritization", "memory_saving", "slowdown", "cpu_util", "RFC: saving", "RFC: slowdown", "RFC: cpu"]
    print(f"{SCENARIO} (after the DAMON_RECLAIM RFC v3, LKML Jul 2021): DAMON_RECLAIM over {len(per)} workloads (sums, as damon-tests), scale {scale:g}")
    print(table(_rows(avg, True), head, right=range(2, 8)))
    if args.detail:
        for name, cells in per.items():
            print(f"\n{name}")
            print(table(_rows(cells, False), head[:5], right=range(2, 5)))
    print(f"\n({time.monotonic() - start:.1f} s)", file=sys.stderr)
    return 0
