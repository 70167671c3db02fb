"""The THP/compaction/NUMA workloads (``thpscale``, ``usemem``: guest/thp.c) on the real
kernel against the model's THP scenarios (crates/core/src/scenario/thp.rs), sized to the
guest: its MemTotal, nodes, memory held before the workload, watermarks, zram, THP modes,
and the workload's thread counts and sizes (docs/validation.md, "THP, compaction and NUMA")."""

from __future__ import annotations

import statistics
from typing import Any

from . import KernelError
from .cpu_cost import RECLAIM_COSTS, guest_kswapd_wall_ns_per_scan, scaled
from .console import Console
from .run import Prepared
from .validate import (DILATION_TOLERANCE, at_guest_dilation, compare, mean_sd, node_memory_settings, sim_settings,
                       simulated_ns, start_layout_settings)

#: A PMD-mapped THP's order (x86-64: 2 MiB of 4 KiB pages) and its pages.
HPAGE_PMD_ORDER = 9
HPAGE_PMD_NR = 1 << HPAGE_PMD_ORDER

#: The THP allocation policy of 6.12: v5.5's alloc_pages_mpol (mm/mempolicy.c), but the local
#: __GFP_THISNODE | __GFP_NORETRY attempt never reclaims (9c9828d3ead6, 6.12.75), v5.1's
#: pageblock skip hints, and kcompactd's proactive compaction (v5.9).
POLICY = "thp@6.12"
#: Graded within 25 %: the THP and compaction counters.
TARGETS = {"thp_fault_alloc": 0.25, "thp_fault_fallback": 0.25, "thp_split_page": 0.25, "compact_stall": 0.25,
           "compact_success": 0.25, "compact_fail": 0.25, "pgmigrate_success": 0.25}
#: Graded on direction (between the thread counts) and shown with their error.
NUMA = ("numa_hit", "numa_miss")
#: Shown beside them.
CONTEXT = ("thp_deferred_split_page", "thp_split_pmd", "compact_daemon_wake", "compact_migrate_scanned",
           "compact_free_scanned", "pgscan_kswapd", "pgscan_direct", "pswpout", "allocstall", "drop_pagecache")
COUNTERS = (*TARGETS, *NUMA, *CONTEXT)
ALLOCSTALL = ("allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable")


def _derived(vm: dict[str, int]) -> dict[str, int]:
    return {**vm, "allocstall": sum(vm.get(k, 0) for k in ALLOCSTALL)}


def model_settings(p: Prepared, consoles: list[Console]) -> dict[str, str]:
    """The model's keys for the guest: the reclaim policy of its LRU (MGLRU on or off),
    machine.memory = the guest's MemTotal (what thpscale's MAPSIZE and usemem's shares are
    of), its nodes, the memory it held before the workload (machine.kernel_used), ZONE_DMA,
    watermarks, swappiness, zram, readahead and fault-around, THP modes as read back, and
    the THP policy of 6.12 (thp@6.12)."""
    c = consoles[0]
    s = {k: v for k, v in sim_settings(p, consoles, start_layout=False).items()
         if not k.startswith("cgroup.")}
    if c.thp_memtotal_kb:
        s["machine.memory"] = f"{c.thp_memtotal_kb}K"
    s["machine.nodes"] = str(c.thp_nodes or len(c.nodes()) or p.nodes)
    # Each node's size as the guest's (its reserved memory makes them unequal), then where
    # the free pages were: the model's zones are the guest's sizes.
    s.pop("machine.node_memory", None)
    s.update(node_memory_settings(c, s))
    s.update(start_layout_settings(c, s))
    if c.thp_mode:
        s["transparent_hugepage.enabled"] = c.thp_mode
    defrag = _selected(c.thp_defrag)
    if defrag:
        s["transparent_hugepage.defrag"] = defrag
    if "compaction_proactiveness" in c.sysctl:  # thp@6.12's kcompactd uses it (v5.9+)
        s["vm.compaction_proactiveness"] = str(c.sysctl["compaction_proactiveness"])
    s["thp.policy"] = POLICY
    return s


def _selected(mode: str | None) -> str | None:
    """``always defer [madvise] ...`` -> ``madvise``."""
    if not mode or "[" not in mode:
        return None
    return mode.split("[", 1)[1].split("]", 1)[0]


def run_model(t: dict[str, Any], settings: dict[str, str]) -> tuple[list[dict[str, Any]], float]:
    """One model run of the workload ``t`` with ``settings``: its phases and its simulated
    seconds (every thpscale count from ``drop_caches`` to exit; usemem's run after the page
    cache fill), what the guest's phases time."""
    from .. import _core

    cfg = _core.Config()
    for k, v in settings.items():
        cfg.set(k, v)
    if t["kind"] == "thpscale":
        # guest/thp.c keeps the work file mapped through every count (its data_map).
        runs = _core.thpscale(cfg, list(t["threads"]), t["madvise"], t["mapsize_pct"], file_stays_mapped=True)
        phases = [{"threads": r["threads"], "vmstat": dict(r["vmstat"]), "huge_pct": r["huge_pct"],
                   "huge": len(r["fault_huge_us"]), "base": len(r["fault_base_us"]), "kswapd_cpu_s": r["kswapd_cpu_s"],
                   "free_at_start": free_summary((z["node"], z["nr_free"], z["pageblocks"]) for z in r["free_at_start"])}
                  for r in runs]
        return phases, sum(r["count_s"] for r in runs)
    r = _core.usemem(cfg, t["threads"], t["cache_pct"], t["usemem_pct"], t["passes"])
    return [{"threads": t["threads"], "vmstat": dict(r["vmstat"]), "huge_pct": r["huge_pct"],
             "pages_per_node": list(r["pages_per_node"]), "cache_pages_per_node": list(r["cache_pages_per_node"]),
             "elapsed_s": r["elapsed_s"], "kswapd_cpu_s": r["kswapd_cpu_s"]}], r["elapsed_s"]


def guest_wall_s(p: Prepared, consoles: list[Console]) -> float | None:
    """The guest's mean wall time of what the model times (:func:`run_model`): the sum of
    thpscale's counts, or usemem's last phase (its run; the first fills the page cache)."""
    walls = [sum(ph.wall_ns for ph in c.phases) if p.wl.thp["kind"] == "thpscale" else c.phases[-1].wall_ns
             for c in consoles if c.phases]
    return statistics.mean(walls) / 1e9 if walls else None


def configured(settings: dict[str, str], keys: tuple[str, ...]) -> dict[str, str]:
    """``keys`` as ``settings`` set them, else the model's defaults."""
    from .. import _core

    cfg = _core.Config()
    return {k: settings.get(k) or str(cfg.get(k)) for k in keys}


def clear_page_ns(fault_ns: float, dilation: float, settings: dict[str, str]) -> str:
    """``cost.clear_page_ns`` that makes the model's THP fault (``cost.minor_fault_ns`` plus
    512 pages cleared: sim/huge_memory.rs) cost the guest's ``fault_ns`` (its ``@@thpfault``,
    CPU time on the guest's clock) on the simulated clock of a run at ``dilation``; at
    least 1 ns."""
    minor = float(configured(settings, ("cost.minor_fault_ns",))["cost.minor_fault_ns"])
    return str(max(1, round((fault_ns / (dilation or 1.0) - minor) / HPAGE_PMD_NR)))


def guest_kswapd_ns_per_scan(consoles: list[Console]) -> float | None:
    """The boots' kswapd CPU per page scanned on the guest's clock: every kswapd's ticks
    over the workload (``@@kthread``) over ``pgscan_kswapd``, means over the boots (None if
    a boot lacks the ticks or no kswapd scanned)."""
    ticks = [c.kswapd_ticks() for c in consoles]
    if any(t is None for t in ticks):
        return None
    scanned = statistics.fmean(c.vmstat().get("pgscan_kswapd", 0) for c in consoles)
    return guest_kswapd_wall_ns_per_scan(statistics.fmean(ticks), scanned)


def guest_thp_fault_ns(consoles: list[Console]) -> float:
    """The boots' mean THP fault cost (``@@thpfault``); a :class:`KernelError` if a boot
    lacks it."""
    if any(c.thp_fault_ns is None for c in consoles):
        raise KernelError("--cpu-cost measured: a boot did not record its THP fault cost (@@thpfault: "
                          "guest/thp.c since 29 Nov 2026, 19:10 UTC)")
    return statistics.fmean(c.thp_fault_ns for c in consoles)


def simulate(p: Prepared, consoles: list[Console], wakeup_wall_ns: float | list[float] | None = None,
             cpu_cost: str = "model") -> dict[str, Any]:
    """The model's run of the workload: ``{"settings", "phases": [{"vmstat", ...}]}``, one
    phase per thpscale thread count (its counter increments) or usemem's one run (its
    counters from boot, cache fill included, as the guest's two phases summed).

    The kernel's timers (kswapd's HZ/10 nap, kcompactd's proactive period, khugepaged's
    sleep, the statistics flush) tick on the guest's wall clock, which under TCG runs
    tens of times longer than the model's simulated work; as for the trace workloads
    (:func:`validate.simulate`), the model runs with the guest's time dilation
    (``sim.time_dilation``), found as a fixed point of its own simulated time.
    ``wakeup_wall_ns`` (``--kswapd-wakeup mean|measured``): the guest's kswapd wake-up latency
    (or its distribution's quantiles), on the simulated clock of each run as
    ``cost.kswapd_wakeup_ns`` (:func:`validate.simulated_ns`). ``cpu_cost`` ``measured``: the
    guest's speeds of the two sides of the race between a faulting task and kswapd, on each
    run's simulated clock — a THP fault costs what the guest's first faults cost
    (:func:`clear_page_ns`), and the reclaim costs (``RECLAIM_COSTS``, kswapd's and direct
    reclaim's) are scaled so that kswapd's CPU per page scanned is the guest's
    (:func:`guest_kswapd_ns_per_scan`; the last run's figure gives the next run's factor).
    Under TCG a huge page's clearing is emulated store by store and a THP fault takes about
    20 ms of the guest's CPU, where kswapd scans a page in a few µs: at the model's own costs
    and one time dilation the task would be several times too fast against kswapd
    (docs/validation.md, "THP, compaction and NUMA")."""
    settings = model_settings(p, consoles)
    measured = cpu_cost == "measured"
    fault_ns = guest_thp_fault_ns(consoles) if measured else None
    scan_ns = guest_kswapd_ns_per_scan(consoles) if measured else None
    # The reclaim costs x1 (RECLAIM_COSTS, as configured), the factor on them, and
    # the model's kswapd CPU per page scanned at x1 (its ns) from the last run.
    base = configured(settings, RECLAIM_COSTS) if scan_ns is not None else {}
    state: dict[str, float] = {"k": 1.0}

    def factor(d: float) -> float:
        """The reclaim factor for a run at dilation ``d`` (the last one's without a figure)."""
        return scan_ns / (d * state["per_scan"]) if scan_ns is not None and "per_scan" in state else state["k"]

    def run(dilation: float | None) -> tuple[list[dict[str, Any]], float]:
        d = dilation or 1.0
        if dilation is not None:
            settings["sim.time_dilation"] = f"{dilation:.3f}"
        if wakeup_wall_ns is not None:
            settings["cost.kswapd_wakeup_ns"] = simulated_ns(wakeup_wall_ns, d)
        if fault_ns is not None:
            settings["cost.clear_page_ns"] = clear_page_ns(fault_ns, d, settings)
        if base and "per_scan" in state:
            state["k"] = factor(d)
            settings.update(scaled(base, state["k"]))
        phases, sim_s = run_model(p.wl.thp, settings)
        scanned = sum(ph["vmstat"].get("pgscan_kswapd", 0) for ph in phases)
        if scanned:
            state["per_scan"] = sum(ph["kswapd_cpu_s"] for ph in phases) * 1e9 / scanned / state["k"]
        return phases, sim_s

    # The dilation and the reclaim factor together: runs until neither moves by 5 %.
    phases = at_guest_dilation(guest_wall_s(p, consoles), run,
                               lambda d: abs(factor(d) - state["k"]) <= DILATION_TOLERANCE * state["k"])
    return {"settings": settings, "phases": phases, **({"reclaim_factor": state["k"]} if measured else {})}


def mean_phases(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The model's runs (one per boot, phase by phase) as one: every number the mean over
    the runs (a counter a run lacks counts 0; lists element by element)."""
    def mean(vals: list[Any]) -> Any:
        if isinstance(vals[0], dict):
            return {k: mean([v.get(k, 0) for v in vals]) for k in {k for v in vals for k in v}}
        if isinstance(vals[0], list):
            return [mean(list(x)) for x in zip(*vals)]
        return statistics.fmean(vals)

    return [{k: ph[0][k] if k == "threads" else mean([x[k] for x in ph]) for k in ph[0]} for ph in zip(*runs)]


#: What :func:`free_summary` gives per node.
FREE_FIELDS = ("free", "free_huge", "unmovable", "movable", "reclaimable")


def free_summary(zones) -> dict[str, dict[str, int]]:
    """Per node (``"0"``, ``"1"``, ...) what its zones hold free, from ``(node, free blocks
    per order 0..10, pageblocks per migrate type (unmovable, movable, reclaimable, ...))``
    per zone: ``free`` pages on the buddy lists, ``free_huge`` those in blocks of a THP's
    order or more (what a huge fault can take without compaction), and the pageblocks of
    each type. The per-CPU lists are not counted (nor does /proc/pagetypeinfo)."""
    out: dict[str, dict[str, int]] = {}
    for node, nr_free, blocks in zones:
        n = out.setdefault(str(node), dict.fromkeys(FREE_FIELDS, 0))
        n["free"] += sum(k << o for o, k in enumerate(nr_free))
        n["free_huge"] += sum(k << o for o, k in enumerate(nr_free) if o >= HPAGE_PMD_ORDER)
        for name, k in zip(("unmovable", "movable", "reclaimable"), blocks):
            n[name] += k
    return out


def mean_free(summaries: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, float]]:
    """:func:`free_summary`'s over boots, field by field (a node a boot lacks counts 0)."""
    nodes = sorted({n for s in summaries for n in s})
    return {n: {f: statistics.fmean(s.get(n, {}).get(f, 0) for s in summaries) for f in FREE_FIELDS} for n in nodes}


def guest_free_at(c: Console, when: str) -> dict[str, dict[str, int]] | None:
    """:func:`free_summary` of the guest's ``@@freelist WHEN`` and ``@@zoneblocks WHEN``
    lines (guest/thp.c prints them as each count begins, ``count0``, ``count1``, ...)."""
    lists, blocks = c.freelists.get(when), c.zoneblocks.get(when)
    if not lists or not blocks:
        return None
    per_zone: dict[tuple[int, str], list[int]] = {}
    for (node, zone, _type), n in lists.items():
        acc = per_zone.setdefault((node, zone), [0] * len(n))
        per_zone[(node, zone)] = [a + b for a, b in zip(acc, n)]
    return free_summary((node, n, blocks.get((node, zone), [])) for (node, zone), n in per_zone.items())


def guest_phases(p: Prepared, c: Console) -> list[dict[str, Any]]:
    """The guest's runs in the model's shape: per thpscale thread count its phase's
    counters and faults; usemem's two phases summed."""
    t = p.wl.thp
    if t["kind"] == "thpscale":
        out = []
        for i, (ph, run) in enumerate(zip(c.phases, c.thpscale)):
            n = run["huge"] + run["base"]
            out.append({"threads": run["threads"], "vmstat": dict(ph.vmstat), "huge": run["huge"], "base": run["base"],
                        "huge_pct": 100.0 * run["huge"] / n if n else 0.0,
                        **({"free_at_start": f} if (f := guest_free_at(c, f"count{i}")) else {})})
        return out
    u = c.usemem
    return [{"threads": t["threads"], "vmstat": c.vmstat(),
             "huge_pct": 100.0 * u["anon_huge_kb"] / u["anon_kb"] if u.get("anon_kb") else 0.0,
             "elapsed_s": u.get("elapsed_ns", 0) / 1e9,
             **({"pages_per_node": u["pages_per_node"]} if "pages_per_node" in u else {})}]


def _direction(a: float, b: float, rel: float = 0.05) -> int:
    """-1, 0, +1: b against a, level within ``rel``."""
    if max(abs(a), abs(b)) == 0 or abs(b - a) <= rel * max(abs(a), abs(b)):
        return 0
    return 1 if b > a else -1


def directions(kernel: list[list[dict]], model: list[dict], names: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per counter, how it moves from the first thread count to the last, in the kernel
    (mean over boots) and in the model: ``agree`` when both move the same way (level
    meaning within 5 % of the larger)."""
    if len(model) < 2:
        return []
    out = []
    for name in names:
        first = statistics.fmean(float(b[0]["vmstat"].get(name, 0)) for b in kernel)
        last = statistics.fmean(float(b[-1]["vmstat"].get(name, 0)) for b in kernel)
        m0, m1 = float(model[0]["vmstat"].get(name, 0)), float(model[-1]["vmstat"].get(name, 0))
        dk, dm = _direction(first, last), _direction(m0, m1)
        out.append({"counter": name, "kernel": [first, last], "model": [m0, m1], "kernel_dir": dk, "model_dir": dm,
                    "agree": dk == dm})
    return out


def compare_boots(p: Prepared, consoles: list[Console], wakeup_wall_ns: float | list[float] | None = None,
                  cpu_cost: str = "model") -> dict[str, Any]:
    """Kernel (mean ± sd over boots) against the model, summed over the workload's runs
    (``rows``) and per thpscale thread count (``per_run``), the NUMA and compaction
    counters' direction from the first thread count to the last (``directions``), and
    the share of huge faults (``huge_pct``); ``wakeup_wall_ns`` as :func:`simulate`. The
    model runs once per boot, from that boot's free lists and at its wall time (the
    compaction these workloads do follows both), and its figures are the mean over those
    runs, as the as-shipped whole-machine rows are (scripts/validate_suite.py); ``cpu_cost``
    as :func:`simulate` (each run the fault cost of its boot)."""
    sims = [simulate(p, [c], wakeup_wall_ns, cpu_cost) for c in consoles]
    sim = {"settings": sims[0]["settings"], "phases": mean_phases([x["phases"] for x in sims])}
    kernel = [guest_phases(p, c) for c in consoles]
    nruns = min(len(k) for k in kernel)
    if nruns != len(sim["phases"]):
        raise ValueError(f"the guest reported {nruns} run(s), the model {len(sim['phases'])}")

    def total(phases: list[dict]) -> dict[str, int]:
        out: dict[str, int] = {}
        for ph in phases:
            for k, v in ph["vmstat"].items():
                out[k] = out.get(k, 0) + v
        return _derived(out)

    rows = compare([total(k) for k in kernel], total(sim["phases"]), TARGETS, list(COUNTERS))
    per_run = []
    for i, m in enumerate(sim["phases"]):
        r = compare([_derived(k[i]["vmstat"]) for k in kernel], _derived(m["vmstat"]), TARGETS, list(COUNTERS))
        hp, hp_sd = mean_sd([k[i]["huge_pct"] for k in kernel])
        guest_free = [k[i]["free_at_start"] for k in kernel if "free_at_start" in k[i]]
        nodes = [k[i]["pages_per_node"] for k in kernel if "pages_per_node" in k[i]]
        per_run.append({"threads": m["threads"], "rows": r,
                        "huge_pct": {"kernel": hp, "kernel_sd": hp_sd, "model": m["huge_pct"]},
                        # usemem: where the region's resident pages are at its end.
                        **({"pages_per_node": {"kernel": [mean_sd(list(col)) for col in zip(*nodes)],
                                               "model": m["pages_per_node"]}}
                           if nodes and "pages_per_node" in m else {}),
                        **({"free_at_start": {"kernel": mean_free(guest_free), "model": m["free_at_start"]}}
                           if guest_free and "free_at_start" in m else {})})
    c = consoles[0]
    # --cpu-cost measured: each boot's THP fault cost and the clearing cost its run took.
    fault = {"guest_fault_ns": [x.thp_fault_ns for x in consoles],
             "clear_page_ns": [int(x["settings"]["cost.clear_page_ns"]) for x in sims],
             "guest_kswapd_ns_per_scan": [guest_kswapd_ns_per_scan([x]) for x in consoles],
             "reclaim_factor": [x["reclaim_factor"] for x in sims]} if cpu_cost == "measured" else None
    return {**({"thp_fault": fault} if fault else {}),
            "workload": p.wl.spec, "kind": p.wl.thp["kind"], "kernel": c.release, "policy": POLICY,
            "settings": sim["settings"], "boots": len(consoles), "sim_runs": len(sims), "nodes": c.thp_nodes, "memtotal_kb": c.thp_memtotal_kb,
            "thp": c.thp_mode, "defrag": _selected(c.thp_defrag), "rows": rows, "per_run": per_run,
            "directions": directions(kernel, sim["phases"], (*TARGETS, *NUMA)),
            "model_phases": sim["phases"], "kernel_phases": kernel}
