"""The replay's predictor is the live service's bundle fitted on the simulated past only
(``jobmolding.core.replay_bundle``): the log's own waits are never read, nothing that
arrives later changes a decision, and the fit follows the simulated history in blocks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.headline_scores import last_rows_in
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_bundle import RULE_JOBS, ReplayBundle
from jobmolding.core.told import ToldRows
from traces.core.swf import SWF_FIELDS

LIMIT_S = 6000.0


def small_log(n: int = 90, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = pd.DataFrame(-1, index=range(n), columns=list(SWF_FIELDS), dtype=np.int64)
    run = rng.integers(50, 2000, n)
    procs = rng.choice([1, 2, 4, 8, 16], n)
    out["job_id"] = np.arange(1, n + 1)
    out["submit_time"] = np.cumsum(rng.integers(10, 200, n))
    out["wait_time"] = 0
    out["run_time"] = run
    out["allocated_procs"] = out["requested_procs"] = procs
    out["requested_time"] = np.minimum(run * rng.integers(1, 4, n), LIMIT_S).astype(np.int64)
    out["user_id"] = rng.integers(1, 5, n)
    return out


def run(log, n_warmup=60):
    bundles = []

    def make(s):
        bundles.append(ReplayBundle(s.jobs.machine_procs, "sim", "rangeset"))
        return bundles[-1]

    setup = prepare(log, 16, tune_fraction=n_warmup / len(log))
    params = MoldingParams(strategy="delay", runtime_model="downey", guard=0.0)
    out = evaluate(setup, ["delay"], params, make)["delay"].outcome
    return out, bundles[0]


def test_the_logs_waits_are_never_read_and_later_arrivals_change_no_decision() -> None:
    log = small_log(240, seed=5)
    base, bundle = run(log)
    assert bundle.fits_ >= 2  # refitted as the simulated history grew
    assert (base.procs != base.original_procs).any()  # something was decided
    tripled, _ = run(log.assign(wait_time=log["wait_time"] * 3 + 77))
    np.testing.assert_array_equal(base.procs, tripled.procs)
    np.testing.assert_array_equal(base.release_s, tripled.release_s)
    cut, _ = run(log.iloc[:180].reset_index(drop=True))
    # submitted before job 180 arrives (every job is decided at its arrival, a follower too,
    # as on a live site; a job released later may meet a later arrival in the queue)
    before = base.release_s[:180] < float(log["submit_time"].iloc[180])
    assert before.sum() > 150
    np.testing.assert_array_equal(base.procs[:180][before], cut.procs[before])
    np.testing.assert_array_equal(base.release_s[:180][before], cut.release_s[before])


def test_each_fit_records_the_weight_rule_auto_kept() -> None:
    """A replay whose wait method is ``auto`` records the rule each fit kept (the JSON's
    ``wait_rules_kept``); another method records none."""
    log = small_log(240, seed=5)
    setup = prepare(log, 16, tune_fraction=0.25)
    params = MoldingParams(strategy="molding", runtime_model="downey", guard=0.0)
    made: list[ReplayBundle] = []

    def make(s, wait="auto"):
        made.append(ReplayBundle(s.jobs.machine_procs, wait, "rangeset"))
        return made[-1]

    evaluate(setup, ["molding"], params, make)
    assert made[0].fits_ >= 1 and len(made[0].wait_rules_) == made[0].fits_
    assert made[0].wait_rules_[-1] == made[0].bundle_.wait.chosen_rule()
    assert set(made[0].wait_rules_) <= {"adahedge", "adahedge_stacked"}
    _, sim = run(log)
    assert sim.fits_ >= 1 and sim.wait_rules_ == []


def test_the_bundle_is_fitted_on_finished_simulated_jobs_only() -> None:
    log = small_log(240, seed=5)
    _, bundle = run(log)
    fitted = bundle.bundle_.jobs
    assert (fitted["wait_time"] >= 0).all() and (fitted["run_time"] >= 0).all()
    assert len(fitted) == bundle.fitted_rows_ < len(log)
    assert fitted["job_id"].tolist() == list(range(1, len(fitted) + 1))


def test_the_replay_answers_as_a_live_site_with_the_headline_rule_a_site_would_keep() -> None:
    """A 16-processor request behind three queued 16-processor jobs: the replay's answer is
    the live site's (``LiveBundle``) with the rule chosen on the replay's finished history as
    a site chooses it; under the ``later`` rule it never starts before the queue is through."""
    from jobmolding.core.headline import headline_wait
    from jobmolding.core.headline_scores import choose_on_history
    from jobmolding.core.live_bundle import LiveBundle
    from predictor.core.bundle import predict_requests
    from predictor.core.state.request import JobRequest, RequestBatch
    from predictor.core.state.snapshot import ActiveJobs, Snapshot

    log = small_log(240, seed=5)
    _, replay = run(log)
    now = float(log["submit_time"].max()) + 10.0

    def req(job: int, procs: int) -> JobRequest:
        return JobRequest(user=1, procs=procs, req_time_s=3000.0, submit_s=now, job_id=job)

    running, waiting = (
        RequestBatch.of([req(1, 14)]),
        RequestBatch.of([req(k, 16) for k in (2, 3, 4)]),
    )
    snap = Snapshot(
        time_s=now, known_at_s=now,
        waiting=ActiveJobs(waiting, np.full(3, np.inf), np.full(3, 16)),
        running=ActiveJobs(running, np.array([now - 5.0]), np.array([14])),
        history=replay.bundle_.jobs, machine_procs=16,
    )  # fmt: skip
    new = RequestBatch.of([JobRequest(user=2, procs=16, req_time_s=600.0, submit_s=now)])
    told = choose_on_history(replay.bundle_, RULE_JOBS, lambda r: told_rows(replay, r))[0]
    assert replay.rule_ == told.rule and told.told == replay.told_jobs_[-1] > 0
    assert (
        replay.headline_rules_[-1] == replay.rule_ and len(replay.headline_rules_) == replay.fits_
    )
    waits, runtimes = replay.predict(snap, new)
    live_waits, live_runtimes = LiveBundle(replay.bundle_, replay.rule_).predict(snap, new)
    np.testing.assert_array_equal(waits, live_waits)
    assert [r.point_s for r in runtimes] == [r.point_s for r in live_runtimes]
    answer = LiveBundle(replay.bundle_, "later").answers(snap, new)[0]
    both = np.array(answer.history_wait_s), np.array(answer.queue_wait_s)
    assert waits[0] == headline_wait(replay.rule_, *both)
    # the later rule: three whole-machine jobs run before it, at least their predicted runtimes
    assert answer.wait_s == max(answer.history_wait_s, answer.queue_wait_s)
    queued = LiveBundle(replay.bundle_).runtimes(snap, waiting)
    assert answer.wait_s >= sum(r.point_s for r in queued) - 1e-6
    assert predict_requests(replay.bundle_, snap, new)[0].wait_s == answer.history_wait_s


def told_rows(replay: ReplayBundle, rows: np.ndarray) -> ToldRows:
    """What the replay kept as told the jobs of its fitted rows ``rows``."""
    return replay.book_.rows(replay.fitted_keys_[rows])


def test_each_fit_scores_what_the_replay_told_the_jobs_it_submitted_at_their_decision() -> None:
    """A job submitted at its decision is scored on the answer it was told then; a warm-up
    job (no decision) and a held one (submitted at a later state) are answered again."""
    log = small_log(240, seed=5)
    out, replay = run(log)
    assert len(replay.told_jobs_) == replay.fits_ >= 2
    assert replay.told_jobs_[0] == 0  # the first fit comes before the first decision
    rows = last_rows_in(replay.bundle_.jobs, RULE_JOBS)
    job = replay.fitted_keys_[rows] - 1  # the log's rows (job ids 1..n)
    submit = log["submit_time"].to_numpy(float)
    at_decision = (job >= 60) & (out.release_s[job] == submit[job])
    assert 0 < at_decision.sum() < job.size and (out.release_s > submit).any()
    assert replay.told_jobs_[-1] == at_decision.sum()
    assert told_rows(replay, rows).kept.tolist() == at_decision.tolist()
