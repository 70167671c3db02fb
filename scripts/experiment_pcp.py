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
re-simulates each configuration's stored boots with the current model, whose lists
(mm/pcp.rs) take the setting the guest read back; ``--set machine.pcp_lists=none``
re-simulates them with the model without lists.

    python scripts/experiment_pcp.py --out validation-runs-pcp/ [--boots 2]
    python scripts/experiment_pcp.py --out validation-runs-pcp/ --render-only [--set machine.pcp_lists=none]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_shipped import GUEST_MB, SHIPPED, WHOLE_MACHINE_PAGES  # noqa: E402
from validate_suite import evaluate_configs, run_configs  # noqa: E402

#: (label, workload): the whole-machine workloads of the shipped suite.
WORKLOADS = [("zipf pread", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}"),
             ("seqloop", f"seqloop:pages={WHOLE_MACHINE_PAGES}"),
             ("anon hot 40%", f"anon:hot=0.4,pages={WHOLE_MACHINE_PAGES}")]
#: vm.percpu_pagelist_high_fraction: the kernel's automatic high, and high at 4 * batch.
FRACTIONS = (0, 1_000_000)
SHOWN = ("pageoutrun", "kswapd_low_wmark_hit_quickly", "pgsteal_kswapd", "pgsteal_direct")


def configs() -> list[dict]:
    return [{"label": label, "workload": spec, "mglru": mglru, "fraction": fraction,
             "setup": {"memory": "none", "guest_mb": GUEST_MB, "pcp_high_fraction": fraction, **SHIPPED}}
            for label, spec in WORKLOADS for mglru in ("off", "on") for fraction in FRACTIONS]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("validation-runs-pcp"))
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--render-only", action="store_true", help="re-simulate the stored boots only")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a simulator knob for the re-simulation, e.g. machine.pcp_lists=none (repeatable)")
    a = ap.parse_args()
    if any("=" not in kv for kv in a.set):
        ap.error("--set takes KEY=VALUE")
    sim_defaults = dict(kv.split("=", 1) for kv in a.set)
    if not a.render_only:
        run_configs(a.out, a.boots, configs())
    print("| workload | MGLRU | pcp high | " + " | ".join(SHOWN) + " |")
    print("|---|---|---|" + "---|" * len(SHOWN))
    for r in evaluate_configs(a.out, configs(), sim_defaults=sim_defaults):
        by = {row["counter"]: row for row in r["rows"]}
        cells = [f"{by[k]['real_mean']:,.0f} ± {by[k]['real_sd']:,.0f} / {by[k]['sim']:,}" for k in SHOWN]
        high = "automatic" if r["fraction"] == 0 else "4 × batch"
        print(f"| {r['label']} | {r['mglru']} | {high} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
