"""Errors of the live-site service, mapped to HTTP by ``queuecast.errors``."""

from __future__ import annotations

from rest_framework import status

from queuecast.errors import (
    ConflictError,
    InvalidInput,
    NotFoundError,
    QueuecastError,
    ServiceUnavailable,
)


class BackendDown(ServiceUnavailable):
    """The site's batch system did not answer; ``detail`` carries its message."""


class BackendRefused(QueuecastError):
    """The batch system answered with an error we cannot act on (502, its message)."""

    status_code = status.HTTP_502_BAD_GATEWAY


class SiteNotFound(NotFoundError):
    pass


class JobNotFound(NotFoundError):
    pass


class BadJob(InvalidInput):
    pass


class WrongState(ConflictError):
    pass


class SiteBroken(ConflictError):
    """The site cannot take jobs (its trace is gone...): ``detail`` says why."""


class InProgress(ConflictError):
    """A request with this Idempotency-Key is still being answered: retry shortly."""
