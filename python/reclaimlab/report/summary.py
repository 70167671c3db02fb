"""The plain-text summary `reclaimlab report` prints beside its HTML: what was compared,
by which reclaimlab, under which noise, and every Welch test in one line — at most 80
columns, to paste into a mail."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

__all__ = ["summary", "better", "WIDTH"]

WIDTH = 80


def better(w: Any, higher_is_better: bool) -> bool | None:
    """Whether the compared side's mean is better than the baseline's (None: equal)."""
    if w.mean_y == w.mean_x:
        return None
    return (w.mean_y > w.mean_x) == higher_is_better


def _num(v: float) -> str:
    """About six significant digits with fixed decimals (123.54, 1.8640), for columns."""
    a = abs(v)
    if a == 0 or a != a or a == float("inf") or a >= 1e6 or a < 1e-3:
        return f"{v:.4g}"
    return f"{v:.{max(0, 5 - len(str(int(a))))}f}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def summary(meta: dict, prov: dict, noise_text: str, metric: str, by: str, base: str, tests: Sequence[Any],
            higher_is_better: bool) -> str:
    """The summary text (every line at most :data:`WIDTH` columns)."""
    wrap = lambda s, ind="": textwrap.fill(s, WIDTH, subsequent_indent=ind or "  ")  # noqa: E731
    commit = (prov.get("git_commit") or "no git commit")[:12]
    out = [wrap(f"reclaimlab report: experiment {meta.get('experiment', '?')}"),
           wrap(f"reclaimlab {prov['reclaimlab']} ({commit}), {prov['date']}"),
           wrap(noise_text),
           wrap(f"metric {metric} ({'higher' if higher_is_better else 'lower'} is better), each against "
                f"{by}={base}; Welch 95% CI of the change, * = significant"),
           ""]
    if not tests:
        out.append("(no pair of configurations with at least two repetitions each)")
    lw = min(30, max(len(w.label) for w in tests)) if tests else 0
    for w in tests:
        b = better(w, higher_is_better)
        word = "equal" if b is None else ("better" if b else "worse")
        if w.error is not None:
            ci, mark, word = "no test: " + w.error, " ", ""
        else:
            lo, hi = w.change_pct
            ci, mark = f"[{lo:+.2f}, {hi:+.2f}]%", "*" if w.significant else " "
        means = f"{_num(w.mean_x)} -> {_num(w.mean_y)}"
        line = f"{_cut(w.label, lw):<{lw}} {means:>21} {ci:>18}{mark} {word}"
        out.append(_cut(line.rstrip(), WIDTH))
    return "\n".join(out) + "\n"
