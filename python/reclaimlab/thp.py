"""Mel Gorman's __GFP_THISNODE mmtests report's programs on the one machine (tasks that map and fault, under any reclaim
policy): ``thpscale`` and ``usemem-stress-numa-compact`` under every
THP allocation policy (``thp@4.20-rc4``, ``thp+gfp-thisnode-v1``, ``thp@5.4``, ``thp@5.5``,
``thp@6.12``), printed in
the mmtests layout of the mmtests report (:mod:`reclaimlab.stats.mmtests`, era-A rules).

thpscale runs the thread counts one after another on one machine per policy, as mmtests'
``thpscale-bench`` does within one boot, so each count inherits what the previous ones
left (pageblock types, compaction deferral). The vmstat rows sum the counters over a
policy's runs, as an mmtests monitor spans the whole benchmark.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from . import _core
from .stats.mmtests import pdiff, table, vmstat_table

__all__ = ["THREADS", "USEMEM_THREADS", "run_thpscale", "run_usemem", "thpscale_report", "usemem_report",
           "scenario_config"]

#: Mel Gorman's __GFP_THISNODE mmtests report's thread counts, in the order mmtests runs
#: them (crates/core/src/scenario/thp.rs ``THPSCALE_THREADS``).
THREADS = tuple(_core.THPSCALE_THREADS)
USEMEM_THREADS = (1, 3, 4)


def scenario_config(name: str, settings: Mapping[str, str] | None = None, memory: str | None = None):
    """The scenario's ``_core.Config``: its machine (the scenario table's row,
    crates/core/src/scenario.rs), ``memory``, then the caller's settings."""
    from . import _core

    cfg = _core.scenario_config(name)
    if memory:
        cfg.set("machine.memory", memory)
    for k, v in (settings or {}).items():
        cfg.set(k, v)
    return cfg


def policies() -> list[str]:
    from . import _core

    return [p[0] for p in _core.thp_policies()]


def run_thpscale(settings: Mapping[str, str] | None = None, memory: str | None = None,
                 threads: Sequence[int] = THREADS, madvise: bool = True,
                 on_run: Callable[[], None] | None = None) -> dict[str, dict[int, dict[str, Any]]]:
    """{policy: {threads: run dict}} for every THP policy; per policy one machine runs the
    thread counts in the order given (``on_run`` is called once per policy)."""
    from . import _core

    out: dict[str, dict[int, dict[str, Any]]] = {}
    for pol in policies():
        cfg = scenario_config("thpscale", settings, memory)
        cfg.set("thp.policy", pol)
        out[pol] = {r["threads"]: r for r in _core.thpscale(cfg, list(threads), madvise)}
        if on_run:
            on_run()
    return out


def run_usemem(settings: Mapping[str, str] | None = None, memory: str | None = None,
               threads: Sequence[int] = USEMEM_THREADS,
               on_run: Callable[[], None] | None = None) -> dict[str, dict[int, dict[str, Any]]]:
    from . import _core

    out: dict[str, dict[int, dict[str, Any]]] = {}
    for pol in policies():
        cfg = scenario_config("usemem-stress-numa-compact", settings, memory)
        cfg.set("thp.policy", pol)
        out[pol] = {t: _core.usemem(cfg, t) for t in threads}
        if on_run:
            on_run()
    return out


def _amean_rows(title: str, ops: list[tuple[str, dict[str, list[float]]]], columns: list[str]) -> str:
    """The ``Amean`` rows of an mmtests table (the mmtests report prints only those)."""
    lines = table(ops, columns, higher=False, rule="2018").split("\n")
    body = [ln for ln in lines[2:] if ln.startswith("Amean")]
    return "\n".join([title] + lines[:2] + body)


def _pct_rows(title: str, rows: list[tuple[str, dict[str, float]]], columns: list[str], field: int = 12) -> str:
    """``Percentage huge-N`` rows: higher is better (``pdiff``), no significance test."""
    ow = max(len(op) for op, _ in rows)
    head = table([(rows[0][0], {c: [1.0] for c in columns})], columns).split("\n")[:2]
    shift = len("Percentage") - len("Amean    ")
    out = [title] + [(" " * max(shift, 0)) + h for h in head]
    for op, vals in rows:
        base = vals[columns[0]]
        cells = "".join(f"{vals[c]:{field}.2f} ({(0.0 if c == columns[0] else pdiff(vals[c], base)):7.2f}%)" for c in columns)
        out.append(f"{'Percentage':<10} {op:<{ow}}" + cells)
    return "\n".join(out)


def _sum_vm(runs: Mapping[int, Mapping[str, Any]]) -> tuple[dict[str, float], float]:
    vm: dict[str, float] = {}
    for r in runs.values():
        for k, v in r["vmstat"].items():
            vm[k] = vm.get(k, 0) + v
    return vm, math.fsum(r["elapsed_s"] for r in runs.values())


NUMA_ROWS = (("NUMA alloc hit", "numa_hit"), ("NUMA alloc miss", "numa_miss"), ("NUMA alloc foreign", "numa_foreign"),
             ("NUMA alloc local", "numa_local"), ("NUMA alloc other", "numa_other"),
             ("THP deferred split", "thp_deferred_split_page"), ("Compaction daemon wakes", "compact_daemon_wake"))


def _extra_rows(columns: list[str], vms: Mapping[str, Mapping[str, float]]) -> str:
    lw = max(len(n) for n, _ in NUMA_ROWS)
    return "\n".join(f"{n:<{lw}}" + "".join(f"{round(vms[c].get(k, 0)):15d}" for c in columns) for n, k in NUMA_ROWS)


def thpscale_report(results: Mapping[str, Mapping[int, Mapping[str, Any]]], madvise: bool = True) -> str:
    columns = list(results)
    threads = list(next(iter(results.values())))
    name = "thpscale-madvhugepage" if madvise else "thpscale"

    def samples(pol: str, t: int, key: str) -> list[float]:
        return list(results[pol][t][key]) or [0.0]

    ops = [(f"fault-base-{t}", {p: samples(p, t, "fault_base_us") for p in columns}) for t in threads]
    ops += [(f"fault-huge-{t}", {p: samples(p, t, "fault_huge_us") for p in columns}) for t in threads]
    out = [_amean_rows(f"{name} Fault Latencies (usec)", ops, columns), ""]
    pct = [(f"huge-{t}", {p: float(results[p][t]["huge_pct"]) for p in columns}) for t in threads]
    out += [_pct_rows(f"{name} Percentage Faults Huge", pct, columns), ""]
    sums = {p: _sum_vm(results[p]) for p in columns}
    out += [vmstat_table(columns, {p: [sums[p]] for p in columns}, rule="2018"), _extra_rows(columns, {p: sums[p][0] for p in columns})]
    return "\n".join(out) + "\n"


def usemem_report(results: Mapping[str, Mapping[int, Mapping[str, Any]]]) -> str:
    columns = list(results)
    threads = list(next(iter(results.values())))
    ops = [(f"Elapsd-{t}", {p: [results[p][t]["elapsed_s"]] for p in columns}) for t in threads]
    out = [_amean_rows("usemem-stress-numa-compact elapsed (s)", ops, columns), ""]
    pct = [(f"huge-{t}", {p: float(results[p][t]["huge_pct"]) for p in columns}) for t in threads]
    out += [_pct_rows("usemem-stress-numa-compact Percentage Pages Huge", pct, columns), ""]
    sums = {p: _sum_vm(results[p]) for p in columns}
    out += [vmstat_table(columns, {p: [sums[p]] for p in columns}, rule="2018"), _extra_rows(columns, {p: sums[p][0] for p in columns})]
    return "\n".join(out) + "\n"


def plot_thpscale(results: Mapping[str, Mapping[int, Mapping[str, Any]]], path: str, madvise: bool = True) -> None:
    """Mel Gorman's __GFP_THISNODE mmtests report's trade-off in one picture: per THP policy, the share of huge faults and
    the mean fault latency (all faults) against the thread count. Written atomically."""
    from pathlib import Path

    import matplotlib
    from matplotlib.figure import Figure

    from ._atomic import atomic_output

    fig = Figure(figsize=(9, 4.2), layout="constrained")
    ax_pct, ax_lat = fig.subplots(1, 2)
    for pol, runs in results.items():
        threads = list(runs)
        pct = [runs[t]["huge_pct"] for t in threads]
        lat = []
        for t in threads:
            v = list(runs[t]["fault_base_us"]) + list(runs[t]["fault_huge_us"])
            lat.append(math.fsum(v) / len(v) / 1000 if v else 0.0)
        ax_pct.plot(threads, pct, marker="o", label=pol)
        ax_lat.plot(threads, lat, marker="o", label=pol)
    ax_pct.set_xlabel("threads")
    ax_pct.set_ylabel("huge faults (%)")
    ax_pct.set_ylim(0, 100)
    ax_lat.set_xlabel("threads")
    ax_lat.set_ylabel("mean fault latency (ms)")
    ax_lat.set_ylim(bottom=0)
    ax_lat.legend(fontsize=8)
    fig.suptitle(f"{'thpscale-madvhugepage' if madvise else 'thpscale'}: huge-page success vs fault latency", fontsize=11)
    fmt = Path(path).suffix.lower().lstrip(".")
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format=fmt)
