"""Phased trace programs (masim-style) from TOML; see docs/trace-programs.md."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .config import parse_toml
from .exceptions import ConfigError

REGION_KEYS = {"name", "pages", "kind", "write_ratio", "cgroup", "madvise"}
#: A region's `madvise` before the first access (an anonymous region's THP eligibility).
MADVISE = ("hugepage", "nohugepage")
PHASE_KEYS = {"name", "accesses", "stream", "reclaim"}
STREAM_KEYS = {"region", "pattern", "weight"}
RECLAIM_KEYS = {"cgroup", "bytes", "swappiness"}
TOP_KEYS = {"region", "phase", "repeat"}


def load_program(path: str | os.PathLike) -> dict[str, Any]:
    """Read PROGRAM.toml into the dict ``reclaimlab._core.generate`` takes."""
    path = Path(path)
    doc, lines = parse_toml(path)
    return from_doc(doc, lines, path)


def from_doc(doc: dict[str, Any], lines: dict[str, int], path: Path, prefix: str = "") -> dict[str, Any]:
    """A program's TOML tables (``doc``, at dotted ``prefix`` of the file ``path``, e.g.
    ``workload.program.`` in an experiment spec) checked and turned into the dict
    ``reclaimlab._core.generate`` takes. Errors name the file, the line and the key."""

    def loc(key: str) -> tuple[str, int | None]:
        line = lines.get(f"{prefix}{key}")
        return (f"{path}, line {line}" if line else str(path)), line

    def check(table: Any, allowed: set, where: str, key: str) -> None:
        if not isinstance(table, dict):
            at, line = loc(key)
            raise ConfigError(f"{at}: {where} must be a table, got {table!r}", key=f"{prefix}{key}",
                              path=str(path), line=line)
        for k in table:
            if k not in allowed:
                at, line = loc(f"{key}.{k}" if key else k)
                raise ConfigError(f"{at}: unknown key '{k}' in {where}; expected {', '.join(sorted(allowed))}",
                                  key=k, path=str(path), line=line)

    def tables(table: dict, key: str, dotted: str) -> list:
        v = table.get(key, [])
        if not isinstance(v, list):
            at, line = loc(dotted)
            raise ConfigError(f"{at}: '{prefix}{dotted}' must be an array of tables ([[{prefix}{dotted}]]), got {v!r}",
                              key=f"{prefix}{dotted}", path=str(path), line=line)
        return v

    check(doc, TOP_KEYS, "the program", "")
    regions = tables(doc, "region", "region")
    phases = tables(doc, "phase", "phase")
    if not regions or not phases:
        raise ConfigError(f"{path}: a program needs at least one [[{prefix}region]] and one [[{prefix}phase]]",
                          path=str(path))
    for i, r in enumerate(regions, 1):
        check(r, REGION_KEYS, f"[[region]] #{i}", "region")
        if "madvise" in r and r["madvise"] not in MADVISE:
            at, line = loc("region.madvise")
            raise ConfigError(f"{at}: [[region]] #{i} madvise = {r['madvise']!r}; expected one of {', '.join(MADVISE)}",
                              key="madvise", path=str(path), line=line)
    out_phases = []
    for i, ph in enumerate(phases, 1):
        check(ph, PHASE_KEYS, f"[[phase]] #{i}", "phase")
        streams = tables(ph, "stream", "phase.stream")
        if not streams:
            raise ConfigError(f"{path}: [[phase]] #{i} has no [[phase.stream]]", path=str(path))
        for s in streams:
            check(s, STREAM_KEYS, f"a [[phase.stream]] of phase #{i}", "phase.stream")
        reclaims = tables(ph, "reclaim", "phase.reclaim")
        for r in reclaims:
            check(r, RECLAIM_KEYS, f"a [[phase.reclaim]] of phase #{i}", "phase.reclaim")
            _check_reclaim(r, regions, f"{path}: [[phase.reclaim]] of phase #{i}", path)
        out_phases.append({k: v for k, v in ph.items() if k not in ("stream", "reclaim")}
                          | {"streams": streams, "reclaims": reclaims})
    return {"regions": regions, "phases": out_phases, "repeat": doc.get("repeat", 1)}


def _check_reclaim(r: dict, regions: list[dict], where: str, path: Path) -> None:
    """A memory.reclaim write names a region's cgroup (or the root, ``""``) and a size of at
    least one byte (a byte count or a size like ``"64M"``), with ``swappiness`` 0..200."""
    cgroup = r.get("cgroup", "")
    known = {reg.get("cgroup", "") for reg in regions} | {""}
    if cgroup not in known:
        raise ConfigError(f"{where}: memory.reclaim for unknown cgroup {cgroup!r} (the regions' cgroups: "
                          f"{', '.join(repr(c) for c in sorted(known))})", key="cgroup", path=str(path))
    size = r.get("bytes")
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise ConfigError(f"{where}: 'bytes' must be a byte count or a size like \"64M\"", key="bytes", path=str(path))
    # "0M" and the like reach the generator, which refuses 0 bytes after parsing the size.
    too_small = size <= 0 if isinstance(size, int) else size.strip().startswith("-") or not size.strip("0 ")
    if too_small:
        raise ConfigError(f"{where}: memory.reclaim of {size!r} bytes: the size must be at least 1 byte", key="bytes",
                          path=str(path))
    sw = r.get("swappiness")
    if sw is not None and (isinstance(sw, bool) or not isinstance(sw, int) or not 0 <= sw <= 200):
        raise ConfigError(f"{where}: swappiness {sw!r} is outside 0..200", key="swappiness", path=str(path))
