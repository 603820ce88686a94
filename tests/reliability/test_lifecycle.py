"""The long-run lifecycle: claims, leases, take-over of a dead worker's row, the reaper,
the memory ceiling and the time limit, and a queue that refuses the task."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from pyss_adapter.models import Replay
from queuecast import longrun
from queuecast.heartbeat import BEATER, worker_id
from queuecast.longrun import Status, execute
from queuecast.models import RunLease
from queuecast.reaper import reap
from tests.service.traces_support import SMALL, make_user
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture
def replay():
    alice = make_user("alice")
    trace = ingest_swf(SMALL, name="small", owner=alice)
    return Replay.objects.create(trace=trace, owner=alice)


def dead_worker() -> str:
    """The identity of a process that ran on this host and has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return worker_id(child.pid)


def leave_running(row, worker: str, beat_age_s: float = 0.0) -> RunLease:
    """A row as a worker leaves it when it is killed mid-run (the lease token is its id)."""
    type(row).objects.filter(pk=row.pk).update(status=Status.RUNNING, started_at=timezone.now())
    beat = timezone.now() - timedelta(seconds=beat_age_s)
    return RunLease.objects.create(
        run_label=row._meta.label_lower,
        run_id=row.pk,
        token=f"old-{row.pk}",
        worker=worker,
        heartbeat_at=beat,
    )


def test_claim_takes_a_pending_row_once_and_leases_it(replay) -> None:
    first = Replay.claim(replay.pk)
    assert first is not None and first.attempt == 1
    assert Replay.claim(replay.pk) is None  # a duplicate delivery: the holder is alive
    lease = RunLease.objects.get()
    assert (lease.run_label, lease.run_id, lease.worker) == ("pyss_adapter.replay", replay.pk,
                                                             worker_id())  # fmt: skip
    assert first.finish(result={"x": 1})
    replay.refresh_from_db()
    assert replay.status == Status.DONE and not RunLease.objects.exists()
    BEATER.remove(first.token)


def test_a_redelivered_run_whose_worker_died_runs_again(replay) -> None:
    leave_running(replay, dead_worker())
    assert (
        execute(Replay, replay.pk, lambda claim: {"result": {"attempt": claim.attempt}}) == "done"
    )
    replay.refresh_from_db()
    assert replay.result == {"attempt": 2}


def test_a_redelivered_run_whose_heartbeat_stopped_runs_again(replay, settings) -> None:
    leave_running(replay, "another-host:12:34", beat_age_s=settings.QUEUECAST_RUN_STALE_S + 1)
    assert execute(Replay, replay.pk, lambda claim: {"result": {}}) == "done"


def test_a_run_whose_worker_lives_is_left_to_it(replay) -> None:
    leave_running(replay, "another-host:12:34", beat_age_s=1)
    assert execute(Replay, replay.pk, lambda claim: {"result": {}}) == "skipped"
    assert Replay.objects.get(pk=replay.pk).status == Status.RUNNING


def test_reaper_fails_the_runs_of_dead_workers_and_only_those(replay, settings) -> None:
    other = Replay.objects.create(trace=replay.trace, owner=replay.owner)
    silent = Replay.objects.create(trace=replay.trace, owner=replay.owner)
    leave_running(replay, dead_worker())
    leave_running(other, "another-host:1:2", beat_age_s=1)
    leave_running(silent, "another-host:3:4", beat_age_s=settings.QUEUECAST_RUN_STALE_S + 5)
    reaped = reap()
    assert len(reaped) == 2
    statuses = dict(Replay.objects.values_list("pk", "status"))
    assert statuses == {replay.pk: "failed", other.pk: "running", silent.pk: "failed"}
    assert "process is gone" in Replay.objects.get(pk=replay.pk).error
    assert "no heartbeat for" in Replay.objects.get(pk=silent.pk).error


def test_reaper_fails_an_old_running_row_without_a_lease(replay, settings) -> None:
    old = timezone.now() - timedelta(seconds=settings.QUEUECAST_RUN_STALE_S + 1)
    Replay.objects.filter(pk=replay.pk).update(status=Status.RUNNING, started_at=old)
    assert len(reap()) == 1
    assert Replay.objects.get(pk=replay.pk).status == Status.FAILED


def test_heartbeat_refreshes_the_leases_of_this_process(replay) -> None:
    claim = Replay.claim(replay.pk)
    RunLease.objects.update(heartbeat_at=timezone.now() - timedelta(hours=1))
    BEATER._beat({claim.token})
    assert timezone.now() - RunLease.objects.get().heartbeat_at < timedelta(seconds=5)
    claim.fail("test over")
    BEATER._beat({claim.token})  # a released lease is dropped from the beater
    assert claim.token not in BEATER.tokens


def test_a_run_past_its_time_limit_fails_with_the_reason(replay, settings) -> None:
    settings.QUEUECAST_RUN_TIME_LIMIT_S = 1

    def slow(claim):
        claim.deadline.started -= 5  # as if five seconds had passed
        claim.progress(0.5)

    assert execute(Replay, replay.pk, slow) == "failed"
    assert "time limit reached" in Replay.objects.get(pk=replay.pk).error


def test_a_run_past_its_memory_ceiling_fails_with_the_reason(replay, settings) -> None:
    settings.QUEUECAST_RUN_MEMORY_MB = 256

    def greedy(claim):
        return {"result": {"n": int(np.ones(2**30, dtype=np.float64).sum())}}  # 8 GB

    assert execute(Replay, replay.pk, greedy) == "failed"
    assert "memory ceiling reached" in Replay.objects.get(pk=replay.pk).error
    assert int(np.ones(2**20).sum()) == 2**20  # the ceiling is lifted afterwards


def test_a_crash_that_cannot_be_recorded_is_reaped_later(replay, monkeypatch, settings) -> None:
    def boom(claim):
        raise RuntimeError("bug")

    monkeypatch.setattr(longrun.Claim, "fail", lambda self, reason: 1 / 0)  # database down
    assert execute(Replay, replay.pk, boom) == "running"
    monkeypatch.undo()
    later = timezone.now() + timedelta(seconds=settings.QUEUECAST_RUN_STALE_S + 1)
    assert len(reap(later)) == 1  # no heartbeat any more: failed within the stated bound
    assert Replay.objects.get(pk=replay.pk).status == Status.FAILED


def test_a_queue_that_refuses_the_task_fails_the_run_and_says_503(
    replay, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    task = longrun.task_named("pyss_adapter.tasks.run_replay")

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(task, "delay", refuse)
    with pytest.raises(longrun.QueueUnavailable), django_capture_on_commit_callbacks(execute=True):
        longrun.enqueue(replay, "pyss_adapter.tasks.run_replay")
    replay.refresh_from_db()
    assert replay.status == Status.FAILED and "task queue is unavailable" in replay.error
