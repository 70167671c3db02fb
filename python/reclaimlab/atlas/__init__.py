"""``reclaimlab atlas``: which policy wins where. A grid over a workload space (working set
/ memory, scan share, anon share, skew, tenants; :mod:`.grid`) × policies runs on the
experiment harness (:mod:`.sweep`); for each point the winner on one metric and its margin
over the runner-up, as a table and a heatmap (:mod:`.plot`). docs/atlas.md."""

from .grid import AXES, DEFAULT_GRID, METRICS, grid, parse_axis, program
from .sweep import DEFAULT_POLICIES, Cell, check, read_map, run_atlas

__all__ = ["AXES", "DEFAULT_GRID", "METRICS", "DEFAULT_POLICIES", "Cell", "grid", "parse_axis", "program", "check",
           "run_atlas", "read_map"]
