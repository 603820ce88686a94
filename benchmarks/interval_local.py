"""Do the wait intervals hold for every kind of answer? The pooled online rule (the trace API's
and the evaluations' until stop 59) against the local one (``predictor.core.wait.local_interval``).

    python benchmarks/interval_local.py --swf KTH-SP2-1996-2.1-cln.swf.gz [--part tuning|test]
        [--method auto] [--levels 0.5 0.8 0.9 0.95] [--neighbours 200] [--windows 2000] [--raw]

Fits the bundle the service fits (``fit_bundle``, ``auto`` by default; the first 20% of the
jobs is its tuning part) and predicts every usable job at its own arrival
(``predict_rows``, as the trace API's replayed rows are). Both rules then run online over those
jobs in arrival order, each job's wait known at its start, and are scored on the part's jobs
(``tuning``: the last three quarters of the tuning part, as ``p_within_calibration``; ``test``:
the test part):

- *pooled*: ``intervals.online_intervals`` (one pool of the last 1,000 errors ``y - p``,
  shifted by the prediction; window, step and 30 as chosen for it on the tuning parts);
- *local k of w*: ``local_interval.local_online`` (the errors of the k of the last w started
  jobs predicted nearest, added to the prediction; the same step and 30), for each k of
  ``--neighbours`` and w of ``--windows``;
- with ``--raw``, *waits k of w*: the same rule reading the neighbours' waits themselves
  (``residual=False``, stop 59's rule).

Prints per level and rule the coverage, the median and mean width and the mean interval
score (Winkler: ``width + (2 / (1 - c)) x distance outside``, lower is better; a proper score
for an interval at level c, so it asks for coverage and narrowness together), then the
coverage and median width per class of the prediction (under 10 min, 10 min to 1 h, 1 to 6 h,
6 h to 1 day, over 1 day): an interval should hold for the jobs told short and for those told
long.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import fitted_log, setup_django, table

CLASSES = ((0.0, 600.0, "< 10 min"), (600.0, 3600.0, "10 min - 1 h"),
           (3600.0, 21600.0, "1 - 6 h"), (21600.0, 86400.0, "6 h - 1 day"),
           (86400.0, np.inf, "> 1 day"))  # fmt: skip


def winkler(lo: np.ndarray, hi: np.ndarray, y: np.ndarray, level: float) -> float:
    """Mean interval score of ``[lo, hi]`` at ``level`` (Gneiting & Raftery 2007, eq. 43)."""
    a = 1.0 - level
    out = (hi - lo) + (2.0 / a) * (np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0))
    return float(np.mean(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--swf", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file of the traces dir")
    ap.add_argument("--part", choices=("test", "tuning"), default="test")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--levels", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.95])
    ap.add_argument("--neighbours", type=int, nargs="+", default=[200])
    ap.add_argument("--windows", type=int, nargs="+", default=[2000])
    ap.add_argument("--raw", action="store_true", help="also the rule on the neighbours' waits")
    args = ap.parse_args()
    setup_django()
    from predictor.core.wait.intervals import online_intervals
    from predictor.core.wait.local_interval import GAMMA, MIN_POOL, local_online

    swf, bundle = fitted_log(args.swf, args.method)
    jobs = swf.jobs
    wait = jobs["wait_time"].to_numpy(float)
    submit = jobs["submit_time"].to_numpy(float)
    n_tune = int(0.2 * len(jobs))
    end = n_tune if args.part == "tuning" else len(jobs)
    rows = np.flatnonzero(wait[:end] >= 0)
    t0 = time.process_time()
    pred = np.asarray(bundle.wait.predict_rows(rows).wait_s, dtype=float)
    print(f"{rows.size:,} jobs predicted in {time.process_time() - t0:.1f} CPU-s")
    y, at = wait[rows], submit[rows]
    scored = (rows >= n_tune // 4) if args.part == "tuning" else (rows >= n_tune)
    ys, ps = y[scored], pred[scored]
    results: list[dict] = []
    by_class: list[dict] = []
    for level in args.levels:
        got = {}
        t0 = time.process_time()
        res = online_intervals(pred, y, at, at + y, (level,), window=1000, min_pool=MIN_POOL,
                               gamma=GAMMA)  # fmt: skip
        got["pooled"] = (res.low_s[level], res.high_s[level], time.process_time() - t0)
        for w in args.windows:
            for k in args.neighbours:
                t0 = time.process_time()
                lo, hi, _, _ = local_online(pred, y, at, at + y, level, k=k, window=w)
                got[f"local {k} of {w}"] = (lo, hi, time.process_time() - t0)
                if args.raw:
                    t0 = time.process_time()
                    lo, hi, _, _ = local_online(pred, y, at, at + y, level, k=k, window=w,
                                                residual=False)  # fmt: skip
                    got[f"waits {k} of {w}"] = (lo, hi, time.process_time() - t0)
        for name, (lo, hi, cpu) in got.items():
            lo, hi = lo[scored], hi[scored]
            hit = (lo <= ys) & (ys <= hi)
            finite = np.isfinite(hi)
            results.append({
                "level": f"{level:g}", "rule": name, "jobs": int(ys.size),
                "coverage": f"{hit.mean():.3f}",
                "median width s": f"{np.median((hi - lo)[finite]):,.0f}",
                "mean width s": f"{np.mean((hi - lo)[finite]):,.0f}",
                "interval score": f"{winkler(lo[finite], hi[finite], ys[finite], level):,.0f}",
                "CPU-s": f"{cpu:.1f}",
            })  # fmt: skip
            row = {"level": f"{level:g}", "rule": name}
            for a, b, label in CLASSES:
                m = (ps >= a) & (ps < b)
                row[label] = (f"{hit[m].mean():.3f} / {np.median((hi - lo)[m & finite]):,.0f}"
                              if (m & finite).any() else "-")  # fmt: skip
            by_class.append(row)
    print(table(results, list(results[0])))
    counts = ", ".join(f"{label} {int(((ps >= a) & (ps < b)).sum()):,}" for a, b, label in CLASSES)
    print(f"coverage / median width (s) by the predicted wait ({counts} jobs):")
    print(table(by_class, list(by_class[0])))


if __name__ == "__main__":
    main()
