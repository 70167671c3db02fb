"""Built-in real programs: a Debian-packaged program, a deterministic input made by a
generator (:mod:`.inputs`), and the command line it runs with. :mod:`.prepare` makes the
input, records the program's page accesses with ``reclaimlab record`` (once, cached) and
lays out the root the QEMU guest runs it in; ``reclaimlab kernel run|validate
program:NAME`` and ``reclaimlab run program:NAME`` use them (docs/programs.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import inputs

__all__ = ["Program", "PROGRAMS", "get"]


@dataclass(frozen=True)
class Program:
    """One built-in program. ``make(work, size, seed)`` writes its inputs into ``work``
    (the program's working directory; ``size`` bytes of input); ``argv`` runs there."""

    name: str
    package: str
    description: str
    argv: tuple[str, ...]
    make: Callable[[Path, int, int], None]
    #: The default input size as a multiple of the cgroup's memory.max.
    size_factor: float = 2.0


def _grep(work: Path, size: int, seed: int) -> None:
    inputs.source_tree(work / "src", size, seed)


def _sort(work: Path, size: int, seed: int) -> None:
    inputs.text(work / "big.txt", size, seed)
    (work / "tmp").mkdir()


def _sqlite(work: Path, size: int, seed: int) -> None:
    rows = inputs.database(work / "db.sqlite", size, seed)
    inputs.queries(work / "queries.sql", rows, 2_000, seed)


def _checksum(work: Path, size: int, seed: int) -> None:
    inputs.blob(work / "data.bin", size, seed)


def _hash(work: Path, size: int, seed: int) -> None:
    inputs.words(work / "words.txt", size, seed)


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("grep", "grep", "GNU grep -r searches a generated source tree larger than memory twice "
            "(cache_ext's file search: a cyclic scan through read())",
            ("grep", "-r", "-c", inputs.NEEDLE.decode(), "src", "src"), _grep),
    Program("sort", "coreutils", "GNU sort of a generated text file larger than memory: external merge "
            "with an 8 MiB buffer and temporary files (reads, dirty writes, unlinked temporaries)",
            ("sort", "-S", "8M", "--parallel=1", "-T", "tmp", "-o", "out.txt", "big.txt"), _sort),
    Program("sqlite", "sqlite3", "sqlite3 runs 2,000 queries (99 % of them 50 Zipf(0.9) point lookups "
            "through an index, 1 % range scans) on a database larger than memory (pread, SQLite's 2 MiB cache)",
            ("sqlite3", "-batch", "-bail", "-init", "/dev/null", "db.sqlite", ".read queries.sql"), _sqlite),
    Program("checksum", "coreutils", "md5sum reads a generated file larger than memory twice "
            "(streaming, readahead-friendly)", ("md5sum", "data.bin", "data.bin"), _checksum),
    Program("hash", "mawk", "mawk builds a hash table of every line of a generated file (an anonymous "
            "heap about 1.3 times memory: swap), then walks it",
            ("mawk", "{ h[$1] = $2 } END { n = 0; for (k in h) n++; print n }", "words.txt"), _hash,
            size_factor=0.5),
)}


def get(name: str) -> Program:
    from ..exceptions import ConfigError

    if name not in PROGRAMS:
        raise ConfigError(f"unknown program {name!r} (built-in programs: {', '.join(PROGRAMS)})")
    return PROGRAMS[name]
