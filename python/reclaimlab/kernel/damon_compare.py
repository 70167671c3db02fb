"""DAMON_RECLAIM, kernel vs simulator (``validate --damon-reclaim``): the module's
statistics, the memory saving against a run without it, the footprint curves, and DAMON's
own regions per aggregation binned into idle, warm and hot bytes (docs/kernel.md,
"DAMON_RECLAIM")."""

from __future__ import annotations

from dataclasses import replace

from .damon import STATS, Snapshot


#: Targets of the comparison (issue 18): bytes tried and reclaimed within 25 %, the memory
#: saving within 5 percentage points; the region counts and quota exceeds are shown.
STAT_TARGETS = {"bytes_reclaim_tried_regions": 0.25, "bytes_reclaimed_regions": 0.25}
#: DAMON's monitoring: the bytes it saw accessed per aggregation (warm + hot), averaged
#: over the run, within 25 %; the hot part and the number of regions are shown.
SNAPSHOT_TARGETS = {"damon_accessed_bytes": 0.25}
SAVING_TARGET_PP = 5.0
#: Points of the footprint curves reported (progress 0, 1/N, ..., 1).
CURVE_POINTS = 20


def split_of(regions: list[tuple[int, int, int, int]], max_nr_accesses: int) -> Snapshot:
    """The simulator's snapshot (``(start, end, nr_accesses, age)`` per region) binned as
    the guest bins its tracepoint lines (guest/init.sh)."""
    idle = warm = hot = 0
    for start, end, nr, _age in regions:
        if nr == 0:
            idle += end - start
        elif nr * 4 < max_nr_accesses:
            warm += end - start
        else:
            hot += end - start
    return Snapshot(0.0, len(regions), idle, warm, hot)


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


def max_nr_accesses(c) -> int:
    """Samples per aggregation (``aggr_interval / sample_interval``) as the guest ran."""
    p = c.damon_reclaim
    return int(p.get("aggr_interval", 100000)) // max(1, int(p.get("sample_interval", 5000)))


def snapshot_means(snaps: list[Snapshot]) -> dict[str, float]:
    """Per-aggregation means: bytes seen accessed (warm + hot), hot bytes, regions."""
    n = max(1, len(snaps))
    return {"damon_accessed_bytes": sum(s.warm + s.hot for s in snaps) / n,
            "damon_hot_bytes": sum(s.hot for s in snaps) / n,
            "damon_nr_regions": sum(s.nr_regions for s in snaps) / n}


def accessed_series(snaps: list[Snapshot]) -> tuple[list[float], list[float]]:
    """(time, bytes seen accessed) per aggregation."""
    return [s.t for s in snaps], [float(s.warm + s.hot) for s in snaps]


def aggregation_s(consoles: list) -> float | None:
    """kdamond's mean aggregation interval in the guest (between its ``@@snap`` lines),
    over the boots: the nominal ``aggr_interval`` plus what kdamond's own work adds to each
    of its samples (kdamond_fn sleeps ``sample_interval`` after its work, not including
    it), which TCG makes several times longer than on hardware."""
    gaps = [b.t - a.t for c in consoles for a, b in zip(c.snapshots, c.snapshots[1:])]
    return sum(gaps) / len(gaps) if gaps else None


def guest_schedule(consoles: list, params: dict[str, str]) -> dict[str, str]:
    """Simulator keys that give its kdamond the guest's measured sampling schedule: the
    sample and aggregation intervals stretched to the measured aggregation, and ``min_age``
    with them (the scheme's age threshold stays the same number of aggregations). The
    charge windows and the watermark checks are timers and keep their periods."""
    from .. import _core

    measured = aggregation_s(consoles)
    cfg = _core.Config()
    value = {k: int(params.get(k, cfg.get(f"damon_reclaim.{k}"))) for k in ("sample_interval", "aggr_interval", "min_age")}
    if not measured or not value["aggr_interval"]:
        return {}
    stretch = measured * 1e6 / value["aggr_interval"]
    if stretch <= 1.0:
        return {}
    return {f"damon_reclaim.{k}": str(round(v * stretch)) for k, v in value.items()}


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
    max_nr = max_nr_accesses(consoles[0])
    snaps = [snapshot_means(c.snapshots) for c in consoles if c.snapshots]
    sim_snaps = [replace(split_of(regions, max_nr), t=end / 1e9) for _t, _s, end, regions in sim.get("snapshots") or []]
    if snaps and sim_snaps:
        rows += compare_rows(snaps, snapshot_means(sim_snaps), SNAPSHOT_TARGETS,
                             counters=["damon_accessed_bytes", "damon_hot_bytes", "damon_nr_regions"])
    cpu = [int(c.damon_reclaim["kdamond_ticks"]) / 100 / max(1e-9, guest_footprint(c)[0][-1])
           for c in consoles if "kdamond_ticks" in c.damon_reclaim and len(c.samples) > 1]
    return {"rows": rows,
            "footprint": {"kernel": [curve(*guest_footprint(c)) for c in consoles],
                          "kernel_baseline": [curve(*guest_footprint(c)) for c in base_consoles],
                          "simulator": curve(*sim_footprint(sim["series"], cgroup)),
                          "simulator_baseline": curve(*sim_footprint(sim_base["series"], cgroup))},
            "accessed": {"kernel": [curve(*accessed_series(c.snapshots)) for c in consoles],
                         "simulator": curve(*accessed_series(sim_snaps))},
            "kdamond_cpu_pct": {"kernel": [100 * x for x in cpu], "simulator": sim["metrics"].get("damon_cpu_pct")}}
