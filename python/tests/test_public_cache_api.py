"""reclaimlab.cachesim / reclaimlab.mrc (the public Python API of `cachesim` and `mrc`)
give what the CLI's --json gives, as polars DataFrames."""

from __future__ import annotations

import json

import polars as pl
import pytest

import reclaimlab
from reclaimlab.cli import main


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("t") / "z.trace"
    assert main(["trace", "gen", "zipf", "--pages", "300", "--accesses", "6000", "-o", str(path)]) == 0
    return path


def test_cachesim_matches_the_cli(trace, capsys):
    df = reclaimlab.cachesim(trace, ["lru", "arc"], [10, "20%"])
    assert df.columns == ["algo", "size", "miss_ratio", "hits", "misses"] and df.height == 4
    capsys.readouterr()
    assert main(["cachesim", "--trace", str(trace), "--algo", "lru,arc", "--size", "10,20%", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["results"]
    assert [(r["algo"], r["size"], r["misses"]) for r in cli] == list(zip(df["algo"], df["size"], df["misses"]))


def test_mrc_matches_the_cli(trace, capsys):
    df = reclaimlab.mrc(trace, "lru,lirs-paper", sizes=[5, 30, 90])
    capsys.readouterr()
    assert main(["mrc", "--trace", str(trace), "--algo", "lru,lirs-paper", "--size", "5,30,90", "--json"]) == 0
    curves = json.loads(capsys.readouterr().out)["curves"]
    for algo, ys in curves.items():
        assert df.filter(pl.col("algo") == algo)["miss_ratio"].to_list() == ys
    assert df.filter(pl.col("algo") == "lirs-paper")["miss_ratio"][0] is None


def test_compare_stats_is_the_compare_command():
    from pathlib import Path

    import reclaimlab.stats as stats

    data = Path(stats.__file__).parent / "data" / "seed002.csv"
    df = reclaimlab.compare_stats(data)
    assert df.equals(stats.comparisons(data)) and df.height == 6 and "verdict" in df.columns


def test_bad_input_is_a_reclaimlab_error(trace):
    with pytest.raises(reclaimlab.ReclaimlabError, match="unknown cache algorithm"):
        reclaimlab.cachesim(trace, "nope", [10])
    with pytest.raises(reclaimlab.ReclaimlabError, match="bad cache size"):
        reclaimlab.mrc(trace, sizes=[0])


USER_SCRIPT = '''\
import polars as pl

import reclaimlab

df: pl.DataFrame = reclaimlab.cachesim("t.trace", ["lru", "arc"], [100, "10%"])
curve: pl.DataFrame = reclaimlab.mrc("t.trace", "lru", sizes=[10, 20], sample_rate=0.5)
tests: pl.DataFrame = reclaimlab.compare_stats("results/", baseline="swap=swapoff")
print(df.height + curve.height + tests.height)
'''


def test_mypy_strict_sees_real_types(tmp_path):
    """A user script type-checks under mypy --strict, and a wrong use of the result fails
    (the calls return DataFrame, not Any)."""
    api = pytest.importorskip("mypy.api")
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(USER_SCRIPT)
    bad.write_text(USER_SCRIPT + "n: int = reclaimlab.mrc('t.trace')\n")
    cache = ["--strict", "--cache-dir", str(tmp_path / "cache")]
    out, err, status = api.run([*cache, str(good)])
    assert status == 0, out + err
    out, err, status = api.run([*cache, str(bad)])
    assert status == 1 and '"DataFrame", variable has type "int"' in out, out


@pytest.mark.parametrize("name", ["policies", "knobs", "scenarios"])
def test_listings_are_the_cli_json(name, capsys):
    df = getattr(reclaimlab, name)()
    assert main([name, "--json"]) == 0
    assert df.to_dicts() == json.loads(capsys.readouterr().out)[name]
