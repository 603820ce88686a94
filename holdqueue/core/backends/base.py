"""The contract every batch-system backend keeps (one module per implementation).

A backend is what Queuecast talks to when it fronts a site: it submits a job, cancels one,
reports the jobs waiting and running now, and the jobs that finished since a time. Django's
session backends are the model: this module states the contract, ``slurm.py`` and
``simulated.py`` implement it, ``registry.make_backend`` picks one by name.

Times at this edge are Unix timestamps (seconds, UTC): a batch system speaks wall-clock time,
and the service converts to the site's seconds-since-epoch where the predictor needs them.

Every job Queuecast submits carries a *tag* (its own id). If Queuecast dies between the
backend accepting a job and the database recording the backend's id, :meth:`Backend.find`
finds the job by its tag, so the job is reconciled instead of being submitted twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

WAITING, RUNNING, FINISHED = "waiting", "running", "finished"
STATES = (WAITING, RUNNING, FINISHED)


class BackendError(Exception):
    """A backend could not do what was asked; ``str()`` is the backend's own message."""


class BackendUnavailable(BackendError):
    """The batch system did not answer (controller down, timeout): retry later."""


class SubmissionRejected(BackendError):
    """The batch system answered and refused the job (bad partition, size, limit...)."""


class SubmissionUncertain(BackendUnavailable):
    """A submission whose outcome is unknown: the tool timed out or the answer was cut off
    after the request may have reached the controller. The job may exist: it must be looked
    up by its tag (:meth:`Backend.find`) before it is ever submitted again or given up."""


@dataclass(frozen=True)
class JobSpec:
    """What to submit.

    tag : Queuecast's id for the job, stored with it in the batch system.
    procs : processors (Slurm tasks of one CPU each).
    time_limit_s : wall-time limit, seconds (>= 1).
    script : the batch script's text (starts with ``#!``); given to the batch system as a file.
    user : the owner's Queuecast name (shown by a simulated cluster; never an account).
    run_as : the cluster account to run the job as (a site that submits as each owner maps
        users to accounts in an explicit table); '' = the service's own account.
    """

    tag: str
    name: str
    procs: int
    time_limit_s: int
    script: str
    user: str = ""
    run_as: str = ""


@dataclass(frozen=True)
class BackendJob:
    """One job as the batch system reports it.

    state : ``waiting``, ``running`` or ``finished``; ``outcome`` says how a job finished
    (``COMPLETED``, ``CANCELLED``, ``FAILED``, ``TIMEOUT``...) or what a live one is doing.
    submit_ts, start_ts, end_ts : Unix seconds; None when it has not happened.
    """

    backend_id: str
    tag: str
    name: str
    user: str
    procs: int
    time_limit_s: float
    state: str
    outcome: str
    submit_ts: float
    start_ts: float | None = None
    end_ts: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Backend(ABC):
    """A batch system Queuecast submits to.

    Every method may raise :class:`BackendUnavailable` (the request did not reach the batch
    system); ``submit`` may raise :class:`SubmissionRejected` (it answered no) or
    :class:`SubmissionUncertain` (it may have the job: look it up by tag first).
    """

    name = "base"

    @abstractmethod
    def submit(self, spec: JobSpec) -> str:
        """Submit a job; return the batch system's id for it."""

    @abstractmethod
    def cancel(self, backend_id: str) -> None:
        """Cancel a waiting or running job (a job already gone is not an error)."""

    @abstractmethod
    def active(self) -> list[BackendJob]:
        """The jobs waiting or running now (state ``waiting`` or ``running``)."""

    @abstractmethod
    def finished_since(self, since_ts: float) -> list[BackendJob]:
        """Jobs that ended at or after ``since_ts`` (state ``finished``)."""

    def find(self, tag: str, since_ts: float) -> BackendJob | None:
        """The job tagged ``tag`` among the live jobs and those finished since ``since_ts``."""
        for job in _chain(self.active(), self.finished_since(since_ts)):
            if job.tag == tag:
                return job
        return None


def _chain(*groups: Iterable[BackendJob]) -> Iterable[BackendJob]:
    for group in groups:
        yield from group
