"""Build the guest programs ``guest/wl.c`` (the ops replayer) and ``guest/thp.c`` (the
THP/compaction/NUMA workloads) with ``gcc -static`` (once per source version, cached beside
the kernels)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from . import KernelError
from .fetch import cache_dir

SOURCE = Path(__file__).with_name("guest") / "wl.c"
THP_SOURCE = SOURCE.with_name("thp.c")


def build_wl() -> Path:
    """Path of the static ``wl`` binary for the current source."""
    return _build(SOURCE, "wl")


def build_thp() -> Path:
    """Path of the static ``thp`` binary for the current source (pthreads)."""
    return _build(THP_SOURCE, "thp", ("-pthread",))


def _build(source: Path, name: str, flags: tuple[str, ...] = ()) -> Path:
    # The program's key: its source, the headers beside it (vmstat.h), the flags.
    src = source.read_bytes() + b"".join(h.read_bytes() for h in sorted(source.parent.glob("*.h")))
    out = cache_dir() / "wl" / (f"{name}-" + hashlib.sha256(src + " ".join(flags).encode()).hexdigest()[:16])
    if out.is_file():
        return out
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        raise KernelError(f"cannot build the guest workload program: {cc} not found (apt-get install gcc libc6-dev)")
    out.parent.mkdir(parents=True, exist_ok=True)
    from .._atomic import sweep, temp_name

    tmp = temp_name(out, "")  # .<name>.tmp-<pid>-<n>, swept as every temporary file
    sweep(out.parent, out.name)
    r = subprocess.run([cc, "-O2", "-static", "-Wall", *flags, "-o", str(tmp), str(source)], capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise KernelError(f"gcc -static {source} failed (is libc6-dev installed?): {r.stderr.strip()[-500:]}")
    os.replace(tmp, out)
    return out
