"""Synthetic rigid-job workloads from the Lublin-Feitelson model.

Lublin, U. and Feitelson, D. G. (2003), "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11). The parameters are those of
the authors' reference generator (``m_lublin99.c``); see docs/synthetic.md. Requested times are
not part of that model: Queuecast adds them (runtime / accuracy, rounded up to a typical value).

Used to ship a demo trace instead of Parallel Workloads Archive logs, which we may not redistribute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.stats import gamma as gamma_dist

from traces.core.swf import FLOAT_FIELDS, SWF_FIELDS

# Typical user estimates (seconds), 5 min .. 48 h; the top exceeds exp(12) s, the runtime cap.
_LADDER_MIN = [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480, 600, 720, 1080, 1440, 2160]
REQUESTED_LADDER_S = 60.0 * np.array([*_LADDER_MIN, 2880])
DEMO_UNIX_START = 1704067200  # 2024-01-01 00:00 UTC: a midnight, so hour of day = time % 86400
_BUCKET_S = 1800.0  # the daily cycle works on 48 half-hour buckets
_CYCLIC_DAY_START = 11  # bucket where the fitted day begins (m_lublin99.c, CYCLIC_DAY_START)


@dataclass(frozen=True)
class LublinParams:
    """Model parameters. The defaults (``BATCH``) are the published batch-job fit; ``ALL_JOBS``
    is the fit for all jobs without job types (values and meaning: docs/synthetic.md).

    Sizes: serial with ``serial_prob``; otherwise ``log2 n ~ U(ulow, umed)`` with ``uprob`` and
    ``U(umed, uhi)`` otherwise, ``uhi = log2(machine_procs)``, ``umed = uhi - umed_below_uhi``,
    rounded to an integer exponent with ``pow2_prob``. Runtimes: ``log t ~ p G(a1, b1) +
    (1 - p) G(a2, b2)``, ``p = clip(pa * n + pb, 0, 1)`` (n in processors, as in the reference
    code), resampled above ``max_log_runtime``. Inter-arrivals: ``log dt ~ G(aarr * arar, barr)``
    (rush hours) stretched by the daily cycle ``G(anum, bnum)`` over half-hour buckets.
    G(a, b) is a gamma with shape a and scale b.
    """

    serial_prob: float = 0.2927
    pow2_prob: float = 0.6686
    ulow: float = 1.2
    umed_below_uhi: float = 2.0
    uprob: float = 0.875
    a1: float = 6.57
    b1: float = 0.823
    a2: float = 639.1
    b2: float = 0.0156
    pa: float = -0.003
    pb: float = 0.6986
    aarr: float = 6.0415
    barr: float = 0.8531
    arar: float = 1.0519
    anum: float = 6.1271
    bnum: float = 5.2740
    max_log_runtime: float = 12.0
    max_log_interarrival: float = 13.0
    accuracy_low: float = 0.1  # Queuecast's addition: runtime / requested ~ U(accuracy_low, 1)


BATCH = LublinParams()
ALL_JOBS = LublinParams(
    serial_prob=0.244,
    pow2_prob=0.576,
    ulow=0.8,
    umed_below_uhi=2.5,
    uprob=0.86,
    a1=4.2,
    b1=0.94,
    a2=312.0,
    b2=0.03,
    pa=-0.0054,
    pb=0.78,
    aarr=10.2303,
    barr=0.4871,
    arar=1.0225,
    anum=8.1737,
    bnum=3.9631,
)
MODELS = {"batch": BATCH, "all": ALL_JOBS}


def generate_lublin(
    n_jobs: int,
    machine_procs: int,
    *,
    rng: np.random.Generator,
    n_users: int = 20,
    params: LublinParams = BATCH,
) -> pd.DataFrame:
    """Draw ``n_jobs`` rigid batch jobs for a machine of ``machine_procs`` processors.

    Parameters
    ----------
    n_jobs : int, >= 0
    machine_procs : int, >= 1. Sets ``uhi = log2(machine_procs)``; sizes never exceed it.
    rng : numpy Generator; the same seed gives the same trace.
    n_users : int, >= 1. Users are drawn with weights ``1/k`` (a few heavy users); groups of 5.
    params : LublinParams, default ``BATCH`` (published batch-job fit).

    Returns
    -------
    pandas.DataFrame, the 18 SWF columns, one row per job (index 0..n-1, job_id 1..n):
    submit_time non-decreasing from 0 (seconds, hour 0 is midnight), run_time >= 1 s,
    requested_time >= run_time, allocated_procs == requested_procs, status 1, queue 1,
    wait_time and unknown fields -1. Columns typed as ``read_swf`` types them
    (``FLOAT_FIELDS`` float64 holding whole numbers, the others int64).
    """
    if n_jobs < 0 or machine_procs < 1 or n_users < 1:
        raise ValueError(
            f"need n_jobs >= 0, machine_procs >= 1, n_users >= 1; got "
            f"{n_jobs}, {machine_procs}, {n_users}"
        )
    submit = _arrival_times(n_jobs, params, rng)
    procs = _job_sizes(n_jobs, machine_procs, params, rng)
    runtime = _runtimes(procs, params, rng)
    requested = _requested_times(runtime, params, rng)
    user = rng.choice(np.arange(1, n_users + 1), size=n_jobs, p=_zipf_weights(n_users))
    jobs = pd.DataFrame({name: np.full(n_jobs, -1, dtype=np.int64) for name in SWF_FIELDS})
    jobs["job_id"] = np.arange(1, n_jobs + 1)
    jobs["submit_time"] = submit
    jobs["run_time"] = runtime
    jobs["allocated_procs"] = procs
    jobs["requested_procs"] = procs
    jobs["requested_time"] = requested
    jobs["status"] = 1
    jobs["user_id"] = user
    jobs["group_id"] = (user - 1) // 5 + 1
    jobs["queue_id"] = 1
    return jobs.astype({name: np.float64 for name in FLOAT_FIELDS})


def lublin_header(
    n_jobs: int,
    machine_procs: int,
    *,
    seed: int | None,
    params: LublinParams = BATCH,
    unix_start_time: int = DEMO_UNIX_START,
) -> list[str]:
    """SWF header lines (each starting with ``"; "``) describing a generated trace."""
    values = " ".join(f"{key}={value:g}" for key, value in asdict(params).items())
    model = next((name for name, known in MODELS.items() if known == params), "custom")
    return [
        "; Version: 2.2",
        "; Computer: Queuecast synthetic (Lublin-Feitelson model)",
        "; Installation: none (synthetic workload, not a real log)",
        f"; MaxJobs: {n_jobs}",
        f"; MaxRecords: {n_jobs}",
        f"; UnixStartTime: {unix_start_time}",
        "; TimeZoneString: UTC",
        f"; MaxNodes: {machine_procs}",
        f"; MaxProcs: {machine_procs}",
        f"; MaxRuntime: {int(np.exp(params.max_log_runtime))}",
        "; MaxQueues: 1",
        "; Queue: 1 batch",
        f"; Note: generated by Queuecast generate_lublin, seed={seed}, model={model}",
        f"; Note: Lublin & Feitelson (2003) parameters: {values}",
    ]


def _job_sizes(
    n: int, machine_procs: int, params: LublinParams, rng: np.random.Generator
) -> np.ndarray:
    """Serial / power-of-two / two-stage-uniform log2 sizes."""
    uhi = np.log2(machine_procs)
    ulow = min(params.ulow, uhi)
    umed = float(np.clip(uhi - params.umed_below_uhi, ulow, uhi))
    kind = rng.random(n)
    first_stage = rng.random(n) <= params.uprob
    low = np.where(first_stage, ulow, umed)
    high = np.where(first_stage, umed, uhi)
    log2_size = low + rng.random(n) * (high - low)
    pow2 = kind <= params.serial_prob + params.pow2_prob
    # floor(uhi) keeps a rounded-up power of two inside a non-power-of-two machine
    log2_size = np.where(pow2, np.minimum(np.floor(log2_size + 0.5), np.floor(uhi)), log2_size)
    procs = np.floor(2.0**log2_size + 0.5).astype(np.int64)
    procs[kind <= params.serial_prob] = 1
    return np.clip(procs, 1, machine_procs)


def _runtimes(procs: np.ndarray, params: LublinParams, rng: np.random.Generator) -> np.ndarray:
    """``floor(exp(x))``, x hyper-gamma with ``p = clip(pa * procs + pb, 0, 1)``."""
    p_first = np.clip(params.pa * procs + params.pb, 0.0, 1.0)

    def draw(idx: np.ndarray) -> np.ndarray:
        first = rng.random(idx.size) <= p_first[idx]
        shape = np.where(first, params.a1, params.a2)
        return rng.gamma(shape, np.where(first, params.b1, params.b2))

    log_runtime = _draw_below(draw, procs.size, params.max_log_runtime)
    return np.floor(np.exp(log_runtime))


def _arrival_times(n: int, params: LublinParams, rng: np.random.Generator) -> np.ndarray:
    """Rush-hour gamma inter-arrivals mapped through the daily cycle.

    The reference code spends ``exp(gamma)`` "points" per job and pays ``w_k`` points per second
    of half-hour bucket k (weights of mean 1). That is a time change: with
    ``W(t) = integral_0^t w(s) ds`` the i-th arrival is ``W^-1(sum of the first i draws)``, which
    is O(n) with ``np.interp`` on the 49 bucket edges of one day (``W(1 day) = 1 day``).
    """

    def draw(idx: np.ndarray) -> np.ndarray:
        return rng.gamma(params.aarr * params.arar, params.barr, size=idx.size)

    gaps = np.exp(_draw_below(draw, max(n - 1, 0), params.max_log_interarrival))
    virtual = np.concatenate([[0.0], np.cumsum(gaps)])[:n]
    edges_virtual = np.concatenate([[0.0], np.cumsum(_bucket_weights(params) * _BUCKET_S)])
    edges_real = _BUCKET_S * np.arange(edges_virtual.size)
    day, in_day = np.divmod(virtual, 86400.0)
    return np.floor(day * 86400.0 + np.interp(in_day, edges_virtual, edges_real))


def _bucket_weights(params: LublinParams) -> np.ndarray:
    """Relative arrival rate of the 48 half-hour buckets, mean 1 (gamma cdf differences)."""
    k = np.arange(_CYCLIC_DAY_START, _CYCLIC_DAY_START + 48)
    mass = gamma_dist.cdf(k + 0.5, params.anum, scale=params.bnum) - gamma_dist.cdf(
        k - 0.5, params.anum, scale=params.bnum
    )
    weights = np.empty(48)
    weights[(k - 1) % 48] = mass
    return weights / weights.mean()


def _requested_times(
    runtime: np.ndarray, params: LublinParams, rng: np.random.Generator
) -> np.ndarray:
    """``runtime / U(accuracy_low, 1)`` rounded up to ``REQUESTED_LADDER_S`` (its top caps it)."""
    accuracy = rng.uniform(params.accuracy_low, 1.0, size=runtime.size)
    slot = np.searchsorted(REQUESTED_LADDER_S, runtime / accuracy, side="left")
    requested = REQUESTED_LADDER_S[np.minimum(slot, REQUESTED_LADDER_S.size - 1)]
    return np.maximum(requested, runtime)  # only matters if a caller raises max_log_runtime


def _draw_below(draw: Callable[[np.ndarray], np.ndarray], n: int, limit: float) -> np.ndarray:
    """Rejection sampling as in the reference code: redraw the values above ``limit``."""
    out = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        values = draw(todo)
        keep = values <= limit
        out[todo[keep]] = values[keep]
        todo = todo[~keep]
    return out


def _zipf_weights(n_users: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, n_users + 1)
    return weights / weights.sum()
