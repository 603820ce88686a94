"""Density's sharpness on a log's tuning part alone, for settings tried before any test run.

    python benchmarks/runtime_dev_probe.py $QUEUECAST_TRACES_DIR/<TRACE>.swf.gz \
        '[{}, {"ratio": 1.1}, {"weights": [0.3, 0.2, 0.5]}]'

The log is cut to its tuning part (the first ``tune_fraction`` of rows, 20%), so no test-part
row is read, and ``DensityRangeSet(**settings)`` is fitted on it once per JSON object: its
level is chosen on the tuning part's second half (the quantile GBM refitted on the first
half), and the dev success at dev coverage <= 25% (``dev_``) and the online rule's setpoint
are printed. The GBM's retraining blocks depend on the log's length, so these dev figures
differ a little from those of a fit on the whole log (``evaluate_runtime``); compare settings
with each other here, not with those.

Fifth pass (runtime5), rule fixed before any run of it: the quantile GBM's features
``'[{}, {"quantile_features": "user"}]'`` (:mod:`predictor.core.runtime.user_features`) are
compared on the six shared logs' tuning parts. ``"user"`` becomes the default (of density's
part (c) and of the ``quantile`` method) if its dev success, at dev coverage <= 25%, is at
least today's on at least 5 of the 6 logs and higher on their mean; a dev coverage over 25%
counts as a loss on that log. Otherwise nothing changes and the dev figures are reported.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
    import django

    django.setup()
    from predictor.core.runtime.density import DensityRangeSet
    from predictor.core.runtime.history import build_context
    from predictor.core.runtime.params import RuntimeParams
    from traces.core.swf import read_swf

    path = sys.argv[1]
    variants = json.loads(sys.argv[2]) if len(sys.argv) > 2 else [{}]
    swf = read_swf(path)
    jobs = swf.jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    params = RuntimeParams()
    n_tune = int(round(len(jobs) * params.tune_fraction))
    tune = jobs.iloc[:n_tune].reset_index(drop=True)
    ctx = build_context(tune, swf.machine_procs or 1, params, n_tune=n_tune)
    keys = ("dev_targets", "dev_success", "dev_coverage", "setpoint_dev_coverage")
    for v in variants:
        t0 = time.process_time()
        settings = {k: tuple(x) if isinstance(x, list) else x for k, x in v.items()}
        m = DensityRangeSet(**settings).fit(ctx)
        dev = {k: m.dev_.get(k) for k in keys}
        cpu = time.process_time() - t0
        print(f"{Path(path).name} {v} {dev} setpoint {m.setpoint_} cpu {cpu:.0f}", flush=True)


if __name__ == "__main__":
    main()
