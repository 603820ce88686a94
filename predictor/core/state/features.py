"""The state a batch of requests would see in a snapshot: the sweep's 16 summaries and 6
histograms, computed for tentative arrivals instead of log rows.

"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section
"System state", Tables I-II; the rules are those of :mod:`predictor.core.state.sweep`, so a
request arriving at a log job's submit time in a snapshot of that log gets exactly the job's
sweep row (tested). Request k, arriving at ``t_k = submit_s[k]`` in queue ``q_k``:

- W_k = the snapshot's waiting jobs of queue ``q_k`` plus the request itself (waited 0);
- R_k = the snapshot's running jobs of queue ``q_k``;
- "waited so far" is ``t_k - submit_j``, "run so far" ``t_k - start_j``.

A request arriving after ``time_s`` (a delayed submission) sees the snapshot's W and R aged to
its arrival: what is known now, nothing assumed about jobs yet to come.

Cost: (requests x active jobs) numpy arrays, no Python loop over jobs: a few hundred
microseconds for ten candidates against a thousand active jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictor.core.state import histograms as hg
from predictor.core.state.request import RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from predictor.core.state.sweep import SUMMARY_NAMES, summary_columns


@dataclass(frozen=True)
class StateFeatures:
    """Per request (row k): the sweep's columns for a tentative arrival.

    summary : (K, 16) ``SUMMARY_NAMES``. hist : (K, 6, B) float32 relative frequencies on
    ``edges``. wait_count, run_count : (K,) sizes of W (request included) and R in its queue.
    """

    summary: np.ndarray
    hist: np.ndarray
    wait_count: np.ndarray
    run_count: np.ndarray
    edges: np.ndarray
    snapshot: Snapshot
    requests: RequestBatch

    def values(self, k: int) -> list[np.ndarray]:
        """The six exact value sets of request ``k`` (for the union binning)."""
        req, snap = self.requests, self.snapshot
        t, q = float(req.submit_s[k]), int(req.queue[k])
        w = snap.waiting.requests.queue == q
        r = snap.running.requests.queue == q
        wj, rj = snap.waiting.requests, snap.running.requests
        return [
            np.append(wj.req_time_s[w], req.req_time_s[k]),
            np.append(wj.procs[w].astype(float), float(req.procs[k])),
            np.append(t - wj.submit_s[w], 0.0),
            rj.req_time_s[r],
            rj.procs[r].astype(float),
            t - snap.running.start_s[r],
        ]


def _sums(jobs: ActiveJobs, mask: np.ndarray, time_col: np.ndarray) -> np.ndarray:
    """(K, 5) sums over the masked jobs: count, procs x ERT, procs, ERT, a time column."""
    r = jobs.requests
    p, e = r.procs.astype(float), r.req_time_s
    cols = np.column_stack([np.ones(len(r)), p * e, p, e, time_col]) if len(r) else np.zeros((0, 5))
    return mask.astype(float) @ cols


def state_features(
    snapshot: Snapshot, requests: RequestBatch, *, hist_bins: int = 10
) -> StateFeatures:
    """The 16 summaries, 6 histograms and W/R counts of each request (module docstring)."""
    w, r = snapshot.waiting, snapshot.running
    t = requests.submit_s
    procs, ert = requests.procs.astype(float), requests.req_time_s
    w_q = requests.queue[:, None] == w.requests.queue[None, :]
    r_q = requests.queue[:, None] == r.requests.queue[None, :]
    w_u = w_q & (requests.user[:, None] == w.requests.user[None, :])
    r_u = r_q & (requests.user[:, None] == r.requests.user[None, :])
    start = np.where(np.isfinite(r.start_s), r.start_s, 0.0)
    own = np.column_stack([np.ones(len(t)), procs * ert, procs, ert])
    qw, qr = _sums(w, w_q, w.requests.submit_s), _sums(r, r_q, start)
    uw, ur = _sums(w, w_u, w.requests.submit_s)[:, :4] + own, _sums(r, r_u, start)[:, :4]
    qw[:, :4] += own
    qw[:, 4] += t  # the request itself: waited t - t = 0
    summary = summary_columns(procs, ert, uw, ur, qw, qr, t)
    edges = hg.trace_edges(hist_bins)
    hist = _hist(w, r, w_q, r_q, requests, edges)
    return StateFeatures(summary, hist, qw[:, 0], qr[:, 0], edges, snapshot, requests)


def _hist(
    w: ActiveJobs,
    r: ActiveJobs,
    w_q: np.ndarray,
    r_q: np.ndarray,
    requests: RequestBatch,
    edges: np.ndarray,
) -> np.ndarray:
    """(K, 6, B) float32 relative frequencies, the request itself counted in W (waited 0).

    The three W kinds share their mask, as do the three R kinds, so each side is binned in
    one pass and counted by one ``bincount`` (the same integer counts as one per kind)."""
    t = requests.submit_s[:, None]
    k, bins = len(requests), edges.shape[1] - 1
    w_sets = [w.requests.req_time_s, w.requests.procs.astype(float), t - w.requests.submit_s]
    own = np.stack([requests.req_time_s, requests.procs.astype(float), np.zeros(k)])
    r_sets = [r.requests.req_time_s, r.requests.procs.astype(float), t - r.start_s]
    counts = np.concatenate([
        _counts(w_sets, w_q, edges[:3]), _counts(r_sets, r_q, edges[3:])
    ], axis=1)  # fmt: skip
    own_bin = hg.bin_index_of_top(own, edges[:3, -1:], bins)  # (3, K): each on its edges
    counts[np.arange(k)[None, :], np.arange(3)[:, None], own_bin] += 1
    total = counts.sum(axis=2, keepdims=True)
    return (counts / np.maximum(total, 1)).astype(np.float32)


def _counts(sets: list[np.ndarray], mask: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(K, 3, B) counts of three value sets, each (M,) or (K, M), over ``mask``'s entries
    (K, M), each set on its own edges (3, B + 1): one binning and one ``bincount``."""
    k, bins = mask.shape[0], edges.shape[1] - 1
    values = np.stack([np.broadcast_to(v, mask.shape) for v in sets])  # (3, K, M)
    idx = hg.bin_index_of_top(values, edges[:, -1, None, None], bins)
    key = (np.arange(k)[None, :, None] * 3 + np.arange(3)[:, None, None]) * bins + idx
    flat = np.bincount(key[:, mask].ravel(), minlength=k * 3 * bins)
    return flat.reshape(k, 3, bins).astype(np.int64)


__all__ = ["SUMMARY_NAMES", "StateFeatures", "state_features"]
