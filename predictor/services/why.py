"""Why a job waits, and what single change starts it sooner: the API's ``why`` block.

Glue over ``predictor.core.why``: the queue comes from the answer's own snapshot (a trace
instant or a site's live queue); jobs without a requested time run, in the forward, for the
runtime method's point estimate. Times in the body are seconds from the request's arrival;
each part carries the sentence the pages show.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.runtime.types import RuntimeMethod
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import Snapshot
from predictor.core.why.explain import Why, explain
from predictor.core.why.forward import Profiles
from predictor.core.why.queue import from_snapshot
from predictor.core.why.sooner import Change, sooner
from queuecast.humanize import duration

LISTED = 10
PROFILES = Profiles()  # the queue's forward run, shared by the requests of an instant
HOW = (
    "EASY backfilling simulated forward from the queue at the request's arrival (the replay "
    "engine's own EASY, as squeue --start): every job runs for its time limit, nobody else "
    "arrives; each change is tried alone as a new arrival in the same queue"
)


def _points(runtime: RuntimeMethod, snapshot: Snapshot, batch: RequestBatch) -> np.ndarray | None:
    """Runtime points for the jobs of ``batch`` that have no requested time (else None)."""
    if not len(batch) or (batch.req_time_s > 0).all():
        return None
    return np.array([r.point_s for r in runtime.predict(snapshot, batch).ranges], float)


def why_body(
    runtime: RuntimeMethod,
    snapshot: Snapshot,
    request: JobRequest,
    *,
    held_until_s: float | None = None,
    headline_wait_s: float | None = None,
    history_wait_s: float | None = None,
) -> dict[str, Any]:
    """The ``why`` block of an answer for ``request`` arriving in ``snapshot``.

    ``headline_wait_s``: the answer's predicted wait, when the block sits beside one; where it
    differs materially from the queue's start here (:func:`estimate_note`) the sentences say
    so, so that a page never shows "starts at once" beside a wait of hours unexplained.
    ``history_wait_s``: the history-based estimate, when the headline combines it with
    another figure (a live site's later-of rule)."""
    state = from_snapshot(
        snapshot,
        _points(runtime, snapshot, snapshot.running.requests),
        _points(runtime, snapshot, snapshot.waiting.requests),
    )
    estimate = float(request.req_time_s)
    if estimate <= 0:
        estimate = float(runtime.predict(snapshot, RequestBatch.of([request])).ranges[0].point_s)
    why = explain(state, int(request.procs), estimate, held_until_s=held_until_s,
                  profiles=PROFILES)  # fmt: skip
    changes = sooner(state, why, estimate, PROFILES)
    best = changes.best
    now = why.now_s
    note = estimate_note(why, headline_wait_s, history_wait_s)
    return {
        "reason": why.reason,
        "sentence": " ".join(filter(None, [reason_sentence(why, held_until_s), note])),
        "estimate_note": note,
        "predicted_start_s": why.wait_s,
        "procs": why.procs,
        "free_procs": max(why.free_procs, 0),  # a log may overcommit its machine
        "jobs_ahead": _ahead(why),
        "sooner": {
            "best": _change(best, now, why.procs),
            "fewer_procs": _change(changes.fewer_procs, now, why.procs),
            "shorter_limit": _change(changes.shorter_limit, now, why.procs),
            "later_submission": _change(changes.later_submission, now, why.procs),
            "sentence": held_sentence(why)
            if why.reason == "hold"
            else sooner_sentence(
                best,
                why.procs,
                why.wait_s,
                longer=bool(note) and (headline_wait_s or 0.0) > why.wait_s,
            ),  # fmt: skip
        },
        "how": HOW,
    }


def _ahead(why: Why) -> dict[str, Any]:
    a, now = why.ahead, why.now_s
    return {
        "queued": int(a.queued_procs.size),
        "queued_procs": int(a.queued_procs.sum()),
        "running": int(a.running_procs.size),
        "running_procs": int(a.running_procs.sum()),
        "queued_jobs": [
            {
                "position": k + 1,
                "procs": int(p),
                "predicted_start_s": float(s - now),
                "predicted_end_s": float(e - now),
            }
            for k, (p, s, e) in enumerate(
                zip(
                    a.queued_procs[:LISTED],
                    a.queued_start_s[:LISTED],
                    a.queued_end_s[:LISTED],
                    strict=True,
                )
            )
        ],  # fmt: skip
        "running_jobs": [
            {"procs": int(p), "predicted_end_s": float(e - now)}
            for p, e in zip(a.running_procs[:LISTED], a.running_end_s[:LISTED], strict=True)
        ],
    }


def _change(change: Change | None, now: float, procs: int) -> dict[str, Any] | None:
    if change is None:
        return None
    return {
        "kind": change.kind,
        "procs": change.procs,
        "time_limit_s": change.limit_s,
        "delay_s": change.delay_s,
        "predicted_start_s": change.start_s - now,
        "saved_s": change.saved_s,
        "sentence": change_sentence(change, procs),
    }


def _procs(n: int) -> str:
    return f"{n} processor" + ("" if n == 1 else "s")


def _jobs(n: int) -> str:
    return f"{n} job" + ("" if n == 1 else "s")


def reason_sentence(why: Why, held_until_s: float | None = None) -> str:
    """What the request waits for, in words."""
    a, wait = why.ahead, why.wait_s
    if why.reason == "hold":
        return (f"It is held by the hold queue for {duration(held_until_s - why.now_s)}, "
                "then submitted to the batch system.")  # fmt: skip
    if why.reason == "nothing":
        return f"It starts at once: {_procs(max(why.free_procs, 0))} are free and it fits."
    if why.reason == "processors":
        return (f"It waits for processors: it needs {why.procs} and {max(why.free_procs, 0)} "
                "are free. "
                "If every running job runs to its time limit, enough are free in "
                f"{duration(wait)}; nobody queued is ahead of it in that.")  # fmt: skip
    return (f"It waits for the {_jobs(a.queued_procs.size)} queued ahead of it "
            f"({_procs(int(a.queued_procs.sum()))} in all), which start first in arrival order. "
            f"If every job runs to its time limit, it starts in {duration(wait)} behind them, "
            f"{duration(why.alone_start_s - why.now_s)} without them.")  # fmt: skip


def change_sentence(change: Change, procs: int) -> str:
    if change.kind == "fewer_procs":
        return (f"{change.procs} instead of {_procs(procs)} starts about "
                f"{duration(change.saved_s)} sooner.")  # fmt: skip
    if change.kind == "shorter_limit":
        return (f"A time limit of at most {duration(change.limit_s)} can start now "
                f"(about {duration(change.saved_s)} sooner), in a backfill hole.")  # fmt: skip
    return (f"Submitting it up to {duration(change.delay_s)} later still starts it at the same "
            "predicted time (it would wait that much less).")  # fmt: skip


def held_sentence(why: Why) -> str:
    """A held job's one change: releasing it now."""
    if why.wait_s <= 0:
        return "Released now instead, it would start at once."
    return (f"Released now instead, it would start in about {duration(why.wait_s)} "
            "(if every job runs to its time limit).")  # fmt: skip


#: A headline and the queue's start differ "materially" beyond the larger of these.
NOTE_MIN_S, NOTE_SHARE = 300.0, 0.25


def estimate_note(why: Why, headline_s: float | None, history_s: float | None = None) -> str | None:
    """A sentence when the answer's predicted wait ``headline_s`` and the queue's start
    (``why.wait_s``: every job runs to its time limit) differ by more than 5 minutes and 25%
    of the larger; else None. Longer, and the history estimate is the headline: jobs like it
    waited that long here. Shorter: jobs end before their time limits, which the simulation
    does not assume. A held job's block explains the hold, not the estimate: None."""
    if headline_s is None or why.reason == "hold" or not np.isfinite(headline_s):
        return None
    queue_s = max(float(why.wait_s), 0.0)
    gap = float(headline_s) - queue_s
    if abs(gap) <= max(NOTE_MIN_S, NOTE_SHARE * max(float(headline_s), queue_s)):
        return None
    if gap < 0:
        return (f"The predicted wait, {duration(headline_s)}, is shorter: most jobs end before "
                "their time limits, which this simulation does not assume.")  # fmt: skip
    if history_s is not None and float(history_s) < float(headline_s):
        return f"The predicted wait, {duration(headline_s)}, is longer."
    return (f"The predicted wait, {duration(headline_s)}, is longer: jobs like it have waited "
            "about that long here recently (the scheduler may hold a job for priorities, "
            "reservations or limits this simulation does not know).")  # fmt: skip


def sooner_sentence(best: Change | None, procs: int, wait_s: float, longer: bool = False) -> str:
    """``longer``: the predicted wait is materially longer than the queue's start."""
    if wait_s <= 0 and longer:
        return ("Nothing in the queue holds it back, so no single change is predicted to "
                "start it sooner.")  # fmt: skip
    if wait_s <= 0:
        return "Nothing to change: it starts at once."
    if best is None:
        return ("No single smaller size or shorter time limit starts it noticeably sooner "
                "(at least 1 min and 10% of its wait).")  # fmt: skip
    return change_sentence(best, procs)
