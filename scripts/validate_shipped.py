#!/usr/bin/env python3
"""The "as shipped" validation suite: the kernel's own readahead (128 KiB) and fault-around
(64 KiB), MGLRU on and off, under memcg reclaim (memory.max) and under whole-machine
reclaim (``--memory none`` in a small guest); the generated section "Results as shipped"
of docs/validation.md.

    python scripts/validate_shipped.py                   # boot what is missing, render
    python scripts/validate_shipped.py --render-only     # re-simulate the stored boots only
    python scripts/validate_shipped.py --part memcg      # boot only one part (then render)
    python scripts/validate_shipped.py --part held       # the held-back check only

Boots go to validation-runs-shipped/results.sqlite (``--out``) as they finish, so an
interrupted suite resumes; the simulator runs and the tables are recomputed from the store
each time with the current model. The laboratory suite (scripts/validate_suite.py) shares
the evaluation and the per-configuration tables; its section stays as it is.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_suite import config_table, direction, evaluate_configs, fmt, run_configs  # noqa: E402

from reclaimlab.kernel import KERNEL_DEFAULT_FAULT_AROUND_BYTES, KERNEL_DEFAULT_READ_AHEAD_KB  # noqa: E402
from reclaimlab.kernel import KSWAPD_WAKEUP_MODES, KernelError  # noqa: E402
from reclaimlab.kernel.experiment import KSWAPD_WAKEUP_HELP, wakeup_note  # noqa: E402
from reclaimlab.kernel.qemu import other_load_text  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: As shipped: readahead and fault-around at the kernel's defaults, given explicitly so that
#: the stored boots are keyed by them; THP never, because the simulator's trace engine maps
#: base pages only (anon THPs would make the anon counters not comparable).
SHIPPED = {"read_ahead_kb": KERNEL_DEFAULT_READ_AHEAD_KB, "fault_around_bytes": KERNEL_DEFAULT_FAULT_AROUND_BYTES,
           "thp": "never"}
MEMCG_MEMORY = "64M"
#: The LIRS block traces' footprints (multi3 7,454 pages, sprite 7,075: 29 and 28 MiB) need a
#: smaller memory.max than the generated workloads to reclaim at all.
TRACE_MEMORY = "16M"
#: Guest RAM of the whole-machine part: the smallest guest `kernel run` takes (fewer pages per
#: boot). Its MemTotal is 210 MiB and about 178 MiB are free when the workload starts, so the
#: default sizes (1.5 x (RAM - 160 MiB) = 144 MiB) fit and reclaim nothing (measured: one boot
#: each, no pgscan at all). The workloads get WHOLE_MACHINE_PAGES instead (1.45 x the free
#: memory), and Zipf 4 x as many reads as pages instead of 8 x (the mapped one costs ~1 min
#: per boot under TCG even so).
WHOLE_MACHINE_GUEST = "256M"
WHOLE_MACHINE_PAGES = 65536
GUEST_MB = int(WHOLE_MACHINE_GUEST[:-1])


def lirs(name: str) -> str:
    """Workload spec of a LIRS trace, its path relative to the repository (the script runs
    there, so a clean checkout anywhere finds the data and the stored boots' key is the same)."""
    return f"trace:path=data/traces/lirs/{name}.trace.gz,format=lirs,kind=file-read"


#: (part, label, workload spec, memory.max or "none", guest RAM in MiB).
SUITE = [
    ("memcg", "seqloop 1.5x", "seqloop", MEMCG_MEMORY, 512),
    ("memcg", "zipf pread", "zipf", MEMCG_MEMORY, 512),
    ("memcg", "zipf mmap", "zipfmap", MEMCG_MEMORY, 512),
    ("memcg", "anon hot 40%", "anon:hot=0.4", MEMCG_MEMORY, 512),
    ("memcg", "LIRS multi3", lirs("multi3"), TRACE_MEMORY, 512),
    ("memcg", "LIRS sprite", lirs("sprite"), TRACE_MEMORY, 512),
    ("machine", "seqloop 256 MiB", f"seqloop:pages={WHOLE_MACHINE_PAGES}", "none", GUEST_MB),
    ("machine", "zipf pread 256 MiB", f"zipf:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}", "none",
     GUEST_MB),
    ("machine", "zipf mmap 256 MiB", f"zipfmap:pages={WHOLE_MACHINE_PAGES},reads={4 * WHOLE_MACHINE_PAGES}", "none",
     GUEST_MB),
    ("machine", "anon hot 40% 256 MiB", f"anon:hot=0.4,pages={WHOLE_MACHINE_PAGES}", "none", GUEST_MB),
]
#: Held back (issue 14): a workload nobody tuned the model to, a mixed anon+file trace under
#: the classic LRU, whose anon/file balance follows vm.swappiness (`get_scan_count`). 48 MiB
#: of anon written once, then Zipf(0.6) over it and over a 48 MiB file read with pread, in a
#: 64 MiB memcg with 128 MiB of zram; MGLRU off only, at swappiness 30 and 120. The trace is
#: generated from MIXED_PROGRAM (same program and seed, same bytes) into MIXED_TRACE, a path
#: relative to the repository, which keys the stored boots.
MIXED_PAGES = 12288
MIXED_PROGRAM = {
    "regions": [{"name": "heap", "pages": MIXED_PAGES, "kind": "anon", "write_ratio": 1.0},
                {"name": "file", "pages": MIXED_PAGES, "kind": "file-read"}],
    "phases": [{"name": "fill", "accesses": MIXED_PAGES, "streams": [{"region": "heap", "pattern": "seq"}]},
               {"name": "mix", "accesses": 120000, "streams": [{"region": "heap", "pattern": "zipf:0.6"},
                                                               {"region": "file", "pattern": "zipf:0.6"}]}],
    "repeat": 1}
MIXED_TRACE = "validation-runs-shipped/mixed-anon-file.trace"
MIXED_SWAPPINESS = (30, 120)
HELD = [("held", f"mixed anon+file, swappiness {sw}", f"trace:path={MIXED_TRACE}", MEMCG_MEMORY, 512, sw)
        for sw in MIXED_SWAPPINESS]
PARTS = {"memcg": "memcg reclaim", "machine": "whole-machine reclaim", "held": "held back"}
#: The parts graded MGLRU on against off.
PAIRED = ("memcg", "machine")
BEGIN = "<!-- BEGIN GENERATED: scripts/validate_shipped.py -->"
END = "<!-- END GENERATED: scripts/validate_shipped.py -->"
HEADER = "## Results as shipped"
LAB_BEGIN = "<!-- BEGIN GENERATED: scripts/validate_suite.py -->"


def configs(parts: tuple[str, ...] = tuple(PARTS), pin_cpus: bool = False) -> list[dict]:
    pin = {"pin_cpus": True} if pin_cpus else {}
    return ([{"part": part, "label": label, "workload": spec, "mglru": mglru,
              "setup": {"memory": memory, "guest_mb": guest_mb, **SHIPPED, **pin}}
             for part, label, spec, memory, guest_mb in SUITE if part in parts for mglru in ("on", "off")]
            + [{"part": part, "label": label, "workload": spec, "mglru": "off",
                "setup": {"memory": memory, "guest_mb": guest_mb, "swap": "zram:128M", "swappiness": sw, **SHIPPED, **pin}}
               for part, label, spec, memory, guest_mb, sw in HELD if part in parts])


def make_mixed_trace() -> None:
    """Write MIXED_TRACE (relative to the working directory, the repository) if it is missing."""
    from reclaimlab import _core

    path = Path(MIXED_TRACE)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _core.trace_convert(_core.generate(MIXED_PROGRAM, 1), str(path), False)


def pairs(results: list[dict]) -> list[tuple[dict, dict]]:
    """(MGLRU on, MGLRU off) results of each configuration that has both, in the results' order."""
    by = {(r["part"], r["label"], r["mglru"]): r for r in results}
    keys = list(dict.fromkeys((r["part"], r["label"]) for r in results))
    return [(by[(p, lb, "on")], by[(p, lb, "off")]) for p, lb in keys if (p, lb, "on") in by and (p, lb, "off") in by]


def headline(r: dict) -> list[dict]:
    """The graded rows of a result (those with a target)."""
    return [row for row in r["rows"] if row["target"] is not None]


def grade(row: dict) -> str:
    if not row.get("comparable", True):
        return "not comparable"
    return "met" if row["met"] else "missed"


def err(row: dict) -> str:
    return "n/a" if row["rel_error"] == float("inf") else f"{row['rel_error']:+.1%}"


SIGN = {1: "+", -1: "−", 0: "="}


def summary(results: list[dict]) -> dict:
    """Per configuration and headline counter: error and grade with MGLRU on and off, and
    the direction of MGLRU vs classic (kernel vs model). Counts of met figures and of right
    directions, overall and per part."""
    rows, counts = [], {}
    for on, off in pairs(results):
        offrows = {x["counter"]: x for x in off["rows"]}
        for a in headline(on):
            b = offrows[a["counter"]]
            d = direction(a, b)
            rows.append({"part": on["part"], "label": on["label"], "counter": a["counter"], "on": a, "off": b,
                         "direction": d})
    for part in list(PAIRED) + ["all"]:
        sel = [x for x in rows if part in ("all", x["part"])]
        figs = [r for x in sel for r in (x["on"], x["off"]) if r.get("comparable", True)]
        graded = [x["direction"] for x in sel if x["direction"]["verdict"] != "kernel: no difference"]
        counts[part] = {"figures": len(figs), "met": sum(1 for r in figs if r["met"]),
                        "directions": len(graded), "right": sum(1 for d in graded if d["verdict"] == "right"),
                        "ungraded": len(sel) - len(graded)}
    return {"rows": rows, "counts": counts}


def render(results: list[dict], missing: list[str]) -> str:
    s = summary(results)
    policy = next((r["policy"] for r in results if r["mglru"] == "on"), "")
    lines = [BEGIN, "",
             f"Generated {datetime.date.today().isoformat()} by `python scripts/validate_shipped.py`; kernel "
             "`linux-image-6.12.117+deb12-amd64-unsigned` under QEMU TCG, 2 vCPUs, readahead and "
             f"fault-around at the kernel's defaults (`--read-ahead-kb {SHIPPED['read_ahead_kb']} "
             f"--fault-around-bytes {SHIPPED['fault_around_bytes']}`), THP `never` (the simulator's trace engine "
             "maps base pages only). "
             f"Memcg reclaim: cgroup memory.max {MEMCG_MEMORY} in a 512 MiB guest, {TRACE_MEMORY} for the LIRS "
             "traces (footprints 29 and 28 MiB). Whole-machine reclaim: `--memory none` in a "
             f"{WHOLE_MACHINE_GUEST[:-1]} MiB guest (MemTotal 210 MiB, about 178 MiB free when the workload starts), "
             f"every workload {WHOLE_MACHINE_PAGES:,} pages ({WHOLE_MACHINE_PAGES >> 8} MiB): the default sizes, "
             "1.5 × (RAM − 160 MiB) = 144 MiB, fit that guest and reclaimed nothing (one boot each), and a larger "
             "guest would cost more boot time; Zipf makes 4 × as many reads as pages (8 × by default) for the same "
             "reason. The LIRS traces are left out there: they fit the guest's free memory. "
             f"Simulator `{policy}` (MGLRU on: the variant of the guest's kernel version, `mglru_model`) or "
             "`classic@6.15` (off) with the guest's parameters as read back. Kernel: mean ± sd over the boots. "
             "Error: (simulated − kernel mean) / kernel mean. Target: file ±10 %, anon ±25 %, and without a "
             "memory.max the whole-machine counters ±25 % (`allocstall` is the sum over the zones). "
             + wakeup_note(r.get("kswapd_wakeup") for r in results)
             + (" Whole-machine anonymous rows: the model's reclaim CPU costs scaled per boot to that boot's speed of "
                "kswapd against the workload's own work (`--cpu-cost measured`, kernel/cpu_cost.py: under TCG the "
                "task is slowed about 40 times, kswapd's reclaim about 15); the file rows keep the model's costs "
                "(their guest's read path is the task's CPU, docs/validation.md, \"The guest's relative speeds\")."
                if any(r.get("cpu_cost") == "measured" for r in results) else "")
             + (" The model's machine starts with a boot's free lists and pageblocks per migrate type "
                "(`machine.start_layout`, `--start-layout guest`): the first boot's under a memory.max; without "
                "one the model runs once per boot, from that boot's and at its wall time, and shows their mean."
                if any("machine.start_layout" in r.get("settings", {}) for r in results) else ""), ""]
    if missing:
        lines += ["Not booted yet (no stored boot): " + "; ".join(missing) + ".", ""]
    c = s["counts"]
    lines += ["### Summary", ""]
    for part in list(PAIRED) + ["all"]:
        n = c[part]
        name = "All" if part == "all" else PARTS[part][0].upper() + PARTS[part][1:]
        lines.append(f"- {name}: {n['met']} of {n['figures']} headline figures within the target; the "
                     f"MGLRU-vs-classic direction right for {n['right']} of {n['directions']} counters"
                     + (f" ({n['ungraded']} more where only the model differs)" if n["ungraded"] else "") + ".")
    lines += ["", "Direction: the sign of MGLRU on − off (+ MGLRU more, − less, = no difference: within the "
              "kernel's sd or 1 %, for the model 1 %); right when kernel and model agree.", "",
              "| reclaim | workload | counter | MGLRU on: error | | MGLRU off: error | | kernel | model | direction |",
              "|---|---|---|---:|---|---:|---|:-:|:-:|---|"]
    for x in s["rows"]:
        d = x["direction"]
        lines.append(f"| {PARTS[x['part']].split()[0]} | {x['label']} | {x['counter']} | {err(x['on'])} | "
                     f"{grade(x['on'])} | {err(x['off'])} | {grade(x['off'])} | {SIGN[d['kernel']]} | "
                     f"{SIGN[d['model']]} | {d['verdict']} |")
    lines.append("")
    lines += held_section([r for r in results if r["part"] == "held"])
    for r in results:
        lines.append(f"### {PARTS[r['part']][0].upper() + PARTS[r['part']][1:]}: {r['label']} (`{r['workload']}`), "
                     f"MGLRU {r['mglru']} → `{r['policy']}`")
        lines.append("")
        lines.append(f"{r['boots']} boots; workload wall time in the guest {', '.join(f'{w} s' for w in r['wall_s'])}"
                     + other_load_text(r.get("host_other_cpus") or []) + "." + (f" {r['thp_note']}." if r.get("thp_note") else ""))
        lines.append("")
        lines += config_table(r)
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


#: The held-back check's counters: the anon/file balance (swap-outs and file steals) and
#: what it does to the refaults.
HELD_COUNTERS = ("pgscan_anon", "pgsteal_anon", "workingset_activate_anon", "pgscan_file", "pgsteal_file",
                 "workingset_refault_file", "workingset_activate_file", "pgmajfault", "pgpgin")


def held_section(held: list[dict]) -> list[str]:
    """The held-back check: per swappiness the balance counters, kernel against model, and how
    much each moves from the lowest swappiness to the highest."""
    if not held:
        return []
    by_sw = sorted(held, key=lambda r: int(r["settings"].get("vm.swappiness", 0)))
    rows = {id(r): {x["counter"]: x for x in r["rows"]} for r in by_sw}
    lines = ["### Held back: the anon/file balance across `vm.swappiness` (classic)", "",
             "A workload the model was not tuned to: " + MIXED_NOTE + " Kernel mean ± sd over the boots, error as "
             "above; the last columns give how much each counter moves from the lowest swappiness to the highest.", "",
             "| counter | " + " | ".join(f"swappiness {r['settings'].get('vm.swappiness', '?')}: kernel | model | error"
                                         for r in by_sw) + " | kernel × | model × |",
             "|---|" + "---:|---:|---:|" * len(by_sw) + "---:|---:|"]
    for counter in HELD_COUNTERS:
        cells = []
        for r in by_sw:
            x = rows[id(r)].get(counter)
            cells.append("n/a | n/a | n/a" if x is None else
                         f"{fmt(x['real_mean'])} ± {fmt(x['real_sd'])} | {fmt(x['sim'])} | {err(x)}")
        lo, hi = rows[id(by_sw[0])].get(counter), rows[id(by_sw[-1])].get(counter)
        ratio = (lambda a, b: f"{b / a:.2f}" if a else "n/a")
        moves = (f"{ratio(lo['real_mean'], hi['real_mean'])} | {ratio(lo['sim'], hi['sim'])}"
                 if lo and hi and len(by_sw) > 1 else "n/a | n/a")
        lines.append(f"| {counter} | " + " | ".join(cells) + f" | {moves} |")
    lines.append("")
    return lines


MIXED_NOTE = (f"48 MiB of anon written once, then Zipf(0.6) over it and over a 48 MiB file read with `pread` "
              f"({MIXED_PAGES + 120000:,} accesses, `MIXED_PROGRAM` in scripts/validate_shipped.py), memory.max "
              f"{MEMCG_MEMORY}, zram 128 MiB, MGLRU off, readahead and fault-around as shipped, at swappiness "
              + " and ".join(str(x) for x in MIXED_SWAPPINESS) + ".")


def place(text: str, block: str) -> str:
    """``text`` with the shipped block replaced, or, the first time, inserted with its header
    before the section that holds the laboratory block."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + block + tail
    if LAB_BEGIN not in text:
        return text.rstrip("\n") + f"\n\n{HEADER}\n\n{block}\n"
    head, tail = text.split(LAB_BEGIN, 1)
    cut = head.rfind("\n## ")
    cut = cut + 1 if cut >= 0 else len(head)
    return head[:cut] + f"{HEADER}\n\n{block}\n\n" + head[cut:] + LAB_BEGIN + tail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "validation-runs-shipped"), help="results store of the boots")
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--part", choices=sorted(PARTS), action="append",
                    help="boot only this part (repeatable; default: both); the render shows all stored boots")
    ap.add_argument("--render-only", action="store_true", help="do not boot; re-simulate the boots already stored")
    ap.add_argument("--no-render", action="store_true", help="boot only")
    ap.add_argument("--doc", default=str(REPO / "docs" / "validation.md"))
    ap.add_argument("--json", help="also write the results as JSON here")
    ap.add_argument("--mglru-policy", help="simulate MGLRU-on boots with this policy instead of the guest's variant")
    ap.add_argument("--kswapd-wakeup", choices=KSWAPD_WAKEUP_MODES, default="measured", help=KSWAPD_WAKEUP_HELP)
    ap.add_argument("--start-layout", choices=("guest", "none"), default="guest",
                    help="guest: the model starts with the first boot's free lists and pageblocks per migrate type "
                         "(machine.start_layout), without a memory.max each boot's in a run of its own (the mean "
                         "is compared); none: a fresh buddy allocator less machine.kernel_used")
    ap.add_argument("--cpu-placement", choices=("model", "measured"), default="model",
                    help="model: the workload on CPU 0, kswapd on CPU 1; measured: each whole-machine boot simulated "
                         "with the workload on the CPUs the guest's scheduler ran it on, kswapd on the other (@@swcpu, "
                         "machine.task_cpus; boots since 28 Nov 2026, 13:21 UTC)")
    ap.add_argument("--cpu-cost", choices=("model", "measured"), default="measured",
                    help="measured (default): each whole-machine boot of an anonymous workload simulated with the "
                         "model's reclaim CPU costs scaled to that boot's speed of kswapd against the workload's own "
                         "(@@wcpu, @@dreclaim, @@kthread; boots since 28 Nov 2026, 21:00 UTC; reclaimlab validate "
                         "--cpu-cost; file workloads keep the model's); model: the costs of docs/model.md everywhere")
    ap.add_argument("--pin-cpus", action="store_true",
                    help="boot and compare with the workload on CPU 0 and kswapd/kcompactd on CPU 1, as the model "
                         "places them (kernel run --pin-cpus; its own boots in the store)")
    a = ap.parse_args()
    out, doc = Path(a.out).resolve(), Path(a.doc).resolve()
    json_out = Path(a.json).resolve() if a.json else None
    os.chdir(REPO)  # the LIRS traces' paths are relative to the repository
    make_mixed_trace()
    if not a.render_only:
        run_configs(out, a.boots, configs(tuple(a.part or PARTS), a.pin_cpus))
    if a.no_render:
        return 0
    every = configs(pin_cpus=a.pin_cpus)
    try:
        results = evaluate_configs(out, every, a.mglru_policy, kswapd_wakeup=a.kswapd_wakeup,
                                   start_layout=a.start_layout == "guest", cpu_placement=a.cpu_placement,
                                   cpu_cost=a.cpu_cost)
    except KernelError as e:  # e.g. --cpu-placement measured on boots that did not record it
        print(f"reclaimlab: error: {e}", file=sys.stderr)
        return 2
    have = {(r["part"], r["label"], r["mglru"]) for r in results}
    missing = [f"{PARTS[c['part']]}, {c['label']}, MGLRU {c['mglru']}" for c in every
               if (c["part"], c["label"], c["mglru"]) not in have]
    if json_out:
        json_out.write_text(json.dumps(results, indent=1, default=str))
    text = doc.read_text()  # read just before writing: keep others' edits
    doc.write_text(place(text, render(results, missing)))
    print(f"{doc}: {len(results)} configurations as shipped"
          + (f"; {len(missing)} without boots" if missing else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
