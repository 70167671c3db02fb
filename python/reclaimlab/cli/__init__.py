"""The ``reclaimlab`` command: one module per subcommand.

Every error the user can cause (bad config, unreadable or corrupt trace, unknown
policy) ends as one line ``reclaimlab: error: <message>`` on stderr and exit status 2 (a
deprecated option's note is printed only when the command goes on: cli/vocab.py).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import atlas, cachesim, compare, experiment, kernel, knobs, mrc, policies, record, run, scenarios, trace, tune

PROG = "reclaimlab"

DESCRIPTION = """\
reclaimlab replays page-access traces through models of the Linux kernel's memory
reclaim (classic active/inactive LRU with workingset detection, ...) on a simulated
machine, and reports the kernel's own vmstat counters plus runtime metrics.
"""

EPILOG = """\
examples:
  reclaimlab run                              the built-in default scenario
  reclaimlab run --memory 512M --swap zram:1G --swappiness 100 --json
  reclaimlab run machine.toml --trace app.trace --policy classic@6.15
  reclaimlab trace gen zipf --pages 100000 --accesses 10000000 -o zipf.trace
  reclaimlab record -o sort.trace -- sort big.txt -o out.txt
  reclaimlab knobs                            every config key (kernel names)

Run `reclaimlab COMMAND --help` for a command's options.
"""

MAX_MEMORY_ENV = "RECLAIMLAB_MAX_MEMORY"

COMMANDS = [run, policies, knobs, scenarios, trace, record, experiment, compare, cachesim, mrc, kernel, tune, atlas]


class Parser(argparse.ArgumentParser):
    """argparse with the project's one-line errors: ``reclaimlab: error: COMMAND: MESSAGE
    (COMMAND --help)``, exit 2, without the usage block (subcommands inherit it)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if "expected one argument" in message:
            message += " (a value that starts with '-' is written OPTION=VALUE)"
        sub = self.prog.removeprefix(PROG).strip()
        where = f"{sub}: " if sub else ""
        print(f"{PROG}: error: {where}{message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--max-memory", metavar="SIZE",
                        help="refuse, with one line, any input-sized allocation over SIZE (e.g. 4G): a trace's "
                             "per-page arrays, its page ids, a cache simulation's state (default: "
                             f"${MAX_MEMORY_ENV}, else only what the host can allocate)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub.required = True
    for mod in COMMANDS:
        mod.add_parser(sub)
    return parser


def _version() -> str:
    try:
        from .. import __version__

        return __version__
    except Exception:  # pragma: no cover - the extension is missing
        return "unknown"


def error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def set_max_memory(value: str | None) -> None:
    """Check ``--max-memory`` (or ``$RECLAIMLAB_MAX_MEMORY``) and put it in the environment,
    where the Rust core reads it at each input-sized allocation (worker processes inherit it)."""
    import os

    from .. import _core
    from ..exceptions import ReclaimlabError

    where = "--max-memory" if value is not None else MAX_MEMORY_ENV
    value = value if value is not None else os.environ.get(MAX_MEMORY_ENV)
    if value is None or (where == MAX_MEMORY_ENV and not value.strip()):
        return
    try:
        _core.parse_size(value)
    except ReclaimlabError as e:
        raise ReclaimlabError(f"{where}: {e}") from None
    os.environ[MAX_MEMORY_ENV] = value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reclaimlab`` command; returns the exit status."""
    try:
        from ..exceptions import ReclaimlabError

        from .vocab import flush_notes

        args = build_parser().parse_args(argv)
        set_max_memory(args.max_memory)
        status = int(args.func(args) or 0)
        if status == 0:
            flush_notes(args)  # a deprecated spelling's note, unless the command printed it
        return status
    except ReclaimlabError as e:
        return error(str(e))
    except KeyboardInterrupt:
        return error("interrupted")
    except BrokenPipeError:
        # Output piped into e.g. `head`: not an error of ours.
        try:
            sys.stdout = None  # type: ignore[assignment]
        finally:
            return 0
    except OSError as e:
        if e.filename is not None:
            return error(f"{e.filename}: {e.strerror or e}")
        return error(str(e))
    except BaseException as e:  # a Rust panic surfaces as pyo3's PanicException
        if type(e).__name__ == "PanicException":
            return error(f"internal error (please report this bug): {e}")
        raise
