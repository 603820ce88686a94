"""A site's live state as the predictor's snapshot, and a user's request in site seconds."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pandas as pd

from holdqueue.core.backends.base import BackendJob
from holdqueue.models import Site
from holdqueue.services import backends as bk
from holdqueue.services import queue_view
from holdqueue.services.history import history_frame
from holdqueue.services.queue_view import QueueView
from predictor.core.state.request import JobRequest
from predictor.core.state.snapshot import Snapshot, from_live


def snapshot_now(site: Site, when: dt.datetime) -> tuple[Snapshot, QueueView]:
    """The site's live state at ``when`` and the queue view it was built from (the batch
    queue as read at most ``QUEUECAST_QUEUE_VIEW_S`` site seconds before:
    :mod:`holdqueue.services.queue_view`). Its history is read when first read, as it is
    then: a prediction does not read it, so it asks the database nothing about it (the
    history's state was one aggregate query, 9% of a simulated site's answer)."""
    view = queue_view.current(site)
    return live_snapshot(site, when, list(view.jobs), lambda: history_frame(site)), view


def live_snapshot(
    site: Site,
    when: dt.datetime,
    jobs: list[BackendJob],
    history: pd.DataFrame | Callable[[], pd.DataFrame],
) -> Snapshot:
    """The predictor's snapshot of ``jobs`` (the backend's active jobs) and ``history`` (or
    a function making it on first read)."""
    live = bk.live_jobs(site, jobs)
    return from_live(live, bk.site_seconds(site, when), history, machine_procs=site.machine_procs)


def request_for(site: Site, user_name: str, data: dict[str, Any], at: dt.datetime) -> JobRequest:
    return JobRequest(
        user=bk.user_number(user_name),
        procs=int(data["procs"]),
        req_time_s=float(data["time_limit_s"]),
        submit_s=bk.site_seconds(site, at),
    )
