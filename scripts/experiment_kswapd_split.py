#!/usr/bin/env python3
"""Whole-machine reclaim's kswapd/direct split against the guest's own disk and CPU costs
(issue 14; docs/validation.md, "Results as shipped", what still misses).

Which reclaimer frees a page is a race between the workload's allocations and kswapd, so
it follows the ratio of the disk's time per read to kswapd's CPU per page. Under QEMU TCG
the guest's CPU is emulated while its disk is served from the host. This boots the shipped
suite's whole-machine file workloads (as shipped, 256 MiB guest, no memory.max), measures
per boot the data disk's busy time per read request (/sys/block/vda/stat) and kswapd's CPU
time (/proc/PID/stat), and simulates each configuration twice from the same boots: with the
model's read cost (``cost.file_read_ns``) and with the measured one on the simulated clock
(``validate --disk-read measured``: busy time per read / time dilation).

    python scripts/experiment_kswapd_split.py                 # boot what is missing, print
    python scripts/experiment_kswapd_split.py --render-only   # only re-simulate stored boots

Boots go to validation-runs-split/ (``--out``); the console logs of each configuration are
listed in OUT/logs.json so a later run re-simulates them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_shipped import GUEST_MB, SHIPPED, WHOLE_MACHINE_PAGES  # noqa: E402

from reclaimlab.kernel.experiment import revalidate, validate  # noqa: E402
from reclaimlab.kernel.run import Setup  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: (label, workload): the whole-machine file workloads of the shipped suite.
CONFIGS = [("zipf pread", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}"),
           ("seqloop", f"seqloop:pages={WHOLE_MACHINE_PAGES}")]
SPLIT = ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "allocstall", "pageoutrun",
         "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly")


def setup_of(spec: str, mglru: str, boots: int) -> Setup:
    return Setup(workload=spec, mglru=mglru, memory="none", guest_mb=GUEST_MB, boots=boots, **SHIPPED)


def rows_by_counter(res: dict) -> dict[str, dict]:
    return {r["counter"]: r for r in res["rows"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "validation-runs-split"))
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--render-only", action="store_true", help="do not boot; re-simulate the stored boots")
    ap.add_argument("--json", help="also write the results as JSON here")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(REPO)
    logs_file = out / "logs.json"
    logs = json.loads(logs_file.read_text()) if logs_file.exists() else {}
    results = []
    for label, spec in CONFIGS:
        for mglru in ("on", "off"):
            key = f"{spec} mglru={mglru}"
            setup = setup_of(spec, mglru, a.boots)
            if key not in logs:
                if a.render_only:
                    continue
                print(f"{label} mglru={mglru}: {a.boots} boot(s)", file=sys.stderr, flush=True)
                logs[key] = validate(setup, out, progress=False)["logs"]
                logs_file.write_text(json.dumps(logs, indent=1))
            model = revalidate(setup, out, logs[key])
            measured = revalidate(replace(setup, disk_read="measured"), out, logs[key])
            results.append({"label": label, "mglru": mglru, "model": model, "measured": measured})
    lines = []
    for r in results:
        m, x = rows_by_counter(r["model"]), rows_by_counter(r["measured"])
        d = r["measured"].get("disk_reads", {})
        dm = r["model"].get("disk_reads", {})
        lines.append(f"### {r['label']}, MGLRU {r['mglru']} ({r['model']['boots']} boots)")
        lines.append("")
        lines.append(f"Guest disk busy per read {d.get('wall_ns_per_read', 0) / 1e3:,.0f} us (wall), time dilation "
                     f"{d.get('time_dilation', 0):.1f} (model cost) / {r['measured']['time_dilation']:.1f} (measured cost): "
                     f"cost.file_read_ns {dm.get('sim_file_read_ns', 0):,} → {d.get('sim_file_read_ns', 0):,}. "
                     f"kswapd CPU per page scanned on the guest's clock: kernel "
                     f"{d.get('kswapd_wall_ns_per_scan', float('nan')) / 1e3:,.1f} us, model "
                     f"{dm.get('sim_kswapd_wall_ns_per_scan', float('nan')) / 1e3:,.1f} us (model cost) / "
                     f"{d.get('sim_kswapd_wall_ns_per_scan', float('nan')) / 1e3:,.1f} us (measured cost).")
        lines.append("")
        lines.append("| counter | kernel mean ± sd | model, model read cost | error | model, measured read cost | error |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for c in SPLIT + ("pgpgin", "workingset_refault_file"):
            if c not in m:
                continue
            e = (lambda row: "n/a" if row["rel_error"] == float("inf") else f"{row['rel_error']:+.1%}")
            lines.append(f"| {c} | {m[c]['real_mean']:,.0f} ± {m[c]['real_sd']:,.0f} | {m[c]['sim']:,.0f} | {e(m[c])} | "
                         f"{x[c]['sim']:,.0f} | {e(x[c])} |")
        lines.append("")
    print("\n".join(lines))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
