"""Seed 004's scenario at a small scale: the table's shape and its directions."""

import subprocess
import sys

import pytest

from reclaimlab.cli.damon_parsec import averages, run_table

WORKLOADS = ["parsec3/freqmine", "splash2x/fft", "parsec3/blackscholes", "splash2x/radix"]


@pytest.fixture(scope="module")
def table():
    return run_table(scale=0.25, seed=1, jobs=2, workloads=WORKLOADS)


def test_table_shape(table):
    rows = averages(table)
    assert [(r["quota"], r["prioritization"]) for r in rows] == [
        ("N", False), ("10ms/s", False), ("50ms/s", False), ("200ms/s", False),
        ("10ms/s", True), ("50ms/s", True), ("200ms/s", True),
    ]
    # Without a quota DAMON_RECLAIM saves memory (the cold shares are large) at a cost.
    assert rows[0]["memory_saving_pct"] > 10
    assert rows[0]["cpu_pct"] > rows[1]["cpu_pct"] > 0


@pytest.mark.xfail(strict=True, reason="seed 004's direction (saving 4.6% -> 40.8% -> 48.4%) is not reproduced yet: the time quota's esz comes from throughput measured mostly on free memory (docs/damon.md)")
def test_saving_rises_with_time_quota(table):
    r = averages(table)
    assert r[1]["memory_saving_pct"] < r[2]["memory_saving_pct"] < r[3]["memory_saving_pct"]


def test_prioritization_lowers_slowdown_at_equal_quota(table):
    r = averages(table)
    # 10 and 50 ms/s (the seed: 2.51 -> 1.84 %, 4.53 -> 3.38 %)
    assert r[4]["slowdown_pct"] <= r[1]["slowdown_pct"]
    assert r[5]["slowdown_pct"] <= r[2]["slowdown_pct"]


def test_cli_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "reclaimlab", "run", "damon-reclaim-parsec", "--scale", "0.1", "-q", "-j", "2"],
        capture_output=True, text=True, timeout=170,
    )
    assert out.returncode == 0, out.stderr
    assert "memory_saving" in out.stdout and "200ms/s" in out.stdout and "seed: saving" in out.stdout
