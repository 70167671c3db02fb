"""damo's record files: DAMON snapshots written so that ``damo report access|heatmap|wss``
(the ``damo`` package, tested against 3.4.3) reads them, and damo record files read back.

A ``damo record`` file holds, per monitoring target, one snapshot per aggregation
interval: the time span and the target's regions, each with ``nr_accesses`` (samples, out
of ``aggr_interval / sample_interval``) and ``age`` (aggregation intervals). Formats
(``_damo_records.py`` of damo: ``write_damon_records`` / ``parse_records_file``):

- ``json_compressed`` (damo record's default and what this module writes by default):
  zlib-compressed JSON, a list of ``DamonRecord`` objects as ``to_kvpairs(raw=True)``
  renders them (numbers as decimal strings, times in ns, intervals in us);
- ``json``: the same, uncompressed (damo 3.4.3 recognises it only where ``file`` calls
  it ``JSON data``; file 5.4x says ``JSON text data``, and damo then fails: use
  ``json_compressed`` or ``perf_script`` for damo);
- ``perf_script``: ``perf script`` text of ``damon:damon_aggregated`` trace events, one
  line per region (``target_id=T nr_regions=N START-END: NR_ACCESSES AGE``), snapshot end
  times only. ``trace-cmd report`` text of the same event reads too.

damo identifies a file's type with the ``file`` command (``zlib compressed data``,
``JSON data`` or ``ASCII text``); ``perf record``'s binary ``perf.data`` needs perf, so
convert it first (``damo report access --input perf.data`` on the recording machine, or
``perf script > rec.txt``).

::

    from reclaimlab import damo_record as dr
    dr.write("damon.data", [dr.Record(target_id=0, snapshots=[...])])
    records = dr.read("damon.data")
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .exceptions import TraceError

__all__ = ["Region", "Snapshot", "Record", "FORMATS", "write", "read", "to_kvpairs", "from_kvpairs"]

#: Output formats damo reads without extra tools.
FORMATS = ("json_compressed", "json", "perf_script")

#: DAMON's default attributes (spec D.1), used where a file does not carry them.
SAMPLE_US = 5_000
AGGR_US = 100_000
OPS_UPDATE_US = 1_000_000


@dataclass(frozen=True)
class Region:
    """One DAMON region of a snapshot: ``[start, end)`` bytes, ``nr_accesses`` (samples
    that saw an access in the aggregation interval), ``age`` (aggregation intervals)."""

    start: int
    end: int
    nr_accesses: int
    age: int

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class Snapshot:
    """One aggregation interval of one target: ``[start_ns, end_ns)`` and its regions."""

    start_ns: int
    end_ns: int
    regions: list[Region]


@dataclass
class Record:
    """One monitoring target's snapshots under one set of monitoring intervals."""

    target_id: int = 0
    snapshots: list[Snapshot] = field(default_factory=list)
    sample_us: int = SAMPLE_US
    aggr_us: int = AGGR_US
    ops_update_us: int = OPS_UPDATE_US

    @property
    def max_nr_accesses(self) -> int:
        """``damon_max_nr_accesses``: aggregation / sampling interval (spec D.1)."""
        return max(1, self.aggr_us // max(1, self.sample_us))


# ---- writing --------------------------------------------------------------------------


def to_kvpairs(records: Iterable[Record]) -> list[dict]:
    """The JSON value damo writes: ``[DamonRecord.to_kvpairs(raw=True), ...]``."""
    out = []
    for rec in records:
        out.append({
            "kdamond_idx": 0,
            "context_idx": 0,
            "intervals": {
                "sample_us": "%d" % rec.sample_us,
                "aggr_us": "%d" % rec.aggr_us,
                "ops_update_us": "%d" % rec.ops_update_us,
                "intervals_goal": {"access_bp": "0", "aggrs": "0", "min_sample_us": "0", "max_sample_us": "0"},
            },
            "scheme_idx": None,
            "target_id": rec.target_id,
            "scheme_filters": [],
            "snapshots": [
                {
                    "start_time": "%d" % s.start_ns,
                    "end_time": "%d" % s.end_ns,
                    "regions": [
                        {
                            "start": "%d" % r.start,
                            "end": "%d" % r.end,
                            "nr_accesses": {"samples": int(r.nr_accesses), "percent": None},
                            "age": {"usec": None, "aggr_intervals": "%d" % r.age},
                            "probe_hits": [],
                            "sz_filter_passed": "0",
                        }
                        for r in s.regions
                    ],
                    "total_bytes": "%d" % sum(r.size for r in s.regions),
                    "damos_stats": None,
                    "sample_interval_us": None,
                }
                for s in rec.snapshots
            ],
            "data_source": "unknown",
        })
    return out


def _perf_script(records: Sequence[Record]) -> str:
    """``perf script`` lines of ``damon:damon_aggregated``, as damo's ``write_perf_script``
    (time = snapshot end in seconds; a record's single snapshot gets damo's fake second
    one, so that readers can deduce the first snapshot's start)."""
    lines = []
    for rec in records:
        snaps = list(rec.snapshots)
        if len(snaps) == 1:
            s = snaps[0]
            snaps.append(Snapshot(s.end_ns, 2 * s.end_ns - s.start_ns, [Region(0, 0, -1, -1)]))
        for s in snaps:
            for r in s.regions:
                lines.append("kdamond.x xxxx xxxx %f: damon:damon_aggregated: target_id=%d nr_regions=%d %d-%d: %d %d"
                             % (s.end_ns / 1e9, rec.target_id, len(s.regions), r.start, r.end, r.nr_accesses, r.age))
    return "".join(line + "\n" for line in lines)


def _check(records: Sequence[Record]) -> None:
    for rec in records:
        if rec.sample_us <= 0 or rec.aggr_us < rec.sample_us:
            raise ValueError(f"target {rec.target_id}: need 0 < sample_us <= aggr_us, got {rec.sample_us}, {rec.aggr_us}")
        for i, s in enumerate(rec.snapshots):
            if s.end_ns < s.start_ns:
                raise ValueError(f"target {rec.target_id} snapshot {i}: end {s.end_ns} before start {s.start_ns}")
            prev = None
            for r in s.regions:
                if r.end < r.start or (prev is not None and r.start < prev):
                    raise ValueError(f"target {rec.target_id} snapshot {i}: regions must be ordered and disjoint "
                                     f"([{r.start}, {r.end}) after end {prev})")
                prev = r.end


def encode(records: Sequence[Record], format: str = "json_compressed") -> bytes:
    """The bytes of a damo record file in ``format`` (one of :data:`FORMATS`)."""
    if format not in FORMATS:
        raise ValueError(f"unknown damo record format {format!r}; known: {', '.join(FORMATS)}")
    records = list(records)
    _check(records)
    if format == "perf_script":
        return _perf_script(records).encode()
    # damo writes json.dumps(..., indent=4); without the indent, json's C encoder is used
    # (several times faster on a long record) and damo's json.loads reads it the same.
    text = json.dumps(to_kvpairs(records), separators=(",", ":"))
    return zlib.compress(text.encode()) if format == "json_compressed" else text.encode()


def write(path: str | os.PathLike, records: Sequence[Record], format: str = "json_compressed") -> None:
    """Write ``records`` to ``path`` in damo's ``format``, atomically (whole or not at all)."""
    from ._atomic import atomic_output

    data = encode(records, format)
    with atomic_output(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def from_snapshots(snapshots, sample_us: int = SAMPLE_US, aggr_us: int = AGGR_US) -> list[Record]:
    """Records from a run's ``damon_snapshots`` (``(target, start_ns, end_ns, [(start,
    end, nr_accesses, age), ...])`` per aggregation, as the engine keeps them with
    ``sim.damon_record``; DAMON's default intervals, which the recorder uses)."""
    by_target: dict[int, Record] = {}
    for target, start_ns, end_ns, regions in snapshots:
        rec = by_target.setdefault(target, Record(target_id=target, sample_us=sample_us, aggr_us=aggr_us))
        rec.snapshots.append(Snapshot(start_ns, end_ns, [Region(*r) for r in regions]))
    return list(by_target.values())


def write_result(path: str | os.PathLike, result, format: str = "json_compressed") -> None:
    """Write a run's DAMON snapshots (:class:`reclaimlab.Result` of a run with
    ``sim.damon_record``) as a damo record file."""
    if not result.damon_snapshots:
        from .exceptions import ReclaimlabError

        raise ReclaimlabError(f"{os.fspath(path)}: the run kept no DAMON snapshots (set sim.damon_record=vaddr|paddr; "
                              "a run shorter than one aggregation interval, 100 ms, has none)")
    write(path, from_snapshots(result.damon_snapshots), format)


# ---- reading --------------------------------------------------------------------------


def _num(v, what: str) -> int:
    """A damo raw number: an int, or its decimal string."""
    if isinstance(v, bool):
        raise ValueError(f"{what}: expected a number, got {v!r}")
    try:
        if isinstance(v, (int, float)):
            return int(v)
        if isinstance(v, str):
            try:
                return int(v.replace(",", ""))
            except ValueError:
                return int(float(v.replace(",", "")))
    except (ValueError, OverflowError):  # inf, nan, "1e309": not a number a record holds
        pass
    raise ValueError(f"{what}: expected a number, got {v!r}")


def from_kvpairs(value) -> list[Record]:
    """Records from the JSON value of a damo record file (``raw`` numbers; a newer
    ``{"damon_records": {"record_list": [...]}}`` wrapper is accepted too)."""
    if isinstance(value, dict):
        value = value.get("damo_records", value)
        value = value.get("damon_records", value)
        value = value.get("record_list") if isinstance(value, dict) else value
    if not isinstance(value, list):
        raise ValueError("expected a list of DAMON records")
    out = []
    for i, kv in enumerate(value):
        at = f"record {i}"
        if not isinstance(kv, dict) or "snapshots" not in kv:
            raise ValueError(f"{at}: not a DAMON record (no 'snapshots')")
        iv = kv.get("intervals") or {}
        rec = Record(
            target_id=_num(kv.get("target_id", 0) or 0, f"{at} target_id"),
            sample_us=_num(iv.get("sample_us", SAMPLE_US), f"{at} sample_us"),
            aggr_us=_num(iv.get("aggr_us", AGGR_US), f"{at} aggr_us"),
            ops_update_us=_num(iv.get("ops_update_us", OPS_UPDATE_US), f"{at} ops_update_us"),
        )
        for j, s in enumerate(kv["snapshots"]):
            sat = f"{at} snapshot {j}"
            regions = []
            for k, r in enumerate(s["regions"]):
                rat = f"{sat} region {k}"
                na = r.get("nr_accesses") or {}
                if na.get("samples") is not None:
                    nr = _num(na["samples"], f"{rat} nr_accesses")
                elif na.get("percent") is not None:
                    nr = _num(na["percent"], f"{rat} nr_accesses") * rec.max_nr_accesses // 100
                else:
                    nr = 0
                age = r.get("age") or {}
                if age.get("aggr_intervals") is not None:
                    ag = _num(age["aggr_intervals"], f"{rat} age")
                elif age.get("usec") is not None:
                    ag = _num(age["usec"], f"{rat} age") // max(1, rec.aggr_us)
                else:
                    ag = 0
                regions.append(Region(_num(r["start"], f"{rat} start"), _num(r["end"], f"{rat} end"), nr, ag))
            rec.snapshots.append(Snapshot(_num(s["start_time"], f"{sat} start_time"),
                                          _num(s["end_time"], f"{sat} end_time"), regions))
        out.append(rec)
    _check(out)
    return out


_AGGREGATED = re.compile(
    r"(?P<time>\d+(?:\.\d+)?):\s+(?:damon:)?damon_aggregated:\s+target_id=(?P<tid>\d+)\s+nr_regions=(?P<nr>\d+)\s+"
    r"(?P<start>\d+)-(?P<end>\d+):\s+(?P<acc>-?\d+)(?:\s+(?P<age>-?\d+))?\s*$"
)


def parse_trace_text(text: str, sample_us: int = SAMPLE_US, aggr_us: int = AGGR_US) -> list[Record]:
    """Records from ``perf script`` / ``trace-cmd report`` text of ``damon_aggregated``
    events. Lines of other events are skipped; a ``damon_aggregated`` line that does not
    parse is an error naming its line number. Snapshot start times are the previous
    snapshot's end; the first one's start is its end minus the mean snapshot length, as
    damo deduces it; damo's fake trailing snapshot (``0-0: -1 -1``) is dropped."""
    by_target: dict[int, Record] = {}
    cur: dict[int, tuple[int, list[Region]]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if "damon_aggregated:" not in line:
            continue
        m = _AGGREGATED.search(line)
        if m is None:
            raise ValueError(f"line {lineno}: unreadable damon_aggregated event: {line.strip()[:120]}")
        tid = int(m["tid"])
        end_ns = int(round(float(m["time"]) * 1e9))
        region = Region(int(m["start"]), int(m["end"]), int(m["acc"]), int(m["age"] or 0))
        rec = by_target.setdefault(tid, Record(target_id=tid, sample_us=sample_us, aggr_us=aggr_us))
        t, regions = cur.get(tid, (None, None))
        if t != end_ns:
            regions = []
            cur[tid] = (end_ns, regions)
            prev_end = rec.snapshots[-1].end_ns if rec.snapshots else None
            rec.snapshots.append(Snapshot(prev_end if prev_end is not None else end_ns, end_ns, regions))
        regions.append(region)
    for rec in by_target.values():
        snaps = rec.snapshots
        if snaps and len(snaps[-1].regions) == 1 and snaps[-1].regions[0] == Region(0, 0, -1, -1):
            snaps.pop()
        if len(snaps) >= 2:
            mean = (snaps[-1].end_ns - snaps[0].end_ns) // (len(snaps) - 1)
            snaps[0].start_ns = snaps[0].end_ns - mean
        elif snaps:
            snaps[0].start_ns = snaps[0].end_ns - aggr_us * 1000
        for s in snaps:
            s.regions.sort(key=lambda r: r.start)
    out = list(by_target.values())
    _check(out)
    return out


def read(path: str | os.PathLike, sample_us: int | None = None, aggr_us: int | None = None) -> list[Record]:
    """Read a damo record file of any of :data:`FORMATS` (detected from its content).
    ``sample_us``/``aggr_us`` give the monitoring intervals of a perf-script file (which
    does not carry them; default DAMON's 5 ms / 100 ms) or override a JSON file's.
    Errors are :class:`TraceError` naming the file and the place."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        data = f.read()
    try:
        zerr = None
        if len(data) >= 2 and data[0] == 0x78 and (data[0] << 8 | data[1]) % 31 == 0:  # a zlib header
            try:
                data = zlib.decompress(data)
            except zlib.error as e:
                zerr = e
        if zerr is not None and b"damon_aggregated:" not in data:
            raise ValueError(f"damaged zlib stream ({zerr})")
        text = data.decode("utf-8", errors="strict")
        head = text.lstrip()[:1]
        if head in ("[", "{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"bad JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
            records = from_kvpairs(value)
        elif "damon_aggregated:" in text:
            records = parse_trace_text(text, sample_us or SAMPLE_US, aggr_us or AGGR_US)
            sample_us = aggr_us = None
        else:
            raise ValueError("not a damo record file (json_compressed, json or perf script text of "
                             "damon_aggregated events); a binary perf.data needs `perf script` first")
    except UnicodeDecodeError:
        raise TraceError(f"{p}: not a damo record file (binary data that is not zlib-compressed JSON; "
                         "a perf.data file needs `perf script` first)") from None
    except (ValueError, KeyError, TypeError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise TraceError(f"{p}: {what}") from None
    for rec in records:
        if sample_us:
            rec.sample_us = int(sample_us)
        if aggr_us:
            rec.aggr_us = int(aggr_us)
    return records
