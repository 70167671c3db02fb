"""Draw a sweep's memory saving vs. slowdown: every point, the Pareto frontier, the
chosen point (matplotlib's object-oriented API on the Agg canvas, as reclaimlab.plot)."""

from __future__ import annotations

from pathlib import Path

from ..exceptions import ReclaimlabError
from .sweep import Sweep

__all__ = ["plot_frontier"]


def plot_frontier(sw: Sweep, path: str, pick: int | None = None, title: str = "") -> None:
    from ..plot import MISSING

    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ReclaimlabError(MISSING) from None
    from .._atomic import atomic_output

    pick = sw.knee if pick is None else pick
    fig = Figure(figsize=(8, 5.5), dpi=110, layout="constrained")
    ax = fig.subplots()
    xs = [p.slowdown for p in sw.points]
    ys = [p.saving for p in sw.points]
    ax.scatter(xs, ys, s=14, color="#aab7b8", label=f"all points ({len(sw.points)})", zorder=2)
    fx = [sw.points[i].slowdown for i in sw.front]
    fy = [sw.points[i].saving for i in sw.front]
    ax.plot(fx, fy, "-o", color="#c0392b", markersize=5, linewidth=1.5, label="Pareto frontier", zorder=3)
    for i in sw.front:
        ax.annotate(str(i), (sw.points[i].slowdown, sw.points[i].saving), textcoords="offset points",
                    xytext=(4, 4), fontsize=7, color="#7b241c")
    p = sw.points[pick]
    ax.scatter([p.slowdown], [p.saving], s=120, facecolors="none", edgecolors="#1f618d", linewidths=2,
               label=f"{'knee' if pick == sw.knee else 'pick'}: point {pick}", zorder=4)
    ax.axhline(0, color="#d5d8dc", linewidth=0.8, zorder=1)
    ax.axvline(0, color="#d5d8dc", linewidth=0.8, zorder=1)
    ax.set_xlabel("runtime slowdown vs. no DAMON_RECLAIM (%)")
    ax.set_ylabel("memory saving vs. no DAMON_RECLAIM (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title or f"DAMON_RECLAIM sweep: {sw.workload}", fontsize=9)
    fmt = Path(path).suffix.lower().lstrip(".")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=fmt)
