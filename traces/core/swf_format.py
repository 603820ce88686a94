"""The SWF format's definitions shared by the reader's two paths (see ``traces.core.swf``):
field names and types, the error that names file/line/field/value, the ingest report."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SWF_FIELDS: tuple[str, ...] = (
    "job_id",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_procs",
    "avg_cpu_time",
    "used_memory",
    "requested_procs",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_id",
    "queue_id",
    "partition_id",
    "preceding_job_id",
    "think_time",
)
# Times and amounts may be decimals in real logs; ids and counts are integers.
FLOAT_FIELDS = frozenset(
    {
        "submit_time",
        "wait_time",
        "run_time",
        "avg_cpu_time",
        "used_memory",
        "requested_time",
        "requested_memory",
        "think_time",
    }
)
INT_FIELDS = tuple(f for f in SWF_FIELDS if f not in FLOAT_FIELDS)
CATEGORICAL_FIELDS = (
    "status",
    "user_id",
    "group_id",
    "executable_id",
    "queue_id",
    "partition_id",
    "preceding_job_id",
)
N_FIELDS = len(SWF_FIELDS)
MAX_EXAMPLES = 10


class SwfFormatError(ValueError):
    """A line (or the file) is not valid SWF; names the file, line, field and value."""

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        line: int | None = None,
        field: str | None = None,
        value: str | None = None,
    ) -> None:
        self.path, self.line, self.field, self.value = path, line, field, value
        where = path or "<stream>"
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field!r}"
        if value is not None:
            where += f", value {value!r}"
        super().__init__(f"{where}: {message}")
        self.reason = message


@dataclass
class IngestReport:
    """What reading a file found: counts, skipped lines (lenient) and oddities."""

    lines: int = 0
    job_lines: int = 0
    comment_lines: int = 0
    skipped_lines: int = 0
    skipped_examples: list[dict[str, Any]] = field(default_factory=list)
    oddities: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def skip(self, line: int, reason: str, field_name: str | None, value: str | None) -> None:
        self.skipped_lines += 1
        if len(self.skipped_examples) < MAX_EXAMPLES:
            self.skipped_examples.append(
                {"line": line, "reason": reason, "field": field_name, "value": value}
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "job_lines": self.job_lines,
            "comment_lines": self.comment_lines,
            "skipped_lines": self.skipped_lines,
            "skipped_examples": list(self.skipped_examples),
            "oddities": dict(self.oddities),
            "warnings": list(self.warnings),
        }


def stream_errors(label: str) -> Any:
    """Map decompression/decoding failures to SwfFormatError naming the file."""

    @contextmanager
    def guard() -> Iterator[None]:
        try:
            yield
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise SwfFormatError(f"truncated or corrupt gzip data ({exc})", path=label) from exc
        except UnicodeDecodeError as exc:
            raise SwfFormatError(
                f"binary data, not SWF text (undecodable byte at offset {exc.start})", path=label
            ) from exc

    return guard()


def empty_frame() -> pd.DataFrame:
    return pd.DataFrame({f: np.empty(0, dtype=np.float64) for f in SWF_FIELDS})
