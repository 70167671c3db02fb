"""``reclaimlab scenarios``: the built-in workloads."""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table

HELP = "list the built-in scenarios (machine + synthetic workload; no files needed)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "scenarios",
        help=HELP,
        description=HELP + ". Run one with `reclaimlab run --scenario NAME`; "
        "`reclaimlab run` with no arguments runs `default`. The program:NAME scenarios are real "
        "programs: the first run records them (Valgrind, docs/record.md), and `reclaimlab kernel "
        "validate program:NAME` runs the same program on the real kernel (docs/programs.md).",
    )
    vocab.add(p, "json", "print one JSON object (schema: reclaimlab/cli/output.schema.json, docs/cli.md)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ..listings import scenario_records

    records = scenario_records()
    if args.json:
        print(json.dumps({"scenarios": records}))
        return 0
    print(table([(s["name"], s["description"]) for s in records], header=("SCENARIO", "DESCRIPTION")))
    return 0
