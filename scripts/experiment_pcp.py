#!/usr/bin/env python3
"""Whole-machine reclaim against the size of the per-CPU page lists (issue 14;
docs/validation.md, "Results as shipped", what still misses).

6.12's per-CPU pagesets (mm/page_alloc.c; the model's mm/pcp.rs) keep order-0 frames off
the free lists: an allocating CPU refills its list in batches that double while it only
allocates, and its `high` grows towards an eighth of the zone. Every watermark check reads
the free lists only, so the lists' size decides how far one refill drops a zone below its
low watermark, when kswapd is woken and how much it reclaims per pass. This boots the
shipped suite's whole-machine workloads (as shipped, 256 MiB guest, no memory.max) with
the kernel's automatic `high` (``vm.percpu_pagelist_high_fraction`` 0) and with `high`
fixed at its floor, four batches (``--percpu-pagelist-high-fraction 1000000``), and
re-simulates each configuration's stored boots with the current model. The model on main
has no per-CPU lists (``wip/per-cpu-page-lists.patch`` adds them: mm/pcp.rs), so its figures do not depend
on the setting; the kernel's do.

    python scripts/experiment_pcp.py --out validation-runs-pcp/ [--boots 2]
    python scripts/experiment_pcp.py --out validation-runs-pcp/ --render-only
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_shipped import GUEST_MB, SHIPPED, WHOLE_MACHINE_PAGES  # noqa: E402

from reclaimlab.kernel import console, store  # noqa: E402
from reclaimlab.kernel.experiment import params_of, record  # noqa: E402
from reclaimlab.kernel.run import Setup, prepare, workload_room  # noqa: E402
from reclaimlab.kernel.validate import held_settings, mglru_model, simulate  # noqa: E402
from reclaimlab.kernel.workload import build  # noqa: E402

#: (label, workload): the whole-machine workloads of the shipped suite.
CONFIGS = [("zipf pread", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}"),
           ("seqloop", f"seqloop:pages={WHOLE_MACHINE_PAGES}"),
           ("anon hot 40%", f"anon:hot=0.4,pages={WHOLE_MACHINE_PAGES}")]
#: vm.percpu_pagelist_high_fraction: the kernel's automatic high, and high at 4 * batch.
FRACTIONS = (0, 1_000_000)
SHOWN = ("pageoutrun", "kswapd_low_wmark_hit_quickly", "pgsteal_kswapd", "pgsteal_direct")


def setup_of(spec: str, mglru: str, fraction: int, boots: int = 1) -> Setup:
    return Setup(workload=spec, mglru=mglru, memory="none", guest_mb=GUEST_MB, boots=boots,
                 pcp_high_fraction=fraction, **SHIPPED)


def stored(out: Path, setup: Setup) -> list[dict]:
    p = prepare(setup)
    return store.load_boots(out, params_of(setup, p)) if (out / "results.sqlite").exists() else []


def resimulate(out: Path, setup: Setup) -> tuple[list[dict[str, int]], dict[str, int]] | None:
    """The stored boots' vmstat and the model's, from the boots' own settings."""
    p = prepare(setup)
    boots = stored(out, setup)
    if not boots:
        return None
    cfg = boots[0]["config"]
    settings = {k: v for k, v in cfg.items() if not k.startswith("kernel.") and k != "workload"}
    c = console.parse((out / "boots" / Path(cfg["kernel.console_log"]).name).read_text(errors="replace"))
    settings.update(held_settings(c.layouts.get("start")))
    if setup.mglru == "on":
        settings["policy"] = mglru_model(cfg["kernel.release"])
    ratios = [b["metrics"]["zram.compression_ratio"] for b in boots if "zram.compression_ratio" in b["metrics"]]
    if ratios:
        settings["swap.zram.compression_ratio"] = f"{statistics.fmean(ratios):.3f}"
    wl = build(setup.workload, workload_room(setup, p.memory_max))
    walls = [b["metrics"]["wall_s"] for b in boots if b["metrics"].get("wall_s")]
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulate(wl, settings, Path(tmp), statistics.fmean(walls) if walls else None)
    return [b["vmstat"] for b in boots], sim["vmstat"]


def cell(real: list[dict[str, int]], sim: dict[str, int], k: str) -> str:
    vals = [r.get(k, 0) for r in real]
    return f"{'/'.join(f'{v:,}' for v in vals)} / {sim.get(k, 0):,}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("validation-runs-pcp"))
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--render-only", action="store_true", help="re-simulate the stored boots only")
    a = ap.parse_args()
    print("| workload | MGLRU | pcp high | " + " | ".join(SHOWN) + " |")
    print("|---|---|---|" + "---|" * len(SHOWN))
    for label, spec in CONFIGS:
        for mglru in ("off", "on"):
            for fraction in FRACTIONS:
                setup = setup_of(spec, mglru, fraction, a.boots)
                if not a.render_only:
                    setup.boots = a.boots - len(stored(a.out, setup))
                    if setup.boots > 0:
                        record(setup, a.out, progress=False)
                got = resimulate(a.out, setup_of(spec, mglru, fraction))
                if got:
                    high = "automatic" if fraction == 0 else "4 × batch"
                    print(f"| {label} | {mglru} | {high} | " + " | ".join(cell(*got, k) for k in SHOWN) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
