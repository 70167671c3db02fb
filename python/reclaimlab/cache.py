"""Cache simulation from Python, as ``reclaimlab cachesim`` and ``reclaimlab mrc`` do it:
miss ratios of the reference algorithms (LRU, ARC, S3-FIFO, ...; :func:`algorithms`) and
miss-ratio curves, as polars DataFrames. A trace is a path (any readable format).
:class:`Cache` is one cache of one algorithm fed request by request, as libCacheSim's
Python caches are (``Cache("arc", size=1000).access(page)``)."""

from __future__ import annotations

import math
from os import PathLike
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence, Union

if TYPE_CHECKING:
    import polars

    from . import _core

Sizes = Union[Iterable[Union[int, str]], str]


def algorithms() -> list[str]:
    """The algorithm names :func:`cachesim` and :func:`mrc` take."""
    from . import _core

    return list(_core.cache_algos())


def _sizes(sizes: Sizes, distinct: int) -> list[int]:
    from .cli.cachesim import parse_sizes

    text = sizes if isinstance(sizes, str) else ",".join(str(s) for s in sizes)
    return parse_sizes(text, distinct)


def _load(trace: str | PathLike[str], trace_format: str | None) -> "_core.CacheTrace":
    from .cli.cachesim import load

    loaded: _core.CacheTrace = load(str(trace), trace_format)
    return loaded


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


@dataclass(frozen=True)
class CacheStats:
    """Hits and misses of a :class:`Cache` (all its requests, or one :meth:`Cache.process`)."""

    hits: int
    misses: int

    @property
    def requests(self) -> int:
        return self.hits + self.misses

    @property
    def miss_ratio(self) -> float:
        """misses / requests (0 before any request, as ``cachesim`` reports an empty trace)."""
        return self.misses / self.requests if self.requests else 0.0

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.requests if self.requests else 0.0


class Cache:
    """One cache of a reference algorithm (any of :func:`algorithms` but the offline
    ``belady``/``belady-paper``, which need the whole trace: use :func:`cachesim`), over the
    Rust implementations ``cachesim`` runs, so the same requests give the same hits.

    ``size`` is the capacity in pages (objects of size 1). Pages are any non-negative
    integers. The algorithms keep per-page arrays: by default the cache grows them as new
    pages arrive (it keeps every request, 4 bytes each, to rebuild its state at twice the
    pages); ``pages=N`` fixes room for N distinct pages instead, keeps nothing, and a page
    beyond them is an error. Bad arguments raise :class:`reclaimlab.ReclaimlabError`.

    >>> c = Cache("lru", size=2)
    >>> [c.access(p) for p in (1, 2, 1, 3, 2)]
    [False, False, True, False, False]
    >>> c.stats.miss_ratio
    0.8
    """

    def __init__(self, algo: str, size: int, *, pages: int | None = None) -> None:
        from . import _core
        from .exceptions import ReclaimlabError

        for name, value in (("size", size), ("pages", pages)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ReclaimlabError(f"{name} must be a non-negative integer, got {value!r}")
        self._sim = _core.CacheSim(algo, size, pages)

    @property
    def algo(self) -> str:
        """The algorithm, as :func:`algorithms` names it."""
        return self._sim.algo

    @property
    def size(self) -> int:
        """Capacity in pages."""
        return self._sim.size

    @property
    def stats(self) -> CacheStats:
        """Hits and misses of every request so far."""
        return CacheStats(self._sim.hits, self._sim.misses)

    @property
    def distinct(self) -> int:
        """Distinct pages requested so far."""
        return self._sim.distinct

    def __len__(self) -> int:
        """Pages resident now."""
        return len(self._sim)

    def access(self, page: int) -> bool:
        """One request for ``page``: True on a hit; on a miss the page is inserted,
        evicting as the algorithm does."""
        return self._sim.access(page)

    def process(self, requests: str | PathLike[str] | Iterable[int], trace_format: str | None = None) -> CacheStats:
        """Request every page of ``requests`` in order, a trace file (any format
        :func:`cachesim` reads; ``trace_format`` as there) or page numbers, and return the
        hits and misses among them (:attr:`stats` keeps counting all requests)."""
        if isinstance(requests, (str, PathLike)):
            hits, misses = self._sim.process_trace(_load(requests, trace_format))
        else:
            hits, misses = self._sim.process(list(requests))
        return CacheStats(hits, misses)

    def __repr__(self) -> str:
        st = self.stats
        return f"Cache({self.algo!r}, size={self.size}: {st.requests} requests, miss ratio {st.miss_ratio:.4f})"
