"""`reclaimlab compare --json` and `reclaimlab.stats.comparisons`: the document validates
against its published schema, says where it came from, and carries the same tests the
text prints (issue 21 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PINNED, cli

jsonschema = pytest.importorskip("jsonschema")

import reclaimlab.stats as stats_pkg  # noqa: E402
from reclaimlab.stats import comparisons  # noqa: E402
from reclaimlab.stats.frame import SCHEMA_PATH  # noqa: E402

CSV = Path(stats_pkg.__file__).parent / "data" / "seed002.csv"


def doc(*args, env=None):
    """`reclaimlab compare ARGS --json` (in this process: seconds, not a start-up each),
    validated against the schema: (document, its text)."""
    import contextlib
    import io
    import os

    from reclaimlab.cli import main

    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            assert main(["compare", *map(str, args), "--json"]) == 0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = buf.getvalue()
    assert len(text.strip().splitlines()) == 1
    d = json.loads(text)
    jsonschema.validate(d, json.loads(SCHEMA_PATH.read_text()))
    return d, text


def test_seed002_json_validates_and_carries_rs_numbers():
    d, _ = doc(CSV)
    assert d["schema"] == "reclaimlab.compare/1" and d["source"]["kind"] == "csv"
    assert set(d["provenance"]) == {"reclaimlab", "git_commit", "date"} and d["provenance"]["reclaimlab"]
    assert d["noise"]["model"] is None and "as measured" in d["noise"]["text"]
    w = {t["comparison"]: t for t in d["welch"]}
    assert len(w) == 6
    # Table 1 of seed 002: significant only with swap on at 4 and 8 tasks per 4 CPUs.
    assert {k for k, t in w.items() if t["verdict"] == "significant"} == {"swapon 4mr", "swapon 8mr"}
    t = w["swapon 4mr"]
    assert (round(t["t"], 3), round(t["df"], 3)) == (7.204, 17.538)
    assert [round(x, 5) for x in t["conf_int"]] == [48.39677, 88.35323]
    assert [f"{x:.2f}" for x in t["change_pct"]] == ["-9.69", "-5.31"]
    # Every mmtests row: 8 statistics x 6 ops x 2 columns; the stars of rule 2018.
    rows = d["mmtests"]["rows"]
    assert len(rows) == 8 * 6 * 2
    # Rule 2018 stars 7 of the 12 comparisons of both tables (docs/experiments.md).
    stars = sum(r["significant"] for b in ([], ["--baseline", "swap=swapoff"])
                for r in doc(CSV, "--mmtests-rule", "2018", *b)[0]["mmtests"]["rows"])
    assert stars == 7


def test_json_of_table2_and_the_dataframe_agree():
    d, _ = doc(CSV, "--baseline", "swap=swapoff")
    df = comparisons(CSV, baseline="swap=swapoff")
    assert df.height == len(d["welch"]) == 6
    assert df.get_column("verdict").to_list() == [t["verdict"] for t in d["welch"]]
    assert df.get_column("p").to_list() == [t["p"] for t in d["welch"]]
    assert {"comparison", "variant", "concurrency", "baseline", "other", "t", "df", "p", "ci_low", "ci_high",
            "change_low_pct", "change_high_pct", "verdict"} <= set(df.columns)
    # Seed 002's Table 2: 4 of 6 significant (kern1 mr2 and kern2 mr1 are not).
    assert df.filter(df["verdict"] == "significant").height == 4


def test_constant_data_json_is_rs_error(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("variant,value\n" + "a,5.0\n" * 4 + "b,6.0\n" * 4)
    d, _ = doc(csv)
    (t,) = d["welch"]
    assert t["verdict"] == "no test" and t["error"] == "data are essentially constant"
    assert t["t"] is None and t["p"] is None and t["conf_int"] == [None, None]
    assert t["baseline"]["mean"] == 5.0 and t["other"]["mean"] == 6.0


def test_pinned_date_gives_identical_bytes():
    a, ta = doc(CSV, env=PINNED)
    b, tb = doc(CSV, env=PINNED)
    assert ta == tb and a["provenance"]["date"] == "2023-11-14T22:13:20Z"


FAKE_EXTRACT = """#!{python}
# A stand-in for mmtests' bin/extract-mmtests.pl --print-json: seed 002's wall times of
# the kernel named by -n, as an Extract module's _ResultData (one iteration per op).
import csv, json, sys
args = sys.argv[1:]
kernel, bench = args[args.index("-n") + 1], args[args.index("-b") + 1]
assert "--print-json" in args and bench == "hadoop", args
data = {{}}
for row in csv.DictReader(open({csv!r})):
    if row["variant"] == kernel:
        op = "Elapsed-" + row["swap"] + "-" + row["concurrency"]
        data.setdefault(op, [{{"SampleNrs": [], "Values": []}}])
        data[op][0]["SampleNrs"].append(len(data[op][0]["Values"]))
        data[op][0]["Values"].append(float(row["value"]))
print(json.dumps({{"_ModuleName": "ExtractHadoop", "_TestName": kernel, "_ResultData": data}}))
"""


def test_mmtests_result_tree_goes_through_the_same_comparison(tmp_path):
    import sys

    tree = tmp_path / "mmtests"
    for k in ("5.15-baseline", "5.15-mglru"):
        (tree / "work" / "log" / k / "iter-0" / "hadoop" / "logs").mkdir(parents=True)
    tool = tree / "bin" / "extract-mmtests.pl"
    tool.parent.mkdir()
    tool.write_text(FAKE_EXTRACT.format(python=sys.executable, csv=str(CSV)))
    tool.chmod(0o755)
    from conftest import assert_user_error

    assert_user_error(cli("compare", tree, env_extra={"MMTESTS": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"}),
                      "extract-mmtests.pl", "MMTESTS")
    d, _ = doc(tree, env={"MMTESTS": str(tree)})
    assert d["metric"] == "hadoop" and d["baseline"] == "5.15-baseline"
    w = {t["group"]["op"]: t for t in d["welch"]}
    assert len(w) == 6 and w["Elapsed-swapon-4mr"]["verdict"] == "significant"
    assert round(w["Elapsed-swapon-4mr"]["t"], 3) == 7.204  # R's, as from the CSV
    csv_doc, _ = doc(CSV)
    assert sorted(t["p"] for t in d["welch"]) == sorted(t["p"] for t in csv_doc["welch"])


def test_mmtests_ops_keep_an_order_a_perl_hash_does_not():
    from reclaimlab.stats.mmtests_dir import from_modules

    mod = {"_TestName": "k", "_GeneratedOperations": [],
           "_ResultData": {f"Elapsed-{n}": [{"SampleNrs": [1], "Values": [float(n)]}] for n in (10, 2, 8)}}
    ops = from_modules([mod], "kernbench").get_column("op").to_list()
    assert ops == ["Elapsed-2", "Elapsed-8", "Elapsed-10"]
    mod["_Operations"] = ["Elapsed-8", "Elapsed-10", "Elapsed-2"]  # the module's own order wins
    assert from_modules([mod], "kernbench").get_column("op").to_list() == mod["_Operations"]
