"""A real-kernel experiment: check the input, build the initramfs and data disk, boot N
times (one guest at a time), parse each console, store each boot in the results store.
Every check that can fail does so before the first boot."""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import _core
from . import (KERNEL_DEFAULT_FAULT_AROUND_BYTES, KERNEL_DEFAULT_READ_AHEAD_KB, GuestError, KernelError, console, damon,
               disk, fetch, guest, initramfs, qemu, workload)
from .fetch import Kernel
from .workload import PAGE, Workload

#: Guest RAM the workload's cgroup lives in; memory.max must leave room for the kernel,
#: the initramfs (tmpfs), the ops buffer and the zram pool outside the cgroup.
GUEST_MB = 512
GUEST_RESERVE = 160 << 20
#: The least guest RAM that boots and runs a small workload (kernel, initramfs, ops buffer).
GUEST_MIN = 256 << 20
#: fault_around_bytes_set() refuses more than PTRS_PER_PTE pages (a PMD, 2 MiB on x86-64).
PMD_SIZE = 2 << 20
THP_MODES = ("always", "madvise", "never")
#: The least RAM of one NUMA node (``--nodes``): the kernel, its per-node structures and a
#: workload's share must fit each node.
NODE_MIN_MB = 128
#: 6.12's Debian config: CONFIG_NODES_SHIFT=10; QEMU takes up to 128 nodes (MAX_NODES).
MAX_NODES = 64


def parse_size(value: str | int, what: str) -> int:
    try:
        return int(_core.parse_size(str(value)))
    except Exception:
        raise KernelError(f"{what}: not a size: {value!r} (e.g. 128M, 1G)") from None


@dataclass
class Setup:
    """The user's request (``reclaimlab kernel run`` options)."""

    workload: str
    kernel: str | None = None
    mglru: str | None = None  # "on", "off" or None (the kernel's default)
    memory: str = "128M"  # the cgroup's memory.max, or "none": no limit (whole-machine reclaim)
    swap: str | None = None  # "zram:SIZE", "none", or None = zram for anon workloads
    swappiness: int | None = None
    pcp_high_fraction: int | None = None  # vm.percpu_pagelist_high_fraction (None: the kernel's, 0)
    watermark_boost_factor: int | None = None  # vm.watermark_boost_factor (None: the kernel's, 15000)
    pin_cpus: bool = False  # the workload on CPU 0, kswapd and kcompactd on CPU 1 (as the simulator)
    # Reclaim's tracepoints summed per kswapd pass (@@vmpass, guest/init.sh vmscan_trace); its
    # ring buffer takes 8 MiB of the guest's memory, so off by default.
    vmscan_trace: bool | int = False  # 2: also the first 600 events (@@vmraw); 3: pcp refill sizes only (@@refill)
    # Sample the data disk's requests in flight, wbt's limits and the dirty and writeback pages
    # every 50 ms while the workload runs (@@wbs, guest/init.sh wb_sample).
    wb_sample: bool = False
    boots: int = 3
    timeout: float | None = None
    guest_mb: int = GUEST_MB
    disk_size: str | None = None
    accel: str | None = None
    tick_us: int = 0  # per-CPU sleepers that make TCG flush its soft TLB (0: none)
    smp: int = 2  # guest CPUs
    # NUMA nodes (QEMU -numa): guest RAM and CPUs split evenly (an int, or the CLI's string).
    nodes: int | str = 1
    # The data disk's /sys/block/vda/queue/read_ahead_kb (an int, or the CLI's string).
    read_ahead_kb: int | str = KERNEL_DEFAULT_READ_AHEAD_KB
    # /sys/kernel/debug/fault_around_bytes.
    fault_around_bytes: int | str = KERNEL_DEFAULT_FAULT_AROUND_BYTES
    # transparent_hugepage/enabled: "always", "madvise", "never", or None (not written).
    thp: str | None = None
    # DAMON_RECLAIM's parameters, "KEY=VALUE[,...]" (kernel.damon.parse); None: module off.
    damon_reclaim: str | None = None
    # "module" or "sysfs" (kernel.damon.interface_for); None: by the kernel's version.
    damon_interface: str | None = None
    # The sysfs scheme's action: None (pageout, the module's) or "stat" (monitoring only:
    # kdamond's monitoring cost in the guest without its actions).
    damon_action: str | None = None
    # Sample the workload's memory.current while it runs (always with damon_reclaim).
    sample: bool = False
    # "cgroup.NAME.memory.{max,high,low,min}=VALUE" settings of the workload's cgroups.
    cgroup_set: tuple[str, ...] = ()
    # The simulator's disk for written pages: "model" (its cost.file_write_ns) or
    # "measured" (the guest disk's write time per page, from its /sys/block/vda/stat, on
    # the simulated clock: validate only, it changes no boot).
    disk_write: str = "model"
    # The same for reads: "model" (cost.file_read_ns) or "measured" (the guest disk's busy
    # time per read request on the simulated clock; validate only).
    disk_read: str = "model"
    # kswapd's wake-up latency: "model" (cost.kswapd_wakeup_ns), "mean" (the guest's mean time
    # from wakeup_kswapd to the pass, @@kswapd_wake, on the simulated clock) or "measured"
    # (the distribution of those times, drawn at each wake-up; validate only) or "progress"
    # (as measured, each window the pages allocated in it at the boot's wall time per page).
    kswapd_wakeup: str = "model"
    # Where the workload runs in the simulator: "model" (CPU 0 throughout) or "measured" (the
    # CPUs the first boot's scheduler ran it on, @@swcpu: machine.task_cpus; validate only);
    # kswapd on the other CPU either way.
    cpu_placement: str = "model"
    # The time quota's clock for kdamond's actions: "model" (the cost.* kdamond charges) or
    # "measured" (those charges times kdamond's measured slowdown in the guest,
    # sim.kdamond_slowdown: damon_compare.kdamond_slowdown; validate --damon-reclaim only).
    damon_cost: str = "model"
    # The model's reclaim CPU costs: "model" (its cost.*) or "measured" (scaled so that
    # kswapd's CPU per page scanned, relative to the task's own work, is the guest's:
    # kernel.cpu_cost; validate only).
    cpu_cost: str = "model"

    @property
    def limited(self) -> bool:
        """True when the workload runs under a memory.max (False: ``--memory-max none``)."""
        return str(self.memory).strip().lower() != "none"


@dataclass
class Prepared:
    setup: Setup
    kernel: Kernel
    wl: Workload
    memory_max: int | None  # None: no limit (memory.max = max)
    zram: int
    timeout: float
    disk_size: int | None
    read_ahead_kb: int = KERNEL_DEFAULT_READ_AHEAD_KB
    fault_around_bytes: int = KERNEL_DEFAULT_FAULT_AROUND_BYTES
    nodes: int = 1
    append: str = ""
    boots: list = field(default_factory=list)
    #: DAMON_RECLAIM's parameters as asked (None: the module stays off), and how it runs.
    damon_reclaim: dict[str, str] | None = None
    damon_interface: str = ""
    #: Each named cgroup's memory.max/high/low/min as the guest writes them (bytes or "max").
    cgroup_limits: dict[str, dict[str, str]] = field(default_factory=dict)


def check_features(kernel: Kernel, setup: Setup, zram: int) -> None:
    """Errors for a kernel that lacks what the run needs (read from boot/config-*)."""
    if not kernel.has("MEMCG"):
        raise KernelError(f"kernel {kernel.release} has no CONFIG_MEMCG: cannot pin the workload with memory.max")
    if setup.mglru is not None and not kernel.has("LRU_GEN"):
        raise KernelError(f"--mglru {setup.mglru}: kernel {kernel.release} is built without CONFIG_LRU_GEN")
    if zram and not kernel.has("ZRAM"):
        raise KernelError(f"--swap zram: kernel {kernel.release} is built without CONFIG_ZRAM")
    if setup.thp in ("always", "madvise") and not kernel.has("TRANSPARENT_HUGEPAGE"):
        raise KernelError(f"--thp {setup.thp}: kernel {kernel.release} is built without CONFIG_TRANSPARENT_HUGEPAGE")
    if nodes_of(setup) > 1 and not kernel.has("NUMA"):
        raise KernelError(f"--nodes {setup.nodes}: kernel {kernel.release} is built without CONFIG_NUMA")
    if setup.damon_reclaim is not None and kernel.config.get("CONFIG_DAMON_RECLAIM") != "y":
        raise KernelError(f"--damon-reclaim: kernel {kernel.release} does not have DAMON_RECLAIM built in "
                          f"(CONFIG_DAMON_RECLAIM=y; its parameters are set on the kernel command line)")


def default_timeout(wl: Workload) -> float:
    """Boot + setup, plus a generous per-access allowance for TCG (anon swap is slowest; a
    real program's records are mostly its own instruction and data pages, each far
    cheaper than a replayed access)."""
    if wl.thp is not None:  # per thread count (thpscale) or run (usemem), measured on 1 GiB guests
        return 120.0 + 300.0 * (len(wl.thp["threads"]) if wl.thp["kind"] == "thpscale" else 2)
    per = 20e-6 if wl.program is not None else 400e-6 if wl.anon_pages else 150e-6
    return 120.0 + per * len(wl)


def guest_mb_of(value: str | int) -> int:
    """``--guest-memory``: a size (``512M``, ``1G``), or a bare number of MiB (the option's
    first spelling, ``--guest-memory 512``). Guest RAM is whole MiB (QEMU's ``-m``)."""
    text = str(value).strip()
    size = int(text) << 20 if text.isdigit() else parse_size(text, "--guest-memory")
    if size % (1 << 20):
        raise KernelError(f"--guest-memory {value}: give whole MiB (e.g. 512M, 1G)")
    return size >> 20


def _int_option(value: int | str, flag: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise KernelError(f"{flag} {value}: not an integer") from None


def guest_options(setup: Setup) -> tuple[int, int, str | None]:
    """(read_ahead_kb, fault_around_bytes, thp) checked; thp None = the kernel's default."""
    ra = _int_option(setup.read_ahead_kb, "--read-ahead-kb")
    # queue_ra_store() takes an unsigned long up to UINT_MAX (block/blk-sysfs.c, 6.12).
    if not 0 <= ra <= 0xFFFF_FFFF:
        raise KernelError(f"--read-ahead-kb {setup.read_ahead_kb}: must be 0 (no readahead) .. 4294967295 KiB")
    fab = _int_option(setup.fault_around_bytes, "--fault-around-bytes")
    if not 4096 <= fab <= PMD_SIZE or fab & (fab - 1):
        raise KernelError(f"--fault-around-bytes {setup.fault_around_bytes}: must be a power of two from 4096 "
                          f"(one page: no fault-around) to {PMD_SIZE} (a PMD)")
    if setup.thp is not None and setup.thp not in THP_MODES:
        raise KernelError(f"--thp {setup.thp}: must be always, madvise or never")
    return ra, fab, setup.thp


def nodes_of(setup: Setup) -> int:
    """``--nodes`` checked: 1..MAX_NODES, at least one guest CPU and NODE_MIN_MB of RAM per node."""
    n = _int_option(setup.nodes, "--nodes")
    if not 1 <= n <= MAX_NODES:
        raise KernelError(f"--nodes {setup.nodes}: must be 1..{MAX_NODES}")
    if n > 1 and setup.guest_mb // n < NODE_MIN_MB:
        raise KernelError(f"--nodes {n}: the {setup.guest_mb} MiB guest gives each node {setup.guest_mb // n} MiB, "
                          f"less than {NODE_MIN_MB} MiB (raise --guest-memory to at least {n * NODE_MIN_MB}M)")
    if n > setup.smp:
        raise KernelError(f"--nodes {n}: needs at least one guest CPU per node (--smp is {setup.smp})")
    return n


def memory_limit(setup: Setup) -> int | None:
    """memory.max in bytes, or None for ``--memory-max none``; checked against the guest."""
    guest = setup.guest_mb << 20
    if guest < GUEST_MIN:
        raise KernelError(f"--guest-memory {setup.guest_mb}M: the guest needs at least {GUEST_MIN >> 20}M "
                          f"(kernel, initramfs, the ops buffer)")
    if not setup.limited:
        return None
    memory_max = parse_size(setup.memory, "--memory-max")
    if memory_max < (8 << 20):
        raise KernelError(f"--memory-max {setup.memory}: at least 8M")
    if memory_max + GUEST_RESERVE > guest:
        raise KernelError(f"--memory-max {setup.memory} leaves too little of the {setup.guest_mb} MiB guest "
                          f"outside the cgroup (keep {GUEST_RESERVE >> 20} MiB free; raise --guest-memory)")
    return memory_max


def workload_room(setup: Setup, memory_max: int | None) -> int:
    """Bytes the workload may use: memory.max, or without a limit the guest's RAM less
    what the kernel and the rest of the guest keep (GUEST_RESERVE). Default workload sizes
    follow it."""
    return memory_max if memory_max is not None else (setup.guest_mb << 20) - GUEST_RESERVE


#: 6.12 leaves THP off below 512 MiB of RAM (mm/huge_memory.c hugepage_init: totalram_pages()
#: < 512 MiB clears transparent_hugepage_flags); a guest's totalram is its RAM less the
#: kernel's image and reservations, so THP workloads ask for this much guest RAM.
THP_GUEST_MIN_MB = 640


def cpu_cost_unfit(wl: Workload) -> str | None:
    """Why ``--cpu-cost measured`` cannot compare ``wl``'s task on both sides (None: it can).
    It needs the same work outside reclaim in guest and model: one /wl task (a program's
    tasks share a clock in the model), no sleeps (a schedule is not work), and no file
    pages: under TCG the guest's reads are the task's CPU in the read path (a seqloop boot's
    task is on its CPU 97 % of its wall time), where the model waits for the disk
    (docs/validation.md, "The guest's relative speeds"). The THP workloads take another
    measure, their first THP faults' cost (thp_compare.simulate)."""
    if wl.thp is not None:
        return None
    if wl.program is not None:
        return "a real program"
    if wl.sleep_us is not None:
        return "a workload that sleeps"
    if wl.file_pages:
        return "a workload with file pages (the guest's read path is the task's CPU, the model's a disk wait)"
    return None


def check_cpu_cost(setup: Setup, wl: Workload) -> None:
    """A clear error for ``--cpu-cost`` where it does not apply (:func:`cpu_cost_unfit`)."""
    if setup.cpu_cost not in ("model", "measured"):
        raise KernelError(f"--cpu-cost must be model or measured, got {setup.cpu_cost!r}")
    why = cpu_cost_unfit(wl) if setup.cpu_cost == "measured" else None
    if why:
        raise KernelError(f"--cpu-cost measured: not for {why}")


def check_thp_workload(setup: Setup, wl: Workload) -> None:
    """A THP workload (thpscale, usemem) runs on the whole machine of a guest with THP."""
    if wl.thp is None:
        return
    if setup.limited:
        raise KernelError(f"workload {wl.thp['kind']} runs on the whole machine: give --memory-max none")
    if setup.guest_mb < THP_GUEST_MIN_MB:
        raise KernelError(f"workload {wl.thp['kind']}: the {setup.guest_mb} MiB guest is too small for THP (6.12 turns "
                          f"THP off below 512 MiB of RAM, mm/huge_memory.c hugepage_init); give --guest-memory "
                          f"{THP_GUEST_MIN_MB}M or more")
    if setup.cgroup_set:
        raise KernelError(f"workload {wl.thp['kind']} runs in the root cgroup: --set cgroup.* does not apply")


def swap_size(setup: Setup, wl: Workload) -> int:
    swap = setup.swap
    if swap is None and wl.thp is not None:  # the model's swap.size=auto: as much as the machine's memory
        return setup.guest_mb << 20
    if swap is None:
        return 2 * wl.anon_pages * PAGE if wl.anon_pages else 0
    if swap == "none":
        return 0
    dev, _, size = swap.partition(":")
    if dev != "zram" or not size:
        raise KernelError(f"--swap {swap}: the guest supports zram:SIZE or none")
    return parse_size(size, "--swap")


#: The cgroup files ``--set cgroup.NAME.FILE=VALUE`` takes, in the order the guest writes them.
CGROUP_FILES = ("memory.max", "memory.high", "memory.low", "memory.min")


def cgroup_limits(setup: Setup, wl: Workload, memory_max: int | None) -> dict[str, dict[str, str]]:
    """Each named cgroup of the workload: memory.max (``--memory-max`` unless set), memory.high,
    memory.low and memory.min as the guest writes them (bytes or "max"), from
    ``setup.cgroup_set``; checked by the simulator's own rules (the same config keys)."""
    default = {"memory.max": "max" if memory_max is None else str(memory_max), "memory.high": "max",
               "memory.low": "0", "memory.min": "0"}
    limits = {n: dict(default) for n in wl.cgroups if n}
    for item in setup.cgroup_set:
        key, eq, value = (x.strip() for x in item.partition("="))
        m = re.fullmatch(r"cgroup\.(.+)\.(memory\.[a-z]+)", key)
        if not eq or not m or m.group(2) not in CGROUP_FILES:
            raise KernelError(f"--set {item}: the guest takes cgroup.NAME.memory.{{max,high,low,min}}=VALUE")
        name, f = m.groups()
        if name not in limits:
            raise KernelError(f"--set {key}: the workload has no cgroup {name!r} (its cgroups: "
                              f"{', '.join(map(repr, sorted(limits)))})")
        limits[name][f] = "max" if value == "max" else str(parse_size(value, f"--set {key}"))
    cfg = _core.Config()
    try:
        for n, lim in limits.items():
            for f, v in lim.items():
                cfg.set(f"cgroup.{n}.{f}", v)
        cfg.validate()
    except Exception as e:  # the core's message names the key
        raise KernelError(f"--set: {e}") from None
    return limits


def check_anon_fits(setup: Setup, wl: Workload, memory_max: int | None, zram: int) -> None:
    """The anon footprint must fit what it may use plus zram, or the guest would OOM (each
    cgroup may hold up to ``memory_max``)."""
    anon = wl.anon_pages * PAGE
    if memory_max is not None:
        memory_max *= max(1, sum(1 for n in wl.cgroups if n))
        if anon > memory_max + zram:
            raise KernelError(f"workload {wl.spec!r} does not fit: {anon >> 20} MiB of anon memory "
                              f"> memory.max {memory_max >> 20} MiB + zram {zram >> 20} MiB (the guest would OOM)")
        return
    room = workload_room(setup, None)
    if anon > room + zram:
        raise KernelError(f"workload {wl.spec!r} does not fit the guest: {anon >> 20} MiB of anon memory > "
                          f"{room >> 20} MiB of the {setup.guest_mb} MiB guest (less {GUEST_RESERVE >> 20} MiB "
                          f"the kernel keeps) + zram {zram >> 20} MiB (the guest would OOM; raise --guest-memory "
                          f"or --swap)")


def prepare(setup: Setup) -> Prepared:
    if setup.mglru not in (None, "on", "off"):
        raise KernelError(f"--mglru must be on or off, got {setup.mglru!r}")
    if setup.boots < 1:
        raise KernelError("--boots must be at least 1")
    if not 1 <= setup.smp <= 64:
        raise KernelError(f"--smp must be 1..64 guest CPUs, got {setup.smp}")
    if setup.tick_us < 0:
        raise KernelError(f"--tick must be >= 0 microseconds, got {setup.tick_us}")
    if setup.pcp_high_fraction is not None and not (setup.pcp_high_fraction == 0 or 8 <= setup.pcp_high_fraction < 2**31):
        raise KernelError(f"--percpu-pagelist-high-fraction must be 0 or 8..2147483647 (the sysctl's range), "
                          f"got {setup.pcp_high_fraction}")
    if setup.watermark_boost_factor is not None and not 0 <= setup.watermark_boost_factor < 2**31:
        raise KernelError(f"--watermark-boost-factor must be 0..2147483647 (the sysctl's range), "
                          f"got {setup.watermark_boost_factor}")
    if setup.pin_cpus and setup.smp < 2:
        raise KernelError(f"--pin-cpus needs at least 2 guest CPUs (--smp), got {setup.smp}")
    if setup.damon_cost not in ("model", "measured"):
        raise KernelError(f"--damon-cost must be model or measured, got {setup.damon_cost!r}")
    if setup.damon_cost == "measured" and setup.damon_reclaim is None:
        raise KernelError("--damon-cost measured: needs --damon-reclaim (it measures kdamond in the guest)")
    ra, fab, thp = guest_options(setup)
    memory_max = memory_limit(setup)
    nodes = nodes_of(setup)
    dr = None
    if setup.damon_reclaim is not None:
        dr = damon.parse(setup.damon_reclaim)
        damon.check(dr, setup.guest_mb << 20)
    wl = workload.build(setup.workload, workload_room(setup, memory_max), setup.guest_mb << 20)
    check_thp_workload(setup, wl)
    check_cpu_cost(setup, wl)
    zram = swap_size(setup, wl)
    check_anon_fits(setup, wl, memory_max, zram)
    limits = cgroup_limits(setup, wl, memory_max)
    tool_check()
    kernel = fetch.fetch(setup.kernel)
    check_features(kernel, setup, zram)
    disk_size = parse_size(setup.disk_size, "--disk-size") if setup.disk_size else None
    p = Prepared(setup, kernel, wl, memory_max, zram, setup.timeout or default_timeout(wl), disk_size,
                 read_ahead_kb=ra, fault_around_bytes=fab, nodes=nodes, damon_reclaim=dr, cgroup_limits=limits)
    if setup.damon_action is not None and (dr is None or setup.damon_action != "stat"):
        raise KernelError(f"--damon-action {setup.damon_action}: " + ("only stat (pageout is the default)" if dr is not None
                          else "needs --damon-reclaim"))
    if dr is not None:
        p.damon_interface = damon.interface_for(kernel.release, setup.damon_interface)
        if setup.damon_action is not None and p.damon_interface != "sysfs":
            raise KernelError("--damon-action: only with the sysfs interface (the module always pages out)")
    p.append = " ".join(kernel_args(p, thp))
    return p


def kernel_args(p: Prepared, thp: str | None) -> list[str]:
    """The lab.* kernel parameters /init (guest/init.sh) reads."""
    setup = p.setup
    args = [f"lab.zram={p.zram}", f"lab.ra={p.read_ahead_kb}", f"lab.fab={p.fault_around_bytes}"]
    if p.wl.writes_files:
        args.append("lab.rw=1")
    if thp is not None:
        args.append(f"lab.thp={thp}")
    if setup.mglru is not None:
        args.append(f"lab.mglru={'y' if setup.mglru == 'on' else 'n'}")
    if setup.swappiness is not None:
        args.append(f"lab.swappiness={int(setup.swappiness)}")
    if setup.tick_us:
        args.append(f"lab.tick={int(setup.tick_us)}")
    if setup.pcp_high_fraction is not None:  # the kernel applies sysctl.* at boot (do_sysctl_args)
        args.append(f"sysctl.vm.percpu_pagelist_high_fraction={int(setup.pcp_high_fraction)}")
    if setup.watermark_boost_factor is not None:
        args.append(f"sysctl.vm.watermark_boost_factor={int(setup.watermark_boost_factor)}")
    if setup.pin_cpus:
        args.append("lab.pin=1")
    if setup.vmscan_trace:
        args.append(f"lab.vmtrace={int(setup.vmscan_trace)}")
    if setup.wb_sample:
        args.append("lab.wbsample=1")
    if p.damon_reclaim is not None:
        args += damon.kernel_args(p.damon_reclaim, p.damon_interface)
        if setup.damon_action is not None:
            args.append(f"lab.damon_action={setup.damon_action}")
    elif setup.sample:
        args.append("lab.sample=1")
    return args


def initrd_for(kernel: Kernel) -> Path:
    """The initramfs of ``kernel`` with the current guest program and /init (cached)."""
    wl, thp = guest.build_wl(), guest.build_thp()
    key = hashlib.sha256(wl.read_bytes() + thp.read_bytes() + initramfs.INIT.read_bytes()
                         + Path(initramfs.__file__).read_bytes() + kernel.release.encode()).hexdigest()[:16]
    out = fetch.cache_dir() / "initramfs" / f"{kernel.release}-{key}.cpio.gz"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        initramfs.build(kernel, wl, out, extra={"thp": thp})
    return out


#: Boots retried when the kernel panics before the workload starts.
BOOT_RETRIES = 2


def retryable_panic(c: console.Console) -> bool:
    """A panic that measured nothing of the kernel: under multi-threaded TCG the guest
    occasionally takes a stray int3 where the kernel is patching its own text
    (cross-modifying code: jump labels and static calls at boot, or when a module
    parameter flips a static key mid-run; seen about once in 40 boots). An ``Oops:
    int3`` in kernel text comes only from text patching, so such a boot is retried
    whenever it happens; any other panic once the workload ran is a result to report."""
    if c.panic is None:
        return False
    before_workload = not c.phases and not c.done
    return before_workload or (c.oops or "").startswith("Oops: int3")


def describe_failure(b: qemu.Boot, c: console.Console, i: int) -> str:
    where = f"console log kept at {b.log}"
    if b.status == "timeout":
        last = c.phases[-1].index + 1 if c.phases else 0
        return f"boot {i}: the guest hung (no poweroff after {b.wall_s:.0f} s; {last} phase(s) done); killed; {where}"
    if c.panic:
        return f"boot {i}: {c.panic}; {where}"
    if c.errors:
        return f"boot {i}: the guest reported: {c.errors[0]}; {where}"
    if b.status == "error":
        err = b.log.with_suffix(".qemu-stderr")
        msg = err.read_text(errors="replace").strip().splitlines()[-1:] if err.exists() else []
        return f"boot {i}: QEMU failed (exit {b.returncode}): {' '.join(msg)}; {where}"
    return f"boot {i}: the workload did not finish (exit {c.exit}); {where}"


def run(p: Prepared, out: Path, progress: bool = True, on_boot=None) -> Prepared:
    """Boot ``p.setup.boots`` times, one guest at a time; each finished boot is passed to
    ``on_boot(i, boot, console)``. Raises :class:`GuestError` on the first failed boot."""
    setup = p.setup
    out.mkdir(parents=True, exist_ok=True)
    initrd = initrd_for(p.kernel)
    with tempfile.TemporaryDirectory(prefix=".disk.", dir=out) as tmp:
        image = disk.build(p.wl, Path(tmp) / "data.img", p.disk_size, cgroups_file(p))
        bar = _bar(setup.boots, progress)
        try:
            for i in range(setup.boots):
                for attempt in range(BOOT_RETRIES + 1):
                    retry = f"-retry{attempt}" if attempt else ""
                    log = out / "boots" / f"{_stamp()}-boot{i}{retry}.console.log"
                    b = qemu.boot(p.kernel.vmlinuz, initrd, image, p.append, log, memory_mb=setup.guest_mb,
                                  smp=setup.smp, timeout=p.timeout, accel=setup.accel, writable=p.wl.writes_files,
                                  nodes=p.nodes)
                    c = console.parse(b.text())
                    if b.status == "ok" and c.finished:
                        break
                    if not retryable_panic(c) or attempt == BOOT_RETRIES:
                        raise GuestError(describe_failure(b, c, i))
                    print(f"reclaimlab: boot {i}: {c.panic} before the workload started (an emulation "
                          f"artefact, not a result); booting again, log kept at {log}", file=sys.stderr)
                check_readback(p, c, i, log)
                p.boots.append((b, c))
                if on_boot is not None:
                    on_boot(i, b, c)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix_str(f"last boot {b.wall_s:.0f} s ({b.accel})")
        finally:
            if bar is not None:
                bar.close()
    return p


def cgroups_file(p: Prepared) -> str:
    """/data/cgroups (guest/init.sh): "NAME MAX HIGH LOW MIN" per cgroup in the ops file's
    order, "-" for the root cgroup."""
    return "".join(f"{n} {' '.join(p.cgroup_limits[n][f] for f in CGROUP_FILES)}\n" if n else "- max max 0 0\n"
                   for n in p.wl.cgroups)


def check_readback(p: Prepared, c: console.Console, i: int, log: Path) -> None:
    """A :class:`GuestError` when the guest did not take a setting asked for explicitly."""
    setup = p.setup
    for idx, name in enumerate(p.wl.cgroups):
        got = c.cgroups.get(idx)
        if not name or got is None:
            continue
        for f, v in p.cgroup_limits[name].items():
            want = v if v == "max" else str(int(v) // PAGE * PAGE)  # the kernel keeps whole pages
            if got.limits.get(f) != want:
                raise GuestError(f"boot {i}: cgroup {name} {f} is {got.limits.get(f)}, not {want}; console log {log}")
    if p.damon_reclaim is not None:
        if c.damon_reclaim.get("interface") != p.damon_interface:
            raise GuestError(f"boot {i}: DAMON_RECLAIM did not start through its {p.damon_interface} interface; "
                             f"console log {log}")
        if p.setup.damon_action is not None and c.damon_reclaim.get("action") != p.setup.damon_action:
            raise GuestError(f"boot {i}: DAMON_RECLAIM's scheme ran {c.damon_reclaim.get('action')}, not "
                             f"{p.setup.damon_action}; console log {log}")
        for k, v in p.damon_reclaim.items():
            region_default = k.startswith("monitor_region_") and v == "0"  # the kernel writes its choice back
            if c.damon_reclaim.get(k) != v and not region_default:
                raise GuestError(f"boot {i}: damon_reclaim {k} is {c.damon_reclaim.get(k)}, not {v}; console log {log}")
    if setup.mglru is not None and c.lru_gen is not None:
        if (c.lru_gen not in ("0x0000", "0")) != (setup.mglru == "on"):
            raise GuestError(f"boot {i}: lru_gen/enabled is {c.lru_gen}, not {setup.mglru}; console log {log}")
    if setup.thp is not None and c.thp is not None and c.thp_mode != setup.thp:
        raise GuestError(f"boot {i}: transparent_hugepage/enabled is {c.thp!r}, not {setup.thp}; console log {log}")


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def _bar(total: int, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="boot", file=sys.stderr, leave=False, dynamic_ncols=True)


def tool_check() -> None:
    """Errors for a missing host tool, before anything is built."""
    for tool, pkg in (("qemu-system-x86_64", "qemu-system-x86"), ("mkfs.ext4", "e2fsprogs"), ("depmod", "kmod"),
                      ("modinfo", "kmod"), ("gcc", "gcc libc6-dev")):
        if shutil.which(tool) is None:
            raise KernelError(f"{tool} not found (apt-get install {pkg})")
