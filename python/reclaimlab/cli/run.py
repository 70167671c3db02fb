"""``reclaimlab run``: replay a trace or a built-in scenario and report the results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._table import number, size, table

HELP = "run one simulation (no arguments: the built-in `default` scenario)"

DESCRIPTION = """\
Replay a page-access trace (or a built-in scenario) through a reclaim policy model on a
simulated machine and print the kernel's vmstat counters and run metrics.

Settings are applied in this order, later ones winning: the scenario's machine (or the
defaults), the CONFIG file, the options below, then --set. Keys use the kernel's names;
`reclaimlab knobs` lists them all.
"""

EPILOG = """\
common keys for --set (see `reclaimlab knobs`):
  machine.memory=4G            physical memory            vm.swappiness=60       0..200
  vm.watermark_scale_factor=10 kswapd wake/sleep gap      vm.min_free_kbytes=auto
  swap.device=zram|ssd|none    swap.size=auto             cgroup.NAME.memory.max=1G

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
  reclaimlab run
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
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("config", nargs="?", metavar="CONFIG.toml", help="TOML config (kernel knob names; see below)")
    w = p.add_argument_group("workload (default: scenario `default`)")
    w.add_argument("--scenario", metavar="NAME", help="a built-in scenario (`reclaimlab scenarios`)")
    w.add_argument("--trace", metavar="FILE", help="replay this trace file")
    w.add_argument(
        "--trace-format",
        metavar="F",
        choices=("native", "lirs", "address", "csv"),
        help="native | lirs | address | csv (default: detect)",
    )
    w.add_argument(
        "--trace-kind",
        metavar="K",
        choices=("file-read", "file-mapped", "anon"),
        help="what records lacking it are: file-read (read() syscalls on page cache), "
        "file-mapped (mmap'd file), anon (anonymous memory)",
    )
    m = p.add_argument_group("machine and policy")
    m.add_argument("--policy", metavar="NAME", help="reclaim policy model, e.g. classic@6.15 (`reclaimlab policies`)")
    m.add_argument("--memory", metavar="SIZE", help="machine.memory: physical memory, e.g. 512M, 4G")
    m.add_argument("--swap", metavar="DEV[:SIZE]", help="swap.device[:swap.size]: zram:SIZE, ssd:SIZE or none")
    m.add_argument("--swappiness", metavar="N", help="vm.swappiness, 0..200 (default 60)")
    m.add_argument("--seed", metavar="N", help="seed of generated workloads (scenarios); the engine is deterministic")
    m.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="set any knob, e.g. --set vm.watermark_scale_factor=100 (repeatable)",
    )
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help='print one JSON object: {"policy", "vmstat", "metrics"}')
    o.add_argument("--timeseries", metavar="OUT", help="write the time series to OUT.csv or OUT.parquet")
    o.add_argument(
        "--plot",
        metavar="OUT",
        help="draw memory composition, reclaim rates, refaults/swap and memory stall over time "
        "to OUT.png, OUT.svg or OUT.pdf (needs matplotlib: pip install 'reclaimlab[plot]')",
    )
    o.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


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

    if args.trace and args.scenario:
        raise ConfigError("give either --trace or --scenario, not both")
    if args.timeseries and Path(args.timeseries).suffix.lower() not in TIMESERIES_SUFFIXES:
        raise ConfigError(f"--timeseries {args.timeseries}: expected a .csv or .parquet file name")
    if args.timeseries and not Path(args.timeseries).resolve().parent.is_dir():
        raise ConfigError(f"--timeseries {args.timeseries}: directory does not exist")
    if args.plot:
        from ..plot import check_path, require_matplotlib

        check_path(args.plot, "--plot")
        require_matplotlib()

    cfg, source, workload = reclaimlab.build(
        args.config,
        trace=args.trace,
        trace_format=args.trace_format,
        trace_kind=args.trace_kind,
        scenario=args.scenario,
        policy=args.policy,
        memory=args.memory,
        swap=args.swap,
        swappiness=args.swappiness,
        seed=args.seed,
        set=parse_set(args.set),
    )
    with Progress(enabled=not args.quiet) as bar:
        raw = reclaimlab.replay(cfg, source, on_progress=bar.update)
    result = reclaimlab.Result(raw, cfg.items(), workload)

    if args.timeseries:
        write_timeseries(result, args.timeseries)
    if args.plot:
        from ..plot import plot_timeseries

        plot_timeseries(result, args.plot)
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=False))
    else:
        print(summary(result))
    return 0


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
        ("workload", result.workload),
        ("seed", result.config.get("seed", "?")),
    ]
    lines = [table(head), "", "metrics"]
    lines.append(table(((f"  {k}", _metric(k, v)) for k, v in result.metrics.items()), right=(1,)))
    lines += ["", "vmstat"]
    lines.append(table(((f"  {k}", f"{v:,}") for k, v in result.vmstat.items()), right=(1,)))
    return "\n".join(lines)


def _metric(name: str, v: float) -> str:
    if name.endswith("_bytes"):
        return f"{number(v)}  ({size(v)})"
    return number(v)
