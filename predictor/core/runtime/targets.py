"""Who a runtime method answers for: log rows (the evaluation's fast path) or requests in a
snapshot. Both become one :class:`RuntimeTargets`, so a method runs the same code on both.

For a log row i: its level codes, ``t = submit_i`` (history = jobs ended before t) and the
load predicted at t. For a request in a snapshot: the codes of its (user, size, queue, group)
in the fitted log (-1 where the log has never seen the value), ``t = snapshot.known_at_s``
and the load predicted then. ``n_before`` is the number of log rows arrived (a model retrained
on row blocks uses it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.runtime.history import RuntimeContext
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import Snapshot


@dataclass(frozen=True)
class RuntimeTargets:
    """Targets as columns (row k = target k); ``rows`` is None for snapshot requests."""

    requests: RequestBatch
    codes: dict[str, np.ndarray]
    t_s: np.ndarray
    load: np.ndarray
    n_before: np.ndarray
    rows: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.requests)

    @property
    def req_time_s(self) -> np.ndarray:
        return self.requests.req_time_s

    def key(self, column: str) -> np.ndarray:
        """A tuple column (``user_id``, ``size``, ``queue_id``, ``group_id``) per target."""
        names = {"user_id": "user", "size": "procs", "queue_id": "queue", "group_id": "group"}
        return getattr(self.requests, names[column])

    @classmethod
    def from_rows(cls, ctx: RuntimeContext, rows: np.ndarray) -> RuntimeTargets:
        rows = np.asarray(rows, dtype=np.int64)
        requests = RequestBatch.from_jobs(ctx.jobs.iloc[rows])
        requests = RequestBatch(**{**vars(requests), "procs": ctx.size[rows]})
        return cls(
            requests=requests,
            codes=ctx.level_codes(rows),
            t_s=ctx.submit_s[rows],
            load=ctx.pred_load[rows],
            n_before=rows,
            rows=rows,
        )

    @classmethod
    def from_snapshot(
        cls, ctx: RuntimeContext, snapshot: Snapshot, requests: RequestBatch
    ) -> RuntimeTargets:
        t = float(snapshot.known_at_s)
        n = len(requests)
        keys = zip(requests.user, requests.procs, requests.queue, requests.group, strict=True)
        per_request = [ctx.key_codes(*map(int, key)) for key in keys]
        codes = {
            level: np.array([c[level] for c in per_request], dtype=np.int64) for level in ctx.levels
        }
        return cls(
            requests=requests,
            codes=codes,
            t_s=np.full(n, t),
            load=np.full(n, float(ctx.load_at(t)[0])),
            n_before=np.full(n, snapshot.arrived_rows(ctx.submit_s), dtype=np.int64),
        )
