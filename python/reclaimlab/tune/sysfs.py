"""The shell lines that apply a DAMON_RECLAIM setting on a real kernel.

DAMON_RECLAIM's knobs are module parameters (``Documentation/admin-guide/mm/damon/
reclaim.rst``; spec F): each is written to ``/sys/module/damon_reclaim/parameters/NAME``
in its kernel unit (times in microseconds except ``quota_ms`` and
``quota_reset_interval_ms``, sizes in bytes, watermarks in per-mille of free memory,
booleans ``Y``/``N``). Writing ``Y`` to ``enabled`` starts DAMON_RECLAIM with the
parameters; parameters written while it already runs are applied only when ``Y`` is
written to ``commit_inputs`` (it then reads them again and resets ``commit_inputs`` to
``N``). So the lines set every parameter, then ``enabled``, then ``commit_inputs``, and
work whether DAMON_RECLAIM was running or not.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["PARAMS_DIR", "PARAMETERS", "DEFAULTS", "sysfs_lines", "format_value"]

PARAMS_DIR = "/sys/module/damon_reclaim/parameters"

#: DAMON_RECLAIM's input parameters in the kernel's order (mm/damon/reclaim.c) with
#: their defaults (spec F). ``enabled`` and ``commit_inputs`` come last, written by
#: :func:`sysfs_lines` itself.
DEFAULTS: dict[str, object] = {
    "min_age": 120_000_000,
    "quota_ms": 10,
    "quota_sz": 128 * 1024 * 1024,
    "quota_reset_interval_ms": 1000,
    "quota_mem_pressure_us": 0,
    "quota_autotune_feedback": 0,
    "wmarks_interval": 5_000_000,
    "wmarks_high": 500,
    "wmarks_mid": 400,
    "wmarks_low": 200,
    "sample_interval": 5000,
    "aggr_interval": 100_000,
    "min_nr_regions": 10,
    "max_nr_regions": 1000,
    "monitor_region_start": 0,
    "monitor_region_end": 0,
    "skip_anon": False,
}
PARAMETERS = tuple(DEFAULTS)

#: Parameters that describe the simulated machine, not a tuning: never written.
MACHINE_SPECIFIC = ("monitor_region_start", "monitor_region_end")


def format_value(value: object) -> str:
    """A parameter value as the kernel parses it: ``Y``/``N`` for booleans, decimal
    integers otherwise."""
    if isinstance(value, bool):
        return "Y" if value else "N"
    text = str(value).strip()
    low = text.lower()
    if low in ("true", "y", "yes", "on"):
        return "Y"
    if low in ("false", "n", "no", "off"):
        return "N"
    try:
        f = float(text)
    except ValueError:
        raise ValueError(f"not a DAMON_RECLAIM parameter value: {value!r}") from None
    if f != int(f) or f < 0:
        raise ValueError(f"DAMON_RECLAIM parameters take non-negative integers, got {value!r}")
    return str(int(f))


def sysfs_lines(params: Mapping[str, object], comment: str | None = None) -> list[str]:
    """``echo VALUE > /sys/module/damon_reclaim/parameters/NAME`` for each parameter
    given (kernel order; the machine-specific monitor region is left out), then
    ``enabled`` and ``commit_inputs``. Unknown names are an error."""
    unknown = [k for k in params if k not in DEFAULTS and k not in ("enabled", "commit_inputs")]
    if unknown:
        raise ValueError(f"not DAMON_RECLAIM parameters: {', '.join(unknown)}; known: {', '.join(PARAMETERS)}")
    lines = [f"# {comment}"] if comment else []
    for name in PARAMETERS:
        if name in params and name not in MACHINE_SPECIFIC:
            lines.append(f"echo {format_value(params[name])} > {PARAMS_DIR}/{name}")
    lines.append(f"echo Y > {PARAMS_DIR}/enabled")
    lines.append(f"echo Y > {PARAMS_DIR}/commit_inputs")
    return lines
