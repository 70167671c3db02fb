"""The comparison table of docs/plugins.md: cache_ext's example policies (this
directory) beside the kernel's classic LRU and MGLRU and the built-in cache:lru, on the
file-search and GET/SCAN scenarios. Run from this directory:

    python compare.py            # both scenarios
    python compare.py file-search

Each scenario's runs go through reclaimlab.compare (one worker process per policy).
"""

import sys

import reclaimlab

POLICIES = [
    "classic@6.15",
    "mglru@6.15",
    "cache:lru",
    "python:lru:LRU",
    "python:mru:MRU",
    "python:lfu:LFU",
    "python:s3fifo:S3FIFO",
    "python:getscan:GetScan",
]


def main(scenarios):
    print("| scenario | policy | runtime_s | vs mglru@6.15 | pages read (pgpgin/4) | pswpin |")
    print("|---|---|---:|---:|---:|---:|")
    for sc in scenarios:
        c = reclaimlab.compare(sc, policies=POLICIES)
        base = c.results["mglru@6.15"].metrics["runtime_s"]
        for name, r in c.results.items():
            t = r.metrics["runtime_s"]
            print(f"| {sc} | {name} | {t:.3f} | {base / t:.2f}x | {r.vmstat['pgpgin'] // 4:,} | {r.vmstat['pswpin']:,} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["file-search", "leveldb-getscan"])
