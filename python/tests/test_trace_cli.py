"""`reclaimlab trace gen|info|convert` as a user runs them, and bad traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab.exceptions import TraceError

from conftest import assert_user_error, cli


def info(path: Path, *extra: str) -> dict:
    p = cli("trace", "info", path, "--json", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_gen_then_info_counts(gen_trace):
    path = gen_trace("seq", 500, 12345, "--trace-kind", "file-read")
    i = info(path)
    assert i["format"] == "native"
    assert i["records"] == 12345
    assert i["pages"] == 500  # a sequential scan of 12345 > 500 accesses touches every page
    assert i["file"] == 12345 and i["anon"] == 0
    assert i["syscall"] == 12345 and i["mapped"] == 0
    assert i["reads"] == 12345 and i["writes"] == 0
    assert i["has_time"] is False


def test_gen_write_ratio_and_cgroup(gen_trace):
    path = gen_trace("uniform", 2000, 50000, "--write-ratio", "0.25", "--cgroup", "db")
    i = info(path)
    assert i["records"] == 50000
    assert i["anon"] == 50000
    assert 0.22 < i["writes"] / 50000 < 0.28
    assert "db" in i["cgroups"]
    assert i["pages"] <= 2000


def test_gen_is_deterministic_per_seed(gen_trace):
    a = gen_trace("zipf", 1000, 20000, "--seed", "5", name="a.trace").read_bytes()
    b = gen_trace("zipf", 1000, 20000, "--seed", "5", name="b.trace").read_bytes()
    c = gen_trace("zipf", 1000, 20000, "--seed", "6", name="c.trace").read_bytes()
    assert a == b
    assert a != c


def test_info_human_output(gen_trace):
    path = gen_trace("loop", 100, 1000)
    p = cli("trace", "info", path)
    assert p.returncode == 0, p.stderr
    assert "records           1,000" in p.stdout.replace("records  ", "records  ")
    assert "native" in p.stdout


def test_truncated_native_trace_is_named(gen_trace, tmp_path):
    path = gen_trace("zipf", 1000, 20000)
    data = path.read_bytes()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[: len(data) // 2])
    assert_user_error(cli("trace", "info", cut), "cut.trace", "truncated")
    assert_user_error(cli("run", "--trace", cut), "cut.trace", "truncated")


def test_corrupt_native_trace_is_named(gen_trace, tmp_path):
    path = gen_trace("zipf", 1000, 20000)
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    bad = tmp_path / "bad.trace"
    bad.write_bytes(bytes(data))
    assert_user_error(cli("trace", "info", bad), "bad.trace")


def test_unreadable_trace(tmp_path):
    missing = tmp_path / "missing.trace"
    assert_user_error(cli("trace", "info", missing), "missing.trace")
    assert_user_error(cli("run", "--trace", missing), "missing.trace")
    assert_user_error(cli("run", "--trace", tmp_path), str(tmp_path))  # a directory


def test_not_a_trace(tmp_path):
    junk = tmp_path / "junk.trace"
    junk.write_bytes(b"\x00\x01\x02garbage" * 10)
    assert_user_error(cli("trace", "info", junk, "--trace-format", "native"), "junk.trace")


def test_convert_csv(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("page,op,type,cgroup\n10,r,anon,\n11,w,file,db\n10,w,anon,\n12,r,file,db\n")
    out = tmp_path / "out.trace"
    p = cli("trace", "convert", src, out)
    assert p.returncode == 0, p.stderr
    assert "wrote 4 records" in p.stdout
    i = info(out)
    assert (i["records"], i["pages"], i["reads"], i["writes"], i["file"], i["anon"]) == (4, 3, 2, 2, 2, 2)
    assert i["cgroups"] == ["", "db"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.csv", "out.trace"]


def test_failed_convert_leaves_no_output(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("page,op\n1,r\n2,w\n" + "\n".join(f"{i},r" for i in range(3, 5000)) + "\nnot-a-page,r\n")
    out = tmp_path / "out.trace"
    assert_user_error(cli("trace", "convert", src, out, "--trace-format", "csv"), "in.csv", "line 5001")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.csv"]


def test_failed_convert_keeps_an_existing_output(tmp_path, gen_trace):
    out = gen_trace("zipf", 100, 1000, name="keep.trace")
    before = out.read_bytes()
    src = tmp_path / "bad.csv"
    src.write_text("page\n1\nx\n")
    assert_user_error(cli("trace", "convert", src, out, "--trace-format", "csv"), "bad.csv")
    assert out.read_bytes() == before
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".")]


PROGRAM = """\
repeat = 2

[[region]]
name = "heap"
pages = 1000
kind = "anon"
write_ratio = 0.5
cgroup = "app"

[[region]]
name = "files"
pages = 4000
kind = "file-read"

[[phase]]
name = "warm"
accesses = 3000
[[phase.stream]]
region = "heap"
pattern = "zipf:0.9"
weight = 3
[[phase.stream]]
region = "files"
pattern = "seq"
weight = 1

[[phase]]
name = "scan"
accesses = 2000
[[phase.stream]]
region = "files"
pattern = "uniform"
"""


def test_gen_program(tmp_path):
    prog = tmp_path / "prog.toml"
    prog.write_text(PROGRAM)
    out = tmp_path / "p.trace"
    p = cli("trace", "gen", "program", prog, "-o", out, "--seed", "3")
    assert p.returncode == 0, p.stderr
    i = info(out)
    assert i["records"] == 2 * (3000 + 2000)
    assert set(i["cgroups"]) == {"", "app"}
    assert i["file"] + i["anon"] == i["records"]
    assert i["anon"] > 0 and i["file"] > 2000 * 2  # the scan phases are all file
    assert i["writes"] < i["anon"]  # only heap writes, half of them


def test_gen_program_unknown_key_names_line(tmp_path):
    prog = tmp_path / "prog.toml"
    prog.write_text(PROGRAM.replace('pattern = "uniform"', 'patern = "uniform"'))
    assert_user_error(cli("trace", "gen", "program", prog, "-o", tmp_path / "o.trace"), "prog.toml, line 32", "patern")
    assert not (tmp_path / "o.trace").exists()


def test_gen_program_unknown_region(tmp_path):
    prog = tmp_path / "prog.toml"
    prog.write_text(PROGRAM.replace('region = "files"\npattern = "uniform"', 'region = "filez"\npattern = "uniform"'))
    assert_user_error(cli("trace", "gen", "program", prog, "-o", tmp_path / "o.trace"), "prog.toml", "filez")


def test_python_generate_and_read():
    src = reclaimlab.generate(
        {"regions": [{"name": "r", "pages": 10, "kind": "anon"}],
         "phases": [{"accesses": 25, "streams": [{"region": "r", "pattern": "seq"}]}]},
        1,
    )
    recs = src.take(100)
    assert [r[0] for r in recs] == [i % 10 for i in range(25)]
    assert src.take(10) == []


def test_python_open_trace_errors_are_trace_errors(tmp_path):
    with pytest.raises(TraceError, match="nothing.trace"):
        reclaimlab.open_trace(str(tmp_path / "nothing.trace"))


def test_gen_rejects_negative_pages(tmp_path):
    p = cli("trace", "gen", "zipf", "--pages", "-5", "--accesses", "10", "-o", tmp_path / "x.trace")
    assert p.returncode == 2 and "non-negative integer" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x.trace").exists()


def test_loop_is_the_cyclic_scan_and_zigzag_differs(gen_trace):
    # "loop" means what cache papers mean: the cyclic scan, the same records as "seq".
    seq = gen_trace("seq", 100, 1000, name="seq.trace").read_bytes()
    loop = gen_trace("loop", 100, 1000, name="loop.trace").read_bytes()
    zigzag = gen_trace("zigzag", 100, 1000, name="zigzag.trace").read_bytes()
    assert seq == loop
    assert zigzag != seq


def test_memory_reclaim_ops_through_the_writers_and_info(tmp_path):
    """The streaming TraceWriter and trace_write put memory.reclaim writes in the trace's op
    table; trace info lists them; a program's [[phase.reclaim]] does the same."""
    import numpy as np

    from reclaimlab import _core

    w = _core.TraceWriter(tmp_path / "s.rcl", 1000, "app")
    w.set_map(0, np.arange(4, dtype="<u4").tobytes())
    rec = lambda p: np.array([p], "<u4").tobytes() + bytes([0, 0, 0, 0]) + np.array([5], "<u4").tobytes()
    w.memory_reclaim("app", 1 << 20)
    w.write(0, rec(0) + rec(1))
    w.memory_reclaim("", 8192, 100)  # the root, before the third record
    w.write(0, rec(2))
    w.memory_reclaim("app", 4096)  # after the last
    assert w.finish() == 3
    meta = _core.open_trace(str(tmp_path / "s.rcl")).meta()
    assert meta["ops"] == [(0, "app", 1 << 20, None), (2, "", 8192, 100), (3, "app", 4096, None)]
    info = _core.trace_info(_core.open_trace(str(tmp_path / "s.rcl")))
    assert info["records"] == 3 and len(info["ops"]) == 3
    p = cli("trace", "info", str(tmp_path / "s.rcl"))
    assert p.returncode == 0 and "memory.reclaim    3 write(s): 1,048,576 B to app before record 0;" in p.stdout, p.stdout
    assert "8,192 B to (root) swappiness=100 before record 2" in p.stdout
    # trace_write: the same tuples; an op past the end is refused, nothing written.
    pages, flags = np.arange(3, dtype="<u4").tobytes(), bytes(3)
    _core.trace_write(str(tmp_path / "w.rcl"), pages, flags, "app", ops=[(1, "app", 4096, 0)])
    assert _core.open_trace(str(tmp_path / "w.rcl")).meta()["ops"] == [(1, "app", 4096, 0)]
    with pytest.raises(Exception, match="past the trace's end"):
        _core.trace_write(str(tmp_path / "x.rcl"), pages, flags, "app", ops=[(9, "app", 4096, None)])
    assert not (tmp_path / "x.rcl").exists()


def test_madvise_ops_from_programs_and_writers_reach_the_fault_path(tmp_path):
    """A program's region `madvise` and the writers' madvise become the trace's madvise ops;
    trace info lists them; under transparent_hugepage.enabled=madvise only the hugepage
    region faults THPs; a bad advice is one line naming the key."""
    import numpy as np

    from reclaimlab import _core

    prog = tmp_path / "thp.toml"
    prog.write_text("""
[[region]]
name = "huge"
pages = 2048
madvise = "hugepage"

[[region]]
name = "plain"
pages = 2048

[[phase]]
accesses = 4096
[[phase.stream]]
region = "huge"
pattern = "seq"
[[phase.stream]]
region = "plain"
pattern = "seq"
""")
    out = tmp_path / "thp.trace"
    p = cli("trace", "gen", "program", prog, "-o", out)
    assert p.returncode == 0, p.stderr
    assert info(out)["madvise"] == [[0, 0, 2048, "hugepage"]]
    assert "madvise           1 call(s): hugepage of pages 0+2,048 before record 0" in cli("trace", "info", out).stdout
    r = reclaimlab.run(trace=str(out), config={"machine.memory": "1G", "transparent_hugepage.enabled": "madvise",
                                               "swap.device": "none"})
    assert r.vmstat["thp_fault_alloc"] == 4
    prog.write_text(prog.read_text().replace('madvise = "hugepage"', 'madvise = "huge"'))
    assert_user_error(cli("trace", "gen", "program", prog, "-o", tmp_path / "bad.trace"), "thp.toml, line 5", "huge")
    # The writers: a madvise before the next record; trace_write's tuples.
    w = _core.TraceWriter(tmp_path / "s.rcl", 1000, "")
    w.set_map(0, np.arange(4, dtype="<u4").tobytes())
    rec = lambda p: np.array([p], "<u4").tobytes() + bytes([0, 0, 0, 0]) + np.array([0], "<u4").tobytes()
    w.write(0, rec(0))
    w.madvise(0, 512, "dontneed")
    w.write(0, rec(1))
    w.finish()
    assert _core.open_trace(str(tmp_path / "s.rcl")).meta()["madvise"] == [(1, 0, 512, "dontneed")]
    pages, flags = np.arange(3, dtype="<u4").tobytes(), bytes(3)
    _core.trace_write(str(tmp_path / "w.rcl"), pages, flags, madvise=[(0, 0, 512, "nohugepage")], ops=[(0, "", 4096, None)])
    meta = _core.open_trace(str(tmp_path / "w.rcl")).meta()
    assert meta["madvise"] == [(0, 0, 512, "nohugepage")] and meta["ops"] == [(0, "", 4096, None)]
    with pytest.raises(Exception, match="not hugepage, nohugepage or dontneed"):
        _core.trace_write(str(tmp_path / "x.rcl"), pages, flags, madvise=[(0, 0, 512, "willneed")])
    assert not (tmp_path / "x.rcl").exists()


# ------------------------------------------------- compressed blocks (version 2)


def compressed(path: Path, src: Path) -> Path:
    p = cli("trace", "convert", src, path, "--compress")
    assert p.returncode == 0, p.stderr
    assert path.read_bytes()[8:10] == b"\x02\x00"  # version 2
    return path


def test_convert_compress_reads_back_the_same(gen_trace, tmp_path):
    plain = gen_trace("zipf", 3000, 200_000, "--cgroup", "db", "--write-ratio", "0.3")
    z = compressed(tmp_path / "z.trace", plain)
    assert plain.read_bytes()[8:10] == b"\x01\x00"  # uncompressed stays version 1
    a, b = info(plain), info(z)
    assert a.pop("storage") == {"compressed": False, "record_bytes": 200_000 * 8, "block_bytes": 200_000 * 8,
                                "file_bytes": plain.stat().st_size}
    s = b.pop("storage")
    assert a == b
    assert s["compressed"] and s["file_bytes"] == z.stat().st_size and s["block_bytes"] < s["record_bytes"]
    p = cli("trace", "info", z)
    assert p.returncode == 0, p.stderr
    assert "compressed (version 2)" in p.stdout and "bytes a record" in p.stdout
    p = cli("trace", "info", plain)
    assert "uncompressed (version 1), 8 bytes a record" in p.stdout
    # The records themselves, every field.
    srcs = [reclaimlab._core.open_trace(str(x)) for x in (plain, z)]
    assert srcs[0].meta() == srcs[1].meta()
    while batch := srcs[0].take(50_000):
        assert batch == srcs[1].take(50_000)
    assert srcs[1].take(1) == []


def test_corrupt_compressed_trace_is_one_line(gen_trace, tmp_path):
    z = compressed(tmp_path / "z.trace", gen_trace("zipf", 1000, 100_000))
    data = z.read_bytes()
    block1 = 64 + 16 + int.from_bytes(data[64 + 4:64 + 8], "little")  # the second block's header
    for at, name in ((64 + 16 + 40, "flip0.trace"), (block1 + 16 + 3, "flip1.trace")):
        bad = bytearray(data)
        bad[at] ^= 0x40
        (tmp_path / name).write_bytes(bytes(bad))
    assert_user_error(cli("trace", "info", tmp_path / "flip0.trace"), "flip0.trace", "corrupt at record 0",
                      "records 0..65536 are damaged")
    assert_user_error(cli("run", "--trace", tmp_path / "flip1.trace"), "flip1.trace", "corrupt at record 65536",
                      "records 65536..100000 are damaged")
    for cut, record in ((block1 - 5, 0), (block1 + 20, 65536), (len(data) - 1, 100_000)):
        t = tmp_path / f"cut{cut}.trace"
        t.write_bytes(data[:cut])
        assert_user_error(cli("trace", "info", t), t.name, f"truncated: input ends at record {record}")
    (tmp_path / "v3.trace").write_bytes(data[:8] + b"\x03\x00" + data[10:])
    assert_user_error(cli("trace", "info", tmp_path / "v3.trace"), "unsupported version 3")


def test_run_replays_an_oracle_trace(tmp_path):
    """`run --trace-format oracle` (libCacheSim oracleGeneral, as cachesim reads it) replays
    the same accesses as the LIRS text of the same block numbers (new blocks appear in
    increasing order, so both readers' page numbers are the blocks'): every counter agrees."""
    lirs, oracle = tmp_path / "t.lirs", tmp_path / "t.oracleGeneral"
    blocks = [*range(1500), *((i * 7919) % 1500 for i in range(6000)), *list(range(1500, 1900)) * 3]
    lirs.write_text("".join(f"{b}\n" for b in blocks))
    p = cli("trace", "convert", lirs, oracle, "--trace-format", "lirs")
    assert p.returncode == 0, p.stderr
    runs = {}
    for path, fmt in ((lirs, "lirs"), (oracle, "oracle")):
        p = cli("run", "--trace", path, "--trace-format", fmt, "--trace-kind", "file-read", "--memory", "4M", "--json")
        assert p.returncode == 0, p.stderr
        runs[fmt] = json.loads(p.stdout)
    assert runs["oracle"]["metrics"]["accesses"] == len(blocks)
    assert runs["oracle"]["vmstat"] == runs["lirs"]["vmstat"] and runs["oracle"]["vmstat"]["workingset_refault_file"] > 0
    p = cli("run", "--trace", oracle, "--memory", "4M", "-q")  # detected by its name
    assert p.returncode == 0 and "(oracle)" in p.stdout, p.stderr
