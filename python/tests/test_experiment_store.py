"""Store hygiene of `experiment run` and `report` (issue 21 item 6), and the noise model
the runs carry (item 1): a store never mixes two experiments; SIGTERM or SIGHUP stops the
workers and keeps every finished run; `report` names what it lacks before it renders."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reclaimlab.experiment import load, run_experiment
from reclaimlab.experiment.noise import NOISE_DEFAULT, NOISE_NONE
from reclaimlab.results import Store

from conftest import assert_user_error, cli
from test_experiment import _alive, _children, env, stored_runs, tiny


def test_a_store_of_another_experiment_is_refused(tmp_path):
    out = tmp_path / "out"
    run_experiment(load(tiny(tmp_path)), out, jobs=1, progress=False)
    other = tmp_path / "other.toml"
    other.write_text(tiny(tmp_path).read_text().replace('"48M"', '"64M"'))
    err = assert_user_error(cli("experiment", "run", other, "--out-dir", out, "--jobs", "1"), str(out), "settings",
                            "another --out")
    assert "experiment 'tiny'" in err
    # The pure model is another experiment too; more repetitions extend the same one.
    assert_user_error(cli("experiment", "run", tiny(tmp_path), "--out-dir", out, "--noise", "none"), "noise")
    p = cli("experiment", "run", tiny(tmp_path, reps=3, name="more.toml"), "--out-dir", out, "--jobs", "1")
    assert p.returncode == 0 and "4 ran, 8 already stored" in p.stdout, p.stderr


def test_noise_model_per_run_is_seeded_and_printed(tmp_path):
    exp = load(tiny(tmp_path, reps=3))
    jobs = exp.jobs()
    cfg = {"cost.access_ns": "100", "cost.file_read_ns": "80000", "machine.memory": "48M", "machine.kernel_used": "0"}
    a = NOISE_DEFAULT.overrides(cfg, jobs[0]["run_id"])
    assert a == NOISE_DEFAULT.overrides(cfg, jobs[0]["run_id"])  # same run, same machine
    assert a != NOISE_DEFAULT.overrides(cfg, jobs[1]["run_id"])  # another reboot, another machine
    assert set(a) == {"cost.access_ns", "cost.file_read_ns", "machine.kernel_used"}
    assert NOISE_NONE.overrides(cfg, jobs[0]["run_id"]) == {}
    # The device factor is lognormal with the model's SD: over many runs its log's SD is it.
    import numpy as np

    logs = [np.log(NOISE_DEFAULT.draw(f"{i:032x}")["device_latency"]) for i in range(2000)]
    assert abs(np.std(logs) - NOISE_DEFAULT.device_latency_cv) < 0.003
    # The noise model is part of every run's key: runs with and without it never mix.
    exp.noise = NOISE_NONE
    assert all(j["run_id"] != k["run_id"] for j, k in zip(exp.jobs(), jobs))


def test_compare_says_which_noise(tmp_path):
    out = tmp_path / "out"
    run_experiment(load(tiny(tmp_path)), out, jobs=1, progress=False)
    with Store(out, create=False) as st:
        cfgs = [json.loads(c) for (c,) in st.db.execute("SELECT config FROM runs")]
    assert len({c["cost.file_read_ns"] for c in cfgs}) > 1  # every run its own device
    for style in ("welch", "mmtests"):
        p = cli("compare", out, "--style", style)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith("noise: default (per run: CPU speed SD 1%")
    pure = tmp_path / "pure"
    assert cli("experiment", "run", tiny(tmp_path), "--out-dir", pure, "--noise", "none", "--jobs", "1").returncode == 0
    assert cli("compare", pure).stdout.startswith("noise: none (repetitions differ only by the workload's seed")
    # The store's --json: the schema, the noise model, the effective configuration (noise
    # knobs vary by run), and the vmstat rows the mmtests style prints.
    jsonschema = pytest.importorskip("jsonschema")
    from reclaimlab.stats.frame import SCHEMA_PATH

    j = cli("compare", out, "--json")
    assert j.returncode == 0, j.stderr
    d = json.loads(j.stdout)
    jsonschema.validate(d, json.loads(SCHEMA_PATH.read_text()))
    assert d["source"]["kind"] == "store" and d["noise"]["model"] == NOISE_DEFAULT.spec()
    assert d["effective_config"]["runs"] == 8 and "cost.file_read_ns" in d["effective_config"]["varying"]
    assert d["effective_config"]["common"]["machine.memory"] == "48M"
    assert d["experiment"]["identity"]["axes"][1]["key"] == "swap.device"
    stalls = {(r["group"]["swap"], r["column"]) for r in d["mmtests"]["vmstat"] if r["row"] == "Kswapd efficiency"}
    assert stalls == {(s, v) for s in ("swapoff", "swapon") for v in ("classic@6.15", "mglru@6.15")}
    # The noise reaches the metric through the engine: the same workload (seed) on each
    # run's own machine takes a different time, by about the model's few percent.
    def runtimes(d):
        with Store(d, create=False) as st:
            m = st.measurements("runtime_s")
        return {(r["variant"], r["swap"], r["repetition"]): r["value"] for r in m.to_dicts()}

    noisy, plain = runtimes(out), runtimes(pure)
    assert noisy.keys() == plain.keys()
    dev = sorted(abs(noisy[k] / plain[k] - 1) for k in noisy)
    assert all(d > 0 for d in dev) and 1e-3 < dev[len(dev) // 2] < 0.2, dev


def test_bad_noise_table_is_a_user_error(tmp_path):
    f = tmp_path / "n.toml"
    f.write_text(tiny(tmp_path).read_text() + '\n[noise]\ndevice_latency_cv = 2\n')
    assert_user_error(cli("experiment", "run", f, "--out-dir", tmp_path / "o"), str(f), "noise.device_latency_cv",
                      "[0, 1)")
    f.write_text(tiny(tmp_path).read_text() + '\n[noise]\ncpu = 0.1\n')
    assert_user_error(cli("experiment", "run", f, "--out-dir", tmp_path / "o"), "unknown [noise] key(s) cpu")
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_stop_signal_stops_workers_and_keeps_finished_runs(tmp_path, sig):
    exp = tiny(tmp_path, reps=6, accesses=1_500_000)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "reclaimlab", "experiment", "run", str(exp), "--out-dir", str(out), "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = out / "results.sqlite"
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline:
        workers |= _children(proc.pid)
        if stored_runs(db) >= 1 and len(workers) >= 2:
            break
        assert proc.poll() is None, "the experiment finished before it could be stopped; make the runs longer"
        time.sleep(0.05)
    proc.send_signal(sig)  # to the coordinator only, as `kill PID` or a closed terminal does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {signal.Signals(sig).name}" in err and "Traceback" not in err
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]
    with Store(out, create=False) as st:
        ids = {r["run_id"] for r in st.runs().to_dicts()}
        for table in ("metrics", "vmstat", "timeseries"):
            assert {r[0] for r in st.db.execute(f"SELECT DISTINCT run_id FROM {table}")} == ids, table
    assert 1 <= len(ids) < 24


def test_report_names_what_it_lacks(tmp_path):
    out = tmp_path / "out"
    run_experiment(load(tiny(tmp_path, reps=1)), out, jobs=1, progress=False)
    assert_user_error(cli("report", out, "-o", tmp_path / "nodir" / "r.html"), str(tmp_path / "nodir"),
                      "no such directory")
    assert_user_error(cli("report", tmp_path / "empty", "-o", tmp_path / "r.html"), "no results store")
    block = tmp_path / "block" / "matplotlib"
    block.mkdir(parents=True)
    (block / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    assert_user_error(cli("report", out, "-o", tmp_path / "r.html", env_extra={"PYTHONPATH": str(block.parent)}),
                      "pip install 'reclaimlab[plot]'")
    assert not list(tmp_path.glob("*.html")) and not list(tmp_path.glob(".r.html*"))
