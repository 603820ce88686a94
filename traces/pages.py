"""Browser pages: the trace list with an upload form, a trace's detail, delete.

They call the same services as the API; the list and a trace being ingested
refresh themselves until the ingest is over.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from queuecast import charts, humanize
from queuecast.errors import QueuecastError, in_use_message
from queuecast.longrun import Status
from traces import services
from traces.core.dashboard import dashboard
from traces.models import Trace
from traces.permissions import can_change
from traces.views import SwfRenderer, TraceViewSet

app_name = "traces"
REFRESH_S = 3
DASHBOARD_CACHE_S = 24 * 3600
BUSY = (Status.PENDING, Status.RUNNING)


class UploadForm(forms.Form):
    file = forms.FileField(help_text="SWF log, .swf or .swf.gz")
    name = forms.CharField(max_length=200, required=False, help_text="Default: the file name")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    lenient = forms.BooleanField(required=False, help_text="Skip malformed lines, report them")


@login_required
def trace_list(request: HttpRequest, form: UploadForm | None = None) -> HttpResponse:
    traces = Trace.objects.select_related("owner").order_by("-created_at")
    busy = traces.filter(status__in=BUSY).exists()
    context = {
        "nav": "traces",
        "traces": traces,
        "form": form or UploadForm(),
        "refresh_s": REFRESH_S if busy else None,
    }
    return render(request, "traces/list.html", context)


@login_required
@require_POST
def trace_upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES)
    if form.is_valid():
        data = dict(form.cleaned_data)
        try:
            trace = services.accept_upload(data.pop("file"), owner=request.user, **data)
        except QueuecastError as exc:
            form.add_error(
                exc.context.get("field") if exc.context.get("field") in form.fields else None,
                exc.detail,
            )
        else:
            messages.info(request, f"Uploaded {trace.name}; ingest started.")
            return redirect("traces:trace-detail", pk=trace.pk)
    return trace_list(request, form=form)


@login_required
def trace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_object_or_404(Trace.objects.select_related("owner"), pk=pk)
    context = {
        "nav": "traces",
        "trace": trace,
        "report": trace.ingest_report or {},
        "can_change": can_change(request.user, trace),
        "refresh_s": REFRESH_S if trace.status in BUSY else None,
        "charts": dashboard_charts(trace) if trace.status == Status.DONE else {},
    }
    return render(request, "traces/detail.html", context)


def dashboard_charts(trace: Trace) -> dict[str, Any]:
    """The trace dashboard's charts, computed once per stored trace (its jobs never change
    after the ingest; reading 200k rows takes seconds, the cached charts milliseconds)."""
    key = f"trace-dashboard:{trace.pk}:{trace.finished_at and trace.finished_at.timestamp()}"
    return cache.get_or_set(key, lambda: build_dashboard_charts(trace), DASHBOARD_CACHE_S)


def build_dashboard_charts(trace: Trace) -> dict[str, Any]:
    """The four charts (``traces.core.dashboard``) with humanised labels."""
    board = dashboard(services.jobs_frame(trace), trace.machine_procs)
    if not board["jobs"]:
        return {}
    days = [round(float(d), 3) for d in board["bin_days"]]
    per = humanize.duration(board["bin_s"])
    sizes, wait = board["sizes"], board["wait"]
    return {
        "bin": per,
        "jobs": charts.bar(
            [f"{d:.2f}".rstrip("0").rstrip(".") for d in days],
            {f"jobs per {per}": board["jobs_per_bin"].tolist()},
            x_title="days since the first submission",
            y_title="jobs",
        ),
        "load": charts.line(
            days,
            {"offered load": board["load"].round(4).tolist()},
            x_title="days since the first submission",
            y_title="work submitted / machine capacity",
            y_format="percent",
        ),
        "wait": charts.bar(
            list(wait["labels"]),
            {"jobs": wait["jobs"].tolist()},
            x_title="wait in the log",
            y_title="jobs",
        ),
        "sizes": charts.bar(
            list(sizes["labels"]),
            {
                "share of jobs": sizes["job_share"].round(4).tolist(),
                "share of CPU-hours": sizes["cpu_hour_share"].round(4).tolist(),
            },
            x_title="processors",
            y_format="percent",
        ),
        "wait_known": wait["known"],
    }


@login_required
@require_POST
def trace_delete(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_object_or_404(Trace, pk=pk)
    if not can_change(request.user, trace):
        raise PermissionDenied("Only the trace's owner or a staff user may delete it.")
    try:
        trace.delete()
    except ProtectedError as exc:  # a live site replays it
        messages.error(request, f"{trace.name} was not deleted: {in_use_message(exc)}.")
        return redirect("traces:trace-detail", pk=trace.pk)
    messages.info(request, f"Deleted {trace.name}.")
    return redirect("traces:trace-list")


# The API's router always appends "/" (DRF takes trailing_slash as a bool), so the
# export's file-like address /api/traces/{id}/export.swf is routed here as well.
export_swf = TraceViewSet.as_view({"get": "export"}, detail=True, renderer_classes=[SwfRenderer])

urlpatterns = [
    path("api/traces/<str:pk>/export.swf", export_swf, name="export-swf"),
    path("", trace_list, name="trace-list"),
    path("upload/", trace_upload, name="trace-upload"),
    path("traces/<int:pk>/", trace_detail, name="trace-detail"),
    path("traces/<int:pk>/delete/", trace_delete, name="trace-delete"),
]
