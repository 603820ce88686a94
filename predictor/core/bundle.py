"""One fitted bundle per log, and the one call that answers a batch of job requests.

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section
on job molding: for each candidate request the framework predicts its queue wait and its
runtime rangeSet, "these predictions are added to obtain a rangeSet of predicted response
times". :func:`predict_requests` does exactly that for a batch of requests arriving in one
snapshot, with every method fitted once per log in a :class:`FittedBundle`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from predictor.core.response import response_rangeset
from predictor.core.runtime.auto import CalibratedRuntime
from predictor.core.runtime.choose import COVERAGE_CEILING, Choice, choose_runtime_method
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.history import build_context as runtime_context
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.runtime.registry import make_method as make_runtime
from predictor.core.runtime.remaining import LimitFractions
from predictor.core.runtime.types import RuntimeMethod
from predictor.core.shared_fits import fit_scope
from predictor.core.state.request import JobRequest, RequestBatch, as_batch
from predictor.core.state.snapshot import LogColumns, Snapshot, from_log
from predictor.core.state.sweep import compute_state
from predictor.core.wait.registry import make_method as make_wait
from predictor.core.wait.types import WaitContext, WaitMethod

TUNE_FRACTION = 0.2  # the same share as the default evaluations


@dataclass
class FittedBundle:
    """The wait, bound and runtime methods fitted on one log (one sweep, one context each).

    wait : answers the wait point (APQ by default). bound : answers the upper bound (QBETS's
    0.95 bound by default; None for none). runtime : answers the rangeSet (the paper's).
    runtime_choice : how the runtime method was chosen on the tuning part, when it was
    (``runtime_method="choose"``, :func:`predictor.core.runtime.choose.choose_runtime_method`).
    """

    wait_ctx: WaitContext
    runtime_ctx: RuntimeContext
    wait: WaitMethod | None
    bound: WaitMethod | None
    runtime: RuntimeMethod
    fit_s: float
    runtime_choice: Choice | None = None

    @property
    def has_waits(self) -> bool:
        """False for a log without a single known wait (nothing to learn waits from)."""
        return self.wait is not None

    @property
    def jobs(self) -> pd.DataFrame:
        return self.wait_ctx.jobs

    @property
    def machine_procs(self) -> int:
        return self.wait_ctx.machine_procs

    @cached_property
    def log_columns(self) -> LogColumns:
        """The columns snapshots of the fitted log read, extracted once."""
        return LogColumns.of(self.jobs)

    def train_ahead(self, tuning_part: bool = True) -> FittedBundle:
        """Train now every model the three methods would train lazily for any instant
        (quantile and GBM models per row block, density's block levels, ``auto``'s scored
        pool): a stored bundle then answers every instant without training. Answers are
        unchanged (each is a function of the instant's past only). ``tuning_part=False``:
        only for instants after the tuning part (a live site is asked about "now" only; the
        tuning part's blocks cost HPC2N +10% of its train-ahead, docs/results.md)."""
        for method in (self.wait, self.bound, self.runtime):
            if method is not None:
                method.train_ahead(tuning_part)
        return self

    @cached_property
    def limit_fractions(self) -> LimitFractions:
        """The fitted history's runtime / time limit by user, for the running jobs' ends
        given how long they have run (``predictor.core.runtime.remaining``)."""
        return LimitFractions.from_history(self.jobs)

    def snapshot(self, time_s: float) -> Snapshot:
        """The fitted log's state at ``time_s`` (every job submitted by then has arrived)."""
        return from_log(
            self.jobs, time_s, machine_procs=self.machine_procs, columns=self.log_columns
        )


def fit_bundle(
    jobs: pd.DataFrame,
    machine_procs: int,
    *,
    wait_method: str = "apq",
    bound_method: str | None = "qbets",
    runtime_method: str = "rangeset",
    tune_fraction: float = TUNE_FRACTION,
    random_state: int = 0,
) -> FittedBundle:
    """Sweep the log once and fit the three methods (settings chosen on its first
    ``tune_fraction`` of jobs). ``jobs``: SWF columns, sorted by submit time. A log without
    any known wait gets no wait methods (``has_waits`` is False).

    ``runtime_method="choose"`` picks the runtime method on the tuning part (best success at
    a coverage ceiling, ``predictor.core.runtime.choose``); a tuning part too small to
    choose on falls back to ``CHOOSE_FALLBACK``, and ``runtime_choice`` says so."""
    started = time.perf_counter()
    n_tune = int(tune_fraction * len(jobs))
    wait_ctx = WaitContext(jobs, compute_state(jobs), n_tune, int(machine_procs))
    params = RuntimeParams(tune_fraction=tune_fraction)
    run_ctx = runtime_context(jobs, float(machine_procs), params, n_tune=n_tune)
    waits = bool((jobs["wait_time"] >= 0).any())
    wait = make_wait(wait_method, random_state).fit(wait_ctx) if waits else None
    bound = make_wait(bound_method, random_state).fit(wait_ctx) if waits and bound_method else None
    choice = None
    with fit_scope():  # the choice's candidates and the chosen method share identical fits
        if runtime_method == "choose":
            choice = choose_runtime(run_ctx, random_state)
            runtime_method = choice.name
        runtime = make_runtime(runtime_method, random_state).fit(run_ctx)
    if choice is not None and choice.dev_jobs:  # stated probabilities as the dev jobs bore out
        runtime = CalibratedRuntime(runtime, choice.calibration)
    return FittedBundle(
        wait_ctx, run_ctx, wait, bound, runtime, time.perf_counter() - started, choice
    )


CHOOSE_FALLBACK = "rangeset"


def choose_runtime(ctx: RuntimeContext, random_state: int) -> Choice:
    """The runtime method of best success at the coverage ceiling on ``ctx``'s tuning part,
    or ``CHOOSE_FALLBACK`` with the reason when there are no dev jobs to choose on."""
    try:
        return choose_runtime_method(ctx, make_runtime, random_state=random_state)
    except ValueError as exc:
        nan = float("nan")
        return Choice(
            name=CHOOSE_FALLBACK, params={}, tuning_success=nan, tuning_coverage=nan,
            tuning_ece=nan, ceiling=COVERAGE_CEILING, dev_jobs=0,
            reason=f"{CHOOSE_FALLBACK}: nothing to choose on ({exc})",
        )  # fmt: skip


@dataclass(frozen=True)
class WaitAnswer:
    """What the framework predicts for one request's wait.

    wait_s : the wait point, seconds; wait_upper_s : the bound method's upper bound (None
    without one). wait_method / wait_predictor : the method and its sub-predictor that
    answered (APQ: "stddev", "regression", "weighted_avg", "fallback_median", ...).
    """

    request: JobRequest
    wait_s: float
    wait_upper_s: float | None
    wait_method: str
    wait_predictor: str | None
    wait_support: int | None


@dataclass(frozen=True)
class RequestAnswer(WaitAnswer):
    """What the framework predicts for one request: its wait (:class:`WaitAnswer`), and

    runtime : the runtime rangeSet; ``runtime.level`` is the history level used (``tuple``,
    else the fallbacks ``user``, ``size``, ``all``, ``none``). response : wait + runtime.
    """

    runtime: RangeSet
    runtime_method: str
    response: RangeSet


def predict_waits(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: JobRequest | list[JobRequest] | RequestBatch,
) -> list[WaitAnswer]:
    """The wait (point and bound) of each request arriving in ``snapshot``, without its
    runtime: what :func:`predict_requests` answers for the wait, for a caller that shows
    only the wait. One batched call per method. Raises ``ValueError`` for a bundle without
    wait methods."""
    if bundle.wait is None:
        raise ValueError("the log has no known waits (SWF field 3 is -1 for every job)")
    batch = as_batch(requests)
    wait = bundle.wait.predict(snapshot, batch)
    upper = None if bundle.bound is None else bundle.bound.predict(snapshot, batch).upper_s
    return [
        WaitAnswer(
            request=request,
            wait_s=float(wait.wait_s[k]),
            wait_upper_s=None if upper is None else float(upper[k]),
            wait_method=bundle.wait.name,
            wait_predictor=None if wait.predictor is None else str(wait.predictor[k]),
            wait_support=None if wait.support is None else int(wait.support[k]),
        )
        for k, request in enumerate(batch)
    ]


def predict_requests(
    bundle: FittedBundle,
    snapshot: Snapshot,
    requests: JobRequest | list[JobRequest] | RequestBatch,
    runtimes: list[RangeSet] | None = None,
) -> list[RequestAnswer]:
    """Wait, runtime rangeSet and response rangeSet of each request arriving in ``snapshot``.

    One batched call per method: the candidates of a molding arrival cost one state
    computation and one history look-up per method, not one each. ``runtimes``: the
    requests' runtime rangeSets when the caller already has them (a molding arrival under a
    work-conserving model: the job's own rangeSet scaled to each size,
    ``jobmolding.core.arrival.mold_on``); the runtime method is then not asked, and each
    response is that rangeSet plus the wait. A wait never reads the request's runtime
    (``predict_waits``). Raises ``ValueError`` for a bundle without wait methods, or for
    ``runtimes`` of another length than the requests.
    """
    batch = as_batch(requests)
    if runtimes is not None and len(runtimes) != len(batch):
        raise ValueError(f"{len(runtimes)} runtimes for {len(batch)} requests")
    waits = predict_waits(bundle, snapshot, batch)
    ranges = bundle.runtime.predict(snapshot, batch).ranges if runtimes is None else runtimes
    answers = []
    for k, wait in enumerate(waits):
        rs = ranges[k]
        answers.append(
            RequestAnswer(
                **vars(wait),
                runtime=rs,
                runtime_method=bundle.runtime.name,
                response=response_rangeset(rs, wait.wait_s),
            )
        )
    return answers


__all__ = [
    "FittedBundle",
    "RequestAnswer",
    "WaitAnswer",
    "fit_bundle",
    "predict_requests",
    "predict_waits",
]
