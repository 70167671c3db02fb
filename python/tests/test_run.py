"""End-to-end runs through the engine. These need the engine: while it is missing they
FAIL (they are not skipped), so a broken engine cannot pass CI unnoticed."""

from __future__ import annotations

import json

import polars as pl
import pytest

import reclaimlab

from conftest import PINNED, assert_user_error, cli

pytestmark = pytest.mark.engine

# 6000 anon pages looping through a 16M (4096-page) machine: reclaim, swap-out, refaults.
# (On 8M the zram pool alone — 6000 pages at 3:1 — would need all of RAM: a real OOM.)
LOOP = ("seq", 6000, 60000)
SMALL = ["--memory", "16M", "--swap", "zram:64M", "--quiet"]


def test_default_run_prints_a_summary():
    # With --policy, one run and the detailed report (without, a comparison: test_compare.py).
    p = cli("run", "--policy", "classic@6.15")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("policy") and "classic@6.15" in out.splitlines()[0]
    assert "machine" in out and "vmstat" in out and "metrics" in out
    assert any(line.split()[:1] == ["pgfault"] for line in out.splitlines())
    assert p.stderr == ""  # no progress bar when stderr is not a terminal


def test_run_json_has_three_keys_and_integer_counters(gen_trace):
    trace = gen_trace(*LOOP)
    p = cli("run", "--trace", trace, *SMALL, "--json")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.strip().splitlines()) == 1
    d = json.loads(p.stdout)
    assert set(d) == {"policy", "vmstat", "metrics", "provenance"}
    assert d["policy"] == "classic@6.15"
    # issue 21: where the numbers came from (version, commit, date, configuration, noise).
    prov = d["provenance"]
    assert set(prov) == {"reclaimlab", "git_commit", "date", "config", "noise"} and prov["noise"].startswith("none")
    assert prov["config"]["runs"] == 1 and prov["config"]["common"]["policy"] == "classic@6.15"
    for name in ("pgfault", "pgmajfault", "pswpin", "pswpout", "pgscan_kswapd", "pgscan_direct",
                 "pgsteal_kswapd", "pgsteal_direct", "workingset_refault_anon", "workingset_refault_file"):
        assert type(d["vmstat"][name]) is int, name
    assert all(type(v) is int and v >= 0 for v in d["vmstat"].values())
    assert all(isinstance(v, (int, float)) for v in d["metrics"].values())
    # A loop 3x larger than memory with zram swap must swap anon pages out and back in.
    assert d["vmstat"]["pswpout"] > 0
    assert d["vmstat"]["pswpin"] > 0
    assert d["vmstat"]["pgfault"] >= 6000


def test_same_seed_gives_identical_json_bytes(gen_trace):
    trace = gen_trace(*LOOP)
    a = cli("run", "--trace", trace, *SMALL, "--seed", "4", "--json", env_extra=PINNED)
    b = cli("run", "--trace", trace, *SMALL, "--seed", "4", "--json", env_extra=PINNED)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout


def test_default_scenario_same_seed_identical():
    a = cli("run", "--seed", "9", "--json", "--quiet", env_extra=PINNED)
    b = cli("run", "--seed", "9", "--json", "--quiet", env_extra=PINNED)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout


def test_python_run_returns_dataframe_timeseries(gen_trace):
    trace = gen_trace(*LOOP)
    r = reclaimlab.run(trace=trace, memory="16M", swap="zram:64M", swappiness=100)
    assert isinstance(r.timeseries, pl.DataFrame)
    assert r.timeseries.height > 0 and r.timeseries.width > 0
    assert r.policy == "classic@6.15"
    assert r.vmstat["pswpout"] > 0
    assert r.config["vm.swappiness"] == "100"
    assert set(r.to_dict()) == {"policy", "vmstat", "metrics"}


def test_python_run_default_scenario():
    r = reclaimlab.run()
    assert r.vmstat["pgfault"] > 0
    assert r.timeseries.height > 0


def test_timeseries_csv_and_parquet(gen_trace, tmp_path):
    trace = gen_trace(*LOOP)
    csv = tmp_path / "ts.csv"
    pq = tmp_path / "ts.parquet"
    assert cli("run", "--trace", trace, *SMALL, "--timeseries", csv).returncode == 0
    assert cli("run", "--trace", trace, *SMALL, "--timeseries", pq).returncode == 0
    a, b = pl.read_csv(csv), pl.read_parquet(pq)
    assert a.height > 0 and a.columns == b.columns
    assert sorted(x.name for x in tmp_path.iterdir() if x.suffix != ".trace") == ["ts.csv", "ts.parquet"]


def test_timeseries_bad_target_fails_before_running(tmp_path):
    assert_user_error(cli("run", "--timeseries", tmp_path / "ts.txt"), "ts.txt", ".csv or .parquet")
    assert_user_error(cli("run", "--timeseries", tmp_path / "no" / "ts.csv"), "directory does not exist")


def test_truncated_trace_mid_run_leaves_no_timeseries(gen_trace, tmp_path):
    trace = gen_trace(*LOOP)
    data = trace.read_bytes()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[: int(len(data) * 0.7)])
    ts = tmp_path / "ts.csv"
    assert_user_error(cli("run", "--trace", cut, *SMALL, "--timeseries", ts), "cut.trace")
    assert not ts.exists()


def test_workload_params_reach_a_scenario_from_the_cli_and_the_api():
    # hadoop-terasort at 1/32 (a 1 GiB machine): ½ against 2 tasks per CPU is another
    # workload (4× the live sort buffers), the same parameters the same run.
    args = ("run", "hadoop-terasort", "--scale", "0.03125", "--policy", "classic@6.15", "--quiet")
    lo = cli(*args, "--workload-param", "tasks_per_cpu=0.5", "--json")
    hi = cli(*args, "--workload-param", "tasks_per_cpu=2", "--json")
    assert lo.returncode == 0 and hi.returncode == 0, lo.stderr + hi.stderr
    a, b = json.loads(lo.stdout), json.loads(hi.stdout)
    assert a["metrics"]["runtime_s"] != b["metrics"]["runtime_s"]
    text = cli(*args, "--workload-param", "tasks_per_cpu=2")
    assert "tasks_per_cpu=2" in next(line for line in text.stdout.splitlines() if line.startswith("workload"))
    # The API takes them as params= or as workload.NAME in set=, with the same result.
    r1 = reclaimlab.run(scenario="hadoop-terasort", scale=0.03125, policy="classic@6.15", params={"tasks_per_cpu": 2})
    r2 = reclaimlab.run(scenario="hadoop-terasort", scale=0.03125, policy="classic@6.15", set={"workload.tasks_per_cpu": "2"})
    assert r1.metrics["runtime_s"] == r2.metrics["runtime_s"] == b["metrics"]["runtime_s"]
    assert "tasks_per_cpu=2" in r1.workload


def test_bad_workload_params_are_one_line_errors(gen_trace):
    assert_user_error(cli("run", "hadoop-terasort", "--policy", "classic@6.15", "--workload-param", "tasks=2"),
                      "unknown workload parameter 'tasks' (known: tasks_per_cpu")
    assert_user_error(cli("run", "hadoop-terasort", "--policy", "classic@6.15", "--workload-param", "tasks_per_cpu"),
                      "KEY=VALUE")
    assert_user_error(cli("run", "--trace", gen_trace(*LOOP), "--workload-param", "tasks_per_cpu=2"),
                      "--workload-param needs a built-in scenario")
    assert_user_error(cli("run", "hadoop-terasort", "--policy", "classic@6.15", "--workload-param", "tasks_per_cpu=-1"),
                      "tasks_per_cpu")
