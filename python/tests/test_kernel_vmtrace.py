"""``kernel run --vmscan-trace``: the guest's per-pass reclaim sums as the console carries them."""
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from reclaimlab.kernel import console

from reclaimlab.kernel.run import Setup, kernel_args


def test_vmpass_lines_parse():
    c = console.parse("@@vmpass 1442 1 0 2 0 54 968 968 0 968 0 0 0 10 0 0\n"
                      "@@vmpass 2000 3 0 1 3 0 0 0 0 0 0 0 0 99 0 0\n"
                      "@@vmdirect 205 12869 12869 0 12869 0\n@@lru_activate wl 366\n"
                      "@@pcp 48310 0 35 267 845\n@@pcp 48330 0 40 267 1200 512\n"
                      "@@ptfree 48330 Unmovable 16 44 38 33 28 19 12 3 1 0 0\n@@vmtrace_lost 0\n@@refill 0 480 23\n@@refill 0 15 153\n"
                      "@@refillseq 15494700 0 15\n@@refillseq 15494900 1 480\n"
                      "@@shrink ffffffff811c5a30 1 12 256 0\n@@ksym deferred_split_scan ffffffff811c5a30\n")
    assert [p["reclaimed"] for p in c.vmscan_passes] == [968, 0]
    assert c.vmscan_passes[1]["min_priority"] == 99 and c.vmscan_passes[0]["zid"] == 1
    assert c.vmscan_direct["reclaimed"] == 12869
    assert c.lru_activate == {"wl": 366}
    assert c.pcp_samples == [(48310, 0, 35, 267, 845), (48330, 0, 40, 267, 1200, 512)]
    assert c.ptfree_samples == [(48330, "Unmovable", (16, 44, 38, 33, 28, 19, 12, 3, 1, 0, 0))]
    assert c.pcp_refills == {(0, 480): 23, (0, 15): 153}
    assert c.pcp_refill_seq == [(15494700, 0, 15), (15494900, 1, 480)]
    assert c.shrinkers[(c.ksyms["deferred_split_scan"], 1)] == {"calls": 12, "scanned": 256, "freed": 0}
    # Guests before the last three fields read them as 0.
    assert c.vmscan_passes[0]["sorted"] == c.vmscan_passes[0]["extfrag_low"] == 0


def test_level3_histograms_migrations_and_caches_parse():
    c = console.parse("@@hist mm_page_pcpu_drain { common_pid: wl [ 238], migratetype: 0 } hitcount: 4981\n"
                      "@@hist mm_page_pcpu_drain { common_pid: kswapd0 [ 51], migratetype: 1 } hitcount: 138890\n"
                      "@@hist mm_page_free { common_pid: kswapd0 [ 51] } hitcount: 139591\n"
                      "@@hist mm_page_alloc_extfrag { common_pid: wl [ 238], fallback_migratetype: 2 } hitcount: 2039\n"
                      "@@hist workqueue_execute_start { function: [ffffffff87e2dc00] vmpressure_work_fn } "
                      "hitcount: 233\n@@ksched_out kswapd0 kworker/0:1 146\n"
                      "@@cpu_cache 0 3 Unified 0-1\n@@cpu_cache 1 1 Data 1\n")
    assert c.hists["mm_page_pcpu_drain"] == {("wl", "0"): 4981, ("kswapd0", "1"): 138890}
    assert c.hists["mm_page_free"] == {("kswapd0",): 139591}
    assert c.hists["mm_page_alloc_extfrag"] == {("wl", "2"): 2039}
    assert c.cpu_caches == {(0, 3, "Unified"): "0-1", (1, 1, "Data"): "1"}
    assert c.hists["workqueue_execute_start"] == {("vmpressure_work_fn",): 233}
    assert c.ksched_out == {("kswapd0", "kworker/0:1"): 146}


def test_where_the_workload_ran_is_given_to_the_model():
    """/wl on CPU 1 at the start, then runs begun on CPU 0 at 2 s and on CPU 1 at 5.5 s (seconds
    from the workload's start mark); kswapd0's moves and a run before the start are not
    the workload's placement."""
    c = console.parse("@@migrate_cpu wl 1\n@@migrate_cpu kswapd0 0\n@@swcpu 900000 wl 0\n"
                      "@@swcpu 3000000 wl 0\n@@swcpu 3500000 kswapd0 1\n@@swcpu 6500000 wl 1\n"
                      "@@migrate_mark 1000000 start\n@@migrate_mark 9000000 end\n")
    assert c.task_cpus() == [(0.0, 1), (2.0, 0), (5.5, 1)]
    assert console.parse("@@migrate_mark 1 start\n@@migrate_mark 2 end\n@@migrate_cpu wl 0\n").task_cpus() is None
    # validate --cpu-placement measured gives them to the model.
    from reclaimlab.kernel import KernelError
    from reclaimlab.kernel.experiment import placement_settings
    assert placement_settings(c, "measured") == {"machine.task_cpus": "0.000000:1,2.000000:0,5.500000:1"}
    assert placement_settings(c, "model") == {}
    with pytest.raises(KernelError, match="--cpu-placement measured"):
        placement_settings(console.parse(""), "measured")


def test_sorted_wakes_fallbacks_and_free_lists_parse():
    c = console.parse("@@vmpass 10529765 0 0 1 0 9 11634 464 0 464 0 0 0 2 0 0 24888 1 16\n"
                      "@@extfrag DMA 1 0 4 0 wl 6\n@@extfrag DMA32 1 2 0 0 kswapd0 1\n"
                      "@@freelist start 0 DMA Unmovable 0 0 0 0 0 1 1 1 0 0 0\n@@zoneblocks start 0 DMA 1 7 0 0 0\n"
                      "@@claim 0 40 3\n@@claim 1 900 70\n")
    p = c.vmscan_passes[0]
    assert (p["zid"], p["min_priority"], p["sorted"], p["gfp0_wakes"], p["extfrag_low"]) == (0, 2, 24888, 1, 16)
    assert c.extfrag == {("DMA", 1, 0, 4, 0, "wl"): 6, ("DMA32", 1, 2, 0, 0, "kswapd0"): 1}
    assert c.freelists["start"][(0, "DMA", "Unmovable")] == [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    assert c.zoneblocks["start"][(0, "DMA")] == [1, 7, 0, 0, 0]
    assert c.claims == {0: (40, 3), 1: (900, 70)}
    assert console.parse("@@claim none\n").claims == {} and console.parse("").claims is None
    assert not c.pageblocks, "THP's own @@pageblocks stay apart"


def test_thpscale_count_snapshot_parses():
    c = console.parse("@@freelist count1 1 DMA32 Movable 0 1 1 1 1 1 1 0 1 1 107\n"
                      "@@zoneblocks count1 1 DMA32 34 220 2 0 0\n"
                      "@@nodemem count1 1 MemFree 401236\n@@nodemem count1 1 Inactive(anon) 1024\n"
                      "@@zram_at count1  5328896  2737175  4317184        0  4317184        0        0       20       20\n"
                      "@@meminfo start MemFree 925492\n")
    assert c.freelists["count1"][(1, "DMA32", "Movable")][-1] == 107
    assert c.zoneblocks["count1"][(1, "DMA32")] == [34, 220, 2, 0, 0]
    assert c.nodemem["count1"][1] == {"MemFree": 401236, "Inactive(anon)": 1024}
    assert c.zram_at["count1"][:3] == [5328896, 2737175, 4317184]
    assert c.meminfo == {"MemFree": 925492}, "a count's snapshot leaves the workload's start alone"


def test_vmscan_trace_and_vm_sysctls_are_kernel_parameters_only_when_asked():
    def args(**kw):
        p = SimpleNamespace(setup=Setup(workload="seqloop", **kw), zram=0, read_ahead_kb=128, fault_around_bytes=65536,
                            wl=SimpleNamespace(writes_files=False), damon_reclaim=None)
        return kernel_args(p, None)

    assert not any(a.startswith("lab.vmtrace") for a in args())
    assert "lab.vmtrace=1" in args(vmscan_trace=True)
    assert "lab.vmtrace=2" in args(vmscan_trace=2)
    assert "lab.vmtrace=3" in args(vmscan_trace=3)
    # the vm sysctls the guest sets at boot (do_sysctl_args), only when asked
    assert not any(a.startswith("sysctl.") for a in args())
    assert "sysctl.vm.watermark_boost_factor=0" in args(watermark_boost_factor=0)
    assert "sysctl.vm.percpu_pagelist_high_fraction=8" in args(pcp_high_fraction=8)


#: sched_switch events into and out of kswapd threads, as the guest's rl_sched instance has
#: them: kswapd0 preempts the workload on its CPU twice (1.5 ms, then 40 µs, both ended by
#: preemption), kswapd1 runs 10 ms on an idle CPU and goes to sleep.
SCHED_TRACE = """# tracer: nop
             thp-123     [000] d..2.   100.000100: sched_switch: prev_comm=thp prev_pid=123 prev_prio=120 prev_state=R+ ==> next_comm=kswapd0 next_pid=45 next_prio=120
         kswapd0-45      [000] d..2.   100.001600: sched_switch: prev_comm=kswapd0 prev_pid=45 prev_prio=120 prev_state=R ==> next_comm=thp next_pid=123 next_prio=120
          <idle>-0       [001] d..2.   100.002000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kswapd1 next_pid=46 next_prio=120
             thp-123     [000] d..2.   100.005000: sched_switch: prev_comm=thp prev_pid=123 prev_prio=120 prev_state=R+ ==> next_comm=kswapd0 next_pid=45 next_prio=120
         kswapd0-45      [000] d..2.   100.005040: sched_switch: prev_comm=kswapd0 prev_pid=45 prev_prio=120 prev_state=R ==> next_comm=thp next_pid=123 next_prio=120
         kswapd1-46      [001] d..2.   100.012000: sched_switch: prev_comm=kswapd1 prev_pid=46 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""

#: The workload's side (task "wl", its sched_wakeup events too): it sleeps on I/O and is
#: woken while kswapd0 runs, waits 700 µs for it; then a kworker preempts it and it runs
#: again 20 µs later; then it sleeps and is woken on an idle CPU (5 µs).
WL_SCHED_TRACE = """# tracer: nop
              sh-70      [001] .....   199.999000: tracing_mark_write: lab start
              wl-77      [000] d..2.   200.000000: sched_switch: prev_comm=wl prev_pid=77 prev_prio=120 prev_state=D ==> next_comm=kswapd0 next_pid=45 next_prio=120
          <idle>-0       [001] dNh2.   200.000300: sched_wakeup: comm=wl pid=77 prio=120 target_cpu=000
         kswapd0-45      [000] d..2.   200.001000: sched_switch: prev_comm=kswapd0 prev_pid=45 prev_prio=120 prev_state=S ==> next_comm=wl next_pid=77 next_prio=120
              wl-77      [000] d..2.   200.002000: sched_switch: prev_comm=wl prev_pid=77 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=9 next_prio=120
     kworker/0:1-9       [000] d..2.   200.002020: sched_switch: prev_comm=kworker/0:1 prev_pid=9 prev_prio=120 prev_state=I ==> next_comm=wl next_pid=77 next_prio=120
              wl-77      [000] d..2.   200.003000: sched_switch: prev_comm=wl prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] dNh2.   200.004000: sched_wakeup: comm=wl pid=77 prio=120 target_cpu=000
          <idle>-0       [000] d..2.   200.004005: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=wl next_pid=77 next_prio=120
              sh-70      [001] .....   200.005000: tracing_mark_write: lab end
"""


def _sched_trace(tmp_path, trace: str) -> console.Console:
    """What guest/init.sh's ``sched_trace`` reports of ``trace`` (its awk program, run by
    busybox as in the guest), parsed."""
    from reclaimlab.kernel import initramfs

    body = initramfs.INIT.read_text().split("sched_trace() {", 1)[1]
    program = "function kv" + body.split("awk 'function kv", 1)[1].split("' $S/trace", 1)[0]
    (tmp_path / "trace").write_text(trace)
    out = subprocess.run(["busybox", "awk", program, str(tmp_path / "trace")],
                         capture_output=True, text=True, check=True).stdout
    return console.parse(out)


@pytest.mark.skipif(shutil.which("busybox") is None, reason="needs busybox (the guest's awk)")
def test_the_guest_sums_who_had_kswapds_cpu(tmp_path):
    c = _sched_trace(tmp_path, SCHED_TRACE)
    assert c.ksched == {("kswapd0", 0): {"runs": 2, "run_us": 1540, "out_R": 2, "out_S": 0, "out_D": 0, "in_idle": 0},
                        ("kswapd1", 1): {"runs": 1, "run_us": 10000, "out_R": 0, "out_S": 1, "out_D": 0, "in_idle": 1}}
    # 1,500 µs in [1024, 2048), 40 µs in [32, 64), 10,000 µs in [8192, 16384)
    assert c.ksched_runs == {("kswapd0", 10): 1, ("kswapd0", 5): 1, ("kswapd1", 13): 1}
    assert c.ksched_in == {("kswapd0", "thp", "R"): 2}
    # Both of kswapd0's runs ended preempted, the CPU going back to thp; kswapd1 slept.
    assert c.ksched_out == {("kswapd0", "thp"): 2}


@pytest.mark.skipif(shutil.which("busybox") is None, reason="needs busybox (the guest's awk)")
def test_the_guest_sums_how_long_the_workload_waited_and_for_whom(tmp_path):
    c = _sched_trace(tmp_path, WL_SCHED_TRACE)
    assert c.wsched_out == {("D", "kswapd"): 1, ("R", "kworker"): 1, ("S", "idle"): 1}
    # Woken at .0003, ran at .001 after kswapd0: 700 µs; preempted at .002, back at .00202.
    assert c.wwait == {"kswapd": (1, 700, 700), "kworker": (1, 20, 20), "idle": (1, 5, 5)}
    assert c.ksched_in == {("kswapd0", "wl", "D"): 1}
    # Each one's first run, on CPU 0 (later runs on the same CPU are not repeated).
    assert c.switch_cpus == [(200_000_000, "kswapd0", 0), (200_001_000, "wl", 0)]
    assert c.migrate_marks == {"start": 199_999_000, "end": 200_005_000}


#: A DMA-only kswapd pass as the guest's rl_kswapd instance has it (options/fields): a
#: movable allocation falls back into DMA's unmovable block at order 5 (pfn 0x120), rmqueue
#: wakes kswapd for zid 0 with gfp_flags 0, and the pass's one isolate scans 4,096 folios of
#: the zone above, taking none (sort_folio's "ineligible" moves).
VMSCAN_TRACE = """# tracer: nop
              wl-123     [000] .....   100.000050: mm_page_alloc_extfrag: pfn=0x120 (288) alloc_order=0x0 (0) fallback_order=0x5 (5) alloc_migratetype=0x1 (1) fallback_migratetype=0x0 (0) change_ownership=0x0 (0)
              wl-123     [000] .....   100.000100: mm_vmscan_wakeup_kswapd: nid=0x0 (0) zid=0x0 (0) order=0x0 (0) gfp_flags=0x0 (0)
         kswapd0-45      [001] .....   100.000200: mm_vmscan_kswapd_wake: nid=0x0 (0) zid=0x0 (0) order=0x0 (0)
         kswapd0-45      [001] .....   100.000300: mm_vmscan_lru_isolate: highest_zoneidx=0x0 (0) order=0x0 (0) nr_requested=0x1000 (4096) nr_scanned=0x1000 (4096) nr_skipped=0x0 (0) nr_taken=0x0 (0) lru=0x2 (2)
              wl-123     [000] .....   100.000400: mm_page_alloc_extfrag: pfn=0x2000 (8192) alloc_order=0x0 (0) fallback_order=0x0 (0) alloc_migratetype=0x1 (1) fallback_migratetype=0x2 (2) change_ownership=0x0 (0)
"""


def _vmscan_awk() -> str:
    """The awk program guest/init.sh's ``vmscan_trace`` runs over the rl_kswapd instance."""
    from reclaimlab.kernel import initramfs

    body = initramfs.INIT.read_text().split("vmscan_trace() {", 1)[1]
    return body.split("'function kv(", 1)[1].split("' $I/trace", 1)[0].join(["function kv(", ""])


@pytest.mark.skipif(shutil.which("busybox") is None, reason="needs busybox (the guest's awk)")
def test_the_guest_counts_sorted_folios_boosted_wakes_and_fallbacks_per_pass(tmp_path):
    (tmp_path / "trace").write_text(VMSCAN_TRACE)
    out = subprocess.run(["busybox", "awk", "-v", "zs=1:DMA 4096:DMA32 ", _vmscan_awk(), str(tmp_path / "trace")],
                         capture_output=True, text=True, check=True).stdout
    c = console.parse(out)
    [p] = c.vmscan_passes
    assert (p["t_us"], p["zid"], p["wakes"], p["wake_min_zid"]) == (150, 0, 1, 0)
    assert (p["sorted"], p["taken"], p["gfp0_wakes"], p["extfrag_low"]) == (4096, 0, 1, 1)
    assert c.extfrag == {("DMA", 1, 0, 5, 0, "wl"): 1, ("DMA32", 1, 2, 0, 0, "wl"): 1}


def test_kswapd_passes_and_lru_gen_summaries():
    # Three passes that shrank (640, 1920, 64 pages; priorities 6, 4, 5), one that found the
    # node balanced; MGLRU's generations at two phase ends, the last one's max_seq counts.
    c = console.parse("@@vmpass 10 3 0 1 -1 10 640 640 0 640 0 0 0 6 0 0\n"
                      "@@vmpass 20 3 0 1 -1 30 1920 1920 0 1920 0 0 0 4 0 0\n"
                      "@@vmpass 30 3 0 1 -1 0 0 0 0 0 0 0 0 99 0 0\n"
                      "@@vmpass 40 3 0 1 -1 1 64 64 0 64 0 0 0 5 0 0\n"
                      "@@phase 0 1000\n@@mglru_gen /wl 0 4 100 10 0\n@@mglru_gen /wl 0 7 5 20 0\n@@phase-end 0\n"
                      "@@phase 1 1000\n@@mglru_gen / 0 12 9 1 2\n@@mglru_gen /wl 0 9 30 10 0\n"
                      "@@mglru_gen /wl 0 11 5 20 0\n@@phase-end 1\n")
    p = c.kswapd_passes()
    assert p == {"passes": 3, "empty": 1, "reclaimed_mean": (640 + 1920 + 64) / 3, "reclaimed_p50": 640,
                 "reclaimed_p90": 1920, "min_priority_mean": 5}
    assert c.phases[1].mglru_gens[1] == ("/wl", 0, 9, 30, 10, 0)
    assert c.lru_gen_max_seq("/wl") == 11 and c.lru_gen_max_seq("/") == 12 and c.lru_gen_max_seq("/x") is None
    assert console.parse("@@lru_gen 0x0000\n").kswapd_passes() is None
