"""Answers kept for a settled history (``predictor.core.runtime.settled``): a request asked
again at a later instant with the same settled key gets the very rangeSet a fresh prediction
gives, and nothing is kept where the key cannot tell."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from predictor.core.runtime.auto import CalibratedRuntime
from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.history import build_context
from predictor.core.runtime.quantile import QuantileGBRange
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import from_log
from tests.core.test_runtime_density import PROCS, jobs_with_requests
from tests.core.test_train_ahead import KW, _same_rangesets


@pytest.fixture(scope="module")
def finished():
    jobs = jobs_with_requests(seed=6)
    jobs = jobs[(jobs["run_time"] >= 0) & (jobs["wait_time"] >= 0)].reset_index(drop=True)
    return build_context(jobs, PROCS, n_tune=160)


def _requests(at: float) -> RequestBatch:
    """Two jobs queued earlier (fixed submit times) and three sizes arriving now."""
    queued = [JobRequest(user=u, group=1, queue=1, procs=p, req_time_s=r, submit_s=s)
              for u, p, r, s in [(1, 8, 7200.0, 1e3), (3, 2, 600.0, 5e3)]]  # fmt: skip
    now = [JobRequest(user=2, group=1, queue=1, procs=p, req_time_s=3600.0, submit_s=at)
           for p in (1, 4, 16)]  # fmt: skip
    return RequestBatch.of(queued + now)


@pytest.mark.parametrize("kind", ["density", "quantile", "calibrated"])
def test_kept_answers_are_the_fresh_ones_at_every_later_instant(finished, kind):
    fitted = {
        "density": lambda: DensityRangeSet(**KW).fit(finished),
        "quantile": lambda: QuantileGBRange(max_iter=30).fit(finished),
        "calibrated": lambda: CalibratedRuntime(
            QuantileGBRange(max_iter=30).fit(finished), ([0.0, 0.5, 1.0], [0.0, 0.4, 0.9])
        ),
    }[kind]()
    last = float(finished.known_end_s.max())
    keys = set()
    for k in range(1, 60):
        at = last + k * 1800.0  # the week's mean load falls as the instant moves on
        snap = from_log(finished.jobs, at, machine_procs=PROCS)
        batch = _requests(at)
        key = fitted.settled_key(snap)
        assert key is not None
        keys.add(key)
        got = fitted.predict(snap, batch)
        fresh = fitted._predict(RuntimeTargets.from_snapshot(finished, snap, batch), None)
        _same_rangesets(got, fresh)
    kept = fitted.__dict__["_settled"]
    assert len(keys) > 1 and kept.hits > 0 and kept.misses > 0


def test_nothing_is_kept_before_the_history_has_settled_or_after_a_refit(finished):
    method = QuantileGBRange(max_iter=30).fit(finished)
    inside = float(np.median(finished.known_end_s))
    snap = from_log(finished.jobs, inside, machine_procs=PROCS)
    assert method.settled_key(snap) is None
    method.predict(snap, _requests(inside))
    assert "_settled" not in method.__dict__
    later = float(finished.known_end_s.max()) + 60.0
    method.predict(from_log(finished.jobs, later, machine_procs=PROCS), _requests(later))
    assert method.__dict__["_settled"].misses == 5
    assert "_settled" not in pickle.loads(pickle.dumps(method)).__dict__  # never pickled
    method.fit(finished)
    assert "_settled" not in method.__dict__


def test_a_kept_answer_cannot_be_changed_by_a_caller(finished):
    method = QuantileGBRange(max_iter=30).fit(finished)
    at = float(finished.known_end_s.max()) + 60.0
    ranges = method.predict(from_log(finished.jobs, at, machine_procs=PROCS), _requests(at))
    with pytest.raises(ValueError):
        ranges.ranges[0].low_s[0] = 0.0
