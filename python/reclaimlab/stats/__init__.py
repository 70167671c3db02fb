"""Statistics for comparing runs: Welch's t-test printed the way the MGLRU Apache Hadoop TeraSort benchmark's R script prints
it (:mod:`.welch`) and mmtests-style comparison tables (:mod:`.mmtests`).

Both work on *measurements*: a polars DataFrame with the columns ``metric``, ``variant``,
``repetition``, ``value`` and any number of configuration columns (``swap``,
``concurrency``, a knob, ...). :func:`load_measurements` reads one from a CSV of real
machines' numbers or from an experiment's results store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError

__all__ = ["load_measurements", "config_columns", "split_baseline", "sample_sd", "comparisons", "CORE_COLUMNS"]

#: The columns every measurement table has; the others are configuration columns.
CORE_COLUMNS = ("metric", "variant", "repetition", "value")


def load_measurements(path: str | os.PathLike, metric: str | None = None):
    """A CSV file (columns ``metric, variant, <config...>, repetition, value``), an
    experiment directory (its ``results.sqlite``), an mmtests result tree
    (``work/log/<kernel>/iter-*/<benchmark>``; ``metric`` picks the benchmark) or
    ``extract-mmtests.pl --print-json`` output (:mod:`.mmtests_dir`) as a measurements
    DataFrame."""
    import polars as pl

    p = Path(path)
    from . import mmtests_dir

    if p.is_dir() and mmtests_dir.is_results_tree(p):
        df = mmtests_dir.load_tree(p, metric)
        return df
    if p.is_file() and p.suffix == ".json":
        df = mmtests_dir.load_json(p)
        return df if metric is None else _only(df, metric, p)
    if p.is_dir():
        from ..results import Store

        if not (p / "results.sqlite").exists():
            raise ConfigError(f"{p}: no results store (results.sqlite) in this directory")
        with Store(p, create=False) as store:
            df = store.measurements(metric)
    elif p.exists():
        try:
            df = pl.read_csv(p, infer_schema_length=10000)
        except (pl.exceptions.PolarsError, OSError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ConfigError(f"{p}: not a measurements CSV ({first})") from None
        missing = [c for c in ("variant", "value") if c not in df.columns]
        if missing:
            raise ConfigError(f"{p}: missing column(s) {', '.join(missing)} (need metric, variant, repetition, value)")
        if "metric" not in df.columns:
            df = df.with_columns(pl.lit("value").alias("metric"))
        if "repetition" not in df.columns:
            df = df.with_columns(pl.int_range(0, pl.len()).over(
                [c for c in df.columns if c not in ("value",)] or "variant").alias("repetition"))
        try:
            df = df.with_columns(pl.col("value").cast(pl.Float64), pl.col("variant").cast(pl.Utf8))
        except pl.exceptions.PolarsError:
            raise ConfigError(f"{p}: column 'value' holds something that is not a number") from None
        for c in config_columns(df):
            df = df.with_columns(pl.col(c).cast(pl.Utf8))
    else:
        raise ConfigError(f"{p}: no such file or directory")
    if metric is not None:
        df = df.filter(pl.col("metric") == metric)
        if df.height == 0:
            raise ConfigError(f"{p}: no measurements of metric '{metric}'")
    return df


def _only(df: Any, metric: str, p: Path) -> Any:
    import polars as pl

    df = df.filter(pl.col("metric") == metric)
    if df.height == 0:
        raise ConfigError(f"{p}: no measurements of metric '{metric}'")
    return df


def config_columns(df: Any) -> list[str]:
    """The configuration columns of a measurements frame (everything but the core ones)."""
    return [c for c in df.columns if c not in CORE_COLUMNS]


def split_baseline(df: Any, baseline: str | None) -> tuple[str, str]:
    """``--baseline`` → (column compared along, baseline value). ``NAME`` compares
    variants (baseline variant NAME); ``COLUMN=VALUE`` compares along a configuration
    column (e.g. ``swap=swapoff``). Default: the first variant in the data."""
    import polars as pl

    if baseline and "=" in baseline:
        col, _, val = baseline.partition("=")
        col, val = col.strip(), val.strip()
        if col not in df.columns or col in ("metric", "repetition", "value"):
            raise ConfigError(f"--baseline {baseline}: no configuration column '{col}' (have: {', '.join(['variant'] + config_columns(df))})")
    else:
        col, val = "variant", baseline
    levels = df.get_column(col).unique(maintain_order=True).to_list()
    if val is None:
        val = levels[0]
    if val not in levels:
        raise ConfigError(f"--baseline: '{val}' is not a value of {col} (have: {', '.join(map(str, levels))})")
    del pl
    return col, val


def sample_sd(values: Any) -> float:
    """The sample SD (n − 1), NaN below two values; 0 for data R calls "essentially
    constant" (an SD below 10·eps·|mean|, rounding noise of the mean)."""
    import numpy as np

    from .rformat import EPS

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float("nan")
    sd = float(np.std(v, ddof=1))
    return 0.0 if sd < 10 * EPS * abs(float(np.mean(v))) else sd


def comparisons(source: str | os.PathLike, metric: str | None = None, baseline: str | None = None):
    """The Welch tests of ``reclaimlab compare SOURCE`` as a polars DataFrame
    (:func:`reclaimlab.stats.frame.comparisons`)."""
    from .frame import comparisons as _comparisons

    return _comparisons(source, metric, baseline)
