"""Workload specs -> one page sequence, and its two encodings: the guest program's ops file
(guest/wl.c) and the simulator's native trace (reclaimlab.kernel.workload / .ops)."""

from __future__ import annotations

import numpy as np
import pytest

import reclaimlab

from reclaimlab.kernel import KernelError
from reclaimlab.kernel.ops import HEADER, MAGIC, op_words, write_ops, write_sim_trace
from reclaimlab.kernel.workload import FILE, SYSCALL, WRITE, build

MIB = 1 << 20


def test_seqloop_is_passes_of_the_whole_file_through_pread():
    wl = build("seqloop:pages=5,passes=2", 64 * MIB)
    assert wl.pages.tolist() == [0, 1, 2, 3, 4] * 2
    assert set(wl.flags.tolist()) == {FILE | SYSCALL}
    assert (wl.file_pages, wl.anon_pages, wl.phases, wl.bounds) == (5, 0, ["pass1", "pass2"], [5, 10])
    # Default size: 1.5 x memory.max in 4 KiB pages.
    assert build("seqloop:passes=1", 64 * MIB).file_pages == 24576


def test_anon_writes_every_page_then_reads_the_hot_set_each_round():
    wl = build("anon:pages=1024,hot=0.5,rounds=2,cold=0.1,seed=7", 64 * MIB)
    fill = wl.pages[:1024]
    assert fill.tolist() == list(range(1024)) and set(wl.flags[:1024].tolist()) == {WRITE}
    for r in range(2):
        rnd = wl.pages[wl.bounds[r]:wl.bounds[r + 1]]
        hot, cold = rnd[:512], rnd[512:]
        assert sorted(hot.tolist()) == list(range(512))  # every hot page once, in shuffled 2 MiB chunks
        assert len(cold) == 51 and np.all(cold >= 512) and len(set(cold.tolist())) == 51
        assert not np.any(wl.flags[wl.bounds[r]:wl.bounds[r + 1]] & WRITE)
    # Deterministic for a seed, different for another.
    assert np.array_equal(wl.pages, build("anon:pages=1024,hot=0.5,rounds=2,cold=0.1,seed=7", 64 * MIB).pages)
    assert not np.array_equal(wl.pages, build("anon:pages=1024,hot=0.5,rounds=2,cold=0.1,seed=8", 64 * MIB).pages)


def test_zipfmap_replays_the_zipf_sequence_through_the_mapping():
    a, b = build("zipf:pages=1000,reads=5000", MIB), build("zipfmap:pages=1000,reads=5000", MIB)
    assert np.array_equal(a.pages, b.pages) and a.pages.max() < 1000
    assert set(a.flags.tolist()) == {FILE | SYSCALL} and set(b.flags.tolist()) == {FILE}
    # Zipf(0.9): rank 0 is the most frequent page.
    assert np.bincount(a.pages).argmax() == 0


def test_ops_words_and_header(tmp_path):
    wl = build("seqloop:pages=3,passes=2", MIB)
    words = op_words(wl)
    # PREAD is op 0; a PHASE word (15 << 28 | next phase index) ends each phase.
    assert words.tolist() == [0, 1, 2, (15 << 28) | 1, 0, 1, 2, (15 << 28) | 2]
    write_ops(wl, tmp_path / "ops")
    raw = (tmp_path / "ops").read_bytes()
    assert raw[:8] == MAGIC and len(raw) == HEADER + 4 * 8
    assert np.frombuffer(raw[8:32], "<u8").tolist() == [8, 3, 0]
    anon = build("anon:pages=2,hot=1,rounds=1,cold=0", MIB)
    assert (op_words(anon) >> 28).tolist() == [2, 2, 15, 3, 3, 15]  # ANONW, ANONR


def test_sim_trace_numbers_anon_pages_after_file_pages_from_a_pmd_boundary(tmp_path):
    src = tmp_path / "mixed.csv"
    src.write_text("page,op,type,access\n10,r,file,syscall\n7,r,anon,mapped\n10,r,file,mapped\n7,w,anon,mapped\n")
    wl = build(f"trace:path={src},format=csv", MIB)
    assert (wl.file_pages, wl.anon_pages) == (1, 1)
    # The anon page's first access (a read in the trace) runs as a write in the guest.
    assert wl.flags.tolist() == [FILE | SYSCALL, WRITE, FILE, WRITE]
    write_sim_trace(wl, tmp_path / "sim.rcl")
    src = reclaimlab.open_trace(str(tmp_path / "sim.rcl"))
    meta = src.meta()
    assert meta["format"] == "native" and meta["cgroups"] == ["", "wl"]
    # The guest's one data file is the trace's one file: readahead sees its layout.
    assert meta["files"] == [("data", 0, 1)]
    # Anon pages start at the next multiple of 512 (a PMD range of their own, as in the
    # guest's 2 MiB-aligned anon mapping).
    assert [(p, f) for p, _, f, _ in src.take(10)] == [(0, FILE | SYSCALL), (512, WRITE), (0, FILE), (512, WRITE)]


def test_trace_file_pages_keep_their_order(tmp_path):
    # Blocks 50, 10, 11, 12 read in that order: the guest's data file holds them sorted,
    # so 10, 11, 12 stay consecutive (offsets 0, 1, 2) and 50 follows them; a read() of
    # several pages (READ_CONT) is replayed page by page.
    src = tmp_path / "blocks.trace"
    cont = FILE | SYSCALL | 8  # READ_CONT: 11 and 12 continue the read() of 10
    reclaimlab._core.trace_write(str(src), np.array([50, 10, 11, 12], "<u4").tobytes(),
                                 bytes([FILE | SYSCALL, FILE | SYSCALL, cont, cont]))
    wl = build(f"trace:path={src}", MIB)
    assert wl.pages.tolist() == [3, 0, 1, 2] and wl.file_pages == 4
    assert wl.flags.tolist() == [FILE | SYSCALL] * 4


def test_a_trace_with_madvise_ops_is_refused_for_the_guest(tmp_path):
    # The guest program renumbers anonymous pages, so it cannot replay a madvise range.
    src = tmp_path / "m.trace"
    reclaimlab._core.trace_write(str(src), np.arange(4, dtype="<u4").tobytes(), bytes(4), madvise=[(0, 0, 4, "hugepage")])
    with pytest.raises(KernelError, match="1 madvise op"):
        build(f"trace:path={src}", MIB)


def test_bad_specs(tmp_path):
    with pytest.raises(KernelError, match="unknown workload 'nope'"):
        build("nope", MIB)
    with pytest.raises(KernelError, match="unknown parameter"):
        build("zipf:alpha=1", MIB)
    with pytest.raises(KernelError, match="hot=2.0 out of range"):
        build("anon:hot=2", MIB)

