"""The scenario table (``SCENARIOS`` in crates/core/src/scenario.rs) is the one list:
adding a scenario is one row plus its generator, and from the row alone it is listed by
``reclaimlab scenarios``, accepted by ``reclaimlab run NAME``, run by the report its row
names, and in docs/scenarios.md's list."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from reclaimlab import _core
from reclaimlab.cli import main
from reclaimlab.cli.run import _positional_scenario, report_of
from reclaimlab.programs import PROGRAMS

ROWS = _core.scenarios()
DOCS = (Path(__file__).resolve().parents[2] / "docs" / "scenarios.md").read_text()
#: The reports `reclaimlab run` has a driver for (cli/run.py, run_thp.py, damon_parsec.py).
REPORTS = {"policies", "damon-quota", "thp-policies"}


def test_scenarios_json_lists_every_row_then_the_programs(capsys):
    assert main(["scenarios", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["scenarios"]
    assert [(s["name"], s["description"], s["report"]) for s in listed] == (
        [(n, d, r) for n, d, r in ROWS] + [(f"program:{p}", listed[len(ROWS) + i]["description"], None)
                                           for i, p in enumerate(PROGRAMS)])


def test_docs_list_every_row_once():
    table = [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", DOCS, re.M)]
    names = [n for n, _, _ in ROWS]
    assert sorted(n for n in table if n in names) == sorted(names), set(names) - set(table)


@pytest.mark.parametrize("name, report", [(n, r) for n, _, r in ROWS])
def test_every_row_runs_by_its_report(name, report):
    assert report in REPORTS
    assert _core.scenario_info(name)["report"] == report == report_of(name)
    args = argparse.Namespace(config=name, scenario=None, trace=None)
    _positional_scenario(args)
    assert (args.scenario, args.config) == (name, None)
