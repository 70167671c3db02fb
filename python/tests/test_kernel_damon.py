"""DAMON_RECLAIM in the guest (reclaimlab.kernel.damon, the hotcold workload, guest/wl.c's
SLEEP op, guest/init.sh's DAMON setup): parameters checked before anything boots, how the
guest is told to run it, what it prints parsed back, the kernel-vs-simulator comparison,
and two real boots: the module's scheme through sysfs reclaims idle memory; 6.12's module
itself does not (it drops its scheme, docs/kernel.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import reclaimlab
from reclaimlab.kernel import GuestError, KernelError, console, damon, damon_compare, guest, initramfs, run
from reclaimlab.kernel.experiment import key_of
from reclaimlab.kernel.ops import OP_PHASE, OP_SLEEP, op_words, write_ops, write_sim_trace
from reclaimlab.kernel.run import Setup, prepare
from reclaimlab.kernel.workload import build

from conftest import FAKE_RELEASE as REL, assert_user_error, cli, fake_kernel

KEEP_ACTIVE = "wmarks_high=1000,wmarks_mid=999,wmarks_low=0"


@pytest.fixture
def offline(tmp_path, monkeypatch):
    return fake_kernel(tmp_path, monkeypatch, "CONFIG_MEMCG=y\nCONFIG_LRU_GEN=y\nCONFIG_ZRAM=m\n"
                                               "CONFIG_DAMON=y\nCONFIG_DAMON_RECLAIM=y\n")


# ---------------------------------------------------------------- parameters

def test_parameters_are_parsed_in_kernel_units():
    assert damon.parse("min_age=2000000, quota_ms=0,skip_anon=y") == {"min_age": "2000000", "quota_ms": "0",
                                                                      "skip_anon": "Y"}
    assert damon.parse("") == {}


@pytest.mark.parametrize("text,needle", [
    ("bogus=1", "bogus: not a parameter"),
    ("nr_quota_exceeds=1", "read-only statistic"),
    ("enabled=Y", "set by reclaimlab"),
    ("min_age=2s", "min_age=2s: expected an unsigned integer"),
    ("min_age", "expected KEY=VALUE"),
    ("skip_anon=maybe", "expected Y or N"),
])
def test_bad_parameters_are_named(text, needle):
    with pytest.raises(KernelError, match=needle):
        damon.parse(text)


def test_the_kernels_checks_name_the_key():
    with pytest.raises(KernelError, match="damon_reclaim.wmarks_mid"):
        damon.check(damon.parse("wmarks_low=500"), 512 << 20)  # low > mid (400)
    with pytest.raises(KernelError, match="monitor_region_end=0x40000000 is outside the guest's RAM"):
        damon.check(damon.parse("monitor_region_start=4096,monitor_region_end=1073741824"), 512 << 20)
    damon.check(damon.parse("monitor_region_start=1048576,monitor_region_end=268435456"), 512 << 20)


def test_the_interface_follows_the_kernel_version():
    assert damon.interface_for("6.12.117+deb12-amd64", None) == "sysfs"  # the module drops its scheme
    assert damon.interface_for("6.11.0-1-amd64", None) == "sysfs"
    assert damon.interface_for("6.1.0-26-amd64", None) == "module"
    assert damon.interface_for("6.17.1", None) == "module"
    assert damon.interface_for("6.12.117+deb12-amd64", "module") == "module"
    with pytest.raises(KernelError, match="must be module or sysfs"):
        damon.interface_for(REL, "debugfs")


def test_parameters_reach_the_kernel_command_line(offline):
    p = prepare(Setup(workload="hotcold:duration_s=1", memory="none", damon_reclaim=f"min_age=500000,{KEEP_ACTIVE}"))
    args = p.append.split()
    assert "damon_reclaim.min_age=500000" in args and "damon_reclaim.wmarks_mid=999" in args
    assert "lab.damon=sysfs" in args and "lab.sample=1" not in args
    assert not any(a.startswith("damon_reclaim.enabled") for a in args)  # /init enables it at the start
    plain = prepare(Setup(workload="hotcold:duration_s=1", memory="none"))
    assert not any("damon" in a for a in plain.append.split())
    sampled = prepare(Setup(workload="hotcold:duration_s=1", memory="none", sample=True))
    assert "lab.sample=1" in sampled.append.split()
    keys = [key_of(s, prepare(s)) for s in (Setup(workload="hotcold:duration_s=1", memory="none"),
                                              Setup(workload="hotcold:duration_s=1", memory="none", damon_reclaim=""),
                                              Setup(workload="hotcold:duration_s=1", memory="none",
                                                    damon_reclaim="min_age=500000"))]
    assert len({tuple(sorted(k.items())) for k in keys}) == 3
    assert keys[1]["damon_reclaim"] == "sysfs:defaults"


def test_a_kernel_without_damon_reclaim_is_refused(offline, monkeypatch):
    offline.config.pop("CONFIG_DAMON_RECLAIM")
    with pytest.raises(KernelError, match="does not have DAMON_RECLAIM built in"):
        prepare(Setup(workload="hotcold:duration_s=1", memory="none", damon_reclaim=""))


@pytest.mark.parametrize("value,needle", [
    ("bogus=1", "--damon-reclaim: bogus: not a parameter"),
    ("wmarks_low=500", "damon_reclaim.wmarks_mid"),
    ("monitor_region_start=0,monitor_region_end=8589934592", "outside the guest's RAM"),
])
def test_bad_parameters_are_one_line_errors_before_anything_boots(tmp_path, value, needle):
    for command in ("kernel run", "validate"):
        p = cli(*command.split(), "hotcold:duration_s=1", "--memory-max", "none", "--damon-reclaim", value,
                "--out-dir", tmp_path / "out")
        assert_user_error(p, needle)
        assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- what the guest prints

LOG = ("@@boot 6.12.117+deb12-amd64 2.9\n@@damon_reclaim interface sysfs\n@@sample 4.0 0 0\n"
       "@@pfns 3 10 10 20 30 30\n@@sample 4.5 1000 0\n@@sample 5.0 1000 0\n@@sample 5.5 600 400\n@@sample 6.0 600 400\n"
       "@@phase 0 1\n@@phase-end 0\n@@done 0\n@@sample 6.1 8 400\n@@damon_reclaim kdamond_ticks 20\n"
       "@@damon_reclaim min_age 500000\n@@damon_reclaim nr_reclaim_tried_regions 7\n"
       "@@damon_reclaim bytes_reclaim_tried_regions 9000\n@@damon_reclaim nr_reclaimed_regions 2\n"
       "@@damon_reclaim bytes_reclaimed_regions 400\n@@damon_reclaim nr_quota_exceeds 1\n@@exit 0\n")


def test_the_console_gives_statistics_and_the_footprint():
    c = console.parse(LOG)
    assert c.finished and c.damon_reclaim["interface"] == "sysfs" and c.pfns == [3, 10, 10, 20, 30, 30]
    assert damon_compare.guest_stats(c) == {"nr_reclaim_tried_regions": 7, "bytes_reclaim_tried_regions": 9000,
                                    "nr_reclaimed_regions": 2, "bytes_reclaimed_regions": 400, "nr_quota_exceeds": 1}
    ts, vs = damon_compare.guest_footprint(c)  # the sample after the workload exited is left out
    assert ts == [0.0, 0.5, 1.0, 1.5, 2.0] and vs == [0, 1000, 1000, 600, 600]
    # trapezoids of 0.5 s: (500 + 2000 + 1600 + 1200) / 2 * 0.5 over 2.0 s
    assert damon_compare.time_average(ts, vs) == pytest.approx(662.5 + 62.5)
    assert damon_compare.time_average([0.0], [5.0]) is None
    assert damon_compare.curve(ts, vs, points=4) == [[0.0, 0.0], [0.25, 1000.0], [0.5, 1000.0], [0.75, 600.0], [1.0, 600.0]]
    assert damon_compare.curve(ts, vs, points=8)[1] == [0.125, 500.0]  # halfway up the first step
    assert damon_compare.saving(725.0, 1450.0) == pytest.approx(50.0)
    assert damon_compare.saving(None, 1.0) is None


TRACE = """\
       kdamond.0-185     [000] .....    12.854571: damon_aggregated: target_id=0 nr_regions=3 1048576-46161920: 0 32
       kdamond.0-185     [000] .....    12.855116: damon_aggregated: target_id=0 nr_regions=3 46161920-47161920: 3 2
       kdamond.0-185     [001] .....    12.855130: damon_aggregated: target_id=0 nr_regions=3 47161920-536727552: 12 0
       kdamond.0-185     [001] .....    12.959195: damon_aggregated: target_id=0 nr_regions=2 1048576-2097152: 20 1
       kdamond.0-185     [001] .....    12.959199: damon_aggregated: target_id=0 nr_regions=2 2097152-536727552: 0 7
"""


def _snapshot_awk() -> str:
    """The awk program guest/init.sh runs over the damon_aggregated tracepoint."""
    text = initramfs.INIT.read_text()
    body = text.split("awk -v max=", 1)[1].split("' $DT/trace", 1)[0]
    return body.split("'", 1)[1]


@pytest.mark.skipif(shutil.which("busybox") is None, reason="needs busybox (the guest's awk)")
def test_the_guest_bins_each_aggregations_regions(tmp_path):
    (tmp_path / "trace").write_text(TRACE)
    out = subprocess.run(["busybox", "awk", "-v", "max=20", _snapshot_awk(), str(tmp_path / "trace")],
                         capture_output=True, text=True, check=True).stdout
    snaps = console.parse(out).snapshots
    # nr_accesses 0: idle; 3 of 20 samples (< a quarter): warm; 12, 20: hot
    assert snaps == [damon.Snapshot(12.85513, 3, 45113344, 1000000, 489565632),
                     damon.Snapshot(12.959199, 2, 534630400, 0, 1048576)]
    # the simulator's regions binned the same way
    sim = damon_compare.split_of([(1048576, 46161920, 0, 32), (46161920, 47161920, 3, 2), (47161920, 536727552, 12, 0)], 20)
    assert (sim.idle, sim.warm, sim.hot, sim.nr_regions) == (45113344, 1000000, 489565632, 3)
    assert damon_compare.snapshot_means(snaps) == {"damon_accessed_bytes": (1000000 + 489565632 + 1048576) / 2,
                                           "damon_hot_bytes": (489565632 + 1048576) / 2, "damon_nr_regions": 2.5}


@pytest.mark.skipif(shutil.which("busybox") is None, reason="needs busybox (the guest's awk)")
def test_an_aggregation_the_trace_buffer_cut_is_left_out(tmp_path):
    # The guest reads the events after the run from a buffer that overwrites its oldest: the
    # first aggregation kept may lack its first regions, one per CPU buffer in the middle
    # too. Each aggregation lists its regions in address order, so a lower start begins
    # the next; one with fewer regions than it says is left out, and the rest still bin.
    cut = TRACE.splitlines(keepends=True)
    (tmp_path / "trace").write_text("".join(cut[1:3]) + TRACE + "".join(cut[:1] + cut[2:3]) + "".join(cut[3:]))
    out = subprocess.run(["busybox", "awk", "-v", "max=20", _snapshot_awk(), str(tmp_path / "trace")],
                         capture_output=True, text=True, check=True).stdout
    c = console.parse(out + "@@snap_lost 3\n")
    a, b = damon.Snapshot(12.85513, 3, 45113344, 1000000, 489565632), damon.Snapshot(12.959199, 2, 534630400, 0, 1048576)
    assert c.snapshots == [a, b, b]  # the cut first aggregation and the one cut in its middle: left out
    assert [line.split()[2:] for line in out.splitlines() if line.startswith("@@regs")][1] == ["256:512:20", "512:131037:0"]
    assert c.snap_lost == 3


def _shell_function(name: str) -> str:
    """One shell function of guest/init.sh, as written."""
    text = initramfs.INIT.read_text()
    return name + "() {" + text.split(f"\n{name}() {{", 1)[1].split("\n}\n", 1)[0] + "\n}\n"


@pytest.mark.skipif(shutil.which("busybox") is None or shutil.which("strace") is None,
                    reason="needs busybox (the guest's shell) and strace")
def test_the_guests_sampler_forks_nothing_while_damon_watches(tmp_path):
    # Every page a forked and executed command touches is a fresh LRU folio, not idle and
    # young: DAMON's paddr sampling counts it as accessed (damon_folio_young, mm/damon/
    # paddr.c 6.12), which the simulator, replaying the workload alone, cannot see.
    run_dir, cg, stats = tmp_path / "run", tmp_path / "cg", tmp_path / "kd/contexts/0/schemes/0/stats"
    for d in (run_dir, cg, stats):
        d.mkdir(parents=True)
    (run_dir / "cg0").write_text(f"{cg}\n")
    (cg / "memory.current").write_text("4096\n")
    (stats / "sz_applied").write_text("8192\n")
    (stats / "sz_tried").write_text("65536\n")
    (stats / "qt_exceeds").write_text("3\n")
    (stats.parent / "quotas").mkdir()
    (stats.parent / "quotas/effective_bytes").write_text("20971520\n")
    (tmp_path / "kd/state").write_text("on\n")
    (tmp_path / "kd/pid").write_text(f"{os.getpid()}\n")  # kdamond's CPU time: any process's stat will do
    os.mkfifo(run_dir / "pause")
    script = (_shell_function("sampler") + _shell_function("quota_sample")).replace("/run/", f"{run_dir}/") \
        + f"KD={tmp_path}/kd\nsampler sysfs\n"
    r = subprocess.run(["timeout", "-s", "INT", "1.3", "strace", "-f", "-qq", "-e", "trace=process", "busybox", "sh",
                        "-c", script], capture_output=True, text=True)
    samples = [line.split() for line in r.stdout.splitlines() if line.startswith("@@sample")]
    assert len(samples) >= 2 and all(x[2:] == ["4096", "8192"] for x in samples)
    quotas = console.parse(r.stdout).quota_samples
    # One quota sample after each sample; the timeout's SIGINT may fall between the last two.
    assert len(samples) - len(quotas) in (0, 1) and quotas and all((q.esz, q.sz_tried, q.qt_exceeds) == (20971520, 65536, 3) for q in quotas)
    assert all(q.kdamond_ticks >= 0 and q.t == float(s[1]) for q, s in zip(quotas, samples))
    calls = [line for line in r.stderr.splitlines() if re.search(r"\b(clone3?|v?fork|execve)\(", line)]
    assert len(calls) == 1 and "busybox" in calls[0]  # strace's own exec of the shell, nothing after


def test_the_simulators_kdamond_gets_the_guests_measured_schedule():
    c = console.parse("".join(f"@@snap {4 + 0.125 * i:.3f} 10 1 0 0\n" for i in range(9)))
    assert damon_compare.aggregation_s([c]) == pytest.approx(0.125)
    keys = damon_compare.guest_schedule([c], {"min_age": "2000000"})
    # 125 ms aggregations for a nominal 100 ms: everything kdamond counts in samples stretches by 1.25
    assert keys == {"damon_reclaim.sample_interval": "6250", "damon_reclaim.aggr_interval": "125000",
                    "damon_reclaim.min_age": "2500000"}
    assert damon_compare.guest_schedule([console.parse("")], {}) == {}  # no snapshots: nothing to match


def test_a_run_that_tried_nothing_says_why():
    from reclaimlab.cli.kernel import damon_lines

    log = ("@@boot 6.12.117+deb12-amd64 2.9\n@@meminfo start MemTotal 1000\n@@meminfo start MemFree 800\n"
           "@@damon_reclaim interface module\n@@sample 4.0 0 0\n@@sample 9.0 100 0\n@@sample 9.1 0 0\n"
           "@@damon_reclaim min_age 120000000\n@@damon_reclaim wmarks_high 500\n@@damon_reclaim wmarks_mid 400\n"
           + "".join(f"@@damon_reclaim {k} 0\n" for k in damon.STATS))
    note = damon_lines([console.parse(log)])[-1]
    assert "drops its own scheme" in note and "--damon-interface sysfs" in note
    assert "800‰" in note and "above wmarks_high 500‰" in note
    assert "min_age (120 s) is not shorter than the run (5 s)" in note


def test_the_comparison_grades_bytes_and_the_saving_in_points():
    c = console.parse(LOG)
    base = console.parse(LOG.replace("@@sample 5.5 600 400", "@@sample 5.5 1000 0").replace(
        "@@sample 6.0 600 400", "@@sample 6.0 1000 0"))
    series = {"time_s": [0.0, 1.0, 2.0], "memcg.wl.memory.current_bytes": [0.0, 800.0, 800.0]}
    base_series = {"time_s": [0.0, 1.0, 2.0], "memcg.wl.memory.current_bytes": [0.0, 1000.0, 1000.0]}
    sim = {"metrics": {"bytes_reclaim_tried_regions": 9900.0, "bytes_reclaimed_regions": 1000.0,
                       "nr_reclaim_tried_regions": 5.0, "damon_cpu_pct": 1.5}, "series": series}
    res = damon_compare.compare([c], [base], [sim], {"metrics": {}, "series": base_series}, "wl")
    rows = {r["counter"]: r for r in res["rows"]}
    assert rows["bytes_reclaim_tried_regions"]["met"] is True  # +10 %
    assert rows["bytes_reclaimed_regions"]["met"] is False  # +150 %
    assert rows["nr_quota_exceeds"]["target"] is None and rows["nr_quota_exceeds"]["sim"] == 0
    s = rows["memory_saving_pct"]
    # kernel: 1 - 725 / 875; simulator: 1 - 600 / 750
    assert s["real_mean"] == pytest.approx(100 * (1 - 725 / 875))
    assert s["sim"] == pytest.approx(20.0) and s["met"] is True and s["target_pp"] == 5.0
    assert res["kdamond_cpu_pct"] == {"kernel": [pytest.approx(10.0)], "simulator": 1.5}
    assert len(res["footprint"]["simulator"]) == damon_compare.CURVE_POINTS + 1
    assert "damon_accessed_bytes" not in rows  # no snapshots on either side: no monitoring rows
    # With DAMON's regions on both sides: the bytes it saw accessed, graded at 25 %.
    c.snapshots = [damon.Snapshot(1.0, 2, 600, 300, 100), damon.Snapshot(1.1, 2, 800, 200, 0)]
    sim["snapshots"] = [(0, 0, 10**8, [(0, 500, 0, 9), (500, 1000, 10, 0)])]  # 10 of 20 samples: hot
    rows = {r["counter"]: r for r in damon_compare.compare([c], [base], [sim], {"metrics": {}, "series": base_series},
                                                   "wl")["rows"]}
    assert (rows["damon_accessed_bytes"]["real_mean"], rows["damon_accessed_bytes"]["sim"]) == (300, 500)
    assert rows["damon_accessed_bytes"]["met"] is False and rows["damon_hot_bytes"]["target"] is None
    assert "shmem_paged_out" not in rows  # no nr_shmem from the model: no row
    # The root's tmpfs paged out beside the workload: the guest's nr_shmem fall over the
    # phases, against the model's machine.kernel_shmem less its nr_shmem at the end; shown only.
    c.phases[0].vmstat["nr_shmem"] = -300
    sims = [{**sim, "vmstat": {"nr_shmem": left}, "config": {"machine.kernel_shmem": "4M"}} for left in (724, 824)]
    rows = {r["counter"]: r for r in damon_compare.compare([c], [base], sims, {"metrics": {}, "series": base_series},
                                                   "wl")["rows"]}
    sh = rows["shmem_paged_out"]
    assert (sh["real_mean"], sh["sim"], sh["sim_sd"], sh["met"]) == (300, 250, pytest.approx(70.71, abs=0.01), None)


# ---------------------------------------------------------------- the hotcold workload

def test_hotcold_writes_everything_then_rounds_on_a_clock():
    wl = build("hotcold:pages=1000,hot=0.1,warm=0.3,period_ms=100,warm_period_ms=500,duration_s=2", 1 << 30)
    assert (wl.anon_pages, wl.file_pages) == (1000, 0)
    assert np.array_equal(wl.pages[:1000], np.arange(1000)) and (wl.flags[:1000] == 1).all()  # WRITE
    rounds = 20
    warm_sweeps = len([r for r in range(1, rounds) if r % 5 == 0])  # rounds 5, 10, 15
    assert len(wl) == 1000 + rounds * 100 + warm_sweeps * 300
    assert wl.sleep_us.sum() == rounds * 100_000 and np.count_nonzero(wl.sleep_us) == rounds
    run_part = wl.pages[1000:]
    assert run_part.max() < 400  # the cold 600 pages are never touched again
    assert wl.phases == ["fill", "t2s"] and wl.bounds == [1000, len(wl)]


def test_think_time_is_gathered_into_sleeps_of_a_millisecond():
    from reclaimlab.kernel.workload import sleeps_of

    # 400 µs per access: a sleep when each millisecond is complete, before that access
    assert sleeps_of(np.full(6, 400_000, np.uint64)).tolist() == [0, 0, 1200, 0, 800, 0]
    assert sleeps_of(np.full(3, 100, np.uint64)).tolist() == [0, 0, 0]
    assert sleeps_of(np.array([5_000_000_000], np.uint64)).tolist() == [4_000_000]  # one op's most


def test_a_scenario_and_an_untimed_trace_run_on_a_clock(tmp_path):
    wl = build("scenario:name=damon-reclaim-parsec,workload=swaptions,scale=0.5", 1 << 30)
    n = len(wl)
    # the scenario's 20 µs per access, slept a millisecond at a time
    assert int(wl.sleep_us.sum()) == pytest.approx(n * 20, abs=1000) and wl.sleep_us.max() < 1100
    assert wl.anon_pages > 0 and wl.phases == ["trace"]
    write_sim_trace(wl, tmp_path / "s.rcl")
    untimed = build(f"trace:path={tmp_path / 's.rcl'}", 1 << 30)  # the simulator's trace is timed
    assert untimed.sleep_us is not None
    assert int(untimed.sleep_us.sum()) == pytest.approx(int(wl.sleep_us.sum()), rel=0.01)  # + cost.access_ns each
    assert build(f"trace:path={tmp_path / 's.rcl'},access_us=0", 1 << 30).sleep_us is not None  # its own time
    with pytest.raises(KernelError, match="unknown workload 'nope'"):
        build("scenario:name=damon-reclaim-parsec,workload=nope", 1 << 30)
    with pytest.raises(KernelError, match="give name=SCENARIO"):
        build("scenario:workload=canneal", 1 << 30)
    tpcc = build("scenario:name=tpcc-stock-level,scale=0.05", 1 << 30)  # three tenants, one process each
    assert tpcc.cgroups == ["replica1", "replica2", "replica3"] and tpcc.cgroup_ids.max() == 2


def test_sleeps_become_ops_and_the_simulators_clock(tmp_path):
    wl = build("hotcold:pages=200,period_ms=10,warm_period_ms=50,duration_s=0.1", 1 << 30)
    w = op_words(wl)
    ops = w >> 28
    assert (ops == OP_SLEEP).sum() == 10 and set((w[ops == OP_SLEEP] & 0x0FFFFFFF).tolist()) == {10_000}
    # each SLEEP directly precedes the first access of its round; phase markers stay at the bounds
    assert ops[np.flatnonzero(ops == OP_SLEEP) + 1].tolist() == [3] * 10  # ANONR
    assert (ops == OP_PHASE).sum() == 2 and ops[200] == OP_PHASE and ops[-1] == OP_PHASE
    write_sim_trace(wl, tmp_path / "t.rcl")
    info = reclaimlab._core.trace_info(reclaimlab.open_trace(str(tmp_path / "t.rcl")))
    access_ns = int(reclaimlab._core.Config().get("cost.access_ns"))
    assert info["has_time"] and info["tick_ps"] == 1000
    assert info["total_gap_ticks"] == 10 * 10_000_000 + len(wl) * access_ns


def test_a_sleeping_workloads_work_is_scaled_to_the_guests_not_its_timers(tmp_path):
    from reclaimlab.kernel.validate import compute_scale

    # 30 s asleep: the guest worked 5 s, the simulated run 1 s -> 5 x the time per access
    assert compute_scale(35.0, 31.0, 30.0) == pytest.approx(5.0)
    assert compute_scale(None, 31.0, 30.0) == 1.0 and compute_scale(29.0, 31.0, 30.0) == 1.0
    wl = build("hotcold:pages=200,period_ms=10,warm_period_ms=50,duration_s=0.1", 1 << 30)
    write_sim_trace(wl, tmp_path / "t.rcl", access_ns=1500.4)
    info = reclaimlab._core.trace_info(reclaimlab.open_trace(str(tmp_path / "t.rcl")))
    assert info["total_gap_ticks"] == 10 * 10_000_000 + len(wl) * 1500


@pytest.mark.skipif(shutil.which("strace") is None or shutil.which("gcc") is None, reason="needs strace and gcc")
def test_wl_sleeps_where_the_ops_say(tmp_path):
    wl = build("hotcold:pages=64,period_ms=3,warm_period_ms=6,duration_s=0.012", 1 << 30)
    write_ops(wl, tmp_path / "ops")
    r = subprocess.run(["strace", "-f", "-e", "trace=nanosleep,clock_nanosleep", "-o", str(tmp_path / "st"),
                        str(guest.build_wl()), str(tmp_path / "ops"), "/nonexistent", "-"],
                       capture_output=True, text=True, env={**os.environ, "WL_REPORT": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    sleeps = [ln for ln in (tmp_path / "st").read_text().splitlines() if "nanosleep(" in ln]
    # one sleep per round, each until its point of the schedule: 3, 6, 9, 12 ms after @@start
    assert len(sleeps) == 4 and all("TIMER_ABSTIME" in ln for ln in sleeps), sleeps
    due = [int(sec) * 10**9 + int(ns) for sec, ns in
           (re.search(r"tv_sec=(\d+), tv_nsec=(\d+)", ln).groups() for ln in sleeps)]
    assert [b - a for a, b in zip(due, due[1:])] == [3_000_000] * 3


# ---------------------------------------------------------------- the real kernel

@pytest.mark.kernel
def test_the_modules_scheme_reclaims_idle_memory_and_6_12s_module_does_not(kernel_tree, tmp_path):
    # 40 MiB written once, 4 MiB of it read every 20 ms for 20 s: DAMON_RECLAIM's scheme,
    # with a 1 s pageout age (longer than a loaded host takes to fill) and watermarks
    # that keep it active, pages out the idle part.
    # Paging out under TCG is slow work: on a quiet host 10 s page out 35 of the idle 36 MiB,
    # on a loaded CI host 7.5 MiB, hence 20 s and the margins below. 6.12's module needs
    # only to run a while, so 4 s.
    params = f"min_age=1000000,quota_ms=0,{KEEP_ACTIVE}"
    res = {}
    for interface, seconds in (("sysfs", 20), ("module", 4)):
        spec = f"hotcold:pages=10240,hot=0.1,warm=0,period_ms=20,duration_s={seconds}"
        p = prepare(Setup(workload=spec, memory="none", boots=1, tick_us=1000, thp="never",
                          damon_reclaim=params, damon_interface=interface))
        run.run(p, tmp_path / interface, progress=False)
        res[interface] = p.boots[0][1]
    c = res["sysfs"]
    st = damon_compare.guest_stats(c)
    assert st["nr_reclaim_tried_regions"] > 0 and st["bytes_reclaimed_regions"] > 8 << 20, st
    ts, vs = damon_compare.guest_footprint(c)
    # the cgroup held the 40 MiB (memory.peak: the samples may miss it), then idle memory
    # left. DAMON may page out the first-written pages before the fill ends (a loaded host
    # filled slower than the 0.3 s age used before: 39.3 MiB peak seen), hence nine tenths.
    assert c.memory_peak >= 0.9 * (40 << 20) and vs[-1] < 0.8 * c.memory_peak, (c.memory_peak, vs)
    assert c.vmstat().get("pswpout", 0) > 2048
    # DAMON's own regions after every aggregation, tiling the monitored System RAM
    assert len(c.snapshots) > 10 and len({s.idle + s.warm + s.hot for s in c.snapshots}) == 1
    assert max(s.hot for s in c.snapshots) > 0
    assert c.pfns and c.pfns[0] >= 0.9 * 10240  # the anon pages present after the fill (DAMON may have begun: 10,072 seen)
    # 6.12.117's module: monitors, never acts (v6.11..v6.16, damon.module_drops_scheme)
    m = damon_compare.guest_stats(res["module"])
    assert m["nr_reclaim_tried_regions"] == 0 and m["bytes_reclaimed_regions"] == 0, m
    assert int(res["module"].damon_reclaim["kdamond_ticks"]) > 0  # its kdamond did run


def test_the_model_side_is_the_mean_and_spread_over_seeds():
    c = console.parse(LOG)  # one boot: 400 bytes reclaimed, 9000 tried, footprint mean 725
    base = console.parse(LOG.replace("@@sample 5.5 600 400\n@@sample 6.0 600 400\n", "@@sample 5.5 1000 0\n@@sample 6.0 1000 0\n"))

    def sim(reclaimed: int, mem: float) -> dict:
        return {"metrics": {"bytes_reclaimed_regions": reclaimed, "bytes_reclaim_tried_regions": 9000, "damon_cpu_pct": 1.0},
                "series": {"time_s": [0.0, 1.0], "memcg.wl.memory.current_bytes": [mem, mem]}}

    base_sim = sim(0, 1000.0)
    res = damon_compare.compare([c], [base], [sim(300, 600.0), sim(500, 800.0)], base_sim, "wl")
    rows = {r["counter"]: r for r in res["rows"]}
    r = rows["bytes_reclaimed_regions"]
    assert (r["real_mean"], r["sim"]) == (400, 400) and r["sim_sd"] == pytest.approx(141.42, abs=0.01) and r["met"]
    assert rows["bytes_reclaim_tried_regions"]["sim_sd"] == 0
    s = rows["memory_saving_pct"]  # savings of the two seeds: 40 % and 20 %
    assert s["sim"] == pytest.approx(30.0) and s["sim_sd"] == pytest.approx(14.142, abs=0.001)
    assert res["sim_seeds"] == 2 and res["kdamond_cpu_pct"]["simulator"] == 1.0


# ---------------------------------------------------------------- the time quota's size

QUOTA_LOG = ("@@damon_reclaim interface sysfs\n@@sample 4.0 0 0\n@@quota 4.0 0 0 0 3\n@@sample 4.7 10 0\n"
             "@@quota 4.7 41943040 0 0 7\n@@sample 5.4 10 0\n@@quota 5.4 41943040 41943040 1 12\n"
             "@@quota 6.1 12582912 54525952 1\n"  # cut by the console: left out
             "@@sample 6.1 10 0\n@@quota 6.1 10485760 65011712 1 20\n@@sample 6.2 10 0\n"
             "@@damon_reclaim kdamond_ticks 21\n@@damon_reclaim quota_ms 10\n@@damon_reclaim quota_sz 134217728\n")


def test_the_guests_effective_quota_samples_are_parsed():
    c = console.parse(QUOTA_LOG)
    assert c.quota_samples[0] == damon.QuotaSample(4.0, 0, 0, 0, 3)
    assert [q.esz for q in c.quota_samples] == [0, 41943040, 41943040, 10485760]
    assert c.quota_samples[-1] == damon.QuotaSample(6.1, 10485760, 65011712, 1, 20)
    q = damon_compare.guest_quota([c], 10)
    # 6.12.117's first window runs with esz 0: left out of the mean; the last over quota_ms
    # is the lifetime throughput: 1 MiB per charged ms
    assert q["esz_avg"] == pytest.approx((2 * 41943040 + 10485760) / 3) and q["esz_last"] == 10485760
    assert q["bytes_per_ms"] == 1048576
    capped = console.parse(QUOTA_LOG.replace("quota_sz 134217728", "quota_sz 10485760"))
    assert "bytes_per_ms" not in damon_compare.guest_quota([capped], 10)  # quota_sz hides the throughput
    assert "bytes_per_ms" not in damon_compare.guest_quota([c], 0)  # a size quota has none
    assert damon_compare.guest_quota([console.parse(LOG)], 10) is None  # a guest before @@quota


def test_the_measured_kdamond_slowdown_is_the_guests_cpu_over_the_models():
    c = console.parse(QUOTA_LOG)  # 21 ticks over 2.1 s of samples: 10 % of a CPU
    assert damon_compare.guest_cpu_pct([c]) == [pytest.approx(10.0)]
    assert damon_compare.kdamond_slowdown([c, c], 1.25) == pytest.approx(8.0)
    assert damon_compare.kdamond_slowdown([c], 0.0) is None  # the model's kdamond did nothing
    assert damon_compare.kdamond_slowdown([console.parse("@@sample 1.0 0 0\n")], 1.0) is None
    sims = [{"metrics": {"damon_quota_esz_bytes_avg": 3e7, "damon_quota_esz_bytes_last": 2e7,
                         "damon_quota_bytes_per_ms": b}} for b in (1e6, 3e6)]
    q = damon_compare.sim_quota(sims, 10)
    assert q["esz_avg"] == 3e7 and q["bytes_per_ms"] == pytest.approx(2e6)
    assert damon_compare.sim_quota([{"metrics": {}}], 10) is None


def test_the_measured_cost_runs_the_model_again_at_the_guests_speed(monkeypatch, tmp_path):
    from reclaimlab.kernel import experiment

    seen = []

    def fake_simulate(wl, settings, out, *a, **k):
        seen.append(settings.get("sim.kdamond_slowdown"))
        return {"metrics": {"damon_cpu_pct": 1.25, "bytes_reclaim_tried_regions": 0}, "series": {}, "vmstat": {},
                "config": {"cost.file_write_ns": 1, "cost.file_read_ns": 1, "cost.kswapd_wakeup_ns": 1},
                "policy": "mglru@6.12", "started": 0, "finished": 0}

    class Compared(Exception):
        pass

    def stop(*a):
        raise Compared

    monkeypatch.setattr(experiment, "simulate", fake_simulate)
    monkeypatch.setattr(experiment, "sim_settings", lambda prep, consoles: {"policy": "mglru@6.12"})
    monkeypatch.setattr(experiment.damon_compare, "compare", stop)

    class Prep:
        damon_reclaim = {"quota_ms": "10"}
        damon_interface = "sysfs"
        memory_max = None

        class wl:
            thp = None
            spec = "hotcold"

    c = console.parse(QUOTA_LOG)
    setup = Setup(workload="hotcold", damon_reclaim="quota_ms=10", damon_cost="measured")
    with pytest.raises(Compared):  # every simulation made
        experiment.compare_boots(setup, Prep, [c, c], tmp_path, [c])
    # the baseline, this run at the cost model, then the run and seeds 2.. at 8 times
    assert seen[:3] == [None, None, "8"] and set(seen[3:]) == {"8"} and len(seen) == 2 + experiment.damon_compare.SIM_SEEDS
    with pytest.raises(KernelError, match="kdamond's CPU time"):
        experiment.compare_boots(setup, Prep, [console.parse(LOG.replace("@@damon_reclaim kdamond_ticks 20\n", ""))],
                                 tmp_path, [c])


def test_the_stat_action_reaches_the_guest_and_only_kernel_run_takes_it(tmp_path, offline):
    """``--damon-action stat``: the sysfs scheme monitors and acts on nothing (kdamond's
    monitoring cost alone); its boots are other boots, the baseline has no DAMON, and
    validate refuses it (the simulator's DAMON_RECLAIM pages out)."""
    from reclaimlab.kernel.experiment import baseline_setup

    spec = "hotcold:duration_s=1"
    pageout = Setup(workload=spec, memory="none", damon_reclaim=KEEP_ACTIVE)
    stat = Setup(workload=spec, memory="none", damon_reclaim=KEEP_ACTIVE, damon_action="stat")
    assert "lab.damon_action=stat" in prepare(stat).append.split()
    assert not any("damon_action" in a for a in prepare(pageout).append.split())
    assert key_of(stat, prepare(stat)) != key_of(pageout, prepare(pageout))
    assert baseline_setup(stat).damon_action is None
    with pytest.raises(KernelError, match="--damon-action stat: needs --damon-reclaim"):
        prepare(Setup(workload=spec, memory="none", damon_action="stat"))
    with pytest.raises(KernelError, match="only with the sysfs interface"):
        prepare(Setup(workload=spec, memory="none", damon_reclaim=KEEP_ACTIVE, damon_action="stat",
                      damon_interface="module"))
    # the guest reads the scheme's action back: a boot that ran another is refused
    from reclaimlab.kernel.run import check_readback

    prep = prepare(stat)
    said = "".join(f"@@damon_reclaim {k} {v}\n" for k, v in prep.damon_reclaim.items())
    for action, ok in (("stat", True), ("pageout", False)):
        c = console.parse(f"@@damon_reclaim interface sysfs\n@@damon_reclaim action {action}\n{said}")
        if ok:
            check_readback(prep, c, 0, tmp_path / "log")
        else:
            with pytest.raises(GuestError, match="scheme ran pageout, not stat"):
                check_readback(prep, c, 0, tmp_path / "log")
    p = cli("validate", spec, "--memory-max", "none", "--damon-reclaim", KEEP_ACTIVE, "--damon-action", "stat",
            "--out-dir", tmp_path / "out")
    assert_user_error(p, "--damon-action stat: for `kernel run`")
    p = cli("kernel", "run", spec, "--memory-max", "none", "--damon-action", "stat", "--out-dir", tmp_path / "out")
    assert_user_error(p, "--damon-action stat: needs --damon-reclaim")
    assert not (tmp_path / "out").exists()


def test_damon_cost_measured_needs_damon_reclaim(tmp_path, offline):
    from reclaimlab.kernel.experiment import baseline_setup

    with pytest.raises(KernelError, match="--damon-cost measured: needs --damon-reclaim"):
        prepare(Setup(workload="hotcold:duration_s=1", memory="none", damon_cost="measured"))
    # the comparison's baseline boot (without the module) is not asked for it
    setup = Setup(workload="hotcold:duration_s=1", memory="none", damon_reclaim=KEEP_ACTIVE, damon_cost="measured")
    assert prepare(setup).damon_reclaim and prepare(baseline_setup(setup)).damon_reclaim is None
    p = cli("validate", "hotcold:duration_s=1", "--memory-max", "none", "--damon-cost", "measured",
            "--out-dir", tmp_path / "out")
    assert_user_error(p, "--damon-cost measured: needs --damon-reclaim")
    p = cli("validate", "hotcold:duration_s=1", "--memory-max", "none", "--damon-cost", "fast",
            "--out-dir", tmp_path / "out")
    assert_user_error(p, "--damon-cost")
    assert not (tmp_path / "out").exists()
