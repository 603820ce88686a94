"""Per-job CPU use from SWF field 6, and how it varies in time (spec placement.md §1.3, §1.5).

``u_j = min(f6/f4, 1)`` is the share of each allocated core job j keeps busy. Missing
values (f6 <= 0, f4 <= 0) are filled with the median ``u`` of the same user's valid
jobs, else the trace median: the simulated world's ground truth, which a policy sees
only under ``knowledge="oracle"``.

Rank r of job j in sample block k = floor((t - t0)/dt) uses ``X_{j,r}(k)`` cores:

``constant``  X = u_j.
``beta``      X = F^-1(alpha, beta; h(seed, job_id, r, k)), alpha = u(1-rho)/rho,
              beta = (1-u)(1-rho)/rho: mean u, variance rho*u*(1-u).
``trace``     X = c_j(t_k - start_j) / p_j, clipped to [0, 1]: the cores job j used at that
              offset from its start (CSV ``job_id,t_offset_s,cores_used``, each row held
              until the next); ``u_j`` before the first row and for jobs not in the file.
``azure``     X = clip(u_j * A_v[(o + k) mod T] / mean(A_v), 0, 1) for a VM series v.

``h`` chains SplitMix64 over (seed, a, b, c): the same (job, rank, block) gets the
same number under every placement (common random numbers).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import betaincinv

__all__ = [
    "MODELS", "KNOWLEDGE", "UsageError", "UsageModel", "sm", "h", "h_array", "read_azure",
    "read_usage_trace",
]  # fmt: skip

MODELS = ("constant", "beta", "trace", "azure")
TRACE_COLUMNS = ("job_id", "t_offset_s", "cores_used")
KNOWLEDGE = ("oracle", "history")
_M64 = (1 << 64) - 1
_CLIP_WARN = 1.05


class UsageError(ValueError):
    """The trace cannot give per-job CPU use (names the SWF field)."""


def sm(x: int) -> int:
    """SplitMix64 finaliser (mod 2^64)."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def h(seed: int, a: int, b: int, c: int) -> float:
    """Uniform in (0, 1): SplitMix64 chained over ``seed, a, b, c`` (spec §1.5)."""
    z = seed & _M64
    for v in (a, b, c):
        z = sm(z ^ (v & _M64))
    return ((z >> 11) + 0.5) * 2.0**-53


def _sm_array(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def h_array(seed: int, a: np.ndarray | int, b: np.ndarray | int, c: np.ndarray | int) -> np.ndarray:
    """Vectorised :func:`h` (uint64 arithmetic wraps mod 2^64 as the scalar one does)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v).astype(np.int64) for v in (a, b, c)))
    z = np.full(a.shape, seed & _M64, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for v in (a, b, c):
            z = _sm_array(z ^ v.astype(np.uint64))
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


def beta_quantile(u: np.ndarray, rho: float, q: np.ndarray) -> np.ndarray:
    """Beta(u(1-rho)/rho, (1-u)(1-rho)/rho) quantile at ``q``; X = u where u is 0 or 1."""
    u = np.asarray(u, dtype=np.float64)
    k = (1.0 - rho) / rho
    inner = (u > 0) & (u < 1)
    out = np.array(u, dtype=np.float64, copy=True)
    uu = np.where(inner, u, 0.5)
    x = betaincinv(uu * k, (1.0 - uu) * k, q)
    return np.where(inner, x, out)


def read_azure(path: str | Path) -> np.ndarray:
    """V x T matrix of VM CPU % from the Azure sample (columns vm, t, avg, max; avg used)."""
    import pandas as pd

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        frame = pd.read_csv(fh)
    cols = [c.lower() for c in frame.columns]
    frame.columns = cols
    vm = next(c for c in cols if c.startswith("vm"))
    avg = next(c for c in cols if "avg" in c)
    return np.stack([g[avg].to_numpy(np.float64) for _, g in frame.groupby(vm, sort=True)])


def read_usage_trace(path: str | Path) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per-job use series from a CSV ``job_id,t_offset_s,cores_used`` (.gz allowed):
    ``{job_id: (offsets from the job's start in s, ascending; cores used)}``."""
    import pandas as pd

    frame = pd.read_csv(path)
    missing = [c for c in TRACE_COLUMNS if c not in frame.columns]
    if missing:
        raise UsageError(f"usage trace {path}: missing column(s) {missing}; need {TRACE_COLUMNS}")
    bad = frame.index[(frame["cores_used"] < 0) | (frame["t_offset_s"] < 0)]
    if len(bad):
        raise UsageError(
            f"usage trace {path}: line {int(bad[0]) + 2}: t_offset_s and cores_used must be >= 0"
        )
    frame = frame.sort_values(["job_id", "t_offset_s"], kind="stable")
    return {
        int(j): (g["t_offset_s"].to_numpy(np.float64), g["cores_used"].to_numpy(np.float64))
        for j, g in frame.groupby("job_id", sort=False)
    }


def cpu_fraction(
    ratio: np.ndarray, user: np.ndarray, fill: float | None = None
) -> tuple[np.ndarray, dict[str, int]]:
    """``u_j`` and its notes from the raw ratio SWF field 6 / field 4 (NaN = missing).

    Raises :class:`UsageError` naming field 6 when no job has it, unless ``fill``.
    """
    ratio = np.asarray(ratio, np.float64)
    valid = ~np.isnan(ratio) & (ratio > 0)
    notes = {
        "cpu_over_runtime": int((ratio > _CLIP_WARN).sum()),
        "clipped": int((ratio > 1).sum()),
        "imputed_user": 0,
        "imputed_trace": 0,
    }
    u = np.minimum(ratio, 1.0)
    if not valid.any():
        if fill is None:
            raise UsageError(
                "no job has a usable SWF field 6 (average CPU time used); "
                "give --usage-fill F to assume each core is F busy"
            )
        notes["imputed_trace"] = len(u)
        return np.full(len(u), float(fill)), notes
    trace_median = float(np.median(u[valid]))
    missing = ~valid
    if missing.any():
        user = np.asarray(user)
        med = {int(k): float(np.median(u[valid & (user == k)])) for k in np.unique(user[valid])}
        for i in np.flatnonzero(missing):
            v = med.get(int(user[i]))
            if v is None:
                u[i] = trace_median
                notes["imputed_trace"] += 1
            else:
                u[i] = v
                notes["imputed_user"] += 1
    return u, notes


@dataclass
class UsageModel:
    """Instantaneous per-rank CPU use of the jobs of one replay (index = SimJobs order).

    Parameters
    ----------
    u : ndarray (n,), CPU fraction per core in [0, 1] (ground truth).
    job_id : ndarray (n,), the SWF job numbers (hash keys).
    model : "constant" | "beta" | "azure"
    rho : float, Beta variance factor.
    corr : "rank" (independent ranks) | "job" (all ranks of a job move together).
    sample_s : float, block length dt (s).
    t0 : float, first submission (s).
    knowledge : "oracle" | "history", what a policy may know (§1.5).
    seed : int
    azure : ndarray (V, T) or None, VM CPU % series for the ``azure`` model.
    """

    u: np.ndarray
    job_id: np.ndarray
    model: str = "constant"
    rho: float = 0.1
    corr: str = "rank"
    sample_s: float = 300.0
    t0: float = 0.0
    knowledge: str = "oracle"
    seed: int = 0
    azure: np.ndarray | None = None
    notes: dict = field(default_factory=dict)
    fill: float | None = None
    series: dict | None = None  # ``trace``: job_id -> (offsets, cores used)
    procs: np.ndarray | None = None  # ``trace``: allocated processors p_j
    start_s: Any = None  # ``trace``: the replay's start times, bound by replay_jobs
    # Opt-in cache of the draws X_{j,r}(k) (job -> (first block, ranks x blocks)), shared by
    # the replays of one schedule under several placements (metrics._sampled_memo).
    memo: dict | None = None

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise UsageError(f"usage model must be one of {MODELS}; got {self.model!r}")
        if self.knowledge not in KNOWLEDGE:
            raise UsageError(f"usage knowledge must be one of {KNOWLEDGE}; got {self.knowledge!r}")
        if not 0 < self.rho <= 1:
            raise UsageError(f"usage rho must be in (0, 1]; got {self.rho}")
        if self.corr not in ("rank", "job"):
            raise UsageError(f"usage corr must be rank or job; got {self.corr!r}")
        if self.sample_s <= 0:
            raise UsageError(f"usage sample_s must be > 0; got {self.sample_s}")
        if self.model == "azure" and self.azure is None:
            raise UsageError("the azure usage model needs the VM series (--usage-file)")
        if self.model == "trace" and (self.series is None or self.procs is None):
            raise UsageError("the trace usage model needs a job_id,t_offset_s,cores_used file")
        self.u = np.asarray(self.u, dtype=np.float64)
        self._azure_mean = None if self.azure is None else self.azure.mean(axis=1)

    def sigma(self, mu: np.ndarray | float) -> np.ndarray:
        """The model's per-rank standard deviation at mean ``mu``."""
        mu = np.asarray(mu, dtype=np.float64)
        if self.model == "beta":
            return np.sqrt(self.rho * mu * (1.0 - mu))
        if self.model == "azure" and self.azure is not None and self._azure_mean is not None:
            cv = float(np.mean(self.azure.std(axis=1) / np.maximum(self._azure_mean, 1e-12)))
            return np.minimum(mu * cv, 0.5)
        return np.zeros_like(mu)

    def sigma_of(self, j: int, mu: float) -> float:
        """sigma_hat of job j: the model's at ``mu``; ``trace``: the std of the job's
        recorded fractions (0 for a job not in the file)."""
        if self.model != "trace" or self.series is None or self.procs is None:
            return float(self.sigma(mu))
        rows = self.series.get(int(self.job_id[j]))
        if rows is None or self.procs[j] <= 0:
            return 0.0
        return float(np.clip(rows[1] / self.procs[j], 0.0, 1.0).std())

    def trace_use(self, j: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``X_j(k)`` of the ``trace`` model for index arrays ``j`` and blocks ``k``."""
        j, k = np.asarray(j, np.int64), np.asarray(k, np.int64)
        out = self.u[j].astype(np.float64)
        if self.series is None or self.procs is None or self.start_s is None or not len(j):
            return out
        starts = np.asarray(self.start_s, dtype=np.float64)
        t = self.t0 + k * self.sample_s - starts[j]
        order = np.argsort(j, kind="stable")
        for seg in np.split(order, np.flatnonzero(np.diff(j[order])) + 1):
            jj = int(j[seg[0]])
            rows = self.series.get(int(self.job_id[jj]))
            if rows is None or self.procs[jj] <= 0:
                continue
            i = np.searchsorted(rows[0], t[seg], side="right") - 1
            used = np.clip(rows[1][np.maximum(i, 0)] / self.procs[jj], 0.0, 1.0)
            out[seg] = np.where(i >= 0, used, out[seg])
        return out

    def block(self, t: float) -> int:
        return int((t - self.t0) // self.sample_s)

    def ranks_use(self, j: int, ranks: np.ndarray, k: int) -> np.ndarray:
        """``X_{j,r}(k)`` for the given ranks of job index ``j`` in block ``k``."""
        u = self.u[j]
        if self.model == "trace":
            return np.full(len(ranks), self.trace_use(np.array([j]), np.array([k]))[0])
        if self.model == "constant" or u <= 0 or u >= 1:
            return np.full(len(ranks), u)
        jid = int(self.job_id[j])
        if self.model == "beta":
            r = np.zeros(len(ranks), np.int64) if self.corr == "job" else ranks
            kept = self._kept(j, r, k)
            if kept is not None:
                return kept
            return beta_quantile(np.full(len(ranks), u), self.rho, h_array(self.seed, jid, r, k))
        a, mean = self.azure, self._azure_mean
        if a is None or mean is None:
            raise UsageError("the azure usage model needs the VM series")
        v = int(h(self.seed, jid, 0, 0) * a.shape[0])
        o = int(h(self.seed, jid, 1, 0) * a.shape[1])
        x = u * a[v, (o + k) % a.shape[1]] / max(float(mean[v]), 1e-12)
        return np.full(len(ranks), min(max(x, 0.0), 1.0))

    def _kept(self, j: int, r: np.ndarray, k: int) -> np.ndarray | None:
        """X of ranks ``r`` in block ``k`` from ``memo`` when it holds them (the same numbers:
        a draw is a function of job, rank and block only)."""
        entry = self.memo.get(j) if self.memo is not None else None
        if entry is None or not len(r):
            return None
        first, x = entry
        if not first <= k < first + x.shape[1] or int(r.max()) >= x.shape[0]:
            return None
        return x[r, k - first]

    def describe(self) -> dict:
        return {
            "model": self.model,
            "rho": self.rho if self.model == "beta" else None,
            "corr": self.corr if self.model == "beta" else None,
            "sample_s": self.sample_s,
            "knowledge": self.knowledge,
            "seed": self.seed,
            "imputed_user": int(self.notes.get("imputed_user", 0)),
            "imputed_trace": int(self.notes.get("imputed_trace", 0)),
            "clipped": int(self.notes.get("clipped", 0)),
            "cpu_over_runtime": int(self.notes.get("cpu_over_runtime", 0)),
            "fill": self.fill,
        }


def usage_for_jobs(
    jobs: object,
    *,
    model: str = "constant",
    rho: float = 0.1,
    corr: str = "rank",
    sample_s: float = 300.0,
    knowledge: str = "oracle",
    seed: int = 0,
    fill: float | None = None,
    azure: np.ndarray | None = None,
    series: dict | None = None,
) -> UsageModel:
    """The :class:`UsageModel` of converted jobs (``SimJobs`` with ``cpu_frac``)."""
    ratio = getattr(jobs, "cpu_frac", None)
    n = len(jobs.job_id)  # type: ignore[attr-defined]
    if ratio is None:
        ratio = np.full(n, np.nan)
    if fill is not None and not 0 <= fill <= 1:
        raise UsageError(f"usage fill must be in [0, 1]; got {fill}")
    u, notes = cpu_fraction(ratio, jobs.user_id, fill)  # type: ignore[attr-defined]
    t0 = float(jobs.submit_s[0]) if n else 0.0  # type: ignore[attr-defined]
    return UsageModel(
        u=u, job_id=jobs.job_id, model=model, rho=rho, corr=corr,  # type: ignore[attr-defined]
        sample_s=sample_s, t0=t0, knowledge=knowledge, seed=seed, azure=azure,
        notes=notes, fill=fill, series=series,
        procs=np.asarray(jobs.n_procs) if series is not None else None,  # type: ignore[attr-defined]
    )  # fmt: skip


class Knowledge:
    """What a policy may know of job j's use at placement (§1.5): ``mu_hat``, ``sigma_hat``.

    ``history``: mean ``u`` of the same user's jobs finished before now, then of all
    finished jobs, then 1.0; fed by :meth:`finished` (no look at unfinished jobs).
    """

    def __init__(self, usage: UsageModel, user_id: np.ndarray) -> None:
        self.usage = usage
        self.user = np.asarray(user_id)
        self._sum: dict[int, float] = {}
        self._n: dict[int, int] = {}
        self._all = [0.0, 0]

    def finished(self, j: int) -> None:
        if self.usage.knowledge != "history":
            return
        u, k = float(self.usage.u[j]), int(self.user[j])
        self._sum[k] = self._sum.get(k, 0.0) + u
        self._n[k] = self._n.get(k, 0) + 1
        self._all[0] += u
        self._all[1] += 1

    def mu(self, j: int) -> float:
        if self.usage.knowledge == "oracle":
            return float(self.usage.u[j])
        k = int(self.user[j])
        if self._n.get(k):
            return self._sum[k] / self._n[k]
        return self._all[0] / self._all[1] if self._all[1] else 1.0

    def sigma(self, j: int) -> float:
        return self.usage.sigma_of(j, self.mu(j))
