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

__all__ = ["KernelError", "GuestError"]


class KernelError(ReclaimlabError):
    """Bad input for a real-kernel run (unknown package, missing feature, ...), found
    before anything boots."""


class GuestError(ReclaimlabError):
    """A boot that did not finish its workload (panic, hang, workload error); the message
    names the kept console log."""
