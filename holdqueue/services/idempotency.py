"""``Idempotency-Key``: a retried ``POST .../jobs/`` gets the first answer, never a second job.

The key is bounded (:data:`MAX_KEY_CHARS`, printable, not blank) and bound to the whole
request: the SHA-256 of the validated body (defaults filled in, keys sorted) is stored with
the job, and a key replayed with any other body is refused (409), as is a key whose first
request is still talking to the batch system (409, retry): a replay never answers with a
row that could still be deleted (an immediate submission the batch system never received).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from holdqueue.models import Site, SiteJob
from holdqueue.services.errors import BadJob, InProgress, WrongState

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 200


def clean_key(headers: Mapping[str, str]) -> str | None:
    """The request's key (surrounding blanks dropped), None without the header; 400 if bad."""
    if HEADER not in headers:
        return None
    key = headers[HEADER].strip()
    if not key:
        raise BadJob(f"{HEADER} is empty or only whitespace: send a non-blank key", field=HEADER)
    if len(key) > MAX_KEY_CHARS:
        raise BadJob(
            f"{HEADER} is {len(key)} characters; the limit is {MAX_KEY_CHARS}", field=HEADER
        )
    if not key.isprintable():
        raise BadJob(f"{HEADER} holds control characters", field=HEADER)
    return key


def body_hash(data: Mapping[str, Any]) -> str:
    """SHA-256 of the validated request, independent of key order and spacing."""
    text = json.dumps(dict(data), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def replayed(site: Site, user: Any, key: str | None, digest: str) -> SiteJob | None:
    """The job a request with this key created, if any (409 if the body differs or the
    first request is still submitting it)."""
    if not key:
        return None
    job = SiteJob.objects.filter(site=site, owner=user, idempotency_key=key).first()
    if job is None:
        return None
    if job.request_hash and job.request_hash != digest:
        raise WrongState(
            f"{HEADER} {key!r} was used for a different request (the body differs)", field=HEADER
        )
    if job.state == SiteJob.SUBMITTING and job.attempts == 0 and not job.in_doubt:
        raise InProgress(
            f"the request with {HEADER} {key!r} is still being submitted: retry in a few "
            "seconds for its answer",
            field=HEADER,
        )
    return job
