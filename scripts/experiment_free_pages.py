#!/usr/bin/env python3
"""Free memory while the whole machine reclaims, kernel and model side by side (issue 17;
docs/validation.md, "tpcc's primary refaults: not the free memory").

The tenants store's boots made with ``--wb-sample`` carry ``nr_free_pages`` every 50 ms of
guest time (``@@wbs``, :attr:`Console.free_samples`); each boot is simulated again on its
own machine, start layout and CPU placement (:func:`experiment.boot_runs`), at its own wall time and the stored
wake-up mode, and the model's
``nr_free_pages`` series (``sim.sample_interval_ms``) is read the same way
(:func:`validate.free_under_reclaim`: from the first sample at or below eight times the
zones' high watermarks to the last). Printed per boot: the time-weighted mean free pages
under reclaim, their 10th/50th/90th percentiles, the share of the run spent filling memory
first, and the counters that say what the free memory did to the workload.

    python scripts/validate_tenants.py --out STORE --only tpcc --wb-sample --kswapd-wakeup measured
    python scripts/experiment_free_pages.py --out STORE tpcc
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reclaimlab.exceptions import ReclaimlabError  # noqa: E402
from reclaimlab.kernel import KernelError, console  # noqa: E402
from reclaimlab.kernel.experiment import (boot_runs, disk_for, placement_settings, prepare,  # noqa: E402
                                          read_disk_for, wakeup_for)
from reclaimlab.kernel.validate import (free_under_reclaim, guest_wall_s, sim_settings, sim_vmstat,  # noqa: E402
                                        simulate, with_derived)
from validate_tenants import setup_of  # noqa: E402

#: Counters printed beside the free pages.
SHOWN = ("workingset_refault_file", "pgsteal_file", "pgsteal_anon", "allocstall")
#: The span "under reclaim" ends where free memory is this many times the zones' high watermarks.
CEILING = 8


def row(label: str, free: dict | None, vm: dict) -> str:
    if free is None:
        return f"{label:18} (no samples under reclaim)"
    counters = "  ".join(f"{k} {vm.get(k, 0):,.0f}" for k in SHOWN)
    return (f"{label:18} {free['mean']:7,.0f} {free['p10']:7,.0f} {free['p50']:7,.0f} {free['p90']:7,.0f}"
            f" {free['fill_share']:6.2f}   {counters}")


def compare(out: Path, name: str, mglru: str, tmp: Path) -> None:
    stored = json.loads((out / f"{name}-mglru-{mglru}.json").read_text())
    setup = replace(setup_of(out, name, mglru, stored["boots"]), kswapd_wakeup=stored.get("kswapd_wakeup", "model"))
    prep = prepare(setup)
    cons = [console.parse(Path(p).read_text(errors="replace")) for p in stored["logs"]["kernel"]]
    if not any(c.free_samples for c in cons):
        raise KernelError(f"{name}, MGLRU {mglru}: no boot has free-page samples (boot it with --wb-sample)")
    settings = {**sim_settings(prep, cons), **placement_settings(cons[0], setup.cpu_placement)}
    _, write_ns = disk_for(setup, cons)
    _, read_ns = read_disk_for(setup, cons)
    wakeup = wakeup_for(setup, cons)
    print(f"\n{stored.get('label', name)}, MGLRU {mglru} ({settings['policy']}): free pages under reclaim")
    print(f"{'':18} {'mean':>7} {'p10':>7} {'p50':>7} {'p90':>7} {'fill':>6}")
    for i, (c, st) in enumerate(zip(cons, boot_runs(cons, settings, setup.cpu_placement))):
        zones = c.layouts["start"].zones
        ceiling = CEILING * sum(z.high for z in zones if z.managed)
        ts, fs = [float(t) for t, _ in c.free_samples], [float(f) for _, f in c.free_samples]
        print(row(f"kernel, boot {i}", free_under_reclaim(ts, fs, ceiling), with_derived(c.vmstat())))
        sim = simulate(prep.wl, st, tmp, guest_wall_s([c]), write_ns, read_ns, wakeup)
        series = sim["series"]
        print(row(f"model, layout {i}", free_under_reclaim(series["time_s"], series["nr_free_pages"], ceiling),
                  sim_vmstat(sim)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="scripts/validate_tenants.py's store")
    ap.add_argument("--mglru", choices=("on", "off", "both"), default="both")
    ap.add_argument("names", nargs="+", metavar="NAME", help="workloads of the store (tpcc, protected, ...)")
    a = ap.parse_args()
    try:
        with tempfile.TemporaryDirectory(prefix="free-pages-") as tmp:
            for name in a.names:
                for mglru in ("on", "off") if a.mglru == "both" else (a.mglru,):
                    compare(a.out, name, mglru, Path(tmp))
    except (ReclaimlabError, OSError) as e:
        print(f"reclaimlab: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
