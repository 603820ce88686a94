"""The site's hold queue as rows: the head an arrival may queue behind, and its release time
(seed "End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs",
Section IV-B; the rules are ``jobmolding.core.hold``'s)."""

from __future__ import annotations

import datetime as dt

from django.db.models import F

from holdqueue.models import Site, SiteJob
from jobmolding.core.hold import release_times


def open_hold(site: Site, when: dt.datetime) -> SiteJob | None:
    """The head held now, if any: an arrival in ``[c, f)`` queues behind it."""
    return (
        SiteJob.objects.filter(
            site=site,
            state=SiteJob.HELD,
            head_id=F("id"),
            arrived_at__lte=when,
            release_at__gt=when,
        )
        .order_by("-arrived_at")
        .first()
    )


def follower_release(head: SiteJob, arrived: dt.datetime) -> dt.datetime:
    """A job arriving while ``head`` is held goes at ``f + (a - c)``."""
    at = release_times(
        head.arrived_at.timestamp(), head.release_at.timestamp(), arrived.timestamp()
    )
    return dt.datetime.fromtimestamp(float(at), tz=dt.UTC)
