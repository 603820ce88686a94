"""One decision for the replay and the live site (issue 19, item 1).

A small log is replayed with molding and delay; at every arrival the replay's snapshot and
request are also handed to the live site's decision (``holdqueue.services.decide.decide``,
answering with the same predictor). Job by job, the two must agree on
the size, the release, the time limit and every recorded reason.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from holdqueue.services import decide as live_decide
from jobmolding.core import policy as replay_policy
from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.future import predicted_ends
from jobmolding.core.policy import MoldingParams
from predictor.core.runtime.rangeset import RangeSet
from tests.core.test_molding_replay_bundle import LIMIT_S, small_log


class QueuePredictor:
    """Deterministic answers from the snapshot alone: a request that fits in the free
    processors waits 0, else 300 s per queued job plus 300; runtime: half its request."""

    def predict(self, snapshot, requests, runtimes=None):
        queued = len(snapshot.waiting)
        waits = np.where(requests.procs <= snapshot.free_procs, 0.0, 300.0 * (queued + 1))
        return waits, runtimes if runtimes is not None else self.runtimes(snapshot, requests)

    def runtimes(self, snapshot, requests):
        return [
            RangeSet(np.array([h]), np.array([h]), np.array([1.0])) for h in requests.req_time_s / 2
        ]

    def running_ends(self, snapshot):
        return predicted_ends(snapshot, None, lambda batch: self.runtimes(snapshot, batch))

    def refresh(self, snapshot) -> None:
        return None

    def keep(self, job_key, at_s, procs) -> None:
        return None


@pytest.mark.parametrize("guard", [0.0, 0.25])
def test_the_live_site_decides_like_the_replay_job_by_job(monkeypatch, settings, guard) -> None:
    settings.QUEUECAST_MAX_TIME_LIMIT_S = LIMIT_S
    predictor = QueuePredictor()
    seen = []
    decide_arrival = replay_policy.decide_arrival

    def spy(snapshot, request, cands, pred, rules):
        d = decide_arrival(snapshot, request, cands, pred, rules)
        seen.append((snapshot, request, cands, rules, d))
        return d

    monkeypatch.setattr(replay_policy, "decide_arrival", spy)
    setup = prepare(small_log(), 16, tune_fraction=0.2, max_runtime_s=LIMIT_S)
    params = MoldingParams(strategy="delay", runtime_model="downey", sigma=1.0, guard=guard)
    evaluate(setup, ["delay"], params, lambda s: predictor)

    site = SimpleNamespace(config={"guard": guard, "speedup_sigma": 1.0})
    molded = delayed = 0
    for snapshot, request, cands, rules, d in seen:
        live = live_decide.decide(
            site, snapshot, request, predictor, mold_job=True, allow_delay=rules.delay,
            candidates=cands.procs.tolist(),
        )  # fmt: skip
        record = {k: v for k, v in live.record.items() if k != "speedup"}
        assert (live.procs, live.delayed) == (d.procs, d.delayed)
        assert live.release_s == d.release_s(snapshot.time_s)
        assert live.time_limit_s == cands.req_time_s[list(cands.procs).index(d.procs)]
        assert record == d.record()
        molded += d.procs != request.procs
        delayed += d.delayed
    # the log exercises both rules (else the comparison would prove little)
    assert len(seen) > 50 and molded > 5 and delayed > 0
