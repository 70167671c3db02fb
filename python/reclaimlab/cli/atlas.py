"""``reclaimlab atlas``: sweep a workload space × policies and print, per point, the winner
on a metric and its margin over the runner-up; optionally draw the heatmap."""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table

HELP = "which policy wins where: a workload grid x policies, winner and margin per point"

EPILOG = """\
Axes (NAME=v1,v2,... with --axis; the others keep their defaults):
  ws       working set / memory                      default 0.75,1.25,2,3
  scan     share of accesses from a sequential scan  default 0,0.3,0.6
  anon     anonymous share of the working set        default 0.2,0.6
  skew     Zipf exponent of the other accesses       default 0.9
  tenants  memory cgroups with the same workload     default 1
Metrics (lower is better): runtime, refaults (workingset_refault_file + _anon),
major_faults. The margin is 100 x (runner-up - winner) / runner-up. docs/atlas.md.

examples:
  reclaimlab atlas --plot atlas.png                   the default grid (24 points, 3 policies)
  reclaimlab atlas --axis ws=1,2,4 --axis tenants=1,4 --metric refaults --csv atlas.csv
  reclaimlab atlas --policy classic@6.15 --policy mglru@6.15 --out-dir atlas.store --json
"""


def add_parser(sub) -> None:
    p = sub.add_parser("atlas", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("grid")
    g.add_argument("--axis", metavar="NAME=V1,V2,...", action="append", default=[],
                   help="sweep axis NAME over these values (replaces its default; repeatable)")
    vocab.add(g, "policy", action="append", default=[],
                   help="a policy to compare (repeatable; default: classic@6.15, mglru@6.15, "
                   "mglru+refault-distance-2026)")
    vocab.add(g, "metric", default="runtime", help="runtime | refaults | major_faults (default runtime)")
    g.add_argument("--repetitions", type=int, default=1, metavar="N", help="runs per point and policy, seeds SEED.. "
                   "(default 1)")
    m = p.add_argument_group("machine (every point)")
    vocab.add(m, "memory", "machine.memory (default 256M)", default="256M")
    vocab.add(m, "swap", default="zram:256M", help="zram:SIZE, ssd:SIZE or none "
                   "(default zram:256M)")
    vocab.add(m, "seed", type=int, default=1, help="workload seed of the first repetition (default 1)")
    vocab.add(m, "set", action="append", default=[], help="any knob for every run (repeatable)")
    r = p.add_argument_group("running")
    vocab.add(r, "out-dir", "the results store (resumable; default: a temporary directory)", dest="out",
              aliases=("--out",))
    vocab.add(r, "jobs", type=int, help="parallel worker processes (default: CPU count)")
    r.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster (tcp://host:8786, local, local:N)")
    o = p.add_argument_group("output")
    vocab.add(o, "plot", "draw the heatmap to FILE (.png/.svg/.pdf)", dest="output")
    o.add_argument("--x", default="ws", metavar="AXIS", help="the heatmap's columns (default ws)")
    o.add_argument("--y", default="scan", metavar="AXIS", help="the heatmap's rows (default scan)")
    vocab.add(o, "csv", help="write every point (axes, each policy's value, winner, margin)")
    vocab.add(o, "json", help="print one JSON object instead of the table")
    vocab.add(o, "quiet", aliases=())
    p.set_defaults(func=main)


def _settings(args: argparse.Namespace) -> dict[str, str]:
    from ..exceptions import ConfigError
    from .run import parse_set

    settings = {"machine.memory": args.memory}
    dev, _, size = args.swap.partition(":")
    if dev not in ("zram", "ssd", "none") or (dev != "none" and not size):
        raise ConfigError(f"--swap: expected zram:SIZE, ssd:SIZE or none, got '{args.swap}'")
    settings["swap.device"] = dev
    if size:
        settings["swap.size"] = size
    settings.update(parse_set(args.set))
    return settings


def write_csv(cells, axes, policies, path: str) -> None:
    import csv

    from .._atomic import atomic_output

    with atomic_output(path) as tmp:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(list(axes) + list(policies) + ["winner", "runner_up", "margin_pct"])
            for c in cells:
                w.writerow([c.point[a] for a in axes] + [c.values.get(p, "") for p in policies]
                           + [c.winner, c.runner_up, f"{c.margin_pct:.3f}"])


def main(args: argparse.Namespace) -> int:
    import tempfile

    from ..atlas import DEFAULT_POLICIES, check, grid, read_map, run_atlas
    from ..exceptions import ConfigError

    axes, points = grid(args.axis)
    policies = args.policy or list(DEFAULT_POLICIES)
    check(points, policies, args.metric, args.repetitions)
    for flag, a in (("--x", args.x), ("--y", args.y)):
        if a not in axes:
            raise ConfigError(f"atlas: {flag} {a}: not an axis ({', '.join(axes)})")
    if args.x == args.y:
        raise ConfigError("atlas: --x and --y name the same axis")
    vocab.check_jobs(args.jobs)
    vocab.check_figure(args.output)
    settings = _settings(args)
    with tempfile.TemporaryDirectory(prefix="reclaimlab-atlas-") as tmp:
        out = args.out or tmp
        run_atlas(axes, points, policies, out, settings=settings, repetitions=args.repetitions, seed=args.seed,
                  jobs=args.jobs, scheduler=args.scheduler, progress=not args.quiet)
        cells = read_map(out, list(axes), points, policies, args.metric)
    if args.csv:
        write_csv(cells, axes, policies, args.csv)
    if args.output:
        from ..atlas.plot import draw

        draw(cells, axes, policies, args.metric, args.x, args.y, args.output)
    if args.json:
        print(json.dumps({"metric": args.metric, "axes": axes, "policies": policies, "settings": settings,
                          "points": [{"point": c.point, "values": c.values, "winner": c.winner,
                                      "runner_up": c.runner_up, "margin_pct": c.margin_pct} for c in cells]}))
        return 0
    varying = [a for a in axes if len(axes[a]) > 1] or list(axes)
    fixed = [f"{a}={axes[a][0]}" for a in axes if a not in varying]
    print(f"atlas: {len(points)} points x {len(policies)} policies, metric {args.metric} (lower is better); "
          f"machine {args.memory}, swap {args.swap}" + (f"; {', '.join(fixed)}" if fixed else ""))
    print()
    header = varying + ["winner", "margin %", "runner-up"]
    body = [[c.point[a] for a in varying] + [c.winner, f"{c.margin_pct:.1f}", c.runner_up] for c in cells]
    print(table(body, header=header, right=(len(varying) + 1,)))
    wins: dict[str, int] = {}
    for c in cells:
        wins[c.winner] = wins.get(c.winner, 0) + 1
    print()
    print("wins: " + ", ".join(f"{p} {wins.get(p, 0)}" for p in [*policies, "tie"] if wins.get(p)))
    return 0
