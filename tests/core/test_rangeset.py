"""rangeSet pipeline on hand-computed cases: history, compaction, merge, probabilities, cap,
clipping, point, fallback levels and the leakage guard."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from predictor.core.runtime.history import build_context
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.rangeset import (
    RangeSet,
    cap_ranges,
    clip_ranges,
    compact_ranges,
    range_probabilities,
    relevant_count,
    shifted_values,
)
from predictor.core.runtime.rangeset_predictor import RangeSetPredictor
from predictor.core.runtime.stack_merge import merge_ranges
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import from_log
from tests.core.test_load import make_jobs


def test_relevant_history_starts_with_ten_jobs() -> None:
    assert relevant_count([5.0] * 12 + [5.0], start=10) == 10


def test_relevant_history_extends_until_90_percent_of_the_range() -> None:
    recent_first = [5.0] * 10 + [6.0, 100.0, 1.0]
    # Whole range 1..100 (99); 5..100 spans 95 >= 0.9 x 99 at the 12th job.
    assert relevant_count(recent_first, start=10, overlap=0.9) == 12
    assert relevant_count(recent_first, start=10, overlap=1.0) == 13


def test_short_history_is_used_whole() -> None:
    assert relevant_count([3.0, 4.0], start=10) == 2


def test_additive_shift_moves_the_function_through_the_history_job() -> None:
    values = shifted_values([100.0], [0.2], 0.6, np.array([50.0, 200.0]), shift="additive")
    np.testing.assert_allclose(values, [[120.0, 180.0]])


def test_relative_shift_scales_the_function_through_the_history_job() -> None:
    # f(l) = 100 l + 100: f(0.2) = 120, f(0.8) = 180 -> 100 x 180 / 120 = 150.
    values = shifted_values(
        [100.0], [0.2], 0.8, np.array([100.0]), np.array([100.0]), shift="relative"
    )
    np.testing.assert_allclose(values, [[150.0]])


def test_compaction_centres_on_the_median_with_max_1_2_min() -> None:
    low, high = compact_ranges(np.array([100.0]), np.array([200.0]), np.array([150.0]), 1.2)
    assert high[0] == pytest.approx(1.2 * low[0])
    assert (low[0] + high[0]) / 2 == pytest.approx(150.0)


def test_compaction_leaves_narrow_ranges_unless_widening() -> None:
    args = (np.array([100.0]), np.array([110.0]), np.array([105.0]))
    low, high = compact_ranges(*args, ratio=1.2, widen=False)
    assert (low[0], high[0]) == (100.0, 110.0)
    low, high = compact_ranges(*args, ratio=1.2, widen=True)
    assert high[0] == pytest.approx(1.2 * low[0])


def test_merge_joins_ranges_overlapping_more_than_half_of_the_smaller() -> None:
    low, high, group = merge_ranges(
        np.array([20.0, 0.0, 4.0, 29.0]), np.array([30.0, 10.0, 12.0, 40.0]), 0.5
    )
    # [0,10] + [4,12]: overlap 6 of 8 -> merged; [29,40] overlaps [20,30] by 1 of 10 -> kept.
    np.testing.assert_allclose(low, [0, 20, 29])
    np.testing.assert_allclose(high, [12, 30, 40])
    assert group.tolist() == [1, 0, 0, 2]


def test_merge_absorbs_a_point_inside_a_range() -> None:
    low, high, _ = merge_ranges(np.array([10.0, 15.0]), np.array([20.0, 15.0]))
    np.testing.assert_allclose(np.c_[low, high], [[10, 20]])


def test_probabilities_are_history_shares_and_new_ranges_share_0_1() -> None:
    prob = range_probabilities(
        np.array([0.0, 20.0, 50.0]), np.array([10.0, 30.0, 60.0]), np.array([1, 2, 25, 70.0])
    )
    np.testing.assert_allclose(prob, [0.6, 0.3, 0.1])


def test_probabilities_without_new_ranges_are_renormalised_shares() -> None:
    prob = range_probabilities(
        np.array([0.0, 20.0]), np.array([10.0, 30.0]), np.array([1, 2, 25, 70.0])
    )
    np.testing.assert_allclose(prob, [2 / 3, 1 / 3])


def test_cap_keeps_the_25_most_probable_ranges() -> None:
    low = np.arange(30.0) * 10
    prob = np.arange(1.0, 31.0)
    low2, high2, p2 = cap_ranges(low, low + 5, prob / prob.sum(), 25)
    assert low2.size == 25 and low2[0] == 50.0
    assert p2.sum() == pytest.approx(1.0)


def test_clipping_to_requested_time_and_one_second() -> None:
    low, high, prob = clip_ranges(
        np.array([0.5, 100.0]), np.array([3.0, 500.0]), np.array([0.4, 0.6]), 300.0
    )
    np.testing.assert_allclose(np.c_[low, high], [[1, 3], [100, 300]])
    np.testing.assert_allclose(prob, [0.4, 0.6])


def test_clipping_merges_ranges_that_collapse_on_the_requested_time() -> None:
    low, high, prob = clip_ranges(
        np.array([400.0, 600.0]), np.array([500.0, 700.0]), np.array([0.3, 0.7]), 300.0
    )
    np.testing.assert_allclose(np.c_[low, high, prob], [[300, 300, 1.0]])


def test_point_prediction_is_the_probability_weighted_median() -> None:
    rs = RangeSet(np.array([10.0, 30.0]), np.array([20.0, 50.0]), np.array([0.5, 0.5]))
    assert rs.point_s == 27.5
    assert rs.contains(40.0) and not rs.contains(25.0)


def _history_trace(extra: list[dict] | None = None):
    """User 1 runs 12 jobs of 4 procs (runtime 100 or 200), one after the other."""
    rows = [
        {
            "submit_time": 1000 * i,
            "run_time": 100 + 100 * (i % 2),
            "requested_procs": 4,
            "allocated_procs": 4,
            "user_id": 1,
        }
        for i in range(12)
    ]
    return make_jobs(rows + (extra or []))


def _predict(jobs, user: int, size: int, t: float, req: float = 1000.0) -> RangeSet:
    ctx = build_context(jobs, 8, RuntimeParams(), n_tune=4)
    model = RangeSetPredictor().fit(ctx)
    request = JobRequest(user=user, procs=size, queue=1, group=1, req_time_s=req, submit_s=t)
    return model.predict(from_log(ctx.jobs, t, machine_procs=8), [request]).ranges[0]


def test_tuple_history_answers_with_ranges_around_past_runtimes() -> None:
    rs = _predict(_history_trace(), 1, 4, 20000.0)
    assert rs.level == "tuple" and rs.support == 10  # the 10 most recent span the range
    assert rs.contains(100.0) and rs.contains(200.0) and not rs.contains(150.0)
    assert rs.probability.sum() == pytest.approx(1.0)


def test_fallback_to_user_then_size_then_nothing() -> None:
    jobs = _history_trace()
    assert _predict(jobs, 1, 2, 20000.0).level == "user"
    assert _predict(jobs, 7, 4, 20000.0).level == "size"
    assert _predict(jobs, 7, 2, 20000.0).level == "all"
    empty = _predict(jobs, 1, 4, 50.0, req=600.0)
    assert empty.level == "none"
    np.testing.assert_allclose(np.c_[empty.low_s, empty.high_s], [[1, 600]])


def test_changing_a_job_that_ends_after_t_cannot_change_the_prediction() -> None:
    t = 11100.0  # job 11 (submit 11000, runtime 200) is still running at t
    base = _history_trace()
    changed = base.copy()
    changed.loc[11, "run_time"] = 90000.0
    changed.loc[11, "allocated_procs"] = 8
    a, b = _predict(base, 1, 4, t), _predict(changed, 1, 4, t)
    np.testing.assert_array_equal(a.low_s, b.low_s)
    np.testing.assert_array_equal(a.high_s, b.high_s)
    np.testing.assert_array_equal(a.probability, b.probability)
    # ... whereas changing a job that ended before t does change it.
    earlier = base.copy()
    earlier.loc[10, "run_time"] = 400.0
    assert not np.array_equal(_predict(earlier, 1, 4, t).high_s, a.high_s)


def test_response_time_adds_a_point_wait_to_every_range() -> None:
    from predictor.core.response import response_rangeset

    runtime = RangeSet(np.array([10.0, 100.0]), np.array([20.0, 120.0]), np.array([0.3, 0.7]))
    resp = response_rangeset(runtime, 50.0)
    np.testing.assert_allclose(
        np.c_[resp.low_s, resp.high_s, resp.probability], [[60, 70, 0.3], [150, 170, 0.7]]
    )
    assert resp.point_s == pytest.approx(runtime.point_s + 50.0)


def test_response_time_of_wait_ranges_multiplies_probabilities_and_merges() -> None:
    from predictor.core.response import response_rangeset

    runtime = RangeSet(np.array([10.0]), np.array([20.0]), np.array([1.0]))
    wait = RangeSet(
        np.array([0.0, 2.0, 1000.0]), np.array([5.0, 6.0, 1000.0]), np.array([0.5, 0.25, 0.25])
    )
    resp = response_rangeset(runtime, wait)
    # [10,25] and [12,26] overlap 13 of 14 -> merged with p 0.75; [1010,1020] stays.
    np.testing.assert_allclose(
        np.c_[resp.low_s, resp.high_s, resp.probability], [[10, 26, 0.75], [1010, 1020, 0.25]]
    )


def test_response_of_a_calibrated_runtime_keeps_its_probabilities_and_point() -> None:
    """A calibrated runtime rangeSet sums to the chance that the runtime lies in some range
    (here 0.5): the response states the same chance, not 1, and its point is the wait plus
    the runtime's own point (the answer's predicted end less its start)."""
    from predictor.core.response import response_rangeset

    runtime = RangeSet(
        np.array([10.0, 100.0]), np.array([20.0, 120.0]), np.array([0.2, 0.3]), point=90.0
    )
    resp = response_rangeset(runtime, 50.0)
    np.testing.assert_allclose(resp.probability, [0.2, 0.3])
    assert resp.probability.sum() == pytest.approx(0.5)
    assert resp.point_s == pytest.approx(140.0)


def test_response_cap_drops_the_least_probable_ranges_without_inflating_the_rest() -> None:
    from predictor.core.response import response_rangeset

    lows = np.arange(6) * 100.0
    runtime = RangeSet(lows, lows + 10.0, np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05]))
    resp = response_rangeset(runtime, 5.0, max_ranges=3)
    np.testing.assert_allclose(resp.low_s, [5.0, 105.0, 205.0])
    np.testing.assert_allclose(resp.probability, [0.3, 0.25, 0.2])  # 0.75 in all, not 1


def test_make_disjoint_cuts_partial_overlaps_at_their_midpoint() -> None:
    from predictor.core.runtime.rangeset import make_disjoint

    # [0,100] and [90,200] overlap by 10 (under half of either): cut at 95; [300,310] apart;
    # [305,308] inside [300,310] gives it its probability.
    low, high, prob = make_disjoint(
        np.array([90.0, 0.0, 300.0, 305.0]),
        np.array([200.0, 100.0, 310.0, 308.0]),
        np.array([0.3, 0.4, 0.2, 0.1]),
    )
    np.testing.assert_allclose(low, [0.0, 95.0, 300.0])
    np.testing.assert_allclose(high, [95.0, 200.0, 310.0])
    np.testing.assert_allclose(prob, [0.4, 0.3, 0.3])


def test_rangesets_built_by_the_seed_method_are_disjoint() -> None:
    from predictor.core.runtime.params import RuntimeParams
    from predictor.core.runtime.rangeset import build_rangeset

    rng = np.random.default_rng(3)
    for _ in range(200):
        hist = rng.lognormal(6, 1.5, size=int(rng.integers(2, 40)))
        rs = build_rangeset(
            hist, np.zeros(hist.size), hist, 0.0, float(rng.choice([0, 1e5])),
            (np.zeros(0), np.zeros(0)), RuntimeParams(),
        )  # fmt: skip
        assert np.all(rs.low_s[1:] >= rs.high_s[:-1])
        assert rs.probability.sum() == pytest.approx(1.0)


def _same_rangesets(a: list[RangeSet], b: list[RangeSet]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for f in ("low_s", "high_s", "probability"):
            assert getattr(x, f).tobytes() == getattr(y, f).tobytes()  # bit for bit
        assert (x.level, x.support, x.point_s) == (y.level, y.support, y.point_s)


def test_batched_rangesets_equal_one_target_at_a_time_bit_for_bit(small_log) -> None:
    from predictor.core.runtime.targets import RuntimeTargets
    from predictor.core.state.request import RequestBatch, as_batch

    ctx = build_context(small_log, 64, RuntimeParams(), n_tune=80)
    model = RangeSetPredictor().fit(ctx)

    def one_by_one(targets: RuntimeTargets) -> list[RangeSet]:
        return [
            model.predict_one(
                ctx,
                {lv: int(c[k]) for lv, c in targets.codes.items()},
                float(targets.t_s[k]),
                float(targets.req_time_s[k]),
                targets.load[k],
            )  # fmt: skip
            for k in range(len(targets))
        ]

    rows = np.arange(len(ctx.jobs))  # every row at its own arrival, the first ones without history
    batched = model.predict_rows(rows).ranges
    _same_rangesets(batched, one_by_one(RuntimeTargets.from_rows(ctx, rows)))
    # One load and requested time for all: only the history slice tells the targets apart.
    targets = RuntimeTargets.from_rows(ctx, rows)
    same = RequestBatch(**{**vars(targets.requests), "req_time_s": np.full(rows.size, 3600.0)})
    targets = replace(targets, requests=same, load=np.full(rows.size, 0.5))
    _same_rangesets(model._predict(targets, None).ranges, one_by_one(targets))
    levels = {rs.level for rs in batched}
    assert {"none", "tuple"} <= levels and len(levels) >= 3  # the fallbacks are exercised
    for i in (100, 250, 399):  # molding candidates: one request at eight sizes, shared answers
        t = float(ctx.submit_s[i])
        base = RequestBatch.from_jobs(ctx.jobs.iloc[[i]]).request(0)
        batch = as_batch([base.with_procs(p) for p in (1, 2, 3, 4, 8, 16, 32, 64)])
        snap = from_log(ctx.jobs, t, machine_procs=64, rows=i)
        answers = model.predict(snap, batch).ranges
        _same_rangesets(answers, one_by_one(RuntimeTargets.from_snapshot(ctx, snap, batch)))


@pytest.mark.parametrize(
    ("first_block", "dense_gap"), [(1, 0), (32, 0), (32, 24), (32, 10**9)]
)  # blocks only (doubling from 1 or 32), switching to the loop where starts are dense, loop
def test_merge_gives_the_plain_stack_loops_floats_on_long_inputs(
    first_block: int, dense_gap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from predictor.core.runtime import stack_merge
    from predictor.core.runtime.stack_merge import FAST_MERGE_MIN, merge_stack_plain

    monkeypatch.setattr(stack_merge, "FIRST_BLOCK", first_block)
    monkeypatch.setattr(stack_merge, "DENSE_GAP", dense_gap)

    rng = np.random.default_rng(3)
    for trial in range(260):
        # up to 600 ranges; every fifth trial thousands, in few merged ranges: runs between
        # two starts longer than the first block tested, so the blocks double
        n = int(rng.integers(FAST_MERGE_MIN, 600 if trial % 5 else 6000))
        centre = rng.choice(rng.lognormal(6, 2 if trial % 5 else 0.3, 40), n)  # duplicates
        half = rng.choice([0.0, 0.05, 0.3, 1.0], n) * centre * rng.random(n)
        low, high = np.round(centre - half, int(trial % 3)), np.round(centre + half, int(trial % 3))
        order = np.lexsort((high, low))
        threshold = float(rng.choice([0.5, 0.25, 0.0]))
        fast = merge_ranges(low, high, threshold)
        plain = merge_stack_plain(low[order], high[order], order, threshold)
        for a, b in zip(fast, plain, strict=True):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        if trial % 5 == 0:
            assert len(fast[0]) < n / 20  # long runs merged
    assert len(fast[0]) < n  # ranges were merged


def test_the_sort_by_low_then_high_is_lexsorts_order_with_ties() -> None:
    from predictor.core.runtime.stack_merge import low_high_order

    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(1, 400))
        low = rng.choice(rng.integers(0, 1 + trial % 30, 50).astype(float), n)
        high = low + rng.choice([0.0, 1.0, 2.0], n)
        low[rng.random(n) < 0.1] *= -0.0  # -0.0 and 0.0 are equal lows
        assert np.array_equal(low_high_order(low, high), np.lexsort((high, low)))
        distinct = rng.permutation(n) * 0.5  # no two lows equal: a plain sort by low
        assert np.array_equal(low_high_order(distinct, high), np.lexsort((high, distinct)))
