"""``reclaimlab experiment run|list|show`` and ``reclaimlab report``: experiments
(a workload × matrix × repetitions) into a results store, and the HTML report of one."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time

from . import vocab

HELP = "run an experiment (workload x matrix axes x repetitions) into a results store"

DESCRIPTION = """\
An experiment (TOML; see docs/experiments.md) names a workload (a built-in scenario, a
trace file or a trace program), matrix axes (policy, any knob, workload parameters) and
repetitions, which differ by seed. `experiment run` executes every run not yet in the
results store of --out-dir DIR (runs are keyed by a hash of their configuration and seed, so
an interrupted experiment resumes where it stopped) on a local process pool, or on a
Dask cluster with --scheduler. Then `reclaimlab compare DIR` and `reclaimlab report DIR`.
"""

EPILOG = """\
examples:
  reclaimlab experiment list                            built-in experiments
  reclaimlab experiment run hadoop-terasort --out-dir terasort/ --jobs 2
  reclaimlab experiment run exp.toml --out-dir out/ --scheduler tcp://10.0.0.1:8786
  reclaimlab experiment run exp.toml --out-dir out/ --scheduler local:2   (an in-process Dask LocalCluster)
"""


def add_parser(sub) -> None:
    p = sub.add_parser("experiment", help=HELP, description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    esub = p.add_subparsers(dest="action", metavar="ACTION", title="actions")
    esub.required = True
    r = esub.add_parser("run", help="run an experiment's missing runs into --out-dir DIR")
    r.add_argument("experiment", metavar="EXP.toml|NAME", help="experiment file or built-in experiment name")
    vocab.add(r, "out-dir", "results directory (default: ./NAME)", dest="out")
    vocab.add(r, "jobs", "local worker processes (default: CPUs)", type=int)
    vocab.add(r, "set", "a knob (or workload.NAME, a workload parameter) for every run, over the experiment's "
              "[settings], e.g. --set cost.access_ns=5900; not a key an axis sets (repeatable)", action="append", default=[])
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster (tcp://HOST:PORT), or `local[:N]` for a LocalCluster of N workers")
    r.add_argument("--noise", choices=("default", "none"),
                   help="what differs between repetitions besides the seed: `default` (CPU speed, device latency, "
                        "background activity, page placement, drawn per run; docs/experiments.md) or `none` "
                        "(the pure model); default: the experiment's [noise] table, else `default`")
    vocab.add(r, "quiet", dest="no_progress")
    r.set_defaults(func=run_main)
    ls = esub.add_parser("list", help="list the built-in experiments")
    vocab.add(ls, "json", "print one JSON object (schema: reclaimlab/cli/output.schema.json, docs/cli.md)")
    ls.set_defaults(func=list_main)
    sh = esub.add_parser("show", help="print an experiment's runs (configurations x repetitions)")
    sh.add_argument("experiment", metavar="EXP.toml|NAME")
    vocab.add(sh, "json", "print one JSON object (schema: reclaimlab/cli/output.schema.json, docs/cli.md)")
    sh.set_defaults(func=show_main)

    rp = sub.add_parser("report", help="write a self-contained HTML report of an experiment's results",
                        description="A single HTML file with embedded PNG figures (time series per variant, "
                                    "a forest plot of the Welch CIs, per-configuration tables), with provenance "
                                    "(version, commit, date, effective configuration, noise model); and beside it "
                                    "FILE.txt, a plain-text summary of at most 80 columns, also printed. "
                                    "Needs matplotlib (pip install 'reclaimlab[plot]').")
    rp.add_argument("source", metavar="DIR", help="experiment output directory")
    vocab.add(rp, "output", "the HTML file (default: report.html)", default="report.html")
    vocab.add(rp, "metric", "metric for the CIs (default: the experiment's)")
    vocab.add(rp, "baseline", help="baseline, as for `reclaimlab compare`")
    rp.set_defaults(func=report_main)


def run_main(args: argparse.Namespace) -> int:
    from ..experiment import resolve, run_experiment

    exp = resolve(args.experiment)
    if args.set:
        from .run import parse_set

        exp.override(parse_set(args.set))
    if args.noise is not None:
        from ..experiment.noise import by_name

        exp.noise = by_name(args.noise)
    vocab.check_jobs(args.jobs)
    vocab.flush_notes(args)
    out = args.out or exp.name
    t0 = time.monotonic()
    stored = []
    try:
        with _stop_on(signal.SIGTERM, signal.SIGHUP):
            res = run_experiment(exp, out, jobs=args.jobs, scheduler=args.scheduler,
                                 progress=not args.no_progress and sys.stderr.isatty(), on_stored=stored.append)
    except Stopped as e:
        name = signal.Signals(e.signum).name
        print(f"reclaimlab: experiment run: stopped by {name}: {len(stored)} more run(s) stored in {out}, "
              f"the workers stopped; the same command runs the rest", file=sys.stderr)
        return 128 + e.signum
    took = time.monotonic() - t0
    print(f"{exp.name}: {res['total']} runs ({len(exp.configurations())} configurations x {exp.repetitions} "
          f"repetitions): {res['ran']} ran, {res['skipped']} already stored; {took:.1f} s; results in {out} "
          f"(noise: {exp.noise.name})")
    return 0


class Stopped(BaseException):
    """A stop signal arrived (raised in the main thread by its handler)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stop_on(*signums: int):
    """Turn ``signums`` into :class:`Stopped` while the block runs (the store keeps every
    finished run; the runner stops its workers on the way out)."""
    def handler(signum: int, frame: object) -> None:
        raise Stopped(signum)

    old = {s: signal.signal(s, handler) for s in signums}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def list_main(args: argparse.Namespace) -> int:
    from ..experiment import builtin, builtin_names, load

    exps = [load(builtin(name)) for name in builtin_names()]
    if args.json:
        print(json.dumps({"experiments": [{"name": name, "configurations": len(e.configurations()),
                                           "repetitions": e.repetitions, "description": e.description}
                                          for name, e in zip(builtin_names(), exps)]}))
        return 0
    for name, exp in zip(builtin_names(), exps):
        print(f"{name:<20} {len(exp.configurations())} configurations x {exp.repetitions}  {exp.description}")
    return 0


def show_main(args: argparse.Namespace) -> int:
    from ..experiment import resolve

    exp = resolve(args.experiment)
    if args.json:
        print(json.dumps({"name": exp.name, "workload": {k: v for k, v in exp.workload.items() if k != "program"},
                          "axes": [{"name": a.name, "key": a.key, "values": list(a.labels)} for a in exp.axes],
                          "noise": exp.noise.name, "noise_model": exp.noise.describe(),
                          "configurations": len(exp.configurations()), "repetitions": exp.repetitions,
                          "runs": len(exp.jobs())}, default=str))
        return 0
    print(f"experiment {exp.name}: workload {', '.join(f'{k}={v}' for k, v in exp.workload.items() if k != 'program')}")
    for a in exp.axes:
        print(f"  axis {a.name} ({' + '.join(a.key) if isinstance(a.key, list) else a.key}): {', '.join(a.labels)}")
    jobs = exp.jobs()
    print(f"  {exp.noise.describe()}")
    print(f"  {len(exp.configurations())} configurations x {exp.repetitions} repetitions = {len(jobs)} runs")
    return 0


def report_main(args: argparse.Namespace) -> int:
    from ..report import write_report

    from ..report import summary_path

    path = write_report(args.source, args.output, metric=args.metric, baseline=args.baseline)
    print(summary_path(path).read_text(encoding="utf-8"), end="")
    print(f"wrote {path} and {summary_path(path)}")
    return 0
