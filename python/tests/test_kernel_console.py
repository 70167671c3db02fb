"""The serial-console parser (reclaimlab.kernel.console): markers anywhere in a line,
after firmware escape codes; phases, counters, failures."""

from __future__ import annotations

from reclaimlab.kernel.console import clean, parse

SEABIOS = "\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n"

LOG = (
    SEABIOS
    + "\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H@@boot 6.12.117+deb12-amd64 2.85\r\n"
    + "[    3.1] random: crng init done\r\n"
    + "@@lru_gen 0x0007\r\n@@sysctl min_free_kbytes 2739\r\n@@sysctl swappiness 60\r\n"
    + "@@meminfo MemTotal 473144\r\n@@memory.max 67108864\r\n"
    + "@@vm pgpgin 999\r\n"  # outside a phase: ignored
    + "@@phase 0 1500000000\r\n@@vm pgpgin 98304\r\n@@vm nr_free_pages -16919\r\n@@zram 4096 63\r\n@@phase-end 0\r\n"
    + "@@phase 1 2500000000\r\n@@vm pgpgin 4\r\n@@vm workingset_refault_file 24559\r\n@@zram 8388608 1048576\r\n@@phase-end 1\r\n"
    + "@@done 0\r\n@@memory.events max 518\r\n@@memory.peak 67108864\r\n@@exit 0\r\n"
    + "[    9.0] reboot: Power down\r\n"
)


def test_markers_after_firmware_escape_codes():
    c = parse(LOG)
    assert c.release == "6.12.117+deb12-amd64"  # the @@boot line began with SeaBIOS escapes
    assert c.lru_gen == "0x0007"
    assert c.sysctl == {"min_free_kbytes": 2739, "swappiness": 60}
    assert c.meminfo == {"MemTotal": 473144}
    assert c.memory_max == "67108864"
    assert c.memory_events == {"max": 518}
    assert c.memory_peak == 67108864
    assert c.finished


def test_phases_and_summed_counters():
    c = parse(LOG)
    assert [(p.index, p.wall_ns) for p in c.phases] == [(0, 1500000000), (1, 2500000000)]
    assert c.phases[0].vmstat == {"pgpgin": 98304, "nr_free_pages": -16919}
    # The delta outside a phase (999) is not counted.
    assert c.vmstat() == {"pgpgin": 98308, "nr_free_pages": -16919, "workingset_refault_file": 24559}
    # zram's ratio is taken where it held the most data: 8 MiB in 1 MiB.
    assert c.zram_ratio() == 8.0


def test_zram_ratio_is_per_byte_of_the_pool_not_of_the_compressed_data():
    # The pool (zsmalloc's pages, mem_used_total) is what RAM the stored pages take: 8 MiB
    # compressed into 1 MiB sat in 1.25 MiB of pool pages.
    phase = "@@phase 0 1\n@@zram 8388608 1048576 1310720\n@@phase-end 0\n"
    assert parse(phase).zram_ratio() == 6.4
    # A log that printed the pool only at its end takes the pool's peak (mem_used_max).
    old = "@@phase 0 1\n@@zram 8388608 1048576\n@@phase-end 0\n"
    tail = "@@zram_mm_stat 4096 64 20480 0 1677721 0 0 0 0\n"
    assert parse(old + tail).zram_ratio() == 8388608 / 1677721
    assert parse(old).zram_ratio() == 8.0
    # One page stored in a pool of five: the model's pool cannot be larger than the pages.
    assert parse("@@phase 0 1\n@@zram 4096 64 20480\n@@phase-end 0\n").zram_ratio() == 1.0


def test_marker_in_the_middle_of_a_kernel_line():
    c = parse("[   12.5] virtio_blk virtio1: [vda] 1 GiB@@vm pgpgin 12\n@@phase 0 1\n@@vm pgpgin 12\n@@phase-end 0\n")
    assert c.vmstat() == {"pgpgin": 12}


def test_unfinished_boot_panic_and_errors():
    c = parse("@@boot 6.1.0 3\n@@phase 0 1\n@@vm pgpgin 4\n[ 5.0] Kernel panic - not syncing: Out of memory\n")
    assert not c.finished and c.phases == [] and c.panic == "Kernel panic - not syncing: Out of memory"
    c = parse("@@error mount /dev/vda\n@@exit 1\n")
    assert not c.finished and c.errors == ["mount /dev/vda"] and c.exit == 1
    c = parse("@@phase 0 1\n@@vm pgpgin notanumber\n@@phase-end 0\n@@done 0\n@@exit 0\n")
    assert c.warnings and c.finished


def test_clean_strips_escape_sequences_and_controls():
    assert clean("\x1b[2J\x1b[01;01H\x1b(Babc\x07\r") == "abc"


def test_only_a_panic_that_measured_nothing_is_retried():
    from reclaimlab.kernel.run import retryable_panic

    boot_oops = "[ 4.07] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n[ 4.10] Kernel panic - not syncing: Fatal exception in interrupt\n"
    ran = "@@phase 0 1\n@@vm pgpgin 4\n@@phase-end 0\n"
    assert retryable_panic(parse("@@boot 6.12.117 3\n" + boot_oops))
    # TCG's stray int3 on a text patch (a static key flipped mid-run) measured nothing either.
    assert retryable_panic(parse(ran + boot_oops))
    # Any other panic once the workload ran is a result to report, not an artefact to hide.
    gpf = "[ 9.1] Oops: general protection fault, probably for non-canonical address 0x1: 0000 [#1]\n" \
          "[ 9.2] Kernel panic - not syncing: Fatal exception\n"
    assert not retryable_panic(parse(ran + gpf))
    assert retryable_panic(parse("@@boot 6.12.117 3\n" + gpf))
    assert not retryable_panic(parse("@@boot 6.12.117 3\n@@error mount /dev/vda\n"))



def test_slab_caches_and_the_layout_at_the_end():
    """``@@slab WHEN NAME ACTIVE_OBJS OBJSIZE OBJPERSLAB PAGESPERSLAB SLABS`` (guest/init.sh's
    slabs, /proc/slabinfo) and the free lists after the workload (``@@freelist end``)."""
    log = ("@@boot 6.12.117+deb12-amd64 2.9\n"
           "@@slab start radix_tree_node 364 576 28 4 13\n@@slab end radix_tree_node 1428 576 28 4 51\n"
           "@@meminfo end SReclaimable 1776\n"
           "@@freelist end 0 DMA32 Unmovable 84 43 42 23 19 13 5 5 2 1 0\n@@zoneblocks end 0 DMA32 16 102 2 0 0\n"
           "@@done 0\n@@exit 0\n")
    c = parse(log)
    assert c.slabs["start"]["radix_tree_node"] == [364, 576, 28, 4, 13]
    assert c.slabs["end"]["radix_tree_node"][-1] * c.slabs["end"]["radix_tree_node"][3] == 204  # pages
    assert c.layouts["end"].meminfo["SReclaimable"] == 1776
    assert c.freelists["end"][(0, "DMA32", "Unmovable")][0] == 84
    assert c.zoneblocks["end"][(0, "DMA32")] == [16, 102, 2, 0, 0]


def test_wb_sample_lines_give_the_free_pages_over_time():
    """``--wb-sample``'s ``@@wbs`` lines: the time and the last field, nr_free_pages; a line
    from before the free pages were sampled (nine fields) gives none."""
    c = parse("@@wbs 7490 0 0 0 8 4 0 0 0 39536\r\n@@wbs 7550 0 1 0 8 4 12 3 0 1204\r\n"
              "@@wbs 7610 0 1 0 8 4 12 3 0\r\n")
    assert c.free_samples == [(7490, 39536), (7550, 1204)]
