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


def test_a_swap_size_left_empty_is_an_error():
    assert_user_error(cli("run", "--swap", "zram:", "-q"), "--swap zram:", "no size after ':'")


def test_a_cache_of_no_page_is_an_error(tiny_trace):
    assert_user_error(cli("cachesim", "--trace", tiny_trace, "--algo", "lru", "--size", "0"), "'0'", "N >= 1")


def test_an_empty_trace_has_no_miss_ratio_curve(tmp_path):
    empty = tmp_path / "e.trace"
    assert cli("trace", "gen", "uniform", "--pages", "10", "--accesses", "0", "-o", empty).returncode == 0
    assert_user_error(cli("mrc", "--trace", empty, "-o", tmp_path / "c.png"), "no requests")
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
