#!/usr/bin/env python3
"""Regenerate the real-programs tables of docs/validation.md: each built-in program
(python/reclaimlab/programs) run on the real kernel (QEMU, one guest at a time; MGLRU on and
off, 3 boots each) and its recording replayed in the simulator, per counter.

    python scripts/validate_programs.py --out validation-runs-programs/          # boot what is missing, render
    python scripts/validate_programs.py --out validation-runs-programs/ --render-only
    python scripts/validate_programs.py --out validation-runs-programs/ --resimulate   # after a model change

The setting is the kernel as it ships (readahead 128 KiB, fault-around 64 KiB, THP as the
kernel boots) with each program in a cgroup at memory.max 32 MiB and its default input
(twice memory; the hash builder's input is half of memory and its heap about 2.6 times that),
zram swap of twice the recording's anonymous pages. Each finished configuration's result is
kept in OUT/NAME-mglru-MODE.json; the tables replace the block between the markers below
in docs/validation.md (the layout is scripts/validate_tenants.py's).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_tenants import main  # noqa: E402

from reclaimlab.kernel.run import Setup  # noqa: E402
from reclaimlab.programs import PROGRAMS  # noqa: E402

BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_programs.py -->", "<!-- END GENERATED: scripts/validate_programs.py -->"
MEMORY = "32M"
WORKLOADS = [(name, f"{name}: {p.description}", f"program:{name}", {}) for name, p in PROGRAMS.items()]


def setup_of(out: Path, name: str, mglru: str, boots: int) -> Setup:
    return Setup(workload=f"program:{name}", mglru=mglru, memory=MEMORY, boots=boots)


if __name__ == "__main__":
    raise SystemExit(main(__doc__, WORKLOADS, setup_of, "validation-runs-programs", (BEGIN, END)))
