"""``reclaimlab cachesim``: replay a trace through reference cache algorithms
(LRU, FIFO, CLOCK, SIEVE, S3-FIFO, ARC, LIRS, SLRU, 2Q, LFU, CAR, CLOCK-Pro, Belady, and the papers'
variants where libCacheSim differs) as a plain page cache.

The algorithms follow libCacheSim's definitions so that miss ratios agree exactly
(docs/cachesim.md). Object size is one page: ``--size`` counts pages.
"""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table

HELP = "simulate reference cache algorithms (LRU, ARC, S3-FIFO, ...) on a trace"

TRACE_FORMATS = ("native", "lirs", "address", "csv", "oracle")

EPILOG = """\
examples:
  reclaimlab cachesim --trace data/traces/lirs/sprite.trace.gz --algo lru,arc,s3fifo --size 10%
  reclaimlab cachesim --trace app.trace --algo all --size 4096 --json
  reclaimlab cachesim --trace w.oracleGeneral --algo belady,lru --size 1000,5000
"""


def parse_sizes(text: str, distinct: int) -> list[int]:
    """``N`` pages or ``P%`` of the trace's distinct pages, comma-separated."""
    out = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part:
            continue
        try:
            if part.endswith("%"):
                pct = float(part[:-1])
                if not 0 < pct <= 100:
                    raise ValueError
                out.append(max(1, int(distinct * pct / 100)))
            else:
                n = int(part)
                if n < 1:  # a cache of no page holds nothing: no miss ratio to measure
                    raise ValueError
                out.append(n)
        except ValueError:
            from ..exceptions import ReclaimlabError

            raise ReclaimlabError(f"bad cache size {part!r}: expected pages (N >= 1) or a percentage (P%, 0 < P <= 100)") from None
    if not out:
        from ..exceptions import ReclaimlabError

        raise ReclaimlabError("no cache size given")
    return out


def parse_algos(values: list[str]) -> list[str]:
    from .. import _core
    from ..exceptions import ReclaimlabError

    known = _core.cache_algos()
    out: list[str] = []
    for v in values:
        for a in v.split(","):
            a = a.strip()
            if not a:
                continue
            if a == "all":
                out.extend(x for x in known if x not in out)
                continue
            try:
                _core.cache_simulate(_core.cache_trace_from_keys([]), [a], [])
            except ReclaimlabError:
                raise ReclaimlabError(f"unknown cache algorithm {a!r}; known: {', '.join(known)}, all") from None
            if a.lower() not in out:
                out.append(a.lower())
    if not out:
        raise ReclaimlabError("no algorithm given")
    return out


def load(path: str, fmt: str | None):
    from .. import _core

    return _core.cache_load(_core.open_trace(path, fmt, None), str(path))


def add_trace_args(p) -> None:
    vocab.add(p, "trace", "trace file (any readable format)", required=True)
    vocab.add(p, "trace-format", choices=TRACE_FORMATS, aliases=(),
              help="native | lirs | address | csv | oracle (libCacheSim oracleGeneral); default: detect")


def add_parser(sub) -> None:
    p = sub.add_parser("cachesim", help=HELP, description=HELP + ". " + (__doc__ or "").split("\n\n")[1],
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_args(p)
    from .. import _core

    p.add_argument("--algo", required=True, action="append", metavar="NAME[,NAME...]",
                   help=", ".join(_core.cache_algos()) + ", or all (repeatable)")
    vocab.add(p, "size", required=True, aliases=(),
              help="cache size in pages, or P%% of the trace's distinct pages (comma-separated for several)")
    vocab.add(p, "json", help="print JSON (one object per algorithm and size)")
    p.set_defaults(func=cmd_cachesim)


def cmd_cachesim(args: argparse.Namespace) -> int:
    from .. import _core

    algos = parse_algos(args.algo)
    tr = load(args.trace, args.trace_format)
    distinct = tr.distinct
    sizes = parse_sizes(args.size, distinct)
    res = _core.cache_simulate(tr, algos, sizes)
    if args.json:
        out = [
            {"algo": r["algo"], "size": r["size"], "miss_ratio": r["miss_ratio"], "hits": r["hits"],
             "misses": r["misses"], "requests": r["hits"] + r["misses"]}
            for r in res
        ]
        print(json.dumps({"trace": args.trace, "requests": len(tr), "distinct_pages": distinct, "results": out}))
        return 0
    print(f"{args.trace}: {len(tr):,} requests, {distinct:,} distinct pages")
    rows = [(r["algo"], f"{r['size']:,}", f"{r['miss_ratio']:.4f}", f"{r['hits']:,}", f"{r['misses']:,}",
             f"{(r['hits'] + r['misses']) / max(r['seconds'], 1e-9) / 1e6:,.1f}") for r in res]
    print(table(rows, header=("algo", "size", "miss ratio", "hits", "misses", "Mreq/s"), right=(1, 2, 3, 4, 5)))
    return 0
