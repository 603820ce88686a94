"""A bundle trained ahead answers bit for bit as the lazy one, on a log's test arrivals.

    python benchmarks/train_ahead_check.py --swf $QUEUECAST_TRACES_DIR/HPC2N-2002-2.2-cln.swf.gz \
        [--wait apq] [--runtime density] [--arrivals 30] [--candidates 4] [--shuffle]
        [--lazy-only --save F.npz | --check F.npz]

One process, no database: ``fit_bundle`` once, two copies (pickle round trip). The lazy copy
answers ``--arrivals`` arrivals of the test part (evenly spread, in log order unless
``--shuffle``), ``--candidates`` sizes each, through ``predict_requests`` (wait, QBETS bound,
runtime rangeSet); the other copy runs ``train_ahead`` and answers the same. Prints CPU
seconds of the fit, of ``train_ahead`` and of each copy's answers (the lazy one trains its
models inside them), and how many arrays differ (``tobytes()``: waits, bounds, every
rangeSet's low, high, probability and point). ``--lazy-only --save`` keeps the lazy answers
(runs on older code, which has no ``train_ahead``); ``--check`` compares the trained copy with
them.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np
from _common import ROOT  # noqa: F401  (the checkout on the import path)

from predictor.core.bundle import TUNE_FRACTION, fit_bundle, predict_requests
from predictor.core.state.request import JobRequest
from traces.core.swf import read_swf


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def answers(bundle, arrivals: list[list[JobRequest]]) -> tuple[list[np.ndarray], float, float]:
    out, c0, worst = [], cpu(), 0.0
    for batch in arrivals:
        c1 = cpu()
        got = predict_requests(bundle, bundle.snapshot(batch[0].submit_s), batch)
        worst = max(worst, cpu() - c1)
        for a in got:
            rs = a.runtime
            upper = a.wait_upper_s if a.wait_upper_s is not None else -1.0
            out += [np.array([a.wait_s, upper]), rs.low_s, rs.high_s, rs.probability,
                    np.array([rs.point_s])]  # fmt: skip
    return out, cpu() - c0, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--swf", required=True)
    ap.add_argument("--wait", default="apq")
    ap.add_argument("--runtime", default="density")
    ap.add_argument("--arrivals", type=int, default=30)
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--lazy-only", action="store_true", help="only the lazy copy (older code)")
    ap.add_argument("--save", help="keep the lazy copy's arrays in this .npz")
    ap.add_argument("--check", help="also compare the trained copy with a saved .npz")
    args = ap.parse_args()
    swf = read_swf(args.swf)
    jobs, procs = swf.jobs, int(swf.machine_procs or 1)
    c0, w0 = cpu(), time.perf_counter()
    fitted = fit_bundle(jobs, procs, wait_method=args.wait, runtime_method=args.runtime)
    print(f"{args.swf}: fit ({args.wait}, {args.runtime}) {cpu() - c0:.1f} CPU-s, "
          f"{time.perf_counter() - w0:.0f} s wall", flush=True)  # fmt: skip
    frozen = pickle.dumps(fitted, protocol=pickle.HIGHEST_PROTOCOL)
    n = len(jobs)
    rows = np.linspace(int(TUNE_FRACTION * n) + 600, n - 1, args.arrivals).round().astype(int)
    rng = np.random.default_rng(0)
    if args.shuffle:
        rows = rng.permutation(rows)
    sizes = np.unique(np.geomspace(1, procs, args.candidates).round().astype(int))
    arrivals = []
    for r in rows:
        job = jobs.iloc[int(r)]
        at = float(job["submit_time"]) + 0.5
        arrivals.append([JobRequest(user=int(job["user_id"]), group=int(job["group_id"]),
                                    queue=int(job["queue_id"]), procs=int(p),
                                    req_time_s=float(job["requested_time"]), submit_s=at)
                         for p in sizes])  # fmt: skip
    lazy = pickle.loads(frozen)
    expected, lazy_cpu, lazy_worst = answers(lazy, arrivals)
    print(f"lazy: answers {lazy_cpu:.1f} CPU-s (worst arrival {lazy_worst:.2f})", flush=True)
    if args.save:
        np.savez(args.save, *expected)
    if args.lazy_only:
        return
    ahead = pickle.loads(frozen)
    c0 = cpu()
    ahead.train_ahead()
    trained = cpu() - c0
    got, ahead_cpu, ahead_worst = answers(ahead, arrivals)
    print(f"ahead: train_ahead {trained:.1f} CPU-s; answers {ahead_cpu:.1f} CPU-s "
          f"(worst arrival {ahead_worst:.2f})")  # fmt: skip
    differ = sum(a.tobytes() != b.tobytes() for a, b in zip(got, expected, strict=True))
    print(f"{len(arrivals)} arrivals x {sizes.size} sizes, {len(got)} arrays: {differ} differ")
    if args.check:
        ref = np.load(args.check)
        saved = [ref[f"arr_{k}"] for k in range(len(got))]
        differ = sum(a.tobytes() != b.tobytes() for a, b in zip(got, saved, strict=True))
        print(f"against {args.check}: {differ} of {len(got)} arrays differ")


if __name__ == "__main__":
    main()
