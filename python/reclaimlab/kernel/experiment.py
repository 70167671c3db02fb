"""``reclaimlab kernel run`` and ``validate`` as functions: boot, store each finished boot
at once (a crash keeps what was done), and for ``validate`` simulate the same sequence
and compare."""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..results import Store
from . import LAB, KernelError, console, cpu_cost, damon, damon_compare, store
from .ops import CGROUP
from .console import Console
from .run import GUEST_MB, Prepared, Setup, prepare, run
from .validate import (boot_machine_settings, cgroup_rows, compare, definition_notes, guest_wall_s, kernel_config,
                       mark_not_comparable, mean_counts, policy_of, sim_settings, sim_vmstat, simulate, targets_for,
                       wakeup_mean, with_derived)


def key_of(setup: Setup, p: Prepared) -> dict[str, str]:
    """What identifies a configuration of boots: the request, resolved."""
    return {"kernel": p.kernel.release, "package": p.kernel.package, "mglru": setup.mglru or "default",
            "memory.max": "max" if p.memory_max is None else str(p.memory_max), "zram": str(p.zram),
            "swappiness": str(setup.swappiness), "guest_mb": str(setup.guest_mb), "workload": p.wl.spec,
            **_guest_options(setup, p)}


def params_of(setup: Setup, p: Prepared) -> dict[str, str]:
    """The run's ``params`` in the store (what tables group boots by): every setting that
    changes the guest."""
    return {"source": "kernel", "kernel": p.kernel.release, "mglru": setup.mglru or "default",
            "workload": p.wl.spec, "memory": str(setup.memory),
            **({"swappiness": str(setup.swappiness)} if setup.swappiness is not None else {}),
            **({"guest_mb": str(setup.guest_mb)} if setup.guest_mb != GUEST_MB else {}),
            **_guest_options(setup, p)}


def _guest_options(setup: Setup, p: Prepared) -> dict[str, str]:
    """Guest options that identify boots only when not at the value every boot had before
    the option existed (the defaults of tick and smp, the laboratory settings LAB of
    readahead, fault-around and THP), so that those boots keep their key."""
    opts = {"tick_us": setup.tick_us, "smp": setup.smp, "nodes": p.nodes, "read_ahead_kb": p.read_ahead_kb,
            "fault_around_bytes": p.fault_around_bytes, "thp": setup.thp or "default",
            "damon_reclaim": None if p.damon_reclaim is None else
            f"{p.damon_interface}:" + (",".join(f"{k}={v}" for k, v in sorted(p.damon_reclaim.items())) or "defaults"),
            "sample": setup.sample, "cgroup_set": ",".join(sorted(setup.cgroup_set)),
            "pcp_high_fraction": setup.pcp_high_fraction, "pin_cpus": setup.pin_cpus,
            "watermark_boost_factor": setup.watermark_boost_factor,
            "vmscan_trace": int(setup.vmscan_trace), "wb_sample": setup.wb_sample, "damon_action": setup.damon_action}
    before = {"tick_us": 0, "smp": Setup.smp, "nodes": 1, **LAB, "damon_reclaim": None, "sample": False, "cgroup_set": "",
              "pcp_high_fraction": None, "pin_cpus": False, "watermark_boost_factor": None, "vmscan_trace": 0, "wb_sample": False,
              "damon_action": None}
    return {k: str(v) for k, v in opts.items() if v != before[k]}


def record(setup: Setup, out: Path, progress: bool = True,
           prep: Prepared | None = None) -> tuple[Prepared, list[Console]]:
    """Boot ``setup.boots`` more times; every finished boot goes into ``out``'s store."""
    prep = prep or prepare(setup)  # all input errors before anything is built or booted
    key = key_of(setup, prep)
    first = store.next_repetition(out, key)
    consoles: list[Console] = []

    def on_boot(i: int, b: Any, c: Console) -> None:
        consoles.append(c)
        cfg = kernel_config(prep, [c], b.accel)
        finished = time.time()
        runrec = store.boot_run(c, key=key, params=params_of(setup, prep), config=cfg, repetition=first + i,
                                workload=prep.wl.spec, policy=f"kernel {c.release} ({policy_of(c)})",
                                started=finished - b.wall_s, finished=finished, worker=f"qemu-{b.accel}",
                                phase_names=prep.wl.phases, log=str(b.log),
                                host={"host.other_cpus": b.other_cpus, "host.qemu_cpu_s": b.qemu_cpu_s})
        store.add_boot(out, runrec)

    run(prep, out, progress=progress, on_boot=on_boot)
    return prep, consoles


def baseline_setup(setup: Setup) -> Setup:
    """The DAMON_RECLAIM comparison's baseline: the same workload without the module, one
    boot, sampled (``--damon-cost`` is the module's: not asked of it)."""
    return replace(setup, damon_reclaim=None, damon_interface=None, damon_action=None, sample=True, boots=1, damon_cost="model")


def validate(setup: Setup, out: Path, progress: bool = True) -> dict[str, Any]:
    """Boot, simulate, compare. Returns ``{"workload", "kernel", "policy", "settings",
    "boots", "rows", "notes", "not_comparable", "read_back", "time_dilation", "logs"}``
    and, with DAMON_RECLAIM, ``"damon_reclaim"`` (:func:`.damon_compare.compare`, after one
    more boot without it for the baseline); the simulated run is stored beside the boots
    (variant simulator)."""
    if setup.damon_action is not None:
        # Nothing to compare: the simulator's DAMON_RECLAIM pages out, as the module does.
        raise KernelError(f"--damon-action {setup.damon_action}: for `kernel run` (kdamond's monitoring cost in the "
                          "guest); validate compares the module's pageout scheme")
    prep = prepare(setup)
    prep, consoles = record(setup, out, progress, prep)
    base_prep, base_consoles = None, None
    if prep.damon_reclaim is not None:
        # The same workload without the module, once: the memory saving's baseline.
        base_prep, base_consoles = record(baseline_setup(setup), out, progress)
    res = compare_boots(setup, prep, consoles, out, base_consoles)
    res["boot_wall_s"] = [round(b.wall_s, 2) for b, _ in prep.boots]
    res["host_other_cpus"] = [b.other_cpus for b, _ in prep.boots]
    res["logs"] = {"kernel": [str(b.log) for b, _ in prep.boots],
                   "baseline": [str(b.log) for b, _ in base_prep.boots] if base_prep else []}
    return res


def revalidate(setup: Setup, out: Path, logs: dict[str, list[str]]) -> dict[str, Any]:
    """:func:`validate` from boots already made (their console ``logs``, as :func:`validate`
    returns them): the simulator runs again, nothing boots. For a model change."""
    def read(paths: list[str]) -> list[Console]:
        return [console.parse(Path(p).read_text(errors="replace")) for p in paths]

    prep = prepare(setup)
    res = compare_boots(setup, prep, read(logs["kernel"]), out, read(logs["baseline"]) if logs["baseline"] else None)
    res["logs"] = logs
    return res


def disk_writes(consoles: list[Console]) -> dict[str, float] | None:
    """The guest data disk's writes during the workload, averaged over boots (None if a
    boot lacks its statistics or wrote nothing): pages and requests, ms per request, and
    the wall time it was busy writing per page (:attr:`console.DiskWrites.ns_per_page`)."""
    ds = [c.disk_writes() for c in consoles]
    if not ds or any(d is None or not d.pages for d in ds):
        return None
    mean = statistics.fmean
    return {"pages_written": mean(d.pages for d in ds), "writes": mean(d.writes for d in ds),
            "ms_per_write": mean(d.ms_per_write for d in ds), "wall_ns_per_page": mean(d.ns_per_page for d in ds)}


def disk_reads(consoles: list[Console]) -> dict[str, float] | None:
    """The guest data disk's reads and kswapd's CPU during the workload, averaged over boots
    (None if a boot lacks the disk statistics or read nothing): read requests, the wall time
    the disk was busy per request (:attr:`console.DiskWrites.ns_per_read`), and, where the
    guest reported them (``@@kthread``), kswapd's CPU ticks."""
    ds = [c.disk_writes() for c in consoles]
    if not ds or any(d is None or d.ns_per_read is None for d in ds):
        return None
    mean = statistics.fmean
    out = {"reads": mean(d.reads for d in ds), "wall_ns_per_read": mean(d.ns_per_read for d in ds)}
    ticks = [c.kswapd_ticks() for c in consoles]
    if all(t is not None for t in ticks):
        out["kswapd_ticks"] = mean(ticks)
    out.update(kswapd_wakeups(consoles) or {})
    return out


def _measured(mode: str, option: str, figures: dict[str, float] | None, key: str,
              missing: str) -> tuple[dict[str, float] | None, float | None]:
    """``(figures, figures[key])`` with ``mode`` "measured", else ``(figures, None)``; a
    :class:`KernelError` ("OPTION measured: MISSING") if the boots lack the figure."""
    if mode != "measured":
        return figures, None
    if figures is None or figures.get(key) is None:
        raise KernelError(f"{option} measured: {missing}")
    return figures, figures[key]


def disk_for(setup: Setup, consoles: list[Console]) -> tuple[dict[str, float] | None, float | None]:
    """The guest disk's writes (:func:`disk_writes`) and, with ``--disk-write measured``, its
    wall time per page for the simulator; a :class:`KernelError` if that was asked of boots
    without the statistics."""
    return _measured(setup.disk_write, "--disk-write", disk_writes(consoles), "wall_ns_per_page",
                     "a boot has no data-disk statistics (@@blkstat, from a guest before they were recorded) "
                     "or wrote no page")


def read_disk_for(setup: Setup, consoles: list[Console]) -> tuple[dict[str, float] | None, float | None]:
    """:func:`disk_for` for reads (``--disk-read measured``)."""
    return _measured(setup.disk_read, "--disk-read", disk_reads(consoles), "wall_ns_per_read",
                     "a boot has no data-disk statistics (@@blkstat, from a guest before they were recorded) "
                     "or read nothing")


def placement_settings(c: Console, mode: str) -> dict[str, str]:
    """``machine.task_cpus`` for a boot with ``--cpu-placement measured`` (nothing with
    "model"): the CPUs its workload ran on and when (:meth:`Console.task_cpus`); a
    :class:`KernelError` if the boot did not record them."""
    if mode == "model":
        return {}
    moves = c.task_cpus()
    if moves is None:
        raise KernelError("--cpu-placement measured: a boot did not record where the workload ran "
                          "(@@swcpu, a /wl workload booted since 28 Nov 2026, 13:21 UTC)")
    return {"machine.task_cpus": ",".join(f"{t:.6f}:{cpu}" for t, cpu in moves)}


#: The scripts' ``--kswapd-wakeup`` help (``reclaimlab validate --kswapd-wakeup``'s).
KSWAPD_WAKEUP_HELP = ("kswapd's wake-up latency in the simulator: model (cost.kswapd_wakeup_ns), mean (the boots' "
                      "traced latencies' mean, wakeup_kswapd to kswapd's pass, over the time dilation, waited at every "
                      "wake-up), measured (their distribution: each wake-up draws one) or progress (the same "
                      "draw, each window timed by the pages allocated in it at the boot's mean wall time per "
                      "page allocated), as reclaimlab validate --kswapd-wakeup")
#: How many quantiles (at 0, 1/K, ..., 1) stand for the traced latencies' distribution.
WAKEUP_QUANTILES = 100


def quantiles(xs: list[float], k: int = WAKEUP_QUANTILES) -> list[float]:
    """``xs``'s quantiles at 0, 1/k, ..., 1 (linear between the order statistics: numpy's
    default); at most ``len(xs)`` of them: a shorter sample is its sorted self."""
    s = sorted(xs)
    if len(s) <= k + 1:
        return [float(x) for x in s]
    out = []
    for i in range(k + 1):
        pos = i * (len(s) - 1) / k
        j = min(int(pos), len(s) - 2)
        out.append(s[j] + (s[j + 1] - s[j]) * (pos - j))
    return out


def kswapd_wakeups(consoles: list[Console]) -> dict[str, Any] | None:
    """kswapd's traced wake-ups (``@@kswapd_wake``) over the boots, whether or not the boots
    read the data disk: how many a boot, their mean latency and its quantiles over the boots'
    wake-ups pooled (wall ns, :func:`quantiles`); None without one."""
    wakes = [w for c in consoles for w, _ in c.kswapd_wakes]
    if not wakes:
        return None
    out = {"kswapd_wakes": len(wakes) / len(consoles), "wakeup_wall_ns": statistics.fmean(wakes) * 1e3,
           "wakeup_wall_ns_quantiles": [q * 1e3 for q in quantiles(wakes)]}
    if all(c.kswapd_wake_pages and len(c.kswapd_wake_pages) == len(c.kswapd_wakes) for c in consoles):
        out.update(window_pages(p for c in consoles for p, _ in c.kswapd_wake_pages))
        out["window_waker_pages_mean"] = statistics.fmean(w for c in consoles for _, w in c.kswapd_wake_pages)
        per_page = [wall_ns_per_page(c) for c in consoles]
        if all(x is not None for x in per_page):
            progress = [p * x for c, x in zip(consoles, per_page) for p, _ in c.kswapd_wake_pages]
            out["progress_wall_ns"] = statistics.fmean(progress)
            out["progress_wall_ns_quantiles"] = quantiles(progress)
    return out


def wall_ns_per_page(c: Console) -> float | None:
    """The boot's workload wall time (its phases) over the pages allocated meanwhile
    (``pgalloc_*`` summed over the zones, every task's, as ``@@kswapd_wake``'s PAGES); None
    without either."""
    wall = sum(ph.wall_ns for ph in c.phases)
    pages = sum(v for k, v in c.vmstat().items() if k.startswith("pgalloc_"))
    return wall / pages if wall > 0 and pages > 0 else None


def window_pages(pages) -> dict[str, float]:
    """The pages allocated per wake-up window (the guest's ``@@kswapd_wake`` PAGES pooled over
    the boots): their mean and the 50th and 90th percentiles, as the model's
    ``kswapd_wake_window_pages_*`` metrics name them."""
    s = list(pages)
    q = quantiles(s)
    at = (lambda f: q[round(f * (len(q) - 1))])
    return {"window_pages_mean": statistics.fmean(s), "window_pages_p50": at(0.5), "window_pages_p90": at(0.9)}


def wakeup_note(modes) -> str:
    """A generated table's sentence on the kswapd wake-up latency its rows were simulated with
    (their ``kswapd_wakeup`` modes; "" for the model's alone)."""
    modes = set(modes) - {"model", None}
    if not modes:
        return ""
    if modes == {"progress"}:
        return ("kswapd's wake-up latency in the model: each wake-up draws one from the boots' traced windows "
                "(`@@kswapd_wake`, wakeup_kswapd to kswapd's pass), each timed by the pages allocated in it at "
                "the boot's wall time per page allocated, over the time dilation (`--kswapd-wakeup progress`); "
                "configurations whose boots never woke kswapd keep the model's 0.")
    if modes == {"mean"}:
        return ("kswapd's wake-up latency in the model: the boots' traced mean (`@@kswapd_wake`, wakeup_kswapd to "
                "kswapd's pass) over the time dilation, at every wake-up (`--kswapd-wakeup mean`).")
    return ("kswapd's wake-up latency in the model: each wake-up draws one from the boots' traced latencies "
            "(`@@kswapd_wake`, wakeup_kswapd to kswapd's pass; their quantiles over the time dilation, "
            "`--kswapd-wakeup measured`); configurations whose boots never woke kswapd keep the model's 0.")


def wakeup_of(mode: str, wakes: dict[str, Any] | None) -> float | list[float] | None:
    """The latency ``--kswapd-wakeup MODE`` gives the simulator from :func:`kswapd_wakeups`
    (wall ns): None ("model", or no wake-up traced), the mean ("mean"), the quantiles
    ("measured")."""
    if mode == "model" or wakes is None:
        return None
    if mode == "progress":
        if "progress_wall_ns_quantiles" not in wakes:
            raise KernelError("--kswapd-wakeup progress: a boot did not count the pages allocated in its wake-up "
                              "windows (@@kswapd_wake PAGES, from a guest before 28 Nov 2026) or its pgalloc_*")
        return wakes["progress_wall_ns_quantiles"]
    return wakes["wakeup_wall_ns"] if mode == "mean" else wakes["wakeup_wall_ns_quantiles"]


def wakeup_for(setup: Setup, consoles: list[Console]) -> float | list[float] | None:
    """With ``--kswapd-wakeup mean|measured``: the guest's kswapd wake-up latency (wall ns;
    :func:`wakeup_of`); None if the boots traced the wake-ups and kswapd never woke (memcg
    reclaim: the model's ``cost.kswapd_wakeup_ns`` stays); a :class:`KernelError` if a boot
    did not trace them."""
    mode = setup.kswapd_wakeup
    if mode == "model":
        return None
    wakes = kswapd_wakeups(consoles)
    if wakes is None and consoles and all(c.kswapd_wake_lost is not None for c in consoles):
        return None
    if wakes is None:
        raise KernelError(f"--kswapd-wakeup {mode}: no boot traced a kswapd wake-up (@@kswapd_wake, from a guest "
                          "before it was recorded, or kswapd never woke)")
    return wakeup_of(mode, wakes)


def kswapd_passes(consoles: list[Console], sim: dict[str, Any]) -> dict[str, Any] | None:
    """kswapd's passes beside the model's (boots traced with ``--vmscan-trace``): the
    boots' :meth:`Console.kswapd_passes` figures averaged, the model's ``kswapd_pass_*``
    metrics; and under MGLRU the workload memcg's ``max_seq`` at the end (how often each
    side aged it). None if no boot traced a pass."""
    got = [p for p in (c.kswapd_passes() for c in consoles) if p is not None]
    if not got:
        return None
    m = sim["metrics"]
    model = {k: m[f"kswapd_pass_{k}"] for k in ("reclaimed_mean", "reclaimed_p50", "reclaimed_p90",
                                                 "min_priority_mean") if f"kswapd_pass_{k}" in m}
    model |= {"passes": m.get("kswapd_shrinking_passes", 0.0), "empty": m.get("kswapd_empty_passes", 0.0)}
    out: dict[str, Any] = {"kernel": {k: statistics.fmean(p[k] for p in got) for k in got[0]}, "model": model,
                           "boots": len(got)}
    seqs = [s for s in (c.lru_gen_max_seq("/" + CGROUP) for c in consoles) if s is not None]
    if seqs and f"memcg.{CGROUP}.lru_gen.max_seq" in m:
        out["lru_gen_max_seq"] = {"kernel": statistics.fmean(seqs), "model": m[f"memcg.{CGROUP}.lru_gen.max_seq"]}
    return out


def boot_runs(consoles: list[Console], settings: dict[str, str], cpu_placement: str) -> list[dict[str, str]]:
    """One run's settings per boot: ``settings`` (made from the first boot's console) with
    that boot's own machine (:func:`.validate.boot_machine_settings`; kept as they are
    where its console lacks a start layout) and CPU placement (:func:`placement_settings`)."""
    return [{**settings, **boot_machine_settings(c, settings), **placement_settings(c, cpu_placement)} for c in consoles]


def mean_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Simulated runs as one: the first's configuration, each counter's and metric's mean
    (:func:`.validate.mean_counts`)."""
    return {**runs[0], "vmstat": mean_counts([r["vmstat"] for r in runs]),
            "metrics": mean_counts([r["metrics"] for r in runs])}


def compare_boots(setup: Setup, prep: Prepared, consoles: list[Console], out: Path,
                  base_consoles: list[Console] | None = None) -> dict[str, Any]:
    """The simulator on ``prep``'s workload with the guest's parameters, compared with the
    boots' ``consoles`` (and, for DAMON_RECLAIM, the baseline boots without it). A THP
    workload (thpscale, usemem) runs the model's THP scenario instead (:mod:`.thp_compare`)."""
    if prep.wl.thp is not None:
        from . import thp_compare

        res = thp_compare.compare_boots(prep, consoles, wakeup_for(setup, consoles), setup.cpu_cost)
        return {**res, "mglru": setup.mglru or "default", "notes": {}, "not_comparable": None,
                "kswapd_wakeup": setup.kswapd_wakeup,
                "read_back": consoles[0].read_back(), "time_dilation": float(res["settings"].get("sim.time_dilation", 1))}
    settings = {**sim_settings(prep, consoles), **placement_settings(consoles[0], setup.cpu_placement)}
    damon_res = None
    if prep.damon_reclaim is not None:
        sim_base = simulate(prep.wl, settings, out, guest_wall_s(base_consoles))
        settings = {**settings, **damon.sim_keys(prep.damon_reclaim),
                    **damon_compare.guest_schedule(consoles, prep.damon_reclaim)}
    disk, write_wall_ns = disk_for(setup, consoles)
    reads, read_wall_ns = read_disk_for(setup, consoles)
    wall, wakeup = guest_wall_s(consoles), wakeup_for(setup, consoles)
    slowdown, cpu = None, None
    if prep.memory_max is None and prep.damon_reclaim is None and len(consoles) > 1:
        # Whole-machine reclaim: where allocations fall back follows the free lists at the
        # start, which differ from boot to boot: each boot simulated on its own machine and
        # at its own wall time, the model's figures their means (as scripts/validate_suite.py's
        # rows). DAMON_RECLAIM's seeds go through the boots' layouts already.
        runs, figures = [], []
        for c, st in zip(consoles, boot_runs(consoles, settings, setup.cpu_placement)):
            w = guest_wall_s([c])
            one = simulate(prep.wl, st, out, w, write_wall_ns, read_wall_ns, wakeup)
            if setup.cpu_cost == "measured":
                one, st, fig = cpu_cost.measured(
                    [c], st, one, lambda s, w=w: simulate(prep.wl, s, out, w, write_wall_ns, read_wall_ns, wakeup))
                figures.append(fig)
            runs.append((one, st))
        sim = mean_run([r for r, _ in runs])
        cpu = {"per_boot": figures} if figures else None
    else:
        sim = simulate(prep.wl, settings, out, wall, write_wall_ns, read_wall_ns, wakeup)
        if prep.damon_reclaim is not None and setup.damon_cost == "measured":
            # kdamond's slowdown in the guest against this run at the model's cost.*; then
            # the run again with the time quota charged at the guest's speed.
            slowdown = damon_compare.kdamond_slowdown(consoles, sim["metrics"].get("damon_cpu_pct"))
            if slowdown is None:
                raise KernelError("--damon-cost measured: no boot reported kdamond's CPU time (@@damon_reclaim "
                                  "kdamond_ticks, from a guest before it was recorded) or the model's kdamond did no work")
            settings = {**settings, "sim.kdamond_slowdown": f"{slowdown:.4g}"}
            sim = simulate(prep.wl, settings, out, wall, write_wall_ns, read_wall_ns, wakeup)
        if setup.cpu_cost == "measured":
            sim, settings, cpu = cpu_cost.measured(
                consoles, settings, sim, lambda s: simulate(prep.wl, s, out, wall, write_wall_ns, read_wall_ns, wakeup))
        runs = [(sim, settings)]
    sims = [sim]
    if prep.damon_reclaim is not None:
        # More seeds of kdamond's sampling (damon_compare.SIM_SEEDS), the boots' start layouts
        # in turn (damon_compare.seed_layout); the counters' rows stay the first's.
        sims += [simulate(prep.wl, {**settings, **damon_compare.seed_layout(consoles, seed, settings), "seed": str(seed)},
                          out, wall, write_wall_ns, read_wall_ns, wakeup)
                 for seed in range(2, damon_compare.SIM_SEEDS + 1)]
    if disk is not None:
        disk = {**disk, "disk_write": setup.disk_write, "sim_file_write_ns": int(sim["config"]["cost.file_write_ns"])}
    if reads is not None:
        reads = {**reads, "disk_read": setup.disk_read, "sim_file_read_ns": int(sim["config"]["cost.file_read_ns"]),
                 "time_dilation": float(sim["config"].get("sim.time_dilation", 1)),
                 "sim_kswapd_cpu_s": sim["metrics"].get("kswapd_cpu_s", 0.0),
                 "sim_kswapd_wakeup_ns": wakeup_mean(sim["config"]["cost.kswapd_wakeup_ns"]),
                 **{f"sim_{k[len('kswapd_wake_'):]}": v for k, v in sim["metrics"].items()
                    if k.startswith("kswapd_wake_window")}}
    if prep.damon_reclaim is not None:
        damon_res = damon_compare.compare(consoles, base_consoles, sims, sim_base, CGROUP)
        damon_res = {**damon_res, "damon_cost": setup.damon_cost,
                     **({"kdamond_slowdown": slowdown} if slowdown is not None else {})}
    whole_machine = prep.memory_max is None
    real = [with_derived(c.vmstat()) for c in consoles]
    rows = compare(real, mean_counts([sim_vmstat(r) for r, _ in runs]), targets_for(prep.wl, whole_machine))
    thp_note = mark_not_comparable(rows, real, whole_machine, sim["vmstat"])
    if reads is not None:
        # kswapd's CPU per page it scanned, both on the guest's wall clock.
        scanned = statistics.fmean(r.get("pgscan_kswapd", 0) for r in real)
        per_scan = {"kswapd_wall_ns_per_scan": cpu_cost.guest_kswapd_wall_ns_per_scan(reads.get("kswapd_ticks"), scanned),
                    "sim_kswapd_wall_ns_per_scan": cpu_cost.model_kswapd_wall_ns_per_scan(sim)}
        reads |= {k: v for k, v in per_scan.items() if v is not None}
    key = key_of(setup, prep)
    with Store(out) as s:
        from ..results import run_key

        for i, (r, st) in enumerate(runs):
            s.add_run({"run_id": run_key({**key, "variant": "simulator", **st}, 0), "variant": "simulator",
                       "params": {**params_of(setup, prep), "source": "simulator"}, "repetition": i, "seed": 0,
                       "policy": r["policy"], "workload": prep.wl.spec, "config": r["config"],
                       "started": r["started"], "finished": r["finished"], "worker": "simulator",
                       "metrics": r["metrics"], "vmstat": r["vmstat"], "timeseries": {}})
    return {"workload": prep.wl.spec, "kernel": consoles[0].release, "mglru": setup.mglru or "default",
            "policy": settings["policy"], "settings": settings, "boots": len(consoles), "sim_runs": len(runs), "rows": rows,
            "cgroup_rows": cgroup_rows(prep.wl, consoles, sim["metrics"]),
            "notes": definition_notes(consoles[0].release, settings["policy"]),
            "not_comparable": thp_note, "read_back": consoles[0].read_back(),
            "time_dilation": float(sim["config"].get("sim.time_dilation", 1)),
            "kswapd_wakeup": setup.kswapd_wakeup,
            **({"access_ns": round(sim["access_ns"], 1)} if sim.get("access_ns") else {}),
            **({"disk": disk} if disk else {}), **({"disk_reads": reads} if reads else {}),
            **({"cpu_cost": cpu} if cpu else {}),
            **({"kswapd_passes": passes} if (passes := kswapd_passes(consoles, sim)) else {}),
            **({"damon_reclaim": {"interface": prep.damon_interface, **damon_res}} if damon_res else {})}
