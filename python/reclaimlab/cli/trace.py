"""``reclaimlab trace info|convert|gen``: inspect, convert and synthesise traces (the
work is :mod:`reclaimlab.trace`'s, the public Python API of these commands)."""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table
from ..trace import FORMATS, KINDS

HELP = "inspect, convert and generate page-access traces"

KIND_HELP = (
    "how records that lack it are classified: file-read (page cache via read()), "
    "file-mapped (mmap'd file), anon (anonymous memory)"
)

GEN_EPILOG = """\
patterns:
  zipf      page i drawn with probability ~ 1/i^alpha (hot set + long tail)
  uniform   every page equally likely
  seq, loop cyclic sequential scan 0,1,..,N-1,0,1,.. (reuse distance N: the LRU-hostile
            loop that refaults when N pages do not fit in memory)
  zigzag    sweep 0,1,..,N-1,N-1,..,1,0,.. (recently used pages reused first)
  program   a phased masim-style program from a TOML file (docs/trace-programs.md)

examples:
  reclaimlab trace gen zipf --pages 262144 --accesses 20000000 --alpha 0.9 -o zipf.trace
  reclaimlab trace gen loop --pages 300000 --accesses 3000000 --trace-kind file-read -o loop.trace
  reclaimlab trace gen program phases.toml -o phases.trace
"""


def count(text: str) -> int:
    """argparse type: a non-negative integer (underscores allowed: 1_000_000)."""
    try:
        n = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return n


def add_parser(sub) -> None:
    p = sub.add_parser(
        "trace",
        help=HELP,
        description=HELP + ". Formats: native (reclaimlab's binary format, crates/trace/FORMAT.md), "
        "lirs (one block number per line), address (`l|s 0xADDR GAP` lines), csv, damo (a `damo record` "
        "file: DAMON's region access pattern as page accesses, docs/damo.md).",
    )
    tsub = p.add_subparsers(dest="trace_command", metavar="COMMAND", title="commands")
    tsub.required = True

    info = tsub.add_parser("info", help="count records, pages, reads/writes, file/anon of a trace",
                           description="Read a trace to the end and print its counts.")
    info.add_argument("file", metavar="FILE")
    vocab.add(info, "trace-format", choices=FORMATS, help="native | lirs | address | csv | damo (a damo record file) (default: detect)")
    vocab.add(info, "trace-kind", KIND_HELP, choices=KINDS)
    vocab.add(info, "json", "print one JSON object")
    add_damo_args(info)
    info.set_defaults(func=cmd_info)

    conv = tsub.add_parser("convert", help="convert a trace to the native format",
                           description="Convert a trace (any readable format) to reclaimlab's native binary "
                           "format. OUT is written only if the whole input converts.")
    conv.add_argument("input", metavar="IN")
    conv.add_argument("output", metavar="OUT")
    vocab.add(conv, "trace-format", choices=FORMATS, help="format of IN: native | lirs | address | csv | oracle | damo (a damo record file, "
                      "turned into page accesses; docs/damo.md) (default: detect)")
    vocab.add(conv, "trace-kind", KIND_HELP, choices=KINDS)
    add_damo_args(conv)
    conv.add_argument("--to", metavar="F", choices=("native", "oracle"),
                      help="output format: native, or oracle (libCacheSim oracleGeneral; default when OUT's name "
                      "contains 'oracleGeneral')")
    conv.add_argument("--compress", action="store_true",
                      help="compress the native trace's blocks (format version 2; about 1-3 bytes a record "
                      "instead of 8 or 12)")
    conv.set_defaults(func=cmd_convert)

    gen = tsub.add_parser("gen", help="generate a synthetic trace (zipf, uniform, seq, loop, zigzag, program)",
                          description="Generate a synthetic trace from a seed, in the native format.",
                          epilog=GEN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    gsub = gen.add_subparsers(dest="pattern", metavar="PATTERN", title="patterns")
    gsub.required = True
    for name, what in (("zipf", "Zipf-distributed accesses"), ("uniform", "uniformly random accesses"),
                       ("seq", "a cyclic sequential scan"), ("loop", "a cyclic loop (same as seq)"),
                       ("zigzag", "a forward-then-backward sweep")):
        g = gsub.add_parser(name, help=what, description=f"Generate {what} over one region of pages.")
        g.add_argument("--pages", type=count, required=True, metavar="N", help="distinct 4 KiB pages")
        g.add_argument("--accesses", type=count, required=True, metavar="N", help="records to generate")
        if name == "zipf":
            g.add_argument("--alpha", type=float, default=1.0, metavar="A", help="Zipf exponent (default 1.0)")
        vocab.add(g, "trace-kind", KIND_HELP + " (default anon)", choices=KINDS, default="anon")
        g.add_argument("--write-ratio", type=float, default=0.0, metavar="R", help="fraction of writes, 0..1 (default 0)")
        g.add_argument("--cgroup", default="", metavar="NAME", help="charge the pages to this cgroup (default: root)")
        vocab.add(g, "seed", "random seed (default 1)", type=int, default=1)
        vocab.add(g, "output", "native trace to write", required=True)
        g.set_defaults(func=cmd_gen)
    prog = gsub.add_parser("program", help="a phased program from a TOML file (docs/trace-programs.md)",
                           description="Generate a phased, masim-style trace from PROGRAM.toml: [[region]] tables "
                           "(name, pages, kind, write_ratio, cgroup) and [[phase]] tables (name, accesses) with "
                           "[[phase.stream]] entries (region, pattern = \"zipf:1.0\"|\"uniform\"|\"seq\"|\"loop\"|\"zigzag\", "
                           "weight); top-level repeat = N. See docs/trace-programs.md.")
    prog.add_argument("program", metavar="PROGRAM.toml")
    vocab.add(prog, "seed", "random seed (default 1)", type=int, default=1)
    vocab.add(prog, "output", "native trace to write", required=True)
    prog.set_defaults(func=cmd_gen_program)


def add_damo_args(p: argparse.ArgumentParser) -> None:
    """Options of the damo record -> page accesses conversion (docs/damo.md)."""
    g = p.add_argument_group("damo records (--trace-format damo; docs/damo.md)")
    vocab.add(g, "seed", type=int, default=1, help="random seed of the page picks (default 1)")
    g.add_argument("--scale", type=float, default=1.0, metavar="X",
                   help="multiply the accesses by X, e.g. 0.1 to thin a large record (default 1: DAMON would "
                   "sample the recorded nr_accesses)")
    g.add_argument("--no-populate", dest="populate", action="store_false",
                   help="do not write every recorded page once at time 0 (then never-accessed regions do not exist)")


def cmd_info(args: argparse.Namespace) -> int:
    from ..trace import info as trace_info

    info = trace_info(args.file, trace_format=args.trace_format, trace_kind=args.trace_kind, seed=args.seed,
                      scale=args.scale, populate=args.populate)
    if args.json:
        print(json.dumps(info))
        return 0
    rows = [
        ("file", args.file),
        ("format", info["format"]),
        ("records", f"{info['records']:,}"),
        ("pages", f"{info['pages']:,}  ({info['pages'] * 4096 / (1 << 20):,.1f} MiB)"),
        ("reads / writes", f"{info['reads']:,} / {info['writes']:,}"),
        ("file / anon", f"{info['file']:,} / {info['anon']:,}"),
        ("syscall / mapped", f"{info['syscall']:,} / {info['mapped']:,}"),
        ("cgroups", ", ".join(c or "(root)" for c in info["cgroups"]) or "(root)"),
    ]
    if info["has_time"]:
        secs = info["total_gap_ticks"] * info["tick_ps"] / 1e12
        rows.append(("duration", f"{secs:.6g} s  ({info['total_gap_ticks']:,} ticks of {info['tick_ps']} ps)"))
    else:
        rows.append(("duration", "untimed (the engine charges cost.access_ns per access)"))
    ops = info.get("ops") or []
    if ops:
        # memory.reclaim writes (FORMAT.md, "Op table"): the first few, then how many more.
        shown = [f"{b:,} B to {cg or '(root)'}" + (f" swappiness={sw}" if sw is not None else "") + f" before record {at:,}"
                 for at, cg, b, sw in ops[:4]]
        more = f"; {len(ops) - 4:,} more" if len(ops) > 4 else ""
        rows.append(("memory.reclaim", f"{len(ops):,} write(s): " + "; ".join(shown) + more))
    madvise = info.get("madvise") or []
    if madvise:
        shown = [f"{advice} of pages {first:,}+{n:,} before record {at:,}" for at, first, n, advice in madvise[:4]]
        more = f"; {len(madvise) - 4:,} more" if len(madvise) > 4 else ""
        rows.append(("madvise", f"{len(madvise):,} call(s): " + "; ".join(shown) + more))
    if "storage" in info:
        rows.append(("blocks", storage_row(info["storage"], info["records"])))
    print(table(rows))
    return 0


def storage_row(s: dict, records: int) -> str:
    """How a native trace stores its records, from ``_core.native_storage``."""
    per = s["block_bytes"] / records if records else 0.0
    size = f"{s['file_bytes'] / 1e6:,.1f} MB file"
    if not s["compressed"]:
        return f"uncompressed (version 1), {per:.0f} bytes a record; {size}"
    ratio = s["record_bytes"] / s["block_bytes"] if s["block_bytes"] else 1.0
    return f"compressed (version 2), {ratio:.1f}x: {per:.2f} bytes a record; {size}"


def cmd_convert(args: argparse.Namespace) -> int:
    from ..trace import convert

    n = convert(args.input, args.output, trace_format=args.trace_format, trace_kind=args.trace_kind, to=args.to,
                compress=args.compress, seed=args.seed, scale=args.scale, populate=args.populate)
    print(f"wrote {n:,} records to {args.output}")
    return 0


def cmd_gen(args: argparse.Namespace) -> int:
    from ..trace import generate

    n = generate(args.pattern, args.output, pages=args.pages, accesses=args.accesses, alpha=getattr(args, "alpha", 1.0),
                 trace_kind=args.trace_kind, write_ratio=args.write_ratio, cgroup=args.cgroup, seed=args.seed)
    print(f"wrote {n:,} records to {args.output}")
    return 0


def cmd_gen_program(args: argparse.Namespace) -> int:
    from ..trace import generate

    n = generate("program", args.output, program=args.program, seed=args.seed)
    print(f"wrote {n:,} records to {args.output}")
    return 0
