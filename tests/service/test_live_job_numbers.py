"""Live jobs get one distinct job number each: queue starts are matched back to jobs by it,
and the simulated site's trace jobs (``t0-2``) and Queuecast's (``q2``) share digits."""

from __future__ import annotations

import time

import pytest

from holdqueue.core.backends.base import BackendJob
from holdqueue.services import backends as bk
from tests.service.test_sites_support import simulated_site

pytestmark = pytest.mark.django_db


def test_job_numbers_keep_distinct_digits_and_renumber_clashes_above_them() -> None:
    assert bk.job_numbers(["1001", "1002"]) == [1001, 1002]  # a Slurm queue as it is
    assert bk.job_numbers(["t0-2", "q2", "q3", "x"]) == [2, 4, 3, 5]


def test_a_trace_job_and_a_submitted_job_with_the_same_digits_are_two_live_jobs() -> None:
    site = simulated_site()
    now = time.time()

    def job(backend_id: str, state: str) -> BackendJob:
        return BackendJob(backend_id, "", "", "u", 8, 600.0, state, "", now - 60, now - 30)

    jobs = [job("t0-2", "waiting"), job("q1", "running"), job("q2", "waiting")]
    ids = [lj.request.job_id for lj in bk.live_jobs(site, jobs)]
    assert len(set(ids)) == 3, ids
