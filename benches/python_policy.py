#!/usr/bin/env python3
"""Speed of Python policies (cache_ext's hooks, reclaimlab.Policy) against the built-in
`cache:lru`, on the same scenario in one run: accesses/s of each and the ratio.

    python benches/python_policy.py                    # file-search and leveldb-getscan
    python benches/python_policy.py --repeat 1 file-search

Policies (examples/policies/): `python:lru:LRU` (cache:lru re-expressed: the same
counters, checked here), `python:fifo:FIFO` (the trivial policy: FIFO through the three
hooks) and `python:fifo:FIFOBatched` (the same FIFO handling each batch of hook calls in
one method). Each time is the best of `--repeat` runs (scenario source built outside the
timer); the counters of every run of one policy must be identical.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import reclaimlab
from reclaimlab import _core

POLICIES = ["cache:lru", "python:lru:LRU", "python:fifo:FIFO", "python:fifo:FIFOBatched"]


def timed(scenario: str, policy: str, repeat: int):
    best, raws = float("inf"), []
    for _ in range(repeat):
        p = reclaimlab.prepare(scenario=scenario, policy=policy)
        t = time.perf_counter()
        raw = reclaimlab.replay(p.cfg, p.source)
        best = min(best, time.perf_counter() - t)
        raws.append((raw["vmstat"], {k: v for k, v in raw["metrics"].items()}))
    assert all(r == raws[0] for r in raws), f"{policy}: runs differ"
    return best, raws[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=["file-search", "leveldb-getscan"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "policies"))
    print(f"reclaimlab {_core.__version__}; best of {args.repeat}")
    print(f"{'scenario':<16} {'policy':<24} {'accesses':>10} {'wall_s':>8} {'accesses/s':>12} {'vs cache:lru':>12}")
    for sc in args.scenarios:
        base = None
        for pol in POLICIES:
            t, (vm, metrics) = timed(sc, pol, args.repeat)
            n = int(metrics["accesses"])
            if pol == "cache:lru":
                base, base_counters = t, vm
            elif pol == "python:lru:LRU":
                assert vm == base_counters, "python:lru:LRU differs from cache:lru"
            print(f"{sc:<16} {pol:<24} {n:>10,} {t:>8.2f} {n / t:>12,.0f} {base / t:>11.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
