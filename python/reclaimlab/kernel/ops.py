"""The two files one workload becomes: the guest program's ops file (guest/wl.c's format)
and the simulator's CSV trace of the same accesses, in cgroup ``wl``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _atomic
from .workload import FILE, SYSCALL, WRITE, Workload

MAGIC = b"RLWLOPS1"
HEADER = 64
OP_PREAD, OP_MAPREAD, OP_ANONW, OP_ANONR, OP_PHASE = 0, 1, 2, 3, 15
#: The cgroup the guest runs the workload in, and the simulator's name for it.
CGROUP = "wl"


def op_words(wl: Workload) -> np.ndarray:
    """One u32 per access (op << 28 | page), a PHASE word after each phase."""
    f = wl.flags
    is_file = (f & FILE) != 0
    op = np.where(is_file, np.where((f & SYSCALL) != 0, OP_PREAD, OP_MAPREAD),
                  np.where((f & WRITE) != 0, OP_ANONW, OP_ANONR)).astype(np.uint32)
    words = (op << np.uint32(28)) | wl.pages.astype(np.uint32)
    pieces, start = [], 0
    for i, end in enumerate(wl.bounds):
        pieces.append(words[start:end])
        pieces.append(np.array([(OP_PHASE << 28) | (i + 1)], dtype=np.uint32))
        start = end
    return np.concatenate(pieces)


def ops_size(wl: Workload) -> int:
    return HEADER + 4 * (len(wl) + len(wl.bounds))


def write_ops(wl: Workload, path: Path) -> None:
    words = op_words(wl)
    header = MAGIC + np.array([words.size, wl.file_pages, wl.anon_pages, 0, 0, 0, 0], dtype="<u8").tobytes()
    with _atomic.atomic_output(path) as tmp, open(tmp, "wb") as fh:
        fh.write(header)
        fh.write(words.astype("<u4").tobytes())


def write_sim_trace(wl: Workload, path: Path) -> None:
    """CSV for the simulator: anon pages are numbered after the file pages."""
    is_file = (wl.flags & FILE) != 0
    page = np.where(is_file, wl.pages.astype(np.int64), wl.pages.astype(np.int64) + wl.file_pages)
    op = np.where((wl.flags & WRITE) != 0, "w", "r")
    typ = np.where(is_file, "file", "anon")
    acc = np.where((wl.flags & SYSCALL) != 0, "syscall", "mapped")
    with _atomic.atomic_output(path) as tmp, open(tmp, "w") as fh:
        fh.write("page,op,type,access,cgroup\n")
        step = 1 << 20
        for s in range(0, page.size, step):
            sl = slice(s, s + step)
            rows = np.char.add(np.char.add(np.char.add(np.char.add(page[sl].astype(str), ","), op[sl]), ","),
                               np.char.add(np.char.add(typ[sl], ","), np.char.add(acc[sl], f",{CGROUP}")))
            fh.write("\n".join(rows.tolist()))
            fh.write("\n")
