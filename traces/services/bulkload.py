"""Fast insertion of a job table: binary COPY on PostgreSQL, executemany elsewhere.

Both run on the caller's connection, inside the caller's transaction, so a failure
part-way leaves nothing behind once the transaction rolls back.

PostgreSQL's binary COPY format is fixed-width here (every column is int4, int8 or
float8), so a whole chunk is one numpy structured array written with ``tobytes``:
no per-row Python and no text formatting of floats.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pandas as pd
from django.db import connection, models

from traces.models import Job
from traces.services.errors import TraceFormatError

# SWF_FIELDS order -> Job column; only two names differ.
COLUMN_OF_FIELD = {"job_id": "job_number", "preceding_job_id": "preceding_job"}
CHUNK_ROWS = 50_000
_PG_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" * 2  # flags, extension length
_PG_TRAILER = b"\xff\xff"


def job_columns(fields: tuple[str, ...]) -> list[str]:
    """Database column names of ``Job`` for the SWF field names, same order."""
    return [COLUMN_OF_FIELD.get(f, f) for f in fields]


def insert_jobs(
    trace_id: int, jobs: pd.DataFrame, progress: Callable[[float], None] | None = None
) -> int:
    """Insert ``jobs`` (SWF_FIELDS columns) as ``Job`` rows of ``trace_id``; returns the count."""
    frame = jobs.rename(columns=COLUMN_OF_FIELD)
    frame.insert(0, "trace_id", trace_id)
    load = _copy_chunk if connection.vendor == "postgresql" else _executemany_chunk
    total = len(frame)
    for start in range(0, total, CHUNK_ROWS):
        load(frame.iloc[start : start + CHUNK_ROWS])
        if progress is not None:
            progress(min(start + CHUNK_ROWS, total) / total)
    return total


def _pg_dtype(column: str) -> np.dtype:
    field = Job._meta.get_field("trace" if column == "trace_id" else column)
    if isinstance(field, models.FloatField):
        return np.dtype(">f8")
    if isinstance(field, (models.BigIntegerField, models.ForeignKey)):
        return np.dtype(">i8")
    return np.dtype(">i4")


def copy_payload(frame: pd.DataFrame) -> bytes:
    """The rows of ``frame`` in PostgreSQL's binary COPY format."""
    layout: list[tuple[str, object]] = [("n_fields", ">i2")]
    for column in frame.columns:
        layout += [(f"{column}__len", ">i4"), (column, _pg_dtype(column))]
    rows = np.empty(len(frame), dtype=np.dtype(layout))
    rows["n_fields"] = len(frame.columns)
    for column in frame.columns:
        dtype = _pg_dtype(column)
        values = frame[column].to_numpy()
        _check_range(column, values, dtype)
        rows[f"{column}__len"] = dtype.itemsize
        rows[column] = values.astype(dtype)
    return _PG_SIGNATURE + rows.tobytes() + _PG_TRAILER


def _check_range(column: str, values: np.ndarray, dtype: np.dtype) -> None:
    """A cast to int4 would wrap silently: refuse values the column cannot hold."""
    if dtype.kind != "i" or values.size == 0:
        return
    info = np.iinfo(dtype)
    low, high = values.min(), values.max()
    if low < info.min or high > info.max:
        bad = low if low < info.min else high
        raise TraceFormatError(
            f"value {bad} of field {column!r} is outside the stored range [{info.min}, {info.max}]",
            field=column,
            value=str(bad),
        )


def _copy_chunk(frame: pd.DataFrame) -> None:
    columns = ", ".join(connection.ops.quote_name(c) for c in frame.columns)
    sql = f"COPY {Job._meta.db_table} ({columns}) FROM STDIN WITH (FORMAT binary)"
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(sql, io.BytesIO(copy_payload(frame)))


def _executemany_chunk(frame: pd.DataFrame) -> None:
    # .tolist() turns numpy scalars into Python ints/floats, which every driver accepts.
    rows = list(zip(*(frame[c].to_numpy().tolist() for c in frame.columns), strict=True))
    columns = ", ".join(connection.ops.quote_name(c) for c in frame.columns)
    marks = ", ".join(["%s"] * len(frame.columns))
    sql = f"INSERT INTO {Job._meta.db_table} ({columns}) VALUES ({marks})"
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)
