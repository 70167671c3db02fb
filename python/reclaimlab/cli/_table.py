"""Plain aligned text tables for the terminal."""

from __future__ import annotations

from typing import Iterable, Sequence


def table(rows: Iterable[Sequence[object]], header: Sequence[str] | None = None, right: Sequence[int] = ()) -> str:
    """Align columns; columns listed in ``right`` are right-aligned (numbers)."""
    rows = [[str(c) for c in r] for r in rows]
    if header:
        rows.insert(0, list(header))
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    out = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            last = i == len(r) - 1
            if i in right:
                cells.append(c.rjust(widths[i]))
            else:
                cells.append(c if last else c.ljust(widths[i]))
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def number(x: float | int) -> str:
    """A metric for humans: integers with separators, floats with 4 significant digits."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 1000:
        return f"{x:,.1f}"
    return f"{x:.4g}"


def size(b: int | float) -> str:
    b = float(b)
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift:
            v = b / (1 << shift)
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.1f}{unit}"
    return f"{b:.0f}B"
