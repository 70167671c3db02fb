"""reclaimlab atlas: the grid and a point's program with numbers worked by hand, the bad
input battery (one line, exit 2), and a small atlas end to end (winner, margin, figure,
same seed ⇒ same numbers)."""

from __future__ import annotations

import json

import pytest

from reclaimlab.atlas import DEFAULT_GRID, grid, parse_axis, program
from reclaimlab.exceptions import ConfigError

from conftest import assert_user_error, cli


def test_default_grid_is_24_points_row_major():
    axes, points = grid()
    assert axes == DEFAULT_GRID
    assert len(points) == 4 * 3 * 2
    assert points[0] == {"ws": "0.75", "scan": "0", "anon": "0.2", "skew": "0.9", "tenants": "1"}
    assert points[1]["anon"] == "0.6" and points[2]["scan"] == "0.3"


def test_axis_replaces_its_default():
    axes, points = grid(["ws=1,4", "tenants=2"])
    assert axes["ws"] == ["1", "4"] and axes["tenants"] == ["2"]
    assert len(points) == 2 * 3 * 2


@pytest.mark.parametrize("spec, needle", [
    ("ws=", "axis ws has no values"),
    ("ws", "expects NAME=v1,v2"),
    ("depth=1", "unknown axis 'depth'"),
    ("scan=1", "out of range"),
    ("anon=-0.1", "out of range"),
    ("ws=0", "out of range"),
    ("tenants=0", "1..64"),
    ("skew=x", "not a number"),
    ("ws=1,,2", "empty value"),
    ("ws=1,1", "repeated"),
])
def test_parse_axis_rejects(spec, needle):
    with pytest.raises(ConfigError, match=needle):
        parse_axis(spec)


def test_program_of_a_point_by_hand():
    # 1000 memory pages, ws 2 → 2000 pages; 2 tenants → 1000 each, a quarter anon: 250
    # heap + 750 data pages per tenant. Weights: heap (1 − 0.5) × 0.25 / 2 = 0.0625, data
    # Zipf (1 − 0.5) × 0.75 / 2 = 0.1875, the scan 0.5 / 2 = 0.25.
    p = program({"ws": "2", "scan": "0.5", "anon": "0.25", "skew": "0.9", "tenants": "2"}, 1000)
    assert [(r["name"], r["pages"], r["kind"], r["cgroup"]) for r in p["regions"]] == [
        ("heap0", 250, "anon", "t0"), ("data0", 750, "file-read", "t0"),
        ("heap1", 250, "anon", "t1"), ("data1", 750, "file-read", "t1")]
    s = p["phases"][0]["streams"]
    assert [(x["region"], x["pattern"], x["weight"]) for x in s[:3]] == [
        ("heap0", "zipf:0.9", 0.0625), ("data0", "zipf:0.9", 0.1875), ("data0", "seq", 0.25)]
    assert p["phases"][0]["accesses"] == 24 * 1000


def test_program_without_anon_or_scan_has_one_stream():
    p = program({"ws": "1.5", "scan": "0", "anon": "0", "skew": "1.2", "tenants": "1"}, 1000)
    assert [(r["name"], r["pages"], r["cgroup"]) for r in p["regions"]] == [("data0", 1500, "")]
    assert p["phases"][0]["streams"] == [{"region": "data0", "pattern": "zipf:1.2", "weight": 1.0}]


@pytest.mark.parametrize("args, needles", [
    (["--axis", "ws="], ["atlas: axis ws has no values"]),
    (["--metric", "latency"], ["unknown metric 'latency'", "runtime, refaults, major_faults"]),
    (["--axis", "ws=" + ",".join(f"{i / 100 + 0.01:.2f}" for i in range(100)),
      "--axis", "scan=" + ",".join(f"{i / 100:.2f}" for i in range(100)),
      "--axis", "anon=" + ",".join(f"{i / 10:.1f}" for i in range(10))], ["300,000 runs", "100,000"]),
    (["--policy", "lru"], ["unknown policy 'lru'"]),
    (["--x", "depth"], ["--x depth: not an axis"]),
    (["--swap", "floppy"], ["--swap"]),
])
def test_bad_input_is_one_line_exit_2(args, needles):
    assert_user_error(cli("atlas", "-q", *args, timeout=60), *needles)


def test_small_atlas_end_to_end(tmp_path):
    args = ["atlas", "-q", "--json", "--axis", "ws=0.75,2", "--axis", "scan=0", "--axis", "anon=0.2",
            "--policy", "classic@6.15", "--policy", "mglru@6.15", "--metric", "refaults", "-j", "2"]
    png = tmp_path / "atlas.png"
    p = cli(*args, "--out-dir", tmp_path / "store", "--plot", png, timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["metric"] == "refaults" and len(d["points"]) == 2
    fits, tight = d["points"]
    # Working set 3/4 of memory: nothing is evicted, no refaults, a tie.
    assert fits["values"] == {"classic@6.15": 0.0, "mglru@6.15": 0.0} and fits["winner"] == "tie"
    # Twice memory: both refault; the winner has fewer, by the margin reported.
    v = tight["values"]
    assert min(v.values()) > 0
    best, other = sorted(v, key=v.get)
    assert tight["winner"] == best and tight["runner_up"] == other
    assert tight["margin_pct"] == pytest.approx(100 * (v[other] - v[best]) / v[other])
    assert png.stat().st_size > 10_000
    # The store makes it resumable: run again, nothing reruns, the same numbers.
    again = cli(*args, "--out-dir", tmp_path / "store", timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["points"] == d["points"]
