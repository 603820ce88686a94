"""Sites that cannot work at all, and what happens to their jobs.

A simulated site replays a stored trace; without it (deleted before traces were protected,
or an ingest that left it empty) the site has no cluster to submit to. Such a site is
marked *broken* with the reason (``Site.broken``, shown by the API), new jobs are refused
(409), and the jobs it holds are failed with that reason instead of being retried forever.
A job caught in ``submitting`` is settled from the simulated cluster's own rows: submitted
if the cluster has its tag, else failed. Traces are protected now (``on_delete=PROTECT``:
a user cannot delete a trace a site replays), so this is the safety net, not the rule.
"""

from __future__ import annotations

import logging

from django.db import transaction

from holdqueue.models import SimulatedSubmission, Site, SiteJob
from holdqueue.services import backends as bk
from queuecast.longrun import Status
from traces.models import Trace

log = logging.getLogger(__name__)


def site_problem(site: Site) -> str | None:
    """Why ``site`` cannot work at all, or None (a batch system that is down is not broken)."""
    if site.backend != "simulated":
        return None
    if site.trace_id is None:
        return "its trace was deleted, so there is no workload to replay"
    trace = Trace.objects.filter(pk=site.trace_id).first()
    if trace is None:
        return "its trace was deleted, so there is no workload to replay"
    if trace.status != Status.DONE or not trace.job_count:
        return f"its trace {trace.name} holds no jobs to replay (status {trace.status})"
    return None


def mark_broken(site: Site, reason: str) -> int:
    """Record ``reason`` and settle the site's held and submitting jobs; how many changed."""
    message = f"site {site.name} is broken: {reason}"
    now = bk.now()
    with transaction.atomic():
        Site.objects.filter(pk=site.pk).update(broken=reason)
        changed = SiteJob.objects.filter(site=site, state=SiteJob.HELD).update(
            state=SiteJob.FAILED, error=message, updated_at=now
        )
        for job in SiteJob.objects.filter(site=site, state=SiteJob.SUBMITTING):
            got = SimulatedSubmission.objects.filter(site=site, tag=job.tag).first()
            fields = (
                {"state": SiteJob.SUBMITTED, "backend_job_id": f"q{got.pk}", "submitted_at": now}
                if got is not None
                else {"state": SiteJob.FAILED, "error": message}
            )
            changed += SiteJob.objects.filter(pk=job.pk, state=SiteJob.SUBMITTING).update(
                in_doubt=False, updated_at=now, **fields
            )
    site.broken = reason
    log.error("%s (%d jobs settled)", message, changed)
    return changed


def check_site(site: Site) -> str | None:
    """Mark ``site`` broken (or fine again); returns its problem."""
    problem = site_problem(site)
    held = SiteJob.objects.filter(site=site, state__in=(SiteJob.HELD, SiteJob.SUBMITTING))
    if problem and (not site.broken or held.exists()):
        mark_broken(site, problem)
    elif not problem and site.broken:
        Site.objects.filter(pk=site.pk).update(broken="")
        site.broken = ""
    return problem
