"""reclaimlab.damon, DAMON's region and accounting primitives on plain Python values: the
conversions both ways and the errors. The kernel's kunit vectors themselves run in Rust,
beside the code (crates/core/src/damon/kunit.rs and the modules' tests)."""

import pytest

from reclaimlab import damon as d


def test_regions_as_dicts_or_tuples_and_targets_as_lists():
    # A merge weighs the counters by size (damon_test_merge_two): dicts in, dicts out.
    t = d.damon_merge_two_regions([{"start": 0, "end": 100, "nr_accesses": 10, "age": 9},
                                   {"start": 100, "end": 300, "nr_accesses": 20, "age": 21}], 0, 1)
    assert [(r["start"], r["end"], r["nr_accesses"], r["age"]) for r in t] == [(0, 300, 16, 17)]
    # (start, end) tuples work too; a target is a list of regions, a context a list of targets.
    out = d.kdamond_reset_aggregated([[{"start": 1, "end": 2, "nr_accesses": 7}], [(5, 9)]])
    assert [[(r["start"], r["end"], r["nr_accesses"], r["last_nr_accesses"]) for r in t] for t in out] == [[(1, 2, 0, 7)], [(5, 9, 0, 0)]]
    assert [(r["start"], r["end"]) for r in d.damon_set_regions([(4, 16), (24, 32)], [(8, 28)])] == [(8, 16), (16, 24), (24, 28)]
    # scalars and tuples of results
    assert d.damon_mvsum(3, 10, 5000) == 8
    assert d.damos_wmark_wait_us(399, 500, 400, 200, 5_000_000, False) == (0, True)


def test_filters_are_dicts():
    f = {"type": "addr", "matching": True, "allow": False, "addr_range": (2, 6)}
    matched, t = d.damos_filter_match([(2, 8)], 0, f)
    assert matched and [(r["start"], r["end"]) for r in t] == [(2, 6), (6, 8)]
    with pytest.raises(Exception, match="unknown filter type"):
        d.damos_filter_match([(2, 8)], 0, {"type": "nope"})


def test_bad_input_is_an_error_not_a_crash():
    with pytest.raises(Exception, match="ends before"):
        d.damon_split_region_at([(10, 5)], 0, 1)
    with pytest.raises(Exception, match="out of range"):
        d.damon_split_region_at([(0, 10)], 3, 1)
    with pytest.raises(Exception, match="EINVAL"):
        d.damon_va_evenly_split_region([(5, 6)], 0, 2)
    assert d.damon_set_attrs(5000, 4999, 10, 1000) == -d.EINVAL
