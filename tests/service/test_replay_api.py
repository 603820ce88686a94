"""The replay API: POST on a trace answers 202, the eager task stores the statistics."""

from __future__ import annotations

import pytest

from pyss_adapter import services
from pyss_adapter.models import Replay
from queuecast.longrun import Status
from tests.service.traces_support import SMALL, api_for, make_user
from traces.models import Trace
from traces.services import ingest_swf

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(alice) -> Trace:
    return ingest_swf(SMALL, name="small", owner=alice)


def start(client, trace: Trace, capture, **body):
    with capture(execute=True):
        return client.post(f"/api/traces/{trace.pk}/replays/", body, format="json")


def test_post_answers_202_with_the_url_and_the_task_stores_statistics(
    alice, small, django_capture_on_commit_callbacks
) -> None:
    client = api_for(alice)
    response = start(client, small, django_capture_on_commit_callbacks, scheduler="easy")
    assert response.status_code == 202
    assert response["Location"] == response.data["url"]
    assert response.data["status"] == Status.PENDING
    detail = client.get(response.data["url"])
    assert detail.status_code == 200
    body = detail.data
    assert body["status"] == Status.DONE and body["progress"] == 1.0
    assert body["statistics"]["all_jobs"]["view"] == "all jobs"
    assert body["statistics"]["pyss"]["view"] == "pyss"
    assert body["statistics"]["run"]["machine_procs"] == 64
    waits = body["statistics"]["wait_histogram"]  # the replay page's wait distribution chart
    assert sum(waits["values"]) == body["statistics"]["all_jobs"]["n_jobs"]
    assert body["utilisation_series"]["bin_s"] == 1800.0
    assert len(body["utilisation_series"]["utilisation"]) >= 1


def test_replay_settings_are_stored_and_used(
    alice, small, django_capture_on_commit_callbacks
) -> None:
    response = start(
        api_for(alice), small, django_capture_on_commit_callbacks,
        scheduler="fcfs", estimates="tsafrir", mode="pyss", processors=32,
    )  # fmt: skip
    replay = Replay.objects.get(pk=response.data["id"])
    assert (replay.scheduler, replay.estimates, replay.mode, replay.processors) == (
        "fcfs", "tsafrir", "pyss", 32,
    )  # fmt: skip
    assert replay.result["run"]["machine_procs"] == 32
    assert replay.result["run"]["estimates"] == "tsafrir"


@pytest.mark.parametrize(
    ("body", "field"),
    [({"processors": 0}, "processors"), ({"scheduler": "sjf"}, "scheduler"),
     ({"estimates": "oracle"}, "estimates"), ({"mode": "pyss2"}, "mode")],
)  # fmt: skip
def test_bad_input_is_400_naming_the_field(alice, small, body, field) -> None:
    response = api_for(alice).post(f"/api/traces/{small.pk}/replays/", body, format="json")
    assert response.status_code == 400
    assert field in response.data
    assert not Replay.objects.exists()


def test_unauthenticated_clients_can_neither_start_nor_read(alice, small) -> None:
    replay = services.new_replay(small, alice, services.ReplaySettings())
    anonymous = api_for(None)
    assert anonymous.post(f"/api/traces/{small.pk}/replays/", {}, format="json").status_code in (
        401, 403,
    )  # fmt: skip
    assert anonymous.get(f"/api/replays/{replay.pk}/").status_code in (401, 403)
    assert anonymous.get("/api/replays/").status_code in (401, 403)


def test_unknown_trace_is_404(alice) -> None:
    assert api_for(alice).post("/api/traces/999/replays/", {}, format="json").status_code == 404


def test_list_and_read_show_own_replays_only_like_evaluations(alice, bob, small) -> None:
    mine = services.new_replay(small, alice, services.ReplaySettings())
    services.new_replay(small, bob, services.ReplaySettings(scheduler="fcfs"))
    listed = api_for(alice).get("/api/replays/")
    assert [r["id"] for r in listed.data["results"]] == [mine.pk]
    assert api_for(alice).get(f"/api/replays/{mine.pk}/").status_code == 200
    assert api_for(bob).get(f"/api/replays/{mine.pk}/").status_code == 404
    staff = make_user("carol", staff=True)
    assert len(api_for(staff).get("/api/replays/").data["results"]) == 2


def test_only_owner_or_staff_deletes_a_replay(alice, bob, small) -> None:
    replay = services.new_replay(small, alice, services.ReplaySettings())
    assert api_for(bob).delete(f"/api/replays/{replay.pk}/").status_code == 404  # not visible
    assert api_for(alice).delete(f"/api/replays/{replay.pk}/").status_code == 204
    assert not Replay.objects.exists()


def test_a_duplicate_task_delivery_is_skipped(alice, small) -> None:
    replay = services.new_replay(small, alice, services.ReplaySettings())
    assert services.run_pending_replay(replay.pk) == Status.DONE
    assert services.run_pending_replay(replay.pk) == "skipped"


def test_a_replay_that_cannot_run_fails_with_the_reason(alice, small) -> None:
    # pyss mode leaves a 1-second record's processors uncapped (job 5: run time -1,
    # 16 processors): a 1-processor machine can never start it.
    replay = services.new_replay(small, alice, services.ReplaySettings(mode="pyss", processors=1))
    assert services.run_pending_replay(replay.pk) == Status.FAILED
    replay.refresh_from_db()
    assert "block the queue forever" in replay.error


def test_replaying_a_trace_that_is_not_done_is_409(alice, small) -> None:
    Trace.objects.filter(pk=small.pk).update(status=Status.RUNNING)
    response = api_for(alice).post(f"/api/traces/{small.pk}/replays/", {}, format="json")
    assert response.status_code == 409
