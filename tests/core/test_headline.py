"""The headline rules and their choice on a site's past (``jobmolding.core.headline``,
``jobmolding.core.headline_scores``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.headline import DEFAULT, MIN_JOBS, RULES, SAYS, choose_rule, headline_wait
from jobmolding.core.headline_scores import (
    answer_rows,
    choose_on_history,
    last_rows,
    pooled_answers,
)
from jobmolding.core.live_bundle import LiveBundle
from jobmolding.core.told import Told, ToldRows
from predictor.core.bundle import fit_bundle
from predictor.core.runtime.remaining import LimitFractions
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import from_log
from traces.core.swf import SWF_FIELDS


def test_each_rule_combines_the_two_waits_as_its_table_says() -> None:
    h, q = np.array([0.0, 100.0, 3.0]), np.array([800.0, 20.0, 3.0])
    assert headline_wait("later", h, q).tolist() == [800.0, 100.0, 3.0]
    assert headline_wait("history", h, q).tolist() == [0.0, 100.0, 3.0]
    assert headline_wait("earlier", h, q).tolist() == [0.0, 20.0, 3.0]
    np.testing.assert_allclose(
        headline_wait("blend", h, q), [np.sqrt(801) - 1, np.sqrt(101 * 21) - 1, 3.0]
    )
    assert set(RULES) == set(SAYS)


def test_a_request_without_a_queue_start_is_told_its_history_estimate() -> None:
    for rule in RULES:
        assert headline_wait(rule, np.array([50.0, 7.0]), np.array([np.nan, 9.0]))[0] == 50.0


def test_a_rule_that_errs_clearly_less_than_the_later_is_kept() -> None:
    rng = np.random.default_rng(0)
    y = rng.uniform(2000, 5000, 60)
    queue_right = choose_rule(y + rng.uniform(0, 2000, 60), y, y)  # history over-predicts
    assert queue_right.rule == "earlier" and queue_right.mae_s["earlier"] == 0.0
    history_right = choose_rule(y, y + 3000.0, y)  # the queue over-predicts by 3000 s
    assert history_right.rule in ("history", "earlier")
    assert history_right.mae_s["later"] == pytest.approx(3000.0)
    over = choose_rule(y + 1000.0, y + 2000.0, y)  # both over: the earlier is nearer
    assert over.rule in ("history", "earlier") and over.jobs == 60  # equal: the first
    assert "last 60 finished jobs" in over.reason and "standard errors" in over.reason
    under = choose_rule(y - 1000.0, y - 2000.0, y)  # both under: the later is nearer
    assert under.rule == "later" and "no rule erred clearly less" in under.reason
    assert "each answered again from the state at its arrival" in under.reason
    assert "each on the answer the site told it" in choose_rule(y, y, y, told=60).reason


def test_the_later_stays_unless_another_rule_beats_it_by_two_standard_errors() -> None:
    branches = set()
    for seed in range(100):
        rng = np.random.default_rng(seed)
        y = rng.exponential(3000.0, 40)
        h, q = y * rng.uniform(0.1, 1.5, 40), y * rng.uniform(0.3, 2.0, 40)
        err = {r: np.abs(headline_wait(r, h, q) - y) for r in RULES}
        best = min(RULES, key=lambda r: (err[r].mean(), list(RULES).index(r)))
        d = err["later"] - err[best]
        got = choose_rule(h, q, y)
        if best != "later" and d.mean() > 2.0 * d.std(ddof=1) / np.sqrt(y.size):
            assert got.rule == best, seed
            branches.add("switched")
        else:
            assert got.rule == "later", seed
            assert best == "later" or "no rule erred clearly less" in got.reason
            branches.add("kept, another erred less" if best != "later" else "kept, least")
    assert branches == {"switched", "kept, another erred less", "kept, least"}
    # a rule exact on every job where the later is not: no spread, no doubt
    exact = choose_rule(np.full(30, 100.0), np.full(30, 300.0), np.full(30, 100.0))
    assert exact.rule in ("history", "earlier") and exact.mae_s[exact.rule] == 0.0


def test_ties_and_too_few_jobs_keep_the_default() -> None:
    y = np.arange(30.0)
    assert choose_rule(y, y, y).rule == DEFAULT == "later"  # every rule exact
    few = choose_rule(np.zeros(MIN_JOBS - 1), np.ones(MIN_JOBS - 1), np.ones(MIN_JOBS - 1))
    assert few.rule == DEFAULT and few.mae_s == {} and f"fewer than {MIN_JOBS}" in few.reason


def busy_log(n: int = 160, seed: int = 1) -> pd.DataFrame:
    """A 32-processor log with queues (waits), as a site's history of finished jobs."""
    rng = np.random.default_rng(seed)
    out = pd.DataFrame(-1, index=range(n), columns=list(SWF_FIELDS), dtype=np.int64)
    run = rng.integers(60, 3000, n)
    out["job_id"] = np.arange(1, n + 1)
    out["submit_time"] = np.cumsum(rng.integers(5, 120, n))
    out["run_time"] = run
    out["allocated_procs"] = out["requested_procs"] = rng.choice([1, 4, 8, 16, 32], n)
    out["requested_time"] = np.minimum((run * rng.uniform(1.0, 4.0, n)).round(), 7200)
    out["user_id"] = rng.integers(1, 6, n)
    free_at, waits = np.zeros(32), []  # FCFS on 32 processors: real waits for the test
    for i in range(n):
        p = int(out.at[i, "requested_procs"])
        start = max(float(out.at[i, "submit_time"]), float(np.sort(free_at)[p - 1]))
        idx = np.argsort(free_at)[:p]
        free_at[idx] = start + run[i]
        waits.append(int(start - out.at[i, "submit_time"]))
    out["wait_time"] = waits
    return out


@pytest.fixture(scope="module")
def bundle():
    return fit_bundle(busy_log(), 32, wait_method="median", runtime_method="rangeset")


def test_each_scored_job_is_answered_as_the_live_site_answered_it_at_its_arrival(bundle) -> None:
    rows = last_rows(bundle, 60)
    jobs = bundle.jobs
    ends = (jobs["submit_time"] + jobs["wait_time"] + jobs["run_time"]).to_numpy(float)
    others = np.setdiff1d(np.arange(1, len(jobs)), rows)
    # the 60 jobs that ended last (a long wait ends late), not the 60 that arrived last
    assert rows.size == 60 and 0 not in rows and ends[rows].min() >= ends[others].max()
    assert rows.tolist() != list(range(len(jobs) - 60, len(jobs)))
    got = answer_rows(bundle, rows)
    end = jobs["submit_time"] + jobs["wait_time"] + jobs["run_time"]
    leaked = 0
    for k, i in enumerate(rows):
        t = float(jobs["submit_time"].iat[i])
        snap = from_log(jobs, t, machine_procs=32, rows=int(i))
        request = RequestBatch.from_jobs(jobs.iloc[i : i + 1])
        # the running jobs' ends read only the jobs that had ended by then
        then = LiveBundle(bundle, fractions=LimitFractions.from_history(jobs[end < t]))
        a = then.answers(snap, request)[0]
        # the history estimates come batched (predict_rows): the contract's equal of predict
        assert got.history_s[k] == pytest.approx(a.history_wait_s, rel=1e-9, abs=1e-9)
        assert got.queue_s[k] == a.queue_wait_s
        assert got.runtime_s[k] == a.runtime.point_s
        leaked += LiveBundle(bundle).answers(snap, request)[0].queue_wait_s != a.queue_wait_s
    assert leaked > 0  # the whole history's fractions would have answered otherwise
    assert got.actual_s.tolist() == jobs["wait_time"].to_numpy(float)[rows].tolist()
    assert got.actual_runtime_s.tolist() == jobs["run_time"].to_numpy(float)[rows].tolist()


def test_the_history_chooses_the_rule_that_erred_least_on_its_last_jobs(bundle) -> None:
    choice, answered = choose_on_history(bundle, 100)
    assert len(answered) == 100 and choice.jobs == 100
    errors = {
        r: np.mean(
            np.abs(headline_wait(r, answered.history_s, answered.queue_s) - answered.actual_s)
        )
        for r in RULES
    }
    assert choice.mae_s == pytest.approx(errors)
    assert choice.rule == min(RULES, key=lambda r: (errors[r], list(RULES).index(r)))
    # this FCFS history's waits are the queue's, not the median of past waits
    assert errors["history"] > errors[choice.rule]


def test_a_history_without_known_waits_has_nothing_to_score() -> None:
    log = busy_log()
    log["wait_time"] = -1
    blind = fit_bundle(log, 32, wait_method="median", runtime_method="rangeset")
    assert blind.wait is None
    with pytest.raises(ValueError, match="no known waits"):
        answer_rows(blind, np.arange(1, 5))


def test_a_told_answer_is_scored_as_kept_and_only_the_others_are_answered_again(bundle) -> None:
    rows = last_rows(bundle, 40)
    again = answer_rows(bundle, rows)
    kept = np.zeros(rows.size, dtype=bool)
    kept[::3] = True  # every third job was told at its arrival
    told = ToldRows(kept, np.where(kept, 11.0, np.nan), np.where(kept, np.nan, 0.0),
                    np.where(kept, 33.0, np.nan))  # fmt: skip
    got = pooled_answers(bundle, rows, told)
    assert got.told == kept.sum() == 14
    assert got.history_s[kept].tolist() == [11.0] * 14 and np.isnan(got.queue_s[kept]).all()
    assert got.runtime_s[kept].tolist() == [33.0] * 14
    np.testing.assert_array_equal(got.history_s[~kept], again.history_s[~kept])
    np.testing.assert_array_equal(got.queue_s[~kept], again.queue_s[~kept])
    np.testing.assert_array_equal(got.actual_s, again.actual_s)
    choice, scored = choose_on_history(bundle, 40, lambda r: told if r.tolist() == rows.tolist()
                                       else ToldRows.none(r.size))  # fmt: skip
    assert choice.told == 14 and "14 as the site told them, 26 answered again" in choice.reason
    assert scored.history_s.tolist() == got.history_s.tolist()
    with pytest.raises(ValueError, match="told answers for 3 jobs, 40 rows"):
        pooled_answers(bundle, rows, ToldRows.none(3))


def test_a_live_answer_records_what_it_told_each_new_request(bundle) -> None:
    jobs = bundle.jobs
    t = float(jobs["submit_time"].iat[-1]) + 10.0
    snap = from_log(jobs, t, machine_procs=32)
    batch = RequestBatch.from_jobs(jobs.iloc[-2:])
    new = replace(batch, submit_s=np.full(2, t), procs=np.array([4, 16]))
    live = LiveBundle(bundle, "later")
    answers = live.answers(snap, new)
    for a in answers:
        told = live.told_for(t, a.request.procs)
        assert told is not None and told.history_s == a.history_wait_s
        assert told.queue_s == a.queue_wait_s and told.runtime_s == a.runtime.point_s
        assert Told.from_dict(told.as_dict()) == told
    assert live.told_for(t, 8) is None and live.told_for(t + 1, 4) is None
    assert Told.from_dict({"history_s": 1, "queue_s": None, "runtime_s": 2}).queue_s != 0


def test_a_molding_arrival_asks_the_runtime_method_for_its_own_size_only(
    bundle, monkeypatch
) -> None:
    """Under a work-conserving model each candidate's runtime is the job's own rangeSet
    scaled (``arrival.mold_on``): the runtime method answers the own size once, and the
    answers, and what the site keeps as told, carry the scaled rangeSets the decision used.
    The waits are those of a plain answer (a wait never reads the request's runtime)."""
    from jobmolding.core.arrival import Candidates, mold_on
    from jobmolding.core.runtime_models import scaled_rangeset

    jobs = bundle.jobs
    t = float(jobs["submit_time"].iat[-1]) + 10.0
    snap = from_log(jobs, t, machine_procs=32)
    request = RequestBatch.from_jobs(jobs.iloc[-1:]).request(0).at(t).with_procs(8)
    factors = np.array([1.6, 1.0, 0.7])
    cands = Candidates(np.array([4, 8, 16]), np.full(3, float(request.req_time_s)), factors)
    asked: list[list[int]] = []
    method = type(bundle.runtime)
    predict = method.predict

    def counted(self, snapshot, requests, *args, **kwargs):
        if self is bundle.runtime:
            asked.append(requests.procs.tolist())
        return predict(self, snapshot, requests, *args, **kwargs)

    monkeypatch.setattr(method, "predict", counted)
    live = LiveBundle(bundle, "later")
    decision = mold_on(snap, request, cands, live)
    queue = [snap.running.requests.procs.tolist(), snap.waiting.requests.procs.tolist()]
    assert asked[0] == [8] and all(a in queue for a in asked[1:])  # the queue's own jobs
    own = predict(bundle.runtime, replace(snap, history=jobs), RequestBatch.of([request])).ranges[0]
    want = [scaled_rangeset(own, f).point_s for f in factors]
    assert decision.runtime_s.tolist() == want
    for size, point in zip(cands.procs, want, strict=True):
        told = live.told_for(t, int(size))
        assert told is not None and told.runtime_s == point
    batch = replace(RequestBatch.of([request] * 3), procs=cands.procs.copy())
    plain, _ = LiveBundle(bundle, "later").predict(snap, batch)
    assert decision.wait_s.tolist() == plain.tolist()
    with pytest.raises(ValueError, match="2 runtimes for 3 requests"):
        live.predict(snap, batch, [own, own])
