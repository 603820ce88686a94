"""One contract test over every registered method of both kinds (scikit-learn's
``parametrize_with_checks`` idea): no leakage past ``known_at``, determinism with a seed,
nothing known yet, a size never seen, batched == one by one, snapshot == log-row fast path.

Adding a method to either registry adds it here; nothing below names a method.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest

from predictor.core.runtime.history import build_context
from predictor.core.runtime.rangeset_predictor import RangeSetPredictor
from predictor.core.runtime.registry import FACTORIES as RUNTIME
from predictor.core.runtime.registry import make_method as make_runtime
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot, from_log
from predictor.core.state.sweep import compute_state
from predictor.core.wait.apq import APQ
from predictor.core.wait.registry import FACTORIES as WAIT
from predictor.core.wait.registry import make_method as make_wait
from predictor.core.wait.types import WaitContext
from tests.conftest import synthetic_log

METHODS = [("wait", n) for n in WAIT] + [("runtime", n) for n in RUNTIME]
IDS = [f"{kind}:{name}" for kind, name in METHODS]
N_TUNE, AT_ROW, PROCS = 100, 300, 128


def contract_log() -> pd.DataFrame:
    """The shared small log, with a requested time on every job (the sim method needs one)."""
    jobs = synthetic_log(420, seed=3)
    jobs["requested_time"] = (jobs["run_time"].abs() * 2).round() + 60
    return jobs


def fitted(kind: str, name: str, jobs: pd.DataFrame, seed: int = 0):
    """A fresh method of the registry, fitted on ``jobs`` with the first N_TUNE rows tuning."""
    if kind == "wait":
        ctx = WaitContext(jobs, compute_state(jobs), N_TUNE, PROCS)
        return make_wait(name, seed).fit(ctx)
    return make_runtime(name, seed).fit(build_context(jobs, PROCS, n_tune=N_TUNE))


@cache
def fitted_on_log(kind: str, name: str):
    return fitted(kind, name, contract_log())


def answers(pred) -> np.ndarray:
    """A prediction as numbers: waits (and bounds), or every range of every rangeSet."""
    if hasattr(pred, "wait_s"):
        upper = pred.upper_s if pred.upper_s is not None else np.zeros_like(pred.wait_s)
        return np.column_stack([pred.wait_s, upper])
    return np.array(
        [[r.point_s, r.length_s, r.low_s.size, r.support, len(r.level)] for r in pred.ranges]
    )


def snapshot_at_row(jobs: pd.DataFrame, i: int) -> Snapshot:
    return from_log(jobs, float(jobs["submit_time"].iat[i]), machine_procs=PROCS, rows=i)


def probes(at: float) -> list[JobRequest]:
    """Requests at ``at``: seen and unseen users, sizes seen and never seen, both queues."""
    return [
        JobRequest(user=u, procs=p, req_time_s=t, submit_s=at, group=1, queue=q, executable=1)
        for u, p, t, q in [
            (1, 4, 3600.0, 0),
            (2, 32, 600.0, 1),
            (3, 1, 60.0, 0),
            (77, 8, 7200.0, 1),  # a user never seen
            (1, 100, 1800.0, 0),  # a size never seen
        ]
    ]


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_a_prediction_never_reads_what_is_learnt_after_known_at(kind, name):
    jobs = contract_log()
    at = float(jobs["submit_time"].iat[AT_ROW])
    changed = jobs.copy()
    start = changed["submit_time"] + changed["wait_time"]
    test_part = changed.index >= N_TUNE  # the tuning part is what fit may learn from
    waiting = test_part & (changed["wait_time"] >= 0) & (start > at)
    running = test_part & ~waiting & (changed["run_time"] >= 0) & (start + changed["run_time"] > at)
    changed.loc[waiting, "wait_time"] += 5000.0  # still waiting at known_at
    changed.loc[running, "run_time"] += 7777.0  # still running at known_at
    later = changed.index >= AT_ROW  # not arrived yet: anything may change
    changed.loc[later, ["wait_time", "run_time"]] = [[9.0, 99999.0]]
    changed.loc[later, ["user_id", "requested_procs", "allocated_procs"]] = [[1, 4, 4]]
    assert waiting.any() and running.any()
    requests = probes(at)
    before = fitted(kind, name, jobs).predict(snapshot_at_row(jobs, AT_ROW), requests)
    after = fitted(kind, name, changed).predict(snapshot_at_row(changed, AT_ROW), requests)
    np.testing.assert_array_equal(answers(before), answers(after))


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_the_same_seed_gives_the_same_numbers(kind, name):
    jobs = contract_log()
    snap = snapshot_at_row(jobs, AT_ROW)
    requests = probes(snap.time_s)
    a = fitted(kind, name, jobs, seed=7).predict(snap, requests)
    b = fitted(kind, name, jobs, seed=7).predict(snap, requests)
    np.testing.assert_array_equal(answers(a), answers(b))


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_with_nothing_known_yet_every_request_gets_a_finite_answer(kind, name):
    jobs = contract_log()
    before_all = float(jobs["submit_time"].iat[0]) - 1.0
    snap = from_log(jobs, before_all, machine_procs=PROCS)
    assert snap.history.empty and len(snap.waiting) == len(snap.running) == 0
    got = answers(fitted_on_log(kind, name).predict(snap, probes(before_all)))
    assert np.isfinite(got).all() and (got[:, 0] >= 0).all()
    if kind == "runtime":
        levels = fitted_on_log(kind, name).predict(snap, probes(before_all)).level
        assert set(levels) == {"none"}


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_a_size_never_seen_gets_an_answer_and_says_which_history(kind, name):
    jobs = contract_log()
    snap = snapshot_at_row(jobs, AT_ROW)
    unseen = JobRequest(user=1, procs=100, req_time_s=1800.0, submit_s=snap.time_s, queue=0)
    assert 100 not in set(jobs["requested_procs"])
    pred = fitted_on_log(kind, name).predict(snap, [unseen])
    got = answers(pred)
    assert np.isfinite(got).all() and got[0, 0] >= 0
    if kind == "runtime":
        assert pred.level[0] in ("user", "size", "all", "none")  # never the request's tuple


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_a_batch_answers_as_its_requests_one_by_one(kind, name):
    jobs = contract_log()
    snap = snapshot_at_row(jobs, AT_ROW)
    method = fitted_on_log(kind, name)
    requests = probes(snap.time_s) + [
        r.with_procs(p) for r in probes(snap.time_s)[:1] for p in (2, 16)
    ]
    batch = answers(method.predict(snap, requests))
    one = np.vstack([answers(method.predict(snap, [r])) for r in requests])
    np.testing.assert_allclose(batch, one, rtol=1e-12)


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_a_snapshot_of_the_log_answers_as_the_fast_path_over_its_rows(kind, name):
    jobs = contract_log()
    method = fitted_on_log(kind, name)
    rows = np.arange(N_TUNE + 5, len(jobs), 23)
    fast = answers(method.predict_rows(rows))
    log = jobs if kind == "wait" else method.history_.jobs  # the runtime context re-sorts
    requests = RequestBatch.from_jobs(log)
    via_snapshot = np.vstack(
        [answers(method.predict(snapshot_at_row(log, int(i)), requests.take([i]))) for i in rows]
    )
    np.testing.assert_allclose(via_snapshot, fast, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_an_empty_batch_answers_nothing(kind, name):
    jobs = contract_log()
    method = fitted_on_log(kind, name)
    assert answers(method.predict(snapshot_at_row(jobs, AT_ROW), [])).size == 0
    assert answers(method.predict_rows(np.zeros(0, dtype=np.int64))).size == 0


@pytest.mark.parametrize(("kind", "name"), METHODS, ids=IDS)
def test_init_stores_keyword_parameters_only(kind: str, name: str) -> None:
    """``__init__`` keeps its keyword parameters as attributes of the same name and nothing
    else (no private cache, no learned state); ``get_params`` returns them, so
    ``type(m)(**m.get_params())`` is the same unfitted method."""
    method = make_wait(name, 7) if kind == "wait" else make_runtime(name, 7)
    state = vars(method)
    assert all(not k.startswith("_") and not k.endswith("_") for k in state), sorted(state)
    assert method.get_params() == state
    assert vars(type(method)(**method.get_params())) == state


def test_apq_and_rangeset_keep_the_parameters_they_are_given() -> None:
    apq = APQ(k=3, chain="median")
    assert apq.get_params() == {"k": 3, "chain": "median"}
    assert (apq.params.k, apq.params.chain) == (3, "median")
    rangeset = RangeSetPredictor(min_runtime_s=5.0)
    assert rangeset.get_params() == {"min_runtime_s": 5.0}
    ctx = build_context(contract_log(), PROCS, n_tune=N_TUNE)
    assert rangeset.settings(ctx).min_runtime_s == 5.0
    assert RangeSetPredictor().settings(ctx) is ctx.params
