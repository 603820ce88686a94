"""Fitted models shared by every web and worker process: one file per (kind, id, version).

A fitted bundle takes seconds to minutes to fit (HPC2N: docs/results.md, "Speed"), and
gunicorn runs several worker processes beside the Celery workers. Each used to fit its own
copy. The store keeps one pickled copy on disk instead:

- ``<dir>/<kind>-<id>-<version>.pkl``, written to a temporary name and renamed into place
  (``os.replace`` is atomic), so a reader sees a whole file or none;
- single flight across processes: the fitter holds ``<dir>/<kind>-<id>.lock``
  (``fcntl.flock``); a process that wants the same key waits for it and then loads the file,
  or, when it has an older version to serve, does not wait at all (``try_lock``);
- a fit's status beside its lock (``<kind>-<id>.status.json``: fitting since when, by which
  process, or failed with what), so a process that does not fit can say how the fit goes;
- bounded: after each save the least recently used files go until at most ``max_items``
  files and ``max_bytes`` bytes remain (a load touches its file).

Versions are strings that sort in the order they were made (``latest`` takes the largest).
The directory is ``QUEUECAST_FITTED_DIR``, by default ``fitted`` in the upload folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pickle
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings

SAFE = re.compile(r"[^A-Za-z0-9_.]+")
AUX_KINDS = ("rows-", "runtime_accuracy_")  # file prefixes of per-instant data beside a model


def _part(value: Any) -> str:
    return SAFE.sub("_", str(value))


class FittedStore:
    """Pickled fitted objects on disk (module docstring)."""

    def __init__(self, directory: Path | str, max_items: int = 8, max_bytes: int = 4 << 30):
        self.dir = Path(directory)
        self.max_items, self.max_bytes = max_items, max_bytes

    def path(self, kind: str, ident: str, version: str) -> Path:
        return self.dir / f"{_part(kind)}-{_part(ident)}-{_part(version)}.pkl"

    def load(self, kind: str, ident: str, version: str) -> Any | None:
        """The stored object, or None (missing, or unreadable: it is then removed)."""
        path = self.path(kind, ident, version)
        try:
            with path.open("rb") as f:
                obj = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # a file from an older code version: fit again
            path.unlink(missing_ok=True)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used
        return obj

    def latest(self, kind: str, ident: str) -> tuple[str, Any] | None:
        """(version, object) of the largest stored version of (kind, id), or None."""
        prefix = f"{_part(kind)}-{_part(ident)}-"
        names = sorted(p.name for p in self.dir.glob(f"{prefix}*.pkl")) if self.dir.is_dir() else []
        for name in reversed(names):
            version = name[len(prefix) : -len(".pkl")]
            obj = self.load(kind, ident, version)
            if obj is not None:
                return version, obj
        return None

    def save(self, kind: str, ident: str, version: str, obj: Any) -> None:
        """Write atomically, then evict the least recently used beyond the bounds."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path(kind, ident, version))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.evict()

    def evict(self) -> None:
        """Drop the least recently used files beyond ``max_items`` fitted models and
        ``max_bytes`` in all. Per-instant files beside a model (:data:`AUX_KINDS`: rows and
        accuracies shared by the processes, rewritten at new instants) count only in bytes:
        counted as items they would push the models they belong to out."""
        files = []
        for p in self.dir.glob("*.pkl"):
            with contextlib.suppress(FileNotFoundError):
                st = p.stat()
                files.append((st.st_mtime, st.st_size, p))
        files.sort(reverse=True)  # most recently used first
        total = models = 0
        for n, (_, size, p) in enumerate(files):
            total += size
            models += not p.name.startswith(AUX_KINDS)
            if models > self.max_items or (n > 0 and total > self.max_bytes):
                p.unlink(missing_ok=True)

    @contextlib.contextmanager
    def lock(self, kind: str, ident: str, blocking: bool = True) -> Iterator[bool]:
        """Hold the (kind, id) fit lock; yields False at once when ``blocking`` is False and
        another process (or thread) holds it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with (self.dir / f"{_part(kind)}-{_part(ident)}.lock").open("a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def status_path(self, kind: str, ident: str) -> Path:
        return self.dir / f"{_part(kind)}-{_part(ident)}.status.json"

    def write_status(self, kind: str, ident: str, status: dict[str, Any]) -> None:
        """Replace (kind, id)'s fit status atomically (a JSON object)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(status, f)
        os.replace(tmp, self.status_path(kind, ident))

    def read_status(self, kind: str, ident: str) -> dict[str, Any] | None:
        """The last status written for (kind, id), or None."""
        try:
            return json.loads(self.status_path(kind, ident).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def clear_status(self, kind: str, ident: str) -> None:
        self.status_path(kind, ident).unlink(missing_ok=True)


def default_store() -> FittedStore:
    """The store under ``QUEUECAST_FITTED_DIR`` (default: ``fitted`` in the upload folder)."""
    directory = getattr(settings, "QUEUECAST_FITTED_DIR", None)
    if not directory:
        directory = Path(settings.QUEUECAST_UPLOAD_DIR) / "fitted"
    return FittedStore(directory)
