"""`reclaimlab run --set damon_reclaim.enabled=Y` on the default scenario (issue 18, item 4):
the module's kernel defaults cannot act there, and the run must say why on stderr; with
the suggested settings it pages memory out and its counters are in the report."""

from __future__ import annotations

import json

from reclaimlab.cli.run import damon_reclaim_warnings

from conftest import cli

ON = ("--set", "damon_reclaim.enabled=Y")


def warnings_of(p) -> list[str]:
    return [ln for ln in p.stderr.splitlines() if ln.startswith("reclaimlab: warning: ")]


def test_defaults_on_the_default_scenario_warn_with_the_causes():
    p = cli("run", "--policy", "classic@6.15", *ON, "--json", "-q")
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)["metrics"]
    # The counters are reported, and show that nothing was tried.
    for k in ("nr_reclaim_tried_regions", "bytes_reclaim_tried_regions", "nr_reclaimed_regions",
              "bytes_reclaimed_regions", "nr_quota_exceeds", "damon_nr_samples"):
        assert k in m, k
    assert m["bytes_reclaim_tried_regions"] == 0
    w = warnings_of(p)
    assert len(w) == 2, p.stderr
    # 512 MiB holding a 1 GiB workload: free memory is below wmarks_low (200 ‰) all along.
    assert "damon_reclaim.wmarks_low (200 ‰)" in w[0] and "--set damon_reclaim.wmarks_low=0" in w[0]
    assert m["damon_nr_samples"] == 0 and m["damon_wmarks_below_low"] > 0
    # And the 120 s pageout age exceeds the run.
    assert f"damon_reclaim.min_age (120 s) is longer than the run ({m['runtime_s']:.1f} s)" in w[1]
    assert "--set damon_reclaim.min_age=5000000" in w[1]


def test_suggested_settings_make_it_page_out_without_a_warning():
    p = cli("run", "--policy", "classic@6.15", *ON, "--set", "damon_reclaim.wmarks_low=0",
            "--set", "damon_reclaim.min_age=5000000", "--json", "-q")
    assert p.returncode == 0, p.stderr
    assert warnings_of(p) == [], p.stderr
    m = json.loads(p.stdout)["metrics"]
    assert m["damon_nr_samples"] > 0
    assert m["bytes_reclaimed_regions"] > 0 and m["nr_reclaimed_regions"] > 0
    assert m["bytes_reclaim_tried_regions"] >= m["bytes_reclaimed_regions"]


def test_text_report_lists_the_counters():
    p = cli("run", "--policy", "classic@6.15", *ON, "--set", "damon_reclaim.wmarks_low=0",
            "--set", "damon_reclaim.min_age=5000000", "-q")
    assert p.returncode == 0, p.stderr
    for k in ("nr_reclaim_tried_regions", "bytes_reclaimed_regions", "nr_quota_exceeds", "damon_cpu_pct"):
        assert f"  {k} " in p.stdout, k


def test_warning_rules():
    cfg = {"damon_reclaim.enabled": "Y", "damon_reclaim.min_age": "120000000",
           "damon_reclaim.wmarks_low": "200", "damon_reclaim.wmarks_high": "500"}
    # Off, or something tried: nothing to explain.
    assert damon_reclaim_warnings({**cfg, "damon_reclaim.enabled": "N"}, {"runtime_s": 10}) == []
    assert damon_reclaim_warnings(cfg, {"runtime_s": 10, "bytes_reclaim_tried_regions": 4096}) == []
    # Free memory above the high mark the whole run (an idle machine).
    w = damon_reclaim_warnings({**cfg, "damon_reclaim.min_age": "1000000"},
                               {"runtime_s": 10, "damon_nr_samples": 0, "damon_wmarks_above_high": 3})
    assert len(w) == 1 and "above damon_reclaim.wmarks_high (500 ‰)" in w[0]
    # Sampled, but the run is shorter than the age: only the min_age line; a short run
    # gets a quarter of its length as the hint.
    w = damon_reclaim_warnings(cfg, {"runtime_s": 2.0, "damon_nr_samples": 400})
    assert len(w) == 1 and "min_age (120 s) is longer than the run (2.0 s)" in w[0]
    assert w[0].endswith("--set damon_reclaim.min_age=500000")
    # An age within the run that still found nothing old enough is not explained here.
    assert damon_reclaim_warnings({**cfg, "damon_reclaim.min_age": "1000000"}, {"runtime_s": 10, "damon_nr_samples": 400}) == []
