"""Running an atlas on the experiment harness and reading the map out of its store.

Every (point, policy, repetition) is one run of the harness (:mod:`reclaimlab.experiment`):
local worker processes or a Dask cluster, a results store keyed by the run's configuration
hash, so an interrupted atlas resumes. The map is, per point, each policy's mean of the
metric over the repetitions, the winner (lowest), the runner-up, and the winner's margin:
``100 × (runner-up − winner) / runner-up`` — how much less of the metric the winner has.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..exceptions import ConfigError
from ..experiment import Axis, Experiment, run_experiment
from .grid import MAX_RUNS, METRICS, program

__all__ = ["DEFAULT_POLICIES", "Cell", "Atlas", "check", "run_atlas", "read_map"]

#: The kernel models compared by default: classic, mainline MGLRU and the 2026 refault
#: distance (the 2023 reconstruction decides the same: docs/model.md §1.11a).
DEFAULT_POLICIES = ["classic@6.15", "mglru@6.15", "mglru+refault-distance-2026"]


@dataclass
class Cell:
    """One point of the map: its axis values, each policy's mean metric, the winner and
    the margin over the runner-up (0 and winner "tie" when they are equal)."""

    point: dict[str, str]
    values: dict[str, float]
    winner: str = ""
    runner_up: str = ""
    margin_pct: float = 0.0


@dataclass
class Atlas(Experiment):
    """An experiment whose runs are the atlas's points × policies × repetitions."""

    points: list[dict[str, str]] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    memory_pages: int = 0

    def jobs(self) -> list[dict[str, Any]]:
        out = []
        for point in self.points:
            one = Experiment(name=self.name, workload={"program": program(point, self.memory_pages)},
                             axes=[Axis("policy", "policy", list(self.policies), list(self.policies))],
                             settings=dict(self.settings), repetitions=self.repetitions, seed=self.seed,
                             timeseries=False)
            for job in one.jobs():
                job["params"] = dict(point)
                out.append(job)
        return out


def check(points: Sequence[Mapping[str, str]], policies: Sequence[str], metric: str, repetitions: int) -> None:
    """Bad input, before anything runs: an unknown metric or policy, no policy, a grid
    larger than the store takes."""
    from .. import _core

    if metric not in METRICS:
        raise ConfigError(f"atlas: unknown metric '{metric}' (metrics: {', '.join(METRICS)})")
    if not policies:
        raise ConfigError("atlas: no policy to compare")
    known = [p[0] for p in _core.policies()]
    for p in policies:
        if p not in known:
            raise ConfigError(f"atlas: unknown policy '{p}' (`reclaimlab policies`)")
    if len(set(policies)) != len(policies):
        raise ConfigError("atlas: a policy is repeated")
    if repetitions < 1:
        raise ConfigError(f"atlas: --repetitions {repetitions} must be at least 1")
    runs = len(points) * len(policies) * repetitions
    if runs > MAX_RUNS:
        raise ConfigError(f"atlas: the grid is {len(points)} points x {len(policies)} policies x {repetitions} "
                          f"repetitions = {runs:,} runs, more than a store holds ({MAX_RUNS:,})")


def run_atlas(axes: Mapping[str, list[str]], points: list[dict[str, str]], policies: list[str], out: str | os.PathLike,
              *, settings: Mapping[str, str], repetitions: int = 1, seed: int = 1, jobs: int | None = None,
              scheduler: str | None = None, progress: bool = True,
              on_stored: Callable[[dict[str, Any]], None] | None = None) -> dict[str, int]:
    """Run every missing run of the atlas into the store in ``out``."""
    from .. import _core
    from .. import config as _config

    cfg = _core.Config()
    _config.apply(cfg, dict(settings))
    _config.validate(cfg)
    memory_pages = int(_core.parse_size(cfg.get("machine.memory"))) // 4096
    atlas = Atlas(name="atlas", workload={"program": {}}, settings=dict(settings), repetitions=repetitions, seed=seed,
                  timeseries=False, metric="runtime_s", variant="policy",
                  axes=[Axis(n, n, list(v), list(v)) for n, v in axes.items()]
                  + [Axis("policy", "policy", list(policies), list(policies))],
                  points=points, policies=list(policies), memory_pages=memory_pages)
    return run_experiment(atlas, out, jobs=jobs, scheduler=scheduler, progress=progress, on_stored=on_stored)


def read_map(out: str | os.PathLike, axes: Sequence[str], points: list[dict[str, str]], policies: Sequence[str],
             metric: str) -> list[Cell]:
    """Each point's cell from the store: the policies' means, the winner and its margin."""
    from ..results import Store

    table, keys, _ = METRICS[metric]
    with Store(out, create=False) as store:
        frame = store.metrics() if table == "metrics" else store.vmstat()
    rows = frame.to_dicts()
    sums: dict[tuple, list[float]] = {}
    for r in rows:
        key = tuple(str(r.get(a, "")) for a in axes) + (r["variant"],)
        sums.setdefault(key, []).append(sum(float(r.get(k) or 0.0) for k in keys))
    cells = []
    for point in points:
        values = {}
        for p in policies:
            v = sums.get(tuple(point[a] for a in axes) + (p,))
            if v:
                values[p] = sum(v) / len(v)
        cell = Cell(point=dict(point), values=values)
        ranked = sorted(values, key=lambda p: (values[p], policies.index(p)))
        if len(ranked) >= 2:
            best, second = values[ranked[0]], values[ranked[1]]
            cell.margin_pct = 100.0 * (second - best) / second if second > 0 else 0.0
            cell.winner, cell.runner_up = (ranked[0], ranked[1]) if second > best else ("tie", "")
        elif ranked:
            cell.winner = ranked[0]
        cells.append(cell)
    return cells
