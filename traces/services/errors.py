"""The traces app's errors, each mapped to HTTP by ``queuecast.errors``."""

from __future__ import annotations

from queuecast.errors import ConflictError, InvalidInput, TooLarge


class TraceFormatError(InvalidInput):
    """The SWF file cannot be read: names the file, line, field and value."""


class TraceNameTaken(ConflictError):
    """A trace with this name exists (pass ``replace=True`` / ``--replace``)."""


class QuotaExceeded(ConflictError):
    """The owner already has ``QUEUECAST_MAX_TRACES_PER_USER`` traces."""


class TraceTooLarge(TooLarge):
    """More jobs than ``QUEUECAST_MAX_JOBS_PER_TRACE`` or an upload over the size limit."""
