"""`--json` of the listing and curve commands against reclaimlab/cli/output.schema.json,
and every data-printing command takes --json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import reclaimlab.cli as cli
from reclaimlab.cli import build_parser, main
from reclaimlab.cli.vocab import walk

SCHEMA = json.loads((Path(cli.__file__).parent / "output.schema.json").read_text())
#: Commands that print data (the rest write files, run programs or print a single line).
DATA_COMMANDS = {"run", "policies", "knobs", "scenarios", "trace info", "experiment list", "experiment show",
                 "compare", "cachesim", "mrc", "kernel run", "validate", "tune damon-reclaim", "atlas"}


def check(capsys, argv: list[str], definition: str) -> dict:
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, {**SCHEMA, "$ref": f"#/$defs/{definition}"})
    return doc


def test_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_data_command_takes_json():
    have = {name.removeprefix("reclaimlab ") for name, p in walk(build_parser())
            if any("--json" in a.option_strings for a in p._actions)}
    assert DATA_COMMANDS <= have, DATA_COMMANDS - have


@pytest.mark.parametrize("argv, definition, key", [
    (["policies", "--json"], "policies", "policies"),
    (["knobs", "--json"], "knobs", "knobs"),
    (["scenarios", "--json"], "scenarios", "scenarios"),
    (["experiment", "list", "--json"], "experiment_list", "experiments"),
])
def test_listings(capsys, argv, definition, key):
    doc = check(capsys, argv, definition)
    assert doc[key], "an empty listing"


def test_listings_carry_what_the_tables_show(capsys):
    pol = check(capsys, ["policies", "--json"], "policies")["policies"]
    assert {"classic@6.15", "mglru@6.15"} <= {p["name"] for p in pol} and any(p["kind"] == "thp" for p in pol)
    knobs = {k["key"]: k for k in check(capsys, ["knobs", "--json"], "knobs")["knobs"]}
    assert knobs["vm.swappiness"]["default"] == "60" and "cgroup.<name>.memory.max" in knobs
    names = [s["name"] for s in check(capsys, ["scenarios", "--json"], "scenarios")["scenarios"]]
    assert names[0] == "default" and "thpscale" in names and "program:grep" in names


def test_experiment_show(capsys):
    doc = check(capsys, ["experiment", "show", "hadoop-terasort", "--json"], "experiment_show")
    assert doc["runs"] == doc["configurations"] * doc["repetitions"]
    assert [a["name"] for a in doc["axes"]][:1] == ["policy"]


def test_mrc(capsys, tmp_path):
    trace = tmp_path / "z.trace"
    assert main(["trace", "gen", "zipf", "--pages", "200", "--accesses", "5000", "-o", str(trace)]) == 0
    capsys.readouterr()
    doc = check(capsys, ["mrc", "--trace", str(trace), "--algo", "lru,lirs-paper", "--size", "5,50", "--json"], "mrc")
    assert doc["sizes"] == [5, 50] and doc["requests"] == 5000
    assert doc["curves"]["lirs-paper"][0] is None and 0 <= doc["curves"]["lru"][1] <= doc["curves"]["lru"][0] <= 1
