"""The kernel's DAMON kunit vectors (../shared/spec/damon-kunit-vectors.md, and
mm/damon/tests/core-kunit.h, vaddr-kunit.h) run through reclaimlab.damon — the same
Rust functions the simulator's kdamond uses. Case names follow the kernel's."""

import pytest

from reclaimlab import damon as d


def R(start, end, **kw):
    return dict(start=start, end=end, **kw)


def ranges(regions):
    return [(r["start"], r["end"]) if isinstance(r, dict) else tuple(r) for r in regions]


def test_damon_test_regions():
    # damon_new_region(1, 2): counters zero; a target holds it, then holds none.
    t = d.kdamond_reset_aggregated([[(1, 2)]])[0]
    assert len(t) == 1 and (t[0]["start"], t[0]["end"], t[0]["nr_accesses"]) == (1, 2, 0)
    assert d.damon_set_regions(t, []) == []


def test_damon_test_aggregate():
    saddr = [[10, 20, 30], [5, 42, 49], [13, 33, 55]]
    eaddr = [[15, 27, 40], [31, 45, 55], [23, 44, 66]]
    acc = [[42, 95, 84], [10, 20, 30], [0, 1, 2]]
    targets = [[R(s, e, nr_accesses=n, nr_accesses_bp=n * 10000) for s, e, n in zip(*row)] for row in zip(saddr, eaddr, acc)]
    out = d.kdamond_reset_aggregated(targets)
    assert len(out) == 3
    for t, before in zip(out, acc):
        assert len(t) == 3
        assert [r["nr_accesses"] for r in t] == [0, 0, 0]
        assert [r["last_nr_accesses"] for r in t] == before  # implied by the code


def test_damon_test_split_at():
    t = d.damon_split_region_at([R(0, 100, nr_accesses=42, last_nr_accesses=15, nr_accesses_bp=420000, age=10)], 0, 25)
    assert ranges(t) == [(0, 25), (25, 100)]
    for k in ("nr_accesses", "last_nr_accesses", "nr_accesses_bp", "age"):
        assert t[0][k] == t[1][k]


def test_damon_test_merge_two():
    t = d.damon_merge_two_regions([R(0, 100, nr_accesses=10, nr_accesses_bp=100000, age=9), R(100, 300, nr_accesses=20, nr_accesses_bp=200000, age=21)], 0, 1)
    assert ranges(t) == [(0, 300)]
    assert t[0]["nr_accesses"] == 16 and t[0]["age"] == 17 and t[0]["nr_accesses_bp"] == 160000


MERGE_SA = [0, 100, 114, 122, 130, 156, 170, 184]
MERGE_EA = [100, 112, 122, 130, 156, 170, 184, 230]
MERGE_NR = [0, 0, 10, 10, 20, 30, 1, 2]


def test_damon_test_merge_regions_of_ab():
    t = [R(s, e, nr_accesses=n, nr_accesses_bp=n * 10000) for s, e, n in zip(MERGE_SA, MERGE_EA, MERGE_NR)]
    out = d.damon_merge_regions_of(t, 9, 9999)
    assert ranges(out) == [(0, 112), (114, 130), (130, 156), (156, 170), (170, 230)]
    # derived: nr_accesses and ages (last_nr_accesses 0)
    assert [r["nr_accesses"] for r in out] == [0, 10, 20, 30, 1]
    assert [r["age"] for r in out] == [1, 0, 0, 0, 1]


def test_damon_test_merge_regions_of_c():
    t = [R(s, e, nr_accesses=n) for s, e, n in zip(MERGE_SA + [230], MERGE_EA + [10170], MERGE_NR + [5])]
    out = d.damon_merge_regions_of(t, 9, 9999, count_age=True)
    assert ranges(out) == [(0, 112), (114, 130), (130, 156), (156, 170), (170, 230), (230, 10170)]
    assert [r["nr_accesses"] for r in out] == [0, 10, 20, 30, 1, 5]
    assert [r["age"] for r in out] == [1, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("seed", range(1, 21))
def test_damon_test_split_regions_of(seed):
    assert len(d.damon_split_regions_of([(0, 22)], 2, 1, seed=seed)) <= 2
    assert len(d.damon_split_regions_of([(0, 220)], 4, 1, seed=seed)) <= 4
    out = d.damon_split_regions_of([(0, 220), (300, 400), (500, 700)], 4, 5, seed=seed)
    assert len(out) <= 12
    # spec D.6 (stronger than the kernel's vacuous check): pieces aligned to 5, cover the input
    assert all(r["start"] % 5 == 0 and r["end"] % 5 == 0 for r in out)
    assert sum(r["end"] - r["start"] for r in out) == 220 + 100 + 200


def test_damon_test_split_above_half_progresses():
    t = [R(100 * i, 100 * i + 100, nr_accesses=0 if i & 1 else 100, age=5) for i in range(760)]
    assert 760 > 1500 // 2
    (out,), _ = d.kdamond_split_regions([t], 1500, 1)
    assert 760 < len(out) <= 1500


@pytest.mark.parametrize(
    "old,new,expect",
    [
        ([(4, 16), (24, 32)], [(8, 28)], [(8, 16), (16, 24), (24, 28)]),
        ([], [(5, 15), (15, 25)], [(5, 15), (15, 25)]),
        ([(4, 16), (24, 32)], [(18, 23)], [(18, 23)]),
        ([(0, 4), (4, 17)], [(0, 15), (25, 40)], [(0, 4), (4, 15), (25, 40)]),
        ([(0, 4), (42, 52)], [(0, 15), (25, 40), (44, 50)], [(0, 15), (25, 40), (44, 50)]),
    ],
)
def test_damon_test_set_regions(old, new, expect):
    assert ranges(d.damon_set_regions(old, new, 1)) == expect


@pytest.mark.parametrize("dst,src,expect", [([(3, 8), (8, 10)], [(4, 6)], [(4, 6)]), ([(3, 8), (8, 10)], [], [(3, 8), (8, 10)])])
def test_damon_test_commit_target_regions(dst, src, expect):
    # damon_commit_target_regions: an empty source keeps dst, else damon_set_regions.
    out = d.damon_set_regions(dst, src, 1) if src else dst
    assert ranges(out) == expect


@pytest.mark.parametrize("sz,min_sz,min_nr,max_sz,nr", [(10, 1, 10, 1, 10), (10, 1, 15, 1, 10), (10, 2, 2, 6, 2), (10, 2, 10, 2, 5)])
def test_damon_test_apply_min_nr_regions(sz, min_sz, min_nr, max_sz, nr):
    got_sz, (t,) = d.damon_apply_min_nr_regions([[(0, sz)]], min_nr, min_sz)
    assert got_sz == max_sz and len(t) == nr


def test_damon_test_is_last_region():
    t = []
    for i in range(4):
        t = d.damon_set_regions(t, ranges(t) + [(2 * i, 2 * i + 2)], 1)
        assert ranges(t)[-1] == (2 * i, 2 * i + 2)


def test_damon_test_nr_accesses_to_accesses_bp():
    assert d.damon_nr_accesses_to_accesses_bp(123, 10, (2**32) * 10) == 0
    assert d.damon_max_nr_accesses(10, (2**32) * 10) == 2**32 - 1


def test_damon_test_moving_sum():
    mvsum, nomvsum, window = 50000, 50000, 10
    new = [10000, 0, 10000, 0, 0, 0, 10000, 0, 0, 0]
    expects = [55000, 50000, 55000, 50000, 45000, 40000, 45000, 40000, 35000, 30000]
    for n, e in zip(new, expects):
        mvsum = d.damon_moving_sum(mvsum, nomvsum, window, n)
        assert mvsum == e


@pytest.mark.parametrize("cur,last,left,expect", [(0, 49, 10000, 49), (3, 10, 7000, 10), (3, 10, 5000, 8), (32, 100, 1000, 42), (42, 49, 0, 42)])
def test_damon_test_mvsum(cur, last, left, expect):
    assert d.damon_mvsum(cur, last, left) == expect


@pytest.mark.parametrize("passed,next_aggr,nr,last,expect", [(0, 10, 5, 3, 3), (0, 10, 0, 7, 7), (5, 10, 3, 10, 8), (8, 10, 3, 10, 5), (10, 10, 42, 49, 42)])
def test_damon_test_nr_accesses_mvsum(passed, next_aggr, nr, last, expect):
    assert d.damon_nr_accesses_mvsum(R(0, 4096, nr_accesses=nr, last_nr_accesses=last), passed, next_aggr, 1, 10) == expect


def test_damon_test_update_monitoring_result():
    r = R(3, 7, nr_accesses=15, age=20)
    r = d.damon_update_monitoring_result(r, (10, 1000), (100, 10000), False)
    assert (r["nr_accesses"], r["age"]) == (15, 2)
    r = d.damon_update_monitoring_result(r, (10, 1000), (1, 1000), False)
    assert (r["nr_accesses"], r["age"]) == (150, 2)
    r = d.damon_update_monitoring_result(r, (10, 1000), (1, 100), False)
    assert (r["nr_accesses"], r["age"]) == (150, 20)


def test_damon_test_set_attrs():
    assert d.damon_set_attrs(5000, 100000, 10, 1000) == 0
    assert d.damon_set_attrs(5000, 100000, 1, 1000) == -d.EINVAL
    assert d.damon_set_attrs(5000, 100000, 10, 9) == -d.EINVAL
    assert d.damon_set_attrs(5000, 4999, 10, 1000) == -d.EINVAL


def test_damos_test_filter_out():
    f = {"type": "addr", "matching": True, "allow": False, "addr_range": (2, 6)}
    m, t = d.damos_filter_match([(3, 5)], 0, f)
    assert m and len(t) == 1
    m, t = d.damos_filter_match([(1, 2)], 0, f)
    assert not m and len(t) == 1
    m, t = d.damos_filter_match([(6, 8)], 0, f)
    assert not m and len(t) == 1
    m, t = d.damos_filter_match([(1, 4)], 0, f)
    assert not m and ranges(t) == [(1, 2), (2, 4)]
    m, t = d.damos_filter_match([(2, 8)], 0, f)
    assert m and ranges(t) == [(2, 6), (6, 8)]


def test_damon_test_feed_loop_next_input():
    last = 900000
    assert d.damon_feed_loop_next_input(last, 200) > last
    assert d.damon_feed_loop_next_input(last, 250000000) < last
    assert d.damon_feed_loop_next_input(last, 200) > d.damon_feed_loop_next_input(last, 2000)


def test_damon_test_set_filters_default_reject():
    target = {"type": "target", "matching": True, "allow": True}
    anon = {"type": "anon", "matching": True, "allow": True}
    assert d.damos_set_filters_default_reject([]) == (False, False)
    assert d.damos_set_filters_default_reject([target]) == (True, False)
    target["allow"] = False
    assert d.damos_set_filters_default_reject([target]) == (False, False)
    assert d.damos_set_filters_default_reject([target, anon]) == (False, True)
    target["allow"] = True
    assert d.damos_set_filters_default_reject([target, anon]) == (False, True)


# vaddr-kunit.h


def test_damon_test_three_regions_in_vmas():
    vmas = [(10, 20), (20, 25), (200, 210), (210, 220), (300, 305), (307, 330)]
    assert d.damon_va_three_regions(vmas) == [(10, 25), (200, 220), (300, 330)]


@pytest.mark.parametrize("start,end,n", [(0, 100, 10), (5, 59, 5), (4, 6, 1)])
def test_damon_test_split_evenly_succ(start, end, n):
    t = d.damon_va_evenly_split_region([(start, end)], 0, n)
    assert len(t) == n
    piece = (end - start) // n
    for i, r in enumerate(t):
        assert r["start"] == start + i * piece
        assert r["end"] == (end if i == n - 1 else start + (i + 1) * piece)


@pytest.mark.parametrize("start,end,n", [(0, 100, 0), (5, 6, 2)])
def test_damon_test_split_evenly_fail(start, end, n):
    with pytest.raises(Exception, match="EINVAL"):
        d.damon_va_evenly_split_region([(start, end)], 0, n)


# Spec-derived checks of the DAMOS helpers (E.3, E.5, E.8), same numbers as the Rust tests.


def test_quota_arithmetic():
    assert d.damos_set_effective_quota(ms=10, sz=128 << 20) == (40 << 20, 0)
    assert d.damos_set_effective_quota(ms=10, sz=128 << 20, total_charged_sz=8 << 20, total_charged_ns=4_000_000)[0] == 20 << 20
    assert d.damos_set_effective_quota(ms=10, sz=1 << 20, total_charged_sz=8 << 20, total_charged_ns=4_000_000)[0] == 1 << 20
    # goal only: esz_bp floored to 10000, score 0 → doubles
    assert d.damos_set_effective_quota(goal_scores=[(0, 10000)]) == (2, 20000)
    assert d.damos_set_effective_quota(esz_bp=20000, goal_scores=[(0, 10000)]) == (4, 40000)


def test_scores_and_min_score():
    never = R(0, 4096, age=1200)
    assert d.damon_cold_score(never, 5000, 100000, (0, 0, 1)) == 61
    assert d.damon_cold_score(R(0, 4096, age=6000), 5000, 100000, (0, 0, 1)) == 66
    assert d.damon_hot_score(R(0, 4096, nr_accesses=10, age=20), 5000, 100000, (0, 1, 1)) == 50
    assert d.damon_cold_score(never, 5000, 100000, (0, 0, 0)) == 99
    h = [0] * 100
    h[70], h[65], h[10] = 4 << 20, 8 << 20, 100 << 20
    assert [d.damos_min_score(h, 70, x) for x in (4 << 20, 5 << 20, 13 << 20, 1 << 30)] == [70, 65, 10, 0]


def test_watermark_transitions():
    steps = [(900, 5_000_000, False), (450, 5_000_000, False), (399, 0, True), (480, 0, True), (501, 5_000_000, False), (300, 0, True), (199, 5_000_000, False)]
    active = True
    for metric, wait, now_active in steps:
        got, active = d.damos_wmark_wait_us(metric, 500, 400, 200, 5_000_000, active)
        assert (got, active) == (wait, now_active), metric


def test_bad_regions_are_rejected():
    with pytest.raises(Exception, match="ends before"):
        d.damon_split_region_at([(10, 5)], 0, 1)
    with pytest.raises(Exception, match="out of range"):
        d.damon_split_region_at([(0, 10)], 3, 1)
