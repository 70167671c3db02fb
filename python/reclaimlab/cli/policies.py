"""``reclaimlab policies``: the named policy models."""

from __future__ import annotations

import argparse

from ._table import table

HELP = "list the named reclaim policy models (name@kernel-version or name+patch)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "policies",
        help=HELP,
        description=HELP + ". A policy is a kernel version or patch set; pick one with "
        "`reclaimlab run --policy NAME` or `policy = \"NAME\"` in a config.",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from .. import _core

    rows = [(name, base or "-", desc) for name, base, desc in _core.policies()]
    # THP allocation policies (the thpscale/usemem scenarios' axis, key thp.policy).
    rows += [(name, "thp.policy", desc) for name, desc in _core.thp_policies()]
    print(table(rows, header=("POLICY", "VARIANT OF", "MODEL")))
    return 0
