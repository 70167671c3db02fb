"""DAMON_RECLAIM in the guest (``--damon-reclaim KEY=VALUE[,...]``): the module's
parameters checked before anything boots, passed on the kernel command line (a built-in
module's parameters are ``damon_reclaim.KEY=VALUE`` there), read back by /init, and the
module's statistics and the workload's footprint over time parsed from the console.

The guest enables the module just before the workload starts (guest/init.sh) and samples
the workload cgroup's ``memory.current`` and the module's statistics while it runs
(``@@sample`` lines), so the footprint can be compared with the simulator's over the
run's progress (docs/kernel.md, "DAMON_RECLAIM")."""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelError

#: The module's writable parameters in 6.12 (mm/damon/reclaim.c and modules-common.h of
#: linux-source-6.12; ``enabled`` is written by /init, ``commit_inputs`` is not needed:
#: the module reads them when it is enabled).
PARAMS = ("min_age", "quota_ms", "quota_sz", "quota_reset_interval_ms", "quota_mem_pressure_us",
          "quota_autotune_feedback", "wmarks_interval", "wmarks_high", "wmarks_mid", "wmarks_low",
          "sample_interval", "aggr_interval", "min_nr_regions", "max_nr_regions", "monitor_region_start",
          "monitor_region_end", "skip_anon")
BOOL_PARAMS = ("skip_anon",)
#: Its read-only statistics (DEFINE_DAMON_MODULES_DAMOS_STATS_PARAMS), the simulator's
#: metrics of the same names.
STATS = ("nr_reclaim_tried_regions", "bytes_reclaim_tried_regions", "nr_reclaimed_regions",
         "bytes_reclaimed_regions", "nr_quota_exceeds")
#: Where /init samples them, and the footprint, while the workload runs (guest seconds).
SAMPLE_INTERVAL_S = 0.5


def parse(text: str) -> dict[str, str]:
    """``KEY=VALUE[,KEY=VALUE...]`` -> {param: value}, values as the kernel parses them
    (unsigned longs; Y/N for ``skip_anon``). An unknown key or a bad value is an error."""
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        k, eq, v = item.partition("=")
        k, v = k.strip(), v.strip()
        if not eq or not v:
            raise KernelError(f"--damon-reclaim: expected KEY=VALUE, got {item!r}")
        if k not in PARAMS:
            why = "read-only statistic" if k in STATS else "not a parameter"
            if k in ("enabled", "commit_inputs", "kdamond_pid"):
                why = "set by reclaimlab" if k != "kdamond_pid" else "read-only"
            raise KernelError(f"--damon-reclaim: {k}: {why} of /sys/module/damon_reclaim/parameters "
                              f"(known: {', '.join(PARAMS)})")
        if k in BOOL_PARAMS:
            b = {"y": "Y", "1": "Y", "true": "Y", "n": "N", "0": "N", "false": "N"}.get(v.lower())
            if b is None:
                raise KernelError(f"--damon-reclaim: {k}={v}: expected Y or N")
            v = b
        elif not v.isdigit() or int(v) >= 1 << 64:
            raise KernelError(f"--damon-reclaim: {k}={v}: expected an unsigned integer (kernel units: "
                              f"µs, ms, bytes or per-mille as `reclaimlab knobs damon_reclaim` says)")
        out[k] = v
    return out


def sim_keys(params: dict[str, str]) -> dict[str, str]:
    """The simulator's config keys for the module's parameters."""
    return {"damon_reclaim.enabled": "Y", **{f"damon_reclaim.{k}": v for k, v in params.items()}}


def check(params: dict[str, str], guest_bytes: int) -> None:
    """The checks the kernel makes when the module is enabled (the simulator's, which
    name the key: watermarks high >= mid >= low, intervals, region counts, start <= end)
    and that an explicit monitoring region lies in the guest's RAM."""
    from .. import _core

    c = _core.Config()
    try:
        for k, v in sim_keys(params).items():
            c.set(k, v)
        c.validate()
    except Exception as e:  # the core's error names the damon_reclaim.* key
        raise KernelError(f"--damon-reclaim: {e}") from None
    start, end = int(params.get("monitor_region_start", 0)), int(params.get("monitor_region_end", 0))
    if (start or end) and end > guest_bytes:
        raise KernelError(f"--damon-reclaim: monitor_region_end={end:#x} is outside the guest's RAM "
                          f"(0..{guest_bytes:#x}, --guest-memory)")


INTERFACES = ("module", "sysfs")


def module_drops_scheme(release: str) -> bool:
    """True for kernels whose DAMON_RECLAIM module runs without its scheme: from v6.11
    (11ddcfc257a3 "mm/damon/reclaim: use damon_commit_ctx()") its
    damon_reclaim_apply_parameters() stages the monitoring attributes and the scheme on the
    running context instead of the parameter context, and damon_commit_ctx() then commits
    the parameter context, which has no scheme, over it: damon_commit_schemes() destroys
    the scheme, and the default attributes replace the module's. kdamond monitors and never
    acts (a 6.12.117 guest: 0 regions tried in 30 s with idle regions of age 77, no
    damos_before_apply event). Fixed by "mm/damon/reclaim: use parameter context
    correctly" (v6.17; not in Debian's 6.12.117)."""
    from .validate import kernel_version

    return (6, 11) <= kernel_version(release) < (6, 17)


def interface_for(release: str, asked: str | None) -> str:
    """How the guest runs DAMON_RECLAIM: as asked, else the module where it works and,
    where it drops its scheme (:func:`module_drops_scheme`), the module's scheme built
    through DAMON's sysfs interface."""
    if asked is not None:
        if asked not in INTERFACES:
            raise KernelError(f"--damon-interface {asked}: must be module or sysfs")
        return asked
    return "sysfs" if module_drops_scheme(release) else "module"


def kernel_args(params: dict[str, str], interface: str) -> list[str]:
    """The kernel command line: every parameter as ``damon_reclaim.KEY=VALUE`` (built-in
    module parameters, parsed by the kernel at boot; the sysfs path reads them back from
    there) and ``lab.damon=INTERFACE``, which has /init start it with the workload."""
    return [f"damon_reclaim.{k}={v}" for k, v in params.items()] + [f"lab.damon={interface}"]


@dataclass
class Sample:
    """One ``@@sample`` line: guest uptime (s), the workload cgroup's memory.current
    (bytes) and the module's bytes_reclaimed_regions so far."""

    t: float
    memory_current: int
    bytes_reclaimed: int


#: Targets of the comparison (issue 18): bytes tried and reclaimed within 25 %, the memory
#: saving within 5 percentage points; the region counts and quota exceeds are shown.
STAT_TARGETS = {"bytes_reclaim_tried_regions": 0.25, "bytes_reclaimed_regions": 0.25}
SAVING_TARGET_PP = 5.0
#: Points of the footprint curves reported (progress 0, 1/N, ..., 1).
CURVE_POINTS = 20


def guest_stats(c) -> dict[str, int]:
    """The module's statistics as the guest printed them after the workload."""
    return {k: int(c.damon_reclaim[k]) for k in STATS if k in c.damon_reclaim}


def guest_footprint(c) -> tuple[list[float], list[float]]:
    """(seconds since the first sample, memory.current) while the workload ran: the last
    sample, taken after it exited, is left out."""
    s = c.samples[:-1] if len(c.samples) > 2 else c.samples
    return [x.t - s[0].t for x in s], [float(x.memory_current) for x in s]


def sim_footprint(series: dict[str, list[float]], cgroup: str) -> tuple[list[float], list[float]]:
    """The simulator's (time_s, memory.current of ``cgroup``) series."""
    return list(series.get("time_s", [])), list(series.get(f"memcg.{cgroup}.memory.current_bytes", []))


def time_average(ts: list[float], vs: list[float]) -> float | None:
    """The time-weighted mean of a sampled curve (trapezoids), None without two samples."""
    if len(ts) < 2 or ts[-1] <= ts[0]:
        return None
    area = sum((ts[i + 1] - ts[i]) * (vs[i] + vs[i + 1]) / 2 for i in range(len(ts) - 1))
    return area / (ts[-1] - ts[0])


def curve(ts: list[float], vs: list[float], points: int = CURVE_POINTS) -> list[list[float]]:
    """[progress, value] at ``points + 1`` evenly spaced fractions of the run (linear
    interpolation): curves of runs of different lengths side by side."""
    import numpy as np

    if len(ts) < 2 or ts[-1] <= ts[0]:
        return []
    x = (np.asarray(ts) - ts[0]) / (ts[-1] - ts[0])
    grid = np.linspace(0, 1, points + 1)
    return [[float(g), float(v)] for g, v in zip(grid, np.interp(grid, x, np.asarray(vs)))]


def saving(avg: float | None, base: float | None) -> float | None:
    """1 - avg / base in percent: how much less memory the workload held on average."""
    return None if not avg or not base else 100.0 * (1.0 - avg / base)


def compare(consoles: list, base_consoles: list, sim: dict, sim_base: dict, cgroup: str) -> dict:
    """Kernel vs simulator for DAMON_RECLAIM: one row per statistic (the rows of
    :func:`.validate.compare`), a memory-saving row graded in percentage points, and the
    footprint curves. ``sim``/``sim_base`` are :func:`.validate.simulate` results with and
    without the module; ``base_consoles`` the guest's boots without it."""
    from .validate import compare as compare_rows

    rows = compare_rows([guest_stats(c) for c in consoles], {k: sim["metrics"].get(k, 0) for k in STATS},
                        STAT_TARGETS, counters=list(STATS))
    base = [time_average(*guest_footprint(c)) for c in base_consoles]
    base = [b for b in base if b]
    base_avg = sum(base) / len(base) if base else None
    real = [saving(time_average(*guest_footprint(c)), base_avg) for c in consoles]
    real = [r for r in real if r is not None]
    sim_saving = saving(time_average(*sim_footprint(sim["series"], cgroup)),
                        time_average(*sim_footprint(sim_base["series"], cgroup)))
    if real and sim_saving is not None:
        import statistics

        mean = statistics.fmean(real)
        rows.append({"counter": "memory_saving_pct", "real_mean": mean,
                     "real_sd": statistics.stdev(real) if len(real) > 1 else 0.0, "boots": len(real),
                     "sim": sim_saving, "rel_error": (sim_saving - mean) / mean if mean else float("inf"),
                     "target": None, "target_pp": SAVING_TARGET_PP,
                     "met": abs(sim_saving - mean) <= SAVING_TARGET_PP, "comparable": True})
    cpu = [int(c.damon_reclaim["kdamond_ticks"]) / 100 / max(1e-9, guest_footprint(c)[0][-1])
           for c in consoles if "kdamond_ticks" in c.damon_reclaim and len(c.samples) > 1]
    return {"rows": rows,
            "footprint": {"kernel": [curve(*guest_footprint(c)) for c in consoles],
                          "kernel_baseline": [curve(*guest_footprint(c)) for c in base_consoles],
                          "simulator": curve(*sim_footprint(sim["series"], cgroup)),
                          "simulator_baseline": curve(*sim_footprint(sim_base["series"], cgroup))},
            "kdamond_cpu_pct": {"kernel": [100 * x for x in cpu], "simulator": sim["metrics"].get("damon_cpu_pct")}}
