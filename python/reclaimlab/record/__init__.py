"""``reclaimlab record``: run a real program under a Valgrind tool (:mod:`.tool`) and write
its page accesses (loads, stores, instruction pages, file I/O system calls) as a native
trace, streamed through a spool file (:mod:`.stream`). docs/record.md says what a
recording holds and what it cannot see."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .. import _atomic
from .stream import Spool, consume
from .tool import TOOL, RecordError, build, launcher

__all__ = ["record", "Recording", "RecordError", "DEFAULT_FOLD", "MAX_FOLD"]

#: Records an access may be folded into (tool/rl_main.c's --rl-fold; docs/record.md).
DEFAULT_FOLD = 16
MAX_FOLD = 64


@dataclass
class Recording:
    """What ``record`` wrote: records, distinct pages seen while recording (a capped
    recording keeps fewer), files in the file table, guest instructions, memory
    references before folding, the program's exit status, whether a
    cap stopped it, and the wall-clock seconds of the run and of writing the trace."""

    records: int
    pages: int
    files: int
    instructions: int
    references: int
    status: int
    stopped: str | None
    run_s: float
    write_s: float


def _check_output(out: Path) -> None:
    directory = out.parent
    if out.is_dir():
        raise RecordError(f"{out}: is a directory")
    if not directory.is_dir():
        raise RecordError(f"{out}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise RecordError(f"{out}: directory {directory} is not writable")


def _command(cmd: Sequence[str], search: str | None = None) -> list[str]:
    if not cmd:
        raise RecordError("no command to record (reclaimlab record [OPTIONS] -- CMD [ARGS...])")
    path = shutil.which(cmd[0], path=search)
    if path is None:
        raise RecordError(f"{cmd[0]}: command not found")
    return [path, *cmd[1:]]


def _valgrind_failure(logs: Path) -> str:
    """The last line Valgrind itself complained with, if any."""
    lines = []
    for log in sorted(logs.glob("vg.*.log")):
        lines += [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    lines = [ln.split("== ", 1)[-1] for ln in lines]
    return lines[-1] if lines else ""


def record(cmd: Sequence[str], out: str | os.PathLike, cgroup: str = "", max_accesses: int | None = None,
           duration: float | None = None, fold: int = DEFAULT_FOLD,
           progress: Callable[[str], None] | None = None, cwd: str | os.PathLike | None = None,
           env: dict[str, str] | None = None, quiet: bool = False, compress: bool = True) -> Recording:
    """Run ``cmd`` (its stdin, stdout and stderr are this process's; with ``quiet`` stdin
    and stdout are /dev/null) in ``cwd`` with environment ``env`` (default: this
    process's) and write its page accesses to the native trace ``out``, in cgroup ``cgroup``. An access to a page of one of
    the last ``fold`` data records is folded into it (1: only consecutive repeats).
    ``max_accesses`` and ``duration`` stop the program (SIGKILL to its process group) once
    reached; the trace then holds what came before. With ``compress`` (the default) the
    trace's blocks are compressed (native format version 2). Raises :class:`RecordError` if the
    program cannot run, is killed by a signal (other than a cap's) or the trace cannot be
    written; nothing is left at ``out`` then."""
    if not 1 <= fold <= MAX_FOLD:
        raise RecordError(f"fold {fold}: expected 1 to {MAX_FOLD}")
    if max_accesses is not None and max_accesses < 1:
        raise RecordError(f"max accesses {max_accesses}: expected at least 1")
    out = Path(out)
    _check_output(out)
    argv = _command(cmd, None if env is None else env.get("PATH", os.defpath))
    lib = build()
    say = progress or (lambda line: None)
    with tempfile.TemporaryDirectory(prefix="reclaimlab-record.") as tmp, \
            _atomic.scratch_file(out, ".spool") as spool_file:
        spool = Spool(spool_file, max_accesses)
        vg = [launcher(), f"--tool={TOOL}", "--trace-children=yes", f"--log-file={tmp}/vg.%p.log",
              f"--rl-out={tmp}/stream", f"--rl-fold={fold}", *argv]
        start = time.monotonic()
        try:
            status, stopped = _run(vg, dict(os.environ if env is None else env, VALGRIND_LIB=str(lib)),
                                   Path(tmp) / "stream", spool, duration, say, cwd, quiet)
            run_s = time.monotonic() - start
            if stopped is None and status < 0:
                name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
                raise RecordError(f"{cmd[0]} was killed by {name}; no trace written")
            if stopped is None and spool.instructions == 0:
                why = _valgrind_failure(Path(tmp))
                raise RecordError(f"{cmd[0]} did not run under Valgrind" + (f": {why}" if why else f" (exit status {status})"))
            spool.close()
            t = time.monotonic()
            n = spool.write(Path(spool_file.name), out, cgroup,
                            lambda done: say(f"writing {out}: {done:,} of {spool.records:,} records"), compress)
        except OSError as e:  # the spool's disk is full, ...
            raise RecordError(f"{out}: {e.strerror or e}; no trace written") from None
        write_s = time.monotonic() - t
    table, _, _ = spool.layout()
    return Recording(n, spool.pages, len(table), spool.instructions, spool.references, status, stopped, run_s, write_s)


def _run(vg: list[str], env: dict, fifo: Path, spool: Spool, duration: float | None,
         say: Callable[[str], None], cwd=None, quiet: bool = False) -> tuple[int, str | None]:
    """Run Valgrind on the program, feeding its stream from ``fifo`` into ``spool`` until
    every process that writes it has gone (or a cap stops them all); returns the exit
    status and the cap that stopped it, if any."""
    os.mkfifo(fifo, 0o600)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    wfd = os.open(fifo, os.O_WRONLY)  # held until the program exits, so EOF means "all writers gone"
    start = time.monotonic()
    try:
        null = subprocess.DEVNULL if quiet else None
        proc = subprocess.Popen(vg, env=env, start_new_session=True, cwd=cwd, stdin=null, stdout=null)
        try:
            while True:
                ready, _, _ = select.select([rfd], [], [], 0.2)
                if ready and not consume(rfd, spool):
                    return proc.wait(), None
                if spool.full or (duration is not None and time.monotonic() - start >= duration):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    return proc.wait(), "max-accesses" if spool.full else "duration"
                if wfd >= 0 and proc.poll() is not None:
                    os.close(wfd)
                    wfd = -1
                say(f"recording: {spool.records:,} accesses, {spool.pages:,} pages")
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)


def tty_progress() -> Callable[[str], None] | None:
    """A progress line on stderr when it is a terminal (None otherwise)."""
    if not sys.stderr.isatty():
        return None
    last = 0.0

    def show(line: str) -> None:
        """Redraw at most every 0.2 s; an empty line clears it at once."""
        nonlocal last
        now = time.monotonic()
        if line and now - last < 0.2:
            return
        last = now
        sys.stderr.write("\r\033[K" + line)
        sys.stderr.flush()

    return show
