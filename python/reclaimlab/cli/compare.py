"""``reclaimlab compare``: statistics over repeated measurements (an experiment's results
store, or a CSV of measurements from real machines)."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import vocab

HELP = "compare configurations statistically: Welch t-tests (as R's t.test) or mmtests compare tables"

DESCRIPTION = """\
Compare the variants (or the values of any configuration column) of repeated
measurements: DIR is an experiment's output directory (its results store) or an mmtests
result tree (work/log/<kernel>/iter-*/<benchmark>, as compare-kernels.sh reads it:
extracted by mmtests' own bin/extract-mmtests.pl from $MMTESTS or PATH; --metric picks the
benchmark; the first kernel by name is the baseline), FILE.csv a table of measurements
with the columns metric, variant, any configuration columns, repetition, value, and
FILE.json the output of extract-mmtests.pl --print-json.

--style welch prints, for each configuration, Welch's two-sample t-test exactly as R's
t.test prints it, then the 95% CI of the difference as a percentage of the baseline mean
("[x, y]%", the relative change of the other variant; "no significance" when the
interval straddles zero), and a table of the means and CIs (as the Apache Hadoop benchmark
posted with the MGLRU patch set, LKML 2022, reports them).
--style mmtests prints mmtests compare tables (Min, Amean|Hmean, Stddev, CoeffVar, Max,
BAmean-50/95/99; positive percentages are always better), stars by the 2018 t-test rule
or the 2024 non-overlap rule, and for a results store the vmstat-derived rows.
Either starts with the noise the repetitions carry (the experiment's noise model, "none"
for the pure model, "as measured" for measurements). Constant samples get R's "data are
essentially constant" and no interval. --json prints all of it as one document.
"""

EPILOG = """\
examples:
  reclaimlab compare out/                              Welch tests of every variant vs the baseline
  reclaimlab compare out/ --baseline swap=swapoff      compare along the `swap` column instead
  reclaimlab compare measurements.csv --style mmtests --mmtests-rule 2018
  reclaimlab compare out/ --json                       the same tests as data (one JSON document)
  MMTESTS=~/mmtests reclaimlab compare ~/mmtests/work/log --style mmtests   real kernels, one path

From Python, reclaimlab.compare_stats(SOURCE) returns the Welch tests as a polars
DataFrame.
"""


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help=HELP, description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", metavar="DIR|FILE.csv|FILE.json",
                   help="experiment output directory, mmtests result tree, measurements CSV or mmtests JSON")
    vocab.add(p, "baseline",
              help="baseline variant (default: the experiment's baseline, else the first variant), or "
                        "COLUMN=VALUE to compare along a configuration column")
    vocab.add(p, "metric", help="metric to compare (default: the experiment's metric, or the CSV's only one)")
    p.add_argument("--style", choices=("welch", "mmtests"), default="welch", help="output style (default: welch)")
    p.add_argument("--mmtests-rule", choices=("2018", "2024"), default="2024",
                   help="significance stars: 2018 t-test (df=n1+n2-2, p<0.10) or 2024 non-overlap of mean±1.96·SD (default)")
    p.add_argument("--prefer", choices=("auto", "lower", "higher"), default="auto",
                   help="mmtests: whether lower or higher values are better (auto: higher for tps/throughput-like metrics)")
    vocab.add(p, "json",
              help="print one JSON document instead (provenance, noise, every Welch test and mmtests row; "
                        "schema: reclaimlab/stats/compare.schema.json, docs/experiments.md)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import textwrap

    from ..stats import frame, mmtests, welch

    sel = frame.select(args.source, args.metric, args.baseline, any_metric=args.style == "mmtests" or args.json)
    if args.json:
        import json

        doc = frame.document(sel, rule=args.mmtests_rule, prefer=args.prefer)
        print(json.dumps(doc, sort_keys=False, allow_nan=False))
        return 0
    print(textwrap.fill(frame.noise_text(sel), width=80, subsequent_indent="  "))
    if args.style == "welch":
        print(welch.render(sel.df, by=sel.by, baseline=sel.baseline, metric=sel.metric or ""), end="")
    else:
        print(mmtests.render(sel.df, by=sel.by, baseline=sel.baseline, rule=args.mmtests_rule, prefer=args.prefer),
              end="")
        if sel.meta:
            print()
            print(_vmstat_tables(sel.source, sel.by, sel.baseline, args.mmtests_rule))
    return 0


def _vmstat_tables(src: Path, by: str, base: str, rule: str) -> str:
    from ..stats import frame, mmtests

    out = []
    for group, columns, runs in frame.vmstat_groups(src, by, base):
        title = " ".join(f"{c}={v}" for c, v in group.items())
        out.append((f"vmstat ({title})\n" if title else "") + mmtests.vmstat_table(columns, runs, rule))
    return "\n\n".join(out)
