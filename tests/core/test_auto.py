"""``auto``: online choice of the wait method, its fallback, and its leakage guard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from predictor.core.state.sweep import compute_state
from predictor.core.wait.auto import AutoWait, online_choice, outside_seen, pick_initial
from predictor.core.wait.registry import make_method
from predictor.core.wait.types import WaitContext
from tests.core.wait_fakes import make_jobs


def _rows(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(100.0, n))
    wait = rng.exponential(1000.0, n)
    return arrival, wait, arrival + wait


def test_online_choice_follows_the_candidate_with_the_lowest_recent_error():
    arrival, wait, known = _rows(2000)
    good_first = wait + np.where(np.arange(2000) < 1000, 10.0, 5000.0)
    good_later = wait + np.where(np.arange(2000) < 1000, 5000.0, 10.0)
    pred = np.stack([good_first, good_later])
    choice = online_choice(pred, wait, arrival, known, initial=1, window=100, min_known=20)
    assert choice.chosen[0] == 1 and choice.reason[0] == "initial"
    assert np.all(choice.chosen[100:900] == 0)
    assert np.all(choice.chosen[1300:] == 1)
    np.testing.assert_allclose(choice.recent_aae_s[1500:], 10.0)


def test_online_choice_reads_no_wait_before_it_is_known():
    arrival, wait, known = _rows(1000, seed=3)
    pred = np.stack([np.zeros(1000), np.full(1000, 1000.0)])
    before = online_choice(pred, wait, arrival, known, initial=0, window=50, min_known=5)
    later = wait.copy()
    later[600:] = 1e8
    after = online_choice(pred, later, arrival, arrival + later, initial=0, window=50, min_known=5)
    np.testing.assert_array_equal(before.chosen[:600], after.chosen[:600])
    np.testing.assert_array_equal(before.recent_aae_s[:600], after.recent_aae_s[:600])


def test_states_outside_the_seen_ones_get_the_safe_candidate():
    feats = np.array([[10, 50], [200, 50], [10, 900]], dtype=float)
    out = outside_seen(feats, np.array([183.0, 800.0]))
    np.testing.assert_array_equal(out, [False, True, True])
    arrival, wait, known = _rows(3)
    choice = online_choice(np.zeros((2, 3)), wait, arrival, known, initial=0, outside=out, safe=1)
    np.testing.assert_array_equal(choice.chosen, [0, 1, 1])
    assert list(choice.reason) == ["initial", "outside", "outside"]


def test_pick_initial_is_the_lowest_validation_aae():
    assert pick_initial(np.array([[0.0, 0.0], [9.0, 11.0]]), np.array([10.0, 10.0]), "ab") == 1
    with pytest.raises(ValueError, match="candidates"):
        pick_initial(np.zeros((2, 3)), np.zeros(3), ["a"])


def _ctx(jobs: pd.DataFrame, n_tune: int) -> WaitContext:
    return WaitContext(jobs, compute_state(jobs), n_tune, 128)


def test_auto_method_answers_with_its_candidates_and_is_causal():
    jobs = make_jobs(900, seed=4)
    targets = np.arange(300, 500, 3)
    auto = AutoWait(
        candidates=("median", "zero"), safe="median", window=30, n_validation=80, make=make_method
    )
    before = auto.fit(_ctx(jobs, 200)).predict_rows(targets)
    assert set(before.predictor) <= {"median", "zero"}
    assert auto.initial_ in (0, 1) and auto.validation_rows_.max() < 200
    later = jobs.copy()
    later.loc[500:, "wait_time"] = 1e6
    after = AutoWait(
        candidates=("median", "zero"), safe="median", window=30, n_validation=80, make=make_method
    )
    pred = after.fit(_ctx(later, 200)).predict_rows(targets)
    np.testing.assert_array_equal(before.wait_s, pred.wait_s)
    np.testing.assert_array_equal(before.predictor, pred.predictor)


def test_auto_refuses_a_safe_method_outside_its_candidates():
    with pytest.raises(ValueError, match="safe method"):
        AutoWait(candidates=("zero",), safe="gbm", make=make_method).fit(_ctx(make_jobs(100), 20))


def test_auto_asks_each_candidate_only_for_the_targets_it_answers():
    jobs = make_jobs(700, seed=11)
    auto = AutoWait(candidates=("median", "zero", "qbets"), safe="median", every=50, window=100,
                    min_known=10, n_recent=50, n_validation=100, make=make_method)  # fmt: skip
    auto.fit(_ctx(jobs, 200))
    asked: dict[str, int] = {}
    for name, method in auto.methods_.items():
        inner = method.predict_rows

        def counted(rows, progress=None, _name=name, _inner=inner):  # noqa: ANN001, ANN202
            asked[_name] = asked.get(_name, 0) + len(rows)
            return _inner(rows, progress=progress)

        method.predict_rows = counted
    targets = np.arange(250, 700)
    pred = auto.predict_rows(targets)
    beyond = {n: asked[n] - int(np.sum(pred.predictor == n)) for n in auto.methods_}
    assert len(set(pred.predictor)) > 1
    assert len(set(beyond.values())) == 1  # the block re-scoring, the same for every candidate
    every = {n: m.predict_rows(targets).wait_s for n, m in auto.methods_.items()}
    want = np.array([every[n][k] for k, n in enumerate(pred.predictor)])
    np.testing.assert_array_equal(pred.wait_s, want)
