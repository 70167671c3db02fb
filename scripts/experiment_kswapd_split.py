#!/usr/bin/env python3
"""Whole-machine reclaim's kswapd/direct split against the guest's own disk and CPU costs
(issue 14; docs/validation.md, "Results as shipped", what still misses).

Which reclaimer frees a page is a race between the workload's allocations and kswapd, so
it follows the ratio of the disk's time per read to kswapd's CPU per page. Under QEMU TCG
the guest's CPU is emulated while its disk is served from the host. This boots the shipped
suite's whole-machine file workloads (as shipped, 256 MiB guest, no memory.max), measures
per boot the data disk's busy time per read request (/sys/block/vda/stat) and kswapd's CPU
time (/proc/PID/stat), and simulates each configuration three times from the same boots:
with the model's costs; with the measured read cost on the simulated clock (``validate
--disk-read measured``: busy time per read / time dilation as ``cost.file_read_ns``); and
with that and the model's reclaim CPU costs (``cpu_cost.RECLAIM_COSTS``: ``cost.scan_ns``,
``rmap_ns``, ``unmap_ns``, ``free_ns``, ``walk_pte_ns``, zram's compression) scaled by one factor so that kswapd's CPU per page scanned,
on the guest's clock, is the guest's; with the guest's kswapd wake-up latency (traced from
``mm_vmscan_wakeup_kswapd`` to ``mm_vmscan_kswapd_wake``, its mean over the dilation as
``cost.kswapd_wakeup_ns``: ``validate --kswapd-wakeup measured``) alone; and with all three.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_shipped import GUEST_MB, SHIPPED, WHOLE_MACHINE_PAGES  # noqa: E402

import tempfile  # noqa: E402

from reclaimlab.kernel import console, cpu_cost  # noqa: E402
from reclaimlab.kernel.experiment import disk_reads, validate  # noqa: E402
from reclaimlab.kernel.run import Setup, prepare  # noqa: E402
from reclaimlab.kernel.validate import compare, guest_wall_s, sim_settings, simulate, targets_for, with_derived  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: (label, workload): the whole-machine file workloads of the shipped suite.
CONFIGS = [("zipf pread", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}"),
           ("seqloop", f"seqloop:pages={WHOLE_MACHINE_PAGES}")]
SPLIT = ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "allocstall", "pageoutrun",
         "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly")


def setup_of(spec: str, mglru: str, boots: int) -> Setup:
    return Setup(workload=spec, mglru=mglru, memory="none", guest_mb=GUEST_MB, boots=boots, **SHIPPED)


def variants(setup: Setup, logs: list[str]) -> dict:
    """The boots against three simulations: the model's costs; the guest disk's measured busy
    time per read as cost.file_read_ns (``--disk-read measured``); that and the reclaim CPU
    costs scaled so that kswapd's CPU per page scanned matches the guest's (both on the
    guest's clock, the scale taken from the second run)."""
    prep = prepare(setup)
    consoles = [console.parse(Path(p).read_text(errors="replace")) for p in logs]
    base = sim_settings(prep, consoles)
    wall = guest_wall_s(consoles)
    reads = disk_reads(consoles) or {}
    scanned = sum(c.vmstat().get("pgscan_kswapd", 0) for c in consoles) / len(consoles)
    guest_scan = cpu_cost.guest_kswapd_wall_ns_per_scan(reads.get("kswapd_ticks"), scanned)
    real = [with_derived(c.vmstat()) for c in consoles]
    targets = targets_for(prep.wl, True)
    out = {"boots": len(consoles), "guest_wall_s": wall, "guest": {**reads, "kswapd_wall_ns_per_scan": guest_scan}}
    with tempfile.TemporaryDirectory() as tmp:
        def run(name: str, settings: dict, read_ns: float | None, wake_ns: float | None = None) -> dict:
            sim = simulate(prep.wl, settings, Path(tmp), wall, None, read_ns, wake_ns)
            out[name] = {"rows": compare(real, with_derived(sim["vmstat"]), targets),
                         "file_read_ns": int(sim["config"]["cost.file_read_ns"]),
                         "time_dilation": float(sim["config"].get("sim.time_dilation", 1)),
                         "kswapd_wall_ns_per_scan": cpu_cost.model_kswapd_wall_ns_per_scan(sim),
                         "costs": {k: sim["config"][k] for k in cpu_cost.RECLAIM_COSTS if k in sim["config"]}}
            return out[name]

        run("model", dict(base), None)
        read_ns, wake_ns = reads.get("wall_ns_per_read"), reads.get("wakeup_wall_ns")
        scaled = None
        if read_ns:
            m = run("measured_read", dict(base), read_ns)
            if guest_scan and m["kswapd_wall_ns_per_scan"]:
                k = guest_scan / m["kswapd_wall_ns_per_scan"]
                scaled = cpu_cost.scaled(m["costs"], k)
                run("measured_read_cpu", {**base, **scaled}, read_ns)
                out["cpu_scale"] = k
        if wake_ns:
            run("measured_wakeup", dict(base), None, wake_ns)
            if read_ns and scaled:
                run("measured_all", {**base, **scaled}, read_ns, wake_ns)
    return out


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
            results.append({"label": label, "mglru": mglru, **variants(setup, logs[key]["kernel"])})
    lines = []
    names = [("model", "model costs"), ("measured_read", "read"), ("measured_read_cpu", "read, kswapd CPU"),
             ("measured_wakeup", "wake-up"), ("measured_all", "read, CPU, wake-up")]
    for r in results:
        g = r["guest"]
        have = [(n, t) for n, t in names if n in r]
        us = (lambda x: "n/a" if x is None else f"{x / 1e3:,.1f} us")
        lines.append(f"#### {r['label']}, MGLRU {r['mglru']} ({r['boots']} boots, guest wall {r['guest_wall_s']:.1f} s)")
        lines.append("")
        lines.append(f"Guest: disk busy {us(g.get('wall_ns_per_read'))} per read request, kswapd CPU "
                     f"{us(g.get('kswapd_wall_ns_per_scan'))} per page scanned, kswapd wake-up "
                     f"{us(g.get('wakeup_wall_ns'))} after wakeup_kswapd (mean of "
                     f"{g.get('kswapd_wakes', 0):.0f} a boot) (wall clock). Model, on the guest's "
                     "clock: " + "; ".join(f"{t}: cost.file_read_ns {r[n]['file_read_ns']:,}, dilation "
                                           f"{r[n]['time_dilation']:.1f}, kswapd {us(r[n]['kswapd_wall_ns_per_scan'])} "
                                           "per page scanned" for n, t in have)
                     + (f" (reclaim CPU costs ×{r['cpu_scale']:.2f})" if "cpu_scale" in r else "") + ".")
        lines.append("")
        lines.append("| counter | kernel mean ± sd | " + " | ".join(f"{t} | error" for _, t in have) + " |")
        lines.append("|---|---:|" + "---:|---:|" * len(have))
        rows = {n: rows_by_counter(r[n]) for n, _ in have}
        for c in SPLIT + ("pgpgin", "workingset_refault_file"):
            if c not in rows["model"]:
                continue
            e = (lambda row: "n/a" if row["rel_error"] == float("inf") else f"{row['rel_error']:+.1%}")
            k = rows["model"][c]
            lines.append(f"| {c} | {k['real_mean']:,.0f} ± {k['real_sd']:,.0f} | "
                         + " | ".join(f"{rows[n][c]['sim']:,.0f} | {e(rows[n][c])}" for n, _ in have) + " |")
        lines.append("")
    print("\n".join(lines))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
