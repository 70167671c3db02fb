"""``reclaimlab scenarios``: the built-in workloads."""

from __future__ import annotations

import argparse

from ._table import table

HELP = "list the built-in scenarios (machine + synthetic workload; no files needed)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "scenarios",
        help=HELP,
        description=HELP + ". Run one with `reclaimlab run --scenario NAME`; "
        "`reclaimlab run` with no arguments runs `default`.",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from .. import _core

    print(table(list(_core.scenarios()) + list(_core.thp_scenarios()), header=("SCENARIO", "DESCRIPTION")))
    return 0
