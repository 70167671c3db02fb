"""Provenance of every report and ``--json`` document: which reclaimlab (version and git
commit) produced it, and when.

The date is the current UTC time unless ``SOURCE_DATE_EPOCH`` is set (the
reproducible-builds convention), so a pinned date gives byte-identical documents.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["provenance", "git_commit", "config_summary", "stamp", "NOISE_SINGLE_RUN"]

#: The noise of a single `reclaimlab run`: the pure model (repetitions and their noise
#: model are `reclaimlab experiment`'s).
NOISE_SINGLE_RUN = "none (one run of the pure model; repetitions with a noise model: reclaimlab experiment)"


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the checkout this package runs from (an editable install), with
    ``-dirty`` when it has local changes; None outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        # Only our own checkout: an installed package may sit inside some other repository.
        ours = subprocess.run(["git", "-C", str(here), "ls-files", "--error-unmatch", Path(__file__).name],
                              capture_output=True, text=True, timeout=10)
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if ours.returncode != 0 or head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def provenance() -> dict[str, Any]:
    """``{"reclaimlab": version, "git_commit": sha or None, "date": ISO-8601 UTC}``."""
    from . import __version__

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit() else \
        _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    return {"reclaimlab": __version__, "git_commit": git_commit(), "date": when.isoformat().replace("+00:00", "Z")}


def config_summary(configs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Engine configurations of several runs as ``{"runs": n, "common": {knob: value},
    "varying": {knob: [distinct values, sorted]}}``."""
    values: dict[str, set[str]] = {}
    n = 0
    for cfg in configs:
        n += 1
        for k, v in cfg.items():
            values.setdefault(k, set()).add(str(v))
    common = {k: next(iter(v)) for k, v in sorted(values.items()) if len(v) == 1}
    varying = {k: sorted(v) for k, v in sorted(values.items()) if len(v) > 1}
    return {"runs": n, "common": common, "varying": varying}


def stamp(doc: Mapping[str, Any], configs: Iterable[Mapping[str, Any]], noise: str = NOISE_SINGLE_RUN) -> dict[str, Any]:
    """``doc`` with a ``provenance`` key: :func:`provenance`, the effective configuration
    (:func:`config_summary`) and the noise the numbers carry."""
    return {**doc, "provenance": {**provenance(), "config": config_summary(configs), "noise": noise}}
