"""reclaimlab: a trace-driven simulator of Linux memory reclaim.

Quick use::

    import reclaimlab
    r = reclaimlab.run(scenario="default", memory="512M", swappiness=10)
    r.vmstat["pswpout"], r.metrics["runtime_s"], r.timeseries  # dict, dict, polars DataFrame
    c = reclaimlab.compare("tpcc-stock-level")       # every policy the scenario compares
    c.baseline, {name: r.metrics["tps"] for name, r in c.results.items()}

The engine is Rust (``reclaimlab._core``); this package adds configs, the CLI and results.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, Callable, Mapping

from . import _core
from . import config as _config
from . import trace
from .cache import Cache, CacheStats, cachesim, mrc
from .listings import knobs, policies, scenarios
from .exceptions import ConfigError, OutOfMemoryError, ReclaimlabError, TraceError
from . import policy as _policy
from .policy import Policy

if TYPE_CHECKING:
    import pandas
    import polars

__all__ = [
    "run",
    "compare",
    "Result",
    "Comparison",
    "Config",
    "Simulation",
    "Policy",
    "open_trace",
    "generate",
    "write_trace",
    "policies",
    "knobs",
    "scenarios",
    "cachesim",
    "mrc",
    "Cache",
    "CacheStats",
    "trace",
    "scenario_source",
    "scenario_info",
    "compare_stats",
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
#: ``write_trace(source, path, compress=False)``: a source (open_trace, generate) as a native trace file.
write_trace = _core.trace_convert
cgroup_knobs = _core.cgroup_knobs
#: ``scenario_info(name)``: a built-in scenario's description, policies, baseline, transactions, clients and
#: workload parameters (``params``: name, default, meaning).
scenario_info = _core.scenario_info


def scenario_source(name: str, seed: int = 1, scale: float = 1.0, params: Mapping[str, Any] | None = None) -> "_core.Source":
    """The access stream of the built-in scenario ``name`` (what ``reclaimlab run
    --scenario NAME --seed SEED --scale SCALE`` replays), with workload ``params`` (name ->
    value, converted with ``str()``; the names ``scenario_info(name)["params"]`` lists,
    as an experiment's ``workload_params``). Replay it with ``Simulation(config).run``
    or write it with :func:`write_trace`."""
    return _core.scenario_source(name, seed, scale, None if params is None else {str(k): str(v) for k, v in params.items()})

#: Accesses replayed per call into the engine (between progress updates).
CHUNK = 1 << 20


class Result:
    """What a run reports: ``policy``, ``vmstat`` (kernel counter name -> int),
    ``metrics`` (name -> float) and ``timeseries`` (a polars DataFrame, one row per sample;
    :meth:`to_pandas` for pandas, with the ``reclaimlab[pandas]`` extra)."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        config: Mapping[str, str] | None = None,
        workload: str = "",
        transactions: tuple[int, int] | None = None,
    ):
        self.policy: str = raw["policy"]
        self.vmstat: dict[str, int] = dict(raw["vmstat"])
        self.metrics: dict[str, float] = dict(raw["metrics"])
        if transactions:
            self.metrics.update(transaction_metrics(self.metrics, transactions))
        self._timeseries: dict[str, list[float]] = dict(raw["timeseries"])
        #: DAMON snapshots kept with ``sim.damon_record`` (see :mod:`reclaimlab.damo_record`).
        self.damon_snapshots: list = list(raw.get("damon_snapshots") or [])
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

    def to_pandas(self) -> "pandas.DataFrame":
        """The time series as a pandas DataFrame. polars converts through pyarrow, so this
        needs pandas and pyarrow: ``pip install 'reclaimlab[pandas]'`` (an ``ImportError``
        naming the extra otherwise; ``timeseries.to_pandas()`` is the same conversion)."""
        require_pandas()
        return self.timeseries.to_pandas()

    def to_dict(self, timeseries: bool = False) -> dict[str, Any]:
        """``{"policy", "vmstat", "metrics"}`` (plus ``"timeseries"`` as lists if asked)."""
        d: dict[str, Any] = {"policy": self.policy, "vmstat": dict(self.vmstat), "metrics": dict(self.metrics)}
        if timeseries:
            d["timeseries"] = {k: list(v) for k, v in self._timeseries.items()}
        return d

    def __repr__(self) -> str:
        return f"Result(policy={self.policy!r}, {len(self.vmstat)} vmstat counters, {len(self.metrics)} metrics)"


#: What a pandas conversion says when pandas or pyarrow is missing.
PANDAS_MISSING = "a pandas DataFrame needs pandas and pyarrow (polars converts through Arrow): pip install 'reclaimlab[pandas]'"


def require_pandas() -> None:
    """Raise ``ImportError`` naming the ``reclaimlab[pandas]`` extra unless pandas and
    pyarrow import."""
    import importlib

    try:
        for name in ("pandas", "pyarrow"):
            importlib.import_module(name)
    except ImportError as e:
        raise ImportError(f"{PANDAS_MISSING} (missing: {e.name or e})") from None


def transaction_metrics(metrics: Mapping[str, float], transactions: tuple[int, int]) -> dict[str, float]:
    """``transactions`` and ``tps`` of a transactional scenario, computed the way py-tpcc
    does: the count divided by the summed latency of the transactions. ``transactions``
    is the scenario's (count, clients): the trace ends when its last transaction
    completes, and each client runs transactions back to back, so the summed latency is
    clients × the simulated runtime: tps = count / (clients × runtime_s)."""
    txns, clients = transactions
    runtime = float(metrics["runtime_s"]) * int(clients)
    return {"transactions": float(txns), "tps": txns / runtime if runtime > 0 else 0.0}


class Prepared:
    """What :func:`prepare` resolved: the config, the source and what it replays."""

    def __init__(self, cfg: Any, source: Any, workload: str, scenario: str | None, scale: float | None, policy: Any = None):
        self.cfg = cfg
        #: A :class:`Policy` class or instance given as ``policy`` (else None).
        self.policy = policy
        self.source = source
        self.workload = workload
        #: The built-in scenario replayed (None for a trace file).
        self.scenario = scenario
        self.scale = scale
        #: (transactions, clients) of a transactional scenario (else None).
        self.transactions: tuple[int, int] | None = _transactions(scenario)


def _transactions(scenario: str | None) -> tuple[int, int] | None:
    """(transactions, clients) a transactional scenario declares, else None."""
    if scenario is None:
        return None
    info = _core.scenario_info(scenario)
    return (int(info["transactions"]), int(info["clients"])) if info["transactions"] else None


def build(config: Any = None, **kwargs: Any):
    """Resolve the arguments of :func:`run` into ``(Config, Source, workload description)``
    without running anything (the CLI uses this to report bad input before a run)."""
    p = prepare(config, **kwargs)
    return p.cfg, p.source, p.workload


def prepare(
    config: Any = None,
    *,
    trace: str | os.PathLike | None = None,
    trace_format: str | None = None,
    trace_kind: str | None = None,
    scenario: str | None = None,
    scale: float | None = None,
    policy: str | Policy | type[Policy] | None = None,
    memory: str | int | None = None,
    swap: str | None = None,
    swappiness: int | str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
) -> Prepared:
    """Like :func:`build`, returning a :class:`Prepared` that also names the scenario,
    its scale and its accesses per transaction. ``params`` are the scenario's workload
    parameters (``scenario_info(name)["params"]``); ``set`` may carry them too, as
    ``workload.NAME``."""
    origin = None
    set, params = _split_workload_params(set, params)
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
    if scale is not None:
        if scenario is None:
            raise ConfigError("--scale applies to a built-in scenario, not to a trace file")
        try:
            scale = float(scale)
        except (TypeError, ValueError):
            raise ConfigError(f"scale must be a number, got {scale!r}") from None

    # The file's own scenario and policy are located in it when they are wrong, as every
    # other key of a config file is (file, line, key).
    scenario_origin = origin if origin is not None and origin.scenario is not None and scenario == origin.scenario else None
    if isinstance(config, _core.Config):
        cfg = config.copy()
    elif scenario is not None:
        try:
            cfg = _core.scenario_config(scenario, 1.0 if scale is None else scale)
        except ReclaimlabError as e:
            if scenario_origin is None:
                raise
            raise scenario_origin.error("scenario", f"config key 'scenario': {e}") from None
    else:
        cfg = _core.Config()
    _config.apply(cfg, settings, origin)
    overrides: dict[str, Any] = {}
    policy_obj = None
    if policy is not None and not isinstance(policy, str):
        _policy.check(policy)
        policy_obj, policy = policy, _policy.spec_of(policy)
    elif _policy.is_spec(policy) or _policy.is_rust_spec(policy):
        policy = _policy.canonical(policy)
    if policy is not None:
        overrides["policy"] = policy
    overrides.update(_config.alias_settings({"memory": memory, "swap": swap, "swappiness": swappiness, "seed": seed}))
    overrides.update(set or {})
    _config.apply(cfg, overrides)
    policy_from_file = origin is not None and "policy" in origin.settings and "policy" not in overrides
    try:
        if policy_obj is None:
            _check_policy(cfg.get("policy"))
    except ConfigError as e:
        if not policy_from_file:
            raise
        raise origin.error("policy", str(e)) from None
    _config.validate(cfg, origin)

    if scenario is not None:
        run_seed = int(cfg.get("seed"))
        source = _scenario_source(scenario, run_seed, scale, params, cfg)
        at = "" if scale is None or scale == 1.0 else f", scale {scale:g}"
        workload = f"scenario {scenario} (seed {run_seed}{at})" + "".join(f" {k}={v}" for k, v in params.items())
    else:
        if params:
            raise ConfigError(f"workload parameters ({', '.join(params)}) apply to a built-in scenario, not to a trace file")
        if trace_format == "damo":  # a damo record: DAMON's region pattern as page accesses
            from .damo_workload import source as damo_source

            source = damo_source(trace, kind=trace_kind or "anon")
        else:
            source = _core.open_trace(os.fspath(trace), trace_format, trace_kind)
        workload = f"trace {os.fspath(trace)} ({source.meta()['format']})"
    return Prepared(cfg, source, workload, scenario, scale, policy_obj)


def _split_workload_params(settings: Mapping[str, Any] | None, params: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``settings`` without its ``workload.NAME`` keys, and those keys' values (by NAME)
    over ``params``."""
    knobs, wp = {}, dict(params or {})
    for k, v in (settings or {}).items():
        if k.startswith("workload."):
            wp[k.removeprefix("workload.")] = v
        else:
            knobs[k] = v
    return knobs, wp


def _scenario_source(scenario: str, seed: int, scale: float | None, params: Mapping[str, Any],
                     cfg: "_core.Config") -> "_core.Source":
    """A built-in scenario's source with workload parameters, each checked against the
    names the scenario declares. A workload sized by CPUs (parameter ``cpus``) gets the
    machine's, ``machine.cpus`` of the run's configuration, unless told otherwise."""
    known = [p[0] for p in _core.scenario_info(scenario).get("params", [])]
    for k in params:
        if k not in known:
            raise ConfigError(f"scenario {scenario}: unknown workload parameter '{k}' (known: {', '.join(known) or 'none'})",
                              key=f"workload.{k}")
    if "cpus" in known and "cpus" not in params:
        params = {**params, "cpus": cfg.get("machine.cpus")}
    return _core.scenario_source(scenario, seed, 1.0 if scale is None else scale, {k: str(v) for k, v in params.items()} or None)


def _check_policy(name: str | None) -> None:
    if _policy.is_spec(name):
        _policy.load(name)
        return
    if _policy.is_rust_spec(name):
        _policy.check_rust(name)
        return
    known = [p[0] for p in _core.policies()]
    if name not in known:
        raise ConfigError(f"config key 'policy': unknown policy '{name}'; known: {', '.join(known)}", key="policy")


def replay(
    cfg: Any,
    source: Any,
    *,
    chunk: int = CHUNK,
    on_progress: Callable[[int, Any], None] | None = None,
    policy: Any = None,
) -> dict[str, Any]:
    """Replay ``source`` through a machine built from ``cfg`` in chunks, calling
    ``on_progress(accesses, source)`` after each; returns the raw result dict. The
    reclaim policy is ``policy`` (a :class:`Policy` class or instance) if given, else
    the one ``cfg`` names (a ``python:`` name is imported here, in this process)."""
    name = cfg.get("policy") or ""
    if policy is None and _policy.is_spec(name):
        policy = _policy.load(name)
    elif policy is not None and not _policy.is_spec(name):
        name = _policy.spec_of(policy)
    ext = None if policy is None else (name, _policy.attach_factory(policy))
    if ext is None and _policy.is_rust_spec(name):
        ext = (_policy.canonical(name), None)
    sim = _core.Simulation(cfg, policy=ext)
    with _policy.watchdog() if policy is not None else contextlib.nullcontext():
        while not sim.run(source, chunk):
            if on_progress is not None:
                on_progress(sim.accesses, source)
    if on_progress is not None:
        on_progress(sim.accesses, source)
    snapshots = _core.damon_snapshots(sim) if cfg.get("sim.damon_record") != "off" else None
    raw = sim.finish()
    if snapshots:
        raw["damon_snapshots"] = snapshots
    return raw


def run(
    config: Any = None,
    *,
    trace: str | os.PathLike | None = None,
    trace_format: str | None = None,
    trace_kind: str | None = None,
    scenario: str | None = None,
    scale: float | None = None,
    policy: str | None = None,
    memory: str | int | None = None,
    swap: str | None = None,
    swappiness: int | str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> Result:
    """Run one simulation and return its :class:`Result`.

    ``config`` is a TOML file path, a dict of dotted keys (``{"vm.swappiness": 10}``) or a
    :class:`Config`. Replays ``trace`` (a file; ``trace_format`` native|lirs|address|csv|oracle|damo,
    ``trace_kind`` file-read|file-mapped|anon) or the built-in ``scenario`` (default:
    ``"default"``; ``scale`` grows a scalable scenario such as ``tpcc-stock-level``).
    A transactional scenario adds the metrics ``transactions`` and ``tps``
    (see :func:`transaction_metrics`). Keyword overrides map to knobs: ``policy``, ``memory``
    (machine.memory), ``swap`` (``"zram:2G"``, ``"ssd:8G"``, ``"none"``), ``swappiness``
    (vm.swappiness), ``seed``; ``set`` holds any other ``key -> value``; ``params`` the
    scenario's workload parameters (``{"tasks_per_cpu": 2}``; in ``set`` as
    ``workload.tasks_per_cpu``). ``progress`` draws a tqdm bar on stderr for runs longer
    than about two seconds.
    """
    p = prepare(
        config,
        trace=trace,
        trace_format=trace_format,
        trace_kind=trace_kind,
        scenario=scenario,
        scale=scale,
        policy=policy,
        memory=memory,
        swap=swap,
        swappiness=swappiness,
        seed=seed,
        set=set,
        params=params,
    )
    from .progress import Progress

    with Progress(enabled=progress) as bar:
        raw = replay(p.cfg, p.source, on_progress=bar.update, policy=p.policy)
    return Result(raw, p.cfg.items(), p.workload, p.transactions)


# ---- comparing policies -------------------------------------------------------------------


#: The `cache:` reference algorithms a comparison that declares no policies runs
#: (crates/core/src/scenario.rs): `--policy cache:NAME` runs any other.
DEFAULT_CACHE_POLICIES = tuple(_core.DEFAULT_CACHE_POLICIES)


def compare_policies(scenario: str) -> list[str]:
    """The policies a comparison of ``scenario`` runs (its row in the scenario table,
    ``Scenario::compared``): those it declares that are registered in this build (in its
    order), or, if it declares none, every registered kernel model and of the ``cache:``
    policies those in :data:`DEFAULT_CACHE_POLICIES` (in registry order)."""
    return list(_core.scenario_info(scenario)["compared"])


class Comparison:
    """One scenario run under several policies: ``scenario``, ``baseline`` (the policy
    ratios are relative to), ``results`` (policy -> :class:`Result`, in table order) and
    ``ratios`` (policy -> tps / baseline tps; for a scenario without transactions,
    baseline runtime / runtime, i.e. speed relative to the baseline)."""

    def __init__(self, scenario: str, baseline: str, results: dict[str, Result]):
        self.scenario = scenario
        self.baseline = baseline
        self.results = results
        base = results[baseline].metrics
        self.metric = "tps" if "tps" in base else "runtime_s"
        self.ratios: dict[str, float] = {}
        for name, r in results.items():
            if self.metric == "tps":
                self.ratios[name] = r.metrics["tps"] / base["tps"] if base["tps"] > 0 else float("nan")
            else:
                rt = r.metrics["runtime_s"]
                self.ratios[name] = base["runtime_s"] / rt if rt > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """``{"scenario", "baseline", "policies": {name: {"metrics", "vmstat"}}}``; each
        policy's metrics include ``ratio_to_baseline``."""
        return {
            "scenario": self.scenario,
            "baseline": self.baseline,
            "policies": {
                name: {"metrics": {**r.metrics, "ratio_to_baseline": self.ratios[name]}, "vmstat": dict(r.vmstat)}
                for name, r in self.results.items()
            },
        }

    def __repr__(self) -> str:
        return f"Comparison({self.scenario!r}, baseline={self.baseline!r}, {list(self.results)})"


def _run_one(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str], str, tuple[int, int] | None]:
    """Worker: one policy's run, returned as picklable parts."""
    p = prepare(**kwargs)
    raw = replay(p.cfg, p.source)
    raw = {"policy": raw["policy"], "vmstat": dict(raw["vmstat"]), "metrics": dict(raw["metrics"]), "timeseries": {}}
    return raw, p.cfg.items(), p.workload, p.transactions


def compare(
    scenario: str = "default",
    *,
    policies: list[str] | None = None,
    scale: float | None = None,
    memory: str | int | None = None,
    swap: str | None = None,
    swappiness: int | str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    workers: int | None = None,
    on_done: Callable[[str, Result], None] | None = None,
) -> Comparison:
    """Run the built-in ``scenario`` once per policy (default: :func:`compare_policies`),
    in parallel worker processes (at most ``workers``, default ``os.cpu_count()``), with
    the scenario's workload ``params``, and return a :class:`Comparison`. The baseline is ``mglru@6.15`` (the scenario's declared
    baseline) when it ran, else the first policy. Results do not depend on ``workers``:
    each run is deterministic and reported in policy order."""
    names = list(policies) if policies is not None else compare_policies(scenario)
    if not names:
        raise ConfigError(f"scenario {scenario}: none of its policies is registered")
    common = dict(scenario=scenario, scale=scale, memory=memory, swap=swap, swappiness=swappiness, seed=seed, set=dict(set or {}),
                  params=dict(params or {}))
    jobs = {name: {**common, "policy": name} for name in names}
    # Validate every run's input here, so a bad setting is one error, not one per worker.
    for kw in jobs.values():
        prepare(**kw)
    n = max(1, min(len(names), workers or os.cpu_count() or 1))
    results: dict[str, Result] = {}

    def done(name: str, parts: tuple) -> None:
        raw, items, workload, apt = parts
        results[name] = Result(raw, items, workload, apt)
        if on_done is not None:
            on_done(name, results[name])

    if n == 1:
        for name, kw in jobs.items():
            done(name, _run_one(kw))
    else:
        import concurrent.futures as cf

        from ._pool import process_pool

        # (fork where there is one: compare() works from a REPL or an unguarded script)
        with process_pool(n) as pool:
            futures = {pool.submit(_run_one, kw): name for name, kw in jobs.items()}
            for fut in cf.as_completed(futures):
                done(futures[fut], fut.result())
    ordered = {name: results[name] for name in names}
    declared = _core.scenario_info(scenario)["baseline"]
    baseline = declared if declared in ordered else names[0]
    return Comparison(scenario, baseline, ordered)


def compare_stats(source: str | os.PathLike[str], metric: str | None = None, baseline: str | None = None) -> "polars.DataFrame":
    """What ``reclaimlab compare SOURCE`` prints, as a polars DataFrame of Welch tests (an
    experiment's results directory, a measurements CSV or mmtests JSON). Not to be confused
    with :func:`compare`, which runs a scenario under several policies."""
    from .stats import comparisons

    frame: polars.DataFrame = comparisons(source, metric, baseline)
    return frame
