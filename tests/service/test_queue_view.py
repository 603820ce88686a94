"""A site's batch queue is asked at most once per ``QUEUECAST_QUEUE_VIEW_S`` site seconds and
shared by the answers about "now" (holdqueue/services/queue_view.py), and a change Queuecast
makes to the queue is seen by the next answer. Each test's site is new, so its views are
keyed apart from any other's (the cache is not cleared: on Redis that would empty the
whole database)."""

from __future__ import annotations

import datetime as dt

import pytest

from holdqueue.services import backends as bk
from holdqueue.services import queue_view
from tests.service import test_sites_support as sup
from tests.service.test_site_pages import page_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def asks(monkeypatch):
    """The batch-system reads made through ``backends.active_jobs``, counted."""
    real = bk.active_jobs
    calls: list[int] = []

    def counted(site, backend=None):
        calls.append(site.pk)
        return real(site, backend)

    monkeypatch.setattr(bk, "active_jobs", counted)
    return calls


@pytest.fixture
def client():
    """An API client logged in as alice."""
    return sup.api_for(sup.make_user("alice"))


def status(client, site) -> dict:
    res = client.get(f"/api/sites/{site.pk}/")
    assert res.status_code == 200, res.data
    return res.data


def test_answers_within_the_bound_share_one_read_and_say_when(settings, asks, client) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 60
    site = sup.simulated_site()
    first, second = status(client, site), status(client, site)
    queue = client.get(f"/api/sites/{site.pk}/queue/")
    assert queue.status_code == 200, queue.data
    answer = client.post(
        f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 600}, format="json"
    )
    assert answer.status_code == 200, answer.data
    assert len(asks) == 1
    read_at = first["queue_read_at"]
    assert read_at == second["queue_read_at"] == queue.data["queue_read_at"]
    assert answer.data["queue_read_at"] == read_at <= second["at"]


def test_a_view_older_than_the_bound_is_read_again(settings, asks, monkeypatch, client) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 5
    site = sup.simulated_site()
    status(client, site)
    start = bk.now()
    monkeypatch.setattr(bk, "now", lambda: start + dt.timedelta(seconds=4))
    status(client, site)
    assert len(asks) == 1
    monkeypatch.setattr(bk, "now", lambda: start + dt.timedelta(seconds=6))
    later = status(client, site)
    assert len(asks) == 2
    assert later["queue_read_at"].startswith((start + dt.timedelta(seconds=6)).isoformat()[:19])


def test_zero_asks_the_batch_system_on_every_answer(settings, asks, client) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 0
    site = sup.simulated_site()
    for _ in range(3):
        status(client, site)
    assert len(asks) == 3


def test_a_faster_simulated_clock_keeps_a_view_for_less_wall_time(settings) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 5
    assert queue_view.max_age_s(sup.simulated_site("slow")) == 5.0
    assert queue_view.max_age_s(sup.simulated_site("fast", speed=100.0)) == pytest.approx(0.05)


def test_a_job_queuecast_submits_is_in_the_next_answer(settings, asks, monkeypatch, client) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 60
    sup.FakePredictor().install(monkeypatch)
    site = sup.simulated_site()
    before = status(client, site)
    sent = client.post(
        f"/api/sites/{site.pk}/jobs/", sup.job_body(mold=False, allow_delay=False), format="json"
    )
    assert sent.status_code == 201, sent.data
    reads = len(asks)
    after = status(client, site)
    assert len(asks) == reads + 1  # the view read before the submission is not served
    mine = client.get(f"/api/sites/{site.pk}/queue/").data["jobs"]
    assert any(j["mine"] for j in mine)
    assert after["queue_read_at"] > before["queue_read_at"]


def test_a_change_made_while_reading_makes_that_read_stale(settings, monkeypatch) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 60
    site = sup.simulated_site()
    real = bk.active_jobs
    calls: list[int] = []

    def racing(s, backend=None):
        calls.append(1)
        if len(calls) == 1:  # another process submits while this one asks
            queue_view.changed(s)
        return real(s, backend)

    monkeypatch.setattr(bk, "active_jobs", racing)
    queue_view.current(site)
    queue_view.current(site)
    queue_view.current(site)
    assert len(calls) == 2  # the second read is kept; the first was made under an old token


def test_an_edited_site_does_not_read_the_old_view(settings, asks) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 60
    site = sup.simulated_site()
    queue_view.current(site)
    queue_view.current(site)
    site.machine_procs += 1
    site.save()
    queue_view.current(site)
    assert len(asks) == 2


def test_the_site_page_says_when_the_queue_was_read(settings, asks) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 7
    site = sup.simulated_site()
    page = page_for(sup.make_user("alice")).get(f"/sites/{site.pk}/").content.decode()
    assert len(asks) == 1  # the status cards and the queue table read one view
    read = queue_view.current(site).read_at.strftime("%H:%M:%S")
    assert f"The batch queue as read at {read} UTC" in page
    assert "at most every 7 s of the site's clock" in page


class BrokenCache:
    """A cache whose every call fails (Redis down, a full disk)."""

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise OSError(28, "No space left on device")

        return fail


def test_a_cache_that_fails_never_fails_an_answer(settings, asks, monkeypatch, client) -> None:
    settings.QUEUECAST_QUEUE_VIEW_S = 60
    site = sup.simulated_site()
    monkeypatch.setattr(queue_view, "caches", {queue_view.CACHE: BrokenCache()})
    status(client, site)
    status(client, site)
    assert len(asks) == 2  # nothing kept: each answer asked the batch system
    queue_view.changed(site)  # logged, not raised
