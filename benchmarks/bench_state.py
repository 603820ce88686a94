"""System-state sweep time, and APQ throughput and accuracy on a trace's test part.

    python benchmarks/bench_state.py                      # sweep of the largest trace (HPC2N)
    python benchmarks/bench_state.py --trace KTH-SP2-1996-2.1-cln.swf.gz --apq-targets 0
    python benchmarks/bench_state.py --apq-targets 2000 --hist-mode union

``--apq-targets N`` also fits APQ on the first ``--tune-fraction`` of the jobs and predicts
N test jobs evenly spread over the rest (0 = all of them), printing predictions per second
and AAE beside always-0 and the recent-median baseline on exactly the same jobs.
"""

from __future__ import annotations

import argparse
import collections
import resource
import time

import numpy as np
from _common import largest_trace, table, traces_dir

from predictor.core.state.sweep import compute_state
from predictor.core.wait.apq import APQ
from predictor.core.wait.baselines import RecentMedian
from predictor.core.wait.types import WaitContext
from traces.core.swf import read_swf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="file name in the shared traces folder (default: largest)")
    parser.add_argument("--apq-targets", type=int, default=None)
    parser.add_argument("--tune-fraction", type=float, default=0.2)
    parser.add_argument(
        "--contiguous", action="store_true", help="the first N test jobs, not N spread out"
    )
    parser.add_argument("--hist-mode", default="fixed", choices=["fixed", "union"])
    parser.add_argument("--tune-targets", type=int, default=1500)
    parser.add_argument(
        "--spread-threshold",
        type=float,
        default=None,
        help="fix it (inf: summaries, -inf: distributions)",
    )
    parser.add_argument(
        "--param", action="append", default=[], help="APQ parameter, e.g. chain=spec"
    )
    args = parser.parse_args()
    path = traces_dir() / args.trace if args.trace else largest_trace()
    trace = read_swf(path)
    start = time.perf_counter()
    sweep = compute_state(trace.jobs)
    sweep_s = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{path.name}: {len(trace.jobs)} jobs, state sweep {sweep_s:.2f} s, "
        f"W/R memberships {len(sweep.w_members)}/{len(sweep.r_members)}, peak RSS {peak_mb:.0f} MB"
    )
    if args.apq_targets is not None:
        bench_apq(trace, sweep, args)


def _parse_param(item: str) -> tuple[str, object]:
    key, _, value = item.partition("=")
    try:
        return key, int(value)
    except ValueError:
        return key, value


def bench_apq(trace, sweep, args) -> None:
    n = len(trace.jobs)
    n_tune = int(args.tune_fraction * n)
    ctx = WaitContext(
        jobs=trace.jobs, state=sweep, n_tune=n_tune, machine_procs=trace.machine_procs or 0
    )
    a = sweep.arrays
    targets = np.arange(n_tune, n)[a.present[n_tune:]]
    if args.apq_targets and args.contiguous:
        targets = targets[: args.apq_targets]
    elif args.apq_targets:
        targets = targets[np.linspace(0, len(targets) - 1, args.apq_targets).astype(int)]
    apq = APQ(
        hist_mode=args.hist_mode,
        tune_targets=args.tune_targets,
        spread_threshold=args.spread_threshold,
        **dict(_parse_param(item) for item in args.param),
    )
    start = time.perf_counter()
    apq.fit(ctx)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    got = apq.predict_rows(targets)
    predict_s = time.perf_counter() - start
    actual = a.start[targets] - a.submit[targets]
    median = RecentMedian().fit(ctx).predict_rows(targets).wait_s
    rows = [
        {
            "method": name,
            "jobs": len(targets),
            "aae_s": f"{np.mean(np.abs(p - actual)):.0f}",
            "aae_h": f"{np.mean(np.abs(p - actual)) / 3600:.3f}",
        }
        for name, p in [("apq", got.wait_s), ("zero", np.zeros(len(targets))), ("median", median)]
    ]
    print(table(rows, ["method", "jobs", "aae_s", "aae_h"]))
    chain, k, threshold = apq.chosen()
    print(
        f"fit {fit_s:.1f} s (chain={chain}, k={k}, spread threshold={threshold:.4g}); "
        f"predict {predict_s:.1f} s = {len(targets) / predict_s:.0f} predictions/s (1 core)"
    )
    print("predictors:", dict(collections.Counter(got.predictor)))
    print("modes:", dict(collections.Counter(got.extra["mode"])))


if __name__ == "__main__":
    main()
