"""Phased trace programs (masim-style) from TOML; see docs/trace-programs.md."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .config import parse_toml
from .exceptions import ConfigError

REGION_KEYS = {"name", "pages", "kind", "write_ratio", "cgroup"}
PHASE_KEYS = {"name", "accesses", "stream"}
STREAM_KEYS = {"region", "pattern", "weight"}
TOP_KEYS = {"region", "phase", "repeat"}


def load_program(path: str | os.PathLike) -> dict[str, Any]:
    """Read PROGRAM.toml into the dict ``reclaimlab._core.generate`` takes."""
    path = Path(path)
    doc, lines = parse_toml(path)

    def check(table: dict, allowed: set, where: str, prefix: str) -> None:
        for k in table:
            if k not in allowed:
                line = lines.get(f"{prefix}{k}")
                loc = f"{path}, line {line}" if line else str(path)
                raise ConfigError(f"{loc}: unknown key '{k}' in {where}; expected {', '.join(sorted(allowed))}",
                                  key=k, path=str(path), line=line)

    check(doc, TOP_KEYS, "the program", "")
    regions = doc.get("region", [])
    phases = doc.get("phase", [])
    if not regions or not phases:
        raise ConfigError(f"{path}: a program needs at least one [[region]] and one [[phase]]", path=str(path))
    for i, r in enumerate(regions, 1):
        check(r, REGION_KEYS, f"[[region]] #{i}", "region.")
    out_phases = []
    for i, ph in enumerate(phases, 1):
        check(ph, PHASE_KEYS, f"[[phase]] #{i}", "phase.")
        streams = ph.get("stream", [])
        if not streams:
            raise ConfigError(f"{path}: [[phase]] #{i} has no [[phase.stream]]", path=str(path))
        for s in streams:
            check(s, STREAM_KEYS, f"a [[phase.stream]] of phase #{i}", "phase.stream.")
        out_phases.append({k: v for k, v in ph.items() if k != "stream"} | {"streams": streams})
    return {"regions": regions, "phases": out_phases, "repeat": doc.get("repeat", 1)}
