"""``reclaimlab policies``: the named policy models."""

from __future__ import annotations

import argparse
import json

from . import vocab
from ._table import table

HELP = "list the named reclaim policy models (name@kernel-version or name+patch)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "policies",
        help=HELP,
        description=HELP + ". A policy is a kernel version or patch set; pick one with "
        "`reclaimlab run --policy NAME` or `policy = \"NAME\"` in a config.",
    )
    vocab.add(p, "json", "print one JSON object (schema: reclaimlab/cli/output.schema.json, docs/cli.md)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ..listings import policy_records

    records = policy_records()
    if args.json:
        print(json.dumps({"policies": records}))
        return 0
    # THP allocation policies (the thpscale/usemem scenarios' axis) are variants of thp.policy.
    rows = [(p["name"], "thp.policy" if p["kind"] == "thp" else p["variant_of"] or "-", p["model"]) for p in records]
    print(table(rows, header=("POLICY", "VARIANT OF", "MODEL")))
    return 0
