"""``reclaimlab run program:NAME[,size=SIZE,seed=N]``: a built-in program's recording on
the machine the guest gives it — 512 MiB of RAM, the program in cgroup ``wl`` at
``memory.max`` 64 MiB (``--set cgroup.wl.memory.max=`` changes it and the default input
size with it), zram swap of twice its anonymous pages."""

from __future__ import annotations

from ..exceptions import ConfigError
from . import PROGRAMS
from .prepare import Recorded, recorded

#: The machine and limit a program scenario runs in unless told otherwise.
MACHINE_MEMORY = "512M"
CGROUP_MAX = "64M"
LIMIT_KEY = "cgroup.wl.memory.max"


def parse(spec: str) -> tuple[str, str | None, int]:
    """``program:NAME[,size=SIZE,seed=N]`` -> (name, size or None, seed)."""
    _, _, rest = spec.partition(":")
    items = [x.strip() for x in rest.split(",")]
    name = items.pop(0)
    if not name:
        raise ConfigError(f"{spec}: give program:NAME (built-in programs: {', '.join(PROGRAMS)})")
    if name not in PROGRAMS:
        raise ConfigError(f"{spec}: unknown program {name!r} (built-in programs: {', '.join(PROGRAMS)})")
    size, seed = None, 42
    for item in filter(None, items):
        k, eq, v = (x.strip() for x in item.partition("="))
        if not eq or k not in ("size", "seed"):
            raise ConfigError(f"{spec}: expected size=SIZE or seed=N, got {item!r}")
        if k == "size":
            size = v
        elif not v.isdigit():
            raise ConfigError(f"{spec}: seed={v!r} is not a number")
        else:
            seed = int(v)
    return name, size, seed


def _bytes(value: str, error: str) -> int:
    """``value`` as a size in bytes; ``error`` is the message when it is not one."""
    from .. import _core

    try:
        return int(_core.parse_size(str(value)))
    except Exception:
        raise ConfigError(error) from None


def input_bytes(spec: str, name: str, size: str | None, limit: int) -> int:
    """The input size of ``spec``: its ``size=``, else the program's factor x ``limit``
    (the cgroup's memory.max in bytes)."""
    if size is None:
        return int(PROGRAMS[name].size_factor * limit)
    return _bytes(size, f"{spec}: size={size!r} is not a size (e.g. 64M)")


def prepare_run(spec: str, settings: dict[str, str], memory: str | None, swap: str | None,
                progress: bool = True) -> tuple[Recorded, str, str]:
    """Record (or find) the program and fill ``settings``; returns the recording and the
    machine memory and swap to run with."""
    name, size, seed = parse(spec)
    limit = settings.setdefault(LIMIT_KEY, CGROUP_MAX)
    nbytes = input_bytes(spec, name, size, _bytes(limit, f"{LIMIT_KEY}: not a size: {limit!r} (e.g. 64M)"))
    rec = recorded(name, nbytes, seed, progress=progress)
    if swap is None:
        swap = f"zram:{2 * rec.anon_pages * 4096}" if rec.anon_pages else "none"
    return rec, memory or MACHINE_MEMORY, swap
