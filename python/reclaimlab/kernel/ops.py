"""The two files one workload becomes: the guest program's ops file (guest/wl.c's format)
and the simulator's native trace of the same accesses, in the same cgroups."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _atomic
from .workload import CGROUP, FILE, SYSCALL, WRITE, Workload

__all__ = ["CGROUP", "op_words", "ops_size", "write_ops", "write_sim_trace", "default_access_ns"]

MAGIC = b"RLWLOPS1"
HEADER = 64
OP_PREAD, OP_MAPREAD, OP_ANONW, OP_ANONR, OP_SLEEP, OP_PWRITE, OP_MAPWRITE, OP_CGROUP, OP_RECLAIM, OP_PHASE = \
    0, 1, 2, 3, 4, 5, 6, 7, 8, 15
#: The simulator's timed trace: 1 ns ticks.
TICK_PS = 1000


def _switches(wl: Workload) -> np.ndarray:
    """Where the running cgroup changes (access indices; the first access is one)."""
    ids = wl.cgroup_ids
    if ids is None or not ids.size:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))


def reclaim_words(cgroup: int, nbytes: int, swappiness: int | None) -> list[int]:
    """A RECLAIM op's two words (guest/wl.c): the cgroup index and ``swappiness + 1`` (0:
    none) in bits 0..7 and 8..15, then the pages (``bytes / 4096``; the guest writes
    that many 4 KiB pages' bytes, which the kernel turns back into the same pages)."""
    return [(OP_RECLAIM << 28) | cgroup | (0 if swappiness is None else swappiness + 1) << 8, nbytes // 4096]


def op_words(wl: Workload) -> np.ndarray:
    """One u32 per access (op << 28 | page); before an access, a CGROUP word where the
    running cgroup changes, the trace's memory.reclaim writes (two words each) and a SLEEP
    word where it waits; a PHASE word after each phase."""
    f = wl.flags
    is_file = (f & FILE) != 0
    write = (f & WRITE) != 0
    syscall = (f & SYSCALL) != 0
    op = np.where(is_file, np.where(syscall, np.where(write, OP_PWRITE, OP_PREAD), np.where(write, OP_MAPWRITE, OP_MAPREAD)),
                  np.where(write, OP_ANONW, OP_ANONR)).astype(np.uint32)
    words = (op << np.uint32(28)) | wl.pages.astype(np.uint32)
    # Words before accesses: a cgroup switch first, then the sleep (np.insert keeps the
    # given order at one index).
    at = [_switches(wl)]
    extra = [(np.uint32(OP_CGROUP) << np.uint32(28)) | wl.cgroup_ids[at[0]].astype(np.uint32)] if at[0].size else []
    if wl.reclaims:
        # After the switch: the write is made by the process whose turn it is.
        at.append(np.repeat(np.array([r[0] for r in wl.reclaims], dtype=np.int64), 2))
        extra.append(np.array([w for r in wl.reclaims for w in reclaim_words(*r[1:])], dtype=np.uint32))
    if wl.sleep_us is not None:
        sl = np.flatnonzero(wl.sleep_us)
        at.append(sl)
        extra.append((np.uint32(OP_SLEEP) << np.uint32(28)) | wl.sleep_us[sl].astype(np.uint32))
    pos = np.concatenate(at)
    if pos.size:
        order = np.argsort(pos, kind="stable")
        pos = pos[order]
        words = np.insert(words, pos, np.concatenate(extra)[order])
        # The phase bounds move by the words before them; at the last bound, words after
        # the last access too (memory.reclaim writes at the trace's end, before its
        # final statistics, as the simulator performs them before its run ends).
        last = len(wl.bounds) - 1
        bounds = [int(b + np.searchsorted(pos, b, side="right" if i == last else "left")) for i, b in enumerate(wl.bounds)]
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
    return HEADER + 4 * (len(wl) + len(wl.bounds) + sleeps + _switches(wl).size + 2 * len(wl.reclaims))


def write_ops(wl: Workload, path: Path) -> None:
    words = op_words(wl)
    header = MAGIC + np.array([words.size, wl.file_pages, wl.anon_pages, len(wl.cgroups), 0, 0, 0], dtype="<u8").tobytes()
    with _atomic.atomic_output(path) as tmp, open(tmp, "wb") as fh:
        fh.write(header)
        fh.write(words.astype("<u4").tobytes())


def default_access_ns() -> float:
    """The simulator's time per access of an untimed trace (``cost.access_ns``)."""
    from .. import _core

    return float(_core.Config().get("cost.access_ns"))


#: Pages per PMD entry (x86-64 `PTRS_PER_PTE`).
PMD_PAGES = 512


def write_sim_trace(wl: Workload, path: Path, access_ns: float | None = None) -> None:
    """The simulator's native trace (in the workload's cgroups): file pages keep their page numbers,
    which are their offsets in the guest's one data file (the trace's one file, so
    readahead and fault-around see the guest's layout); anon pages are numbered after
    them from the next multiple of 512, so that anon pages 512 i .. 512 i + 511 share a
    PMD range in the simulator as they share a huge page in the guest's PMD-aligned
    mapping (guest/wl.c)."""
    from .. import _core

    is_file = (wl.flags & FILE) != 0
    anon_base = -(-wl.file_pages // PMD_PAGES) * PMD_PAGES
    page = np.where(is_file, wl.pages.astype(np.int64), wl.pages.astype(np.int64) + anon_base).astype("<u4")
    files = [("data", 0, int(wl.file_pages))] if wl.file_pages else []
    gaps, tick = None, 0
    if wl.sleep_us is not None:
        # A timed trace: each access costs ``access_ns`` (by default what an untimed one
        # would, cost.access_ns), plus the sleep before it.
        if access_ns is None:
            access_ns = default_access_ns()
        gap = max(1, round(access_ns)) + wl.sleep_us.astype(np.uint64) * 1000
        gaps, tick = gap.astype("<u4").tobytes(), TICK_PS
    ids = None if wl.cgroup_ids is None else wl.cgroup_ids.astype(np.uint8).tobytes()
    ops = [(at, wl.cgroups[cg], nbytes, sw) for at, cg, nbytes, sw in wl.reclaims]
    _core.trace_write(str(path), page.tobytes(), wl.flags.astype(np.uint8).tobytes(), wl.cgroups[0], files, gaps, tick,
                      cgroup_names=wl.cgroups, cgroup_ids=ids, ops=ops)
