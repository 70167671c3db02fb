"""The atlas's heatmap: one panel per combination of the axes that are not drawn, the two
drawn axes as columns and rows; a cell's colour is its winner, its strength the margin
over the runner-up, its text the margin in percent (matplotlib, Agg canvas)."""

from __future__ import annotations

import itertools
import os
from typing import Mapping, Sequence

from .sweep import Cell

__all__ = ["draw"]

#: Colours of the policies, in order (matplotlib's tab10); ties are grey.
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def draw(cells: Sequence[Cell], axes: Mapping[str, list[str]], policies: Sequence[str], metric: str,
         x: str, y: str, path: str | os.PathLike) -> None:
    """Draw the map to ``path`` (.png/.svg/.pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.colors import to_rgb
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from .._atomic import atomic_output

    rest = [a for a in axes if a not in (x, y)]
    facets = list(itertools.product(*(axes[a] for a in rest)))
    by_point = {tuple(c.point[a] for a in axes): c for c in cells}
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(policies)}
    ncols = min(3, len(facets))
    nrows = (len(facets) + ncols - 1) // ncols
    xs, ys = axes[x], axes[y]
    fig = Figure(figsize=(max(7.5, 1.1 * len(xs) * ncols + 1.5), max(3.5, 0.8 * len(ys) * nrows + 2.0)))
    for k, facet in enumerate(facets):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        fixed = dict(zip(rest, facet))
        img = []
        for yv in ys:
            row = []
            for xv in xs:
                point = {**fixed, x: xv, y: yv}
                c = by_point.get(tuple(point[a] for a in axes))
                if c is None or c.winner in ("", "tie"):
                    row.append((0.85, 0.85, 0.85))
                    text = "tie" if c is not None and c.winner == "tie" else ""
                else:
                    s = min(1.0, 0.25 + c.margin_pct / 40.0)
                    base = to_rgb(colour[c.winner])
                    row.append(tuple(1 - s * (1 - ch) for ch in base))
                    text = f"{c.margin_pct:.1f}%" if c.margin_pct < 10 else f"{c.margin_pct:.0f}%"
                ax.text(len(row) - 1, len(img), text, ha="center", va="center", fontsize=8)
            img.append(row)
        ax.imshow(img, origin="lower", aspect="auto")
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if fixed:
            ax.set_title(", ".join(f"{a}={v}" for a, v in fixed.items()), fontsize=9)
    fig.legend(handles=[Patch(color=colour[p], label=p) for p in policies], loc="lower center",
               ncol=min(3, len(policies)), fontsize=8, frameon=False)
    fig.suptitle(f"winner on {metric} (lower is better); text: margin over the runner-up", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    with atomic_output(str(path)) as tmp:
        fig.savefig(tmp, format=os.path.splitext(str(path))[1][1:].lower(), dpi=110)
