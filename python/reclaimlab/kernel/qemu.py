"""One boot: ``qemu-system-x86_64`` with our kernel, initramfs and data disk,
killed at a timeout. The serial console goes to a log file that is kept. The default is
TCG (software emulation); ``accel="kvm"`` opts in to KVM. (On the project's machines
/dev/kvm opens and even creates a VM, but without vmx/svm exposed QEMU then fails on an MSR
or the guest never prints a line, so KVM is never chosen automatically.)"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import KernelError

@contextlib.contextmanager
def _terminate_as_interrupt():
    """While a guest runs, SIGTERM raises KeyboardInterrupt, so the guest is killed too
    (QEMU runs in its own session and would outlive us). Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def qemu_binary() -> str:
    q = shutil.which("qemu-system-x86_64")
    if q is None:
        raise KernelError("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")
    return q


def host_busy_s() -> float | None:
    """The host's busy CPU time since its boot, in seconds (/proc/stat's ``cpu`` line: user,
    nice, system, irq, softirq and steal; not idle or iowait), or None where there is none."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    """User + system CPU seconds of this process's waited-for children (QEMU, once waited)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


#: Other host CPUs busy during a boot above which ``validate`` warns (docs/validation.md,
#: "The host's load": at 0.9–1.0 the kswapd/direct split moved up to ten times).
HOST_BUSY_CPUS = 0.25


def other_load_text(loads: list[float | None]) -> str:
    """"; other host load A, B, ... CPUs" for the boots' :attr:`Boot.other_cpus`, or "" when
    a boot lacks the figure (boots stored before 28 Nov 2026)."""
    if not loads or any(x is None for x in loads):
        return ""
    return f"; other host load {', '.join(f'{x:.2f}' for x in loads)} CPUs"


def host_busy_note(loads: list[float | None]) -> str:
    """A warning when other work kept the host busy during some boot (or "")."""
    busy = [f"boot {i}: {x:.2f}" for i, x in enumerate(loads) if x is not None and x >= HOST_BUSY_CPUS]
    if not busy:
        return ""
    return (f"other work kept host CPUs busy while the guest ran ({', '.join(busy)} CPUs): under TCG the "
            "kswapd/direct split (pgscan_/pgsteal_kswapd and _direct, allocstall, pageoutrun) moves with "
            "the host's load; boot on an idle host to compare it")


@dataclass
class Boot:
    """How a boot ended: ``status`` is ``ok`` (QEMU exited by itself), ``timeout`` (killed)
    or ``error`` (QEMU failed to start); ``log`` is the kept console log. ``qemu_cpu_s`` is
    QEMU's CPU time, ``other_cpus`` the host CPUs everything else kept busy on average while
    it ran (the host's busy time less QEMU's, over the wall time; None without /proc/stat):
    under TCG a guest's threads share the host's cores with them, which slows kswapd against
    the workload (docs/validation.md, "The host's load")."""

    status: str
    returncode: int | None
    wall_s: float
    log: Path
    accel: str
    qemu_cpu_s: float | None = None
    other_cpus: float | None = None

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def numa_args(memory_mb: int, smp: int, nodes: int) -> list[str]:
    """QEMU's NUMA options for ``nodes`` nodes (none for one): guest RAM and CPUs split
    evenly in order (node i gets ``memory_mb // nodes`` MiB, the last one the remainder;
    CPUs ``i * smp // nodes`` up to the next node's first), each node's RAM its own
    ``memory-backend-ram``. The guest's firmware tables (SRAT) carry the layout, so the
    kernel (CONFIG_NUMA, CONFIG_ACPI_NUMA) sees ``nodes`` nodes."""
    if nodes <= 1:
        return []
    out: list[str] = []
    per = memory_mb // nodes
    for i in range(nodes):
        size = per if i < nodes - 1 else memory_mb - per * (nodes - 1)
        lo, hi = i * smp // nodes, (i + 1) * smp // nodes - 1
        out += ["-object", f"memory-backend-ram,id=ram{i},size={size}M",
                "-numa", f"node,nodeid={i},memdev=ram{i}" + (f",cpus={lo}-{hi}" if hi >= lo else "")]
    return out


def command(vmlinuz: Path, initrd: Path, disk: Path, append: str, memory_mb: int, smp: int, log: Path,
            accel: str, writable: bool = False, nodes: int = 1) -> list[str]:
    """The QEMU command line; a ``writable`` disk keeps the guest's writes in a temporary
    overlay (``snapshot=on``), so the image itself never changes; ``nodes`` > 1 splits
    the guest into NUMA nodes (:func:`numa_args`)."""
    cpu = ["-cpu", "host"] if accel == "kvm" else ["-cpu", "max"]
    acc = ["-accel", "kvm"] if accel == "kvm" else ["-accel", "tcg,thread=multi"]
    return [qemu_binary(), *acc, *cpu, "-m", f"{memory_mb}M", "-smp", str(smp), *numa_args(memory_mb, smp, nodes),
            "-display", "none", "-monitor", "none", "-serial", f"file:{log}", "-no-reboot", "-nic", "none",
            "-kernel", str(vmlinuz), "-initrd", str(initrd),
            "-drive", f"file={disk},if=virtio,format=raw,{'snapshot=on' if writable else 'readonly=on'}",
            "-append", f"console=ttyS0 quiet loglevel=4 panic=-1 {append}"]


def boot(vmlinuz: Path, initrd: Path, disk: Path, append: str, log: Path, memory_mb: int = 512, smp: int = 2,
         timeout: float = 600, accel: str | None = None, writable: bool = False, nodes: int = 1) -> Boot:
    """Boot once and wait for the guest to power off, or kill it after ``timeout`` s."""
    accel = accel or "tcg"
    cmd = command(vmlinuz, initrd, disk, append, memory_mb, smp, log, accel, writable, nodes)
    log.parent.mkdir(parents=True, exist_ok=True)
    t0, busy0, cpu0 = time.monotonic(), host_busy_s(), children_cpu_s()
    errlog = log.with_suffix(".qemu-stderr")
    with open(errlog, "wb") as err, _terminate_as_interrupt():
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
            status = "ok"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # QEMU and nothing else: its own session
            proc.wait()
            rc, status = None, "timeout"
        except BaseException:  # Ctrl-C, SIGTERM (below): never leave a guest running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    wall = time.monotonic() - t0
    busy1, qemu_cpu = host_busy_s(), children_cpu_s() - cpu0
    other = max(0.0, (busy1 - busy0 - qemu_cpu) / wall) if busy0 is not None and busy1 is not None and wall > 0 else None
    if status == "ok" and rc != 0:
        status = "error"
    return Boot(status, rc, wall, log, accel, round(qemu_cpu, 2), None if other is None else round(other, 3))
