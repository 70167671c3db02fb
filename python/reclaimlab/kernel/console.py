"""Parse the guest's serial console. Every line of ours starts with ``@@``, but firmware
(SeaBIOS) and the kernel write escape codes and text on the same stream, so a marker is
found anywhere in a line, after any escape codes, and lines without one are ignored."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .damon import QuotaSample, Sample, Snapshot

#: errno of a memory.reclaim write that could not reclaim the amount (mm/memcontrol.c).
EAGAIN = 11
MARK = re.compile(r"@@([A-Za-z_.-]+)(?: (.*))?$")
# ANSI/VT100 escape sequences (CSI ... final byte, ESC c, ESC ( B, ...) and stray controls.
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class Phase:
    index: int
    wall_ns: int
    vmstat: dict[str, int] = field(default_factory=dict)
    #: zram's orig_data_size, compr_data_size and mem_used_total (the pool's pages) at the
    #: phase's end (bytes), if any; logs made before the pool was printed have two.
    zram: tuple[int, ...] | None = None
    #: Each cgroup's memory.stat at the phase's end (since the cgroup was made), by index.
    memstat: dict[int, dict[str, int]] = field(default_factory=dict)
    #: Tracepoint counts (guest/thp.c ``@@trace``): ``"EVENT ORDER RET"`` -> count.
    trace: dict[str, int] = field(default_factory=dict)
    #: MGLRU's generations at the phase's end (``@@mglru_gen``, /sys/kernel/debug/lru_gen):
    #: ``(memcg path, node, seq, age ms, anon pages, file pages)`` per generation.
    mglru_gens: list[tuple[str, int, int, int, int, int]] = field(default_factory=list)


@dataclass
class DiskWrites:
    """The data disk's I/O over the workload (deltas of /sys/block/vda/stat; ms of guest
    wall time)."""

    reads: int
    read_ticks_ms: int
    writes: int
    write_sectors: int
    write_ticks_ms: int
    busy_ms: int

    @property
    def pages(self) -> int:
        """4 KiB pages written."""
        return self.write_sectors // 8

    @property
    def write_busy_ms(self) -> float:
        """The disk's busy time attributed to writes: its busy time (io_ticks) shared
        between reads and writes by their request times."""
        ticks = self.read_ticks_ms + self.write_ticks_ms
        return self.busy_ms * self.write_ticks_ms / ticks if ticks else 0.0

    @property
    def ns_per_page(self) -> float | None:
        """Wall time the disk spent per page written (its write throughput's inverse), as
        the simulator's disk writes one page per ``cost.file_write_ns``."""
        return self.write_busy_ms * 1e6 / self.pages if self.pages else None

    @property
    def ms_per_write(self) -> float | None:
        """Mean latency of one write request (ms, queueing included)."""
        return self.write_ticks_ms / self.writes if self.writes else None

    @property
    def ns_per_read(self) -> float | None:
        """Wall time the disk was busy per read request (its busy time shared by request
        times, as :attr:`write_busy_ms`): what the simulator's disk, one queue serving a
        read (a readahead window or one page) per ``cost.file_read_ns``, takes per read."""
        ticks = self.read_ticks_ms + self.write_ticks_ms
        return self.busy_ms * self.read_ticks_ms / ticks * 1e6 / self.reads if self.reads and ticks else None


@dataclass
class Zone:
    """One zone of /proc/zoneinfo (pages); ``protection`` is its lowmem_reserve[]."""

    node: int
    name: str
    free: int = 0
    min: int = 0
    low: int = 0
    high: int = 0
    spanned: int = 0
    present: int = 0
    managed: int = 0
    protection: list[int] = field(default_factory=list)


@dataclass
class Layout:
    """The guest's memory at one moment (``@@zone``/``@@meminfo``/``@@min_free_kbytes``
    lines tagged ``boot`` or ``start``, the latter just before the workload)."""

    zones: list[Zone] = field(default_factory=list)
    meminfo: dict[str, int] = field(default_factory=dict)  # KiB
    min_free_kbytes: int | None = None

    def used_kb(self) -> int | None:
        """MemTotal - MemFree: what the kernel and everything but the workload hold."""
        m = self.meminfo
        return m["MemTotal"] - m["MemFree"] if "MemTotal" in m and "MemFree" in m else None


@dataclass
class Cgroup:
    """One of the workload's cgroups as the guest made it (``@@cgroup``) and what it
    counted by the end (``@@cgevents``, ``@@cgpeak``); limits as read back."""

    name: str  # "" for the root cgroup
    limits: dict[str, str] = field(default_factory=dict)  # memory.max/high/low/min
    events: dict[str, int] = field(default_factory=dict)
    peak: int | None = None
    #: Its ``memory.reclaim`` writes (``@@reclaim``): (bytes, errno: 0 or EAGAIN).
    reclaims: list[tuple[int, int]] = field(default_factory=list)

    def reclaim_counts(self) -> dict[str, int]:
        """The writes as the simulator's ``memory.reclaim.*`` metrics count them."""
        if not self.reclaims:
            return {}
        return {"memory.reclaim.writes": len(self.reclaims),
                "memory.reclaim.eagain": sum(1 for _, err in self.reclaims if err == EAGAIN),
                "memory.reclaim.requested": sum(b for b, _ in self.reclaims)}


@dataclass
class Console:
    """What one boot printed. ``finished`` is True when the workload ran to its end."""

    release: str = ""
    lru_gen: str | None = None
    sysctl: dict[str, int] = field(default_factory=dict)
    #: /proc/meminfo (KiB) as last printed: just before the workload.
    meminfo: dict[str, int] = field(default_factory=dict)
    layouts: dict[str, Layout] = field(default_factory=dict)
    read_ahead_kb: int | None = None  # the data disk's, read back
    fault_around_bytes: int | None = None
    thp: str | None = None  # transparent_hugepage/enabled as read back: "always [madvise] never"
    memory_max: str = ""
    #: The workload's cgroups by index (the ops file's), with what each counted.
    cgroups: dict[int, Cgroup] = field(default_factory=dict)
    memory_events: dict[str, int] = field(default_factory=dict)
    memory_peak: int | None = None
    zram_mm_stat: list[int] = field(default_factory=list)
    #: The data disk's /sys/block/vda/stat at the workload's "start" and "end".
    blkstat: dict[str, list[int]] = field(default_factory=dict)
    #: CPU time at the workload's "start" and "end" (clock ticks, USER_HZ): each kswapd's
    #: (``{when: {"kswapd0": ticks}}``) and /proc/stat's cpu line (user nice system idle ...).
    kthread_ticks: dict[str, dict[str, int]] = field(default_factory=dict)
    cpustat: dict[str, list[int]] = field(default_factory=dict)
    #: Direct reclaim during the workload (``@@dreclaim``: mm_vmscan_direct_reclaim_begin
    #: to _end): how many, their total and longest microseconds; None from a guest before
    #: it was traced.
    direct_reclaim: tuple[int, int, int] | None = None
    #: The workload's own CPU time from its start to its exit, user and system, in ns
    #: (``@@wcpu``); None from a guest before it was recorded (28 Nov 2026).
    workload_cpu_ns: int | None = None
    #: khugepaged's ``full_scans`` and ``pages_collapsed`` at the workload's "start" and
    #: "end" (``@@khugepaged``; /sys/kernel/mm/transparent_hugepage/khugepaged).
    khugepaged: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per kswapd pass a wake-up started during the workload: microseconds from the first
    #: wakeup_kswapd to the pass's start, and the wakeup_kswapd calls meanwhile (``@@kswapd_wake``).
    kswapd_wakes: list[tuple[int, int]] = field(default_factory=list)
    #: Per entry of ``kswapd_wakes`` (boots since 28 Nov 2026; empty before): the pages
    #: (2^order each, kmem's mm_page_alloc) every task but kswapd allocated in that window, and
    #: those the first caller's comm allocated.
    kswapd_wake_pages: list[tuple[int, int]] = field(default_factory=list)
    #: Per entry of ``kswapd_wakes`` (boots since 28 Nov 2026, 03:30 UTC): the direct reclaims
    #: (mm_vmscan_direct_reclaim_begin) that began in that window.
    kswapd_wake_stalls: list[int] = field(default_factory=list)
    #: Events the wake-up trace's ring buffer lost (``@@kswapd_wake_lost``; None: the boot did
    #: not trace kswapd's wake-ups, a guest from before they were recorded).
    kswapd_wake_lost: int | None = None
    #: Who had kswapd's CPU over the workload (guest/init.sh ``sched_trace``, sched_switch):
    #: per (kswapd thread, CPU) ``{"runs", "run_us", "out_R", "out_S", "out_D", "in_idle"}``
    #: (``@@ksched``); its runs' lengths as ``{(thread, log2 µs): n}`` (``@@ksched_run``);
    #: what it took the CPU from, ``{(thread, task, its state): n}`` (``@@ksched_in``); and
    #: who took the CPU from it when it was preempted, ``{(thread, task): n}`` (``@@ksched_out``).
    ksched: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    ksched_runs: dict[tuple[str, int], int] = field(default_factory=dict)
    ksched_in: dict[tuple[str, str, str], int] = field(default_factory=dict)
    ksched_out: dict[tuple[str, str], int] = field(default_factory=dict)
    #: The workload's side of it (boots since 28 Nov 2026, 13:20 UTC): how its runs ended,
    #: ``{(state, next task's class): n}`` (``@@wsched_out``), and its waits to run, by the
    #: class of the task it got the CPU from, ``{class: (n, total µs, longest µs)}``
    #: (``@@wwait``); classes kswapd, kworker, idle, other.
    wsched_out: dict[tuple[str, str], int] = field(default_factory=dict)
    wwait: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: Where the workload and kswapd0 ran, from sched_switch: ``[(t_us, comm, cpu)]`` each
    #: time one began a run on another CPU than its last (``@@swcpu``, trace clock).
    switch_cpus: list[tuple[int, str, int]] = field(default_factory=list)
    #: ``kernel run --vmscan-trace`` (guest/init.sh ``vmscan_trace``): per kswapd pass the
    #: reclaim tracepoints' sums (``@@vmpass``, keys :data:`VMPASS_FIELDS`), direct reclaim's
    #: over the run (``@@vmdirect``, :data:`VMDIRECT_FIELDS`), ``lru_activate`` by task, and
    #: (level 2) DMA32's per-CPU lists sampled as ``(t_ms, cpu, count, high, free)``.
    vmscan_passes: list[dict[str, int]] = field(default_factory=list)
    vmscan_direct: dict[str, int] = field(default_factory=dict)
    #: Fallbacks to another migrate type's free lists over the run (``@@extfrag``), by
    #: :data:`EXTFRAG_FIELDS`: ``{(zone, alloc_mt, fallback_mt, fallback_order, ownership, comm): n}``.
    extfrag: dict[tuple[str, int, int, int, int, str], int] = field(default_factory=dict)
    #: Pageblock claim attempts below pageblock_order over the run (``@@claim``, a kprobe at
    #: prep_move_freepages_block; boots since 29 Nov 2026, 10:10 UTC), by the zone's rank in
    #: its node (0: the lowest): ``(attempts, first)``, ``first`` those that found the zone
    #: unboosted (each attempt boosts it first: ``boost_watermark``). None: not probed.
    claims: dict[int, tuple[int, int]] | None = None
    lru_activate: dict[str, int] = field(default_factory=dict)
    #: (level 2: ``(t_ms, cpu, count, high, free)``, and the zone's watermark boost after
    #: them in boots since 28 Nov 2026, 14:00 UTC.)
    pcp_samples: list[tuple[int, ...]] = field(default_factory=list)
    #: ``--wb-sample``'s ``(t, nr_free_pages)`` while the workload ran (``@@wbs``, every 50 ms
    #: of guest time; ``t`` as the guest printed it, uptime with its decimal point dropped).
    #: Logs before 28 Nov 2026, 19:30 UTC lack the free pages and give none.
    free_samples: list[tuple[int, int]] = field(default_factory=list)
    #: (level 2, boots since 28 Nov 2026, 14:05 UTC) DMA32's non-movable free blocks per
    #: order, every fifth sample: ``[(t_ms, "Unmovable"|"Reclaimable", (n0, .., n10))]``
    #: (``@@ptfree``).
    ptfree_samples: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)
    #: (level 2) the shrinkers per scan function's address and node:
    #: ``{(addr, nid): {"calls", "scanned", "freed"}}`` (``@@shrink``), and kernel symbols'
    #: addresses the guest looked up (``@@ksym``: ``deferred_split_scan``).
    shrinkers: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    ksyms: dict[str, str] = field(default_factory=dict)
    #: (level 3) refills of the per-CPU lists: ``{(cpu, frames): refills}`` (``@@refill``).
    pcp_refills: dict[tuple[int, int], int] = field(default_factory=dict)
    #: (level 3, boots since 29 Nov 2026, 10:45 UTC) the same refills in time order:
    #: ``(t_us, cpu, frames)`` (``@@refillseq``; t_us on the trace clock).
    pcp_refill_seq: list[tuple[int, int, int]] = field(default_factory=list)
    #: (level 3) the histogram triggers' counts per event and key values, the task as its
    #: name: ``{event: {("wl", "1"): n}}`` (``@@hist``: mm_page_alloc_zone_locked's refills
    #: and mm_page_pcpu_drain's frames by task and migrate type, mm_page_free's by task,
    #: mm_page_alloc_extfrag's fallbacks by task and fallback type).
    hists: dict[str, dict[tuple[str, ...], int]] = field(default_factory=dict)
    #: The workload's and kswapd0's CPUs at the start (``@@migrate_cpu``) and the workload's
    #: start and end on the trace clock, µs (``@@migrate_mark``). (Boots of 28 Nov 2026,
    #: 10:40–13:30 UTC also have ``@@migrate``, sched_migrate_task's moves: incomplete, some
    #: moves sched_switch shows are missing; not read.)
    migrate_cpus: dict[str, int] = field(default_factory=dict)
    migrate_marks: dict[str, int] = field(default_factory=dict)
    #: The CPUs' caches as the guest sees them: ``{(cpu, level, type): shared_cpu_list}``
    #: (``@@cpu_cache``).
    cpu_caches: dict[tuple[int, int, str], str] = field(default_factory=dict)
    #: DAMON_RECLAIM (``--damon-reclaim``): /sys/module/damon_reclaim/parameters/* after the
    #: workload (parameters, statistics, ``kdamond_ticks``: its CPU time in clock ticks), and
    #: the footprint samples taken while it ran.
    damon_reclaim: dict[str, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    #: The scheme's effective size quota, tried bytes and kdamond's CPU time sampled while
    #: it ran (``@@quota``, sysfs interface).
    quota_samples: list[QuotaSample] = field(default_factory=list)
    #: Its regions summarised after every aggregation (``@@snap``), and the tracepoint's
    #: events the guest's trace buffer overwrote before they were read (``@@snap_lost``).
    snapshots: list[Snapshot] = field(default_factory=list)
    snap_lost: int | None = None
    #: THP workloads (guest/thp.c): NUMA nodes and MemTotal (KiB) it saw, the defrag mode
    #: read back (``always defer [madvise] ...``), per thpscale thread count
    #: ``{threads, huge, base, sum_huge_us, sum_base_us}``, usemem's
    #: ``{threads, elapsed_ns, anon_huge_kb, anon_kb, pages_per_node}`` (the last: the
    #: region's resident pages per node at the end, ``@@usemem_nodes``).
    thp_nodes: int | None = None
    thp_memtotal_kb: int | None = None
    thp_defrag: str | None = None
    #: The median CPU time (ns) of the run's first THP faults on free memory (``@@thpfault
    #: MEDIAN_NS N``, guest/thp.c ``probe_store``).
    thp_fault_ns: int | None = None
    thpscale: list[dict[str, float]] = field(default_factory=list)
    #: Pageblocks per migrate type (/proc/pagetypeinfo) before the workload ("start") and
    #: after each phase ("0", "1", ...): WHEN -> [(node, zone, [unmovable, movable,
    #: reclaimable, highatomic, isolate])].
    pageblocks: dict[str, list[tuple[int, str, list[int]]]] = field(default_factory=dict)
    #: Every guest's free lists and pageblocks by migrate type (/proc/pagetypeinfo) at boot,
    #: the workload's start and its end (``@@freelist``, ``@@zoneblocks``): WHEN -> {(node, zone, type):
    #: free blocks per order 0..10} and WHEN -> {(node, zone): [unmovable, movable,
    #: reclaimable, highatomic, isolate]}.
    #: thpscale also prints both as each count begins, after its drop_caches (WHEN "count0",
    #: "count1", ...; guest/thp.c ``snapshot``).
    freelists: dict[str, dict[tuple[int, str, str], list[int]]] = field(default_factory=dict)
    zoneblocks: dict[str, dict[tuple[int, str], list[int]]] = field(default_factory=dict)
    #: The slab caches of 8 pages or more at the same moments (``@@slab``, /proc/slabinfo):
    #: WHEN -> {cache: [active_objs, objsize, objperslab, pagesperslab, slabs]}.
    slabs: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    #: Per node meminfo (KiB; /sys/devices/system/node/nodeN/meminfo) as each thpscale count
    #: begins (``@@nodemem WHEN NODE KEY KB``): WHEN -> {node: {key: KiB}}.
    nodemem: dict[str, dict[int, dict[str, int]]] = field(default_factory=dict)
    #: zram's mm_stat at the same moments (``@@zram_at WHEN FIELDS``): WHEN -> fields.
    zram_at: dict[str, list[int]] = field(default_factory=dict)
    usemem: dict[str, Any] = field(default_factory=dict)
    #: Where the anon pages sat after the first phase: present, min, p10, p50, p90, max PFN.
    pfns: list[int] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit: int | None = None
    done: bool = False
    panic: str | None = None
    #: The first oops line (``Oops: int3: ...``), which says what the panic came from.
    oops: str | None = None

    @property
    def finished(self) -> bool:
        return self.done and self.exit == 0 and not self.errors

    @property
    def thp_mode(self) -> str | None:
        """The selected THP mode (``always``, ``madvise``, ``never``), None if not printed."""
        m = re.search(r"\[(\w+)\]", self.thp or "")
        return m.group(1) if m else None

    def layout(self, when: str) -> Layout:
        return self.layouts.setdefault(when, Layout())

    def nodes(self) -> list[int]:
        """The NUMA nodes with managed memory, from the zones reported just before the
        workload (at boot if that is missing)."""
        lay = self.layouts.get("start") or self.layouts.get("boot")
        return sorted({z.node for z in lay.zones if z.managed}) if lay else []

    def node_managed(self) -> dict[int, int]:
        """Managed pages per NUMA node (the same zones as :meth:`nodes`)."""
        lay = self.layouts.get("start") or self.layouts.get("boot")
        out: dict[int, int] = {}
        for z in lay.zones if lay else []:
            out[z.node] = out.get(z.node, 0) + z.managed
        return out

    def read_back(self) -> dict:
        """The guest's settings as it read them back."""
        return {"read_ahead_kb": self.read_ahead_kb, "fault_around_bytes": self.fault_around_bytes,
                "thp": self.thp_mode, "lru_gen": self.lru_gen, "memory.max": self.memory_max,
                **{f"vm.{k}": v for k, v in self.sysctl.items()}}

    def zram_ratio(self) -> float | None:
        """The model's ``swap.zram.compression_ratio``: bytes stored per byte of RAM the pool
        took, when zram stored the most data. The pool is zsmalloc's pages
        (``mem_used_total``), 13-30 % above ``compr_data_size`` (size classes, partly used
        zspages); a log without it at the phase ends takes the pool's peak
        (``mem_used_max`` of the final ``@@zram_mm_stat``: a lower bound of the ratio), and
        one with neither orig / compr. At least 1: a pool holding a few pages is mostly
        zsmalloc's zspages of their size classes, more than the pages themselves, and the
        model's pool takes no more than the pages."""
        best = max((ph.zram for ph in self.phases if ph.zram and ph.zram[1]), default=None)
        if not best:
            return None
        # Documentation/admin-guide/blockdev/zram.rst, mm_stat: ... mem_used_total mem_limit
        # mem_used_max ...
        pool = best[2] if len(best) > 2 else self.zram_mm_stat[4] if len(self.zram_mm_stat) > 4 else 0
        return max(1.0, best[0] / (pool or best[1]))

    def cgroup(self, name: str) -> Cgroup | None:
        """The workload's cgroup called ``name``, if the guest made it."""
        return next((cg for cg in self.cgroups.values() if cg.name == name), None)

    def memstat(self) -> dict[str, dict[str, int]]:
        """Each named cgroup's memory.stat at the end of the last phase, by name."""
        last = self.phases[-1].memstat if self.phases else {}
        return {cg.name: dict(last.get(i, {})) for i, cg in sorted(self.cgroups.items()) if cg.name}

    def disk_writes(self) -> DiskWrites | None:
        """What the data disk did between the workload's start and end (None without both
        ``@@blkstat`` lines)."""
        a, b = self.blkstat.get("start"), self.blkstat.get("end")
        if a is None or b is None:
            return None
        d = [y - x for x, y in zip(a, b)]
        # Documentation/block/stat.rst: read I/Os, merges, sectors, ticks (ms), the same for
        # writes, in_flight, io_ticks (ms busy), time_in_queue (ms), ...
        return DiskWrites(reads=d[0], read_ticks_ms=d[3], writes=d[4], write_sectors=d[6], write_ticks_ms=d[7],
                          busy_ms=d[9])

    def task_cpus(self) -> list[tuple[float, int]] | None:
        """Where the workload ran over its run: ``[(seconds from its start on the guest's
        clock, CPU)]``, its CPU at the start (``@@migrate_cpu``) and each CPU it later began a
        run on (``@@swcpu``, from sched_switch); None if the boot did not record them (a guest
        before 28 Nov 2026, 13:21 UTC, or not a /wl workload)."""
        start, end = self.migrate_marks.get("start"), self.migrate_marks.get("end")
        if start is None or end is None or "wl" not in self.migrate_cpus or not self.switch_cpus:
            return None
        out = [(0.0, self.migrate_cpus["wl"])]
        for t, comm, cpu in self.switch_cpus:
            if comm == "wl" and start < t <= end and cpu != out[-1][1]:
                out.append(((t - start) / 1e6, cpu))
        return out

    def kswapd_ticks(self) -> int | None:
        """Clock ticks (USER_HZ) every kswapd ran during the workload (None without both
        ``@@kthread`` reports)."""
        a, b = self.kthread_ticks.get("start"), self.kthread_ticks.get("end")
        if a is None or b is None:
            return None
        return sum(b[k] - a.get(k, 0) for k in b)

    def cpu_busy_ticks(self) -> int | None:
        """Clock ticks all CPUs were busy (not idle or iowait) during the workload."""
        a, b = self.cpustat.get("start"), self.cpustat.get("end")
        if a is None or b is None:
            return None
        d = [y - x for x, y in zip(a, b)]
        return sum(d) - d[3] - d[4]

    def kswapd_passes(self) -> dict[str, float] | None:
        """kswapd's passes (``@@vmpass``, ``--vmscan-trace``): how many shrank and how many
        found the node balanced at once (``empty``); per pass that shrank, the pages reclaimed
        (mean, median, 90th percentile) and the lowest priority it reached (mean). The model
        reports the same (``kswapd_pass_*``). None without a traced pass."""
        shrank = [p for p in self.vmscan_passes if p["min_priority"] != 99]
        if not shrank:
            return None
        got = sorted(p["reclaimed"] for p in shrank)
        at = (lambda f: float(got[round((len(got) - 1) * f)]))
        return {"passes": float(len(shrank)), "empty": float(len(self.vmscan_passes) - len(shrank)),
                "reclaimed_mean": sum(got) / len(got), "reclaimed_p50": at(0.5), "reclaimed_p90": at(0.9),
                "min_priority_mean": sum(p["min_priority"] for p in shrank) / len(shrank)}

    def lru_gen_max_seq(self, memcg: str) -> int | None:
        """MGLRU's ``max_seq`` of ``memcg`` (its path, "/wl") on node 0 at the last phase's end
        (``@@mglru_gen``): 3 plus how often the kernel aged it. None without the record."""
        seqs = [g[2] for g in (self.phases[-1].mglru_gens if self.phases else []) if g[0] == memcg and g[1] == 0]
        return max(seqs) if seqs else None

    def vmstat(self) -> dict[str, int]:
        """Counter deltas summed over every phase."""
        out: dict[str, int] = {}
        for ph in self.phases:
            for k, v in ph.vmstat.items():
                out[k] = out.get(k, 0) + v
        return out


def parse_zone(parts: list[str]) -> Zone:
    """``NODE ZONE key=value ...`` (``protection=a,b,...``) -> :class:`Zone`."""
    z = Zone(int(parts[0]), parts[1])
    for item in parts[2:]:
        k, _, v = item.partition("=")
        if k == "protection":
            z.protection = [int(x) for x in v.split(",") if x]
        elif k in ("free", "min", "low", "high", "spanned", "present", "managed"):
            setattr(z, k, int(v))
    return z


#: ``@@vmpass`` fields (guest/init.sh ``vmscan_trace``): the pass's start (µs from the first
#: traced event), the zone index and order kswapd_wake reported, the wakeup_kswapd calls since
#: the previous pass and the lowest zone index they asked for (-1: none), then sums over the
#: pass's mm_vmscan_lru_shrink_inactive calls (scanned, reclaimed, activated file, kept for
#: references, unmap failures), mm_vmscan_lru_isolate (taken, skipped for a higher zone), the
#: lowest priority (99: no shrink call, the node was balanced when the pass began) and
#: mm_vmscan_lru_shrink_active (taken, deactivated); then the folios isolate scanned but
#: neither took nor skipped (MGLRU's ``sort_folio`` moves, PGREFILL), the wake-ups since the
#: previous pass with gfp_flags 0 (``rmqueue``'s for a boosted zone) and the fallbacks
#: (``mm_page_alloc_extfrag``) from the node's lowest zone since the previous pass. Lines
#: of guests before these three read them as 0.
VMPASS_FIELDS = ("t_us", "zid", "order", "wakes", "wake_min_zid", "calls", "scanned", "taken", "skipped",
                 "reclaimed", "activate_file", "ref_keep", "unmap_fail", "min_priority", "active_taken",
                 "deactivated", "sorted", "gfp0_wakes", "extfrag_low")
#: ``@@extfrag``'s key fields: the zone, the migrate types allocated and fallen back to, the
#: fallback's order, whether the block changed owner, and the allocating task.
EXTFRAG_FIELDS = ("zone", "alloc_mt", "fallback_mt", "fallback_order", "ownership", "comm")
VMDIRECT_FIELDS = ("calls", "scanned", "taken", "skipped", "reclaimed", "activate_file")
#: ``@@ksched COMM CPU ...``'s fields after the CPU: runs, their total µs, how they ended
#: (preempted, asleep, in D state) and how many began on an idle CPU.
KSCHED_FIELDS = ("runs", "run_us", "out_R", "out_S", "out_D", "in_idle")


#: One histogram trigger's line: ``{ common_pid: wl [ 238], migratetype: 1 } hitcount: 5``.
HIST_LINE = re.compile(r"\{(.*)\}\s*hitcount:\s*(\d+)")


def parse_hist(c: Console, event: str, text: str) -> None:
    """One ``@@hist EVENT {...} hitcount: N`` line into ``c.hists[event]``, keyed by the key
    fields' values (a ``common_pid`` by its task name, ``wl [ 238]``; a ``.sym`` key by its
    symbol, ``[ffffffff87e2dc00] vmpressure_work_fn``)."""
    def value(v: str) -> str:
        v = v.strip()
        return v.split("]", 1)[1].strip() if v.startswith("[") else v.split("[")[0].strip()

    m = HIST_LINE.search(text)
    if not m:
        return
    key = tuple(value(kv.split(":", 1)[-1]) for kv in m.group(1).split(","))
    c.hists.setdefault(event, {})[key] = int(m.group(2))


def clean(line: str) -> str:
    return ESCAPE.sub("", line).rstrip()


def parse(text: str) -> Console:
    c = Console()
    cur: Phase | None = None
    for raw in text.splitlines():
        line = clean(raw)
        if "Kernel panic" in line and c.panic is None:
            c.panic = line[line.index("Kernel panic"):]
        if "Oops: " in line and c.oops is None:
            c.oops = line[line.index("Oops: "):]
        at = line.find("@@")
        if at < 0:
            continue
        m = MARK.match(line[at:])
        if not m:
            continue
        tag, rest = m.group(1), (m.group(2) or "").strip()
        parts = rest.split()
        try:
            if tag == "boot" and parts:
                c.release = parts[0]
            elif tag == "lru_gen":
                c.lru_gen = rest
            elif tag == "sysctl" and len(parts) == 2:
                c.sysctl[parts[0]] = int(parts[1])
            elif tag == "meminfo" and len(parts) == 2:  # untagged (guests before the layout report)
                c.meminfo[parts[0]] = int(parts[1])
            elif tag == "meminfo" and len(parts) == 3:
                c.layout(parts[0]).meminfo[parts[1]] = c.meminfo[parts[1]] = int(parts[2])
            elif tag == "zone" and len(parts) >= 3:
                c.layout(parts[0]).zones.append(parse_zone(parts[1:]))
            elif tag == "min_free_kbytes" and len(parts) == 2:
                c.layout(parts[0]).min_free_kbytes = int(parts[1])
            elif tag == "sysfs" and len(parts) == 2 and parts[0] == "read_ahead_kb":
                c.read_ahead_kb = int(parts[1])
            elif tag == "fault_around_bytes" and parts:
                c.fault_around_bytes = int(parts[0])
            elif tag == "thp" and parts:
                c.thp = rest
            elif tag == "memory.max":
                c.memory_max = rest
            elif tag == "cgroup" and len(parts) in (2, 6):
                name = "" if parts[1] == "-" else parts[1]
                limits = dict(zip(("memory.max", "memory.high", "memory.low", "memory.min"), parts[2:]))
                c.cgroups[int(parts[0])] = Cgroup(name, limits)
            elif tag == "memstat" and len(parts) == 3 and cur is not None:
                cur.memstat.setdefault(int(parts[0]), {})[parts[1]] = int(parts[2])
            elif tag == "cgevents" and len(parts) == 3:
                i = int(parts[0])
                c.cgroups.setdefault(i, Cgroup(str(i))).events[parts[1]] = int(parts[2])
                if i == 0:
                    c.memory_events[parts[1]] = int(parts[2])
            elif tag == "cgpeak" and len(parts) == 2:
                i = int(parts[0])
                c.cgroups.setdefault(i, Cgroup(str(i))).peak = int(parts[1])
                if i == 0:
                    c.memory_peak = int(parts[1])
            elif tag == "reclaim" and len(parts) == 3:
                i = int(parts[0])
                c.cgroups.setdefault(i, Cgroup(str(i))).reclaims.append((int(parts[1]), int(parts[2])))
            elif tag == "memory.events" and len(parts) == 2:
                c.memory_events[parts[0]] = int(parts[1])
            elif tag == "memory.peak" and parts:
                c.memory_peak = int(parts[0])
            elif tag == "blkstat" and len(parts) >= 12:
                c.blkstat[parts[0]] = [int(x) for x in parts[1:]]
            elif tag == "kthread" and len(parts) == 3:
                c.kthread_ticks.setdefault(parts[0], {})[parts[1]] = int(parts[2])
            elif tag == "dreclaim" and len(parts) == 3:
                c.direct_reclaim = (int(parts[0]), int(parts[1]), int(parts[2]))
            elif tag == "wcpu" and len(parts) == 1:
                c.workload_cpu_ns = int(parts[0])
            elif tag == "khugepaged" and len(parts) == 5:
                c.khugepaged[parts[0]] = {parts[1]: int(parts[2]), parts[3]: int(parts[4])}
            elif tag == "kswapd_wake" and len(parts) in (2, 4, 5):
                c.kswapd_wakes.append((int(parts[0]), int(parts[1])))
                if len(parts) >= 4:
                    c.kswapd_wake_pages.append((int(parts[2]), int(parts[3])))
                if len(parts) == 5:
                    c.kswapd_wake_stalls.append(int(parts[4]))
            elif tag == "kswapd_wake_lost" and len(parts) == 1 and parts[0].isdigit():
                c.kswapd_wake_lost = int(parts[0])
            elif tag == "ksched" and len(parts) == 8:
                c.ksched[(parts[0], int(parts[1]))] = dict(zip(KSCHED_FIELDS, map(int, parts[2:])))
            elif tag == "ksched_run" and len(parts) == 3:
                c.ksched_runs[(parts[0], int(parts[1]))] = int(parts[2])
            elif tag == "ksched_in" and len(parts) == 4:
                c.ksched_in[(parts[0], parts[1], parts[2])] = int(parts[3])
            elif tag == "ksched_out" and len(parts) == 3:
                c.ksched_out[(parts[0], parts[1])] = int(parts[2])
            elif tag == "wsched_out" and len(parts) == 3:
                c.wsched_out[(parts[0], parts[1])] = int(parts[2])
            elif tag == "swcpu" and len(parts) == 3:
                c.switch_cpus.append((int(parts[0]), parts[1], int(parts[2])))
            elif tag == "wwait" and len(parts) == 4:
                c.wwait[parts[0]] = (int(parts[1]), int(parts[2]), int(parts[3]))
            elif tag == "vmpass" and len(parts) in (len(VMPASS_FIELDS) - 3, len(VMPASS_FIELDS)):
                c.vmscan_passes.append(dict(zip(VMPASS_FIELDS, [*map(int, parts), 0, 0, 0])))
            elif tag == "extfrag" and len(parts) == len(EXTFRAG_FIELDS) + 1:
                z, amt, fmt, order, own, comm, n = parts
                c.extfrag[(z, int(amt), int(fmt), int(order), int(own), comm)] = int(n)
            elif tag == "claim":
                c.claims = c.claims or {}
                if len(parts) == 3:
                    c.claims[int(parts[0])] = (int(parts[1]), int(parts[2]))
            elif tag == "vmdirect" and len(parts) == len(VMDIRECT_FIELDS):
                c.vmscan_direct = dict(zip(VMDIRECT_FIELDS, map(int, parts)))
            elif tag == "lru_activate" and len(parts) == 2:
                c.lru_activate[parts[0]] = int(parts[1])
            elif tag == "shrink" and len(parts) == 5:
                c.shrinkers[(parts[0], int(parts[1]))] = dict(zip(("calls", "scanned", "freed"), map(int, parts[2:])))
            elif tag == "ksym" and len(parts) == 2:
                c.ksyms[parts[0]] = parts[1]
            elif tag == "refillseq" and len(parts) == 3:
                c.pcp_refill_seq.append((int(parts[0]), int(parts[1]), int(parts[2])))
            elif tag == "refill" and len(parts) == 3:
                c.pcp_refills[(int(parts[0]), int(parts[1]))] = int(parts[2])
            elif tag == "hist" and len(parts) >= 2:
                parse_hist(c, parts[0], " ".join(parts[1:]))
            elif tag == "migrate_cpu" and len(parts) == 2:
                c.migrate_cpus[parts[0]] = int(parts[1])
            elif tag == "migrate_mark" and len(parts) == 2:
                c.migrate_marks[parts[1]] = int(parts[0])
            elif tag == "cpu_cache" and len(parts) == 4:
                c.cpu_caches[(int(parts[0]), int(parts[1]), parts[2])] = parts[3]
            elif tag == "ptfree" and len(parts) == 13:
                c.ptfree_samples.append((int(parts[0]), parts[1], tuple(int(x) for x in parts[2:])))
            elif tag == "wbs" and len(parts) == 10:
                c.free_samples.append((int(parts[0]), int(parts[9])))
            elif tag == "pcp" and len(parts) in (5, 6):
                c.pcp_samples.append(tuple(int(x) for x in parts))
            elif tag == "cpustat" and len(parts) >= 5:
                c.cpustat[parts[0]] = [int(x) for x in parts[1:]]
            elif tag == "nodemem" and len(parts) == 4:
                c.nodemem.setdefault(parts[0], {}).setdefault(int(parts[1]), {})[parts[2]] = int(parts[3])
            elif tag == "zram_at" and len(parts) >= 2:
                c.zram_at[parts[0]] = [int(x) for x in parts[1:]]
            elif tag == "zram_mm_stat":
                c.zram_mm_stat = [int(x) for x in parts]
            elif tag == "damon_reclaim" and len(parts) == 2:
                c.damon_reclaim[parts[0]] = parts[1]
            elif tag == "nodes" and len(parts) == 2:
                c.thp_nodes, c.thp_memtotal_kb = int(parts[0]), int(parts[1])
            elif tag == "freelist" and len(parts) == 15:
                c.freelists.setdefault(parts[0], {})[(int(parts[1]), parts[2], parts[3])] = [int(x) for x in parts[4:]]
            elif tag == "slab" and len(parts) == 7:
                c.slabs.setdefault(parts[0], {})[parts[1]] = [int(x) for x in parts[2:]]
            elif tag == "zoneblocks" and len(parts) == 8 and not parts[2].endswith(","):
                # (Guests before 29 Nov 2026 also printed a second node's free-list lines
                # here, "NODE ZONE, type TYPE ...": not a zone's pageblocks.)
                c.zoneblocks.setdefault(parts[0], {})[(int(parts[1]), parts[2])] = [int(x) for x in parts[3:]]
            elif tag == "pageblocks" and len(parts) == 8:
                c.pageblocks.setdefault(parts[0], []).append((int(parts[1]), parts[2], [int(x) for x in parts[3:]]))
            elif tag == "thp_defrag" and parts:
                c.thp_defrag = rest
            elif tag == "thpscale" and len(parts) == 5:
                c.thpscale.append(dict(zip(("threads", "huge", "base"), map(int, parts[:3])),
                                       sum_huge_us=float(parts[3]), sum_base_us=float(parts[4])))
            elif tag == "usemem" and len(parts) == 4:
                c.usemem |= dict(zip(("threads", "elapsed_ns", "anon_huge_kb", "anon_kb"), map(int, parts)))
            elif tag == "thpfault" and len(parts) == 2:
                c.thp_fault_ns = int(parts[0])
            elif tag == "usemem_nodes" and parts:
                c.usemem["pages_per_node"] = [int(x) for x in parts]
            elif tag == "pfns" and len(parts) == 6:
                c.pfns = [int(x) for x in parts]
            elif tag == "snap" and len(parts) == 5:
                c.snapshots.append(Snapshot(float(parts[0]), *(int(x) for x in parts[1:])))
            elif tag == "snap_lost" and len(parts) == 1:
                c.snap_lost = int(parts[0])
            elif tag == "quota" and len(parts) == 5:
                c.quota_samples.append(QuotaSample(float(parts[0]), *(int(x) for x in parts[1:])))
            elif tag == "sample" and len(parts) == 3:
                c.samples.append(Sample(float(parts[0]), int(parts[1]), int(parts[2])))
            elif tag == "phase" and len(parts) == 2:
                cur = Phase(int(parts[0]), int(parts[1]))
            elif tag == "vm" and len(parts) == 2 and cur is not None:
                cur.vmstat[parts[0]] = int(parts[1])
            elif tag == "trace" and len(parts) == 4 and cur is not None:
                cur.trace[" ".join(parts[:3])] = int(parts[3])
            elif tag == "mglru_gen" and len(parts) == 6 and cur is not None:
                cur.mglru_gens.append((parts[0], *map(int, parts[1:])))
            elif tag == "zram" and len(parts) in (2, 3) and cur is not None:
                cur.zram = tuple(int(x) for x in parts)
            elif tag == "phase-end" and cur is not None:
                c.phases.append(cur)
                cur = None
            elif tag == "done":
                c.done = True
            elif tag == "exit" and parts:
                c.exit = int(parts[0])
            elif tag == "error":
                c.errors.append(rest)
            elif tag == "warn":
                c.warnings.append(rest)
        except ValueError:
            c.warnings.append(f"unparsable console line: {line[at:][:200]}")
    return c
