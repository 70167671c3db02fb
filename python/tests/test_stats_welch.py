"""Seed 002's raw data through `reclaimlab compare --style welch` reproduces every number
the seed's R script printed: t, df, p-value, CI, means and the twelve result lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import cli

pytest.importorskip("scipy")

import reclaimlab.stats as stats_pkg  # noqa: E402
from reclaimlab.stats import load_measurements, welch  # noqa: E402
from reclaimlab.stats.rformat import format_pval, format_r  # noqa: E402

DATA = Path(stats_pkg.__file__).parent / "data"
CSV = DATA / "seed002.csv"

# The seed's R labels -> ours (configuration values of the CSV).
SWAP = {"1": "swapoff", "2": "swapon"}
MR = {"1": "2mr", "2": "4mr", "3": "8mr"}
KERN = {"1": "5.15-baseline", "2": "5.15-mglru"}


def seed_blocks() -> list[str]:
    """The seed's twelve R outputs (whitespace-collapsed, as published), data line removed
    and the result label translated to our configuration names."""
    out = []
    for line in (DATA / "seed002-R-output.txt").read_text().splitlines():
        line = re.sub(r"data: .*? and a\[[^\]]*\] ", "", line)
        line = re.sub(r'"swap(\d) mr(\d):', lambda m: f'"{SWAP[m[1]]} {MR[m[2]]}:', line)
        line = re.sub(r'"kern(\d) mr(\d):', lambda m: f'"{KERN[m[1]]} {MR[m[2]]}:', line)
        out.append(line)
    return out


def our_blocks(stdout: str) -> list[str]:
    blocks = stdout.split("Welch Two Sample t-test")[1:]
    out = []
    for b in blocks:
        m = re.search(r'^\[1\] ".*"$', b, re.M)  # up to the [1] "..." line (the table follows the last)
        b = b[: m.end()] if m else b
        b = "Welch Two Sample t-test " + " ".join(b.split())
        b = re.sub(r"data: .*? t = ", "t = ", b)
        out.append(b)
    return out


def test_seed002_csv_is_the_seeds_raw_data():
    df = load_measurements(CSV)
    assert df.height == 120
    assert df.columns == ["metric", "variant", "swap", "concurrency", "repetition", "value"]
    # R's array(v, dim = c(10, 3, 2, 2)) is column-major: v[i + 10 mr + 30 swap + 60 kern].
    assert df.row(0)[-1] == 742.83 and df.row(119)[-1] == 1040.00
    first = df.filter((df["variant"] == "5.15-mglru") & (df["swap"] == "swapon") & (df["concurrency"] == "4mr"))
    assert first.get_column("value").to_list()[:2] == [813.33, 819.00]


def test_compare_welch_reproduces_table1_tests():
    p = cli("compare", CSV, "--style", "welch")
    assert p.returncode == 0, p.stderr
    expected = seed_blocks()[:6]
    got = our_blocks(p.stdout)
    assert got == expected


def test_compare_welch_reproduces_table2_tests():
    p = cli("compare", CSV, "--style", "welch", "--baseline", "swap=swapoff")
    assert p.returncode == 0, p.stderr
    assert our_blocks(p.stdout) == seed_blocks()[6:]


def test_all_twelve_result_lines():
    lines = []
    for args in ([], ["--baseline", "swap=swapoff"]):
        p = cli("compare", CSV, *args)
        lines += re.findall(r'^\[1\] "(.*)"$', p.stdout, re.M)
    assert lines == [
        "swapoff 2mr: no significance", "swapoff 4mr: no significance", "swapoff 8mr: no significance",
        "swapon 2mr: no significance", "swapon 4mr: [-9.69, -5.31]%", "swapon 8mr: [-7.86, -2.02]%",
        "5.15-baseline 2mr: [-3.39, -1.27]%", "5.15-baseline 4mr: no significance",
        "5.15-baseline 8mr: [10.69, 15.73]%", "5.15-mglru 2mr: no significance",
        "5.15-mglru 4mr: [-9.34, -5.39]%", "5.15-mglru 8mr: [2.52, 10.78]%",
    ]


def test_tables_match_the_seeds_tables():
    """Table 1 and Table 2 of the seed: means and CIs of (y - x), truncated to 2 decimals."""
    p1 = cli("compare", CSV).stdout
    for cell in ["758.43 / 746.83", "[-26.80, 3.60]", "740.78 / 733.42", "[-18.07, 3.35]", "911.81 / 910.19",
                 "[-26.70, 23.46]", "911.53 / 843.15", "[-88.35, -48.39]", "921.17 / 929.51", "[-25.50, 42.18]",
                 "1042.85 / 991.33", "[-81.94, -21.08]"]:
        assert cell in p1, cell
    p2 = cli("compare", CSV, "--baseline", "swap=swapoff").stdout
    for cell in ["758.43 / 740.78", "[-25.67, -9.64]", "746.83 / 733.42", "[-29.80, 2.97]", "911.81 / 911.53",
                 "[-26.62, 26.06]", "910.19 / 843.15", "[-84.98, -49.09]", "921.17 / 1042.85", "[98.51, 144.85]",
                 "929.51 / 991.33", "[23.43, 100.21]"]:
        assert cell in p2, cell


def test_percent_line_rule_is_the_seeds():
    df = load_measurements(CSV)
    res = welch.compare(df)
    w = res[4]  # swapon 4mr
    assert w.ci == pytest.approx((48.39677, 88.35323), abs=5e-6)
    assert w.pct == pytest.approx((48.39677 * 100 / 911.531, 88.35323 * 100 / 911.531), rel=1e-6)
    assert welch.percent_line(w) == "swapon 4mr: [-9.69, -5.31]%"
    assert not res[0].significant and res[4].significant


@pytest.mark.parametrize("value,digits,text", [
    (1.66774, 5, "1.6677"), (0.0229, 5, "0.0229"), (17.1, 5, "17.1"), (11.6584, 5, "11.658"),
    (12.32, 5, "12.32"), (0.122, 4, "0.122"), (1.229e-06, 4, "1.229e-06"), (0.0002153, 4, "0.0002153"),
    (5.874e-09, 4, "5.874e-09"), (100000.0, 7, "1e+05"), (123456.0, 7, "123456"), (0.0, 7, "0"),
])
def test_r_format(value, digits, text):
    assert format_r(value, digits) == [text]


def test_r_format_vector_common_decimals_and_pval():
    assert format_r([-3.604753, 26.806753], 7) == ["-3.604753", "26.806753"]
    assert format_r([740.78, 733.421], 7) == ["740.780", "733.421"]
    assert format_r([-144.8574, -98.5126], 7) == ["-144.8574", " -98.5126"]
    assert format_pval(1e-20) == "< 2.2e-16"


def test_csv_errors_are_user_errors(tmp_path):
    from conftest import assert_user_error

    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    assert_user_error(cli("compare", bad), "missing column")
    assert_user_error(cli("compare", CSV, "--baseline", "nosuch"), "nosuch")
    assert_user_error(cli("compare", CSV, "--metric", "tps"), "tps")


def test_constant_data_is_rs_error_not_a_test(tmp_path):
    # R: t.test(rep(911.8, 10), rep(843.2, 10)) stops with "data are essentially constant"
    # (stderr < 10 eps max|mean|): no t, no p-value, no interval.
    csv = tmp_path / "const.csv"
    rows = ["variant,value"] + [f"base,{911.8}"] * 10 + [f"new,{843.2}"] * 10
    csv.write_text("\n".join(rows) + "\n")
    p = cli("compare", csv)
    assert p.returncode == 0, p.stderr
    assert "Error in t.test.default(x, y) : data are essentially constant" in p.stdout
    assert "confidence interval" not in p.stdout and "p-value" not in p.stdout
    assert '"new vs base: no test (data are essentially constant)"' in p.stdout
    assert "(constant)" in p.stdout and "e-1" not in p.stdout
    w = welch.welch([911.8] * 10, [843.2] * 10)
    assert w.error == "data are essentially constant" and not w.significant
    # Just above R's threshold the test runs, as in R (t = -1, df = 9, p-value = 0.3434).
    w = welch.welch([1.1] * 10, [1.1] * 9 + [1.1000000001])
    assert w.error is None and "t = -1, df = 9, p-value = 0.3434" in welch.r_output(w)
    assert welch.welch([1.0, 2.0], [3.0]).error == "not enough 'y' observations"


def test_sample_sd_of_constant_data_is_zero():
    from reclaimlab.stats import sample_sd

    assert sample_sd([1.1] * 10) == 0.0
    assert sample_sd([1.0, 2.0, 3.0]) == 1.0
    assert sample_sd([5.0]) != sample_sd([5.0])  # NaN below two values


def test_table_says_which_side_is_which():
    out = cli("compare", CSV, "--baseline", "swap=swapoff").stdout
    caption = out[out.rindex("Each cell:"):]
    assert " ".join(caption.split()) == "Each cell: mean swapoff / mean swapon, and the 95% CI of mean swapon - mean swapoff."
    assert max(len(line) for line in caption.splitlines()) <= 80
