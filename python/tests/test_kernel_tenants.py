"""Several cgroups and file writes in the guest (reclaimlab.kernel.workload, .ops, .run,
.console, .validate, guest/wl.c): a trace's cgroups become guest cgroups with their
limits, one worker process each taking turns in the trace's order; writes dirty the data
file; per-cgroup memory.stat is compared; bad input is refused before anything boots."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reclaimlab.kernel import KernelError, console, guest
from reclaimlab.kernel.disk import write_data
from reclaimlab.kernel.ops import OP_CGROUP, OP_MAPWRITE, OP_PWRITE, op_words, write_ops, write_sim_trace
from reclaimlab.kernel.run import Setup, cgroups_file, prepare
from reclaimlab.kernel.validate import WRITEBACK_TARGETS, cgroup_rows, sim_settings, targets_for
from reclaimlab.kernel.workload import MAX_CGROUPS, WRITE, build

from conftest import assert_user_error, cli, fake_kernel

MIB = 1 << 20


def csv_trace(path: Path, rows: list[tuple], header: str = "page,op,type,access,cgroup") -> Path:
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def tenants(tmp_path: Path, n: int = 300, seed: int = 2) -> Path:
    """Three cgroups reading and writing one file's pages through system calls, and their
    own anonymous pages, interleaved at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        cg = "abc"[rng.integers(3)]
        if rng.random() < 0.7:
            rows.append((int(rng.integers(100)), ["read", "write"][rng.integers(2)], "file", "syscall", cg))
        else:
            rows.append((1000 * (1 + "abc".index(cg)) + int(rng.integers(20)), "write", "anon", "mapped", cg))
    return csv_trace(tmp_path / "t.csv", rows)


@pytest.fixture
def offline(tmp_path, monkeypatch):
    return fake_kernel(tmp_path, monkeypatch, "CONFIG_MEMCG=y\nCONFIG_LRU_GEN=y\nCONFIG_ZRAM=m\n")


def test_a_trace_in_several_cgroups_keeps_them_and_their_order(tmp_path):
    wl = build(f"trace:path={tenants(tmp_path)}", MIB)
    assert sorted(wl.cgroups) == ["a", "b", "c"] and wl.writes_files  # in order of first appearance
    w = op_words(wl)
    ops = w >> 28
    # A CGROUP word before the first access and wherever the cgroup changes, naming it.
    switches = np.flatnonzero(np.concatenate(([True], wl.cgroup_ids[1:] != wl.cgroup_ids[:-1])))
    assert int((ops == OP_CGROUP).sum()) == switches.size
    assert (w[ops == OP_CGROUP] & 0x0FFFFFFF).tolist() == wl.cgroup_ids[switches].tolist()
    file_writes = ((wl.flags & 2) != 0) & ((wl.flags & WRITE) != 0)
    assert int((ops == OP_PWRITE).sum()) == int(file_writes.sum()) > 0
    # The simulator's trace names the same cgroups access for access.
    import reclaimlab

    write_sim_trace(wl, tmp_path / "sim.rcl")
    src = reclaimlab.open_trace(str(tmp_path / "sim.rcl"))
    names = src.meta()["cgroups"]
    got = [names[r[1]] for r in src.take(10_000)]
    assert got == [wl.cgroups[i] for i in wl.cgroup_ids]


def test_file_writes_become_pwrite_and_mapped_stores(tmp_path):
    src = csv_trace(tmp_path / "w.csv", [(3, "write", "file", "syscall"), (4, "write", "file", "mapped"),
                                          (3, "read", "file", "syscall")], header="page,op,type,access")
    wl = build(f"trace:path={src}", MIB)
    assert wl.writes_files and wl.cgroups == ["wl"] and wl.cgroup_ids is None
    assert (op_words(wl)[:3] >> 28).tolist() == [OP_PWRITE, OP_MAPWRITE, 0]


def test_bad_traces_are_refused(tmp_path):
    many = csv_trace(tmp_path / "many.csv", [(i, "read", "file", "syscall", f"g{i}") for i in range(MAX_CGROUPS + 1)])
    with pytest.raises(KernelError, match=f"9 cgroups .*at most {MAX_CGROUPS}"):
        build(f"trace:path={many}", MIB)
    shared = csv_trace(tmp_path / "shared.csv", [(5, "write", "anon", "mapped", "a"), (5, "read", "anon", "mapped", "b")])
    with pytest.raises(KernelError, match="accessed from several cgroups"):
        build(f"trace:path={shared}", MIB)
    # A native trace with a file table: a write outside every file it declares.
    import reclaimlab

    out = tmp_path / "files.rcl"
    reclaimlab._core.trace_write(str(out), np.array([0, 1, 7], "<u4").tobytes(), bytes([2 | 4, 2 | 4 | 1, 2 | 4 | 1]),
                                 "", [("f", 0, 4)])
    with pytest.raises(KernelError, match="access 2 writes page 7, which no file of the trace holds"):
        build(f"trace:path={out}", MIB)


def test_limits_reach_the_guest_and_the_simulator(offline, tmp_path):
    trace = tenants(tmp_path)
    p = prepare(Setup(workload=f"trace:path={trace}", memory="64M",
                      cgroup_set=("cgroup.b.memory.max=32M", "cgroup.c.memory.low=16M", "cgroup.a.memory.high=max")))
    lines = cgroups_file(p).splitlines()
    assert [x.split()[0] for x in lines] == p.wl.cgroups  # the ops file's order
    assert sorted(lines) == [f"a {64 * MIB} max 0 0", f"b {32 * MIB} max 0 0", f"c {64 * MIB} max {16 * MIB} 0"]
    assert "lab.rw=1" in p.append.split()
    c = console.Console(meminfo={"MemTotal": 500_000})
    s = sim_settings(p, [c])
    assert s["cgroup.b.memory.max"] == str(32 * MIB) and s["cgroup.c.memory.low"] == str(16 * MIB)
    assert "cgroup.wl.memory.max" not in s
    assert set(WRITEBACK_TARGETS) <= set(targets_for(p.wl))


@pytest.mark.parametrize("flag, needles", [
    ("cgroup.b.memory.min=128M", ["cgroup.b.memory.min", "protection above memory.max"]),
    ("cgroup.z.memory.max=8M", ["no cgroup 'z'", "'a', 'b', 'c'"]),
    ("cgroup.a.memory.swap.max=8M", ["cgroup.NAME.memory.{max,high,low,min}"]),
    ("cgroup.a.memory.max=lots", ["not a size", "lots"]),
])
def test_bad_cgroup_settings_are_one_line(tmp_path, flag, needles):
    trace = tenants(tmp_path)
    p = cli("validate", f"trace:path={trace}", "--memory", "64M", "--set", flag, "--out", str(tmp_path / "o"))
    assert_user_error(p, *needles)


def test_the_console_gives_each_cgroups_stat_and_events():
    text = "\n".join(["@@cgroup 0 a 33554432 max 0 0", "@@cgroup 1 -", "@@phase 0 5",
                      "@@memstat 0 workingset_refault_file 10", "@@memstat 0 pgscan 7", "@@phase-end 0",
                      "@@phase 1 5", "@@memstat 0 workingset_refault_file 25", "@@phase-end 1",
                      "@@cgevents 0 max 3", "@@cgpeak 0 4096", "@@done 0", "@@exit 0"])
    c = console.parse(text)
    assert c.cgroups[0].limits["memory.max"] == "33554432" and c.cgroups[1].name == ""
    assert c.memstat() == {"a": {"workingset_refault_file": 25}}  # the last phase's, since the cgroup was made
    assert c.memory_events == {"max": 3} and c.memory_peak == 4096


def test_cgroup_rows_compare_memory_stat_with_the_simulators_memcg_metrics(tmp_path):
    wl = build(f"trace:path={tenants(tmp_path)}", MIB)
    b_at = wl.cgroups.index("b")
    c = console.parse("\n".join([*(f"@@cgroup {i} {n} max max 0 0" for i, n in enumerate(wl.cgroups)),
                                 "@@phase 0 1", f"@@memstat {b_at} workingset_refault_file 100",
                                 f"@@memstat {b_at} memory.current 8192", "@@phase-end 0", f"@@cgevents {b_at} max 4"]))
    rows = cgroup_rows(wl, [c], {"memcg.b.workingset_refault_file": 105.0, "memcg.b.memory.events.max": 4.0,
                                 "memcg.b.memory.current_bytes": 4096.0})
    b = {r["counter"]: r for r in rows["b"]}
    assert b["workingset_refault_file"]["rel_error"] == pytest.approx(0.05) and b["workingset_refault_file"]["met"]
    assert b["events.max"]["sim"] == 4.0 and b["events.max"]["target"] is None
    assert (b["memory.current"]["real_mean"], b["memory.current"]["sim"]) == (8192, 4096)
    assert set(rows) == set(wl.cgroups)
    assert {r["counter"]: r["real_mean"] for r in rows["a"]}["workingset_refault_file"] == 0


@pytest.mark.skipif(shutil.which("strace") is None or shutil.which("gcc") is None, reason="needs strace and gcc")
def test_the_guest_program_runs_each_cgroup_in_its_own_process_in_trace_order(tmp_path):
    """wl on the host, each worker left in this cgroup ("-"): strace shows every data-file
    pread/pwrite in the trace's order, each cgroup's accesses from one process of its own."""
    wl = build(f"trace:path={tenants(tmp_path)}", MIB)
    write_ops(wl, tmp_path / "ops")
    write_data(tmp_path / "data", wl.file_pages)
    log = tmp_path / "strace.txt"
    r = subprocess.run(["strace", "-f", "-o", str(log), "-e", "trace=pread64,pwrite64", str(guest.build_wl()),
                        str(tmp_path / "ops"), str(tmp_path / "data"), ",".join(["-"] * len(wl.cgroups))],
                       capture_output=True, text=True, env={"WL_MERGE": "0", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 0 and "@@done" in r.stdout, r.stdout + r.stderr
    lines = log.read_text().splitlines()
    parent = lines[0].split()[0]
    got = [(m.group(2) == "pwrite64", int(m.group(3)) // 4096, m.group(1)) for m in
           (re.match(r"(\d+)\s+(pread64|pwrite64)\(\d+, .*, 4096, (\d+)\) = 4096", x) for x in lines) if m and m.group(1) != parent]
    file_acc = np.flatnonzero((wl.flags & 2) != 0)
    want = [(bool(wl.flags[i] & WRITE), int(wl.pages[i]), int(wl.cgroup_ids[i])) for i in file_acc]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    pid_of: dict[int, str] = {}
    assert all(pid_of.setdefault(w[2], g[2]) == g[2] for g, w in zip(got, want))
    assert len(set(pid_of.values())) == 3


def test_kernel_run_prints_one_row_per_cgroup():
    from reclaimlab.cli.kernel import cgroup_table

    boots = [console.parse("\n".join(["@@cgroup 0 a max max 0 0", "@@cgroup 1 b max max 0 0", "@@phase 0 1",
                                      f"@@memstat 0 anon {a}", "@@memstat 1 pgscan 10", "@@phase-end 0",
                                      "@@cgevents 1 max 2"])) for a in (4096, 8192)]
    lines = cgroup_table(boots).splitlines()
    assert lines[0].split()[:3] == ["cgroup", "memory.current", "anon"]
    a, b = lines[-2].split(), lines[-1].split()
    assert a[0] == "a" and a[2] == "6,144"  # anon, mean of two boots
    assert b[0] == "b" and b[4] == "10" and "max 2" in lines[-1]
