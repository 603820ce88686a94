"""The ``quantile`` method's test-part figures with each feature set, on the targets of
``evaluate_runtime --limit 5000`` (fifth pass, docs/results.md; run after the choice, once).

    python benchmarks/quantile_features_test.py $QUEUECAST_TRACES_DIR/<TRACE>.swf.gz \
        [request carry+same user]

Each feature set is registered in turn as ``quantile`` (``predictor.core.runtime.registry``)
and scored by the harness the command runs (``evaluate_runtime``: same tuning part, targets
and baseline), so the default set's row equals ``evaluate_runtime --methods quantile``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _common import setup_django


def main() -> None:
    setup_django()
    from predictor.core.runtime import registry
    from predictor.core.runtime.evaluate import evaluate_runtime
    from predictor.core.runtime.quantile import QuantileGBRange
    from traces.core.swf import read_swf

    path = sys.argv[1]
    sets = sys.argv[2:] or ["request", "carry+same"]
    swf = read_swf(path)
    for feature_set in sets:
        t0 = time.process_time()
        registry.FACTORIES["quantile"] = lambda seed, f=feature_set: QuantileGBRange(
            feature_set=f, random_state=seed or 0
        )
        out = evaluate_runtime(swf.jobs, float(swf.machine_procs or 1), ("quantile",), limit=5000)
        m = out["methods"]["quantile"]
        cpu = time.process_time() - t0
        print(
            f"{Path(path).name} {feature_set}: {m['success_rate']:.2%} @ {m['coverage']:.2%} "
            f"(median {m['coverage_median']:.1%}), {m['jobs']} targets, cpu {cpu:.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
