"""Opening SWF sources: plain or gzip (by magic bytes), paths or streams, as text."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

from traces.core.swf_limits import LimitedReader, SwfLimits

Source = str | os.PathLike | IO[bytes]
READ_BLOCK = 1 << 20  # bytes per limit check: one numpy pass per MB


@contextmanager
def open_text(
    source: str | os.PathLike | IO[bytes], label: str, limits: SwfLimits | None = None
) -> Iterator[tuple[IO[str], Any, int]]:
    """Yield (text stream, raw byte stream for progress, raw size). Detects gzip by magic.

    With ``limits`` the decompressed bytes pass through a :class:`LimitedReader`.
    """
    owned: IO[bytes] | None = None
    if isinstance(source, (str, os.PathLike)):
        raw: IO[bytes] = open(source, "rb")  # closed below
        owned = raw
    else:
        raw = source
    try:
        size = _size_of(raw)
        magic = raw.read(2)
        raw.seek(0)
        if magic == b"\x1f\x8b":
            binary: IO[bytes] = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
        else:
            binary = raw
        if limits is not None:
            binary = io.BufferedReader(LimitedReader(binary, limits), buffer_size=READ_BLOCK)
        text = io.TextIOWrapper(binary, encoding="utf-8", errors="strict", newline=None)
        try:
            yield text, raw, size
        finally:
            text.detach()
    finally:
        if owned is not None:
            owned.close()


def _size_of(raw: IO[bytes]) -> int:
    try:
        here = raw.tell()
        raw.seek(0, os.SEEK_END)
        size = raw.tell()
        raw.seek(here)
        return size
    except (OSError, AttributeError):
        return 0


@contextmanager
def seekable(source: str | os.PathLike | IO[bytes]) -> Iterator[str | os.PathLike | IO[bytes]]:
    """Sources are read twice on the error path: spool unseekable streams to a temp file."""
    if isinstance(source, (str, os.PathLike)):
        yield source
        return
    try:
        source.seek(source.tell())
        yield source
        return
    except (OSError, AttributeError, io.UnsupportedOperation):
        pass
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(source, spool)
        spool.seek(0)
        yield spool


def rewind(source: str | os.PathLike | IO[bytes]) -> None:
    if not isinstance(source, (str, os.PathLike)):
        source.seek(0)


class _Prepended(io.TextIOBase):
    """A text stream that yields ``first`` and then the rest of ``rest`` (no copy)."""

    def __init__(self, first: str, rest: IO[str]) -> None:
        self._first: str | None = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        head, self._first = self._first or "", None
        if size is None or size < 0:
            return head + self._rest.read()
        return head + self._rest.read(max(0, size - len(head))) if len(head) < size else head

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        if self._first is not None:
            head, self._first = self._first, None
            return head
        return self._rest.readline()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return self

    def __next__(self) -> str:  # type: ignore[override]
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def prepend(first: str, rest: IO[str]) -> _Prepended:
    return _Prepended(first, rest)
