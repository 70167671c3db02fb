"""DAMON's region and accounting primitives under the kernel's names.

These are the functions of ``mm/damon/core.c`` (and a few of ``vaddr.c`` and
``ops-common.c``) exactly as the simulator runs them — the same Rust code — on plain
Python values, so the kernel's kunit vectors can be checked against the simulator:

>>> from reclaimlab.damon import damon_merge_two_regions
>>> damon_merge_two_regions([{"start": 0, "end": 100, "nr_accesses": 10},
...                          {"start": 100, "end": 300, "nr_accesses": 20}], 0, 1)[0]["nr_accesses"]
16

A region is a dict with ``start``, ``end`` and optionally ``nr_accesses``,
``nr_accesses_bp``, ``age``, ``last_nr_accesses``, ``sampling_addr`` (a ``(start,
end)`` tuple also works); a target is a list of regions. Functions return new lists;
``min_region_sz`` defaults to 1 as in the kernel's kunit builds. Intervals are µs.
"""

from reclaimlab._core import damon as _d

damon_split_region_at = _d.damon_split_region_at
damon_merge_two_regions = _d.damon_merge_two_regions
damon_merge_regions_of = _d.damon_merge_regions_of
damon_split_regions_of = _d.damon_split_regions_of
kdamond_split_regions = _d.kdamond_split_regions
kdamond_merge_regions = _d.kdamond_merge_regions
kdamond_reset_aggregated = _d.kdamond_reset_aggregated
damon_set_regions = _d.damon_set_regions
damon_apply_min_nr_regions = _d.damon_apply_min_nr_regions
damon_va_evenly_split_region = _d.damon_va_evenly_split_region
damon_va_three_regions = _d.damon_va_three_regions
damon_moving_sum = _d.damon_moving_sum
damon_mvsum = _d.damon_mvsum
damon_nr_accesses_mvsum = _d.damon_nr_accesses_mvsum
damon_nr_accesses_to_accesses_bp = _d.damon_nr_accesses_to_accesses_bp
damon_max_nr_accesses = _d.damon_max_nr_accesses
damon_update_region_access_rate = _d.damon_update_region_access_rate
damon_update_monitoring_result = _d.damon_update_monitoring_result
damon_set_attrs = _d.damon_set_attrs
kdamond_tune_intervals = _d.kdamond_tune_intervals
damon_feed_loop_next_input = _d.damon_feed_loop_next_input
damos_filter_match = _d.damos_filter_match
damos_set_filters_default_reject = _d.damos_set_filters_default_reject
damon_hot_score = _d.damon_hot_score
damon_cold_score = _d.damon_cold_score
damos_min_score = _d.damos_min_score
damos_set_effective_quota = _d.damos_set_effective_quota
damos_wmark_wait_us = _d.damos_wmark_wait_us

#: ``-EINVAL`` as ``damon_set_attrs`` returns it.
EINVAL = 22

__all__ = [n for n in dir() if n.startswith(("damon_", "damos_", "kdamond_"))] + ["EINVAL"]
