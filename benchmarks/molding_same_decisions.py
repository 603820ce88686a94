"""Does a faster molding replay decide exactly as the code before it?

    # once, from a checkout of the old code (e.g. `git worktree add --detach ../base main`):
    cd ../base && python ../<this checkout>/benchmarks/molding_same_decisions.py LOG --save ref.json
    # then from this checkout:
    python benchmarks/molding_same_decisions.py LOG --check ref.json

LOG is an SWF file (a slice: the header and the first N job lines). The code measured is the
one of the current directory (run it from the checkout's root). It replays baseline, molding
and delay as ``evaluate_molding --runtime-model downey --sigma S`` does (guard and hold
threshold chosen on the tuning part, ``ReplayBundle`` with ``sim`` and ``rangeset``, or the
methods ``--wait-method`` and ``--runtime-method`` name: ``auto`` and ``choose`` are the live
service's), and saves
or compares every figure, each guard's and threshold's tuning figures, every decision and every
job's size and start. It prints the figures, the CPU seconds, and the differences (none: equal).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

# The checkout whose code is measured goes first.
sys.path.insert(0, os.getcwd())

from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_bundle import ReplayBundle
from traces.core.swf import read_swf


def replay(path: str, sigma: float, wait: str, runtime: str) -> dict[str, Any]:
    swf = read_swf(path)
    setup = prepare(swf.jobs, swf.machine_procs, 0.2, swf.header.max_runtime)
    params = MoldingParams(runtime_model="downey", sigma=sigma, guard=None)
    runs = evaluate(
        setup,
        ["baseline", "molding", "delay"],
        params,
        lambda s: ReplayBundle(s.jobs.machine_procs, wait, runtime),
    )
    return {
        name: {
            "figures": run.figures,
            "guard": run.guard,
            "cpu_seconds": run.cpu_seconds,
            "decisions": {str(j): d for j, d in run.decisions.items()},
            "procs": run.outcome.procs.tolist(),
            "start_s": run.outcome.start_s.tolist(),
        }
        for name, run in runs.items()
    }


def differences(got: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    out = []
    for name, want in ref.items():
        have = got[name]
        for key in ("figures", "guard", "decisions", "procs", "start_s"):
            if json.dumps(have[key], sort_keys=True) != json.dumps(want[key], sort_keys=True):
                out.append(f"{name}: {key} differs")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--wait-method", default="sim")
    parser.add_argument("--runtime-method", default="rangeset")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save")
    group.add_argument("--check")
    args = parser.parse_args()
    began = time.process_time()
    ran = replay(args.log, args.sigma, args.wait_method, args.runtime_method)
    got = json.loads(json.dumps(ran, default=float))
    for name, run in got.items():
        f = run["figures"]
        print(
            f"{name:9s} mean response {f['mean_response_s']:10.1f} s  bounded slowdown "
            f"{f['mean_bounded_slowdown']:7.2f}  molded {f['molded_share']:.3f}  held "
            f"{f['delayed_share']:.3f}  CPU {run['cpu_seconds']:.1f} s"
        )
    print(f"CPU (whole script, replays only): {time.process_time() - began:.1f} s")
    if args.save:
        with open(args.save, "w") as out:
            json.dump(got, out)
        return
    with open(args.check) as src:
        diff = differences(got, json.load(src))
    print("\n".join(diff) if diff else "every figure, decision and start equal")
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
