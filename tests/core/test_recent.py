"""A method's recent accuracy and the interval an API answer carries."""

from __future__ import annotations

import numpy as np
import pytest

from predictor.core.state.sweep import compute_state
from predictor.core.wait import recent
from predictor.core.wait.local_interval import interval_block, local_now
from predictor.core.wait.p_within import NEIGHBOURS, p_within
from predictor.core.wait.recent import RecentScorer, recent_errors, recent_rows
from predictor.core.wait.registry import make_method
from predictor.core.wait.row_memo import RowWaitMemo
from predictor.core.wait.types import WaitContext
from tests.core.wait_fakes import make_jobs


def test_recent_rows_are_the_last_started_known_jobs_before_the_instant():
    jobs = make_jobs(300, seed=6)
    t = float(jobs["submit_time"].iloc[200])
    rows = recent_rows(jobs, t, 200, n=40)
    start = (jobs["submit_time"] + jobs["wait_time"]).to_numpy()
    assert rows.size == 40 and np.all(rows < 200) and np.all(start[rows] <= t)
    later = np.setdiff1d(np.flatnonzero((start <= t) & (np.arange(300) < 200)), rows)
    assert start[later].max() <= start[rows].min()  # nothing more recent was left out
    with pytest.raises(ValueError, match="n must"):
        recent_rows(jobs, t, 200, n=0)


def test_answer_carries_interval_probability_and_recent_accuracy():
    jobs = make_jobs(500, seed=7)
    ctx = WaitContext(jobs, compute_state(jobs), 100, 128)
    method = make_method("median").fit(ctx)
    t = float(jobs["submit_time"].iloc[450])
    recent = recent_errors(method, recent_rows(jobs, t, 450, n=200), jobs["wait_time"].to_numpy())
    ans = recent.answer(np.array([600.0]), 0.9, within_s=3600.0)
    assert ans["recent_jobs"] == 200 and ans["low_s"][0] <= 600.0 <= ans["high_s"][0]
    np.testing.assert_allclose(ans["recent_aae_s"], np.mean(np.abs(recent.pred_s - recent.wait_s)))
    assert 0.0 <= ans["p_within"][0] <= 1.0
    wider = recent.answer(np.array([600.0]), 0.99)
    assert wider["high_s"][0] - wider["low_s"][0] >= ans["high_s"][0] - ans["low_s"][0]


def test_interval_block_reports_both_levels_in_arrival_order():
    rng = np.random.default_rng(8)
    arrival = np.cumsum(rng.exponential(50.0, 3000))
    wait = rng.exponential(900.0, 3000)
    block = interval_block(np.full(3000, 900.0), wait, arrival)
    assert set(block) == {"0.8", "0.9"}
    shuffle = rng.permutation(3000)
    assert interval_block(np.full(3000, 900.0), wait[shuffle], arrival[shuffle]) == block
    assert abs(block["0.9"]["coverage"] - 0.9) < 0.03
    assert block["0.8"]["mean_width_s"] < block["0.9"]["mean_width_s"]
    # every target is told 900 s: one class of the predicted wait holds them all
    by = block["0.9"]["by_prediction"]
    assert by["[100,1000s)"] == {"jobs": 3000, "coverage": block["0.9"]["coverage"]}
    assert sum(v["jobs"] for v in by.values()) == 3000
    pred = np.where(np.arange(3000) % 2, 50.0, 5000.0)  # two classes, each its own share
    split = interval_block(pred, wait, arrival)["0.8"]["by_prediction"]
    assert split["[0,100s)"]["jobs"] == split["[1000,1e4s)"]["jobs"] == 1500
    assert split["[100,1000s)"] == {"jobs": 0, "coverage": None}


class CountingMethod:
    """A fitted method that counts the rows it is asked to predict."""

    def __init__(self, method) -> None:
        self.method, self.rows = method, 0

    def predict_rows(self, rows):
        self.rows += len(rows)
        return self.method.predict_rows(rows)


def counted_scorer(seed: int):
    """An APQ fitted on 500 jobs, counted, behind a scorer of 120 recent and 200 replayed."""
    jobs = make_jobs(500, seed=seed)
    method = make_method("apq").fit(WaitContext(jobs, compute_state(jobs), 100, 128))
    counting = CountingMethod(method)
    return jobs, method, counting, RecentScorer(counting, jobs, n=120, replayed=200)


def test_scorer_equals_recent_errors_and_predicts_each_row_once():
    jobs, method, counting, scorer = counted_scorer(9)
    wait = jobs["wait_time"].to_numpy()
    for i in (300, 310, 480, 310):
        t = float(jobs["submit_time"].iloc[i])
        got = scorer.at(t, i)
        want = recent_errors(method, recent_rows(jobs, t, i, n=120), wait)
        np.testing.assert_array_equal(got.rows, want.rows)
        np.testing.assert_array_equal(got.pred_s, want.pred_s)
        np.testing.assert_array_equal(got.wait_s, want.wait_s)
    # an instant predicts the rows its adaptive interval replays (the last 200 started) and
    # those P(start within T) reads (the last 200 arrived, started or not) too
    at = [float(jobs["submit_time"].iloc[i]) for i in (300, 310, 480)]
    picked = [np.union1d(recent_rows(jobs, t, i, n=200), scorer.usable[scorer.usable < i][-200:])
              for t, i in zip(at, (300, 310, 480), strict=True)]  # fmt: skip
    asked = np.unique(np.concatenate(picked))
    assert counting.rows == asked.size  # overlapping instants re-predicted nothing
    before = counting.rows
    state = scorer.adaptive(at[2], 0.8, 480)  # reads them, predicts nothing
    assert counting.rows == before and state is not None
    rows = recent_rows(jobs, at[2], 480, n=200)
    arrival = jobs["submit_time"].to_numpy()[rows]
    want = local_now(method.predict_rows(rows).wait_s, wait[rows], arrival,
                     arrival + wait[rows], at[2], 0.8)  # fmt: skip
    assert want is not None
    np.testing.assert_array_equal(state.pred_s, want.pred_s)
    np.testing.assert_array_equal(state.wait_s, want.wait_s)
    assert state.target == want.target and scorer.adaptive(at[2], 0.8, 480) is state
    told = got.answer(np.array([500.0]), 0.8, adaptive=state)
    low, high = want.interval(np.array([500.0]))
    assert (told["low_s"][0], told["high_s"][0]) == (low[0], high[0])


def test_p_within_reads_the_jobs_predicted_like_the_request_among_those_arrived(monkeypatch):
    """The last WINDOW rows arrived by the instant, started (their wait) or still waiting (the
    time waited so far, nothing later read), and their Kaplan-Meier chance (stop 61)."""
    from predictor.core.wait.km_within import p_within_censored

    monkeypatch.setattr(recent, "WINDOW", 150)
    jobs, method, counting, scorer = counted_scorer(12)
    wait, submit = jobs["wait_time"].to_numpy(), jobs["submit_time"].to_numpy()
    t = float(submit[450])
    pool = scorer.at(t, 450)
    before = counting.rows
    like = scorer.window(t, 450)  # at() has predicted them: nothing predicted again
    assert counting.rows == before and scorer.window(t, 450) is like
    rows = scorer.usable[scorer.usable < 450][-150:]
    np.testing.assert_array_equal(like.rows, rows)
    np.testing.assert_array_equal(like.pred_s, method.predict_rows(rows).wait_s)
    started = submit[rows] + wait[rows] <= t
    assert started.any() and not started.all()  # some still waiting at t
    np.testing.assert_array_equal(like.started, started)
    np.testing.assert_array_equal(like.waited_s[started], wait[rows][started])
    np.testing.assert_array_equal(like.waited_s[~started], t - submit[rows][~started])
    assert np.all(like.waited_s[~started] < wait[rows][~started])  # nothing after t is read
    asked = np.array([500.0, 5000.0])
    ans = pool.answer(asked, 0.9, 1800.0, like=like)
    want = p_within_censored(asked, like.pred_s, like.waited_s, started, 1800.0)
    np.testing.assert_array_equal(ans["p_within"], want)
    share = p_within(asked, like.pred_s[started], wait[rows][started], 1800.0)
    assert np.all(ans["p_within"] <= share)  # here the waiting lower it
    assert ans["p_within_jobs"] == min(NEIGHBOURS, 150) and ans["recent_jobs"] == 120


def test_row_memo_matches_a_batch_in_any_order():
    jobs = make_jobs(400, seed=10)
    ctx = WaitContext(jobs, compute_state(jobs), 100, 128)
    method = make_method("apq").fit(ctx)
    memo = RowWaitMemo(method, len(jobs))
    rows = np.arange(150, 400, 7)
    first = memo.wait_s(rows[::-1])[::-1]
    np.testing.assert_array_equal(first, method.predict_rows(rows).wait_s)
    np.testing.assert_array_equal(memo.wait_s(rows), first)
    assert memo.predicted == rows.size


def test_adaptive_states_outlive_the_pools_lru():
    """A state costs a replay to make again: a warm repeat of 300 instants (more than the
    256 pools kept) finds every state still kept."""
    jobs = make_jobs(500, seed=11)
    ctx = WaitContext(jobs, compute_state(jobs), 100, 128)
    scorer = RecentScorer(make_method("median").fit(ctx), jobs, n=50, replayed=60)
    instants = np.linspace(jobs["submit_time"].iloc[200], jobs["submit_time"].iloc[-1], 300)
    first = [scorer.adaptive(float(t), 0.9) for t in instants]
    assert len(scorer.states) == 300
    again = [scorer.adaptive(float(t), 0.9) for t in instants]
    assert all(a is b for a, b in zip(first, again, strict=True))
