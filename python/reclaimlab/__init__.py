"""reclaimlab: a trace-driven simulator of Linux memory reclaim.

Quick use::

    import reclaimlab
    r = reclaimlab.run(scenario="default", memory="512M", swappiness=10)
    r.vmstat["pswpout"], r.metrics["runtime_s"], r.timeseries  # dict, dict, polars DataFrame

The engine is Rust (``reclaimlab._core``); this package adds configs, the CLI and results.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Mapping

from . import _core
from . import config as _config
from .exceptions import ConfigError, OutOfMemoryError, ReclaimlabError, TraceError

__all__ = [
    "run",
    "Result",
    "Config",
    "Simulation",
    "open_trace",
    "generate",
    "policies",
    "knobs",
    "scenarios",
    "ReclaimlabError",
    "ConfigError",
    "TraceError",
    "OutOfMemoryError",
]

__version__ = _core.__version__

Config = _core.Config
Simulation = _core.Simulation
open_trace = _core.open_trace
generate = _core.generate
knobs = _core.knobs
cgroup_knobs = _core.cgroup_knobs
policies = _core.policies
scenarios = _core.scenarios

#: Accesses replayed per call into the engine (between progress updates).
CHUNK = 1 << 20


class Result:
    """What a run reports: ``policy``, ``vmstat`` (kernel counter name -> int),
    ``metrics`` (name -> float) and ``timeseries`` (a polars DataFrame, one row per sample)."""

    def __init__(self, raw: Mapping[str, Any], config: Mapping[str, str] | None = None, workload: str = ""):
        self.policy: str = raw["policy"]
        self.vmstat: dict[str, int] = dict(raw["vmstat"])
        self.metrics: dict[str, float] = dict(raw["metrics"])
        self._timeseries: dict[str, list[float]] = dict(raw["timeseries"])
        self._frame = None
        #: The effective configuration (key -> value string).
        self.config: dict[str, str] = dict(config or {})
        #: What was replayed ("scenario default (seed 1)", "trace FILE").
        self.workload = workload

    @property
    def timeseries(self):
        """The time series as a polars DataFrame (built on first use)."""
        if self._frame is None:
            import polars as pl

            self._frame = pl.DataFrame({k: pl.Series(k, v, dtype=pl.Float64) for k, v in self._timeseries.items()})
        return self._frame

    def to_dict(self, timeseries: bool = False) -> dict[str, Any]:
        """``{"policy", "vmstat", "metrics"}`` (plus ``"timeseries"`` as lists if asked)."""
        d: dict[str, Any] = {"policy": self.policy, "vmstat": dict(self.vmstat), "metrics": dict(self.metrics)}
        if timeseries:
            d["timeseries"] = {k: list(v) for k, v in self._timeseries.items()}
        return d

    def __repr__(self) -> str:
        return f"Result(policy={self.policy!r}, {len(self.vmstat)} vmstat counters, {len(self.metrics)} metrics)"


def _swap_settings(swap: str) -> dict[str, str]:
    """``zram:SIZE``, ``ssd:SIZE``, ``zram``, ``ssd`` or ``none`` -> swap.* keys."""
    device, _, size = str(swap).partition(":")
    out = {"swap.device": device.strip()}
    if size:
        out["swap.size"] = size.strip()
    return out


def build(
    config: Any = None,
    *,
    trace: str | os.PathLike | None = None,
    trace_format: str | None = None,
    trace_kind: str | None = None,
    scenario: str | None = None,
    policy: str | None = None,
    memory: str | int | None = None,
    swap: str | None = None,
    swappiness: int | str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
):
    """Resolve the arguments of :func:`run` into ``(Config, Source, workload description)``
    without running anything (the CLI uses this to report bad input before a run)."""
    origin = None
    settings: dict[str, Any] = {}
    if isinstance(config, (str, os.PathLike)):
        origin = _config.load(config)
        settings = dict(origin.settings)
        if trace is None and scenario is None:
            if origin.trace is not None:
                trace = origin.trace["path"]
                trace_format = trace_format or origin.trace.get("format")
                trace_kind = trace_kind or origin.trace.get("kind")
            scenario = origin.scenario
    elif isinstance(config, Mapping):
        settings = dict(config)
    elif config is not None and not isinstance(config, _core.Config):
        raise TypeError("config must be a TOML path, a dict of key -> value or a reclaimlab.Config")
    if trace is not None and scenario is not None:
        raise ConfigError("give either a trace or a scenario, not both")
    if trace is None and scenario is None:
        scenario = "default"

    if isinstance(config, _core.Config):
        cfg = config.copy()
    elif scenario is not None:
        cfg = _core.scenario_config(scenario)
    else:
        cfg = _core.Config()
    _config.apply(cfg, settings, origin)
    overrides: dict[str, Any] = {}
    if policy is not None:
        overrides["policy"] = policy
    if memory is not None:
        overrides["machine.memory"] = memory
    if swap is not None:
        overrides.update(_swap_settings(swap))
    if swappiness is not None:
        overrides["vm.swappiness"] = swappiness
    if seed is not None:
        overrides["seed"] = seed
    overrides.update(set or {})
    _config.apply(cfg, overrides)
    _check_policy(cfg.get("policy"))
    _config.validate(cfg, origin)

    if scenario is not None:
        run_seed = int(cfg.get("seed"))
        source = _core.scenario_source(scenario, run_seed)
        workload = f"scenario {scenario} (seed {run_seed})"
    else:
        source = _core.open_trace(os.fspath(trace), trace_format, trace_kind)
        workload = f"trace {os.fspath(trace)} ({source.meta()['format']})"
    return cfg, source, workload


def _check_policy(name: str | None) -> None:
    known = [p[0] for p in _core.policies()]
    if name not in known:
        raise ConfigError(f"config key 'policy': unknown policy '{name}'; known: {', '.join(known)}", key="policy")


def replay(
    cfg: Any,
    source: Any,
    *,
    chunk: int = CHUNK,
    on_progress: Callable[[int, Any], None] | None = None,
) -> dict[str, Any]:
    """Replay ``source`` through a machine built from ``cfg`` in chunks, calling
    ``on_progress(accesses, source)`` after each; returns the raw result dict."""
    sim = _core.Simulation(cfg)
    while not sim.run(source, chunk):
        if on_progress is not None:
            on_progress(sim.accesses, source)
    if on_progress is not None:
        on_progress(sim.accesses, source)
    return sim.finish()


def run(
    config: Any = None,
    *,
    trace: str | os.PathLike | None = None,
    trace_format: str | None = None,
    trace_kind: str | None = None,
    scenario: str | None = None,
    policy: str | None = None,
    memory: str | int | None = None,
    swap: str | None = None,
    swappiness: int | str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> Result:
    """Run one simulation and return its :class:`Result`.

    ``config`` is a TOML file path, a dict of dotted keys (``{"vm.swappiness": 10}``) or a
    :class:`Config`. Replays ``trace`` (a file; ``trace_format`` native|lirs|address|csv,
    ``trace_kind`` file-read|file-mapped|anon) or the built-in ``scenario`` (default:
    ``"default"``). Keyword overrides map to knobs: ``policy``, ``memory``
    (machine.memory), ``swap`` (``"zram:2G"``, ``"ssd:8G"``, ``"none"``), ``swappiness``
    (vm.swappiness), ``seed``; ``set`` holds any other ``key -> value``. ``progress``
    draws a tqdm bar on stderr for runs longer than about two seconds.
    """
    cfg, source, workload = build(
        config,
        trace=trace,
        trace_format=trace_format,
        trace_kind=trace_kind,
        scenario=scenario,
        policy=policy,
        memory=memory,
        swap=swap,
        swappiness=swappiness,
        seed=seed,
        set=set,
    )
    from .progress import Progress

    with Progress(enabled=progress) as bar:
        raw = replay(cfg, source, on_progress=bar.update)
    return Result(raw, cfg.items(), workload)
