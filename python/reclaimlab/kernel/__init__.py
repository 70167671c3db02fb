"""Ground truth from a real Linux kernel: boot a stock Debian kernel under QEMU, replay a
reclaimlab workload in it, and compare its /proc/vmstat counters with the simulator.

One job per module: :mod:`.fetch` (kernel package -> unpacked tree), :mod:`.workload`
(workload specs -> page sequences), :mod:`.ops` (the guest's ops file and the simulator's
trace of the same sequence), :mod:`.guest` (build the static workload program),
:mod:`.initramfs`, :mod:`.disk`, :mod:`.qemu` (one boot), :mod:`.console` (serial-console
parser), :mod:`.store` (import into the results store), :mod:`.run` (a whole experiment)
and :mod:`.validate` (kernel vs simulator). See docs/kernel.md.
"""

from __future__ import annotations

from ..exceptions import ReclaimlabError

__all__ = ["KernelError", "GuestError", "LAB", "KERNEL_DEFAULT_READ_AHEAD_KB", "KERNEL_DEFAULT_FAULT_AROUND_BYTES",
           "KSWAPD_WAKEUP_MODES"]

#: What the kernel ships with (6.12): the data disk's /sys/block/<dev>/queue/read_ahead_kb
#: (VM_READAHEAD_PAGES, 128 KiB) and /sys/kernel/debug/fault_around_bytes (mm/memory.c, 64 KiB).
KERNEL_DEFAULT_READ_AHEAD_KB = 128
KERNEL_DEFAULT_FAULT_AROUND_BYTES = 65536
#: The laboratory setting (scripts/validate_suite.py, docs/validation.md): no readahead,
#: one-page mapped faults, no THP. Store keys name these settings only when they differ
#: from it, so boots stored before the options existed (which ran with it) keep their key.
LAB = {"read_ahead_kb": 0, "fault_around_bytes": 4096, "thp": "never"}
#: ``validate --kswapd-wakeup``: the model's ``cost.kswapd_wakeup_ns``; the guest's traced
#: latencies' mean, waited at every wake-up; their distribution (quantiles), drawn at each
#: wake-up; the same, each window timed by the pages allocated in it (kernel.experiment).
KSWAPD_WAKEUP_MODES = ("model", "mean", "measured", "progress")


class KernelError(ReclaimlabError):
    """Bad input for a real-kernel run (unknown package, missing feature, ...), found
    before anything boots."""


class GuestError(ReclaimlabError):
    """A boot that did not finish its workload (panic, hang, workload error); the message
    names the kept console log."""
