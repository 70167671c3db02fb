#!/usr/bin/env python3
"""Experiment for docs/validation.md ("THP, compaction and NUMA", mechanism 1): the guest
runs under QEMU TCG, tens of times slower than the model's clock, while kcompactd's
proactive-compaction timer (HPAGE_FRAG_CHECK_INTERVAL_MSEC, 500 ms) is wall-clock time.
Scale every CPU cost of the model by F and run the thpscale configurations again, against
the guest boots stored by scripts/validate_thp.py (nothing boots).

    python scripts/thp_time_dilation.py 1 20 30    # the factors F; needs validation-runs-thp/
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reclaimlab import _core

#: Every per-operation CPU cost a THP program charges (config keys ending in _ns).
KEYS = ("swap.zram.compress_ns", "swap.zram.decompress_ns", "cost.access_ns", "cost.minor_fault_ns",
        "cost.major_fault_ns", "cost.file_read_ns", "cost.file_write_ns", "cost.scan_ns", "cost.rmap_ns",
        "cost.unmap_ns", "cost.free_ns", "cost.walk_pte_ns", "numa.remote_access_ns", "cost.compact_scan_ns",
        "cost.migrate_page_ns", "cost.clear_page_ns", "cost.tlb_miss_ns")
COUNTERS = ("pgmigrate_success", "compact_daemon_migrate_scanned", "compact_stall", "compact_success", "compact_fail")


def main() -> int:
    factors = [int(a) for a in sys.argv[1:]] or [1, 30]
    out = Path("validation-runs-thp")
    for name, madvise in (("thpscale-plain", False), ("thpscale", True)):
        r = json.loads((out / f"{name}.json").read_text())
        for f in factors:
            cfg = _core.Config()
            for k, v in r["settings"].items():
                cfg.set(k, v)
            for k in KEYS:
                cfg.set(k, str(int(float(cfg.get(k)) * f)))
            runs = _core.thpscale(cfg, [1, 4], madvise, 80)
            cells = [f"t={x['threads']} huge {x['huge_pct']:.1f}% faults {x['elapsed_s']:.2f} s "
                     + " ".join(f"{c}={x['vmstat'][c]}" for c in COUNTERS) for x in runs]
            print(f"{name} model x{f}: " + " | ".join(cells))
        for i, boot in enumerate(r["kernel_phases"]):
            cells = [f"t={ph['threads']} huge {ph['huge_pct']:.1f}% "
                     + " ".join(f"{c}={ph['vmstat'].get(c, 0)}" for c in COUNTERS) for ph in boot]
            print(f"{name} kernel boot {i}: " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
