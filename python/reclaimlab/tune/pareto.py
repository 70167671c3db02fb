"""The memory-saving vs. slowdown frontier of a parameter sweep, and its knee.

A point is ``(memory_saving, slowdown)``: more saving is better, less slowdown is better.
A point is on the Pareto frontier when no other point saves at least as much with at
most as much slowdown and is better in one of the two. The knee is the frontier point
farthest above the straight line joining the frontier's two ends, both axes scaled to
the frontier's range (the Kneedle rule): past it, each extra unit of saving costs more
slowdown than before it.
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
    """Index of the knee of the frontier (see the module doc); on a frontier that is a
    straight line or bends the other way, the end with the least slowdown."""
    front = list(pareto_front(saving, slowdown) if front is None else front)
    if not front:
        raise ValueError("no points")
    if len(front) <= 2:
        return front[0]
    xs = [slowdown[i] for i in front]
    ys = [saving[i] for i in front]
    dx = (xs[-1] - xs[0]) or 1.0
    dy = (ys[-1] - ys[0]) or 1.0
    best, at = 0.0, front[0]
    for i, x, y in zip(front, xs, ys):
        d = (y - ys[0]) / dy - (x - xs[0]) / dx
        if d > best + 1e-12:
            best, at = d, i
    return at
