"""Build and locate the recorder's Valgrind tool: ``tool/rl_main.c`` compiled on first use
against the installed Valgrind's static core into ``~/.cache/reclaimlab/record/<key>/``,
a directory that also links Valgrind's own core files, so it can be ``VALGRIND_LIB``."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

from ..exceptions import ReclaimlabError

TOOL = "reclaimlab-record"
SOURCE = Path(__file__).with_name("tool") / "rl_main.c"
INSTALL = "install Debian's valgrind package (apt-get install valgrind)"

#: uname machine -> (Valgrind platform, its -D defines).
PLATFORMS = {
    "x86_64": ("amd64-linux", ["-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1"]),
}
#: Where distributions put Valgrind's core files (vgpreload_core-*.so, default.supp) and
#: its static libraries (libcoregrind-*.a).
CORE_DIRS = ("/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind",
             "/usr/local/libexec/valgrind", "/usr/local/lib/valgrind")
#: Valgrind's Makefile.all.am / Makefile.tool.am flags for a tool.
CFLAGS = ["-O2", "-g", "-fno-strict-aliasing", "-fno-builtin", "-fno-stack-protector", "-fno-pie",
          "-Wall", "-Wno-unused-parameter"]
LDFLAGS = ["-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start", "-no-pie", "-Wl,--build-id=none"]
LOAD_ADDRESS = "0x58000000"  # valgrind.pc's valt_load_address on Linux


class RecordError(ReclaimlabError):
    """Recording cannot start or did not finish (no Valgrind, the program crashed, ...)."""


def cache_dir() -> Path:
    """``$RECLAIMLAB_RECORD_CACHE``, else ``~/.cache/reclaimlab/record``."""
    env = os.environ.get("RECLAIMLAB_RECORD_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "reclaimlab" / "record"


def _platform() -> tuple[str, list[str]]:
    machine = platform.machine()
    if machine not in PLATFORMS:
        raise RecordError(f"recording is supported on {', '.join(PLATFORMS)} only, not {machine}")
    return PLATFORMS[machine]


def launcher() -> str:
    """The Valgrind launcher: Debian's ``valgrind`` is a shell wrapper that sets
    ``GLIBCXX_FORCE_NEW`` (which changes the program's allocations), so its
    ``valgrind.bin`` is used where it exists."""
    vg = shutil.which("valgrind")
    if vg is None:
        raise RecordError(f"valgrind not found: {INSTALL}")
    real = Path(vg).with_name("valgrind.bin")
    return str(real) if real.is_file() else vg


def _find(name: str, dirs: tuple[str, ...]) -> Path:
    for d in dirs:
        if (Path(d) / name).is_file():
            return Path(d)
    raise RecordError(f"Valgrind's {name} not found in {', '.join(dirs)}: {INSTALL}")


def build() -> Path:
    """The ``VALGRIND_LIB`` directory holding the tool for the current source and Valgrind."""
    plat, defines = _platform()
    vg = launcher()
    core = _find(f"vgpreload_core-{plat}.so", CORE_DIRS)
    static = _find(f"libcoregrind-{plat}.a", CORE_DIRS)
    version = subprocess.run([vg, "--version"], capture_output=True, text=True).stdout.strip()
    key = hashlib.sha256(b"\0".join([SOURCE.read_bytes(), version.encode(), str(core).encode(),
                                     str(static).encode()])).hexdigest()[:16]
    out = cache_dir() / key
    if (out / f"{TOOL}-{plat}").is_file():
        return out
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        raise RecordError(f"cannot build the recorder's Valgrind tool: {cc} not found (apt-get install gcc)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{key}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        for f in core.iterdir():
            (tmp / f.name).symlink_to(f)
        include = Path("/usr/include/valgrind")
        obj = tmp / "rl_main.o"
        steps = [
            [cc, *CFLAGS, *defines, f"-I{include}", "-c", str(SOURCE), "-o", str(obj)],
            [cc, "-o", str(tmp / f"{TOOL}-{plat}"), str(obj), *LDFLAGS, f"-Wl,-Ttext-segment={LOAD_ADDRESS}",
             str(static / f"libcoregrind-{plat}.a"), str(static / f"libvex-{plat}.a"), "-lgcc"],
        ]
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise RecordError(f"building the recorder's Valgrind tool failed ({' '.join(cmd[:2])} ...; are "
                                  f"valgrind's headers in {include}?): {r.stderr.strip()[-400:]}")
        obj.unlink()
        try:
            os.rename(tmp, out)
        except OSError:  # another process built it first
            if not (out / f"{TOOL}-{plat}").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
