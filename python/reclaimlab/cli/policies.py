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
    from .. import _core

    if args.json:
        out = [{"name": n, "kind": "reclaim", "variant_of": base or None, "model": d} for n, base, d in _core.policies()]
        out += [{"name": n, "kind": "thp", "variant_of": None, "model": d} for n, d in _core.thp_policies()]
        print(json.dumps({"policies": out}))
        return 0
    rows = [(name, base or "-", desc) for name, base, desc in _core.policies()]
    # THP allocation policies (the thpscale/usemem scenarios' axis, key thp.policy).
    rows += [(name, "thp.policy", desc) for name, desc in _core.thp_policies()]
    print(table(rows, header=("POLICY", "VARIANT OF", "MODEL")))
    return 0
