"""A real-kernel experiment: check the input, build the initramfs and data disk, boot N
times (one guest at a time), parse each console, store each boot in the results store.
Every check that can fail does so before the first boot."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import _core
from . import GuestError, KernelError, console, disk, fetch, guest, initramfs, qemu, workload
from .fetch import Kernel
from .workload import PAGE, Workload

#: Guest RAM the workload's cgroup lives in; memory.max must leave room for the kernel,
#: the initramfs (tmpfs), the ops buffer and the zram pool outside the cgroup.
GUEST_MB = 512
GUEST_RESERVE = 160 << 20


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
    memory: str = "128M"  # the cgroup's memory.max
    swap: str | None = None  # "zram:SIZE", "none", or None = zram for anon workloads
    swappiness: int | None = None
    boots: int = 3
    timeout: float | None = None
    guest_mb: int = GUEST_MB
    disk_size: str | None = None
    accel: str | None = None
    tick_us: int = 0  # per-CPU sleepers that make TCG flush its soft TLB (0: none)
    smp: int = 2  # guest CPUs


@dataclass
class Prepared:
    setup: Setup
    kernel: Kernel
    wl: Workload
    memory_max: int
    zram: int
    timeout: float
    disk_size: int | None
    append: str = ""
    boots: list = field(default_factory=list)


def check_features(kernel: Kernel, setup: Setup, zram: int) -> None:
    """Errors for a kernel that lacks what the run needs (read from boot/config-*)."""
    if not kernel.has("MEMCG"):
        raise KernelError(f"kernel {kernel.release} has no CONFIG_MEMCG: cannot pin the workload with memory.max")
    if setup.mglru is not None and not kernel.has("LRU_GEN"):
        raise KernelError(f"--mglru {setup.mglru}: kernel {kernel.release} is built without CONFIG_LRU_GEN")
    if zram and not kernel.has("ZRAM"):
        raise KernelError(f"--swap zram: kernel {kernel.release} is built without CONFIG_ZRAM")


def default_timeout(wl: Workload) -> float:
    """Boot + setup, plus a generous per-access allowance for TCG (anon swap is slowest)."""
    per = 400e-6 if wl.anon_pages else 150e-6
    return 120.0 + per * len(wl)


def prepare(setup: Setup) -> Prepared:
    if setup.mglru not in (None, "on", "off"):
        raise KernelError(f"--mglru must be on or off, got {setup.mglru!r}")
    if setup.boots < 1:
        raise KernelError("--boots must be at least 1")
    if not 1 <= setup.smp <= 64:
        raise KernelError(f"--smp must be 1..64 guest CPUs, got {setup.smp}")
    tool_check()
    memory_max = parse_size(setup.memory, "--memory")
    if memory_max < (8 << 20):
        raise KernelError(f"--memory {setup.memory}: at least 8M")
    if memory_max + GUEST_RESERVE > setup.guest_mb << 20:
        raise KernelError(f"--memory {setup.memory} leaves too little of the {setup.guest_mb} MiB guest "
                          f"outside the cgroup (keep {GUEST_RESERVE >> 20} MiB free; raise --guest-memory)")
    wl = workload.build(setup.workload, memory_max)
    swap = setup.swap
    if swap is None:
        zram = 2 * wl.anon_pages * PAGE if wl.anon_pages else 0
    elif swap == "none":
        zram = 0
    else:
        dev, _, size = swap.partition(":")
        if dev != "zram" or not size:
            raise KernelError(f"--swap {swap}: the guest supports zram:SIZE or none")
        zram = parse_size(size, "--swap")
    if wl.anon_pages * PAGE > memory_max + zram:
        raise KernelError(f"workload {wl.spec!r} does not fit: {wl.anon_pages * PAGE >> 20} MiB of anon memory "
                          f"> memory.max {memory_max >> 20} MiB + zram {zram >> 20} MiB (the guest would OOM)")
    kernel = fetch.fetch(setup.kernel)
    check_features(kernel, setup, zram)
    disk_size = parse_size(setup.disk_size, "--disk-size") if setup.disk_size else None
    p = Prepared(setup, kernel, wl, memory_max, zram, setup.timeout or default_timeout(wl), disk_size)
    args = [f"lab.memmax={memory_max}", f"lab.zram={zram}"]
    if setup.mglru is not None:
        args.append(f"lab.mglru={'y' if setup.mglru == 'on' else 'n'}")
    if setup.swappiness is not None:
        args.append(f"lab.swappiness={int(setup.swappiness)}")
    if setup.tick_us < 0:
        raise KernelError(f"--tick must be >= 0 microseconds, got {setup.tick_us}")
    if setup.tick_us:
        args.append(f"lab.tick={int(setup.tick_us)}")
    p.append = " ".join(args)
    return p


def initrd_for(kernel: Kernel) -> Path:
    """The initramfs of ``kernel`` with the current guest program and /init (cached)."""
    wl = guest.build_wl()
    key = hashlib.sha256(wl.read_bytes() + initramfs.INIT.read_bytes() + Path(initramfs.__file__).read_bytes()
                         + kernel.release.encode()).hexdigest()[:16]
    out = fetch.cache_dir() / "initramfs" / f"{kernel.release}-{key}.cpio.gz"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        initramfs.build(kernel, wl, out)
    return out


#: Boots retried when the kernel panics before the workload starts.
BOOT_RETRIES = 2


def early_panic(c: console.Console) -> bool:
    """A panic before the workload printed anything: under multi-threaded TCG the kernel
    occasionally takes a stray int3 while patching its own text at boot (cross-modifying
    code, seen once in ~40 boots); such a boot measured nothing and is retried."""
    return c.panic is not None and not c.phases and not c.done


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
        image = disk.build(p.wl, Path(tmp) / "data.img", p.disk_size)
        bar = _bar(setup.boots, progress)
        try:
            for i in range(setup.boots):
                for attempt in range(BOOT_RETRIES + 1):
                    retry = f"-retry{attempt}" if attempt else ""
                    log = out / "boots" / f"{_stamp()}-boot{i}{retry}.console.log"
                    b = qemu.boot(p.kernel.vmlinuz, initrd, image, p.append, log, memory_mb=setup.guest_mb,
                                  smp=setup.smp, timeout=p.timeout, accel=setup.accel)
                    c = console.parse(b.text())
                    if b.status == "ok" and c.finished:
                        break
                    if not early_panic(c) or attempt == BOOT_RETRIES:
                        raise GuestError(describe_failure(b, c, i))
                    print(f"reclaimlab: boot {i}: {c.panic} before the workload started (an emulation "
                          f"artefact, not a result); booting again, log kept at {log}", file=sys.stderr)
                if setup.mglru is not None and c.lru_gen is not None:
                    want_on = setup.mglru == "on"
                    if (c.lru_gen not in ("0x0000", "0")) != want_on:
                        raise GuestError(f"boot {i}: lru_gen/enabled is {c.lru_gen}, not {setup.mglru}; console log {log}")
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
