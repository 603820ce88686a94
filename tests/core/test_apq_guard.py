"""APQ's online guard: switches on resolved targets only, never on a later job."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.wait.apq import APQ
from predictor.core.wait.apq_guard import guard_switch
from tests.core.test_apq import context, lengthen_unknown_waits, synthetic_trace


def switch(start, apq_err, fb_err, submit=(0.0, 10.0, 20.0), group=(1, 1, 1), **kw):
    args = dict(window=20, factor=1.5, min_resolved=1) | kw
    n = len(submit)
    return guard_switch(
        np.arange(n),
        np.asarray(submit, float),
        np.asarray(start, float),
        np.asarray(group),
        np.asarray(apq_err, float),
        np.asarray(fb_err, float),
        **args,
    )


def test_guard_ignores_a_target_that_starts_after_the_current_submit():
    # Target 1 starts at 30 > submit 20 of target 2: its huge APQ error is not known yet.
    got = switch(start=[5, 30, 25], apq_err=[1, 1000, 0], fb_err=[1, 1, 0])
    assert not got[2]
    # Once it has started by then, the same error flips the answer.
    assert switch(start=[5, 15, 25], apq_err=[1, 1000, 0], fb_err=[1, 1, 0])[2]


def test_guard_never_reads_the_current_target_itself():
    # Target 2 waited 0 s (start == submit), but its own error must not count.
    got = switch(start=[5, 30, 20], apq_err=[1, 0, 1000], fb_err=[1, 0, 1])
    assert not got[2]


def test_guard_compares_only_the_same_group_and_needs_min_resolved():
    start, apq_err, fb_err = [5, 6, 25], [1000, 1000, 0], [1, 1, 0]
    assert switch(start=start, apq_err=apq_err, fb_err=fb_err, group=[1, 1, 1])[2]
    assert not switch(start=start, apq_err=apq_err, fb_err=fb_err, group=[2, 2, 1])[2]
    assert not switch(start=start, apq_err=apq_err, fb_err=fb_err, min_resolved=3)[2]


def test_guard_window_keeps_the_most_recently_started():
    # Oldest resolved target is bad for APQ, the two most recent are good: window 2 keeps them.
    submit, start = [0, 1, 2, 50], [3, 10, 20, 60]
    apq_err, fb_err = [10000, 1, 1], [1, 5, 5]
    got = switch(start, apq_err + [0], fb_err + [0], submit=submit, group=[1] * 4, window=2)
    assert not got[3]
    assert switch(start, apq_err + [0], fb_err + [0], submit=submit, group=[1] * 4, window=3)[3]


@pytest.fixture(scope="module")
def trace():
    return synthetic_trace(700, seed=11)


@pytest.mark.parametrize("fallback", ["zero", "median"])
def test_guarded_apq_answers_fallback_with_its_name(trace, fallback):
    params = dict(history_size=400, k=5, spread_threshold=np.inf, guard=True)
    params |= dict(guard_fallback=fallback, guard_factor=0.0, guard_min_resolved=1)
    got = APQ(**params).fit(context(trace, 300)).predict_rows(np.arange(320, 700, 5))
    # factor 0: every target with a resolved earlier target of its user switches
    assert got.extra["guarded"].sum() > 0
    assert set(got.predictor[got.extra["guarded"]]) == {f"guard_{fallback}"}
    if fallback == "zero":
        assert np.all(got.wait_s[got.extra["guarded"]] == 0)
    kept = ~got.extra["guarded"]
    np.testing.assert_array_equal(got.wait_s[kept], got.extra["apq_wait_s"][kept])


@pytest.mark.parametrize("scope", ["user", "all"])
def test_guard_later_jobs_cannot_change_an_earlier_prediction(trace, scope):
    params = dict(history_size=400, k=5, spread_threshold=np.inf, guard=True)
    params |= dict(
        guard_scope=scope,
        guard_fallback="median",
        guard_factor=0.8,
        guard_min_resolved=2,
        guard_window=10,
    )
    targets = np.append(np.arange(320, 450, 3), 450)
    base = APQ(**params).fit(context(trace, 300)).predict_rows(targets)
    changed = trace.copy()
    later = changed.index >= 451
    changed.loc[later, "wait_time"] = changed.loc[later, "wait_time"] * 7 + 3
    lengthen_unknown_waits(changed, 450, 50000)
    got = APQ(**params).fit(context(changed, 300)).predict_rows(targets)
    np.testing.assert_array_equal(got.wait_s, base.wait_s)
    np.testing.assert_array_equal(got.predictor, base.predictor)
    # Predicting more (later) targets leaves the earlier answers alone, too.
    more = np.append(targets, np.arange(455, 700, 5))
    longer = APQ(**params).fit(context(trace, 300)).predict_rows(more)
    np.testing.assert_array_equal(longer.wait_s[: len(targets)], base.wait_s)
    assert base.extra["guarded"].any() or longer.extra["guarded"].any()


def test_guard_is_off_by_default_and_rejects_unknown_settings(trace):
    ctx, targets = context(trace, 300), np.arange(320, 400, 9)
    plain = APQ(history_size=400, k=5, spread_threshold=np.inf).fit(ctx).predict_rows(targets)
    assert "guarded" not in plain.extra and not any(
        str(n).startswith("guard") for n in plain.predictor
    )
    for bad in (dict(guard_scope="group"), dict(guard_fallback="mean")):
        with pytest.raises(ValueError, match="guard_"):
            APQ(history_size=400, k=5, spread_threshold=np.inf, guard=True, **bad).fit(
                ctx
            ).predict_rows(targets)
