"""The validation suites' pure logic (scripts/validate_suite.py, scripts/validate_shipped.py,
scripts/validate_tenants.py): the MGLRU-vs-classic direction, the as-shipped summary and
where its section goes, a tenants render that keeps a workload not booted. No boot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

suite = pytest.importorskip("validate_suite")
shipped = pytest.importorskip("validate_shipped")
tenants = pytest.importorskip("validate_tenants")
from reclaimlab.kernel import experiment  # noqa: E402


def row(counter, mean, sd, sim, target=0.10, comparable=True):
    err = (sim - mean) / mean if mean else (0.0 if sim == 0 else float("inf"))
    return {"counter": counter, "real_mean": float(mean), "real_sd": float(sd), "boots": 3, "sim": float(sim),
            "rel_error": err, "target": target, "met": None if target is None else abs(err) <= target,
            "comparable": comparable}


def test_direction_same_opposite_and_noise():
    d = suite.direction(row("x", 1200, 10, 1150), row("x", 1000, 10, 1000))
    assert (d["kernel"], d["model"], d["verdict"]) == (1, 1, "right")
    assert (d["kernel_diff"], d["model_diff"]) == (200, 150)
    d = suite.direction(row("x", 1200, 10, 950), row("x", 1000, 10, 1000))
    assert (d["kernel"], d["model"], d["verdict"]) == (1, -1, "wrong")
    # The kernel's difference is within its sd: no direction; the model differs: not graded.
    d = suite.direction(row("x", 1050, 80, 1100), row("x", 1000, 10, 1000))
    assert (d["kernel"], d["model"], d["verdict"]) == (0, 1, "kernel: no difference")
    # Within 1 % on both sides: neither differs, which is right.
    d = suite.direction(row("x", 1005, 0, 1004), row("x", 1000, 0, 1000))
    assert (d["kernel"], d["model"], d["verdict"]) == (0, 0, "right")
    # The kernel differs, the model does not: wrong.
    d = suite.direction(row("x", 0, 0, 0), row("x", 500, 5, 0))
    assert (d["kernel"], d["model"], d["verdict"]) == (-1, 0, "wrong")


def result(part, label, mglru, rows):
    return {"part": part, "label": label, "workload": "zipf", "mglru": mglru, "policy": "p", "boots": 3,
            "wall_s": [1.0], "rows": rows}


def test_summary_counts_figures_and_directions_per_part():
    results = [
        result("memcg", "zipf pread", "on", [row("pgpgin", 1000, 1, 1050), row("pgsteal_file", 500, 1, 600),
                                              row("pgscan_file", 900, 1, 1, target=None)]),
        result("memcg", "zipf pread", "off", [row("pgpgin", 800, 1, 790), row("pgsteal_file", 400, 1, 410),
                                               row("pgscan_file", 700, 1, 1, target=None)]),
        result("machine", "zipf pread", "on", [row("pgpgin", 1000, 1, 880),
                                                row("pgscan_kswapd", 150, 1, 200, target=0.25, comparable=False),
                                                row("pgsteal_kswapd", 100, 1, 300, target=0.25)]),
        result("machine", "zipf pread", "off", [row("pgpgin", 1200, 1, 1000),
                                                 row("pgscan_kswapd", 100, 1, 100, target=0.25),
                                                 row("pgsteal_kswapd", 100, 1, 100, target=0.25)]),
        result("machine", "seqloop", "on", [row("pgpgin", 1000, 1, 1000)]),  # no MGLRU-off partner
    ]
    s = shipped.summary(results)
    # Only headline rows of configurations with both sides, in suite order (memcg first).
    assert [(x["part"], x["counter"]) for x in s["rows"]] == [
        ("memcg", "pgpgin"), ("memcg", "pgsteal_file"),
        ("machine", "pgpgin"), ("machine", "pgscan_kswapd"), ("machine", "pgsteal_kswapd")]
    assert [x["direction"]["verdict"] for x in s["rows"]] == [
        "right", "right", "right", "right", "kernel: no difference"]
    c = s["counts"]
    # memcg: pgpgin on +5 %, off -1.3 %; pgsteal_file on +20 % (missed), off +2.5 %.
    assert c["memcg"] == {"figures": 4, "met": 3, "directions": 2, "right": 2, "ungraded": 0}
    # machine: the not comparable figure is left out; pgpgin -12 % and -16.7 %, pgsteal_kswapd +200 %.
    assert c["machine"] == {"figures": 5, "met": 2, "directions": 2, "right": 2, "ungraded": 1}
    assert c["all"] == {"figures": 9, "met": 5, "directions": 4, "right": 4, "ungraded": 1}
    text = shipped.render(results, ["whole-machine reclaim, seqloop, MGLRU off"])
    assert text.startswith(shipped.BEGIN) and text.endswith(shipped.END)
    assert "kswapd's wake-up latency" not in text  # the model's, said nowhere
    results[2]["kswapd_wakeup"] = "measured"
    assert "each wake-up draws one from the boots' traced latencies" in shipped.render(results, [])
    del results[2]["kswapd_wakeup"]
    assert "whole-machine reclaim, seqloop, MGLRU off" in text
    assert "| memcg | zipf pread | pgsteal_file | +20.0% | missed | +2.5% | met | + | + | right |" in text
    assert "| whole-machine | zipf pread | pgscan_kswapd | +33.3% | not comparable | +0.0% | met | + | + | right |" \
        in text
    assert ("| whole-machine | zipf pread | pgsteal_kswapd | +200.0% | missed | +0.0% | met | = | + | "
            "kernel: no difference |") in text
    assert "- All: 5 of 9 headline figures within the target; the MGLRU-vs-classic direction right for 4 of 4 " \
        "counters (1 more where only the model differs)." in text


def test_place_inserts_before_the_lab_section_then_replaces_in_place():
    doc = f"# V\n\nintro\n\n## Results\n\n{shipped.LAB_BEGIN}\nlab\n<!-- END GENERATED -->\n\ntail\n"
    once = shipped.place(doc, f"{shipped.BEGIN}\nA\n{shipped.END}")
    assert once == (f"# V\n\nintro\n\n{shipped.HEADER}\n\n{shipped.BEGIN}\nA\n{shipped.END}\n\n## Results\n\n"
                    f"{shipped.LAB_BEGIN}\nlab\n<!-- END GENERATED -->\n\ntail\n")
    twice = shipped.place(once.replace("intro", "edited intro"), f"{shipped.BEGIN}\nB\n{shipped.END}")
    assert twice == once.replace("intro", "edited intro").replace("\nA\n", "\nB\n")
    # The lab suite's own split still finds its block.
    head, rest = twice.split(suite.BEGIN, 1)
    assert rest.split(suite.END, 1)[0] == "\nlab\n"


def test_pinned_configs_are_the_same_boots_with_the_workload_and_kswapd_apart():
    """--pin-cpus: every configuration asks for the pinned placement (its own store key),
    and nothing else changes."""
    plain, pinned = shipped.configs(("machine",)), shipped.configs(("machine",), pin_cpus=True)
    assert [c["setup"].get("pin_cpus") for c in pinned] == [True] * len(plain)
    assert not any("pin_cpus" in c["setup"] for c in plain)
    assert [({**c["setup"], "pin_cpus": True}, c["workload"]) for c in plain] == [(c["setup"], c["workload"]) for c in pinned]


def test_held_back_configs_and_section():
    """The held-back check: classic only, one configuration per swappiness with zram and its
    swappiness in the Setup; outside the on/off summary; its own table with the kernel's and
    the model's change from the lowest swappiness to the highest."""
    held = shipped.configs(("held",))
    assert [(c["mglru"], c["setup"]["swappiness"], c["setup"]["swap"]) for c in held] == [
        ("off", 30, "zram:128M"), ("off", 120, "zram:128M")]
    assert all(c["workload"] == f"trace:path={shipped.MIXED_TRACE}" for c in held)
    lo = {**result("held", "mixed 30", "off", [row("pgsteal_anon", 5000, 500, 4500, target=0.25),
                                                 row("pgsteal_file", 30000, 500, 30000)]),
          "settings": {"vm.swappiness": "30"}}
    hi = {**result("held", "mixed 120", "off", [row("pgsteal_anon", 13000, 500, 13500, target=0.25),
                                                  row("pgsteal_file", 20000, 100, 19000)]),
          "settings": {"vm.swappiness": "120"}}
    assert shipped.summary([hi, lo])["rows"] == []
    text = "\n".join(shipped.held_section([hi, lo]))
    assert "| pgsteal_anon | 5,000 ± 500 | 4,500 | -10.0% | 13,000 ± 500 | 13,500 | +3.8% | 2.60 | 3.00 |" in text
    assert "| pgsteal_file | 30,000 ± 500 | 30,000 | +0.0% | 20,000 ± 100 | 19,000 | -5.0% | 0.67 | 0.63 |" in text
    assert "| pgmajfault | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |" in text
    assert shipped.held_section([]) == []


def test_tenants_render_keeps_the_previous_rows_of_a_workload_not_booted(tmp_path):
    """A full render of the tenants block with results for one workload only: the other
    keeps its section of the previous render, its cells are counted as they stand, and the
    summary line names it."""
    import json

    workloads = [("a1", "first", None, {}), ("b2", "second", None, {})]
    for mode in ("on", "off"):
        res = {"kernel": "6.12.117", "boots": 3, "policy": f"p-{mode}",
               "rows": [row("pgpgin", 1000, 5, 1050), row("pgmajfault", 0, 0, 0)]}
        (tmp_path / f"b2-mglru-{mode}.json").write_text(json.dumps(res))
    before = "\n".join([
        "9 of 9 graded cells met.", "",
        "**first** (`a1`; kernel 6.12.117; kernel mean ± sd over 3 boots / simulated (error), ✓/✗ against the target)", "",
        "| table | counter | MGLRU on (p) | MGLRU off (q) |", "|---|---|---|---|",
        "| vmstat | pgpgin | 1,000 ± 3 / 1,500 (+50%) ✗ | 2,000 ± 1 / 2,010 (+0%) ✓ |",
        "| vmstat | pgmajfault | 0 ± 0 / 0 (—) ✓ | |", "",
        "**second** (`b2`; kernel 6.12.117; old rows)", "", "| table | counter |", "|---|---|", "| vmstat | x | 1 ± 0 / 9 (+800%) ✗ |", ""])
    kept = tenants.old_sections(before)
    assert set(kept) == {"a1", "b2"} and kept["a1"].endswith("| vmstat | pgmajfault | 0 ± 0 / 0 (—) ✓ | |")
    assert tenants.tally(kept["a1"]) == (2, 3, 1)
    block = tenants.render(tmp_path, workloads, kept)
    assert block.startswith("6 of 7 graded cells met, 3 of them zero on both sides")
    assert "Not booted for this render, their rows as rendered before: `a1`." in block
    assert "kswapd's wake-up latency" not in block
    assert kept["a1"] in block and "old rows" not in block  # b2 rendered anew
    # Results simulated with the boots' wake-up latencies say so.
    for mode in ("on", "off"):
        p = tmp_path / f"b2-mglru-{mode}.json"
        p.write_text(json.dumps({**json.loads(p.read_text()), "kswapd_wakeup": "measured"}))
    assert "(`@@kswapd_wake`, wakeup_kswapd to kswapd's pass; their quantiles" in tenants.render(tmp_path, workloads, kept)
    assert block.index("`a1`") < block.index("`b2`")


def test_tenants_render_keeps_the_other_mode_of_a_workload_booted_one_way(tmp_path):
    """Results for MGLRU off only: the MGLRU on column keeps its previous cells (counted),
    beside the new off column, row by row; the summary line names the kept column."""
    import json

    (tmp_path / "a1-mglru-off.json").write_text(json.dumps(
        {"kernel": "6.12.117", "boots": 3, "policy": "q", "rows": [row("pgpgin", 1000, 5, 1300), row("pswpin", 10, 1, 10)]}))
    before = "\n".join([
        "**first** (`a1`; old)", "",
        "| table | counter | MGLRU on (p) | MGLRU off (q) |", "|---|---|---|---|",
        "| vmstat | pgpgin | 1,000 ± 3 / 1,050 (+5%) ✓ | 2,000 ± 1 / 2,010 (+0%) ✓ |",
        "| vmstat | slabs | 7 ± 0 / 0 (-100%) |  |", ""])
    block = tenants.render(tmp_path, [("a1", "first", None, {})], tenants.old_sections(before))
    lines = block.splitlines()
    assert lines[0].startswith("2 of 3 graded cells met, 0 of them zero") and lines[0].endswith("`a1` MGLRU on.")
    assert "| table | counter | MGLRU on (p) | MGLRU off (q) |" in lines
    assert "| vmstat | pgpgin | 1,000 ± 3 / 1,050 (+5%) ✓ | 1,000 ± 5 / 1,300 (+30%) ✗ |" in lines
    assert "| vmstat | slabs | 7 ± 0 / 0 (-100%) |  |" in lines
    assert "| vmstat | pswpin |  | 10 ± 1 / 10 (+0%) ✓ |" in lines


def test_whole_machine_boots_are_simulated_each_from_its_own_start_layout(tmp_path, monkeypatch):
    """Without a memory.max the start layout decides the fallbacks and differs per boot: one
    simulation per boot, from that boot's layout and at its wall time, compared by their mean;
    under a memory.max one simulation from the first boot's. zram's ratio comes from the
    consoles (the pool as measured now), not the ratio stored with the boots."""
    from types import SimpleNamespace

    (tmp_path / "results.sqlite").touch()
    boots = [{"config": {"kernel.release": "6.12.117+deb12-amd64", "policy": "classic@6.15"},
              "metrics": {"wall_s": w, "zram.compression_ratio": 7.0},
              "vmstat": {"pgpgin": 100, "pgsteal_kswapd": 10}} for w in (2.0, 4.0)]
    layouts = iter(["A", "B", "A", "B"])
    monkeypatch.setattr(suite.store, "load_boots", lambda out, params: boots)
    monkeypatch.setattr(suite, "boot_console", lambda out, b: SimpleNamespace(layouts={}, name=next(layouts),
                                                                                   zram_ratio=lambda: 5.5))
    monkeypatch.setattr(suite, "held_settings", lambda layout: {})
    monkeypatch.setattr(suite, "start_layout_settings", lambda c, s: {"machine.start_layout": c.name})
    monkeypatch.setattr(experiment, "boot_machine_settings", lambda c, s: {"machine.start_layout": c.name})
    calls = []

    def simulate(wl, settings, tmp, wall, wakeup_wall_ns=None):
        calls.append((settings.get("machine.start_layout"), wall))
        assert settings["swap.zram.compression_ratio"] == "5.500"
        steal = {"A": 8, "B": 12}[settings["machine.start_layout"]]
        return {"vmstat": {"pgpgin": 100, "pgsteal_kswapd": steal}, "metrics": {"extfrag_steals": steal},
                "config": {"sim.time_dilation": "1"}}

    monkeypatch.setattr(suite, "simulate", simulate)
    machine = {"part": "machine", "label": "m", "workload": "seqloop:pages=4096", "mglru": "off",
               "setup": {"memory": "none", "guest_mb": 256}}
    [r] = suite.evaluate_configs(tmp_path, [machine])
    assert calls == [("A", 2.0), ("B", 4.0)] and r["sim_runs"] == 2
    assert {x["counter"]: x["sim"] for x in r["rows"]}["pgsteal_kswapd"] == 10.0  # the mean of 8 and 12
    assert r["sim_metrics"]["extfrag_steals"] == 10.0
    calls.clear()
    memcg = {**machine, "setup": {"memory": "64M", "guest_mb": 512}}
    [r] = suite.evaluate_configs(tmp_path, [memcg])
    assert calls == [("A", 3.0)] and r["sim_runs"] == 1
