"""Per-job outcome of a replay: the jobs as actually run, and the original request.

A submit policy (``core.policy``) may resize a job or hold it, so the input
:class:`~pyss_adapter.core.jobs.SimJobs` is the *request*, not what ran. Every
statistic reads the "as run" arrays here: size ``n_procs``, ``runtime_s``,
``requested_s``, ``release_s`` (when the job entered the queue). Without a policy
they are the input arrays themselves.

Two waits: ``wait_s = start - submit`` from the original submission (what the user
experiences: a hold delay is part of it) and ``queue_wait_s = start - release``
(what the scheduler did). They are equal when nothing was held.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pyss_adapter.core.jobs import SimJobs


@dataclass
class ReplayResult:
    """Per-job outcome of a replay, in the order of :class:`SimJobs` (by submit time).

    Attributes
    ----------
    jobs : SimJobs, the input requests (original size, submit time, runtime).
    start_s, end_s : ndarray of float64, shape (n,), seconds.
    estimate_s : ndarray, the scheduler's estimate of each job (the estimate source).
    finish_order : ndarray of int64, job indices in termination order.
    reservation_s : ndarray, the first reservation (shadow time) given to a job while
        it was the blocked head of the queue (NaN if it never was; EASY only).
    n_procs, runtime_s, requested_s, release_s : ndarray, shape (n,), the jobs as run
        (default: the input's ``n_procs``, ``runtime_s``, ``estimate_s``, ``submit_s``).
    decisions : dict of job index to the policy's ``SubmitDecision`` (changed jobs only).
    """

    jobs: SimJobs
    start_s: np.ndarray
    end_s: np.ndarray
    estimate_s: np.ndarray
    finish_order: np.ndarray
    reservation_s: np.ndarray
    scheduler: str
    estimates: str
    meta: dict = field(default_factory=dict)
    # None means "as in the input": __post_init__ fills them, so they are arrays after init.
    n_procs: np.ndarray = None  # type: ignore[assignment]
    runtime_s: np.ndarray = None  # type: ignore[assignment]
    requested_s: np.ndarray = None  # type: ignore[assignment]
    release_s: np.ndarray = None  # type: ignore[assignment]
    decisions: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        jobs = self.jobs
        if self.n_procs is None:
            self.n_procs = jobs.n_procs
        if self.runtime_s is None:
            self.runtime_s = jobs.runtime_s
        if self.requested_s is None:
            self.requested_s = jobs.estimate_s
        if self.release_s is None:
            self.release_s = jobs.submit_s

    @property
    def submit_s(self) -> np.ndarray:
        """Original submission times (the input's)."""
        return self.jobs.submit_s

    @property
    def original_procs(self) -> np.ndarray:
        return self.jobs.n_procs

    @property
    def wait_s(self) -> np.ndarray:
        """``start - submit``: from the original submission, hold delay included."""
        return self.start_s - self.jobs.submit_s

    @property
    def queue_wait_s(self) -> np.ndarray:
        """``start - release``: time spent in the scheduler's queue."""
        return self.start_s - self.release_s

    @property
    def delay_s(self) -> np.ndarray:
        """``release - submit``: how long a policy held each job (0 when not held)."""
        return self.release_s - self.jobs.submit_s
