"""DAMON_RECLAIM in the guest (``--damon-reclaim KEY=VALUE[,...]``): the module's
parameters checked before anything boots and passed on the kernel command line (a built-in
module's parameters are ``damon_reclaim.KEY=VALUE`` there), how the guest runs it (the
module, or its scheme through DAMON sysfs where the module is broken), and the records the
guest prints while it runs (:class:`Sample`, :class:`Snapshot`). The comparison with the
simulator is :mod:`.damon_compare`.

The guest enables the module just before the workload starts (guest/init.sh) and samples
the workload cgroup's ``memory.current`` and the module's statistics while it runs
(``@@sample`` lines), so the footprint can be compared with the simulator's over the
run's progress (docs/kernel.md, "DAMON_RECLAIM")."""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelError

#: The module's writable parameters in 6.12 (mm/damon/reclaim.c and modules-common.h of
#: linux-source-6.12; ``enabled`` is written by /init, ``commit_inputs`` is not needed:
#: the module reads them when it is enabled).
PARAMS = ("min_age", "quota_ms", "quota_sz", "quota_reset_interval_ms", "quota_mem_pressure_us",
          "quota_autotune_feedback", "wmarks_interval", "wmarks_high", "wmarks_mid", "wmarks_low",
          "sample_interval", "aggr_interval", "min_nr_regions", "max_nr_regions", "monitor_region_start",
          "monitor_region_end", "skip_anon")
BOOL_PARAMS = ("skip_anon",)
#: Its read-only statistics (DEFINE_DAMON_MODULES_DAMOS_STATS_PARAMS), the simulator's
#: metrics of the same names.
STATS = ("nr_reclaim_tried_regions", "bytes_reclaim_tried_regions", "nr_reclaimed_regions",
         "bytes_reclaimed_regions", "nr_quota_exceeds")


def parse(text: str) -> dict[str, str]:
    """``KEY=VALUE[,KEY=VALUE...]`` -> {param: value}, values as the kernel parses them
    (unsigned longs; Y/N for ``skip_anon``). An unknown key or a bad value is an error."""
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        k, eq, v = item.partition("=")
        k, v = k.strip(), v.strip()
        if not eq or not v:
            raise KernelError(f"--damon-reclaim: expected KEY=VALUE, got {item!r}")
        if k not in PARAMS:
            why = ("set by reclaimlab" if k in ("enabled", "commit_inputs") else "read-only" if k == "kdamond_pid"
                   else "read-only statistic" if k in STATS else "not a parameter")
            raise KernelError(f"--damon-reclaim: {k}: {why} of /sys/module/damon_reclaim/parameters "
                              f"(known: {', '.join(PARAMS)})")
        if k in BOOL_PARAMS:
            b = {"y": "Y", "1": "Y", "true": "Y", "n": "N", "0": "N", "false": "N"}.get(v.lower())
            if b is None:
                raise KernelError(f"--damon-reclaim: {k}={v}: expected Y or N")
            v = b
        elif not v.isdigit() or int(v) >= 1 << 64:
            raise KernelError(f"--damon-reclaim: {k}={v}: expected an unsigned integer (kernel units: "
                              f"µs, ms, bytes or per-mille as `reclaimlab knobs damon_reclaim` says)")
        out[k] = v
    return out


def sim_keys(params: dict[str, str]) -> dict[str, str]:
    """The simulator's config keys for the module's parameters, with DAMON_RECLAIM's own
    regions recorded after every aggregation (``sim.damon_record=reclaim``, which changes
    nothing the module does), as the guest records them from the tracepoint."""
    return {"damon_reclaim.enabled": "Y", "sim.damon_record": "reclaim",
            **{f"damon_reclaim.{k}": v for k, v in params.items()}}


def check(params: dict[str, str], guest_bytes: int) -> None:
    """The checks the kernel makes when the module is enabled (the simulator's, which
    name the key: watermarks high >= mid >= low, intervals, region counts, start <= end)
    and that an explicit monitoring region lies in the guest's RAM."""
    from .. import _core

    c = _core.Config()
    try:
        for k, v in sim_keys(params).items():
            c.set(k, v)
        c.validate()
    except Exception as e:  # the core's error names the damon_reclaim.* key
        raise KernelError(f"--damon-reclaim: {e}") from None
    start, end = int(params.get("monitor_region_start", 0)), int(params.get("monitor_region_end", 0))
    if (start or end) and end > guest_bytes:
        raise KernelError(f"--damon-reclaim: monitor_region_end={end:#x} is outside the guest's RAM "
                          f"(0..{guest_bytes:#x}, --guest-memory)")


INTERFACES = ("module", "sysfs")


def module_drops_scheme(release: str) -> bool:
    """True for kernels whose DAMON_RECLAIM module runs without its scheme: from v6.11
    (11ddcfc257a3 "mm/damon/reclaim: use damon_commit_ctx()") its
    damon_reclaim_apply_parameters() stages the monitoring attributes and the scheme on the
    running context instead of the parameter context, and damon_commit_ctx() then commits
    the parameter context, which has no scheme, over it: damon_commit_schemes() destroys
    the scheme, and the default attributes replace the module's. kdamond monitors and never
    acts (a 6.12.117 guest: 0 regions tried in 30 s with idle regions of age 77, no
    damos_before_apply event). Fixed by "mm/damon/reclaim: use parameter context
    correctly" (v6.17; not in Debian's 6.12.117)."""
    from .validate import kernel_version

    return (6, 11) <= kernel_version(release) < (6, 17)


def interface_for(release: str, asked: str | None) -> str:
    """How the guest runs DAMON_RECLAIM: as asked, else the module where it works and,
    where it drops its scheme (:func:`module_drops_scheme`), the module's scheme built
    through DAMON's sysfs interface."""
    if asked is not None:
        if asked not in INTERFACES:
            raise KernelError(f"--damon-interface {asked}: must be module or sysfs")
        return asked
    return "sysfs" if module_drops_scheme(release) else "module"


def kernel_args(params: dict[str, str], interface: str) -> list[str]:
    """The kernel command line: every parameter as ``damon_reclaim.KEY=VALUE`` (built-in
    module parameters, parsed by the kernel at boot; the sysfs path reads them back from
    there) and ``lab.damon=INTERFACE``, which has /init start it with the workload."""
    return [f"damon_reclaim.{k}={v}" for k, v in params.items()] + [f"lab.damon={interface}"]


@dataclass
class Sample:
    """One ``@@sample`` line: guest uptime (s), the workload cgroup's memory.current
    (bytes) and the module's bytes_reclaimed_regions so far."""

    t: float
    memory_current: int
    bytes_reclaimed: int


@dataclass
class Snapshot:
    """One ``@@snap`` line: DAMON_RECLAIM's regions after an aggregation (trace clock,
    s), their number, and the bytes of regions with no access (``idle``), with accesses
    in under a quarter of the aggregation's samples (``warm``) and in at least a quarter
    (``hot``). Only LRU folios are ever seen accessed (``damon_get_folio``)."""

    t: float
    nr_regions: int
    idle: int
    warm: int
    hot: int


@dataclass
class QuotaSample:
    """One ``@@quota`` line (sysfs interface): guest uptime (s), the scheme's effective size
    quota (``quotas/effective_bytes``: ``damos_quota.esz``, bytes), its tried bytes and
    quota exceeds so far, and kdamond's CPU time so far (clock ticks)."""

    t: float
    esz: int
    sz_tried: int
    qt_exceeds: int
    kdamond_ticks: int
