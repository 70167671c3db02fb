"""reclaimlab tune damon-reclaim: the Pareto frontier and knee with worked numbers, the
sysfs lines, the sweep grid; the end-to-end sweep runs when the engine has DAMON_RECLAIM."""

from __future__ import annotations

import json
import math

import pytest

from reclaimlab.exceptions import ConfigError
from reclaimlab.tune.pareto import knee, pareto_front
from reclaimlab.tune.sweep import DEFAULT_GRID, grid, measure, module_params, parse_param, point_settings
from reclaimlab.tune.sysfs import PARAMS_DIR, format_value, sysfs_lines

from conftest import assert_user_error, cli

# (memory saving %, slowdown %) of five points:
#   0: (10, 1)   1: (40, 3)   2: (45, 10)   3: (30, 5)   4: (5, 0.5)
SAVING = [10.0, 40.0, 45.0, 30.0, 5.0]
SLOWDOWN = [1.0, 3.0, 10.0, 5.0, 0.5]


def test_pareto_front_drops_dominated_points_and_orders_by_slowdown():
    # Point 3 (30 %, 5 %) is dominated by point 1 (40 %, 3 %): more saving, less slowdown.
    assert pareto_front(SAVING, SLOWDOWN) == [4, 0, 1, 2]


def test_pareto_front_ties_and_nan():
    # Equal slowdown: only the larger saving survives; identical points: the first;
    # a NaN point is never on the frontier.
    assert pareto_front([1.0, 2.0, 2.0, float("nan")], [1.0, 1.0, 1.0, 0.0]) == [1]
    # Equal saving at more slowdown is dominated.
    assert pareto_front([5.0, 5.0], [1.0, 2.0]) == [0]


def test_knee_is_farthest_above_the_chord_in_scaled_axes():
    # Frontier 4,0,1,2: slowdown 0.5,1,3,10 -> scaled 0, 0.0526, 0.2632, 1;
    # saving 5,10,40,45 -> scaled 0, 0.125, 0.875, 1. Height above the chord
    # (scaled saving - scaled slowdown): 0, 0.072, 0.612, 0 -> point 1.
    assert knee(SAVING, SLOWDOWN) == 1


def test_knee_without_a_bend_is_the_most_saving_per_slowdown():
    # Straight frontier: saving/slowdown is 1 everywhere; the tie goes to less slowdown.
    assert knee([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 0
    # Two points: 1 %/0 % saves without slowdown (infinite ratio) against 9 %/5 %.
    assert knee([1.0, 9.0], [0.0, 5.0]) == 0
    # Two points: 22.8 % for 0.004 % (ratio 5700) against 45 % for 0.18 % (250).
    assert knee([22.8, 45.0], [0.004, 0.18]) == 0
    # A convex frontier (saving grows faster at the end) lies under its chord:
    # candidates (saving > 0) 1 % for 5 % (0.2) and 10 % for 10 % (1.0) -> point 2.
    assert knee([0.0, 1.0, 10.0], [0.0, 5.0, 10.0]) == 2
    # A point that saves nothing is never the knee when another saves: the default
    # watermarks (inactive, 0 %) against 0.62 % at 0.001 % slowdown.
    assert knee([0.0, 0.62], [0.0, 0.001]) == 1
    # Nothing saves: the frontier's first point.
    assert knee([0.0, -1.0], [0.0, 2.0]) == 0


def test_sysfs_lines_set_parameters_in_kernel_order_then_enable_and_commit():
    lines = sysfs_lines({"quota_sz": 1 << 30, "min_age": "30000000", "wmarks_high": 500, "wmarks_mid": 400,
                         "wmarks_low": 200, "quota_ms": 0, "skip_anon": True, "monitor_region_start": 4096},
                        comment="point 7")
    d = PARAMS_DIR
    assert d == "/sys/module/damon_reclaim/parameters"
    assert lines == [
        "# point 7",
        f"echo 30000000 > {d}/min_age",
        f"echo 0 > {d}/quota_ms",
        f"echo 1073741824 > {d}/quota_sz",
        f"echo 500 > {d}/wmarks_high",
        f"echo 400 > {d}/wmarks_mid",
        f"echo 200 > {d}/wmarks_low",
        f"echo Y > {d}/skip_anon",
        f"echo Y > {d}/enabled",
        f"echo Y > {d}/commit_inputs",
    ]


def test_sysfs_values_and_unknown_parameters():
    assert [format_value(v) for v in (False, "true", "N", 5.0, "128")] == ["N", "Y", "N", "5", "128"]
    with pytest.raises(ValueError, match="non-negative integers"):
        format_value("1.5")
    with pytest.raises(ValueError, match="not DAMON_RECLAIM parameters: min_agee"):
        sysfs_lines({"min_agee": 1})


def test_grid_defaults_params_and_settings():
    axes, pts = grid()
    assert axes == ["min_age", "quota_ms", "quota_sz", "wmarks"]
    assert len(pts) == 4 * 3 * 2 * 2
    axes, pts = grid(["quota_sz=64M,1G", "damon_reclaim.min_age=5000000", "vm.swappiness=10,100"])
    assert axes == ["min_age", "quota_ms", "quota_sz", "wmarks", "vm.swappiness"]
    assert len(pts) == 1 * 3 * 2 * 2 * 2
    assert pts[0] == {"min_age": "5000000", "quota_ms": "10", "quota_sz": str(64 << 20),
                      "wmarks": "500/400/200", "vm.swappiness": "10"}
    s = point_settings(pts[0])
    assert s == {"damon_reclaim.enabled": "true", "damon_reclaim.min_age": "5000000",
                 "damon_reclaim.quota_ms": "10", "damon_reclaim.quota_sz": str(64 << 20),
                 "damon_reclaim.wmarks_high": "500", "damon_reclaim.wmarks_mid": "400",
                 "damon_reclaim.wmarks_low": "200", "vm.swappiness": "10"}
    assert module_params(s) == ({"min_age": "5000000", "quota_ms": "10", "quota_sz": str(64 << 20),
                                 "wmarks_high": "500", "wmarks_mid": "400", "wmarks_low": "200"}, {})
    assert module_params({"damon_reclaim.quota_weight_age": "0", "damon_reclaim.skip_anon": "Y"}) == (
        {"skip_anon": "Y"}, {"quota_weight_age": "0"})
    assert DEFAULT_GRID["wmarks"][0] == "500/400/200"  # the kernel default is swept


@pytest.mark.parametrize("spec, needle", [
    ("min_age", "KEY=v1,v2"), ("wmarks=400/500/200", "high >= mid >= low"), ("wmarks=1/2", "HIGH/MID/LOW"),
    ("quota_ms=10,10", "repeated"), ("quota_ms=", "empty value"),
])
def test_bad_params(spec, needle):
    with pytest.raises(ConfigError, match=needle):
        parse_param(spec)


def test_measure_follows_seed_004_definitions():
    # Baseline: 1000 MiB average in use, 10 s. Point: 600 MiB, 10.5 s.
    base = {"mem_used_avg_bytes": 1000.0 * 2**20, "runtime_s": 10.0}
    raw = {"metrics": {"mem_used_avg_bytes": 600.0 * 2**20, "runtime_s": 10.5, "damon_cpu_pct": 1.9,
                       "nr_quota_exceeds": 3}, "vmstat": {}}
    m, c = measure(raw, base)
    assert math.isclose(m["memory_saving_pct"], 40.0)
    assert math.isclose(m["slowdown_pct"], 5.0)
    assert m["damon_cpu_pct"] == 1.9
    assert c == {"nr_quota_exceeds": 3.0}


def test_cli_user_errors():
    assert_user_error(cli("tune", "damon-reclaim"), "--trace FILE or --scenario NAME")
    assert_user_error(cli("tune", "damon-reclaim", "--scenario", "default", "--param", "wmarks=1/2/3/4"),
                      "HIGH/MID/LOW")
    assert_user_error(cli("tune", "damon-reclaim", "--scenario", "damon-reclaim-parsec", "--workload-param", "foo=1",
                          "--param", "min_age=1"), "unknown workload parameter 'foo'")
    assert_user_error(cli("tune", "damon-reclaim", "--trace", "x.trace", "--workload-param", "workload=vips"),
                      "--workload-param needs --scenario")
    p = cli("tune", "damon-reclaim", "--help")
    assert p.returncode == 0 and "Pareto frontier" in p.stdout and "--param" in p.stdout


def tiered_trace(tmp_path):
    """A 4 s workload of 12 MiB: 4..6 MiB hot all the time, 6..8 MiB warm (accessed in
    one aggregation interval of every ten), the other 8 MiB written once and never again."""
    from reclaimlab import damo_record as dr

    mib = 1 << 20
    snaps = []
    for i in range(40):
        burst = i % 10 == 9
        snaps.append(dr.Snapshot(i * 100_000_000, (i + 1) * 100_000_000, [
            dr.Region(0, 4 * mib, 0, i), dr.Region(4 * mib, 6 * mib, 18, 0),
            dr.Region(6 * mib, 8 * mib, 10 if burst else 0, 0 if burst else i % 10), dr.Region(8 * mib, 12 * mib, 0, i)]))
    dr.write(tmp_path / "tier.data", [dr.Record(snapshots=snaps)])
    trace = tmp_path / "tier.trace"
    assert cli("trace", "convert", str(tmp_path / "tier.data"), str(trace), "--trace-format", "damo").returncode == 0
    return trace


def test_sweep_end_to_end(tmp_path):
    trace = tiered_trace(tmp_path)
    args = ["tune", "damon-reclaim", "--trace", str(trace), "--memory", "16M", "--swap", "zram:16M",
            "--policy", "classic@6.15", "--param", "min_age=200000,1500000", "--param", "quota_ms=0,10",
            "--param", "quota_sz=1G", "--param", "wmarks=1000/1000/0", "-j", "2"]
    p = cli(*args, "--json", "--plot", str(tmp_path / "f.png"), "--csv", str(tmp_path / "p.csv"))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    pts = d["points"]
    assert [pt["params"]["min_age"] for pt in pts] == ["200000", "200000", "1500000", "1500000"]
    saving = [pt["metrics"]["memory_saving_pct"] for pt in pts]
    slowdown = [pt["metrics"]["slowdown_pct"] for pt in pts]
    # Without a quota, min_age 0.2 s pages out the cold 8 MiB early and the warm 2 MiB
    # between its bursts; min_age 1.5 s only the cold memory, later: less saving, and
    # at most the slowdown (the warm region's refaults are what costs time).
    assert saving[0] > saving[2] > 5.0
    assert slowdown[0] >= slowdown[2]
    assert all(pt["counters"]["bytes_reclaimed_regions"] > 0 for pt in pts)
    assert d["frontier"] == pareto_front(saving, slowdown) and d["knee"] in d["frontier"]
    assert d["pick"] == d["knee"]
    assert d["sysfs"][-2:] == [f"echo Y > {PARAMS_DIR}/enabled", f"echo Y > {PARAMS_DIR}/commit_inputs"]
    chosen = pts[d["pick"]]["params"]
    assert f"echo {chosen['min_age']} > {PARAMS_DIR}/min_age" in d["sysfs"]
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (tmp_path / "p.csv").read_text().splitlines()
    assert len(rows) == 5 and rows[0].startswith("point,min_age,quota_ms,quota_sz,wmarks,")
    # The text report and --pick.
    p = cli(*args, "--pick", "3")
    assert p.returncode == 0, p.stderr
    assert "Pareto frontier" in p.stdout and "# DAMON_RECLAIM point 3 (pick)" in p.stdout
    assert f"echo 1500000 > {PARAMS_DIR}/min_age" in p.stdout
    assert_user_error(cli(*args, "--pick", "4"), "--pick 4", "0..3")
