"""mmtests-style tables: row formulas, percentage sign conventions, both significance
rules, the output layout, and the vmstat-derived rows (reference §1.2-1.7)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("scipy")

import polars as pl  # noqa: E402

import reclaimlab.stats as stats_pkg  # noqa: E402
from reclaimlab.stats import load_measurements, mmtests  # noqa: E402
from reclaimlab.stats.mmtests import pdiff, pndiff, significance, summarise  # noqa: E402

from conftest import cli  # noqa: E402

CSV = Path(stats_pkg.__file__).parent / "data" / "seed002.csv"

BASE = [10.0, 12.0, 14.0]  # Amean 12, SD 2
NEW = [8.0, 9.0, 10.0]  # Amean 9, SD 1


def test_rows_lower_is_better_hand_computed():
    b, n = summarise(BASE), summarise(NEW)
    assert (b["Min"], b["Amean"], b["Stddev"], b["Max"]) == (10, 12, 2, 14)
    assert b["CoeffVar"] == pytest.approx(100 * 2 / 12)
    # n=3 best-first (ascending): BAmean-50 keeps int(1.5)=1 sample, -95/-99 keep int(2.85)=2.
    assert (b["BAmean-50"], b["BAmean-95"], b["BAmean-99"]) == (10, 11, 11)
    assert (n["BAmean-50"], n["BAmean-95"]) == (8, 8.5)
    table = mmtests.table([("op", {"base": BASE, "new": NEW})], ["base", "new"], higher=False, rule="2018")
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    # Lower is better: pndiff = 100 - new*100/base; positive = better.
    assert rows["Min"].endswith("8.00 (  20.00%)")
    assert rows["Max"].endswith("10.00 (  28.57%)")
    assert rows["Stddev"].endswith("1.00 (  50.00%)")
    assert rows["CoeffVar"].endswith("11.11 (  33.33%)")
    assert rows["BAmean-95"].endswith("8.50 (  22.73%)")
    # 2018: t = 3/sqrt(4/3 + 1/3) = 2.3238, df = 3+3-2 = 4, p = 0.0808 < 0.10 -> star.
    assert rows["Amean"].endswith("9.00 *  25.00%*")
    sig, p = significance(b, n, "2018")
    assert sig and p == pytest.approx(0.0808, abs=5e-4)
    # 2024: cidiff = (9-12)/(1.96*2 + 1.96*1) = -0.51 -> bands overlap, no star.
    sig, cid = significance(b, n, "2024")
    assert not sig and cid == pytest.approx(-3 / (1.959964 * 3), rel=1e-5)
    t24 = mmtests.table([("op", {"base": BASE, "new": NEW})], ["base", "new"], rule="2024")
    assert [l for l in t24.splitlines() if l.startswith("Amean")][0].endswith("9.00 (  25.00%)")


def test_2024_star_when_bands_do_not_overlap():
    b, n = summarise(BASE, rule="2024"), summarise([1.0, 1.5, 2.0], rule="2024")
    sig, cid = significance(b, n, "2024")
    assert sig and cid == pytest.approx(-10.5 / (1.959964 * 2.5), rel=1e-5)
    # n=1: no SD, no interval, no star under 2024; 2018 stars any difference.
    one_b, one_n = summarise([5.0]), summarise([6.0])
    assert significance(one_b, one_n, "2024")[0] is False
    assert significance(one_b, one_n, "2018")[0] is True
    assert significance(one_b, summarise([5.0]), "2018")[0] is False


def test_rows_higher_is_better_hand_computed():
    base, new = [2.0, 4.0, 4.0], [3.0, 6.0, 6.0]
    b = summarise(base, higher=True)
    assert b["Hmean"] == pytest.approx(3.0) and summarise(new, higher=True)["Hmean"] == pytest.approx(4.5)
    assert b["BHmean-50"] == 4.0  # best-first is descending for higher-is-better
    table = mmtests.table([("tput", {"b": base, "n": new})], ["b", "n"], higher=True, rule="2018")
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    # Higher is better: pdiff = new*100/base - 100, positive = better ...
    assert rows["Hmean"].endswith("4.50 (  50.00%)")  # t=1.248, df=4, p=0.28: no star
    assert rows["Min"].endswith("3.00 (  50.00%)")
    # ... but a larger Stddev is always worse (pndiff).
    assert rows["Stddev"].endswith("1.73 ( -50.00%)")
    # 2024 with higher-is-better: HStddev = sqrt(sum((1/x - 1/H)^2) H^4 / n).
    h = summarise(base, higher=True, rule="2024")
    H = 3.0
    assert h["HStddev"] == pytest.approx(math.sqrt(sum((1 / x - 1 / H) ** 2 for x in base) * H ** 4 / 3))
    assert "HCoeffVar" in h


def test_pdiff_pndiff_conventions_and_edges():
    assert pndiff(843.16, 911.53) == pytest.approx(7.50, abs=5e-3)  # time drop -> +7.50%
    assert pdiff(51.24, 47.39) == pytest.approx(8.12, abs=1e-2)  # throughput rise -> +8.1%
    assert pdiff(5, 5) == 0 and pdiff(0, 5) == 0 and pdiff(5, 0) == 100 and pdiff(5, float("nan")) == 100
    assert pndiff(5, 5) == 0 and pndiff(0, 5) == 100 and pndiff(5, 0) == -99


def _seed_with_fake20():
    df = load_measurements(CSV)
    fake = df.filter(pl.col("variant") == "5.15-baseline").with_columns(
        pl.lit("5.15-fake20").alias("variant"), (pl.col("value") * 0.8).round(2).alias("value"))
    return pl.concat([df, fake])


def test_reference_sample_2018_lines_exactly():
    """§1.6: the seed-002 data through mmtests 93946ac6 (era A), fake20 = baseline x 0.8
    (rounded to 2 decimals, as the fabricated input was: its BAmean-95 is 605.54, not 605.55)."""
    out = mmtests.render(_seed_with_fake20(), rule="2018")
    lines = out.splitlines()
    assert lines[0].split() == ["5.15", "5.15", "5.15"] and lines[1].split() == ["baseline", "mglru", "fake20"]
    for want in [
        "Amean     Elapsed-swapon-2mr       740.78 (   0.00%)      733.42 (   0.99%)      592.62 *  20.00%*",
        "Amean     Elapsed-swapon-4mr       911.53 (   0.00%)      843.16 *   7.50%*      729.22 *  20.00%*",
        "Amean     Elapsed-swapon-8mr      1042.86 (   0.00%)      991.34 *   4.94%*      834.28 *  20.00%*",
        "BAmean-50 Elapsed-swapoff-2mr      753.16 (   0.00%)      729.96 (   3.08%)      602.53 (  20.00%)",
        "BAmean-95 Elapsed-swapoff-2mr      756.93 (   0.00%)      743.71 (   1.75%)      605.54 (  20.00%)",
        "BAmean-99 Elapsed-swapoff-2mr      756.93 (   0.00%)      743.71 (   1.75%)      605.54 (  20.00%)",
    ]:
        assert want in lines, want


def test_reference_sample_current_rule_values():
    """§1.6 (current HEAD, CI non-overlap rule): same numbers, stars only for fake20."""
    out = mmtests.render(_seed_with_fake20(), rule="2024")
    norm = [" ".join(line.split()) for line in out.splitlines()]
    for want in [
        "Min Elapsed-swapoff-2mr 742.83 ( 0.00%) 720.41 ( 3.02%) 594.26 ( 20.00%)",
        "Amean Elapsed-swapoff-2mr 758.44 ( 0.00%) 746.84 ( 1.53%) 606.75 * 20.00%*",
        "Amean Elapsed-swapon-4mr 911.53 ( 0.00%) 843.16 ( 7.50%) 729.22 * 20.00%*",
        "Amean Elapsed-swapon-8mr 1042.86 ( 0.00%) 991.34 ( 4.94%) 834.28 * 20.00%*",
        "Stddev Elapsed-swapoff-2mr 7.97 ( 0.00%) 20.50 (-157.31%) 6.37 ( 20.00%)",
        "CoeffVar Elapsed-swapoff-2mr 1.05 ( 0.00%) 2.75 (-161.30%) 1.05 ( 0.00%)",
        "Max Elapsed-swapoff-2mr 772.00 ( 0.00%) 775.00 ( -0.39%) 617.60 ( 20.00%)",
    ]:
        assert want in norm, want


def test_seed002_significance_table_both_rules():
    """§1.4's table: which seed-002 comparisons each rule stars."""
    df = load_measurements(CSV)

    def stars(by, base, rule):
        levels = [base] + [v for v in df.get_column(by).unique(maintain_order=True).to_list() if v != base]
        cols = [c for c in ("variant", "swap", "concurrency") if c != by]
        res = []
        for key in df.select(cols).unique(maintain_order=True).rows():
            sub = df
            for c, v in zip(cols, key):
                sub = sub.filter(pl.col(c) == v)
            s = [summarise(sub.filter(pl.col(by) == lv).get_column("value").to_list(), rule=rule) for lv in levels]
            res.append(significance(s[0], s[1], rule))
        return res

    a = stars("variant", "5.15-baseline", "2018")
    assert [s for s, _ in a] == [False, False, False, False, True, True]
    assert [round(p, 3) for _, p in a[:3]] == [0.113, 0.89, 0.599]
    a2 = stars("swap", "swapoff", "2018")
    assert [s for s, _ in a2] == [True, False, True, True, True, True]
    assert a2[3][1] == pytest.approx(0.0987, abs=5e-5)
    c = stars("variant", "5.15-baseline", "2024")
    assert not any(s for s, _ in c)
    assert [abs(x) for _, x in c] == pytest.approx([0.21, 0.02, 0.07, 0.17, 0.825, 0.41], abs=5.1e-3)
    c2 = stars("swap", "swapoff", "2024")
    assert [s for s, _ in c2] == [False, False, True, False, False, False]
    assert abs(c2[2][1]) == pytest.approx(1.29, abs=5e-3)


def test_vmstat_rows_reference_sample():
    """§1.6 `mmtests-vmstat` sample (fabricated deltas, elapsed 911.53 s and 843.16 s)."""
    base = {"pswpin": 110000, "pgscan_kswapd": 2000000, "pgsteal_kswapd": 1500000, "pgscan_direct": 1000,
            "pgsteal_direct": 500, "thp_fault_fallback": 250, "compact_stall": 3, "compact_success": 1,
            "compact_migrate_scanned": 200, "compact_free_scanned": 1000, "allocstall_normal": 900,
            "allocstall_movable": 0}
    new = {"pswpin": 55000, "pgscan_kswapd": 900000, "pgsteal_kswapd": 800000, "pgscan_direct": 1000,
           "pgsteal_direct": 800, "thp_fault_fallback": 100, "compact_stall": 3, "compact_success": 2,
           "compact_migrate_scanned": 120, "compact_free_scanned": 1000}
    out = mmtests.vmstat_table(["5.15-baseline", "5.15-mglru"], {"5.15-baseline": [(base, 911.53)], "5.15-mglru": [(new, 843.16)]})
    norm = {" ".join(l.split()[:-2]): l.split()[-2:] for l in out.splitlines()[2:]}
    assert norm["Ops Swap Ins"] == ["110000.00", "55000.00"]
    assert norm["Ops Kswapd efficiency %"] == ["75.00", "88.89"]
    assert norm["Ops Kswapd velocity"] == ["2194.11", "1067.41"]
    assert norm["Ops Direct efficiency %"] == ["50.00", "80.00"]
    assert norm["Ops THP fault fallback"] == ["250.00", "100.00"]
    assert norm["Ops Compaction efficiency %"] == ["33.33", "66.67"]
    assert norm["Ops Compact scan efficiency %"] == ["20.00", "12.00"]
    # The allocstall rename quirk: the last allocstall_<zone> read (movable) wins.
    assert norm["Ops Allocation stalls"] == ["0.00", "0.00"]
    rows = dict((n, v) for n, v, _ in mmtests.vmstat_rows({"compact_migrate_scanned": 800000, "compact_stall": 1}, 10))
    assert rows["Compaction cost"] == pytest.approx(5.60)
    assert rows["Compact scan efficiency"] == 1  # free scanned 0, migrate scanned > 0
    assert dict((n, v) for n, v, _ in mmtests.vmstat_rows({"compact_stall": 1}, 10))["Compact scan efficiency"] is None
    assert dict((n, v) for n, v, _ in mmtests.vmstat_rows({}, 10))["Kswapd efficiency"] == 100.0
    old = mmtests.vmstat_table(["a-x", "b-y"], {"a-x": [(base, 911.53)], "b-y": [(new, 843.16)]}, rule="2018")
    assert any(l.split() == ["Kswapd", "efficiency", "75%", "89%"] for l in old.splitlines())


def test_compare_cli_mmtests_rules():
    p18 = cli("compare", CSV, "--style", "mmtests", "--mmtests-rule", "2018")
    p24 = cli("compare", CSV, "--style", "mmtests", "--mmtests-rule", "2024")
    assert p18.returncode == 0 and p24.returncode == 0, (p18.stderr, p24.stderr)
    assert "843.16 *   7.50%*" in p18.stdout and "843.16 (   7.50%)" in p24.stdout
