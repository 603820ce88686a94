"""How close the queue-based start is to the start the job gets, over a replayed log.

    nice -n 10 python benchmarks/queue_start_accuracy.py $QUEUECAST_TRACES_DIR/<log>.swf.gz
        [--jobs 4000] [--every 4] [--tune-fraction 0.2]

The log's first ``--jobs`` jobs are replayed with EASY (requested times as estimates), as
``evaluate_molding``'s baseline. At every ``--every``-th arrival after the first
``--tune-fraction`` (the warm-up) an observing policy takes the simulated system's snapshot
(``snapshot_from_engine``), refreshes the replay's bundle on the simulated past
(``ReplayBundle``: wait ``sim``, runtime ``rangeset``, refitted as the history grows by 25%)
and asks ``live_bundle.queue_starts`` for the job's queue-based start, with its own predicted
runtime: the figure a live site answers as ``wait.queue_s``. It changes nothing. After the
replay, each observed job's predicted start is compared with its simulated start: mean
signed error (predicted - actual; > 0: too late) and mean absolute error, seconds, and the
same over the jobs that waited. The running jobs' ends come from ``future.predicted_ends``,
so running this at two commits compares two rules of it.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import ROOT  # noqa: F401  (puts the project on sys.path)

from jobmolding.core.evaluate import prepare
from jobmolding.core.future import forward_starts
from jobmolding.core.live_bundle import queue_starts, running_ends, runtime_ranges
from jobmolding.core.replay_bundle import ReplayBundle
from predictor.core.state.from_engine import snapshot_from_engine
from pyss_adapter.core.replay import replay_jobs
from traces.core.swf import read_swf


def former_ends(snap, ranges) -> np.ndarray:
    """The running jobs' ends by the former rule (kept here for this comparison only):
    start + min(point, limit); a job past that, at its limit (or in 1 s past the limit)."""
    running, now = snap.running, float(snap.time_s)
    point = np.array([r.point_s for r in ranges], float)
    limit = running.requests.req_time_s
    ends = running.start_s + np.where(limit > 0, np.minimum(point, limit), point)
    overdue = np.where(limit > 0, running.start_s + limit, now + 1.0)
    return np.where(ends > now, ends, np.maximum(overdue, now + 1.0))


class Observer:
    """A submit policy that only records, at each observed arrival, the job's queue-based
    start and the running jobs' predicted ends, by the rule in force and the former one."""

    def __init__(self, bundle: ReplayBundle, requests, n_warmup: int, every: int, log) -> None:
        self.bundle, self.requests, self.log = bundle, requests, log
        self.n_warmup, self.every = n_warmup, every
        self.predicted: dict[int, tuple[float, float]] = {}
        self.ends: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = []

    def on_submit(self, engine, j: int, now: float):
        if j < self.n_warmup or (j - self.n_warmup) % self.every:
            return None
        snap = snapshot_from_engine(engine, now, self.log)
        self.bundle.refresh(snap)
        fitted = self.bundle._fitted()
        one = self.requests.take(np.array([j]))
        own = np.array([self.bundle.runtimes(snap, one)[0].point_s])
        _, start = queue_starts(fitted, snap, one, own)
        ranges = runtime_ranges(fitted, snap, snap.running.requests)
        old = former_ends(snap, ranges)
        queued = np.array([r.point_s for r in runtime_ranges(fitted, snap, snap.waiting.requests)])
        s_old, _ = forward_starts(snap, old, queued, one, own)
        first = len(snap.running) + len(snap.waiting)
        self.predicted[j] = (float(start[0]), max(float(s_old[first]), now))
        rows = snap.running.requests.job_id.astype(np.int64)
        self.ends.append((rows, running_ends(fitted, snap), old, now))
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("swf")
    ap.add_argument("--jobs", type=int, default=4000)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--tune-fraction", type=float, default=0.2)
    args = ap.parse_args()
    began = time.process_time()
    swf = read_swf(args.swf)
    frame = swf.jobs.head(args.jobs)
    setup = prepare(frame, int(swf.machine_procs), args.tune_fraction, swf.header.max_runtime)
    bundle = ReplayBundle(setup.jobs.machine_procs)
    obs = Observer(bundle, setup.requests, setup.n_warmup, args.every, setup.frame)
    result = replay_jobs(setup.jobs, "easy", "requested", policy=obs)
    idx = np.array(sorted(obs.predicted), dtype=np.int64)
    actual = np.asarray(result.start_s, float)[idx]
    arrival = np.asarray(setup.jobs.submit_s, float)[idx]
    waited = actual - arrival > 0
    out: dict = {
        "trace": swf.name,
        "jobs": len(setup.jobs),
        "observed": int(idx.size),
        "waited": int(waited.sum()),
        "mean_actual_wait_s": round(float(np.mean(actual - arrival)), 1),
    }
    # the engine's job rows carry the log's job ids; a running job's end by its id
    end_of = dict(
        zip(setup.jobs.job_id.tolist(), np.asarray(result.end_s, float).tolist(), strict=True)
    )
    for k, name in enumerate(("given_elapsed", "former")):
        err = np.array([obs.predicted[j][k] for j in idx]) - actual
        rows = [(np.array([end_of[int(r)] for r in e[0]]), e[1 + k], e[3]) for e in obs.ends]
        end_err = np.concatenate([p - a for a, p, _ in rows]) if rows else np.zeros(0)
        out[name] = {
            "start_mean_signed_error_s": round(float(err.mean()), 1),
            "start_aae_s": round(float(np.abs(err).mean()), 1),
            "waited_start_mean_signed_error_s": round(float(err[waited].mean()), 1),
            "waited_start_aae_s": round(float(np.abs(err[waited]).mean()), 1),
            "running_end_mean_signed_error_s": round(float(end_err.mean()), 1),
            "running_end_aae_s": round(float(np.abs(end_err).mean()), 1),
        }
    out["running_ends_scored"] = int(sum(len(e[0]) for e in obs.ends))
    out["fits"] = bundle.fits_
    out["cpu_s"] = round(time.process_time() - began, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
