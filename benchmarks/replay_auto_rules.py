"""``auto``'s weight rules replayed on the same expert predictions (issue 20).

    python benchmarks/replay_auto_rules.py $QUEUECAST_TRACES_DIR/<TRACE>.swf.gz \
        [--simulate-waits] [--limit 5000] [--json OUT.json]

Runs ``auto`` exactly as ``manage.py evaluate_wait --methods auto --limit 5000`` does (same
targets, tuning part 20%, seed 0, the registered ``auto``), once. Its experts' predictions on
the scored pool and on the targets are then kept, and every rule of
:data:`predictor.core.wait.selection.RULES` answers the same targets from them (the
selector is rebuilt with that rule; nothing else changes), once per guard answer and fallback
option set of :data:`~predictor.core.wait.selection.GUARD_ANSWERS` and ``FALLBACK_AMONG``
(``rule`` alone: today's "zero" and "safe"; ``+guard_<answer>``, ``+fallback_<among>``:
the others), and once per guard window of ``GUARD_SPANS_S`` (``+span_<days>d``: counted in
time; none: 3,000 pool jobs), each also with the guard counting zero's certain lead on the
pool jobs still waiting (``+waiting``: ``guard_waiting``), with the fallback counting them
(``+waiting_fallback``: ``fallback_waiting``) and with the weights counting the experts'
certain errors on them (``+waiting_weights``: ``weights_waiting``, AdaHedge and AdaHedge on
linearised losses only). Prints,
per variant, ``auto``'s AAE over always-zero's and over the best single expert's on those targets.

``--dev`` runs the same on the tuning part alone (the first 20% of the log's rows): its first
half tunes, its second half is the test part (``tune_fraction`` 0.5). No row of the log's
test part is read. ``--choose DEV.json ...`` then picks one variant for every log from those
dev runs by one criterion, fixed before any run: the lowest worst case over the logs of
``max(vs_zero, vs_best / 1.02)`` (at most 1 when both goals of issue 20 hold), ties by the
lowest mean ``vs_best``, then today's default. Each variant is also replayed with the
meta-levels of :data:`~predictor.core.wait.selection.METAS` in place of the guard
(``+meta_abprod``, ``+meta_abprod_safe``: (A,B)-Prod against zero, or against the safe
expert and then zero; ``+meta_track``: Fixed-Share over the rule, the safe expert and zero),
and ``--among fourth`` (or a later pass: ``fifth`` ... ``eleventh``) restricts the replay and
the choice to :data:`AMONG`.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: ``--among fourth``: the fourth pass's candidates (docs/results.md, "Fourth pass"), fixed
#: before its dev runs: today's guard and the two (A,B)-Prod meta-levels, each with the
#: fallback among (mix, safe, zero) or among all experts; AdaHedge weights
AMONG = {
    "fourth": tuple(
        "adahedge" + meta + among
        for meta in ("", "+meta_abprod", "+meta_abprod_safe")
        for among in ("", "+fallback_all")
    ),
    #: the fifth pass's (docs/results.md, "Fifth pass"), fixed before its dev runs: today's
    #: default; Fixed-Share weights (share 1/(r+1), or round_size/memory) under the guard;
    #: the Fixed-Share meta-level over (rule, safe, zero) on AdaHedge, FlipFlop or Fixed-Share
    #: weights; Fixed-Share weights under Prod against gbm then zero
    "fifth": (
        "adahedge+fallback_all",
        "fixedshare+fallback_all",
        "fixedshare_mem+fallback_all",
        "adahedge+meta_track+fallback_all",
        "flipflop+meta_track+fallback_all",
        "fixedshare+meta_track+fallback_all",
        "fixedshare_mem+meta_track+fallback_all",
        "fixedshare+meta_abprod_safe+fallback_all",
        "adahedge+meta_track",
        "fixedshare+meta_track",
    ),
    #: the sixth pass's (docs/results.md, "Sixth pass"), fixed before its dev runs: today's
    #: default, and the same with the guard counting zero's certain lead on the pool jobs
    #: still waiting (``guard_waiting``, :mod:`predictor.core.wait.waiting`)
    "sixth": ("adahedge+fallback_all", "adahedge+fallback_all+waiting"),
    #: the seventh pass's (docs/results.md, "Seventh pass"), fixed before its dev runs: the
    #: sixth pass's choice, and the same with the fallback's AAE also counting the outside
    #: pool jobs still waiting, each at the wait it has reached (``fallback_waiting``)
    "seventh": ("adahedge+fallback_all+waiting", "adahedge+fallback_all+waiting+waiting_fallback"),
    #: the eighth pass's (docs/results.md, "Eighth pass"), fixed and committed before its dev
    #: runs: the sixth pass's choice, and the same with AdaHedge's weights also counting each
    #: expert's certain error on the inside pool jobs still waiting (``weights_waiting``)
    "eighth": ("adahedge+fallback_all+waiting", "adahedge+fallback_all+waiting+waiting_weights"),
    #: the ninth pass's (docs/results.md, "Ninth pass"), fixed and committed before its dev
    #: runs: the eighth pass's choice, and the same guard and fallback with ML-Poly's weights
    #: in place of AdaHedge's, on the rounds' losses or on their linearised losses, or with
    #: AdaHedge's on the linearised losses (``predictor.core.wait.hedge_gradient``)
    "ninth": (
        "adahedge+fallback_all+waiting+waiting_weights",
        "mlpoly+fallback_all+waiting",
        "adahedge_grad+fallback_all+waiting",
        "mlpoly_grad+fallback_all+waiting",
    ),
    #: the tenth pass's (docs/results.md, "Tenth pass"), fixed and committed before its dev
    #: runs, after the ninth's: the eighth pass's choice, the ninth's runner-up (AdaHedge on
    #: linearised losses), and the same counting the waiting jobs' certain tangent losses
    #: (``weights_waiting`` with ``adahedge_grad``: ``waiting.WaitingTangent``)
    "tenth": (
        "adahedge+fallback_all+waiting+waiting_weights",
        "adahedge_grad+fallback_all+waiting",
        "adahedge_grad+fallback_all+waiting+waiting_weights",
    ),
    #: the eleventh pass's (docs/results.md, "Eleventh pass"), fixed and committed before its
    #: dev runs, after the tenth's: the eighth pass's choice (today's default), the tenth's dev
    #: choice, and AdaHedge over the experts and the linearised mix as one more expert
    #: (``predictor.core.wait.hedge_stacked``), with and without the waiting weights
    "eleventh": (
        "adahedge+fallback_all+waiting+waiting_weights",
        "adahedge_grad+fallback_all+waiting+waiting_weights",
        "adahedge_stacked+fallback_all+waiting",
        "adahedge_stacked+fallback_all+waiting+waiting_weights",
    ),
}
#: the variant every site used until the rule was chosen per site (stop 48: ``rule="choose"``
#: keeps this one or ``adahedge_stacked`` with the same options); the tie-break of ``--choose``
DEFAULT = "adahedge+fallback_all+waiting+waiting_weights"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("swf")
    parser.add_argument("--simulate-waits", action="store_true")
    parser.add_argument("--limit", type=int, default=5000)
    parser.add_argument("--json")
    parser.add_argument("--keep", help="pickle the evaluation and auto here (to replay again)")
    parser.add_argument("--load", help="replay a pickle written by --keep instead of running")
    parser.add_argument("--dev", action="store_true", help="the tuning part alone (see above)")
    parser.add_argument("--choose", nargs="+", help="dev JSON files: print the chosen variant")
    parser.add_argument(
        "--among", choices=sorted(AMONG), help="--choose among these variants only (see above)"
    )
    args = parser.parse_args()
    if args.choose:
        runs = [json.loads(Path(f).read_text()) for f in args.choose]
        print(json.dumps(choose(runs, AMONG.get(args.among)), indent=2))
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
    import django

    django.setup()
    from predictor.core.wait.evaluate import evaluate_trace, select_targets
    from predictor.core.wait.registry import make_methods
    from predictor.services.run_inputs import with_replayed_waits
    from traces.core.swf import read_swf

    t0 = time.process_time()
    if args.load:
        ev, methods = pickle.loads(Path(args.load).read_bytes())
    else:
        swf = read_swf(args.swf)
        if args.simulate_waits:
            swf = with_replayed_waits(swf)
        methods = make_methods(["auto"], 0)  # as evaluate_swf: tune_fraction 0.2, seed 0
        jobs, tune = swf.jobs, 0.2
        if args.dev:  # the tuning part alone, split in halves
            jobs, tune = jobs.iloc[: select_targets(jobs, 0.2).n_tune].reset_index(drop=True), 0.5
        procs = int(swf.machine_procs or 1)
        ev = evaluate_trace(jobs, procs, methods, tune_fraction=tune, limit=args.limit)
    cpu = time.process_time() - t0
    if args.keep:
        try:
            Path(args.keep).write_bytes(pickle.dumps((ev, methods)))
        except Exception as exc:  # keeping is a convenience: replay anyway
            print(f"could not keep the evaluation: {exc}")
    rows = replay(ev, methods["auto"], AMONG.get(args.among))
    print(f"recorded auto {ev.results['auto']['aae_s'] / 3600:.3f} h")
    print(f"{Path(args.swf).name}: {ev.selection.targets.size} targets, auto pass {cpu:.0f} CPU s")
    for rule, row in rows.items():
        print(
            f"  {rule:42s} auto {row['auto_h']:.3f} h  vs zero {row['vs_zero']:.3f}  "
            f"vs best {row['vs_best']:.3f} ({row['best']})  answered by {row['answered_by']}"
        )
    if args.json:
        out = {"log": Path(args.swf).name, "dev": args.dev, "cpu_s": cpu, "rules": rows}
        Path(args.json).write_text(json.dumps(out, indent=2))


def choose(runs: list[dict[str, Any]], among: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The variant of lowest worst-case ``max(vs_zero, vs_best / 1.02)`` over the runs, ties
    by mean ``vs_best``, then the default (module docstring); ``among``: these keys only."""
    keys = [k for k in runs[0]["rules"] if all(k in r["rules"] for r in runs)]
    keys = [k for k in keys if among is None or k in among]

    def goal(key: str) -> tuple[float, float, int]:
        rows = [r["rules"][key] for r in runs]
        worst = max(max(x["vs_zero"], x["vs_best"] / 1.02) for x in rows)
        mean = sum(x["vs_best"] for x in rows) / len(rows)
        return round(worst, 6), round(mean, 6), int(key != DEFAULT)

    ranked = sorted(keys, key=goal)
    table = {
        k: dict(zip(("worst_goal", "mean_vs_best", "not_default"), goal(k), strict=True))
        for k in ranked
    }
    return {"logs": [r.get("log") for r in runs], "chosen": ranked[0], "ranked": table}


def replay(ev: Any, method: Any, only: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """Each rule's answers on the evaluation's targets, from ``auto``'s kept predictions
    (``only``: these variants alone)."""
    import numpy as np

    from predictor.core.wait.auto import outside_seen
    from predictor.core.wait.selection import (
        FALLBACK_AMONG,
        GUARD_ANSWERS,
        GUARD_SPANS_S,
        METAS,
        RULES,
        WAITING_WEIGHT_RULES,
    )
    from predictor.core.wait.targets import WaitTargets

    pred = ev.predictions["auto"]
    names = list(method.methods_)
    experts = np.stack([np.asarray(pred.extra[f"candidate_{n}_s"]) for n in names])
    history = method._fitted()
    targets = WaitTargets.from_rows(history, ev.selection.targets)
    wait = history.jobs["wait_time"].to_numpy(dtype=float)[ev.selection.targets]
    col = method._user_col(history)
    feats = np.c_[targets.summary[:, col], targets.wait_count]
    outside = outside_seen(feats, method.seen_max_, method.outside_factor)
    aae = {n: float(np.abs(experts[k] - wait).mean()) for k, n in enumerate(names)}
    best = min((n for n in names), key=aae.__getitem__)
    out = {}
    combos = [
        (r, g, f, s, "guard", w, wf, ww)
        for r in RULES
        for g in GUARD_ANSWERS
        for f in FALLBACK_AMONG
        for s in GUARD_SPANS_S
        for w in (False, True)
        for wf in (False, True)
        for ww in ((False, True) if r in WAITING_WEIGHT_RULES else (False,))
    ]
    combos += [
        (r, "zero", f, None, meta, False, False, False)
        for meta in METAS[1:]
        for r in RULES
        for f in FALLBACK_AMONG
    ]
    names = ("rule", "guard_answer", "fallback_among", "meta", "guard_span_s", "guard_waiting",
             "fallback_waiting", "weights_waiting")  # fmt: skip
    saved = {k: getattr(method, k, False) for k in names}
    for rule, guard, among, span, meta, waiting, fb_waiting, w_waiting in combos:
        key = rule + ("" if meta == "guard" else f"+meta_{meta}")
        key += "" if guard == "zero" else f"+guard_{guard}"
        key += "" if among == "safe" else f"+fallback_{among}"
        key += "" if span is None else f"+span_{span / 86400:g}d"
        key += "+waiting" if waiting else ""
        key += "+waiting_fallback" if fb_waiting else ""
        key += "+waiting_weights" if w_waiting else ""
        if only is not None and key not in only:
            continue
        method.rule, method.guard_answer, method.fallback_among = rule, guard, among
        method.guard_span_s, method.meta, method.guard_waiting = span, meta, waiting
        method.fallback_waiting, method.weights_waiting = fb_waiting, w_waiting
        sel = method._build(method.scored_rows_[: method._scored_pred.shape[1]])
        res = sel.select(experts, targets.n_before, targets.known_at_s, outside)
        a = float(np.abs(res.wait_s - wait).mean())
        by, counts = np.unique(res.answered_by.astype(str), return_counts=True)
        out[key] = {
            "auto_h": a / 3600, "vs_zero": a / aae["zero"], "vs_best": a / aae[best],
            "best": best, "experts_h": {n: v / 3600 for n, v in aae.items()},
            "answered_by": {str(b): int(c) for b, c in zip(by, counts, strict=True)},
        }  # fmt: skip
    for k, v in saved.items():
        setattr(method, k, v)
    return out


if __name__ == "__main__":
    main()
