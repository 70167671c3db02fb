#!/usr/bin/env python3
"""The DAMON_RECLAIM time quota against kdamond's speed in the guest (issue 18;
docs/validation.md, "DAMON_RECLAIM", "The time quota: kdamond's measured speed").

Reads a store of ``scripts/validate_damon.py --out DIR`` (its four configurations, booted
with the guest that prints ``@@quota``) and simulates its boots again; boots nothing. Prints:

- per configuration, kdamond's CPU share in the guest and in the model at its ``cost.*``
  (monitoring and actions apart), their ratio, and a least-squares split of the guest's
  CPU over the size-quota rows into the model's monitoring and actions;
- per 128 MiB/s boot, kdamond's CPU ticks against its tried bytes over the ``@@quota``
  samples (least squares with an intercept per second): the guest's CPU per MiB tried,
  beside the model's action time per MiB tried;
- the time quota's throughput (bytes per charged ms) in the guest (``effective_bytes`` over
  ``quota_ms``) and in the model at each ``--slowdown`` (``sim.kdamond_slowdown``), with the
  row's bytes tried, reclaimed and saving;
- with ``--stat LOG...`` (console logs of the 10 ms/s row booted with ``kernel run
  --damon-action stat``: the same scheme acting on nothing), kdamond's monitoring slowdown
  apart from its actions': the stat boots' kdamond CPU over the model's monitoring CPU, the
  rest of the pageout boots' kdamond CPU over the model's action CPU, and the row at that
  action slowdown.

    python scripts/experiment_damon_quota.py --out DIR [--slowdown 1 4 7.2 12] [--stat LOG ...]
"""

from __future__ import annotations

import argparse
import json
import statistics as st
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from reclaimlab.kernel import console, damon_compare, experiment
import validate_damon as vd

MIB = 2**20


def simulate(out: Path, name: str, slowdown: float | None) -> tuple[dict, dict]:
    """(validate's result, the model's metrics averaged over seeds) of a stored configuration,
    at the model's costs (``slowdown`` None) or charged ``slowdown`` times."""
    old = json.loads((out / f"{name}.json").read_text())
    seen: dict = {}
    real = damon_compare.compare, damon_compare.kdamond_slowdown

    def spy(consoles, base, sims, sim_base, cg):
        keys = ("damon_cpu_pct", "damon_monitor_cpu_pct", "damon_action_cpu_pct", "damon_cpu_ns",
                "bytes_reclaim_tried_regions")
        seen.update({k: st.fmean(s["metrics"][k] for s in sims) for k in keys})
        seen["action_ms_per_mib"] = [s["metrics"]["damon_cpu_ns"] * s["metrics"]["damon_action_cpu_pct"]
                                     / s["metrics"]["damon_cpu_pct"] / 1e6
                                     / (s["metrics"]["bytes_reclaim_tried_regions"] / MIB) for s in sims]
        return real[0](consoles, base, sims, sim_base, cg)

    experiment.damon_compare.compare = spy
    if slowdown is not None:
        experiment.damon_compare.kdamond_slowdown = lambda consoles, cpu: slowdown
    try:
        setup = replace(vd.setup_of(old["params"], old["boots"]), damon_cost="model" if slowdown is None else "measured")
        res = experiment.revalidate(setup, out, old["logs"])
    finally:
        experiment.damon_compare.compare, experiment.damon_compare.kdamond_slowdown = real
    return res, seen


def ticks_per_mib(log: str) -> float | None:
    """kdamond's CPU ms per MiB tried in one boot: least squares of the CPU ticks between
    ``@@quota`` samples on the seconds and the MiB tried between them."""
    q = console.parse(Path(log).read_text(errors="replace")).quota_samples
    if len(q) < 5:
        return None
    t = np.array([x.t for x in q])
    tried = np.array([x.sz_tried for x in q], float) / MIB
    cpu_ms = np.array([x.kdamond_ticks for x in q], float) * 10.0
    a = np.vstack([np.diff(t), np.diff(tried)]).T
    (_per_s, per_mib), *_ = np.linalg.lstsq(a, np.diff(cpu_ms), rcond=None)
    return float(per_mib)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="a store of scripts/validate_damon.py")
    ap.add_argument("--slowdown", type=float, nargs="*", default=[1.0, 4.0, 9.0, 12.1],
                    help="sim.kdamond_slowdown values for the time-quota row (besides the measured one)")
    ap.add_argument("--stat", type=Path, nargs="*", default=[], metavar="LOG",
                    help="console logs of the time-quota row booted with --damon-action stat")
    a = ap.parse_args()
    rows = []
    print("kdamond CPU, % of a CPU: guest / model at cost.* (monitoring + actions), ratio")
    for name, label, _ in vd.CONFIGS:
        if not (a.out / f"{name}.json").exists():
            continue
        res, m = simulate(a.out, name, None)
        g = st.fmean(res["damon_reclaim"]["kdamond_cpu_pct"]["kernel"])
        rows.append((name, g, m["damon_monitor_cpu_pct"], m["damon_action_cpu_pct"]))
        print(f"  {label}: {g:.2f} / {m['damon_cpu_pct']:.3f} ({m['damon_monitor_cpu_pct']:.3f} + "
              f"{m['damon_action_cpu_pct']:.3f}), {g / m['damon_cpu_pct']:.1f}")
        if name == "sz128M":
            per = [ticks_per_mib(p) for p in res["logs"]["kernel"]]
            per = [x for x in per if x is not None]
            if per:
                print(f"    guest CPU per MiB tried (each boot): {', '.join(f'{x:.3f}' for x in per)} ms; model actions "
                      f"{st.fmean(m['action_ms_per_mib']):.4f} ± {st.stdev(m['action_ms_per_mib']):.4f} ms")
    size = [r for r in rows if r[0].startswith("sz")]
    if len(size) >= 2:
        (ma, mb), *_ = np.linalg.lstsq(np.array([[r[2], r[3]] for r in size]), np.array([r[1] for r in size]), rcond=None)
        print(f"  size rows: guest CPU = {ma:.1f} x the model's monitoring + {mb:.1f} x its actions")
    if not (a.out / "ms10.json").exists():
        return 0
    slowdowns = list(a.slowdown)
    if a.stat:
        # Monitoring apart from actions: the stat boots' kdamond does the row's monitoring and
        # no action (the model's monitoring taken from its pageout run: the regions of a run
        # that pages nothing out differ somewhat).
        stat_cpu = damon_compare.guest_cpu_pct([console.parse(x.read_text(errors="replace")) for x in a.stat])
        ms10 = next(r for r in rows if r[0] == "ms10")
        mon = st.fmean(stat_cpu) / ms10[2]
        act = (ms10[1] - mon * ms10[2]) / ms10[3]
        print(f"time quota: stat boots' kdamond {', '.join(f'{x:.2f}' for x in stat_cpu)} % of a CPU: monitoring "
              f"{mon:.1f} x the model's ({ms10[2]:.3f} %); the pageout boots' rest, {ms10[1] - mon * ms10[2]:.2f} %, "
              f"is {act:.1f} x the model's actions ({ms10[3]:.3f} %)")
        slowdowns.append(act)
    for f in [None, *slowdowns]:
        if f is None:
            old = json.loads((a.out / "ms10.json").read_text())
            res = experiment.revalidate(replace(vd.setup_of(old["params"], old["boots"]), damon_cost="measured"),
                                        a.out, old["logs"])
            f_txt = f"measured {res['damon_reclaim']['kdamond_slowdown']:.2f}"
        else:
            res, _ = simulate(a.out, "ms10", f)
            f_txt = f"{f:g}"
        d = res["damon_reclaim"]
        rw = {r["counter"]: r for r in d["rows"]}
        kq, sq = d["quota"]["kernel"] or {}, d["quota"]["simulator"] or {}
        cell = (lambda k, s=MIB: f"{rw[k]['sim'] / s:,.1f} ± {rw[k]['sim_sd'] / s:,.1f} "
                                 f"(kernel {rw[k]['real_mean'] / s:,.1f} ± {rw[k]['real_sd'] / s:,.1f})")
        kb = f"{kq['bytes_per_ms'] / MIB:.2f}" if kq.get("bytes_per_ms") else "n/a"
        print(f"time quota, slowdown {f_txt}: {sq.get('bytes_per_ms', 0) / MIB:.2f} MiB per charged ms (kernel {kb}); "
              f"tried {cell('bytes_reclaim_tried_regions')} MiB, reclaimed {cell('bytes_reclaimed_regions')} MiB, "
              f"saving {cell('memory_saving_pct', 1)} %")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
