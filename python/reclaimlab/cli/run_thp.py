"""``reclaimlab run thpscale`` / ``reclaimlab run usemem-stress-numa-compact``: Mel Gorman's __GFP_THISNODE mmtests report's
workloads under every THP allocation policy, in the mmtests layout (docs/thp.md), with the
reclaim policy ``--policy`` names (default classic@6.15)."""

from __future__ import annotations

import argparse
import json
import sys


def main(args: argparse.Namespace, settings: dict[str, str]) -> int:
    from .. import thp
    from ..exceptions import ConfigError

    if args.trace or args.timeseries or args.damo_record:
        raise ConfigError(
            f"{args.scenario} compares the THP policies; --trace, --timeseries and --damo-record do not apply"
        )
    if args.policy:  # the reclaim policy under every THP policy
        settings = {**settings, "policy": args.policy}
    reclaim = thp.scenario_config(args.scenario, settings, args.memory).get("policy")
    if args.plot and args.scenario != "thpscale":
        raise ConfigError(f"--plot: {args.scenario} has no plot (thpscale has)")
    settings = {k: v for k, v in settings.items() if k != "thp.policy"}
    chatty = not args.quiet and sys.stderr.isatty()
    npol = len(thp.policies())
    from tqdm import tqdm

    if args.scenario == "thpscale":
        total = npol * 2
        with tqdm(total=total, disable=not chatty, desc="thpscale", file=sys.stderr, leave=False) as bar:
            runs = {madv: thp.run_thpscale(settings, args.memory, madvise=madv, on_run=lambda: bar.update(1))
                    for madv in (True, False)}
        if args.plot:
            thp.plot_thpscale(runs[True], args.plot, madvise=True)
        if args.json:
            print(json.dumps({"policy": reclaim, **{("madvhugepage" if k else "plain"): v for k, v in runs.items()}},
                             default=str))
        else:
            print(f"reclaim policy: {reclaim}\n")
            print(thp.thpscale_report(runs[True], madvise=True))
            print(thp.thpscale_report(runs[False], madvise=False))
        return 0
    with tqdm(total=npol, disable=not chatty, desc=args.scenario, file=sys.stderr, leave=False) as bar:
        runs_u = thp.run_usemem(settings, args.memory, on_run=lambda: bar.update(1))
    if args.json:
        print(json.dumps({"policy": reclaim, **runs_u}, default=str))
    else:
        print(f"reclaim policy: {reclaim}\n")
        print(thp.usemem_report(runs_u))
    return 0
