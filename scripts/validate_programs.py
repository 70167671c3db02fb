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

import json  # noqa: E402

from validate_tenants import main  # noqa: E402

from reclaimlab.kernel import console  # noqa: E402
from reclaimlab.kernel.run import Setup, parse_size  # noqa: E402
from reclaimlab.programs import PROGRAMS  # noqa: E402

BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_programs.py -->", "<!-- END GENERATED: scripts/validate_programs.py -->"
MEMORY = "32M"
WORKLOADS = [(name, f"{name}: {p.description}", f"program:{name}", {}) for name, p in PROGRAMS.items()]


def setup_of(out: Path, name: str, mglru: str, boots: int) -> Setup:
    return Setup(workload=f"program:{name}", mglru=mglru, memory=MEMORY, boots=boots)


#: memory.stat's kernel memory left when the program has exited (its page tables and
#: stacks are gone by then): slab and 6.12's ``kernel`` (all kmem).
KERNEL_KEYS = ("slab_reclaimable", "slab_unreclaimable", "kernel")


def previous_unseen_rows(block: str) -> dict[tuple[str, str], str]:
    """The kernel-memory table's rows of the block as rendered before, by (program, MGLRU
    mode)."""
    rows = {}
    for line in block.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(parts) == len(KERNEL_KEYS) + 3 and parts[0] in PROGRAMS:
            rows[(parts[0], parts[1])] = line
    return rows


def unseen(out: Path, previous_block: str) -> str:
    """What the recording cannot see, measured: each program's kernel memory charged to
    its cgroup at the end of the run (memory.stat, mean over boots), against memory.max.
    A program not booted into ``out`` keeps its rows of the previous render."""
    limit = parse_size(MEMORY, "memory")
    previous = previous_unseen_rows(previous_block)
    lines = ["", "Kernel memory charged to the program's cgroup when it has exited (memory.stat, mean over "
             f"boots; % of memory.max {MEMORY}), which the recording cannot see, beside the page cache:", "",
             "| program | MGLRU | " + " | ".join(KERNEL_KEYS) + " | file |", "|---|---|" + "---|" * (len(KERNEL_KEYS) + 1)]
    for name, _, _, _ in WORKLOADS:
        for mglru in ("on", "off"):
            path = out / f"{name}-mglru-{mglru}.json"
            if not path.exists():
                if (name, mglru) in previous:
                    lines.append(previous[(name, mglru)])
                continue
            stats = [console.parse(Path(log).read_text(errors="replace")).memstat().get("wl", {})
                     for log in json.loads(path.read_text())["logs"]["kernel"] if Path(log).exists()]
            if not stats:
                continue

            def pct(key: str) -> str:
                v = sum(st.get(key, 0) for st in stats) / len(stats)
                return f"{v / (1 << 20):.1f} MiB ({v / limit:.0%})"

            lines.append(f"| {name} | {mglru} | " + " | ".join(pct(k) for k in (*KERNEL_KEYS, "file")) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main(__doc__, WORKLOADS, setup_of, "validation-runs-programs", (BEGIN, END), unseen))
