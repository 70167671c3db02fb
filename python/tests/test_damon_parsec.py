"""Seed 004's scenario: the table's shape, the seed's directions and the magnitudes the
model reproduces, on all 24 profiles at the default size (the claim is about the suite's
row, formed from sums over the workloads as damon-tests forms it)."""

import subprocess
import sys

import pytest

from reclaimlab.experiment.damon_quota import averages, run_table


@pytest.fixture(scope="module")
def rows():
    return averages(run_table(scale=1.0, seed=1, jobs=2))


def test_table_shape(rows):
    assert [(r["quota"], r["prioritization"]) for r in rows] == [
        ("N", False), ("10ms/s", False), ("50ms/s", False), ("200ms/s", False),
        ("10ms/s", True), ("50ms/s", True), ("200ms/s", True),
    ]
    # Without a quota DAMON_RECLAIM saves memory at the highest CPU cost.
    assert rows[0]["memory_saving_pct"] > 10
    assert rows[0]["cpu_pct"] > rows[3]["cpu_pct"] > rows[2]["cpu_pct"] > rows[1]["cpu_pct"] > 0


def test_saving_magnitudes_near_the_seed_where_the_model_reproduces_them(rows):
    # the seed: 47.16 % (no quota), 40.84 % (50 ms/s), 48.42 % (200 ms/s). The input
    # files' page cache is most of it: anonymous memory alone capped the model near 27 %.
    for i, seed in ((0, 47.16), (2, 40.84), (3, 48.42)):
        assert abs(rows[i]["memory_saving_pct"] - seed) < 8, (i, rows[i])
    # 10 and 50 ms/s time quotas cost about 1–2.5 % and 5 % of a CPU (seed: 1.78, 5.7 %).
    # A THP is one folio (the 16 GiB machine boots with THP on), so one DAMOS pageout can
    # swap 512 pages and overshoot the 10 ms window: 2.5 % with THP, 1.5 % without
    # (docs/damon.md, "THP folios").
    assert 1.0 < rows[1]["cpu_pct"] < 3.0 and 4.0 < rows[2]["cpu_pct"] < 7.5


def test_saving_rises_with_time_quota(rows):
    # the seed: 4.55 -> 40.84 -> 48.42 %. The model's 10 ms/s row saves more than the
    # seed's (docs/damon.md, "What is still off"), so only the order is asserted.
    assert rows[1]["memory_saving_pct"] < rows[2]["memory_saving_pct"] < rows[3]["memory_saving_pct"]


def test_prioritization_lowers_slowdown_at_equal_quota(rows):
    # the seed: 2.51 -> 1.84 % (10 ms/s), 4.53 -> 3.38 % (50 ms/s)
    for without, with_ in ((1, 4), (2, 5)):
        assert rows[with_]["slowdown_pct"] < rows[without]["slowdown_pct"]


def test_cli_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "reclaimlab", "run", "damon-reclaim-parsec", "--scale", "0.1", "-q", "-j", "2", "--detail"],
        capture_output=True, text=True, timeout=170,
    )
    assert out.returncode == 0, out.stderr
    assert "memory_saving" in out.stdout and "200ms/s" in out.stdout and "RFC: saving" in out.stdout
    assert "splash2x/water_spatial" in out.stdout  # --detail: one table per workload
