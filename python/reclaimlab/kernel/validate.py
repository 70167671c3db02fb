"""Kernel vs simulator: the same page sequence on the real kernel (boots stored by
:mod:`.run`) and in the simulator with matching machine parameters, compared per counter
(real mean ± sd over boots, simulated value, relative error, the issue's target)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from .console import Console
from .ops import CGROUP, write_sim_trace
from .run import Prepared
from .workload import Workload

#: Headline counters and their targets (relative error of the simulator vs the kernel
#: mean), per workload class.
FILE_TARGETS = {"pgpgin": 0.10, "pgmajfault": 0.10, "workingset_refault_file": 0.10,
                "workingset_activate_file": 0.10, "pgsteal_file": 0.10}
ANON_TARGETS = {"pswpin": 0.25, "pswpout": 0.25, "workingset_refault_anon": 0.25}
#: Shown beside the headline counters.
CONTEXT = ("pgscan_file", "pgscan_anon", "pgsteal_anon", "workingset_activate_anon", "pgactivate", "pgdeactivate")


def mglru_model(release: str) -> str:
    """The MGLRU variant whose code path matches kernel ``release`` (docs/validation.md):

    - v6.14+ (the workingset-protection rework): ``mglru@6.15``;
    - v6.13, and 6.12 stable from 6.12.114 (the backport of v6.13's "mm/mglru: reset page
      lru tier bits when activating"): ``mglru@6.12`` — v6.6's code path with the four
      December 2023 fixes, v6.10's priority clamp and that backport;
    - the rest of v6.7–v6.12 and the 6.1/6.6 long-term series:
      ``mglru+fix-underprotected-page-cache`` (081488051d28 over v6.6). The fix is tagged
      ``Cc: stable`` and ``Fixes:`` v6.1's MGLRU; the 6.1-stable review of 18 Dec 2023
      (patch 085/106) carries it, and 6.6-stable is assumed to, as a stable kernel of either
      series today does;
    - anything else before v6.7: ``mglru@6.6``.

    The 6.12 sublevel is read from the release as Debian's 6.12 packages write it
    (``6.12.117+deb12-amd64``); an ABI-style ``6.12.0-N`` release counts as sublevel 0.
    """
    v = kernel_version(release)
    if v >= (6, 14):
        return "mglru@6.15"
    if v == (6, 13) or (v == (6, 12) and stable_sublevel(release) >= 114):
        return "mglru@6.12"
    if v >= (6, 7) or v in ((6, 1), (6, 6)):
        return "mglru+fix-underprotected-page-cache"
    return "mglru@6.6"


def policy_of(console: Console) -> str:
    """The simulator policy matching what the guest ran: lru_gen/enabled as it read back,
    and for MGLRU the variant of the guest's kernel version (:func:`mglru_model`)."""
    on = console.lru_gen is not None and console.lru_gen not in ("0x0000", "0")
    return mglru_model(console.release) if on else "classic@6.15"


def compression_ratio(consoles: list[Console]) -> float | None:
    """zram's measured orig_data_size / compr_data_size at its fullest, averaged over boots."""
    r = [x for x in (c.zram_ratio() for c in consoles) if x]
    return sum(r) / len(r) if r else None


def sim_settings(p: Prepared, consoles: list[Console]) -> dict[str, str]:
    """The simulator configuration that matches the guest: the guest's MemTotal, the
    cgroup's memory.max, the sysctls the guest read back, the zram size and its measured
    compression ratio."""
    c = consoles[0]
    s = {
        "policy": policy_of(c),
        "machine.memory": f"{c.meminfo.get('MemTotal', p.setup.guest_mb << 10)}K",
        f"cgroup.{CGROUP}.memory.max": str(p.memory_max),
        "vm.min_free_kbytes": str(c.sysctl.get("min_free_kbytes", "auto")),
        "vm.watermark_scale_factor": str(c.sysctl.get("watermark_scale_factor", 10)),
        "vm.swappiness": str(c.sysctl.get("swappiness", 60)),
        "swap.device": "zram" if p.zram else "none",
    }
    if p.zram:
        s["swap.size"] = str(p.zram)
        ratio = compression_ratio(consoles)
        if ratio:
            s["swap.zram.compression_ratio"] = f"{ratio:.3f}"
    return s


def kernel_config(p: Prepared, consoles: list[Console], accel: str) -> dict[str, str]:
    """What a stored boot's ``config`` holds: the simulator-equivalent keys and kernel.*."""
    c = consoles[0]
    return {**sim_settings(p, consoles), "kernel.release": c.release, "kernel.package": p.kernel.package,
            "kernel.mglru": p.setup.mglru or "default", "kernel.lru_gen": c.lru_gen or "", "kernel.accel": accel,
            "kernel.guest_mb": str(p.setup.guest_mb), "kernel.smp": str(p.setup.smp), "kernel.tick_us": str(p.setup.tick_us), "workload": p.wl.spec}


def simulate(wl: Workload, settings: dict[str, str], trace_dir: Path) -> dict[str, Any]:
    """Replay ``wl`` in the simulator; returns the run dict (policy, vmstat, metrics, ...)."""
    from .. import run as sim_run

    trace = trace_dir / "sim-trace.rcl"
    write_sim_trace(wl, trace)
    try:
        settings = dict(settings)
        policy = settings.pop("policy")
        t0 = time.time()
        r = sim_run(trace=str(trace), trace_format="native", policy=policy, set=settings)
        return {"policy": r.policy, "vmstat": r.vmstat, "metrics": r.metrics, "started": t0, "finished": time.time(),
                "config": r.config, "timeseries": {}}
    finally:
        trace.unlink(missing_ok=True)


def kernel_version(release: str) -> tuple[int, int]:
    """``6.12.117+deb12-amd64`` -> (6, 12)."""
    parts = release.split(".")
    try:
        return int(parts[0]), int(parts[1].split("-")[0].split("+")[0])
    except (IndexError, ValueError):
        return (0, 0)


def stable_sublevel(release: str) -> int:
    """``6.12.117+deb12-amd64`` -> 117; ``6.13`` or an unreadable release -> 0."""
    parts = release.split(".")
    digits = ""
    for ch in parts[2] if len(parts) > 2 else "":
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0


def definition_notes(release: str, policy: str) -> dict[str, str]:
    """Counters whose kernel definition differs between the guest's kernel and the model
    ``policy`` (only ``mglru@6.15`` against a pre-v6.14 guest, e.g. when asked for it instead
    of :func:`mglru_model`'s choice), so that a mismatch is read as what it is
    (docs/validation.md)."""
    notes: dict[str, str] = {}
    if policy == "mglru@6.15" and kernel_version(release) < (6, 14):
        for t in ("anon", "file"):
            notes[f"workingset_activate_{t}"] = (
                f"kernel {release} counts every recent MGLRU refault; v6.14+ (the model) only those in a page fault")
    return notes


def targets_for(wl: Workload) -> dict[str, float]:
    return dict(ANON_TARGETS) if wl.anon_pages and not wl.file_pages else dict(FILE_TARGETS)


def compare(real: list[dict[str, int]], sim: dict[str, int], targets: dict[str, float],
            counters: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per counter: name, real mean, sd, n, simulated, relative error, target, met.
    ``counters`` defaults to the targets, then context counters either side counted."""
    names = counters or list(targets) + [c for c in CONTEXT if c not in targets and
                                         (sim.get(c) or any(r.get(c) for r in real))]
    rows = []
    for name in names:
        vals = [float(r.get(name, 0)) for r in real]
        mean = statistics.fmean(vals) if vals else 0.0
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        s = float(sim.get(name, 0))
        if mean:
            err = (s - mean) / mean
        else:
            err = 0.0 if s == 0 else float("inf")
        tgt = targets.get(name)
        rows.append({"counter": name, "real_mean": mean, "real_sd": sd, "boots": len(vals), "sim": s,
                     "rel_error": err, "target": tgt, "met": None if tgt is None else abs(err) <= tgt})
    return rows
