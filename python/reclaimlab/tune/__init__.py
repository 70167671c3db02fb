"""Offline tuning: sweep DAMON_RECLAIM's module parameters over one workload and find the
memory-saving vs. slowdown frontier (``reclaimlab tune damon-reclaim``; docs/tune.md).

::

    from reclaimlab.tune import run_sweep, sysfs_lines
    from reclaimlab.tune.sweep import module_params
    sw = run_sweep({"trace": "app.trace", "memory": "1G", "swap": "zram:1G"},
                   ["min_age=5000000,30000000", "quota_ms=10,50"])
    best = sw.points[sw.knee]           # .saving, .slowdown (%), .params, .counters
    print("\\n".join(sysfs_lines(module_params(best.settings)[0])))
"""

from .pareto import knee, pareto_front
from .sweep import DEFAULT_GRID, Point, Sweep, grid, parse_param, run_sweep
from .sysfs import PARAMS_DIR, sysfs_lines

__all__ = ["run_sweep", "grid", "parse_param", "Point", "Sweep", "DEFAULT_GRID", "pareto_front", "knee",
           "sysfs_lines", "PARAMS_DIR"]
