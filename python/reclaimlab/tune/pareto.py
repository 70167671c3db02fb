"""The memory-saving vs. slowdown frontier of a parameter sweep, and its knee.

A point is ``(memory_saving, slowdown)``: more saving is better, less slowdown is better.
A point is on the Pareto frontier when no other point saves at least as much with at
most as much slowdown and is better in one of the two.

The knee is chosen among the frontier points that save memory at all (saving > 0): the
one farthest above the straight line joining the first and the last of them, both axes
scaled to their range (the Kneedle rule) — past it, each extra unit of saving costs more
slowdown than before it. When no point lies above that line (two candidates, a straight
or convex frontier), it is the candidate with the most saving per unit of slowdown
(ties: the one with less slowdown). Without any saving point, the frontier's first point.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["pareto_front", "knee"]


def pareto_front(saving: Sequence[float], slowdown: Sequence[float]) -> list[int]:
    """Indices of the non-dominated points, by increasing slowdown (then decreasing
    saving). Of identical points only the first is kept. NaN points are never on it."""
    if len(saving) != len(slowdown):
        raise ValueError("saving and slowdown differ in length")
    pts = [(slowdown[i], -saving[i], i) for i in range(len(saving))
           if saving[i] == saving[i] and slowdown[i] == slowdown[i]]
    pts.sort()
    front: list[int] = []
    best = float("-inf")
    for sd, neg_sv, i in pts:
        # Sorted by slowdown, so a point is on the front iff it saves strictly more than
        # every point before it (which all have less or equal slowdown).
        if -neg_sv > best:
            front.append(i)
            best = -neg_sv
    return front


def knee(saving: Sequence[float], slowdown: Sequence[float], front: Sequence[int] | None = None) -> int:
    """Index of the knee of the frontier (see the module doc)."""
    front = list(pareto_front(saving, slowdown) if front is None else front)
    if not front:
        raise ValueError("no points")
    cand = [i for i in front if saving[i] > 0]
    if not cand:
        return front[0]
    if len(cand) >= 3:
        xs = [slowdown[i] for i in cand]
        ys = [saving[i] for i in cand]
        dx = (xs[-1] - xs[0]) or 1.0
        dy = (ys[-1] - ys[0]) or 1.0
        best, at = 0.0, None
        for i, x, y in zip(cand, xs, ys):
            d = (y - ys[0]) / dy - (x - xs[0]) / dx
            if d > best + 1e-12:
                best, at = d, i
        if at is not None:
            return at

    def per_slowdown(i: int) -> tuple[float, float]:
        ratio = saving[i] / slowdown[i] if slowdown[i] > 0 else float("inf")
        return (ratio, -slowdown[i])

    return max(cand, key=per_slowdown)
