"""The one way reclaimlab starts worker processes: a ``ProcessPoolExecutor`` whose
workers die with the process that made them (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on
Linux), so killing a coordinator (``experiment run``, a comparison) with SIGKILL leaves
no worker behind holding the store or the caller's stdout. Workers fork where the
platform can (no importable ``__main__`` needed, milliseconds to start), else spawn."""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing as mp
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker initializer: SIGKILL when the parent goes (and at once if it already has);
    SIGTERM and SIGHUP back to their default (the coordinator's handlers are forked in)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the workers outlive a killed coordinator
            return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else "spawn")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_die_with_parent,
                                  initargs=(os.getpid(),))
