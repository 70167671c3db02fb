"""THP scenarios through the CLI and the report layout (reclaimlab.thp)."""

import json
import subprocess
import sys

import pytest

thp = pytest.importorskip("reclaimlab.thp")


def test_usemem_report_layout_and_direction():
    r = thp.run_usemem(memory="256M", threads=(1,))
    assert list(r) == ["thp@4.20-rc4", "thp+gfp-thisnode-v1", "thp@5.4", "thp@5.5", "thp@6.12"]
    rep = thp.usemem_report(r)
    assert "Amean     Elapsd-1" in rep and "NUMA alloc miss" in rep and "THP fault fallback" in rep
    base, local = r["thp@4.20-rc4"][1], r["thp+gfp-thisnode-v1"][1]
    # Local-only falls back to base pages more and allocates remotely more (seed 003).
    assert local["vmstat"]["thp_fault_fallback"] > base["vmstat"]["thp_fault_fallback"]
    assert local["vmstat"]["numa_miss"] > base["vmstat"]["numa_miss"]


def test_thpscale_report_rows():
    r = thp.run_thpscale(memory="256M", threads=(1, 4))
    rep = thp.thpscale_report(r)
    for row in ("Amean     fault-base-1", "Amean     fault-huge-4", "Percentage huge-4", "Compaction stalls"):
        assert row in rep
    # The baseline column shows (   0.00%).
    assert "(   0.00%)" in rep.split("Percentage huge-1")[1].split("\n")[0]


def test_plot_thpscale(tmp_path):
    pytest.importorskip("matplotlib")
    r = thp.run_thpscale(memory="256M", threads=(1, 2))
    out = tmp_path / "t.png"
    thp.plot_thpscale(r, str(out))
    assert out.stat().st_size > 1000


def test_cli_runs_a_thp_scenario_under_the_named_reclaim_policy():
    def run(*extra):
        p = subprocess.run([sys.executable, "-m", "reclaimlab", "run", "usemem-stress-numa-compact", "--memory", "256M",
                            "--json", *extra], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    classic, mglru = run(), run("--policy", "mglru@6.15")
    assert (classic["policy"], mglru["policy"]) == ("classic@6.15", "mglru@6.15")
    pol = thp.policies()[0]
    assert classic[pol] != mglru[pol]  # the reclaim policy is really the one named
    # cache:* cannot run there: one line, exit 2
    p = subprocess.run([sys.executable, "-m", "reclaimlab", "run", "thpscale", "--policy", "cache:lru"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "folio_isolate_lru" in p.stderr


def test_cli_rejects_damo_record_for_thp_scenario(tmp_path):
    # THP scenarios run on their own machine without a DAMON recorder: refuse the flag
    # instead of ignoring it, and write nothing.
    out = tmp_path / "damon.data"
    p = subprocess.run([sys.executable, "-m", "reclaimlab", "run", "usemem-stress-numa-compact", "--damo-record", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--damo-record" in p.stderr
    assert not out.exists()
