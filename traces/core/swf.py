"""Standard Workload Format (SWF) reader and writer.

The SWF of the Parallel Workloads Archive is a text file: ``;`` comment lines
(the header, ``; Key: value``) and one line per job with 18 whitespace-separated
numbers, ``-1`` meaning "missing" in any field.

Reading takes the fast path first: pandas' C tokenizer over the whole stream,
in chunks (about 1 M lines in a couple of seconds). Only when that path finds a
problem (wrong field count, a non-number, a duplicate job number) does a slower
line-by-line diagnosis run, to name the file, line, field and value (strict
mode) or to skip exactly the bad lines and report them (lenient mode).

Oddities that real logs have are kept and counted in :class:`IngestReport`,
never dropped silently and never errors: out-of-order submit times (sorted, with
a warning), missing submit/run/wait/requested times, 0 allocated processors,
values below -1 in categorical fields, headers with no Version line or with a
composite MaxProcs such as ``1664 (72, 1368, 224)``.
"""

from __future__ import annotations

import gzip
import io
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import pandas as pd

from traces.core.swf_format import (
    CATEGORICAL_FIELDS,
    FLOAT_FIELDS,
    INT_FIELDS,
    SWF_FIELDS,
    IngestReport,
    SwfFormatError,
    empty_frame,
    stream_errors,
)
from traces.core.swf_header import SwfHeader, parse_header
from traces.core.swf_io import open_text, prepend, rewind, seekable
from traces.core.swf_limits import (
    SwfLimitError,
    SwfLimits,
    check_header_size,
    check_job_count,
    columns_in_range,
    span_problem,
)
from traces.core.swf_slow import slow_read

__all__ = [
    "SWF_FIELDS",
    "FLOAT_FIELDS",
    "INT_FIELDS",
    "CATEGORICAL_FIELDS",
    "IngestReport",
    "SwfFormatError",
    "SwfLimitError",
    "SwfLimits",
    "SwfHeader",
    "SwfTrace",
    "read_swf",
    "write_swf",
    "format_jobs",
]

_CHUNK_LINES = 250_000
_EXTRA = "_extra"  # a 19th column: any value in it means a line with more than 18 fields

ProgressFn = Callable[[float], None]


@dataclass
class SwfTrace:
    """A parsed log: header, jobs (18 typed columns, sorted by submit time) and report."""

    header: SwfHeader
    jobs: pd.DataFrame
    report: IngestReport = field(default_factory=IngestReport)
    name: str = ""

    @property
    def machine_procs(self) -> int | None:
        """Header MaxProcs, else MaxNodes, else the largest allocation or request seen."""
        if self.header.machine_procs:
            return self.header.machine_procs
        if len(self.jobs) == 0:
            return None
        largest = max(
            int(self.jobs["allocated_procs"].max()), int(self.jobs["requested_procs"].max())
        )
        return largest if largest > 0 else None


# --------------------------------------------------------------------------- reading


def read_swf(
    source: str | os.PathLike | IO[bytes],
    *,
    strict: bool = True,
    name: str | None = None,
    progress: ProgressFn | None = None,
    limits: SwfLimits | None = None,
) -> SwfTrace:
    """Parse an SWF log (``.swf`` or ``.swf.gz``, a path or a binary file object).

    Parameters
    ----------
    source : path or binary stream; gzip is detected by its magic bytes.
    strict : if True (default) the first bad line raises :class:`SwfFormatError`;
        if False bad lines are skipped and listed in ``report.skipped_examples``.
    name : label used in error messages (defaults to the file name).
    progress : called with the fraction of the (compressed) bytes read.
    limits : bounds enforced while streaming (:class:`SwfLimits`; defaults when None);
        over one raises :class:`SwfLimitError`. Every job line must have exactly 18
        fields and every value must fit its field's range (``swf_limits.FIELD_RANGES``).

    Returns
    -------
    SwfTrace with ``jobs`` sorted by submit time (stable), 18 typed columns.
    """
    label = name or (os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<upload>")
    limits = limits or SwfLimits()
    with seekable(source) as src:
        header_lines, frame, n_lines = _fast_read(src, label, progress, limits)
        report = IngestReport()
        if frame is None or not _fast_frame_ok(frame):
            rewind(src)
            header_lines, frame, n_lines = slow_read(src, label, strict, report, limits)
    report.lines = n_lines
    report.comment_lines = len(header_lines) + report.comment_lines
    header = parse_header(header_lines, report.oddities)
    if not header_lines and len(frame) == 0:
        raise SwfFormatError("empty file: no header and no job lines", path=label)
    if len(frame) == 0:
        raise SwfFormatError("no job lines (only comments)", path=label)
    jobs = _finish_frame(frame, label, strict, report)
    _check_span(jobs, label, limits)
    return SwfTrace(header=header, jobs=jobs, report=report, name=name or Path(label).name)


def _fast_read(
    src: str | os.PathLike | IO[bytes], label: str, progress: ProgressFn | None, limits: SwfLimits
) -> tuple[list[str], pd.DataFrame | None, int]:
    """Header by readline, then pandas' C reader in chunks. None frame = take the slow path."""
    with stream_errors(label), open_text(src, label, limits) as (text, raw, size):
        header_lines, first_data = _read_header(text, label, limits)
        if first_data is None:
            return header_lines, empty_frame(), len(header_lines)
        body = prepend(first_data, text)
        chunks: list[pd.DataFrame] = []
        n_rows = 0
        try:
            for chunk in _csv_chunks(cast(IO[str], body)):
                if chunk[_EXTRA].notna().any():
                    return header_lines, None, 0  # a line with more than 18 fields
                chunks.append(chunk.drop(columns=_EXTRA))
                n_rows += len(chunk)
                check_job_count(n_rows, limits)
                if progress and size:
                    progress(min(0.99, raw.tell() / size))
        except SwfLimitError:
            raise
        except (ValueError, pd.errors.ParserError, IndexError):
            return header_lines, None, 0
        frame = pd.concat(chunks, ignore_index=True) if chunks else empty_frame()
        # Line count = header + data rows (+ interior comments, counted on the slow path only).
        return header_lines, frame, len(header_lines) + len(frame)


def _csv_chunks(body: IO[str]) -> Iterator[pd.DataFrame]:
    """pandas' C tokenizer with a 19th column that stays empty on a valid 18-field line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        yield from pd.read_csv(
            body,
            sep=r"\s+",
            header=None,
            names=[*SWF_FIELDS, _EXTRA],
            index_col=False,
            comment=";",
            dtype=np.float64,
            engine="c",
            chunksize=_CHUNK_LINES,
            skip_blank_lines=True,
        )


def _read_header(text: IO[str], label: str, limits: SwfLimits) -> tuple[list[str], str | None]:
    """Leading comment/blank lines; returns them and the first data line (or None)."""
    lines: list[str] = []
    header_bytes = 0
    for line in text:
        stripped = line.strip()
        if stripped.startswith(";"):
            header_bytes += len(stripped)
            check_header_size(header_bytes, limits)
            lines.append(stripped)
        elif stripped:
            if "\x00" in line:
                raise SwfFormatError("binary data, not SWF text (NUL byte)", path=label)
            return lines, line
    return lines, None


def _fast_frame_ok(frame: pd.DataFrame) -> bool:
    """NaN means a short line or a 'nan' token; duplicates need line numbers: slow path.

    Column by column, so the check needs a few MB beside the frame, not a copy of it.
    """
    for name in SWF_FIELDS:
        column = frame[name].to_numpy()
        if not np.all(np.isfinite(column)):  # NaN (a short line), inf
            return False
        if not columns_in_range(column[:, None], [name]):
            return False
        if name in INT_FIELDS and not np.array_equal(column, np.round(column)):
            return False
    return not frame["job_id"].duplicated().any()


def _finish_frame(
    frame: pd.DataFrame, label: str, strict: bool, report: IngestReport
) -> pd.DataFrame:
    """Type the columns, count oddities, sort by submit time (stable)."""
    report.job_lines = len(frame)
    jobs = pd.DataFrame(
        {
            f: frame[f].to_numpy(np.int64) if f in INT_FIELDS else frame[f].to_numpy(np.float64)
            for f in SWF_FIELDS
        }
    )
    _count_oddities(jobs, report)
    submit = jobs["submit_time"].to_numpy()
    descents = int(np.count_nonzero(np.diff(submit) < 0))
    if descents:
        report.oddities["submit_out_of_order"] = descents
        report.warnings.append(
            f"{descents} job(s) submitted earlier than the line before them; "
            "jobs sorted by submit time"
        )
        jobs = jobs.sort_values("submit_time", kind="stable", ignore_index=True)
    return jobs


def _count_oddities(jobs: pd.DataFrame, report: IngestReport) -> None:
    counts = {
        "missing_submit_time": int((jobs["submit_time"] < 0).sum()),
        "missing_wait_time": int((jobs["wait_time"] < 0).sum()),
        "missing_run_time": int((jobs["run_time"] < 0).sum()),
        "missing_requested_time": int((jobs["requested_time"] < 0).sum()),
        "zero_allocated_procs": int((jobs["allocated_procs"] == 0).sum()),
        "missing_allocated_procs": int((jobs["allocated_procs"] < 0).sum()),
    }
    for name in CATEGORICAL_FIELDS:
        counts[f"below_minus_one_{name}"] = int((jobs[name] < -1).sum())
    report.oddities.update({k: v for k, v in counts.items() if v})


def _check_span(jobs: pd.DataFrame, label: str, limits: SwfLimits) -> None:
    problem = span_problem(
        jobs["job_id"].to_numpy(),
        jobs["submit_time"].to_numpy(),
        jobs["wait_time"].to_numpy(),
        jobs["run_time"].to_numpy(),
        jobs["requested_time"].to_numpy(),
        limits,
    )
    if problem is not None:
        raise SwfFormatError(problem, path=label, field="run_time")


# --------------------------------------------------------------------------- writing


def format_jobs(jobs: pd.DataFrame) -> str:
    """SWF text of the job lines (newline-terminated); integral floats have no decimals.

    Float columns that hold only integers are written as integers; the others
    mix integer text and numpy's shortest round-trip repr, so parsing the text
    back gives the same float64 values.
    """
    if len(jobs) == 0:
        return ""
    columns: dict[str, Any] = {}
    for name in SWF_FIELDS:
        values = jobs[name].to_numpy()
        if name in INT_FIELDS:
            columns[name] = values.astype(np.int64)
            continue
        values = values.astype(np.float64)
        integral = values == np.round(values)
        if integral.all():
            columns[name] = values.astype(np.int64)
            continue
        text = values.astype(str).astype(object)
        text[integral] = values[integral].astype(np.int64).astype(str)
        columns[name] = text
    buf = io.StringIO()
    pd.DataFrame(columns).to_csv(buf, sep=" ", header=False, index=False, lineterminator="\n")
    return buf.getvalue()


def write_swf(trace: SwfTrace, dest: str | os.PathLike | IO[str]) -> None:
    """Write ``trace`` as SWF text (gzip when the path ends in ``.gz``).

    The header is written from its raw lines, so parse -> write -> parse gives
    the same header and the same jobs.
    """
    lines = trace.header.to_lines()
    body = format_jobs(trace.jobs)
    if isinstance(dest, (str, os.PathLike)):
        opener = gzip.open if os.fspath(dest).endswith(".gz") else open
        with opener(dest, "wt", encoding="utf-8") as out:
            _write(out, lines, body)
    else:
        _write(dest, lines, body)


def _write(out: IO[str], header_lines: list[str], body: str) -> None:
    for line in header_lines:
        out.write(line + "\n")
    out.write(body)
