"""tpcc-stock-level under one changed assumption: txn/s of the MGLRU models and classic,
and each one's ratio to mglru@6.15 (docs/scenarios.md, "How it moves with the assumptions").

    python scripts/tpcc_sensitivity.py stock_disk_bytes=450
    python scripts/tpcc_sensitivity.py --swap=zram:128M --seed=2

Arguments: workload parameters (`name=value`, reclaimlab.scenario_info("tpcc-stock-level")
lists them) and options of reclaimlab.run (`--name=value`, e.g. --swap, --memory, --seed).
"""
import sys

from reclaimlab.exceptions import ReclaimlabError
from reclaimlab.experiment.runner import execute

POLICIES = ["mglru@6.6", "mglru@6.15", "mglru+refault-distance-rfc-v3", "mglru+fix-underprotected-page-cache", "classic@6.15"]


def main(argv: list[str]) -> None:
    params = dict(a.split("=", 1) for a in argv if not a.startswith("--"))
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
    seed = int(options.pop("seed", 1))
    tps = {}
    for policy in POLICIES:
        job = {"run_id": 0, "variant": "", "params": {}, "repetition": 0, "seed": seed,
               "kwargs": {"scenario": "tpcc-stock-level", "policy": policy, **options}, "workload_params": params}
        tps[policy] = execute(job)["metrics"]["tps"]
    base = tps["mglru@6.15"]
    print(f"seed {seed} {params} {options}")
    for policy, v in tps.items():
        print(f"  {policy:38} {v:7.3f} txn/s  {v / base:5.2f}x")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (ReclaimlabError, ValueError) as e:
        sys.exit(f"tpcc_sensitivity: {e}")
