"""A job request: what a user asks for, before the system decides anything.

The same type serves a job of a stored log, a candidate size during molding, a job arriving in
a replay and a job a user submits to a live site. Seed 002, "System state" (a job is described
by its request: user, group, queue, processors, requested time).

Time is seconds since the trace (or site) epoch; ``submit_s`` is when the request arrives.
Fields SWF leaves optional are -1 when unknown, as in SWF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class JobRequest:
    """One job request.

    user, group, queue, partition, executable : SWF fields 12, 13, 15, 16, 14 (-1 unknown).
    procs : requested processors (SWF 8, falling back to 5).
    req_time_s : requested wall time (SWF 9; 0 when unknown: an unknown estimate adds nothing).
    submit_s : arrival time, seconds since the epoch of the trace or site.
    req_mem : requested memory per processor, KB (SWF 10; -1 unknown).
    job_id : the log's job number or the site's job id, -1 for a hypothetical job.
    """

    user: int
    procs: int
    req_time_s: float
    submit_s: float
    group: int = -1
    queue: int = -1
    partition: int = -1
    executable: int = -1
    req_mem: float = -1.0
    job_id: int = -1

    def with_procs(self, procs: int) -> JobRequest:
        """The same request at another size (a molding candidate)."""
        return replace(self, procs=int(procs))

    def at(self, submit_s: float) -> JobRequest:
        """The same request arriving at another time (a delayed submission)."""
        return replace(self, submit_s=float(submit_s))


@dataclass(frozen=True)
class RequestBatch:
    """Many requests as column arrays (row k = request k), for batched ``predict`` calls."""

    user: np.ndarray
    procs: np.ndarray
    req_time_s: np.ndarray
    submit_s: np.ndarray
    group: np.ndarray
    queue: np.ndarray
    partition: np.ndarray
    executable: np.ndarray
    req_mem: np.ndarray
    job_id: np.ndarray

    def __len__(self) -> int:
        return int(self.procs.shape[0])

    @classmethod
    def of(cls, requests: Sequence[JobRequest]) -> RequestBatch:
        def col(name: str, dtype: type) -> np.ndarray:
            return np.array([getattr(r, name) for r in requests], dtype=dtype)

        return cls(
            user=col("user", np.int64),
            procs=col("procs", np.int64),
            req_time_s=col("req_time_s", np.float64),
            submit_s=col("submit_s", np.float64),
            group=col("group", np.int64),
            queue=col("queue", np.int64),
            partition=col("partition", np.int64),
            executable=col("executable", np.int64),
            req_mem=col("req_mem", np.float64),
            job_id=col("job_id", np.int64),
        )

    def request(self, k: int) -> JobRequest:
        return JobRequest(
            user=int(self.user[k]),
            procs=int(self.procs[k]),
            req_time_s=float(self.req_time_s[k]),
            submit_s=float(self.submit_s[k]),
            group=int(self.group[k]),
            queue=int(self.queue[k]),
            partition=int(self.partition[k]),
            executable=int(self.executable[k]),
            req_mem=float(self.req_mem[k]),
            job_id=int(self.job_id[k]),
        )


def as_batch(requests: JobRequest | Sequence[JobRequest] | RequestBatch) -> RequestBatch:
    """Accept one request, a list of them, or a batch."""
    if isinstance(requests, RequestBatch):
        return requests
    if isinstance(requests, JobRequest):
        return RequestBatch.of([requests])
    return RequestBatch.of(list(requests))
