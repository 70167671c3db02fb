"""Kernel vs simulator comparison rows and the per-version counter notes
(reclaimlab.kernel.validate)."""

from __future__ import annotations

import math

from reclaimlab.kernel.validate import (FILE_TARGETS, compare, definition_notes, free_under_reclaim, kernel_version,
                                       mglru_model, stable_sublevel)


def test_compare_rows_mean_sd_error_and_target():
    real = [{"pgpgin": 100, "pgsteal_file": 50}, {"pgpgin": 110, "pgsteal_file": 50}, {"pgpgin": 90}]
    rows = {r["counter"]: r for r in compare(real, {"pgpgin": 108, "pgsteal_file": 0}, FILE_TARGETS,
                                             ["pgpgin", "pgsteal_file", "pgmajfault"])}
    r = rows["pgpgin"]
    assert (r["real_mean"], r["boots"], r["sim"]) == (100.0, 3, 108.0)
    assert math.isclose(r["real_sd"], 10.0)            # sample sd of 100, 110, 90
    assert math.isclose(r["rel_error"], 0.08) and r["met"] is True
    s = rows["pgsteal_file"]                          # a boot without the counter counts 0
    assert math.isclose(s["real_mean"], 100 / 3) and s["rel_error"] == -1.0 and s["met"] is False
    z = rows["pgmajfault"]                            # zero in both: no error
    assert z["rel_error"] == 0.0 and z["met"] is True


def test_compare_zero_kernel_mean_with_a_simulated_count_is_infinite_error():
    (row,) = compare([{"x": 0}], {"x": 5}, {"x": 0.1}, ["x"])
    assert row["rel_error"] == float("inf") and row["met"] is False


def test_definition_notes_flag_the_pre_6_14_mglru_activation_counter():
    assert kernel_version("6.12.117+deb12-amd64") == (6, 12)
    assert kernel_version("6.1.0-56-amd64") == (6, 1)
    assert set(definition_notes("6.12.117+deb12-amd64", "mglru@6.15")) == {
        "workingset_activate_anon", "workingset_activate_file"}
    assert definition_notes("6.12.117+deb12-amd64", "classic@6.15") == {}
    assert definition_notes("6.15.2", "mglru@6.15") == {}


def test_mglru_model_follows_the_guest_kernel_version():
    # v6.14's rework is what mglru@6.15 models; 081488051d28 is in v6.7 and in the 6.1/6.6
    # stable series; older kernels get the v6.6 code path.
    assert mglru_model("6.15.2") == "mglru@6.15"
    assert mglru_model("6.14.0-1-amd64") == "mglru@6.15"
    assert mglru_model("6.7.0") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.1.0-56-amd64") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.6.30") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.5.0") == "mglru@6.6"
    assert mglru_model("") == "mglru@6.6"
    # the chosen variant has no counter whose definition differs from the guest's
    assert definition_notes("6.12.117+deb12-amd64", mglru_model("6.12.117+deb12-amd64")) == {}


def test_mglru_model_reads_the_6_12_stable_sublevel():
    # "mm/mglru: reset page lru tier bits when activating" reached 6.12 stable in 6.12.114
    # (Debian's changelog); v6.13 has it upstream; 6.12.113 and v6.12 itself do not.
    assert stable_sublevel("6.12.117+deb12-amd64") == 117
    assert stable_sublevel("6.12.114") == 114
    assert stable_sublevel("6.12.0-1-amd64") == 0
    assert stable_sublevel("6.13") == 0
    assert mglru_model("6.12.117+deb12-amd64") == "mglru@6.12"
    assert mglru_model("6.12.114") == "mglru@6.12"
    assert mglru_model("6.12.113+deb13-amd64") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.12.0") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.13.0-rc1") == "mglru@6.12"
    assert mglru_model("6.13.12-amd64") == "mglru@6.12"
    assert mglru_model("6.11.11") == "mglru+fix-underprotected-page-cache"
    assert mglru_model("6.14.0") == "mglru@6.15"


def test_smp_reaches_qemu_and_is_checked_before_anything_is_built(tmp_path):
    import pytest

    from reclaimlab.kernel import KernelError, qemu
    from reclaimlab.kernel.run import Setup, prepare

    cmd = qemu.command(tmp_path / "vmlinuz", tmp_path / "initrd", tmp_path / "disk", "", 512, 1,
                       tmp_path / "log", "tcg")
    assert cmd[cmd.index("-smp") + 1] == "1"
    with pytest.raises(KernelError, match="--smp must be 1..64 guest CPUs, got 0"):
        prepare(Setup(workload="zipf", smp=0))


def test_time_dilation_follows_the_guests_wall_time():
    from reclaimlab.kernel.console import parse
    from reclaimlab.kernel.validate import guest_wall_s, time_dilation

    # Two boots whose one phase took 30 s and 34 s of guest wall time.
    boots = [parse(f"@@phase 0 {s * 10**9}\n@@phase-end 0\n") for s in (30, 34)]
    assert guest_wall_s(boots) == 32.0
    # The simulated run took 2 s: the guest's timers ran 16 times too often per unit of work.
    assert time_dilation(32.0, 2.0) == 16.0
    # Never below 1 (a guest as fast as the cost model), and 1 without a wall time.
    assert time_dilation(1.0, 2.0) == 1.0 and time_dilation(None, 2.0) == 1.0


def test_the_hosts_busy_time_counts_this_process_cpu():
    """qemu.host_busy_s (the host's busy CPU seconds, /proc/stat), from which a boot's
    other_cpus is its busy time less QEMU's: burning 0.3 s of CPU here raises it by at least
    that much, less a clock tick."""
    import resource

    from reclaimlab.kernel import qemu

    def own() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    b0, c0 = qemu.host_busy_s(), own()
    while own() - c0 < 0.3:
        pass
    b1 = qemu.host_busy_s()
    assert b0 is not None and b1 is not None
    assert b1 - b0 >= own() - c0 - 0.05


def test_validate_warns_when_the_host_was_busy_during_a_boot():
    """The kswapd/direct split moves with the host's load under TCG (docs/validation.md,
    "The host's load"): a boot with another CPU's worth of work on the host is named."""
    from reclaimlab.kernel.qemu import host_busy_note, other_load_text

    assert host_busy_note([0.0, 0.17, None]) == ""
    note = host_busy_note([0.0, 1.03, 0.4])
    assert "boot 1: 1.03" in note and "boot 2: 0.40" in note and "boot 0" not in note
    # The figures as kernel run and the as-shipped block print them: only when every boot has one.
    assert other_load_text([0.0, 1.03]) == "; other host load 0.00, 1.03 CPUs"
    assert other_load_text([0.0, None]) == "" and other_load_text([]) == ""


def test_free_pages_under_reclaim_leave_out_the_fill_and_the_exit():
    """Free memory falls from 40,000 pages while the workload fills it (t 0-2), stays at
    1,000-2,000 under reclaim (t 2-6), and jumps when the workload exits (t 7): only t 2-6
    count, time-weighted (the 2,000 plateau lasts 3 of the 4), and a fill share of 2/6."""
    ts = [0, 1, 2, 3, 5, 6, 7]
    free = [40_000, 20_000, 1_000, 2_000, 2_000, 1_000, 18_000]
    got = free_under_reclaim(ts, free, ceiling=5_000)
    assert math.isclose(got["mean"], (1_500 + 2 * 2_000 + 1_500) / 4)
    assert (got["p10"], got["p50"], got["p90"]) == (1_000, 1_500, 2_000)
    assert math.isclose(got["fill_share"], 2 / 6)
    assert free_under_reclaim(ts, free, ceiling=500) is None       # never under reclaim
    assert free_under_reclaim([0, 1], [900, 40_000], ceiling=5_000) is None  # one sample


def test_whole_machine_boots_are_each_simulated_on_their_own_machine(tmp_path, monkeypatch):
    """``reclaimlab validate`` without a memory.max: where allocations fall back follows each
    boot's free lists at the start, so each boot runs on its own machine at its own wall time
    and the rows hold the runs' mean; under a memory.max one run from the first boot's."""
    import pytest

    from reclaimlab.kernel import console, experiment
    from reclaimlab.kernel.run import Setup

    walls, seen = [], []

    def simulate(wl, settings, out, wall, *a, **k):
        walls.append((settings.get("machine.start_layout"), wall))
        steal = {"A": 8, "B": 12, None: 5}[settings.get("machine.start_layout")]
        return {"metrics": {"memcg.db.memory.current": steal * 4096}, "vmstat": {"pgsteal_kswapd": steal},
                "config": {}, "policy": "classic@6.15", "started": 0, "finished": 0}

    class Compared(Exception):
        pass

    def compare(real, sim_vm, targets):
        seen.append(sim_vm)
        raise Compared

    layouts = {1.0: "A", 3.0: "B"}
    monkeypatch.setattr(experiment, "simulate", simulate)
    monkeypatch.setattr(experiment, "compare", compare)
    monkeypatch.setattr(experiment, "targets_for", lambda wl, whole_machine: {})
    monkeypatch.setattr(experiment, "sim_settings", lambda prep, consoles: {"policy": "classic@6.15"})
    monkeypatch.setattr(experiment, "boot_machine_settings",
                        lambda c, s: {"machine.start_layout": layouts[c.phases[0].wall_ns / 1e9]})

    class Prep:
        damon_reclaim = None
        memory_max = None

        class wl:
            thp = None
            spec = "seqloop"
            cgroups = ()

    boots = [console.parse(f"@@phase 0 {w}\n@@vm pgsteal_kswapd 10\n@@phase-end 0\n") for w in (1_000_000_000, 3_000_000_000)]
    with pytest.raises(Compared):
        experiment.compare_boots(Setup(workload="seqloop"), Prep, boots, tmp_path)
    assert walls == [("A", 1.0), ("B", 3.0)] and seen[0]["pgsteal_kswapd"] == 10.0  # the mean of 8 and 12
    walls.clear()
    Prep.memory_max = 64 << 20
    with pytest.raises(Compared):
        experiment.compare_boots(Setup(workload="seqloop"), Prep, boots, tmp_path)
    assert walls == [(None, 2.0)] and seen[1]["pgsteal_kswapd"] == 5
