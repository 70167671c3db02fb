"""Offline tuning of DAMON_RECLAIM: replay one workload under a grid of module-parameter
settings and measure each against the same workload without DAMON_RECLAIM.

Each point runs the workload with ``damon_reclaim.enabled=true`` and its parameters;
the baseline runs it with DAMON_RECLAIM off, everything else equal. As SeongJae Park's
DAMON_RECLAIM RFC v3 (LKML, Jul 2021; https://github.com/sjp38/linux/releases/tag/damon_reclaim/rfc/v3)
measures them (its table's columns):

- ``memory_saving_pct`` = 100 · (1 − mem_used_avg / mem_used_avg of the baseline): the
  time-averaged system memory in use (LRU pages and the zram pool), "entire system
  memory footprint";
- ``slowdown_pct`` = 100 · (runtime / runtime of the baseline − 1);
- ``damon_cpu_pct`` = 100 · kdamond's simulated CPU time / runtime (the engine's metric).

The runs go to worker processes (the experiment harness's local pool, which retries a
run whose worker died) with a progress bar.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..exceptions import ConfigError, ReclaimlabError

__all__ = ["DEFAULT_GRID", "Point", "Sweep", "parse_param", "grid", "run_sweep", "COUNTERS"]

MIB = 1 << 20

#: The default grid (kernel units: µs, ms, bytes, per-mille). ``wmarks`` is
#: ``high/mid/low``: the kernel default 500/400/200 (active between 20 % and 40-50 %
#: free memory) and 1000/1000/0 (always active).
DEFAULT_GRID: dict[str, list[str]] = {
    "min_age": ["1000000", "5000000", "30000000", "120000000"],
    "quota_ms": ["10", "50", "200"],
    "quota_sz": [str(128 * MIB), str(1024 * MIB)],
    "wmarks": ["500/400/200", "1000/1000/0"],
}

#: DAMON_RECLAIM's read-only statistics parameters (spec F), reported per point.
COUNTERS = ("nr_reclaim_tried_regions", "bytes_reclaim_tried_regions", "nr_reclaimed_regions",
            "bytes_reclaimed_regions", "nr_quota_exceeds")

PREFIX = "damon_reclaim."


def _value(key: str, text: str) -> str:
    """One swept value: sizes of ``*_sz`` may carry K/M/G suffixes; ``wmarks`` is H/M/L."""
    text = text.strip()
    if not text:
        raise ConfigError(f"--param {key}: empty value")
    if key == "wmarks":
        parts = text.split("/")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            raise ConfigError(f"--param wmarks: expected HIGH/MID/LOW per-mille, got '{text}'")
        h, m, lo = (int(p) for p in parts)
        if not (h >= m >= lo) or h > 1000:
            raise ConfigError(f"--param wmarks: need 1000 >= high >= mid >= low, got '{text}'")
        return f"{h}/{m}/{lo}"
    if key.endswith("_sz") and text[-1:].upper() in "KMGT" and not text.isdigit():
        from .. import _core

        return str(_core.parse_size(text))
    return text


def parse_param(spec: str) -> tuple[str, list[str]]:
    """``KEY=v1,v2,...`` → (KEY, values). KEY is a DAMON_RECLAIM parameter (``min_age``),
    ``wmarks``, or any full config key with a dot (``vm.swappiness``)."""
    key, sep, vals = spec.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--param expects KEY=v1,v2,..., got '{spec}'")
    if key.startswith(PREFIX):
        key = key[len(PREFIX):]
    values = [_value(key, v) for v in vals.split(",")]
    if len(set(values)) != len(values):
        raise ConfigError(f"--param {key}: a value is repeated")
    return key, values


def grid(params: Sequence[str] = (), defaults: Mapping[str, list[str]] = DEFAULT_GRID) -> tuple[list[str], list[dict[str, str]]]:
    """The axes and the points (one dict axis → value each, in row-major order) of the
    default grid with ``--param`` axes replacing or adding to it."""
    axes = {k: list(v) for k, v in defaults.items()}
    for spec in params:
        k, vs = parse_param(spec)
        axes[k] = vs
    names = list(axes)
    points = [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]
    return names, points


def point_settings(point: Mapping[str, str]) -> dict[str, str]:
    """Config keys of a point: DAMON_RECLAIM on, its parameters under ``damon_reclaim.``."""
    out = {PREFIX + "enabled": "true"}
    for k, v in point.items():
        if k == "wmarks":
            h, m, lo = v.split("/")
            out.update({PREFIX + "wmarks_high": h, PREFIX + "wmarks_mid": m, PREFIX + "wmarks_low": lo})
        elif "." in k:
            out[k] = v
        else:
            out[PREFIX + k] = v
    return out


def module_params(settings: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The DAMON_RECLAIM settings among config ``settings`` (prefix removed), split into
    the kernel's module parameters and the simulator-only ones (``quota_weight_*``)."""
    from .sysfs import DEFAULTS

    ours = {k[len(PREFIX):]: v for k, v in settings.items() if k.startswith(PREFIX) and k != PREFIX + "enabled"}
    return ({k: v for k, v in ours.items() if k in DEFAULTS}, {k: v for k, v in ours.items() if k not in DEFAULTS})


@dataclass
class Point:
    """One sweep point and what it measured."""

    index: int
    params: dict[str, str]
    settings: dict[str, str]
    metrics: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)

    @property
    def saving(self) -> float:
        return self.metrics["memory_saving_pct"]

    @property
    def slowdown(self) -> float:
        return self.metrics["slowdown_pct"]


@dataclass
class Sweep:
    """A finished sweep: the workload, the baseline's metrics, every point, the
    frontier (indices by increasing slowdown) and the knee."""

    workload: str
    axes: list[str]
    baseline: dict[str, float]
    points: list[Point]
    front: list[int]
    knee: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "axes": self.axes,
            "baseline": self.baseline,
            "points": [{"index": p.index, "params": p.params, "metrics": p.metrics, "counters": p.counters}
                       for p in self.points],
            "frontier": self.front,
            "knee": self.knee,
        }


def _find(raw: Mapping[str, Any], name: str) -> float | None:
    for part in ("metrics", "vmstat"):
        d = raw.get(part) or {}
        for key in (name, PREFIX + name):
            if key in d:
                return float(d[key])
    return None


def measure(raw: Mapping[str, Any], base: Mapping[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """The DAMON_RECLAIM RFC v3 cover letter's three numbers of one run against the baseline's metrics, plus the
    run's own runtime and memory; and DAMON_RECLAIM's counters."""
    m = raw["metrics"]
    mem, mem0 = float(m["mem_used_avg_bytes"]), float(base["mem_used_avg_bytes"])
    rt, rt0 = float(m["runtime_s"]), float(base["runtime_s"])
    out = {
        "memory_saving_pct": 100.0 * (1.0 - mem / mem0) if mem0 > 0 else 0.0,
        "slowdown_pct": 100.0 * (rt / rt0 - 1.0) if rt0 > 0 else 0.0,
        "runtime_s": rt,
        "mem_used_avg_bytes": mem,
    }
    if "damon_cpu_pct" in m:  # kdamond's CPU time, % of one CPU over the runtime
        out["damon_cpu_pct"] = float(m["damon_cpu_pct"])
    counters = {c: v for c in COUNTERS if (v := _find(raw, c)) is not None}
    return out, counters


def run_point(job: dict[str, Any]) -> dict[str, Any]:
    """Worker: one run (``job["kwargs"]`` for :func:`reclaimlab.prepare`, plus
    ``job["workload_params"]``); returns its metrics and vmstat."""
    from .. import prepare, replay

    p = prepare(**job["kwargs"], params=job.get("workload_params"))
    raw = replay(p.cfg, p.source)
    return {"run_id": job["run_id"], "metrics": dict(raw["metrics"]), "vmstat": dict(raw["vmstat"]),
            "workload": p.workload}


def run_sweep(
    workload: Mapping[str, Any],
    params: Sequence[str] = (),
    *,
    workload_params: Mapping[str, str] | None = None,
    defaults: Mapping[str, list[str]] = DEFAULT_GRID,
    jobs: int | None = None,
    progress: bool | None = None,
    run: Callable[[dict[str, Any]], dict[str, Any]] = run_point,
) -> Sweep:
    """Run the baseline and every grid point of ``workload`` (keyword arguments of
    :func:`reclaimlab.prepare`: ``trace``/``trace_format``/``trace_kind`` or
    ``scenario``/``scale``, ``policy``, ``memory``, ``swap``, ``seed``, ``set``; a
    scenario's ``workload_params``) in up to ``jobs`` processes, and return the
    :class:`Sweep`."""
    from .pareto import knee, pareto_front

    axes, pts = grid(params, defaults)
    common = dict(workload)
    fixed = dict(common.pop("set", None) or {})
    base_set = {**fixed, PREFIX + "enabled": "false"}
    wp = dict(workload_params or {})
    jobs_list = [{"run_id": "baseline", "kwargs": {**common, "set": base_set}, "workload_params": wp}]
    points = []
    for i, pt in enumerate(pts):
        settings = {**fixed, **point_settings(pt)}
        points.append(Point(i, pt, settings))
        jobs_list.append({"run_id": i, "kwargs": {**common, "set": settings}, "workload_params": wp})
    # Bad input is one error here, before any worker starts: the baseline, and each
    # distinct point configuration (cheap: no replay).
    from .. import prepare

    for job in jobs_list:
        prepare(**job["kwargs"], params=wp)

    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=len(jobs_list), unit="run", desc="damon-reclaim sweep", disable=not show, dynamic_ncols=True)
    done: dict[Any, dict[str, Any]] = {}

    def stored(res: dict[str, Any]) -> None:
        done[res["run_id"]] = res
        bar.update(1)

    n = max(1, min(len(jobs_list), jobs or os.cpu_count() or 1))
    try:
        if n == 1:
            for job in jobs_list:
                stored(run(job))
        else:
            from ..experiment.runner import _run_pool

            _run_pool(jobs_list, n, stored, fn=run)
    finally:
        bar.close()
    if len(done) != len(jobs_list):  # pragma: no cover - _run_pool raises first
        raise ReclaimlabError("some sweep runs did not finish")
    base = done["baseline"]["metrics"]
    for p in points:
        p.metrics, p.counters = measure(done[p.index], base)
    sv = [p.saving for p in points]
    sd = [p.slowdown for p in points]
    front = pareto_front(sv, sd)
    return Sweep(done["baseline"]["workload"], axes, dict(base), points, front, knee(sv, sd, front))
