"""A new site's wait interval: from how many started told jobs should it read them?

    python benchmarks/interval_small_pool.py --swf KTH-SP2-1996-2.1-cln.swf.gz [--part tuning|test]
        [--method auto] [--levels 0.8 0.9 0.95] [--segment 600] [--stride 100]
        [--bands 30 100 200 400]

A live site reads the local rule (``local_interval``) over the jobs *it* told once
``TOLD_FROM`` of them have started (30 until stop 61), and the fit's pool before; until 200
have, every one of them is a neighbour. ``evaluate_headline`` and ``interval_local.py``
cannot show that regime: their pool is the whole log's past. Here the log's part is cut into
new sites: from every ``--stride``-th job (arrival order) a segment of ``--segment`` jobs is
answered as a site that told only them, the rule started afresh. The jobs scored are those
answered while at least 30 and fewer than the last of ``--bands`` of their segment's jobs had
started, in the bands ``--bands`` gives. Each is predicted at its own arrival by the bundle
the service fits (``predict_rows``).

Rules:
- *errors*: the service's rule (the neighbours' errors added to the prediction);
- *waits*: stop 59's rule (the neighbours' waits, ``residual=False``);
- *fit pool*: what the site answers before ``TOLD_FROM`` started (``interval_from_pool`` over
  the errors of the last ``CALIBRATION_JOBS`` jobs to start before the segment's first
  arrival; the fit's pool, never refitted here);
- *fit + errors*: the same rule as *errors* over the told jobs joined by that fit pool (the
  neighbours taken from both, each error shifted by the request's prediction).

Prints per band, level and rule the coverage, the median width and the mean interval score
(Winkler, lower is better; see ``interval_local.py``) and the share of sites whose coverage fell
below the level; then, per level, the mean interval score over all bands of a site that
answers from the fit's pool until T of its told jobs started and by *errors* from then on, for
each band's lower edge T (``holdqueue.services.interval.TOLD_FROM`` is that T). Last,
``P(start within T)`` for each T of ``--within``, per band: mean chance said, share that
started within T, and Brier score, read three ways: *told* (the share of the nearest started
told jobs, ``p_within``: the site's until stop 61), *told, waiting counted* (their
Kaplan-Meier estimate with the told jobs still waiting as censored, ``km_within``: the
site's since stop 61) and *fit pool* (the share among the fit's 200 jobs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import fitted_log, setup_django, table
from interval_local import winkler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--swf", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file of the traces dir")
    ap.add_argument("--part", choices=("test", "tuning"), default="tuning")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--levels", type=float, nargs="+", default=[0.8, 0.9, 0.95])
    ap.add_argument("--segment", type=int, default=600, help="jobs a new site tells")
    ap.add_argument("--stride", type=int, default=100, help="jobs between two sites' first")
    ap.add_argument(
        "--bands",
        type=int,
        nargs="+",
        default=[30, 100, 200, 400],
        help="edges of the bands of started told jobs scored (from 30)",
    )
    ap.add_argument("--within", type=float, nargs="+", default=[600.0, 3600.0, 14400.0],
                    help="T of the chance to start within T, scored the same way (s)")  # fmt: skip
    args = ap.parse_args()
    setup_django()
    from holdqueue.services.predict import CALIBRATION_JOBS
    from predictor.core.wait.intervals import interval_from_pool, known_order
    from predictor.core.wait.km_within import p_within_censored
    from predictor.core.wait.local_interval import MIN_POOL, local_online
    from predictor.core.wait.p_within import WINDOW, p_within

    edges = sorted(max(b, MIN_POOL) for b in args.bands)
    swf, bundle = fitted_log(args.swf, args.method)
    jobs = swf.jobs
    wait = jobs["wait_time"].to_numpy(float)
    submit = jobs["submit_time"].to_numpy(float)
    n_tune = int(0.2 * len(jobs))
    lo_row, end = (n_tune // 4, n_tune) if args.part == "tuning" else (n_tune, len(jobs))
    rows = np.flatnonzero(wait[:end] >= 0)
    t0 = time.process_time()
    pred = np.maximum(np.asarray(bundle.wait.predict_rows(rows).wait_s, dtype=float), 0.0)
    print(f"{rows.size:,} jobs predicted in {time.process_time() - t0:.1f} CPU-s")
    y, at = wait[rows], submit[rows]
    first = int(np.searchsorted(rows, lo_row))
    names = ("errors", "waits", "fit pool", "fit + errors")
    got: dict[tuple[int, float, str], list] = {}  # (band, level, rule) -> per site (lo, hi, y)
    chance: dict[tuple[int, float, str], list] = {}  # (band, T, pool) -> (p, started within T)
    for s in range(first, rows.size - args.segment + 1, args.stride):
        seg = slice(s, s + args.segment)
        p, w, a = pred[seg], y[seg], at[seg]
        order, count = known_order(a, a + w)
        band = np.searchsorted(edges, count, side="right") - 1
        band[band == len(edges) - 1] = -1  # past the last edge: not scored
        before = np.flatnonzero(at[:s] + y[:s] <= a[0])  # started before the site's first job
        by_end = before[np.argsort(at[before] + y[before], kind="stable")]
        fit = np.sort(by_end[-CALIBRATION_JOBS:])  # the fit's pool: the last to start
        for i in np.flatnonzero(band >= 0):  # the told jobs known at i's arrival, as a site
            pool = np.sort(order[: count[i]])[-WINDOW:]
            # every told job arrived before i: started (its wait) or still waiting (censored)
            came = np.arange(max(i - WINDOW, 0), i)
            waited = np.minimum(w[came], a[i] - a[came])
            started = a[came] + w[came] <= a[i]
            for t in args.within:
                hit = float(w[i] <= t)
                said = {
                    "told": p_within(p[i : i + 1], p[pool], w[pool], t)[0],
                    "told, waiting counted": p_within_censored(p[i : i + 1], p[came], waited,
                                                               started, t)[0],
                    "fit pool": p_within(p[i : i + 1], pred[fit], y[fit], t)[0],
                }  # fmt: skip
                for name, prob in said.items():
                    chance.setdefault((int(band[i]), t, name), []).append((prob, hit))
        for level in args.levels:
            runs = {
                "errors": local_online(p, w, a, a + w, level)[:2],
                "waits": local_online(p, w, a, a + w, level, residual=False)[:2],
                "fit pool": interval_from_pool(p, y[fit] - pred[fit], level),
            }
            # the fit's jobs first, known before any of the site's: the same rule over both
            both = np.concatenate([fit, np.arange(s, s + args.segment)])
            known = np.concatenate([np.full(fit.size, a[0] - 1.0), a + w])
            lo, hi, _, _ = local_online(pred[both], y[both], np.concatenate([at[fit], a]), known,
                                        level)  # fmt: skip
            runs["fit + errors"] = (lo[fit.size :], hi[fit.size :])
            for b in range(len(edges) - 1):
                m = band == b
                for name in names:
                    lo, hi = runs[name]
                    got.setdefault((b, level, name), []).append((lo[m], hi[m], w[m]))
    out: list[dict] = []
    total: dict[tuple[int, float, str], tuple[int, float]] = {}
    for (b, level, name), parts in got.items():
        lo, hi, ys = (np.concatenate([q[i] for q in parts]) for i in range(3))
        if not ys.size:
            continue
        hit = (lo <= ys) & (ys <= hi)
        per_site = [np.mean((q[0] <= q[2]) & (q[2] <= q[1])) for q in parts if q[2].size]
        score = winkler(lo, hi, ys, level)
        total[(b, level, name)] = (int(ys.size), score)
        out.append({"started": f"{edges[b]}-{edges[b + 1] - 1}", "level": f"{level:g}",
                    "rule": name, "sites": len(per_site), "jobs": int(ys.size),
                    "coverage": f"{hit.mean():.3f}",
                    "median width s": f"{np.median(hi - lo):,.0f}",
                    "interval score": f"{score:,.0f}",
                    "sites below level": f"{np.mean(np.array(per_site) < level):.2f}"})  # fmt: skip
    print(f"{args.swf} {args.part}: new sites of {args.segment} jobs, one every {args.stride}")
    print(table(out, list(out[0])))
    switch = []
    for level in args.levels:
        row = {"level": f"{level:g}"}
        for t in edges:
            parts = [total[(b, level, "fit pool" if edges[b] < t else "errors")]
                     for b in range(len(edges) - 1) if (b, level, "errors") in total]  # fmt: skip
            n = sum(j for j, _ in parts)
            row[f"from {t}"] = f"{sum(j * sc for j, sc in parts) / n:,.0f}" if n else "-"
        switch.append(row)
    print(f"mean interval score of the fit's pool until T told jobs started, errors from T "
          f"({edges[0]}-{edges[-1] - 1} started):")  # fmt: skip
    print(table(switch, list(switch[0])))
    within = []
    for (b, t, pool), pairs in sorted(chance.items()):
        prob, hit = np.array(pairs).T
        within.append({"started": f"{edges[b]}-{edges[b + 1] - 1}", "within s": f"{t:g}",
                       "read from": pool, "jobs": prob.size, "mean p": f"{prob.mean():.3f}",
                       "started within": f"{hit.mean():.3f}",
                       "Brier": f"{np.mean((prob - hit) ** 2):.4f}"})  # fmt: skip
    print("P(start within T): the started told jobs' share, with the waiting counted, the fit's")
    print(table(within, list(within[0])))


if __name__ == "__main__":
    main()
