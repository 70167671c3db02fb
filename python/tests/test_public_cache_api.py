"""reclaimlab.cachesim / reclaimlab.mrc (the public Python API of `cachesim` and `mrc`)
give what the CLI's --json gives, as polars DataFrames; reclaimlab.Cache, one cache fed
request by request, hits what cachesim hits."""

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

cache = reclaimlab.Cache("arc", size=100)
hit: bool = cache.access(12)
st: reclaimlab.CacheStats = cache.process("t.trace")
ratio: float = st.miss_ratio + cache.stats.hit_ratio
records: int = reclaimlab.trace.generate("zipf", "z.trace", pages=100, accesses=1000, seed=2)
records += reclaimlab.trace.convert("z.trace", "z.oracleGeneral", trace_kind="anon")
records += reclaimlab.trace.write("w.trace", [1, 2, 3], madvise=[(0, 1, 2, "hugepage")])
counts: int = reclaimlab.trace.info("z.trace")["records"]
src = reclaimlab.scenario_source("default", seed=3)
print(hit, ratio, records, counts, src.meta())
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


ONLINE = [a for a in reclaimlab.cache.algorithms() if not a.startswith("belady")]


@pytest.fixture(scope="module")
def wide_trace(tmp_path_factory):
    """More pages (3,000) than a Cache's first id space (1,024): it grows twice."""
    path = tmp_path_factory.mktemp("w") / "w.trace"
    assert reclaimlab.trace.generate("zipf", path, pages=3000, accesses=30000, alpha=0.7, seed=5) == 30000
    return path


@pytest.mark.parametrize("algo", ONLINE)
def test_cache_hits_what_cachesim_hits(wide_trace, algo):
    size = 200
    want = reclaimlab.cachesim(wide_trace, algo, [size]).row(0, named=True)
    grown = reclaimlab.Cache(algo, size=size)
    st = grown.process(wide_trace)
    assert (st.hits, st.misses) == (want["hits"], want["misses"]) and st.miss_ratio == want["miss_ratio"]
    assert grown.stats == st and grown.distinct == reclaimlab.trace.info(wide_trace)["pages"]
    fixed = reclaimlab.Cache(algo, size=size, pages=3000)
    keys = reclaimlab._core.cache_load(reclaimlab.open_trace(str(wide_trace))).keys()
    assert [fixed.access(k) for k in keys].count(True) == want["hits"]
    assert len(fixed) == len(grown) == size


def test_cache_object_api():
    c = reclaimlab.Cache("lru", size=2)
    assert [c.access(p) for p in (1, 2, 1, 3, 2)] == [False, False, True, False, False]
    assert (c.stats.hits, c.stats.misses, c.stats.requests, c.distinct, len(c)) == (1, 4, 5, 3, 2)
    assert c.process([2, 3, 1 << 40]) == reclaimlab.CacheStats(2, 1)  # any page number
    assert c.stats.requests == 8 and c.algo == "lru" and c.size == 2 and "lru" in repr(c)
    assert reclaimlab.Cache("S3-FIFO", size=10).algo == "s3fifo"


@pytest.mark.parametrize("args, kwargs, match", [
    (("belady", 10), {}, "needs the whole trace ahead.*reclaimlab.cachesim"),
    (("nope", 10), {}, "unknown cache algorithm"),
    (("clockpro", 2), {}, "at least 5 pages"),
    (("lru", -1), {}, "size must be a non-negative integer"),
    (("lru", 10), {"pages": -3}, "pages must be a non-negative integer"),
])
def test_cache_bad_arguments(args, kwargs, match):
    with pytest.raises(reclaimlab.ReclaimlabError, match=match):
        reclaimlab.Cache(*args, **kwargs)


def test_cache_with_fixed_pages_refuses_one_more():
    c = reclaimlab.Cache("arc", size=2, pages=2)
    c.process([5, 6, 5])
    with pytest.raises(reclaimlab.ReclaimlabError, match="distinct page 3 of a cache made for pages=2"):
        c.access(7)
    assert c.stats.requests == 3
