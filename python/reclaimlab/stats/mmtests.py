"""mmtests-style comparison tables (gormanm/mmtests ``compare-mmtests.pl``), reference §1.

Rows (``Summarise.pm``/``Stat.pm``), on each sample set sorted best-first (ascending when
lower is better, descending when higher is better):

* ``Min``, ``Max``; ``Amean`` = Σx/n (lower better) or ``Hmean`` = n/Σ(1/x) (higher
  better; NaN if any x ≤ 0);
* ``Stddev`` = sqrt(Σ(x−mean)²/(n−1)) (NaN if n ≤ 1); under the 2024 rule with higher
  better it is ``HStddev`` = sqrt(Σ(1/x−1/H)²·H⁴/n) (delta-method SD of the harmonic mean);
* ``CoeffVar`` (``HCoeffVar``) = 100·SD/mean (0 if the mean is 0);
* ``BAmean-50/95/99`` (``BHmean-…``): the mean of the first max(1, int(n·xx/100)) best-first
  samples.

Percentage column (§1.3): ``pndiff`` = 100 − new·100/base for lower-is-better statistics
and for Stddev/CoeffVar always, ``pdiff`` = new·100/base − 100 for higher-is-better ones;
so a **positive percentage always means better**. The baseline shows ``(   0.00%)``.

Significance (§1.4), on the Amean/Hmean row only; a significant cell prints ``*  x.xx%*``:

* ``rule="2018"`` (mmtests 2018-10 … 2024-08, Mel Gorman's __GFP_THISNODE mmtests report (Dec 2018)): t = |m_b − m_n| /
  sqrt(s_b²/n_b + s_n²/n_n) with the arithmetic SDs, **df = n_b + n_n − 2**, p = 2·P(T > t);
  significant iff p < 0.10. Both SDs 0: significant iff the means differ.
* ``rule="2024"`` (mmtests 8cd087ae, 2024-11 onward): each mean ± qnorm(0.975)·SD (the
  sample SD, not the standard error); cidiff = (new − base)/(half-width_new +
  half-width_base), significant iff |cidiff| > 1 (the ±1.96σ bands do not overlap). With
  n = 1 there is no interval and no star; with both SDs 0, cidiff = the difference.

Layout (§1.5): ``%-Ss %-Os`` then per column ``%F.2f ( %7.2f%)``, F = 12.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

__all__ = [
    "summarise", "pdiff", "pndiff", "significance", "cell_rows", "table", "tables", "render", "vmstat_rows", "vmstat_columns", "vmstat_table",
    "HIGHER_IS_BETTER",
]

#: Metrics where a larger value is better (everything else: lower is better, the default).
HIGHER_IS_BETTER = {"tps", "transactions", "throughput", "memory_saving", "accesses", "ops_per_s"}

Z975 = 1.959963984540054  # qnorm(0.975)


def pdiff(new: float, base: float) -> float:
    """mmtests ``pdiff``: new·100/base − 100 (0 if equal or new is 0; 100 if base is 0/NaN)."""
    if new == base or new == 0:
        return 0.0
    if base == 0 or math.isnan(base):
        return 100.0
    return new * 100 / base - 100


def pndiff(new: float, base: float) -> float:
    """mmtests ``pndiff``: 100 − new·100/base (0 if equal; 100 if new is 0; −99 if base is 0)."""
    if new == base:
        return 0.0
    if new == 0:
        return 100.0
    if base == 0:
        return -99.0
    return 100 - new * 100 / base


def _mean_name(higher: bool) -> str:
    return "Hmean" if higher else "Amean"


def stat_names(higher: bool = False, rule: str = "2018") -> list[str]:
    m = _mean_name(higher)
    h = "H" if (higher and rule == "2024") else ""
    b = "BHmean" if higher else "BAmean"
    return ["Min", m, f"{h}Stddev", f"{h}CoeffVar", "Max", f"{b}-50", f"{b}-95", f"{b}-99"]


def summarise(values: Sequence[float], higher: bool = False, rule: str = "2018") -> dict[str, float]:
    """The statistic rows of one sample set (keys as :func:`stat_names`), plus ``_n``,
    ``_mean`` and ``_sd`` (the SD the significance rule uses)."""
    xs = sorted((float(v) for v in values), reverse=higher)
    n = len(xs)
    nan = float("nan")
    if n == 0:
        return {k: nan for k in stat_names(higher, rule)} | {"_n": 0, "_mean": nan, "_sd": nan}

    def amean(v: Sequence[float]) -> float:
        return math.fsum(v) / len(v)

    def hmean(v: Sequence[float]) -> float:
        return nan if any(x <= 0 for x in v) else len(v) / math.fsum(1 / x for x in v)

    mean_f = hmean if higher else amean
    mean = mean_f(xs)
    am = amean(xs)
    sd = math.sqrt(math.fsum((x - am) ** 2 for x in xs) / (n - 1)) if n > 1 else nan
    if higher and rule == "2024":
        sd = nan if (n < 1 or math.isnan(mean)) else math.sqrt(
            math.fsum((1 / x - 1 / mean) ** 2 for x in xs) * mean ** 4 / n) if n > 1 else nan
    cv = 0.0 if mean == 0 else 100 * sd / mean
    names = stat_names(higher, rule)
    out = {names[0]: min(xs), names[1]: mean, names[2]: sd, names[3]: cv, names[4]: max(xs)}
    for name, pct in zip(names[5:], (50, 95, 99)):
        k = max(1, int(n * pct / 100))
        out[name] = mean_f(xs[:k])
    out.update({"_n": n, "_mean": mean, "_sd": sd})
    return out


def significance(base: Mapping[str, float], new: Mapping[str, float], rule: str = "2018",
                 alpha: float = 0.10) -> tuple[bool, float]:
    """(significant, statistic): the p-value for rule 2018, cidiff for rule 2024."""
    mb, mn, nb, nn = base["_mean"], new["_mean"], base["_n"], new["_n"]
    sb, sn = base["_sd"], new["_sd"]
    if rule == "2018":
        sb = 0.0 if math.isnan(sb) else sb
        sn = 0.0 if math.isnan(sn) else sn
        if sb == 0 and sn == 0:
            return (mb != mn, 0.0 if mb != mn else 1.0)
        from scipy import stats

        t = abs(mb - mn) / math.sqrt(sb * sb / nb + sn * sn / nn)
        df = nb + nn - 2
        p = 2 * float(stats.t.sf(t, df)) if df > 0 else float("nan")
        return (p < alpha, p)
    if rule == "2024":
        if math.isnan(sb) or math.isnan(sn):
            return (False, float("nan"))
        cisum = Z975 * sb + Z975 * sn
        cidiff = (mn - mb) / cisum if cisum != 0 else (mn - mb)
        return (abs(cidiff) > 1, cidiff)
    raise ValueError(f"unknown mmtests rule {rule!r} (2018 or 2024)")


def _split_name(name: str) -> tuple[str, str]:
    """Header lines of a column: the part before the first '-' and the rest (a ``-rcN``
    suffix stays on line 1)."""
    import re

    m = re.match(r"^([^-]*(?:-rc\d+)?)-(.*)$", name)
    return (m.group(1), m.group(2)) if m else (name, "")


def cell_rows(ops: list[tuple[str, dict[str, list[float]]]], columns: list[str],
              higher: bool | Mapping[str, bool] = False, rule: str = "2018"
              ) -> list[tuple[str, str, list[tuple[str, float, float, bool]]]]:
    """The rows of a table, stat-major as mmtests prints them: ``(stat, op, [(column,
    value, percentage, significant)])``; the data behind :func:`table` and ``--json``."""
    def hi(op: str) -> bool:
        return higher.get(op, False) if isinstance(higher, Mapping) else bool(higher)

    summ = {op: {c: summarise(s.get(c, []), hi(op), rule) for c in columns} for op, s in ops}
    base = columns[0]
    rows = []
    for i in range(len(stat_names(False, rule))):
        for op, _ in ops:
            stat = stat_names(hi(op), rule)[i]
            b = summ[op][base]
            cells = []
            for c in columns:
                s = summ[op][c]
                v = s[stat]
                pct = pndiff(v, b[stat]) if (i in (2, 3) or not hi(op)) else pdiff(v, b[stat])
                if c == base:
                    pct = 0.0
                sig = bool(i == 1 and c != base and significance(b, s, rule)[0])
                cells.append((c, v, pct, sig))
            rows.append((stat, op, cells))
    return rows


def table(ops: list[tuple[str, dict[str, list[float]]]], columns: list[str], higher: bool | Mapping[str, bool] = False,
          rule: str = "2018", field: int = 12, precision: int = 2) -> str:
    """One mmtests comparison table. ``ops`` is ``[(op name, {column: samples})]``;
    ``columns`` the compared names, baseline first; ``higher`` per op or for all."""
    def hi(op: str) -> bool:
        return higher.get(op, False) if isinstance(higher, Mapping) else bool(higher)

    rows: list[tuple[str, str, list[str]]] = []
    for stat, op, cells in cell_rows(ops, columns, higher, rule):
        rows.append((stat, op, [f"{v:{field}.{precision}f}" + (f" *{pct:7.2f}%*" if sig else f" ({pct:7.2f}%)")
                                for _, v, pct, sig in cells]))
    sw = max(len(r[0]) for r in rows)
    ow = max(len(r[1]) for r in rows)
    heads = [_split_name(c) for c in columns]
    out = [
        " " * (sw + ow + 1) + "".join(f"{h[0]:>{field + 11}}" for h in heads),
        " " * (sw + ow + 1) + "".join(f"{h[1]:>{field + 11}}" for h in heads),
    ]
    for stat, op, cells in rows:
        out.append(f"{stat:<{sw}}" + f" {op:<{ow}}" + "".join(cells))
    return "\n".join(out)


def render(df: Any, by: str = "variant", baseline: str | None = None, rule: str = "2018",
           prefer: str = "auto") -> str:
    """An mmtests table per metric of a measurements frame: the columns are the levels of
    ``by`` (baseline first), the ops ``metric-<config values>``."""
    return "\n\n".join(table(ops, columns, higher, rule) for _, ops, columns, higher in tables(df, by, baseline, prefer)) + "\n"


def tables(df: Any, by: str = "variant", baseline: str | None = None, prefer: str = "auto"
           ) -> list[tuple[str, list[tuple[str, dict[str, list[float]]]], list[str], bool]]:
    """Per metric of a measurements frame: ``(metric, ops, columns, higher)``, the input
    of :func:`table` — columns the levels of ``by`` (baseline first), ops
    ``metric-<config values>``."""
    from . import config_columns

    levels = df.get_column(by).unique(maintain_order=True).to_list()
    if baseline is None:
        baseline = levels[0]
    columns = [str(baseline)] + [str(lv) for lv in levels if lv != baseline]
    cols = [c for c in (["variant"] + config_columns(df)) if c != by]
    out = []
    for metric in df.get_column("metric").unique(maintain_order=True).to_list():
        m = df.filter(df.get_column("metric") == metric)
        keys = m.select(cols).unique(maintain_order=True).rows() if cols else [()]
        ops = []
        for key in keys:
            sub = m
            for c, v in zip(cols, key):
                sub = sub.filter(sub.get_column(c) == v)
            op = "-".join([str(metric)] + [str(k) for k in key])
            ops.append((op, {c: sub.filter(sub.get_column(by).cast(str) == c).get_column("value").to_list()
                             for c in columns}))
        higher = (metric in HIGHER_IS_BETTER) if prefer == "auto" else (prefer == "higher")
        out.append((str(metric), ops, columns, higher))
    return out


# ---- vmstat-derived rows (MonitorMmtestsvmstat.pm, reference §1.7) ----------------------

_ALLOCSTALL_ORDER = ("allocstall", "allocstall_dma", "allocstall_dma32", "allocstall_normal",
                     "allocstall_movable", "allocstall_device")


def _zsum(v: Mapping[str, float], prefix: str) -> float:
    return math.fsum(float(x) for k, x in v.items()
                     if k == prefix or (k.startswith(prefix + "_") and k[len(prefix) + 1:] in ("dma", "dma32", "normal", "movable", "high")))


def vmstat_rows(vm: Mapping[str, float], elapsed: float) -> list[tuple[str, float | None, str]]:
    """The vmstat-derived rows of one run (counter deltas ``vm``, ``elapsed`` seconds):
    ``[(name, value or None for blank, unit)]``, unit "%" for percentages."""
    g = lambda k: float(vm.get(k, 0) or 0)  # noqa: E731
    has = lambda *ks: any(k in vm for k in ks)  # noqa: E731
    rows: list[tuple[str, float | None, str]] = []
    k_scan, k_steal = _zsum(vm, "pgscan_kswapd"), _zsum(vm, "pgsteal_kswapd") + g("kswapd_steal")
    d_scan, d_steal = _zsum(vm, "pgscan_direct"), _zsum(vm, "pgsteal_direct")
    rows += [("Minor Faults", g("pgfault") - g("pgmajfault"), ""), ("Major Faults", g("pgmajfault"), ""),
             ("Swap Ins", g("pswpin"), ""), ("Swap Outs", g("pswpout"), "")]
    # The rename map sends every allocstall_<zone> onto one key: the last one read wins.
    stall = None
    for k in _ALLOCSTALL_ORDER:
        if k in vm:
            stall = g(k)
    rows.append(("Allocation stalls", stall or 0.0, ""))
    rows += [("Direct pages scanned", d_scan, ""), ("Kswapd pages scanned", k_scan, ""),
             ("Kswapd pages reclaimed", k_steal, ""), ("Direct pages reclaimed", d_steal, ""),
             ("Kswapd efficiency", 100 * k_steal / k_scan if k_scan else 100.0, "%"),
             ("Kswapd velocity", k_scan / elapsed if elapsed else 0.0, ""),
             ("Direct efficiency", 100 * d_steal / d_scan if d_scan else 100.0, "%"),
             ("Direct velocity", d_scan / elapsed if elapsed else 0.0, ""),
             ("Percentage direct scans", 100 * d_scan / (d_scan + k_scan) if (d_scan + k_scan) else 0.0, "%"),
             ("Page writes by reclaim", g("nr_vmscan_write"), ""),
             ("Page writes file", g("nr_vmscan_write") - g("pswpout"), ""),
             ("Page writes anon", g("pswpout"), ""),
             ("Page reclaim immediate", g("nr_vmscan_immediate_reclaim"), ""),
             ("Sector Reads", g("pgpgin"), ""), ("Sector Writes", g("pgpgout"), "")]
    if has("thp_fault_alloc", "thp_fault_fallback"):
        rows += [("THP fault alloc", g("thp_fault_alloc"), ""), ("THP fault fallback", g("thp_fault_fallback"), ""),
                 ("THP collapse alloc", g("thp_collapse_alloc"), ""), ("THP collapse fail", g("thp_collapse_alloc_failed"), ""),
                 ("THP split", g("thp_split_page"), ""), ("THP split failed", g("thp_split_page_failed"), "")]
    if has("compact_stall", "compact_migrate_scanned", "compact_free_scanned"):
        mig, free = g("compact_migrate_scanned"), g("compact_free_scanned")
        if mig == 0:
            scan_eff: float | None = None
        elif free == 0:
            scan_eff = 1.0
        else:
            scan_eff = 100 * mig / free
        rows += [("Compaction stalls", g("compact_stall"), ""), ("Compaction success", g("compact_success"), ""),
                 ("Compaction failures", g("compact_fail"), ""),
                 ("Compaction efficiency", 100 * g("compact_success") / g("compact_stall") if g("compact_stall") else 0.0, "%"),
                 ("Page migrate success", g("pgmigrate_success"), ""), ("Page migrate failure", g("pgmigrate_fail"), ""),
                 ("Compaction pages isolated", g("compact_isolated"), ""),
                 ("Compaction migrate scanned", mig, ""), ("Compaction free scanned", free, ""),
                 ("Compact scan efficiency", scan_eff, "%"),
                 # "compact_migrate_free" does not exist in /proc/vmstat: that term is always 0.
                 ("Compaction cost", (7 * mig + 7 * g("compact_migrate_free") + 19 * g("compact_isolated")
                                      + 1038 * g("pgmigrate_success") + 14 * g("pgmigrate_fail")) / 1e6, "")]
    return rows


def vmstat_columns(columns: list[str], runs: Mapping[str, Sequence[tuple[Mapping[str, float], float]]]
                   ) -> dict[str, list[tuple[str, float | None, str]]]:
    """Per column, its :func:`vmstat_rows` of the counters (and elapsed) averaged over its runs."""
    per: dict[str, list[tuple[str, float | None, str]]] = {}
    for c in columns:
        rs = list(runs.get(c, []))
        keys = sorted({k for vm, _ in rs for k in vm})
        mean_vm = {k: math.fsum(float(vm.get(k, 0)) for vm, _ in rs) / len(rs) for k in keys} if rs else {}
        el = math.fsum(e for _, e in rs) / len(rs) if rs else 0.0
        per[c] = vmstat_rows(mean_vm, el)
    return per


def vmstat_table(columns: list[str], runs: Mapping[str, Sequence[tuple[Mapping[str, float], float]]],
                 rule: str = "2024") -> str:
    """The ``mmtests-vmstat`` monitor table: one column per name in ``columns``; ``runs``
    maps a column to its runs' ``(vmstat deltas, elapsed s)``. Counters (and elapsed) are
    averaged over a column's runs before the ratios are taken. ``rule="2024"`` prints the
    current layout ("Ops " prefix, %15.2f, no percentage column); ``"2018"`` the old one
    (counts as integers, efficiencies with a "%" suffix, as in Mel Gorman's __GFP_THISNODE mmtests report (Dec 2018))."""
    per = vmstat_columns(columns, runs)
    names = [r[0] for r in per[columns[0]]] if columns else []
    heads = [_split_name(c) for c in columns]
    if rule == "2024":
        label = lambda n: "Ops " + n + (" %" if per[columns[0]][names.index(n)][2] == "%" else "")  # noqa: E731
        lw = max(len(label(n)) for n in names)
        out = [" " * lw + "".join(f"{h[0]:>15}" for h in heads), " " * lw + "".join(f"{h[1]:>15}" for h in heads)]
        for i, n in enumerate(names):
            cells = "".join(f"{'':>15}" if per[c][i][1] is None else f"{per[c][i][1]:15.2f}" for c in columns)
            out.append(f"{label(n):<{lw}}" + cells)
        return "\n".join(out)
    lw = max(len(n) for n in names)
    out = [" " * lw + "".join(f"{h[0]:>15}" for h in heads), " " * lw + "".join(f"{h[1]:>15}" for h in heads)]
    for i, n in enumerate(names):
        cells = []
        for c in columns:
            _, v, unit = per[c][i]
            if v is None:
                cells.append(f"{'':>15}")
            elif unit == "%":
                cells.append(f"{('%d%%' % round(v)):>15}")
            elif n in ("Kswapd velocity", "Direct velocity"):
                cells.append(f"{v:15.3f}")
            elif n == "Compaction cost":
                cells.append(f"{v:15.2f}")
            else:
                cells.append(f"{round(v):15d}")
        out.append(f"{n:<{lw}}" + "".join(cells))
    return "\n".join(out)
