"""A site's batch queue, asked at most once per ``QUEUECAST_QUEUE_VIEW_S`` seconds of the
site's clock and shared by every web and worker process (issue 18: per-instant work once
per instant, not once per request).

Every answer about a site "now" (a prediction, where to submit, the status and the queue
pages) reads the batch system's waiting and running jobs. On Slurm that is one
``squeue --json``: a process started, a controller call, a JSON answer parsed (12 ms with
21 jobs on the development node; a queue of thousands takes seconds, and a controller asked
hundreds of times a second by one service slows every user's ``squeue``). So the jobs read
are kept as a *view*: a request whose view is at most ``QUEUECAST_QUEUE_VIEW_S`` site
seconds old reads it instead (a simulated site whose clock runs faster keeps it for
proportionally less wall time), and the answer says when it was read (``queue_read_at``).

A change this service makes (a job submitted, released or cancelled) is seen at once by
every process: it replaces the site's *change token*, and a view is served only under the
token it was read under. A view read while a change was made is therefore never served
after it. Jobs that start, end or are submitted outside Queuecast show within the bound.
The arrival decision of a submitted job and the site's sync read the batch system itself.
``QUEUECAST_QUEUE_VIEW_S=0`` asks it on every request, as before.

The views live in the ``sites`` cache (Redis when there is one, else files shared by the
processes of this checkout: ``queuecast/settings.py``). A cache that cannot be read or
written (Redis down, a full disk) is logged and the answer asks the batch system.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches

from holdqueue.core.backends.base import BackendJob
from holdqueue.models import Site
from holdqueue.services import backends as bk

CACHE = "sites"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueueView:
    """The site's active jobs as read at ``read_at`` under change token ``token``."""

    jobs: tuple[BackendJob, ...]
    read_at: dt.datetime
    token: str

    @property
    def key(self) -> tuple[dt.datetime, str]:
        """Equal for the same read: what is learnt from the database with the queue (the told
        jobs that started, ``holdqueue.services.told.told_now``) is read again with it."""
        return (self.read_at, self.token)


def max_age_s(site: Site) -> float:
    """How many wall seconds a view serves: ``QUEUECAST_QUEUE_VIEW_S`` of the site's clock
    (a simulated site's clock runs ``speed`` times real time)."""
    bound = float(getattr(settings, "QUEUECAST_QUEUE_VIEW_S", 0))
    if site.backend == "simulated":
        bound /= bk.simulated_options(site).get("speed", bk.SPEED)
    return bound


def current(site: Site) -> QueueView:
    """The site's queue as last read when that was at most :func:`max_age_s` ago and no
    change was made since; else read now (and kept for the next request)."""
    bound = max_age_s(site)
    if bound <= 0:
        return QueueView(tuple(bk.active_jobs(site)), bk.now(), "")
    keys = _keys(site)
    try:
        got = caches[CACHE].get_many([keys[0], keys[1]])
    except Exception as exc:  # the cache only saves work: an answer never fails with it
        log.warning("queue view of site %s not read (%s): asking the batch system", site, exc)
        return QueueView(tuple(bk.active_jobs(site)), bk.now(), "")
    token, view = got.get(keys[0], ""), got.get(keys[1])
    if isinstance(view, QueueView) and view.token == token:
        age = (bk.now() - view.read_at).total_seconds()
        if 0.0 <= age <= bound:
            return view
    return _read(site, keys, token, bound)


def changed(site: Site) -> None:
    """This service changed the site's queue (submitted, released or cancelled a job): no
    process serves a view read before. A cache that cannot be written is logged, not
    raised (the change itself is done): views read before it may then be served until
    they are :func:`max_age_s` old."""
    try:
        caches[CACHE].set(_keys(site)[0], uuid.uuid4().hex, timeout=None)
    except Exception as exc:
        log.warning("site %s changed but its queue view was not renewed: %s", site, exc)


def _read(site: Site, keys: tuple[str, str], token: str, bound: float) -> QueueView:
    """Ask the batch system; the view is stamped with the time *before* asking and the token
    read before it, so a change made meanwhile makes it stale at once."""
    read_at = bk.now()
    view = QueueView(tuple(bk.active_jobs(site)), read_at, token)
    if bound > 0:
        try:
            caches[CACHE].set(keys[1], view, timeout=max(1, int(bound) + 1))
        except Exception as exc:  # e.g. a full disk: the next answer asks again
            log.warning("queue view of site %s not kept: %s", site, exc)
    return view


def _keys(site: Site) -> tuple[str, str]:
    """(change token key, view key) of this site as configured now: a site edited (its
    backend, partition, config, size, trace, clock or broken state) or a new site that got
    a deleted one's id never reads an older view."""
    setup = json.dumps(
        [site.backend, site.partition, site.config, site.machine_procs, site.trace_id,
         site.epoch.isoformat(), site.broken, site.created_at.isoformat()],
        sort_keys=True, default=str,
    )  # fmt: skip
    digest = hashlib.sha256(setup.encode()).hexdigest()[:16]
    return f"queue-token:{site.pk}:{digest}", f"queue-view:{site.pk}:{digest}"
