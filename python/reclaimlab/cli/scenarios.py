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
    from .. import _core

    from ..programs import PROGRAMS

    programs = [(f"program:{p.name}", f"real program ({p.package}): {p.description}") for p in PROGRAMS.values()]
    rows = [(n, d) for n, d, *_ in _core.scenarios()] + list(_core.thp_scenarios()) + programs
    if args.json:
        print(json.dumps({"scenarios": [{"name": n, "description": d} for n, d in rows]}))
        return 0
    print(table(rows, header=("SCENARIO", "DESCRIPTION")))
    return 0
