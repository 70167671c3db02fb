"""What ``reclaimlab policies``, ``knobs`` and ``scenarios`` list, as records (the CLI's
tables and ``--json``) and as polars DataFrames (``reclaimlab.policies()`` ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars


def policy_records() -> list[dict[str, Any]]:
    """Reclaim policy models, then THP allocation policies (the ``thp.policy`` key)."""
    from . import _core

    out = [{"name": n, "kind": "reclaim", "variant_of": base or None, "model": d} for n, base, d in _core.policies()]
    out += [{"name": n, "kind": "thp", "variant_of": None, "model": d} for n, d in _core.thp_policies()]
    return out


def knob_records() -> list[dict[str, Any]]:
    """Every config key, then the cgroup family ``cgroup.<name>.memory.*``."""
    from . import _core

    out = [{"key": k, "default": d, "unit": u or None, "meaning": m} for k, d, u, m in _core.knobs()]
    out += [{"key": f"cgroup.<name>.{f}", "default": d, "unit": "bytes", "meaning": m}
            for f, d, m in _core.cgroup_knobs()]
    return out


def scenario_records() -> list[dict[str, Any]]:
    """Built-in scenarios (the scenario table, crates/core/src/scenario.rs), then the real
    programs (``program:NAME``, :data:`reclaimlab.programs.PROGRAMS`), each with the report
    its comparison run prints (``policies``, ``damon-quota``, ``thp-policies``; None for a
    real program, which is one run)."""
    from . import _core
    from .programs import PROGRAMS

    rows = list(_core.scenarios())
    rows += [(f"program:{p.name}", f"real program ({p.package}): {p.description}", None) for p in PROGRAMS.values()]
    return [{"name": n, "description": d, "report": r} for n, d, r in rows]


def _frame(records: list[dict[str, Any]]) -> "polars.DataFrame":
    import polars as pl

    return pl.DataFrame(records, schema={k: pl.Utf8 for k in records[0]})


def policies() -> "polars.DataFrame":
    """Columns name, kind (reclaim | thp), variant_of (null for a mainline model), model."""
    return _frame(policy_records())


def knobs() -> "polars.DataFrame":
    """Columns key, default, unit (null when none), meaning."""
    return _frame(knob_records())


def scenarios() -> "polars.DataFrame":
    """Columns name, description, report (null for a real program)."""
    return _frame(scenario_records())
