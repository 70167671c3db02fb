"""``reclaimlab tune damon-reclaim``: sweep DAMON_RECLAIM's module parameters over one
workload, print the memory-saving vs. slowdown frontier and the sysfs lines of a point."""

from __future__ import annotations

import argparse
import json

from . import vocab
from .trace import FORMATS as TRACE_FORMATS
from ._table import table

HELP = "offline tuning: sweep DAMON_RECLAIM parameters, print the saving/slowdown frontier"

EPILOG = """\
Each point replays the workload with DAMON_RECLAIM on and its parameters; memory saving
and slowdown are relative to the same workload with DAMON_RECLAIM off (SeongJae Park's
DAMON_RECLAIM RFC v3 definitions; docs/tune.md). Default grid: min_age 1s,5s,30s,120s x quota_ms 10,50,200
x quota_sz 128M,1G x wmarks 500/400/200 (kernel default), 1000/1000/0 (always active).
Values are in the kernel's units (us, ms, bytes, per-mille); sizes may use K/M/G.

examples:
  reclaimlab tune damon-reclaim --trace app.trace --memory 2G --swap zram:1G --plot frontier.png
  reclaimlab tune damon-reclaim --scenario damon-reclaim-parsec --param min_age=5000000,30000000 \\
      --param quota_ms=10,50 --param quota_sz=1G --param wmarks=1000/1000/0 --csv points.csv
  reclaimlab tune damon-reclaim --scenario damon-reclaim-parsec --workload-param workload=canneal --scale 0.25
  reclaimlab tune damon-reclaim --trace damon.data --trace-format damo --pick 3
"""


def add_parser(sub) -> None:
    p = sub.add_parser("tune", help=HELP, description=HELP + ".")
    tsub = p.add_subparsers(dest="tune_command", metavar="MODULE", title="modules")
    tsub.required = True
    d = tsub.add_parser("damon-reclaim", help="DAMON_RECLAIM (min_age, quota_ms, quota_sz, watermarks, ...)",
                        description="Sweep DAMON_RECLAIM's module parameters over one workload; print the Pareto "
                        "frontier of memory saving vs. runtime slowdown and the lines that apply a point on a "
                        "real kernel (/sys/module/damon_reclaim/parameters/).",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    w = d.add_argument_group("workload (one of)")
    vocab.add(w, "trace", help="a trace file (any format `reclaimlab run --trace` reads)")
    vocab.add(w, "trace-format", aliases=(), choices=TRACE_FORMATS,
                   help="native | lirs | address | csv | oracle | damo (default: detect)")
    vocab.add(w, "trace-kind", aliases=(), choices=("file-read", "file-mapped", "anon"),
                   help="what records lacking it are (file-read, file-mapped, anon)")
    vocab.add(w, "scenario", help="a built-in scenario (`reclaimlab scenarios`)")
    w.add_argument("--scale", metavar="F", type=float, help="grow a scalable scenario")
    vocab.add(w, "workload-param", action="append", default=[],
              help="a scenario's workload parameter, e.g. workload=canneal for damon-reclaim-parsec "
              "(`reclaimlab scenarios NAME`; repeatable)")
    m = d.add_argument_group("machine (the same for every point and the baseline)")
    vocab.add(m, "policy", help="reclaim policy model (default: the config's)")
    vocab.add(m, "memory", help="machine.memory, e.g. 1G")
    vocab.add(m, "swap", help="zram:SIZE, ssd:SIZE or none")
    vocab.add(m, "seed", help="workload seed")
    vocab.add(m, "set", action="append", default=[],
                   help="set any knob for every run, e.g. --set damon_reclaim.aggr_interval=200000 (repeatable)")
    s = d.add_argument_group("sweep")
    s.add_argument("--param", metavar="KEY=V1,V2,...", action="append", default=[],
                   help="sweep KEY over these values (replaces its default axis or adds one); KEY is a "
                   "DAMON_RECLAIM parameter, wmarks=H/M/L, or any config key with a dot (repeatable)")
    vocab.add(s, "jobs", type=int, help="parallel worker processes (default: CPU count)")
    o = d.add_argument_group("output")
    o.add_argument("--pick", metavar="N", type=int, help="print the sysfs lines of point N (default: the knee)")
    vocab.add(o, "plot", dest="output", help="draw the frontier to FILE (.png/.svg/.pdf)")
    vocab.add(o, "csv", help="write every point (parameters, metrics, counters) as CSV")
    vocab.add(o, "json", help="print one JSON object instead of the tables")
    vocab.add(o, "quiet", aliases=())
    d.set_defaults(func=main)


def _fmt_param(key: str, value: str) -> str:
    """A swept value for the table: µs times and byte sizes made readable."""
    try:
        v = int(value)
    except ValueError:
        return value
    if key in ("min_age", "wmarks_interval", "sample_interval", "aggr_interval", "quota_mem_pressure_us"):
        return f"{v / 1e6:g}s" if v >= 1_000_000 else f"{v / 1e3:g}ms" if v >= 1000 else f"{v}us"
    if key.endswith("_sz"):
        for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
            if v >= 1 << shift and v % (1 << shift) == 0:
                return f"{v >> shift}{unit}"
    return value


def rows(sw, indices) -> tuple[list[str], list[list[str]]]:
    has_cpu = any("damon_cpu_pct" in p.metrics for p in sw.points)
    header = ["#"] + sw.axes + ["saving %", "slowdown %"] + (["cpu %"] if has_cpu else [])
    out = []
    for i in indices:
        p = sw.points[i]
        r = [str(i)] + [_fmt_param(a, p.params[a]) for a in sw.axes]
        r += [f"{p.saving:.2f}", f"{p.slowdown:.2f}"]
        if has_cpu:
            r.append(f"{p.metrics.get('damon_cpu_pct', float('nan')):.2f}")
        out.append(r)
    return header, out


def write_csv(sw, path: str) -> None:
    import csv

    from .._atomic import atomic_output

    metric_keys = sorted({k for p in sw.points for k in p.metrics})
    counter_keys = sorted({k for p in sw.points for k in p.counters})
    with atomic_output(path) as tmp:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["point"] + sw.axes + metric_keys + counter_keys + ["frontier"])
            front = set(sw.front)
            for p in sw.points:
                w.writerow([p.index] + [p.params[a] for a in sw.axes] + [p.metrics.get(k, "") for k in metric_keys]
                           + [p.counters.get(k, "") for k in counter_keys] + [int(p.index in front)])


def main(args: argparse.Namespace) -> int:
    from ..exceptions import ConfigError
    from ..tune.sweep import grid, module_params, run_sweep
    from ..tune.sysfs import sysfs_lines
    from .run import parse_set

    if bool(args.trace) == bool(args.scenario):
        raise ConfigError("give one workload: --trace FILE or --scenario NAME")
    vocab.check_jobs(args.jobs)
    vocab.check_figure(args.output)
    _, planned = grid(args.param)
    if args.pick is not None and not 0 <= args.pick < len(planned):
        raise ConfigError(f"--pick {args.pick}: the sweep has points 0..{len(planned) - 1}")
    workload = {k: v for k, v in dict(
        trace=args.trace, trace_format=args.trace_format, trace_kind=args.trace_kind, scenario=args.scenario,
        scale=args.scale, policy=args.policy, memory=args.memory, swap=args.swap, seed=args.seed,
    ).items() if v is not None}
    workload["set"] = parse_set(args.set)
    wparams = parse_set(args.workload_param)
    if wparams and not args.scenario:
        raise ConfigError("--workload-param needs --scenario")
    sw = run_sweep(workload, args.param, workload_params=wparams, jobs=args.jobs,
                   progress=None if not args.quiet else False)
    pick = sw.knee if args.pick is None else args.pick
    chosen = sw.points[pick]
    what = "knee" if args.pick is None else "pick"
    params, sim_only = module_params(chosen.settings)
    lines = sysfs_lines(params, comment=f"DAMON_RECLAIM point {pick} ({what}): simulated memory saving "
                        f"{chosen.saving:.2f}%, slowdown {chosen.slowdown:.2f}%")
    if sim_only:
        lines.insert(1, "# simulated with, not module parameters: "
                     + ", ".join(f"{k}={v}" for k, v in sim_only.items()))
    if args.csv:
        write_csv(sw, args.csv)
    if args.output:
        from ..tune.plot import plot_frontier

        plot_frontier(sw, args.output, pick)
    if args.json:
        print(json.dumps({**sw.to_dict(), "pick": pick, "sysfs": lines}, indent=1))
        return 0
    b = sw.baseline
    print(f"{sw.workload}: {len(sw.points)} points; baseline without DAMON_RECLAIM: runtime "
          f"{b['runtime_s']:.4g} s, memory in use {b['mem_used_avg_bytes'] / (1 << 20):.1f} MiB (average)")
    print()
    print(f"Pareto frontier (memory saving vs. slowdown), {len(sw.front)} of {len(sw.points)} points:")
    header, body = rows(sw, sw.front)
    print(table(body, header=header, right=tuple(range(len(header)))))
    print()
    print("\n".join(lines))
    return 0
