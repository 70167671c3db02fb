"""``reclaimlab run``: replay a trace or a built-in scenario and report the results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import vocab
from .trace import FORMATS as TRACE_FORMATS
from ..counters import SHADOWLESS, tracked_vmstat, untracked
from ._table import number, size, table

HELP = "run a scenario under every policy it compares, or one simulation (no arguments: `default`)"

DESCRIPTION = """\
Replay a page-access trace (or a built-in scenario) through a reclaim policy model on a
simulated machine and print the kernel's vmstat counters and run metrics.

A built-in scenario run without --policy (and without CONFIG, --timeseries or --plot)
is a comparison: the scenario runs once per policy its row in the scenario table
compares (those registered in this build; docs/scenarios.md lists them) in parallel
worker processes, and one table compares them; `reclaimlab scenarios --json` gives each
row's report. With --policy (or a CONFIG file, a trace, --timeseries or --plot) it is
one run with the detailed report.

Settings are applied in this order, later ones winning: the scenario's machine (or the
defaults), the CONFIG file, the options below, then --set. Keys use the kernel's names;
`reclaimlab knobs` lists them all.
"""

EPILOG = """\
common keys for --set (see `reclaimlab knobs`):
{common_keys}

config file (TOML; tables flatten to dotted keys):
  policy = "classic@6.15"
  [machine]
  memory = "2G"
  [vm]
  swappiness = 10
  [cgroup.db]
  memory.max = "512M"
  [trace]
  path = "app.trace"       # relative to the config file
  format = "address"       # native | lirs | address | csv

examples:
  reclaimlab run                               compare the policies on `default`
  reclaimlab run tpcc-stock-level              MongoDB STOCK_LEVEL: transactions/s per policy
  reclaimlab run tpcc-stock-level --scale 4 --json
  reclaimlab run damon-reclaim-parsec --detail the DAMON_RECLAIM RFC's quota x prioritization table
  reclaimlab run --policy classic@6.15         one run, detailed report
  reclaimlab run --memory 256M --swap zram:512M --swappiness 100
  reclaimlab run --trace OLTP.lirs --trace-format lirs --trace-kind file-read --memory 64M --json
  reclaimlab run machine.toml --set cgroup.db.memory.max=128M --timeseries ts.parquet
"""

TIMESERIES_SUFFIXES = (".csv", ".parquet")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG.format(common_keys=vocab.common_keys()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG.toml|SCENARIO",
        help="TOML config (kernel knob names; see below), the name of a built-in scenario, or "
        "program:NAME[,size=SIZE,seed=N], a built-in real program's recording (docs/programs.md)",
    )
    w = p.add_argument_group("workload (default: scenario `default`)")
    vocab.add(w, "scenario")
    w.add_argument("--scale", metavar="F", type=float, help=scale_help())
    vocab.add(w, "workload-param", action="append", default=[],
              help="a built-in scenario's workload parameter, e.g. --workload-param tasks_per_cpu=2 for "
              "hadoop-terasort (`reclaimlab scenarios NAME` lists them; repeatable)")
    vocab.add(w, "trace", "replay this trace file")
    vocab.add(w, "trace-format", "native | lirs | address | csv | oracle (libCacheSim oracleGeneral) | damo (a damo "
              "record, docs/damo.md) (default: detect)", choices=TRACE_FORMATS)
    vocab.add(
        w,
        "trace-kind",
        choices=("file-read", "file-mapped", "anon"),
        help="what records lacking it are: file-read (read() syscalls on page cache), "
        "file-mapped (mmap'd file), anon (anonymous memory)",
    )
    m = p.add_argument_group("machine and policy")
    vocab.add(
        m,
        "policy",
        help="run only this reclaim policy model, e.g. classic@6.15 (`reclaimlab policies`), or a "
        "policy of your own: python:MODULE:CLASS, python:PATH.py:CLASS, rust:PATH:NAME (docs/plugins.md); "
        "without it a scenario compares its policies",
    )
    vocab.add_shortcuts(m)
    vocab.add(
        m,
        "set",
        action="append",
        default=[],
        help="set any knob, e.g. --set vm.watermark_scale_factor=100 (repeatable)",
    )
    o = p.add_argument_group("output")
    vocab.add(
        o,
        "json",
        help='print one JSON object: {"policy", "vmstat", "metrics", "provenance"}; for a comparison '
        '{"scenario", "baseline", "policies": {NAME: {"metrics", "vmstat"}}, "provenance"} (provenance: version, '
        'git commit, date, effective configuration, noise; docs/cli.md)',
    )
    o.add_argument("--timeseries", metavar="OUT", help="write the time series to OUT.csv or OUT.parquet")
    vocab.add(
        o,
        "plot",
        aliases=(),
        help="draw memory composition, reclaim rates, refaults/swap and memory stall over time "
        "to FILE.png, FILE.svg or FILE.pdf (needs matplotlib: pip install 'reclaimlab[plot]')",
    )
    o.add_argument(
        "--damo-record",
        metavar="OUT",
        help="keep DAMON snapshots (sim.damon_record, default vaddr: the trace's pages) and write them "
        "in damo's record format, for `damo report access|heatmap|wss -i OUT` (docs/damo.md)",
    )
    vocab.add(o, "quiet")
    o.add_argument("--detail", action="store_true", help=detail_help())
    vocab.add(
        o,
        "jobs",
        type=int,
        help="parallel worker processes of a comparison (default and maximum: the CPU count)",
    )
    p.set_defaults(func=main)


def scale_help() -> str:
    """``--scale``'s help, naming the scalable rows of the scenario table."""
    from .. import _core

    names = [n for n, _d, _r in _core.scenarios() if _core.scenario_info(n)["scalable"]]
    return (f"grow a scalable scenario linearly ({', '.join(names)}; each one's description in "
            "`reclaimlab scenarios` gives its machine at --scale 1)")


def detail_help() -> str:
    """``--detail``'s help, naming the scenarios whose report has per-workload tables."""
    from .. import _core

    names = [n for n, _d, r in _core.scenarios() if r == "damon-quota"]
    return f"{', '.join(names)}: also print the table of every workload"


def parse_set(items: list[str]) -> dict[str, str]:
    from ..exceptions import ConfigError

    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE, got '{item}'")
        out[key.strip()] = value.strip()
    return out


def main(args: argparse.Namespace) -> int:
    import reclaimlab
    from ..exceptions import ConfigError
    from ..progress import Progress

    _positional_scenario(args)
    if args.trace and args.scenario:
        raise ConfigError("give either --trace or --scenario, not both")
    vocab.check_jobs(args.jobs)
    if args.timeseries and Path(args.timeseries).suffix.lower() not in TIMESERIES_SUFFIXES:
        raise ConfigError(f"--timeseries {args.timeseries}: expected a .csv or .parquet file name")
    for flag, out in (("--timeseries", args.timeseries), ("--damo-record", args.damo_record)):
        if out and not Path(out).resolve().parent.is_dir():  # before the run, not after it
            raise ConfigError(f"{flag} {out}: directory does not exist")
    if args.plot:
        from ..plot import check_path, require_matplotlib

        check_path(args.plot, "--plot")
        require_matplotlib()

    settings = parse_set(args.set)
    params = parse_set(args.workload_param)
    if params and (args.trace or args.program):
        raise ConfigError("--workload-param needs a built-in scenario (--scenario NAME), not a trace or program")
    if args.program:
        from ..programs.scenario import prepare_run

        rec, args.memory, args.swap = prepare_run(args.program, settings, args.memory, args.swap,
                                                  progress=not args.quiet)
        args.trace, args.trace_format = str(rec.trace), "native"
    if params and report_of(args.scenario) in ("thp-policies", "damon-quota") and not args.policy:
        raise ConfigError(f"--workload-param: the {args.scenario} comparison runs its own workloads; give --policy NAME for one run")
    if report_of(args.scenario) == "thp-policies":
        from . import run_thp

        return run_thp.main(args, settings)
    if args.damo_record:
        settings.setdefault("sim.damon_record", "vaddr")
    if is_comparison(args, settings):
        return compare_main(args, settings, params)

    prep = reclaimlab.prepare(
        args.config,
        trace=args.trace,
        trace_format=args.trace_format,
        trace_kind=args.trace_kind,
        scenario=args.scenario,
        scale=args.scale,
        policy=args.policy,
        **vocab.shortcut_values(args),
        set=settings,
        params=params,
    )
    vocab.flush_notes(args)
    with Progress(enabled=not args.quiet) as bar:
        raw = reclaimlab.replay(prep.cfg, prep.source, on_progress=bar.update)
    result = reclaimlab.Result(raw, prep.cfg.items(), prep.workload, prep.transactions)

    if args.damo_record:
        from ..damo_record import write_result

        write_result(args.damo_record, result)
    if args.timeseries:
        write_timeseries(result, args.timeseries)
    if args.plot:
        from ..plot import plot_timeseries

        plot_timeseries(result, args.plot)
    if args.json:
        from ..provenance import stamp

        out = result.to_dict()
        out["vmstat"] = tracked_vmstat(result.policy, out["vmstat"])
        print(json.dumps(stamp(out, [dict(result.config)]), sort_keys=False))
    else:
        print(summary(result))
    for w in damon_reclaim_warnings(result.config, result.metrics):
        print(f"reclaimlab: warning: {w}", file=sys.stderr)
    return 0


def damon_reclaim_warnings(cfg: dict[str, str], metrics: dict[str, float]) -> list[str]:
    """Why an enabled DAMON_RECLAIM tried nothing in a run, one line per cause: the
    watermarks kept its scheme off at every check (free memory below ``wmarks_low``: the
    module leaves heavy pressure to LRU reclaim; above ``wmarks_high``: nothing to do),
    or ``min_age`` is longer than the run, so no region can age enough."""
    if cfg.get("damon_reclaim.enabled") != "Y" or metrics.get("bytes_reclaim_tried_regions", 0) > 0:
        return []
    out = []
    if metrics.get("damon_nr_samples", 0) == 0:
        if metrics.get("damon_wmarks_below_low", 0) > 0:
            low = cfg.get("damon_reclaim.wmarks_low", "?")
            out.append(
                f"DAMON_RECLAIM never ran: free memory stayed below damon_reclaim.wmarks_low ({low} ‰) "
                "at every check, where it leaves reclaim to the LRU; try --set damon_reclaim.wmarks_low=0"
            )
        elif metrics.get("damon_wmarks_above_high", 0) > 0:
            high = cfg.get("damon_reclaim.wmarks_high", "?")
            out.append(
                f"DAMON_RECLAIM never ran: free memory stayed above damon_reclaim.wmarks_high ({high} ‰) "
                "at every check; try --set damon_reclaim.wmarks_high=1000"
            )
    min_age_us = int(cfg.get("damon_reclaim.min_age", "0"))
    runtime_s = metrics.get("runtime_s", 0.0)
    if min_age_us / 1e6 > runtime_s:
        # Suggest the DAMON evaluation's 5 s, or a quarter of a shorter run.
        hint = max(100_000, min(5_000_000, int(runtime_s * 1e6 / 4) // 100_000 * 100_000))
        out.append(
            f"damon_reclaim.min_age ({min_age_us / 1e6:g} s) is longer than the run ({runtime_s:.1f} s): "
            f"no region can become old enough to be paged out; try --set damon_reclaim.min_age={hint}"
        )
    return out


def _positional_scenario(args: argparse.Namespace) -> None:
    """`reclaimlab run NAME`: NAME is a scenario when it is one and no such file exists."""
    from .. import _core
    from ..exceptions import ConfigError

    name = args.config
    args.program = None
    if name is None or Path(name).exists():
        return
    if name.startswith("program:"):
        if args.trace or args.scenario:
            raise ConfigError(f"{name} is the workload: give no --trace or --scenario with it")
        args.program, args.config = name, None
        return
    known = [s[0] for s in _core.scenarios()]
    if name in known:
        if args.scenario and args.scenario != name:
            raise ConfigError(f"scenario given twice: {name} and --scenario {args.scenario}")
        args.scenario, args.config = name, None
    elif not name.endswith(".toml") and "/" not in name and "\\" not in name:
        raise ConfigError(f"'{name}' is neither a config file nor a scenario; scenarios: {', '.join(known)}")


def report_of(scenario: str | None) -> str | None:
    """The report a built-in scenario's comparison run prints (its row in the scenario
    table: ``policies``, ``damon-quota`` or ``thp-policies``); None for no or an unknown
    scenario."""
    from .. import _core

    return next((r for n, _, r in _core.scenarios() if n == scenario), None)


def is_comparison(args: argparse.Namespace, settings: dict[str, str]) -> bool:
    """A scenario run that names no single policy (see DESCRIPTION)."""
    return not (
        args.policy
        or "policy" in settings
        or args.config
        or args.trace
        or args.timeseries
        or args.plot
        or args.damo_record
    )


def compare_main(args: argparse.Namespace, settings: dict[str, str], params: dict[str, str] | None = None) -> int:
    import os
    import time

    import reclaimlab

    scenario = args.scenario or "default"
    if report_of(scenario) == "damon-quota":
        from .damon_parsec import main as parsec_main

        return parsec_main(args, settings)
    start = time.monotonic()
    chatty = not args.quiet and sys.stderr.isatty()

    def on_done(name: str, result) -> None:
        if chatty:
            print(f"  {name} done ({time.monotonic() - start:.1f} s)", file=sys.stderr)

    names = reclaimlab.compare_policies(scenario)
    if chatty:
        print(f"running {scenario} under {len(names)} policies...", file=sys.stderr)
    comp = reclaimlab.compare(
        scenario,
        policies=names,
        scale=args.scale,
        **vocab.shortcut_values(args),
        set=settings,
        params=params,
        workers=min(args.jobs or os.cpu_count() or 1, os.cpu_count() or 1),
        on_done=on_done,
    )
    if args.json:
        from ..provenance import stamp

        out = comp.to_dict()
        for name, entry in out["policies"].items():
            entry["vmstat"] = tracked_vmstat(name, entry["vmstat"])
        print(json.dumps(stamp(out, [dict(r.config) for r in comp.results.values()]), sort_keys=False))
    else:
        print(comparison_table(comp))
    seen = set()
    for r in comp.results.values():
        for w in damon_reclaim_warnings(r.config, r.metrics):
            if w not in seen:
                seen.add(w)
                print(f"reclaimlab: warning: {w}", file=sys.stderr)
    return 0


#: Columns of the comparison table: (header, vmstat counters summed).
COUNTERS = (
    ("refault_file", ("workingset_refault_file",)),
    ("activate_file", ("workingset_activate_file",)),
    ("pgscan", ("pgscan_kswapd", "pgscan_direct")),
    ("pswpout", ("pswpout",)),
)


def comparison_table(comp) -> str:
    """The comparison report: scenario and machine, then one row per policy."""
    first = next(iter(comp.results.values()))
    declared = reclaimlab_baseline(comp.scenario)
    if comp.baseline == declared:
        why = comp.baseline
    else:
        why = f"{comp.baseline} (the first policy; {declared} is not registered)"
    tps = comp.metric == "tps"
    head = [
        ("workload", workload_line(first.workload)),
        ("machine", machine_line(first.config)),
        ("ratio", f"{'transactions/s' if tps else 'speed (1/runtime)'} relative to {why}"),
    ]
    cols = ["policy", "txn/s" if tps else "runtime_s", "ratio"] + [c for c, _ in COUNTERS]
    # With DAMON_RECLAIM on, what it paged out (its own counter: no pgscan/pgsteal).
    damon = first.config.get("damon_reclaim.enabled") == "Y"
    if damon:
        cols.append("damon_reclaimed")
    rows = []
    for name, r in comp.results.items():
        main = r.metrics["tps"] if tps else r.metrics["runtime_s"]
        row = [name, f"{main:,.2f}", f"{comp.ratios[name]:.3f}"]
        row += ["n/a" if all(untracked(name, k) for k in keys) else f"{sum(r.vmstat.get(k, 0) for k in keys):,}"
                for _, keys in COUNTERS]
        if damon:
            # "-": a model without kdamond (the cache:* policies).
            v = r.metrics.get("bytes_reclaimed_regions")
            row.append("-" if v is None else size(v))
        rows.append(row)
    lines = [table(head), "", table(rows, header=cols, right=range(1, len(cols)))]
    if tps:
        lines += [
            "",
            "txn/s = transactions / summed latency, as py-tpcc reports it (clients × simulated runtime); "
            "pgscan = pgscan_kswapd + pgscan_direct",
        ]
    else:
        lines += ["", "runtime_s = simulated seconds; pgscan = pgscan_kswapd + pgscan_direct"]
    if any(name.startswith(SHADOWLESS) for name in comp.results):
        lines.append("n/a: a counter the policy does not keep (cache:* algorithms have no workingset shadow entries)")
    if damon:
        lines[-1] += "; damon_reclaimed = DAMON_RECLAIM's bytes_reclaimed_regions"
    return "\n".join(lines)


def workload_line(workload: str) -> str:
    """What was replayed, in one line: a built-in scenario's with its description."""
    from .. import _core

    words = workload.split()
    if len(words) < 2 or words[0] != "scenario":
        return workload
    try:
        return f"{workload}: {_core.scenario_info(words[1])['description']}"
    except Exception:  # not a row of the scenario table: its own name says it
        return workload


def reclaimlab_baseline(scenario: str) -> str:
    from .. import _core

    return _core.scenario_info(scenario)["baseline"] or "the first policy"


def write_timeseries(result, out: str) -> None:
    from .._atomic import atomic_output

    frame = result.timeseries
    with atomic_output(out) as tmp:
        if out.lower().endswith(".parquet"):
            frame.write_parquet(tmp)
        else:
            frame.write_csv(tmp)


def machine_line(cfg: dict[str, str]) -> str:
    parts = [f"{cfg.get('machine.memory', '?')} memory"]
    nodes = cfg.get("machine.nodes", "1")
    if nodes != "1":
        parts.append(f"{nodes} nodes")
    dev = cfg.get("swap.device", "none")
    if dev == "none":
        parts.append("no swap")
    else:
        sz = cfg.get("swap.size", "auto")
        parts.append(f"swap {dev} {cfg.get('machine.memory') if sz == 'auto' else sz}")
    parts.append(f"vm.swappiness={cfg.get('vm.swappiness', '?')}")
    cgroups = sorted({k.split(".")[1] for k in cfg if k.startswith("cgroup.")})
    for cg in cgroups:
        mx = cfg.get(f"cgroup.{cg}.memory.max", "max")
        parts.append(f"cgroup {cg} memory.max={mx}")
    return ", ".join(parts)


def summary(result) -> str:
    """The human-readable report: policy and machine, then metrics, then vmstat."""
    head = [
        ("policy", result.policy),
        ("machine", machine_line(result.config)),
        ("workload", workload_line(result.workload)),
        ("seed", result.config.get("seed", "?")),
    ]
    lines = [table(head), "", "metrics (times in simulated seconds)"]
    lines.append(table(((f"  {k}", _metric(k, v)) for k, v in result.metrics.items()), right=(1,)))
    lines += ["", "vmstat" + (" (n/a: not kept by this policy)" if result.policy.startswith(SHADOWLESS) else "")]
    lines.append(table(((f"  {k}", "n/a" if untracked(result.policy, k) else f"{v:,}")
                        for k, v in result.vmstat.items()), right=(1,)))
    return "\n".join(lines)


def _metric(name: str, v: float) -> str:
    if name.endswith("_bytes"):
        return f"{number(v)}  ({size(v)})"
    return number(v)
