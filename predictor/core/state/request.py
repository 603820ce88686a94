"""A job request: what a user asks for, before the system decides anything.

The same type serves a job of a stored log, a candidate size during molding, a job arriving in
a replay and a job a user submits to a live site. "End-to-End Predictions-Based Resource
Management Framework for Supercomputer Jobs", section "System state" (a job is described by
its request: user, group, queue, processors, requested time).

Time is seconds since the trace (or site) epoch; ``submit_s`` is when the request arrives.
Fields SWF leaves optional are -1 when unknown, as in SWF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd


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


_INT_FIELDS = ("user", "procs", "group", "queue", "partition", "executable", "job_id")
_FLOAT_FIELDS = ("req_time_s", "submit_s", "req_mem")


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
        cols = {n: np.array([getattr(r, n) for r in requests], np.int64) for n in _INT_FIELDS}
        cols |= {n: np.array([getattr(r, n) for r in requests], np.float64) for n in _FLOAT_FIELDS}
        return cls(**cols)

    @classmethod
    def from_jobs(cls, jobs: pd.DataFrame) -> RequestBatch:
        """The requests of SWF rows (``traces.core.swf.SWF_FIELDS`` columns), vectorised.

        Processors: field 8, else field 5 (else 0); requested time: field 9, 0 when unknown.
        These are the rules of the state sweep (``predictor.core.state.sweep.job_arrays``).
        """
        req = jobs["requested_procs"].to_numpy(np.int64)
        alloc = jobs["allocated_procs"].to_numpy(np.int64)

        def col(name: str, dtype: type) -> np.ndarray:
            return jobs[name].to_numpy(dtype)

        return cls(
            user=col("user_id", np.int64),
            procs=np.where(req > 0, req, np.maximum(alloc, 0)),
            req_time_s=np.maximum(col("requested_time", np.float64), 0.0),
            submit_s=col("submit_time", np.float64),
            group=col("group_id", np.int64),
            queue=col("queue_id", np.int64),
            partition=col("partition_id", np.int64),
            executable=col("executable_id", np.int64),
            req_mem=col("requested_memory", np.float64),
            job_id=col("job_id", np.int64),
        )

    def take(self, index: np.ndarray | slice) -> RequestBatch:
        """The requests at ``index`` (positions or a boolean mask), as a new batch."""
        return RequestBatch(**{n: getattr(self, n)[index] for n in (*_INT_FIELDS, *_FLOAT_FIELDS)})

    def concat(self, other: RequestBatch) -> RequestBatch:
        """This batch followed by ``other``."""
        return RequestBatch(
            **{
                n: np.concatenate([getattr(self, n), getattr(other, n)])
                for n in (*_INT_FIELDS, *_FLOAT_FIELDS)
            }
        )

    def request(self, k: int) -> JobRequest:
        ints: dict[str, Any] = {n: int(getattr(self, n)[k]) for n in _INT_FIELDS}
        floats: dict[str, Any] = {n: float(getattr(self, n)[k]) for n in _FLOAT_FIELDS}
        return JobRequest(**ints, **floats)

    def __iter__(self):
        return (self.request(k) for k in range(len(self)))


def as_batch(requests: JobRequest | Sequence[JobRequest] | RequestBatch) -> RequestBatch:
    """Accept one request, a list of them, or a batch."""
    if isinstance(requests, RequestBatch):
        return requests
    if isinstance(requests, JobRequest):
        return RequestBatch.of([requests])
    return RequestBatch.of(list(requests))
