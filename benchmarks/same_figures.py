"""Do the faster predictors give exactly the figures of the code before them?

    # once, from a checkout of the old code (e.g. `git worktree add --detach ../base main`):
    cd ../base && python ../<this checkout>/benchmarks/same_figures.py --save ref.npz
    # then from this checkout:
    python benchmarks/same_figures.py --check ref.npz

The code measured is the one of the current directory (run it from the checkout's root).
Per trace and wait method it fits the method as the evaluation does (first 20 % tuning),
predicts ``--rows`` test rows evenly spread (the evaluation's ``predict_rows`` path) and
``--arrivals`` molding-style batches of ``--candidates`` sizes at log arrivals (the API's
``predict(snapshot, requests)`` path), and saves or compares every wait, sub-predictor name
and the AAE. The table says per method whether every number is bit-for-bit equal.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import table, traces_dir

# The checkout whose code is measured goes first, ahead of this script's own checkout (which
# ``_common`` puts on the path).
sys.path.insert(0, os.getcwd())

import predictor
from predictor.core.state.request import RequestBatch, as_batch
from predictor.core.state.snapshot import from_log
from predictor.core.state.sweep import compute_state
from predictor.core.wait.evaluate import select_targets
from predictor.core.wait.registry import make_method, parse_methods
from predictor.core.wait.types import WaitContext
from traces.core.swf import read_swf


def figures(trace: str, methods: list[str], n_rows: int, n_arrivals: int, n_cand: int) -> dict:
    swf = read_swf(traces_dir() / f"{trace}.swf.gz")
    jobs, procs = swf.jobs, int(swf.machine_procs or 1)
    sel = select_targets(jobs, 0.2, n_rows)
    ctx = WaitContext(jobs, compute_state(jobs), sel.n_tune, procs)
    arrivals = sel.targets[np.linspace(0, sel.targets.size - 1, n_arrivals).astype(int)]
    sizes = np.unique(np.geomspace(1, procs, n_cand).round().astype(int))
    base = RequestBatch.from_jobs(jobs.iloc[arrivals])
    out: dict[str, np.ndarray] = {}
    for name in methods:
        method = make_method(name, 0).fit(ctx)
        t0 = time.perf_counter()
        pred = method.predict_rows(sel.targets)
        rows_s = time.perf_counter() - t0
        out[f"{trace}/{name}/rows"] = pred.wait_s
        names = pred.predictor if pred.predictor is not None else np.zeros(0, dtype=object)
        out[f"{trace}/{name}/names"] = np.asarray(names, dtype=str)
        waits, t0 = [], time.perf_counter()
        for k, i in enumerate(arrivals):
            snap = from_log(
                jobs, float(jobs["submit_time"].iat[i]), machine_procs=procs, rows=int(i)
            )
            batch = as_batch([base.request(k).with_procs(int(p)) for p in sizes])
            waits.append(method.predict(snap, batch).wait_s)
        out[f"{trace}/{name}/batch"] = np.concatenate(waits)
        out[f"{trace}/{name}/seconds"] = np.array([rows_s, time.perf_counter() - t0])
        out[f"{trace}/{name}/actual"] = jobs["wait_time"].to_numpy(float)[sel.targets]
        print(f"{trace} {name}: {sel.targets.size} rows in {rows_s:.1f} s", file=sys.stderr)
    return out


def compare(new: dict, ref: dict) -> list[dict]:
    rows = []
    for key in sorted(k for k in new if k.endswith("/rows")):
        stem = key[: -len("/rows")]
        trace, method = stem.split("/")
        actual = new[f"{stem}/actual"]
        same = all(np.array_equal(new[f"{stem}/{p}"], ref[f"{stem}/{p}"])
                   for p in ("rows", "names", "batch"))  # fmt: skip
        diff = np.abs(new[key] - ref[key]).max() if new[key].size else 0.0
        old_s, new_s = ref[f"{stem}/seconds"], new[f"{stem}/seconds"]
        rows.append({
            "trace": trace, "method": method, "rows": new[key].size,
            "AAE old s": f"{np.mean(np.abs(ref[key] - actual)):.3f}",
            "AAE new s": f"{np.mean(np.abs(new[key] - actual)):.3f}",
            "max |diff| s": f"{diff:.3g}", "batches equal": bool(np.array_equal(
                new[f"{stem}/batch"], ref[f"{stem}/batch"])),
            "all equal": same,
            "rows/s old": f"{new[key].size / old_s[0]:.0f}",
            "rows/s new": f"{new[key].size / new_s[0]:.0f}",
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="KTH-SP2-1996-2.1-cln,HPC2N-2002-2.2-cln")
    parser.add_argument("--methods", default="apq,ibl,auto")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--arrivals", type=int, default=50)
    parser.add_argument("--candidates", type=int, default=8)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", help="write the figures of this code to an .npz file")
    group.add_argument("--check", help="compare with figures saved by --save")
    args = parser.parse_args()
    methods = parse_methods(args.methods)
    print(f"code measured: {Path(predictor.__file__).parent.parent}", file=sys.stderr)
    out: dict[str, np.ndarray] = {}
    for trace in args.traces.split(","):
        out.update(figures(trace, methods, args.rows, args.arrivals, args.candidates))
    if args.save:
        np.savez(args.save, **out)
        return
    ref = dict(np.load(args.check))
    rows = compare(out, ref)
    print(table(rows, list(rows[0])))
    if not all(r["all equal"] for r in rows):
        sys.exit("some figures differ")


if __name__ == "__main__":
    main()
