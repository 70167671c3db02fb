#!/usr/bin/env python3
"""Regenerate the "THP, compaction and NUMA" tables of docs/validation.md: thpscale and
usemem (guest/thp.c) on the real kernel (QEMU, 1 GiB, two NUMA nodes, one guest at a time)
against the model's THP scenarios sized to the guest (reclaimlab.kernel.thp_compare,
policy thp@6.12).

    python scripts/validate_thp.py --out validation-runs-thp/            # boot what is missing, render
    python scripts/validate_thp.py --out validation-runs-thp/ --render-only
    python scripts/validate_thp.py --out validation-runs-thp/ --resimulate   # after a model change

Each finished configuration's result (``reclaimlab validate --json``'s object) is kept in
OUT/NAME.json, so an interrupted run resumes with the next configuration. The tables replace
the block between the markers below in docs/validation.md.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from reclaimlab.kernel import console
from reclaimlab.kernel.experiment import validate, wakeup_for, wakeup_note
from reclaimlab.kernel.run import Setup, prepare
from reclaimlab.kernel.thp_compare import NUMA, TARGETS, compare_boots
import _doc

GUEST = {"memory": "none", "guest_mb": 1024, "nodes": 2}
#: (name, label, workload, mglru, graded). The graded rows boot with MGLRU off against
#: classic@6.15; the MGLRU row shows what the LRU changes.
CONFIGS = [
    ("thpscale", "thpscale, MADV_HUGEPAGE", "thpscale:threads=1+4", "off", True),
    ("thpscale-plain", "thpscale, no madvise", "thpscale:threads=1+4,madvise=0", "off", True),
    ("usemem1", "usemem, 1 thread", "usemem:threads=1", "off", True),
    ("usemem4", "usemem, 4 threads", "usemem:threads=4", "off", True),
    ("thpscale-mglru", "thpscale, MADV_HUGEPAGE, MGLRU on", "thpscale:threads=1+4", "on", False),
    # The experiment for pgmigrate_success: 6.12's proactive compaction (v5.9) off.
    ("thpscale-plain-noproactive", "thpscale, no madvise, vm.compaction_proactiveness=0",
     "thpscale:threads=1+4,madvise=0,proactiveness=0", "off", False),
    ("thpscale-noproactive", "thpscale, MADV_HUGEPAGE, vm.compaction_proactiveness=0",
     "thpscale:threads=1+4,proactiveness=0", "off", False),
    # The experiment for the 4-thread count: on a fresh boot, without the 1-thread count before it.
    ("thpscale4", "thpscale, MADV_HUGEPAGE, 4 threads on a fresh boot", "thpscale:threads=4", "off", False),
    ("thpscale4-plain", "thpscale, no madvise, 4 threads on a fresh boot", "thpscale:threads=4,madvise=0", "off",
     False),
    # The experiment for usemem's fallbacks: kswapd0 moved off node 0's one CPU (PINNED).
    ("usemem1-pin", "usemem, 1 thread, kswapd and kcompactd on CPU 1", "usemem:threads=1", "off", False),
    ("usemem4-pin", "usemem, 4 threads, kswapd and kcompactd on CPU 1", "usemem:threads=4", "off", False),
]
#: Booted with ``--pin-cpus``: the workload on CPU 0, every kswapd and kcompactd on CPU 1. The
#: kernel binds a node's kswapd to that node's CPUs (mm/vmscan.c 6.12 ``kswapd()``:
#: ``set_cpus_allowed_ptr(tsk, cpumask_of_node(pgdat->node_id))``), which in this guest is
#: one CPU per node, the one usemem's threads are pinned to; the model's kswapd runs on a CPU
#: of its own.
PINNED = {"usemem1-pin", "usemem4-pin"}
BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_thp.py -->", "<!-- END GENERATED: scripts/validate_thp.py -->"
SHOWN = (*TARGETS, *NUMA, "pgscan_kswapd", "pgscan_direct", "pswpout")
TRACE_SHOWN = ("mm_compaction_end",)


def setup_of(name: str, workload: str, mglru: str, boots: int = 3, kswapd_wakeup: str = "model",
             cpu_cost: str = "model") -> Setup:
    return Setup(workload=workload, mglru=mglru, boots=boots, pin_cpus=name in PINNED, kswapd_wakeup=kswapd_wakeup,
                 cpu_cost=cpu_cost, **GUEST)


def run(out: Path, boots: int, kswapd_wakeup: str = "model") -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, label, wl, mglru, _ in CONFIGS:
        path = out / f"{name}.json"
        if path.exists():
            continue
        print(f"{label}: {boots} boots", file=sys.stderr)
        res = validate(setup_of(name, wl, mglru, boots, kswapd_wakeup, "measured"), out, progress=True)
        res["label"], res["name"] = label, name
        path.write_text(json.dumps(res, indent=1, default=str))


def resimulate(out: Path, kswapd_wakeup: str = "model") -> None:
    """The model again against the stored boots (a model change); nothing boots."""
    for name, label, wl, mglru, _ in CONFIGS:
        path = out / f"{name}.json"
        if not path.exists():
            continue
        old = json.loads(path.read_text())
        consoles = [console.parse(Path(p).read_text(errors="replace")) for p in old["logs"]["kernel"]]
        # The guest's THP fault cost where every boot recorded it (boots since 29 Nov 2026).
        cost = "measured" if all(c.thp_fault_ns is not None for c in consoles) else "model"
        setup = setup_of(name, wl, mglru, len(consoles), kswapd_wakeup, cost)
        res = {**compare_boots(prepare(setup), consoles, wakeup_for(setup, consoles), cost), "kswapd_wakeup": kswapd_wakeup}
        for k in ("label", "name", "logs", "boot_wall_s", "mglru", "read_back"):
            if k in old:
                res[k] = old[k]
        path.write_text(json.dumps(res, indent=1, default=str))


def fmt(v: float) -> str:
    return f"{v:,.0f}"


def cell(r: dict, graded: bool) -> str:
    txt = f"{fmt(r['real_mean'])} ± {fmt(r['real_sd'])} / {fmt(r['sim'])}"
    if r["rel_error"] == float("inf"):
        err = "new"
    else:
        err = f"{r['rel_error']:+.0%}"
    if graded and r.get("met") is not None:
        return f"{txt} ({err}{'' if r['met'] else ', MISSED'})"
    return f"{txt} ({err})"


def trace_statuses(res: dict) -> dict[str, float]:
    """The kernel's compact_zone() outcomes (mm_compaction_end MODE/STATUS), mean per boot."""
    out: dict[str, float] = {}
    logs = res.get("logs", {}).get("kernel", [])
    for p in logs:
        c = console.parse(Path(p).read_text(errors="replace"))
        for ph in c.phases:
            for key, n in ph.trace.items():
                ev, _, ret = key.split(" ")
                if ev in TRACE_SHOWN:
                    out[ret] = out.get(ret, 0) + n / len(logs)
    return out


def free_cell(node: str, f: dict) -> str:
    """One node's free memory as a count began, kernel / model (thp_compare.free_summary)."""
    k, m = f["kernel"][node], f["model"].get(node, {})
    pair = (lambda x: f"{k[x]:,.0f} / {m.get(x, 0):,.0f}")
    return (f"node {node} {pair('free')} ({pair('free_huge')}), blocks {pair('unmovable')} / {pair('movable')} / "
            f"{pair('reclaimable')}")


def render(results: list[dict]) -> str:
    lines = []
    met = total = per_met = per_total = 0
    dir_ok = dir_total = 0
    for res in results:
        graded = next(g for n, *_, g in CONFIGS if n == res["name"])
        runs = res["per_run"]
        tf = res.get("thp_fault")
        lines += [f"**{res['label']}** (`{res['workload']}`, MGLRU {res['mglru']}, {res['boots']} boots"
                  + ("" if graded else "; an experiment, not graded")
                  + (f"; THP faults at the guest's cost, {statistics.fmean(tf['guest_fault_ns']) / 1e6:.1f} ms of CPU: "
                     f"`cost.clear_page_ns` {min(tf['clear_page_ns']):,}–{max(tf['clear_page_ns']):,}" if tf
                     else "; THP faults at the model's cost") + ")", ""]
        head = ["counter", "all runs: kernel mean ± sd / model"]
        if len(runs) > 1:
            head += [f"{r['threads']} thread(s)" for r in runs]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        rows = {r["counter"]: r for r in res["rows"]}
        per = [{r["counter"]: r for r in run["rows"]} for run in runs]
        for name in SHOWN:
            r = rows[name]
            g = graded and name in TARGETS
            if g:
                total += 1
                met += bool(r["met"])
                if len(runs) > 1:
                    # The sum over the counts can meet the target where each count misses
                    # it in opposite directions: each count is graded too.
                    per_total += len(per)
                    per_met += sum(bool(p[name]["met"]) for p in per)
            cells = [f"`{name}`" + (" ¹" if g else ""), cell(r, g)]
            if len(runs) > 1:
                cells += [cell(p[name], False) for p in per]
            lines.append("| " + " | ".join(cells) + " |")
        hp = [f"{run['threads']} thread(s) {run['huge_pct']['kernel']:.1f} ± {run['huge_pct']['kernel_sd']:.1f} / "
              f"{run['huge_pct']['model']:.1f} %" for run in runs]
        lines += ["", "Huge faults (thpscale: strides of the second region; usemem: AnonHugePages of the region), "
                  "kernel / model: " + "; ".join(hp) + "."]
        nodes = [(run["threads"], run["pages_per_node"]) for run in runs if "pages_per_node" in run]
        if nodes:
            lines += ["", "The region's resident pages per node at the end (guest: /proc/self/numa_maps), kernel / model: "
                      + "; ".join(f"{nr} thread(s): " + ", ".join(
                          f"node {i} {k[0]:,.0f} ± {k[1]:,.0f} / {m:,.0f}" for i, (k, m) in enumerate(zip(pn["kernel"], pn["model"])))
                          for nr, pn in nodes) + "."]
        free = [(run["threads"], run["free_at_start"]) for run in runs if "free_at_start" in run]
        if free:
            lines += ["", "Free memory as each count began (after its drop_caches: what the counts before left), "
                      "kernel / model, per node: pages free, of them in blocks of order 9 or more, and the "
                      "pageblocks unmovable / movable / reclaimable: "
                      + "; ".join(f"{nr} thread(s): " + ", ".join(free_cell(node, f) for node in sorted(f["kernel"]))
                                  for nr, f in free) + "."]
        if res.get("directions"):
            ds = []
            for d in res["directions"]:
                arrow = {-1: "↓", 0: "=", 1: "↑"}
                if graded:
                    dir_total += 1
                    dir_ok += d["agree"]
                ds.append(f"`{d['counter']}` {arrow[d['kernel_dir']]}/{arrow[d['model_dir']]}"
                          + ("" if d["agree"] else " ✗"))
            lines += ["", f"From {runs[0]['threads']} to {runs[-1]['threads']} threads, kernel/model "
                      "(= within 5 %, ✗ disagree): " + ", ".join(ds) + "."]
        st = trace_statuses(res)
        if st:
            lines += ["", "The kernel's compact_zone() outcomes per boot (tracepoint mm_compaction_end, mode/status): "
                      + ", ".join(f"{k} {v:.1f}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])) + "."]
        lines.append("")
    k0 = results[0]
    s = k0["settings"]
    lines += [f"Kernel {k0['kernel']} under QEMU (TCG), `--guest-memory 1G --nodes 2 --memory none` (MemTotal "
              f"{s['machine.memory']}, {s['machine.nodes']} nodes, zram {int(s.get('swap.size', 0)) >> 20} MiB, "
              f"min_free_kbytes {s['vm.min_free_kbytes']}); the model `{k0['policy']}` as a program on the one machine with the "
              f"same MemTotal, nodes"
              + (f" of the guest's sizes (`machine.node_memory` {s['machine.node_memory']})"
                 if "machine.node_memory" in s else "")
              + f", memory in use before the workload (`machine.kernel_used` {s.get('machine.kernel_used')})"
              + (", free lists and pageblocks at the start (`machine.start_layout`)" if "machine.start_layout" in s else "")
              + ", ZONE_DMA, watermarks, zram and THP modes, each boot's own (one model run per boot). Cells: kernel mean ± sd "
              f"over boots / model (relative error). ¹ graded within ±25 %: {met} of {total} met (each thread count of the two-count rows on its own: {per_met} of {per_total}). Directions between "
              f"the thread counts (graded rows): {dir_ok} of {dir_total} agree."
              + (" " + note if (note := wakeup_note(r.get("kswapd_wakeup") for r in results)) else "")]
    return "\n".join(lines)


def main() -> int:
    return _doc.main(__doc__.split("\n\n")[0], [c[0] for c in CONFIGS], run, resimulate, render, BEGIN, END,
                     kswapd_wakeup="measured")


if __name__ == "__main__":
    sys.exit(main())
