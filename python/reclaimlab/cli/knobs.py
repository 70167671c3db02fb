"""``reclaimlab knobs``: every configuration key, under the kernel's names."""

from __future__ import annotations

import argparse

from ._table import table

HELP = "list every config key (kernel names such as vm.swappiness) with default, unit and meaning"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "knobs",
        help=HELP,
        description=HELP + ". Set them in a TOML config ([vm] swappiness = 10), "
        "with `reclaimlab run --set KEY=VALUE`, or in Python with reclaimlab.run(set={...}).",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from .. import _core

    rows = [(key, default, unit or "-", doc) for key, default, unit, doc in _core.knobs()]
    rows += [(f"cgroup.<name>.{file}", default, "bytes", doc) for file, default, doc in _core.cgroup_knobs()]
    print(table(rows, header=("KEY", "DEFAULT", "UNIT", "MEANING")))
    return 0
