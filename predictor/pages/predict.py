"""Browser pages of the predictor: the predict page (a job's wait, runtime and finish).

The view validates the form with the API's own serializer and calls the same services
as ``POST /api/traces/{id}/predictions/wait`` and ``.../runtime``; this module only turns
the answers into dates, humanised durations and a chart.
"""

from __future__ import annotations

import math
import re
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import path

from predictor.core.wait.local_interval import level_words
from predictor.core.wait.p_within import NEIGHBOURS
from predictor.models import EvaluationRun
from predictor.pages import rangeset
from predictor.pages import runs as runs_page
from predictor.serializers.wait import WaitQuerySerializer
from predictor.services import evaluations
from predictor.services import runtime as runtime_service
from predictor.services.background_fit import ModelNotReady
from queuecast import humanize, page_parts
from queuecast.errors import QueuecastError
from queuecast.longrun import Status
from traces.models import Trace

WAIT_FIELDS = set(WaitQuerySerializer().fields)
CONFIDENCES = [(c, f"{round(c * 100)}%") for c in (0.5, 0.8, 0.9, 0.95, 0.99)]


class PredictForm(forms.Form):
    site = forms.ModelChoiceField(
        queryset=None,  # the live sites' app fills it (queuecast.page_parts.PREDICT_SITE)
        required=False,
        label="Live site",
        help_text="Predict for submitting now to a site Queuecast fronts.",
    )
    trace = forms.ModelChoiceField(
        queryset=Trace.objects.filter(status=Status.DONE).order_by("name"),
        required=False,
        help_text="Or a stored trace: the machine's history at an instant of it.",
    )
    at_days = forms.FloatField(
        required=False,
        min_value=0,
        label="Submit instant (days after the trace start)",
        help_text="Blank: the trace's last submission (the most history).",
    )
    procs = forms.IntegerField(min_value=1, label="Processors", initial=16)
    time_limit = forms.CharField(
        label="Time limit", initial="2h", help_text="e.g. 2h 30min, 1:30, 5400 (seconds)"
    )
    user_id = forms.IntegerField(
        min_value=-1, initial=-1, label="User id", help_text="The trace's user number; -1: unknown."
    )
    queue_id = forms.IntegerField(
        min_value=-1,
        initial=-1,
        label="Queue id",
        required=False,
        help_text="-1: the trace's only queue.",
    )
    confidence = forms.TypedChoiceField(
        choices=CONFIDENCES, coerce=float, initial=0.9, label="Interval confidence"
    )
    within = forms.CharField(
        required=False,
        label="Start within",
        help_text="Optional, e.g. 1h: the chance it starts that soon.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sites = page_parts.part(page_parts.PREDICT_SITE, "site")
        if sites is None:
            del self.fields["site"]
        else:
            self.fields["site"].queryset = sites.sites()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if bool(data.get("site")) == bool(data.get("trace")):
            raise forms.ValidationError("pick either a live site or a trace")
        return data

    def clean_time_limit(self) -> float:
        try:
            seconds = humanize.parse_duration(self.cleaned_data["time_limit"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        if seconds <= 0:
            raise forms.ValidationError("must be longer than 0 s")
        return seconds

    def clean_within(self) -> float | None:
        text = (self.cleaned_data.get("within") or "").strip()
        if not text:
            return None
        try:
            return humanize.parse_duration(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc


@login_required
def predict(request: HttpRequest) -> HttpResponse:
    """GET without a trace shows the form; with one it also shows the answer."""
    bound = "trace" in request.GET or "procs" in request.GET
    form = PredictForm(request.GET if bound else None, initial=request.GET.dict())
    context: dict[str, Any] = {"form": form, "nav": "predict"}
    if form.is_bound and form.is_valid():
        context.update(answer_for(form, request.user))
    return render(request, "predictor/predict.html", context)


FITTING_REFRESH_S = 5  # while a trace's first fit runs, the page asks again this often


def answer_for(form: PredictForm, user: Any) -> dict[str, Any]:
    """Validate with the API's serializer, ask its service(s), or put the errors on the form."""
    if form.cleaned_data.get("site"):
        return site_answer_for(form, user)
    trace: Trace = form.cleaned_data["trace"]
    at_days = form.cleaned_data.get("at_days")
    if at_days is not None and at_days > span_days(trace):
        form.add_error("at_days", at_days_error(trace))
        return {}
    at = trace.last_submit_s if at_days is None else (trace.first_submit_s or 0) + at_days * 86400
    query = WaitQuerySerializer(data=api_query(form.cleaned_data, at), context={"trace": trace})
    if not query.is_valid():
        for field, errors in query.errors.items():
            form.add_error(*in_form_words(trace, field, errors))
        return {}
    job = query.validated_data
    try:
        wait = evaluations.predict_wait(trace, job)
        runtime = runtime_service.predict_runtime(trace, job)
    except ModelNotReady as exc:
        # The first fit runs in the background: the page asks again by itself (base.html's
        # refresh), so the answer appears once the model is stored.
        form.add_error(None, f"{exc.detail} This page refreshes every {FITTING_REFRESH_S} s.")
        return {"refresh_s": FITTING_REFRESH_S}
    except QueuecastError as exc:
        form.add_error(None, exc.detail)
        return {}
    return {
        "answer": present(trace, job, wait, runtime, form.cleaned_data["confidence"]),
        "accuracy": accuracy(trace),
    }


FORM_FIELDS = {"requested_procs": "procs", "requested_time": "time_limit", "at": "at_days"}
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?:\s*s\b)?", re.IGNORECASE)


def span_days(trace: Trace) -> float:
    """Days from the trace's first to its last submission, floored to 0.01 day."""
    span_s = max((trace.last_submit_s or 0.0) - (trace.first_submit_s or 0.0), 0.0)
    return math.floor(span_s / 864.0) / 100.0


def at_days_error(trace: Trace) -> str:
    return f"must lie within the trace: between 0 and {span_days(trace):g} days after its start"


def in_form_words(trace: Trace, field: str, errors: list[Any]) -> tuple[str | None, list[str]]:
    """An API field error as the form's field and unit: the instant in days after the trace
    start, a time limit as a duration ("1 y", not "3.1536e+07")."""
    if field == "at":
        return "at_days", [at_days_error(trace)]
    if field == "requested_time":
        errors = [NUMBER.sub(lambda m: humanize.duration(float(m.group(0).rstrip("s "))), str(e))
                  for e in errors]  # fmt: skip
    return (None if field == "non_field_errors" else FORM_FIELDS.get(field, field)), errors


def site_answer_for(form: PredictForm, user: Any) -> dict[str, Any]:
    site = form.cleaned_data["site"]
    pages_site = page_parts.part(page_parts.PREDICT_SITE, "site")
    raw, errors = pages_site.site_answer(site, user, form.cleaned_data)
    names = {"procs": "procs", "time_limit_s": "time_limit", "user": "user_id"}
    for field, messages in errors.items():
        form.add_error(names.get(field), messages)
    if raw is None:
        return {}
    answer = pages_site.present_site(site, raw, form.cleaned_data["confidence"])
    return {"answer": answer, "accuracy": {}}


def api_query(data: dict[str, Any], at: float | None) -> dict[str, Any]:
    """The form's fields under the API's names (the confidence once the API takes one)."""
    extra = {"confidence": data["confidence"]} if "confidence" in WAIT_FIELDS else {}
    if data.get("within") is not None:
        extra["within_s"] = data["within"]
    return {
        **extra,
        "user_id": data["user_id"],
        "queue_id": data.get("queue_id") if data.get("queue_id") is not None else -1,
        "requested_procs": data["procs"],
        "requested_time": data["time_limit"],
        "at": at,
    }


def present(
    trace: Trace,
    job: dict[str, Any],
    wait: dict[str, Any],
    runtime: dict[str, Any],
    confidence: float,
) -> dict[str, Any]:
    """Dates, humanised durations, the interval and the rangeSet chart of one answer."""
    at = float(job["at"])
    limit_s = float(job["requested_time"])
    ranges = runtime["ranges"]
    run_s = rangeset.median_runtime_s(ranges)
    run_s = float(runtime["point_s"]) if run_s is None else run_s
    interval = wait_interval(wait, confidence)
    return {
        "trace": trace,
        "at": at,
        "at_date": humanize.trace_datetime(trace.header, at),
        "at_day": (at - (trace.first_submit_s or 0)) / 86400,
        "wait_s": wait["wait_s"],
        "start_date": humanize.trace_datetime(trace.header, at + wait["wait_s"]),
        "runtime_s": run_s,
        "finish_s": wait["wait_s"] + run_s,
        "finish_date": humanize.trace_datetime(trace.header, at + wait["wait_s"] + run_s),
        "interval": interval,
        "confidence": confidence,
        "wait": wait,
        "runtime": runtime,
        "ranges": rangeset.ranges_table(ranges, run_s),
        "outside": rangeset.outside_share(ranges),
        "inside": 1.0 - rangeset.outside_share(ranges),
        "chart": rangeset.rangeset_chart(ranges, run_s, limit_s),
        "time_limit_s": limit_s,
        "why": wait.get("why"),
        **within_card(
            wait.get("within_s"),
            wait.get("p_within"),
            wait.get("p_within_jobs"),
            "no job of this trace had started by then",
        ),  # fmt: skip
        "online": {"methods": wait.get("methods"), "accuracy": wait.get("accuracy")}
        if wait.get("methods")
        else None,
    }


def within_card(
    within_s: float | None, p: float | None, jobs: int | None, about: str | None
) -> dict[str, Any]:
    """The card of the chance to start within ``within_s``: ``p`` of ``jobs``, or ``about``
    (why there is none) when ``p`` is None; nothing when it was not asked. A trace answer and
    a site answer (``holdqueue.pages_predict``) both shape it here."""
    if within_s is None:
        return {}
    if p is None:
        return {"within_note": {"within_s": within_s, "about": about}}
    return {"p_within": {"within_s": within_s, "p": p, "jobs": jobs}}


def wait_interval(wait: dict[str, Any], confidence: float) -> dict[str, Any] | None:
    """The calibrated interval when the answer carries one, else QBETS's one-sided bound."""
    if wait.get("interval_low_s") is not None and wait.get("interval_high_s") is not None:
        used = wait.get("interval_level_used")
        about = (
            None
            if used is None
            else f"the errors (wait minus predicted wait) of the "
            f"{min(NEIGHBOURS, wait['interval_jobs']):,} jobs, of the "
            f"{wait['interval_jobs']:,} started last, whose predicted wait was nearest this "
            f"one's, added to this prediction, "
            f"{level_words(used, wait.get('confidence', confidence))}"
        )
        return {  # the trace wait API's flat fields
            "lower_s": wait["interval_low_s"],
            "upper_s": wait["interval_high_s"],
            "level": wait.get("confidence", confidence),
            "kind": "calibrated",
            "about": about,
        }
    block = wait.get("interval")
    if isinstance(block, dict):
        low = block.get("lower_s", block.get("low_s"))
        high = block.get("upper_s", block.get("high_s"))
        if low is not None and high is not None:
            level = block.get("confidence", block.get("level", confidence))
            return {"lower_s": low, "upper_s": high, "level": level, "kind": "calibrated"}
    if wait.get("qbets_upper_s") is not None:
        return {"lower_s": 0.0, "upper_s": wait["qbets_upper_s"], "level": 0.95, "kind": "qbets"}
    return None


def accuracy(trace: Trace) -> dict[str, Any]:
    """How the methods did on this trace: the latest finished wait and runtime evaluations."""
    runs = EvaluationRun.objects.filter(trace=trace, status=Status.DONE)
    wait_run = runs.filter(kind=EvaluationRun.Kind.WAIT).order_by("-finished_at").first()
    run_run = runs.filter(kind=EvaluationRun.Kind.RUNTIME).order_by("-finished_at").first()
    out: dict[str, Any] = {"wait_run": wait_run, "runtime_run": run_run}
    if wait_run and "apq" in wait_run.result:
        apq = wait_run.result["apq"]
        ratio = apq.get("aae_over_mean_wait")
        out["wait"] = {
            **apq,
            "ratio": ratio,
            "no_better_than_zero": ratio is not None and ratio >= 1,
        }
    if run_run and "rangeset" in run_run.result:
        out["runtime"] = run_run.result["rangeset"]
    return out


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page says; answer with ours."""
    return redirect(static("img/favicon.svg"), permanent=True)


urlpatterns = [
    path("predict/", predict, name="predict"),
    path("favicon.ico", favicon),
    *runs_page.urlpatterns,
]
