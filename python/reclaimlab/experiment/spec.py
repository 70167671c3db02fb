"""Experiment definitions (TOML) and their expansion into runs.

An experiment names a workload, matrix axes and repetitions::

    name = "example"
    repetitions = 5            # runs per configuration; repetition r uses seed = seed + r
    seed = 1
    metric = "runtime_s"       # what `reclaimlab compare DIR` compares by default
    baseline = "classic@6.15"  # the baseline variant
    variant = "policy"         # the axis whose values are the variants (default: policy)
    timeseries = true          # store every run's time series (default true)

    [workload]                 # required; exactly one of:
    scenario = "default"       #   a built-in scenario (optional: scale = 2.0, params = {...})
    # trace = "app.trace"      #   a trace file (optional: format, kind), relative to this file
    # generator = "prog.toml"  #   a trace program (docs/trace-programs.md), or inline:
    # [workload.program] ...   #   the same tables ([[workload.program.region]], ...)

    [noise]                    # what differs between reboots (optional; .noise):
    model = "default"          #   "default" (published variation) or "none" (the pure model);
    device_latency_cv = 0.03   #   any knob overrides the model's value

    [settings]                 # knobs every run gets
    "machine.memory" = "512M"

    [matrix]                   # axes: the runs are the cross product
    policy = ["classic@6.15", "mglru@6.15"]
    "vm.swappiness" = [10, 60]
    [matrix.swap]              # an axis with its own column name and value labels
    key = "swap.device"
    values = ["none", "zram"]
    labels = ["swapoff", "swapon"]

An axis key is ``policy``, ``scale`` (a scenario's scale), ``workload.<param>`` (a
scenario's workload parameter, ``reclaimlab scenarios``/``scenario_info(name)["params"]``,
e.g. ``workload.tasks_per_cpu`` of ``hadoop-terasort``; fixed ones go in
``[workload.params]``), ``program.<path>`` (a value in the generator program, e.g.
``program.phases.0.accesses``) or any engine knob (`reclaimlab knobs`). An axis table's
``key`` may list several keys set together, each value then a list of one value per key
(``key = ["swap.device", "workload.heap_mb"]``, ``values = [["none", 20480], ["ssd", 22528]]``). Every run is keyed by a hash of its full configuration and seed,
so the same experiment run again skips the runs already in its store.
"""

from __future__ import annotations

import copy
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ConfigFile, parse_toml
from ..exceptions import ConfigError
from ..results import run_key
from .noise import NOISE_DEFAULT, Noise, from_table

__all__ = ["Axis", "Experiment", "load", "builtin", "builtin_names", "BUILTIN_DIR"]

BUILTIN_DIR = Path(__file__).with_name("builtin")
#: The most runs one experiment may expand to (matrix points × repetitions).
MAX_RUNS = 100_000

TOP_KEYS = {"name", "description", "repetitions", "seed", "metric", "baseline", "variant", "timeseries",
            "workload", "settings", "matrix", "noise"}
WORKLOAD_KEYS = {"scenario", "scale", "params", "trace", "format", "kind", "generator", "program"}


@dataclass
class Axis:
    """A matrix axis: column ``name``, the configuration ``key`` it sets, ``values`` and
    their ``labels`` (the strings stored and compared)."""

    name: str
    key: str | list[str]
    values: list[Any]
    labels: list[str]


@dataclass
class Experiment:
    name: str
    workload: dict[str, Any]
    axes: list[Axis] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    repetitions: int = 1
    seed: int = 1
    metric: str = "runtime_s"
    baseline: str | None = None
    variant: str = "policy"
    timeseries: bool = True
    description: str = ""
    path: Path | None = None
    noise: Noise = NOISE_DEFAULT

    def identity(self) -> dict[str, Any]:
        """What makes two experiments the same for a results store: everything that
        changes a run's configuration or how the runs are grouped (not the repetitions,
        so more of them extend a store; not metric, baseline or description, which only
        choose what `compare` shows)."""
        return {"name": self.name, "workload": {k: v for k, v in self.workload.items() if k != "program"},
                "program": self.workload.get("program"), "settings": self.settings, "seed": self.seed,
                "variant": self.variant, "timeseries": self.timeseries, "noise": self.noise.spec(),
                "axes": [{"name": a.name, "key": a.key, "values": a.values, "labels": a.labels} for a in self.axes]}

    def override(self, settings: dict[str, str]) -> None:
        """Fixed settings for every run from the command line (``experiment run --set``):
        a knob joins ``[settings]``, ``workload.NAME`` the workload's parameters; a key an
        axis sets is an error. They are part of :meth:`identity`, so a store holding the
        runs without them refuses these."""
        axis_of = {k: a.name for a in self.axes for k in (a.key if isinstance(a.key, list) else [a.key])}
        for k, v in settings.items():
            if k in axis_of:
                raise ConfigError(f"--set {k}: experiment {self.name}'s axis '{axis_of[k]}' sets it")
            if k.startswith("workload."):
                self.workload.setdefault("params", {})[k[len("workload."):]] = v
            else:
                self.settings[k] = v

    def configurations(self) -> list[dict[str, tuple[str, Any]]]:
        """Every point of the matrix: axis name -> (label, value), axes in file order."""
        if not self.axes:
            return [{}]
        out = []
        for combo in itertools.product(*[list(zip(a.labels, a.values)) for a in self.axes]):
            out.append({a.name: lv for a, lv in zip(self.axes, combo)})
        return out

    def jobs(self) -> list[dict[str, Any]]:
        """The runs, in matrix order then repetition: picklable dicts for the workers."""
        out = []
        for point in self.configurations():
            kw: dict[str, Any] = {"set": dict(self.settings)}
            wparams: dict[str, Any] = dict(self.workload.get("params") or {})
            program = copy.deepcopy(self.workload.get("program"))
            for axis in self.axes:
                label, value = point[axis.name]
                # An axis with a list of keys sets them together (a value per key).
                pairs = zip(axis.key, value) if isinstance(axis.key, list) else [(axis.key, value)]
                for key, value in pairs:
                    if key == "policy":
                        kw["policy"] = value
                    elif key == "scale":
                        kw["scale"] = value
                    elif key.startswith("workload."):
                        wparams[key[len("workload."):]] = value
                    elif key.startswith("program."):
                        if program is None:
                            raise ConfigError(f"experiment {self.name}: axis '{axis.name}' sets {key} but the workload is not a generator")
                        _patch(program, key[len("program."):], value)
                    else:
                        kw["set"][key] = value
            if "scenario" in self.workload:
                kw["scenario"] = self.workload["scenario"]
                if "scale" in self.workload and "scale" not in kw:
                    kw["scale"] = self.workload["scale"]
            elif "trace" in self.workload:
                kw["trace"] = self.workload["trace"]
                kw["trace_format"] = self.workload.get("format")
                kw["trace_kind"] = self.workload.get("kind")
            if self.variant in point:
                variant = point[self.variant][0]
            else:
                variant = str(kw.get("policy") or self.settings.get("policy") or "default")
            params = {name: lv[0] for name, lv in point.items() if name != self.variant}
            for r in range(self.repetitions):
                seed = self.seed + r
                ident = {"workload": {k: v for k, v in self.workload.items() if k != "program"}, "program": program,
                         "run": {k: v for k, v in kw.items()}, "timeseries": self.timeseries}
                if not self.noise.is_none:  # the pure model keeps the keys it always had
                    ident["noise"] = self.noise.spec()
                if wparams:
                    ident["workload_params"] = wparams
                out.append({"run_id": run_key(ident, seed), "variant": variant, "params": params, "repetition": r,
                            "seed": seed, "kwargs": kw, "program": program, "timeseries": self.timeseries,
                            "workload_params": wparams, "noise": self.noise.spec()})
        return out


def _patch(doc: Any, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = doc
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value


def _error(cf: ConfigFile, key: str, msg: str) -> ConfigError:
    """``FILE, line N: KEY: MSG``."""
    return cf.error(key, f"{key}: {msg}")


#: TOML's type names for the messages.
_TYPE_NAMES = {bool: "a boolean (true or false)", int: "an integer", str: "a string", dict: "a table",
               list: "a list"}


def _get(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], cf: ConfigFile, default: Any = None,
         dotted: str | None = None) -> Any:
    """``doc[key]`` checked to be of TOML type ``kind`` (an integer is never a bool or a
    float, a number is an int or a float), or ``default`` when absent."""
    if key not in doc:
        return default
    v = doc[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = any(isinstance(v, k) and not (k in (int, float) and isinstance(v, bool)) for k in kinds)
    if not ok:
        want = " or ".join(_TYPE_NAMES.get(k, "a number") for k in kinds)
        raise _error(cf, dotted or key, f"expected {want}, got {v!r}")
    return v


def _axis(name: str, spec: Any, cf: ConfigFile) -> Axis:
    """One [matrix] axis. A single value (``policy = "classic@6.15"``) is a one-value axis."""
    key = f"matrix.{name}"
    if isinstance(spec, dict):
        bad = set(spec) - {"key", "values", "labels"}
        if bad:
            raise _error(cf, key, f"unknown key(s) {', '.join(sorted(bad))}; an axis table has key, values, labels")
        axis_key = _get(spec, "key", (str, list), cf, name, f"{key}.key")
        values = _get(spec, "values", (list, str, int, float, bool), cf, None, f"{key}.values")
        labels = _get(spec, "labels", (list, str), cf, None, f"{key}.labels")
    else:
        axis_key, values, labels = name, spec, None
    if values is None:
        raise _error(cf, key, "needs values")
    if not isinstance(values, list):
        values = [values]
    if labels is None and isinstance(axis_key, list):
        raise _error(cf, key, "an axis with several keys needs labels")
    if labels is None:
        labels = [str(x) for x in values]
    elif not isinstance(labels, list):
        labels = [labels]
    if isinstance(axis_key, list):
        # Several keys set together: each value is a list with one entry per key.
        if not axis_key or not all(isinstance(k, str) for k in axis_key):
            raise _error(cf, f"{key}.key", f"expected a string or a list of strings, got {axis_key!r}")
        if not all(isinstance(v, list) and len(v) == len(axis_key) and not any(isinstance(x, (list, dict)) for x in v)
                   for v in values):
            raise _error(cf, key, f"with {len(axis_key)} keys every value must be a list of {len(axis_key)} scalars, got {values!r}")
    elif any(isinstance(v, (list, dict)) for v in values):
        raise _error(cf, key, f"values must be scalars, got {values!r}")
    if not values or len(labels) != len(values):
        raise _error(cf, key, f"needs values and as many labels ({len(values)} values, {len(labels)} labels)")
    return Axis(name, axis_key, values, [str(x) for x in labels])


def load(path: str | os.PathLike) -> Experiment:
    """Read an experiment TOML file. Every key is checked for its type; errors name the
    file, the line and the key."""
    path = Path(path)
    doc, lines = parse_toml(path)
    cf = ConfigFile(path, lines=lines)
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise ConfigError(f"{cf.where()}: unknown key(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(TOP_KEYS))}")
    if "workload" not in doc:
        raise ConfigError(f"{cf.where()}: no [workload] table (give scenario, trace, generator or [workload.program])")
    wl = dict(_get(doc, "workload", dict, cf))
    bad = set(wl) - WORKLOAD_KEYS
    if bad:
        raise ConfigError(f"{cf.where('workload')}: unknown [workload] key(s) {', '.join(sorted(bad))}")
    kinds = [k for k in ("scenario", "trace", "generator", "program") if k in wl]
    if len(kinds) != 1:
        raise ConfigError(f"{cf.where('workload')}: [workload] needs exactly one of scenario, trace, generator "
                          f"(or [workload.program]), got {', '.join(kinds) or 'none'}")
    for k in ("scenario", "trace", "generator", "format", "kind"):
        _get(wl, k, str, cf, dotted=f"workload.{k}")
    _get(wl, "scale", (int, float), cf, dotted="workload.scale")
    _get(wl, "params", dict, cf, dotted="workload.params")
    _get(wl, "program", dict, cf, dotted="workload.program")
    if "trace" in wl:
        wl["trace"] = str((path.parent / wl["trace"]).resolve())
    if "generator" in wl:
        from ..program import load_program

        gpath = (path.parent / wl.pop("generator")).resolve()
        wl["program"] = load_program(gpath)
        wl["generator"] = str(gpath)
    elif "program" in wl:
        from ..program import from_doc

        wl["program"] = from_doc(wl["program"], lines, path, "workload.program.")
    axes = [_axis(name, spec, cf) for name, spec in _get(doc, "matrix", dict, cf, {}).items()]
    reps = _get(doc, "repetitions", int, cf, 1)
    if reps < 1:
        raise _error(cf, "repetitions", "must be at least 1")
    # The runs are expanded up front (one job each): bound them before a small file asks
    # for 10^9 of them (a hang and unbounded memory, not an experiment).
    points = 1
    for a in axes:
        points *= max(1, len(a.values))
    if points * reps > MAX_RUNS:
        key = "repetitions" if reps > MAX_RUNS or not axes else "matrix"
        raise _error(cf, key, f"{points:,} matrix point{'s' if points != 1 else ''} × {reps:,} repetition"
                              f"{'s' if reps != 1 else ''} = {points * reps:,} runs, more than the limit of {MAX_RUNS:,}")
    return Experiment(
        name=_get(doc, "name", str, cf, path.stem), workload=wl, axes=axes,
        settings=dict(_get(doc, "settings", dict, cf, {})), repetitions=reps, seed=_get(doc, "seed", int, cf, 1),
        metric=_get(doc, "metric", str, cf, "runtime_s"), baseline=_get(doc, "baseline", str, cf),
        variant=_get(doc, "variant", str, cf, "policy"), timeseries=_get(doc, "timeseries", bool, cf, True),
        description=_get(doc, "description", str, cf, ""), path=path,
        noise=from_table(_get(doc, "noise", dict, cf, {}), lambda k: cf.where(f"noise.{k}" if k else "noise")),
    )


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def builtin(name: str) -> Path | None:
    p = BUILTIN_DIR / f"{name}.toml"
    return p if p.exists() else None


def resolve(arg: str) -> Experiment:
    """EXP.toml, or the name of a built-in experiment (``experiment/builtin/NAME.toml``)."""
    p = Path(arg)
    if p.suffix == ".toml" or p.exists():
        if not p.exists():
            raise ConfigError(f"{p}: no such experiment file")
        return load(p)
    b = builtin(arg)
    if b is None:
        raise ConfigError(f"'{arg}' is neither an experiment file nor a built-in experiment "
                          f"(built-in: {', '.join(builtin_names()) or 'none'})")
    return load(b)
