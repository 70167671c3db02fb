"""``reclaimlab mrc``: miss-ratio curves. LRU exactly from stack distances in one pass
(or SHARDS-sampled with ``--sample-rate``); other algorithms by simulating every size
(in parallel threads over one in-memory copy of the trace)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from . import vocab
from ._table import table
from .cachesim import add_trace_args, load, parse_algos, parse_sizes

HELP = "miss-ratio curves (exact LRU from stack distances; any algorithm by simulation)"

EPILOG = """\
examples:
  reclaimlab mrc --trace data/traces/lirs/sprite.trace.gz --plot sprite.png
  reclaimlab mrc --trace app.trace --algo lru,arc,s3fifo --size 1%,5%,10%,25%,50% --csv mrc.csv
  reclaimlab mrc --trace huge.trace --sample-rate 0.01 --csv lru.csv
"""

DEFAULT_POINTS = 20


def add_parser(sub) -> None:
    p = sub.add_parser("mrc", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_args(p)
    p.add_argument("--algo", action="append", metavar="NAME[,NAME...]",
                   help="algorithms (default lru: the exact stack-distance curve); lru is always exact; "
                   "sizes below an algorithm's minimum (clockpro 5, lirs-paper 10) are skipped with a note")
    vocab.add(p, "size", dest="sizes",
              help=f"cache sizes (default: {DEFAULT_POINTS} evenly spaced sizes up to the distinct pages)")
    vocab.add(p, "plot", "draw the curves (.png/.svg/.pdf; needs matplotlib)", dest="output")
    vocab.add(p, "json", "print one JSON object: the trace's counts and each algorithm's miss ratios, null below "
              "its minimum size (schema: reclaimlab/cli/output.schema.json)")
    vocab.add(p, "csv", help="write algo,size,miss_ratio rows")
    p.add_argument("--sample-rate", type=float, default=1.0, metavar="R",
                   help="SHARDS spatial sampling rate for the LRU curve, 0 < R <= 1 (default 1: exact)")
    p.set_defaults(func=cmd_mrc)


def curves(tr, algos: list[str], sizes: list[int], rate: float = 1.0) -> dict[str, list[float]]:
    """Miss ratio of each algorithm at each size; NaN at sizes below the algorithm's
    minimum (:func:`skipped`)."""
    from .. import _core

    out: dict[str, list[float]] = {}
    others = [a for a in algos if a != "lru"]
    if "lru" in algos:
        out["lru"] = _core.cache_lru_mrc(tr, sizes, rate)
    for a in others:
        ok = [s for s in sizes if s >= _core.cache_min_size(a)]
        got = {r["size"]: r["miss_ratio"] for r in _core.cache_simulate(tr, [a], ok)} if ok else {}
        out[a] = [got.get(s, math.nan) for s in sizes]
    return {a: out[a] for a in algos}


def skipped(algos: list[str], sizes: list[int]) -> list[str]:
    """One note per algorithm that cannot run at some of ``sizes``."""
    from .. import _core

    notes = []
    for a in algos:
        m = _core.cache_min_size(a)
        below = [s for s in sizes if s < m]
        if below:
            notes.append(f"note: {a} needs a cache of at least {m} pages, as its authors' simulator does: "
                         f"size{'s' if len(below) > 1 else ''} {', '.join(map(str, below))} skipped")
    return notes


def cmd_mrc(args: argparse.Namespace) -> int:
    from ..exceptions import ReclaimlabError

    if not 0 < args.sample_rate <= 1:
        raise ReclaimlabError(f"--sample-rate must be in (0, 1], got {args.sample_rate}")
    algos = parse_algos(args.algo or ["lru"])
    if args.output:
        from ..plot import check_path, require_matplotlib

        require_matplotlib()
        check_path(args.output)
    tr = load(args.trace, args.trace_format)
    distinct = tr.distinct
    if distinct == 0:  # no request: no curve (and nothing written)
        raise ReclaimlabError(f"{args.trace}: the trace has no requests; no miss-ratio curve to draw")
    if args.sizes:
        sizes = sorted(set(parse_sizes(args.sizes, distinct)))
    else:
        sizes = sorted({max(1, distinct * i // DEFAULT_POINTS) for i in range(1, DEFAULT_POINTS + 1)})
    cv = curves(tr, algos, sizes, args.sample_rate)
    for note in skipped(algos, sizes):
        print(note, file=sys.stderr)
    if args.csv:
        from .._atomic import atomic_output

        with atomic_output(args.csv) as tmp:
            with open(tmp, "w") as f:
                f.write("algo,size,miss_ratio\n")
                for a, ys in cv.items():
                    for s, y in zip(sizes, ys):
                        if not math.isnan(y):
                            f.write(f"{a},{s},{y:.6f}\n")
    if args.output:
        plot_mrc(cv, sizes, args.output, title=f"{args.trace} ({len(tr):,} requests, {distinct:,} pages)",
                 sampled=args.sample_rate < 1)
    if args.json:
        print(json.dumps({"trace": str(args.trace), "requests": len(tr), "distinct_pages": distinct,
                          "sample_rate": args.sample_rate, "sizes": sizes,
                          "curves": {a: [None if math.isnan(y) else y for y in ys] for a, ys in cv.items()}}))
    elif not args.csv and not args.output:
        rows = [[f"{s:,}"] + ["-" if math.isnan(cv[a][i]) else f"{cv[a][i]:.4f}" for a in algos]
                for i, s in enumerate(sizes)]
        print(table(rows, header=["size"] + algos, right=tuple(range(len(algos) + 1))))
    return 0


def plot_mrc(cv: dict[str, list[float]], sizes: list[int], path: str, title: str = "", sampled: bool = False) -> None:
    """Draw miss-ratio curves (matplotlib's OO API on the Agg canvas, as reclaimlab.plot)."""
    from ..exceptions import ReclaimlabError
    from ..plot import MISSING

    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ReclaimlabError(MISSING) from None
    from .._atomic import atomic_output
    from pathlib import Path

    fig = Figure(figsize=(8, 5), dpi=110, layout="constrained")
    ax = fig.subplots()
    for a, ys in cv.items():
        label = a + (" (SHARDS)" if a == "lru" and sampled else "")
        ax.plot(sizes, ys, marker="o", markersize=3, linewidth=1.5, label=label)
    ax.set_xlabel("cache size (pages)")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title, fontsize=9)
    fmt = Path(path).suffix.lower().lstrip(".")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=fmt)
