#!/usr/bin/env python3
"""Whole-machine reclaim against one of the kernel's allocator knobs, kernel and model side by
side (issue 14; docs/validation.md, "Results as shipped", what still misses).

``--knob pcp``: the size of the per-CPU page lists. 6.12's per-CPU pagesets
(mm/page_alloc.c; the model's mm/pcp.rs) keep order-0 frames off the free lists: an
allocating CPU refills its list in batches that double while it only allocates, and its
`high` grows towards an eighth of the zone. Every watermark check reads the free lists
only, so the lists' size decides how far one refill drops a zone below its low watermark,
when kswapd is woken and how much it reclaims per pass. Booted with the kernel's automatic
`high` (``vm.percpu_pagelist_high_fraction`` 0) and with `high` fixed at its floor, four
batches (``--percpu-pagelist-high-fraction 1000000``).

``--knob boost``: watermark boosting. A fallback into another migrate type's pageblock
boosts the zone's watermarks (mm/page_alloc.c 6.12.117 `try_to_steal_block` →
`boost_watermark`, by a pageblock up to ``vm.watermark_boost_factor`` / 10000 of the high
watermark) and wakes kswapd, whose next pass reclaims the boost. Booted with the kernel's
factor (15000) and with boosting off (``--watermark-boost-factor 0``).

Each configuration boots the shipped suite's whole-machine workloads (as shipped, 256 MiB
guest, no memory.max), and its stored boots are re-simulated with the current model, which
takes the setting the guest read back; ``--set machine.pcp_lists=none`` re-simulates them
with the model without lists.

    python scripts/experiment_whole_machine.py --knob pcp --out validation-runs-pcp/ [--boots 2]
    python scripts/experiment_whole_machine.py --knob pcp --out validation-runs-pcp/ --render-only [--set machine.pcp_lists=none]
    python scripts/experiment_whole_machine.py --knob boost --out validation-runs-boost/ --boots 3 --kswapd-wakeup measured --cpu-cost measured
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reclaimlab.kernel import KSWAPD_WAKEUP_MODES  # noqa: E402
from validate_shipped import GUEST_MB, SHIPPED, WHOLE_MACHINE_PAGES  # noqa: E402
from validate_suite import evaluate_configs, run_configs  # noqa: E402

#: (label, workload): the whole-machine workloads of the shipped suite.
WORKLOADS = [("zipf pread", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}"),
             ("seqloop", f"seqloop:pages={WHOLE_MACHINE_PAGES}"),
             ("anon hot 40%", f"anon:hot=0.4,pages={WHOLE_MACHINE_PAGES}")]
#: knob: (the Setup field, {its values: how the table names them}, the table's column).
KNOBS = {"pcp": ("pcp_high_fraction", {0: "automatic", 1_000_000: "4 × batch"}, "pcp high"),
         "boost": ("watermark_boost_factor", {None: "15000 (the kernel's)", 0: "off"}, "watermark boost")}
SHOWN = ("pageoutrun", "kswapd_low_wmark_hit_quickly", "allocstall", "pgsteal_kswapd", "pgsteal_direct")


def configs(knob: str) -> list[dict]:
    field, values, _ = KNOBS[knob]
    return [{"label": label, "workload": spec, "mglru": mglru, "value": value,
             "setup": {"memory": "none", "guest_mb": GUEST_MB, **({field: value} if value is not None else {}), **SHIPPED}}
            for label, spec in WORKLOADS for mglru in ("off", "on") for value in values]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--knob", choices=sorted(KNOBS), default="pcp", help="the knob the configurations vary")
    ap.add_argument("--out", type=Path, help="results store of the boots (default: validation-runs-KNOB)")
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--render-only", action="store_true", help="re-simulate the stored boots only")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a simulator knob for the re-simulation, e.g. machine.pcp_lists=none (repeatable)")
    ap.add_argument("--kswapd-wakeup", choices=KSWAPD_WAKEUP_MODES, default="model",
                    help="kswapd's wake-up latency in the model (as reclaimlab validate --kswapd-wakeup)")
    ap.add_argument("--cpu-cost", choices=("model", "measured"), default="model",
                    help="reclaim's CPU costs in the model (as reclaimlab validate --cpu-cost)")
    a = ap.parse_args()
    if any("=" not in kv for kv in a.set):
        ap.error("--set takes KEY=VALUE")
    out = a.out or Path(f"validation-runs-{a.knob}")
    sim_defaults = dict(kv.split("=", 1) for kv in a.set)
    if not a.render_only:
        run_configs(out, a.boots, configs(a.knob))
    _, names, column = KNOBS[a.knob]
    print(f"| workload | MGLRU | {column} | " + " | ".join(SHOWN) + " | cells met |")
    print("|---|---|---|" + "---|" * (len(SHOWN) + 1))
    for r in evaluate_configs(out, configs(a.knob), sim_defaults=sim_defaults, kswapd_wakeup=a.kswapd_wakeup,
                              cpu_cost=a.cpu_cost):
        by = {row["counter"]: row for row in r["rows"]}
        graded = [row for row in r["rows"] if row["target"] is not None]
        cells = [f"{by[k]['real_mean']:,.0f} ± {by[k]['real_sd']:,.0f} / {by[k]['sim']:,.0f}" for k in SHOWN]
        met = f"{sum(bool(row['met']) for row in graded)} of {len(graded)}"
        print(f"| {r['label']} | {r['mglru']} | {names[r['value']]} | " + " | ".join(cells) + f" | {met} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
