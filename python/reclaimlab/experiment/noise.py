"""The noise model: what differs between two reboots of a real machine, drawn per run.

The engine is deterministic, so repetitions that differ only by the workload generator's
seed have a spread far below a real machine's (the MGLRU Apache Hadoop TeraSort benchmark's reboots: 1–4 % of the mean).
A noise model perturbs the *machine* of each run, never its result: every knob below
becomes a change of engine knobs (``cost.*``, ``swap.ssd.*``, ``machine.kernel_used``)
before the run, and the engine's mechanisms carry it to the metric — a slower device
slows the runs that wait on it, more background memory adds reclaim where memory is tight.

Knobs (see docs/experiments.md for the published measurements behind the defaults):

* ``cpu_speed_cv``: SD of the CPU speed factor (frequency, turbo, thermal state); every
  CPU-time cost knob is divided by it.
* ``device_latency_cv``: SD of the log of the storage-latency factor (the SSD's state
  after a reboot: garbage collection, wear levelling, queueing); multiplies the file and
  SSD-swap read/write latencies.
* ``background_cpu``: mean share of the CPU taken by other processes and interrupts
  (exponentially distributed per run); CPU costs grow by 1/(1 − share).
* ``background_memory``: mean share of ``machine.memory`` other processes hold during the
  run (uniform on [0, 2·mean] per run); added to ``machine.kernel_used``.
* ``page_placement_cv``: SD of the access-cost factor from where the physical pages land
  (cache-set and TLB conflicts); multiplies ``cost.access_ns`` and ``cost.tlb_miss_ns``.

Draws come from a numpy ``Generator`` seeded by the run's key (its configuration and
seed), so a repetition's noise is the same every time it runs and independent between
configurations, as separate reboots are. Cost knobs are whole nanoseconds: a factor is
applied with rounding to the nanosecond (``cost.access_ns`` = 100 moves in 1 % steps).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ..exceptions import ConfigError

__all__ = ["Noise", "NOISE_NONE", "NOISE_DEFAULT", "from_table", "by_name", "CPU_COST_KNOBS", "DEVICE_KNOBS"]

#: Knobs that are CPU time (scaled by the CPU speed and the background CPU share).
CPU_COST_KNOBS = (
    "cost.access_ns", "cost.minor_fault_ns", "cost.major_fault_ns", "cost.scan_ns", "cost.rmap_ns",
    "cost.unmap_ns", "cost.free_ns", "cost.walk_pte_ns", "cost.clear_page_ns", "cost.migrate_page_ns",
    "cost.compact_scan_ns", "cost.tlb_miss_ns", "cost.damon_region_ns", "cost.damon_pfn_ns",
    "swap.zram.compress_ns", "swap.zram.decompress_ns",
)
#: Knobs that are storage-device time.
DEVICE_KNOBS = ("cost.file_read_ns", "cost.file_write_ns", "swap.ssd.read_ns", "swap.ssd.write_ns")
#: Knobs the page placement scales (the cost of touching memory).
PLACEMENT_KNOBS = ("cost.access_ns", "cost.tlb_miss_ns")


@dataclass(frozen=True)
class Noise:
    """One noise model; ``name`` is "none", "default" or "custom"."""

    name: str = "default"
    cpu_speed_cv: float = 0.01
    device_latency_cv: float = 0.03
    background_cpu: float = 0.005
    background_memory: float = 0.005
    page_placement_cv: float = 0.01

    @property
    def is_none(self) -> bool:
        return all(getattr(self, f.name) == 0 for f in fields(self) if f.name != "name")

    def spec(self) -> dict[str, Any]:
        """The model as plain data (stored in the run keys, the store's meta and --json)."""
        return asdict(self)

    def describe(self) -> str:
        """One line for every printed comparison."""
        if self.is_none:
            return ("noise: none (repetitions differ only by the workload's seed; "
                    "their intervals are not those of a measured machine)")
        return (f"noise: {self.name} (per run: CPU speed SD {100 * self.cpu_speed_cv:g}%, device latency "
                f"SD {100 * self.device_latency_cv:g}%, background CPU {100 * self.background_cpu:g}% and memory "
                f"{100 * self.background_memory:g}% on average, page placement SD {100 * self.page_placement_cv:g}%)")

    def draw(self, key: str) -> dict[str, float]:
        """This run's factors, from its key (a hex run id)."""
        import numpy as np

        rng = np.random.default_rng([int(key, 16) % 2**64, 0x6E6F697365])  # "noise"
        cpu = max(0.5, 1 + self.cpu_speed_cv * rng.standard_normal())
        dev = float(np.exp(self.device_latency_cv * rng.standard_normal()))
        bg = min(0.5, float(rng.exponential(self.background_cpu))) if self.background_cpu > 0 else 0.0
        mem = float(rng.uniform(0, 2 * self.background_memory))
        place = max(0.5, 1 + self.page_placement_cv * rng.standard_normal())
        return {"cpu_speed": float(cpu), "device_latency": dev, "background_cpu": bg, "background_memory": mem,
                "page_placement": float(place)}

    def overrides(self, config: dict[str, str], key: str) -> dict[str, str]:
        """The knob values this run gets instead of ``config``'s (the effective
        configuration before noise); empty for no noise."""
        if self.is_none:
            return {}
        f = self.draw(key)
        cpu = 1 / (f["cpu_speed"] * (1 - f["background_cpu"]))
        out: dict[str, str] = {}

        def scale(k: str, by: float) -> None:
            v = out.get(k, config.get(k))
            if v is None or not str(v).isdigit():
                return
            out[k] = str(max(0, round(int(v) * by)) if int(v) else 0)

        for k in CPU_COST_KNOBS:
            scale(k, cpu * (f["page_placement"] if k in PLACEMENT_KNOBS else 1.0))
        for k in DEVICE_KNOBS:
            scale(k, f["device_latency"])
        if f["background_memory"] > 0 and "machine.memory" in config:
            from .. import _core

            mem = int(_core.parse_size(str(config["machine.memory"])))
            used = int(_core.parse_size(str(config.get("machine.kernel_used", "0"))))
            extra = int(mem * f["background_memory"]) // 4096 * 4096
            out["machine.kernel_used"] = str(used + extra)
        return out


NOISE_NONE = Noise(name="none", cpu_speed_cv=0.0, device_latency_cv=0.0, background_cpu=0.0, background_memory=0.0,
                   page_placement_cv=0.0)
NOISE_DEFAULT = Noise()
KNOBS = tuple(f.name for f in fields(Noise) if f.name != "name")


def by_name(name: str) -> Noise:
    """``--noise none|default``."""
    if name == "none":
        return NOISE_NONE
    if name == "default":
        return NOISE_DEFAULT
    raise ConfigError(f"--noise: '{name}' is not a noise model (none or default; knobs go in the experiment's [noise] table)")


def from_table(doc: dict[str, Any], where: Any) -> Noise:
    """An experiment's ``[noise]`` table: ``model = "default"|"none"`` and any knob.
    ``where(key)`` gives the file and line for an error message."""
    bad = set(doc) - {"model", *KNOBS}
    if bad:
        raise ConfigError(f"{where(sorted(bad)[0])}: unknown [noise] key(s) {', '.join(sorted(bad))} "
                          f"(known: model, {', '.join(KNOBS)})")
    model = doc.get("model", "default")
    if not isinstance(model, str):
        raise ConfigError(f"{where('model')}: noise.model: expected \"default\" or \"none\", got {model!r}")
    try:
        base = by_name(model)
    except ConfigError:
        raise ConfigError(f"{where('model')}: noise.model: '{model}' is not a noise model (default or none)") from None
    vals = {}
    for k in KNOBS:
        if k in doc:
            v = doc[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
                raise ConfigError(f"{where(k)}: noise.{k}: expected a number in [0, 1), got {v!r}")
            vals[k] = float(v)
    if not vals:
        return base
    return Noise(**{**base.spec(), **vals, "name": "custom"})
