"""Import real-kernel boots into the results store (:mod:`reclaimlab.results`) in the
schema simulated runs use: ``vmstat`` holds the counter deltas over the whole workload
(summed over phases), ``timeseries`` one row per phase (``phase``, ``wall_s`` and each
changed counter's delta in that phase), ``metrics`` the wall times and memcg events, and
``config`` the simulator-equivalent configuration plus ``kernel.*`` keys."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Mapping

from ..results import Store, run_key
from .console import Console

VARIANT = "kernel"


def boot_run(console: Console, *, key: Mapping[str, str], params: Mapping[str, str], config: Mapping[str, str],
             repetition: int,
             workload: str, policy: str, started: float, finished: float, worker: str = "",
             phase_names: list[str] | None = None, log: str = "",
             host: Mapping[str, float | None] | None = None) -> dict[str, Any]:
    """The run dict :meth:`Store.add_run` takes for one finished boot; ``host``: figures of
    the host while it ran (``host.other_cpus``, ``host.qemu_cpu_s``: :class:`.qemu.Boot`),
    kept with the metrics where known."""
    cfg = dict(config)
    cfg["kernel.console_log"] = log
    names = phase_names or []
    metrics: dict[str, float] = {"wall_s": sum(p.wall_ns for p in console.phases) / 1e9}
    for ph in console.phases:
        label = names[ph.index] if ph.index < len(names) else f"phase{ph.index}"
        metrics[f"phase.{label}.wall_s"] = ph.wall_ns / 1e9
    for k, v in console.memory_events.items():
        metrics[f"memory.events.{k}"] = float(v)
    if console.memory_peak is not None:
        metrics["memory.peak"] = float(console.memory_peak)
    if console.zram_ratio():
        metrics["zram.compression_ratio"] = float(console.zram_ratio())
    metrics.update({k: float(v) for k, v in (host or {}).items() if v is not None})
    counters = sorted({k for ph in console.phases for k in ph.vmstat})
    ts: dict[str, list[float]] = {"phase": [], "wall_s": []}
    for k in counters:
        ts[k] = []
    for ph in console.phases:
        ts["phase"].append(float(ph.index))
        ts["wall_s"].append(ph.wall_ns / 1e9)
        for k in counters:
            ts[k].append(float(ph.vmstat.get(k, 0)))
    # Boots of one configuration (``key``: what the user asked for) differ only by their
    # repetition number ("seed").
    return {
        "run_id": run_key({**key, "variant": VARIANT}, repetition),
        "variant": VARIANT, "params": dict(params), "repetition": repetition, "seed": repetition,
        "policy": policy, "workload": workload, "config": cfg, "started": started, "finished": finished,
        "worker": worker or f"{socket.gethostname()}:qemu", "metrics": metrics, "vmstat": console.vmstat(),
        "timeseries": ts,
    }


def add_boot(root: str | Path, run: Mapping[str, Any]) -> bool:
    """Store one boot in ``root/results.sqlite``; False if that boot was already stored."""
    with Store(root) as s:
        return s.add_run(run)


def next_repetition(root: str | Path, key: Mapping[str, str]) -> int:
    """The first repetition number of ``key`` not stored yet (each run adds boots)."""
    p = Path(root)
    if not (p / "results.sqlite").exists():
        return 0
    with Store(p) as s:
        done = s.done_ids()
    i = 0
    while run_key({**key, "variant": VARIANT}, i) in done:
        i += 1
    return i


def load_boots(root: str | Path, params: Mapping[str, str]) -> list[dict[str, Any]]:
    """Stored boots whose params are exactly ``params``: ``{"config", "vmstat", "metrics"}``
    each, in repetition order."""
    import json

    with Store(root, create=False) as s:
        rows = s.db.execute("SELECT run_id, params, config FROM runs WHERE variant = ? ORDER BY repetition",
                            (VARIANT,)).fetchall()
        out = []
        for rid, p, cfg in rows:
            p = json.loads(p)
            if p != dict(params):
                continue
            vm = dict(s.db.execute("SELECT name, value FROM vmstat WHERE run_id = ?", (rid,)).fetchall())
            me = dict(s.db.execute("SELECT name, value FROM metrics WHERE run_id = ?", (rid,)).fetchall())
            out.append({"config": json.loads(cfg), "vmstat": vm, "metrics": me})
    return out
