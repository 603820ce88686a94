"""CPU per single-row GBM prediction: scikit-learn's ``predict`` (under the one-thread limit
the service uses) against ``predictor.core.gbm_trees`` (flattened trees), for the models the
service fits: quantile runtime (q 0.1, 0.5, 0.9) and absolute-error wait GBM; and the
quantile method's three models walked one by one against together (``predict_all``).

    python benchmarks/bench_gbm_trees.py [--rows N] [--calls N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from predictor.core import gbm_trees
from predictor.core.threads import threads


def per_call_ms(fn, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - started) / calls * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3000, help="training rows")
    ap.add_argument("--calls", type=int, default=500)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.rows, 8))
    x[rng.random(x.shape) < 0.1] = np.nan
    y = np.exp(np.nansum(x[:, :3], axis=1) / 2)
    print("| model | trees | scikit-learn ms/call | flattened ms/call | same answer |")
    print("|---|---:|---:|---:|---|")
    for name, params in (
        ("quantile 0.5", {"loss": "quantile", "quantile": 0.5}),
        ("absolute_error", {"loss": "absolute_error"}),
    ):
        with threads().limit(limits=1):
            model = HistGradientBoostingRegressor(random_state=0, **params).fit(x, y)
        one = x[:1]

        def sk(model=model, one=one):
            with threads().limit(limits=1):
                return model.predict(one)

        def flat(model=model, one=one):
            return gbm_trees.predict(model, one, limits=1)

        same = bool(np.array_equal(sk(), flat()))
        sk_ms, flat_ms = per_call_ms(sk, args.calls), per_call_ms(flat, args.calls)
        print(f"| {name} | {model.n_iter_} | {sk_ms:.3f} | {flat_ms:.3f} | {same} |")
    with threads().limit(limits=1):
        three = [HistGradientBoostingRegressor(loss="quantile", quantile=q, random_state=0)
                 .fit(x, y) for q in (0.1, 0.5, 0.9)]  # fmt: skip
    one = x[:1]

    def each():
        return np.array([gbm_trees.predict(m, one, limits=1) for m in three])

    def together():
        return gbm_trees.predict_all(three, one, limits=1)

    same = bool(np.array_equal(each(), together()))
    each_ms, together_ms = per_call_ms(each, args.calls), per_call_ms(together, args.calls)
    print(
        f"\nquantile q 0.1/0.5/0.9, one row: flattened one by one {each_ms:.3f} ms, "
        f"walked together {together_ms:.3f} ms, same answer {same}"
    )


if __name__ == "__main__":
    main()
