"""Welch's two-sample t-test, printed exactly as the MGLRU Apache Hadoop TeraSort benchmark's R script prints it.

The TeraSort benchmark runs ``t.test(x, y)`` (R's default: Welch, two-sided, 95%) with ``x`` the
baseline, prints the ``htest`` object, and then the CI of ``mean(x) - mean(y)`` as a
percentage of the baseline mean::

    p <- r$conf.int * 100 / r$estimate[1]
    if ((p[1] > 0 && p[2] < 0) || (p[1] < 0 && p[2] > 0)) "no significance"
    else sprintf("[%.2f, %.2f]%%", -p[2], -p[1])

so a printed interval is the relative change of ``y`` against ``x`` (negative: ``y`` is
smaller). ``scipy.stats.ttest_ind(x, y, equal_var=False)`` gives R's t, df and p-value and
``.confidence_interval(0.95)`` its CI, to every printed digit (reference §2); the
formatting of :mod:`.rformat` reproduces ``print.htest``.

The TeraSort benchmark's summary tables print the means and the CI of ``mean(y) - mean(x)`` in seconds
*truncated* (not rounded) to two decimals (911.813 → "911.81", 910.196 → "910.19",
-48.39677 → "-48.39"); :func:`table` does the same.

Degenerate data as R has it (``t.test.default``): with fewer than two observations R stops
with "not enough 'x' observations", and when the standard error of the difference is below
``10 * .Machine$double.eps * max(abs(mean(x)), abs(mean(y)))`` with "data are essentially
constant" — no t, no p-value, no interval. :func:`welch` marks such a test
(:attr:`Welch.error`), and every printer shows R's message in place of the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal
from typing import Any, Sequence

from .rformat import EPS, format_pval, format_r

__all__ = ["Welch", "welch", "r_output", "percent_line", "compare", "table", "render"]


@dataclass
class Welch:
    """One Welch test of ``x`` (baseline) against ``y``."""

    x: list[float]
    y: list[float]
    t: float
    df: float
    p: float
    ci: tuple[float, float]  # CI of mean(x) - mean(y)
    mean_x: float
    mean_y: float
    conf: float = 0.95
    label: str = ""
    x_name: str = "x"
    y_name: str = "y"
    group: dict = field(default_factory=dict)
    #: R's error message when ``t.test`` stops ("data are essentially constant"), else None;
    #: then t, df, p and the CI are NaN.
    error: str | None = None

    @property
    def pct(self) -> tuple[float, float]:
        """The TeraSort benchmark's ``p``: the CI times 100 over the baseline mean."""
        return (self.ci[0] * 100 / self.mean_x, self.ci[1] * 100 / self.mean_x)

    @property
    def significant(self) -> bool:
        """False iff the percentage interval straddles zero (the TeraSort benchmark's test, verbatim);
        False when R gives no interval (:attr:`error`)."""
        if self.error is not None:
            return False
        p1, p2 = self.pct
        return not ((p1 > 0 and p2 < 0) or (p1 < 0 and p2 > 0))

    @property
    def change_pct(self) -> tuple[float, float]:
        """The printed interval: relative change of y against x, ``[-p[2], -p[1]]``."""
        p1, p2 = self.pct
        return (-p2, -p1)


def welch(x: Sequence[float], y: Sequence[float], conf: float = 0.95, **meta: Any) -> Welch:
    """R's ``t.test(x, y, conf.level = conf)`` (Welch) via scipy; R's checks first."""
    import numpy as np
    from scipy import stats

    x = [float(v) for v in x]
    y = [float(v) for v in y]
    mean_x, mean_y = math.fsum(x) / len(x), math.fsum(y) / len(y)
    nan = float("nan")
    error = None
    for name, v in (("x", x), ("y", y)):
        if len(v) < 2:
            error = f"not enough '{name}' observations"
            break
    if error is None:
        # t.test.default: stderr <- sqrt(var(x)/nx + var(y)/ny); stop if below 10 eps max|mean|.
        stderr = math.sqrt(np.var(x, ddof=1) / len(x) + np.var(y, ddof=1) / len(y))
        if stderr < 10 * EPS * max(abs(mean_x), abs(mean_y)):
            error = "data are essentially constant"
    if error is not None:
        return Welch(x=x, y=y, t=nan, df=nan, p=nan, ci=(nan, nan), mean_x=mean_x, mean_y=mean_y,
                     conf=conf, error=error, **meta)
    import warnings

    with warnings.catch_warnings():
        # Identical samples (a deterministic simulation) make scipy warn about precision.
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_ind(x, y, equal_var=False)
        ci = r.confidence_interval(conf)
    return Welch(
        x=x, y=y, t=float(r.statistic), df=float(r.df), p=float(r.pvalue),
        ci=(float(ci.low), float(ci.high)), mean_x=mean_x, mean_y=mean_y, conf=conf, **meta,
    )


def percent_line(w: Welch) -> str:
    """``label: no significance`` or ``label: [x, y]%`` (``sprintf("%.2f")``)."""
    head = f"{w.label}: " if w.label else ""
    if w.error is not None:
        return f"{head}no test ({w.error})"
    if not w.significant:
        return f"{head}no significance"
    lo, hi = w.change_pct
    return f"{head}[{lo:.2f}, {hi:.2f}]%"


def r_output(w: Welch, data: str | None = None) -> str:
    """What R prints for ``print(t.test(x, y)); print(s)``: the htest block and the
    ``[1] "label: ..."`` line."""
    data = data or f"{w.x_name} and {w.y_name}"
    if w.error is not None:
        # R stops in t.test.default: its error, no htest object to print.
        return "\n".join(["", f"data:  {data}", f"Error in t.test.default(x, y) : {w.error}", "",
                          f'[1] "{percent_line(w)}"'])
    est = format_r([w.mean_x, w.mean_y], 7)
    names = ["mean of x", "mean of y"]
    widths = [max(len(n), len(e)) for n, e in zip(names, est)]
    ci = format_r(list(w.ci), 7)
    fp = format_pval(w.p, 4)
    pv = f"p-value {fp}" if fp.startswith("<") else f"p-value = {fp}"
    lines = [
        "",
        "\tWelch Two Sample t-test",
        "",
        f"data:  {data}",
        f"t = {format_r(w.t, 5)[0]}, df = {format_r(w.df, 5)[0]}, {pv}",
        "alternative hypothesis: true difference in means is not equal to 0",
        f"{format_r(100 * w.conf, 7)[0]} percent confidence interval:",
        " " + " ".join(ci),
        "sample estimates:",
        " ".join(n.rjust(wd) for n, wd in zip(names, widths)) + " ",
        " ".join(e.rjust(wd) for e, wd in zip(est, widths)) + " ",
        "",
        f'[1] "{percent_line(w)}"',
    ]
    return "\n".join(lines)


def compare(df: Any, by: str = "variant", baseline: str | None = None, conf: float = 0.95) -> list[Welch]:
    """Welch tests of every level of column ``by`` against ``baseline`` within each
    combination of the other configuration columns (in order of first appearance), for a
    measurements frame holding one metric."""
    from . import config_columns

    cols = [c for c in (["variant"] + config_columns(df)) if c != by]
    levels = df.get_column(by).unique(maintain_order=True).to_list()
    if baseline is None:
        baseline = levels[0]
    others = [lv for lv in levels if lv != baseline]
    keys = df.select(cols).unique(maintain_order=True).rows() if cols else [()]
    out = []
    for key in keys:
        sub = df
        for c, v in zip(cols, key):
            sub = sub.filter(sub.get_column(c) == v)
        x = sub.filter(sub.get_column(by) == baseline).get_column("value").to_list()
        if len(x) < 2:
            continue
        for lv in others:
            y = sub.filter(sub.get_column(by) == lv).get_column("value").to_list()
            if len(y) < 2:
                continue
            label = " ".join(str(k) for k in key)
            if len(others) > 1 or not label:
                label = (label + " " if label else "") + f"{lv} vs {baseline}"
            out.append(welch(x, y, conf, label=label, x_name=str(baseline), y_name=str(lv),
                             group=dict(zip(cols, key))))
    return out


def _trunc2(v: float) -> str:
    """Truncate toward zero to 2 decimals, as the TeraSort benchmark's tables print."""
    return str(Decimal(repr(float(v))).quantize(Decimal("0.01"), rounding=ROUND_DOWN))


def table(results: list[Welch], title: str = "Mean (s)") -> str:
    """The TeraSort benchmark's Table 1/2 layout: rows = the last grouping column, columns = the
    others; each cell "mean x / mean y" over "[CI of y - x]" (truncated to 2 decimals)."""
    if not results:
        return ""
    gcols = [c for c in results[0].group if c]
    row_col = gcols[-1] if gcols else None
    col_cols = gcols[:-1]
    multi = len({(w.x_name, w.y_name) for w in results}) > 1

    def colkey(w: Welch) -> str:
        parts = [str(w.group[c]) for c in col_cols]
        if multi:
            parts.append(f"{w.y_name} vs {w.x_name}")
        return " ".join(parts) or f"{w.x_name} / {w.y_name}"

    rows = list(dict.fromkeys(str(w.group.get(row_col, "")) for w in results))
    cols = list(dict.fromkeys(colkey(w) for w in results))
    cell: dict[tuple[str, str], tuple[str, str]] = {}
    for w in results:
        top = f"{_trunc2(w.mean_x)} / {_trunc2(w.mean_y)}"
        bot = "(constant)" if w.error == "data are essentially constant" else (
            f"({w.error})" if w.error else f"[{_trunc2(-w.ci[1])}, {_trunc2(-w.ci[0])}]")
        cell[(str(w.group.get(row_col, "")), colkey(w))] = (top, bot)
    head = [title, f"[{int(round(100 * results[0].conf))}% CI]"]
    w0 = max(len(h) for h in head + rows) + 2
    wc = [max([len(c)] + [len(s) for r in rows for s in cell.get((r, c), ("", ""))]) + 2 for c in cols]
    sep = "+" + "-" * w0 + "+" + "+".join("-" * w for w in wc) + "+"

    def line(first: str, items: list[str]) -> str:
        return "| " + first.ljust(w0 - 1) + "|" + "|".join((" " + s).ljust(w) for s, w in zip(items, wc)) + "|"

    out = [sep, line(head[0], cols), line(head[1], [""] * len(cols)), sep]
    for r in rows:
        out.append(line(r, [cell.get((r, c), ("", ""))[0] for c in cols]))
        out.append(line("", [cell.get((r, c), ("", ""))[1] for c in cols]))
        out.append(sep)
    if not multi:  # say which side is which (the TeraSort benchmark's caption did)
        w = results[0]
        import textwrap

        out.append(textwrap.fill(f"Each cell: mean {w.x_name} / mean {w.y_name}, and the {int(round(100 * w.conf))}% "
                                 f"CI of mean {w.y_name} - mean {w.x_name}.", 80))
    return "\n".join(out)


def render(df: Any, by: str = "variant", baseline: str | None = None, metric: str = "") -> str:
    """The full ``compare --style welch`` text: every test as R prints it, then the table."""
    results = compare(df, by, baseline)
    if not results:
        return "(no pair of configurations with at least two repetitions each)\n"
    blocks = []
    for w in results:
        ctx = " ".join(f"{k}={v}" for k, v in w.group.items())
        blocks.append(r_output(w, data=f"{by}={w.x_name} and {by}={w.y_name}" + (f" ({ctx})" if ctx else "")))
    title = f"Mean {metric}" if metric else "Mean"
    return "\n".join(blocks) + "\n\n" + table(results, title) + "\n"
