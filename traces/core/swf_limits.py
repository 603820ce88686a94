"""Limits that keep reading an SWF file bounded, whatever the file, and field ranges.

Enforced *while streaming*: the decompressed bytes, the length of every line, the number
of lines and of job lines, and the header's size are counted as the bytes arrive, so a
0.8 MB gzip bomb stops after ``max_bytes`` of output rather than after it is all in
memory. Field ranges are checked before anything is stored, on every database: integer
fields must fit the columns they go to (32-bit, or 2**53 - 1 for job numbers, beyond which a
float64 no longer holds the integer), times must fit ±2**31 s, and a trace whose span
(first submit to last end) is longer than ``max_span_s`` is refused, since every
time-derived array (utilisation bins, load curves, plots) grows with the span; so is a
requested time longer than ``max_request_s``.

Real archive logs write "unlimited" as the largest 32-bit integer: 2**31 - 1 (or
2**32 - 1) in a requested time, a memory field, ... Those sentinels are not durations, so
:func:`unlimited_to_unknown` stores them as unknown (-1) and the ingest report counts them.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO

import numpy as np
import pandas as pd

from traces.core.swf_format import FLOAT_FIELDS, SWF_FIELDS

INT32 = (-(2**31), 2**31 - 1)
# float64 holds every integer in this range exactly, and no integer outside it parses to a
# value inside it (2**53 + 1 would read as 2**53, so the bound stops one short).
EXACT_INT = (-(2**53 - 1), 2**53 - 1)
SECONDS = (-(2**31), 2**31 - 1)  # 68 years either side of the trace start
AMOUNT = EXACT_INT
# "Unlimited" as archive logs write it (PWA conversions of 32-bit signed/unsigned maxima),
# and the fields where it means "no value" rather than a duration or an amount.
UNLIMITED_SENTINELS = (2.0**31 - 1, 2.0**32 - 1)
# Every decimal field but the submit time (a time of day, never "unlimited"), in SWF order.
UNLIMITED_FIELDS = tuple(f for f in SWF_FIELDS if f in FLOAT_FIELDS and f != "submit_time")

FIELD_RANGES: dict[str, tuple[float, float]] = {
    "job_id": EXACT_INT,
    "submit_time": SECONDS,
    "wait_time": SECONDS,
    "run_time": SECONDS,
    "allocated_procs": INT32,
    "avg_cpu_time": SECONDS,
    "used_memory": AMOUNT,
    "requested_procs": INT32,
    "requested_time": SECONDS,
    "requested_memory": AMOUNT,
    "status": INT32,
    "user_id": INT32,
    "group_id": INT32,
    "executable_id": INT32,
    "queue_id": INT32,
    "partition_id": INT32,
    "preceding_job_id": EXACT_INT,
    "think_time": SECONDS,
}


@dataclass(frozen=True)
class SwfLimits:
    """Bounds of one read. The defaults are the service's (``QUEUECAST_*`` settings).

    Peak memory of a read is about ``max_jobs`` x 0.6 KB plus one 250k-line chunk
    (docs/operations.md gives the figure measured with a hostile file).
    """

    max_bytes: int = 1024 * 2**20  # decompressed
    max_line_bytes: int = 4096
    max_lines: int = 3_000_000
    max_jobs: int = 2_000_000
    max_header_bytes: int = 64 * 1024
    max_span_s: float = 20 * 365.25 * 86400
    max_request_s: float = 20 * 365.25 * 86400


class SwfLimitError(ValueError):
    """The file is over one of the read limits (HTTP 413 in the service)."""

    def __init__(self, message: str, *, line: int | None = None, limit: str = "") -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.reason, self.line, self.limit = message, line, limit


class LimitedReader(io.RawIOBase):
    """A binary stream that counts bytes and lines as they pass, and stops at a limit.

    Line lengths are measured with one numpy pass per block (no per-line Python loop).
    """

    def __init__(self, raw: IO[bytes], limits: SwfLimits) -> None:
        self.raw, self.limits = raw, limits
        self.bytes_read = 0
        self.lines = 0
        self.current_line = 0  # bytes since the last newline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.raw.read(len(buffer))
        n = len(data)
        if n:
            self._count(data)
            buffer[:n] = data
        return n

    def _count(self, data: bytes) -> None:
        self.bytes_read += len(data)
        if self.bytes_read > self.limits.max_bytes:
            raise SwfLimitError(
                f"more than {self.limits.max_bytes} bytes of SWF text once decompressed "
                "(QUEUECAST_MAX_DECOMPRESSED_MB)",
                limit="max_bytes",
            )
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        if len(newlines) == 0:
            lengths = np.array([self.current_line + len(data)])
            self.current_line += len(data)
        else:
            lengths = np.diff(newlines, prepend=-1 - self.current_line) - 1
            self.current_line = len(data) - int(newlines[-1]) - 1
            lengths = np.append(lengths, self.current_line)
        longest = int(lengths.max())
        if longest > self.limits.max_line_bytes:
            at = self.lines + 1 + int(np.argmax(lengths > self.limits.max_line_bytes))
            raise SwfLimitError(
                f"line longer than {self.limits.max_line_bytes} bytes "
                "(QUEUECAST_MAX_LINE_BYTES); an SWF job line has 18 short numbers",
                line=at,
                limit="max_line_bytes",
            )
        self.lines += len(newlines)
        if self.lines > self.limits.max_lines:
            raise SwfLimitError(
                f"more than {self.limits.max_lines} lines (QUEUECAST_MAX_LINES)", limit="max_lines"
            )


def check_job_count(n_jobs: int, limits: SwfLimits) -> None:
    if n_jobs > limits.max_jobs:
        raise SwfLimitError(
            f"more than {limits.max_jobs} jobs (QUEUECAST_MAX_JOBS_PER_TRACE)", limit="max_jobs"
        )


def check_header_size(header_bytes: int, limits: SwfLimits) -> None:
    if header_bytes > limits.max_header_bytes:
        raise SwfLimitError(
            f"header comments longer than {limits.max_header_bytes} bytes", limit="max_header"
        )


def is_unlimited(name: str, value: float) -> bool:
    """``value`` is an archive's "unlimited" sentinel in a field where it means unknown."""
    return name in UNLIMITED_FIELDS and value in UNLIMITED_SENTINELS


def unlimited_to_unknown(frame: pd.DataFrame) -> dict[str, int]:
    """Store "unlimited" sentinels as unknown (-1), in place; counts per field.

    Keys are ``unlimited_<field>`` (the ingest report's oddities), only fields with any.
    """
    counts: dict[str, int] = {}
    for name in UNLIMITED_FIELDS:
        column = frame[name].to_numpy()
        hit = np.isin(column, UNLIMITED_SENTINELS)
        if hit.any():
            frame.loc[hit, name] = -1.0
            counts[f"unlimited_{name}"] = int(hit.sum())
    return counts


def out_of_range(name: str, value: float) -> str | None:
    """Why ``value`` cannot be stored in field ``name`` (None if it can)."""
    low, high = FIELD_RANGES[name]
    if low <= value <= high:
        return None
    return f"out of range: must be within [{low:.0f}, {high:.0f}]"


def columns_in_range(values: np.ndarray, names: list[str]) -> bool:
    """All of ``values`` (rows x fields named ``names``) within their fields' ranges."""
    low = np.array([FIELD_RANGES[n][0] for n in names])
    high = np.array([FIELD_RANGES[n][1] for n in names])
    return bool(np.all((values >= low) & (values <= high)))


def span_problem(
    job_ids: np.ndarray,
    submit: np.ndarray,
    wait: np.ndarray,
    run: np.ndarray,
    requested: np.ndarray,
    limits: SwfLimits,
) -> tuple[str | None, str] | None:
    """(field, why) the trace is too long to analyse, or None if it is not.

    span = max(submit + max(wait, 0) + max(run, 0)) - min(submit), over jobs with a
    known submit time, at most ``max_span_s`` (QUEUECAST_MAX_SPAN_DAYS; a whole-trace
    property, so no field); any requested time at most ``max_request_s``
    (field ``requested_time``, QUEUECAST_MAX_REQUESTED_DAYS).
    """
    if (requested > limits.max_request_s).any():
        worst = int(job_ids[np.argmax(requested)])
        return (
            "requested_time",
            f"job {worst} requests {float(requested.max()) / 86400:.0f} days; the limit is "
            f"{limits.max_request_s / 86400:.0f} days (QUEUECAST_MAX_REQUESTED_DAYS)",
        )
    known = submit >= 0
    if not known.any():
        return None
    end = submit + np.maximum(wait, 0) + np.maximum(run, 0)
    span = float(end[known].max() - submit[known].min())
    if span > limits.max_span_s:
        worst = int(job_ids[known][np.argmax(end[known])])
        return (
            None,
            f"the trace spans {span / 86400:.0f} days (job {worst} ends last); the limit is "
            f"{limits.max_span_s / 86400:.0f} days (QUEUECAST_MAX_SPAN_DAYS)",
        )
    return None
