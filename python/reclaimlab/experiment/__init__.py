"""Experiments: a workload × matrix axes × repetitions, run into a results store.

``reclaimlab experiment run EXP.toml --out-dir DIR [--jobs N] [--scheduler ADDRESS]``;
from Python::

    from reclaimlab.experiment import load, run_experiment
    run_experiment(load("exp.toml"), "out/", jobs=4)

See :mod:`.spec` for the file format and docs/experiments.md.
"""

from .runner import execute, run_experiment
from .spec import Axis, Experiment, builtin, builtin_names, load, resolve

__all__ = ["Axis", "Experiment", "load", "resolve", "builtin", "builtin_names", "run_experiment", "execute"]
