"""reclaimlab.plot and `reclaimlab run --plot`."""

from __future__ import annotations

import sys
import time

import polars as pl
import pytest

import reclaimlab
from reclaimlab import plot
from reclaimlab.exceptions import ReclaimlabError

from conftest import assert_user_error, cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

COLUMNS = [
    "time_s", "accesses", "nr_free_pages", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file",
    "nr_active_file", "zram_pool_pages", "mem_used_bytes", "pgscan_kswapd", "pgscan_direct",
    "pgsteal_kswapd", "pgsteal_direct", "workingset_refault_anon", "workingset_refault_file", "pswpin",
    "pswpout", "pgmajfault", "memstall_s", "kswapd_cpu_s",
]


def fake_series(n: int = 50) -> dict[str, list[float]]:
    """A plausible 16 MiB (4096-page) machine filling up, then reclaiming and swapping."""
    ts: dict[str, list[float]] = {c: [] for c in COLUMNS}
    cum = dict.fromkeys(COLUMNS, 0.0)
    for i in range(n):
        used = min(4000, 200 * i)
        anon, file_ = used // 3, used - used // 3
        zram = 10 * max(0, i - 20)
        pages = {
            "nr_active_anon": anon // 2, "nr_inactive_anon": anon - anon // 2,
            "nr_active_file": file_ // 2, "nr_inactive_file": file_ - file_ // 2, "zram_pool_pages": zram,
        }
        pages["nr_free_pages"] = 4096 - sum(pages.values())
        busy = i > 20
        for c, step in (("pgscan_kswapd", 300), ("pgsteal_kswapd", 200), ("pgscan_direct", 50),
                        ("pgsteal_direct", 40), ("workingset_refault_file", 120),
                        ("workingset_refault_anon", 30), ("pswpin", 30), ("pswpout", 35),
                        ("pgmajfault", 150), ("memstall_s", 0.04), ("kswapd_cpu_s", 0.01)):
            cum[c] += step if busy else 0
        row = {**cum, **pages, "time_s": 0.1 * i, "accesses": 1000.0 * i, "mem_used_bytes": 4096.0 * used}
        for c in COLUMNS:
            ts[c].append(float(row[c]))
    return ts


def fake_result() -> reclaimlab.Result:
    raw = {"policy": "classic@6.15", "vmstat": {}, "metrics": {}, "timeseries": fake_series()}
    cfg = {"policy": "classic@6.15", "machine.memory": "16M", "swap.device": "zram", "swap.size": "64M",
           "vm.swappiness": "60", "seed": "1"}
    return reclaimlab.Result(raw, cfg, "trace fake.trace (native)")


def assert_png(path, min_bytes: int = 10_000) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, data[:16]
    assert len(data) > min_bytes, len(data)


def only_file(directory):
    """The directory holds exactly the output: no temporary file was left behind."""
    return sorted(p.name for p in directory.iterdir())


# ---- rates -----------------------------------------------------------------------------

def test_counter_rates_from_cumulative_counters():
    df = pl.DataFrame({"time_s": [0.0, 1.0, 2.0], "pswpin": [0, 10, 30], "memstall_s": [0.0, 0.5, 0.75]})
    r = plot.counter_rates(df, ["pswpin", "memstall_s"])
    assert r.columns == ["time_s", "pswpin", "memstall_s"]
    assert r["time_s"].to_list() == [1.0, 2.0]  # each rate is stamped with its interval's end
    assert r["pswpin"].to_list() == [10.0, 20.0]
    assert r["memstall_s"].to_list() == [0.5, 0.25]  # x100 = a 50 % then 25 % stall share


def test_counter_rates_uneven_intervals_and_repeated_timestamps():
    df = pl.DataFrame({"time_s": [0.0, 0.5, 0.5, 2.5], "c": [0, 5, 5, 45]})
    r = plot.counter_rates(df, ["c"])
    assert r["time_s"].to_list() == [0.5, 2.5]  # the zero-length interval is dropped
    assert r["c"].to_list() == [10.0, 20.0]


# ---- the function ----------------------------------------------------------------------

def test_plot_accepts_a_result_and_a_dataframe(tmp_path):
    res = fake_result()
    a = plot.plot_timeseries(res, tmp_path / "result.png")
    b = plot.plot_timeseries(res.timeseries, tmp_path / "frame.png")
    assert a == tmp_path / "result.png" and b == tmp_path / "frame.png"
    assert_png(a)
    assert_png(b)
    assert only_file(tmp_path) == ["frame.png", "result.png"]


def test_svg_carries_titles_labels_and_legend(tmp_path):
    out = plot.plot_timeseries(fake_result(), tmp_path / "run.svg")
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for text in ("classic@6.15", "16M memory", "trace fake.trace", "simulated time (s)", "memory (MiB)",
                 "pages/s", "pgscan kswapd", "pgscan direct", "pgsteal", "refault anon", "refault file",
                 "pswpin", "pswpout", "memory stall", "active anon", "inactive file", "zram pool", "free",
                 "machine 16 MiB"):
        assert text in svg, text


def test_cgroups_get_a_memory_current_panel(tmp_path):
    # Without cgroup columns there is no fourth panel; with them, one line per cgroup.
    plain = plot.plot_timeseries(fake_result(), tmp_path / "plain.svg").read_text()
    assert "memory.current per cgroup" not in plain
    raw = {"policy": "mglru@6.15", "vmstat": {}, "metrics": {}, "timeseries": fake_series()}
    n = len(raw["timeseries"]["time_s"])
    raw["timeseries"]["memcg.primary.memory.current_bytes"] = [float(i << 20) for i in range(n)]
    raw["timeseries"]["memcg.replica2.memory.current_bytes"] = [float(16 << 20)] * n
    svg = plot.plot_timeseries(reclaimlab.Result(raw, {}, ""), tmp_path / "cg.svg").read_text()
    for text in ("memory.current per cgroup", "memory.current (MiB)", "primary", "replica2"):
        assert text in svg, text
    assert plot.memcg_columns(pl.DataFrame(raw["timeseries"])) == [
        "memcg.primary.memory.current_bytes", "memcg.replica2.memory.current_bytes"]


def test_run_timeseries_has_each_cgroups_memory_current():
    # tpcc-stock-level's three members (replica1 the primary): their memory.current over time, ending at the
    # run's memory.current metric; under mainline MGLRU the idle secondaries keep their
    # 160 MiB WiredTiger caches to the end.
    r = reclaimlab.run(scenario="tpcc-stock-level", policy="mglru@6.15")
    ts = r.timeseries
    for m in ("replica1", "replica2", "replica3"):
        col = ts[f"memcg.{m}.memory.current_bytes"]
        assert col[-1] == r.metrics[f"memcg.{m}.memory.current_bytes"], m
    assert ts["memcg.replica2.memory.current_bytes"].max() >= 160 << 20


def test_dataframe_gets_a_generic_title_and_title_overrides(tmp_path):
    res = fake_result()
    svg = plot.plot_timeseries(res.timeseries, tmp_path / "a.svg").read_text()
    assert "reclaimlab time series" in svg and "classic@6.15" not in svg
    svg = plot.plot_timeseries(res, tmp_path / "b.svg", title="my experiment").read_text()
    assert "my experiment" in svg and "classic@6.15" not in svg


def test_pdf_by_suffix(tmp_path):
    out = plot.plot_timeseries(fake_result(), tmp_path / "run.PDF")
    assert out.read_bytes()[:5] == b"%PDF-"


def test_long_series_is_thinned_but_still_drawn(tmp_path):
    n = plot.MAX_POINTS * 3
    df = pl.DataFrame({c: [float(i) if c != "nr_free_pages" else 4096.0 for i in range(n)] for c in COLUMNS})
    assert_png(plot.plot_timeseries(df, tmp_path / "long.png"))


@pytest.mark.parametrize("name", ["out.jpg", "out", "out.png.txt"])
def test_bad_suffix_is_refused(tmp_path, name):
    with pytest.raises(ReclaimlabError, match=r"expected a \.png, \.svg or \.pdf"):
        plot.plot_timeseries(fake_result(), tmp_path / name)
    assert only_file(tmp_path) == []


def test_missing_directory_is_refused(tmp_path):
    with pytest.raises(ReclaimlabError, match="directory does not exist"):
        plot.plot_timeseries(fake_result(), tmp_path / "nope" / "out.png")


def test_missing_columns_and_too_few_samples(tmp_path):
    df = fake_result().timeseries
    with pytest.raises(ReclaimlabError, match="pswpin"):
        plot.plot_timeseries(df.drop("pswpin"), tmp_path / "a.png")
    with pytest.raises(ReclaimlabError, match="at least 2"):
        plot.plot_timeseries(df.head(1), tmp_path / "b.png")
    with pytest.raises(TypeError):
        plot.plot_timeseries({"time_s": [0.0]}, tmp_path / "c.png")
    assert only_file(tmp_path) == []


def test_missing_matplotlib_is_a_clear_error(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    msg = "plotting needs matplotlib: pip install 'reclaimlab[plot]'"
    with pytest.raises(ReclaimlabError) as e:
        plot.plot_timeseries(fake_result(), tmp_path / "a.png")
    assert str(e.value) == msg
    with pytest.raises(ReclaimlabError) as e:
        plot.require_matplotlib()
    assert str(e.value) == msg
    assert only_file(tmp_path) == []


def test_failure_while_drawing_leaves_nothing_and_keeps_an_old_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    old = tmp_path / "run.png"
    old.write_bytes(b"previous")

    def boom(self, *a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Figure, "savefig", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        plot.plot_timeseries(fake_result(), old)
    assert only_file(tmp_path) == ["run.png"]
    assert old.read_bytes() == b"previous"


def test_output_file_mode_follows_umask(tmp_path):
    # Every atomically written output (plots, time series, traces) gets the mode a plain
    # open() would give it, not mkstemp's 0600.
    from reclaimlab import _atomic

    out = plot.plot_timeseries(fake_result(), tmp_path / "run.png")
    mask = _atomic._umask()
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    with _atomic.atomic_output(tmp_path / "ts.csv") as tmp:
        tmp.write_text("x\n")
    assert (tmp_path / "ts.csv").stat().st_mode & 0o777 == 0o666 & ~mask


def test_plotting_leaves_pyplot_alone(tmp_path):
    before = "matplotlib.pyplot" in sys.modules
    plot.plot_timeseries(fake_result(), tmp_path / "run.png")
    assert ("matplotlib.pyplot" in sys.modules) == before


# ---- the CLI ---------------------------------------------------------------------------

@pytest.mark.engine
def test_cli_run_default_scenario_writes_a_png(tmp_path):
    out = tmp_path / "run.png"
    p = cli("run", "--scenario", "default", "--quiet", "--plot", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("policy")  # the usual summary is still printed
    assert p.stderr == ""
    assert_png(out, 10_000)
    assert only_file(tmp_path) == ["run.png"]


@pytest.mark.engine
def test_cli_plot_with_json_and_timeseries(tmp_path, gen_trace):
    trace = gen_trace("seq", 6000, 60000)
    p = cli("run", "--trace", trace, "--memory", "16M", "--swap", "zram:64M", "--quiet", "--json",
            "--timeseries", tmp_path / "ts.csv", "--plot", tmp_path / "run.svg")
    assert p.returncode == 0, p.stderr
    assert p.stdout.lstrip().startswith("{")
    svg = (tmp_path / "run.svg").read_text()
    assert "classic@6.15" in svg and "16M memory" in svg
    assert (tmp_path / "ts.csv").stat().st_size > 0


@pytest.mark.parametrize("name", ["out.jpg", "out.png.bak", "out"])
def test_cli_bad_suffix_fails_before_running(tmp_path, name):
    # The trace does not exist: had the run started, the error would name the trace.
    t0 = time.monotonic()
    p = cli("run", "--trace", tmp_path / "missing.trace", "--plot", tmp_path / name)
    err = assert_user_error(p, "--plot", name, ".png, .svg or .pdf")
    assert "missing.trace" not in err
    assert time.monotonic() - t0 < 30
    assert only_file(tmp_path) == []


def test_cli_missing_directory_fails_before_running(tmp_path):
    p = cli("run", "--trace", tmp_path / "missing.trace", "--plot", tmp_path / "no" / "run.png")
    err = assert_user_error(p, "--plot", "directory does not exist")
    assert "missing.trace" not in err


def test_cli_help_mentions_plot():
    p = cli("run", "--help")
    assert p.returncode == 0
    assert "--plot FILE" in p.stdout and ".png" in p.stdout
