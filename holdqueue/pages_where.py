"""The where-to-submit page: one form, the answer of ``POST /api/predict/`` as a table.

The form takes times as the predict page does ("2h 30min"); the view validates with the
API's serializer and calls the API's service (``holdqueue.services.where``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from holdqueue.api_where import WhereQuerySerializer
from holdqueue.services.where import where_to_submit
from predictor.pages.predict import FITTING_REFRESH_S
from queuecast import humanize
from queuecast.errors import QueuecastError

CONFIDENCES = [(c, f"{round(c * 100)}%") for c in (0.5, 0.8, 0.9, 0.95)]


class WhereForm(forms.Form):
    procs = forms.IntegerField(min_value=1, label="Processors", initial=16)
    time_limit = forms.CharField(
        label="Time limit", initial="2h", help_text="e.g. 2h 30min, 1:30, 5400 (seconds)"
    )
    traces = forms.BooleanField(
        required=False, label="Also stored traces", help_text="Each at its last submission."
    )
    confidence = forms.TypedChoiceField(
        choices=CONFIDENCES, coerce=float, initial=0.9, label="Interval confidence"
    )

    def clean_time_limit(self) -> float:
        try:
            seconds = humanize.parse_duration(self.cleaned_data["time_limit"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        if seconds < 1:
            raise forms.ValidationError("must be at least 1 s")
        return seconds


def answer_for(form: WhereForm, request: HttpRequest) -> dict[str, Any] | None:
    data = form.cleaned_data
    body = {"procs": data["procs"], "time_limit_s": int(round(data["time_limit"])),
            "confidence": data["confidence"], "traces": bool(data["traces"])}  # fmt: skip
    query = WhereQuerySerializer(data=body, context={"request": request})
    if not query.is_valid():
        names = {"time_limit_s": "time_limit"}
        for field, errors in query.errors.items():
            form.add_error(names.get(field, field if field in form.fields else None), errors)
        return None
    try:
        return where_to_submit(request.user, query.validated_data)
    except QueuecastError as exc:
        form.add_error(None, exc.detail)
        return None


@login_required
def where(request: HttpRequest) -> HttpResponse:
    """GET without ``procs`` shows the form; with it, the answers sorted by finish."""
    bound = "procs" in request.GET
    form = WhereForm(request.GET if bound else None)
    context: dict[str, Any] = {"form": form, "nav": "where"}
    if bound and form.is_valid():
        context["where"] = answer_for(form, request)
        if context["where"] and any(s["being_fitted"] for s in context["where"]["skipped"]):
            context["refresh_s"] = FITTING_REFRESH_S  # asks again until every model is stored
    return render(request, "sites/where.html", context)


urlpatterns = [path("where/", where, name="where-page")]
