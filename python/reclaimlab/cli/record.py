"""``reclaimlab record``: run a program and write its page accesses as a native trace."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from . import vocab
from .trace import count

HELP = "run a program and record its page accesses as a native trace"

EPILOG = """\
The program runs under a Valgrind tool (Debian package valgrind), far slower than
natively. Loads, stores and instruction fetches become 4 KiB page accesses (repeats of
a page among the last --fold records dropped), file I/O system calls page-cache
accesses, and time is counted in guest instructions. See docs/record.md.

examples:
  reclaimlab record -o sort.trace -- sort big.txt -o out.txt
  reclaimlab record -o grep.trace --cgroup search -- grep -r pattern src/
  reclaimlab record -o head.trace --max-accesses 10_000_000 -- python3 job.py
"""


def duration(text: str) -> float:
    """argparse type: seconds > 0."""
    try:
        s = float(text)
    except ValueError:
        s = -1.0
    if not s > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got '{text}'")
    return s


def positive(text: str) -> int:
    """argparse type: an integer >= 1 (underscores allowed)."""
    n = count(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got '{text}'")
    return n


def add_parser(sub) -> None:
    from ..record import DEFAULT_FOLD, MAX_FOLD

    p = sub.add_parser("record", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       usage="%(prog)s [-o FILE] [--cgroup NAME] [--max-accesses N] [--duration S] [--fold N] [--no-compress] -- CMD [ARGS...]")
    vocab.add(p, "output", default="record.trace",
                   help="native trace to write (default record.trace)")
    p.add_argument("--cgroup", default="", metavar="NAME", help="charge every access to this cgroup (default: root)")
    p.add_argument("--max-accesses", type=positive, metavar="N",
                   help="stop the program once N accesses are recorded (the trace keeps those N)")
    p.add_argument("--duration", type=duration, metavar="S",
                   help="stop the program after S seconds of recording (the trace keeps what came before)")
    p.add_argument("--fold", type=int, default=DEFAULT_FOLD, metavar="N",
                   help=f"drop an access whose page is that of one of the last N records (a write only after a "
                   f"write); 1 drops only consecutive repeats (1 to {MAX_FOLD}, default {DEFAULT_FOLD})")
    p.add_argument("--no-compress", dest="compress", action="store_false",
                   help="store the trace's blocks uncompressed (native format version 1, 12 bytes a record; "
                   "default: compressed, version 2)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="CMD", help="the program and its arguments, after --")
    p.set_defaults(func=cmd_record)


def cmd_record(args: argparse.Namespace) -> int:
    from ..record import record, tty_progress

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    show = tty_progress()
    try:
        r = record(cmd, args.output, cgroup=args.cgroup, max_accesses=args.max_accesses, duration=args.duration,
                   fold=args.fold, progress=show, compress=args.compress)
    finally:
        if show:
            show("")
    size = os.path.getsize(args.output)
    print(f"wrote {r.records:,} records ({r.pages:,} pages seen, {r.files:,} files) to {args.output}: "
          f"{size / 1e6:,.1f} MB, {size / max(r.records, 1):.2f} bytes a record", file=sys.stderr)
    print(f"  {shlex.join(cmd)}: {r.instructions:,} instructions, {r.references:,} page references folded to "
          f"{r.records:,} records; ran {r.run_s:.1f} s, wrote the trace in {r.write_s:.1f} s", file=sys.stderr)
    if r.stopped:
        print(f"  stopped by --{r.stopped}", file=sys.stderr)
    elif r.status != 0:
        print(f"  note: {cmd[0]} exited with status {r.status}", file=sys.stderr)
    return 0
