"""The commands a user types first: --help everywhere, and the listing commands."""

from __future__ import annotations

import re

import pytest

from conftest import assert_user_error, cli

HELP_CASES = [
    ((), ["run", "policies", "knobs", "scenarios", "trace"]),
    (("run",), ["--trace-format", "--swappiness", "vm.swappiness", "machine.memory", "--json", "--timeseries", "--quiet"]),
    (("policies",), ["policy"]),
    (("knobs",), ["vm.swappiness"]),
    (("scenarios",), ["default"]),
    (("trace",), ["info", "convert", "gen", "lirs"]),
    (("trace", "info"), ["--trace-format", "--json"]),
    (("trace", "convert"), ["IN", "OUT", "--trace-kind"]),
    (("trace", "gen"), ["zipf", "uniform", "seq", "loop", "zigzag", "program"]),
    (("trace", "gen", "zipf"), ["--pages", "--accesses", "--alpha", "--write-ratio", "--cgroup", "--seed"]),
    (("trace", "gen", "program"), ["[[region]]", "[[phase.stream]]", "repeat"]),
]


@pytest.mark.parametrize("args,needles", HELP_CASES, ids=lambda x: " ".join(x) if isinstance(x, tuple) else None)
def test_help(args, needles):
    p = cli(*args, "--help")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: reclaimlab"), p.stdout[:200]
    for n in needles:
        assert n in p.stdout, n


def test_no_command_is_a_usage_error():
    assert_user_error(cli(), "COMMAND", "reclaimlab --help")


@pytest.mark.parametrize("args, needles", [
    (("run", "--memory", "-1G"), ["run: argument --memory: expected one argument", "OPTION=VALUE", "reclaimlab run --help"]),
    (("trace", "gen", "nosuch"), ["trace gen: argument PATTERN: invalid choice: 'nosuch'"]),
    (("kernel", "run"), ["kernel run: the following arguments are required: WORKLOAD"]),
    (("run", "--bogus"), ["unrecognized arguments: --bogus"]),
])
def test_argument_errors_are_one_line(args, needles):
    # issue 24: argparse's usage block is gone; the line names the command and its --help
    assert_user_error(cli(*args), *needles)


def test_policies_lists_classic():
    p = cli("policies")
    assert p.returncode == 0, p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines()[1:]]
    assert "classic@6.15" in names


def test_knobs_lists_swappiness_default_60_and_cgroup_family():
    p = cli("knobs")
    assert p.returncode == 0, p.stderr
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines()[1:]}
    assert rows["vm.swappiness"][1] == "60"
    assert rows["machine.memory"][1:3] == ["1G", "bytes"]
    assert rows["cgroup.<name>.memory.max"][1] == "max"
    assert {"cgroup.<name>.memory.high", "cgroup.<name>.memory.low", "cgroup.<name>.memory.min"} <= rows.keys()


def test_scenarios_lists_default():
    p = cli("scenarios")
    assert p.returncode == 0, p.stderr
    assert re.search(r"^default\s", p.stdout, re.M)


def test_version():
    p = cli("--version")
    assert p.returncode == 0
    assert re.match(r"reclaimlab \d+\.\d+\.\d+", p.stdout)


def test_entry_point_is_installed(tmp_path):
    """`pip install .` puts a `reclaimlab` command on PATH next to the interpreter."""
    import os
    import shutil
    import subprocess
    import sys

    exe = shutil.which("reclaimlab", path=os.path.dirname(sys.executable)) or shutil.which("reclaimlab")
    assert exe, "the reclaimlab command is not installed"
    p = subprocess.run([exe, "policies"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "classic@6.15" in p.stdout, p.stderr
