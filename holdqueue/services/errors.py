"""Errors of the live-site service, mapped to HTTP by ``queuecast.errors``."""

from __future__ import annotations

from queuecast.errors import ConflictError, InvalidInput, NotFoundError, ServiceUnavailable


class BackendDown(ServiceUnavailable):
    """The site's batch system did not answer; ``detail`` carries its message."""


class SiteNotFound(NotFoundError):
    pass


class JobNotFound(NotFoundError):
    pass


class BadJob(InvalidInput):
    pass


class WrongState(ConflictError):
    pass
