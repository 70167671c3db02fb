#!/usr/bin/env python3
"""Write fuzz/corpus/TARGET/ anew: small valid inputs of every reader (checked in; run
again only to change them). Every seed must be read without an error (test_fuzz.py checks)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rl(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "reclaimlab", *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    from reclaimlab import _core, damo_record as dr

    c = HERE / "corpus"
    shutil.rmtree(c, ignore_errors=True)
    for t in ("native", "lirs", "address", "csv", "oracle", "damo", "experiment", "config"):
        (c / t).mkdir(parents=True)
    n = c / "native"
    rl("trace", "gen", "zipf", "--pages", "500", "--accesses", "300", "-o", n / "zipf-v1.trace")
    rl("trace", "gen", "uniform", "--pages", "4000000000", "--accesses", "10", "-o", n / "sparse-v1.trace")
    rl("trace", "gen", "uniform", "--pages", "300", "--accesses", "70000", "-o", n / "twoblocks.trace")
    rl("trace", "convert", n / "twoblocks.trace", n / "twoblocks-v2.trace", "--compress")
    (n / "twoblocks.trace").unlink()  # 560 KB: the compressed one covers two blocks
    pages = b"".join(struct.pack("<I", p) for p in [0, 1, 2, 40, 41, 7, 0, 1])
    gaps = b"".join(struct.pack("<I", g) for g in [0, 10, 3, 1000, 1, 0, 65536, 2])
    _core.trace_write(str(n / "timed-files-v1.trace"), pages, bytes([2, 2, 3, 6, 6, 0, 1, 2]),
                      files=[("data.db", 0, 3), ("log", 40, 2)], gaps=gaps, tick_ps=1000)
    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "p.toml"
        prog.write_text('[[region]]\nname = "a"\npages = 64\n[[phase]]\naccesses = 200\n'
                        '[[phase.reclaim]]\ncgroup = ""\nbytes = "8K"\nswappiness = 0\n'
                        '[[phase.stream]]\nregion = "a"\npattern = "zipf:0.9"\n')
        rl("trace", "gen", "program", "-o", n / "ops-v1.trace", prog)
    (c / "lirs" / "a.lirs").write_text("1\n2\n3\n*\n1\n\n18446744073709551615\n2\n")
    (c / "address" / "a.addr").write_text("l 0x7fff0000 3\ns 0x7fff1008 0\nl 0x1000 4294967295\nl 0x7fff0010 1\n")
    (c / "csv" / "all-columns.csv").write_text(
        "page,op,type,access,cgroup,gap\n1,r,anon,mapped,,0\n2,w,file,syscall,db,5\n1,read,file,mapped,db,\n"
        "99,write,anon,syscall,web,4294967295\n")
    (c / "csv" / "page-only.csv").write_text("page\n5\n6\n5\n")
    keys = _core.cache_trace_from_keys([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    keys.write_oracle(str(c / "oracle" / "a.oracleGeneral.bin"))
    snaps = []
    for i in range(4):
        regions = [dr.Region(j << 20, (j + 1) << 20, 18 if j in (1, 2) else 0, i) for j in range(4)]
        snaps.append(dr.Snapshot(i * 100_000_000, (i + 1) * 100_000_000, regions))
    rec = [dr.Record(target_id=0, snapshots=snaps)]
    for fmt, name in (("json_compressed", "r.data"), ("json", "r.json"), ("perf_script", "r.txt")):
        dr.write(c / "damo" / name, rec, fmt)
    (c / "experiment" / "e.toml").write_text(
        'name = "fuzz"\nrepetitions = 2\nseed = 3\nmetric = "runtime_s"\nbaseline = "classic@6.15"\n'
        '[workload]\nscenario = "default"\n[matrix]\npolicy = ["classic@6.15", "mglru@6.15"]\n'
        '"vm.swappiness" = [60, 100]\n[settings]\n"machine.memory" = "64M"\n')
    (c / "experiment" / "program.toml").write_text(
        '[workload.program]\n[[workload.program.region]]\nname = "a"\npages = 32\n'
        '[[workload.program.phase]]\naccesses = 100\n[[workload.program.phase.stream]]\nregion = "a"\npattern = "uniform"\n')
    (c / "config" / "machine.toml").write_text(
        'policy = "mglru@6.15"\nseed = 7\nscenario = "default"\n[machine]\nmemory = "256M"\n[vm]\nswappiness = 100\n'
        '[swap]\ndevice = "zram"\nsize = "128M"\n')
    (c / "config" / "cgroups.toml").write_text(
        '[trace]\npath = "in.csv"  # beside the config: the fuzz target writes one\nformat = "csv"\n[cgroup.db]\n"memory.max" = "64M"\nmemory.high = "48M"\n')
    for p in sorted(c.rglob("*")):
        if p.is_file():
            print(p.relative_to(HERE), p.stat().st_size)


if __name__ == "__main__":
    main()
