"""The atlas's workload space: its axes, their defaults and checks, and the program of one
point (a masim-style generator program, docs/trace-programs.md).

A point is (``ws``, ``scan``, ``anon``, ``skew``, ``tenants``):

- ``ws``: working set over memory — the pages the workload touches / the machine's pages;
- ``scan``: the share of accesses that come from a sequential scan of the file data (a
  range scan, a backup, a search: reuse distance = the file data's size);
- ``anon``: the anonymous share of the working set (the rest is file data read with read());
- ``skew``: the Zipf exponent of the other accesses (hot pages first);
- ``tenants``: memory cgroups, each running the same workload on its share of the pages.
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping, Sequence

from ..exceptions import ConfigError

__all__ = ["AXES", "DEFAULT_GRID", "METRICS", "parse_axis", "grid", "program", "MAX_RUNS"]

#: Axis name → (meaning, unit, check of one value).
AXES: dict[str, tuple[str, str]] = {
    "ws": ("working set / memory", "x"),
    "scan": ("share of accesses from a sequential scan of the file data", "fraction in [0, 1)"),
    "anon": ("anonymous share of the working set", "fraction in [0, 1)"),
    "skew": ("Zipf exponent of the non-scan accesses", "> 0"),
    "tenants": ("memory cgroups sharing the machine, each with the same workload", "whole number 1..64"),
}

#: The default grid: 4 × 3 × 2 points, about a minute of runs on 2 cores.
DEFAULT_GRID: dict[str, list[str]] = {
    "ws": ["0.75", "1.25", "2", "3"],
    "scan": ["0", "0.3", "0.6"],
    "anon": ["0.2", "0.6"],
    "skew": ["0.9"],
    "tenants": ["1"],
}

#: Metric name → (what it sums: ("metrics"|"vmstat", keys), meaning). Lower is better.
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "runtime": ("metrics", ("runtime_s",), "simulated runtime, s"),
    "refaults": ("vmstat", ("workingset_refault_file", "workingset_refault_anon"), "workingset refaults, file + anon"),
    "major_faults": ("metrics", ("major_faults",), "major faults (I/O or swap-in)"),
}

#: The most runs (points × policies × repetitions) an atlas may have: the experiment
#: harness's limit for one store.
MAX_RUNS = 100_000

#: Accesses per point, per page of memory.
ACCESSES_PER_MEMORY_PAGE = 24


def _check(name: str, text: str) -> str:
    t = text.strip()
    if not t:
        raise ConfigError(f"atlas: axis {name}: an empty value")
    if name == "tenants":
        if not t.isdigit() or not 1 <= int(t) <= 64:
            raise ConfigError(f"atlas: axis tenants: '{t}' is not a whole number in 1..64")
        return str(int(t))
    try:
        x = float(t)
    except ValueError:
        raise ConfigError(f"atlas: axis {name}: '{t}' is not a number") from None
    ok = {"ws": x > 0 and x <= 64, "scan": 0 <= x < 1, "anon": 0 <= x < 1, "skew": 0 < x <= 4}[name]
    if not ok:
        raise ConfigError(f"atlas: axis {name}: {t} is out of range ({AXES[name][1]}{', at most 64' if name == 'ws' else ''})")
    return t


def parse_axis(spec: str) -> tuple[str, list[str]]:
    """``NAME=v1,v2,...`` → (NAME, values), checked."""
    name, sep, vals = spec.partition("=")
    name = name.strip()
    if not sep:
        raise ConfigError(f"atlas: --axis expects NAME=v1,v2,..., got '{spec}'")
    if name not in AXES:
        raise ConfigError(f"atlas: unknown axis '{name}' (axes: {', '.join(AXES)})")
    if not vals.strip():
        raise ConfigError(f"atlas: axis {name} has no values")
    values = [_check(name, v) for v in vals.split(",")]
    if len(set(values)) != len(values):
        raise ConfigError(f"atlas: axis {name}: a value is repeated")
    return name, values


def grid(specs: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    """The axes (defaults with ``--axis`` replacements) and every point, row-major."""
    axes = {k: list(v) for k, v in DEFAULT_GRID.items()}
    for spec in specs:
        k, vs = parse_axis(spec)
        axes[k] = vs
    points = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    return axes, points


def program(point: Mapping[str, str], memory_pages: int) -> dict[str, Any]:
    """The generator program of one point on a machine of ``memory_pages`` pages, in the form
    :func:`reclaimlab.program.load` returns (``regions``, ``phases`` with ``streams``)."""
    ws, scan, anon, skew = (float(point[k]) for k in ("ws", "scan", "anon", "skew"))
    n = int(point["tenants"])
    total = max(2 * n, round(ws * memory_pages))
    anon_pages = round(total * anon) // n
    file_pages = max(1, total // n - anon_pages)
    regions, streams = [], []
    for t in range(n):
        cg = f"t{t}" if n > 1 else ""
        if anon_pages > 0:
            regions.append({"name": f"heap{t}", "pages": anon_pages, "kind": "anon", "write_ratio": 0.3, "cgroup": cg})
            streams.append({"region": f"heap{t}", "pattern": f"zipf:{skew}", "weight": (1 - scan) * anon / n})
        regions.append({"name": f"data{t}", "pages": file_pages, "kind": "file-read", "cgroup": cg})
        hot_file = (1 - scan) * (1 - anon) / n
        if hot_file > 0:
            streams.append({"region": f"data{t}", "pattern": f"zipf:{skew}", "weight": hot_file})
        if scan > 0:
            streams.append({"region": f"data{t}", "pattern": "seq", "weight": scan / n})
    return {"repeat": 1, "regions": regions,
            "phases": [{"name": "run", "accesses": ACCESSES_PER_MEMORY_PAGE * memory_pages, "streams": streams,
                        "reclaims": []}]}
