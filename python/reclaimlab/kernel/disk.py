"""The guest's data disk: a raw ext4 image made with ``mkfs.ext4 -d`` (no loop mount),
holding ``data`` (the file pages, real non-zero blocks so that every miss is disk I/O),
``ops`` (the workload) and ``cgroups`` (its cgroups and their limits); for a real program
``root`` (its binary, libraries and inputs, python/reclaimlab/programs/prepare.py) and
``program`` (its working directory and argv) instead of ``data`` and ``ops``; for a THP
workload (thpscale, usemem) ``data`` and ``thp`` (guest/thp.c's arguments) instead of ``ops``. QEMU attaches it
read-only and the guest mounts it ``ro,noload``, or for a workload that writes, writable
with the writes kept in a temporary overlay (``snapshot=on``): every boot starts from
identical disk contents."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from . import KernelError
from .ops import ops_size, write_ops
from .workload import PAGE, Workload

SLACK = 32 << 20  # ext4 metadata, journal-less, inode tables: generous


def image_size(wl: Workload) -> int:
    """Bytes the image needs: data + ops (a program's inputs, binary and libraries, and
    room for what it writes: as much again) + 6% + 32 MiB, rounded up to 1 MiB."""
    need = 2 * wl.file_pages * PAGE if wl.program is not None else wl.file_pages * PAGE + ops_size(wl)
    need = need + need * 6 // 100 + SLACK
    return -(-need // (1 << 20)) << 20


def fs_size(wl: Workload, disk_size: int | None = None) -> int:
    """The image's size: what the workload needs, or ``--disk-size`` if larger."""
    return max(image_size(wl), disk_size or 0)


def block_size(size: int) -> int:
    """The file system's block size: 1 KiB below 512 MiB, as mke2fs.conf's ``small`` and
    ``floppy`` types make it (e2fsprogs 1.47), else 4 KiB. Passed to mkfs explicitly, so the
    host's mke2fs.conf cannot change it, and given to the simulator (``block.fs_block_size``:
    a written page carries 4096 / this many buffer heads, charged to its memcg)."""
    return 1024 if size < 512 << 20 else 4096


def check_fits(wl: Workload, directory: Path, disk_size: int | None = None) -> int:
    """The image size, or a :class:`KernelError` if the workload does not fit ``disk_size``
    (``--disk-size``) or the free space of ``directory``."""
    size = image_size(wl)
    if disk_size is not None and size > disk_size:
        raise KernelError(f"workload {wl.spec!r} does not fit the data disk: it needs {size >> 20} MiB "
                          f"({wl.file_pages} file pages + the ops file), --disk-size is {disk_size >> 20} MiB")
    directory.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory).free
    if 2 * size > free:
        raise KernelError(f"workload {wl.spec!r} does not fit the disk: the data image needs {size >> 20} MiB "
                          f"(twice that while building) and {directory} has {free >> 20} MiB free")
    return fs_size(wl, disk_size)


def write_data(path: Path, pages: int) -> None:
    """``pages`` 4 KiB pages, each filled with its page number (never zero, never a hole)."""
    step = 4096
    with open(path, "wb") as fh:
        for s in range(0, pages, step):
            n = min(step, pages - s)
            block = np.repeat(np.arange(s + 1, s + n + 1, dtype="<u8"), PAGE // 8)
            fh.write(block.tobytes())


def build(wl: Workload, out: Path, disk_size: int | None = None, cgroups: str = "wl max max 0 0\n") -> Path:
    """The image at ``out``; ``cgroups`` is /data/cgroups (run.cgroups_file)."""
    size = check_fits(wl, out.parent, disk_size)
    if shutil.which("mkfs.ext4") is None:
        raise KernelError("mkfs.ext4 not found (apt-get install e2fsprogs)")
    with tempfile.TemporaryDirectory(prefix="disk.", dir=out.parent) as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        if wl.program is not None:
            from ..programs.prepare import program_file, stage_root

            stage_root(wl.program, root / "root")
            (root / "program").write_text(program_file(wl.program))
        elif wl.thp is not None:
            write_data(root / "data", wl.file_pages)
            (root / "thp").write_text(" ".join(wl.thp_argv()) + "\n")
        else:
            write_data(root / "data", wl.file_pages)
            write_ops(wl, root / "ops")
        (root / "cgroups").write_text(cgroups)
        part = Path(tmp) / "image"
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-b", str(block_size(size)), "-O", "^has_journal", "-E", "root_owner=0:0",
                            "-d", str(root), str(part), str(size >> 10)], capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"mkfs.ext4 -d failed: {r.stderr.strip()}")
        os.replace(part, out)
    return out
