#!/usr/bin/env python3
"""CPU time of a real Hadoop 3.3.1 TeraSort's JVM threads, by kind of thread and job phase,
with one or more jobs running at once (docs/terasort-jvm.md, "What grows with concurrency").

Each job is one JVM in local mode, started exactly as ``measure_terasort_jvm.py`` starts it
(the benchmark's ``run_terasort.sh`` flags, sizes ÷ ``--scale``, ``-XX:ActiveProcessorCount``
48). ``--jobs 1,2`` runs one job, then two at once. Every ``--sample-ms`` the script reads
``/proc/PID/task/*/stat`` of each JVM (the thread's name and utime + stime) and keeps the
latest value per thread, so a thread that exits keeps its last reading. Threads are put in
kinds by their HotSpot names (JDK 11):

* ``gc-pause``: ``GC Thread#N``, G1's parallel workers (they run only in pauses);
* ``gc-conc``: ``G1 Main Marker``, ``G1 Conc#N`` (concurrent marking);
* ``gc-refine``: ``G1 Refine#N``, ``G1 Young RemSet Sampling``;
* ``vm``: ``VM Thread`` (safepoints, the pause's serial part), ``VM Periodic Task Thread``;
* ``jit``: ``C1/C2 CompilerThread``, ``Sweeper thread``;
* ``app``: every other thread (the map and reduce tasks, the fetcher, main).

The phases are those of Hadoop's log (maps: first map start to the reduce's start; reduce:
from there to the job's last line). It prints, per job and phase, the CPU seconds of each
kind and the total, and the JVM's CPU time per 100-byte record.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure_terasort_jvm as m  # noqa: E402

KINDS = ("app", "gc-pause", "gc-conc", "gc-refine", "vm", "jit")
TICK = os.sysconf("SC_CLK_TCK")


def kind(comm: str) -> str:
    if comm.startswith("GC Thread#"):
        return "gc-pause"
    if comm.startswith(("G1 Main Marker", "G1 Conc#")):
        return "gc-conc"
    if comm.startswith(("G1 Refine#", "G1 Young RemSet")):
        return "gc-refine"
    if comm.startswith(("VM Thread", "VM Periodic")):
        return "vm"
    if comm.startswith(("C1 CompilerThre", "C2 CompilerThre", "Sweeper thread")):
        return "jit"
    return "app"


def threads(pid: int) -> dict[int, tuple[str, float]]:
    """tid → (kind, utime + stime seconds) of the process's live threads."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        f = text.rsplit(")", 1)[1].split()
        out[int(tid)] = (kind(comm), (int(f[11]) + int(f[12])) / TICK)
    return out


def run_jobs(n: int, a: argparse.Namespace, java: str, jars: Path, raw: Path, s: dict[str, int]) -> list[dict[str, Any]]:
    procs = []
    t0 = time.time()
    for j in range(n):
        label = f"jobs{n}-t{a.tasks}-swap{a.swap}-j{j}{a.label_suffix}"
        run_dir = a.out_dir / label
        run_dir.mkdir(parents=True, exist_ok=True)
        tmp, out = a.work_dir / f"tmp-{label}", a.work_dir / f"sorted-{label}"
        for p in (tmp, out):
            if p.exists():
                shutil.rmtree(p)
        cmd = m.terasort_command(java, jars, a.work_dir, raw, out, tmp, run_dir.resolve() / "gc.log",
                                 s, a.tasks, "g1", a.cpus, False, [])
        (run_dir / "cmd.txt").write_text(" ".join(cmd) + "\n")
        err = open(run_dir / "hadoop.err", "w")
        procs.append((label, run_dir, tmp, out, err, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)))
    last: list[dict[int, tuple[str, float]]] = [{} for _ in procs]
    series: list[list[tuple[float, dict[str, float]]]] = [[] for _ in procs]
    loads = []
    while any(p.poll() is None for *_, p in procs):
        now = time.time() - t0
        for i, (*_, p) in enumerate(procs):
            if p.poll() is None:
                last[i].update(threads(p.pid))
                tot = dict.fromkeys(KINDS, 0.0)
                for k, cpu in last[i].values():
                    tot[k] += cpu
                series[i].append((now, tot))
        loads.append(m.loadavg())
        time.sleep(a.sample_ms / 1000)
    results = []
    for i, (label, run_dir, tmp, out, err, p) in enumerate(procs):
        err.close()
        ph = m.parse_hadoop_log(run_dir / "hadoop.err", t0)
        end = series[i][-1][0] if series[i] else 0.0

        def at(t: float | None, i: int = i) -> dict[str, float]:
            row = series[i][0][1] if series[i] else dict.fromkeys(KINDS, 0.0)
            for ts, tot in series[i]:
                if t is not None and ts > t:
                    break
                row = tot
            return row

        b0, b1, b2 = at(ph["first_map"]), at(ph["reduce_start"]), at(end + 1)
        phases = {}
        for name, x, y in (("setup", None, b0), ("maps", b0, b1), ("reduce", b1, b2), ("run", None, b2)):
            x = x or dict.fromkeys(KINDS, 0.0)
            phases[name] = {k: round(y[k] - x[k], 2) for k in KINDS}
            phases[name]["total"] = round(sum(phases[name][k] for k in KINDS), 2)
        walls = {"setup": ph["first_map"], "maps": (ph["reduce_start"] or 0) - (ph["first_map"] or 0),
                 "reduce": end - (ph["reduce_start"] or 0), "run": end}
        r = {"label": label, "jobs": n, "tasks": a.tasks, "swap": a.swap, "returncode": p.returncode,
             "records": s["records"], "wall_s": walls, "cpu_s": phases,
             "load_mean": round(sum(loads) / len(loads), 2) if loads else None}
        (run_dir / "threads.json").write_text(json.dumps(r, indent=1) + "\n")
        if not a.keep_output:
            for q in (tmp, out):
                shutil.rmtree(q, ignore_errors=True)
        results.append(r)
    return results


def table(results: list[dict[str, Any]]) -> str:
    rows = [("run", "phase", "wall s", *(f"{k} s" for k in KINDS), "total s", "GC share", "µs/record", "load")]
    for r in results:
        for ph in ("maps", "reduce", "run"):
            c = r["cpu_s"][ph]
            gc = c["gc-pause"] + c["gc-conc"] + c["gc-refine"] + c["vm"]
            rows.append((r["label"], ph, f"{r['wall_s'][ph]:.0f}", *(f"{c[k]:.1f}" for k in KINDS), f"{c['total']:.1f}",
                         f"{100 * gc / c['total']:.1f} %" if c["total"] else "-",
                         f"{1e6 * c['total'] / r['records']:.2f}", f"{r['load_mean']}"))
    return "\n".join("| " + " | ".join(row) + " |" for row in [rows[0], tuple("---" for _ in rows[0]), *rows[1:]])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=8.0)
    ap.add_argument("--records", type=int)
    ap.add_argument("--tasks", type=int, default=4, help="map/reduce tasks per job")
    ap.add_argument("--jobs", default="1,2", help="concurrent jobs, each in turn (comma-separated)")
    ap.add_argument("--swap", choices=("off", "on"), default="on")
    ap.add_argument("--java", default="java")
    ap.add_argument("--jdk11", action="store_true")
    ap.add_argument("--cpus", type=int, default=m.BENCH_CPUS)
    ap.add_argument("--sample-ms", type=int, default=500)
    ap.add_argument("--label-suffix", default="")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "reclaimlab" / "hadoop")
    ap.add_argument("--work-dir", type=Path, default=Path.home() / ".cache" / "reclaimlab" / "terasort-work")
    ap.add_argument("--out-dir", type=Path, default=Path("terasort-thread-runs"))
    ap.add_argument("--keep-output", action="store_true")
    ap.add_argument("--parse", type=Path, nargs="+", metavar="RUN_DIR")
    a = ap.parse_args(argv)
    if a.parse:
        results = [json.loads((d / "threads.json").read_text()) for d in a.parse]
    else:
        java = str(m.ensure_jdk11(a.cache_dir.parent)) if a.jdk11 else a.java
        jars = m.ensure_jars(a.cache_dir)
        a.work_dir.mkdir(parents=True, exist_ok=True)
        s = m.scaled(a.scale, a.swap, a.records)
        raw = m.ensure_input(java, jars, a.work_dir, s["records"])
        results = []
        for n in (int(x) for x in a.jobs.split(",")):
            print(f"{n} job(s) at once, {a.tasks} tasks each (load {m.loadavg():.2f}) ...", file=sys.stderr)
            results += run_jobs(n, a, java, jars, raw, s)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
