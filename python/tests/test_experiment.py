"""Experiments: spec expansion, the local pool, the results store (resume, crash safety
under SIGKILL), worker death, and the Dask path giving the local pool's numbers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reclaimlab.experiment import load, resolve, run_experiment
from reclaimlab.experiment import runner
from reclaimlab.results import Store

from conftest import assert_user_error, cli

TINY = """\
name = "tiny"
repetitions = {reps}
seed = 1
metric = "runtime_s"
baseline = "classic@6.15"

[workload.program]
[[workload.program.region]]
name = "heap"
pages = 6000
kind = "anon"
[[workload.program.region]]
name = "data"
pages = 12000
kind = "file-read"
[[workload.program.phase]]
name = "main"
accesses = {accesses}
[[workload.program.phase.stream]]
region = "heap"
pattern = "zipf:0.9"
weight = 1
[[workload.program.phase.stream]]
region = "data"
pattern = "uniform"
weight = 1

[settings]
"machine.memory" = "48M"

[matrix]
policy = ["classic@6.15", "mglru@6.15"]
[matrix.swap]
key = "swap.device"
values = ["none", "zram"]
labels = ["swapoff", "swapon"]
"""


def tiny(tmp_path: Path, reps: int = 2, accesses: int = 100000, name: str = "tiny.toml") -> Path:
    p = tmp_path / name
    p.write_text(TINY.format(reps=reps, accesses=accesses))
    return p


def env():
    e = dict(os.environ)
    e.pop("PYTHONPATH", None)
    return e


def test_spec_expands_matrix_and_repetitions(tmp_path):
    exp = load(tiny(tmp_path, reps=3))
    assert [a.name for a in exp.axes] == ["policy", "swap"]
    jobs = exp.jobs()
    assert len(jobs) == 2 * 2 * 3 and len({j["run_id"] for j in jobs}) == 12
    # Repetitions differ by seed only; the variant is the policy, the swap label a column.
    first = [j for j in jobs if j["variant"] == "classic@6.15" and j["params"] == {"swap": "swapoff"}]
    assert [j["seed"] for j in first] == [1, 2, 3]
    assert first[0]["kwargs"]["set"]["swap.device"] == "none"
    # The key depends on configuration and seed, not on the order of the matrix.
    again = load(tiny(tmp_path, reps=3, name="again.toml")).jobs()
    assert [j["run_id"] for j in again] == [j["run_id"] for j in jobs]


def test_builtin_hadoop_terasort_definition():
    exp = resolve("hadoop-terasort")
    assert exp.workload == {"scenario": "hadoop-terasort"} and exp.repetitions == 10
    assert len(exp.configurations()) == 12
    import reclaimlab

    registered = set(reclaimlab.policies()["name"])
    assert set(exp.axes[0].values) <= registered  # policies that exist in this build
    assert [a.name for a in exp.axes] == ["policy", "swap", "concurrency"]
    # The seed's run_terasort.sh: HADOOP_HEAPSIZE_MAX 20G with swap off, 22G with swap on.
    by_swap = {j["params"]["swap"]: j for j in exp.jobs() if j["repetition"] == 0}
    assert by_swap["swapoff"]["kwargs"]["set"]["swap.device"] == "none"
    assert by_swap["swapoff"]["workload_params"]["heap_mb"] == 20480
    assert by_swap["swapon"]["kwargs"]["set"]["swap.device"] == "ssd"
    assert by_swap["swapon"]["workload_params"]["heap_mb"] == 22528


def test_an_axis_may_set_several_keys_together(tmp_path):
    f = tmp_path / "two.toml"
    f.write_text(GOOD_WORKLOAD + '[matrix.swap]\nkey = ["swap.device", "vm.swappiness"]\n'
                 'values = [["none", 1], ["zram", 60]]\nlabels = ["off", "on"]\n')
    exp = load(f)
    sets = {j["params"]["swap"]: j["kwargs"]["set"] for j in exp.jobs()}
    assert sets == {"off": {"swap.device": "none", "vm.swappiness": 1}, "on": {"swap.device": "zram", "vm.swappiness": 60}}
    assert len({j["run_id"] for j in exp.jobs()}) == 2


def test_run_store_resume_and_compare(tmp_path):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    p = cli("experiment", "run", exp, "--out-dir", out, "--jobs", "2")
    assert p.returncode == 0, p.stderr
    assert "8 runs (4 configurations x 2 repetitions): 8 ran, 0 already stored" in p.stdout
    p2 = cli("experiment", "run", exp, "--out-dir", out, "--jobs", "2")
    assert "0 ran, 8 already stored" in p2.stdout
    with Store(out, create=False) as st:
        runs = st.runs()
        assert runs.height == 8 and set(runs["swap"]) == {"swapoff", "swapon"}
        m = st.metrics()
        assert m["runtime_s"].min() > 0
        vm = st.vmstat()
        assert "pgscan_kswapd" in vm.columns
        ts = st.timeseries(runs["run_id"][0])
        assert ts.height > 10 and "nr_free_pages" in ts.columns
        meas = st.measurements("runtime_s")
        assert meas.columns == ["metric", "variant", "swap", "repetition", "value"] and meas.height == 8
    c = cli("compare", out)
    assert c.returncode == 0, c.stderr
    assert c.stdout.count("Welch Two Sample t-test") == 2 and '[1] "swapon: ' in c.stdout
    mm = cli("compare", out, "--style", "mmtests", "--mmtests-rule", "2018")
    assert mm.returncode == 0 and "Amean     runtime_s-swapoff" in mm.stdout and "Kswapd efficiency" in mm.stdout


def test_bad_experiment_is_a_user_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[workload]\nscenario = "default"\n[matrix]\npolicy = ["nosuch@1.0"]\n')
    assert_user_error(cli("experiment", "run", bad, "--out-dir", tmp_path / "o"), "nosuch@1.0")
    assert_user_error(cli("experiment", "run", "no-such-experiment"), "no-such-experiment")


GOOD_WORKLOAD = '[workload]\nscenario = "default"\n'


@pytest.mark.parametrize("text, needles", [
    ('name = "x"\nrepetitions = 2.7\n' + GOOD_WORKLOAD, ["line 2", "repetitions", "an integer", "2.7"]),
    ('repetitions = true\n' + GOOD_WORKLOAD, ["line 1", "repetitions", "an integer", "True"]),
    ('repetitions = "ten"\n' + GOOD_WORKLOAD, ["line 1", "repetitions", "'ten'"]),
    ('seed = "abc"\n' + GOOD_WORKLOAD, ["line 1", "seed", "an integer"]),
    ('timeseries = "false"\n' + GOOD_WORKLOAD, ["line 1", "timeseries", "a boolean"]),
    ('name = "x"\n', ["no [workload] table"]),
    ('[workload]\nscenario = "default"\ntrace = "t.trace"\n', ["line 1", "exactly one of", "scenario, trace"]),
    ('[workload]\nscenario = "default"\nscale = "big"\n', ["line 3", "workload.scale", "a number"]),
    (GOOD_WORKLOAD + '[matrix]\npolicy = []\n', ["line 4", "matrix.policy", "needs values"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nkey = "swap.device"\nvalues = ["none", "zram"]\nlabels = ["off"]\n',
     ["line 3", "matrix.swap", "2 values, 1 labels"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nkey = 3\nvalues = ["none"]\n', ["line 4", "matrix.swap.key", "a string"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nvalue = ["none"]\n', ["matrix.swap", "unknown key(s) value"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nkey = ["swap.device", "vm.swappiness"]\nvalues = [["none", 1], ["zram"]]\n'
     'labels = ["off", "on"]\n', ["matrix.swap", "a list of 2 scalars"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nkey = ["swap.device", "vm.swappiness"]\nvalues = [["none", 1]]\n',
     ["matrix.swap", "needs labels"]),
    (GOOD_WORKLOAD + '[matrix.swap]\nkey = ["swap.device", 2]\nvalues = [["none", 1]]\nlabels = ["x"]\n',
     ["matrix.swap.key", "a list of strings"]),
])
def test_experiment_specs_mean_what_they_say(tmp_path, text, needles):
    # issue 24: types are checked (no float truncated to an int, no string as a bool), a
    # spec names its workload, and each error names the file, line and key.
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    err = assert_user_error(cli("experiment", "run", bad, "--out-dir", tmp_path / "o"), str(bad), *needles)
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()  # nothing half-made


def test_a_single_axis_value_is_a_one_value_axis(tmp_path):
    # "vm.swappiness" = "60" once ran swappiness 6 and 0 (the string's characters)
    f = tmp_path / "one.toml"
    f.write_text(GOOD_WORKLOAD + '[matrix]\n"vm.swappiness" = 60\npolicy = "classic@6.15"\n')
    exp = load(f)
    assert [(a.key, a.values, a.labels) for a in exp.axes] == [("vm.swappiness", [60], ["60"]),
                                                               ("policy", ["classic@6.15"], ["classic@6.15"])]
    assert len(exp.configurations()) == 1


def stored_runs(db: Path) -> int:
    """Runs committed to the store ``db`` so far (0 while it does not exist or is being made)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _children(pid: int) -> set[int]:
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_killing_the_coordinator_leaves_no_worker(tmp_path):
    # issue 24: SIGKILL to `experiment run` itself (not its process group): the pool's
    # workers must not keep running, holding the store and the caller's stdout.
    exp = tiny(tmp_path, reps=4, accesses=3_000_000)
    cmd = [sys.executable, "-m", "reclaimlab", "experiment", "run", str(exp), "--out-dir", str(tmp_path / "out"),
           "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        workers = _children(proc.pid)
        assert proc.poll() is None, "the experiment finished before its workers were seen"
        time.sleep(0.05)
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]


def test_sigkill_midway_then_rerun_keeps_every_finished_run(tmp_path):
    exp = tiny(tmp_path, reps=3, accesses=1_500_000)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "reclaimlab", "experiment", "run", str(exp), "--out-dir", str(out), "--jobs", "1"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    db = out / "results.sqlite"
    deadline = time.monotonic() + 120
    n = 0
    while time.monotonic() < deadline:
        n = stored_runs(db)
        if n >= 3:
            break
        assert proc.poll() is None, "the experiment finished before it could be killed; make the runs longer"
        time.sleep(0.05)
    assert n >= 3
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(out, create=False) as st:
        before = {r["run_id"]: (r["started"], r["stored"]) for r in st.runs().to_dicts()}
        # Nothing half-written: every stored run has its metrics, counters and time series.
        for table in ("metrics", "vmstat", "timeseries"):
            ids = {r[0] for r in st.db.execute(f"SELECT DISTINCT run_id FROM {table}")}
            assert ids == set(before), table
    assert 3 <= len(before) < 12
    t_rerun = time.time()
    p = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"{12 - len(before)} ran, {len(before)} already stored" in p.stdout
    with Store(out, create=False) as st:
        runs = st.runs().to_dicts()
        assert len(runs) == 12 and len({r["run_id"] for r in runs}) == 12
        assert st.db.execute("SELECT count(*) FROM runs").fetchone()[0] == 12
        after = {r["run_id"]: (r["started"], r["stored"]) for r in runs}
        for rid, stamp in before.items():
            assert after[rid] == stamp  # not recomputed
        assert all(after[rid][0] >= t_rerun for rid in after if rid not in before)  # the rest ran now
        assert {len(st.metrics().columns)} and st.metrics()["runtime_s"].null_count() == 0


_MARK = None


def die_once(job):
    """A worker function whose first attempt at one run kills its worker process."""
    mark = Path(job["_mark"])
    if job["repetition"] == 0 and job["variant"] == "mglru@6.15" and not mark.exists():
        mark.write_text("died")
        os._exit(9)
    return runner.execute(job)


def test_worker_death_is_retried(tmp_path):
    exp = load(tiny(tmp_path))
    jobs = exp.jobs()
    for j in jobs:
        j["_mark"] = str(tmp_path / f"mark-{j['params']['swap']}")
    got = []
    runner._run_pool(jobs, 2, got.append, fn=die_once)
    assert (tmp_path / "mark-swapoff").exists() and (tmp_path / "mark-swapon").exists()
    assert sorted(r["run_id"] for r in got) == sorted(j["run_id"] for j in jobs)


def test_dask_localcluster_gives_the_local_pools_numbers(tmp_path):
    pytest.importorskip("distributed")
    exp = load(tiny(tmp_path))
    run_experiment(exp, tmp_path / "local", jobs=2, progress=False)
    res = run_experiment(exp, tmp_path / "dask", scheduler="local:2", progress=False)
    assert res == {"total": 8, "skipped": 0, "ran": 8}
    with Store(tmp_path / "local", create=False) as a, Store(tmp_path / "dask", create=False) as b:
        ma = a.metrics().drop("started", "finished", "stored", "worker").sort("run_id")
        mb = b.metrics().drop("started", "finished", "stored", "worker").sort("run_id")
        assert ma.equals(mb)
        va = a.vmstat().drop("started", "finished", "stored", "worker").sort("run_id")
        vb = b.vmstat().drop("started", "finished", "stored", "worker").sort("run_id")
        assert va.equals(vb)


def test_scenario_workload_parameters_as_an_axis(tmp_path):
    """`workload.<param>` axes reach the scenario (hadoop-terasort's tasks_per_cpu), as the
    built-in hadoop-terasort experiment uses them; here at a tiny scale."""
    import reclaimlab

    if "hadoop-terasort" not in reclaimlab.scenarios()["name"].to_list():
        pytest.skip("this build has no hadoop-terasort scenario")
    exp = tmp_path / "ts.toml"
    exp.write_text('name = "ts"\nrepetitions = 2\n[workload]\nscenario = "hadoop-terasort"\nscale = 0.02\n'
                   '[matrix]\npolicy = ["classic@6.15"]\n[matrix.concurrency]\nkey = "workload.tasks_per_cpu"\n'
                   'values = [0.5, 2.0]\nlabels = ["low", "high"]\n')
    out = tmp_path / "out"
    assert run_experiment(load(exp), out, jobs=2, progress=False)["ran"] == 4
    with Store(out, create=False) as st:
        runs = st.runs()
        assert sorted(set(runs["concurrency"])) == ["high", "low"]
        assert any("tasks_per_cpu=2.0" in w for w in runs["workload"]) and any("tasks_per_cpu=0.5" in w for w in runs["workload"])
        m = st.metrics()
        low = m.filter(m["concurrency"] == "low")["runtime_s"].to_list()
        high = m.filter(m["concurrency"] == "high")["runtime_s"].to_list()
        assert low != high
    bad = tmp_path / "bad.toml"
    bad.write_text(exp.read_text().replace("workload.tasks_per_cpu", "workload.nosuch"))
    assert_user_error(cli("experiment", "run", bad, "--out-dir", tmp_path / "o2"), "nosuch", "tasks_per_cpu")


def test_terasort_slots_follow_the_machines_cpus():
    """hadoop-terasort sizes its jobs' task slots by CPUs: a run's `machine.cpus` is the
    workload's `cpus` unless that is given (one source for both)."""
    import reclaimlab

    if "hadoop-terasort" not in reclaimlab.scenarios()["name"].to_list():
        pytest.skip("this build has no hadoop-terasort scenario")

    def head(prepared_or_source, n=3000):
        src = getattr(prepared_or_source, "source", prepared_or_source)
        return src.take(n)

    kw = {"scenario": "hadoop-terasort", "scale": 0.02, "seed": 3}
    on8 = head(reclaimlab.prepare(set={"machine.cpus": 8}, **kw))
    assert on8 == head(reclaimlab.scenario_source("hadoop-terasort", 3, 0.02, {"cpus": 8}))
    assert on8 != head(reclaimlab.prepare(**kw))  # the scenario's 48
    # Given explicitly, the parameter wins over the machine.
    assert head(reclaimlab.prepare(set={"machine.cpus": 8, "workload.cpus": 48}, **kw)) == head(reclaimlab.prepare(**kw))


def test_dask_worker_death_is_retried_elsewhere(tmp_path):
    """A Dask worker process that dies mid-run (os._exit) loses nothing: the scheduler
    reschedules its run on a worker (retries), and every run is delivered exactly once."""
    pytest.importorskip("distributed")
    exp = load(tiny(tmp_path))
    jobs = exp.jobs()
    for j in jobs:
        j["_mark"] = str(tmp_path / f"mark-{j['params']['swap']}")
    got = []
    runner._run_dask(jobs, "local:2", got.append, fn=die_once)
    assert (tmp_path / "mark-swapoff").exists() and (tmp_path / "mark-swapon").exists(), "a worker died twice"
    assert sorted(r["run_id"] for r in got) == sorted(j["run_id"] for j in jobs)


def test_run_set_fixes_a_knob_for_every_run_and_keys_the_store(tmp_path):
    exp = tiny(tmp_path, reps=1, accesses=20000)
    out = tmp_path / "o"
    p = cli("experiment", "run", exp, "--out-dir", out, "--jobs", "1", "--set", "vm.swappiness=7")
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(out / "results.sqlite") as c:
        swappiness = {json.loads(cfg)["vm.swappiness"] for (cfg,) in c.execute("select config from runs")}
    assert swappiness == {"7"}
    # The same directory without it is another experiment: refused, nothing mixed.
    assert_user_error(cli("experiment", "run", exp, "--out-dir", out, "--jobs", "1"), str(out), "differs")
    # A key an axis sets, or an unknown one, is one line.
    assert_user_error(cli("experiment", "run", exp, "--out-dir", tmp_path / "o2", "--set", "swap.device=ssd"),
                      "--set swap.device", "axis 'swap'")
    assert_user_error(cli("experiment", "run", exp, "--out-dir", tmp_path / "o3", "--set", "vm.no_such=1"), "vm.no_such")
