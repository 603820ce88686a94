"""The reader's line-by-line path: exact line, field and value of every problem.

Taken only when the fast path (pandas' C tokenizer) finds something wrong; strict mode
raises at the first bad line, lenient mode skips it and lists it in the report.
"""

from __future__ import annotations

import os
from typing import IO

import numpy as np
import pandas as pd

from traces.core.swf_format import (
    INT_FIELDS,
    N_FIELDS,
    SWF_FIELDS,
    IngestReport,
    SwfFormatError,
    empty_frame,
    stream_errors,
)
from traces.core.swf_io import open_text
from traces.core.swf_limits import (
    SwfLimits,
    check_header_size,
    check_job_count,
    is_unlimited,
    out_of_range,
)

_SLOW_BLOCK = 65_536  # rows held as Python lists before packing into a float64 block


def slow_read(
    src: str | os.PathLike | IO[bytes],
    label: str,
    strict: bool,
    report: IngestReport,
    limits: SwfLimits,
) -> tuple[list[str], pd.DataFrame, int]:
    """Line-by-line diagnosis: exact line, field and value of every problem.

    Rows are packed into float64 blocks every ``_SLOW_BLOCK`` lines, so this path holds
    about the same memory per job as the fast one.
    """
    header_lines: list[str] = []
    blocks: list[np.ndarray] = []
    rows: list[list[float]] = []
    seen_ids: dict[float, int] = {}
    n = n_jobs = header_bytes = 0
    with stream_errors(label), open_text(src, label, limits) as (text, _raw, _size):
        for n, line in enumerate(text, start=1):
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith(";"):
                if n_jobs:
                    report.comment_lines += 1
                else:
                    header_bytes += len(stripped)
                    check_header_size(header_bytes, limits)
                    header_lines.append(stripped)
                continue
            problem = _check_line(stripped, seen_ids)
            if problem is not None:
                reason, field_name, value = problem
                if strict:
                    raise SwfFormatError(reason, path=label, line=n, field=field_name, value=value)
                report.skip(n, reason, field_name, value)
                continue
            values = [float(tok) for tok in stripped.split()]
            seen_ids[values[0]] = n
            rows.append(values)
            n_jobs += 1
            check_job_count(n_jobs, limits)
            if len(rows) == _SLOW_BLOCK:
                blocks.append(np.array(rows, dtype=np.float64))
                rows = []
    if rows:
        blocks.append(np.array(rows, dtype=np.float64))
    if not blocks:
        return header_lines, empty_frame(), n
    frame = pd.DataFrame(np.concatenate(blocks), columns=list(SWF_FIELDS))
    return header_lines, frame, n


def _check_line(
    stripped: str, seen_ids: dict[float, int]
) -> tuple[str, str | None, str | None] | None:
    tokens = stripped.split()
    if "\x00" in stripped:
        return ("binary data, not SWF text (NUL byte)", None, None)
    if len(tokens) != N_FIELDS:
        return (f"expected {N_FIELDS} fields, found {len(tokens)}", None, None)
    for name, token in zip(SWF_FIELDS, tokens, strict=True):
        try:
            value = float(token)
        except ValueError:
            return ("not a number", name, token)
        if not np.isfinite(value):
            return ("not a finite number", name, token)
        if name in INT_FIELDS and value != round(value):
            return ("must be an integer", name, token)
        problem = None if is_unlimited(name, value) else out_of_range(name, value)
        if problem is not None:
            return (problem, name, token)
    job_id = float(tokens[0])
    if job_id in seen_ids:
        return (f"duplicate job number (first on line {seen_ids[job_id]})", "job_id", tokens[0])
    return None
