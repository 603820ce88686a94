"""Predictions for a live site: the predictor's bundle fitted on the site's own history,
answering a batch of requests on the site's live snapshot (``predictor.core.bundle``).

Fitting takes seconds to tens of seconds, so a site's bundle is fitted once for every process
(``predictor.services.fitted_store``: one process fits under the site's lock, the others load its
file) and refitted only when its history has grown by ``REFIT_GROWTH`` or is older than
``REFIT_AGE_S``; a process counts the history at most every ``CHECK_EVERY_S``, and a stale
bundle keeps answering while one process refits it in the background. At each fit the
bundle is also scored on the last ``CALIBRATION_JOBS`` finished jobs of the history (the
last to end, so that long waits are in the pool: ``headline_scores.last_rows``), each on
the answer the site told it at its arrival where the job was submitted through the site
(``holdqueue.services.told``), else answered again from the state at its own arrival as the
site answers (online: nothing later is visible; ``jobmolding.core.headline_scores``). On them
the headline rule is chosen (how the history estimate and the queue-based start make the wait a
user is told, ``jobmolding.core.headline``), and the headline's errors are the site's measured
accuracy and, until ``holdqueue.services.interval.TOLD_FROM`` jobs told by the site have
started, the pool of the split-conformal wait interval at the caller's confidence
(``predictor.core.wait.intervals.interval_from_pool``). From then on the interval is learnt
online from those told jobs as they start (``holdqueue.services.interval``).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from holdqueue.models import Site, SiteHistory
from holdqueue.services import backends as bk
from holdqueue.services.errors import WrongState
from holdqueue.services.history import history_frame
from holdqueue.services.interval import wait_interval
from holdqueue.services.snapshot import request_for, snapshot_now
from holdqueue.services.told import site_told, told_now, waiting_now
from holdqueue.services.told_accuracy import told_accuracy
from holdqueue.services.told_within import told_within
from jobmolding.core.headline import SAYS, RuleChoice, headline_wait
from jobmolding.core.headline_scores import choose_on_history
from jobmolding.core.live_bundle import LiveBundle
from jobmolding.core.told import ToldRows
from predictor.core.answer_accuracy import runtime_accuracy_at, wait_accuracy
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import RequestBatch
from predictor.core.wait.intervals import scores
from predictor.services.background_fit import (
    CODE_CHANGED,
    CODE_CHANGED_ERROR,
    fit_wait_s,
    fitting,
    mark_failed,
    not_ready,
    recent_failure,
    run_in_child,
)
from predictor.services.background_fit import inline as fit_inline
from predictor.services.background_fit import spawn as spawn_fit
from predictor.services.fitted_store import FittedStore, default_store
from predictor.services.method_reason import wait_reason
from predictor.services.why import why_body
from queuecast.kept import KeptModels

if TYPE_CHECKING:
    from predictor.core.bundle import FittedBundle

MIN_HISTORY = 50
RUNTIME_RECENT = 100  # ended jobs behind the runtime method's recent accuracy
CALIBRATION_JOBS = 200  # the headline rule, the interval's pool and the accuracy shown
REFIT_GROWTH = 0.10
REFIT_AGE_S = 3600.0
CHECK_EVERY_S = 30.0  # how often a process counts a site's history rows
MODELS_KEPT = 16  # site models held per process
LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class SiteModel:
    bundle: FittedBundle
    history_rows: int
    fitted_at: float
    wait_scores: np.ndarray
    accuracy: dict[str, Any]
    rule: RuleChoice = RuleChoice()


@dataclass(frozen=True)
class _Held:
    """A site model held by this process: for which site, and when its history was counted."""

    model: SiteModel
    ident: str
    checked: float


def _same_model(before: _Held, after: _Held) -> bool:
    """A site model counted again (a new timestamp) is not a new model to the process."""
    return before.model is after.model


class _Flags:
    """Sites being refitted by this process."""

    def __init__(self) -> None:
        self.items: set[int] = set()
        self.lock = threading.Lock()

    def add(self, pk: int) -> bool:
        with self.lock:
            if pk in self.items:
                return False
            self.items.add(pk)
            return True

    def discard(self, pk: int) -> None:
        with self.lock:
            self.items.discard(pk)


# This process's site models, bounded (least recently used out, ``queuecast.kept``).
_MODELS: KeptModels[_Held] = KeptModels(MODELS_KEPT, _same_model)
_REFITTING = _Flags()
_OVERRIDES: KeptModels[_Held] = KeptModels(MODELS_KEPT, _same_model)  # (site, wait method)


def calibrate(
    bundle: FittedBundle,
    n_jobs: int,
    told: Callable[[np.ndarray], ToldRows] | None = None,
) -> tuple[np.ndarray, dict[str, Any], RuleChoice]:
    """The headline rule chosen on the last ``n_jobs`` jobs, each on the answer the site told
    it at its arrival where it kept one (``told``: ``holdqueue.services.told.site_told``),
    else answered again online as the site would have answered it (``headline_scores``), and
    the headline's wait scores and accuracy on them: the interval's pool is the errors of the
    wait the site tells."""
    choice, answered = choose_on_history(bundle, n_jobs, told)
    p = headline_wait(choice.rule, answered.history_s, answered.queue_s)
    y = answered.actual_s
    mae = float(np.mean(np.abs(p - y))) if p.size else float("nan")
    wait = wait_accuracy(p.size, mae,
                         float(np.mean(y)) if p.size else float("nan"))  # fmt: skip
    ended = bundle.runtime_ctx.end_s  # the history holds finished jobs only
    runtime = runtime_accuracy_at(
        bundle.runtime, bundle.runtime_ctx, float(ended.max(initial=0)), RUNTIME_RECENT
    )
    run_err = np.abs(answered.runtime_s - answered.actual_runtime_s)
    accuracy = {
        "wait": _finite(wait.as_dict()),
        "runtime": _finite(runtime.as_dict()),
        "jobs": int(p.size),
        "wait_mae_s": mae if p.size else None,
        "wait_median_abs_error_s": float(np.median(np.abs(p - y))) if p.size else None,
        "runtime_mae_s": float(np.mean(run_err)) if run_err.size else None,
        "headline": choice.as_dict(),
        "how": f"the last {p.size} finished jobs of this site's history (the last to end), "
        "each predicted from what was known at its arrival (the wait: the headline, by the "
        f"site's rule): {answered.told} on the answer the site told them, "
        f"{p.size - answered.told} answered again",
    }
    return scores(p, y), accuracy, choice


def _finite(values: dict[str, Any]) -> dict[str, Any]:
    """NaN (nothing known yet) as null, for JSON."""
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in values.items()}


def _stale(model: SiteModel | None, rows: int) -> bool:
    if model is None:
        return True
    grown = rows > model.history_rows * (1 + REFIT_GROWTH) + 10
    return grown or time.time() - model.fitted_at > REFIT_AGE_S


def _ident(site: Site) -> str:
    """The store's id of a site: its key and creation time (a re-created site is new)."""
    return f"{site.pk}_{site.created_at.timestamp():.6f}" if site.created_at else str(site.pk)


def _fit(
    site: Site, wait_method: str | None = None, history: pd.DataFrame | None = None
) -> SiteModel:
    """Fit on ``history`` (the caller's read of the site's history), else read it here."""
    frame = history_frame(site) if history is None else history
    rows = len(frame)
    finished = ((frame["wait_time"] >= 0) & (frame["run_time"] >= 0)).to_numpy()
    frame = frame[finished].reset_index(drop=True)
    frame["job_id"] = np.arange(1, len(frame) + 1)
    if len(frame) < MIN_HISTORY:
        raise _short_history(site, len(frame))
    from predictor.core.bundle import fit_bundle
    from predictor.services.predict import service_methods

    default_wait, runtime_method = service_methods()  # auto and the chosen runtime method
    bundle = fit_bundle(
        frame,
        site.machine_procs,
        wait_method=wait_method or default_wait,
        runtime_method=runtime_method,
    ).train_ahead(tuning_part=False)  # fmt: skip  (asked about "now" only: train_ahead)
    pool, accuracy, choice = calibrate(bundle, CALIBRATION_JOBS, site_told(site, finished))
    return SiteModel(bundle, rows, time.time(), pool, accuracy, choice)


def _short_history(site: Site, finished: int) -> WrongState:
    return WrongState(
        f"site {site.name} has {finished} finished jobs in its history; predictions need "
        f"{MIN_HISTORY} (import accounting with import_sacct or let it run a while)",
        field="history",
    )


def fit_and_store(
    site: Site, store: FittedStore, blocking: bool, history: pd.DataFrame | None = None
) -> SiteModel | None:
    """Fit under the site's lock and save (single flight across processes). Without
    ``blocking``, None at once when another process is fitting the site."""
    with store.lock("site", _ident(site), blocking=blocking) as got:
        if not got:
            return None
        if blocking:  # we may have waited for another process's fit: take it if just made
            found = store.latest("site", _ident(site))
            if found is not None and time.time() - found[1].fitted_at < CHECK_EVERY_S:
                return found[1]
        with fitting(store, "site", _ident(site)):  # the status other processes report
            model = _fit(site, history=history)
            store.save("site", _ident(site), f"{time.time():017.6f}", model, supersede=True)
    return model


def _refit_in_background(
    site: Site, store: FittedStore, history: pd.DataFrame | None = None
) -> bool:
    """Refit a stale site's bundle in the background (a thread waiting for a child process,
    ``predictor.services.background_fit``); requests keep the current one meanwhile. False
    when this process is already refitting it."""
    if not _REFITTING.add(site.pk):
        return False

    def run() -> None:  # ``spawn_fit`` closes the thread's own connection, not the caller's
        try:
            if fit_inline():
                model = fit_and_store(site, store, blocking=False, history=history)
            else:  # a child process fits (the GIL stays with the requests): load its file
                if run_in_child(["fit_site_model", str(site.pk)]) == CODE_CHANGED:
                    # no child ran: the current model keeps answering, nothing new to load
                    mark_failed(store, "site", _ident(site), "", CODE_CHANGED_ERROR)
                    return
                found = store.latest("site", _ident(site))
                model = found[1] if found is not None else None
            if model is not None:
                _MODELS.put(site.pk, _Held(model, _ident(site), time.monotonic()))
        except Exception:  # the current model keeps answering; the next check retries
            LOG.exception("background refit of site %s failed", site.pk)
        finally:
            _REFITTING.discard(site.pk)

    _spawn(run)
    return True


def _spawn(work: Any) -> None:
    """Run ``work`` in a daemon thread, in place inside a test's transaction (a seam)."""
    spawn_fit(work, "refit-site")


def _first_fit(site: Site, store: FittedStore, history: pd.DataFrame | None) -> SiteModel:
    """No stored bundle yet: fit it in the background (one process at a time, the site's
    lock); the call that started it waits at most ``QUEUECAST_FIT_WAIT_S``, then every call
    answers 503 with the fit's status until it is stored (``predictor.services.background_fit``)."""
    ident = _ident(site)
    if history is not None:
        finished = int(((history["wait_time"] >= 0) & (history["run_time"] >= 0)).sum())
    else:
        finished = SiteHistory.objects.filter(site=site, wait_s__gte=0, run_s__gte=0).count()
    if finished < MIN_HISTORY:  # no fit can succeed: say so now, not as a failed fit
        raise _short_history(site, finished)
    if recent_failure(store, "site", ident) is None and _refit_in_background(site, store, history):
        deadline = time.monotonic() + fit_wait_s()
        while site.pk in _REFITTING.items and time.monotonic() < deadline:
            time.sleep(0.05)
    held = _MODELS.get(site.pk)
    if held is not None and held.ident == ident:
        return held.model
    raise not_ready(store, "site", ident, f"site {site.name!r}")


def site_model(
    site: Site, wait_method: str | None = None, history: pd.DataFrame | None = None
) -> SiteModel:
    """The site's fitted bundle: this process's copy, else the stored one, else fitted
    (once across processes). Its history is counted at most every ``CHECK_EVERY_S``; a
    stale bundle keeps answering while it is refitted in the background. ``wait_method``
    names a wait method to answer with instead of the site's default (the API's ``method``
    override: fitted in this process, kept in its own bounded cache). ``history``: the
    caller's read of the site's history (``history_frame``), so a submission reads it once;
    without it, the history is read here when a fit needs it."""
    if wait_method is not None:
        return _override_model(site, wait_method, history)
    store = default_store()
    held = _MODELS.get(site.pk)
    if held is not None and held.ident != _ident(site):
        held = None  # the key of a deleted site, reused
    if held is not None and time.monotonic() - held.checked < CHECK_EVERY_S:
        return held.model
    if held is None:
        found = store.latest("site", _ident(site))
        if found is None:
            return _first_fit(site, store, history)
        held = _Held(found[1], _ident(site), 0.0)
    rows = _count(site, history)
    _MODELS.put(site.pk, _Held(held.model, held.ident, time.monotonic()))
    if _stale(held.model, rows):
        _refit_in_background(site, store, history)
    return held.model


def _count(site: Site, history: pd.DataFrame | None) -> int:
    """The site's history rows: the caller's frame, else counted in the database."""
    return len(history) if history is not None else SiteHistory.objects.filter(site=site).count()


def _override_model(site: Site, wait_method: str, history: pd.DataFrame | None) -> SiteModel:
    key = (site.pk, wait_method)
    held = _OVERRIDES.get(key)
    rows = _count(site, history)
    if held is not None and held.ident == _ident(site) and not _stale(held.model, rows):
        return held.model
    model = _fit(site, wait_method, history)
    _OVERRIDES.put(key, _Held(model, _ident(site), time.monotonic()))
    return model


def site_answers(
    site: Site, history: pd.DataFrame | None = None, wait_method: str | None = None
) -> LiveBundle:
    """The site's bundle as a plain predictor (``jobmolding.core.live_bundle.LiveBundle``):
    what a submission hands down to the arrival decision (the one seam tests stub)."""
    model = site_model(site, wait_method, history)
    return LiveBundle(model.bundle, model.rule.rule)


def warm_site(site: Site) -> bool:
    """Fit and store the site's bundle unless one is stored (``warm_site_models`` at start-up,
    so the first request finds it). True when it fitted now."""
    store = default_store()
    if store.latest("site", _ident(site)) is not None:
        return False
    return fit_and_store(site, store, blocking=True) is not None


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
    snap, view = snapshot_now(site, current)
    request = request_for(site, data.get("user") or user.get_username(), data, at)
    method = data.get("method")  # None: the site's default (auto)
    model = site_model(site, method)
    answer = LiveBundle(model.bundle, model.rule.rule).answers(snap, RequestBatch.of([request]))[0]
    level, rule, view_key = float(data.get("confidence", 0.9)), model.rule.rule, view.key
    low, high, interval_how = wait_interval(
        site, rule, model.wait_scores, answer.wait_s, level, view_key
    )
    start = at + dt.timedelta(seconds=answer.wait_s)
    end = start + dt.timedelta(seconds=answer.runtime.point_s)
    return {
        "site": site.name,
        "at": at,
        "queue_read_at": view.read_at,
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
            "rule": SAYS[model.rule.rule],
            "rule_reason": model.rule.reason,
            "low_s": low,
            "high_s": high,
            "confidence": level,
            "interval": interval_how,
            "upper_bound_s": answer.wait_upper_s,
            "within": None
            if data.get("within_s") is None
            else told_within(
                told_now(site, view_key),
                waiting_now(site, view_key),
                rule,
                answer.wait_s,
                data["within_s"],
                bk.site_seconds(site, current),
            ),
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
            "wait_reason": wait_reason(model.bundle.wait),
            "runtime": answer.runtime_method,
            "runtime_reason": (
                model.bundle.runtime_choice.reason
                if model.bundle.runtime_choice is not None
                else "asked for"
            ),
        },
        "accuracy": {**model.accuracy, "told": told_accuracy(told_now(site, view_key), rule)},
        "why": why_body(
            model.bundle.runtime,
            replace(snap, history=model.bundle.jobs),
            request,
            headline_wait_s=answer.wait_s,
            history_wait_s=getattr(answer, "history_wait_s", answer.wait_s),
        ),  # fmt: skip
    }


def why_held(site: Site, job: Any) -> dict[str, Any] | None:
    """The ``why`` block of a held job: it waits for its hold; released now, the live queue
    would start it as the block says. None when the site cannot answer now (no history yet,
    the batch system down): the job page then shows the decision alone."""
    from holdqueue.models import SiteJob
    from predictor.core.state.request import JobRequest
    from queuecast.errors import QueuecastError

    if job.state != SiteJob.HELD or job.release_at is None:
        return None
    current = bk.now()
    try:
        snap, _ = snapshot_now(site, current)
        model = site_model(site)
    except QueuecastError:
        return None
    now_s = bk.site_seconds(site, current)
    request = JobRequest(user=bk.user_number(job.owner.get_username()), procs=job.procs_chosen,
                         req_time_s=float(job.time_limit_s), submit_s=now_s)  # fmt: skip
    return why_body(model.bundle.runtime, replace(snap, history=model.bundle.jobs), request,
                    held_until_s=bk.site_seconds(site, job.release_at))  # fmt: skip
