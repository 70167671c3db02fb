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

Every timed quantity of both tools (reclaimlab's read and simulation, libCacheSim's
process_trace, both bare reads) is the best of `--repeat` runs on the same input; the
misses must be the same in every run. The file cache is treated alike: each trace file
is read once (untimed) right before its timings so it is in the page cache for both, and
each timed run starts from a fresh reader (reclaimlab `open_trace`, libCacheSim
`TraceReader`, created outside the timer), so each run of either tool maps the cached
file and faults its pages in itself.
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
from reclaimlab.trace import single_region_program

#: our name -> libCacheSim's class, from the algorithm table (crates/cache/src/algo/mod.rs)
ALGOS = dict(_core.cache_libcachesim_names())


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


def warm_page_cache(path: Path) -> None:
    """Read the whole file once (untimed) so both tools find it in the page cache."""
    buf = bytearray(1 << 24)
    with open(path, "rb", buffering=0) as fh:
        while fh.readinto(buf):
            pass


def best(repeat: int, run):
    """Run `run()` (which returns (seconds, value)) `repeat` times: the least seconds and
    the list of values (checked by the caller to be the same each time)."""
    out = [run() for _ in range(repeat)]
    return min(t for t, _ in out), [v for _, v in out]


def read_ours(path: Path):
    """reclaimlab's read of the oracleGeneral file into dense ids (a fresh reader)."""
    src = _core.open_trace(str(path), "oracle", None)
    t = time.perf_counter()
    tr = _core.cache_load(src)
    return time.perf_counter() - t, tr


def run_lcs(lcs, path: Path, cache):
    """libCacheSim's process_trace on a fresh reader of the file: (seconds, miss ratio)."""
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    t = time.perf_counter()
    mr = cache.process_trace(reader)[0]
    return time.perf_counter() - t, mr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=float, default=20e6)
    ap.add_argument("--algos", default=",".join(a for a in ALGOS if a != "belady"))
    ap.add_argument("--traces", default="zipf,loop,scan-hot")
    ap.add_argument("--sizes", default="0.1,0.5")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for every timing (default 3)")
    ap.add_argument("--dir", default=None, help="where to write the traces (default: a temp dir)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1 (got {args.repeat})")
    import libcachesim as lcs

    n = int(args.requests)
    algos = args.algos.split(",")
    fracs = [float(x) for x in args.sizes.split(",")]
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="rl-cachebench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    traces = make_traces(tmp, n)
    print(f"# {n:,} requests per trace; traces written in {time.perf_counter() - t:.1f}s to {tmp}", flush=True)
    print(f"# best of {args.repeat} runs for every timing; page cache warm for both tools; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print(f"# cpu: {os.cpu_count()} cores; python {sys.version.split()[0]}; libcachesim "
          f"{getattr(lcs, '__version__', '?')}", flush=True)
    rows = []
    for tname in args.traces.split(","):
        path = traces[tname]
        warm_page_cache(path)
        secs, reads = best(args.repeat, lambda: read_ours(path))
        tr = reads[0]
        if any((len(x), x.nr_pages) != (len(tr), tr.nr_pages) for x in reads):
            sys.exit(f"{path}: the repeated reads differ")
        del reads
        our_read = len(tr) / secs
        # libCacheSim's ceiling: a size-0 cache (read each request, one failed lookup,
        # no insert). (`skip_n_req` seeks without reading, so it is no measure.)
        lcs_read = len(tr) / best(args.repeat, lambda: run_lcs(lcs, path, lcs.FIFO(0)))[0]
        distinct = tr.distinct
        print(f"\n## {tname}: {len(tr):,} requests, {distinct:,} distinct pages; bare read: reclaimlab "
              f"{our_read / 1e6:.1f} M req/s, libCacheSim {lcs_read / 1e6:.1f} M req/s", flush=True)
        print(f"{'algo':8} {'size':>9} {'miss ratio':>10} {'reclaimlab':>12} {'libCacheSim':>12} {'ratio':>7} "
              f"{'rl+read':>10} {'ratio':>6}  agree")
        for a in algos:
            for f in fracs:
                size = int(distinct * f)
                runs = [_core.cache_simulate(tr, [a], [size], threads=1)[0] for _ in range(args.repeat)]
                r = runs[0]
                ours = len(tr) / min(x["seconds"] for x in runs)
                secs, mrs = best(args.repeat, lambda: run_lcs(lcs, path, getattr(lcs, ALGOS[a])(size)))
                theirs = len(tr) / secs
                agree = (all(x["misses"] == r["misses"] for x in runs)
                         and all(round(m * len(tr)) == r["misses"] for m in mrs))
                rows.append((tname, a, f, r["miss_ratio"], ours, theirs, agree))
                e2e = 1 / (1 / ours + 1 / our_read)  # reading the file + simulating
                print(f"{a:8} {size:>9,} {r['miss_ratio']:>10.4f} {ours / 1e6:>8.1f} M/s {theirs / 1e6:>8.2f} M/s "
                      f"{ours / theirs:>6.1f}x {e2e / 1e6:>6.1f} M/s {e2e / theirs:>5.1f}x  "
                      f"{'yes' if agree else 'NO (' + ', '.join(format(m, '.6f') for m in mrs) + ')'}", flush=True)
    if not args.dir:
        for p in traces.values():
            p.unlink()
    return 0 if all(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
