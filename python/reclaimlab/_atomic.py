"""Write output files atomically: to a temp file beside the target, renamed on success.

The temporary file is ``.<name>.tmp-<pid>-<n>`` in the target's directory (followed by the
target's suffix, e.g. ``.png``), the name the Rust writers use (crates/trace/src/tmp.rs, FORMAT.md "Writing"). A process killed while
writing cannot remove its own; the next write of the same target removes those whose
process is gone (:func:`sweep`)."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from pathlib import Path
from typing import Iterator

_counter = itertools.count()


def temp_name(target: Path, suffix: str | None = None) -> Path:
    """``.<name>.tmp-<pid>-<n><suffix>`` beside ``target``; the suffix is the target's by
    default (kept last for writers that choose a format by it: matplotlib, ``.zst``)."""
    directory = target.parent if str(target.parent) else Path(".")
    suffix = target.suffix if suffix is None else suffix
    return directory / f".{target.name}.tmp-{os.getpid()}-{next(_counter)}{suffix}"


def sweep(directory: Path, name: str) -> int:
    """Remove ``directory/.<name>.tmp-<pid>-<n>[.suffix]`` files whose process no longer runs
    (Linux: no ``/proc/<pid>``); returns how many. Errors are ignored."""
    if not os.path.exists("/proc/self"):
        return 0
    pattern = re.compile(re.escape(f".{name}.tmp-") + r"(\d+)-\d+(?:\..*)?")
    n = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            m = pattern.fullmatch(entry.name)
            if m and not os.path.exists(f"/proc/{m.group(1)}"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    n += 1
    return n


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; rename it to ``path`` only if
    the block succeeds, otherwise remove it. Nothing half-written is ever left."""
    target = Path(path)
    tmp_path = temp_name(target)
    sweep(tmp_path.parent, target.name)
    # Created with the mode a plain open() would have, and never over an existing file.
    try:
        os.close(os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as e:
        raise _naming(e, tmp_path, target) from None
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        if isinstance(e, OSError):
            raise _naming(e, tmp_path, target) from None
        raise


def _naming(e: OSError, tmp: Path, target: Path) -> OSError:
    """``e`` with the target's name where it gave the temporary file's (what a user wrote
    is the target; the temporary name is an implementation detail)."""
    if e.filename is not None and os.fspath(e.filename) == os.fspath(tmp):
        return type(e)(e.errno, e.strerror, os.fspath(target))
    return e


@contextlib.contextmanager
def scratch_file(target: str | os.PathLike, suffix: str) -> Iterator:
    """A scratch file (opened ``w+b``) beside ``target`` while it is being made, named and
    swept as its temporary files are (``.<name>.tmp-<pid>-<n><suffix>``); removed at the end."""
    target = Path(target)
    path = temp_name(target, suffix)
    sweep(path.parent, target.name)
    f = open(path, "x+b")
    try:
        yield f
    finally:
        f.close()
        with contextlib.suppress(OSError):
            path.unlink()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
