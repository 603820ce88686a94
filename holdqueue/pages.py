"""Browser pages of live sites: the site (live queue, your jobs, submit), a job (held or
submitted, the Slurm id, the molding and delay decision, release/cancel) and the hold queue.

Views read through the same services as ``/api/sites/...``; submitting, releasing and
cancelling are done by the page's script through that API, so there is one code path.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from holdqueue import pages_where
from holdqueue.models import Site, SiteJob
from holdqueue.pages_decision import sentences_for, start_check
from holdqueue.services import jobs as job_services
from holdqueue.services import live
from holdqueue.services.backends import run_note, simulated_hold_s
from holdqueue.services.predict import why_held
from queuecast.errors import QueuecastError
from queuecast.permissions import can_change

LIST_LIMIT = 50


def live_or_error(call: Any, site: Site) -> tuple[Any, str]:
    """Ask the backend; a site that does not answer gives its reason, not a 500."""
    try:
        return call(site), ""
    except QueuecastError as exc:
        return None, exc.detail


@login_required
def site_list(request: HttpRequest) -> HttpResponse:
    rows = []
    for site in Site.objects.all():
        status, error = live_or_error(live.site_status, site)
        rows.append({"site": site, "status": status, "error": error})
    return render(request, "sites/list.html", {"nav": "sites", "rows": rows})


@login_required
def site_detail(request: HttpRequest, pk: int) -> HttpResponse:
    site = get_object_or_404(Site, pk=pk)
    status, error = live_or_error(live.site_status, site)
    queue, _ = (
        live_or_error(lambda s: live.queue_body(s, request.user), site)
        if not error
        else (None, error)
    )
    context = {
        "nav": "sites",
        "site": site,
        "status": status,
        "queue": queue,
        "error": error,
        "jobs": job_services.visible_jobs(site, request.user)[:LIST_LIMIT],
        "run_note": run_note(site),
        "queue_view_s": settings.QUEUECAST_QUEUE_VIEW_S,
        "next_url": reverse("site-job-page", args=[site.pk, 0]).replace("/0/", "/{id}/"),
    }
    return render(request, "sites/detail.html", context)


@login_required
def job_detail(request: HttpRequest, pk: int, jid: int) -> HttpResponse:
    site = get_object_or_404(Site, pk=pk)
    try:
        job = job_services.get_job(site, request.user, jid)
    except QueuecastError as exc:
        raise Http404(exc.detail) from exc
    context = {"nav": "sites", "site": site, "job": job, **decision_view(job.decision or {}),
               "sentences": sentences_for(job), "can_act": job.state == SiteJob.HELD,
               "why": why_held(site, job), "start_check": start_check(job),
               "simulated_hold_s": simulated_hold_s(site, job.time_limit_s)}  # fmt: skip
    return render(request, "sites/job.html", context)


@login_required
def hold_queue(request: HttpRequest, pk: int) -> HttpResponse:
    site = get_object_or_404(Site, pk=pk)
    held = job_services.hold_queue(site).select_related("owner")
    rows = [{"job": j, "sees": can_change(request.user, j)} for j in held]
    return render(request, "sites/holdqueue.html", {"nav": "sites", "site": site, "rows": rows})


def decision_view(decision: dict[str, Any]) -> dict[str, Any]:
    """The molding candidates with the chosen one marked, and the delay comparison."""
    molding = decision.get("molding") or {}
    chosen = molding.get("chosen_procs")
    candidates = [{**c, "chosen": c.get("procs") == chosen} for c in molding.get("candidates", [])]
    return {"molding": molding, "candidates": candidates, "delay": decision.get("delay") or {}}


urlpatterns = [
    path("sites/", site_list, name="site-list-page"),
    path("sites/<int:pk>/", site_detail, name="site-page"),
    path("sites/<int:pk>/jobs/<int:jid>/", job_detail, name="site-job-page"),
    path("sites/<int:pk>/holdqueue/", hold_queue, name="holdqueue-page"),
    *pages_where.urlpatterns,
]
