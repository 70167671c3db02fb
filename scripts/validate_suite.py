#!/usr/bin/env python3
"""Regenerate the tables of docs/validation.md: the validation suite on the real kernel
(QEMU, one guest at a time) and in the simulator.

    python scripts/validate_suite.py --out validation-runs/          # boot what is missing, render
    python scripts/validate_suite.py --out validation-runs/ --render-only

Boots are stored in OUT/results.sqlite as they finish, so an interrupted suite resumes
where it stopped; the simulator runs and the tables are recomputed from the store each
time. The tables replace the block between the GENERATED markers of docs/validation.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from reclaimlab.kernel import LAB, KernelError, console, store
from reclaimlab.kernel.cpu_cost import measured as measured_cpu
from reclaimlab.kernel.experiment import boot_runs, kswapd_wakeups, params_of, record, wakeup_of
from reclaimlab.kernel.run import Setup, cpu_cost_unfit, prepare, workload_room
from reclaimlab.kernel.validate import (ANON_TARGETS, FILE_TARGETS, compare, compression_ratio, held_settings,
                                       mark_not_comparable, mean_counts, mglru_model, sim_vmstat, simulate,
                                       start_layout_settings, targets_for, with_derived, zone_settings)
from reclaimlab.kernel.workload import build

MEMORY = "64M"
#: The suite runs in the laboratory setting (LAB: readahead off, one-page mapped faults, THP
#: never), given explicitly since `kernel run`'s defaults are the kernel's own. Boots stored
#: before the guest reported readahead and fault-around ran with it too, so their simulator
#: settings get these values (the engine's defaults are the kernel's).
LAB_SIM = {"block.read_ahead_kb": str(LAB["read_ahead_kb"]), "fault_around_bytes": str(LAB["fault_around_bytes"])}
#: (label, workload spec, ticker µs). Sizes follow MEMORY: file workloads are 1.5 x
#: memory.max. The mapped workloads run again with a 1 ms ticker (accessed bits under TCG).
SUITE = [
    ("seqloop 1.5x", "seqloop", 0),
    ("zipf pread", "zipf", 0),
    ("zipf mmap", "zipfmap", 0),
    ("anon hot 40%", "anon:hot=0.4", 0),
    ("anon hot 60%", "anon:hot=0.6", 0),
    ("zipf mmap, 1 ms ticker", "zipfmap", 1000),
    ("anon hot 40%, 1 ms ticker", "anon:hot=0.4", 1000),
]
BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_suite.py -->", "<!-- END GENERATED -->"
HEADLINE_FILE = list(FILE_TARGETS)
HEADLINE_ANON = list(ANON_TARGETS)


def fmt(x: float) -> str:
    """A count for a table: whole, but one below 1 that is not keeps a decimal (a
    kernel mean of 0.2, one event in six boots, is not "0")."""
    return f"{x:,.1f}" if abs(x) < 1 and x != int(x) else f"{x:,.0f}"


def lab_configs() -> list[dict]:
    """The laboratory suite as configurations: label, workload spec, MGLRU, the Setup's keywords."""
    return [{"label": label, "workload": spec, "mglru": mglru,
             "setup": {"memory": MEMORY, "tick_us": tick, **LAB}}
            for label, spec, tick in SUITE for mglru in ("on", "off")]


def run_configs(out: Path, boots: int, configs: list[dict]) -> None:
    """Boot what each configuration lacks of ``boots`` (stored boots count), one guest at a time."""
    for c in configs:
        setup = Setup(workload=c["workload"], mglru=c["mglru"], boots=boots, **c["setup"])
        p = prepare(setup)
        have = len(store.load_boots(out, params_of(setup, p))) if (out / "results.sqlite").exists() else 0
        if have >= boots:
            continue
        setup.boots = boots - have
        t = time.time()
        print(f"{c['label']} mglru={c['mglru']}: {setup.boots} boot(s)", file=sys.stderr, flush=True)
        record(setup, out, progress=False)
        print(f"  done in {time.time() - t:.0f} s", file=sys.stderr, flush=True)


def run_boots(out: Path, boots: int) -> None:
    run_configs(out, boots, lab_configs())


#: Shown beside the headline counters, in this order.
CONTEXT_COUNTERS = ("pgmajfault", "pgpgin", "pgscan_file", "pgscan_anon", "pgsteal_anon", "workingset_activate_anon")


def evaluate_configs(out: Path, configs: list[dict], mglru_policy: str | None = None,
                     sim_defaults: dict[str, str] | None = None, kswapd_wakeup: str = "model",
                     start_layout: bool = True, cpu_placement: str = "model", cpu_cost: str = "model") -> list[dict]:
    """Re-simulate the stored boots of each configuration with the current model and compare.
    Configurations without a stored boot are left out. Without a memory.max (``memory``
    none) the whole-machine counters are graded too (``targets_for``). ``kswapd_wakeup``
    "measured": kswapd's wake-up latency is drawn from the boots' traced ones (``@@kswapd_wake``
    in their console logs; ``reclaimlab validate --kswapd-wakeup measured``), "mean" their
    mean; a configuration whose boots never woke kswapd (memcg reclaim) keeps
    ``cost.kswapd_wakeup_ns``. ``start_layout``: the machine starts with the first boot's free
    lists and pageblocks (``machine.start_layout``, where its console has them; boots stored
    before validate passed it lack it in their configuration). ``cpu_placement`` "measured":
    each whole-machine boot's run puts the workload on the CPUs the guest's scheduler ran it
    on (``machine.task_cpus`` from its ``@@swcpu`` record), kswapd on the other. ``cpu_cost``
    "measured": each whole-machine boot's run of a workload it fits (``cpu_cost_unfit``:
    anonymous memory only) scales the model's reclaim CPU costs to that boot's relative
    speeds of kswapd and the workload (:mod:`reclaimlab.kernel.cpu_cost`; ``reclaimlab
    validate --cpu-cost measured``); the others keep the model's."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in configs:
            spec, mglru = c["workload"], c["mglru"]
            setup = Setup(workload=spec, mglru=mglru, **c["setup"])
            p = prepare(setup)
            boots = store.load_boots(out, params_of(setup, p)) if (out / "results.sqlite").exists() else []
            if not boots:
                continue
            settings = {**(sim_defaults or {}), **{k: v for k, v in boots[0]["config"].items()
                                                    if not k.startswith("kernel.") and k != "workload"}}
            # The memory the guest held at the workload's start, from the first boot's console
            # (boots stored before validate passed kernel_shmem / kernel_mlocked / ZONE_DMA's
            # protection lack them).
            # Every boot's console for their wake-up latencies and start layouts, else the first one found.
            per_console = [boot_console(out, b) for b in boots]
            found = (x for x in per_console if x is not None)
            consoles = list(found) if kswapd_wakeup != "model" else [x for x in [next(found, None)] if x is not None]
            if consoles:
                first = consoles[0]
                zones = zone_settings(first) if "machine.zone_dma" in settings else {}
                for k, v in {**held_settings(first.layouts.get("start")), **zones}.items():
                    settings.setdefault(k, v)
                settings.pop("machine.start_layout", None)
                if start_layout:  # with the machine.kernel_used it implies
                    settings.update(start_layout_settings(first, settings))
            wakes = kswapd_wakeups(consoles) if kswapd_wakeup != "model" else None
            wakeup = wakeup_of(kswapd_wakeup, wakes)
            if mglru == "on":  # the variant of the guest's kernel version, unless told otherwise
                settings["policy"] = mglru_policy or mglru_model(boots[0]["config"]["kernel.release"])
            # zram's ratio from the consoles (the stored metric is the definition of its day).
            ratio = compression_ratio([x for x in per_console if x is not None])
            ratios = [b["metrics"]["zram.compression_ratio"] for b in boots if "zram.compression_ratio" in b["metrics"]]
            if ratio or ratios:
                settings["swap.zram.compression_ratio"] = f"{ratio or statistics.fmean(ratios):.3f}"
            wl = build(spec, workload_room(setup, p.memory_max))
            whole_machine = p.memory_max is None
            t = time.time()
            walls = [b["metrics"]["wall_s"] for b in boots if b["metrics"].get("wall_s")]
            runs = [(settings, statistics.fmean(walls) if walls else None, None)]
            if start_layout and whole_machine and consoles and all(x is not None for x in per_console):
                # Without a limit the machine's free lists at the start decide where the
                # workload's allocations fall back, and they differ from boot to boot: each boot
                # is simulated from its own (and at its own wall time), and the model's figure
                # is the mean over them.
                runs = [(st, b["metrics"].get("wall_s"), x)
                        for st, b, x in zip(boot_runs(per_console, settings, cpu_placement), boots, per_console)]
            sims, figures = [], []
            measured = cpu_cost == "measured" and whole_machine and cpu_cost_unfit(wl) is None
            for st, wall, x in runs:
                one = simulate(wl, st, Path(tmp), wall, wakeup_wall_ns=wakeup)
                if measured:
                    if x is None:
                        raise KernelError(f"--cpu-cost measured: {spec} mglru={mglru}: a boot's console log is not "
                                          "on this machine")
                    one, _, fig = measured_cpu([x], st, one,
                                               lambda s, wall=wall: simulate(wl, s, Path(tmp), wall, wakeup_wall_ns=wakeup))
                    figures.append(fig)
                sims.append(one)
            sim = sims[0]
            sim_vm = mean_counts([sim_vmstat(x) for x in sims])
            targets = targets_for(wl, whole_machine)
            counters = list(targets) + [x for x in CONTEXT_COUNTERS if x not in targets]
            if whole_machine:  # the root's tmpfs, which only whole-machine reclaim takes
                counters.append("nr_shmem")
            real = [with_derived(b["vmstat"]) for b in boots]
            rows = compare(real, sim_vm, targets, counters)
            results.append({**{k: v for k, v in c.items() if k != "setup"}, "policy": settings["policy"],
                            "boots": len(boots), "sim_s": round(time.time() - t, 2),
                            "wall_s": [round(b["metrics"].get("wall_s", 0), 1) for b in boots],
                            # Boots since 28 Nov 2026: the host CPUs other work kept busy.
                            "host_other_cpus": [b["metrics"].get("host.other_cpus") for b in boots],
                            "whole_machine": whole_machine, "thp_note": mark_not_comparable(rows, real, whole_machine, sim_vm),
                            "settings": settings, "rows": rows, "sim_runs": len(sims),
                            "cpu_cost": "measured" if measured else "model",
                            # Per boot: the guest's speeds, the model's at each factor tried (cpu_cost.measured).
                            **({"cpu_cost_figures": figures} if figures else {}),
                            "kswapd_wakeup": kswapd_wakeup if wakeup is not None else "model",
                            "sim_metrics": {k: statistics.fmean(x["metrics"][k] for x in sims) for k in SIM_METRICS
                                            if all(k in x["metrics"] for x in sims)},
                            # The guest's pages allocated per wake-up window (boots since 28 Nov 2026).
                            "guest_window_pages": {k: v for k, v in (wakes or {}).items() if k.startswith("window_")},
                            "sim_config": {k: sim["config"][k] for k in ("cost.kswapd_wakeup_ns", "sim.time_dilation")
                                           if k in sim["config"]}})
    return results


#: The simulator's own figures kept beside the compared counters (kswapd's passes).
SIM_METRICS = ("kswapd_dma_passes", "kswapd_empty_passes", "kswapd_cpu_s", "kswapd_wake_windows",
               "kswapd_wake_window_pages_mean", "kswapd_wake_window_pages_p50", "kswapd_wake_window_pages_p90",
               "kswapd_wake_windows_stalled", "extfrag_claims", "extfrag_steals", "watermark_boosts",
               "pcp_refills", "pcp_refill_frames", "pcp_refills_stealing",
               "free_pages_end_unmovable", "free_pages_end_movable", "free_pages_end_reclaimable",
               "pageblocks_end_unmovable", "pageblocks_end_movable", "pageblocks_end_reclaimable",
               "kswapd_shrinking_passes", "kswapd_pass_reclaimed_mean", "kswapd_pass_reclaimed_p50",
               "kswapd_pass_reclaimed_p90", "kswapd_pass_min_priority_mean")


def boot_console(out: Path, boot: dict) -> console.Console | None:
    """A stored boot's console, from its log where it was written or under OUT/boots (None:
    not on this machine)."""
    log = boot["config"].get("kernel.console_log")
    for path in ((Path(log), out / "boots" / Path(log).name) if log else ()):
        if path.exists():
            return console.parse(path.read_text(errors="replace"))
    return None


def evaluate(out: Path, mglru_policy: str | None = None) -> list[dict]:
    return evaluate_configs(out, lab_configs(), mglru_policy, LAB_SIM)


def config_table(r: dict) -> list[str]:
    """One configuration's table: counter, kernel mean ± sd, simulated, error, target."""
    lines = ["| counter | kernel mean ± sd | simulated | error | target |", "|---|---:|---:|---:|---|"]
    for row in r["rows"]:
        err = "n/a" if row["rel_error"] == float("inf") else f"{row['rel_error']:+.1%}"
        if row["target"] is None:
            tgt = ""
        elif not row.get("comparable", True):
            tgt = f"not comparable (±{row['target']:.0%})"
        else:
            tgt = ("✓" if row["met"] else "✗") + f" ±{row['target']:.0%}"
        lines.append(f"| {row['counter']} | {fmt(row['real_mean'])} ± {fmt(row['real_sd'])} | "
                     f"{fmt(row['sim'])} | {err} | {tgt} |")
    return lines


def direction(on: dict, off: dict) -> dict:
    """The MGLRU-vs-classic direction of one counter: ``on`` and ``off`` are its compare()
    rows. The kernel's difference counts only beyond the larger of either side's sd and
    1 % of the larger mean; the model's beyond 1 % of the larger simulated value.
    ``kernel``/``model``: +1 (MGLRU more), -1 (less), 0 (no difference); ``verdict``:
    "right" (same direction, or neither differs), "wrong", or "kernel: no difference"
    (the model differs where the kernel does not: not graded)."""
    dk, ds = on["real_mean"] - off["real_mean"], on["sim"] - off["sim"]
    noise = max(on["real_sd"], off["real_sd"], 0.01 * max(abs(on["real_mean"]), abs(off["real_mean"]), 1))
    kdir = 0 if abs(dk) <= noise else (1 if dk > 0 else -1)
    sdir = 0 if abs(ds) <= 0.01 * max(abs(on["sim"]), abs(off["sim"]), 1) else (1 if ds > 0 else -1)
    verdict = "right" if kdir == sdir else ("kernel: no difference" if kdir == 0 else "wrong")
    return {"kernel_diff": dk, "model_diff": ds, "kernel": kdir, "model": sdir, "verdict": verdict}


def render(results: list[dict]) -> str:
    lines = [BEGIN, "",
             f"Generated {datetime.date.today().isoformat()} by `python scripts/validate_suite.py`; kernel "
             f"`linux-image-6.12.117+deb12-amd64-unsigned` under QEMU TCG, cgroup memory.max {MEMORY}; "
             f"simulator `{next((r['policy'] for r in results if r['mglru'] == 'on'), '')}` (MGLRU on: the variant of the guest's kernel "
             "version, `mglru_model`) or `classic@6.15` (off) with the guest's parameters. "
             "Kernel: mean ± sd over the boots. Error: (simulated − kernel mean) / kernel mean. "
             "✓ within the issue's target (file ±10 %, anon ±25 %), ✗ outside it.", ""]
    for r in results:
        lines.append(f"### {r['label']} (`{r['workload']}`), MGLRU {r['mglru']} → `{r['policy']}`")
        lines.append("")
        lines.append(f"{r['boots']} boots; workload wall time in the guest {', '.join(f'{w} s' for w in r['wall_s'])}.")
        lines.append("")
        lines += config_table(r)
        lines.append("")
    # Direction of MGLRU vs classic per headline counter.
    lines += ["### MGLRU on vs off: direction of every headline counter", "",
              "| workload | counter | kernel on − off | simulated on − off | same direction |", "|---|---|---:|---:|---|"]
    by = {(r["label"], r["mglru"]): r for r in results}
    for label, spec, _ in SUITE:
        on, off = by.get((label, "on")), by.get((label, "off"))
        if not on or not off:
            continue
        heads = HEADLINE_ANON if spec.startswith("anon") else HEADLINE_FILE
        for name in heads:
            a = {x["counter"]: x for x in on["rows"]}[name]
            b = {x["counter"]: x for x in off["rows"]}[name]
            d = direction(a, b)
            dk, ds = d["kernel_diff"], d["model_diff"]
            if d["verdict"] == "right":
                same = "✓" if d["kernel"] else "✓ (neither differs)"
            else:
                same = "– (kernel: no difference)" if d["kernel"] == 0 else "✗"
            lines.append(f"| {label} | {name} | {fmt(dk)} | {fmt(ds)} | {same} |")
    lines += ["", END]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="validation-runs", help="results store of the boots")
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--render-only", action="store_true", help="do not boot; use the boots already stored")
    ap.add_argument("--doc", default=str(Path(__file__).resolve().parent.parent / "docs" / "validation.md"))
    ap.add_argument("--json", help="also write the results as JSON here")
    ap.add_argument("--mglru-policy", help="simulate MGLRU-on boots with this policy instead of the variant "
                    "matching the guest's kernel (e.g. mglru@6.15, to see the version effect)")
    a = ap.parse_args()
    out = Path(a.out)
    if not a.render_only:
        run_boots(out, a.boots)
    results = evaluate(out, a.mglru_policy)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=str))
    doc = Path(a.doc)
    text = doc.read_text() if doc.exists() else f"# Validation against a real kernel\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        print(f"{doc}: no GENERATED markers", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + render(results) + tail)
    print(f"{doc}: {len(results)} configurations", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
