"""A built-in program made ready to run: its input generated into a working directory,
its page accesses recorded there (``reclaimlab record``, in the environment the guest
gives it), both cached under ``$RECLAIMLAB_PROGRAM_CACHE`` (default
``~/.cache/reclaimlab/programs``) by a key of the program, input size and seed, the
generators' source and the program binary; and the root the QEMU guest chroots into,
holding every file the recording saw at the path it saw it."""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import shutil
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..exceptions import ConfigError
from . import Program, get

#: The environment the program runs in, recorded and in the guest (guest/wl.c's -x).
ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
#: Where the working directory is in the guest's root.
GUEST_CWD = "/work"
#: Bump when a recording's meaning changes without the sources below changing.
FORMAT = 2


def cache_root() -> Path:
    env = os.environ.get("RECLAIMLAB_PROGRAM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "reclaimlab" / "programs"


@dataclass
class Recorded:
    """A program's cached input and recording. ``files`` is the trace's file table
    (``(name, first page id, pages)``); ``inputs`` the working directory's entries before
    the run (relative paths; directories end in ``/``)."""

    program: Program
    size: int
    seed: int
    dir: Path
    binary: str
    records: int
    pages: int
    files: list[tuple[str, int, int]] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)

    @property
    def work(self) -> Path:
        return self.dir / "work"

    @property
    def trace(self) -> Path:
        return self.dir / "trace.rcl"

    @property
    def file_pages(self) -> int:
        return sum(n for _, _, n in self.files)

    @property
    def anon_pages(self) -> int:
        return self.pages - max((first + n for _, first, n in self.files), default=0)

    @property
    def writes(self) -> bool:
        """True when the program wrote files: some file of the recording is not an input."""
        work = str(self.work) + "/"
        made = {work + i.rstrip("/") for i in self.inputs}
        return any(name.startswith(work) and name not in made for name, _, _ in self.files)

    def argv(self) -> list[str]:
        return [self.binary, *self.program.argv[1:]]


def _key(prog: Program, binary: str, size: int, seed: int, fold: int) -> str:
    h = hashlib.sha256(f"{FORMAT} {prog.name} {prog.argv} {size} {seed} {fold}".encode())
    h.update(inspect.getsource(prog.make).encode())
    h.update((Path(__file__).parent / "inputs.py").read_bytes())
    h.update(Path(binary).read_bytes())
    return h.hexdigest()[:16]


def binary_of(prog: Program) -> str:
    path = shutil.which(prog.argv[0], path=ENV["PATH"])
    if path is None:
        raise ConfigError(f"program {prog.name}: {prog.argv[0]} not found (apt-get install {prog.package})")
    return path


def _entry(p: Path, work: Path) -> str:
    """``p`` relative to ``work``; a directory ends in ``/``."""
    return p.relative_to(work).as_posix() + ("/" if p.is_dir() else "")


def _entries(work: Path) -> list[str]:
    return sorted(_entry(p, work) for p in work.rglob("*"))


def recorded(name: str, size: int, seed: int = 42, fold: int | None = None, progress: bool = True) -> Recorded:
    """The program ``name`` with ``size`` bytes of input: from the cache, or generated and
    recorded now (the first time; the recording needs Valgrind, docs/record.md)."""
    from ..record import DEFAULT_FOLD, RecordError, record, tty_progress

    prog = get(name)
    if size < (1 << 20):
        raise ConfigError(f"program {name}: size {size} is below 1 MiB")
    fold = fold or DEFAULT_FOLD
    binary = binary_of(prog)
    d = cache_root() / f"{name}-{_key(prog, binary, size, seed, fold)}"
    meta = d / "recorded.json"
    d.parent.mkdir(parents=True, exist_ok=True)
    # The recording names the working directory's absolute path, so it is made in place,
    # under a lock; recorded.json, written last, marks it complete.
    with open(d.parent / f".{d.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not meta.is_file():
            shutil.rmtree(d, ignore_errors=True)
            work = d / "work"
            work.mkdir(parents=True)
            try:
                if progress:
                    print(f"reclaimlab: program {name}: generating {size >> 20} MiB of input in {work}", file=sys.stderr)
                prog.make(work, size, seed)
                before = _entries(work)
                if progress:
                    print(f"reclaimlab: program {name}: recording {' '.join(prog.argv)} (once; cached)", file=sys.stderr)
                r = record([binary, *prog.argv[1:]], d / "trace.rcl", cgroup="wl", fold=fold, cwd=work, env=dict(ENV),
                           quiet=True, progress=tty_progress() if progress else None)
                if progress and sys.stderr.isatty():
                    sys.stderr.write("\r\033[K")
                if r.status != 0:
                    raise RecordError(f"program {name}: {' '.join(prog.argv)} exited with status {r.status}")
                # Only the inputs stay: what the program made, the guest's run makes again.
                for p in sorted(work.rglob("*"), reverse=True):
                    if _entry(p, work) not in before:
                        p.rmdir() if p.is_dir() else p.unlink()
                from .. import _core

                m = _core.open_trace(str(d / "trace.rcl"), "native", None).meta()
                meta.write_text(json.dumps({"program": name, "size": size, "seed": seed, "fold": fold, "binary": binary,
                                            "records": m["records"], "pages": m["pages"],
                                            "files": [list(f) for f in m["files"]], "inputs": before,
                                            "instructions": r.instructions, "record_s": r.run_s}, indent=1))
            except BaseException:
                shutil.rmtree(d, ignore_errors=True)
                raise
    j = json.loads(meta.read_text())
    return Recorded(prog, size, seed, d, j["binary"], j["records"], j["pages"],
                    [tuple(f) for f in j["files"]], j["inputs"])


def interpreter(path: str) -> str | None:
    """An ELF executable's PT_INTERP (the dynamic loader's path), None for a static one."""
    with open(path, "rb") as fh:
        ident = fh.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2:
            return None
        phoff, = struct.unpack_from("<Q", ident, 32)
        phentsize, phnum = struct.unpack_from("<HH", ident, 54)
        fh.seek(phoff)
        table = fh.read(phentsize * phnum)
        for i in range(phnum):
            ptype, _, offset, _, _, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
            if ptype == 3:  # PT_INTERP
                fh.seek(offset)
                return fh.read(filesz).rstrip(b"\0").decode()
    return None


def replicate(path: str, root: Path, seen: set[str] | None = None) -> None:
    """Copy the host's ``path`` into ``root`` at the same path, recreating every symbolic
    link met on the way (``/lib`` -> ``usr/lib``, the loader's ``/lib64`` link...)."""
    seen = set() if seen is None else seen
    if path in seen:
        return
    seen.add(path)
    parts = Path(path).parts[1:]
    host = Path("/")
    for i, part in enumerate(parts):
        host = host / part
        dest = root / host.relative_to("/")
        if host.is_symlink():
            target = os.readlink(host)
            if not dest.is_symlink():
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.symlink_to(target)
            resolved = os.path.normpath(os.path.join(str(host.parent), target))
            replicate(str(Path(resolved, *parts[i + 1:])), root, seen)
            return
    dest = root / Path(path).relative_to("/")
    if host.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
    elif host.is_file() and not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(host, dest)


def aliases(path: str, root: Path, seen: set[str]) -> None:
    """The symbolic links beside ``path`` that lead to it, e.g. a library's soname
    (``libpcre2-8.so.0`` -> ``libpcre2-8.so.0.11.2``): the recording names the file an
    open descriptor reached, the loader opens it by the link."""
    real = os.path.realpath(path)
    with os.scandir(os.path.dirname(real)) as it:
        for e in it:
            if e.is_symlink() and os.path.realpath(e.path) == real:
                replicate(e.path, root, seen)


def stage_root(rec: Recorded, root: Path) -> None:
    """The guest's root: the binary, its loader, every file of the recording's file table
    that exists on the host at the path the recording saw (libraries, ``/etc/ld.so.cache``),
    except Valgrind's own and the working directory's, which is copied from the cache as
    ``/work`` (the inputs only); empty ``/dev`` and ``/proc`` for the guest to mount."""
    work = str(rec.work) + "/"
    seen: set[str] = set()
    paths = [rec.binary] + ([interp] if (interp := interpreter(rec.binary)) else [])
    paths += [name for name, _, _ in rec.files if not name.startswith(work) and "/valgrind/" not in name]
    for p in paths:
        if p.startswith("/") and os.path.lexists(p):
            replicate(p, root, seen)
            aliases(p, root, seen)
    shutil.copytree(rec.work, root / GUEST_CWD.lstrip("/"), symlinks=True)
    for d in ("dev", "proc"):
        (root / d).mkdir(exist_ok=True)


def program_file(rec: Recorded) -> str:
    """/data/program (guest/init.sh): the working directory, then the argv, one per line."""
    argv = rec.argv()
    if any("\n" in a for a in argv):
        raise ConfigError(f"program {rec.program.name}: an argument holds a newline")
    return "\n".join([GUEST_CWD, *argv]) + "\n"
