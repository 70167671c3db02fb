"""Cache simulation from Python, as ``reclaimlab cachesim`` and ``reclaimlab mrc`` do it:
miss ratios of the reference algorithms (LRU, ARC, S3-FIFO, ...; :func:`algorithms`) and
miss-ratio curves, as polars DataFrames. A trace is a path (any readable format)."""

from __future__ import annotations

import math
from os import PathLike
from typing import TYPE_CHECKING, Iterable, Sequence, Union

if TYPE_CHECKING:
    import polars

Sizes = Union[Iterable[Union[int, str]], str]


def algorithms() -> list[str]:
    """The algorithm names :func:`cachesim` and :func:`mrc` take."""
    from . import _core

    return list(_core.cache_algos())


def _sizes(sizes: Sizes, distinct: int) -> list[int]:
    from .cli.cachesim import parse_sizes

    text = sizes if isinstance(sizes, str) else ",".join(str(s) for s in sizes)
    return parse_sizes(text, distinct)


def _load(trace: str | PathLike[str], trace_format: str | None):
    from .cli.cachesim import load

    return load(str(trace), trace_format)


def cachesim(trace: str | PathLike[str], algos: str | Sequence[str], sizes: Sizes,
             trace_format: str | None = None) -> "polars.DataFrame":
    """One row per algorithm and size: ``algo``, ``size`` (pages), ``miss_ratio``,
    ``hits``, ``misses``. ``sizes`` are pages or ``"P%"`` of the trace's distinct pages."""
    import polars as pl

    from . import _core
    from .cli.cachesim import parse_algos

    names = parse_algos([algos] if isinstance(algos, str) else list(algos))
    tr = _load(trace, trace_format)
    rows = _core.cache_simulate(tr, names, _sizes(sizes, tr.distinct))
    cols = ("algo", "size", "miss_ratio", "hits", "misses")
    return pl.DataFrame({c: [r[c] for r in rows] for c in cols},
                        schema={"algo": pl.Utf8, "size": pl.Int64, "miss_ratio": pl.Float64, "hits": pl.Int64,
                                "misses": pl.Int64})


def mrc(trace: str | PathLike[str], algos: str | Sequence[str] = "lru", sizes: Sizes | None = None,
        sample_rate: float = 1.0, trace_format: str | None = None) -> "polars.DataFrame":
    """Miss-ratio curves: ``algo``, ``size``, ``miss_ratio`` (null below an algorithm's
    minimum size). Default sizes: 20 evenly spaced up to the distinct pages; LRU's curve
    is exact (stack distances), or SHARDS-sampled at ``sample_rate`` < 1."""
    import polars as pl

    from .cli.cachesim import parse_algos
    from .cli.mrc import DEFAULT_POINTS, curves
    from .exceptions import ReclaimlabError

    if not 0 < sample_rate <= 1:
        raise ReclaimlabError(f"sample_rate must be in (0, 1], got {sample_rate}")
    names = parse_algos([algos] if isinstance(algos, str) else list(algos))
    tr = _load(trace, trace_format)
    distinct = tr.distinct
    if distinct == 0:
        raise ReclaimlabError(f"{trace}: the trace has no requests; no miss-ratio curve")
    points = (sorted(set(_sizes(sizes, distinct))) if sizes is not None
              else sorted({max(1, distinct * i // DEFAULT_POINTS) for i in range(1, DEFAULT_POINTS + 1)}))
    cv = curves(tr, names, points, sample_rate)
    return pl.DataFrame({
        "algo": [a for a in names for _ in points],
        "size": [s for _ in names for s in points],
        "miss_ratio": [None if math.isnan(y) else y for a in names for y in cv[a]],
    }, schema={"algo": pl.Utf8, "size": pl.Int64, "miss_ratio": pl.Float64})
