#!/usr/bin/env python3
"""libCacheSim's miss counts on the agreement traces, the golden table
python/tests/golden/libcachesim_misses.json that python/tests/test_cachesim.py compares
reclaimlab's cache algorithms with (so those tests run without libCacheSim installed).

    python scripts/libcachesim_golden.py            # re-derive with libCacheSim, write the table
    python scripts/libcachesim_golden.py --check    # re-derive and compare, write nothing

Every number comes from libCacheSim itself (the `libcachesim` PyPI package, in the
`test` extra): each trace is written as oracleGeneral and replayed by libCacheSim's
reader and classes; reclaimlab only builds the traces (TRACES below, which the test builds
the same way) and names the algorithms (`_core.cache_libcachesim_names()`, from the
algorithm table). The table also keeps each trace's request count as libCacheSim's reader
counted it and a digest of its keys, so a changed trace is told apart from a disagreement.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Callable

from reclaimlab import _core
from reclaimlab.trace import single_region_program

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "python" / "tests" / "golden" / "libcachesim_misses.json"
LIRS = ROOT / "data" / "traces" / "lirs"
SPEC = ROOT / "data" / "traces" / "spec2000-address"

#: cache sizes as fractions of the distinct pages (at least 20 pages: libCacheSim's
#: S3-FIFO cannot insert when the small queue (10%) holds under two objects)
FRACTIONS = (0.01, 0.05, 0.1, 0.25, 0.5)


def sizes_of(tr) -> list[int]:
    d = tr.distinct
    return sorted({max(20, int(d * f)) for f in FRACTIONS})


def gen(pattern: str, pages: int, accesses: int, alpha: float = 1.0, seed: int = 1):
    return _core.cache_load(_core.generate(single_region_program(pattern, pages, accesses, alpha=alpha), seed))


def scan_hot_mix():
    """A hot set (zipf over 2000 pages) interleaved with one-time scans of fresh pages."""
    rnd = random.Random(5)
    keys, fresh = [], 100_000
    hot = [int(2000 * (rnd.random() ** 3)) for _ in range(120_000)]
    for i, h in enumerate(hot):
        keys.append(h)
        if (i // 5000) % 3 == 2:  # every third block of 5000 requests also scans
            keys.append(fresh)
            fresh += 1
    return _core.cache_trace_from_keys(keys)


def _traces() -> dict[str, tuple[Callable, Callable]]:
    """Trace id -> (build the CacheTrace, its cache sizes)."""
    out: dict[str, tuple[Callable, Callable]] = {}
    for p in sorted(LIRS.glob("*.trace.gz")):
        out[f"lirs/{p.name}"] = (lambda p=p: _core.cache_load(_core.open_trace(str(p), "lirs", None)), sizes_of)
    for name in ("gcc", "gzip", "mcf"):
        p = SPEC / f"{name}.trace.gz"
        out[f"spec/{name}"] = (lambda p=p: _core.cache_load(_core.open_trace(str(p), "address", None)), sizes_of)
    for alpha in ("0.8", "1.0", "1.2"):
        out[f"zipf{alpha}"] = (lambda a=alpha: gen("zipf", 20_000, 300_000, alpha=float(a)), sizes_of)
    out["loop"] = (lambda: gen("loop", 5_000, 100_000), sizes_of)
    out["zigzag"] = (lambda: gen("zigzag", 5_000, 100_000), sizes_of)
    out["scan-hot"] = (scan_hot_mix, sizes_of)
    # A loop of N pages at N-1, N, N+1: the LRU family's all-miss against all-hit.
    out["loop3000-edge"] = (lambda: gen("loop", 3000, 60_000), lambda tr: [2999, 3000, 3001])
    return out


#: Trace id -> (builder, sizes): what the table covers, in its order.
TRACES = _traces()


def digest(tr) -> str:
    """The trace's keys as little-endian u32, SHA-256 (first 16 hex digits)."""
    a = array("I", tr.keys())
    if sys.byteorder != "little":
        a.byteswap()
    return hashlib.sha256(a.tobytes()).hexdigest()[:16]


def derive(lcs, ids=None) -> dict:
    """libCacheSim's misses for every algorithm with a libCacheSim class, on `ids` (all)."""
    algos = dict(_core.cache_libcachesim_names())
    traces = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tid in ids or TRACES:
            build, sizes = TRACES[tid]
            tr = build()
            path = Path(tmp) / "t.oracleGeneral"
            tr.write_oracle(str(path))
            requests = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE).get_num_of_req()
            misses = {}
            for algo, cls in algos.items():
                misses[algo] = {}
                for s in sizes(tr):
                    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
                    ratio = getattr(lcs, cls)(s).process_trace(reader)[0]
                    misses[algo][str(s)] = round(ratio * requests)
            traces[tid] = {"requests": requests, "keys_sha256": digest(tr), "sizes": sizes(tr), "misses": misses}
            print(f"{tid}: {requests:,} requests", file=sys.stderr, flush=True)
    return {"libcachesim": getattr(lcs, "__version__", "?"), "algorithms": algos, "traces": traces}


def load() -> dict:
    return json.loads(GOLDEN.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="re-derive and compare with the checked-in table")
    args = ap.parse_args(argv)
    import libcachesim as lcs

    table = derive(lcs)
    if args.check:
        old = load()
        if old["traces"] != table["traces"] or old["algorithms"] != table["algorithms"]:
            print(f"{GOLDEN}: differs from libCacheSim {table['libcachesim']}'s counts", file=sys.stderr)
            return 1
        print(f"{GOLDEN}: libCacheSim {table['libcachesim']} agrees")
        return 0
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
