#!/usr/bin/env python3
"""Throughput of reclaimlab's cache algorithms vs libCacheSim (the `libcachesim` PyPI
package) on the same traces, in one run; miss ratios must be identical.

    python benches/cachesim.py                 # the issue's traces (20 M requests each)
    python benches/cachesim.py --requests 2e6  # quicker

Traces (object size 1, sizes = 10% and 50% of the distinct pages):
  zipf      Zipf alpha=1.0 over 1 M pages (reclaimlab's generator)
  loop      a cyclic loop over 1 M pages
  scan-hot  Zipf(1.0) over 200 K hot pages, with every other 1 M-request block
            interleaving one-time scans of fresh pages (1:1)

Per algorithm and size it prints requests/s of each tool (single core: reclaimlab's
`cache_simulate(threads=1)`, libCacheSim's `process_trace` on its C reader), the ratio,
and whether the miss ratios agree; `rl+read` adds reclaimlab's time to read the file
(libCacheSim's figure always includes its reading). The bare trace-reading rate of both
is the ceiling (reclaimlab: read + remap the oracleGeneral file into dense ids;
libCacheSim: process_trace with a size-0 cache, i.e. read + one failed lookup).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from reclaimlab import _core
from reclaimlab.cli.trace import single_region_program

ALGOS = {"lru": "LRU", "clock": "Clock", "arc": "ARC", "s3fifo": "S3FIFO", "lirs": "LIRS", "sieve": "Sieve", "fifo": "FIFO",
         "slru": "SLRU", "2q": "TwoQ", "lfu": "LFU", "belady": "Belady"}


def write_oracle_np(path: Path, keys: np.ndarray) -> None:
    n = len(keys)
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    nxt = np.full(n, -1, dtype=np.int64)
    same = sk[1:] == sk[:-1]
    nxt[order[:-1][same]] = order[1:][same]
    rec = np.zeros(n, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
    rec["t"] = np.arange(n, dtype=np.uint32)
    rec["id"] = keys
    rec["sz"] = 1
    rec["nx"] = nxt
    rec.tofile(path)


def make_traces(d: Path, n: int) -> dict[str, Path]:
    out = {}
    for name, prog in (("zipf", single_region_program("zipf", 1_000_000, n, alpha=1.0)),
                       ("loop", single_region_program("loop", 1_000_000, n))):
        p = d / f"{name}.oracleGeneral"
        tr = _core.cache_load(_core.generate(prog, 1))
        tr.write_oracle(str(p))
        out[name] = p
    # scan-hot: hot keys from our zipf generator over 200 K pages, scans of fresh ids.
    hot = np.array(_core.cache_load(_core.generate(single_region_program("zipf", 200_000, n, alpha=1.0), 2)).keys(),
                   dtype=np.uint64)
    block = 1_000_000
    keys = hot.copy()
    fresh = 10_000_000
    i = 0
    parts = []
    while i < n:
        h = keys[i:i + block]
        if (i // block) % 2 == 1:
            m = len(h) // 2
            mixed = np.empty(2 * m, dtype=np.uint64)
            mixed[0::2] = h[:m]
            mixed[1::2] = np.arange(fresh, fresh + m, dtype=np.uint64)
            fresh += m
            h = mixed
        parts.append(h)
        i += block
    keys = np.concatenate(parts)[:n]
    p = d / "scan-hot.oracleGeneral"
    write_oracle_np(p, keys)
    out["scan-hot"] = p
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=float, default=20e6)
    ap.add_argument("--algos", default=",".join(a for a in ALGOS if a != "belady"))
    ap.add_argument("--traces", default="zipf,loop,scan-hot")
    ap.add_argument("--sizes", default="0.1,0.5")
    ap.add_argument("--dir", default=None, help="where to write the traces (default: a temp dir)")
    args = ap.parse_args()
    import libcachesim as lcs

    n = int(args.requests)
    algos = args.algos.split(",")
    fracs = [float(x) for x in args.sizes.split(",")]
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="rl-cachebench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    traces = make_traces(tmp, n)
    print(f"# {n:,} requests per trace; traces written in {time.perf_counter() - t:.1f}s to {tmp}", flush=True)
    print(f"# cpu: {os.cpu_count()} cores; python {sys.version.split()[0]}; libcachesim "
          f"{getattr(lcs, '__version__', '?')}", flush=True)
    rows = []
    for tname in args.traces.split(","):
        path = traces[tname]
        t = time.perf_counter()
        tr = _core.cache_load(_core.open_trace(str(path), "oracle", None))
        our_read = len(tr) / (time.perf_counter() - t)
        # libCacheSim's ceiling: a size-0 cache (read each request, one failed lookup,
        # no insert). (`skip_n_req` seeks without reading, so it is no measure.)
        rd = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        t = time.perf_counter()
        lcs.FIFO(0).process_trace(rd)
        lcs_read = len(tr) / (time.perf_counter() - t)
        distinct = tr.distinct
        print(f"\n## {tname}: {len(tr):,} requests, {distinct:,} distinct pages; bare read: reclaimlab "
              f"{our_read / 1e6:.1f} M req/s, libCacheSim {lcs_read / 1e6:.1f} M req/s", flush=True)
        print(f"{'algo':8} {'size':>9} {'miss ratio':>10} {'reclaimlab':>12} {'libCacheSim':>12} {'ratio':>7} "
              f"{'rl+read':>10} {'ratio':>6}  agree")
        for a in algos:
            for f in fracs:
                size = int(distinct * f)
                r = _core.cache_simulate(tr, [a], [size], threads=1)[0]
                ours = len(tr) / r["seconds"]
                cache = getattr(lcs, ALGOS[a])(size)
                reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
                t = time.perf_counter()
                mr = cache.process_trace(reader)[0]
                theirs = len(tr) / (time.perf_counter() - t)
                agree = round(mr * len(tr)) == r["misses"]
                rows.append((tname, a, f, r["miss_ratio"], ours, theirs, agree))
                e2e = 1 / (1 / ours + 1 / our_read)  # reading the file + simulating
                print(f"{a:8} {size:>9,} {r['miss_ratio']:>10.4f} {ours / 1e6:>8.1f} M/s {theirs / 1e6:>8.2f} M/s "
                      f"{ours / theirs:>6.1f}x {e2e / 1e6:>6.1f} M/s {e2e / theirs:>5.1f}x  "
                      f"{'yes' if agree else 'NO (' + format(mr, '.6f') + ')'}", flush=True)
    if not args.dir:
        for p in traces.values():
            p.unlink()
    return 0 if all(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
