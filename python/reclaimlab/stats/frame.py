"""Comparisons as data: :func:`comparisons` (the Welch tests as a polars DataFrame) and
:func:`document` (the ``reclaimlab compare --json`` document, whose JSON Schema is
``compare.schema.json`` beside this file; docs/experiments.md describes it).

Both start from :func:`select`, which ``compare`` uses too: the measurements of one
metric and what they are compared along, so the printed tables, the frame and the JSON
always describe the same tests.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError
from . import split_baseline

__all__ = ["Selection", "select", "comparisons", "welch_frame", "document", "SCHEMA", "SCHEMA_PATH"]

SCHEMA = "reclaimlab.compare/1"
SCHEMA_PATH = Path(__file__).with_name("compare.schema.json")


@dataclass
class Selection:
    """The measurements of ``metric`` in ``source``, compared along ``by`` against ``baseline``."""

    source: Path
    df: Any
    metric: str | None
    by: str
    baseline: str
    meta: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "store" if self.meta else "csv"


def select(source: str | os.PathLike, metric: str | None = None, baseline: str | None = None,
           any_metric: bool = False) -> Selection:
    """Load ``source`` (a results store's directory or a measurements CSV) and pick the
    metric (the store's default, or the only one; ``any_metric`` keeps them all when
    there are several) and the baseline (``NAME`` or ``COLUMN=VALUE``)."""
    from . import load_measurements

    src = Path(source)
    meta: dict = {}
    if src.is_dir() and (src / "results.sqlite").exists():
        from ..results import Store

        with Store(src, create=False) as st:
            meta = st.meta()
    from . import mmtests_dir

    # An mmtests tree is extracted one benchmark (the metric) at a time.
    df = load_measurements(src, metric if mmtests_dir.is_results_tree(src) else None)
    metrics = df.get_column("metric").unique(maintain_order=True).to_list()
    metric = metric or meta.get("metric")
    if metric is None:
        if len(metrics) == 1:
            metric = metrics[0]
        elif not any_metric:
            raise ConfigError(f"{src}: several metrics ({', '.join(metrics)}); pick one with --metric")
    if metric is not None:
        if metric not in metrics:
            raise ConfigError(f"{src}: no metric '{metric}' (have: {', '.join(metrics)})")
        df = df.filter(df.get_column("metric") == metric)
    by, base = split_baseline(df, baseline or meta.get("baseline"))
    return Selection(src, df, metric, by, str(base), meta)


def _num(v: float) -> float | None:
    """JSON has no NaN or infinity: null."""
    return None if v is None or not math.isfinite(v) else float(v)


def verdict(w: Any) -> str:
    """``no test`` (R stopped), ``no significance`` or ``significant`` (the MGLRU Apache Hadoop TeraSort benchmark's rule)."""
    if w.error is not None:
        return "no test"
    return "significant" if w.significant else "no significance"


def welch_records(sel: Selection) -> list[dict[str, Any]]:
    """One plain dict per Welch test of ``sel`` (the ``welch`` array of the document)."""
    from . import welch

    out = []
    for w in welch.compare(sel.df, by=sel.by, baseline=sel.baseline):
        lo, hi = w.change_pct if w.error is None else (math.nan, math.nan)
        out.append({
            "comparison": w.label, "group": {k: str(v) for k, v in w.group.items()},
            "baseline": {"name": w.x_name, "n": len(w.x), "mean": _num(w.mean_x)},
            "other": {"name": w.y_name, "n": len(w.y), "mean": _num(w.mean_y)},
            "t": _num(w.t), "df": _num(w.df), "p": _num(w.p), "conf_level": w.conf,
            "conf_int": [_num(w.ci[0]), _num(w.ci[1])],
            "change_pct": [_num(lo), _num(hi)],
            "verdict": verdict(w), "error": w.error,
        })
    return out


def welch_frame(records: list[dict[str, Any]]):
    """The Welch records as one flat polars DataFrame (one row per test)."""
    import polars as pl

    rows = []
    for r in records:
        rows.append({"comparison": r["comparison"], **r["group"],
                     "baseline": r["baseline"]["name"], "other": r["other"]["name"],
                     "n_baseline": r["baseline"]["n"], "n_other": r["other"]["n"],
                     "mean_baseline": r["baseline"]["mean"], "mean_other": r["other"]["mean"],
                     "t": r["t"], "df": r["df"], "p": r["p"],
                     "ci_low": r["conf_int"][0], "ci_high": r["conf_int"][1],
                     "change_low_pct": r["change_pct"][0], "change_high_pct": r["change_pct"][1],
                     "verdict": r["verdict"]})
    floats = ("mean_baseline", "mean_other", "t", "df", "p", "ci_low", "ci_high", "change_low_pct", "change_high_pct")
    if not rows:
        return pl.DataFrame(schema={"comparison": pl.Utf8, "verdict": pl.Utf8})
    return pl.DataFrame(rows, schema_overrides={k: pl.Float64 for k in floats}, infer_schema_length=None)


def comparisons(source: str | os.PathLike, metric: str | None = None, baseline: str | None = None):
    """Every Welch test ``reclaimlab compare SOURCE`` prints, as a polars DataFrame:
    comparison, the configuration columns, baseline, other, n_*, mean_*, t, df, p, ci_low,
    ci_high (R's CI of mean(baseline) − mean(other)), change_low/high_pct (the TeraSort benchmark's
    percentage interval of the change of other against baseline) and verdict."""
    return welch_frame(welch_records(select(source, metric, baseline)))


def mmtests_records(sel: Selection, rule: str = "2024", prefer: str = "auto") -> list[dict[str, Any]]:
    """Every row of the mmtests tables, one dict per (stat, op, column)."""
    from . import mmtests

    out = []
    for metric, ops, columns, higher in mmtests.tables(sel.df, by=sel.by, baseline=sel.baseline, prefer=prefer):
        for stat, op, cells in mmtests.cell_rows(ops, columns, higher, rule):
            for column, value, pct, sig in cells:
                out.append({"metric": metric, "stat": stat, "op": op, "column": column, "value": _num(value),
                            "pct": _num(pct), "significant": sig})
    return out


def vmstat_groups(src: Path, by: str, base: str) -> list[tuple[dict[str, str], list[str], dict[str, list]]]:
    """A store's runs for the mmtests vmstat tables: per combination of the other columns,
    ``(group, columns (baseline first), {column: [(vmstat counters, runtime_s)]})``."""
    from ..results import Store

    with Store(src, create=False) as st:
        vm = st.vmstat()
        m = st.metrics()
        axes = [a for a in (st.meta().get("axes") or []) if a in vm.columns]
    fixed = {"run_id", "variant", "repetition", "seed", "policy", "workload", "started", "finished", "stored", "worker"}
    group_cols = [c for c in ["variant"] + axes if c != by]
    levels = vm.get_column(by).unique(maintain_order=True).to_list()
    columns = [base] + [lv for lv in levels if lv != base]
    elapsed = dict(zip(m.get_column("run_id").to_list(), m.get_column("runtime_s").to_list())) \
        if "runtime_s" in m.columns else {}
    counters = [c for c in vm.columns if c not in fixed and c not in axes]
    out = []
    keys = vm.select(group_cols).unique(maintain_order=True).rows() if group_cols else [()]
    for key in keys:
        sub = vm
        for c, v in zip(group_cols, key):
            sub = sub.filter(sub.get_column(c) == v)
        runs = {}
        for col in columns:
            rows = sub.filter(sub.get_column(by) == col).to_dicts()
            runs[col] = [({k: r[k] for k in counters if r.get(k) is not None}, float(elapsed.get(r["run_id"], 0.0)))
                         for r in rows]
        out.append(({c: str(v) for c, v in zip(group_cols, key)}, [str(c) for c in columns], runs))
    return out


def vmstat_records(sel: Selection) -> list[dict[str, Any]]:
    """Every row of a store's mmtests vmstat tables (none for a CSV)."""
    from . import mmtests

    if sel.kind != "store":
        return []
    out = []
    for group, columns, runs in vmstat_groups(sel.source, sel.by, sel.baseline):
        for column, rows in mmtests.vmstat_columns(columns, runs).items():
            for name, value, unit in rows:
                out.append({"group": group, "row": name, "column": column,
                            "value": None if value is None else _num(value), "unit": unit})
    return out


def noise_text(sel: Selection) -> str:
    """What the repetitions carry besides the seed: the line atop every comparison."""
    from ..experiment.noise import Noise

    if "noise" in sel.meta:
        return Noise(**sel.meta["noise"]).describe()
    if sel.meta:
        return ("noise: none recorded (a store from before the noise model: repetitions differ only by the "
                "workload's seed; their intervals are not those of a measured machine)")
    return f"noise: as measured ({sel.source.name} holds measurements, not simulated runs)"


def document(sel: Selection, rule: str = "2024", prefer: str = "auto") -> dict[str, Any]:
    """The ``compare --json`` document (schema :data:`SCHEMA`)."""
    from ..experiment.noise import Noise
    from ..provenance import provenance

    effective = None
    if sel.kind == "store":
        from ..results import Store

        with Store(sel.source, create=False) as st:
            effective = st.effective_config()
    noise = sel.meta.get("noise")
    return {
        "schema": SCHEMA,
        "provenance": provenance(),
        "source": {"path": str(sel.source), "kind": sel.kind},
        "experiment": {k: v for k, v in sel.meta.items() if k != "noise"} or None,
        "effective_config": effective,
        "noise": {"model": Noise(**noise).spec() if noise else None, "text": noise_text(sel)},
        "metric": sel.metric, "by": sel.by, "baseline": sel.baseline,
        "welch": welch_records(sel),
        "mmtests": {"rule": rule, "prefer": prefer, "rows": mmtests_records(sel, rule, prefer),
                    "vmstat": vmstat_records(sel)},
    }
