"""The Valgrind tool's stream (``tool/rl_main.c``) into a native trace, in two streamed
passes. While the program runs, :class:`Spool` files access records by process image
(zlib-compressed runs of up to 1 MiB) and keeps the definitions (which local page is which file page or anonymous page);
afterwards :meth:`Spool.write` lays out the file table and rewrites the spool through
``_core.TraceWriter``, so no pass holds the trace in memory.

Chunks (at most 4096 bytes, so concurrent processes' writes to one FIFO never mix):
``u16 type, u16 payload bytes, u32 pid``, then by type

- ACCESS: 12-byte records in the native layout whose page is the image's local id;
- PAGES: ``u32 first local id``, then per page ``u32 file slot`` (``0xFFFFFFFF``:
  anonymous) and ``u32 page offset``;
- FILE: ``u32 slot, u32 fresh, u64 dev, u64 ino, u64 size``, the name (``fresh``: a new
  identity even if the inode is known; the file was found empty or truncated to 0);
- START: a new process image (a process started or exec'd) for this pid;
- FORK: ``u32 parent pid, u32 local pages, u32 file slots``: this pid is a fork child and
  inherits that many of its parent's pages and slots;
- ADVICE: ``u32 slot, u32 advice`` (``posix_fadvise`` of the whole file);
- STATS: ``u64 instructions, u64 references before folding, u64 records``;
- FREE: ``u32`` local ids of anonymous pages the process unmapped (``munmap``), after
  every record before it: the trace frees them there (``MADV_DONTNEED`` ops).
"""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable

from ..exceptions import TraceError

T_ACCESS, T_PAGES, T_FILE, T_START, T_FORK, T_ADVICE, T_STATS, T_FREE = range(1, 9)
HEADER = struct.Struct("<HHI")
SPOOL_HEADER = struct.Struct("<II")  # image, compressed payload bytes
#: A spool entry of freed pages instead of records: ``u32 image`` + its local ids, raw.
SPOOL_FREE = 0xFFFFFFFF
RECORD = 12
ANON = 0xFFFFFFFF
#: Ticks of the trace's clock: one per guest instruction, at an assumed 1 instruction
#: per cycle at 3 GHz (the address format's assumption too, crates/trace/FORMAT.md).
TICK_PS = 333
MAX_PAGE_ID = 0xFFFFFFFE


@dataclass
class File:
    """A file identity: one inode between two resets (found empty, truncated to 0)."""

    name: str
    size_pages: int
    max_page: int = -1
    advice: int = 0


@dataclass
class Image:
    """One process image's local tables: slot -> global file; local page -> (file + 1 or
    0 for anonymous, page offset or anonymous page number)."""

    slots: list[int] = field(default_factory=list)
    kind: array = field(default_factory=lambda: array("I"))
    value: array = field(default_factory=lambda: array("I"))


class Spool:
    """Pass one: ``feed`` stream bytes while the program runs; ``write`` afterwards."""

    def __init__(self, out: BinaryIO, limit: int | None = None):
        self.out = out
        self.limit = limit
        self.records = 0
        self.pages = 0
        self.instructions = 0
        self.references = 0
        self.files: list[File] = []
        self.by_inode: dict[tuple[int, int], int] = {}
        self.images: list[Image] = []
        self.current: dict[int, int] = {}  # pid -> its image
        self.anon = 0
        self.frees = 0
        self._rest = b""
        self._pending_image = -1
        self._pending = bytearray()

    @property
    def full(self) -> bool:
        return self.limit is not None and self.records >= self.limit

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the stream (whole chunks or not)."""
        buf = self._rest + data if self._rest else data
        view = memoryview(buf)
        i, end = 0, len(buf)
        while i + HEADER.size <= end and not self.full:
            kind, n, pid = HEADER.unpack_from(buf, i)
            if i + HEADER.size + n > end:
                break
            self._chunk(kind, pid, view[i + HEADER.size:i + HEADER.size + n])
            i += HEADER.size + n
        self._rest = bytes(buf[i:]) if not self.full else b""

    def _image(self, pid: int) -> int:
        if pid not in self.current:
            raise TraceError(f"recorder stream: process {pid} writes before its START or FORK chunk")
        return self.current[pid]

    def _start(self, pid: int) -> Image:
        self.current[pid] = len(self.images)
        self.images.append(Image())
        return self.images[-1]

    def _chunk(self, kind: int, pid: int, p: memoryview) -> None:
        if kind == T_ACCESS:
            image = self._image(pid)
            n = len(p) // RECORD
            if self.limit is not None and self.records + n > self.limit:
                n = self.limit - self.records
            self._spool(image, p[:n * RECORD])
            self.records += n
        elif kind == T_PAGES:
            img = self.images[self._image(pid)]
            first, = struct.unpack_from("<I", p)
            if first != len(img.kind):
                raise TraceError(f"recorder stream: process {pid} defines page {first} after {len(img.kind)}")
            defs = array("I", bytes(p[4:]))
            for slot, off in zip(defs[0::2], defs[1::2]):
                if slot == ANON:
                    img.kind.append(0)
                    img.value.append(self.anon)
                    self.anon += 1
                else:
                    g = img.slots[slot]
                    img.kind.append(g + 1)
                    img.value.append(off)
                    f = self.files[g]
                    f.max_page = max(f.max_page, off)
            self.pages += len(defs) // 2
        elif kind == T_FILE:
            img = self.images[self._image(pid)]
            slot, fresh, dev, ino, size = struct.unpack_from("<IIQQQ", p)
            key = (dev, ino)
            g = self.by_inode.get(key)
            if fresh or g is None:
                g = len(self.files)
                self.files.append(File(bytes(p[32:]).decode("utf-8", "replace"), 0))
                self.by_inode[key] = g
            f = self.files[g]
            f.size_pages = max(f.size_pages, (size + 4095) // 4096)
            if slot != len(img.slots):
                raise TraceError(f"recorder stream: process {pid} defines file slot {slot} after {len(img.slots)}")
            img.slots.append(g)
        elif kind == T_START:
            self._start(pid)
        elif kind == T_FORK:
            parent, nr_pages, nr_slots = struct.unpack_from("<III", p)
            src = self.images[self._image(parent)]
            img = self._start(pid)
            img.slots = src.slots[:nr_slots]
            img.kind = src.kind[:nr_pages]
            img.value = src.value[:nr_pages]
        elif kind == T_ADVICE:
            slot, advice = struct.unpack_from("<II", p)
            self.files[self.images[self._image(pid)].slots[slot]].advice = advice
        elif kind == T_FREE:
            image = self._image(pid)
            if not self.full:
                self._flush()
                payload = struct.pack("<I", image) + bytes(p)
                self.out.write(SPOOL_HEADER.pack(SPOOL_FREE, len(payload)))
                self.out.write(payload)
                self.frees += len(p) // 4
        elif kind == T_STATS:
            instructions, references, _ = struct.unpack_from("<QQQ", p)
            self.instructions += instructions
            self.references += references
        else:
            raise TraceError(f"recorder stream: unknown chunk type {kind}")

    def _spool(self, image: int, records: memoryview) -> None:
        if image != self._pending_image or len(self._pending) >= 1 << 20:
            self._flush()
            self._pending_image = image
        self._pending += records

    def _flush(self) -> None:
        if self._pending:
            packed = zlib.compress(self._pending, 1)
            self.out.write(SPOOL_HEADER.pack(self._pending_image, len(packed)))
            self.out.write(packed)
            self._pending = bytearray()

    def close(self) -> None:
        self._flush()
        self.out.flush()

    def layout(self) -> tuple[list[tuple[str, int, int, int]], list[int], int]:
        """The file table (touched files, in order of appearance), each file's first
        page id (-1 if untouched) and the first anonymous page id. A file's range covers
        its largest size seen, so readahead finds its real end; if all ranges would not
        fit the 32-bit page ids, only the touched part of each."""
        touched = [f for f in self.files if f.max_page >= 0]
        full = sum(max(f.size_pages, f.max_page + 1) for f in touched)
        whole = full + self.anon <= MAX_PAGE_ID
        table, firsts, next_id = [], [], 0
        for f in self.files:
            if f.max_page < 0:
                firsts.append(-1)
                continue
            n = max(f.size_pages, f.max_page + 1) if whole else f.max_page + 1
            table.append((f.name, next_id, n, f.advice))
            firsts.append(next_id)
            next_id += n
        if next_id + self.anon > MAX_PAGE_ID:
            raise TraceError(f"the recording has {next_id + self.anon:,} pages: more than 32-bit page ids can name")
        return table, firsts, next_id

    def write(self, spool: Path, out: Path, cgroup: str = "", progress: Callable[[int], None] | None = None,
              compress: bool = True) -> int:
        """Pass two: the native trace ``out`` (atomically, blocks compressed if ``compress``)
        from the closed spool file."""
        import numpy as np

        from .. import _core

        table, firsts, anon_base = self.layout()
        first = np.array(firsts + [0], dtype=np.int64)
        writer = _core.TraceWriter(str(out), TICK_PS, cgroup, table, anon_base + self.anon, compress)
        try:
            maps = []
            for i, img in enumerate(self.images):
                kind = np.frombuffer(img.kind, dtype=np.uint32).astype(np.int64)
                value = np.frombuffer(img.value, dtype=np.uint32).astype(np.int64)
                ids = np.where(kind > 0, first[kind - 1] + value, anon_base + value)
                writer.set_map(i, ids.astype("<u4").tobytes())
                maps.append(ids)
            done = 0
            with open(spool, "rb") as f:
                while head := f.read(SPOOL_HEADER.size):
                    image, n = SPOOL_HEADER.unpack(head)
                    if image == SPOOL_FREE:
                        payload = f.read(n)
                        img, = struct.unpack_from("<I", payload)
                        freed = np.unique(maps[img][np.frombuffer(payload, dtype="<u4", offset=4).astype(np.int64)])
                        # One MADV_DONTNEED per run of consecutive page ids.
                        for run in np.split(freed, np.flatnonzero(np.diff(freed) != 1) + 1):
                            writer.madvise(int(run[0]), len(run), "dontneed")
                        continue
                    records = zlib.decompress(f.read(n))
                    writer.write(image, records)
                    done += len(records) // RECORD
                    if progress:
                        progress(done)
            return writer.finish()
        except BaseException:
            writer.abort()
            raise


def consume(fd: int, spool: Spool, size: int = 1 << 20) -> bool:
    """Read what the stream has (non-blocking ``fd``) into ``spool``; False at EOF."""
    try:
        data = os.read(fd, size)
    except BlockingIOError:
        return True
    if not data:
        return False
    spool.feed(data)
    return True
