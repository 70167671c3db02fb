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
from reclaimlab.kernel import disk
from reclaimlab.kernel.disk import write_data
from reclaimlab.kernel.ops import OP_CGROUP, OP_MAPWRITE, OP_PHASE, OP_PWRITE, OP_RECLAIM, op_words, write_ops, write_sim_trace
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
    p = cli("validate", f"trace:path={trace}", "--memory-max", "64M", "--set", flag, "--out-dir", str(tmp_path / "o"))
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


def reclaim_trace(tmp_path: Path) -> Path:
    """Two cgroups filling their memory, then memory.reclaim writes at the start of phase
    "again" (a: 64 KiB with vm.swappiness; b: 1 MiB with swappiness=0) and one at the
    trace's end (a phase of no accesses)."""
    import reclaimlab

    region = lambda name, kind, cg: {"name": name, "pages": 64, "kind": kind, "cgroup": cg, "write_ratio": 1.0 if kind == "anon" else 0}
    seq = lambda r: [{"region": r, "pattern": "seq"}]
    prog = {"regions": [region("ah", "anon", "a"), region("ad", "file-read", "a"), region("bd", "file-read", "b")],
            "phases": [{"name": "fill-a", "accesses": 64, "streams": seq("ah")},
                       {"name": "fill-ad", "accesses": 64, "streams": seq("ad")},
                       {"name": "fill-b", "accesses": 64, "streams": seq("bd")},
                       {"name": "again", "accesses": 10, "streams": seq("bd"),
                        "reclaims": [{"cgroup": "a", "bytes": "64K"}, {"cgroup": "b", "bytes": 1 << 20, "swappiness": 0}]},
                       {"name": "end", "accesses": 0, "streams": seq("ad"), "reclaims": [{"cgroup": "a", "bytes": 8192}]}]}
    out = tmp_path / "r.rcl"
    reclaimlab._core.trace_convert(reclaimlab.generate(prog, 1), str(out))
    return out


def test_memory_reclaim_writes_reach_the_guest_ops_and_the_simulators_trace(tmp_path):
    import reclaimlab

    wl = build(f"trace:path={reclaim_trace(tmp_path)}", MIB)
    a, b = wl.cgroups.index("a"), wl.cgroups.index("b")
    assert wl.reclaims == [(192, a, 65536, None), (192, b, 1 << 20, 0), (202, a, 8192, None)]
    w = op_words(wl)
    ops = w >> 28
    at = np.flatnonzero(ops == OP_RECLAIM)
    # Two words each: cgroup | (swappiness + 1) << 8, then the pages.
    assert (w[at] & 0x0FFFFFFF).tolist() == [a, b | 1 << 8, a]
    assert w[at + 1].tolist() == [16, 256, 2]
    # Before access 192 (b's turn already: b read 128..191), the last one after the last
    # access and before the trace's one phase end (its statistics include it).
    access = np.isin(ops, [0, 1, 2, 3, 5, 6])
    access[at + 1] = False  # a RECLAIM's page word
    assert int(access[:at[0]].sum()) == 192 and int(access[:at[2]].sum()) == 202 == len(wl)
    assert (ops[at[0] - 1], ops[at[1] + 2], ops[at[2] + 2]) == (0, 0, OP_PHASE) and at[2] + 3 == w.size
    assert int((ops == OP_PHASE).sum()) == 1 and len(wl.bounds) == 1
    from reclaimlab.kernel.ops import ops_size

    write_ops(wl, tmp_path / "ops")
    assert (tmp_path / "ops").stat().st_size == ops_size(wl)
    # The simulator's trace: the same writes before the same accesses.
    write_sim_trace(wl, tmp_path / "sim.rcl")
    meta = reclaimlab.open_trace(str(tmp_path / "sim.rcl")).meta()
    assert meta["ops"] == [(192, "a", 65536, None), (192, "b", 1 << 20, 0), (202, "a", 8192, None)]


def test_a_memory_reclaim_cgroup_without_accesses_is_a_guest_cgroup(tmp_path):
    import reclaimlab

    prog = {"regions": [{"name": "d", "pages": 8, "kind": "file-read", "cgroup": "a"}],
            "phases": [{"name": "p", "accesses": 8, "streams": [{"region": "d", "pattern": "seq"}],
                        "reclaims": [{"cgroup": "", "bytes": "8K"}]}]}
    reclaimlab._core.trace_convert(reclaimlab.generate(prog, 1), str(tmp_path / "root.rcl"))
    wl = build(f"trace:path={tmp_path / 'root.rcl'}", MIB)
    # The root's write makes the root a workload cgroup ("-" in the guest: /sys/fs/cgroup).
    assert wl.cgroups == ["", "a"] and wl.reclaims == [(0, 0, 8192, None)]


def test_the_console_gives_each_cgroups_reclaim_results():
    c = console.parse("\n".join(["@@cgroup 0 a max max 0 0", "@@cgroup 1 b max max 0 0", "@@reclaim 0 8388608 0",
                                 "@@reclaim 1 67108864 11", "@@reclaim 1 4096 0", "@@done 0", "@@exit 0"]))
    assert c.cgroups[0].reclaims == [(8388608, 0)]
    assert c.cgroups[1].reclaim_counts() == {"memory.reclaim.writes": 2, "memory.reclaim.eagain": 1,
                                             "memory.reclaim.requested": 67112960}
    assert c.cgroups[0].reclaim_counts()["memory.reclaim.eagain"] == 0


def test_cgroup_rows_compare_the_reclaim_writes(tmp_path):
    wl = build(f"trace:path={reclaim_trace(tmp_path)}", MIB)
    b_at = wl.cgroups.index("b")
    c = console.parse("\n".join([*(f"@@cgroup {i} {n} max max 0 0" for i, n in enumerate(wl.cgroups)),
                                 "@@phase 0 1", f"@@memstat {b_at} pgsteal 250", "@@phase-end 0",
                                 f"@@reclaim {b_at} 1048576 11"]))
    rows = cgroup_rows(wl, [c], {"memcg.b.pgsteal": 256.0, "memcg.b.memory.reclaim.writes": 1.0,
                                 "memcg.b.memory.reclaim.eagain": 1.0, "memcg.b.memory.reclaim.requested_bytes": 1048576.0})
    b = {r["counter"]: r for r in rows["b"]}
    assert (b["memory.reclaim.eagain"]["real_mean"], b["memory.reclaim.eagain"]["sim"]) == (1, 1)
    assert b["memory.reclaim.requested"]["rel_error"] == 0 and b["pgsteal"]["sim"] == 256


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_guest_program_writes_memory_reclaim_of_the_cgroup(tmp_path):
    """wl on the host with stand-in cgroup directories (plain files): each RECLAIM op writes
    "BYTES" or "BYTES swappiness=N" to its cgroup's memory.reclaim and reports it."""
    wl = build(f"trace:path={reclaim_trace(tmp_path)}", MIB)
    write_ops(wl, tmp_path / "ops")
    write_data(tmp_path / "data", wl.file_pages)
    procs = []
    for name in wl.cgroups:
        d = tmp_path / "cg" / name
        d.mkdir(parents=True)
        (d / "cgroup.procs").touch()
        (d / "memory.reclaim").touch()
        procs.append(str(d / "cgroup.procs"))
    r = subprocess.run([str(guest.build_wl()), str(tmp_path / "ops"), str(tmp_path / "data"), ",".join(procs)],
                       capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 0 and "@@done" in r.stdout, r.stdout + r.stderr
    a, b = wl.cgroups.index("a"), wl.cgroups.index("b")
    assert re.findall(r"@@reclaim .*", r.stdout) == [f"@@reclaim {a} 65536 0", f"@@reclaim {b} 1048576 0",
                                                     f"@@reclaim {a} 8192 0"]
    # What the file got (the last write to each, from offset 0).
    assert (tmp_path / "cg" / "b" / "memory.reclaim").read_text() == "1048576 swappiness=0"
    assert (tmp_path / "cg" / "a" / "memory.reclaim").read_text().startswith("8192")
    c = console.parse(r.stdout)
    assert c.cgroups[b].reclaim_counts()["memory.reclaim.writes"] == 1


def test_a_program_reclaim_for_an_unknown_cgroup_or_no_bytes_is_one_line(tmp_path):
    base = """[[region]]
name = "d"
pages = 16
cgroup = "a"
[[phase]]
accesses = 16
[[phase.stream]]
region = "d"
[[phase.reclaim]]
"""
    for body, needles in [('cgroup = "b"\nbytes = "1M"\n', ("unknown cgroup 'b'",)),
                          ('cgroup = "a"\nbytes = 0\n', ("at least 1 byte",)),
                          ('cgroup = "a"\nbytes = "-4K"\n', ("at least 1 byte",)),
                          ('cgroup = "a"\nbytes = "0M"\n', ("memory.reclaim of 0 bytes",)),
                          ('cgroup = "a"\nbytes = "1M"\nswappiness = 201\n', ("swappiness 201",)),
                          ('cgroup = "a"\nbytes = "1M"\nswapiness = 1\n', ("unknown key 'swapiness'",))]:
        prog = tmp_path / "p.toml"
        prog.write_text(base + body)
        assert_user_error(cli("trace", "gen", "program", str(prog), "-o", str(tmp_path / "p.rcl")), *needles)
        assert not (tmp_path / "p.rcl").exists()
    prog.write_text(base + 'cgroup = "a"\nbytes = "1M"\nswappiness = 10\n')
    p = cli("trace", "gen", "program", str(prog), "-o", str(tmp_path / "p.rcl"))
    assert p.returncode == 0, p.stderr
    import reclaimlab

    assert reclaimlab.open_trace(str(tmp_path / "p.rcl")).meta()["ops"] == [(0, "a", 1 << 20, 10)]


def test_the_console_gives_the_data_disks_writes():
    # /sys/block/vda/stat at the workload's start and end: reads, merges, sectors, ticks;
    # writes, merges, sectors, ticks; in flight, io_ticks, time_in_queue, ...
    start = "10 0 80 40 5 0 40 20 0 50 60 0 0 0 0 0 0"
    end = "110 0 880 340 205 0 32040 1220 0 1550 1600 0 0 0 0 0 0"
    c = console.parse(f"@@blkstat start {start}\n@@blkstat end {end}\n")
    d = c.disk_writes()
    assert (d.reads, d.writes, d.pages) == (100, 200, 4000)
    assert (d.read_ticks_ms, d.write_ticks_ms, d.busy_ms) == (300, 1200, 1500)
    # busy 1500 ms shared 300:1200 between reads and writes: 1200 ms writing 4000 pages.
    assert d.write_busy_ms == 1200 and d.ns_per_page == 300_000 and d.ms_per_write == 6.0
    assert d.ns_per_read == 3_000_000  # 300 ms over 100 read requests
    assert console.parse(f"@@blkstat start {start}\n").disk_writes() is None


def test_measured_disk_writes_need_the_guests_disk_statistics(tmp_path):
    from reclaimlab.kernel.experiment import disk_writes

    with_stat = console.parse("@@blkstat start 0 0 0 0 0 0 0 0 0 0 0\n"
                              "@@blkstat end 0 0 0 0 10 0 800 40 0 40 40\n")
    assert disk_writes([with_stat, with_stat]) == {"pages_written": 100, "writes": 10, "ms_per_write": 4.0,
                                                   "wall_ns_per_page": 400_000}
    assert disk_writes([with_stat, console.parse("@@phase 0 5\n")]) is None  # an older guest's boot
    from reclaimlab.kernel.experiment import disk_for

    s = Setup(workload="x", disk_write="measured")
    assert disk_for(s, [with_stat])[1] == 400_000
    with pytest.raises(KernelError, match="--disk-write measured: a boot has no data-disk statistics"):
        disk_for(s, [console.parse("@@phase 0 5\n")])
    assert disk_for(Setup(workload="x"), [console.parse("@@phase 0 5\n")]) == (None, None)


def test_a_bad_disk_read_mode_is_one_line(tmp_path):
    p = cli("validate", "seqloop", "--disk-read", "slow", "--out-dir", str(tmp_path / "o"))
    assert_user_error(p, "--disk-read", "slow")


def test_a_bad_disk_write_mode_is_one_line(tmp_path):
    p = cli("validate", "seqloop", "--disk-write", "fast", "--out-dir", str(tmp_path / "o"))
    assert_user_error(p, "--disk-write", "fast")


def test_the_measured_disk_runs_on_the_guests_clock(tmp_path, monkeypatch):
    """``simulate(write_wall_ns=...)``: every replay's cost.file_write_ns is the guest disk's
    wall time per page divided by that replay's time dilation."""
    from reclaimlab.kernel import validate

    seen = []

    class R:
        policy, vmstat, config, damon_snapshots = "classic@6.15", {}, {}, []

        def __init__(self, runtime):
            self.metrics = {"runtime_s": runtime}

        def to_dict(self, timeseries):
            return {"timeseries": {}}

    def fake_run(trace, trace_format, policy, set):
        seen.append((set.get("sim.time_dilation"), set["cost.file_write_ns"]))
        return R(2.0)

    monkeypatch.setattr("reclaimlab.run", fake_run)
    monkeypatch.setattr(validate, "write_sim_trace", lambda wl, trace, access_ns: None)
    wl = type("W", (), {"sleep_us": None, "program": None})()
    validate.simulate(wl, {"policy": "classic@6.15"}, tmp_path, guest_wall=20.0, write_wall_ns=1_000_000)
    # First replay undilated (1 ms per page), then 20 s / 2 s: dilation 10, 100 us per page.
    assert seen == [(None, "1000000"), ("10.000", "100000")]


def test_the_console_gives_reads_and_kswapds_cpu():
    # Reads: 100 requests, read ticks 300 of 1500 request-ms, busy 1500 ms: 300 ms reading,
    # 3 ms per request. kswapd0 ran 250 - 50 ticks; the cpu line's busy ticks exclude idle
    # and iowait (fields 4 and 5).
    c = console.parse("@@blkstat start 10 0 80 40 5 0 40 20 0 50 60\n"
                      "@@kthread start kswapd0 50\n@@cpustat start 100 0 50 1000 10 0 5 0 0 0\n"
                      "@@blkstat end 110 0 880 340 205 0 32040 1220 0 1550 1600\n"
                      "@@kthread end kswapd0 250\n@@cpustat end 400 0 150 1500 30 0 15 0 0 0\n"
                      "@@kswapd_wake 300 1\n@@kswapd_wake 100 4\n@@kswapd_wake_lost 0\n")
    assert c.disk_writes().ns_per_read == 3_000_000
    assert (c.kswapd_ticks(), c.cpu_busy_ticks()) == (200, 410)
    assert console.parse("@@kthread start kswapd0 5\n").kswapd_ticks() is None
    k = console.parse("@@khugepaged start full_scans 3 pages_collapsed 0\n"
                      "@@khugepaged end full_scans 5 pages_collapsed 2\n").khugepaged
    assert k == {"start": {"full_scans": 3, "pages_collapsed": 0}, "end": {"full_scans": 5, "pages_collapsed": 2}}
    # Direct reclaim's count and time (an anon boot of 28 Nov 2026 printed "157 923987 26174").
    assert console.parse("@@dreclaim 157 923987 26174\n").direct_reclaim == (157, 923_987, 26_174)
    assert console.parse("@@kswapd_wake_lost 0\n").direct_reclaim is None
    from reclaimlab.kernel.experiment import disk_reads, read_disk_for

    assert c.kswapd_wakes == [(300, 1), (100, 4)]
    assert disk_reads([c, c]) == {"reads": 100, "wall_ns_per_read": 3_000_000, "kswapd_ticks": 200,
                                  "kswapd_wakes": 2, "wakeup_wall_ns": 200_000,
                                  "wakeup_wall_ns_quantiles": [100_000, 100_000, 300_000, 300_000]}
    from reclaimlab.kernel.experiment import wakeup_for

    # mean: the traced latencies' mean; measured: their distribution (the sorted sample, at
    # most WAKEUP_QUANTILES + 1 quantiles).
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="mean"), [c]) == 200_000
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="measured"), [c]) == [100_000, 300_000]
    assert wakeup_for(Setup(workload="x"), [c]) is None
    for mode in ("mean", "measured"):
        with pytest.raises(KernelError, match=f"--kswapd-wakeup {mode}: no boot traced a kswapd wake-up"):
            wakeup_for(Setup(workload="x", kswapd_wakeup=mode), [console.parse("@@blkstat start 0 0 0 0 0 0 0 0 0 0 0\n")])
    # Traced, and kswapd never woke (memcg reclaim): the model's latency stays.
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="measured"), [console.parse("@@kswapd_wake_lost 0\n")]) is None
    # A boot that read nothing from the data disk (a THP workload) still traced its wake-ups.
    no_disk = console.parse("@@kswapd_wake 300 1\n@@kswapd_wake 100 4\n")
    assert no_disk.kswapd_wake_pages == []
    # Boots since 28 Nov 2026 add the pages allocated in each window (all tasks but kswapd,
    # the first caller's comm); the latencies parse as before.
    paged = console.parse("@@kswapd_wake 300 1 40 32\n@@kswapd_wake 100 4 7 7\n@@kswapd_wake 5 1 2\n")
    assert paged.kswapd_wakes == [(300, 1), (100, 4)]
    assert paged.kswapd_wake_pages == [(40, 32), (7, 7)]
    assert paged.kswapd_wake_stalls == []
    # Since 03:30 UTC the direct reclaims begun in each window follow.
    stalled = console.parse("@@kswapd_wake 300 1 40 32 2\n@@kswapd_wake 100 4 7 7 0\n")
    assert (stalled.kswapd_wakes, stalled.kswapd_wake_pages, stalled.kswapd_wake_stalls) == (
        [(300, 1), (100, 4)], [(40, 32), (7, 7)], [2, 0])
    # progress: each window's pages at the boot's wall time per page allocated (1 s over
    # 100 + 900 pages: 1 ms a page), not its wall-clock length.
    timed = console.parse("@@phase 0 1000000000\n@@vm pgalloc_dma32 100\n@@vm pgalloc_normal 900\n@@phase-end 0\n"
                          "@@kswapd_wake 300 1 40 32\n@@kswapd_wake 100 4 7 7\n@@kswapd_wake_lost 0\n")
    from reclaimlab.kernel.experiment import kswapd_wakeups

    w = kswapd_wakeups([timed])
    assert (w["window_pages_mean"], w["window_waker_pages_mean"]) == (23.5, 19.5)
    assert w["progress_wall_ns_quantiles"] == [7_000_000, 40_000_000]
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="progress"), [timed]) == [7_000_000, 40_000_000]
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="measured"), [timed]) == [100_000, 300_000]
    with pytest.raises(KernelError, match="--kswapd-wakeup progress: a boot did not count the pages"):
        wakeup_for(Setup(workload="x", kswapd_wakeup="progress"), [timed, c])
    assert disk_reads([no_disk]) is None
    assert wakeup_for(Setup(workload="x", kswapd_wakeup="mean"), [no_disk]) == 200_000
    assert read_disk_for(Setup(workload="x", disk_read="measured"), [c])[1] == 3_000_000
    assert read_disk_for(Setup(workload="x"), [c])[1] is None
    with pytest.raises(KernelError, match="--disk-read measured: a boot has no data-disk statistics"):
        read_disk_for(Setup(workload="x", disk_read="measured"), [console.parse("@@phase 0 5\n")])


def test_the_measured_read_cost_runs_on_the_guests_clock(tmp_path, monkeypatch):
    """``simulate(read_wall_ns=...)``: cost.file_read_ns is the guest disk's busy time per
    read divided by each replay's time dilation."""
    from reclaimlab.kernel import validate

    seen = []

    class R:
        policy, vmstat, config, damon_snapshots = "classic@6.15", {}, {}, []
        metrics = {"runtime_s": 4.0}

        def to_dict(self, timeseries):
            return {"timeseries": {}}

    def fake_run(trace, trace_format, policy, set):
        seen.append((set.get("sim.time_dilation"), set.get("cost.file_read_ns"), set["cost.kswapd_wakeup_ns"]))
        return R()

    monkeypatch.setattr("reclaimlab.run", fake_run)
    monkeypatch.setattr(validate, "write_sim_trace", lambda wl, trace, access_ns: None)
    wl = type("W", (), {"sleep_us": None, "program": None})()
    validate.simulate(wl, {"policy": "classic@6.15"}, tmp_path, guest_wall=20.0, read_wall_ns=500_000,
                      wakeup_wall_ns=2_000_000)
    assert seen == [(None, "500000", "2000000"), ("5.000", "100000", "400000")]
    # A distribution's quantiles: each over the dilation.
    seen.clear()
    validate.simulate(wl, {"policy": "classic@6.15"}, tmp_path, guest_wall=20.0, wakeup_wall_ns=[1_000_000, 2_000_000, 9_000_000])
    assert [s[2] for s in seen] == ["1000000,2000000,9000000", "200000,400000,1800000"]
    assert validate.wakeup_mean("200000,400000,1800000") == 700_000
    assert validate.wakeup_mean("400000") == 400_000


def test_the_wakeup_quantiles_stand_for_the_traced_latencies():
    """``experiment.quantiles``: K + 1 quantiles at 0, 1/K, ..., 1, linear between order
    statistics (numpy's default); their trapezoid mean (what kswapd's draws average) is the
    sample's within a few percent for a skewed sample like the guests'."""
    import random
    import statistics

    from reclaimlab.kernel.experiment import quantiles

    assert quantiles([3, 1, 2]) == [1, 2, 3]
    assert quantiles(list(range(201)), 4) == [0, 50, 100, 150, 200]
    assert quantiles([0, 10], 1) == [0, 10]
    rng = random.Random(1)
    xs = [rng.lognormvariate(7.8, 0.7) for _ in range(1000)]  # µs: median 2.4 ms, a long tail
    q = quantiles(xs)
    assert len(q) == 101 and q[0] == min(xs) and q[-1] == max(xs) and q == sorted(q)
    assert abs(q[50] / statistics.median(xs) - 1) < 1e-9
    trapezoid = sum(a + b for a, b in zip(q, q[1:])) / 2 / (len(q) - 1)
    assert abs(trapezoid / statistics.fmean(xs) - 1) < 0.03


@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs e2fsprogs")
@pytest.mark.parametrize("disk_size, block", [(None, 1024), (600 * MIB, 4096)])
def test_the_data_disk_has_the_block_size_the_model_is_given(tmp_path, disk_size, block):
    """The image's ext4 block size (its superblock's s_log_block_size) is the one
    sim_settings gives the simulator as block.fs_block_size: buffer heads per written page."""
    wl = build("seqloop:pages=64", 1 << 20)
    image = disk.build(wl, tmp_path / "data.img", disk_size)
    with open(image, "rb") as fh:
        fh.seek(1024 + 24)
        assert 1024 << int.from_bytes(fh.read(4), "little") == block
    assert disk.block_size(disk.fs_size(wl, disk_size)) == block
