"""``reclaimlab record``: the exactness test on a program whose page sequence is known,
real programs (children, file I/O, caps), the stream decoder, and bad input.

The recording tests need Valgrind and gcc (scripts/install-test-deps.sh installs them)
and fail naming what is missing.
"""

from __future__ import annotations

import contextlib
import os
import pty
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from reclaimlab import _core
from reclaimlab.cli import main

from conftest import PINNED
from reclaimlab.record.stream import ANON, HEADER, T_ACCESS, T_ADVICE, T_FILE, T_FORK, T_FREE, T_PAGES, T_START, Spool

WRITE, FILE, SYSCALL, READ_CONT = 1, 2, 4, 8
PAGE = 4096


@pytest.fixture(scope="module")
def recorder():
    missing = [t for t in ("valgrind", "gcc") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"recording needs {' and '.join(missing)} (scripts/install-test-deps.sh installs them)")
    from reclaimlab.record.tool import build

    return build()


def read_trace(path: Path) -> tuple[dict, list[tuple[int, int, int, int]]]:
    src = _core.open_trace(str(path))
    meta = src.meta()
    recs = []
    while batch := src.take(1 << 16):
        recs += batch
    return meta, recs


def file_of(meta: dict, page: int) -> tuple[str, int] | None:
    """(file name, page offset) of a page id, None for an anonymous page."""
    for name, first, n in meta["files"]:
        if first <= page < first + n:
            return name, page - first
    return None


# --------------------------------------------------------------- exactness

# The known program: straight-line assembly on one code page, between two marker
# pread64() calls, over four regions: anonymous memory, a MAP_SHARED mapping of data
# file pages 0..5, a MAP_PRIVATE mapping of its pages 8..11, and pread64/pwrite64 of it.
ANON_PAGES, SHARED_PAGES, PRIV_PAGES, PRIV_OFF, DATA_PAGES = 6, 6, 4, 8, 16
REGS = {"anon": "%r14", "shared": "%r15", "priv": "%rbx"}
SIZES = {"anon": ANON_PAGES, "shared": SHARED_PAGES, "priv": PRIV_PAGES}

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
extern void run(char *anon, char *shared, char *priv, long mfd, long dfd, char *buf);
__asm__(".text\n.balign 4096\n.globl run\nrun:\n"
        "push %rbx\npush %rbp\npush %r12\npush %r13\npush %r14\npush %r15\n"
        "mov %rdi, %r14\nmov %rsi, %r15\nmov %rdx, %rbx\nmov %rcx, %r12\nmov %r8, %r13\nmov %r9, %rbp\n"
        BODY
        "pop %r15\npop %r14\npop %r13\npop %r12\npop %rbp\npop %rbx\nret\n"
        ".if . - run > 4096\n.error \"run() spans two code pages\"\n.endif\n");
static char buf[4 * 4096];
int main(int argc, char **argv) {
    int mfd = open(argv[1], O_RDONLY), dfd = open(argv[2], O_RDWR);
    char *anon = mmap(0, @ANON@ * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *shared = mmap(0, @SHARED@ * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
    char *priv = mmap(0, @PRIV@ * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, dfd, @PRIV_OFF@ * 4096);
    if (mfd < 0 || dfd < 0 || anon == MAP_FAILED || shared == MAP_FAILED || priv == MAP_FAILED) return 1;
    run(anon, shared, priv, mfd, dfd, buf);
    return 0;
}
"""


def known_ops(seed: int = 16, n: int = 160) -> list[tuple]:
    """A deterministic mix of loads, stores, compare-and-swaps, page-straddling loads and
    file syscalls: ("load"|"store"|"cas"|"straddle", region, page) or ("pread"|"pwrite",
    byte offset, length)."""
    rng = random.Random(seed)
    ops = []
    for _ in range(n):
        r = rng.random()
        if r < 0.08:
            off = rng.randrange(0, (DATA_PAGES - 3) * PAGE)
            ops.append((rng.choice(("pread", "pwrite")), off, rng.randrange(1, 3 * PAGE)))
        else:
            region = rng.choice(("anon", "anon", "shared", "priv"))
            kind = "straddle" if r < 0.12 else "cas" if r < 0.16 else rng.choice(("load", "load", "store"))
            last = SIZES[region] - (2 if kind == "straddle" else 1)
            # Runs of one page, so folding has repeats to fold.
            page = ops[-1][2] if ops and ops[-1][1] == region and rng.random() < 0.4 and ops[-1][2] <= last else rng.randint(0, last)
            ops.append((kind, region, page))
    return ops


def marker(off: int) -> list[str]:
    return ["mov $17, %eax", "mov %r12, %rdi", "mov %rbp, %rsi", "mov $1, %edx", f"mov ${off}, %r10", "syscall"]


def assemble(ops: list[tuple]) -> list[str]:
    """The body: one instruction per memory access, six per system call. Loads add into
    %r8, which nothing overwrites, because Valgrind's optimiser drops a load whose result
    is dead before the tool sees it (docs/record.md)."""
    body = marker(0)
    for op in ops:
        kind = op[0]
        if kind in ("pread", "pwrite"):
            nr = 17 if kind == "pread" else 18
            body += [f"mov ${nr}, %eax", "mov %r13, %rdi", "mov %rbp, %rsi", f"mov ${op[2]}, %edx",
                     f"mov ${op[1]}, %r10", "syscall"]
            continue
        addr = f"{op[2] * PAGE + 64}({REGS[op[1]]})"
        body.append({"load": f"addb {addr}, %r8b", "store": f"movb %r8b, {addr}", "cas": f"lock cmpxchgb %r9b, {addr}",
                     "straddle": f"addq {op[2] * PAGE + PAGE - 4}({REGS[op[1]]}), %r8"}[kind])
    return body + marker(PAGE)


def expected(ops: list[tuple], fold: int) -> tuple[list[tuple], int]:
    """The records the recorder must write between the markers, as (page identity, flags,
    gap), and the second marker's gap: a data access is dropped if its page is that of
    one of the last ``fold`` records (a write only if that record was a write; syscall
    records match nothing), a store to a private file page makes it anonymous, syscalls
    cover every page of their range (READ_CONT after the first); gap = instructions since
    the previous record."""
    out, window, cowed = [], [], set()
    t = prev = 6  # the first marker's syscall is instruction 6
    window.append(None)  # the marker's record
    for op in ops:
        kind = op[0]
        if kind in ("pread", "pwrite"):
            t += 6
            for k, p in enumerate(range(op[1] // PAGE, (op[1] + op[2] - 1) // PAGE + 1)):
                flags = FILE | SYSCALL | (WRITE if kind == "pwrite" else 0) | (READ_CONT if k else 0)
                out.append((("data", p), flags, t - prev))
                prev = t
                window.append(None)
            continue
        t += 1
        write = kind in ("store", "cas")
        region, page = op[1], op[2]
        for vp in [(region, page)] + ([(region, page + 1)] if kind == "straddle" else []):
            if any(w is not None and w[0] == vp and (not write or w[1]) for w in window[-fold:]):
                continue
            if region == "anon":
                ident, flags = vp, 0
            elif region == "shared":
                ident, flags = ("data", vp[1]), FILE
            elif write or vp in cowed:
                cowed.add(vp)
                ident, flags = vp, 0
            else:
                ident, flags = ("data", PRIV_OFF + vp[1]), FILE
            out.append((ident, flags | (WRITE if write else 0), t - prev))
            prev = t
            window.append((vp, write))
    return out, t + 6 - prev


def canonical(seq: list[tuple]) -> list[tuple]:
    """Anonymous identities renamed by order of first appearance (the trace's anonymous
    page ids carry no address)."""
    names: dict = {}
    return [(ident if ident[0] == "data" else ("anon", names.setdefault(ident, len(names))), f, g)
            for ident, f, g in seq]


@pytest.mark.parametrize("fold", [1, 16])
def test_exact_page_sequence(recorder, tmp_path, fold):
    ops = known_ops()
    src = PROGRAM.replace("BODY", "".join(f'"{line}\\n"' for line in assemble(ops)))
    for name, value in (("PRIV_OFF", PRIV_OFF), ("ANON", ANON_PAGES), ("SHARED", SHARED_PAGES), ("PRIV", PRIV_PAGES)):
        src = src.replace(f"@{name}@", str(value))
    (tmp_path / "known.c").write_text(src)
    subprocess.run(["gcc", "-O1", "-o", str(tmp_path / "known"), str(tmp_path / "known.c")], check=True)
    (tmp_path / "marker").write_bytes(b"m" * 2 * PAGE)
    (tmp_path / "data").write_bytes(bytes(range(256)) * (DATA_PAGES * PAGE // 256))
    out = tmp_path / "known.trace"
    assert main(["record", "-o", str(out), "--fold", str(fold), "--", str(tmp_path / "known"), str(tmp_path / "marker"),
                 str(tmp_path / "data")]) == 0

    meta, recs = read_trace(out)
    assert meta["tick_ps"] == 333
    where = [file_of(meta, r[0]) for r in recs]
    m0 = where.index((str(tmp_path / "marker"), 0))
    m1 = where.index((str(tmp_path / "marker"), 1))
    assert recs[m0][2] == FILE | SYSCALL and recs[m1][2] == FILE | SYSCALL
    got = []
    for (page, cgroup, flags, gap), w in zip(recs[m0 + 1:m1], where[m0 + 1:m1]):
        assert cgroup == 0
        if w is None:
            ident = ("anon-id", page)
        else:
            assert w[0] == str(tmp_path / "data"), f"a page of {w[0]} between the markers"
            ident = ("data", w[1])
        assert bool(flags & FILE) == (w is not None)
        got.append((ident, flags, gap))
    want, last_gap = expected(ops, fold)
    assert len(got) == len(want)
    assert canonical(got) == canonical(want)
    assert recs[m1][3] == last_gap
    # A file's pages keep their ids whether reached by mmap or by pread (one identity).
    data = [f for f in meta["files"] if f[0] == str(tmp_path / "data")]
    assert len(data) == 1 and data[0][2] == DATA_PAGES


# ------------------------------------------------------------ real programs


def test_children_and_file_io(recorder, tmp_path):
    """A shell that runs cat and sort as child processes: their file reads and writes
    are in the trace, under their files' names, in the given cgroup."""
    text = tmp_path / "in.txt"
    text.write_text("".join(f"{(i * 7919) % 10007:05d}\n" for i in range(20000)))
    n_pages = -(-text.stat().st_size // PAGE)
    out = tmp_path / "sh.trace"
    sorted_txt = tmp_path / "sorted.txt"
    assert main(["record", "-o", str(out), "--cgroup", "job", "--", "sh", "-c",
                 f"cat {text} > /dev/null && sort {text} -o {sorted_txt}"]) == 0
    assert sorted_txt.read_text() == "".join(sorted(text.read_text().splitlines(keepends=True)))
    meta, recs = read_trace(out)
    assert meta["cgroups"] == ["", "job"]
    assert all(r[1] == 1 for r in recs)
    names = {f[0]: f for f in meta["files"]}
    assert str(text) in names and str(sorted_txt) in names
    first, n = names[str(text)][1:]
    syscall_reads = {r[0] - first for r in recs if r[2] & SYSCALL and not r[2] & WRITE and first <= r[0] < first + n}
    assert syscall_reads == set(range(n_pages))  # cat and sort both read every page
    sfirst, sn = names[str(sorted_txt)][1:]
    written = {r[0] - sfirst for r in recs if r[2] == FILE | SYSCALL | WRITE or r[2] == FILE | SYSCALL | WRITE | READ_CONT}
    assert set(range(n_pages)) <= written
    assert any(f[0].endswith("/sort") for f in meta["files"])  # the binary's text pages
    assert any(f[0].endswith("/cat") for f in meta["files"])


UNMAP = r"""
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    char *a = mmap(0, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 64; i++) a[i * 4096] = 1;
    munmap(a + 16 * 4096, 8 * 4096);
    char *b = mremap(a, 16 * 4096, 32 * 4096, MREMAP_MAYMOVE);
    for (int i = 0; i < 32; i++) b[i * 4096] = 2;
    munmap(b, 32 * 4096);
    char *c = mmap(0, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 4; i++) c[i * 4096] = 3;
    if (fork() == 0) { munmap(c, 4 * 4096); _exit(0); }
    munmap(c, 4 * 4096);
    return 0;
}
"""


def test_munmap_frees_anonymous_pages(recorder, tmp_path):
    """munmap frees the anonymous pages it unmaps (MADV_DONTNEED ops after the records
    before it): the 8 pages unmapped first, then the 32 of the remapped range — the 16
    that mremap moved (their identities go with them, nothing is freed at the old
    address) and the 16 it added — and nothing of the 24 still mapped. Pages made before
    a fork belong to parent and child: neither one's munmap frees them."""
    (tmp_path / "unmap.c").write_text(UNMAP)
    subprocess.run(["gcc", "-O1", "-D_GNU_SOURCE", "-o", str(tmp_path / "unmap"), str(tmp_path / "unmap.c")], check=True)
    out = tmp_path / "unmap.trace"
    assert main(["record", "-o", str(out), "--fold", "1", "--", str(tmp_path / "unmap")]) == 0
    meta, recs = read_trace(out)
    ops = meta["madvise"]
    assert [advice for *_, advice in ops] == ["dontneed"] * len(ops)
    freed = [set(range(first, first + n)) for _, first, n, _ in ops]
    assert sum(map(len, freed)) == 8 + 32
    # The first op frees 8 pages of the 64 the program wrote first, before anything of b.
    at0, first0, n0, _ = ops[0]
    assert n0 == 8
    written = [r[0] for r in recs[:at0] if r[2] == WRITE]
    a_pages = list(dict.fromkeys(p for p in written if not r_is_file(meta, p)))[-64:]
    assert set(range(first0, first0 + 8)) <= set(a_pages)
    later = set().union(*freed[1:])
    assert len(later) == 32 and len(later & set(a_pages)) == 16  # a's first 16, moved to b
    assert all(at >= at0 for at, *_ in ops[1:]) and ops[-1][0] < len(recs)


def r_is_file(meta: dict, page: int) -> bool:
    return file_of(meta, page) is not None


def test_max_accesses(recorder, tmp_path):
    out = tmp_path / "cap.trace"
    assert main(["record", "-o", str(out), "--max-accesses", "100000", "--", "sh", "-c",
                 "while :; do :; done"]) == 0
    meta, recs = read_trace(out)
    assert len(recs) == 100000 == meta["records"]


def test_duration(recorder, tmp_path, capsys):
    out = tmp_path / "cap.trace"
    assert main(["record", "-o", str(out), "--duration", "1.5", "--", "sh", "-c", "while :; do :; done"]) == 0
    assert "stopped by --duration" in capsys.readouterr().err
    assert read_trace(out)[0]["records"] > 0


def test_replays(recorder, tmp_path, capsys):
    out = tmp_path / "ls.trace"
    assert main(["record", "-o", str(out), "--", "ls", "-l", "/"]) == 0
    capsys.readouterr()
    assert main(["run", "--trace", str(out), "--memory", "64M", "--json"]) == 0
    assert '"pgfault"' in capsys.readouterr().out


def test_compressed_by_default_replays_like_uncompressed(recorder, tmp_path, capsys, monkeypatch):
    """`record` writes compressed blocks unless --no-compress; the engine's results from
    the compressed trace and from its uncompressed copy are identical."""
    text = tmp_path / "in.txt"
    rng = random.Random(1)
    text.write_text("".join(f"{rng.randrange(10**9):09d} line\n" for _ in range(60_000)))
    out, plain = tmp_path / "sort.trace", tmp_path / "plain.trace"
    assert main(["record", "-o", str(out), "--", "sort", str(text), "-o", str(tmp_path / "out.txt")]) == 0
    assert "bytes a record" in capsys.readouterr().err
    assert out.read_bytes()[8:10] == b"\x02\x00"
    assert main(["trace", "convert", str(out), str(plain)]) == 0
    assert plain.read_bytes()[8:10] == b"\x01\x00"
    meta, recs = read_trace(out)
    assert (meta, recs) == read_trace(plain) and len(recs) > 100_000
    assert out.stat().st_size * 3 < plain.stat().st_size
    capsys.readouterr()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", PINNED["SOURCE_DATE_EPOCH"])  # one provenance date for both
    results = []
    for t in (out, plain):
        assert main(["run", "--trace", str(t), "--memory", "16M", "--json"]) == 0
        results.append(capsys.readouterr().out.replace(str(t), "TRACE"))
    assert '"pgfault"' in results[0] and results[0] == results[1]
    small = tmp_path / "true.trace"
    assert main(["record", "--no-compress", "-o", str(small), "--", "true"]) == 0
    assert small.read_bytes()[8:10] == b"\x01\x00"


# ------------------------------------------------------------- bad input


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("reclaimlab: error: "), err
    return err[0]


def test_command_not_found(tmp_path, capsys):
    assert main(["record", "-o", str(tmp_path / "t.trace"), "--", "no-such-program-xyz"]) == 2
    assert "no-such-program-xyz: command not found" in error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_valgrind_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["record", "-o", str(tmp_path / "t.trace"), "--", "/bin/true"]) == 2
    assert "valgrind not found: install Debian's valgrind package (apt-get install valgrind)" in error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_no_command(tmp_path, capsys):
    assert main(["record", "-o", str(tmp_path / "t.trace")]) == 2
    assert "no command" in error_line(capsys)


def test_unwritable_output(tmp_path, capsys):
    assert main(["record", "-o", str(tmp_path / "missing" / "t.trace"), "--", "true"]) == 2
    assert "does not exist" in error_line(capsys)


def test_crash_leaves_nothing(recorder, tmp_path, capsys):
    out = tmp_path / "t.trace"
    assert main(["record", "-o", str(out), "--", "sh", "-c", "kill -SEGV $$"]) == 2
    assert "killed by SIGSEGV" in error_line(capsys)
    assert list(tmp_path.iterdir()) == []


BUSY = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"


def test_full_disk_leaves_nothing(recorder, tmp_path):
    """A file-size limit stands in for a full disk: whether the spool or the trace hits
    it, one line, exit 2, and nothing left in the output directory."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    r = subprocess.run([sys.executable, "-m", "reclaimlab", "record", "-o", str(tmp_path / "t.trace"), "--",
                        "sh", "-c", BUSY], preexec_fn=limit, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("reclaimlab: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "File too large" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_progress_line_on_a_terminal(recorder, tmp_path):
    parent, child = pty.openpty()
    r = subprocess.run([sys.executable, "-m", "reclaimlab", "record", "-o", str(tmp_path / "t.trace"), "--",
                        "sh", "-c", BUSY], stderr=child, stdout=subprocess.DEVNULL)
    os.close(child)
    text = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(parent, 1 << 16):
            text += chunk
    os.close(parent)
    assert r.returncode == 0
    assert b"recording: " in text and b" accesses, " in text and b"\r\x1b[K" in text
    assert b"wrote " in text


def test_nonzero_exit_keeps_trace(recorder, tmp_path, capsys):
    out = tmp_path / "t.trace"
    assert main(["record", "-o", str(out), "--", "sh", "-c", "exit 3"]) == 0
    assert "exited with status 3" in capsys.readouterr().err
    assert read_trace(out)[0]["records"] > 0


# ------------------------------------------------------- the stream decoder


def chunk(kind: int, pid: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(kind, len(payload), pid) + payload


def access(*recs: tuple[int, int, int]) -> bytes:
    return b"".join(struct.pack("<IBBHI", page, flags, 0, 0, gap) for page, flags, gap in recs)


def file_def(slot: int, fresh: int, ino: int, size: int, name: str) -> bytes:
    return struct.pack("<IIQQQ", slot, fresh, 1, ino, size) + name.encode()


def pages(first: int, *defs: tuple[int, int]) -> bytes:
    return struct.pack("<I", first) + b"".join(struct.pack("<II", s, o) for s, o in defs)


def test_spool_layout(tmp_path):
    """Two processes (a parent and its fork child) share a file by inode, the child
    inherits the parent's pages, a fresh identity of one inode is another file, and the
    stream may arrive cut anywhere."""
    stream = b"".join([
        chunk(T_START, 10),
        chunk(T_FILE, 10, file_def(0, 0, 7, 3 * PAGE, "/a")),
        chunk(T_PAGES, 10, pages(0, (0, 2), (ANON, 0))),
        chunk(T_ACCESS, 10, access((0, FILE, 5), (1, WRITE, 1))),
        chunk(T_FORK, 11, struct.pack("<III", 10, 2, 1)),
        chunk(T_PAGES, 11, pages(2, (ANON, 0), (0, 0))),
        chunk(T_FILE, 11, file_def(1, 1, 7, 0, "/a")),
        chunk(T_PAGES, 11, pages(4, (1, 0))),
        chunk(T_ACCESS, 11, access((1, 0, 2), (2, WRITE, 3), (3, FILE, 4), (4, FILE | WRITE, 0))),
        chunk(T_ADVICE, 10, struct.pack("<II", 0, 2)),  # posix_fadvise(SEQUENTIAL) on the first "/a"
    ])
    spool_path = tmp_path / "spool"
    with open(spool_path, "wb") as f:
        spool = Spool(f)
        for i in range(0, len(stream), 7):
            spool.feed(stream[i:i + 7])
        spool.close()
    assert spool.records == 6 and spool.pages == 5
    assert spool.layout()[0] == [("/a", 0, 3, 2), ("/a", 3, 1, 0)]
    out, plain = tmp_path / "t.trace", tmp_path / "plain.trace"
    assert spool.write(spool_path, out) == 6
    assert spool.write(spool_path, plain, compress=False) == 6
    assert out.read_bytes()[8:10] == b"\x02\x00" and plain.read_bytes()[8:10] == b"\x01\x00"
    assert read_trace(out) == read_trace(plain)
    meta, recs = read_trace(out)
    # "/a" (3 pages: its size) gets ids 0..2; the fresh "/a" 3; anonymous pages follow.
    assert meta["files"] == [("/a", 0, 3), ("/a", 3, 1)]
    assert [(p, f, g) for p, _, f, g in recs] == [(2, FILE, 5), (4, WRITE, 1), (4, 0, 2), (5, WRITE, 3),
                                                  (0, FILE, 4), (3, FILE | WRITE, 0)]


def test_spool_free(tmp_path):
    """A FREE chunk becomes MADV_DONTNEED ops of the pages' ids, one per run of
    consecutive ids, placed after the records that came before it."""
    stream = b"".join([
        chunk(T_START, 10),
        chunk(T_PAGES, 10, pages(0, (ANON, 0), (ANON, 0), (ANON, 0), (ANON, 0))),
        chunk(T_ACCESS, 10, access((0, WRITE, 1), (1, WRITE, 1), (2, WRITE, 1), (3, WRITE, 1))),
        chunk(T_FREE, 10, struct.pack("<III", 0, 1, 3)),
        chunk(T_ACCESS, 10, access((2, 0, 1), (0, WRITE, 1))),
    ])
    with open(tmp_path / "spool", "wb") as f:
        spool = Spool(f)
        spool.feed(stream)
        spool.close()
    assert spool.frees == 3
    assert spool.write(tmp_path / "spool", tmp_path / "t.trace") == 6
    meta, recs = read_trace(tmp_path / "t.trace")
    assert meta["madvise"] == [(4, 0, 2, "dontneed"), (4, 3, 1, "dontneed")]
    assert [r[0] for r in recs] == [0, 1, 2, 3, 2, 0]


def test_spool_limit(tmp_path):
    with open(tmp_path / "spool", "wb") as f:
        spool = Spool(f, limit=1)
        spool.feed(chunk(T_START, 1) + chunk(T_PAGES, 1, pages(0, (ANON, 0))) + chunk(T_ACCESS, 1, access((0, 0, 1), (0, WRITE, 1))))
        spool.close()
    assert spool.full and spool.records == 1
    assert spool.write(tmp_path / "spool", tmp_path / "t.trace") == 1


def test_help_lists_record(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "record" in capsys.readouterr().out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
