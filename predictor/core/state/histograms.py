"""The six state histograms and their chi-square distances (docs/apq.md, "Distance", the paper
"End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs" Table I).

Two binnings:

- ``union`` (the spec): for a pair of value sets, 10 equal-width bins over the union of
  both sets; relative frequencies ``P, Q``; ``chi2 = sum (P_b - Q_b)^2 / (P_b + Q_b)`` over
  bins with ``P_b + Q_b > 0``. Needs both raw value sets per pair.
- ``fixed`` (our default for speed, measured in docs/apq.md): per histogram kind, B
  equal-width bins on the ``log1p`` scale from 0 to a fixed top (1e7 s, 1e6 procs), so every
  job's histogram is computed once in the sweep and a distance is a (6, B) array operation.

An empty set has all-zero frequencies, so its distance to a non-empty set is 1 and to
another empty set 0.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

N_HIST = 6
W_KINDS = (0, 1, 2)  # W: requested time, requested procs, waited so far
R_KINDS = (3, 4, 5)  # R: requested time, requested procs, run so far
REQUEST_KINDS = slice(0, 2)  # W's requested time and procs: the request enters them
# W's waits (the request enters them as 0) and R: the same for every request at one instant
# (APQ keeps their distances, predictor.core.wait.apq_instant)
INSTANT_KINDS = slice(2, 6)


def value_sets(
    a: Any, t: float, w_rows: np.ndarray, r_rows: np.ndarray, ert: float, procs: float
) -> list[np.ndarray]:
    """Six value sets at time ``t``: W (rows + the target itself) and R rows."""
    return [
        np.append(a.ert[w_rows], ert),
        np.append(a.procs[w_rows], procs),
        np.append(t - a.submit[w_rows], 0.0),
        a.ert[r_rows],
        a.procs[r_rows],
        t - a.start[r_rows],
    ]


TIME_TOP_S = 1e7  # ~116 days: longer requests, waits and runs go to the last bin
PROCS_TOP = 1e6


@lru_cache(maxsize=8)
def trace_edges(bins: int) -> np.ndarray:
    """(6, bins+1) edges on the log1p scale, 0 to a fixed top per kind (made once per
    ``bins``, read-only: every request's state used to build them again, 1% of an answer).

    Fixed tops, not the trace's largest values: edges taken from the data would let a
    future job (a longer wait later in the trace) move the bins of an earlier prediction.
    """
    tops = [TIME_TOP_S, PROCS_TOP, TIME_TOP_S, TIME_TOP_S, PROCS_TOP, TIME_TOP_S]
    edges = np.stack([np.linspace(0.0, np.log1p(top), bins + 1) for top in tops])
    edges.setflags(write=False)
    return edges


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value on the log1p scale; values beyond the edges go to the end bins."""
    return bin_index_of_top(values, edges[-1], len(edges) - 1)


def bin_index_of_top(values: np.ndarray, top: np.ndarray | float, bins: int) -> np.ndarray:
    """:func:`bin_index` on ``bins`` equal bins from 0 to ``top`` (the last edge) on the
    log1p scale; ``top`` may be an array broadcast against ``values`` (several kinds binned
    at once, each on its own edges: the same numbers element by element)."""
    scaled = np.log1p(np.maximum(values, 0.0)) / top * bins
    return np.clip(scaled.astype(np.int64), 0, bins - 1)


def histogram_of_values(values: list[np.ndarray], edges: np.ndarray) -> np.ndarray:
    """(6, B) relative frequencies of six value sets on fixed edges."""
    bins = edges.shape[1] - 1
    out = np.zeros((N_HIST, bins), dtype=np.float32)
    for k, v in enumerate(values):
        if len(v):
            out[k] = np.bincount(bin_index(v, edges[k]), minlength=bins) / len(v)
    return out


def fixed_histograms(
    a: Any,
    w_ptr: np.ndarray,
    w_members: np.ndarray,
    r_ptr: np.ndarray,
    r_members: np.ndarray,
    edges: np.ndarray,
    budget: int = 1 << 21,
) -> np.ndarray:
    """(n, 6, B) float32 relative frequencies for every target, in row chunks of about
    ``budget`` memberships each (bounded temporary memory)."""
    n, bins = a.n, edges.shape[1] - 1
    out = np.zeros((n, N_HIST, bins), dtype=np.float32)
    load = w_ptr + r_ptr + np.arange(n + 1)
    cuts = np.searchsorted(load, np.arange(0, load[-1], budget), side="left")
    bounds = np.unique(np.concatenate([cuts, [n]]))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        lo, hi = int(lo), int(hi)
        rows = np.arange(lo, hi)
        w_tgt, w_mem = _expand(w_ptr, w_members, lo, hi)
        r_tgt, r_mem = _expand(r_ptr, r_members, lo, hi)
        w_tgt, w_mem = np.concatenate([w_tgt, rows]), np.concatenate([w_mem, rows])
        t = a.submit[w_tgt]
        is_self = np.arange(len(w_tgt)) >= len(w_tgt) - len(rows)
        w_vals = [a.ert[w_mem], a.procs[w_mem], np.where(is_self, 0.0, t - a.submit[w_mem])]
        r_vals = [a.ert[r_mem], a.procs[r_mem], a.submit[r_tgt] - a.start[r_mem]]
        for k, (tgt, vals) in enumerate(
            [(w_tgt, v) for v in w_vals] + [(r_tgt, v) for v in r_vals]
        ):
            key = (tgt - lo) * bins + bin_index(vals, edges[k])
            counts = np.bincount(key, minlength=(hi - lo) * bins).reshape(hi - lo, bins)
            total = counts.sum(axis=1, keepdims=True)
            out[lo:hi, k] = counts / np.maximum(total, 1)
    return out


def _expand(
    ptr: np.ndarray, members: np.ndarray, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray]:
    """(target rows, member rows) of CSR rows ``lo..hi-1``."""
    sizes = np.diff(ptr[lo : hi + 1])
    return np.repeat(np.arange(lo, hi), sizes), members[ptr[lo] : ptr[hi]].astype(np.int64)


def chi2_fixed(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(m, 6) chi-square distances between one (6, B) histogram set and m others (m, 6, B).

    Bins empty in both have ``P_b - Q_b = 0``, so any positive divisor there skips them: the
    divisor is raised to the dtype's smallest normal number, which no other bin's ``P_b +
    Q_b`` is below (a share is 0 or at least 1 / its job count), so every other quotient is
    unchanged. (One pass; a boolean mask of the empty bins cost twice the arithmetic.)
    """
    den = q + p[None]
    num = q - p[None]
    num *= num
    np.maximum(den, np.finfo(den.dtype).tiny, out=den)
    num /= den
    return sum_last_axis(num)


def sum_last_axis(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1)`` to the bit, for a short last axis, as whole-plane additions.

    numpy sums each run of ``n`` values pairwise (``pairwise_sum`` in its loops: ``n < 8``
    in order from 0; up to 128 as eight running sums over blocks of eight, combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest in order). Calling
    that once per output costs more than the additions when ``n`` is a histogram's ten bins
    (APQ's distances, 4,000 x 6 sums a target); here the same additions run in the same
    order over the (..., ) planes at once (``tests/core/test_histograms.py`` checks
    equality). Longer axes go to ``x.sum``.
    """
    n = x.shape[-1]
    if n > 128 or n == 0:
        return x.sum(axis=-1)
    if n < 8:
        out = np.zeros(x.shape[:-1], dtype=x.dtype)
        for i in range(n):
            out += x[..., i]
        return out
    r = [x[..., j] for j in range(8)]
    whole = n - n % 8
    for i in range(8, whole, 8):
        r = [r[j] + x[..., i + j] for j in range(8)]
    out = r[0] + r[1]
    out += r[2] + r[3]
    right = r[4] + r[5]
    right += r[6] + r[7]
    out += right
    for i in range(whole, n):
        out += x[..., i]
    return out


def chi2_union(
    p_values: np.ndarray, q_values: np.ndarray, owner: np.ndarray, m: int, bins: int = 10
) -> np.ndarray:
    """(m,) chi-square distances, bins over the union of both value sets (the spec's rule).

    p_values : the target's value set. q_values, owner : the m other sets, flattened, with
    the index (0..m-1) of the set each value belongs to.
    """
    lo = np.full(m, np.min(p_values, initial=np.inf))
    hi = np.full(m, np.max(p_values, initial=-np.inf))
    np.minimum.at(lo, owner, q_values)
    np.maximum.at(hi, owner, q_values)
    width = np.where(hi > lo, (hi - lo) / bins, 1.0)
    lo = np.where(np.isfinite(lo), lo, 0.0)
    q_bin = np.clip(((q_values - lo[owner]) / width[owner]).astype(np.int64), 0, bins - 1)
    q = np.bincount(owner * bins + q_bin, minlength=m * bins).reshape(m, bins).astype(float)
    q /= np.maximum(q.sum(axis=1, keepdims=True), 1.0)
    p_bin = np.clip(
        ((p_values[None, :] - lo[:, None]) / width[:, None]).astype(np.int64), 0, bins - 1
    )
    p_key = (np.arange(m)[:, None] * bins + p_bin).ravel()
    p = np.bincount(p_key, minlength=m * bins).reshape(m, bins) / max(len(p_values), 1)
    num, den = (p - q) ** 2, p + q
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0).sum(axis=1)
