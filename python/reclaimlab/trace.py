"""Traces from Python, as ``reclaimlab trace info|convert|gen`` handle them: the same
option names (``trace_format``, ``trace_kind``, ``pages``, ``accesses``, ``seed`` ...) and
the same results (:func:`info` is what ``trace info --json`` prints, :func:`convert` and
:func:`generate` return the records written), plus :func:`write` for a trace built in
Python (page list, writes, ``memory.reclaim`` writes and ``madvise`` calls).

A trace is a path in any readable format (native, lirs, address, csv, oracle, damo);
``reclaimlab.open_trace`` and ``reclaimlab.generate`` give the in-memory sources the
engine replays."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

from . import _core
from .exceptions import ConfigError, ReclaimlabError

PathArg = Union[str, "os.PathLike[str]"]

#: Formats :func:`info` and :func:`convert` read (``trace_format``; None: detect).
FORMATS = ("native", "lirs", "address", "csv", "oracle", "damo")
#: What records that lack it are (``trace_kind``).
KINDS = ("file-read", "file-mapped", "anon")
#: Patterns :func:`generate` takes (``program``: a phased program, docs/trace-programs.md).
PATTERNS = ("zipf", "uniform", "seq", "loop", "zigzag", "program")
#: Output formats of :func:`convert` (``to``).
OUTPUTS = ("native", "oracle")


def _choice(name: str, value: str | None, choices: Sequence[str]) -> None:
    if value is not None and value not in choices:
        raise ConfigError(f"{name} {value!r}: expected one of {', '.join(choices)}")


def open_source(path: PathArg, trace_format: str | None = None, trace_kind: str | None = None, *, seed: int = 1,
                scale: float = 1.0, populate: bool = True) -> _core.Source:
    """A source over the trace at ``path``: a damo record (``trace_format="damo"``) through
    :mod:`reclaimlab.damo_workload` (``seed``, ``scale``, ``populate`` as ``trace
    --seed/--scale/--no-populate``), anything else through the engine's readers."""
    _choice("trace_format", trace_format, FORMATS)
    _choice("trace_kind", trace_kind, KINDS)
    if trace_format == "damo":
        from .damo_workload import source

        src: _core.Source = source(os.fspath(path), scale=scale, populate=populate, kind=trace_kind or "anon",
                                   seed=seed)
        return src
    return _core.open_trace(os.fspath(path), trace_format, trace_kind)


def info(path: PathArg, *, trace_format: str | None = None, trace_kind: str | None = None, seed: int = 1,
         scale: float = 1.0, populate: bool = True) -> dict[str, Any]:
    """Read the trace to the end and return its counts, the object ``reclaimlab trace info
    --json`` prints: ``format``, ``records``, ``pages``, ``reads``, ``writes``, ``file``,
    ``anon``, ``syscall``, ``mapped``, ``cgroups``, ``has_time``, ``total_gap_ticks``,
    ``tick_ps``, ``ops`` (``memory.reclaim`` writes: before record, cgroup, bytes,
    swappiness), ``madvise`` (before record, first page, pages, advice) and, for a native
    trace, ``storage`` (``compressed``, ``record_bytes``, ``block_bytes``, ``file_bytes``)."""
    src = open_source(path, trace_format, trace_kind, seed=seed, scale=scale, populate=populate)
    out: dict[str, Any] = _core.trace_info(src)
    if out["format"] == "native":
        out["storage"] = _core.native_storage(os.fspath(path))
    return out


def convert(input: PathArg, output: PathArg, *, trace_format: str | None = None, trace_kind: str | None = None,
            to: str | None = None, compress: bool = False, seed: int = 1, scale: float = 1.0,
            populate: bool = True) -> int:
    """Convert the trace ``input`` (any readable format) to ``output`` and return the
    records written, as ``reclaimlab trace convert IN OUT``. ``to`` is ``"native"``
    (reclaimlab's format; ``compress``: compressed blocks, version 2) or ``"oracle"``
    (libCacheSim oracleGeneral; the default when the output's name contains
    ``oracleGeneral``). ``output`` is written only if the whole input converts."""
    _choice("to", to, OUTPUTS)
    src = open_source(input, trace_format, trace_kind, seed=seed, scale=scale, populate=populate)
    to = to or ("oracle" if "oraclegeneral" in Path(output).name.lower() else "native")
    if to == "oracle":
        # atomic, as the native writer (a temporary file renamed on success)
        return _core.cache_load(src, os.fspath(input)).write_oracle(os.fspath(output))
    return _core.trace_convert(src, os.fspath(output), compress)


def single_region_program(pattern: str, pages: int, accesses: int, kind: str = "anon", write_ratio: float = 0.0,
                          cgroup: str = "", alpha: float = 1.0) -> dict[str, Any]:
    """The program dict of a one-region, one-phase trace (what ``trace gen PATTERN`` makes)."""
    pat = f"zipf:{alpha}" if pattern == "zipf" else pattern
    return {
        "regions": [{"name": "main", "pages": pages, "kind": kind, "write_ratio": write_ratio, "cgroup": cgroup}],
        "phases": [{"name": pattern, "accesses": accesses, "streams": [{"region": "main", "pattern": pat, "weight": 1.0}]}],
        "repeat": 1,
    }


def _count(name: str, value: int | None, pattern: str) -> int:
    if value is None:
        raise ConfigError(f"generate {pattern}: {name} is required")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def generate(pattern: str, output: PathArg, *, pages: int | None = None, accesses: int | None = None,
             alpha: float = 1.0, trace_kind: str = "anon", write_ratio: float = 0.0, cgroup: str = "",
             seed: int = 1, program: PathArg | Mapping[str, Any] | None = None) -> int:
    """Generate a synthetic trace into the native trace ``output`` and return the records
    written, as ``reclaimlab trace gen PATTERN``: ``zipf`` (``alpha``), ``uniform``,
    ``seq``/``loop`` (a cyclic scan), ``zigzag`` over ``pages`` pages for ``accesses``
    records, or ``program``: a phased program, a TOML path or the dict
    ``reclaimlab.generate`` takes (docs/trace-programs.md). Same ``seed``, same trace."""
    _choice("pattern", pattern, PATTERNS)
    if pattern == "program":
        if program is None:
            raise ConfigError("generate program: program (a TOML path or a program dict) is required")
        if isinstance(program, Mapping):
            prog, where = dict(program), ""
        else:
            from .program import load_program

            prog, where = load_program(os.fspath(program)), os.fspath(program)
        try:
            src = _core.generate(prog, seed)
        except ReclaimlabError as e:
            if not where:
                raise
            raise type(e)(f"{where}: {e}") from None
    else:
        if program is not None:
            raise ConfigError(f"generate {pattern}: program is for pattern 'program'")
        _choice("trace_kind", trace_kind, KINDS)
        n_pages, n_accesses = _count("pages", pages, pattern), _count("accesses", accesses, pattern)
        src = _core.generate(single_region_program(pattern, n_pages, n_accesses, trace_kind, write_ratio, cgroup,
                                                   alpha), seed)
    return _core.trace_convert(src, os.fspath(output))


#: Access flags of a record by ``trace_kind`` (crates/trace/FORMAT.md; the write bit is 1).
KIND_FLAGS = {"anon": 0, "file-mapped": 2, "file-read": 2 | 4}


def write(output: PathArg, pages: Sequence[int], *, writes: Sequence[bool] | None = None, trace_kind: str = "anon",
          cgroup: str = "", reclaims: Sequence[tuple[int, str, int, int | None]] = (),
          madvise: Sequence[tuple[int, int, int, str]] = ()) -> int:
    """Write a native trace of ``pages`` (page numbers, one access each, in order) and
    return the records written. ``writes``: a flag per access (default: all reads);
    ``trace_kind``: what the pages are; ``cgroup``: the cgroup charged (default root).
    ``reclaims``: ``memory.reclaim`` writes as (before record, cgroup, bytes, swappiness or
    None); ``madvise``: calls as (before record, first page, pages, advice), advice
    ``"hugepage"``, ``"nohugepage"`` or ``"dontneed"`` (crates/trace/FORMAT.md, "Op
    table"). Written atomically: nothing is left behind on an error."""
    import numpy as np

    _choice("trace_kind", trace_kind, KINDS)
    try:
        page = np.asarray(pages, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError("pages must be page numbers (non-negative integers)") from None
    if page.ndim != 1 or (page.size and (page.min() < 0 or page.max() >= 1 << 32)):
        raise ConfigError("pages must be a flat sequence of page numbers in 0..2^32-1")
    flags = np.full(page.size, KIND_FLAGS[trace_kind], dtype=np.uint8)
    if writes is not None:
        w = np.asarray(writes, dtype=bool)
        if w.shape != page.shape:
            raise ConfigError(f"writes has {w.size} flags for {page.size} pages")
        flags |= w.astype(np.uint8)
    return _core.trace_write(os.fspath(output), page.astype("<u4").tobytes(), flags.tobytes(), cgroup,
                             ops=list(reclaims), madvise=list(madvise))
