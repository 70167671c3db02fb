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
    from .. import _core

    rows = [(key, default, unit or "-", doc) for key, default, unit, doc in _core.knobs()]
    rows += [(f"cgroup.<name>.{file}", default, "bytes", doc) for file, default, doc in _core.cgroup_knobs()]
    if args.json:
        keys = ("key", "default", "unit", "meaning")
        print(json.dumps({"knobs": [dict(zip(keys, (k, d, None if u == "-" else u, m))) for k, d, u, m in rows]}))
        return 0
    print(table(rows, header=("KEY", "DEFAULT", "UNIT", "MEANING")))
    return 0
