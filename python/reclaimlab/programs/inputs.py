"""Deterministic inputs of the built-in real programs: the same name, size and seed give the
same bytes on every machine (numpy's PCG64; SQLite's file format is stable), so only the
generators live in the repository, never the files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
#: Bytes of text lines made at a time (bounded memory for any size).
BLOCK = 8 << 20


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([seed, stream]))


def _lines(rng: np.random.Generator, nlines: int, width: int) -> np.ndarray:
    """``nlines`` random lowercase lines of ``width`` bytes each, newline included."""
    a = LETTERS[rng.integers(0, LETTERS.size, size=(nlines, width), dtype=np.uint8)]
    a[:, -1] = ord("\n")
    return a


def text(path: Path, size: int, seed: int, width: int = 64) -> None:
    """``sort``'s input: random lines of ``width`` bytes (a 63-letter key each) up to ``size`` bytes."""
    rng = _rng(seed, 1)
    left = size // width
    with open(path, "wb") as fh:
        while left:
            n = min(left, BLOCK // width)
            fh.write(_lines(rng, n, width).tobytes())
            left -= n


def blob(path: Path, size: int, seed: int) -> None:
    """The checksum pass's input: ``size`` random bytes."""
    rng = _rng(seed, 2)
    with open(path, "wb") as fh:
        for at in range(0, size, BLOCK):
            fh.write(rng.bytes(min(BLOCK, size - at)))


#: A source line: indentation, an identifier-ish body, a semicolon.
NEEDLE = b"reclaim_the_needle"


def source_tree(root: Path, size: int, seed: int) -> int:
    """A source tree of ``size`` bytes: 64 directories of files of 4..60 KiB, C-like lines
    of random words; about one line in 4,096 holds :data:`NEEDLE`. Returns the file count."""
    rng = _rng(seed, 3)
    made, nfiles = 0, 0
    while made < size:
        d = root / f"d{nfiles % 64:02d}"
        d.mkdir(parents=True, exist_ok=True)
        nbytes = min(int(rng.integers(4, 61)) << 10, size - made)
        nlines = max(1, nbytes // 48)
        body = _lines(rng, nlines, 48)
        body[:, :4] = ord(" ")
        body[:, 46] = ord(";")
        body[rng.integers(0, 48, size=nlines) == 0, 8:8 + 20] = ord(" ")  # some shorter lines
        hits = np.flatnonzero(rng.integers(0, 4096, size=nlines) == 0)
        body[hits, 10:10 + len(NEEDLE)] = np.frombuffer(NEEDLE, dtype=np.uint8)
        (d / f"f{nfiles:05d}.c").write_bytes(body.tobytes())
        made += body.size
        nfiles += 1
    return nfiles


def words(path: Path, size: int, seed: int) -> None:
    """The hash builder's input: lines "KEY VALUE" with distinct 16-hex-digit keys (a
    counter through a bijective mix, so none repeats) and a 47-letter value."""
    rng = _rng(seed, 4)
    width = 16 + 1 + 47 + 1
    left, n0 = size // width, 0
    with open(path, "wb") as fh:
        while left:
            n = min(left, BLOCK // width)
            k = np.arange(n0, n0 + n, dtype=np.uint64)
            k = (k * np.uint64(0x9E3779B97F4A7C15)) ^ (k >> np.uint64(29))  # odd multiplier: a bijection
            hexd = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
            shifts = np.arange(60, -4, -4, dtype=np.uint64)
            digits = hexd[((k[:, None] >> shifts[None, :]) & np.uint64(15)).astype(np.intp)]
            line = np.empty((n, width), dtype=np.uint8)
            line[:, :16] = digits
            line[:, 16] = ord(" ")
            line[:, 17:] = _lines(rng, n, 48)
            fh.write(line.tobytes())
            left -= n
            n0 += n


def database(path: Path, size: int, seed: int) -> int:
    """The SQLite database: table ``t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT)`` with a
    200-letter ``v`` per row, an index on ``k`` (a permutation of the ids): about 227 bytes
    of file a row (measured with SQLite 3.40), so about ``size`` bytes. Returns the row count."""
    rng = _rng(seed, 5)
    rows = max(1, size // 227)
    keys = rng.permutation(rows)
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA page_size = 4096")
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL)")
        step = 1 << 15
        for at in range(0, rows, step):
            n = min(step, rows - at)
            vals = _lines(rng, n, 201)[:, :200]
            db.executemany("INSERT INTO t VALUES (?, ?, ?)",
                           ((at + i, int(keys[at + i]), vals[i].tobytes().decode()) for i in range(n)))
        db.execute("CREATE INDEX t_k ON t (k)")
        db.commit()
    finally:
        db.close()
    return rows


def queries(path: Path, rows: int, n: int, seed: int, s: float = 0.9, batch: int = 50) -> None:
    """The query mix: ``n`` statements (each compiled once: a statement per lookup would
    spend most of the run in SQLite's parser), 99 % looking up ``batch`` keys ``k`` with
    Zipf(``s``) ranks over a shuffled key order (a hot set spread over the file), 1 % range
    scans of 256 ids."""
    rng = _rng(seed, 6)
    ranks = np.arange(1, rows + 1, dtype=np.float64)
    p = ranks ** -s
    p /= p.sum()
    order = rng.permutation(rows)
    picks = order[rng.choice(rows, size=(n, batch), p=p)]
    scans = rng.integers(0, 100, size=n) == 0
    starts = rng.integers(0, max(1, rows - 256), size=n)
    with open(path, "w") as fh:
        for i in range(n):
            if scans[i]:
                fh.write(f"SELECT count(*), sum(length(v)) FROM t WHERE id BETWEEN {starts[i]} AND {starts[i] + 255};\n")
            else:
                fh.write(f"SELECT sum(length(v)) FROM t WHERE k IN ({','.join(map(str, picks[i]))});\n")
