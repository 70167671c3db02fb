"""The guest's settings (reclaimlab.kernel.run, .experiment, .validate, guest/wl.c):
readahead, fault-around and THP options, whole-machine reclaim (``--memory-max none``), the
guest memory size, their store keys, the simulator settings made from what the guest read
back, and every bad input refused before anything boots."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reclaimlab.kernel import LAB, KernelError, console, guest
from reclaimlab.kernel.experiment import key_of, params_of
from reclaimlab.kernel.ops import write_ops
from reclaimlab.kernel.run import Setup, cgroups_file, guest_mb_of, prepare
from reclaimlab.kernel.validate import (WHOLE_MACHINE_TARGETS, compare, mark_not_comparable,
                                        sim_settings, sim_vmstat, start_layout_settings, targets_for, with_derived)
from reclaimlab.kernel.workload import build

from conftest import FAKE_RELEASE as REL, assert_user_error, cli, fake_kernel


@pytest.fixture
def offline(tmp_path, monkeypatch):
    return fake_kernel(tmp_path, monkeypatch, "CONFIG_MEMCG=y\nCONFIG_LRU_GEN=y\nCONFIG_ZRAM=m\n"
                                               "CONFIG_TRANSPARENT_HUGEPAGE=y\n")


def args_of(p) -> dict[str, str]:
    return dict(a.split("=", 1) for a in p.append.split())


def test_defaults_are_the_kernels_own_and_reach_the_guest(offline):
    p = prepare(Setup(workload="seqloop:pages=100"))
    assert (p.read_ahead_kb, p.fault_around_bytes) == (128, 65536)
    a = args_of(p)
    assert (a["lab.ra"], a["lab.fab"]) == ("128", "65536")
    assert "lab.thp" not in a  # the kernel's own THP mode: not written
    p = prepare(Setup(workload="seqloop:pages=100", **LAB))
    a = args_of(p)
    assert (a["lab.ra"], a["lab.fab"], a["lab.thp"]) == ("0", "4096", "never")


def test_memory_none_lifts_the_limit_and_sizes_follow_the_guest(offline):
    p = prepare(Setup(workload="seqloop:passes=1", memory="none", guest_mb=512))
    assert p.memory_max is None and cgroups_file(p) == "wl max max 0 0\n"
    # 1.5 x (512 MiB - the 160 MiB the kernel keeps) in 4 KiB pages
    assert p.wl.file_pages == int(1.5 * (352 << 20)) // 4096
    assert prepare(Setup(workload="seqloop:passes=1", memory="64M")).wl.file_pages == 24576


def test_thp_needs_a_kernel_with_thp(offline, tmp_path):
    from reclaimlab.kernel.run import check_features

    del offline.config["CONFIG_TRANSPARENT_HUGEPAGE"]
    check_features(offline, Setup(workload="seqloop", thp="never"), zram=0)  # no THP in the config: fine
    with pytest.raises(KernelError, match="--thp always: kernel .* without CONFIG_TRANSPARENT_HUGEPAGE"):
        check_features(offline, Setup(workload="seqloop", thp="always"), zram=0)
    offline.config["CONFIG_TRANSPARENT_HUGEPAGE"] = "y"
    check_features(offline, Setup(workload="seqloop", thp="madvise"), zram=0)


def test_guest_memory_takes_a_size_or_the_old_mib_number():
    assert guest_mb_of("512") == 512
    assert guest_mb_of("1G") == 1024
    assert guest_mb_of("768M") == 768
    with pytest.raises(KernelError, match="whole MiB"):
        guest_mb_of("1536K")
    with pytest.raises(KernelError, match="not a size"):
        guest_mb_of("lots")


def keys(offline_setup: Setup) -> tuple[dict, dict]:
    p = prepare(offline_setup)
    return key_of(offline_setup, p), params_of(offline_setup, p)


def test_lab_settings_keep_the_key_boots_had_before_the_options(offline):
    key, params = keys(Setup(workload="seqloop:pages=100", memory="64M", mglru="on", **LAB))
    # exactly the key and params of a boot stored before readahead, fault-around, THP,
    # guest memory and swappiness were keyed (the suite's stored boots)
    assert key == {"kernel": REL, "package": "", "mglru": "on", "memory.max": str(64 << 20), "zram": "0",
                   "swappiness": "None", "guest_mb": "512", "workload": "seqloop:pages=100"}
    assert params == {"source": "kernel", "kernel": REL, "mglru": "on", "workload": "seqloop:pages=100",
                      "memory": "64M"}


@pytest.mark.parametrize("change", [
    {"read_ahead_kb": 128}, {"read_ahead_kb": 32}, {"fault_around_bytes": 65536}, {"thp": "always"},
    {"thp": "madvise"}, {"thp": None}, {"memory": "none"}, {"memory": "96M"}, {"guest_mb": 1024},
    {"swappiness": 100}, {"swappiness": 0}, {"pcp_high_fraction": 0}, {"pcp_high_fraction": 8}, {"pin_cpus": True},
    {"watermark_boost_factor": 0}, {"watermark_boost_factor": 15000},
    {"wb_sample": True}])
def test_every_guest_setting_changes_the_store_key_and_params(offline, change):
    lab = Setup(workload="seqloop:pages=100", memory="64M", **LAB)
    other = Setup(**{**lab.__dict__, **change})
    (k0, p0), (k1, p1) = keys(lab), keys(other)
    assert k0 != k1 and p0 != p1, change


def test_thp_default_and_an_explicit_mode_are_different_keys(offline):
    base = {"workload": "seqloop:pages=100", "memory": "64M", "read_ahead_kb": 0, "fault_around_bytes": 4096}
    k = [keys(Setup(**base, thp=t))[0] for t in (None, "always", "madvise", "never")]
    assert len({tuple(sorted(x.items())) for x in k}) == 4
    assert k[0]["thp"] == "default"


LOG = ("@@boot 6.12.117+deb12-amd64 2.9\n"
       "@@zone boot 0 DMA free=3977 min=22 low=27 high=32 spanned=4095 present=3998 managed=3977 "
       "protection=0,461,461,461,461\n"
       "@@zone boot 0 DMA32 free=110000 min=662 low=827 high=992 spanned=126944 present=126944 managed=118224 "
       "protection=0,0,0,0,0\n"
       "@@zone boot 0 Normal free=0 min=0 low=0 high=0 spanned=0 present=0 managed=0 protection=0,0,0,0,0\n"
       "@@meminfo boot MemTotal 488804\n@@meminfo boot MemFree 430000\n@@min_free_kbytes boot 2739\n"
       "@@thp always [madvise] never\n@@fault_around_bytes 65536\n@@sysfs read_ahead_kb 128\n"
       "@@sysctl min_free_kbytes 2739\n@@sysctl watermark_scale_factor 10\n@@sysctl swappiness 60\n"
       "@@zone start 0 DMA32 free=100000 min=662 low=827 high=992 spanned=126944 present=126944 managed=118224 "
       "protection=0,0,0,0,0\n"
       "@@meminfo start MemTotal 488804\n@@meminfo start MemFree 412804\n@@min_free_kbytes start 2739\n"
       "@@phase 0 1\n@@vm pgscan_kswapd 900\n@@vm allocstall_movable 3\n@@vm allocstall_normal 1\n"
       "@@vm thp_fault_alloc 0\n@@phase-end 0\n@@done 0\n@@exit 0\n")


def test_console_reads_the_readback_and_the_memory_layout():
    c = console.parse(LOG)
    assert (c.read_ahead_kb, c.fault_around_bytes, c.thp, c.thp_mode) == (128, 65536, "always [madvise] never", "madvise")
    boot, start = c.layouts["boot"], c.layouts["start"]
    assert [z.name for z in boot.zones] == ["DMA", "DMA32", "Normal"]
    dma = boot.zones[0]
    assert (dma.node, dma.free, dma.min, dma.low, dma.high, dma.managed) == (0, 3977, 22, 27, 32, 3977)
    assert dma.protection == [0, 461, 461, 461, 461]
    assert boot.min_free_kbytes == 2739 and boot.used_kb() == 488804 - 430000
    assert start.zones[0].free == 100000 and start.used_kb() == 76000
    # meminfo keeps the last values printed: just before the workload
    assert c.meminfo == {"MemTotal": 488804, "MemFree": 412804}
    rb = c.read_back()
    assert (rb["read_ahead_kb"], rb["fault_around_bytes"], rb["thp"], rb["vm.swappiness"]) == (128, 65536, "madvise", 60)
    assert c.finished
    # vm.percpu_pagelist_high_fraction as read back (guests since 26 Nov 2026)
    c = console.parse(LOG.replace("@@sysctl swappiness 60\n", "@@sysctl swappiness 60\n@@sysctl percpu_pagelist_high_fraction 100\n"))
    assert c.sysctl["percpu_pagelist_high_fraction"] == 100


def test_sim_settings_of_a_whole_machine_run(offline):
    p = prepare(Setup(workload="seqloop:pages=100", memory="none"))
    s = sim_settings(p, [console.parse(LOG)])
    assert s["cgroup.wl.memory.max"] == "max"
    assert s["machine.memory"] == "488804K"
    assert s["machine.kernel_used"] == "76000K"  # MemTotal - MemFree just before the workload
    assert s["machine.zone_dma"] == f"{3977 * 4}K"  # the guest's ZONE_DMA (reported at boot only here)
    assert s["machine.zone_dma_lowmem_reserve"] == "461"  # its protection as the guest computed it at init
    assert (s["block.read_ahead_kb"], s["fault_around_bytes"]) == ("128", "65536")  # as read back
    assert s["block.fs_block_size"] == "1024"  # the data disk's ext4, under 512 MiB
    assert s["vm.min_free_kbytes"] == "2739"
    assert s["machine.cpus"] == "2"  # the guest's vCPUs: the per-CPU page lists' split
    assert "vm.percpu_pagelist_high_fraction" not in s  # 0, the kernel's default, or not read back
    fixed = sim_settings(p, [console.parse(LOG.replace("@@sysctl swappiness 60\n",
                                                       "@@sysctl swappiness 60\n@@sysctl percpu_pagelist_high_fraction 100\n"))])
    assert fixed["vm.percpu_pagelist_high_fraction"] == "100"
    # vm.watermark_boost_factor as the guest read it back (--watermark-boost-factor), else the model's default
    assert "vm.watermark_boost_factor" not in s
    off = sim_settings(p, [console.parse(LOG.replace("@@sysctl swappiness 60\n", "@@sysctl swappiness 60\n@@sysctl watermark_boost_factor 0\n"))])
    assert off["vm.watermark_boost_factor"] == "0"
    assert "machine.kernel_shmem" not in s and "machine.kernel_mlocked" not in s  # not reported
    # The initramfs's shmem and wl's mlocked ops buffer: the root memcg's own LRU pages.
    held = LOG.replace("@@meminfo start MemFree 412804\n",
                       "@@meminfo start MemFree 412804\n@@meminfo start Shmem 6000\n@@meminfo start Mlocked 1200\n")
    s = sim_settings(p, [console.parse(held)])
    assert (s["machine.kernel_shmem"], s["machine.kernel_mlocked"]) == ("6000K", "1200K")
    lab = prepare(Setup(workload="seqloop:pages=100", memory="64M", **LAB))
    s = sim_settings(lab, [console.parse(LOG.replace("read_ahead_kb 128", "read_ahead_kb 0"))])
    assert s["cgroup.wl.memory.max"] == str(64 << 20) and s["block.read_ahead_kb"] == "0"


#: The 256 MiB whole-machine guest at its workload's start (first seqloop boot, 27 Nov 2026):
#: /proc/zoneinfo, meminfo and /proc/pagetypeinfo's free lists and pageblocks.
START_256 = ("@@zone start 0 DMA free=3808 min=32 low=40 high=48 spanned=4095 present=3998 managed=3840 "
             "protection=0,186,186,186,186\n"
             "@@zone start 0 DMA32 free=41217 min=428 low=535 high=642 spanned=61405 present=61405 managed=50032 "
             "protection=0,0,0,0,0\n"
             "@@meminfo start MemTotal 215488\n@@meminfo start MemFree 180100\n"
             "@@freelist start 0 DMA Unmovable 0 0 0 0 0 1 1 1 0 0 0\n"
             "@@freelist start 0 DMA Movable 0 0 0 0 0 0 0 0 0 1 3\n"
             "@@freelist start 0 DMA Reclaimable 0 0 0 0 0 0 0 0 0 0 0\n"
             "@@freelist start 0 DMA HighAtomic 0 0 0 0 0 0 0 0 0 0 0\n"
             "@@freelist start 0 DMA32 Unmovable 0 0 1 1 0 1 0 1 0 1 0\n"
             "@@freelist start 0 DMA32 Movable 0 1 1 1 4 3 3 4 2 1 37\n"
             "@@freelist start 0 DMA32 Reclaimable 1 1 0 0 0 1 1 1 0 1 0\n"
             "@@zoneblocks start 0 DMA 1 7 0 0 0\n@@zoneblocks start 0 DMA32 12 106 2 0 0\n")


def test_sim_settings_start_the_machine_with_the_guests_free_lists(offline):
    from reclaimlab import _core

    p = prepare(Setup(workload="seqloop:pages=100", memory="none", guest_mb=256))
    head, tail = LOG.split("@@zone start", 1)[0], "@@phase 0 1\n@@phase-end 0\n@@done 0\n@@exit 0\n"
    c = console.parse(head + START_256 + tail)
    s = sim_settings(p, [c])
    assert s["machine.start_layout"] == (
        "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 "
        "reclaimable=0,0,0,0,0,0,0,0,0,0,0; 0 DMA32 blocks=12,106,2 unmovable=0,0,1,1,0,1,0,1,0,1,0 "
        "movable=0,1,1,1,4,3,3,4,2,1,37 reclaimable=1,1,0,0,0,1,1,1,0,1,0")
    # The zones' 53,872 managed pages less the 45,021 free pages listed, not MemTotal -
    # MemFree (35,388K) read a moment apart: the model's key agrees with the layout to the page.
    assert s["machine.kernel_used"] == "35404K"
    cfg = _core.Config()
    for k, v in s.items():
        cfg.set(k, v)
    cfg.validate()  # the model lays it out
    off = sim_settings(p, [c], start_layout=False)
    assert "machine.start_layout" not in off and off["machine.kernel_used"] == "35388K"
    # Zones of other sizes than the guest's (the model splits memory evenly over two nodes):
    # no layout; nor without the records.
    assert start_layout_settings(c, {**s, "machine.nodes": "2"}) == {}
    assert "machine.start_layout" not in sim_settings(p, [console.parse(LOG)])


def test_damon_seeds_go_through_the_boots_start_layouts(offline):
    """The DAMON comparison's seed k starts from boot (k - 1) mod boots' free lists: the
    paddr scheme sees the workload where each boot put it."""
    from reclaimlab.kernel.damon_compare import seed_layout

    p = prepare(Setup(workload="seqloop:pages=100", memory="none", guest_mb=256))
    head, tail = LOG.split("@@zone start", 1)[0], "@@phase 0 1\n@@phase-end 0\n@@done 0\n@@exit 0\n"
    other = START_256.replace("@@freelist start 0 DMA32 Movable 0 1 1 1 4 3 3 4 2 1 37",
                              "@@freelist start 0 DMA32 Movable 0 1 1 1 4 3 3 4 2 0 38")
    boots = [console.parse(head + START_256 + tail), console.parse(head + other + tail)]
    s = sim_settings(p, boots)
    first = seed_layout(boots, 1, s)  # the first boot's machine: what the settings hold already
    assert first and all(s[k] == v for k, v in first.items())
    second = seed_layout(boots, 2, s)
    assert second["machine.start_layout"].endswith("movable=0,1,1,1,4,3,3,4,2,0,38 reclaimable=1,1,0,0,0,1,1,1,0,1,0")
    assert seed_layout(boots, 3, s) == seed_layout(boots, 1, s)
    # A run without a layout gets none from the seeds either.
    assert seed_layout(boots, 2, sim_settings(p, boots, start_layout=False)) == {}
    # A boot whose DMA32 manages a page less (its MemTotal 4 KiB less) has no layout over
    # the first boot's machine; its seed runs its own machine and layout.
    smaller = console.parse(head + START_256.replace("managed=50032", "managed=50031")
                            .replace("MemTotal 215488", "MemTotal 215484") + tail)
    assert start_layout_settings(smaller, s) == {}
    own = seed_layout([boots[0], smaller], 2, s)
    assert own["machine.memory"] == "215484K" and own["machine.start_layout"] == start_layout_settings(boots[0], s)["machine.start_layout"]
    assert int(own["machine.kernel_used"][:-1]) == int(s["machine.kernel_used"][:-1]) - 4  # the same free lists


def test_whole_machine_runs_grade_kswapd_and_direct_reclaim():
    wl = build("seqloop:pages=100", 1 << 20)
    assert set(WHOLE_MACHINE_TARGETS) <= set(targets_for(wl, whole_machine=True))
    assert not set(WHOLE_MACHINE_TARGETS) & set(targets_for(wl))
    assert all(v == 0.25 for v in WHOLE_MACHINE_TARGETS.values())
    assert targets_for(wl, True)["pgsteal_file"] == 0.10
    # allocstall: the kernel's per-zone counters summed, against the model's
    real = with_derived(console.parse(LOG).vmstat())
    assert real["allocstall"] == 4
    rows = {r["counter"]: r for r in compare([real], with_derived({"allocstall_normal": 5}), targets_for(wl, True))}
    assert rows["allocstall"]["sim"] == 5 and rows["allocstall"]["met"] is True  # +25 %


def test_the_roots_shmem_is_compared_as_its_change_over_the_workload():
    # The guest's @@vm rows give every item as a change over the phases; the model's
    # nr_shmem is its gauge at the end, from machine.kernel_shmem's 1,820 pages.
    sim = {"vmstat": {"nr_shmem": 1_427, "allocstall_normal": 2}, "config": {"machine.kernel_shmem": "7280K"}}
    vm = sim_vmstat(sim)
    assert vm["nr_shmem"] == -393 and vm["allocstall"] == 2
    assert sim["vmstat"]["nr_shmem"] == 1_427  # the run's own output is left alone
    # Shown beside the headline counters when either side moved it.
    rows = {r["counter"]: r for r in compare([{"nr_shmem": -400}], vm, {})}
    assert rows["nr_shmem"]["sim"] == -393 and rows["nr_shmem"]["met"] is None
    assert "nr_shmem" not in {r["counter"] for r in compare([{"nr_shmem": 0}], {"nr_shmem": 0}, {})}


def test_anon_thps_the_simulator_did_not_make_are_not_comparable():
    wl = build("anon:pages=64,rounds=1", 1 << 20)
    targets = targets_for(wl, True)
    real = [{"pswpin": 100, "pswpout": 200, "pgsteal_file": 10, "pgscan_kswapd": 50, "thp_fault_alloc": 3}]
    rows = compare(real, {"pswpin": 100, "pswpout": 200, "pgscan_kswapd": 50}, targets)
    note = mark_not_comparable(rows, real, whole_machine=True)
    assert "3 anon THPs" in note
    by = {r["counter"]: r for r in rows}
    assert by["pswpin"]["comparable"] is False and by["pswpin"]["met"] is None
    assert by["pgscan_kswapd"]["comparable"] is False
    # the simulator made THPs too: comparable
    rows = compare(real, {"pswpin": 100, "thp_fault_alloc": 2}, targets)
    assert mark_not_comparable(rows, real, True, {"thp_fault_alloc": 2}) is None and all(r["comparable"] for r in rows)
    # without THPs nothing changes
    real[0]["thp_fault_alloc"] = 0
    rows = compare(real, {"pswpin": 100}, targets)
    assert mark_not_comparable(rows, real, True) is None and all(r["comparable"] for r in rows)


BAD = [
    (["--read-ahead-kb", "-1"], "--read-ahead-kb -1: must be 0"),
    (["--read-ahead-kb", "lots"], "--read-ahead-kb lots: not an integer"),
    (["--fault-around-bytes", "6000"], "--fault-around-bytes 6000: must be a power of two"),
    (["--fault-around-bytes", "2048"], "--fault-around-bytes 2048: must be a power of two from 4096"),
    (["--fault-around-bytes", "4194304"], "(a PMD)"),
    (["--thp", "sometimes"], "--thp sometimes: must be always, madvise or never"),
    (["--percpu-pagelist-high-fraction", "4"], "--percpu-pagelist-high-fraction must be 0 or 8..2147483647"),
    (["--watermark-boost-factor", "-1"], "--watermark-boost-factor must be 0..2147483647"),
    (["--pin-cpus", "--smp", "1"], "--pin-cpus needs at least 2 guest CPUs (--smp), got 1"),
    (["--guest-memory", "128M"], "the guest needs at least 256M"),
    (["--guest-memory", "100"], "the guest needs at least 256M"),
    (["--memory-max", "none", "--guest-memory", "512M", "--swap", "none"], "does not fit the guest"),
    (["--memory-max", "400M", "--guest-memory", "512M"], "leaves too little of the 512 MiB guest"),
]


@pytest.mark.parametrize("extra,needle", BAD)
def test_bad_guest_settings_are_one_line_errors_before_anything_boots(tmp_path, extra, needle):
    spec = "anon:pages=200000" if "--swap" in extra else "seqloop:pages=100"
    for command in ("kernel run", "validate"):
        p = cli(*command.split(), spec, *extra, "--out-dir", tmp_path / "out")
        assert_user_error(p, needle)
        assert not (tmp_path / "out").exists()  # nothing written


# ---------------------------------------------------------------- the guest program on the host

def _preads(tmp_path: Path, merge: str) -> list[int]:
    """Sizes of wl's preads of DATA for 8 consecutive pages, under strace."""
    wl = build("seqloop:pages=8,passes=1", 1 << 20)
    write_ops(wl, tmp_path / "ops")
    (tmp_path / "data").write_bytes(np.arange(8 * 512, dtype="<u8").tobytes())
    env = {**os.environ, "WL_MERGE": merge, "WL_REPORT": "echo @@report ran"}
    r = subprocess.run(["strace", "-f", "-e", "trace=pread64", "-o", str(tmp_path / "st"), str(guest.build_wl()),
                        str(tmp_path / "ops"), str(tmp_path / "data"), "-"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "@@report ran" in r.stdout and r.stdout.index("@@report ran") < r.stdout.index("@@start")
    sizes = []
    for line in (tmp_path / "st").read_text().splitlines():
        if "pread64(4," in line or "pread64(3," in line:
            sizes.append(int(line.rsplit("=", 1)[1].split()[0]))
    return sizes


@pytest.mark.skipif(shutil.which("strace") is None or shutil.which("gcc") is None, reason="needs strace and gcc")
def test_wl_merges_preads_only_without_readahead(tmp_path):
    # The ops file is read first (one or more preads of the ops fd); the data preads follow.
    merged, single = _preads(tmp_path, "1"), _preads(tmp_path, "0")
    assert merged[-1] == 8 * 4096  # 8 consecutive pages: one 32 KiB read
    assert single[-8:] == [4096] * 8 and 8 * 4096 not in single
