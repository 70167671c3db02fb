"""Kernel vs simulator: the same page sequence on the real kernel (boots stored by
:mod:`.run`) and in the simulator with matching machine parameters, compared per counter
(real mean ± sd over boots, simulated value, relative error, the issue's target)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from . import disk
from .console import Console
from .ops import default_access_ns, write_sim_trace
from .run import Prepared, parse_size
from .workload import PAGE, Workload

#: Headline counters and their targets (relative error of the simulator vs the kernel
#: mean), per workload class.
FILE_TARGETS = {"pgpgin": 0.10, "pgmajfault": 0.10, "workingset_refault_file": 0.10,
                "workingset_activate_file": 0.10, "pgsteal_file": 0.10}
ANON_TARGETS = {"pswpin": 0.25, "pswpout": 0.25, "workingset_refault_anon": 0.25}
#: A real program's file counters: its recording cannot see everything the kernel does
#: (docs/programs.md, "What the recording misses").
PROGRAM_FILE_TARGET = 0.15
#: Whole-machine reclaim (``--memory-max none``): kswapd and direct reclaim of the whole
#: machine, graded too. ``allocstall`` is the sum of 6.12's per-zone allocstall_dma,
#: allocstall_dma32, allocstall_normal and allocstall_movable (do_try_to_free_pages,
#: mm/vmscan.c 6.12, counts the reclaim's highest zone, gfp_zone(): ZONE_MOVABLE for user
#: pages; the model counts allocstall_normal).
WHOLE_MACHINE_TARGETS = {"pgscan_kswapd": 0.25, "pgscan_direct": 0.25, "pgsteal_kswapd": 0.25,
                         "pgsteal_direct": 0.25, "allocstall": 0.25, "pageoutrun": 0.25,
                         "kswapd_low_wmark_hit_quickly": 0.25, "kswapd_high_wmark_hit_quickly": 0.25}
#: Workloads that write file pages: dirtying, writeback and reclaim's share of it.
WRITEBACK_TARGETS = {"nr_dirtied": 0.25, "nr_written": 0.25, "nr_vmscan_write": 0.25, "pgrotated": 0.25}
#: Per cgroup of a workload in several (memory.stat keys; memory.events as events.KEY).
#: 6.12's memory.stat has no pswpin/pswpout (memcg_vm_event_stat[], mm/memcontrol.c):
#: a cgroup's swap-ins show as workingset_refault_anon.
CGROUP_FILE_TARGETS = {"workingset_refault_file": 0.10, "workingset_activate_file": 0.10, "pgmajfault": 0.10}
CGROUP_ANON_TARGETS = {"workingset_refault_anon": 0.25}
CGROUP_CONTEXT = ("memory.peak", "memory.current", "slab_reclaimable", "pgscan", "pgsteal", "pgscan_direct", "pgsteal_direct", "pgrefill", "pgactivate",
                  "pgdeactivate", "workingset_activate_anon", "workingset_nodereclaim", "zswpin", "zswpout", "events.low",
                  "events.high", "events.max", "events.oom", "memory.reclaim.writes", "memory.reclaim.eagain",
                  "memory.reclaim.requested")
ALLOCSTALL_ZONES = ("allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable")
#: Shown beside the headline counters.
CONTEXT = ("pgscan_file", "pgscan_anon", "pgsteal_anon", "workingset_activate_anon", "pgactivate", "pgdeactivate",
           "nr_vmscan_immediate_reclaim", "workingset_nodereclaim", "slabs_scanned",
           "thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge", "thp_split_page", "thp_swpout",
           "nr_shmem")
#: Anon THPs made by faults or khugepaged (the simulator's trace engine makes the former).
THP_ANON_COUNTERS = ("thp_fault_alloc", "thp_collapse_alloc")


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
    """zram's measured ratio (:meth:`.Console.zram_ratio`: bytes stored per byte of pool), averaged over boots."""
    r = [x for x in (c.zram_ratio() for c in consoles) if x]
    return sum(r) / len(r) if r else None


def held_settings(start: Any) -> dict[str, str]:
    """What the guest held outside the workload when it started (``start``: the console's
    ``start`` layout, or None): ``machine.kernel_used`` (MemTotal - MemFree), and of it
    ``machine.kernel_shmem`` (the initramfs root on tmpfs: the root memcg's own LRU pages)
    and ``machine.kernel_mlocked`` (wl's mlocked ops buffer: the root's unevictable LRU)."""
    used = start.used_kb() if start else None
    if used is None:
        return {}
    s = {"machine.kernel_used": f"{used}K"}
    shmem = start.meminfo.get("Shmem")
    if shmem is not None and shmem <= used:
        s["machine.kernel_shmem"] = f"{shmem}K"
        mlocked = start.meminfo.get("Mlocked")
        if mlocked is not None and shmem + mlocked <= used:
            s["machine.kernel_mlocked"] = f"{mlocked}K"
    return s


def zone_settings(c: Console) -> dict[str, str]:
    """``machine.zone_dma_lowmem_reserve``: ZONE_DMA's ``protection`` for the highest zone as
    the guest reports it (/proc/zoneinfo just before the workload, at boot if that is
    missing). 6.12 computes it at init (``init_per_zone_wmark_min`` →
    ``setup_per_zone_lowmem_reserve``, mm/page_alloc.c), before the init memory and the initrd
    are freed to DMA32, so it is 1/256 of fewer pages than DMA32 manages later (186 against
    195 in the 256 MiB guest): the model, left to compute it, keeps 9 pages more of DMA from
    the workload at every watermark."""
    zones = [z for when in ("start", "boot") if when in c.layouts for z in c.layouts[when].zones
             if z.name == "DMA" and z.node == 0 and z.protection]
    return {"machine.zone_dma_lowmem_reserve": str(max(zones[0].protection))} if zones else {}


#: /proc/pagetypeinfo's migrate types in ``machine.start_layout``'s order, and its key for each.
LAYOUT_TYPES = (("Unmovable", "unmovable"), ("Movable", "movable"), ("Reclaimable", "reclaimable"))


def node_memory_settings(c: Console, settings: dict[str, str]) -> dict[str, str]:
    """``machine.node_memory``: each node's managed pages as the guest reported its zones at
    the workload's start, where there are several nodes and they sum to ``settings``'
    ``machine.memory`` (MemTotal is every zone's managed pages). The kernel's reserved
    memory lands on one node or the other from boot to boot, so a two-node guest's nodes
    differ by thousands of pages where the model's default splits MemTotal evenly."""
    lay = c.layouts.get("start")
    nodes = int(settings.get("machine.nodes", "1"))
    if lay is None or nodes < 2:
        return {}
    managed = [sum(z.managed for z in lay.zones if z.node == n) for n in range(nodes)]
    total = parse_size(settings["machine.memory"], "machine.memory") // 4096
    if not all(managed) or sum(managed) != total:
        return {}
    return {"machine.node_memory": ",".join(f"{m * 4}K" for m in managed)}


def start_layout_settings(c: Console, settings: dict[str, str]) -> dict[str, str]:
    """``machine.start_layout``: the guest's free lists and pageblocks per migrate type at the
    workload's start (``@@freelist start``, ``@@zoneblocks start``: /proc/pagetypeinfo), and
    the ``machine.kernel_used`` they imply (the zones' managed pages less the free pages
    listed: MemTotal − MemFree read a moment apart differs by a few pages, and the model's
    key must agree with the layout to the page). From the console given (the first boot's,
    as :func:`held_settings`, or each boot's in a simulation of its own: the as-shipped
    whole-machine rows, scripts/validate_suite.py): a layout is a structure of whole blocks,
    which an average over boots would not be. Empty when the console lacks the records or when the model's zones
    (``settings``' ``machine.node_memory``, or ``machine.memory`` split evenly over
    ``machine.nodes``; ZONE_DMA on node 0) are not the sizes the guest manages: a layout of
    other zones would not fit."""
    free, blocks, lay = c.freelists.get("start"), c.zoneblocks.get("start"), c.layouts.get("start")
    if not free or not blocks or not lay:
        return {}
    managed = {(z.node, z.name): z.managed for z in lay.zones if z.managed}
    nodes = int(settings.get("machine.nodes", "1"))
    sizes = settings.get("machine.node_memory", "even")
    node_pages = ([parse_size(x, "machine.node_memory") // 4096 for x in sizes.split(",")] if sizes != "even" else
                  [parse_size(settings["machine.memory"], "machine.memory") // 4096 // nodes] * nodes)
    dma = parse_size(settings.get("machine.zone_dma", "0"), "machine.zone_dma") // 4096
    model = {**({(0, "DMA"): dma} if dma else {}),
             **{(n, "upper"): node_pages[n] - (dma if n == 0 else 0) for n in range(nodes)}}
    listed = sorted(((n, z) for (n, z) in blocks if sum(blocks[(n, z)][:3])),
                    key=lambda k: (k[0], ("DMA", "DMA32", "Normal").index(k[1]) if k[1] in ("DMA", "DMA32", "Normal") else 9))
    if sorted((n, "DMA" if z == "DMA" else "upper") for n, z in listed) != sorted(model):
        return {}
    parts, free_pages = [], 0
    for n, z in listed:
        if managed.get((n, z)) != model[(n, "DMA" if z == "DMA" else "upper")]:
            return {}
        u, m, r = blocks[(n, z)][:3]
        lists = {key: free.get((n, z, name), [0] * 11) for name, key in LAYOUT_TYPES}
        free_pages += sum(cnt << o for counts in lists.values() for o, cnt in enumerate(counts))
        parts.append(f"{n} {z} blocks={u},{m},{r} "
                     + " ".join(f"{key}={','.join(map(str, lists[key]))}" for _, key in LAYOUT_TYPES))
    used = sum(model.values()) - free_pages
    return {"machine.start_layout": "; ".join(parts), "machine.kernel_used": f"{used * 4}K"}


def boot_machine_settings(c: Console, settings: dict[str, str]) -> dict[str, str]:
    """Boot ``c``'s own machine over ``settings`` made from another boot's console, for a run
    of its own: its MemTotal (``machine.memory``), what it held at the start
    (:func:`held_settings`), ZONE_DMA's protection where the model has the zone
    (:func:`zone_settings`), its nodes' sizes where they are the guest's
    (:func:`node_memory_settings`) and its start layout (:func:`start_layout_settings`). The guests'
    MemTotal differs by a page or two from boot to boot, and a layout fits only its own
    boot's zones: over the first boot's machine, a boot managing a page more or less has no
    layout. Empty when the console lacks the start layout (the run keeps ``settings``)."""
    start = c.layouts.get("start")
    if start is None or not c.meminfo.get("MemTotal"):
        return {}
    own = {"machine.memory": f"{c.meminfo['MemTotal']}K", **held_settings(start),
           **(zone_settings(c) if "machine.zone_dma" in settings else {})}
    if "machine.node_memory" in settings:  # its nodes' own sizes
        own.update(node_memory_settings(c, {**settings, **own}))
    layout = start_layout_settings(c, {**settings, **own})
    return {**own, **layout} if layout else {}


def model_cpus(smp: int, nodes: int, pinned: bool) -> int:
    """``machine.cpus`` for a guest of ``smp`` vCPUs over ``nodes``. The kernel binds a
    node's kswapd to that node's CPUs, so with one vCPU a node kswapd shares it with the
    workload there, as the model's does (sim/daemons.rs). ``--pin-cpus`` moves every kswapd
    to a CPU the workload does not use: the model then gives each node a second CPU."""
    return smp * 2 if pinned and nodes > 1 and smp < 2 * nodes else smp


def sim_settings(p: Prepared, consoles: list[Console], start_layout: bool = True) -> dict[str, str]:
    """The simulator configuration that matches the guest: the guest's MemTotal, the
    memory it held outside the workload just before it started (MemTotal - MemFree, and
    of it the root memcg's shmem) and its ZONE_DMA, each cgroup's memory.max/high/low/min, the sysctls, readahead
    and fault-around as the guest read them back, the zram size and its measured compression
    ratio, the data disk's file-system block size; with ``start_layout``, where its free pages were
    (:func:`start_layout_settings`)."""
    c = consoles[0]
    start = c.layouts.get("start")
    s = {
        "policy": policy_of(c),
        "machine.memory": f"{c.meminfo.get('MemTotal', p.setup.guest_mb << 10)}K",
        **{f"cgroup.{n}.{f}": v for n, lim in p.cgroup_limits.items() for f, v in lim.items()},
        "vm.min_free_kbytes": str(c.sysctl.get("min_free_kbytes", "auto")),
        "vm.watermark_scale_factor": str(c.sysctl.get("watermark_scale_factor", 10)),
        "vm.swappiness": str(c.sysctl.get("swappiness", 60)),
        "machine.cpus": str(model_cpus(p.setup.smp, p.nodes, p.setup.pin_cpus)),
        "block.read_ahead_kb": str(c.read_ahead_kb if c.read_ahead_kb is not None else p.read_ahead_kb),
        "fault_around_bytes": str(c.fault_around_bytes if c.fault_around_bytes is not None
                                  else p.fault_around_bytes),
        "swap.device": "zram" if p.zram else "none",
        "block.fs_block_size": str(disk.block_size(disk.fs_size(p.wl, p.disk_size))),
    }
    if c.sysctl.get("percpu_pagelist_high_fraction"):  # read back by guests since 26 Nov 2026
        s["vm.percpu_pagelist_high_fraction"] = str(c.sysctl["percpu_pagelist_high_fraction"])
    if "watermark_boost_factor" in c.sysctl:  # read back by every guest
        s["vm.watermark_boost_factor"] = str(c.sysctl["watermark_boost_factor"])
    if c.thp_mode:  # transparent_hugepage/enabled as the guest read it back
        s["transparent_hugepage.enabled"] = c.thp_mode
    s.update(held_settings(start))
    dma = dma_managed(c)
    if dma:
        s["machine.zone_dma"] = f"{dma * 4}K"
        s.update(zone_settings(c))
    if p.nodes > 1:  # as many nodes as the guest reported zones of, each of its size
        s["machine.nodes"] = str(len(c.nodes()) or p.nodes)
        s.update(node_memory_settings(c, s))
    if start_layout:
        s.update(start_layout_settings(c, s))
    if p.zram:
        s["swap.size"] = str(p.zram)
        ratio = compression_ratio(consoles)
        if ratio:
            s["swap.zram.compression_ratio"] = f"{ratio:.3f}"
    return s


def dma_managed(c: Console) -> int:
    """Managed pages of the guest's ZONE_DMA (node 0) as reported just before the workload
    (at boot if that is missing), 0 without one."""
    zones = [z for when in ("start", "boot") if when in c.layouts for z in c.layouts[when].zones]
    return next((z.managed for z in zones if z.name == "DMA" and z.node == 0), 0)


def kernel_config(p: Prepared, consoles: list[Console], accel: str) -> dict[str, str]:
    """What a stored boot's ``config`` holds: the simulator-equivalent keys and kernel.*."""
    c = consoles[0]
    return {**sim_settings(p, consoles), "kernel.release": c.release, "kernel.package": p.kernel.package,
            "kernel.mglru": p.setup.mglru or "default", "kernel.lru_gen": c.lru_gen or "", "kernel.accel": accel,
            "kernel.guest_mb": str(p.setup.guest_mb), "kernel.smp": str(p.setup.smp),
            "kernel.nodes": str(p.nodes), "kernel.tick_us": str(p.setup.tick_us),
            "kernel.thp": c.thp_mode or "", "workload": p.wl.spec}


def free_under_reclaim(ts: list[float], free: list[float], ceiling: float) -> dict[str, float] | None:
    """Free pages while the machine reclaims: the samples ``(ts, free)`` from the first at or
    below ``ceiling`` to the last (before it, the workload fills free memory; after it, its
    exit frees its pages): their time-weighted mean and 10th/50th/90th percentiles, and the
    share of the samples' time that came before. None without two such samples. The same
    for the guest's ``--wb-sample`` curve and the model's ``nr_free_pages`` series."""
    import numpy as np

    low = [i for i, f in enumerate(free) if f <= ceiling]
    if len(low) < 2 or ts[low[-1]] <= ts[low[0]]:
        return None
    t, f = list(ts[low[0]:low[-1] + 1]), list(free[low[0]:low[-1] + 1])
    p10, p50, p90 = np.percentile(f, [10, 50, 90])
    return {"mean": time_average(t, f), "p10": float(p10), "p50": float(p50), "p90": float(p90),
            "fill_share": (ts[low[0]] - ts[0]) / (ts[low[-1]] - ts[0])}


def time_average(ts: list[float], vs: list[float]) -> float | None:
    """The time-weighted mean of a sampled curve (trapezoids), None without two samples."""
    if len(ts) < 2 or ts[-1] <= ts[0]:
        return None
    area = sum((ts[i + 1] - ts[i]) * (vs[i] + vs[i + 1]) / 2 for i in range(len(ts) - 1))
    return area / (ts[-1] - ts[0])


def guest_wall_s(consoles: list[Console]) -> float | None:
    """The workload's wall time in the guest (its phases), averaged over boots."""
    walls = [sum(ph.wall_ns for ph in c.phases) / 1e9 for c in consoles if c.phases]
    return statistics.fmean(walls) if walls else None


def time_dilation(guest_wall: float | None, sim_runtime: float) -> float:
    """How many times longer the guest took than the simulated run: under TCG the guest's
    timers (memcg statistics flush, kswapd's nap) tick at wall-clock speed while its CPU
    is slow, so the simulator runs them that many times faster (``sim.time_dilation``)."""
    if not guest_wall or sim_runtime <= 0:
        return 1.0
    return max(1.0, guest_wall / sim_runtime)


#: Replays at most spent finding the time dilation, and the relative change that ends it.
DILATION_RUNS, DILATION_TOLERANCE = 6, 0.05

T = TypeVar("T")


def at_guest_dilation(guest_wall: float | None, run: Callable[[float | None], tuple[T, float]],
                      settled: Callable[[float], bool] | None = None) -> T:
    """The model at the guest's time dilation (:func:`time_dilation`), a fixed point:
    ``run(None)`` runs it on its own clock, ``run(d)`` at dilation ``d``, each returning
    (its result, its simulated seconds), and each run's seconds give the next run's
    dilation until it changes by less than 5 % (at most ``DILATION_RUNS`` runs) and
    ``settled(next dilation)`` holds, if given (another input found with it). Returns the
    last run's result."""
    result, sim_s = run(None)
    dilation = 1.0
    for _ in range(DILATION_RUNS - 1):
        new = time_dilation(guest_wall, sim_s)
        if abs(new - dilation) <= DILATION_TOLERANCE * dilation and (settled is None or settled(new)):
            break
        dilation = new
        result, sim_s = run(dilation)
    return result


def simulated_ns(wall_ns: float | list[float], dilation: float) -> str:
    """A cost knob's value from a wall-clock time (or a distribution's quantiles,
    ``cost.kswapd_wakeup_ns``'s list form) on the simulated clock of a run at ``dilation``:
    each over it, at least 1 ns."""
    xs = wall_ns if isinstance(wall_ns, list) else [wall_ns]
    return ",".join(str(max(1, round(x / (dilation or 1.0)))) for x in xs)


def wakeup_mean(setting: str) -> float:
    """The mean of a ``cost.kswapd_wakeup_ns`` value: the one latency, or the distribution's
    through its quantiles (linear between them, as kswapd draws it)."""
    q = [int(x) for x in setting.split(",")]
    return float(q[0]) if len(q) == 1 else sum(a + b for a, b in zip(q, q[1:])) / 2 / (len(q) - 1)


def simulate(wl: Workload, settings: dict[str, str], trace_dir: Path, guest_wall: float | None = None,
             write_wall_ns: float | None = None, read_wall_ns: float | None = None,
             wakeup_wall_ns: float | list[float] | None = None) -> dict[str, Any]:
    """Replay ``wl`` in the simulator; returns the run dict (policy, vmstat, metrics, ...).
    With the guest's wall time the replay runs with the guest's time dilation
    (:func:`time_dilation`), found as a fixed point: the simulated runtime depends on the
    dilation (a flush seen later can mean more thrashing), so each replay's runtime gives
    the next one's dilation until it changes by less than 5 %.

    A workload that sleeps (``hotcold``, a trace's think time) keeps a schedule in the
    guest (``wl`` sleeps until each SLEEP's due time) and in the simulator
    (``sim.trace_pacing=schedule``); only its work is slow under TCG. There the fixed point
    scales the trace's time per access instead (:func:`compute_scale`), and the kernel's
    timers keep their periods: both clocks then agree on when each access happens.

    ``write_wall_ns`` (``--disk-write measured``): the guest disk's wall time per page
    written; the disk runs on the guest's wall clock like its timers, so each replay's
    ``cost.file_write_ns`` is it divided by that replay's time dilation; ``read_wall_ns``
    (``--disk-read measured``) the same for a read and ``cost.file_read_ns``, and
    ``wakeup_wall_ns`` (``--kswapd-wakeup mean|measured``: one latency, or the quantiles of
    their distribution) for ``cost.kswapd_wakeup_ns`` (:func:`simulated_ns`)."""
    from .. import run as sim_run

    wall = {k: v for k, v in (("cost.file_write_ns", write_wall_ns), ("cost.file_read_ns", read_wall_ns),
                              ("cost.kswapd_wakeup_ns", wakeup_wall_ns)) if v is not None}

    def disk(dilation: float) -> None:
        for k, v in wall.items():
            settings[k] = simulated_ns(v, dilation)

    trace = trace_dir / "sim-trace.rcl"
    sleeps = 0.0 if wl.sleep_us is None else float(wl.sleep_us.sum()) / 1e6
    access_ns = None if wl.sleep_us is None else default_access_ns()
    if wl.program is not None:  # a real program: its recording, as it is
        trace = wl.program.trace
    else:
        write_sim_trace(wl, trace, access_ns)
    try:
        settings = dict(settings)
        if wl.sleep_us is not None:
            settings["sim.trace_pacing"] = "schedule"
        policy = settings.pop("policy")
        t0 = time.time()

        def replay(dilation: float | None) -> tuple[Any, float]:
            if dilation is not None:
                settings["sim.time_dilation"] = f"{dilation:.3f}"
            disk(dilation or 1.0)
            r = sim_run(trace=str(trace), trace_format="native", policy=policy, set=settings)
            return r, r.metrics["runtime_s"]

        if access_ns is None:
            r = at_guest_dilation(guest_wall, replay)
        else:
            r, _ = replay(None)
            for _ in range(DILATION_RUNS - 1):
                scale = compute_scale(guest_wall, r.metrics["runtime_s"], sleeps)
                if abs(scale - 1) <= DILATION_TOLERANCE:
                    break
                access_ns *= scale
                write_sim_trace(wl, trace, access_ns)
                r, _ = replay(None)
        return {"policy": r.policy, "vmstat": r.vmstat, "metrics": r.metrics, "started": t0, "finished": time.time(),
                "config": r.config, "timeseries": {}, "series": r.to_dict(timeseries=True)["timeseries"],
                "snapshots": r.damon_snapshots, "access_ns": access_ns}
    finally:
        if wl.program is None:
            trace.unlink(missing_ok=True)


def compute_scale(guest_wall: float | None, sim_runtime: float, sleeps: float) -> float:
    """For a workload that sleeps ``sleeps`` seconds: how much longer the guest worked than
    the simulated run, each without its sleeps (1 without the guest's time)."""
    work = sim_runtime - sleeps
    if not guest_wall or work <= 0 or guest_wall <= sleeps:
        return 1.0
    return (guest_wall - sleeps) / work


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


def targets_for(wl: Workload, whole_machine: bool = False) -> dict[str, float]:
    """File or anon targets by the workload; with ``whole_machine`` (no memory.max) also the
    whole-machine reclaim counters, and for a workload that writes the writeback ones."""
    if wl.program is not None:  # a real program: file and anon, files 15 % (issue 16)
        t = {**{k: PROGRAM_FILE_TARGET for k in FILE_TARGETS}, **ANON_TARGETS}
    else:
        t = dict(ANON_TARGETS) if wl.anon_pages and not wl.file_pages else dict(FILE_TARGETS)
    # (a program's disk is always writable; it is graded on writeback only if it wrote)
    writes = wl.program.writes if wl.program is not None else wl.writes_files
    if writes:
        t.update(WRITEBACK_TARGETS)
    return {**t, **WHOLE_MACHINE_TARGETS} if whole_machine else t


def cgroup_rows(wl: Workload, consoles: list[Console], metrics: dict[str, float]) -> dict[str, list[dict[str, Any]]]:
    """For a workload in several cgroups, each named cgroup's rows: the guest's memory.stat
    and memory.current at the end of the last phase, memory.events (``events.KEY``) and
    memory.peak against the simulator's ``memcg.NAME.KEY`` metrics
    (``memcg.NAME.memory.events.KEY``, ``memcg.NAME.memory.{peak,current}_bytes``), and
    the trace's ``memory.reclaim`` writes (``@@reclaim``: writes, EAGAIN results, bytes
    requested) against ``memcg.NAME.memory.reclaim.*``."""
    if len(wl.cgroups) < 2:
        return {}
    out = {}
    for name in (n for n in wl.cgroups if n):
        real = []
        for c in consoles:
            cg = c.cgroup(name)
            sizes = {} if cg is None or cg.peak is None else {"memory.peak": cg.peak}
            real.append({**c.memstat().get(name, {}), **sizes, **(cg.reclaim_counts() if cg else {}),
                         **{f"events.{k}": v for k, v in (cg.events if cg else {}).items()}})
        prefix = f"memcg.{name}."
        sim = {k[len(prefix):].replace("memory.events.", "events.").removesuffix("_bytes"): v
               for k, v in metrics.items() if k.startswith(prefix)}
        targets = {**CGROUP_FILE_TARGETS, **CGROUP_ANON_TARGETS} if wl.anon_pages else dict(CGROUP_FILE_TARGETS)
        shown = list(targets) + [k for k in CGROUP_CONTEXT if sim.get(k) or any(r.get(k) for r in real)]
        out[name] = compare(real, sim, targets, shown)
    return out


def with_derived(vmstat: dict[str, int]) -> dict[str, int]:
    """``vmstat`` plus ``allocstall``, the sum of the per-zone allocstall_* counters (the
    kernel counts the reclaim's highest zone index, the model allocstall_normal)."""
    return {**vmstat, "allocstall": sum(vmstat.get(k, 0) for k in ALLOCSTALL_ZONES)}


def mean_counts(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each key's mean over simulated runs' counters or metrics (a key a run lacks counts 0:
    a counter the run never moved)."""
    names = {k for r in runs for k in r}
    return {k: statistics.fmean(r.get(k, 0) for r in runs) for k in sorted(names)}


def sim_vmstat(sim: dict[str, Any]) -> dict[str, int]:
    """A simulated run's vmstat as a guest's ``@@vm`` rows give theirs: :func:`with_derived`,
    and ``nr_shmem`` (the model's gauge at the end) as its change over the run, from
    ``machine.kernel_shmem`` (the guest reports every item as a change over the workload's
    phases)."""
    vm = with_derived(sim["vmstat"])
    if "nr_shmem" in vm:
        vm["nr_shmem"] -= parse_size(sim.get("config", {}).get("machine.kernel_shmem", "0"), "machine.kernel_shmem") // PAGE
    return vm


def thp_allocated(real: list[dict[str, int]]) -> int:
    """Anon THPs the guest faulted or collapsed, summed over the boots."""
    return sum(int(r.get(k, 0)) for r in real for k in THP_ANON_COUNTERS)


def is_anon_counter(name: str) -> bool:
    return name.endswith("_anon") or name.startswith("pswp")


def mark_not_comparable(rows: list[dict[str, Any]], real: list[dict[str, int]], whole_machine: bool,
                        sim: dict[str, int] | None = None) -> str | None:
    """When the guest made anon THPs and the simulator none (its THP was off: a guest
    under 512 MiB that enabled THP through sysfs, or a trace the guest lays out
    differently), the anon counters, and without a memory.max the whole-machine ones, are
    not comparable: their rows get ``met`` None and ``comparable`` False. Returns the
    note, or None."""
    n = thp_allocated(real)
    if not n or (sim and any(sim.get(k, 0) for k in THP_ANON_COUNTERS)):
        return None
    note = (f"not comparable: the guest made {n} anon THPs ({' + '.join(THP_ANON_COUNTERS)}) and the "
            f"simulator none (run with --thp never to compare them)")
    for r in rows:
        if is_anon_counter(r["counter"]) or (whole_machine and r["counter"] in WHOLE_MACHINE_TARGETS):
            r["met"], r["comparable"] = None, False
    return note


def mean_sd(xs: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value) of a non-empty list: boots,
    or the simulator's seeds."""
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


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
                     "rel_error": err, "target": tgt, "met": None if tgt is None else abs(err) <= tgt,
                     "comparable": True})
    return rows
