"""``shared_fits.fit_scope``: inside it a quantile GBM fitted again with the same parameters
on the very same context trains nothing new and answers as a fresh fit does; outside it (or
on another context, or with other parameters) nothing is shared."""

from __future__ import annotations

import copy

import numpy as np

from predictor.core.runtime.choose import choose_runtime_method
from predictor.core.runtime.history import build_context
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.runtime.registry import make_method
from predictor.core.shared_fits import fit_scope, shared
from tests.core.test_runtime_density import PROCS, jobs_with_requests
from tests.core.test_train_ahead import _same_rangesets


def _ctx():
    return build_context(jobs_with_requests(seed=6), PROCS, n_tune=160)


def _trainings(monkeypatch) -> list[int]:
    calls: list[int] = []
    train = QuantileGBRange._train

    def counted(self, rows):
        calls.append(int(rows.size))
        return train(self, rows)

    monkeypatch.setattr(QuantileGBRange, "_train", counted)
    return calls


def test_shared_builds_once_in_a_scope_and_every_time_outside():
    built = []

    def build():
        built.append(1)
        return len(built)

    assert shared("k", None, build) == 1 and shared("k", None, build) == 2
    with fit_scope():
        assert shared("k", None, build) == 3 and shared("k", None, build) == 3
        with fit_scope():  # nested: the outer scope's entries
            assert shared("k", None, build) == 3
        assert shared("other", None, build) == 4
    with fit_scope():  # a new scope keeps nothing of the last
        assert shared("k", None, build) == 5


def test_a_second_fit_on_the_same_context_trains_nothing_and_answers_the_same(monkeypatch):
    ctx = _ctx()
    rows = np.arange(160, ctx.run_s.size)
    alone = QuantileGBRange().fit(ctx).predict_rows(rows)
    calls = _trainings(monkeypatch)
    with fit_scope():
        first = QuantileGBRange().fit(ctx)
        _same_rangesets(first.predict_rows(rows), alone)
        trained = len(calls)
        again = QuantileGBRange().fit(copy.copy(ctx))  # a copy holds the very same arrays
        _same_rangesets(again.predict_rows(rows), alone)
    assert trained > 0 and len(calls) == trained


def test_other_parameters_or_another_tuning_part_train_their_own(monkeypatch):
    ctx = _ctx()
    rows = np.arange(160, ctx.run_s.size)
    calls = _trainings(monkeypatch)
    with fit_scope():
        QuantileGBRange().fit(ctx).predict_rows(rows)
        one = len(calls)
        QuantileGBRange(max_iter=30).fit(ctx).predict_rows(rows)
        two = len(calls)
        shorter = copy.copy(ctx)
        shorter.n_tune = 120
        QuantileGBRange().fit(shorter).predict_rows(rows)
    three = len(calls)
    assert one < two < three
    with fit_scope():  # another context with equal values is not the same context
        QuantileGBRange().fit(_ctx()).predict_rows(rows)
    assert len(calls) - three == one  # trained again, as the first fit did


def test_choosing_the_runtime_method_inside_a_scope_chooses_and_scores_the_same(monkeypatch):
    ctx = _ctx()
    kinds = ("density", "quantile")
    alone = choose_runtime_method(ctx, make_method, kinds)
    calls = _trainings(monkeypatch)
    choose_runtime_method(ctx, make_method, kinds)
    unshared = len(calls)
    with fit_scope():
        scoped = choose_runtime_method(ctx, make_method, kinds)
    assert len(calls) - unshared < unshared  # density's part (c) is the quantile candidate
    assert (scoped.name, scoped.scores, scoped.fitted) == (alone.name, alone.scores, alone.fitted)
