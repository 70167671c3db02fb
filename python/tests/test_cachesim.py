"""Reference cache algorithms: exact agreement with libCacheSim, the CLI commands
`cachesim` and `mrc`, and oracleGeneral conversion both ways.

Agreement is checked against libCacheSim's own miss counts, checked in as
python/tests/golden/libcachesim_misses.json by scripts/libcachesim_golden.py (which runs
the `libcachesim` PyPI package on the same traces written as oracleGeneral), so these tests
run without the package. With it installed (the `test` extra; required when $CI is set),
the tests marked `libcachesim` re-derive a part of the table and check libCacheSim reads
our oracleGeneral files; `python scripts/libcachesim_golden.py --check` re-derives all.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from reclaimlab import _core

from conftest import assert_user_error, cli

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import libcachesim_golden as golden  # noqa: E402

LIRS = golden.LIRS

#: libCacheSim's counts (scripts/libcachesim_golden.py)
GOLDEN = golden.load()

#: our name -> libCacheSim's class, from the algorithm table (crates/cache/src/algo/mod.rs)
LCS = dict(_core.cache_libcachesim_names())


def lcs():
    """The libcachesim package (a test that needs it is skipped without it, unless $CI)."""
    if os.environ.get("CI"):
        import libcachesim

        return libcachesim
    return pytest.importorskip("libcachesim")


def test_the_golden_table_covers_every_algorithm_libcachesim_has():
    assert GOLDEN["algorithms"] == LCS
    assert {"lru", "arc", "s3fifo", "lirs", "belady"} <= set(LCS)
    for t in GOLDEN["traces"].values():
        assert set(t["misses"]) == set(LCS) and all(set(m) == {str(s) for s in t["sizes"]} for m in t["misses"].values())


@pytest.mark.parametrize("tid", list(golden.TRACES))
def test_agrees_with_libcachesim(tid):
    """The same misses as libCacheSim at every size (so equal miss ratios to the last bit)."""
    want = GOLDEN["traces"][tid]
    tr = golden.TRACES[tid][0]()
    assert (len(tr), golden.digest(tr)) == (want["requests"], want["keys_sha256"]), "the trace changed: re-derive the table"
    got = {(r["algo"], r["size"]): r["misses"] for r in _core.cache_simulate(tr, list(LCS), want["sizes"])}
    bad = [(a, s, got[(a, s)], want["misses"][a][str(s)]) for a in LCS for s in want["sizes"]
           if got[(a, s)] != want["misses"][a][str(s)]]
    assert bad == []


def test_loop_at_the_edge_sizes():
    """Loop of N pages at N-1, N, N+1: LRU-family all-miss vs all-hit-after-warmup."""
    want = GOLDEN["traces"]["loop3000-edge"]
    assert want["sizes"] == [2999, 3000, 3001] and want["requests"] == 60_000
    assert want["misses"]["lru"]["2999"] == 60_000 and want["misses"]["lru"]["3000"] == 3000


@pytest.mark.libcachesim
@pytest.mark.parametrize("tid", ["lirs/sprite.trace.gz", "zipf1.0", "scan-hot"])
def test_the_golden_table_is_libcachesims_own(tid):
    """Re-derived with libCacheSim now, a part of the table comes out the same."""
    assert golden.derive(lcs(), [tid])["traces"][tid] == GOLDEN["traces"][tid]


@pytest.mark.libcachesim
def test_libcachesim_reads_our_oracle_file(tmp_path):
    lib = lcs()
    tr = _core.cache_load(_core.open_trace(str(LIRS / "sprite.trace.gz"), "lirs", None))
    p = tmp_path / "sprite.oracleGeneral"
    assert tr.write_oracle(str(p)) == len(tr) == 133_996
    reader = lib.TraceReader(str(p), lib.TraceType.ORACLE_GENERAL_TRACE)
    assert reader.get_num_of_req() == len(tr)


def test_our_oracle_file_reads_back_to_the_same_ids(tmp_path):
    tr = _core.cache_load(_core.open_trace(str(LIRS / "sprite.trace.gz"), "lirs", None))
    p = tmp_path / "sprite.oracleGeneral"
    assert tr.write_oracle(str(p)) == len(tr) == GOLDEN["traces"]["lirs/sprite.trace.gz"]["requests"]
    back = _core.cache_load(_core.open_trace(str(p), None, None))
    assert back.keys() == tr.keys()


def test_belady_lower_bound_and_lru_curve_matches_simulation():
    tr = _core.cache_load(_core.open_trace(str(LIRS / "multi3.trace.gz"), "lirs", None))
    sizes = golden.sizes_of(tr)
    res = _core.cache_simulate(tr, _core.cache_algos(), sizes)
    for s in sizes:
        at = {r["algo"]: r["misses"] for r in res if r["size"] == s}
        # MIN (bypass) <= always-admit Belady <= every other algorithm
        assert at["belady-paper"] <= at["belady"]
        assert all(at["belady"] <= m for a, m in at.items() if a != "belady-paper")
    curve = _core.cache_lru_mrc(tr, sizes)
    lru = [r["miss_ratio"] for r in res if r["algo"] == "lru"]
    assert curve == pytest.approx(lru, abs=0)


def test_lirs_paper_loop_trace_lru_known_answer():
    """The LIRS paper's `loop` trace: a 1,011-block loop (LRU hit ratio 0 below it)."""
    tr = _core.cache_load(_core.open_trace(str(LIRS / "loop.trace.gz"), "lirs", None))
    assert tr.distinct == 1011
    lru = _core.cache_lru_mrc(tr, [500, 1010, 1011])
    assert lru[0] == 1.0 and lru[1] == 1.0
    assert lru[2] == pytest.approx(1011 / len(tr))


# ---- CLI -------------------------------------------------------------------------------

def test_cli_cachesim_json_matches_libcachesim():
    trace = LIRS / "sprite.trace.gz"
    p = cli("cachesim", "--trace", trace, "--algo", "lru,arc", "--algo", "s3fifo", "--size", "10%", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["requests"] == 133_996 and out["distinct_pages"] == 7075
    size = int(7075 * 0.10)
    want = GOLDEN["traces"]["lirs/sprite.trace.gz"]["misses"]
    got = {r["algo"]: r for r in out["results"]}
    assert set(got) == {"lru", "arc", "s3fifo"}
    for a, r in got.items():
        assert r["size"] == size
        assert r["hits"] + r["misses"] == 133_996
        assert r["miss_ratio"] == pytest.approx(r["misses"] / 133_996)
        assert r["misses"] == want[a][str(size)]


def test_cli_cachesim_table_and_errors(tmp_path):
    p = cli("cachesim", "--trace", LIRS / "cs.trace.gz", "--algo", "all", "--size", "100")
    assert p.returncode == 0, p.stderr
    for a in LCS:
        assert a in p.stdout
    assert_user_error(cli("cachesim", "--trace", LIRS / "cs.trace.gz", "--algo", "nope", "--size", "10"), "nope")
    assert_user_error(cli("cachesim", "--trace", LIRS / "cs.trace.gz", "--algo", "lru", "--size", "150%"), "150%")
    assert_user_error(cli("cachesim", "--trace", tmp_path / "missing", "--algo", "lru", "--size", "1"), "missing")


def test_cli_mrc_csv_and_plot(tmp_path):
    csv = tmp_path / "m.csv"
    png = tmp_path / "m.png"
    p = cli("mrc", "--trace", LIRS / "multi1.trace.gz", "--algo", "lru,arc", "--size", "100,500,1000",
            "--csv", csv, "-o", png)
    assert p.returncode == 0, p.stderr
    rows = csv.read_text().splitlines()
    assert rows[0] == "algo,size,miss_ratio" and len(rows) == 7
    tr = _core.cache_load(_core.open_trace(str(LIRS / "multi1.trace.gz"), None, None))
    sim = {(r["algo"], r["size"]): r["miss_ratio"] for r in _core.cache_simulate(tr, ["lru", "arc"], [100, 500, 1000])}
    for row in rows[1:]:
        a, s, y = row.split(",")
        assert float(y) == pytest.approx(sim[(a, int(s))], abs=1e-6)
    assert png.stat().st_size > 1000
    # sampled curve runs and stays close on a bigger trace
    p = cli("mrc", "--trace", LIRS / "sprite.trace.gz", "--sample-rate", "0.5", "--size", "10%,50%")
    assert p.returncode == 0, p.stderr
    assert_user_error(cli("mrc", "--trace", LIRS / "cs.trace.gz", "--sample-rate", "0"), "sample-rate")


def test_cli_mrc_all_on_a_tiny_trace_skips_sizes_below_an_algorithms_minimum(tmp_path):
    # 3 distinct pages: the default sizes are 1, 2 and 3; clockpro and clockpro-paper
    # need 5 and lirs-paper 10, so they have no point, and a note says so; the others run.
    trace = tmp_path / "tiny.trace"
    trace.write_text("1\n2\n3\n1\n2\n3\n")
    csv = tmp_path / "m.csv"
    p = cli("mrc", "--trace", trace, "--algo", "all", "--csv", csv)
    assert p.returncode == 0, p.stderr
    assert "clockpro needs a cache of at least 5 pages" in p.stderr and "sizes 1, 2, 3 skipped" in p.stderr
    assert "lirs-paper needs a cache of at least 10 pages" in p.stderr
    assert "Traceback" not in p.stderr
    rows = [r.split(",") for r in csv.read_text().splitlines()[1:]]
    algos = {a for a, _, _ in rows}
    assert "clockpro" not in algos and "lirs-paper" not in algos
    assert "clockpro-paper" not in algos
    assert len(rows) == 3 * (len(_core.cache_algos()) - 3)
    ratio = {(a, int(s)): float(y) for a, s, y in rows}
    # A loop of 3 pages: LRU misses everything below 3; at 3 only the 3 cold misses.
    assert ratio[("lru", 2)] == 1.0 and ratio[("lru", 3)] == 0.5 and ratio[("belady", 3)] == 0.5
    table = cli("mrc", "--trace", trace, "--algo", "lru,clockpro")
    assert table.returncode == 0, table.stderr
    assert [line.split() for line in table.stdout.splitlines()[-3:]] == [["1", "1.0000", "-"], ["2", "1.0000", "-"], ["3", "0.5000", "-"]]


def test_cli_trace_convert_oracle_both_ways(tmp_path):
    og = tmp_path / "cpp.oracleGeneral"
    p = cli("trace", "convert", LIRS / "cpp.trace.gz", og)
    assert p.returncode == 0, p.stderr
    assert og.stat().st_size == 9047 * 24
    native = tmp_path / "cpp.trace"
    p = cli("trace", "convert", og, native)
    assert p.returncode == 0, p.stderr
    info = json.loads(cli("trace", "info", native, "--json").stdout)
    assert info["records"] == 9047 and info["pages"] == 1223
    other = tmp_path / "x.bin"
    assert cli("trace", "convert", LIRS / "cpp.trace.gz", other, "--to", "oracle").returncode == 0
    assert other.read_bytes() == og.read_bytes()


def test_clockpro_and_lirs_paper_refuse_caches_their_simulators_refuse():
    tr = _core.cache_trace_from_keys([1, 2, 3, 1, 2, 3])
    from reclaimlab.exceptions import ReclaimlabError

    with pytest.raises(ReclaimlabError, match="clockpro needs a cache of at least 5 pages"):
        _core.cache_simulate(tr, ["clockpro"], [4])
    with pytest.raises(ReclaimlabError, match="lirs-paper needs a cache of at least 10 pages"):
        _core.cache_simulate(tr, ["lirs-paper"], [9])
    assert _core.cache_simulate(tr, ["clockpro"], [5])[0]["misses"] == 3
