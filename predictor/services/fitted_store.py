"""Fitted models shared by every web and worker process: one file per (kind, id, version).

A fitted bundle takes seconds to minutes to fit (HPC2N: docs/results.md, "Speed"), and
gunicorn runs several worker processes beside the Celery workers. Each used to fit its own
copy. The store keeps one pickled copy on disk instead:

- ``<dir>/<kind>-<id>-<version>~<code>.pkl``, written to a temporary name and renamed into
  place (``os.replace`` is atomic), so a reader sees a whole file or none. ``<code>`` is
  :func:`code_tag`, a digest of the source that defines the pickled objects: a deploy that
  changes that code never loads a model fitted by the old code (it fits again, in the
  background), and files of another code tag are removed once an hour old;
- single flight across processes: the fitter holds ``<dir>/<kind>-<id>.lock``
  (``fcntl.flock``); a process that wants the same key waits for it and then loads the file,
  or, when it has an older version to serve, does not wait at all (``try_lock``);
- a fit's status beside its lock (``<kind>-<id>.status.json``: fitting since when, by which
  process, or failed with what), so a process that does not fit can say how the fit goes;
- bounded: after each save the least recently used files go until at most ``max_items``
  files and ``max_bytes`` bytes remain (a load touches its file). A site's refit supersedes
  its older versions, which go first: two 1.6 GB versions of HPC2N's site bundle used to
  push the 1.9 GB trace bundle out of the 4 GB and cost the next trace request a refit.

Versions are strings that sort in the order they were made (``latest`` takes the largest).
The directory is ``QUEUECAST_FITTED_DIR``, by default ``fitted`` in the upload folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import pickle
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings

SAFE = re.compile(r"[^A-Za-z0-9_.]+")
AUX_KINDS = ("rows-", "runtime_accuracy_")  # file prefixes of per-instant data beside a model
CODE_DIRS = ("predictor", "traces/core", "jobmolding/core", "holdqueue/core")
OTHER_CODE_GRACE_S = (
    3600.0  # a file of another code tag may still serve a process not yet restarted
)


def _part(value: Any) -> str:
    return SAFE.sub("_", str(value))


def source_digest(root: Path, dirs: tuple[str, ...]) -> str:
    """The first 12 hex digits of SHA-256 over every ``*.py`` under ``root/dirs``: each file's
    path (relative to ``root``) and bytes, in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for d in dirs for p in (root / d).rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def code_on_disk() -> str:
    """:func:`source_digest` of :data:`CODE_DIRS`, whose classes the store pickles, as the
    files are now."""
    return source_digest(Path(__file__).resolve().parents[2], CODE_DIRS)


@functools.lru_cache(maxsize=1)
def code_tag() -> str:
    """:func:`code_on_disk` read once per process: the code this process runs."""
    return code_on_disk()


def code_changed() -> bool:
    """Has the source on disk changed since this process read it? A child started now would
    run the new code and store under its tag, where this process never looks."""
    return code_on_disk() != code_tag()


class FittedStore:
    """Pickled fitted objects on disk (module docstring)."""

    def __init__(
        self,
        directory: Path | str,
        max_items: int = 8,
        max_bytes: int = 4 << 30,
        code: str | None = None,
    ):
        self.dir = Path(directory)
        self.max_items, self.max_bytes = max_items, max_bytes
        self.code = code_tag() if code is None else _part(code)

    def path(self, kind: str, ident: str, version: str) -> Path:
        return self.dir / f"{_part(kind)}-{_part(ident)}-{_part(version)}~{self.code}.pkl"

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

    def versions(self, kind: str, ident: str) -> list[str]:
        """This code's stored versions of (kind, id), in sort order."""
        prefix, suffix = f"{_part(kind)}-{_part(ident)}-", f"~{self.code}.pkl"
        found = self.dir.glob(f"{prefix}*{suffix}") if self.dir.is_dir() else []
        return sorted(p.name[len(prefix) : -len(suffix)] for p in found)

    def latest(self, kind: str, ident: str) -> tuple[str, Any] | None:
        """(version, object) of the largest stored version of (kind, id), or None."""
        for version in reversed(self.versions(kind, ident)):
            obj = self.load(kind, ident, version)
            if obj is not None:
                return version, obj
        return None

    def save(self, kind: str, ident: str, version: str, obj: Any, supersede: bool = False) -> None:
        """Write atomically, then evict the least recently used beyond the bounds. With
        ``supersede`` the smaller versions of (kind, id) go first: the new one replaces them
        (a site's refit), so they do not push other models out of the bounds."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path(kind, ident, version))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if supersede:
            self.drop_older(kind, ident, version)
        self.evict()

    def drop_older(self, kind: str, ident: str, version: str) -> None:
        """Remove this code's files of (kind, id) whose version sorts before ``version``."""
        for older in self.versions(kind, ident):
            if older < _part(version):
                self.path(kind, ident, older).unlink(missing_ok=True)

    def evict(self) -> None:
        """Drop the least recently used files beyond ``max_items`` fitted models and
        ``max_bytes`` in all. Per-instant files beside a model (:data:`AUX_KINDS`: rows and
        accuracies shared by the processes, rewritten at new instants) count only in bytes:
        counted as items they would push the models they belong to out. Files of another code
        tag go once :data:`OTHER_CODE_GRACE_S` old and never count."""
        files, mine, now = [], f"~{self.code}.pkl", time.time()
        for p in self.dir.glob("*.pkl"):
            with contextlib.suppress(FileNotFoundError):
                st = p.stat()
                if p.name.endswith(mine):
                    files.append((st.st_mtime, st.st_size, p))
                elif now - st.st_mtime > OTHER_CODE_GRACE_S:
                    p.unlink(missing_ok=True)
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
