"""THP, compaction and NUMA on the real kernel (issue 15, item 3): ``--nodes`` (QEMU's
-numa options), the guest workloads ``thpscale`` and ``usemem`` (guest/thp.c), their
console lines, and the model's THP scenarios sized to the guest (kernel/thp_compare.py).
One boot at the end (marked ``kernel``, about 40 s on 2 cores)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from reclaimlab.kernel import KernelError, console, guest, qemu, thp_compare, workload
from reclaimlab.kernel.run import Setup, check_thp_workload, nodes_of, swap_size

from conftest import assert_user_error, cli


# ---- --nodes: QEMU's command line and the checks ----

def test_two_nodes_split_ram_and_cpus_evenly():
    assert qemu.numa_args(1024, 2, 2) == [
        "-object", "memory-backend-ram,id=ram0,size=512M", "-numa", "node,nodeid=0,memdev=ram0,cpus=0-0",
        "-object", "memory-backend-ram,id=ram1,size=512M", "-numa", "node,nodeid=1,memdev=ram1,cpus=1-1"]
    # 4 CPUs, 3 nodes, 1000 MiB: the last node takes the remainder; CPUs 0, 1, 2-3.
    args = qemu.numa_args(1000, 4, 3)
    assert [a for a in args if a.startswith("memory-backend")] == [
        "memory-backend-ram,id=ram0,size=333M", "memory-backend-ram,id=ram1,size=333M",
        "memory-backend-ram,id=ram2,size=334M"]
    assert [a.split(",cpus=")[1] for a in args if a.startswith("node,")] == ["0-0", "1-1", "2-3"]
    assert qemu.numa_args(1024, 2, 1) == []


def test_the_qemu_command_carries_the_numa_options_only_for_several_nodes(monkeypatch, tmp_path):
    monkeypatch.setattr(qemu, "qemu_binary", lambda: "qemu-system-x86_64")
    p = tmp_path / "x"
    one = qemu.command(p, p, p, "", 1024, 2, p, "tcg")
    two = qemu.command(p, p, p, "", 1024, 2, p, "tcg", nodes=2)
    assert "-numa" not in one
    assert two.count("-numa") == 2 and two[two.index("-m") + 1] == "1024M"
    assert two[:len(one)] != one and [a for a in two if a not in qemu.numa_args(1024, 2, 2)] == one


@pytest.mark.parametrize("nodes, guest_mb, smp, needle", [
    (0, 1024, 2, "must be 1..64"),
    ("two", 1024, 2, "not an integer"),
    ("1.5", 1024, 2, "not an integer"),
    (3, 256, 4, "less than 128 MiB"),
    (4, 1024, 2, "one guest CPU per node"),
])
def test_bad_node_counts_are_refused(nodes, guest_mb, smp, needle):
    with pytest.raises(KernelError, match=needle):
        nodes_of(Setup(workload="seqloop", nodes=nodes, guest_mb=guest_mb, smp=smp))


def test_a_node_count_the_guest_can_hold_is_taken():
    assert nodes_of(Setup(workload="seqloop", nodes="2", guest_mb=256, smp=2)) == 2
    assert nodes_of(Setup(workload="seqloop")) == 1


@pytest.mark.parametrize("args, needles", [
    (("--nodes", "0"), ("--nodes 0", "1..64")),
    (("--nodes", "x"), ("--nodes x", "not an integer")),
    (("--nodes", "8", "--guest-memory", "512M", "--smp", "8"), ("--nodes 8", "64 MiB", "less than 128 MiB")),
])
@pytest.mark.parametrize("command", [("kernel", "run"), ("validate",)])
def test_bad_nodes_on_the_command_line_is_one_line(command, args, needles):
    assert_user_error(cli(*command, "seqloop", *args), *needles)


# ---- the workloads ----

def test_thpscale_spec_takes_thread_counts_joined_by_plus():
    wl = workload.build("thpscale:threads=1+4,mapsize_pct=60", 0, 1 << 30)
    assert wl.thp == {"kind": "thpscale", "threads": [1, 4], "madvise": True, "mapsize_pct": 60, "proactiveness": -1}
    assert wl.phases == ["threads1", "threads4"] and len(wl) == 0 and not wl.writes_files
    # The work file: MAPSIZE (60 % of the guest, which is more than its MemTotal) + 16 MiB.
    assert wl.file_pages == ((1 << 30) * 60 // 100 + (16 << 20)) // 4096
    assert wl.thp_argv() == ["thpscale", "/data/data", "1", "60", "1,4", "-1"]
    assert workload.build("thpscale", 0, 1 << 30).thp["threads"] == [1, 4]


def test_usemem_spec_and_its_guest_arguments():
    wl = workload.build("usemem:threads=4,cache_pct=40,passes=2,defrag=madvise,proactiveness=0", 0, 1 << 30)
    assert wl.thp == {"kind": "usemem", "threads": 4, "cache_pct": 40, "usemem_pct": 70, "passes": 2,
                      "defrag": "madvise", "proactiveness": 0}
    assert wl.thp_argv("/d") == ["usemem", "/d", "madvise", "4", "40", "70", "2", "0"]
    assert wl.file_pages == (1 << 30) * 40 // 100 // 4096 and wl.cgroups == [""]


@pytest.mark.parametrize("spec, needle", [
    ("thpscale:threads=0", "each count must be 1..64"),
    ("thpscale:threads=1,4", "expected key=value"),
    ("thpscale:threads=a", "joined by '+'"),
    ("thpscale:madvise=2", "out of range"),
    ("thpscale:mapsize_pct=0", "out of range"),
    ("usemem:defrag=bogus", "transparent_hugepage/defrag takes always, defer, defer+madvise, madvise, never"),
    ("usemem:threads=65", "out of range"),
    ("usemem:nodes=2", "unknown parameter(s) nodes"),
    ("thpscale:proactiveness=101", "out of range"),
])
def test_bad_thp_workload_specs(spec, needle):
    with pytest.raises(KernelError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        workload.build(spec, 0, 1 << 30)


def test_thp_workloads_need_the_whole_machine_and_a_guest_with_thp():
    wl = workload.build("thpscale", 0, 1 << 30)
    with pytest.raises(KernelError, match="give --memory-max none"):
        check_thp_workload(Setup(workload="thpscale", memory="128M", guest_mb=1024), wl)
    with pytest.raises(KernelError, match="hugepage_init"):
        check_thp_workload(Setup(workload="thpscale", memory="none", guest_mb=512), wl)
    check_thp_workload(Setup(workload="thpscale", memory="none", guest_mb=640), wl)
    # zram as large as the guest's RAM, as the model's swap.size=auto
    assert swap_size(Setup(workload="thpscale", memory="none", guest_mb=1024), wl) == 1 << 30
    assert swap_size(Setup(workload="thpscale", memory="none", guest_mb=1024, swap="none"), wl) == 0


@pytest.mark.parametrize("args, needles", [
    (("thpscale", "--memory-max", "128M"), ("thpscale runs on the whole machine",)),
    (("thpscale", "--memory-max", "none"), ("512 MiB guest is too small for THP",)),
    (("usemem:defrag=bogus", "--memory-max", "none", "--guest-memory", "1G"), ("defrag='bogus'",)),
])
def test_thp_workload_input_errors_are_one_line(args, needles):
    assert_user_error(cli("kernel", "run", *args), *needles)


def test_a_thp_workload_has_no_trace_to_write(tmp_path):
    assert_user_error(cli("kernel", "trace", "thpscale", "-o", tmp_path / "t"), "thpscale is a program the guest runs")
    assert not (tmp_path / "t").exists()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_guest_program_builds_and_refuses_bad_arguments():
    exe = guest.build_thp()
    r = subprocess.run([str(exe), "thpscale", "/nonexistent"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: thp thpscale" in r.stderr


# ---- the console and the model ----

CONSOLE = """\
@@boot 6.12.117+deb12-amd64 1.0
@@thp [always] madvise never
@@sysctl min_free_kbytes 48720
@@sysctl watermark_scale_factor 10
@@sysctl swappiness 60
@@zone start 0 DMA free=3808 min=190 low=237 high=284 spanned=4095 present=3998 managed=3840 protection=0,0
@@zone start 0 DMA32 free=116742 min=6202 low=7752 high=9302 spanned=126976 present=126976 managed=124815 protection=0,0
@@zone start 1 DMA32 free=110957 min=5786 low=7232 high=8678 spanned=131040 present=131040 managed=118805 protection=0,0
@@meminfo start MemTotal 989840
@@meminfo start MemFree 926028
@@sysctl numa_balancing 0
@@nodes 2 989840
@@pageblocks start 0 DMA 1 7 0 0 0
@@pageblocks start 0 DMA32 3 240 1 0 0
@@thpscale 1 191 2 6073333 46629
@@phase 0 13994282494
@@vm thp_fault_alloc 408
@@vm thp_fault_fallback 171
@@vm compact_stall 129
@@vm numa_miss 136937
@@trace mm_compaction_end -1 async/success 53
@@trace mm_compaction_suitable 9 skipped 5775
@@phase-end 0
@@pageblocks 0 0 DMA32 9 230 5 0 0
@@thpscale 4 141 51 12211054 7635097
@@phase 1 9702046310
@@vm thp_fault_alloc 445
@@vm compact_stall 291
@@phase-end 1
@@thp_defrag always defer defer+madvise [madvise] never
@@done 0
@@exit 0
"""


def test_the_console_carries_nodes_thpscale_runs_and_tracepoint_counts():
    c = console.parse(CONSOLE)
    assert c.finished and (c.thp_nodes, c.thp_memtotal_kb) == (2, 989840)
    assert c.nodes() == [0, 1] and c.node_managed() == {0: 3840 + 124815, 1: 118805}
    assert c.thpscale[1] == {"threads": 4, "huge": 141, "base": 51, "sum_huge_us": 12211054.0,
                             "sum_base_us": 7635097.0}
    assert c.phases[0].trace == {"mm_compaction_end -1 async/success": 53, "mm_compaction_suitable 9 skipped": 5775}
    assert c.vmstat()["thp_fault_alloc"] == 853 and c.sysctl["numa_balancing"] == 0
    assert c.pageblocks["start"] == [(0, "DMA", [1, 7, 0, 0, 0]), (0, "DMA32", [3, 240, 1, 0, 0])]
    assert c.pageblocks["0"] == [(0, "DMA32", [9, 230, 5, 0, 0])]
    u = console.parse("@@usemem 4 4539186048 692224 692280\n@@usemem_nodes 103140 69916\n@@thpfault 21534000 32\n")
    assert u.usemem == {"threads": 4, "elapsed_ns": 4539186048, "anon_huge_kb": 692224, "anon_kb": 692280,
                        "pages_per_node": [103140, 69916]}
    assert u.thp_fault_ns == 21534000 and c.thp_fault_ns is None


class _Prep:
    """What thp_compare reads of a Prepared."""

    def __init__(self, spec: str):
        self.wl = workload.build(spec, 0, 1 << 30)
        self.setup = Setup(workload=spec, memory="none", guest_mb=1024, nodes=2)
        self.nodes, self.zram, self.cgroup_limits = 2, 1 << 30, {}
        self.read_ahead_kb, self.fault_around_bytes = 128, 65536
        self.disk_size = None


def test_the_model_is_sized_to_the_guest_and_compared_per_thread_count():
    p, c = _Prep("thpscale:threads=1+4"), console.parse(CONSOLE)
    s = thp_compare.model_settings(p, [c])
    assert s["machine.memory"] == "989840K" and s["machine.nodes"] == "2"
    # Each node its own size: the guest's managed pages (its reserved memory on node 1).
    assert s["machine.node_memory"] == f"{(3840 + 124815) * 4}K,{118805 * 4}K"
    assert s["machine.kernel_used"] == f"{989840 - 926028}K" and s["machine.zone_dma"] == f"{3840 * 4}K"
    assert (s["transparent_hugepage.enabled"], s["transparent_hugepage.defrag"]) == ("always", "madvise")
    assert s["thp.policy"] == "thp@6.12" and s["vm.min_free_kbytes"] == "48720" and s["swap.size"] == str(1 << 30)
    assert not any(k.startswith("cgroup.") for k in s)
    # The guest's LRU (MGLRU off in this console) and I/O settings go to the model as well.
    assert s["policy"] == "classic@6.15" and (s["block.read_ahead_kb"], s["fault_around_bytes"]) == ("128", "65536")
    res = thp_compare.compare_boots(p, [c])
    assert [r["threads"] for r in res["per_run"]] == [1, 4]
    rows = {r["counter"]: r for r in res["rows"]}
    assert rows["thp_fault_alloc"]["real_mean"] == 853 and rows["thp_fault_alloc"]["target"] == 0.25
    # Both fault MAPSIZE / NR / 2 MiB / 2 strides per thread, MAPSIZE = 80 % of MemTotal.
    mapsize = 989840 // 4 * 80 // 100
    for m, g in zip(res["model_phases"], c.thpscale):
        assert m["huge"] + m["base"] == mapsize // m["threads"] // 512 // 2 * m["threads"] == g["huge"] + g["base"]
        assert m["vmstat"]["thp_fault_alloc"] > 0
    assert res["per_run"][0]["huge_pct"]["kernel"] == pytest.approx(100 * 191 / 193)
    assert {d["counter"] for d in res["directions"]} >= {"compact_stall", "numa_hit", "numa_miss"}
    d = {x["counter"]: x for x in res["directions"]}["compact_stall"]
    assert d["kernel"] == [129, 291] and d["kernel_dir"] == 1


def test_free_memory_as_a_count_begins_from_the_guests_free_lists():
    """@@freelist/@@zoneblocks countN per node: free pages, those in blocks of order 9 or
    more (a huge fault's without compaction), pageblocks per type; summed over zones and
    migrate types."""
    log = ("@@freelist count1 0 DMA Movable 2 0 0 0 0 0 0 0 0 0 1\n"
           "@@freelist count1 0 DMA32 Unmovable 5 1 0 0 0 0 0 0 0 0 0\n"
           "@@freelist count1 0 DMA32 Movable 10 0 0 0 0 0 0 0 0 2 3\n"
           "@@freelist count1 1 DMA32 Movable 1 1 1 0 0 0 0 0 0 0 0\n"
           "@@zoneblocks count1 0 DMA 1 7 0 0 0\n@@zoneblocks count1 0 DMA32 40 200 3 0 0\n"
           "@@zoneblocks count1 1 DMA32 20 230 2 0 0\n")
    f = thp_compare.guest_free_at(console.parse(log), "count1")
    assert f["0"] == {"free": 2 + 1024 + 5 + 2 + 10 + 2 * 512 + 3 * 1024, "free_huge": 1024 + 2 * 512 + 3 * 1024,
                      "unmovable": 41, "movable": 207, "reclaimable": 3}
    assert f["1"] == {"free": 7, "free_huge": 0, "unmovable": 20, "movable": 230, "reclaimable": 2}
    assert thp_compare.guest_free_at(console.parse(log), "count2") is None
    assert thp_compare.mean_free([f, {"0": f["0"]}])["1"]["movable"] == 115


def test_the_model_runs_at_the_guests_time_dilation():
    """As every validation (validate.simulate), the kernel's timers run at the guest's
    wall-clock speed: sim.time_dilation is the fixed point of the guest's wall time of the
    counts (13.99 + 9.70 s here) over the model's simulated time of the same counts."""
    p, c = _Prep("thpscale:threads=1+4"), console.parse(CONSOLE)
    assert thp_compare.guest_wall_s(p, [c]) == pytest.approx(13.994282494 + 9.702046310)
    res = thp_compare.compare_boots(p, [c])
    d = float(res["settings"]["sim.time_dilation"])
    _, sim_s = thp_compare.run_model(p.wl.thp, res["settings"])
    assert d > 10 and d == pytest.approx(thp_compare.guest_wall_s(p, [c]) / sim_s, rel=0.1)


def test_the_model_runs_once_per_boot_and_shows_the_mean():
    """Each boot's inputs (free lists, wall time, wake-up latencies) give a model run of
    its own; the compared figures are the mean over them, phase by phase."""
    runs = [[{"threads": 1, "vmstat": {"a": 10, "b": 1}, "huge_pct": 50.0, "pages_per_node": [2, 4]},
             {"threads": 4, "vmstat": {"a": 20}, "huge_pct": 10.0, "pages_per_node": [0, 8]}],
            [{"threads": 1, "vmstat": {"a": 30}, "huge_pct": 70.0, "pages_per_node": [4, 6]},
             {"threads": 4, "vmstat": {"a": 40, "b": 4}, "huge_pct": 30.0, "pages_per_node": [2, 2]}]]
    m = thp_compare.mean_phases(runs)
    assert [x["threads"] for x in m] == [1, 4]
    assert m[0]["vmstat"] == {"a": 20, "b": 0.5} and m[1]["vmstat"] == {"a": 30, "b": 2}
    assert (m[0]["huge_pct"], m[0]["pages_per_node"], m[1]["pages_per_node"]) == (60, [3, 5], [1, 5])
    p, c = _Prep("thpscale:threads=1+4"), console.parse(CONSOLE)
    one, two = thp_compare.compare_boots(p, [c]), thp_compare.compare_boots(p, [c, console.parse(CONSOLE)])
    assert (one["sim_runs"], two["sim_runs"]) == (1, 2)
    assert [r["sim"] for r in two["rows"]] == [r["sim"] for r in one["rows"]], "the same boot twice: the same mean"


def test_usemem_runs_the_model_once_with_the_workloads_sizes():
    c = console.parse(CONSOLE.replace("always defer defer+madvise [madvise]", "[always] defer defer+madvise madvise"))
    c.thpscale, c.usemem = [], {"threads": 1, "elapsed_ns": 1, "anon_huge_kb": 50, "anon_kb": 100,
                                "pages_per_node": [100, 60]}
    p = _Prep("usemem:threads=1,passes=1")
    res = thp_compare.compare_boots(p, [c])
    assert res["settings"]["transparent_hugepage.defrag"] == "always"
    assert len(res["model_phases"]) == 1 and res["per_run"][0]["huge_pct"]["kernel"] == 50.0
    assert res["model_phases"][0]["vmstat"]["thp_fault_alloc"] > 0
    # Where the region ended, per node: the guest's numa_maps beside the model's.
    pn = res["per_run"][0]["pages_per_node"]
    assert pn["kernel"] == [(100, 0.0), (60, 0.0)] and len(pn["model"]) == 2 and sum(pn["model"]) > 0
    assert "thp_fault" not in res
    # At the guest's speeds: its THP fault cost and kswapd's CPU per page scanned.
    c.thp_fault_ns, c.kthread_ticks = 20_000_000, {"start": {"kswapd0": 0}, "end": {"kswapd0": 50}}
    c.phases[0].vmstat["pgscan_kswapd"] = 50_000
    res = thp_compare.compare_boots(p, [c], cpu_cost="measured")
    tf = res["thp_fault"]
    assert tf["guest_fault_ns"] == [20_000_000] and tf["clear_page_ns"][0] > 250
    assert tf["guest_kswapd_ns_per_scan"] == [pytest.approx(10_000)]
    assert tf["reclaim_factor"][0] > 0 and res["model_phases"][0]["kswapd_cpu_s"] > 0


def _fake_model(monkeypatch, run_model):
    """thp_compare.simulate on ``run_model`` (settings -> (phases, simulated s)), a guest
    whose workload took 20 s of wall time, and no settings of its own: the Prepared to pass."""
    monkeypatch.setattr(thp_compare, "model_settings", lambda p, consoles: {})
    monkeypatch.setattr(thp_compare, "guest_wall_s", lambda p, consoles: 20.0)
    monkeypatch.setattr(thp_compare, "run_model", run_model)
    return type("P", (), {"wl": type("W", (), {"thp": {}})()})()


def test_the_measured_thp_fault_cost_sets_the_models_clearing_cost(monkeypatch):
    """``--cpu-cost measured`` for the THP workloads: the guest's first THP faults cost
    @@thpfault ns of CPU (TCG clears a huge page store by store); the model's fault
    (cost.minor_fault_ns + 512 cost.clear_page_ns) costs that on each run's simulated clock,
    recomputed at every time dilation the fixed point tries. A boot without the figure is
    one clear error."""
    assert thp_compare.clear_page_ns(20_000_000, 20.0, {}) == str(round((1_000_000 - 1000) / 512))
    assert thp_compare.clear_page_ns(20_000_000, 20.0, {"cost.minor_fault_ns": "5000"}) == str(round(995_000 / 512))
    assert thp_compare.clear_page_ns(1000, 50.0, {}) == "1", "at least 1 ns"
    seen = []

    def fake_run(t, settings):
        seen.append((settings.get("sim.time_dilation"), settings.get("cost.clear_page_ns")))
        return [], 4.0

    p = _fake_model(monkeypatch, fake_run)
    boots = [console.parse("@@thpfault 10000000 32\n"), console.parse("@@thpfault 30000000 32\n")]
    thp_compare.simulate(p, boots, cpu_cost="measured")
    assert seen == [(None, str(round((20_000_000 - 1000) / 512))), ("5.000", str(round((4_000_000 - 1000) / 512)))]
    seen.clear()
    thp_compare.simulate(p, boots)
    assert seen == [(None, None), ("5.000", None)], "the model's own cost unless measured"
    with pytest.raises(KernelError, match="did not record its THP fault cost"):
        thp_compare.simulate(p, [boots[0], console.parse("@@usemem 1 1 1 1\n")], cpu_cost="measured")


def test_the_measured_speeds_scale_reclaim_for_the_guests_kswapd_cost_per_page(monkeypatch):
    """With the boots' kswapd CPU (@@kthread ticks: 100 ticks for 100,000 pages scanned,
    10 µs a page on the guest's clock), the reclaim costs are scaled until the model's
    kswapd, on its run's clock times the dilation, costs that: here its kswapd takes 1 µs a
    page at x1 and the run 4 s at any factor, so the dilation is 5 and the factor 2."""
    runs = []

    def fake_run(t, settings):
        k = int(settings.get("cost.scan_ns", "100")) / 100
        runs.append((settings.get("sim.time_dilation"), settings.get("cost.scan_ns")))
        return [{"vmstat": {"pgscan_kswapd": 1000}, "kswapd_cpu_s": 1e-6 * k * 1000}], 4.0

    p = _fake_model(monkeypatch, fake_run)
    boot = console.parse("@@thpfault 20000000 32\n@@kthread start kswapd0 5\n@@kthread end kswapd0 105\n"
                         "@@phase 0 1\n@@vm pgscan_kswapd 100000\n@@phase-end 0\n")
    assert thp_compare.guest_kswapd_ns_per_scan([boot]) == pytest.approx(10_000)
    res = thp_compare.simulate(p, [boot], cpu_cost="measured")
    assert res["reclaim_factor"] == pytest.approx(2.0)
    assert res["settings"]["cost.scan_ns"] == "200" and res["settings"]["swap.zram.compress_ns"] == "12000"
    assert runs == [(None, None), ("5.000", "200")], "the second run settles both"


# ---- one boot ----

@pytest.mark.kernel
def test_thpscale_on_two_nodes_of_the_real_kernel(kernel_tree, tmp_path):
    from reclaimlab.kernel.experiment import validate

    setup = Setup(workload="thpscale:threads=1,mapsize_pct=50", memory="none", guest_mb=768, nodes=2, mglru="off",
                  boots=1)
    res = validate(setup, tmp_path, progress=False)
    assert res["nodes"] == 2 and res["settings"]["machine.nodes"] == "2" and res["defrag"] == "madvise"
    rows = {r["counter"]: r for r in res["rows"]}
    assert rows["thp_fault_alloc"]["real_mean"] > 0 and rows["numa_miss"]["real_mean"] > 0
    # Every stride of the madvised region is counted, huge or base, by both.
    assert res["per_run"][0]["huge_pct"]["kernel"] > 50
    assert abs(rows["thp_fault_alloc"]["rel_error"]) <= 0.25, rows["thp_fault_alloc"]
    # What the count began with, both sides, per node: the guest's free lists as thp.c read
    # them after drop_caches, the model's at the same point.
    free = res["per_run"][0]["free_at_start"]
    for side in ("kernel", "model"):
        assert sorted(free[side]) == ["0", "1"]
        for f in free[side].values():
            assert 0 < f["free_huge"] <= f["free"] and f["movable"] > f["unmovable"]


def test_pinned_multi_node_guests_give_kswapd_a_cpu_of_its_own_in_the_model():
    from reclaimlab.kernel.validate import model_cpus

    assert model_cpus(2, 2, pinned=False) == 2  # one vCPU a node: kswapd shares it, as in the kernel
    assert model_cpus(2, 2, pinned=True) == 4  # --pin-cpus moved kswapd off the workload's vCPU
    assert model_cpus(2, 1, pinned=True) == 2  # one node, two vCPUs: kswapd has one already


def test_the_measured_kswapd_wakeup_runs_on_the_models_clock(monkeypatch):
    """``thp_compare.simulate(wakeup_wall_ns=...)`` (``--kswapd-wakeup measured``):
    cost.kswapd_wakeup_ns is the guest's wake-up latency over each run's time dilation, as
    for the trace workloads (validate.simulate)."""
    seen = []

    def fake_run(t, settings):
        seen.append((settings.get("sim.time_dilation"), settings.get("cost.kswapd_wakeup_ns")))
        return [], 4.0

    p = _fake_model(monkeypatch, fake_run)
    thp_compare.simulate(p, [], wakeup_wall_ns=2_000_000)
    assert seen == [(None, "2000000"), ("5.000", "400000")]
    seen.clear()
    thp_compare.simulate(p, [], wakeup_wall_ns=[1_000_000, 3_000_000])
    assert seen == [(None, "1000000,3000000"), ("5.000", "200000,600000")]
    seen.clear()
    thp_compare.simulate(p, [])
    assert seen == [(None, None), ("5.000", None)]
