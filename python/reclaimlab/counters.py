"""Counters a policy model does not keep, which reports print as ``n/a`` (JSON ``null``).

The ``cache:*`` policies run a reference cache algorithm (LRU, ARC, ...) as the reclaim
policy, without the kernel's shadow entries, so they keep no ``workingset_*`` counters:
their zeros would read as "no refaults", which is not what happened. Out-of-tree
policies (``python:...``, ``rust:...``, cache_ext's hooks: policy/ext/) keep no shadow
entries either.
"""

from __future__ import annotations

from typing import Mapping


#: Prefixes of the policies without workingset shadow entries.
SHADOWLESS = ("cache:", "python:", "rust:")


def untracked(policy: str, counter: str) -> bool:
    """True when ``policy`` does not keep the vmstat ``counter``."""
    return policy.startswith(SHADOWLESS) and counter.startswith("workingset_")


def tracked_vmstat(policy: str, vmstat: Mapping[str, int]) -> dict[str, int | None]:
    """``vmstat`` with the counters ``policy`` does not keep as None."""
    return {k: None if untracked(policy, k) else v for k, v in vmstat.items()}
