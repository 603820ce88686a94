"""The live site decides as the replay does, job by job (issue 19, "What to build" 1).

A small hand-made log (``tests/fixtures/molding_one_path.swf``: 64 jobs of three users on 16
processors) goes two ways:

- through the molding replay (``jobmolding.core.evaluate``, strategy ``delay``, Downey's
  speed-up at sigma 1): the engine's snapshots, the replay's hold queue;
- through the live site's machinery: a site on the simulated backend (EASY replaying what
  was submitted to it), a clock the test moves, each job submitted by its user with
  ``holdqueue.services.jobs.submit_job`` at its arrival, held jobs released by
  ``release_job`` when their hold ends, the site's snapshot read from the backend.

Both decide with the same predictor: one bundle (``sim`` waits, ``rangeset`` runtimes) fitted
once on the log's first jobs (``shared_predictor``), answering as a live site does
(``LiveBundle``: the headline wait is the later of the history estimate and the queue-based
start). The predictor's own refit
schedule is not what is compared; every other step is each path's own. The first 20% of the
jobs are warm-up in the replay and are submitted with ``mold`` and ``allow_delay`` off.

Each path finds the candidates by its own means, with one rule
(``jobmolding.core.candidates.snapshot_sizes``): the sizes of the user's jobs its snapshot knows
(the site's history, synced before each arrival as its periodic sync does, and its active
jobs; the replay's engine), a user with none gets the size grid. A second run gives every job
of one user after the warm-up to a new user, so a newcomer arrives where molding acts.

Job by job, the size, whether it was held, the hold's length, the time limit and the start
must be the same.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model

from holdqueue.models import SiteJob
from holdqueue.services import backends as bk
from holdqueue.services import jobs as site_jobs
from holdqueue.services import predict as site_predict
from holdqueue.services.sites import create_site
from holdqueue.services.sweep import sync_site
from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.live_bundle import LiveBundle
from jobmolding.core.policy import MoldingParams
from predictor.core.bundle import fit_bundle
from traces.core.swf import read_swf
from traces.services.ingest import ingest_swf

pytestmark = pytest.mark.django_db

LOG = Path(__file__).parents[1] / "fixtures" / "molding_one_path.swf"
MACHINE = 16
LIMIT_S = 7200
TUNE = 0.2
USERS = ("ann", "bob", "cat", "dan")
START = dt.datetime(2026, 1, 5, 8, 0, tzinfo=dt.UTC)
# The site's own background load: two 1-processor, 1-second jobs (at 0 s and after the log
# has long ended), so the queue holds only what the test submits.
BACKGROUND = """; MaxProcs: 16
1 0 0 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 -1
2 10000000 0 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 -1
"""


class Clock:
    """The test's clock: site and backend read it; the test moves it forward."""

    def __init__(self) -> None:
        self.at = START

    def now(self) -> dt.datetime:
        return self.at

    def ts(self) -> float:
        return self.at.timestamp()

    def move_to(self, when: dt.datetime) -> None:
        assert when >= self.at, (when, self.at)
        self.at = when


class FixedPredictor:
    """A replay predictor that is the live one: ``LiveBundle`` on a bundle fitted once."""

    def __init__(self, live: LiveBundle) -> None:
        self.live = live

    def refresh(self, snapshot) -> None:
        return None

    def keep(self, job_key, at_s, procs) -> None:
        return None

    def predict(self, snapshot, requests, runtimes=None):
        return self.live.predict(snapshot, requests, runtimes)

    def runtimes(self, snapshot, requests):
        return self.live.runtimes(snapshot, requests)

    def running_ends(self, snapshot):
        return self.live.running_ends(snapshot)


def shared_predictor(frame) -> LiveBundle:
    """Fitted on the log's first half, as if its jobs had run half their limits (they run
    their whole limits here, so both paths' starts are exact). The predictor then expects the
    running jobs to end before their limits, which the ``sim`` history estimate (requested
    times) does not: at a running job's predicted end the site looks emptier than now, and
    the 30% rule holds some jobs (with the log's own runtimes, all of them whole limits,
    running jobs are predicted to end at their limits and no hold pays). Both paths decide
    with this one predictor, so the comparison is unchanged."""
    past = frame.iloc[: len(frame) // 2].reset_index(drop=True)
    past["run_time"] = np.ceil(past["requested_time"] / 2.0)
    bundle = fit_bundle(
        past, MACHINE, wait_method="sim", bound_method=None, runtime_method="rangeset"
    )
    return LiveBundle(bundle)


def replay(frame, live: LiveBundle):
    setup = prepare(frame, MACHINE, tune_fraction=TUNE, max_runtime_s=LIMIT_S)
    params = MoldingParams(strategy="delay", runtime_model="downey", sigma=1.0, guard=0.0)
    run = evaluate(setup, ["delay"], params, lambda s: FixedPredictor(live))["delay"]
    return setup, run


def live_site(monkeypatch, tmp_path, clock: Clock, live: LiveBundle):
    monkeypatch.setattr(bk, "now", clock.now)
    real_backend_for = bk.backend_for

    def on_clock(site):
        backend = real_backend_for(site)
        backend.clock = clock.ts
        return backend

    monkeypatch.setattr(bk, "backend_for", on_clock)
    monkeypatch.setattr(site_predict, "site_answers", lambda site, history=None: live)
    path = tmp_path / "background.swf"
    path.write_text(BACKGROUND)
    trace = ingest_swf(path, name="one-path-background")
    config = {"speed": 1.0, "runtime_fraction": 1.0, "guard": 0.0, "speedup_sigma": 1.0}
    return create_site(
        {"name": "one-path", "backend": "simulated", "trace": trace, "machine_procs": MACHINE,
         "config": config, "warm_up": False},
        None,
    )  # fmt: skip


def release_due(clock: Clock, site, until: dt.datetime) -> None:
    """Release the held jobs whose hold ends by ``until``, in release order, each at its
    release time (what the release task does on a live site)."""
    while True:
        due = (
            SiteJob.objects.filter(site=site, state=SiteJob.HELD, release_at__lte=until)
            .order_by("release_at", "id")
            .first()
        )
        if due is None:
            return
        clock.move_to(due.release_at)
        assert site_jobs.release_job(due.pk) is not None


def submit_log(clock: Clock, site, frame, n_warmup: int) -> list[SiteJob]:
    """Each job of ``frame`` submitted by its user at its arrival, the site's history synced
    just before (its candidates are the site's own: no ``candidates`` field)."""
    owners = {bk.user_number(n): get_user_model().objects.create_user(n) for n in USERS}
    out = []
    for k, row in enumerate(frame.itertuples()):
        arrival = START + dt.timedelta(seconds=float(row.submit_time))
        release_due(clock, site, arrival - dt.timedelta(microseconds=1))
        clock.move_to(arrival)
        sync_site(site)
        acting = k >= n_warmup
        user, procs = int(row.user_id), int(row.requested_procs)
        data = {
            "procs": procs,
            "time_limit_s": int(row.requested_time),
            "command": "true",
            "name": f"log-{row.job_id}",
            "mold": acting,
            "allow_delay": acting,
        }
        job, created = site_jobs.submit_job(site, owners[user], data, None)
        assert created and job.state != SiteJob.FAILED, job.error
        out.append(job)
    release_due(clock, site, START + dt.timedelta(days=365))
    return out


def with_newcomer(frame):
    """Every job of cat's after the warm-up given to dan, who had none before."""
    frame = frame.copy()
    late = np.arange(len(frame)) >= round(TUNE * len(frame))
    frame.loc[late & (frame["user_id"] == bk.user_number("cat")), "user_id"] = bk.user_number("dan")
    return frame


@pytest.mark.parametrize("newcomer", [False, True], ids=["log", "newcomer"])
def test_a_log_through_the_live_site_gets_the_replays_decisions_job_by_job(
    monkeypatch, settings, tmp_path, newcomer
) -> None:
    settings.QUEUECAST_MAX_TIME_LIMIT_S = LIMIT_S
    frame = read_swf(LOG).jobs
    live = shared_predictor(frame)
    if newcomer:
        frame = with_newcomer(frame)
    setup, run = replay(frame, live)
    clock = Clock()
    site = live_site(monkeypatch, tmp_path, clock, live)
    jobs = submit_log(clock, site, frame, setup.n_warmup)

    clock.move_to(START + dt.timedelta(days=400))
    backend = bk.backend_for(site)
    started = {j.backend_id: j.start_ts for j in backend.jobs_at(clock.ts())}
    out = run.outcome
    assert np.array_equal(setup.requests.submit_s, frame["submit_time"].to_numpy(float))
    for k, job in enumerate(jobs):
        job.refresh_from_db()
        arrival = job.arrived_at
        hold_s = 0.0 if job.release_at is None else (job.release_at - arrival).total_seconds()
        live_row = (job.procs_chosen, job.release_at is not None, round(hold_s, 3))
        replay_hold = float(out.release_s[k] - out.arrival_s[k])
        replay_row = (int(out.procs[k]), replay_hold > 0, round(replay_hold, 3))
        assert live_row == replay_row, f"job {k + 1}: live {live_row}, replay {replay_row}"
        assert job.time_limit_s == out.runtime_s[k], f"job {k + 1}"  # runs its whole limit
        start = started[job.backend_job_id] - START.timestamp()
        assert start == pytest.approx(float(out.start_s[k]), abs=1e-3), f"job {k + 1}"
    molded = int((out.procs != out.original_procs)[setup.n_warmup :].sum())
    held = int((out.release_s > out.arrival_s).sum())
    # the log exercises both rules, else the comparison would prove little
    assert molded >= 5 and held >= 3, (molded, held)
    if newcomer:  # dan's first job was offered the grid, not only its own size
        first = int(np.flatnonzero(frame["user_id"].to_numpy() == bk.user_number("dan"))[0])
        assert len(run.decisions[first]["candidates"]) > 1, run.decisions[first]
