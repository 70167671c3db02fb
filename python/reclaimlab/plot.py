"""Plot a run's time series: memory composition, reclaim activity, refaults and stalls.

::

    import reclaimlab
    from reclaimlab.plot import plot_timeseries
    r = reclaimlab.run(scenario="default")
    plot_timeseries(r, "run.png")          # or .svg / .pdf; a Result or its .timeseries

Needs matplotlib (``pip install 'reclaimlab[plot]'``), imported only when a plot is drawn.
Drawing uses matplotlib's object-oriented API on the Agg canvas: no display is needed and
pyplot's global state (and the user's chosen backend) is never touched.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

from .exceptions import ReclaimlabError

__all__ = ["plot_timeseries", "counter_rates", "SUFFIXES", "require_matplotlib"]

#: Output formats, chosen by the file name's suffix.
SUFFIXES = (".png", ".svg", ".pdf")

MISSING = "plotting needs matplotlib: pip install 'reclaimlab[plot]'"

PAGE = 4096
MIB = 1 << 20

#: Above this many samples the series is thinned to every k-th sample (and the last)
#: before drawing.
MAX_POINTS = 4000

#: Rates are drawn over at most this many intervals: with more, each rate is the exact
#: average over k consecutive sampling intervals (a rate per 100 ms sample over a long run
#: is narrower than a pixel and aliases into a comb).
MAX_RATE_INTERVALS = 400

#: Memory composition, bottom to top: (column, label, colour).
COMPOSITION = (
    ("nr_active_anon", "active anon", "#c0392b"),
    ("nr_inactive_anon", "inactive anon", "#f1948a"),
    ("nr_active_file", "active file", "#1f618d"),
    ("nr_inactive_file", "inactive file", "#85c1e9"),
    ("zram_pool_pages", "zram pool", "#8e44ad"),
    ("nr_free_pages", "free", "#e5e7e9"),
)

COUNTERS = (
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "workingset_refault_anon",
    "workingset_refault_file",
    "pswpin",
    "pswpout",
    "memstall_s",
)

#: Legends sit right of the panels (clear of the right axis of the bottom one), never over data.
LEGEND_AT = (1.075, 1.0)

REQUIRED = ("time_s",) + tuple(c for c, _, _ in COMPOSITION) + COUNTERS

#: Per-cgroup columns: ``memcg.<name>.memory.current_bytes`` (one per non-root cgroup).
MEMCG_PREFIX, MEMCG_SUFFIX = "memcg.", ".memory.current_bytes"


def memcg_columns(frame: Any) -> list[str]:
    """The time series' per-cgroup ``memory.current`` columns, in the run's cgroup order."""
    return [c for c in frame.columns if c.startswith(MEMCG_PREFIX) and c.endswith(MEMCG_SUFFIX)]


def require_matplotlib() -> None:
    """Raise :class:`ReclaimlabError` unless matplotlib can be imported (without importing it)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ReclaimlabError(MISSING)


def check_path(path: str | os.PathLike, what: str = "plot") -> None:
    """Raise :class:`ReclaimlabError` if ``path`` has no supported suffix or its directory is missing."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ReclaimlabError(f"{what} {os.fspath(path)}: expected a .png, .svg or .pdf file name")
    if not p.resolve().parent.is_dir():
        raise ReclaimlabError(f"{what} {os.fspath(path)}: directory does not exist")


def counter_rates(frame: Any, columns: Sequence[str]):
    """Per-second rates of cumulative ``columns`` between consecutive samples.

    Returns a polars DataFrame with one row per interval: ``time_s`` (the interval's end)
    and, per column, ``(c[i] - c[i-1]) / (t[i] - t[i-1])``. Intervals of zero or negative
    length are dropped. ``[0, 10, 30]`` over ``t = [0, 1, 2]`` gives ``[10, 20]``.
    """
    import polars as pl

    dt = pl.col("time_s").diff()
    return (
        frame.select(
            pl.col("time_s"),
            dt.alias("__dt"),
            *[(pl.col(c).cast(pl.Float64).diff() / dt).alias(c) for c in columns],
        )
        .slice(1)
        .filter(pl.col("__dt") > 0)
        .drop("__dt")
    )


def _frame_and_labels(result_or_df: Any):
    """(DataFrame, policy or None, config dict, workload string)."""
    import polars as pl

    if isinstance(result_or_df, pl.DataFrame):
        return result_or_df, None, {}, ""
    frame = getattr(result_or_df, "timeseries", None)
    if not isinstance(frame, pl.DataFrame):
        raise TypeError("plot_timeseries expects a reclaimlab.Result or a polars DataFrame")
    return (
        frame,
        getattr(result_or_df, "policy", None),
        dict(getattr(result_or_df, "config", {}) or {}),
        getattr(result_or_df, "workload", "") or "",
    )


def _thin(frame, max_points: int):
    """Every k-th row (and the last) so that at most ``max_points`` rows remain."""
    if frame.height <= max_points:
        return frame
    step = math.ceil((frame.height - 1) / (max_points - 1))
    idx = list(range(0, frame.height, step))
    if idx[-1] != frame.height - 1:
        idx.append(frame.height - 1)
    return frame[idx]


def _prepare(frame):
    """Check the columns, order by time, drop repeated timestamps, thin long series."""
    import polars as pl

    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ReclaimlabError(f"time series lacks column(s) {', '.join(missing)}")
    frame = frame.select(list(REQUIRED) + memcg_columns(frame)).cast(pl.Float64).sort("time_s", maintain_order=True)
    frame = frame.unique(subset="time_s", keep="last", maintain_order=True)
    if frame.height < 2:
        raise ReclaimlabError(f"time series has {frame.height} sample(s); a plot needs at least 2")
    return _thin(frame, MAX_POINTS)


def _titles(policy: str | None, config: dict, workload: str) -> tuple[str, str]:
    if not config and not policy:
        return "reclaimlab time series", ""
    from .cli.run import machine_line

    head = policy or config.get("policy", "?")
    sub = machine_line(config) if config else ""
    if workload:
        sub = f"{sub}  |  {workload}" if sub else workload
    return head, sub


def _size(b: float) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            v = b / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b:.0f} B"


def plot_timeseries(result_or_df: Any, path: str | os.PathLike, title: str | None = None) -> Path:
    """Draw a run's time series into ``path`` (PNG, SVG or PDF by suffix) and return it.

    ``result_or_df`` is a :class:`reclaimlab.Result` or its ``.timeseries`` DataFrame.
    Three panels share the time axis (simulated seconds):

    1. memory composition, stacked, in MiB (active/inactive anon and file, zram pool,
       free), with the machine's size marked;
    2. reclaim: pgscan_kswapd, pgscan_direct and pgsteal (kswapd + direct), pages/s;
    3. workingset refaults (anon, file) and pswpin/pswpout, pages/s, with the share of
       time some task was stalled on memory (d memstall_s / dt, %) on the right axis;
    4. when the run has cgroups besides the root, each one's ``memory.current`` in MiB.

    Rates are differences of the cumulative counters divided by the elapsed time, between
    consecutive samples (see :func:`counter_rates`); a run of more than
    ``MAX_RATE_INTERVALS`` samples is drawn with each rate averaged over a few samples.
    ``title`` replaces the default title (the policy, then machine and workload). The
    file is written to a temporary file beside ``path`` and renamed when complete.
    """
    check_path(path)
    try:
        import matplotlib
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        raise ReclaimlabError(MISSING) from None

    frame, policy, config, workload = _frame_and_labels(result_or_df)
    frame = _prepare(frame)
    t = frame["time_s"].to_numpy()
    windows = _thin(frame, MAX_RATE_INTERVALS + 1)
    rates = counter_rates(windows, COUNTERS)
    # Strictly increasing after _prepare: one rate per interval between these samples.
    edges = windows["time_s"].to_numpy()

    cgroups = memcg_columns(frame)
    ratios = [1.25, 1, 1] + ([1] if cgroups else [])
    fig = Figure(figsize=(12, 9.5 + 3 * bool(cgroups)), dpi=110, layout="constrained")
    axes = fig.subplots(len(ratios), 1, sharex=True, gridspec_kw={"height_ratios": ratios})
    ax_mem, ax_rec, ax_ref = axes[:3]

    # (1) Memory composition.
    layers = [frame[c].to_numpy() * PAGE / MIB for c, _, _ in COMPOSITION]
    ax_mem.stackplot(
        t,
        *layers,
        labels=[lbl for _, lbl, _ in COMPOSITION],
        colors=[col for _, _, col in COMPOSITION],
        linewidth=0,
    )
    total = sum(layers)
    machine_mib = float(total.max())
    machine_label = f"machine {_size(machine_mib * MIB)}"
    ax_mem.axhline(machine_mib, color="black", linestyle="--", linewidth=1.2, label=machine_label)
    ax_mem.set_ylim(0, machine_mib * 1.08)
    ax_mem.set_ylabel("memory (MiB)")
    ax_mem.set_title("memory composition", loc="left", fontsize=10)
    # Legend in the order the layers are stacked, top first.
    handles, labels = ax_mem.get_legend_handles_labels()
    order = [len(handles) - 1] + list(range(len(handles) - 2, -1, -1))
    ax_mem.legend(
        [handles[i] for i in order], [labels[i] for i in order],
        loc="upper left", bbox_to_anchor=LEGEND_AT, fontsize=9, frameon=False,
    )

    # Rates are constant over each sampling interval: draw them as stairs.
    def stairs(ax, values, label, color, **kw):
        kw.setdefault("linewidth", 1.1)
        ax.stairs(values, edges, label=label, color=color, baseline=None, **kw)


    # (2) Reclaim activity.
    r = {c: rates[c].to_numpy() for c in COUNTERS}
    stairs(ax_rec, r["pgscan_kswapd"], "pgscan kswapd", "#2874a6")
    stairs(ax_rec, r["pgscan_direct"], "pgscan direct", "#d35400")
    stairs(ax_rec, r["pgsteal_kswapd"] + r["pgsteal_direct"], "pgsteal (kswapd + direct)", "#239b56")
    ax_rec.set_ylabel("pages/s")
    ax_rec.set_title("reclaim activity", loc="left", fontsize=10)
    ax_rec.legend(loc="upper left", bbox_to_anchor=LEGEND_AT, fontsize=9, frameon=False)

    # (3) Refaults, swap traffic and memory stall.
    stairs(ax_ref, r["workingset_refault_file"], "refault file", "#1f618d")
    # Wider, so the swap-in line (often equal to anon refaults) stays visible on top of it.
    stairs(ax_ref, r["workingset_refault_anon"], "refault anon", "#e74c3c", linewidth=2.2, alpha=0.8)
    stairs(ax_ref, r["pswpin"], "pswpin", "#7d3c98", linestyle="--")
    stairs(ax_ref, r["pswpout"], "pswpout", "#b9770e", linestyle=":")
    ax_ref.set_ylabel("pages/s")
    ax_ref.set_title("refaults, swap and memory stall", loc="left", fontsize=10)
    ax_stall = ax_ref.twinx()
    stall = r["memstall_s"] * 100.0
    ax_stall.stairs(stall, edges, baseline=0, fill=True, color="#7f8c8d", alpha=0.18, linewidth=0,
                    label="memory stall (% of time, right axis)")
    ax_stall.set_ylim(0, max(100.0, float(stall.max()) if stall.size else 0.0) * 1.02)
    ax_stall.set_ylabel("memory stall (% of time)")
    ax_stall.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}%"))
    # The stall area is drawn behind the rate lines.
    ax_ref.set_zorder(ax_stall.get_zorder() + 1)
    ax_ref.patch.set_visible(False)
    h1, l1 = ax_ref.get_legend_handles_labels()
    h2, l2 = ax_stall.get_legend_handles_labels()
    ax_ref.legend(h1 + h2, l1 + l2, loc="upper left", bbox_to_anchor=LEGEND_AT, fontsize=9, frameon=False)

    # (4) memory.current per cgroup.
    if cgroups:
        ax_cg = axes[3]
        for c in cgroups:
            ax_cg.plot(t, frame[c].to_numpy() / MIB, label=c[len(MEMCG_PREFIX):-len(MEMCG_SUFFIX)], linewidth=1.3)
        ax_cg.set_ylim(bottom=0)
        ax_cg.set_ylabel("memory.current (MiB)")
        ax_cg.set_title("memory.current per cgroup", loc="left", fontsize=10)
        ax_cg.legend(loc="upper left", bbox_to_anchor=LEGEND_AT, fontsize=9, frameon=False)
        ax_cg.grid(True, axis="y", color="#d5d8dc", linewidth=0.6)
        ax_cg.set_axisbelow(True)

    thousands = FuncFormatter(_compact)
    for ax in (ax_mem, ax_rec, ax_ref):
        ax.yaxis.set_major_formatter(thousands)
        ax.grid(True, axis="y", color="#d5d8dc", linewidth=0.6)
        ax.set_axisbelow(True)
    for ax in (ax_rec, ax_ref):
        ax.set_ylim(bottom=0)
    ax_mem.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    axes[-1].set_xlabel("simulated time (s)")
    axes[-1].set_xlim(t[0], t[-1])

    if title is None:
        head, sub = _titles(policy, config, workload)
        fig.suptitle(f"{head}\n{sub}" if sub else head, fontsize=11)
    else:
        fig.suptitle(title, fontsize=11)

    from ._atomic import atomic_output

    fmt = Path(path).suffix.lower().lstrip(".")
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format=fmt)
    return Path(path)


def _compact(v: float, _pos=None) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"

