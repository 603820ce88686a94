"""Does ``P(start within T)`` hold? The trace API's probability against how often jobs started
within T, before and since stops 58 and 61, through the service's own ``RecentScorer``.

    python benchmarks/p_within_calibration.py --swf KTH-SP2-1996-2.1-cln.swf.gz \\
        [--part test|tuning] [--arrivals 1500] [--method auto] [--seed 1] \\
        [--neighbours 50 100 200 400 --windows 1000 2000] [--errors] [--waiting]

Fits the bundle the service fits (``fit_bundle``, the wait method ``auto`` by default; its
first 20% of jobs is the tuning part), then at ``--arrivals`` random arrivals (test part: from
600 rows after the tuning part on; ``--part tuning``: the last three quarters of the tuning
part) answers each job as the API would have at its arrival, for nine T from 1 min to 1 day:

- *before*: the errors ``e_j = y_j - p_j`` of the 300 jobs that started last, shifted by the
  job's prediction ``p`` (``P = #{e_j <= T - p} / 300``: the rule until stop 58);
- *now*: ``RecentErrors.answer`` with ``RecentScorer.window`` (since stop 61 the Kaplan-Meier
  chance, ``predictor.core.wait.km_within``, over the 200 of the last 2,000 jobs *arrived*,
  started or still waiting, predicted nearest ``p``; stop 58's share of the 200 of the last
  2,000 *started* is the row ``200 of 2000`` that ``--neighbours 200 --windows 2000`` adds).

Prints, per T, the share of the jobs that started within T beside each rule's mean P, then
the answers by their P (how often what was said happened), then each rule's expected
calibration error (ECE: ten bins of P, the mean |P - share| weighted by the bin's answers, over
all T) and Brier score. ``--neighbours``/``--windows`` add rows for other settings (the choice
was made with them on the tuning parts, by the Brier score: ``p_within``'s docstring);
``--errors`` adds each of them read off the neighbours' errors added to the prediction (the
wait interval's reading since stop 60; not taken for the chance to start). ``--waiting`` adds
two rows over the last 2,000 jobs *arrived* by the instant (not started): the share of the
200 nearest started ones, and the Kaplan-Meier estimate over the 200 nearest started or still
waiting (``km_within``: *now* since stop 61, computed here on its own as a check).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import fitted_log, setup_django, table

TS = np.array([60, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400], dtype=float)


def before(pred_s: float, pool_scores: np.ndarray, within_s: float) -> float:
    """The rule until stop 58: the split-conformal reading of the 300-job pool."""
    pool = np.sort(pool_scores)
    return float(np.searchsorted(pool, within_s - max(pred_s, 0.0), side="right") / pool.size)


def ece(p: np.ndarray, hit: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: sum over bins of P of (share of answers) x |mean P - share
    that happened|."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return float(
        sum(
            (idx == b).mean() * abs(p[idx == b].mean() - hit[idx == b].mean())
            for b in range(bins)
            if (idx == b).any()
        )  # fmt: skip
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--swf", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file of the traces dir")
    ap.add_argument("--part", choices=("test", "tuning"), default="test")
    ap.add_argument("--arrivals", type=int, default=1500)
    ap.add_argument("--method", default="auto")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--neighbours", type=int, nargs="*", default=[])
    ap.add_argument("--windows", type=int, nargs="*", default=[])
    ap.add_argument(
        "--errors",
        action="store_true",
        help="also each grid setting on the neighbours' errors shifted by p",
    )
    ap.add_argument(
        "--waiting",
        action="store_true",
        help="also the last 2,000 arrived: their started share and Kaplan-Meier with the waiting",
    )
    args = ap.parse_args()
    setup_django()
    from predictor.core.wait.km_within import p_within_censored
    from predictor.core.wait.p_within import NEIGHBOURS, WINDOW, p_within
    from predictor.core.wait.recent import RecentScorer, recent_rows
    from queuecast.progress import progress_bar

    swf, bundle = fitted_log(args.swf, args.method)
    jobs = swf.jobs
    scorer = RecentScorer(bundle.wait, bundle.jobs)
    wait = jobs["wait_time"].to_numpy(float)
    submit = jobs["submit_time"].to_numpy(float)
    n_tune = int(0.2 * len(jobs))
    usable = np.flatnonzero(wait >= 0)
    if args.part == "test":
        usable = usable[usable >= n_tune + 600]
    else:
        usable = usable[(usable >= n_tune // 4) & (usable < n_tune)]
    rng = np.random.default_rng(args.seed)
    rows = np.sort(rng.choice(usable, size=min(args.arrivals, usable.size), replace=False))
    grid = [(k, w) for w in args.windows or [] for k in args.neighbours or []]
    rules = ["before", f"now ({NEIGHBOURS} of {WINDOW})"] + [f"{k} of {w}" for k, w in grid]
    rules += [f"errors {k} of {w}" for k, w in grid] if args.errors else []
    arrived = ["arrived: started share", "arrived: waiting counted"] if args.waiting else []
    rules += arrived
    p = {r: np.zeros((rows.size, TS.size)) for r in rules}
    hit = wait[rows, None] <= TS[None, :]
    t0 = time.process_time()
    with progress_bar(f"{rows.size} arrivals") as bar:
        for n, i in enumerate(rows):
            at, pred = float(submit[i]), scorer.memo.wait_s(np.array([i]))
            recent, like = scorer.at(at, int(i)), scorer.window(at, int(i))
            pool = recent.scores()
            for j, t in enumerate(TS):
                p["before"][n, j] = before(float(pred[0]), pool, t)
                p[rules[1]][n, j] = recent.answer(pred, 0.9, t, None, like)["p_within"][0]
            for (k, w), name in zip(grid, rules[2 : 2 + len(grid)], strict=True):
                r = recent_rows(jobs, at, int(i), w, scorer.known)
                got = scorer.memo.wait_s(r)
                p[name][n] = [p_within(pred, got, wait[r], t, k)[0] for t in TS]
                if args.errors:
                    p[f"errors {name}"][n] = [p_within(pred, got, wait[r], t, k, residual=True)[0]
                                              for t in TS]  # fmt: skip
            if args.waiting:  # the last WINDOW arrived by now: started, or waiting so far
                came = np.arange(max(int(i) - WINDOW, 0), int(i))
                came = came[(wait[came] >= 0) & (submit[came] <= at)]
                started = submit[came] + wait[came] <= at
                waited = np.where(started, wait[came], at - submit[came])
                said = scorer.memo.wait_s(came)
                if started.any():
                    p[arrived[0]][n] = [p_within(pred, said[started], wait[came][started], t)[0]
                                        for t in TS]  # fmt: skip
                    p[arrived[1]][n] = [p_within_censored(pred, said, waited, started, t)[0]
                                        for t in TS]  # fmt: skip
            bar((n + 1) / rows.size)
    print(f"answered in {time.process_time() - t0:.1f} CPU-s")
    by_t = [
        {
            "T s": f"{t:.0f}",
            "started within": f"{hit[:, j].mean():.3f}",
            **{r: f"{p[r][:, j].mean():.3f}" for r in rules[:2]},
        }  # fmt: skip
        for j, t in enumerate(TS)
    ]
    print(table(by_t, ["T s", "started within", *rules[:2]]))
    flat = hit.ravel().astype(float)
    edges = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0001]
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        row = {"P in": f"[{lo:.1f}, {min(hi, 1.0):.1f}{']' if hi > 1 else ')'}"}
        for r in rules[:2]:
            s = (p[r].ravel() >= lo) & (p[r].ravel() < hi)
            row[f"{r}: answers"] = int(s.sum())
            row[f"{r}: mean P / started"] = (
                f"{p[r].ravel()[s].mean():.3f} / {flat[s].mean():.3f}" if s.any() else "-"
            )
        bins.append(row)
    print(table(bins, list(bins[0])))
    summary = [{"rule": r, "ECE": f"{ece(p[r].ravel(), flat):.4f}",
                "Brier": f"{np.mean((p[r].ravel() - flat) ** 2):.4f}"} for r in rules]  # fmt: skip
    print(table(summary, ["rule", "ECE", "Brier"]))


if __name__ == "__main__":
    main()
