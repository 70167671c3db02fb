"""Multi-policy comparison runs: `reclaimlab run SCENARIO` and `reclaimlab run` with no
arguments (issue 3), and the tpcc-stock-level scenario's transactions/s."""

from __future__ import annotations

import json

import pytest

import reclaimlab

from conftest import PINNED, assert_user_error, cli

pytestmark = pytest.mark.engine

REGISTERED = reclaimlab.policies().filter(kind="reclaim")["name"].to_list()
# `default` declares no policies: every kernel model and five of the cache: policies.
DEFAULT_EXPECTED = [p for p in REGISTERED if not p.startswith("cache:") or p in reclaimlab.DEFAULT_CACHE_POLICIES]
TPCC_DECLARED = reclaimlab.scenario_info("tpcc-stock-level")["policies"]
TPCC_EXPECTED = [p for p in TPCC_DECLARED if p in REGISTERED]
TPCC_BASELINE = "mglru@6.15" if "mglru@6.15" in TPCC_EXPECTED else TPCC_EXPECTED[0]
TPCC_TXNS = reclaimlab.scenario_info("tpcc-stock-level")["transactions"]
TPCC_CLIENTS = reclaimlab.scenario_info("tpcc-stock-level")["clients"]
# A quarter-size machine keeps the CLI tests fast; the default size is timed below.
SMALL = ("--scale", "0.25", "--quiet")


@pytest.fixture(scope="module")
def tpcc_json():
    p = cli("run", "tpcc-stock-level", *SMALL, "--json", env_extra=PINNED)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_tpcc_declares_the_seed_policies():
    for name in ("classic@6.15", "mglru@6.15", "mglru+refault-distance-rfc-v3"):
        assert name in TPCC_DECLARED
    assert "classic@6.15" in TPCC_EXPECTED


def test_tpcc_json_structure_and_every_policy_ran(tpcc_json):
    assert len(tpcc_json.strip().splitlines()) == 1
    d = json.loads(tpcc_json)
    assert set(d) == {"scenario", "baseline", "policies", "provenance"}
    assert d["provenance"]["config"]["runs"] == len(TPCC_EXPECTED)
    assert d["provenance"]["config"]["varying"]["policy"] == sorted(TPCC_EXPECTED)
    assert d["scenario"] == "tpcc-stock-level"
    assert list(d["policies"]) == TPCC_EXPECTED
    assert d["baseline"] == TPCC_BASELINE
    for name, run in d["policies"].items():
        assert set(run) == {"metrics", "vmstat"}, name
        m, v = run["metrics"], run["vmstat"]
        assert m["transactions"] > 0 and m["tps"] > 0, name
        for k in ("workingset_refault_file", "workingset_activate_file", "pgscan_kswapd", "pgscan_direct", "pswpout"):
            assert type(v[k]) is int, (name, k)
        # The file data exceeds memory: file pages are read back in under every policy.
        assert v["workingset_refault_file"] > 0, name
    assert d["policies"][TPCC_BASELINE]["metrics"]["ratio_to_baseline"] == 1.0


def test_tpcc_tps_is_transactions_over_summed_latency(tpcc_json):
    # py-tpcc's rate: count / summed latency; 30 clients run back to back until the trace's
    # last transaction, so the summed latency is clients x the simulated runtime.
    assert (TPCC_TXNS, TPCC_CLIENTS) == (900, 30)
    d = json.loads(tpcc_json)
    base = d["policies"][d["baseline"]]["metrics"]["tps"]
    for name, run in d["policies"].items():
        m = run["metrics"]
        assert m["transactions"] == TPCC_TXNS, name
        assert m["tps"] == pytest.approx(TPCC_TXNS / (TPCC_CLIENTS * m["runtime_s"]), rel=1e-9)
        assert m["ratio_to_baseline"] == pytest.approx(m["tps"] / base, rel=1e-9)
    # Every policy replayed the same trace (same seed, same workload).
    assert len({run["metrics"]["accesses"] for run in d["policies"].values()}) == 1


def test_tpcc_same_seed_identical_json_bytes(tpcc_json):
    again = cli("run", "tpcc-stock-level", *SMALL, "--json", "--jobs", "1", env_extra=PINNED)
    assert again.returncode == 0, again.stderr
    assert again.stdout == tpcc_json  # also: independent of the number of workers


def test_tpcc_different_seed_differs(tpcc_json):
    other = cli("run", "tpcc-stock-level", *SMALL, "--json", "--seed", "2")
    assert other.returncode == 0, other.stderr
    assert other.stdout != tpcc_json


def test_tpcc_table_lists_every_policy():
    p = cli("run", "tpcc-stock-level", *SMALL)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert f"relative to {TPCC_BASELINE}" in out
    header = next(line for line in out.splitlines() if line.startswith("policy"))
    for col in ("txn/s", "ratio", "refault_file", "activate_file", "pgscan", "pswpout"):
        assert col in header.split(), col
    rows = {line.split()[0] for line in out.splitlines() if line.split()}
    assert set(TPCC_EXPECTED) <= rows


def test_policy_narrows_to_one_detailed_run():
    p = cli("run", "tpcc-stock-level", *SMALL, "--policy", "classic@6.15", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert set(d) == {"policy", "vmstat", "metrics", "provenance"}
    assert d["policy"] == "classic@6.15"
    m = d["metrics"]
    assert m["tps"] == pytest.approx(m["transactions"] / (TPCC_CLIENTS * m["runtime_s"]), rel=1e-9)
    p = cli("run", "--scenario", "tpcc-stock-level", *SMALL, "--policy", "classic@6.15")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("policy") and "classic@6.15" in p.stdout.splitlines()[0]
    assert any(line.split()[:1] == ["tps"] for line in p.stdout.splitlines())


def test_no_arguments_compares_every_kernel_model_and_five_cache_policies():
    assert reclaimlab.compare_policies("default") == DEFAULT_EXPECTED
    assert {"classic@6.15", "mglru@6.15", "cache:lru", "cache:arc", "cache:lirs"} <= set(DEFAULT_EXPECTED)
    assert "cache:2q" in REGISTERED and "cache:2q" not in DEFAULT_EXPECTED
    p = cli("run")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "scenario default" in out
    rows = [line.split()[0] for line in out.splitlines() if line.split()[:1] and line.split()[0] in REGISTERED]
    assert rows == DEFAULT_EXPECTED
    assert p.stderr == ""
    j = cli("run", "--json", "--quiet")
    d = json.loads(j.stdout)
    assert d["scenario"] == "default" and list(d["policies"]) == DEFAULT_EXPECTED


def test_python_compare_api():
    c = reclaimlab.compare("tpcc-stock-level", policies=["classic@6.15"], scale=0.1)
    assert c.baseline == "classic@6.15" and c.ratios == {"classic@6.15": 1.0}
    r = c.results["classic@6.15"]
    assert r.metrics["tps"] == r.metrics["transactions"] / (TPCC_CLIENTS * r.metrics["runtime_s"])
    one = reclaimlab.run(scenario="tpcc-stock-level", scale=0.1, policy="classic@6.15")
    assert one.metrics == r.metrics


def test_positional_scenario_errors():
    assert_user_error(cli("run", "tpcc-stok-level"), "tpcc-stok-level", "neither a config file nor a scenario")
    assert_user_error(cli("run", "default", "--scale", "2"), "default", "--scale")
    assert_user_error(cli("run", "tpcc-stock-level", "--scale", "0"), "scale")


def test_tpcc_default_size_runs_the_declared_transactions():
    # Its wall time ("well under a minute") is a benchmark figure (BENCHMARKS.md), not a
    # unit-test assertion: a loaded CI machine would make a timed test flaky.
    r = reclaimlab.run(scenario="tpcc-stock-level", policy="classic@6.15")
    assert r.metrics["transactions"] == TPCC_TXNS


@pytest.fixture(scope="module")
def tpcc_seed_pair():
    """Mainline MGLRU and the RFC on tpcc-stock-level at its default size (seed 001)."""
    return reclaimlab.compare("tpcc-stock-level", policies=["mglru@6.15", "mglru+refault-distance-rfc-v3"])


def test_tpcc_mainline_never_ages_the_idle_secondaries_and_the_rfc_does(tpcc_seed_pair):
    main = tpcc_seed_pair.results["mglru@6.15"]
    rfc = tpcc_seed_pair.results["mglru+refault-distance-rfc-v3"]
    cache_pages = 160 * 256  # one secondary's WiredTiger cache (160 MiB)
    # Mainline: STOCK's read() pages churn through the primary's oldest generation, which
    # never empties, so the primary never ages and never leaves the old generation of the
    # memcg LRU; the secondaries, young since their first aging, are never reclaimed
    # again. Their idle caches stay, nothing is swapped (the seed: "the result won't
    # change whether any kind of swap is on or not") and no read() refault is activated.
    assert main.vmstat["pswpout"] == 0
    for m in ("replica2", "replica3"):
        assert main.metrics[f"memcg.{m}.memory.current_bytes"] >= 0.95 * cache_pages * 4096, m
    assert main.vmstat["workingset_activate_file"] == 0
    assert main.vmstat["workingset_refault_file"] > 1_000_000
    assert main.metrics["lru_gen.memcg_lru_seq"] == 0  # the old generation never empties
    # Per memcg (node 0): the primary never ages (max_seq stays at its initial 3) and so
    # never moves to the young generation; root reclaim visits each secondary only until
    # its first aging (a few visits: how many depends on which reclaimers — kswapd, direct
    # reclaim after a per-CPU refill — come first), then only the primary, thousands of times.
    assert main.metrics["memcg.replica1.lru_gen.aging_runs"] == 0
    assert main.metrics["memcg.replica1.lru_gen.max_seq"] == 3
    assert main.metrics["memcg.replica1.lru_gen.memcg_lru_young"] == 0
    primary_visits = main.metrics["memcg.replica1.lru_gen.shrink_one"]
    assert primary_visits > 1000
    for m in ("replica2", "replica3"):
        assert main.metrics[f"memcg.{m}.lru_gen.memcg_lru_young"] == 1, m
        assert main.metrics[f"memcg.{m}.lru_gen.aging_runs"] == 1, m
        assert main.metrics[f"memcg.{m}.lru_gen.shrink_one"] < primary_visits / 100, m
    # The RFC re-activates refaults within the inactive size; the activated folios make
    # the primary age, the memcg LRU turns over, and the idle secondaries are swapped out,
    # leaving room for STOCK.
    assert rfc.vmstat["workingset_activate_file"] > 50_000
    assert rfc.metrics["lru_gen.memcg_lru_seq"] >= 1
    assert rfc.metrics["memcg.replica1.lru_gen.aging_runs"] >= 1
    assert rfc.metrics["memcg.replica1.lru_gen.memcg_lru_young"] >= 1
    for m in ("replica2", "replica3"):
        # reached again after the turnover: more visits than aging runs
        assert rfc.metrics[f"memcg.{m}.lru_gen.shrink_one"] > 10 * main.metrics[f"memcg.{m}.lru_gen.shrink_one"], m
    assert rfc.vmstat["pswpout"] >= 0.95 * 2 * cache_pages
    for m in ("replica2", "replica3"):
        assert rfc.metrics[f"memcg.{m}.memory.current_bytes"] < 0.1 * cache_pages * 4096, m
    assert rfc.vmstat["workingset_refault_file"] < main.vmstat["workingset_refault_file"] / 4


def test_tpcc_rfc_doubles_mainline_mglru(tpcc_seed_pair):
    # Issue 3's floor; the seed measured ~4.4x (0.02 -> 0.09 txn/s). docs/scenarios.md:
    # 3.87x at seed 1 (1.7-3.9x over scales 1-32 and seeds 1-3).
    assert tpcc_seed_pair.ratios["mglru+refault-distance-rfc-v3"] >= 2.0
