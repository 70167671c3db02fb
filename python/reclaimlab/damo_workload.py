"""A damo record turned into a workload: DAMON's region-level access pattern replayed as
page accesses (``reclaimlab trace convert REC.data out.trace --trace-format damo``).

The conversion (docs/damo.md):

1. **Address space.** Per target, the union of all its regions' extents (4 KiB aligned)
   over all snapshots is laid out as consecutive dense page ids, in address order, gaps
   dropped (a vaddr target's three regions become adjacent); targets follow each other
   in order of first appearance.
2. **Time.** Snapshots ending at the same time form one interval; an interval lasts from
   the previous interval's end (the first: from its own start) to its end.
3. **Accesses.** DAMON checks one random page of a region per sampling interval, so a
   region with ``nr_accesses = n`` out of ``max = aggr_interval / sample_interval`` had
   each page accessed within a sampling interval with probability ``p = n / max``. Per
   sampling interval the region gets ``k = -ln(1 - p) * pages`` accesses to uniformly
   random pages: then a page is touched with probability ``1 - e^(-k/pages) = p``, so
   DAMON monitoring the replay samples the same ``nr_accesses`` in expectation
   (``p`` is capped at ``1 - 1/(2 max)``: ``n = max`` gives ``k = ln(2 max) * pages``).
   Over an interval of ``S`` sampling intervals the region gets ``round(scale * k * S)``
   accesses, spread evenly in time (``scale`` < 1 thins a large record).
4. **Memory.** With ``populate`` (the default) every page is first written once at time
   0, so memory DAMON saw but never saw accessed exists in the replay (it is what
   DAMON_RECLAIM reclaims). Accesses are of one ``kind`` (anon by default), reads.

Deterministic: the same record, options and seed give the same records.
"""

from __future__ import annotations

import math
import os
from typing import Sequence

from . import damo_record as dr
from .exceptions import TraceError

__all__ = ["layout", "intervals", "source", "accesses_per_sample"]

PAGE = 4096


def accesses_per_sample(nr_accesses: int, max_nr_accesses: int, pages: int) -> float:
    """Accesses per sampling interval that make DAMON sample ``nr_accesses`` of
    ``max_nr_accesses`` in expectation on a region of ``pages`` pages (step 3 above)."""
    if nr_accesses <= 0 or pages <= 0:
        return 0.0
    cap = 1.0 - 1.0 / (2 * max_nr_accesses)
    p = min(nr_accesses / max_nr_accesses, cap)
    return -math.log1p(-p) * pages


def layout(records: Sequence[dr.Record]) -> list[tuple[int, int, int, int]]:
    """The address map: ``(target_id, start, end, first_page)`` segments, each a maximal
    union of the target's page-aligned region extents, with consecutive page ids."""
    by_target: dict[int, list[tuple[int, int]]] = {}
    for rec in records:
        spans = by_target.setdefault(rec.target_id, [])
        for s in rec.snapshots:
            for r in s.regions:
                if r.end > r.start:
                    spans.append((r.start // PAGE * PAGE, -(-r.end // PAGE) * PAGE))
    out = []
    next_page = 0
    for tid, spans in by_target.items():
        spans.sort()
        merged: list[list[int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for a, b in merged:
            out.append((tid, a, b, next_page))
            next_page += (b - a) // PAGE
    return out


def intervals(records: Sequence[dr.Record], scale: float = 1.0) -> tuple[list[tuple[int, list[tuple[int, int, int]]]], int]:
    """``([(duration_ns, [(first_page, pages, accesses), ...]), ...], nr_pages)`` for
    :func:`reclaimlab._core.regions_source` (steps 1-3 above)."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    segs = layout(records)
    if not segs:
        raise ValueError("the record has no regions")
    nr_pages = sum((b - a) // PAGE for _, a, b, _ in segs)
    if nr_pages >= 1 << 32:
        raise ValueError(f"the record covers {nr_pages} pages, more than 2^32-1; record a smaller range")
    seg_of: dict[int, list[tuple[int, int, int]]] = {}
    for tid, a, b, first in segs:
        seg_of.setdefault(tid, []).append((a, b, first))

    def page_of(tid: int, addr: int) -> int:
        for a, b, first in seg_of[tid]:
            if a <= addr < b or addr == b:
                return first + (addr - a) // PAGE
        raise AssertionError("address outside the layout")

    by_end: dict[int, tuple[int, list[tuple[int, int, int]]]] = {}
    for rec in records:
        max_nr = rec.max_nr_accesses
        for s in rec.snapshots:
            start, spans = by_end.setdefault(s.end_ns, (s.start_ns, []))
            by_end[s.end_ns] = (min(start, s.start_ns), spans)
            samples = (s.end_ns - s.start_ns) / (rec.sample_us * 1000)
            for r in s.regions:
                if r.end <= r.start or r.nr_accesses <= 0:
                    continue
                first = page_of(rec.target_id, r.start // PAGE * PAGE)
                pages = page_of(rec.target_id, -(-r.end // PAGE) * PAGE) - first
                n = round(scale * accesses_per_sample(r.nr_accesses, max_nr, pages) * samples)
                if n > 0:
                    spans.append((first, pages, n))
    out = []
    prev_end = None
    for end in sorted(by_end):
        start, spans = by_end[end]
        begin = start if prev_end is None else prev_end
        out.append((max(0, end - begin), spans))
        prev_end = end
    return out, nr_pages


def source(path: str | os.PathLike, *, scale: float = 1.0, populate: bool = True, kind: str = "anon",
           seed: int = 1, sample_us: int | None = None, aggr_us: int | None = None):
    """A trace source (:class:`reclaimlab.Source`) replaying the damo record at ``path``."""
    from . import _core

    records = dr.read(path, sample_us=sample_us, aggr_us=aggr_us)
    try:
        ivs, nr_pages = intervals(records, scale)
    except ValueError as e:
        raise TraceError(f"{os.fspath(path)}: {e}") from None
    try:
        return _core.regions_source(ivs, nr_pages, populate, kind, seed)
    except OverflowError:  # a region's address or size, or a time, past 64 bits (or pages past 32)
        raise TraceError(f"{os.fspath(path)}: a region's address or size, or a snapshot's time, is too large "
                         f"for the simulator (64-bit addresses and nanoseconds, 2^32 pages)") from None
