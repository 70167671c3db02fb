"""``reclaimlab kernel run|trace|fetch`` and ``reclaimlab validate``: the same workload on a
real Debian kernel under QEMU and in the simulator (python/reclaimlab/kernel, docs/kernel.md)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from . import vocab
from ..kernel import KERNEL_DEFAULT_FAULT_AROUND_BYTES, KERNEL_DEFAULT_READ_AHEAD_KB, KSWAPD_WAKEUP_MODES
from ._table import number, table

HELP = "run a workload on a real Linux kernel under QEMU (ground truth for the model)"
VALIDATE_HELP = "run a workload on the real kernel and in the simulator; compare the counters"

WORKLOADS = """\
workloads (NAME[:key=value,...]; sizes default relative to --memory):
  seqloop[:pages=N,passes=3]                 cyclic pread scan, 1.5 x memory by default
  zipf[:pages=N,reads=N,s=0.9,seed=42]       4 KiB preads, Zipf ranks, no readahead
  zipfmap[:...]                              the same through a read-only shared mmap
  anon[:pages=N,hot=0.5,rounds=10,cold=0.05] fill anon memory, then hot/cold rounds (zram)
  hotcold[:pages=N,hot=0.1,warm=0.3,period_ms=100,warm_period_ms=5000,duration_s=60]
                                             idle anon memory on a real clock (for --damon-reclaim)
  trace:path=FILE[,format=F,kind=K,access_us=U]
                                             any reclaimlab trace (one cgroup, no file writes); its time
                                             (or U us per access) is slept in the guest
  thpscale[:threads=1+4,madvise=1,mapsize_pct=80,proactiveness=-1]
                                             mmtests' thpscale run by the guest (guest/thp.c), one
                                             phase per thread count; needs --memory none, >= 640M
  usemem[:threads=1,cache_pct=50,usemem_pct=70,passes=10,defrag=always,proactiveness=-1]
                                             usemem-stress-numa-compact (page cache on every node,
                                             then usemem on node 0); validate: the THP model (thp@6.12)
  scenario:name=S[,scale=1,seed=42,access_us=U,PARAM=V...]
                                             a built-in scenario's accesses, e.g.
                                             scenario:name=damon-reclaim-parsec,workload=canneal
"""

EPILOG = WORKLOADS + """
examples:
  reclaimlab kernel run seqloop --memory-max 64M --boots 3 --out-dir runs/
  reclaimlab kernel run anon:hot=0.4 --memory-max 64M --swap zram:256M --mglru off
  reclaimlab kernel run zipf --kernel linux-image-6.1.0-56-amd64-unsigned --mglru on
  reclaimlab kernel trace zipfmap --memory-max 64M -o zipfmap.trace # what the simulator replays
  reclaimlab kernel fetch linux-image-6.12.117+deb12-amd64-unsigned
"""

VALIDATE_EPILOG = WORKLOADS + """
examples:
  reclaimlab validate seqloop --memory-max 64M --mglru on --boots 3
  reclaimlab validate anon:hot=0.4 --memory-max 64M --mglru off --json
  reclaimlab validate hotcold:duration_s=30 --memory-max none --tick 1000 \\
      --damon-reclaim min_age=2000000,wmarks_high=1000,wmarks_mid=999,wmarks_low=0
"""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("workload", metavar="WORKLOAD", help="NAME[:key=value,...] (see below)")
    p.add_argument("--kernel", metavar="PACKAGE|PATH",
                   help="Debian kernel package (fetched with apt-get download, unpacked, never installed), a .deb "
                        "or an unpacked tree (default linux-image-6.12.117+deb12-amd64-unsigned)")
    p.add_argument("--mglru", choices=("on", "off"), help="write /sys/kernel/mm/lru_gen/enabled (default: the kernel's)")
    vocab.add(p, "memory-max", metavar="SIZE|none", default="128M", dest="memory",
              help="the workload cgroup's memory.max (default 128M; with a trace in several cgroups, each "
                        "one's); none: no limit, the workload competes for the guest's RAM (whole-machine reclaim: "
                        "kswapd and direct reclaim)")
    vocab.add(p, "set", dest="cgroup_set", action="append", default=[], metavar="cgroup.NAME.memory.FILE=VALUE",
                   help="a limit of one of the workload's cgroups (FILE: max, high, low, min; VALUE: a size or max), "
                        "the simulator's config key; repeatable")
    vocab.add(p, "swap", metavar="zram:SIZE|none",
                   help="swap in the guest (default: zram of twice the anon footprint for anon workloads, else none)")
    p.add_argument("--swappiness", type=int, metavar="N", help="vm.swappiness in the guest (default: the kernel's, 60)")
    p.add_argument("--percpu-pagelist-high-fraction", type=int, metavar="N",
                   help="vm.percpu_pagelist_high_fraction in the guest, set at boot: 0 (the kernel's default) tunes "
                        "the per-CPU page lists' size automatically; N >= 8 fixes it at 1/N of each zone")
    p.add_argument("--watermark-boost-factor", type=int, metavar="N",
                   help="vm.watermark_boost_factor in the guest, set at boot (default: the kernel's, 15000): how far "
                        "a fallback into another migrate type's pageblock boosts the zone's watermarks, in "
                        "1/10000 of the high watermark; 0 turns boosting off")
    p.add_argument("--pin-cpus", action="store_true",
                   help="run the workload on CPU 0 and kswapd and kcompactd on CPU 1, as the simulator does (the "
                        "kernel's scheduler otherwise moves them; the per-CPU page lists see the difference)")
    p.add_argument("--vmscan-trace", nargs="?", const=1, default=0, type=int, choices=(0, 1, 2, 3), metavar="LEVEL",
                   help="sum reclaim's tracepoints per kswapd pass in the guest (@@vmpass lines in the console "
                        "log; the ring buffer takes 8 MiB of guest memory); 2: also the first 600 events as they are; 3: instead, "
                        "the sizes of the per-CPU lists' refills (12 MiB)")
    p.add_argument("--wb-sample", action="store_true",
                   help="sample the data disk's requests in flight, its writeback throttling (wbt) limits and the "
                        "dirty, writeback and free pages every 50 ms while the workload runs (@@wbs lines in the console log)")
    p.add_argument("--boots", type=int, default=3, metavar="N", help="boots, one guest at a time (default 3)")
    vocab.add(p, "out-dir", dest="out", default="reclaimlab-kernel", aliases=("--out",),
              help="results store and console logs (default ./reclaimlab-kernel)")
    p.add_argument("--timeout", type=float, metavar="S", help="kill a guest after S seconds (default: from the workload size)")
    p.add_argument("--guest-memory", default="512M", metavar="SIZE",
                   help="guest RAM (default 512M; a bare number is MiB); at least 256M")
    p.add_argument("--read-ahead-kb", default=str(KERNEL_DEFAULT_READ_AHEAD_KB), metavar="N",
                   help="the data disk's /sys/block/vda/queue/read_ahead_kb (default: the kernel's, "
                        f"{KERNEL_DEFAULT_READ_AHEAD_KB}; 0: no readahead and no mmap read-around)")
    p.add_argument("--fault-around-bytes", default=str(KERNEL_DEFAULT_FAULT_AROUND_BYTES), metavar="N",
                   help="/sys/kernel/debug/fault_around_bytes, a power of two from 4096 (one page per mapped fault) "
                        f"to 2097152 (default: the kernel's, {KERNEL_DEFAULT_FAULT_AROUND_BYTES})")
    p.add_argument("--thp", metavar="always|madvise|never",
                   help="write transparent_hugepage/enabled (default: the kernel's own, not written; read back "
                        "and printed)")
    p.add_argument("--disk-size", metavar="SIZE", help="the data disk's size (default: what the workload needs)")
    p.add_argument("--accel", choices=("tcg", "kvm"), help="QEMU accelerator (default tcg)")
    p.add_argument("--smp", type=int, default=2, metavar="N",
                   help="guest CPUs (default 2; 1 keeps every per-CPU LRU batch on the workload's CPU)")
    p.add_argument("--nodes", default="1", metavar="N",
                   help="NUMA nodes (QEMU -numa): guest RAM and CPUs split evenly, at least 128 MiB and one CPU "
                        "per node (default 1)")
    p.add_argument("--tick", type=int, default=0, metavar="USEC",
                   help="one sleeper per guest CPU waking every USEC µs, so TCG flushes its soft TLB and "
                        "accessed bits behave as on hardware (default 0: none; docs/kernel.md)")
    p.add_argument("--damon-reclaim", metavar="KEY=VALUE[,...]",
                   help="enable DAMON_RECLAIM when the workload starts, with these module parameters "
                        "(/sys/module/damon_reclaim/parameters: min_age, quota_ms, quota_sz, wmarks_*, ...; "
                        "kernel units); records its statistics and the workload's memory.current over time. "
                        "'' keeps every default")
    p.add_argument("--damon-interface", choices=("module", "sysfs"),
                   help="run DAMON_RECLAIM as the module (enabled=Y) or as the module's scheme through DAMON's "
                        "sysfs interface (default: sysfs on v6.11..v6.16, whose module drops its scheme; "
                        "docs/kernel.md)")
    p.add_argument("--damon-action", choices=("pageout", "stat"), default="pageout",
                   help="the sysfs scheme's action: pageout (the module's) or stat, which monitors and pages out "
                        "nothing: kdamond's monitoring cost in the guest alone (docs/validation.md, \"DAMON_RECLAIM\")")
    vocab.add(p, "json", "print one JSON object")


def add_parser(sub) -> None:
    k = sub.add_parser("kernel", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ks = k.add_subparsers(dest="kernel_command", metavar="SUBCOMMAND", title="subcommands")
    ks.required = True
    r = ks.add_parser("run", help="boot the kernel N times with the workload; store every changed vmstat counter",
                      epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(r)
    r.set_defaults(func=cmd_run)
    t = ks.add_parser("trace", help="write the exact page sequence the guest replays (a native trace for the simulator)",
                      epilog=WORKLOADS, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("workload", metavar="WORKLOAD")
    vocab.add(t, "memory-max", "memory.max the default sizes follow", default="128M", dest="memory")
    vocab.add(t, "output", required=True, help="native trace (in the workload's cgroups, wl for one; its file table is the guest's data file)")
    t.set_defaults(func=cmd_trace)
    f = ks.add_parser("fetch", help="download and unpack a kernel package; print its release and features")
    f.add_argument("package", nargs="?", metavar="PACKAGE|PATH")
    f.set_defaults(func=cmd_fetch)

    v = sub.add_parser("validate", help=VALIDATE_HELP, description=VALIDATE_HELP + ".", epilog=VALIDATE_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(v)
    v.add_argument("--disk-write", choices=("model", "measured"), default="model",
                   help="the simulator's disk for written pages: model (its cost.file_write_ns, default) or measured "
                        "(the guest disk's busy time per page written, from /sys/block/vda/stat, divided by the time "
                        "dilation; docs/validation.md, \"Tenants and writeback\")")
    v.add_argument("--disk-read", choices=("model", "measured"), default="model",
                   help="the simulator's disk for reads: model (its cost.file_read_ns, default) or measured (the "
                        "guest disk's busy time per read request, divided by the time dilation)")
    v.add_argument("--kswapd-wakeup", choices=KSWAPD_WAKEUP_MODES, default="model",
                   help="kswapd's wake-up latency in the simulator: model (cost.kswapd_wakeup_ns, default); mean (the "
                        "guest's mean time from wakeup_kswapd to kswapd's pass, traced, divided by the time dilation, "
                        "waited at every wake-up); measured (those times' distribution, its quantiles over the dilation "
                        "as cost.kswapd_wakeup_ns: each wake-up draws one); progress (the same, each window's "
                        "length the pages allocated in it, traced, times the boot's wall time per page allocated: the "
                        "window in the task's progress, not in the guest's wall time)")
    v.add_argument("--cpu-placement", choices=("model", "measured"), default="model",
                   help="where the workload runs in the simulator: model (CPU 0 throughout, default) or measured "
                        "(the CPUs the first boot's scheduler ran it on, traced with sched_switch: machine.task_cpus); "
                        "kswapd runs on the other CPU either way, as in the guest (docs/validation.md, \"Where the "
                        "workload and kswapd run\")")
    v.add_argument("--cpu-cost", choices=("model", "measured"), default="model",
                   help="the simulator's reclaim CPU costs: model (the cost.* of docs/model.md, default) or measured "
                        "(cost.scan_ns, rmap_ns, unmap_ns, free_ns, walk_pte_ns and swap.zram.compress_ns scaled so "
                        "that kswapd's CPU per page scanned, relative to the workload's own CPU outside direct "
                        "reclaim, is the guest's: under TCG the two are not slowed alike; docs/validation.md, "
                        "\"The guest's relative speeds\"); for thpscale and usemem, cost.clear_page_ns from the "
                        "guest's first THP faults (@@thpfault) and the same reclaim costs scaled for kswapd's CPU per "
                        "page scanned alone")
    v.add_argument("--damon-cost", choices=("model", "measured"), default="model",
                   help="with --damon-reclaim, the time kdamond's actions charge to a time quota in the simulator: "
                        "model (the cost.* of docs/model.md, default) or measured (times kdamond's slowdown in the "
                        "guest: its CPU time over the model's for the same run; sim.kdamond_slowdown)")
    v.set_defaults(func=cmd_validate)


def _setup(a: argparse.Namespace):
    from ..kernel.run import Setup, guest_mb_of

    return Setup(workload=a.workload, kernel=a.kernel, mglru=a.mglru, memory=a.memory, swap=a.swap,
                 swappiness=a.swappiness, pcp_high_fraction=a.percpu_pagelist_high_fraction, watermark_boost_factor=a.watermark_boost_factor, pin_cpus=a.pin_cpus, vmscan_trace=getattr(a, "vmscan_trace", False), wb_sample=getattr(a, "wb_sample", False), boots=a.boots, timeout=a.timeout, guest_mb=guest_mb_of(a.guest_memory),
                 disk_size=a.disk_size, accel=a.accel, tick_us=a.tick, smp=a.smp, nodes=a.nodes,
                 read_ahead_kb=a.read_ahead_kb,
                 fault_around_bytes=a.fault_around_bytes, thp=a.thp, damon_reclaim=a.damon_reclaim,
                 damon_interface=a.damon_interface, damon_action=None if a.damon_action == "pageout" else a.damon_action, cgroup_set=tuple(a.cgroup_set),
                 disk_write=getattr(a, "disk_write", "model"), disk_read=getattr(a, "disk_read", "model"),
                 kswapd_wakeup=getattr(a, "kswapd_wakeup", "model"), damon_cost=getattr(a, "damon_cost", "model"),
                 cpu_placement=getattr(a, "cpu_placement", "model"), cpu_cost=getattr(a, "cpu_cost", "model"))


def guest_lines(c) -> list[str]:
    """What the guest read back and its memory just before the workload (docs/kernel.md)."""
    lines = [f"read_ahead_kb {c.read_ahead_kb}  fault_around_bytes {c.fault_around_bytes}  thp {c.thp}"]
    start = c.layouts.get("start")
    if start:
        m = start.meminfo
        lines.append(f"before the workload: MemTotal {number(m.get('MemTotal', 0))} kB, MemFree "
                     f"{number(m.get('MemFree', 0))} kB, min_free_kbytes {start.min_free_kbytes}; "
                     + "; ".join(f"{f'node {z.node} ' if len(c.nodes()) > 1 else ''}{z.name} managed "
                                 f"{number(z.managed)} free {number(z.free)} "
                                 f"min/low/high {z.min}/{z.low}/{z.high}" for z in start.zones if z.managed))
    return lines


def damon_lines(consoles) -> list[str]:
    """DAMON_RECLAIM's statistics and the workload's average memory.current, per boot."""
    from ..kernel import damon_compare

    out = []
    for i, c in enumerate(consoles):
        st = damon_compare.guest_stats(c)
        avg = damon_compare.time_average(*damon_compare.guest_footprint(c)) if len(c.samples) > 1 else None
        if st:
            out.append(f"boot {i}: DAMON_RECLAIM ({c.damon_reclaim.get('interface')}): tried "
                       f"{number(st.get('bytes_reclaim_tried_regions', 0))} B in {number(st.get('nr_reclaim_tried_regions', 0))} "
                       f"regions, reclaimed {number(st.get('bytes_reclaimed_regions', 0))} B, quota exceeds "
                       f"{st.get('nr_quota_exceeds', 0)}")
        if avg:
            out.append(f"boot {i}: memory.current {avg / 2**20:.1f} MiB on average over {len(c.samples) - 1} samples")
        if st and not st.get("nr_reclaim_tried_regions"):
            out.append(f"boot {i}: note: DAMON_RECLAIM tried nothing. " + idle_reason(c))
    return out


def idle_reason(c) -> str:
    """Why a DAMON_RECLAIM run may have tried nothing: its watermarks, or its pageout age."""
    from ..kernel.damon import module_drops_scheme

    p, start = c.damon_reclaim, c.layouts.get("start")
    m = start.meminfo if start else {}
    why = []
    if p.get("interface") == "module" and module_drops_scheme(c.release):
        why.append(f"Kernel {c.release}'s module drops its own scheme (v6.11..v6.16; docs/validation.md, "
                   f"\"DAMON_RECLAIM\"): run it with --damon-interface sysfs.")
    if m.get("MemTotal") and "wmarks_high" in p:
        free = 1000 * m.get("MemFree", 0) // m["MemTotal"]
        if free > int(p["wmarks_high"]):
            why.append(f"Free memory was {free}‰ when the workload started, above wmarks_high "
                       f"{p['wmarks_high']}‰: the scheme stays deactivated until it falls below wmarks_mid "
                       f"{p.get('wmarks_mid')}‰ (raise wmarks_high/wmarks_mid to keep it active).")
    if "min_age" in p and len(c.samples) > 1:
        run_s = c.samples[-1].t - c.samples[0].t
        if int(p["min_age"]) / 1e6 >= run_s:
            why.append(f"min_age ({int(p['min_age']) / 1e6:g} s) is not shorter than the run ({run_s:.0f} s).")
    return " ".join(why) or "(its regions never matched the scheme's access pattern)"


def cmd_run(a: argparse.Namespace) -> int:
    from ..kernel.experiment import record
    from ..kernel.qemu import other_load_text
    from ..kernel.validate import mean_sd

    prep, consoles = record(_setup(a), Path(a.out), progress=not a.json)
    per_boot = [c.vmstat() for c in consoles]
    names = sorted({k for v in per_boot for k in v})
    stats = {n: mean_sd([float(v.get(n, 0)) for v in per_boot]) for n in names}
    if a.json:
        print(json.dumps({"workload": prep.wl.spec, "kernel": consoles[0].release, "lru_gen": consoles[0].lru_gen,
                          "boots": [{"wall_s": b.wall_s, "host_other_cpus": b.other_cpus, "qemu_cpu_s": b.qemu_cpu_s,
                                     "vmstat": c.vmstat(), "read_back": c.read_back(),
                                     **({"damon_reclaim": c.damon_reclaim} if c.damon_reclaim else {}),
                                     **({"samples": [asdict(x) for x in c.samples]} if c.samples else {}),
                                     "layouts": {w: asdict(l) for w, l in c.layouts.items()},
                                     "cgroups": {cg.name: {"limits": cg.limits, "memory.stat": c.memstat().get(cg.name, {}),
                                                           "memory.events": cg.events, "memory.peak": cg.peak}
                                                 for cg in c.cgroups.values() if cg.name},
                                     "phases": [{"index": ph.index, "wall_s": ph.wall_ns / 1e9, "vmstat": ph.vmstat}
                                                for ph in c.phases], "log": str(b.log)}
                                    for b, c in prep.boots],
                          "mean": {n: m for n, (m, _) in stats.items()}, "sd": {n: s for n, (_, s) in stats.items()},
                          "store": str(Path(a.out) / "results.sqlite")}, indent=2))
        return 0
    c = consoles[0]
    print(f"kernel {c.release}  lru_gen {c.lru_gen}  memory.max {c.memory_max}  workload {prep.wl.spec}  "
          f"{len(consoles)} boot(s), {', '.join(f'{b.wall_s:.0f} s' for b, _ in prep.boots)}"
          + other_load_text([b.other_cpus for b, _ in prep.boots]))
    print("\n".join(guest_lines(c)))
    rows = [(n, number(m), number(round(s, 1)), f"{100 * s / m:.1f}%" if m else "-") for n, (m, s) in stats.items()
            if not n.startswith("nr_")]
    print(table(rows, header=("counter", "mean", "sd", "cv"), right=(1, 2, 3)))
    if len(prep.wl.cgroups) > 1:
        print(cgroup_table(consoles))
    for line in damon_lines(consoles):
        print(line)
    print(f"stored in {Path(a.out) / 'results.sqlite'}; console logs in {Path(a.out) / 'boots'}")
    return 0


def cmd_validate(a: argparse.Namespace) -> int:
    from ..kernel.experiment import validate
    from ..kernel.validate import mean_sd

    res = validate(_setup(a), Path(a.out), progress=not a.json)
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    runs = res.get("sim_runs", 1)
    print(f"{res['workload']}: kernel {res['kernel']} (mglru {res['mglru']}, {res['boots']} boots) "
          f"vs simulator {res['policy']}"
          + (f" ({runs} runs, each on a boot's own machine: their mean)" if runs > 1 else ""))
    g = res["read_back"]
    print(f"guest: read_ahead_kb {g['read_ahead_kb']}  fault_around_bytes {g['fault_around_bytes']}  thp {g['thp']}  "
          f"memory.max {g['memory.max']}  time dilation {res['time_dilation']}"
          + (f"  guest time per access {res['access_ns']:,.0f} ns (sleeps in real time)" if res.get("access_ns") else ""))
    print(_rows_table(res["rows"]))
    d = res.get("disk")
    if d:
        print(f"guest disk: {number(d['pages_written'])} pages written in {number(d['writes'])} requests, "
              f"{d['ms_per_write']:.1f} ms per request, {d['wall_ns_per_page'] / 1e3:,.0f} us busy per page "
              f"(wall); simulator cost.file_write_ns {number(d['sim_file_write_ns'])} ({d['disk_write']})")
    r = res.get("disk_reads")
    if r:
        print(f"guest disk: {number(r['reads'])} read requests, {r['wall_ns_per_read'] / 1e3:,.0f} us busy per request "
              f"(wall); simulator cost.file_read_ns {number(r['sim_file_read_ns'])} ({r['disk_read']}), time dilation "
              f"{r['time_dilation']:.1f}")
        if "kswapd_wall_ns_per_scan" in r or "sim_kswapd_wall_ns_per_scan" in r:
            us = (lambda k: f"{r[k] / 1e3:,.1f} us" if k in r else "n/a")
            print(f"kswapd CPU per page scanned (guest wall clock): kernel {us('kswapd_wall_ns_per_scan')}, "
                  f"model {us('sim_kswapd_wall_ns_per_scan')}")
        if "wakeup_wall_ns" in r:
            print(f"kswapd wake-up (wakeup_kswapd to its pass): guest {r['wakeup_wall_ns'] / 1e3:,.0f} us (wall, mean of "
                  f"{r['kswapd_wakes']:.0f} a boot); simulator cost.kswapd_wakeup_ns {number(r['sim_kswapd_wakeup_ns'])} "
                  f"(mean)")
        if "window_pages_mean" in r or "sim_window_pages_mean" in r:
            pg = (lambda k: f"{r[k]:,.1f}" if k in r else "n/a")
            print(f"pages allocated per wake-up window (wakeup_kswapd to kswapd's pass), mean / p50 / p90: guest "
                  f"{pg('window_pages_mean')} / {pg('window_pages_p50')} / {pg('window_pages_p90')} (the first "
                  f"caller's comm {pg('window_waker_pages_mean')}), model {pg('sim_window_pages_mean')} / "
                  f"{pg('sim_window_pages_p50')} / {pg('sim_window_pages_p90')}")
    cpu = res.get("cpu_cost")
    per_boot = cpu.get("per_boot", [cpu]) if cpu else []  # whole-machine boots: one run each
    for i, c in enumerate(per_boot):
        g, m = c["guest"], c["runs"][-1]
        us = (lambda x: "n/a" if x is None else f"{x / 1e3:,.1f} us")
        print(f"CPU (--cpu-cost measured{f', boot {i}' if len(per_boot) > 1 else ''}): guest task "
              f"{g['task_cpu_s']:.2f} s outside direct reclaim, kswapd "
              f"{us(g.get('kswapd_ns_per_scan'))} per page scanned (wall); model task {m['task_cpu_s']:.3f} s, kswapd "
              f"{us(m.get('kswapd_ns_per_scan'))} per page scanned (its clock); reclaim costs "
              + ("kept (a side's kswapd scanned nothing)" if c["factor"] is None else f"x{c['factor']:.2f}"))
    tf = res.get("thp_fault")
    if tf:
        scan = (lambda x: "n/a" if x is None else f"{x / 1e3:,.1f}")
        print("THP fault (--cpu-cost measured): guest " + ", ".join(f"{ns / 1e6:,.2f}" for ns in tf["guest_fault_ns"])
              + " ms a fault (CPU, per boot), kswapd " + ", ".join(scan(x) for x in tf["guest_kswapd_ns_per_scan"])
              + " us a page scanned; model cost.clear_page_ns " + ", ".join(f"{x:,}" for x in tf["clear_page_ns"])
              + ", reclaim costs " + ", ".join(f"x{k:.2f}" for k in tf["reclaim_factor"]))
    kp = res.get("kswapd_passes")
    if kp:
        k, m = kp["kernel"], kp["model"]
        fig = (lambda d, key, f="{:,.0f}": f.format(d[key]) if key in d else "n/a")
        for side, d in (("kernel", k), ("model", m)):
            print(f"kswapd passes (--vmscan-trace), {side}: {fig(d, 'passes')} that shrank ({fig(d, 'empty')} found the "
                  f"node balanced), pages reclaimed a pass mean / p50 / p90 {fig(d, 'reclaimed_mean')} / "
                  f"{fig(d, 'reclaimed_p50')} / {fig(d, 'reclaimed_p90')}, lowest priority "
                  f"{fig(d, 'min_priority_mean', '{:.2f}')} (mean)")
        if "lru_gen_max_seq" in kp:
            g = kp["lru_gen_max_seq"]
            print(f"MGLRU max_seq of the workload's memcg at the end: kernel {g['kernel']:.1f}, model {g['model']:.0f}")
    for run in res.get("per_run", []) if len(res.get("per_run", [])) > 1 else []:
        print(f"{run['threads']} thread(s)")
        print(_rows_table(run["rows"]))
    for run in res.get("per_run", []):
        h = run["huge_pct"]
        print(f"huge faults, {run['threads']} thread(s): kernel {h['kernel']:.1f}% ± {h['kernel_sd']:.1f}, "
              f"model {h['model']:.1f}%")
        if "pages_per_node" in run:
            pn = run["pages_per_node"]
            print(f"the region's resident pages per node at the end, {run['threads']} thread(s): "
                  + ", ".join(f"node {i} kernel {k[0]:,.0f} ± {k[1]:,.0f}, model {m:,.0f}"
                              for i, (k, m) in enumerate(zip(pn["kernel"], pn["model"]))))
    for d in res.get("directions", []):
        arrow = {-1: "down", 0: "level", 1: "up"}
        print(f"direction {d['counter']}: kernel {arrow[d['kernel_dir']]}, model {arrow[d['model_dir']]}"
              f"{'' if d['agree'] else ' (DISAGREE)'}")
    for name, rows in res.get("cgroup_rows", {}).items():
        print(f"cgroup {name} (memory.stat, memory.events)")
        print(_rows_table(rows))
    dr = res.get("damon_reclaim")
    if dr:
        print(f"DAMON_RECLAIM ({dr['interface']} interface in the guest; baseline: one boot without it)")
        print(_rows_table(dr["rows"]))
        k = dr["kdamond_cpu_pct"]
        if k["kernel"] and k["simulator"] is not None:
            print(f"kdamond CPU: kernel {mean_sd(k['kernel'])[0]:.2f}% (TCG), simulator {k['simulator']:.2f}%")
        q = dr.get("quota") or {}
        kq, sq = q.get("kernel") or {}, q.get("simulator") or {}
        if kq.get("bytes_per_ms") and sq.get("bytes_per_ms"):
            print(f"time quota's throughput (bytes per charged ms): kernel {kq['bytes_per_ms'] / 2**20:,.2f} MiB/ms, "
                  f"simulator {sq['bytes_per_ms'] / 2**20:,.2f} MiB/ms")
        if dr.get("kdamond_slowdown"):
            print(f"kdamond's measured slowdown (--damon-cost measured): {dr['kdamond_slowdown']:.2f}")
        if any(dr.get("snap_lost") or []):
            print(f"note: damon_*: the guest's trace buffer overwrote {sum(dr['snap_lost'])} region events before they "
                  f"were read (per boot {dr['snap_lost']}); the aggregations they cut are left out")
    shown = {r["counter"] for r in res["rows"]}
    for counter, note in res["notes"].items():
        if counter in shown:
            print(f"note: {counter}: {note}")
    if res.get("not_comparable"):
        print(f"note: anon counters {res['not_comparable']}")
    from ..kernel.qemu import host_busy_note

    busy = host_busy_note(res.get("host_other_cpus") or [])
    if busy:
        print(f"note: {busy}")
    return 0


#: memory.stat keys ``kernel run`` shows per cgroup (mean over boots).
CGROUP_KEYS = ("memory.current", "anon", "file", "pgscan", "pgsteal", "workingset_refault_anon",
               "workingset_refault_file", "workingset_activate_file", "file_dirty", "file_writeback")


def cgroup_table(consoles) -> str:
    """Each cgroup's memory.stat at the end of the last phase and its memory.events, mean
    over boots: one row per cgroup."""
    from ..kernel.validate import mean_sd

    names = [cg.name for _, cg in sorted(consoles[0].cgroups.items()) if cg.name]
    rows = []
    for n in names:
        stats = [c.memstat().get(n, {}) for c in consoles]
        events = [cg.events if (cg := c.cgroup(n)) else {} for c in consoles]
        mean = {k: mean_sd([float(s.get(k, 0)) for s in stats])[0] for k in CGROUP_KEYS}
        ev = " ".join(f"{k} {mean_sd([float(e.get(k, 0)) for e in events])[0]:g}" for k in ("low", "high", "max", "oom"))
        rows.append((n, *(number(round(mean[k])) for k in CGROUP_KEYS), ev))
    return table(rows, header=("cgroup", *CGROUP_KEYS, "memory.events"), right=tuple(range(1, len(CGROUP_KEYS) + 1)))


def _rows_table(rows_in: list[dict]) -> str:
    """A comparison table: counter, kernel mean ± sd, simulated (± its spread over seeds
    where the row has ``sim_sd``), relative error, target (relative, or in percentage
    points for a row with ``target_pp``)."""
    rows = []
    for r in rows_in:
        if not r.get("comparable", True):
            tgt = "not comparable"
        elif r.get("target_pp") is not None:
            tgt = f"{'met' if r['met'] else 'MISSED'} (±{r['target_pp']:g} pp)"
        else:
            tgt = "" if r["target"] is None else f"{'met' if r['met'] else 'MISSED'} (±{r['target']:.0%})"
        rows.append((r["counter"], f"{number(round(r['real_mean'], 1))} ± {number(round(r['real_sd'], 1))}",
                     number(round(r["sim"], 1)) + (f" ± {number(round(r['sim_sd'], 1))}" if "sim_sd" in r else ""),
                     f"{r['rel_error']:+.1%}" if r["rel_error"] != float("inf") else "inf",
                     tgt))
    return table(rows, header=("counter", "kernel mean ± sd", "simulated", "rel. error", "target"), right=(1, 2, 3))


def cmd_trace(a: argparse.Namespace) -> int:
    from ..kernel import workload
    from ..kernel.ops import write_sim_trace
    from ..kernel.run import parse_size

    wl = workload.build(a.workload, parse_size(a.memory, "--memory-max"))
    if wl.thp is not None:
        from ..kernel import KernelError

        raise KernelError(f"workload {wl.thp['kind']} is a program the guest runs (guest/thp.c), not a page "
                          f"sequence: it has no trace (the model runs it as its {wl.thp['kind']} scenario)")
    write_sim_trace(wl, Path(a.output))  # native, with the guest's file layout
    print(f"{a.output}: {len(wl):,} accesses ({wl.file_pages:,} file pages, {wl.anon_pages:,} anon pages; "
          f"phases {', '.join(wl.phases)})")
    return 0


def cmd_fetch(a: argparse.Namespace) -> int:
    from ..kernel import fetch

    k = fetch.fetch(a.package)
    feats = {o: k.config.get("CONFIG_" + o, "n") for o in ("LRU_GEN", "LRU_GEN_ENABLED", "DAMON", "ZRAM", "MEMCG")}
    print(f"{k.release}  {k.root}")
    print("  " + "  ".join(f"{o}={v}" for o, v in feats.items()))
    return 0
