"""DAMON_RECLAIM, kernel vs simulator (``validate --damon-reclaim``): the module's
statistics, the memory saving against a run without it, the footprint curves, and DAMON's
own regions per aggregation binned into idle, warm and hot bytes (docs/kernel.md,
"DAMON_RECLAIM")."""

from __future__ import annotations

from dataclasses import replace

from .damon import STATS, Snapshot
from .validate import boot_machine_settings, mean_sd, sim_vmstat, time_average


#: Targets of the comparison (issue 18): bytes tried and reclaimed within 25 %, the memory
#: saving within 5 percentage points; the region counts and quota exceeds are shown.
STAT_TARGETS = {"bytes_reclaim_tried_regions": 0.25, "bytes_reclaimed_regions": 0.25}
#: DAMON's monitoring: the bytes it saw accessed per aggregation (warm + hot), averaged
#: over the run, within 25 %; the hot part and the number of regions are shown.
SNAPSHOT_TARGETS = {"damon_accessed_bytes": 0.25}
SAVING_TARGET_PP = 5.0
#: Simulated runs per comparison, seeds 1..N. The guest's boots replay one trace and differ
#: by DAMON's random sampling (`damon_rand`: a random address of each region per sample), its
#: timing, and where the workload's pages lie in physical memory, which the paddr scheme
#: watches (each boot starts from its own free lists); the simulator is deterministic per
#: seed, which seeds its kdamond's sampling, and seed k starts from boot k's layout in turn
#: (:func:`seed_layout`). So the kernel's mean over boots is compared with the model's mean
#: over seeds, and each row carries the model's spread (``sim_sd``) beside the kernel's.
SIM_SEEDS = 10
#: Points of the footprint curves reported (progress 0, 1/N, ..., 1).
CURVE_POINTS = 20


def seed_layout(consoles: list, seed: int, settings: dict[str, str]) -> dict[str, str]:
    """The machine of boot ``(seed - 1) % boots`` for the model's run of ``seed`` (1, 2, ...):
    its start layout with its own MemTotal and held memory (:func:`.validate.boot_machine_settings`),
    so the seeds go through the boots' layouts in turn as seed 1 has the first boot's
    (:func:`.validate.sim_settings`). Empty where the run has no start layout (``settings``)
    or that boot's console lacks it."""
    if not consoles or "machine.start_layout" not in settings:
        return {}
    return boot_machine_settings(consoles[(seed - 1) % len(consoles)], settings)


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


def guest_cpu_pct(consoles: list) -> list[float]:
    """kdamond's CPU share per boot, in per cent of the guest's wall time over the samples
    (``kdamond_ticks``, USER_HZ 100)."""
    return [100 * int(c.damon_reclaim["kdamond_ticks"]) / 100 / max(1e-9, guest_footprint(c)[0][-1])
            for c in consoles if "kdamond_ticks" in c.damon_reclaim and len(c.samples) > 1]


def kdamond_slowdown(consoles: list, sim_cpu_pct: float | None) -> float | None:
    """How many times longer the guest's kdamond takes for the run's work than the model's
    kdamond at its cost.* (``--damon-cost measured``): the guest's mean CPU share over the
    boots (:func:`guest_cpu_pct`, wall clock) over the model's ``damon_cpu_pct`` for the
    same run (its simulated clock; the DAMON rows run at a time dilation of about 1).
    Measured on monitoring and actions together, at the model's cost.* speed; None
    without both."""
    cpu = guest_cpu_pct(consoles)
    if not cpu or not sim_cpu_pct or sim_cpu_pct <= 0:
        return None
    return sum(cpu) / len(cpu) / sim_cpu_pct


def guest_quota(consoles: list, quota_ms: int) -> dict[str, float] | None:
    """The guest scheme's effective size quota (``@@quota``: ``damos_quota.esz``) over the
    boots: per boot the mean of its samples once set (6.12.117 runs its first charge window
    with esz 0) and the last; with a time quota, the last over ``quota_ms``: the lifetime
    throughput (bytes per charged ms) ``damos_set_effective_quota`` measured, unless
    ``quota_sz`` capped it. None without samples (a guest before they were recorded, or the module interface)."""
    per = [[q.esz for q in c.quota_samples if q.esz] for c in consoles]
    if not per or not all(per):
        return None
    avg, avg_sd = mean_sd([sum(p) / len(p) for p in per])
    last, last_sd = mean_sd([float(p[-1]) for p in per])
    out = {"esz_avg": avg, "esz_avg_sd": avg_sd, "esz_last": last, "esz_last_sd": last_sd}
    sz = [int(c.damon_reclaim.get("quota_sz", 0) or 0) for c in consoles]
    if quota_ms and not any(s and p[-1] >= s for s, p in zip(sz, per)):  # a quota_sz cap hides the throughput
        out["bytes_per_ms"], out["bytes_per_ms_sd"] = mean_sd([p[-1] / quota_ms for p in per])
    return out


def sim_quota(sims: list[dict], quota_ms: int) -> dict[str, float] | None:
    """The model's effective size quota over seeds: ``damon_quota_esz_bytes_avg`` (mean
    over its charge windows), ``_last``, and with a time quota the lifetime throughput
    ``damon_quota_bytes_per_ms`` (not capped by ``quota_sz`` as esz is)."""
    ms = [s["metrics"] for s in sims if "damon_quota_esz_bytes_avg" in s["metrics"]]
    if not ms:
        return None
    avg, avg_sd = mean_sd([m["damon_quota_esz_bytes_avg"] for m in ms])
    last, last_sd = mean_sd([m["damon_quota_esz_bytes_last"] for m in ms])
    out = {"esz_avg": avg, "esz_avg_sd": avg_sd, "esz_last": last, "esz_last_sd": last_sd}
    bpm = [m["damon_quota_bytes_per_ms"] for m in ms if "damon_quota_bytes_per_ms" in m]
    if quota_ms and bpm:
        out["bytes_per_ms"], out["bytes_per_ms_sd"] = mean_sd(bpm)
    return out


def saving(avg: float | None, base: float | None) -> float | None:
    """1 - avg / base in percent: how much less memory the workload held on average."""
    return None if not avg or not base else 100.0 * (1.0 - avg / base)


def _with_sd(rows: list[dict], sds: dict[str, float]) -> list[dict]:
    for r in rows:
        if r["counter"] in sds:
            r["sim_sd"] = sds[r["counter"]]
    return rows


def compare(consoles: list, base_consoles: list, sims: list[dict], sim_base: dict, cgroup: str) -> dict:
    """Kernel vs simulator for DAMON_RECLAIM: one row per statistic (the rows of
    :func:`.validate.compare`), a memory-saving row graded in percentage points, and the
    footprint curves. ``sims`` are :func:`.validate.simulate` results with the module, one
    per seed (:data:`SIM_SEEDS`): each row's ``sim`` is their mean and ``sim_sd`` their
    spread; ``sim_base`` the run without it, ``base_consoles`` the guest's boots without
    it. The curves are the first seed's."""
    from .validate import compare as compare_rows

    sim = sims[0]
    stats = {k: mean_sd([s["metrics"].get(k, 0) for s in sims]) for k in STATS}
    rows = _with_sd(compare_rows([guest_stats(c) for c in consoles], {k: m for k, (m, _) in stats.items()},
                                 STAT_TARGETS, counters=list(STATS)), {k: sd for k, (_, sd) in stats.items()})
    base = [time_average(*guest_footprint(c)) for c in base_consoles]
    base = [b for b in base if b]
    base_avg = sum(base) / len(base) if base else None
    real = [saving(time_average(*guest_footprint(c)), base_avg) for c in consoles]
    real = [r for r in real if r is not None]
    sim_base_avg = time_average(*sim_footprint(sim_base["series"], cgroup))
    savings = [saving(time_average(*sim_footprint(s["series"], cgroup)), sim_base_avg) for s in sims]
    if real and all(x is not None for x in savings):
        mean, sd = mean_sd(real)
        sim_saving, sim_sd = mean_sd(savings)
        rows.append({"counter": "memory_saving_pct", "real_mean": mean, "real_sd": sd, "boots": len(real),
                     "sim": sim_saving, "sim_sd": sim_sd,
                     "rel_error": (sim_saving - mean) / mean if mean else float("inf"),
                     "target": None, "target_pp": SAVING_TARGET_PP,
                     "met": abs(sim_saving - mean) <= SAVING_TARGET_PP, "comparable": True})
    max_nr = max_nr_accesses(consoles[0])
    snaps = [snapshot_means(c.snapshots) for c in consoles if c.snapshots]
    snap_keys = ["damon_accessed_bytes", "damon_hot_bytes", "damon_nr_regions"]
    per_seed = [[replace(split_of(regions, max_nr), t=end / 1e9) for _t, _s, end, regions in s.get("snapshots") or []]
                for s in sims]
    sim_snaps = per_seed[0]
    if snaps and all(per_seed):
        means = [snapshot_means(p) for p in per_seed]
        ms = {k: mean_sd([m[k] for m in means]) for k in snap_keys}
        rows += _with_sd(compare_rows(snaps, {k: m for k, (m, _) in ms.items()}, SNAPSHOT_TARGETS, counters=snap_keys),
                         {k: sd for k, (_, sd) in ms.items()})
    if sims and all("nr_shmem" in s.get("vmstat", {}) for s in sims):
        # The root's tmpfs (the guest's initramfs, machine.kernel_shmem) kdamond paged out
        # beside the workload, in pages: shown only.
        m, sd = mean_sd([-sim_vmstat(s)["nr_shmem"] for s in sims])
        real_out = [{"shmem_paged_out": -c.vmstat().get("nr_shmem", 0)} for c in consoles]
        rows += _with_sd(compare_rows(real_out, {"shmem_paged_out": m}, {}, counters=["shmem_paged_out"]),
                         {"shmem_paged_out": sd})
    cpu = guest_cpu_pct(consoles)
    quota_ms = int(consoles[0].damon_reclaim.get("quota_ms", 0) or 0)
    return {"rows": rows,
            "footprint": {"kernel": [curve(*guest_footprint(c)) for c in consoles],
                          "kernel_baseline": [curve(*guest_footprint(c)) for c in base_consoles],
                          "simulator": curve(*sim_footprint(sim["series"], cgroup)),
                          "simulator_baseline": curve(*sim_footprint(sim_base["series"], cgroup))},
            "accessed": {"kernel": [curve(*accessed_series(c.snapshots)) for c in consoles],
                         "simulator": curve(*accessed_series(sim_snaps))},
            "snap_lost": [c.snap_lost or 0 for c in consoles],
            "quota": {"quota_ms": quota_ms, "kernel": guest_quota(consoles, quota_ms),
                      "simulator": sim_quota(sims, quota_ms)},
            "kdamond_cpu_pct": {"kernel": cpu,
                                "simulator": mean_sd([s["metrics"].get("damon_cpu_pct", 0.0) for s in sims])[0]},
            "sim_seeds": len(sims)}
