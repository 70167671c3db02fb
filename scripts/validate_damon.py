#!/usr/bin/env python3
"""Regenerate the DAMON_RECLAIM table of docs/validation.md: the hotcold workload under
DAMON_RECLAIM at several quotas, on the real kernel (QEMU, one guest at a time; 3 boots
with the module's scheme and one without it per quota) and in the simulator.

    python scripts/validate_damon.py --out validation-runs-damon/          # boot what is missing, render
    python scripts/validate_damon.py --out validation-runs-damon/ --render-only
    python scripts/validate_damon.py --out validation-runs-damon/ --resimulate   # after a model change

Each finished configuration's result (``reclaimlab validate --json``'s object) is kept in
OUT/NAME.json, so an interrupted run resumes with the next configuration. The table replaces
the block between the markers below in docs/validation.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reclaimlab.kernel.experiment import revalidate, validate
from reclaimlab.kernel.run import Setup
import _doc

WORKLOAD = "hotcold:duration_s=30,period_ms=20"
#: Watermarks that keep the scheme active on a guest that is never short of memory (the
#: module's defaults deactivate it above 50 % free memory), a 2 s pageout age.
COMMON = "min_age=2000000,wmarks_high=1000,wmarks_mid=999,wmarks_low=0"
#: (name, label, extra parameters). Size quotas compare counts; the time quota's size comes
#: from kdamond's measured throughput, which a TCG guest measures at emulation speed: the
#: model charges its actions at the guest's measured kdamond slowdown (DAMON_COST).
CONFIGS = [
    ("sz4M", "size quota 4 MiB/s", "quota_ms=0,quota_sz=4194304"),
    ("sz16M", "size quota 16 MiB/s", "quota_ms=0,quota_sz=16777216"),
    ("sz128M", "size quota 128 MiB/s (the module's)", "quota_ms=0"),
    ("ms10", "time quota 10 ms/s (the module's)", ""),
]
#: `validate --damon-cost`: the time quota's clock at kdamond's measured slowdown in the guest
#: (a size quota's rows do not depend on it).
DAMON_COST = "measured"
BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_damon.py -->", "<!-- END GENERATED: scripts/validate_damon.py -->"
SHOWN = ("bytes_reclaim_tried_regions", "bytes_reclaimed_regions", "nr_quota_exceeds", "memory_saving_pct",
         "damon_accessed_bytes")


def setup_of(params: str, boots: int = 3, kswapd_wakeup: str = "model", damon_cost: str = DAMON_COST) -> Setup:
    return Setup(workload=WORKLOAD, memory="none", thp="never", tick_us=1000, boots=boots, damon_reclaim=params,
                 kswapd_wakeup=kswapd_wakeup, damon_cost=damon_cost)


def resimulate(out: Path, kswapd_wakeup: str = "model") -> None:
    """Simulate every stored configuration again against its boots (a model change)."""
    for name, label, _ in CONFIGS:
        path = out / f"{name}.json"
        if path.exists():
            old = json.loads(path.read_text())
            print(f"{label}: simulating again", file=sys.stderr)
            res = revalidate(setup_of(old["params"], old["boots"], kswapd_wakeup), out, old["logs"])
            res["label"], res["params"] = label, old["params"]
            path.write_text(json.dumps(res, indent=1))


def run(out: Path, boots: int, kswapd_wakeup: str = "model") -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, label, extra in CONFIGS:
        path = out / f"{name}.json"
        if path.exists():
            continue
        params = ",".join(x for x in (COMMON, extra) if x)
        print(f"{label}: {boots} boots + 1 without DAMON_RECLAIM", file=sys.stderr)
        res = validate(setup_of(params, boots, kswapd_wakeup), out, progress=True)
        res["label"], res["params"] = label, params
        path.write_text(json.dumps(res, indent=1))


def cell(r: dict) -> str:
    """Kernel mean ± sd over boots / model mean ± sd over seeds (damon_compare.SIM_SEEDS; a
    result stored before the seeds has one simulation, shown without a spread)."""
    mib = r["counter"].startswith("bytes") or r["counter"].endswith("_bytes")
    scale, unit, fmt = (2**20, " MiB", ",.1f") if mib else (1, " %" if r["counter"] == "memory_saving_pct" else "", ",.1f")
    sd = f" ± {r['sim_sd'] / scale:{fmt}}" if "sim_sd" in r else ""
    return f"{r['real_mean'] / scale:{fmt}} ± {r['real_sd'] / scale:{fmt}} / {r['sim'] / scale:{fmt}}{sd}{unit}"


def grade(r: dict) -> str:
    if r.get("met") is None:
        return ""
    if r.get("target_pp") is not None:
        return f" ({r['sim'] - r['real_mean']:+.1f} pp{'' if r['met'] else ', MISSED'})"
    return f" ({r['rel_error']:+.0%}{'' if r['met'] else ', MISSED'})"


def render(results: list[dict]) -> str:
    head = ["quota", "bytes tried", "bytes reclaimed", "quota exceeds", "memory saving", "seen accessed",
            "pswpin", "tmpfs paged out", "kdamond CPU"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    met = total = 0
    for res in results:
        d = res["damon_reclaim"]
        rows = {r["counter"]: r for r in d["rows"]}
        main = {r["counter"]: r for r in res["rows"]}
        cells = []
        for k in SHOWN:
            r = rows.get(k)
            cells.append("—" if r is None else cell(r) + grade(r))
            if r is not None and r.get("met") is not None:
                total += 1
                met += bool(r["met"])
        sw = main.get("pswpin")
        cells.append("—" if sw is None else f"{sw['real_mean']:,.0f} / {sw['sim']:,.0f}")
        sh = rows.get("shmem_paged_out")
        cells.append("—" if sh is None else f"{sh['real_mean']:,.0f} ± {sh['real_sd']:,.0f} / {sh['sim']:,.0f} ± {sh.get('sim_sd', 0):,.0f}")
        cpu = d["kdamond_cpu_pct"]
        cells.append(f"{sum(cpu['kernel']) / max(1, len(cpu['kernel'])):.1f} / {cpu['simulator'] or 0:.2f} %")
        lines.append(f"| {res['label']} | " + " | ".join(cells) + " |")
    quota = []
    for res in results:
        d = res["damon_reclaim"]
        q = d.get("quota") or {}
        kq, sq = q.get("kernel") or {}, q.get("simulator") or {}
        if kq.get("bytes_per_ms") and sq.get("bytes_per_ms"):
            f = d.get("kdamond_slowdown")
            quota.append(f"{res['label']}: {kq['bytes_per_ms'] / 2**20:.2f} ± {kq['bytes_per_ms_sd'] / 2**20:.2f} / "
                         f"{sq['bytes_per_ms'] / 2**20:.2f} ± {sq['bytes_per_ms_sd'] / 2**20:.2f} MiB per charged ms"
                         + (f" (kdamond's measured slowdown {f:.1f})" if f else ""))
    k0 = results[0]
    n = k0["damon_reclaim"].get("sim_seeds", 1)
    seeds = (f", mean ± sd over seeds 1–{n} of kdamond's sampling, each from a boot's start layout in turn"
             if n > 1 else ", one simulation")
    lines += ["", f"Kernel {k0['kernel']} ({k0['damon_reclaim']['interface']} interface), {k0['boots']} boots per row "
              f"(mean ± sd) / the simulator ({k0['policy']}{seeds}); workload `{WORKLOAD}`, `--memory none --tick 1000 "
              f"--thp never`, parameters `{COMMON}` plus the row's quota. Graded: {met} of {total} within the "
              f"targets (bytes ±25 %, saving ±5 pp). Seen accessed: the bytes of DAMON's regions with accesses, "
              f"per aggregation. Tmpfs paged out: pages of the root's tmpfs (the guest's initramfs, `nr_shmem`'s fall over the "
              f"workload; `machine.kernel_shmem` in the model) paged out beside the workload. pswpin, the tmpfs and "
              f"kdamond's CPU share (TCG time in the guest) are shown only."
              + (" The simulator charges kdamond's actions to a time quota at kdamond's measured slowdown in the "
                 "guest (`validate --damon-cost measured`: the guest's kdamond CPU share over the model's for the "
                 "same run). The time quota's throughput, `quotas/effective_bytes` over `quota_ms` at the run's "
                 "end / the model's `damon_quota_bytes_per_ms`: " + "; ".join(quota) + "." if quota else "")]
    return "\n".join(lines)


def main() -> int:
    return _doc.main(__doc__.split("\n\n")[0], [c[0] for c in CONFIGS], run, resimulate, render, BEGIN, END)


if __name__ == "__main__":
    sys.exit(main())
