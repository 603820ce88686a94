"""The queue-based start (``jobmolding.core.future``) and the ``later`` headline rule
(``jobmolding.core.headline``), hand-worked.

The demo site's case from issue 19: 128 processors, 126 busy until 1000 s (predicted), three
whole-machine jobs queued, each predicted to run 600 s. EASY forward: the three run one after
the other from 1000, ending at 1600, 2200 and 2800; a whole-machine request queued last
starts at 2800, however short past whole-machine waits were.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobmolding.core.future import forward_starts
from jobmolding.core.headline import headline_wait
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot


def req(job: int, procs: int, limit: float) -> JobRequest:
    return JobRequest(user=1, procs=procs, req_time_s=limit, submit_s=0.0, job_id=job)


def full_queue() -> Snapshot:
    running = RequestBatch.of([req(1, 126, 3600)])
    waiting = RequestBatch.of([req(k, 128, 3600) for k in (2, 3, 4)])
    return Snapshot(
        time_s=0.0, known_at_s=0.0,
        waiting=ActiveJobs(waiting, np.full(3, np.inf), np.full(3, 128)),
        running=ActiveJobs(running, np.array([-100.0]), np.array([126])),
        history=pd.DataFrame(), machine_procs=128,
    )  # fmt: skip


def test_queued_whole_machine_jobs_run_one_after_the_other_from_the_running_end() -> None:
    start, end = forward_starts(full_queue(), np.array([1000.0]), np.full(3, 600.0))
    assert start.tolist() == [0.0, 1000.0, 1600.0, 2200.0]  # running jobs: from the snapshot
    assert end[1:].tolist() == [1600.0, 2200.0, 2800.0]


def test_a_whole_machine_request_never_starts_before_the_queued_ones_are_predicted_to_end():
    snap = full_queue()
    new = RequestBatch.of([req(9, 128, 600)])
    start, _ = forward_starts(snap, np.array([1000.0]), np.full(3, 600.0), new, np.array([300.0]))
    assert start[-1] == 2800.0
    # the history said "now" (the fallback median): the later-rule headline is the
    # queue's (the snapshot is at 0 s, so starts are waits)
    assert headline_wait("later", np.array(0.0), np.array(start[-1])) == 2800.0
    # a history estimate later than the queue's is kept (later arrivals, longer runtimes)
    assert headline_wait("later", np.array(5000.0), np.array(start[-1])) == 5000.0


def test_an_empty_queue_lets_a_small_request_start_now_and_the_full_queue_does_not():
    empty = Snapshot(
        time_s=0.0, known_at_s=0.0,
        waiting=full_queue().waiting.take(np.zeros(3, dtype=bool)),
        running=full_queue().running, history=pd.DataFrame(), machine_procs=128,
    )  # fmt: skip
    small = RequestBatch.of([req(9, 2, 600)])
    s_empty, _ = forward_starts(empty, np.array([1000.0]), np.zeros(0), small, np.array([60.0]))
    s_full, _ = forward_starts(full_queue(), np.array([1000.0]), np.full(3, 600.0), small,
                               np.array([60.0]))  # fmt: skip
    assert s_empty[-1] == 0.0  # two processors are free now
    # behind three whole-machine jobs, EASY backfills the 60 s job only if it ends before
    # the head's reservation at 1000: it does, so it starts now too
    assert s_full[-1] == 0.0
    big = RequestBatch.of([req(9, 64, 600)])
    s_big_empty, _ = forward_starts(empty, np.array([1000.0]), np.zeros(0), big, np.array([60.0]))
    s_big_full, _ = forward_starts(full_queue(), np.array([1000.0]), np.full(3, 600.0), big,
                                   np.array([60.0]))  # fmt: skip
    assert s_big_empty[-1] == 1000.0 and s_big_full[-1] == 2800.0


class QueueOnly:
    """Waits from the queue alone (a history estimate of 0 s, as the demo site's): each
    request's EASY start behind the queue; every runtime half its limit."""

    def runtimes(self, snapshot, requests):
        from predictor.core.runtime.rangeset import RangeSet

        half = requests.req_time_s / 2.0
        return [RangeSet(np.array([h]), np.array([h]), np.array([1.0])) for h in half]

    def running_ends(self, snapshot):
        from jobmolding.core.future import predicted_ends

        return predicted_ends(snapshot, None, lambda batch: self.runtimes(snapshot, batch))

    def predict(self, snapshot, requests, runtimes=None):
        ends = self.running_ends(snapshot)
        queued = np.array([r.point_s for r in self.runtimes(snapshot, snapshot.waiting.requests)])
        mine = np.array([r.point_s for r in self.runtimes(snapshot, requests)])
        waits = np.zeros(len(requests))
        n = len(snapshot.running) + len(snapshot.waiting)
        for k in range(len(requests)):
            one = requests.take(np.array([k]))
            start, _ = forward_starts(snapshot, ends, queued, one, mine[k : k + 1])
            waits[k] = max(float(start[n]) - float(one.submit_s[0]), 0.0)
        return waits, runtimes if runtimes is not None else self.runtimes(snapshot, requests)


def test_with_waits_from_the_queue_alone_a_hold_breaks_even_and_is_never_taken():
    """Why the demo site holds nothing (docs/sites.md, "When a hold can pay"): the forward run
    from now already starts the job when the running jobs end, so the hold's `delay +
    predicted at t` equals `predicted now` and the 30% rule says no, whatever the size."""
    from jobmolding.core.arrival import ArrivalRules, decide_arrival
    from jobmolding.core.candidates import speedup_candidates

    snap = full_queue()
    for procs in (16, 64, 128):
        request = JobRequest(user=2, procs=procs, req_time_s=1800.0, submit_s=0.0)
        sizes = np.array(sorted({procs // 4 or 1, procs // 2 or 1, procs}))
        cands = speedup_candidates(procs, sizes, 1800.0, 7200.0, 1.0)
        d = decide_arrival(snap, request, cands, QueueOnly(), ArrivalRules(delay=True))
        verdict = d.delay
        assert verdict is not None and not verdict.delay
        assert verdict.future_s > verdict.now_s  # there was a later time to look at
        # break-even: the hold gains nothing (and arrivals during it would overtake the job)
        assert abs(verdict.delayed_response_s - verdict.predicted_now_s) < 1e-6, procs


def test_on_random_queues_a_hold_never_beats_submitting_now_with_waits_from_the_queue():
    """The general case behind the demo site's (docs/sites.md, "When a hold can pay"): a job
    queued now is queued last, as at ``t``; until ``t`` it can only backfill. So on any queue,
    for every size, ``delay + predicted at t >= predicted now``: the 30% rule never passes.
    (It failed before the forward run planned the running jobs with their limits as EASY does:
    the site at ``t`` then let a size start 600 s earlier than the run from now did.)"""
    from jobmolding.core.arrival import ArrivalRules, decide_arrival
    from jobmolding.core.candidates import speedup_candidates

    rng = np.random.default_rng(7)
    looked = 0
    for _ in range(150):
        n_run, n_wait = int(rng.integers(1, 6)), int(rng.integers(0, 8))
        limits = rng.choice([600.0, 1800.0, 3600.0], n_run + n_wait)
        run_procs = rng.integers(8, 64, n_run)
        run_procs = np.minimum(run_procs, 128 // n_run)
        elapsed = rng.uniform(0, 0.5, n_run) * limits[:n_run]  # before their predicted ends
        running = RequestBatch.of(
            [
                req(k, int(p), float(m))
                for k, (p, m) in enumerate(zip(run_procs, limits, strict=False))
            ]
        )
        waiting = RequestBatch.of(
            [
                req(10 + k, int(rng.integers(1, 129)), float(limits[n_run + k]))
                for k in range(n_wait)
            ]
        )
        snap = Snapshot(
            time_s=0.0, known_at_s=0.0,
            waiting=ActiveJobs(waiting, np.full(n_wait, np.inf), waiting.procs.copy()),
            running=ActiveJobs(running, -elapsed, run_procs.astype(np.int64)),
            history=pd.DataFrame(), machine_procs=128,
        )  # fmt: skip
        procs = int(rng.choice([8, 16, 32, 64, 128]))
        request = JobRequest(user=2, procs=procs, req_time_s=1800.0, submit_s=0.0)
        sizes = np.array(sorted({max(procs // 4, 1), max(procs // 2, 1), procs}))
        cands = speedup_candidates(procs, sizes, 1800.0, 7200.0, 1.0)
        d = decide_arrival(snap, request, cands, QueueOnly(), ArrivalRules(delay=True))
        assert d.delay is not None and not d.delay.delay
        if d.later is not None:
            looked += 1
            assert d.delay.delayed_response_s >= d.delay.predicted_now_s - 1e-6
    assert looked > 50  # most queues had a later time worth a second look
