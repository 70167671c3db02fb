"""``reclaimlab knobs``: every configuration key, under the kernel's names."""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table

HELP = "list every config key (kernel names such as vm.swappiness) with default, unit and meaning"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "knobs",
        help=HELP,
        description=HELP + ". Set them in a TOML config ([vm] swappiness = 10), "
        "with `reclaimlab run --set KEY=VALUE`, or in Python with reclaimlab.run(set={...}).",
    )
    vocab.add(p, "json", "print one JSON object (schema: reclaimlab/cli/output.schema.json, docs/cli.md)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ..listings import knob_records

    records = knob_records()
    if args.json:
        print(json.dumps({"knobs": records}))
        return 0
    rows = [(k["key"], k["default"], k["unit"] or "-", k["meaning"]) for k in records]
    print(table(rows, header=("KEY", "DEFAULT", "UNIT", "MEANING")))
    return 0
