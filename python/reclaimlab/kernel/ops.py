"""The two files one workload becomes: the guest program's ops file (guest/wl.c's format)
and the simulator's CSV trace of the same accesses, in cgroup ``wl``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _atomic
from .workload import FILE, SYSCALL, WRITE, Workload

MAGIC = b"RLWLOPS1"
HEADER = 64
OP_PREAD, OP_MAPREAD, OP_ANONW, OP_ANONR, OP_SLEEP, OP_PHASE = 0, 1, 2, 3, 4, 15
#: The simulator's timed trace: 1 ns ticks.
TICK_PS = 1000
#: The cgroup the guest runs the workload in, and the simulator's name for it.
CGROUP = "wl"


def op_words(wl: Workload) -> np.ndarray:
    """One u32 per access (op << 28 | page), a PHASE word after each phase."""
    f = wl.flags
    is_file = (f & FILE) != 0
    op = np.where(is_file, np.where((f & SYSCALL) != 0, OP_PREAD, OP_MAPREAD),
                  np.where((f & WRITE) != 0, OP_ANONW, OP_ANONR)).astype(np.uint32)
    words = (op << np.uint32(28)) | wl.pages.astype(np.uint32)
    if wl.sleep_us is not None:  # a SLEEP word before each access that waits
        at = np.flatnonzero(wl.sleep_us)
        sleeps = (np.uint32(OP_SLEEP) << np.uint32(28)) | wl.sleep_us[at].astype(np.uint32)
        words = np.insert(words, at, sleeps)
        # The phase bounds move by the SLEEP words before them.
        bounds = [int(b + np.searchsorted(at, b)) for b in wl.bounds]
    else:
        bounds = wl.bounds
    pieces, start = [], 0
    for i, end in enumerate(bounds):
        pieces.append(words[start:end])
        pieces.append(np.array([(OP_PHASE << 28) | (i + 1)], dtype=np.uint32))
        start = end
    return np.concatenate(pieces)


def ops_size(wl: Workload) -> int:
    sleeps = 0 if wl.sleep_us is None else int(np.count_nonzero(wl.sleep_us))
    return HEADER + 4 * (len(wl) + len(wl.bounds) + sleeps)


def write_ops(wl: Workload, path: Path) -> None:
    words = op_words(wl)
    header = MAGIC + np.array([words.size, wl.file_pages, wl.anon_pages, 0, 0, 0, 0], dtype="<u8").tobytes()
    with _atomic.atomic_output(path) as tmp, open(tmp, "wb") as fh:
        fh.write(header)
        fh.write(words.astype("<u4").tobytes())


def default_access_ns() -> float:
    """The simulator's time per access of an untimed trace (``cost.access_ns``)."""
    from .. import _core

    return float(_core.Config().get("cost.access_ns"))


def write_sim_trace(wl: Workload, path: Path, access_ns: float | None = None) -> None:
    """The simulator's native trace (cgroup ``wl``): file pages keep their page numbers,
    which are their offsets in the guest's one data file (the trace's one file, so
    readahead and fault-around see the guest's layout); anon pages are numbered after
    them."""
    from .. import _core

    is_file = (wl.flags & FILE) != 0
    page = np.where(is_file, wl.pages.astype(np.int64), wl.pages.astype(np.int64) + wl.file_pages).astype("<u4")
    files = [("data", 0, int(wl.file_pages))] if wl.file_pages else []
    gaps, tick = None, 0
    if wl.sleep_us is not None:
        # A timed trace: each access costs ``access_ns`` (by default what an untimed one
        # would, cost.access_ns), plus the sleep before it.
        if access_ns is None:
            access_ns = default_access_ns()
        gap = max(1, round(access_ns)) + wl.sleep_us.astype(np.uint64) * 1000
        gaps, tick = gap.astype("<u4").tobytes(), TICK_PS
    _core.trace_write(str(path), page.tobytes(), wl.flags.astype(np.uint8).tobytes(), CGROUP, files, gaps, tick)
