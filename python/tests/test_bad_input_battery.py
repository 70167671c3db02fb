"""Issue 24's hand-made battery, as far as it is closed: each bad input gets one line
`reclaimlab: error: ...` naming what was wrong, exit 2, no traceback, nothing written."""

from __future__ import annotations

import pytest

from conftest import assert_user_error, cli


@pytest.fixture
def tiny_trace(tmp_path):
    out = tmp_path / "u.trace"
    p = cli("trace", "gen", "uniform", "--pages", "100", "--accesses", "1000", "-o", out)
    assert p.returncode == 0, p.stderr
    return out


@pytest.mark.parametrize("content", [b"garbage, not a database\n", b"SQLite format 3\x00" + b"\x00" * 200])
@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_store_that_is_not_sqlite_is_one_line(tmp_path, content, command):
    store = tmp_path / "store"
    store.mkdir()
    (store / "results.sqlite").write_bytes(content)
    args = (command, store) + (("-o", tmp_path / "r.html") if command == "report" else ())
    assert_user_error(cli(*args), "results.sqlite", "not a readable results store")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("content, needle", [
    (b"variant,value\n\xff\xfe,1\n", "not a measurements CSV"),
    (b"variant,value\na,1\nb,fast\n", "not a number"),
])
@pytest.mark.parametrize("json", [False, True])
def test_compare_of_a_file_that_is_not_measurements_is_one_line(tmp_path, content, needle, json):
    f = tmp_path / "m.csv"
    f.write_bytes(content)
    assert_user_error(cli("compare", f, *(["--json"] if json else [])), "m.csv", needle)


def test_a_swap_size_left_empty_is_an_error():
    assert_user_error(cli("run", "--swap", "zram:", "-q"), "--swap zram:", "no size after ':'")


def test_a_cache_of_no_page_is_an_error(tiny_trace):
    assert_user_error(cli("cachesim", "--trace", tiny_trace, "--algo", "lru", "--size", "0"), "'0'", "N >= 1")


def test_an_empty_trace_has_no_miss_ratio_curve(tmp_path):
    empty = tmp_path / "e.trace"
    assert cli("trace", "gen", "uniform", "--pages", "10", "--accesses", "0", "-o", empty).returncode == 0
    assert_user_error(cli("mrc", "--trace", empty, "--plot", tmp_path / "c.png"), "no requests")
    assert not (tmp_path / "c.png").exists()


def test_config_set_takes_numbers_and_booleans_and_names_the_key_otherwise():
    # issue 24: Config().set("vm.swappiness", 500) raised a raw TypeError
    from reclaimlab import ConfigError, _core

    cfg = _core.Config()
    cfg.set("vm.swappiness", 100)
    cfg.set("damon_reclaim.enabled", True)
    assert (cfg.get("vm.swappiness"), cfg.get("damon_reclaim.enabled")) == ("100", "Y")
    with pytest.raises(ConfigError, match="vm.swappiness.*expected a string or a number, got list") as e:
        cfg.set("vm.swappiness", [1])
    assert e.value.key == "vm.swappiness"
    with pytest.raises(ConfigError, match="vm.swappiness"):
        cfg.set("vm.swappiness", 1.5)


def test_an_output_directory_that_does_not_exist_is_refused_before_the_run(tmp_path):
    for flag in ("--damo-record", "--timeseries"):
        name = "d.json.gz" if flag == "--damo-record" else "t.csv"
        assert_user_error(cli("run", "--policy", "classic@6.15", flag, tmp_path / "nope" / name, "-q"),
                          flag, "directory does not exist")


def test_a_trace_naming_billions_of_pages_is_an_error_not_an_abort(tmp_path):
    # issue 24: a 158-byte valid trace whose header names 4e9 pages grew `run` to 16 GB
    # and aborted; the page arrays now come from a fallible allocation.
    t = tmp_path / "x.trace"
    assert cli("trace", "gen", "uniform", "--pages", "4000000000", "--accesses", "10", "-o", t).returncode == 0
    assert_user_error(cli("run", "--trace", t, "--memory", "8M", "--policy", "classic@6.15"),
                      "4000000000 page ids", "cannot allocate")


@pytest.mark.parametrize("setting, needles", [
    ("transparent_hugepage.defrag=bogus", ("transparent_hugepage.defrag", "always, defer, defer+madvise, madvise or never")),
    ("transparent_hugepage.khugepaged.max_ptes_none=512", ("transparent_hugepage.khugepaged.max_ptes_none", "0..511")),
])
@pytest.mark.parametrize("scenario", [(), ("thpscale",)])
def test_an_impossible_thp_setting_is_one_line(scenario, setting, needles):
    # issue 15: an impossible defrag mode or max_ptes_none, for a trace run and a program
    assert_user_error(cli("run", *scenario, "--set", setting, "-q"), *needles)


# The table: each bad input, how to make it (a function of tmp_path returning the command's
# arguments and extra environment), and what its one line must say.

def _sparse_trace(tmp_path):
    """issue 24's 158-byte trace: 10 requests over a header naming 4e9 pages."""
    t = tmp_path / "x.trace"
    assert cli("trace", "gen", "uniform", "--pages", "4000000000", "--accesses", "10", "-o", t).returncode == 0
    return t


def _timed_trace(tmp_path, tick_ps, gaps):
    from reclaimlab import _core

    t = tmp_path / "t.trace"
    pages = bytes(4 * len(gaps))
    _core.trace_write(str(t), pages, bytes(len(gaps)), gaps=b"".join(g.to_bytes(4, "little") for g in gaps),
                      tick_ps=tick_ps)
    return t


def _tick_near_2_64(tmp_path):
    t = _timed_trace(tmp_path, 1000, [1, 2, 3])
    b = bytearray(t.read_bytes())
    b[32:40] = (2**64 - 5).to_bytes(8, "little")  # the header's tick_ps (FORMAT.md)
    t.write_bytes(bytes(b))
    return t


def _file(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    return f


_MATRIX_1E6 = '[workload]\nscenario = "default"\n[matrix]\n' + "".join(
    f'"vm.knob{i}" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n' for i in range(6))

_REGRESSIONS = __import__("pathlib").Path(__file__).resolve().parents[2] / "fuzz" / "regressions"

BATTERY = [
    ("a damo record with a number past a float (fuzz)",
     lambda tp: (["run", "--trace", _REGRESSIONS / "damo" / "inf-finding-24-101962.damo", "--trace-format", "damo",
                  "-q"], {}),
     ("inf-finding-24-101962.damo: record 0 snapshot 2 region 2 end: expected a number, got '314571e30928'",)),
    ("a damo record with a region past 64 bits (fuzz)",
     lambda tp: (["run", "--trace", _REGRESSIONS / "damo" / "big-finding-24-129671.damo", "--trace-format", "damo",
                  "-q"], {}),
     ("big-finding-24-129671.damo: a region's address or size, or a snapshot's time, is too large",)),
    ("an output that cannot be created names the target, not its temporary file",
     lambda tp: (["mrc", "--trace", _sparse_trace(tp), "--csv", "/proc/c.csv"], {}),
     ("reclaimlab: error: /proc/c.csv: No such file or directory",)),
    ("an experiment of 10^8 repetitions",
     lambda tp: (["experiment", "run", _file(tp, "e.toml", 'repetitions = 100000000\n[workload]\nscenario = "default"\n'),
                  "--out-dir", tp / "store"], {}),
     ("e.toml, line 1: repetitions: 1 matrix point × 100,000,000 repetitions = 100,000,000 runs, "
      "more than the limit of 100,000",)),
    ("an experiment matrix of 10^6 points",
     lambda tp: (["experiment", "run", _file(tp, "e.toml", _MATRIX_1E6), "--out-dir", tp / "store"], {}),
     ("e.toml, line 3: matrix: 1,000,000 matrix points × 1 repetition",)),
    ("unknown policy in a config file",
     lambda tp: (["run", _file(tp, "p.toml", 'seed = 1\npolicy = "bogus"\n'), "-q"], {}),
     ("p.toml, line 2: config key 'policy': unknown policy 'bogus'; known: classic@6.15",)),
    ("policy of the wrong type in a config file",
     lambda tp: (["run", _file(tp, "p.toml", "policy = 5\n"), "-q"], {}),
     ("p.toml, line 1: config key 'policy': unknown policy '5'",)),
    ("unknown scenario in a config file",
     lambda tp: (["run", _file(tp, "s.toml", '# machine\n\nscenario = "nope"\n'), "-q"], {}),
     ("s.toml, line 3: config key 'scenario': unknown scenario 'nope'; known: default",)),
    ("cachesim over --max-memory",
     lambda tp: (["--max-memory", "100", "cachesim", "--trace", _sparse_trace(tp), "--algo", "lru", "--size", "5"], {}),
     ("x.trace: ", "1 cache simulation at once over 10 page ids", "over the memory limit of 100 bytes")),
    ("mrc over RECLAIMLAB_MAX_MEMORY",
     lambda tp: (["mrc", "--trace", _sparse_trace(tp)], {"RECLAIMLAB_MAX_MEMORY": "100"}),
     ("x.trace: ", "miss-ratio curve of 10 requests", "over the memory limit of 100 bytes")),
    ("run over --max-memory",
     lambda tp: (["--max-memory", "10M", "run", "--trace", _sparse_trace(tp), "--memory", "8M", "-q"], {}),
     ("4000000000 page ids", "44.7 GiB", "over the memory limit of 10.0 MiB")),
    ("--max-memory not a size",
     lambda tp: (["--max-memory", "lots", "policies"], {}),
     ("--max-memory: expected a size like 512M", "'lots'")),
    ("RECLAIMLAB_MAX_MEMORY not a size",
     lambda tp: (["policies"], {"RECLAIMLAB_MAX_MEMORY": "1X"}),
     ("RECLAIMLAB_MAX_MEMORY: expected a size", "'1X'")),
    ("tick_ps near 2^64",
     lambda tp: (["run", "--trace", _tick_near_2_64(tp), "--memory", "8M", "-q"], {}),
     ("t.trace: not a valid trace: tick_ps is 18446744073709551611, over the limit of 1000000000000 ps",)),
    ("a trace longer than 2^62 ps",
     lambda tp: (["run", "--trace", _timed_trace(tp, 10**12, [1000, 4_000_000, 1_000_000]), "--memory", "8M", "-q"],
                 {}),
     ("t.trace: trace is corrupt at record 2: the trace's clock passes 4611686018427387904 ps",)),
]


@pytest.mark.parametrize("make, needles", [row[1:] for row in BATTERY], ids=[row[0] for row in BATTERY])
def test_battery(tmp_path, make, needles):
    args, env = make(tmp_path)
    assert_user_error(cli(*args, env_extra=env), *needles)


def test_a_sparse_trace_is_simulated_in_the_memory_of_its_requests(tmp_path):
    # issue 24: cachesim and mrc aborted at once on the 158-byte trace (4e9 × 8 bytes of
    # per-page arrays); its ids are now renumbered in order, so 10 requests take 10 ids.
    t = _sparse_trace(tmp_path)
    p = cli("--max-memory", "64M", "cachesim", "--trace", t, "--algo", "lru,arc,belady", "--size", "5", "--json")
    assert p.returncode == 0, p.stderr
    import json

    out = json.loads(p.stdout)
    assert (out["requests"], out["distinct_pages"]) == (10, 10)
    assert [r["misses"] for r in out["results"]] == [10, 10, 10]
    p = cli("--max-memory", "64M", "mrc", "--trace", t, "--sample-rate", "0.5")
    assert p.returncode == 0, p.stderr


def test_a_killed_writer_leaves_a_documented_temporary_that_the_next_run_removes(tmp_path):
    # issue 24: temp files survived a SIGKILL in the destination directory and their names
    # did not match FORMAT.md (`.<name>.tmp-<pid>-<n>`).
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "big.trace"
    p = subprocess.Popen([sys.executable, "-m", "reclaimlab", "trace", "gen", "uniform", "--pages", "1000",
                          "--accesses", "2000000000", "-o", str(out)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(tmp_path.glob(".big.trace.tmp-*")):
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    left = [f.name for f in tmp_path.iterdir()]
    assert len(left) == 1 and re.fullmatch(rf"\.big\.trace\.tmp-{p.pid}-\d+", left[0]), left
    # A live writer's temporary is never touched: one of this process stays.
    mine = tmp_path / f".big.trace.tmp-{os.getpid()}-99"
    mine.write_bytes(b"in progress")
    assert cli("trace", "gen", "uniform", "--pages", "10", "--accesses", "10", "-o", out).returncode == 0
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(["big.trace", mine.name])
    # The Python writers (here mrc --csv) name and sweep theirs the same way.
    (tmp_path / ".c.csv.tmp-4194305-0.csv").write_bytes(b"half")
    assert cli("mrc", "--trace", out, "--csv", tmp_path / "c.csv").returncode == 0
    assert not (tmp_path / ".c.csv.tmp-4194305-0.csv").exists() and (tmp_path / "c.csv").exists()
