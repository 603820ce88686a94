"""Predictions for a live site: the predictor's bundle fitted on the site's own history,
answering a batch of requests on the site's live snapshot (``predictor.core.bundle``).

Fitting takes seconds to tens of seconds, so a site's bundle is cached and refitted only when
its history has grown by ``REFIT_GROWTH`` or is older than ``REFIT_AGE_S``. At each fit the
bundle is also scored on the last ``CALIBRATION_JOBS`` finished jobs of the history, each
predicted from the state at its own arrival (online: nothing later is visible). Those errors
are the site's measured accuracy and the pool of the split-conformal wait interval at the
caller's confidence (``predictor.core.wait.intervals.interval_from_pool``).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from holdqueue.models import Site, SiteHistory
from holdqueue.services import backends as bk
from holdqueue.services.errors import WrongState
from holdqueue.services.history import history_frame
from holdqueue.services.queue_start import queue_starts
from holdqueue.services.snapshot import request_for, snapshot_now
from jobmolding.core.future import headline_start_s
from predictor.core.bundle import RequestAnswer
from predictor.core.response import response_rangeset
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot, from_log
from predictor.core.wait.intervals import interval_from_pool, scores

if TYPE_CHECKING:
    from predictor.core.bundle import FittedBundle

MIN_HISTORY = 50
CALIBRATION_JOBS = 60
REFIT_GROWTH = 0.10
REFIT_AGE_S = 3600.0


@dataclass(frozen=True)
class SiteModel:
    bundle: FittedBundle
    history_rows: int
    fitted_at: float
    wait_scores: np.ndarray
    accuracy: dict[str, Any]


@dataclass(frozen=True)
class SitePredictions:
    """Aligned with the request batch: wait points (K,), runtime and response rangeSets."""

    answers: list[RequestAnswer]

    @property
    def wait_s(self) -> np.ndarray:
        return np.array([a.wait_s for a in self.answers], dtype=float)

    @property
    def runtimes(self) -> list[RangeSet]:
        return [a.runtime for a in self.answers]


@dataclass(frozen=True)
class QueueAnswer(RequestAnswer):
    """A live answer: ``wait_s`` is the headline; the two figures it comes from beside it."""

    history_wait_s: float = 0.0
    queue_wait_s: float | None = None


_MODELS: dict[int, SiteModel] = {}
_LOCK = threading.Lock()


def calibrate(bundle: FittedBundle, n_jobs: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Wait scores and accuracy of ``bundle`` on the last ``n_jobs`` jobs, each online."""
    from predictor.core.bundle import predict_requests

    jobs = bundle.jobs
    first = max(len(jobs) - n_jobs, 1)
    pred, actual, run_err = [], [], []
    for i in range(first, len(jobs)):
        row = jobs.iloc[i]
        snap = from_log(jobs, float(row["submit_time"]), machine_procs=bundle.machine_procs, rows=i)
        answer = predict_requests(bundle, snap, RequestBatch.from_jobs(jobs.iloc[i : i + 1]))[0]
        pred.append(answer.wait_s)
        actual.append(float(row["wait_time"]))
        run_err.append(abs(answer.runtime.point_s - float(row["run_time"])))
    p, y = np.array(pred), np.array(actual)
    accuracy = {
        "jobs": int(p.size),
        "wait_mae_s": float(np.mean(np.abs(p - y))) if p.size else None,
        "wait_median_abs_error_s": float(np.median(np.abs(p - y))) if p.size else None,
        "runtime_mae_s": float(np.mean(run_err)) if run_err else None,
        "how": f"the last {p.size} finished jobs of this site's history, each predicted from "
        "what was known at its arrival",
    }
    return scores(p, y), accuracy


def _stale(model: SiteModel | None, rows: int) -> bool:
    if model is None:
        return True
    grown = rows > model.history_rows * (1 + REFIT_GROWTH) + 10
    return grown or time.time() - model.fitted_at > REFIT_AGE_S


def site_model(site: Site) -> SiteModel:
    """The site's fitted bundle (cached; refitted as the history grows)."""
    rows = SiteHistory.objects.filter(site=site).count()
    with _LOCK:
        model = _MODELS.get(site.pk)
    if not _stale(model, rows):
        return model  # type: ignore[return-value]
    frame = history_frame(site)
    frame = frame[(frame["wait_time"] >= 0) & (frame["run_time"] >= 0)].reset_index(drop=True)
    frame["job_id"] = np.arange(1, len(frame) + 1)
    if len(frame) < MIN_HISTORY:
        raise WrongState(
            f"site {site.name} has {len(frame)} finished jobs in its history; predictions need "
            f"{MIN_HISTORY} (import accounting with import_sacct or let it run a while)",
            field="history",
        )
    from predictor.core.bundle import fit_bundle

    bundle = fit_bundle(frame, site.machine_procs)
    pool, accuracy = calibrate(bundle, CALIBRATION_JOBS)
    model = SiteModel(bundle, rows, time.time(), pool, accuracy)
    with _LOCK:
        _MODELS[site.pk] = model
    return model


def predict_requests_at(site: Site, snapshot: Snapshot, batch: RequestBatch) -> SitePredictions:
    from predictor.core.bundle import predict_requests

    model = site_model(site)
    snap = replace(snapshot, history=model.bundle.jobs)
    return SitePredictions(with_queue(model, snapshot, predict_requests(model.bundle, snap, batch)))


def with_queue(model: SiteModel, snapshot: Snapshot, answers: list[RequestAnswer]) -> list:
    """Each new request's answer with its queue-based start and the headline wait (the later
    of the history estimate and the queue-based start: ``jobmolding.core.future
    .headline_start_s``, docs/sites.md). Jobs already queued or running (submitted before the
    snapshot) keep the history answer: only their runtimes are asked for."""
    new = [k for k, a in enumerate(answers) if a.request.submit_s >= snapshot.time_s - 1.0]
    if not new:
        return answers
    batch = RequestBatch.of([answers[k].request for k in new])
    points = np.array([answers[k].runtime.point_s for k in new])
    _, starts = queue_starts(model.bundle, snapshot, batch, points)
    out = list(answers)
    for k, start in zip(new, starts, strict=True):
        a = answers[k]
        queue_wait = max(float(start) - a.request.submit_s, 0.0)
        wait = headline_start_s(a.wait_s, queue_wait)
        out[k] = QueueAnswer(
            **{**vars(a), "wait_s": wait, "response": response_rangeset(a.runtime, wait)},
            history_wait_s=a.wait_s,
            queue_wait_s=queue_wait,
        )
    return out


# The name the decision module calls (one seam, easy to stub in tests).
predict_requests_for_site = predict_requests_at


def _ranges(rs: RangeSet, shift_s: float = 0.0) -> list[dict[str, float]]:
    return [
        {"low_s": float(lo + shift_s), "high_s": float(hi + shift_s), "probability": float(p)}
        for lo, hi, p in zip(rs.low_s, rs.high_s, rs.probability, strict=True)
    ]


def predict_for_query(site: Site, user: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/sites/{id}/predict/``: the answer for one request at ``at`` (default now)."""
    current = bk.now()
    at = data.get("at") or current
    if at < current - dt.timedelta(seconds=60):
        raise WrongState("at is in the past; a live site predicts from now on", field="at")
    snap, _ = snapshot_now(site, current)
    request = request_for(site, data.get("user") or user.get_username(), data, at)
    model = site_model(site)
    answer = predict_requests_at(site, snap, RequestBatch.of([request])).answers[0]
    level = float(data.get("confidence", 0.9))
    low, high = interval_from_pool(np.array([answer.wait_s]), model.wait_scores, level)
    start = at + dt.timedelta(seconds=answer.wait_s)
    end = start + dt.timedelta(seconds=answer.runtime.point_s)
    return {
        "site": site.name,
        "at": at,
        "procs": request.procs,
        "time_limit_s": int(request.req_time_s),
        "predicted_start": start,
        "predicted_start_s": answer.wait_s,
        "predicted_end": end,
        "predicted_end_s": answer.wait_s + answer.runtime.point_s,
        "wait": {
            "point_s": answer.wait_s,
            "history_s": getattr(answer, "history_wait_s", answer.wait_s),
            "queue_s": getattr(answer, "queue_wait_s", None),
            "rule": "the later of the history estimate and the queue-based start",
            "low_s": float(low[0]),
            "high_s": float(high[0]),
            "confidence": level,
            "upper_bound_s": answer.wait_upper_s,
        },
        "runtime": {
            "point_s": answer.runtime.point_s,
            "level": answer.runtime.level,
            "support": answer.runtime.support,
            "ranges": _ranges(answer.runtime),
        },
        "response": {"point_s": answer.response.point_s, "ranges": _ranges(answer.response)},
        "method": {
            "wait": answer.wait_method,
            "wait_predictor": answer.wait_predictor,
            "runtime": answer.runtime_method,
        },
        "accuracy": model.accuracy,
    }
