"""Reference cache algorithms: exact agreement with libCacheSim (the `libcachesim` PyPI
package, run in the same test on the same trace written as oracleGeneral), the CLI
commands `cachesim` and `mrc`, and oracleGeneral conversion both ways.

libcachesim is in the `test` extra, so CI runs these; elsewhere, without the package,
the comparison tests are skipped (unless $CI is set, when a missing package fails).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reclaimlab import _core
from reclaimlab.trace import single_region_program

from conftest import assert_user_error, cli

if os.environ.get("CI"):
    import libcachesim as lcs
else:
    lcs = pytest.importorskip("libcachesim")

ROOT = Path(__file__).resolve().parents[2]
LIRS = ROOT / "data" / "traces" / "lirs"
SPEC = ROOT / "data" / "traces" / "spec2000-address"

#: our name -> libcachesim class
LCS = {"lru": "LRU", "fifo": "FIFO", "clock": "Clock", "sieve": "Sieve", "s3fifo": "S3FIFO", "arc": "ARC",
       "belady": "Belady", "lirs": "LIRS", "slru": "SLRU", "2q": "TwoQ", "lfu": "LFU"}

#: cache sizes as fractions of the distinct pages (at least 20 pages: libCacheSim's
#: S3-FIFO cannot insert when the small queue (10%) holds under two objects)
FRACTIONS = (0.01, 0.05, 0.1, 0.25, 0.5)


def lcs_miss_ratio(path: Path, algo: str, size: int) -> float:
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    return getattr(lcs, LCS[algo])(size).process_trace(reader)[0]


def sizes_of(tr) -> list[int]:
    d = tr.distinct
    return sorted({max(20, int(d * f)) for f in FRACTIONS})


def check_agreement(tr, path: Path, algos=tuple(LCS)) -> list[tuple]:
    tr.write_oracle(str(path))
    sizes = sizes_of(tr)
    ours = {(r["algo"], r["size"]): r for r in _core.cache_simulate(tr, list(algos), sizes)}
    bad = []
    for a in algos:
        for s in sizes:
            theirs = lcs_miss_ratio(path, a, s)
            mine = ours[(a, s)]
            # Exact: the same number of misses (so equal to 4 decimals and beyond).
            if round(theirs * len(tr)) != mine["misses"] or abs(mine["miss_ratio"] - theirs) > 1e-12:
                bad.append((a, s, mine["miss_ratio"], theirs))
    return bad


def gen(pattern: str, pages: int, accesses: int, alpha: float = 1.0, seed: int = 1):
    return _core.cache_load(_core.generate(single_region_program(pattern, pages, accesses, alpha=alpha), seed))


@pytest.mark.parametrize("name", sorted(p.name for p in LIRS.glob("*.trace.gz")))
def test_agrees_with_libcachesim_on_lirs_traces(name, tmp_path):
    tr = _core.cache_load(_core.open_trace(str(LIRS / name), "lirs", None))
    assert check_agreement(tr, tmp_path / "t.oracleGeneral") == []


@pytest.mark.parametrize("name", ["gcc", "gzip", "mcf"])
def test_agrees_with_libcachesim_on_spec_address_traces_as_pages(name, tmp_path):
    tr = _core.cache_load(_core.open_trace(str(SPEC / f"{name}.trace.gz"), "address", None))
    assert tr.distinct > 20
    assert check_agreement(tr, tmp_path / "t.oracleGeneral") == []


def scan_hot_mix():
    """A hot set (zipf over 2000 pages) interleaved with one-time scans of fresh pages."""
    import random

    rnd = random.Random(5)
    keys, fresh = [], 100_000
    hot = [int(2000 * (rnd.random() ** 3)) for _ in range(120_000)]
    for i, h in enumerate(hot):
        keys.append(h)
        if (i // 5000) % 3 == 2:  # every third block of 5000 requests also scans
            keys.append(fresh)
            fresh += 1
    return _core.cache_trace_from_keys(keys)


@pytest.mark.parametrize("kind", ["zipf0.8", "zipf1.0", "zipf1.2", "loop", "zigzag", "scan-hot"])
def test_agrees_with_libcachesim_on_synthetic_traces(kind, tmp_path):
    if kind.startswith("zipf"):
        tr = gen("zipf", 20_000, 300_000, alpha=float(kind[4:]))
    elif kind == "scan-hot":
        tr = scan_hot_mix()
    else:
        tr = gen(kind, 5_000, 100_000)
    assert check_agreement(tr, tmp_path / "t.oracleGeneral") == []


def test_loop_at_the_edge_sizes(tmp_path):
    """Loop of N pages at N-1, N, N+1: LRU-family all-miss vs all-hit-after-warmup."""
    tr = gen("loop", 3000, 60_000)
    p = tmp_path / "loop.oracleGeneral"
    tr.write_oracle(str(p))
    res = {(r["algo"], r["size"]): r["miss_ratio"] for r in _core.cache_simulate(tr, list(LCS), [2999, 3000, 3001])}
    for a in LCS:
        for s in (2999, 3000, 3001):
            assert res[(a, s)] == pytest.approx(lcs_miss_ratio(p, a, s), abs=1e-12), (a, s)
    assert res[("lru", 2999)] == 1.0 and res[("lru", 3000)] == pytest.approx(0.05)


def test_libcachesim_reads_our_oracle_file(tmp_path):
    tr = _core.cache_load(_core.open_trace(str(LIRS / "sprite.trace.gz"), "lirs", None))
    p = tmp_path / "sprite.oracleGeneral"
    assert tr.write_oracle(str(p)) == len(tr) == 133_996
    reader = lcs.TraceReader(str(p), lcs.TraceType.ORACLE_GENERAL_TRACE)
    assert reader.get_num_of_req() == len(tr)
    # and ours reads it back to the same dense ids
    back = _core.cache_load(_core.open_trace(str(p), None, None))
    assert back.keys() == tr.keys()


def test_belady_lower_bound_and_lru_curve_matches_simulation():
    tr = _core.cache_load(_core.open_trace(str(LIRS / "multi3.trace.gz"), "lirs", None))
    sizes = sizes_of(tr)
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

def test_cli_cachesim_json_matches_libcachesim(tmp_path):
    trace = LIRS / "sprite.trace.gz"
    p = cli("cachesim", "--trace", trace, "--algo", "lru,arc", "--algo", "s3fifo", "--size", "10%", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["requests"] == 133_996 and out["distinct_pages"] == 7075
    size = int(7075 * 0.10)
    og = tmp_path / "s.oracleGeneral"
    assert cli("trace", "convert", trace, og).returncode == 0
    got = {r["algo"]: r for r in out["results"]}
    assert set(got) == {"lru", "arc", "s3fifo"}
    for a, r in got.items():
        assert r["size"] == size
        assert r["hits"] + r["misses"] == 133_996
        assert r["miss_ratio"] == pytest.approx(r["misses"] / 133_996)
        assert r["miss_ratio"] == pytest.approx(lcs_miss_ratio(og, a, size), abs=1e-12)


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
