"""Density's sharpness on a log's tuning part alone, for settings tried before any test run.

    python benchmarks/runtime_dev_probe.py $QUEUECAST_TRACES_DIR/<TRACE>.swf.gz \
        '[{}, {"ratio": 1.1}, {"weights": [0.3, 0.2, 0.5]}]'
    python benchmarks/runtime_dev_probe.py $QUEUECAST_TRACES_DIR/<TRACE>.swf.gz \
        '[{}, {"feature_set": "carry+same"}]' --gbm

The log is cut to its tuning part (the first ``tune_fraction`` of rows, 20%), so no test-part
row is read, and ``DensityRangeSet(**settings)`` is fitted on it once per JSON object: its
level is chosen on the tuning part's second half (the quantile GBM refitted on the first
half), and the dev success at dev coverage <= 25% (``dev_``) and the online rule's setpoint
are printed. The GBM's retraining blocks depend on the log's length, so these dev figures
differ a little from those of a fit on the whole log (``evaluate_runtime``); compare settings
with each other here, not with those.

With ``--gbm`` each JSON object configures ``QuantileGBRange`` instead, fitted as the runtime
chooser does (``dev_split``: the tuning part's first half tunes, up to 3,000 jobs of its second
half are answered); printed: the mean pinball loss of ``log`` runtime over q10, q50 and q90 (the
loss the GBM minimises; lower is better), and the ``[q10, q90]`` range's success and coverage.

Fifth pass (runtime5), rule fixed before any run of it: the quantile GBM's features
``'[{}, {"quantile_features": "user"}]'`` (:mod:`predictor.core.runtime.user_features`) are
compared on the six shared logs' tuning parts. ``"user"`` becomes the default (of density's
part (c) and of the ``quantile`` method) if its dev success, at dev coverage <= 25%, is at
least today's on at least 5 of the 6 logs and higher on their mean; a dev coverage over 25%
counts as a loss on that log. Otherwise nothing changes and the dev figures are reported.

Second round (the first rejected ``"user"``: better on 3 of 6), rule fixed before its runs.
Stage A, ``--gbm`` on the six tuning parts with ``{}``, each column of ``COLUMNS`` alone and
``"user"``: a column is kept if adding it alone lowers the GBM's dev pinball loss on at least
5 of the 6 logs. Stage B, only if the kept columns are neither none nor all seven: density
with ``quantile_features`` = the kept columns joined by ``+`` against today's, by the first
round's rule (dev success at least today's on 5 of 6 logs and higher on the mean).

Third round (stage A kept no column: the Lublin logs have no requested time, so ``carry``,
``same`` and ``hit`` tie there, and each column lost on CTC, KTH or HPC2N), rule fixed before
its runs: density with ``quantile_features="carry+same"`` (the two columns that lowered the
pinball loss on 3 of the 4 logs with requested times, tied on the Lublin logs) against today's,
by the first round's rule (a tie counts as at least today's).

Sixth pass (stop 39), rule fixed before its runs: density with ``fit_weights`` (the three
parts' weights fitted by maximum likelihood on the dev jobs, :mod:`predictor.core.runtime.
mix_weights`) against today's fixed ``(0.4, 0.2, 0.4)``, ``'[{}, {"fit_weights": true}]'``
on the six tuning parts, by the first round's rule: adopted if its dev success, at dev
coverage <= 25%, is at least today's on at least 5 of the 6 logs and higher on their mean (a
dev coverage over 25% counts as a loss on that log; a tie counts as at least today's).

Seventh pass (stop 39), rule fixed before its runs: density with ``overrun`` (rangeSets
clipped at the requested time plus the tuning part's grace, :mod:`predictor.core.runtime.
overrun`, instead of at the requested time) against today's (fitted weights),
``'[{}, {"overrun": true}]'``, by the same rule. (Adopted on the tuning parts; not kept:
on KTH's test part the runtime chooser then found density over the 25% ceiling on its own
dev split and answered with rangeset, 91.1% -> 59.7% success; docs/results.md.)

Eighth pass (stop 39), rule fixed before its runs: the grace as the *median* overrun, the
typical kill delay (``grace_quantile=50``), not the 99th percentile, which took KTH's rare
hours-long overruns for a grace (5 h on its tuning part, against medians of 16-53 s on the
four logs with requested times). ``'[{}, {"overrun": true, "grace_quantile": 50}]'`` against
today's (fitted weights, no overrun), by the same rule; accepted on the test parts only if,
through ``evaluate_runtime --methods auto``, no log loses the runtime goal.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from _common import setup_django


def main() -> None:
    setup_django()
    from predictor.core.runtime.density import DensityRangeSet
    from predictor.core.runtime.history import build_context
    from predictor.core.runtime.params import RuntimeParams
    from traces.core.swf import read_swf

    args = [a for a in sys.argv[1:] if a != "--gbm"]
    path = args[0]
    variants = json.loads(args[1]) if len(args) > 1 else [{}]
    swf = read_swf(path)
    jobs = swf.jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    params = RuntimeParams()
    n_tune = int(round(len(jobs) * params.tune_fraction))
    tune = jobs.iloc[:n_tune].reset_index(drop=True)
    ctx = build_context(tune, swf.machine_procs or 1, params, n_tune=n_tune)
    if "--gbm" in sys.argv:
        for v in variants:
            t0 = time.process_time()
            dev = gbm_dev(ctx, v)
            cpu = time.process_time() - t0
            print(f"{Path(path).name} gbm {v} {dev} cpu {cpu:.0f}", flush=True)
        return
    keys = ("dev_targets", "dev_success", "dev_coverage", "setpoint_dev_coverage")
    for v in variants:
        t0 = time.process_time()
        settings = {k: tuple(x) if isinstance(x, list) else x for k, x in v.items()}
        m = DensityRangeSet(**settings).fit(ctx)
        dev = {k: m.dev_.get(k) for k in keys}
        cpu = time.process_time() - t0
        print(f"{Path(path).name} {v} {dev} setpoint {m.setpoint_} cpu {cpu:.0f}", flush=True)


def gbm_dev(ctx: object, settings: dict) -> dict:
    """The quantile GBM's dev pinball loss, success and coverage (module docstring)."""
    import numpy as np

    from predictor.core.runtime.choose import dev_split, score
    from predictor.core.runtime.peers import BaselineRange
    from predictor.core.runtime.quantile import QuantileGBRange

    dev, rows = dev_split(ctx)
    pred = QuantileGBRange(**settings).fit(dev).predict_rows(rows)
    run = np.log(dev.run_s[rows])
    loss = []
    for q, answer in zip((0.1, 0.5, 0.9), ("low_s", "point_s", "high_s"), strict=True):
        if answer == "point_s":
            guess = np.array([r.point_s for r in pred.ranges])
        else:
            guess = np.array([getattr(r, answer)[0] for r in pred.ranges])
        err = run - np.log(np.maximum(guess, 1.0))
        loss.append(np.mean(np.maximum(q * err, (q - 1) * err)))
    s = score(pred, dev.run_s[rows], BaselineRange().fit(dev).predict_rows(rows).length_s)
    return {
        "dev_targets": int(rows.size),
        "pinball": round(float(np.mean(loss)), 4),
        "success": round(s.success, 4),
        "coverage": round(s.coverage, 4),
    }


if __name__ == "__main__":
    main()
